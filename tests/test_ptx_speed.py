"""Speed floors for the PTX executor, far below what it measures (see the report) so a loaded machine still passes,
but a lost fast path (a Python loop per thread, per-lane gathers of contiguous vectors) fails."""
import time
import numpy as np
from test_ptx_harness import Tensor, run
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, launch

def test_large_elementwise_launch():
  n = 1 << 22
  a, b = np.random.default_rng(0).random(n, np.float32), np.random.default_rng(1).random(n, np.float32)
  st = []
  got = run(Tensor(a).realize() * Tensor(b).realize() + Tensor(a).realize(), "ptx", stats=st)
  assert got.dtype == np.float32 and np.allclose(got, a * b + a, rtol=1e-6)
  assert st[0].thread_instructions / st[0].seconds > 100e6, f"{st[0].thread_instructions / st[0].seconds / 1e6:.0f} M thread-instructions/s"

def test_small_launches_are_cheap():
  srcs = []
  run(Tensor(np.ones(64, np.float32)).realize() + 1, "ptx", sources=srcs)
  k = load_module(srcs[0]).kernel(next(iter(load_module(srcs[0]).kernels)))
  x = np.zeros(64, np.float32)
  mem = AddressSpace("speed")
  mem.map(x.ctypes.data, x.nbytes)
  params = b"".join(x.ctypes.data.to_bytes(8, "little") for _ in k.params)
  launch(mem, k, (1, 1, 1), (16, 1, 1), params)
  t = time.perf_counter()
  for _ in range(100): launch(mem, k, (1, 1, 1), (16, 1, 1), params)
  assert (time.perf_counter() - t) / 100 < 5e-3
