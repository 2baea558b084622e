"""tinygrad end to end on DEV=MOCK+AMD (KFD model -> PM4 processor -> RDNA executor), checked against numpy.

Each test runs one tinygrad program in a subprocess, so DEV is set before tinygrad is imported.
"""
from __future__ import annotations
import textwrap
from conftest import run_tinygrad

PRELUDE = """
import numpy as np
from tinygrad import Tensor, dtypes
rng = np.random.default_rng(0)
A = rng.standard_normal((33, 47)).astype(np.float32)
B = rng.standard_normal((47, 29)).astype(np.float32)
I = rng.integers(-1000, 1000, (33, 47)).astype(np.int32)
def t(x, dt=None): return Tensor(x, dtype=dt)
def check(got, ref, tol=0.0):
  got = got.numpy() if isinstance(got, Tensor) else got
  np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(ref, np.float64), rtol=tol, atol=tol)
"""

def run_amd(body:str):
  r = run_tinygrad("MOCK+AMD", PRELUDE + textwrap.dedent(body) + "\nprint('DONE')\n", timeout=600)
  assert "DONE" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]

def test_elementwise_dtypes():
  run_amd("""
  check(t(A) + 1.5, A + 1.5)
  check((t(A).half() * 3).float(), (A.astype(np.float16).astype(np.float64) * 3).astype(np.float16))
  check((t(A).cast(dtypes.bfloat16) + 1).float(), A + 1, 2e-2)
  check(t(I) * 7 - t(I) // 3 + t(I) % 11, I * 7 - np.floor_divide(I, 3) + np.mod(I, 11))
  check(t(I).cast(dtypes.int8) * 3, I.astype(np.int8) * np.int8(3))
  check(t(I).cast(dtypes.uint8) + 200, I.astype(np.uint8) + np.uint8(200))
  check((t(A) > 0) & (t(I) > 0), (A > 0) & (I > 0))
  check(t(A * 100).cast(dtypes.int32).cast(dtypes.float16).float(), (A * 100).astype(np.int32).astype(np.float16))
  check(t(I).cast(dtypes.int64) * 123456789, I.astype(np.int64) * 123456789)
  check(t(A).cast(dtypes.float64) * 3.25 + 1, A.astype(np.float64) * 3.25 + 1)
  """)

def test_reductions_and_matmul():
  run_amd("""
  check(t(A).sum(), A.sum(), 1e-4)
  check(t(A).max(axis=0), A.max(axis=0))
  check(t(A).mean(axis=1), A.mean(axis=1), 1e-5)
  check(t(A).argmax(1), A.argmax(1))
  check(t(A).cumsum(1), A.cumsum(1), 1e-4)
  check(t(A) @ t(B), A @ B, 1e-4)
  check(t(A).softmax(1), np.exp(A) / np.exp(A).sum(1, keepdims=True), 1e-5)
  """)

def test_half_matmul_tensor_cores():
  run_amd("""
  x = rng.standard_normal((64, 64)).astype(np.float16)
  check((t(x) @ t(x)).float(), x.astype(np.float32) @ x.astype(np.float32), 5e-2)
  q = rng.integers(-128, 128, (64, 64)).astype(np.int8)
  check(t(q).matmul(t(q), dtype=dtypes.int32), q.astype(np.int32) @ q.astype(np.int32))
  """)

def test_conv_indexing_random_transcendentals():
  run_amd("""
  x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32); w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
  win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
  check(t(x).conv2d(t(w)), np.einsum("bchwij,ocij->bohw", win, w), 1e-4)
  idx = rng.integers(0, 33, 10).astype(np.int32)
  check(t(A)[t(idx)], A[idx])
  check(Tensor.zeros(4, 3).contiguous().scatter(0, t(np.array([[1, 2, 3]], np.int32)), 1.0), np.eye(4, 3, -1))
  Tensor.manual_seed(42)
  r = Tensor.rand(1000).numpy()
  assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.05 and len(np.unique(r)) > 990
  check(t(A).exp().log(), A, 1e-5)
  check(t(A).sin(), np.sin(A), 1e-5)
  check(t(A).tanh(), np.tanh(A), 1e-5)
  check(t(np.abs(A)).sqrt(), np.sqrt(np.abs(A)), 1e-6)
  check(t(A) / t(A + 10), A / (A + 10), 1e-6)
  """)

def test_launches_are_recorded_in_machine_stats():
  run_amd("""
  from mockgpu import system
  before = dict(system.stats)
  (t(A) * 2).realize()
  st = system.stats
  assert st["rdna3.launches"] - before.get("rdna3.launches", 0) == 1
  assert st["rdna3.groups"] - before.get("rdna3.groups", 0) >= 1 and st["rdna3.instructions"] > before.get("rdna3.instructions", 0)
  """)

# the modules a kernel's translation needs and running a cached translation must not (~100 ms of a fresh process)
TRANSLATOR = ("mockgpu.compiler.rdna.decode", "mockgpu.compiler.rdna.backends.numpy", "mockgpu.compiler.rdna.operands")

def test_cached_kernels_run_without_the_translator(tmp_path):
  """A fresh process whose kernel is in the translation cache runs it without importing the decoder, the translator or
  the operand model (issue 22's device open): the first process translates it (and imports them), the second loads it
  by its code's hash; both compute the same, and the cache key the executor reads is the translator's."""
  code = f"""
  import sys
  from tinygrad import Tensor
  from mockgpu import system
  assert (Tensor([1., 2, 3]) + 1).tolist() == [2., 3., 4.]
  assert system.stats["rdna3.launches"] >= 1
  print("LOADED", [m for m in {TRANSLATOR!r} if m in sys.modules])
  """
  env = {"MOCKGPU_CACHE_DIR": str(tmp_path), "MOCKGPU_COVERAGE": "", "MOCKGPU_TRACE": "", "MOCKGPU_RDNA_NATIVE": "0"}
  loaded = [next(ln for ln in run_tinygrad("MOCK+AMD", code, env=env).stdout.splitlines() if ln.startswith("LOADED")) for _ in range(2)]
  assert loaded == [f"LOADED {list(TRANSLATOR)!r}", "LOADED []"], loaded
  from mockgpu.compiler.rdna.backends import numpy, numpy_version
  assert numpy.VERSION == numpy_version.VERSION and any(f.endswith("faults.py") for f in numpy_version.translator_files())
