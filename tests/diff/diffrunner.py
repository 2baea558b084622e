"""A worker process for the differential suite: runs tests/diff/diffcases.py cases on the device DEV names.

Protocol: first a pickled ("hello", the dtype names this device's renderer emulates) on the original stdout; then a
pickled list of cases on stdin; one pickled reply per case on the original stdout, in order:
("ok", outputs) or ("error", exception type name, traceback). After an error the worker exits (the device may be in
tinygrad's sticky error state); the parent starts a fresh one for the cases left. An output is
("tensor", dtype name, struct format, shape, raw bytes) or ("py", value). tinygrad's own prints go to stderr.
"""
import os, pickle, sys, traceback
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np

def flatten(out) -> list:
  if isinstance(out, (tuple, list)) and any(hasattr(o, "uop") for o in out): return [x for o in out for x in flatten(o)]
  return [out]

def run_case(case:dict, dev:str) -> list:
  import diffcases as D
  from tinygrad import Tensor
  from tinygrad.helpers import Context
  upcast = case.get("upcast", False)
  with Context(**case["ctx"]):
    leaves = [D.make_leaf(s, dev, upcast, case.get("transform")) for s in case["x"]]
    xs = [D.apply_view(t, s[4]) for t, s in zip(leaves, case["x"])]
    outs = flatten(D.OPS[case["op"]](dev, *xs, **case["kw"]))
    if case["grad"]: outs += gradients(outs, leaves, case)
    tensors = [strong(o).contiguous() for o in outs if isinstance(o, Tensor)]
    if tensors: Tensor.realize(*tensors)
    it = iter(tensors)
    return [encode(next(it)) if isinstance(o, Tensor) else ("py", plain(o)) for o in outs]

def strong(t):
  """A weakly typed result (one_hot's, a Python constant's: tinygrad 0.14's dtypes.weakint/weakfloat) as the dtype it
  is stored in, which has a buffer format to compare."""
  from tinygrad.dtype import strong_dtype
  return t if strong_dtype(t.dtype) == t.dtype else t.cast(strong_dtype(t.dtype))

def gradients(outs:list, leaves:list, case:dict) -> list:
  """Backward with a seeded upstream gradient per output, so that every element's gradient is distinct."""
  from tinygrad import Tensor, dtypes
  import diffcases as D
  float_outs = [o for o in outs if hasattr(o, "uop") and dtypes.is_float(o.dtype)]
  seeds = [D.transformed(D.make_array(o.shape, "float32", (-1, 1), i + 7), case.get("transform")) for i, o in enumerate(float_outs)]
  loss = sum(((o.float() * Tensor(s, device=o.device)).sum() for o, s in zip(float_outs, seeds)), Tensor(0.0))
  loss.backward()
  grads = [t.grad for t, s in zip(leaves, case["x"]) if s[1] in D.FLOATS]
  assert all(g is not None for g in grads), f"{case['id']}: an input got no gradient"
  return grads

def encode(t) -> tuple:
  import diffcases as D
  from tinygrad import dtypes
  name = next(n for n in D.ALL if getattr(dtypes, n) == t.dtype)
  return ("tensor", name, t.dtype.fmt, tuple(t.shape), b"" if t.numel() == 0 else bytes(t._data()))

def plain(v):
  if isinstance(v, np.ndarray): return ("ndarray", v.dtype.str, v.shape, v.tobytes())
  if isinstance(v, (list, tuple)): return type(v)(plain(x) for x in v)
  return v

def main():
  proto_out = os.fdopen(os.dup(1), "wb")
  os.dup2(2, 1)
  from tinygrad import Device, dtypes
  import diffcases as D
  dev = Device.DEFAULT
  # the dtypes this device's renderer does not have: tinygrad lowers them to integer code (as under EMULATED_DTYPES)
  supported = Device[dev].renderer.supported_dtypes()
  pickle.dump(("hello", sorted(n for n in D.ALL if getattr(dtypes, n) not in supported)), proto_out)
  proto_out.flush()
  while True:
    try: cases = pickle.load(sys.stdin.buffer)
    except EOFError: return
    for case in cases:
      try: reply = ("ok", run_case(case, dev))
      except Exception as e: reply = ("error", type(e).__name__, traceback.format_exc()[-8000:])
      pickle.dump(reply, proto_out)
      proto_out.flush()
      if reply[0] == "error": return

if __name__ == "__main__": main()
