"""compiler/floats.py: the fp8 formats both ISAs read, each code's value, and the conversions to and from them."""
import numpy as np
import pytest
from tinygrad.dtype import dtypes, fp8_to_float
from mockgpu.compiler import floats

OCP = {"e4m3": dtypes.fp8e4m3, "e5m2": dtypes.fp8e5m2}

@pytest.mark.parametrize("fmt", sorted(OCP))
def test_ocp_codes_have_tinygrads_values(fmt):
  table = floats.fp8_table(fmt)
  for code in range(256):
    want = fp8_to_float(code, OCP[fmt])
    assert (np.isnan(table[code]) and np.isnan(want)) or table[code] == want, (fmt, code, table[code], want)

def test_the_formats_largest_values_nans_and_infinities():
  assert floats.precision("e4m3") == (4, -6, 448.0) and floats.precision("e5m2") == (3, -14, 57344.0)
  assert floats.precision("e4m3fnuz") == (4, -7, 240.0) and floats.precision("e5m2fnuz") == (3, -15, 57344.0)
  for fmt in ("e4m3fnuz", "e5m2fnuz"):   # FNUZ: 0x80 the only NaN, no infinity, no -0
    t = floats.fp8_table(fmt)
    assert [c for c in range(256) if np.isnan(t[c])] == [0x80] and not np.isinf(t).any()
  assert [c for c in range(256) if np.isnan(floats.fp8_table("e4m3")[c])] == [0x7f, 0xff]
  assert np.isinf(floats.fp8_table("e5m2")[[0x7c, 0xfc]]).all()

@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"])
def test_every_finite_code_encodes_back_to_itself(fmt):
  table = floats.fp8_table(fmt)
  codes = np.array([c for c in range(256) if np.isfinite(table[c]) and not (fmt.endswith("fnuz") and c == 0x80)])
  encode = floats.f32_to_fnuz8 if fmt.endswith("fnuz") else floats.f32_to_ocp8
  assert np.array_equal(encode(table[codes].astype(np.float32), fmt), codes.astype(np.uint16))
  if not fmt.endswith("fnuz"):   # PTX's: through f16 bits and back (saturating, exact on the grid)
    f16 = floats.fp8_to_f16(codes, fmt).view(np.float16).astype(np.float64)
    assert np.array_equal(floats.to_fp8(f16, fmt), codes.astype(np.uint8))

def test_the_conversions_past_the_largest_value():
  big = np.array([1e6, -1e6, np.inf], np.float32)
  assert floats.f32_to_ocp8(big, "e4m3").tolist() == [0x7f, 0xff, 0x7f]      # gfx950: the NaN with the sign
  assert floats.f32_to_ocp8(big, "e5m2").tolist() == [0x7c, 0xfc, 0x7c]      # infinity
  assert floats.f32_to_fnuz8(big, "e4m3fnuz").tolist() == [0x80, 0x80, 0x80]
  assert floats.to_fp8(big.astype(np.float64), "e4m3").tolist() == [0x7e, 0xfe, 0x7e]   # PTX .satfinite

def test_bf16_rounds_to_nearest_even_once_and_quiets_nans():
  x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.0], np.float32)
  assert floats.bf16bits(x).tolist() == [0x3f80, 0x3f82, 0xc000]
  assert floats.bf16bits(np.array([0x7f800001], np.uint32).view(np.float32)).tolist() == [0x7fc0]
  # just above a tie in f64: rounded to f32 first it would be the tie, and go to even
  assert floats.bf16bits_f64(np.array([1 + 2**-8 + 2**-40])).tolist() == [0x3f81]
  assert floats.rbf16(x).tolist() == [1.0, 1 + 2**-6, -2.0]
  assert floats.bf16_to_f32(np.array([0x3f81], np.uint16)).tolist() == [1 + 2**-7] and floats.bf16_to_f32(0xc000) == -2.0

def test_bf16_nan_test_and_exact_encoding_over_every_pattern():
  u = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
  f = floats.bf16_to_f32(u)
  assert np.array_equal(floats.bf16_isnan(u), np.isnan(f))
  assert np.array_equal(floats.bf16bits_exact(f), np.where(np.isnan(f), np.uint16(0x7fff), u))
  assert floats.bf16bits_exact(f[0x3f80]) == 0x3f80 and floats.bf16bits_exact(np.float32("nan"), 0x7fc0) == 0x7fc0

def test_f16_toward_zero_over_every_pattern():
  h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
  x = h.astype(np.float32)
  assert np.array_equal(floats.f32_to_f16_rtz(x).view(np.uint16)[~np.isnan(h)], h.view(np.uint16)[~np.isnan(h)])
  # just past each value away from zero (and past the largest finite one): the value itself, not the next one up
  fin = np.isfinite(h)
  up = np.nextafter(x[fin], np.copysign(np.float32(np.inf), x[fin]))
  assert np.array_equal(floats.f32_to_f16_rtz(up).view(np.uint16), h[fin].view(np.uint16))
  assert floats.f32_to_f16_rtz(np.float32(1e6)) == np.float16(65504) and np.isinf(floats.f32_to_f16_rtz(np.float32(np.inf)))

def test_the_binary_formats_largest_and_least_normal_values():
  assert (floats.F16.max, floats.F16.tiny) == (float(np.finfo(np.float16).max), float(np.finfo(np.float16).tiny))
  assert (floats.F32.max, floats.F32.tiny) == (float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny))
  assert floats.BF16.max == float(floats.bf16_to_f32(0x7f7f)) and floats.BF16.tiny == float(floats.bf16_to_f32(0x0080))

rng = np.random.default_rng(0)  # the test's own stream while it runs (tests/conftest.py seeds it from the node id)

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [1, 1024, floats.DOT_LANES + 1])
def test_any_nan_finds_one_nan_anywhere_and_no_false_one(dtype, n):
  """The dot-product test of any_nan against np.isnan over a NaN at random places, infinities of both signs beside
  each other (whose sum is NaN without any NaN element), overflowing sums, and strided and 0-d arrays. The runtimes
  call it under np.errstate(all="ignore"), as here."""
  with np.errstate(all="ignore"): _any_nan_cases(dtype, n)

def _any_nan_cases(dtype, n:int):
  x = rng.standard_normal(n).astype(dtype)
  assert floats.any_nan(x) is False
  for i in rng.integers(0, n, 4):
    y = x.copy()
    y[i] = np.nan
    assert floats.any_nan(y) is True and floats.any_nan(y.reshape(1, n)) is True
    assert floats.any_nan(y.astype(y.dtype.newbyteorder())) is True   # a byte-swapped array: the general path
  if n > 1:
    y = x.copy()
    y[:2] = [np.inf, -np.inf]   # the dot is NaN, no element is
    assert floats.any_nan(y) is False
    big = np.full(n, np.finfo(dtype).max, dtype)
    big[n // 2:] *= -1   # the sum overflows to inf one way, then the other
    assert floats.any_nan(big) is False
    assert floats.any_nan(np.repeat(y, 2)[::2]) is False   # a strided view
  assert floats.any_nan(np.array(np.nan, dtype)) is True and floats.any_nan(np.array(1, dtype)) is False
  assert floats.any_nan(np.zeros(0, dtype)) is False
