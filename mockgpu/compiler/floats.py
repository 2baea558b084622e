"""The float formats that both ISAs read: the binary formats' parameters (f32, f16, bf16), the fp8 formats (OCP
E4M3/E5M2, and gfx942's FNUZ ones) with each code's value, and the conversions to and from the formats narrower than
f32 that the RDNA/CDNA and PTX numpy runtimes compute. f16 itself is numpy's float16 (IEEE binary16, its casts
correctly rounded); what numpy does not give (bf16, fp8, f16 rounded toward zero) is written here, once.

Ground floor: imports nothing of mockgpu. The C conversion library both preludes include (compiler/native_floats.c)
computes the same, one value at a time; tests/compiler/test_native_floats.py compares the two over every code.
"""
from __future__ import annotations
import functools
import numpy as np

# *** the binary formats ***

class Fmt:
  """A binary float format: p significand bits (with the implicit one), emin the least normal exponent, its largest
  finite value and its least normal value."""
  def __init__(self, name:str, p:int, emin:int, emax:int):
    self.name, self.p, self.emin = name, p, emin
    self.max = float((2 - 2.0 ** (1 - p)) * 2.0 ** emax)
    self.tiny = 2.0 ** emin
F32, F16, BF16 = Fmt("f32", 24, -126, 127), Fmt("f16", 11, -14, 15), Fmt("bf16", 8, -126, 127)

# *** finding a NaN ***

DOT_LANES = 8192  # past this many elements a max pass is as cheap, and a BLAS dot may start threads
_ONES:dict[int, np.ndarray] = {}  # ones to dot with: float32 of n elements at n, float64 at -n
_MAX = np.maximum.reduce
_F32 = np.dtype(np.float32)  # numpy's one float32 dtype object (another, byte-swapped one, takes the general path)

def any_nan(x) -> bool:
  """Whether the float array x holds a NaN: the float rows' hot test (a generated NaN becomes the hardware's; a NaN
  lane sends an fma to its exact path). A dot product with ones is NaN when an element is (NaN * 1 and NaN + y are
  NaN), and BLAS makes it one pass at ~0.4 us for a 1024-lane register, where np.isnan(x).any() is two passes and
  ~1.5 us. The dot is also NaN for an inf beside a -inf (or sums that overflow both ways): then np.isnan decides.
  Larger arrays (and f16, which has no BLAS): numpy's maximum, which propagates a NaN, in one pass. Callers run
  under np.errstate(all="ignore"), as translated code does (a dot whose sum overflows would warn)."""
  if type(x) is np.ndarray and x.dtype is _F32 and (ones:=_ONES.get(x.size)) is not None:  # the hot case first
    s = x.ravel().dot(ones)
    if s == s: return False
    return bool(np.isnan(x).any())
  if type(x) is np.ndarray and (c:=x.dtype.char) in "efd" and (n:=x.size):
    if n > DOT_LANES or c == "e":
      s = _MAX(x, axis=None)
      return bool(s != s)
    if (ones:=_ONES.get(n if c == "f" else -n)) is None: ones = _ONES[n if c == "f" else -n] = np.ones(n, c)
    s = x.ravel().dot(ones)
    if s == s: return False
  return bool(np.isnan(x).any())

# *** f16 ***

def f32_to_f16_rtz(x) -> np.ndarray:
  """f32 -> f16 rounded toward zero (the nearest f16 stepped toward zero where it lies beyond x; overflow: the largest
  finite value, infinities and NaNs kept)."""
  x = np.asarray(x, np.float32)
  with np.errstate(over="ignore"): h = x.astype(np.float16)   # past the range: inf, stepped back below
  over = np.isfinite(x) & (np.abs(h.astype(np.float32)) > np.abs(x))
  return np.where(over, np.nextafter(h, np.float16(0)), h)

# *** bf16 ***

def bf16_to_f32(u):
  """bf16 bits (uint16) as f32, exactly."""
  return (np.asarray(u, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32) if np.ndim(u) else \
    np.uint32(int(u) << 16).view(np.float32)

def bf16bits(x) -> np.ndarray:
  """An f32 value rounded to bf16 (to nearest even; a NaN stays a NaN, quieted) as the 16 bits of a register half."""
  u = np.asarray(x, np.float32).view(np.uint32)
  r = np.where(np.isnan(np.asarray(x, np.float32)), u | np.uint32(0x400000), u + np.uint32(0x7fff) + ((u >> 16) & 1))
  return (r >> 16).astype(np.uint32)

def bf16bits_f64(x) -> np.ndarray:
  """An f64 value rounded once to bf16 (to nearest even) as 16 bits: rounded to f32 to odd first (the f32 bits of the
  value truncated toward zero, the last bit set where inexact), which then rounds to bf16 as x itself would."""
  x = np.asarray(x, np.float64)
  f = x.astype(np.float32)
  b = f.view(np.uint32)
  inexact = (f.astype(np.float64) != x) & ~np.isnan(x)
  b = np.where(inexact & (np.abs(f.astype(np.float64)) > np.abs(x)), b - np.uint32(1), b)  # the magnitude toward zero
  return bf16bits(np.where(inexact, b | np.uint32(1), b).astype(np.uint32).view(np.float32))

def bf16_isnan(u) -> np.ndarray:
  """Whether bf16 bits (uint16) are a NaN: an exponent of ones and a fraction that is not zero."""
  return (np.asarray(u) & np.uint16(0x7fff)) > np.uint16(0x7f80)

def bf16bits_exact(x, nan:int=0x7fff):
  """Values already on bf16's grid (or infinities, NaNs) as bf16 bits (uint16), a NaN as the bits `nan`."""
  f = np.asarray(x).astype(np.float32)
  bits = (f.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
  bits = np.where(np.isnan(f), np.uint16(nan), bits)
  return bits if np.ndim(x) else bits[()]

def rbf16(x) -> np.ndarray:
  """An f32 value rounded to the nearest bf16 value (as an f32)."""
  return (bf16bits(x) << 16).astype(np.uint32).view(np.float32)

# *** fp8 ***

# fp8 formats: (exponent bits, mantissa bits, exponent bias, has inf, the NaN codes). OCP (RDNA4, gfx950, PTX's
# e4m3/e5m2): e4m3 (E4M3FN) has no infinity, S.1111.111 its NaNs; e5m2 is IEEE-like (S.11111.00 infinity). gfx942's
# FNUZ formats have no infinity and no -0: 0x80 is the only NaN.
FP8 = {"e4m3": (4, 3, 7, False, (0x7f, 0xff)), "e5m2": (5, 2, 15, True, ()),
       "e4m3fnuz": (4, 3, 8, False, (0x80,)), "e5m2fnuz": (5, 2, 16, False, (0x80,))}

@functools.lru_cache(maxsize=None)
def fp8_table(fmt:str) -> np.ndarray:
  """The float64 value of each of the 256 codes of an fp8 format."""
  e_bits, m_bits, bias, has_inf, nans = FP8[fmt]
  out = np.empty(256, np.float64)
  for code in range(256):
    sign, exp, man = code >> 7, (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if code in nans or (has_inf and exp == (1 << e_bits) - 1 and man): v = np.nan
    elif has_inf and exp == (1 << e_bits) - 1: v = np.inf
    elif exp == 0: v = man * 2.0 ** (1 - bias - m_bits)
    else: v = (1 + man / (1 << m_bits)) * 2.0 ** (exp - bias)
    out[code] = -v if sign else v
  return out

def precision(fmt:str) -> tuple[int, int, float]:
  """An fp8 format's significand bits with the implicit one, minimum normal exponent and largest finite value."""
  _, m_bits, bias, _, _ = FP8[fmt]
  values = fp8_table(fmt)
  return m_bits + 1, 1 - bias, float(values[np.isfinite(values)].max())

# *** gfx942/gfx950's conversions (v_cvt_pk_fp8/bf8_f32, non-saturating) ***

def f32_to_ocp8(x, fmt:str) -> np.ndarray:
  """gfx950's f32_to_fp8/f32_to_bf8 (v_cvt_pk_fp8/bf8_f32) as u16 codes of OCP format fmt (e4m3, e5m2), rounded to
  nearest even; past the largest finite value (the midpoint to the next binade step included, by the even rule) the
  NaN 0x7f (e4m3) or infinity 0x7c (e5m2) with the input's sign, as the manual's f32_to_fp8 reads
  (tests/pcode/readings.py); a NaN gives 0x7f with its sign."""
  x = np.asarray(x, np.float32)
  a, sign = np.abs(x).astype(np.float64), (np.signbit(x).astype(np.uint16) << np.uint16(7))
  vals = fp8_table(fmt)[:128]
  top = 0x7e if fmt == "e4m3" else 0x7b                    # the largest finite code
  fin = vals[:top + 1]
  i = np.searchsorted(fin, np.where(np.isnan(a), 0.0, a))  # fin[i - 1] < a <= fin[i]
  lo, hi = np.clip(i - 1, 0, top), np.clip(i, 0, top)
  dlo, dhi = a - fin[lo], fin[hi] - a
  code = np.where((dhi < dlo) | ((dhi == dlo) & (hi % 2 == 0)), hi, lo).astype(np.uint16)
  step = fin[top] - fin[top - 1]                            # the next value would be fin[top] + step
  over = (a > fin[top] + step / 2) | ((a == fin[top] + step / 2) & (top % 2 == 1))
  special = np.uint16(0x7f if fmt == "e4m3" else 0x7c)
  code = np.where(over | np.isinf(a), special, code)
  code = np.where(np.isnan(a), np.uint16(0x7f), code)
  return (code | sign).astype(np.uint16)

def f32_to_fnuz8(x, fmt:str) -> np.ndarray:
  """gfx942's f32_to_fp8/f32_to_bf8 (v_cvt_pk_fp8/bf8_f32) as u16 codes of FNUZ format fmt (e4m3fnuz: E4M3, bias 8;
  e5m2fnuz: E5M2, bias 16), no infinity, no negative zero, 0x80 the only NaN. Rounded to nearest even over the finite
  codes (0x7f the largest: 240, 57344); past it (the midpoint included, by the even rule: the next code would be even),
  an infinity and a NaN give the NaN 0x80 (the non-saturating conversion; inferred: the CDNA3 manual's pseudocode is
  not in tinygrad's tables, and this is what the OCP forms on gfx950 do with their NaN); a result that rounds to zero
  is 0x00 whatever the sign."""
  x = np.asarray(x, np.float32)
  a, sign = np.abs(x).astype(np.float64), (np.signbit(x).astype(np.uint16) << np.uint16(7))
  fin = fp8_table(fmt)[:128]
  i = np.searchsorted(fin, np.where(np.isnan(a), 0.0, a))
  lo, hi = np.clip(i - 1, 0, 0x7f), np.clip(i, 0, 0x7f)
  dlo, dhi = a - fin[lo], fin[hi] - a
  code = np.where((dhi < dlo) | ((dhi == dlo) & (hi % 2 == 0)), hi, lo).astype(np.uint16)
  half = fin[0x7f] + (fin[0x7f] - fin[0x7e]) / 2
  bad = (a >= half) | np.isinf(a) | np.isnan(a)
  return np.where(bad, np.uint16(0x80), np.where(code == 0, code, code | sign)).astype(np.uint16)

# *** PTX's conversions (cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f32/.f16x2, cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2) ***

def to_fp8(x64, t:str, relu:bool=False):
  """Float64 values (exact f32 or f16) to fp8 codes (uint8): round to nearest even, saturate to the largest finite value
  (.satfinite, infinities included), NaN -> 0x7f with the input's sign; .relu: negative inputs (-0 too) -> +0, NaN -> 0x7f."""
  p, emin, mx = precision(t)
  x = np.asarray(x64, np.float64)
  nan, neg = np.isnan(x), np.signbit(x)
  with np.errstate(all="ignore"):
    a = np.where(nan, 0.0, np.minimum(np.abs(x), mx))
    e = np.where(a == 0, emin, np.maximum(np.frexp(a)[1] - 1, emin))   # the binade of a (emin for subnormals and zero)
    r = np.rint(np.ldexp(a, (p - 1) - e))             # a in units of its binade's ulp, rounded to nearest even
  # one more ulp count past 2^p is the next binade's first code, so the code is linear in r across a carry
  code = ((e - emin) << (p - 1)).astype(np.int64) + r.astype(np.int64)
  code = code.astype(np.uint8) | np.where(neg, np.uint8(0x80), np.uint8(0))
  code = np.where(nan, np.where(neg & (not relu), np.uint8(0xff), np.uint8(0x7f)), code)
  if relu: code = np.where(neg & ~nan, np.uint8(0), code)
  return code.astype(np.uint8) if np.ndim(code) else np.uint8(code[()])

def fp8_to_f16(b, t:str, relu:bool=False):
  """fp8 codes (the low 8 bits of b) to float16 bits (uint16), exactly (fp8_table); NaN -> 0x7fff (the canonical NaN,
  sign dropped); .relu: negative values (-0 too) -> +0."""
  b = np.asarray(b).astype(np.uint32) & np.uint32(0xff)
  neg = (b >> np.uint32(7)) != 0
  val = np.abs(fp8_table(t)[b])
  nan = np.isnan(val)
  with np.errstate(all="ignore"): h16 = val.astype(np.float16)   # exact (NaN codes replaced below)
  h = (h16.view(np.uint16) | np.where(neg, np.uint16(0x8000), np.uint16(0))).astype(np.uint16)
  h = np.where(nan, np.uint16(0x7fff), h)
  if relu: h = np.where(neg & ~nan, np.uint16(0), h)
  return h.astype(np.uint16) if np.ndim(h) else np.uint16(h[()])
