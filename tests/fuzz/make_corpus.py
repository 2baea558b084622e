"""Regenerate the fuzz corpus (tests/fuzz/corpus/): real tinygrad kernels whose code the ISA surfaces mutate.

  python tests/fuzz/make_corpus.py

ptx.json: PTX text of kernels rendered by tinygrad's PTX renderer and by its CUDA renderer through NVRTC, with each
kernel's entry name and parameter count. rdna.json: gfx1100 code of kernels compiled by tinygrad's LLVM renderer, as
hex of the instructions from the kernel's entry, with the RSRC registers its descriptor asks for. The corpus is data:
the fuzz run needs neither LLVM nor NVRTC.
"""
import json, os, sys
os.environ.setdefault("DEV", "CPU")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import numpy as np
from tinygrad import Tensor, dtypes

def programs():
  a, b = Tensor(np.arange(64, dtype=np.float32).reshape(8, 8)), Tensor(np.ones((8, 8), np.float32))
  i = Tensor(np.arange(64, dtype=np.int32))
  yield "add", a + b
  yield "matmul", a @ b
  yield "sum", a.sum(axis=1)
  yield "exp_log", (a.exp() + (b + 1).log()).sqrt()
  yield "where", (a > 10).where(a, b * 3)
  yield "int_ops", (i * 7 + (i >> 2)) % 5 - (i & 3)
  yield "cast", a.cast(dtypes.int32).cast(dtypes.float16).cast(dtypes.float32)
  yield "argmax", a.argmax(axis=1)
  yield "softmax", a.softmax(axis=1)
  yield "int64", i.cast(dtypes.int64) * 1_000_000_007
  yield "max_min", a.maximum(b * 20).minimum(40.0)
  yield "half", (a.cast(dtypes.float16) * 2).cast(dtypes.float32)

def ptx_corpus() -> list[dict]:
  from support.ptx_harness import renderer, ptx_of, _entry
  from tinygrad.uop.ops import Ops
  from tinygrad.codegen import to_program
  out = []
  for kind in ("ptx", "cuda"):
    for name, t in programs():
      for call in t.schedule_linear().src:
        if call.src[0].op is not Ops.SINK: continue
        prg = to_program(call.src[0], renderer(kind))
        text = ptx_of(prg)
        out.append(dict(name=f"{kind}_{name}", entry=_entry(text), nparams=len(prg.arg.globals) + len(prg.arg.vals({})), ptx=text))
  return out

def rdna_corpus() -> list[dict]:
  from support.rdna_harness import compile_calls, Loaded
  from mockgpu.compiler.rdna import decode
  out = []
  for name, t in programs():
    for call, info, lib in compile_calls(t):
      if lib is None: continue
      p = Loaded(lib)
      start = p.prog_addr - p.image.ctypes.data
      window = bytes(p.image[start:])
      code = window[:decode.extent(decode.walk(window, "rdna3"))]
      out.append(dict(name=name, code=code.hex(), rsrc1=p.rsrc1, rsrc2=p.rsrc2, nargs=len(info.globals)))
  return out

if __name__ == "__main__":
  os.makedirs(os.path.join(HERE, "corpus"), exist_ok=True)
  for fname, fn in (("ptx.json", ptx_corpus), ("rdna.json", rdna_corpus)):
    data = fn()
    with open(os.path.join(HERE, "corpus", fname), "w") as f: json.dump(data, f, indent=0)
    print(fname, len(data), "kernels")
