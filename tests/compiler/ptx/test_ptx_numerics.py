"""Bit-exactness of the executor's floating-point core against exact rationals: fma and the directed rounding modes in
float32 and float64, subnormal results, conversions. The kernel tests run the instructions on both paths (numpy and C,
the ptx_path fixture); the others call the numpy path's functions (mockgpu/compiler/ptx/backends/numerics.py) directly, so they
run once."""
from fractions import Fraction
import numpy as np
import pytest
from mockgpu.compiler import native
from mockgpu.compiler.ptx.backends.numerics import fma32, _fma32_numpy, fma64, farith, int_to_float, float_to_float, float_to_int
from support.ptx_isa import kernel, run
per_path = pytest.mark.usefixtures("ptx_path")   # a kernel test: on the numpy and the native path

rng = np.random.default_rng(7)

def rounded(v:Fraction, dtype, mode:str):
  """The float of `dtype` that v rounds to in `mode`, found among the neighbours of float(v)."""
  f = dtype(float(v))
  cands = [q for q in (np.nextafter(f, dtype(-np.inf)), f, np.nextafter(f, dtype(np.inf))) if np.isfinite(q)]  # |v| <= max
  exact = lambda q: Fraction(float(q))
  if mode == "rn": return min(cands, key=lambda q: (abs(exact(q) - v), int(np.array(q).view(f"u{np.dtype(dtype).itemsize}")) & 1))
  if mode == "rz": return max((q for q in cands if abs(exact(q)) <= abs(v)), key=lambda q: abs(exact(q)))
  if mode == "rm": return max(q for q in cands if exact(q) <= v)
  return min(q for q in cands if exact(q) >= v)

def bits(x): return np.asarray(x).view(f"u{np.asarray(x).dtype.itemsize}")
MODES = ["rn", "rz", "rm", "rp"]
OPS = {"add": lambda x, y, z: x + y, "sub": lambda x, y, z: x - y, "mul": lambda x, y, z: x * y, "div": lambda x, y, z: x / y,
       "fma": lambda x, y, z: x * y + z}

def arith_case(dtype, op:str, mode:str, n:int) -> tuple[tuple, np.ndarray]:
  """Operands of op near cancellation (which exercises the error terms) and the exact result rounded in mode."""
  a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
  c = (-a * b * (1 + rng.standard_normal(n) * 1e-6)).astype(dtype)
  args = (a, b, c) if op == "fma" else (a, b)
  want = np.array([rounded(OPS[op](*(Fraction(float(v)) for v in vs), *([Fraction(0)] * (3 - len(vs)))), dtype, mode)
                   for vs in zip(*args)], dtype)
  return args, want

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("mode", MODES)
def test_arith_all_modes(dtype, op, mode):
  args, want = arith_case(dtype, op, mode, 200)
  got = farith(op, "f32" if dtype == np.float32 else "f64", mode, *args)
  np.testing.assert_array_equal(bits(got), bits(want))

def through_kernel(instr:str, out_dtype, *ins:np.ndarray) -> np.ndarray:
  """instr (operands {d}, {a}, {b}, {c}: registers of the arrays' widths) for each element of the input arrays, in a
  kernel of 32-thread CTAs; the results as out_dtype."""
  n = len(ins[0])
  lanes = -(-n // 32) * 32
  arrays = [np.resize(x, lanes) for x in ins]
  out = np.zeros(lanes, out_dtype)
  w = lambda x: np.dtype(x.dtype).itemsize * 8
  names = "abc"
  regs = f".reg .b{w(out)} %d;\n" + "".join(f".reg .b{w(x)} %{names[i]};\n" for i, x in enumerate(arrays))
  body = "mov.u32 %r0, %tid.x;\nmov.u32 %r20, %ctaid.x;\nmad.lo.s32 %r0, %r20, 32, %r0;\nld.param.u64 %rd4, [out];\n"
  for i, x in enumerate(arrays):
    body += f"ld.param.u64 %rd1, [in{i}];\nmad.wide.u32 %rd1, %r0, {w(x) // 8}, %rd1;\nld.global.b{w(x)} %{names[i]}, [%rd1];\n"
  body += instr.format(d="%d", a="%a", b="%b", c="%c") + f"\nmad.wide.u32 %rd4, %r0, {w(out) // 8}, %rd4;\nst.global.b{w(out)} [%rd4], %d;"
  run(kernel(body, ".param .u64 out, .param .u64 in0, .param .u64 in1, .param .u64 in2", regs=regs), [out, *arrays],
      grid=(lanes // 32, 1, 1))
  return out[:n]

@per_path
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("mode", MODES)
def test_arith_all_modes_in_a_kernel(dtype, op, mode):
  """The instructions ({op}.{mode}.f32/.f64) against exact rationals."""
  args, want = arith_case(dtype, op, mode, 96)
  t = "f32" if dtype == np.float32 else "f64"
  got = through_kernel(f"{op}.{mode}.{t} {{d}}, {{a}}, {{b}}" + (", {c};" if op == "fma" else ";"), dtype, *args)
  np.testing.assert_array_equal(bits(got), bits(want))

@per_path
@pytest.mark.parametrize("mode", MODES)
def test_conversions_all_modes_in_a_kernel(mode):
  """cvt.{mode} from int64 to float32/64 and from float64 to float32/16, against exact rationals."""
  x = rng.integers(-2**63, 2**63 - 1, 96, dtype=np.int64)
  for t, dtype in (("f32", np.float32), ("f64", np.float64)):
    want = np.array([rounded(Fraction(int(v)), dtype, mode) for v in x], dtype)
    np.testing.assert_array_equal(bits(through_kernel(f"cvt.{mode}.{t}.s64 {{d}}, {{a}};", dtype, x)), bits(want))
  y = rng.standard_normal(96) * 100
  for t, dtype in (("f32", np.float32), ("f16", np.float16)):
    want = np.array([rounded(Fraction(v), dtype, mode) for v in y], dtype)
    np.testing.assert_array_equal(bits(through_kernel(f"cvt.{mode}.{t}.f64 {{d}}, {{a}};", dtype, y)), bits(want))

@per_path
def test_float_to_int_saturates_in_a_kernel():
  x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 255.5, 1e30])
  np.testing.assert_array_equal(through_kernel("cvt.rni.s32.f64 {d}, {a};", np.int32, x),
                                [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2, -2, 256, 2**31 - 1])
  np.testing.assert_array_equal(through_kernel("cvt.rzi.u16.f64 {d}, {a};", np.uint16, x), [0, 65535, 0, 65535, 0, 2, 0, 255, 65535])
  np.testing.assert_array_equal(through_kernel("cvt.rmi.u64.f64 {d}, {a};", np.uint64, x), [0, 2**64 - 1, 0, 3000000000, 0, 2, 0, 255, 2**64 - 1])

@per_path
def test_fma32_in_a_kernel_double_rounding_and_subnormals():
  """fma.rn.f32 on both paths: a product on a float32 midpoint plus a tiny addend, and subnormal results."""
  a = np.full(64, 1 + 2.0 ** -12, np.float32)
  c = (np.where(np.arange(64) % 2, 1, -1) * 2.0 ** -80).astype(np.float32)
  x, y = (rng.standard_normal(64) * 1e-20).astype(np.float32), (rng.standard_normal(64) * 1e-20).astype(np.float32)
  w = (rng.standard_normal(64) * 1e-41).astype(np.float32)
  for p, q, r in ((a, a, c), (x, y, w)):
    np.testing.assert_array_equal(bits(through_kernel("fma.rn.f32 {d}, {a}, {b}, {c};", np.float32, p, q, r)), bits(_fma_ref(p, q, r)))

def test_fma32_double_rounding_and_subnormals():
  # a*b exactly on a float32 midpoint plus a tiny c: float64 rounding would land on the midpoint and round to even
  a = np.full(64, 1 + 2.0 ** -12, np.float32)
  b = np.full(64, 1 + 2.0 ** -12, np.float32)   # a*b = 1 + 2^-11 + 2^-24: a midpoint
  c = (np.where(np.arange(64) % 2, 1, -1) * 2.0 ** -80).astype(np.float32)
  got = fma32(a, b, c)
  want = np.array([rounded(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), np.float32, "rn") for x, y, z in zip(a, b, c)], np.float32)
  np.testing.assert_array_equal(bits(got), bits(want))
  assert len(set(bits(got).tolist())) == 2
  x, y = (rng.standard_normal(300) * 1e-20).astype(np.float32), (rng.standard_normal(300) * 1e-20).astype(np.float32)
  w = (rng.standard_normal(300) * 1e-41).astype(np.float32)
  want = np.array([rounded(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)), np.float32, "rn") for p, q, r in zip(x, y, w)], np.float32)
  np.testing.assert_array_equal(bits(fma32(x, y, w)), bits(want))

def test_fma64_round_to_odd():
  a, b = rng.standard_normal(300), rng.standard_normal(300)
  c = -a * b * (1 + rng.standard_normal(300) * 1e-12)
  want = np.array([rounded(Fraction(x) * Fraction(y) + Fraction(z), np.float64, "rn") for x, y, z in zip(a, b, c)])
  np.testing.assert_array_equal(fma64(a, b, c), want)

BIG = float(np.finfo(np.float64).max)

def rounded64(x, y, z, mode:str) -> float:
  """fma(x, y, z) in float64 and mode by IEEE 754: exact rationals, overflow past the largest finite value by the mode's
  direction, and the signs of zero sums (-0 rounding toward -inf, or when both addends are -0)."""
  big = float(np.finfo(np.float64).max)
  v = Fraction(x) * Fraction(y) + Fraction(z)
  if v == 0:
    p_neg, z_neg = bool(np.signbit(x) ^ np.signbit(y)), bool(np.signbit(z))
    if (x == 0 or y == 0) and p_neg == z_neg: return -0.0 if p_neg else 0.0   # both addends zeros of one sign
    return -0.0 if mode == "rm" else 0.0
  if abs(v) > Fraction(big):
    up = mode == "rn" and abs(v) >= Fraction(big) + Fraction(2) ** 970 or (mode == "rp" and v > 0) or (mode == "rm" and v < 0)
    return (np.inf if up else big) * (1.0 if v > 0 else -1.0)
  return float(rounded(v, np.float64, mode))

@pytest.mark.parametrize("mode", MODES)
def test_fma64_range_edges_and_zero_signs(mode):
  """Products near or past float64's range (tinygrad's PTX renderer computes a-b as fma(b, -1, a): max - 1 was -inf),
  sums that overflow, tiny products and signed zeros."""
  big = float(np.finfo(np.float64).max)
  vals = np.array([0.0, -0.0, 1.0, -1.0, big, -big, 2.0 ** 1000, 1.5e308, 2.0 ** 995, 3.0, -21.0, 7.0, 2.0 ** -1074, 1e-300, 0.75])
  a, b, c = (g.reshape(-1) for g in np.meshgrid(vals, vals, vals, indexing="ij"))
  with np.errstate(all="ignore"): got = fma64(a, b, c, mode)
  want = np.array([rounded64(float(x), float(y), float(z), mode) for x, y, z in zip(a, b, c)])
  bad = np.flatnonzero(bits(got) != bits(want))
  assert not bad.size, [(a[i], b[i], c[i], got[i], want[i]) for i in bad[:5]]

@per_path
@pytest.mark.parametrize("mode", MODES)
def test_fma64_range_edges_in_a_kernel(mode):
  """fma.{mode}.f64 at float64's range edges and with signed zeros (the C path's big-integer lanes), on both paths."""
  vals = np.array([0.0, -0.0, 1.0, -1.0, BIG, -BIG, 2.0 ** 1000, 1.5e308, 2.0 ** 995, 3.0, -21.0, 2.0 ** -1074, 1e-300, 0.75,
                   2.0 ** -540, -3 * 2.0 ** -537])
  a, b, c = (g.reshape(-1) for g in np.meshgrid(vals, vals, vals, indexing="ij"))
  got = through_kernel(f"fma.{mode}.f64 {{d}}, {{a}}, {{b}}, {{c}};", np.float64, a, b, c)
  want = np.array([rounded64(float(x), float(y), float(z), mode) for x, y, z in zip(a, b, c)])
  bad = np.flatnonzero(bits(got) != bits(want))
  assert not bad.size, [(a[i], b[i], c[i], got[i], want[i]) for i in bad[:5]]

@pytest.mark.parametrize("mode", MODES)
def test_int64_to_float_all_modes(mode):
  x = rng.integers(-2**63, 2**63 - 1, 200, dtype=np.int64)
  for t, dtype in (("f32", np.float32), ("f64", np.float64)):
    want = np.array([rounded(Fraction(int(v)), dtype, mode) for v in x], dtype)
    np.testing.assert_array_equal(bits(int_to_float(x, t, mode)), bits(want))

@pytest.mark.parametrize("mode", MODES)
def test_narrowing_float_conversions(mode):
  x = rng.standard_normal(300) * 100
  for t, dtype in (("f32", np.float32), ("f16", np.float16)):
    want = np.array([rounded(Fraction(v), dtype, mode) for v in x], dtype)
    np.testing.assert_array_equal(bits(float_to_float(x, "f64", t, mode)), bits(want))

def test_float_to_int_saturates():
  x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 255.5, 1e30])
  np.testing.assert_array_equal(float_to_int(x, "s32", "rni", np.dtype(np.int32)), [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2, -2, 256, 2**31 - 1])
  np.testing.assert_array_equal(float_to_int(x, "u8", "rzi", np.dtype(np.uint8)), [0, 255, 0, 255, 0, 2, 0, 255, 255])
  np.testing.assert_array_equal(float_to_int(x, "u64", "rmi", np.dtype(np.uint64)), [0, 2**64 - 1, 0, 3000000000, 0, 2, 0, 255, 2**64 - 1])

def _fma_ref(a, b, c):
  shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
  a, b, c = (np.broadcast_to(np.asarray(x, np.float32), shape) for x in (a, b, c))
  big = Fraction(2) ** 128 - Fraction(2) ** 103   # from here on, float32 round-to-nearest overflows
  exact = [Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) for x, y, z in zip(a, b, c)]
  # an exact zero takes its sign from IEEE's rule, which float64 arithmetic applies exactly
  zero = lambda x, y, z: np.float32(np.float64(x) * np.float64(y) + np.float64(z))
  return np.array([zero(x, y, z) if v == 0 else np.float32(np.inf if v > 0 else -np.inf) if abs(v) >= big else rounded(v, np.float32, "rn")
                   for v, x, y, z in zip(exact, a, b, c)], np.float32)

@pytest.mark.parametrize("scale", [2.0, 0.5, -4.0, 2.0 ** -140])
@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")   # lanes that overflow are part of the test
def test_fma32_uniform_power_of_two(scale):
  # x*2+1 and friends take a float32-only path while every product is a normal float32; lanes that overflow or go
  # subnormal must fall back to the exact path
  b = np.float32(scale)
  a = (rng.standard_normal(400) * 10.0 ** rng.integers(-30, 30, 400)).astype(np.float32)
  c = (rng.standard_normal(400) * 10.0 ** rng.integers(-30, 30, 400)).astype(np.float32)
  np.testing.assert_array_equal(bits(fma32(a, b, c)), bits(_fma_ref(a, b, c)))
  np.testing.assert_array_equal(bits(fma32(b, a, np.float32(1))), bits(_fma_ref(a, b, np.float32(1))))
  edge = np.array([3.0e38, 1.5 * 2.0 ** 127, 2.0 ** -126, 3 * 2.0 ** -149, 1.0, 0.0], np.float32)
  cedge = np.array([-3.4e38, -3.0e38, 2.0 ** -149, -2.0 ** -149, 2.0 ** -30, -0.0], np.float32)
  np.testing.assert_array_equal(bits(fma32(edge, b, cedge)), bits(_fma_ref(edge, b, cedge)))

def test_fma32_subnormals_next_to_nan_and_zero_lanes():
  # the fast checks reduce over all lanes: a NaN or an exact zero in one lane must not hide a subnormal lane's repair
  x, y = (rng.standard_normal(300) * 1e-20).astype(np.float32), (rng.standard_normal(300) * 1e-20).astype(np.float32)
  w = (rng.standard_normal(300) * 1e-41).astype(np.float32)
  x[:3], y[:3], w[:3] = [np.nan, 0.0, 0.0], [1.0, 5.0, -0.0], [1.0, 0.0, -0.0]
  got = fma32(x, y, w)
  assert np.isnan(got[0]) and bits(got[1:3]).tolist() == bits(np.array([0.0, -0.0], np.float32)).tolist()
  np.testing.assert_array_equal(bits(got[3:]), bits(_fma_ref(x[3:], y[3:], w[3:])))

def test_fma32_uniform_and_varying_operands():
  # any operand may be a uniform scalar; the float64 conversion of a reused array is remembered within a launch
  a, c = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
  k, k2 = np.float32(1.3), np.float32(-0.7)
  for args in ((k, k2, c), (a, k, c), (k, a, k2), (a, a, c), (a, c, a)):
    np.testing.assert_array_equal(bits(fma32(*args)), bits(_fma_ref(*args)))
  assert bits(fma32(k, k2, np.float32(0.25))) == bits(_fma_ref(np.array([k]), k2, np.float32(0.25))[0])

def test_fma32_ties_at_the_smallest_normal():
  # c = the largest subnormal, a*b = 2^-150 - 2^-196: the float64 sum is the tie 2^-126 - 2^-150 (inexact, true value
  # below), which a plain cast rounds up to the smallest normal; fma rounds down to the largest subnormal
  a = np.full(4, 2.0 ** -75 * (1 + 2.0 ** -23), np.float32)
  b = np.array([1, 1, -1, -1], np.float32) * np.float32(2.0 ** -75 * (1 - 2.0 ** -23))
  big_sub = np.uint32(0x007FFFFF).view(np.float32)
  c = np.array([big_sub, -big_sub, -big_sub, big_sub], np.float32)
  got = fma32(a, b, c)
  np.testing.assert_array_equal(bits(got), bits(_fma_ref(a, b, c)))
  assert bits(got[0]) == 0x007FFFFF

def _fma32_specials() -> np.ndarray:
  """Random float32s of every magnitude plus NaN payloads (quiet, signalling, both signs), infs, signed zeros,
  subnormals, values that overflow, and products that sit on (or just off) a float32 tie."""
  nan = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFD00001, 0x7F800001, 0xFF812345], np.uint32).view(np.float32)
  sub = np.array([0x00000001, 0x807FFFFF, 0x00400000, 0x00800000], np.uint32).view(np.float32)
  other = np.array([np.inf, -np.inf, 0.0, -0.0, 3.4e38, -3.0e38, 1 + 2.0 ** -12, 1 - 2.0 ** -12, 2.0 ** -60, 1.0, -1.0],
                   np.float32)
  rand = (rng.standard_normal(40) * 10.0 ** rng.integers(-45, 38, 40)).astype(np.float32)
  return np.concatenate([nan, sub, other, rand])

@pytest.mark.skipif(native.fma_f32() is None, reason="native helper not built here (no compiler, or MOCKGPU_NATIVE=0)")
def test_fma32_native_matches_numpy_path():
  # the native fmaf ufunc and the float64 emulation must give the same bits everywhere, NaN lanes included, with any
  # operand uniform (numpy's uniform-operand loops choose NaN payloads differently, which fma32 must not show)
  v = _fma32_specials()
  a, b, c = (x.reshape(-1) for x in np.meshgrid(v, v, v[::5], indexing="ij"))
  ties = (np.float32(1 + 2.0 ** -12), np.float32(1 + 2.0 ** -12), np.array([0.0, 2.0 ** -60, -2.0 ** -60], np.float32))
  with np.errstate(all="ignore"):
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    assert bits(fma32(a[finite], b[finite], c[finite])).tolist() == bits(native.fma_f32()(a[finite], b[finite], c[finite])).tolist()
    lanes = (v, np.roll(v, 7), np.roll(v, 19))
    cases = [(a, b, c), ties] + [tuple(k if i == j else x for j, x in enumerate(lanes)) for k in v for i in range(3)]
    cases += [(a[i], b[i], c[i]) for i in range(0, a.size, 97)]
    for args in cases:
      assert bits(fma32(*args)).tolist() == bits(_fma32_numpy(*args)).tolist(), args
