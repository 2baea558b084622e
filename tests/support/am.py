"""Child programs on tinygrad's own AMD driver (AM): SETUP's report/fresh_op helpers and run(), which runs a
child under MOCKPCI+AMD and returns its tagged lines. (Moved from tests/emulators/test_am.py so that no test file
imports another.)"""
from conftest import run_tinygrad

SETUP = """
import numpy as np
from tinygrad import Tensor, Device
from tinygrad.runtime.autogen import pci
def report(tag, fn):
  try: fn()
  except Exception as e: print(tag, type(e).__name__, "|", str(e).replace("\\n", " "))
  else: print(tag, "none")
def fresh_op(device):
  x = np.arange(256, dtype=np.float32)
  print("FRESH", np.array_equal((Tensor(x, device=device) * 3 + 1).numpy(), x * 3 + 1))
"""

def run(code:str, dev:str="MOCKPCI+AMD") -> tuple[dict[str, str], str]:
  p = run_tinygrad(dev, SETUP + code, env={"MOCKGPU_COUNT": "2", "HCQDEV_WAIT_TIMEOUT_MS": "5000"})
  tags = {}
  for line in p.stdout.splitlines():
    tag, _, rest = line.partition(" ")
    tags[tag] = rest
  return tags, p.stdout + p.stderr
