"""`mockgpu replay FILE`: re-run a dispatch that raised an EmulatorBug from its replay file (replay.py, the record,
says what the file holds), without tinygrad's runtime, on the same path or another. The runner stands above the
executors it runs; the record below them.
"""
from __future__ import annotations
import os, pickle, sys, traceback
import numpy as np
from mockgpu import replay as record, system  # noqa: F401  system: the launch counters and coverage listen
from mockgpu.errors import EmulatorBug
from mockgpu.memory import AddressSpace

# settings the replay takes from the environment it runs in, not from the record
LOCAL_SETTINGS = ("MOCKGPU_REPLAY_DIR", "MOCKGPU_CACHE_DIR", "MOCKGPU_TRACE", "MOCKGPU_TIMELINE", "MOCKGPU_REPLAY_SNAPSHOT")
NATIVE_SETTING = {"AMD": "MOCKGPU_RDNA_NATIVE", "NVIDIA": "MOCKGPU_PTX_NATIVE"}

def load(file:str) -> dict:
  with open(file, "rb") as f: rec = pickle.load(f)
  if not isinstance(rec, dict) or rec.get("format") != record.FORMAT:
    raise ValueError(f"{file} is not a mockgpu replay file (format {record.FORMAT})")
  return rec

def replay(file:str, path:str|None=None, out=None) -> int:
  """Re-run the dispatch in file on its path (or `path`: numpy or C). 1 when it raises the EmulatorBug again, 2 when
  it raises something else, 0 when it completes."""
  out = out or sys.stdout
  rec = load(file)
  path = path or rec["path"]
  for k, v in rec["settings"].items():
    if k not in LOCAL_SETTINGS: os.environ[k] = v
  os.environ[NATIVE_SETTING[rec["vendor"].split()[0]]] = "1" if path == "C" else "0"
  mem = record.restore(rec["memory"])
  print(f"replaying {rec['symbol']} ({rec['vendor']}, {path} path), grid {rec['grid']} x block {rec['block']}; "
        f"memory {record.MEMORY_STATE[rec['memory_state']]}", file=out)
  record._replaying = {**rec, "file": os.path.abspath(file)}
  try: _run(rec, mem)
  except EmulatorBug as e:
    traceback.print_exception(e, file=out)
    cause = (type(e.__cause__).__name__, str(e.__cause__))
    print("reproduced: the same cause as recorded" if cause == tuple(rec["cause"]) else
          f"an EmulatorBug with another cause than recorded ({rec['cause'][0]}: {rec['cause'][1]})", file=out)
    return 1
  except Exception as e:
    traceback.print_exception(e, file=out)
    print(f"did not reproduce the EmulatorBug: the dispatch raised {type(e).__name__}", file=out)
    return 2
  finally: record._replaying = None
  print("completed without error", file=out)
  return 0

def _run(rec:dict, mem:AddressSpace):
  launch = rec["launch"]
  if rec["vendor"].startswith("AMD"):
    from mockgpu.emulators import rdna
    d = dict(launch["dispatch"])
    d["block"], d["grid"] = tuple(d["block"]), tuple(d["grid"])
    return rdna.run_dispatch(mem, rdna.Dispatch(**d))
  from mockgpu.emulators import ptx
  k = ptx.load_module(launch["ptx"]).kernel(launch["entry"])
  g = k.module.memory.globals.data
  g[:] = np.frombuffer(launch["globals"], np.uint8)
  return ptx.launch(mem, k, launch["grid"], launch["block"], launch["params"], launch["dynamic_shared"])
