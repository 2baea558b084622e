"""Real tinygrad kernels, rendered for sm_89 by both of tinygrad's NVIDIA renderers (its PTX renderer, and CUDA C
through NVRTC), run on the PTX executor and compared with numpy or tinygrad's CPU backend.

Exact comparisons use numpy where the CPU backend itself rounds differently from a GPU (clang contracts a*b+c into an
fma and evaluates half arithmetic in float32)."""
import numpy as np
import pytest
from support.ptx_harness import run, check, fma_ref
from tinygrad import Tensor
from tinygrad import dtypes
pytestmark = pytest.mark.usefixtures("ptx_path")  # every test on the numpy and the native path

KINDS = ["ptx", "cuda"]
rng = np.random.default_rng(0)
F = rng.standard_normal((32, 32)).astype(np.float32)
G = rng.standard_normal((32, 32)).astype(np.float32)
H, HH = F.astype(np.float16), G.astype(np.float16)
I = rng.integers(-1000, 1000, (32, 32)).astype(np.int32)
J = rng.integers(1, 100, (32, 32)).astype(np.int32) * rng.choice([-1, 1], (32, 32)).astype(np.int32)
U8 = rng.integers(0, 256, (32, 32)).astype(np.uint8)
I8 = rng.integers(-128, 128, (32, 32)).astype(np.int8)
B = rng.integers(0, 2, (32, 32)).astype(bool)

def T(x): return Tensor(x).realize()
def same(got, want):
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(np.atleast_1d(got).view(np.uint8), np.atleast_1d(want).view(np.uint8))

@pytest.mark.parametrize("kind", KINDS)
class TestElementwise:
  def test_float32_arith(self, kind):
    same(run(T(F) + T(G), kind), F + G)
    # tinygrad's PTX renderer fuses a*b+c into fma.rn.f32 (MULACC); NVRTC keeps tinygrad's separate mul and sub here
    same(run(T(F) * T(G) - T(G), kind), fma_ref(F, G, -G) if kind == "ptx" else F * G - G)
    same(run(T(F) / T(G), kind), F * (np.float32(1) / G))   # tinygrad divides as a * (1/b)
    same(run(T(F).maximum(T(G)), kind), np.maximum(F, G))
  def test_float16_arith(self, kind):
    fused = (H.astype(np.float64) * HH + H).astype(np.float16)   # exact in float64 for these magnitudes, rounded once
    same(run(T(H) * T(HH) + T(H), kind), fused if kind == "ptx" else H * HH + H)
    same(run(T(H).maximum(T(HH)), kind), np.maximum(H, HH))
  def test_int32(self, kind):
    same(run(T(I) * T(J) + T(I), kind), I * J + I)
    same(run(T(I) // T(J), kind), I // J)
    same(run(T(I) % T(J), kind), I % J)
    same(run((T(I) << 3) >> 1, kind), (I << 3) >> 1)
    same(run(T(I) ^ T(J) | (T(I) & T(J)), kind), I ^ J | (I & J))
  def test_small_ints_and_bool(self, kind):
    same(run(T(U8) + 3, kind), (U8 + 3).astype(np.uint8))
    same(run(T(I8) * 2, kind), (I8 * 2).astype(np.int8))
    same(run(T(B).logical_not(), kind), ~B)
    same(run(T(B) & T(B).logical_not() | T(B), kind), B)
  def test_compare_where(self, kind):
    same(run((T(F) < T(G)).where(T(F), T(G)), kind), np.where(F < G, F, G))
    same(run(T(I) == T(J), kind), I == J)
    nan = F.copy(); nan[::3] = np.nan
    same(run(T(nan) != T(nan), kind), nan != nan)
  def test_casts(self, kind):
    same(run((T(F) * 100).cast(dtypes.int32), kind), (F * 100).astype(np.int32))
    same(run(T(I).cast(dtypes.float32), kind), I.astype(np.float32))
    same(run(T(F).cast(dtypes.float16), kind), F.astype(np.float16))
    same(run(T(H).cast(dtypes.float32), kind), H.astype(np.float32))
    same(run(T(U8).cast(dtypes.float32), kind), U8.astype(np.float32))
    same(run((T(F).abs() * 50).cast(dtypes.uint8), kind), (np.abs(F) * 50).astype(np.uint8))
    same(run(T(F).bitcast(dtypes.int32), kind), F.view(np.int32))
    same(run(T(I).cast(dtypes.int64) * 3000000000, kind), I.astype(np.int64) * 3000000000)
    same(run(T(F).cast(dtypes.float64) * 3.5 + 1, kind), F.astype(np.float64) * 3.5 + 1)
  def test_transcendental(self, kind):
    for fn, ref in ((lambda x: x.exp(), np.exp), (lambda x: x.abs().log(), lambda x: np.log(np.abs(x))), (lambda x: x.sin(), np.sin),
                    (lambda x: x.abs().sqrt(), lambda x: np.sqrt(np.abs(x))), (lambda x: x.reciprocal(), lambda x: 1 / x)):
      np.testing.assert_allclose(run(fn(T(F)), kind), ref(F.astype(np.float64)), rtol=3e-6, atol=1e-6)
    np.testing.assert_allclose(run(T(H).exp(), kind).astype(np.float32), np.exp(H.astype(np.float64)), rtol=2e-3, atol=2e-3)
    # NVRTC's half paths use cuda_fp16's inline asm (scoped .reg declarations, f16 <-> f32 cvt, ex2/lg2/rcp approx)
    pos = np.abs(H) + np.float16(0.5)
    for fn, ref in ((lambda x: x.sin(), np.sin), (lambda x: x.log(), np.log), (lambda x: x.sqrt(), np.sqrt), (lambda x: 1 / x, lambda x: 1 / x)):
      np.testing.assert_allclose(run(fn(T(pos)), kind).astype(np.float64), ref(pos.astype(np.float64)), rtol=4e-3, atol=4e-3)

def test_bfloat16_cuda():
  """bf16 round trips through NVRTC's cvt.rn.bf16.f32 / fma.rn.bf16 (tinygrad's PTX renderer has no bf16)."""
  x = F * 10
  got = run((T(x).cast(dtypes.bfloat16) * 3).cast(dtypes.float32), "cuda")
  bf = lambda v: ((v.view(np.uint32) + 0x7fff + ((v.view(np.uint32) >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
  same(got, bf((bf(x).astype(np.float64) * 3).astype(np.float32)))

@pytest.mark.parametrize("kind", KINDS)
class TestReduce:
  def test_sum_max(self, kind):
    check(lambda x: x.sum(1), [F], kind, rtol=1e-5, atol=1e-5)
    check(lambda x: x.sum(), [F], kind, rtol=1e-5, atol=1e-5)
    same(run(T(F).max(1), kind), F.max(1))
    same(run(T(F).max(), kind), np.array(F.max()))
  def test_argmax_softmax_cumsum(self, kind):
    same(run(T(F).argmax(1), kind), F.argmax(1).astype(np.int32))
    check(lambda x: x.softmax(1), [F], kind, rtol=1e-5, atol=1e-6)
    check(lambda x: x.cumsum(1), [F], kind, rtol=1e-5, atol=1e-5)
  def test_big_reduce_grid(self, kind):
    x = rng.standard_normal((4096,)).astype(np.float32)
    np.testing.assert_allclose(run(T(x).sum(), kind), x.astype(np.float64).sum(), rtol=1e-5)

@pytest.mark.parametrize("kind", KINDS)
class TestMatmul:
  def test_float32(self, kind):
    np.testing.assert_allclose(run(T(F) @ T(G), kind), F.astype(np.float64) @ G, rtol=1e-5, atol=1e-5)
  def test_half_tensor_cores(self, kind):
    srcs = []
    a, b = rng.standard_normal((64, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
    got = run(T(a) @ T(b), kind, sources=srcs)
    assert any("mma.sync.aligned.m16n8k16" in s for s in srcs), "the kernel should use tensor cores"
    np.testing.assert_allclose(got.astype(np.float64), a.astype(np.float64) @ b, rtol=1e-2, atol=2e-2)
  def test_half_acc_float(self, kind):
    a, b = rng.standard_normal((64, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
    got = run(T(a).matmul(T(b), dtype=dtypes.float32), kind)
    np.testing.assert_allclose(got, (a.astype(np.float64) @ b), rtol=1e-2, atol=2e-2)

@pytest.mark.parametrize("kind", KINDS)
def test_threefry_rand(kind):
  """Tensor.rand: threefry2x32 (64-bit adds, rotates via shf/shl-or) must match the CPU bit for bit."""
  def f():
    Tensor.manual_seed(5)
    return Tensor.rand(32, 32)
  want = f().numpy()
  Tensor.manual_seed(5)
  got = run(Tensor.rand(32, 32), kind)
  same(got, want)

@pytest.mark.parametrize("kind", KINDS)
def test_launch_stats(kind):
  st = []
  run(T(F) + 1, kind, stats=st)
  assert st[0].threads >= F.size // 4 and st[0].thread_instructions >= st[0].threads and st[0].warp_instructions > 0

V = rng.standard_normal(64).astype(np.float32)
U32 = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
U32B = rng.integers(1, 2**16, 64).astype(np.uint32)
I64 = rng.integers(-2**40, 2**40, 64).astype(np.int64)
IMG, W = rng.standard_normal((2, 3, 16, 16)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
MORE = {
  "conv2d": (lambda x, y: x.conv2d(y, padding=1), [IMG, W], dict(rtol=1e-4, atol=1e-4)),
  "max_pool": (lambda x: x.max_pool2d(), [IMG], {}),
  "gather": (lambda x, i: x[i], [V, rng.integers(0, 64, 32).astype(np.int32)], {}),
  "uint32_divmod": (lambda x, y: x // y + x % y, [U32, U32B], {}),
  "int64": (lambda x: x * 7 - (x >> 3) + x // 1000, [I64], {}),
  "any_all": (lambda x: (x > 1).any() & (x > -3).all(), [V], {}),
  "sort": (lambda x: x.sort()[0], [V], {}),
  "topk": (lambda x: x.topk(3)[0], [V], {}),
  "matmul_odd_shapes": (lambda x, y: x @ y, [rng.standard_normal((17, 33)).astype(np.float32), rng.standard_normal((33, 9)).astype(np.float32)],
                        dict(rtol=1e-5, atol=1e-5)),
  "layernorm": (lambda x: x.layernorm(), [IMG], dict(rtol=1e-4, atol=1e-4)),
  "float64": (lambda x: (x.cast(dtypes.float64).exp() / 3).sqrt(), [V], dict(rtol=1e-12)),
}

# tinygrad's PTX renderer writes ex2.approx.f64 and sqrt.approx.f64 for float64, which ptxas rejects: the module fails to
# load before any launch (test_ptx_float64_math.py::test_tinygrad_ptx_renderer_float64_is_invalid), so not here
@pytest.mark.parametrize("name, kind", [(n, k) for n in MORE for k in KINDS if (n, k) != ("float64", "ptx")])
def test_more_ops_match_cpu(kind, name):
  fn, inputs, tol = MORE[name]
  check(fn, inputs, kind, **tol)

def test_int8_wraps_like_ptx():
  """cvt.s32.s8 of a 16-bit register reads its low byte: int8 products wrap (the CPU backend computes them in int)."""
  v = np.array([44.0, -50, 3], np.float32)
  same(run((T(v).cast(dtypes.int8) * 3).cast(dtypes.int32), "ptx"), np.array([-124, 106, 9], np.int32))

@pytest.mark.parametrize("kind", KINDS)
def test_tf32_tensor_cores(kind):
  """ALLOW_TF32=1: float32 matmuls use mma.m16n8k8.tf32, whose operands drop their 13 low mantissa bits."""
  from tinygrad.helpers import Context
  a, b = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
  srcs = []
  with Context(ALLOW_TF32=1): got = run(T(a) @ T(b), kind, sources=srcs)
  assert any("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in s for s in srcs)
  tf32 = lambda x: (x.view(np.uint32) & 0xffffe000).view(np.float32).astype(np.float64)
  np.testing.assert_allclose(got, tf32(a) @ tf32(b), rtol=0, atol=2e-5)
  assert np.abs(got - a.astype(np.float64) @ b).max() > 1e-3   # the truncation is visible: tf32 really is modelled
