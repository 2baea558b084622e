"""Bit-exactness of the executor's floating-point core (mockgpu/emulators/ptx/numerics.py) against exact rationals:
fma and the directed rounding modes in float32 and float64, subnormal results, conversions."""
from fractions import Fraction
import numpy as np
import pytest
from mockgpu.emulators.ptx.numerics import fma32, fma64, farith, int_to_float, float_to_float, float_to_int

rng = np.random.default_rng(7)

def rounded(v:Fraction, dtype, mode:str):
  """The float of `dtype` that v rounds to in `mode`, found among the neighbours of float(v)."""
  f = dtype(float(v))
  cands = [np.nextafter(f, dtype(-np.inf)), f, np.nextafter(f, dtype(np.inf))]
  exact = lambda q: Fraction(float(q))
  if mode == "rn": return min(cands, key=lambda q: (abs(exact(q) - v), int(np.array(q).view(f"u{np.dtype(dtype).itemsize}")) & 1))
  if mode == "rz": return max((q for q in cands if abs(exact(q)) <= abs(v)), key=lambda q: abs(exact(q)))
  if mode == "rm": return max(q for q in cands if exact(q) <= v)
  return min(q for q in cands if exact(q) >= v)

def bits(x): return np.asarray(x).view(f"u{np.asarray(x).dtype.itemsize}")
MODES = ["rn", "rz", "rm", "rp"]
OPS = {"add": lambda x, y, z: x + y, "sub": lambda x, y, z: x - y, "mul": lambda x, y, z: x * y, "div": lambda x, y, z: x / y,
       "fma": lambda x, y, z: x * y + z}

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("mode", MODES)
def test_arith_all_modes(dtype, op, mode):
  n = 200
  a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
  c = (-a * b * (1 + rng.standard_normal(n) * 1e-6)).astype(dtype)   # near-cancellation: exercises the error terms
  t = "f32" if dtype == np.float32 else "f64"
  args = (a, b, c) if op == "fma" else (a, b)
  got = farith(op, t, mode, *args)
  want = np.array([rounded(OPS[op](*(Fraction(float(v)) for v in vs), *([Fraction(0)] * (3 - len(vs)))), dtype, mode)
                   for vs in zip(*args)], dtype)
  np.testing.assert_array_equal(bits(got), bits(want))

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
