#!/usr/bin/env python3
"""PTX executor micro-benchmarks, below tinygrad's runtime: thread-instructions/s of a large elementwise launch and
the cost of a tiny launch, on each executor path (numpy; the C translation). Kernels are real tinygrad PTX (its PTX
renderer), run on buffers mapped into an AddressSpace.

  python bench/ptx_micro.py
"""
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import numpy as np
from test_ptx_harness import Tensor, run
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, launch

def large(path:str, n=1 << 22):
  a, b = np.random.default_rng(0).random(n, np.float32), np.random.default_rng(1).random(n, np.float32)
  best = None
  for _ in range(3):
    st = []
    got = run(Tensor(a).realize() * Tensor(b).realize() + Tensor(a).realize(), "ptx", stats=st)
    assert np.allclose(got, a * b + a, rtol=1e-6)
    rate = st[0].thread_instructions / st[0].seconds
    best = rate if best is None else max(best, rate)
  print(f"{path:>6}: a*b+a over {n} float32: {best / 1e6:.0f} M thread-instructions/s (target 640 M)")

def tiny(path:str, reps=200):
  srcs = []
  run(Tensor(np.ones(64, np.float32)).realize() + 1, "ptx", sources=srcs)
  mod = load_module(srcs[0])
  k = mod.kernel(next(iter(mod.kernels)))
  x = np.zeros(64, np.float32)
  mem = AddressSpace("bench")
  mem.map(x.ctypes.data, x.nbytes)
  params = b"".join(x.ctypes.data.to_bytes(8, "little") for _ in k.params)
  launch(mem, k, (1, 1, 1), (16, 1, 1), params)
  t = time.perf_counter()
  for _ in range(reps): launch(mem, k, (1, 1, 1), (16, 1, 1), params)
  print(f"{path:>6}: tiny launch (16 threads): {(time.perf_counter() - t) / reps * 1e6:.0f} us in the executor")

if __name__ == "__main__":
  for path, mode in (("numpy", "0"), ("C", "1")):
    os.environ["MOCKGPU_PTX_NATIVE"] = mode
    large(path)
    tiny(path)
