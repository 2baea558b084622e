"""A worker process that runs op-suite cases on the device DEV names and on DEV=CPU, for tests/ops/test_ops.py.

tinygrad picks its MOCK interface when it is imported, so each device configuration gets its own process; the
process is reused across cases (compiling and opening a device once). Protocol: pickled case names on stdin,
pickled ("ok", got, want) or ("error", traceback) on the original stdout; tinygrad's own prints go to stderr.
"""
import os, pickle, sys, traceback
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

def as_numpy(out) -> list:
  outs = out if isinstance(out, tuple) else (out,)
  return [o if hasattr(o, "dtype") and not hasattr(o, "realize") else o.numpy() for o in outs]

def main():
  proto_out = os.fdopen(os.dup(1), "wb")
  os.dup2(2, 1)
  proto_in = sys.stdin.buffer
  import opcases
  from tinygrad import Device
  dev = Device.DEFAULT
  # the arm64 CPU lane (DEV=MOCK+CPU) is the CPU device itself: its reference comes from a native DEV=CPU worker
  lane = dev == "CPU" and os.environ.get("DEV", "").upper().startswith("MOCK+CPU")
  while True:
    try: name = pickle.load(proto_in)
    except EOFError: return
    try: reply = ("ok", as_numpy(opcases.CASES[name]["fn"](dev)), None if lane else as_numpy(opcases.CASES[name]["fn"]("CPU")))
    except Exception: reply = ("error", traceback.format_exc())
    pickle.dump(reply, proto_out)
    proto_out.flush()

if __name__ == "__main__": main()
