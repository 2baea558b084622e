"""Floating-point arithmetic as the GPU rounds it, on numpy arrays.

Exact operations (.rn/.rz/.rm/.rp add, sub, mul, fma, div, sqrt, rcp; cvt) are bit-exact. A float16/bfloat16/float32
operation is evaluated in float64 together with the sign of its exact error (TwoSum / Dekker TwoProduct), then rounded
to the target format in the requested mode (`round_to`); where one float64 rounding is provably innocuous (+ - * / sqrt
of float32/float16 in round-to-nearest: 53 >= 2p+2) the plain numpy cast is used. float64 fma uses the
round-to-odd emulation of Boldo & Melquiond. A NaN these compute may have any sign and payload (numpy's loops and the
host's libm pick differently); the rows pass every float result through `canon`, the canonical NaN NVIDIA returns.

Approximate instructions are evaluated in float64 and rounded to the target format, so each is within 1 ulp of the
exact function (well inside the hardware's documented bounds):

  instruction            hardware bound (PTX ISA)                    this emulator vs exact (tested)
  ex2.approx.f32         2 ulp (rel. error 2^-22.5 for ftz)           <= 1 ulp of float32
  lg2.approx.f32         abs. error 2^-22.6 on the mantissa range     <= 1 ulp of float32
  sin/cos.approx.f32     abs. error 2^-20.9 in [-pi, pi]              <= 1 ulp of float32 (any range)
  tanh.approx.f32        rel. error 2^-10.987                         <= 1 ulp of float32
  rcp.approx.f32         1 ulp                                        correctly rounded (0.5 ulp)
  sqrt.approx.f32        rel. error 2^-23                             correctly rounded (0.5 ulp)
  rsqrt.approx.f32       rel. error 2^-22.9                           <= 1 ulp of float32
  div.approx/full.f32    2 ulp                                        correctly rounded (0.5 ulp)
  ex2/tanh.approx.f16    rel. error 2^-9.9 / 2^-10.7                  <= 1 ulp of float16 (also bf16)
  rcp/sqrt/rsqrt.approx.ftz.f64   rel. error 2^-50 / 1 ulp            correctly rounded / <= 1 ulp
"""
from __future__ import annotations
import numpy as np
from mockgpu.errors import UnsupportedInstruction
from mockgpu.compiler import native
from mockgpu.compiler.ptx.types import FMTS, INT_RANGE
# the PTX runtime's names
from mockgpu.compiler.floats import any_nan, Fmt, F32, bf16bits_exact, bf16_isnan, to_fp8, fp8_to_f16, bf16_to_f32  # noqa: F401
from mockgpu.compiler.exact import two_sum, two_prod, nudge64, fma64, round_fraction  # noqa: F401 (the PTX runtime's names)
from mockgpu.compiler.exact import op_with_error_sign as _exact

F64 = np.float64
U64 = np.uint64

# *** conversions between storage and float64 ***

def to64(x, t:str):
  """A stored value of PTX type t (f16/f32/f64 arrays, bf16 as uint16 bits) as float64."""
  if t == "bf16": return bf16_to_f32(x).astype(F64)
  return x.astype(F64)

def from64(x, t:str):
  """float64 values already on t's grid (or inf/nan) to t's storage."""
  if t == "f64": return x
  if t == "bf16": return bf16bits_exact(x, 0x7fff)   # PTX's canonical NaN
  return x.astype(np.float16 if t == "f16" else np.float32)

# *** the canonical NaN ***

# What NVIDIA hardware returns for a NaN result, whatever the operands' payloads (PTX ISA: the canonical NaN of f32 is
# 0x7fffffff, of f16 and bf16 0x7fff). The ISA names no f64 canonical NaN: 0x7fffffffffffffff, the same pattern, is
# inferred (README, Fidelity).
CANON_NAN = {"f32": np.uint32(0x7fffffff).view(np.float32), "f16": np.uint16(0x7fff).view(np.float16),
             "f64": np.uint64(0x7fffffffffffffff).view(np.float64)}

def canon(x, t:str):
  """x (PTX type t) with every NaN replaced by the canonical NaN: one max pass finds whether there is one."""
  if t == "bf16":   # bits: a NaN is an exponent of ones with a non-zero fraction
    m = bf16_isnan(x)
    if not m.any(): return x
    r = np.where(m, np.uint16(0x7fff), x)
    return r if np.ndim(x) else r[()]
  if type(x) is np.ndarray and not any_nan(x): return x  # the common case first: an array without a NaN
  if np.ndim(x) == 0: return CANON_NAN[t] if np.isnan(x) else x
  if x.size == 0 or not np.isnan(x.max()): return x
  return np.where(np.isnan(x), CANON_NAN[t], x)

# *** rounding a float64 (plus the sign of its error) to a format ***

def round_to(s, esign, fmt:Fmt, mode:str):
  """Round the exact value s + tiny (whose sign is esign; 0 when s is exact) to fmt in mode rn/rz/rm/rp.
  Returns float64 values on fmt's grid (or +-inf)."""
  s = np.asarray(s, F64)
  esign = np.asarray(esign, F64)
  neg = np.signbit(s)
  a = np.abs(s)
  ea = np.where(neg, -esign, esign)
  x, q = _scaled(a, fmt)
  # an inexact value sitting exactly on a grid point or midpoint moves one float64 ulp toward its true side
  on_half = (x * 2) == np.floor(x * 2)
  nudge = (ea != 0) & on_half & (a > 0) & np.isfinite(a)
  if np.any(nudge):
    a = np.where(nudge, np.nextafter(a, np.where(ea > 0, np.inf, 0.0)), a)
    x, q = _scaled(a, fmt)
  fl = np.floor(x)
  frac = x - fl
  if mode == "rn": up = (frac > 0.5) | ((frac == 0.5) & (np.fmod(fl, 2) == 1))
  elif mode == "rz": up = np.zeros_like(frac, bool)
  elif mode == "rm": up = neg & (frac > 0)
  elif mode == "rp": up = ~neg & (frac > 0)
  else: raise UnsupportedInstruction(f"rounding mode .{mode}")
  r = (fl + up) * q
  over = r > fmt.max
  if over.any():
    to_inf = {"rn": np.ones_like(neg), "rz": np.zeros_like(neg), "rm": neg, "rp": ~neg}[mode]
    r = np.where(over, np.where(to_inf, np.inf, fmt.max), r)
  r = np.where(np.isinf(s), np.inf, r)
  r = np.where(neg, -r, r)
  r = np.where(np.isnan(s), s, r)
  return r if r.ndim else r[()]

def _scaled(a, fmt:Fmt):
  """a in units of fmt's quantum at a's exponent (exact: a power-of-two scaling), and that quantum."""
  _, k = np.frexp(a)
  q = np.ldexp(1.0, np.maximum(k - 1, fmt.emin) - fmt.p + 1)
  return a / q, q

# *** arithmetic in a format and mode ***

def farith(op:str, t:str, mode:str, *args):
  """op in format t (f16/bf16/f32/f64) with rounding mode; args and result in t's storage."""
  with np.errstate(all="ignore"):
    xs = [to64(x, t) for x in args]
    if t == "f64":
      if op == "fma": return fma64(*xs, mode)
      s, es = _exact(op, *xs)
      return nudge64(s, es, mode)
    fmt = FMTS[t]
    if mode == "rn" and t in ("f32", "f16") and op in ("add", "sub", "mul", "div", "sqrt"):
      s = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
           "sqrt": lambda a: np.sqrt(a)}[op](*xs)
      return from64(s, t)
    if op == "fma" and mode == "rn" and t == "f32": return fma32(*args)
    s, es = _exact(op, *xs)
    return from64(round_to(s, es, fmt, mode), t)

_F32 = np.dtype(np.float32)

def fma32(a, b, c):
  """Correctly rounded float32 fma (fma.rn.f32): the native fmaf ufunc (mockgpu/compiler/native.py) for float32
  operands when it is built, else _fma32_numpy. Both round once, so they agree on every non-NaN result. NaN payloads
  differ: numpy's loops with a uniform operand pick the other operand's NaN than the ufunc's fixed x86 order does,
  so any NaN lane sends the whole call to _fma32_numpy (NaNs are rare in real kernels; one max pass finds them)."""
  if (fma := native.fma_f32()) is not None and \
      getattr(a, "dtype", None) == _F32 and getattr(b, "dtype", None) == _F32 and getattr(c, "dtype", None) == _F32:
    r = fma(a, b, c)
    if not any_nan(r): return r
  return _fma32_numpy(a, b, c)

def fma32_canon(a, b, c):
  """canon(fma32(a, b, c), "f32") with one NaN test on the fast path: the native fmaf's result, where it holds no NaN,
  is already canonical (the backend renders the fma.rn.f32 row's canon of its fma as this call)."""
  if (fma := native.fma_f32()) is not None and \
      getattr(a, "dtype", None) is _F32 and getattr(b, "dtype", None) is _F32 and getattr(c, "dtype", None) is _F32:
    r = fma(a, b, c)
    if not any_nan(r): return r
  return canon(fma32(a, b, c), "f32")

def fma32_raw():
  """The fma a deferred fma.rn.f32 runs as (the numpy backend's Ctx.flush_fma): the native fmaf ufunc, else the
  float64 emulation. Its lanes that are not NaN are fma32's; a NaN lane may hold any NaN, made canonical by the
  check that ends the run of fmas (nan_in, canon_each). Bound once per batch by the kernel's prologue."""
  return native.fma_f32() or _fma32_numpy

def nan_in(*xs) -> bool:
  """Whether any of the float values xs holds a NaN (the check that ends a run of deferred fmas)."""
  for x in xs:
    if any_nan(x): return True
  return False

def canon_each(t:str, *xs) -> tuple:
  """canon of each of xs (a run of deferred fmas that made a NaN: every register the run wrote)."""
  return tuple(canon(x, t) for x in xs)

def _fma32_numpy(a, b, c):
  """Correctly rounded float32 fma. a*b is exact in float64, so only the sum rounds twice, and that matters only when
  the float64 sum lands exactly on a float32 midpoint while being inexact: then it moves toward its true side.
  (Hot path: runs under the launch's np.errstate; every pass over the lanes counts.)"""
  if np.ndim(a) == 0: a, b = b, a
  if np.ndim(b) == 0 and (r := _fma32_pow2(a, b, c)) is not None: return r
  if not (np.ndim(a) or np.ndim(c)):
    s = F64(a) * F64(b) + F64(c)
    r = s.astype(np.float32)
    cand = (int(s.view(U64)) & 0x1FFFFFFF) == 0x10000000 or (abs(r) <= np.float32(F32.tiny) and s != 0)
  else:
    # explicit casts then same-type ufuncs: cheaper than mixed-type loops; two float64 buffers in all
    if np.ndim(a):
      s = a.astype(F64)
      np.multiply(s, b.astype(F64) if np.ndim(b) else b, out=s)
    else: s = np.full(np.shape(c), F64(a) * F64(b))   # only c varies
    c64 = np.empty(s.shape, F64)
    c64[...] = c
    np.add(s, c64, out=s)
    r = s.astype(np.float32)
    # a float32 midpoint in the normal range has float64 mantissa bits 28..0 = 1000...0; subnormal results are checked
    # apart. An exact zero s needs nothing: a float64 sum of the exact p and c is zero only when p + c is.
    low = np.bitwise_and(s.view(U64), U64(0x1FFFFFFF), out=c64.view(U64))
    cand = bool(np.equal(low, U64(0x10000000)).any()) or \
      (bool(np.fmin.reduce(np.abs(r), axis=None) <= np.float32(F32.tiny)) and bool(_tiny_nonzero(s, r).any()))
  if not cand: return r
  bits = np.asarray(s).view(U64)
  cand = ((bits & U64(0x1FFFFFFF)) == U64(0x10000000)) | _tiny_nonzero(s, r)
  p = np.multiply(a, b, dtype=F64)
  if not np.shape(s):
    si, ei = two_sum(p, F64(c))
    return _fma32_fix(np.atleast_1d(si), np.atleast_1d(ei))[0]
  i = np.flatnonzero(cand)
  pick = lambda x: F64(x) if np.ndim(x) == 0 else np.broadcast_to(x, np.shape(s)).reshape(-1)[i].astype(F64)
  si, ei = two_sum(pick(p), pick(c))
  r.reshape(-1)[i] = _fma32_fix(si, ei)
  return r

def _tiny_nonzero(s, r):
  """Lanes whose float32 result is at most the smallest normal (a sum just below it may round up to it) while the
  float64 sum is not exactly zero."""
  return (np.abs(r) <= np.float32(F32.tiny)) & (s != 0)

def _fma32_pow2(a, b, c):
  """fma with a uniform power-of-two b (x*2+1, x*0.5-c): while every a*b is a normal float32, it is exact in float32
  and the fma is one correctly rounded float32 add. None when some lane leaves that range (or is inf/nan)."""
  fb = float(b)
  if fb == 0 or not np.isfinite(fb) or np.frexp(fb)[0] not in (0.5, -0.5): return None
  t = a * b
  if not np.ndim(t) or t.dtype != np.float32 or not t.size: return None
  at = np.abs(t)
  if not (at.min() >= np.float32(F32.tiny) and at.max() <= np.float32(F32.max)): return None
  np.add(t, c, out=t)
  return t

def _fma32_fix(s, e):
  """float32 rounding of s + e (e: the exact error of the float64 sum s)."""
  fixed = s.astype(np.float32)
  # results up to the smallest normal are rounded exactly; above it, a candidate is a float64 tie on the float32 grid,
  # which one float64 step toward the true side settles
  small = np.abs(fixed) <= np.float32(F32.tiny)
  if (inexact := np.flatnonzero((e != 0) & ~small)).size:
    fixed[inexact] = np.nextafter(s[inexact], np.where(e[inexact] > 0, np.inf, -np.inf)).astype(np.float32)
  if small.any(): fixed[small] = round_to(s[small], np.sign(e[small]), F32, "rn").astype(np.float32)
  return fixed

# *** modifiers ***

def ftz(x):
  """Flush float32 subnormals to sign-preserving zero."""
  return np.where(np.abs(x) < np.float32(F32.tiny), x * np.float32(0), x)

def sat(x):
  """Clamp to [0, 1]; NaN becomes 0."""
  z = np.zeros((), x.dtype)
  return np.where(np.isnan(x), z, np.clip(x, z, np.ones((), x.dtype)))

def fmin(a, b, nan:bool=False):
  return _minmax(np.fmin, a, b, nan, True)
def fmax(a, b, nan:bool=False):
  return _minmax(np.fmax, a, b, nan, False)

def _minmax(f, a, b, nan:bool, is_min:bool):
  r = f(a, b)
  if nan: r = np.where(np.isnan(a) | np.isnan(b), np.array(np.nan, r.dtype), r)
  z = r == 0
  if np.any(z):
    # -0.0 < +0.0
    neg = (np.signbit(a) | np.signbit(b)) if is_min else (np.signbit(a) & np.signbit(b))
    r = np.where(z, np.where(neg, -np.zeros((), r.dtype), np.zeros((), r.dtype)), r)
  return r

# *** approximate functions (see the table above) ***

_APPROX = {"ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "rcp": lambda x: 1.0 / x,
           "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x)}

def approx(fn:str, t:str, x):
  with np.errstate(all="ignore"):
    y = _APPROX[fn](to64(x, t))
    if t == "f64": return y
    return from64(round_to(y, 0.0, FMTS[t], "rn"), t) if t == "bf16" else y.astype(np.float16 if t == "f16" else np.float32)

# *** conversions ***

def float_to_int(x64, t:str, mode:str, dt:np.dtype):
  """cvt.rni/rzi/rmi/rpi.int.float: round to an integer, saturate to the type's range, NaN -> 0."""
  r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil, "rn": np.rint, "rz": np.trunc, "rm": np.floor,
       "rp": np.ceil}[mode](x64)
  lo, hi = INT_RANGE[t]
  nan = np.isnan(r)
  r = np.where(nan, 0.0, r)
  big = r >= float(hi)   # float(hi) rounds up to 2^n for 32/64-bit types
  small = r <= float(lo)
  out = np.where(big | small, 0.0, r).astype(dt)
  out = np.where(big, np.array(hi).astype(dt), out)
  out = np.where(small, np.array(lo).astype(dt), out)
  return out if np.ndim(x64) else out[()]

def int_to_float(x, t:str, mode:str):
  """cvt.rn/rz/rm/rp.float.int, exact for 64-bit integers too."""
  if mode == "rn" and t in ("f32", "f64", "f16") and np.asarray(x).dtype.itemsize <= 4 and t != "f16":
    return x.astype(np.float32 if t == "f32" else F64)
  x = np.asarray(x)
  s = x.astype(F64)
  if x.dtype.itemsize == 8:
    # the float64 conversion may round; its exact error from the 32-bit halves gives the direction
    hi, lo = (x >> 32).astype(F64), (x & 0xffffffff).astype(F64)
    es = np.sign((hi * 2.0 ** 32 - s) + lo)
  else: es = np.zeros(s.shape)
  r = nudge64(s, es, mode) if t == "f64" else from64(round_to(s, es, FMTS[t], mode), t)
  return r if np.ndim(r) else r[()]

def float_to_float(x, src:str, dst:str, mode:str):
  """cvt between float formats; widening is exact, narrowing rounds in mode."""
  if dst == src: return x
  if mode == "rn" and (src, dst) in (("f32", "f16"), ("f64", "f32"), ("f64", "f16")):
    return x.astype(np.float16 if dst == "f16" else np.float32)
  x64 = to64(x, src)
  if dst == "f64": return x64
  if src == "f64" or FMTS[dst].p < FMTS[src].p or (src, dst) == ("f16", "bf16"):
    return from64(round_to(x64, 0.0, FMTS[dst], mode), dst)
  return from64(x64, dst)

def round_integral(x, t:str, mode:str):
  """cvt.rni/rzi/rmi/rpi.f.f: round to an integral value in the same format."""
  x64 = to64(x, t)
  r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[mode](x64)
  return from64(np.asarray(np.copysign(r, x64)), t) if t != "f64" else np.copysign(r, x64)

# *** fp8 (cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f32/.f16x2, cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2) ***
# the formats and conversions are compiler/floats.py's (to_fp8, fp8_to_f16); compiler/native_floats.c's
# f64_to_fp8_satfinite/fp8_to_f16_bits compute the same, one value at a time

def fp8x2_from_f32(hi, lo, t:str, relu:bool=False):
  """cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f32 d, a, b: d (b16) = {fp8(a) upper byte, fp8(b) lower byte}."""
  return (to_fp8(np.asarray(hi).astype(F64), t, relu).astype(np.uint16) << np.uint16(8)) | \
    to_fp8(np.asarray(lo).astype(F64), t, relu).astype(np.uint16)

def fp8x2_from_f16x2(x, t:str, relu:bool=False):
  """cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f16x2 d, a: each half of a (b32) to the byte of d (b16) in its place."""
  x = np.asarray(x).astype(np.uint32)
  half = lambda v: v.astype(np.uint16).view(np.float16).astype(F64)
  return fp8x2_from_f32(half(x >> np.uint32(16)), half(x & np.uint32(0xffff)), t, relu)

def fp8x2_to_f16x2(x, t:str, relu:bool=False):
  """cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2 d, a: the bytes of a (b16) to the halves of d (b32), lower byte -> lower half."""
  x = np.asarray(x).astype(np.uint32)
  return fp8_to_f16(x, t, relu).astype(np.uint32) | (fp8_to_f16(x >> np.uint32(8), t, relu).astype(np.uint32) << np.uint32(16))
