"""Numbers for the pseudocode evaluator: IEEE binary formats, exact rounding and typed float values.

Integers are plain Python ints (unbounded); a typed read (x.u32, x.i16) or a typed write truncates them, as the
manual's registers do. Floats are `Float` values: a format ('f16', 'bf16', 'f32', 'f64', or None for an exact value
such as 2.0F ** 32) and a number. Every float result is rounded once to its format from the exact result:

  + - * / of two values: computed in float64, then rounded to f32/f16/bf16. For these operations rounding to float64
        first and then to a format of p <= 24 significand bits gives the correctly rounded result, because
        53 >= 2p + 2 (double rounding is innocuous: Figueroa, "When is double rounding innocuous?", 1995). float64
        results are Python's own IEEE arithmetic.
  fma, and anything with an exact operand: computed exactly as a Fraction and rounded once.

NaN results: the manual does not say which NaN an arithmetic operation returns, so a NaN made by arithmetic or by a
conversion function is `loose`: it compares equal to any quiet NaN of its format (the comparison in harness.py). A
NaN that is moved, selected, negated, sized-cast (64'F(...)) or quieted (cvtToQuietNAN) keeps its exact bits.
"""
from __future__ import annotations
import math, struct
from fractions import Fraction

# format -> (exponent bits, fraction bits); fp8 and bf8 are OCP 8-bit floats (RDNA4's .fp8/.bf8): bf8 (E5M2) is
# IEEE-like, fp8 (E4M3) has no infinities and one NaN per sign (S.1111.111), its top exponent holding numbers up to 448
FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52), "fp8": (4, 3), "bf8": (5, 2)}
WIDTH = {f: 1 + e + m for f, (e, m) in FORMATS.items()}
ORDER = {"fp8": 0, "bf8": 0, "f16": 1, "bf16": 1, "f32": 2, "f64": 3}
FP8_NAN = 0x7f
INF, NAN = math.inf, math.nan

class Float:
  """A float value: fmt (a FORMATS key, or None when exact), v (a Python float, or a Fraction when exact and not a
  float), nan (the exact bits of a NaN in fmt, or None when the NaN is loose)."""
  __slots__ = ("fmt", "v", "nan")
  def __init__(self, fmt:str|None, v, nan:int|None=None): self.fmt, self.v, self.nan = fmt, v, nan
  def is_nan(self) -> bool: return isinstance(self.v, float) and self.v != self.v
  def __repr__(self): return f"Float({self.fmt}, {self.v!r}{'' if self.nan is None else f', nan=0x{self.nan:x}'})"

def fields(fmt:str) -> tuple[int, int, int]:
  """(exponent bits, fraction bits, bias)"""
  e, m = FORMATS[fmt]
  return e, m, (1 << (e - 1)) - 1

_decoded:dict = {}

def decode(bits:int, fmt:str) -> Float:
  """The value of a bit pattern; NaNs keep their bits (cached: Float values are never changed in place)."""
  key = (bits, fmt)
  if (x:=_decoded.get(key)) is None:
    if len(_decoded) > 1 << 18: _decoded.clear()
    x = _decoded[key] = _decode(bits, fmt)
  return x

def _decode(bits:int, fmt:str) -> Float:
  e, m, bias = fields(fmt)
  bits &= (1 << (1 + e + m)) - 1
  sign, ex, frac = bits >> (e + m), (bits >> m) & ((1 << e) - 1), bits & ((1 << m) - 1)
  if fmt == "fp8" and bits & 0x7f == FP8_NAN: return Float(fmt, NAN, bits)
  if ex == (1 << e) - 1 and fmt != "fp8":
    if frac: return Float(fmt, NAN, bits)
    return Float(fmt, -INF if sign else INF)
  if fmt == "f64": return Float(fmt, struct.unpack("<d", struct.pack("<Q", bits))[0])
  v = math.ldexp(frac, 1 - bias - m) if ex == 0 else math.ldexp(frac | 1 << m, ex - bias - m)
  return Float(fmt, -v if sign else v)

def is_quiet(bits:int, fmt:str) -> bool:
  if fmt == "fp8": return True  # E4M3's one NaN has no signalling form
  _, m, _ = fields(fmt)
  return bool(bits >> (m - 1) & 1)

def nan_convert(bits:int, src:str, dst:str) -> int:
  """A NaN re-encoded in another format as hardware converters do: the sign and the top fraction bits kept (a
  narrowing that would drop every set payload bit keeps the quiet bit's position set, so it stays a NaN)."""
  se, sm, _ = fields(src)
  de, dm, _ = fields(dst)
  sign, frac = bits >> (se + sm) & 1, bits & ((1 << sm) - 1)
  frac = frac << (dm - sm) if dm >= sm else frac >> (sm - dm)
  if frac == 0: frac = 1 << (dm - 1)
  if dst == "fp8": return sign << 7 | FP8_NAN
  return sign << (de + dm) | ((1 << de) - 1) << dm | frac

def round_ratio(n:int, d:int, fmt:str, rtz:bool=False) -> int:
  """The bits of n/d (d > 0) rounded to fmt: to nearest even, or toward zero (rtz; overflow then gives the largest
  finite value). Subnormal results are rounded at their fixed quantum; no flushing."""
  e_bits, m, bias = fields(fmt)
  sign = 1 if n < 0 else 0
  n = abs(n)
  signbit = sign << (e_bits + m)
  if n == 0: return signbit
  emin, emax, p = 1 - bias, bias + (fmt == "fp8"), m + 1  # E4M3's top exponent holds numbers
  e = n.bit_length() - d.bit_length()
  if (n << max(0, -e)) < (d << max(0, e)): e -= 1   # now 2**e <= n/d < 2**(e+1)
  e = max(e, emin)
  q = e - (p - 1)                                    # the quantum: the result is a multiple of 2**q
  num, den = (n << -q, d) if q < 0 else (n, d << q)
  mant, rem = divmod(num, den)
  if not rtz and (2 * rem > den or (2 * rem == den and mant & 1)): mant += 1
  if mant == 1 << p: mant, e = mant >> 1, e + 1
  if fmt == "fp8" and (e > emax or (e == emax and mant == (1 << p) - 1)):  # past 448: OCP's non-saturating NaN
    return signbit | (0x7e if rtz else FP8_NAN)
  if e > emax:
    if rtz: return signbit | ((1 << e_bits) - 2) << m | ((1 << m) - 1)
    return signbit | ((1 << e_bits) - 1) << m
  if mant < 1 << m: return signbit | mant                  # subnormal (exponent field 0)
  return signbit | (e + bias) << m | (mant - (1 << m))

def ratio(x) -> tuple[int, int]:
  """An exact finite number (float, Fraction or int) as (numerator, denominator)."""
  if isinstance(x, float): return x.as_integer_ratio()
  if isinstance(x, int): return x, 1
  return x.numerator, x.denominator

def encode(x:Float, fmt:str, rtz:bool=False) -> tuple[int, bool]:
  """The bits of x in fmt (rounded once) and whether they are a loose NaN (any quiet NaN matches)."""
  e, m, _ = fields(fmt)
  v = x.v
  if isinstance(v, float) and v != v:
    if fmt == "fp8" and (x.nan is None or x.fmt is None): return FP8_NAN, True
    if x.nan is None or x.fmt is None: return ((1 << e) - 1) << m | 1 << (m - 1), True
    return (x.nan if x.fmt == fmt else nan_convert(x.nan, x.fmt, fmt)), False
  if isinstance(v, float) and math.isinf(v):
    if fmt == "fp8": return (0x80 if v < 0 else 0) | FP8_NAN, False  # E4M3 has no infinity: the NaN
    return (1 << (e + m) if v < 0 else 0) | ((1 << e) - 1) << m, False
  if fmt == "f64" and isinstance(v, float): return struct.unpack("<Q", struct.pack("<d", v))[0], False
  if v == 0:  # keeps the sign of a float zero
    return (1 << (e + m) if math.copysign(1.0, float(v)) < 0 else 0), False
  n, d = ratio(v)
  return round_ratio(n, d, fmt, rtz), False

_PACK = {"f32": ("<f", "<I", 0x7f800000, 32), "f16": ("<e", "<H", 0x7c00, 16)}

def rounded(fmt:str|None, v, rtz:bool=False) -> Float:
  """The number v (float/Fraction/int, or inf/nan) as a value of fmt, rounded once; None keeps it exact."""
  if fmt is None: return Float(None, v)
  if type(v) is float and not rtz:
    if fmt == "f64": return Float("f64", v)
    if fmt in _PACK and v == v:  # Python's pack rounds a float64 to nearest even, subnormals included
      f, u, inf, w = _PACK[fmt]
      try: return decode(struct.unpack(u, struct.pack(f, v))[0], fmt)
      except OverflowError: return decode(inf | (1 << (w - 1) if v < 0 else 0), fmt)
  bits, loose = encode(Float(None, v), fmt, rtz)
  return Float(fmt, NAN, None) if loose else decode(bits, fmt)

def exact(x:Float):
  """x's number as a Fraction (finite) or float (inf/nan)."""
  v = x.v
  if isinstance(v, float) and (v != v or math.isinf(v)): return v
  return v if isinstance(v, Fraction) else Fraction(v)

def wider(a:str|None, b:str|None) -> str|None:
  """The format of an operation on values of formats a and b (C's usual conversions; exact values adapt)."""
  if a is None: return b
  if b is None: return a
  return a if ORDER[a] >= ORDER[b] else b

def signbit(x:Float) -> int:
  v = x.v
  if isinstance(v, float) and v != v: return (x.nan >> (WIDTH[x.fmt] - 1)) & 1 if x.nan is not None else 0
  if not isinstance(v, float): return int(v < 0)  # exact values: no -0
  return 1 if math.copysign(1.0, v) < 0 else 0
