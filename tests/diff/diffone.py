"""Run one differential case by id (or a substring of ids) on DEV and on CPU and print both, for debugging:
  DEV=MOCK+AMD python tests/diff/diffone.py 'avg_pool2d[float32[2, 3, 9, 10];kernel_size=(3, 3)'"""
import sys, traceback
import diffcases as D
from diffrunner import run_case
from tinygrad import Device
for case in [c for c in D.CASES if sys.argv[1] in c["id"]][:int(sys.argv[2]) if len(sys.argv) > 2 else 3]:
  print("==", case["id"])
  for dev in (Device.DEFAULT, "CPU"):
    try: print(dev, [o[:4] + (o[4][:64],) if o[0] == "tensor" else o for o in run_case(case, dev)])
    except Exception: traceback.print_exc()
