"""Numeric helpers the translated RDNA code calls: lane masks, register packing, exact and approximate float math.

Registers are uint32 arrays: SGPRs `S[reg]` have shape [waves], VGPRs `V[reg]` shape [waves, 32]. Helpers take and
return numpy arrays over whole wave groups; none loops over lanes.

Transcendental ops are computed in float64 and rounded once to the destination type, so each result is the exact
value correctly rounded. The ISA promises 1 ULP for the f32 forms; ours are within 0.5 ULP of the exact function:

  =================  ====================================  ==============================
  instruction        computes                              error bound vs. exact result
  =================  ====================================  ==============================
  v_exp_f32/f16      2**x                                  <= 0.5 ulp (hardware: 1 ulp)
  v_log_f32/f16      log2(x)  (log2(0) = -inf, <0: NaN)     <= 0.5 ulp (hardware: 1 ulp)
  v_rcp_f32/f16      1/x  (also v_rcp_iflag_f32)            <= 0.5 ulp (hardware: 1 ulp)
  v_rsq_f32/f16      1/sqrt(x)                             <= 0.5 ulp (hardware: 1 ulp)
  v_sqrt_f32/f16     sqrt(x)                               <= 0.5 ulp (hardware: 1 ulp)
  v_sin_f32/f16      sin(2*pi*x)  (x in revolutions)       <= 0.5 ulp + 2**-50 absolute
  v_cos_f32/f16      cos(2*pi*x)                           <= 0.5 ulp + 2**-50 absolute
  v_rcp/sqrt_f64     1/x, sqrt(x) in float64               <= 0.5 ulp (IEEE float64)
  v_rsq_f64          1/sqrt(x) in float64                  <= 1 ulp (two float64 roundings)
  =================  ====================================  ==============================

sin/cos reduce x to [-0.5, 0.5] revolutions exactly (x - rint(x) is exact in float64) before multiplying by 2*pi.
An invalid operation on a number (log2, sqrt or rsq of a negative one) gives the default NaN, +qNaN (0x7fc00000 in
float32), on every host CPU.
"""
from __future__ import annotations
import contextlib, functools, threading
import numpy as np
from mockgpu.boards import WAVE32
from mockgpu.compiler import native
from mockgpu.compiler.exact import fma64 as fma64_rn, exact_sum, generated_nan
# CDNA: its rows' helpers (GFX9 min/max, v_bitop3), SDWA operand selection and MFMA
from mockgpu.compiler.rdna.gfx9 import bitop3, sdwa_src, sdwa_dst, MFMAShape, mfma, fp8_table  # noqa: F401
# translated code's names
from mockgpu.compiler.floats import any_nan, f32_to_ocp8, f32_to_fnuz8, f32_to_f16_rtz, bf16_to_f32, bf16bits, bf16bits_f64, rbf16  # noqa: F401
# The lane tables (DPP, permlane) come from the operand model, imported by the functions that read them: the operand
# model imports tinygrad's instruction tables (~60 ms), which a process running only cached translations never needs.

LANE = np.arange(32, dtype=np.uint32)    # each lane's index in a wave32 wave
LANE64 = np.arange(64, dtype=np.uint32)  # and in a wave64 one
_SHIFTS64 = LANE64.astype(np.uint64)
EVERY = slice(None)  # the wave index of a group that is the whole chunk
u8, u16, u32, u64 = np.uint8, np.uint16, np.uint32, np.uint64
i8, i16, i32, i64 = np.int8, np.int16, np.int32, np.int64
f16, f32, f64 = np.float16, np.float32, np.float64
# the same types as dtype objects, for the translated code's register views (`V[3].view(dt_f32)`: ndarray.view converts
# a scalar type to its dtype at every call, 0.37 us against 0.13 us) and for identity tests of an array's dtype (numpy
# keeps one dtype object per native type: an array that fails the `is` test takes the general path)
dt_u32, dt_i32, dt_u64, dt_i64, dt_f32, dt_f64 = (np.dtype(t) for t in (u32, i32, u64, i64, f32, f64))
M32 = 0xffffffff

# *** lane masks: uint32 per wave in wave32, uint64 (an SGPR pair) in wave64 ***

def unpack(x) -> np.ndarray:
  """A lane mask per wave (uint32: 32 lanes, uint64: 64) -> bool [waves, lanes]. A mask computed from constants only
  (a literal, an inline constant or a constant lane index: a SALU result of no register) is a 0-d scalar: it is the
  same for every wave, so it gives [1, lanes], which broadcasts against the [waves, lanes] arrays it meets."""
  x = np.asarray(x)
  if x.dtype == u64: lanes = _SHIFTS64
  else: x, lanes = x.astype(u32, copy=False), LANE
  return ((x.reshape(-1)[:, None] if x.ndim == 0 else x[:, None]) >> lanes & 1).astype(bool)

def pack(b, n:int, lanes:int) -> np.ndarray:
  """bool [waves, lanes] (or broadcastable) -> the lane mask per wave (uint32 for 32 lanes, uint64 for 64)."""
  if getattr(b, "shape", None) != (n, lanes): b = np.broadcast_to(b, (n, lanes))
  b = np.ascontiguousarray(b, dtype=bool)
  return np.packbits(b, axis=1, bitorder="little").view(u32 if lanes == WAVE32 else u64).reshape(n)

_ALL_LANES:dict[tuple[int, int], np.ndarray] = {}
_FULL_EXEC:dict[tuple[int, int], bytes] = {}

def em(exec_mask) -> tuple[np.ndarray, bool]:
  """The EXEC mask (per wave, uint32 or uint64) as lanes, and whether every lane of every wave is on (then writes
  need no masking)."""
  key = (len(exec_mask), exec_mask.dtype.itemsize)
  if (ones:=_FULL_EXEC.get(key)) is None: ones = _FULL_EXEC[key] = b"\xff" * (key[0] * key[1])
  if exec_mask.tobytes() == ones:  # cheaper than a numpy reduction for the few waves of a small dispatch
    if (m:=_ALL_LANES.get(key)) is None:
      m = _ALL_LANES[key] = np.ones((key[0], 8 * key[1]), bool)
      m.flags.writeable = False
    return m, True
  return unpack(exec_mask), False

def vw(V:list, d:int, w, val, m:np.ndarray, full:bool):
  """Write VGPR d for the active lanes of waves w. Register arrays are immutable: the register is rebound to a new
  array (or to val itself), so values may safely be shared between registers."""
  old = V[d]
  if type(w) is slice:  # the whole chunk of waves
    if not full:
      new = old.copy()
      np.copyto(new, val, where=m)  # about twice as fast as np.where
      V[d] = new
    elif getattr(val, "shape", None) == old.shape: V[d] = val
    else: V[d] = np.broadcast_to(val, old.shape)
    return
  new = old.copy()
  new[w] = val if full else np.where(m, val, old[w])
  V[d] = new

# vw of a value the translator knows has the register's shape (a VALU result with a VGPR source, a load's): the subset
# blocks call it as vw; the whole-chunk blocks have it as `V[d] = val if full else vwm(V[d], val, m)` (numpy.full_writes)
vwv = vw

def vwm(old:np.ndarray, val, m:np.ndarray) -> np.ndarray:
  """A register old with the active lanes m of the whole chunk set to val (a new array: registers are not written in place)."""
  new = old.copy()
  np.copyto(new, val, where=m)
  return new

def vw16(V:list, d:int, w, val, m, full, hi:bool):
  """Write 16 bits (low or high half) of VGPR d for the active lanes, keeping the other half."""
  old = V[d][w]
  bits = np.asarray(val).astype(u32) & 0xffff
  vw(V, d, w, (old & 0xffff) | (bits << 16) if hi else (old & 0xffff0000) | bits, m, full)

# *** bit views ***

def bits32(x) -> np.ndarray:
  """Any integer-valued array as its low 32 bits."""
  if type(x) is np.ndarray and x.dtype is dt_u32: return x
  return np.asarray(x).astype(u32)

def fbits32(x) -> np.ndarray:
  """A float value rounded to f32, as bits."""
  if type(x) is np.ndarray and x.dtype is dt_f32: return x.view(dt_u32)
  return np.asarray(x, f32).view(u32)

def fbits16(x) -> np.ndarray:
  return np.asarray(x, f16).view(u16).astype(u32)

def h16(x, hi:bool=False) -> np.ndarray:
  """The f16 in the low (or high) half of each 32-bit value."""
  x = np.asarray(x, u32)
  return ((x >> 16) if hi else x).astype(u16).view(f16)

def b16(x, hi:bool=False) -> np.ndarray:
  x = np.asarray(x, u32)
  return ((x >> 16) if hi else x).astype(u16)

def bf16(x, hi:bool=False) -> np.ndarray:
  """The bf16 in the low (or high) half, widened exactly to f32."""
  return bf16_to_f32(b16(x, hi))

def r64(lo, hi) -> np.ndarray:
  return (np.asarray(hi, u32).astype(u64) << 32) | np.asarray(lo, u32)

def lo32(x) -> np.ndarray: return np.asarray(x).astype(u64).astype(u32)
def hi32(x) -> np.ndarray: return (np.asarray(x).astype(u64) >> 32).astype(u32)
def as_u64(x) -> np.ndarray:
  x = np.asarray(x)
  return x.view(u64) if x.dtype.itemsize == 8 and x.dtype.kind != "f" else x.astype(u64)
def f64bits(x) -> np.ndarray: return np.asarray(x, f64).view(u64)

# *** float helpers ***

def ftz32(x):
  """Flush f32 denormals to signed zero (FLOAT_DENORM_MODE_32 = flush)."""
  x = np.asarray(x, f32)
  return np.where(np.abs(x) < np.float32(1.1754943508222875e-38), np.copysign(f32(0), x), x)

def ftz64(x):
  x = np.asarray(x, f64)
  return np.where(np.abs(x) < np.finfo(f64).tiny, np.copysign(f64(0), x), x)

def ftz16(x):
  x = np.asarray(x, f16)
  return np.where(np.abs(x) < np.float16(6.103515625e-05), np.copysign(f16(0), x), x)

_HALF_ULP_BITS = {f32: (0x1fffffff, 0x10000000, 2.0**-126), f16: (0x3ffffffffff, 0x20000000000, 2.0**-14)}

def _fma_odd(a, b, c, t) -> np.ndarray:
  """a*b+c for f32/f16 operands with one rounding to t. a*b is exact in f64, so the f64 sum s is the exact value
  rounded once; rounding s again to t is only wrong when s lands exactly on a midpoint of t (or in t's denormal range,
  where the midpoints sit elsewhere). Only then the sum is redone rounded-to-odd (TwoSum gives its exact error)."""
  p = np.multiply(a, b, dtype=f64)
  s = np.add(p, c, dtype=f64)
  mask, mid, tiny = _HALF_ULP_BITS[t]
  if not (((s.view(u64) & mask) == mid) | (np.abs(s) < tiny)).any(): return s.astype(t)
  c = np.asarray(c).astype(f64)
  bp = s - c
  err = (p - bp) + (c - (s - bp))
  sb = s.view(np.int64)
  fix = (err != 0) & np.isfinite(s) & ((sb & 1) == 0)
  step = np.where((err > 0) == (s > 0), 1, -1)
  return np.where(fix, (sb + step).view(f64), s).astype(t)

_NATIVE_FMA:list = []  # native.fma_f32() once it is not None

def fma32(a, b, c) -> np.ndarray:
  """f32 a*b+c rounded once: the native fmaf ufunc when it is built, else the float64 emulation (same bits)."""
  try: f32s = a.dtype is dt_f32 and b.dtype is dt_f32 and c.dtype is dt_f32  # f32 arrays or numpy scalars (getattr: +0.1 us)
  except AttributeError: f32s = False  # a Python number
  if f32s:
    if _NATIVE_FMA: return _NATIVE_FMA[0](a, b, c)
    if (fma:=native.fma_f32()) is not None:  # built (or found) once per process: kept, not asked again per op
      _NATIVE_FMA.append(fma)
      return fma(a, b, c)
  return _fma_odd(np.asarray(a), np.asarray(b), np.asarray(c), f32)

def fma16(a, b, c) -> np.ndarray: return _fma_odd(a, b, c, f16)

def fma_rtz(a, b, c) -> np.ndarray:
  """f32 a*b+c rounded once toward zero (VINTERP's RTZ forms): a*b is exact in f64, TwoSum gives the f64 sum's exact
  error, and the f32 nearest to the sum steps toward zero where it lies beyond the exact value (overflow: the largest
  finite value)."""
  a, b, c = (np.asarray(x, f32).astype(f64) for x in (a, b, c))
  with np.errstate(all="ignore"):
    p = a * b
    s = p + c
    bp = s - c
    err = (p - bp) + (c - (s - bp))
    r = s.astype(f32)
    beyond = (np.abs(r.astype(f64)) > np.abs(s)) | ((r.astype(f64) == s) & (err != 0) & ((err > 0) != (s > 0)))
    return np.where(np.isfinite(s) & beyond, np.nextafter(r, f32(0)), r)

def fp8_f32(x) -> np.ndarray:
  """An OCP E4M3 byte as f32, exactly (RDNA4's .fp8: floats.FP8's e4m3, gfx950's)."""
  return fp8_table("cdna4", "FP8")[np.asarray(x).astype(np.int64) & 0xff].astype(f32)

def f32_fp8(x) -> np.ndarray:
  """An f32 as an OCP E4M3 code (u16; gfx950's v_cvt_pk_fp8_f32: floats.f32_to_ocp8)."""
  return f32_to_ocp8(x, "e4m3")

def f32_bf8(x) -> np.ndarray:
  """An f32 as an OCP E5M2 code (u16; v_cvt_pk_bf8_f32)."""
  return f32_to_ocp8(x, "e5m2")

def bf8_f32(x) -> np.ndarray:
  """An OCP E5M2 byte as f32, exactly."""
  return fp8_table("cdna4", "BF8")[np.asarray(x).astype(np.int64) & 0xff].astype(f32)

def fp8_fnuz_f32(x) -> np.ndarray:
  """A gfx942 FNUZ E4M3 byte as f32, exactly (0x80: the NaN)."""
  return fp8_table("cdna3", "FP8")[np.asarray(x).astype(np.int64) & 0xff].astype(f32)

def bf8_fnuz_f32(x) -> np.ndarray:
  """A gfx942 FNUZ E5M2 byte as f32, exactly (0x80: the NaN)."""
  return fp8_table("cdna3", "BF8")[np.asarray(x).astype(np.int64) & 0xff].astype(f32)

def f32_fp8_fnuz(x) -> np.ndarray: return f32_to_fnuz8(x, "e4m3fnuz")
def f32_bf8_fnuz(x) -> np.ndarray: return f32_to_fnuz8(x, "e5m2fnuz")

def fp8_pk_f32(x) -> np.ndarray:
  """The two E4M3 bytes of a 16-bit value as f32 bits, the low byte's in bits 31:0 (v_cvt_pk_f32_fp8)."""
  x = np.asarray(x).astype(u64)
  return fbits32(fp8_f32(x)).astype(u64) | fbits32(fp8_f32(x >> u64(8))).astype(u64) << u64(32)

def bf8_pk_f32(x) -> np.ndarray:
  """The two E5M2 bytes of a 16-bit value as f32 bits, the low byte's in bits 31:0 (v_cvt_pk_f32_bf8)."""
  x = np.asarray(x).astype(u64)
  return fbits32(bf8_f32(x)).astype(u64) | fbits32(bf8_f32(x >> u64(8))).astype(u64) << u64(32)

@functools.lru_cache(maxsize=None)
def quad_lanes(wave:int, quad:int) -> np.ndarray:
  """The lane each lane reads for a VINTERP source of quad lane `quad`: (lane & ~3) + quad."""
  return (np.arange(wave) & ~3) + quad

def fma64(a, b, c) -> np.ndarray:
  """f64 a*b+c rounded once (to nearest even): compiler/exact.py's float64 fma, one implementation for both ISAs (a Dekker
  split here gave inf or NaN for products near float64's range and lost -0 + -0's sign)."""
  with np.errstate(over="ignore", invalid="ignore"): return fma64_rn(np.asarray(a, f64), np.asarray(b, f64), np.asarray(c, f64))

def clamp01(x):
  """Output clamp to [0, 1]; NaN clamps to 0 as on hardware."""
  x = np.asarray(x)
  return np.where(x > 0, np.minimum(x, x.dtype.type(1)), x.dtype.type(0))

def fmax(a, b, ieee:bool=False):
  """v_max_*: a NaN operand yields the other one; +0 is greater than -0. In IEEE mode (MODE.IEEE, the descriptor's
  IEEE_MODE) a signalling NaN operand is returned quieted instead, S0's first (the manual's pseudocode)."""
  r = _nan_other(a, b, np.maximum(a, b))
  z = r == 0
  if z.any(): r = np.where(z & (a == 0) & (b == 0), np.where(np.signbit(a), b, a), r)
  return _snan_wins(a, b, r) if ieee else r

def fmin(a, b, ieee:bool=False):
  """v_min_*: a NaN operand yields the other one; -0 is less than +0; IEEE mode as fmax."""
  r = _nan_other(a, b, np.minimum(a, b))
  z = r == 0
  if z.any(): r = np.where(z & (a == 0) & (b == 0), np.where(np.signbit(a), a, b), r)
  return _snan_wins(a, b, r) if ieee else r

def fmax_gfx9(a, b):
  """CDNA (GFX9) v_max_*, IEEE mode (the descriptor's default): RDNA's, except that two quiet NaNs give S1."""
  return _two_quiet_nans_s1(a, b, fmax(a, b, ieee=True))

def fmin_gfx9(a, b): return _two_quiet_nans_s1(a, b, fmin(a, b, ieee=True))

def _two_quiet_nans_s1(a, b, r) -> np.ndarray:
  a, b = np.asarray(a), np.asarray(b)
  both = np.isnan(a) & np.isnan(b)
  if not both.any(): return r
  return np.where(both & ~_quiet(a)[1] & ~_quiet(b)[1], b, r)

def _nan_other(a, b, r) -> np.ndarray:
  """r where neither operand is a NaN, else the other operand (two NaNs: a). Not np.fmax/np.fmin: some of numpy's
  loops (the scalar ones) return a signalling NaN operand quieted, as IEEE 754-2008 maxNum does."""
  with np.errstate(invalid="ignore"): return np.where(np.isnan(b), a, np.where(np.isnan(a), b, r))

def _snan_wins(a, b, r) -> np.ndarray:
  """IEEE-mode min/max: r, except that a signalling NaN operand gives itself quieted (S0's before S1's)."""
  if not (np.isnan(a).any() or np.isnan(b).any()): return r
  qa, sa = _quiet(np.asarray(a))
  qb, sb = _quiet(np.asarray(b))
  return np.where(sa, qa, np.where(sb, qb, r))

_QUIET_BIT = {np.dtype(f16): (u16, 0x200), np.dtype(f32): (u32, 0x400000), np.dtype(f64): (u64, 0x8000000000000)}

def _quiet(x:np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """(x with its quiet bit set, whether x is a signalling NaN)."""
  ut, bit = _QUIET_BIT[x.dtype]
  raw = x.view(ut)
  return (raw | ut(bit)).view(x.dtype), np.isnan(x) & ((raw & ut(bit)) == 0)

def quiet(x) -> np.ndarray:
  """cvtToQuietNAN: a NaN with its quiet bit set (its sign and payload kept); numbers unchanged. Hardware returns
  quiet NaNs from conversions, where numpy's float16 casts keep a signalling NaN signalling."""
  x = np.asarray(x)
  q, _ = _quiet(x)
  return np.where(np.isnan(x), q, x)

def _ieee754_2019(a, b, pick_a) -> np.ndarray:
  """IEEE 754-2019 minimum/maximum around the non-NaN choice pick_a: the first signalling NaN operand quieted, else
  the first quiet NaN (the RDNA4 pseudocode of v_minimum_f32 and its kin)."""
  a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
  qa, sa = _quiet(a)
  qb, sb = _quiet(b)
  r = np.where(pick_a, a, b)
  r = np.where(np.isnan(b), qb, r)
  return np.where(np.isnan(a) & (sa | ~sb), qa, r)

def max_num(a, b) -> np.ndarray:
  """RDNA4 v_max_num (IEEE 754-2019 maximumNumber): fmax, but two NaN operands give the first one quieted."""
  r = fmax(a, b)
  both = np.isnan(a) & np.isnan(b)
  return np.where(both, _quiet(np.asarray(a))[0], r) if both.any() else r

def min_num(a, b) -> np.ndarray:
  """RDNA4 v_min_num (IEEE 754-2019 minimumNumber): fmin, but two NaN operands give the first one quieted."""
  r = fmin(a, b)
  both = np.isnan(a) & np.isnan(b)
  return np.where(both, _quiet(np.asarray(a))[0], r) if both.any() else r

def med3_num(a, b, c) -> np.ndarray:
  """RDNA4 v_med3_num: a NaN operand makes it min3_num, else the median as v_med3 picks it."""
  nan = np.isnan(a) | np.isnan(b) | np.isnan(c)
  return np.where(nan, min_num(min_num(a, b), c), med3(a, b, c))

def minimum754(a, b) -> np.ndarray:
  return _ieee754_2019(a, b, (a < b) | ((a == 0) & (b == 0) & np.signbit(a) & ~np.signbit(b)))

def maximum754(a, b) -> np.ndarray:
  return _ieee754_2019(a, b, (a > b) | ((a == 0) & (b == 0) & ~np.signbit(a) & np.signbit(b)))

def med3(a, b, c):
  """The median of three numbers as the manual's v_med3 pseudocode picks it: the maximum of the two operands that
  are not equal (==, so -0 equals +0) to the largest, ordered by v_max (+0 > -0): med3(+0, -0, +inf) is +0."""
  m = fmax(fmax(a, b), c)
  return np.where(m == a, fmax(b, c), np.where(m == b, fmax(a, c), fmax(a, b)))

def fmed3(a, b, c, ieee:bool=False):
  """v_med3_f16/f32: a NaN operand makes it v_min3 (min of min, in the wave's IEEE mode), else med3."""
  nan = np.isnan(a) | np.isnan(b) | np.isnan(c)
  r = med3(a, b, c)
  return np.where(nan, fmin(fmin(a, b, ieee), c, ieee), r) if nan.any() else r

DEFAULT_NAN = {np.dtype(f16): np.uint16(0x7e00).view(f16), np.dtype(f32): np.uint32(0x7fc00000).view(f32),
               np.dtype(f64): np.uint64(0x7ff8000000000000).view(f64)}

class _Watch(threading.local):
  """Whether a NaN may have been generated since the last gnan, per thread. Always so outside watching(); inside,
  only after an IEEE invalid operation (numpy's `invalid` error, raised exactly where an operation makes a NaN of
  non-NaN operands: inf - inf, 0 * inf, sqrt(-1); a NaN operand carried through raises none)."""
  on, seen = False, True

WATCH = _Watch()

def _invalid(kind:str, flag:int): WATCH.seen = True

@contextlib.contextmanager
def watching():
  """The numpy error state translated code runs in: nothing warns, and an invalid operation sets WATCH.seen, so that
  a row's NaN test (gnan) runs only after one (the test is ~0.7 us of a ~2.5 us f32 op on a 256-lane dispatch).
  The generator skips the test on that flag only for rows whose helpers keep numpy's error state (numpy.WATCHED)."""
  on = WATCH.on
  WATCH.on = WATCH.seen = True
  try:
    with np.errstate(all="ignore", invalid="call", call=_invalid): yield
  finally: WATCH.on, WATCH.seen = on, True

def gnan(r, *srcs):
  """A row's float result r: where it is a NaN none of the row's float sources is, the NaN was generated (inf - inf,
  0 * inf, ...), and the hardware gives its default NaN, +qNaN (f16 0x7e00, f32 0x7fc00000, f64 0x7ff8000000000000);
  numpy gives the host's (x86: the sign set). A propagated NaN stays as computed."""
  if WATCH.on: WATCH.seen = False  # r is tested here: the flag covers the operations after it
  if not any_nan(r): return r
  nan = np.isnan(r)
  for s in srcs: nan = nan & ~np.isnan(s)
  return np.where(nan, DEFAULT_NAN[np.asarray(r).dtype], r)

def default_nan(x, r):
  """An invalid operation on a number (log2, sqrt or rsq of a negative one) gives the hardware's default NaN, +qNaN.
  numpy's sign there depends on the SIMD loop it dispatches to on the host CPU, so it is set here."""
  bad = np.isnan(r)
  if not bad.any(): return r
  return np.where(bad & ~np.isnan(x), np.nan, r)

def exp2(x, t): return np.exp2(np.asarray(x).astype(f64)).astype(t)
def log2(x, t): return default_nan(x, np.log2(np.asarray(x).astype(f64))).astype(t)
def rcp(x, t): return (1.0 / np.asarray(x).astype(f64)).astype(t)
def rsq(x, t): return default_nan(x, 1.0 / np.sqrt(np.asarray(x).astype(f64))).astype(t)
def sqrt(x, t): return default_nan(x, np.sqrt(np.asarray(x).astype(f64))).astype(t)

def sin_rev(x, t):
  x = np.asarray(x).astype(f64)
  return np.where(np.isfinite(x), np.sin(2 * np.pi * (x - np.rint(x))), np.nan).astype(t)

def cos_rev(x, t):
  x = np.asarray(x).astype(f64)
  return np.where(np.isfinite(x), np.cos(2 * np.pi * (x - np.rint(x))), np.nan).astype(t)

def fract(x):
  x = np.asarray(x)
  t = x.dtype.type
  r = np.minimum(x - np.floor(x), np.nextafter(t(1), t(0)))
  return np.where(np.isinf(x), t(np.nan), r)

def frexp_mant(x):
  m, _ = np.frexp(x)
  return np.where(np.isfinite(x), m, x)

def frexp_exp(x):
  _, e = np.frexp(x)
  return np.where(np.isfinite(x), e, 0).astype(i32)

def ldexp(x, e):
  # beyond +-2200 every float64 (2**-1074 .. 2**1024) scales past the range, so clipping there keeps the result
  return np.ldexp(x, np.clip(np.asarray(e).astype(np.int64), -2200, 2200).astype(i32))

def _two_over_pi_bits(n:int) -> int:
  """The first n bits of the fraction of 2/pi (2/pi < 1): floor(2/pi * 2**n), from Machin's formula in integers."""
  guard = n + 64
  def arctan_inv(k:int) -> int:  # arctan(1/k) * 2**guard
    total, term, j, sign = 0, (1 << guard) // k, 1, 1
    while term:
      total += sign * (term // j)
      term, j, sign = term // (k * k), j + 2, -sign
    return total
  pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)  # pi * 2**guard
  return (2 << (guard + n)) // pi

_TRIG_PREOP:list = []

def trig_preop(x, sel):
  """v_trig_preop_f64: the 53-bit segment of 2/pi's 1201 fraction bits that starts shift = S1[4:0] * 53 bits after its
  point (plus exponent(S0) - 1077 for a large S0), as an exact float scaled by 2**(-53 - shift) (2**128 more for
  exponent(S0) >= 1968): the pseudocode's (1201'B(2/PI) << shift) & (2**53 - 1) read as the segment it describes."""
  if not _TRIG_PREOP:  # every segment, shift 0 .. 31 * 53 + 2047 - 1077
    bits = _two_over_pi_bits(1201)
    _TRIG_PREOP.append(np.array([(bits >> (1148 - s) if s <= 1148 else bits << (s - 1148)) & ((1 << 53) - 1)
                                 for s in range(31 * 53 + 2047 - 1077 + 1)], u64))
  exp = ((np.asarray(x, f64).view(u64) >> u64(52)) & u64(0x7ff)).astype(np.int64)
  shift = (np.asarray(sel).astype(np.int64) & 31) * 53 + np.maximum(exp - 1077, 0)
  scale = -53 - shift + np.where(exp >= 1968, 128, 0)
  return np.ldexp(_TRIG_PREOP[0][shift].astype(f64), scale.astype(i32))

def cvt_int(x, lo:int, hi:int):
  """float -> integer in [lo, hi] as int64, truncating toward zero, saturating, NaN -> 0 (as the hardware converts)."""
  x = np.nan_to_num(np.asarray(x).astype(f64), nan=0.0, posinf=hi, neginf=lo)
  return np.clip(np.trunc(x), lo, hi).astype(np.int64)

def cvt_rtz_f16(x) -> np.ndarray:
  """f32 -> f16 rounding toward zero (v_cvt_pk_rtz_f16_f32)."""
  return f32_to_f16_rtz(x)

def cmp_class(x, mask) -> np.ndarray:
  """v_cmp_class: is x in one of the classes selected by mask bits (0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm,
  5 -0, 6 +0, 7 +denorm, 8 +normal, 9 +inf)."""
  x = np.asarray(x)
  nbits = x.dtype.itemsize * 8
  ut = {16: u16, 32: u32, 64: u64}[nbits]
  mant_bits = {16: 10, 32: 23, 64: 52}[nbits]
  b = x.view(ut).astype(u64)
  exp_max = (1 << (nbits - 1 - mant_bits)) - 1
  e = (b >> mant_bits) & exp_max
  mant = b & ((1 << mant_bits) - 1)
  neg = (b >> (nbits - 1)) & 1 == 1
  quiet = (mant >> (mant_bits - 1)) & 1 == 1
  cls = np.where(e == exp_max, np.where(mant != 0, np.where(quiet, 1, 0), np.where(neg, 2, 9)),
        np.where(e > 0, np.where(neg, 3, 8), np.where(mant != 0, np.where(neg, 4, 7), np.where(neg, 5, 6))))
  return ((np.asarray(mask).astype(u32) >> cls.astype(u32)) & 1) == 1

# the manual's default NaN of v_div_fixup's 0/0 and inf/inf (a negative quiet NaN) and its UNDERFLOW threshold on
# exponent(S2) - exponent(S1) (f16 has none)
_FIXUP_NAN = {f16: (u16, 0xfe00), f32: (u32, 0xffc00000), f64: (u64, 0xfff8000000000000)}
_FIXUP_UNDERFLOW = {f32: -150, f64: -1075}

def div_fixup(s0, s1, s2):
  """v_div_fixup_f16/f32/f64: the special cases of the quotient s0 = s2 / s1, by the manual's pseudocode: a NaN
  operand quieted (S2's first), 0/0 and inf/inf the negative default NaN, x/0 and inf/y infinity, x/inf and 0/y zero,
  a quotient below the smallest subnormal (exponent(S2) - exponent(S1) < -150 / -1075) zero (the manual's UNDERFLOW),
  else |s0| with the quotient's sign. Errata div-fixup-nan: v_div_fixup_f32/f64 turn a NaN estimate into infinity."""
  s0, s1, s2 = np.broadcast_arrays(np.asarray(s0), np.asarray(s1), np.asarray(s2))
  t = s0.dtype.type
  sign = np.signbit(s1) ^ np.signbit(s2)
  inf, zero = np.where(sign, t(-np.inf), t(np.inf)), np.where(sign, t(-0.0), t(0.0))
  r = np.where(sign, -np.abs(s0), np.abs(s0))
  if t is not f16: r = np.where(np.isnan(s0), inf, r)
  if t in _FIXUP_UNDERFLOW: r = np.where(_bexp(s2) - _bexp(s1) < _FIXUP_UNDERFLOW[t], zero, r)
  r = np.where((np.abs(s1) == np.inf) | (s2 == 0), zero, r)
  r = np.where((s1 == 0) | (np.abs(s2) == np.inf), inf, r)
  ut, bits = _FIXUP_NAN[t]
  r = np.where(((s1 == 0) & (s2 == 0)) | ((np.abs(s1) == np.inf) & (np.abs(s2) == np.inf)), ut(bits).view(t), r)
  r = np.where(np.isnan(s1), quiet(s1), r)
  return np.where(np.isnan(s2), quiet(s2), r).astype(t)

def _bexp(x) -> np.ndarray:
  """The biased exponent field of f32/f64 values."""
  x = np.asarray(x)
  if x.dtype == f32: return ((x.view(u32) >> 23) & 0xff).astype(np.int64)
  return ((x.view(u64) >> 52) & 0x7ff).astype(np.int64)

def _is_denorm(x) -> np.ndarray:
  return (np.asarray(x) != 0) & (_bexp(x) == 0)

# v_div_scale/v_div_fmas per format: the scale exponent, the exponent gap of a huge quotient, the biased exponent at
# or below which a numerator (errata div-scale-vcc: a denominator) is tiny, and v_div_fmas's bias (errata
# div-fmas-scale: a quotient estimate S2 with a biased exponent above it was computed 2^scale too small)
_DIV = {f32: (64, 96, 23, 127), f64: (128, 768, 53, 1023)}

def div_scale(s0, s1, s2):
  """v_div_scale_f32/f64: (the scaled S0, VCC) by the manual's pseudocode (D = S0 outside its special cases), and
  errata div-scale-vcc: hardware also sets VCC for a zero denominator, and for a denormal or tiny one (biased
  exponent <= 23 / 53) in the denominator's own call (S0 is S1, not S2). LLVM's division reads VCC from the
  numerator's call only (S0 = S2), where these cases keep the pseudocode's VCC, so the quotient stays exact."""
  s0, s1, s2 = np.broadcast_arrays(*(np.asarray(v) for v in (s0, s1, s2)))
  t = s0.dtype.type
  up, big, tiny_exp, _ = _DIV[t]
  q = s2 / s1
  if t == f32:   # errata div-scale-vcc: a quotient that would be denormal, also one f32 rounds to zero or up to normal
    q64 = s2.astype(f64) / s1.astype(f64)
    tiny_q = (q64 != 0) & (np.abs(q64) < float(np.finfo(f32).tiny))
  else: tiny_q = _is_denorm(q)
  rcp_den = _is_denorm(1.0 / s1.astype(f64)) if t == f64 else np.zeros(s0.shape, bool)
  conds = [((s2 == 0) | (s1 == 0), t(np.nan), s1 == 0),
           (_bexp(s2) - _bexp(s1) >= big, np.where(s0 == s1, np.ldexp(s0, up), s0), True),
           (_is_denorm(s1), np.ldexp(s0, up), False),
           # errata div-scale-vcc: a huge denominator of a denormal quotient is scaled down (the manual: up)
           (rcp_den & _is_denorm(q), np.where(s0 == s1, np.ldexp(s0, -up), s0), True),
           (rcp_den, np.ldexp(s0, -up), False),
           (tiny_q, np.where(s0 == s2, np.ldexp(s0, up), s0), True),
           (_bexp(s2) <= tiny_exp, np.ldexp(s0, up), False)]
  d, vcc = s0.copy(), np.zeros(s0.shape, bool)
  for cond, val, flag in reversed(conds):  # earlier branches take priority, so apply them last
    d = np.where(cond, val, d)
    vcc = np.where(cond, flag, vcc)
  own = (s0.view(_UINT[t]) == s1.view(_UINT[t])) & (s0.view(_UINT[t]) != s2.view(_UINT[t]))
  vcc |= own & (s1 != 0) & (_bexp(s1) <= tiny_exp)
  # errata div-scale-vcc (inferred): a zero numerator sets VCC in both calls (D the pseudocode's NaN; v_div_fixup
  # returns the signed zero whatever v_div_fmas did), a tiny one (biased exponent <= 23 / 53) in the denominator's call
  vcc |= (s2 == 0) & (s1 != 0) & ~np.isnan(s1)
  vcc |= own & (s2 != 0) & (_bexp(s2) <= tiny_exp)
  return d.astype(t), vcc

_UINT = {f16: u16, f32: u32, f64: u64}

def div_fmas(a, b, c, vcc):
  """v_div_fmas_f32/f64: fma(a, b, c), and where VCC is set the quotient estimate's correction for v_div_scale's
  scaling, rounded once (errata div-fmas-scale): times 2^64 (f64: 2^128) when c's biased exponent is above 127
  (1023), else times 2^-64 (2^-128). The manual's 2^32 (2^64) would leave LLVM's quotients scaled."""
  # VCC is per lane where all three sources may be wave-uniform constants: broadcast the four together
  a, b, c, vcc = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c), np.asarray(vcc))
  t = a.dtype.type
  fma = fma32 if t is f32 else fma64
  r = fma(a, b, c)
  if not vcc.any(): return r
  scale, _, _, bias = _DIV[t]
  k = np.where(_bexp(c) > bias, scale, -scale)
  finite = vcc & np.isfinite(a) & np.isfinite(b) & np.isfinite(c)  # NaNs and infinities: the fma's own result
  return np.where(finite, _fma_scaled(a, b, c, k), r).astype(t)

def _fma_scaled(a, b, c, k) -> np.ndarray:
  """2^k * (a*b + c), rounded once to a's format."""
  t = a.dtype.type
  if t is f32:  # 2^k * a and 2^k * c are exact in float64 (|k| = 64): _fma_odd rounds the scaled sum once
    with np.errstate(all="ignore"): return _fma_odd(np.ldexp(a.astype(f64), k), b, np.ldexp(c.astype(f64), k), f32)
  with np.errstate(all="ignore"):
    u = fma64(a, b, c)
    r = np.ldexp(u, k)
  # the scaled result is exact unless it is subnormal, or the unscaled or scaled sum left float64's range: those
  # lanes exactly
  redo = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & \
         (~np.isfinite(u) | ~np.isfinite(r) | ((u != 0) & (np.abs(r) < 2.0 ** -1022)))
  if not redo.any(): return r
  from fractions import Fraction
  from mockgpu.compiler.exact import round_fraction
  r = np.array(r, f64)
  for i in zip(*np.nonzero(redo)):
    exact = (Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))) * Fraction(2) ** int(k[i])
    r[i] = round_fraction(exact, "rn")
  return r

def clz(x):
  """Leading zeros of 32-bit values; -1 (0xffffffff) for 0."""
  x = np.asarray(x, u32)
  n = np.full(x.shape, 32, np.int64)
  v = x.astype(np.int64)
  for sh in (16, 8, 4, 2, 1):  # binary search over bit positions, all lanes at once
    big = v >= (1 << sh)
    n = np.where(big, n - sh, n)
    v = np.where(big, v >> sh, v)
  n = n - (v > 0)
  return np.where(x == 0, -1, n).astype(np.int64).astype(u32)

def ctz(x):
  x = np.asarray(x, u32)
  low = x & (~x + np.uint32(1))  # lowest set bit
  return np.where(x == 0, M32, 31 - clz(low).astype(np.int64)).astype(np.int64).astype(u32)

def cls32(x):
  """Leading sign bits minus one (v_cls_i32); -1 for 0 and -1."""
  x = np.asarray(x, u32)
  v = np.where((x >> 31) == 1, ~x, x)
  r = clz(v).astype(np.int64)
  return np.where((x == 0) | (x == M32), -1, r).astype(np.int64).astype(u32)

def popcount(x):
  x = np.asarray(x).astype(u64)
  x = x - ((x >> 1) & 0x5555555555555555)
  x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0f
  return ((x * np.uint64(0x0101010101010101)) >> 56).astype(u32)

def quadmask(x, width:int):
  """s_quadmask: bit i of D is set when quad i (bits 4i+3:4i) of S0 has any bit set."""
  x, t = np.asarray(x).astype(u64), u32 if width == 32 else u64
  out = np.zeros(x.shape, u64)
  for i in range(width // 4): out |= ((x >> np.uint64(4 * i)) & np.uint64(0xf) != 0).astype(u64) << np.uint64(i)
  return out.astype(t)

def wqm(x, width:int):
  """s_wqm: every quad (bits 4i+3:4i) of D is all ones when that quad of S0 has any bit set, else zero."""
  x, t = np.asarray(x).astype(u64), u32 if width == 32 else u64
  out = np.zeros(x.shape, u64)
  for i in range(width // 4):
    out |= np.where((x >> np.uint64(4 * i)) & np.uint64(0xf) != 0, np.uint64(0xf << (4 * i)), np.uint64(0))
  return out.astype(t)

def clz64(x):
  """s_clz_i32_u64: leading zeros of 64-bit values; -1 for 0."""
  x = np.asarray(x).astype(u64)
  hi, lo = (x >> np.uint64(32)).astype(u32), (x & np.uint64(M32)).astype(u32)
  return np.where(hi != 0, clz(hi), np.where(lo != 0, clz(lo) + u32(32), u32(M32))).astype(u32)

def ctz64(x):
  """s_ctz_i32_b64: trailing zeros of 64-bit values; -1 for 0."""
  x = np.asarray(x).astype(u64)
  hi, lo = (x >> np.uint64(32)).astype(u32), (x & np.uint64(M32)).astype(u32)
  return np.where(lo != 0, ctz(lo), np.where(hi != 0, ctz(hi) + u32(32), u32(M32))).astype(u32)

def brev64(x):
  x = np.asarray(x).astype(u64)
  lo, hi = (x & np.uint64(M32)).astype(u32), (x >> np.uint64(32)).astype(u32)
  return brev32(lo).astype(u64) << np.uint64(32) | brev32(hi).astype(u64)

def brev32(x):
  x = np.asarray(x, u32)
  x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
  x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
  x = ((x >> 4) & 0x0f0f0f0f) | ((x & 0x0f0f0f0f) << 4)
  x = ((x >> 8) & 0x00ff00ff) | ((x & 0x00ff00ff) << 8)
  return ((x >> 16) | (x << 16)).astype(u32)

def bfe(x, off, width, signed:bool, width_bits:int=5):
  """v_bfe (width S2[4:0]) and s_bfe (width S1[22:16]: width_bits 7): bits [off, off+width) of S0 read through an
  arithmetic shift for the signed forms (the pseudocode's S0.i32 >> off), sign-extended from the field's top bit; a
  width of 32 or more keeps every bit above the offset."""
  x = np.asarray(x, u32)
  xs = x.view(np.int32).astype(np.int64) if signed else x.astype(np.int64)
  off = np.asarray(off).astype(np.int64) & 31
  w = np.minimum(np.asarray(width).astype(np.int64) & ((1 << width_bits) - 1), 32)
  r = (xs >> off) & ((np.int64(1) << w) - 1)
  if signed: r = np.where((w > 0) & (w < 32) & (((r >> np.maximum(w - 1, 0)) & 1) == 1), r - (np.int64(1) << w), r)
  return r.astype(u32)

def bfe64(x, s1, signed:bool):
  """s_bfe_u64/s_bfe_i64: offset S1[5:0], width S1[22:16] (7 bits); (S0 >> offset) (arithmetic for i64) masked to the
  width and sign-extended from its top bit. A width of 64 or more keeps every bit: (1 << width) - 1 is all ones in the
  pseudocode's 64-bit arithmetic once 1 << width leaves the register."""
  x, s1 = np.asarray(x, u64), np.asarray(s1, u32)
  off, w = (s1 & u32(63)).astype(u64), ((s1 >> u32(16)) & u32(127)).astype(u64)
  sh = (x.view(i64) >> off.view(i64)).view(u64) if signed else x >> off
  full = w >= u64(64)
  mask = np.where(full, ~u64(0), (u64(1) << np.minimum(w, u64(63))) - u64(1))
  r = sh & mask
  if signed:
    top = (r >> (np.maximum(w, u64(1)) - u64(1))) & u64(1)
    r = np.where(~full & (w > u64(0)) & (top == u64(1)), r | ~mask, r)
  return r.astype(u64)

def perm(s0, s1, sel):
  """v_perm_b32: each result byte picks a byte of {s0, s1} or a constant per ISA BYTE_PERMUTE."""
  data = r64(s1, s0)
  sel = np.asarray(sel, u32)
  out = np.zeros(np.broadcast(data, sel).shape, u32)
  for k in range(4):  # four result bytes, each vectorized over all lanes
    s = (sel >> (8 * k)) & 0xff
    byte = (data >> (8 * np.minimum(s, 7)).astype(u64)) & 0xff
    sign_src = np.choose(np.clip(s.astype(np.int64) - 8, 0, 3), [1, 3, 5, 7])
    sbit = (data >> (8 * sign_src + 7).astype(u64)) & 1
    b = np.where(s >= 13, 0xff, np.where(s == 12, 0, np.where(s >= 8, sbit * 0xff, byte)))
    out |= b.astype(u32) << (8 * k)
  return out

def sext(x, bits:int) -> np.ndarray:
  """Sign-extend the low `bits` of each value to int64."""
  x = np.asarray(x).astype(np.int64) & ((1 << bits) - 1)
  return np.where(x >> (bits - 1) == 1, x - (1 << bits), x)

def _wmma_rows(regs, kind:str, signed:bool=True, split:bool=False) -> np.ndarray:
  """A or B of a 16x16x16 WMMA from its VGPRs: lane l holds row (A) or column (B) l % 16, K packed low to high (two
  16-bit or four 8-bit elements per VGPR). RDNA3 (split False): lanes 16-31 replicate lanes 0-15 and are not read;
  RDNA4 (split): lanes 0-15 hold K 0-7 and lanes 16-31 K 8-15. -> [n, 16, 16]"""
  cols = []
  for r in regs:
    r = np.asarray(r, u32)
    if kind in ("iu8", "iu4"):  # four bytes or eight nibbles a VGPR
      bits = 8 if kind == "iu8" else 4
      for k in range(32 // bits):
        e = ((r >> (bits * k)) & ((1 << bits) - 1)).astype(np.int64)
        cols.append(np.where(e >> (bits - 1), e - (1 << bits), e) if signed else e)
    else:
      half = h16 if kind == "f16" else bf16
      cols += [half(r).astype(f64), half(r, True).astype(f64)]
  x = np.stack(cols, axis=-1)  # [n, lane, element]
  return np.concatenate([x[:, :16], x[:, 16:]], axis=-1) if split else x[:, :16]

def _dot_in_k_order(a, b) -> np.ndarray:
  """sum over k of a[n, r, k] * b[n, c, k], added left to right in K order: the order the C backend (prelude.c wmma)
  adds in, so both give the same bits where float64 cannot hold a sum exactly (einsum's order is its own)."""
  d = a[:, :, None, 0] * b[:, None, :, 0]
  for k in range(1, a.shape[-1]): d = d + a[:, :, None, k] * b[:, None, :, k]
  return d

def wmma(a_regs, b_regs, c_regs, kind_in:str, kind_out:str, hi:bool=False, signed=(True, True), clamp:bool=False,
         layout:str="rdna3", fp8:str|None=None, index=None, index_key:int=0):
  """v_wmma_{f32,f16,bf16,i32}_16x16x16_{f16,bf16,iu8,iu4}, wave32. Element j of lane l of C/D is (row 2*j + l // 16, column
  l % 16) on RDNA3 and (row j + 8 * (l // 16), column l % 16) on RDNA4 (layout). A whole f32/i32 element is VGPR j;
  an f16 (bf16) one is the low (hi=False) or high half of VGPR j on RDNA3, the other half copied from C, and half j % 2 of
  VGPR j // 2 on RDNA4 (packed: 4 VGPRs). RDNA3: products are summed in K order (float64 for f16/bf16 inputs: exact
  unless the products' exponents span more than its 53 bits; int64 for iu8/iu4), the order the C backend adds in, and
  rounded once; RDNA4 (wmma_rdna4): every form summed exactly and rounded once (the C backend declines its float forms).
  Hardware accumulates in an unspecified order, so float results can differ from it in the last bit."""
  if layout == "rdna4": return wmma_rdna4(a_regs, b_regs, c_regs, kind_in, kind_out, signed, clamp, fp8, index, index_key)
  integer = kind_in in ("iu8", "iu4")
  a = _wmma_rows(a_regs, kind_in, signed[0])
  b = _wmma_rows(b_regs, kind_in, signed[1])
  d = _dot_in_k_order(a, b)                        # [n, row, col]
  j, lane = np.arange(8)[:, None], np.arange(32)
  rows, cols = np.broadcast_arrays(2 * j + lane // 16, lane % 16)   # [element, lane]
  c = np.stack([np.asarray(r, u32) for r in c_regs], axis=1)    # [n, VGPR, lane] raw bits
  acc = d[:, rows, cols]                                           # [n, element, lane]
  if integer:
    acc = acc + c.view(i32).astype(np.int64)
    acc = np.clip(acc, -2**31, 2**31 - 1) if clamp else acc
    return [acc.astype(np.int64).astype(u32)[:, j] for j in range(8)]
  nan_in = np.isnan(a).any(-1)[:, rows] | np.isnan(b).any(-1)[:, cols]   # [n, element, lane]: a NaN in its row or column
  if kind_out == "f32":
    cval = c.view(f32).astype(f64)
    out = generated_nan(fbits32((acc + cval).astype(f32)), "f32", nan_in | np.isnan(cval))
  else:
    ch = (c >> 16) if hi else (c & 0xffff)
    cval = bf16_to_f32(ch).astype(f64) if kind_out == "bf16" else ch.astype(u16).view(f16).astype(f64)
    if kind_out == "bf16": res = bf16bits_f64(acc + cval)
    else: res = (acc + cval).astype(f16).view(u16).astype(u32)
    res = generated_nan(np.asarray(res, u32), kind_out, nan_in | np.isnan(cval))
    out = (c & 0xffff) | (res << 16) if hi else (c & 0xffff0000) | res
  return [out[:, j] for j in range(8)]

# *** RDNA4 WMMA: the register layout of the RDNA4 ISA guide's matrix chapter ***

WMMA_BITS = {"f16": 16, "bf16": 16, "iu8": 8, "fp8": 8, "bf8": 8, "iu4": 4}

def wmma_kinds(kind_in:str) -> tuple[str, str]:
  """The element kinds of A and B: one kind for both, or RDNA4's mixed fp8 forms as 'fp8_bf8' (A fp8, B bf8)."""
  a, _, b = kind_in.partition("_")
  return a, b or a

def _wmma_elements(regs, kind:str, signed:bool, fp8:str|None) -> np.ndarray:
  """The elements a lane holds, packed low to high through its VGPRs -> [n, 32 lanes, E] (float64 or int64)."""
  bits = WMMA_BITS[kind]
  words = np.stack([np.asarray(r, u32) for r in regs], axis=-1).astype(np.int64)     # [n, lane, VGPR]
  shifts = np.arange(0, 32, bits)
  e = ((words[..., None] >> shifts) & ((1 << bits) - 1)).reshape(words.shape[:2] + (-1,))
  if kind in ("iu8", "iu4"): return np.where(signed & (e >> (bits - 1) == 1), e - (1 << bits), e)
  if kind in ("fp8", "bf8"): return fp8_table(fp8, kind.upper())[e]
  if kind == "f16": return e.astype(u16).view(f16).astype(f64)
  return bf16_to_f32(e).astype(f64)

def wmma_matrix(regs, kind:str, signed:bool=True, fp8:str|None=None) -> np.ndarray:
  """A (rows) or B (columns) of an RDNA4 WMMA from its VGPRs -> [n, 16, K]. Lane l holds row/column l % 16; K runs in
  chunks of 8 elements, chunk c in lanes 0-15 (c even) or 16-31 (c odd) at the lane's elements 8 * (c // 2) on
  (16x16x16 f16: lanes 0-15 K 0-7, lanes 16-31 K 8-15; 16x16x32 iu4: VGPR 0 K 0-7 / 8-15, VGPR 1 K 16-23 / 24-31)."""
  return _chunked(_wmma_elements(regs, kind, signed, fp8))

def _chunked(x:np.ndarray) -> np.ndarray:
  """A lane-ordered operand [n, 32 lanes, E] as its matrix [n, 16, 2E] by the chunks of 8 (wmma_matrix)."""
  q = x.shape[-1] // 8
  chunks = [x[:, 16 * (c % 2):16 * (c % 2) + 16, 8 * (c // 2):8 * (c // 2) + 8] for c in range(2 * q)]
  return np.concatenate(chunks, axis=-1)

def sparse_k(index, key:int, per_lane:int) -> np.ndarray:
  """v_swmmac_*: the K (of the dense 16 x 2E matrix) of each compressed A element [n, 16, E]. Each lane's index VGPR
  holds two bits per compressed element it holds, element e at bits 2e + 16 * key (the x32 forms' 16 bits: op_sel's
  index key; the x64 form's 32); compressed elements 2g and 2g + 1 are the two nonzero ones of the group of four
  dense K 4g..4g + 3, at offsets given by their bits. The compressed matrix's elements follow wmma_matrix's chunks."""
  idx = np.asarray(index, u32).astype(np.int64)[..., None]                     # [n, lane, 1]
  e = np.arange(per_lane)
  bits = (idx >> (2 * e + 16 * key)) & 3                                        # [n, lane, E]
  return _chunked(bits) + 4 * (np.arange(2 * per_lane) // 2)                   # dense K = 4 * group + offset

def wmma_rdna4(a_regs, b_regs, c_regs, kind_in:str, kind_out:str, signed=(True, True), clamp:bool=False, fp8:str|None=None,
               index=None, index_key:int=0):
  """RDNA4 v_wmma_* and v_swmmac_* (index: A is compressed, sparse_k places its elements): D = A x B + C. C/D element
  j of lane l is (row j + 8 * (l // 16), column l % 16): VGPR j for f32/i32, half j % 2 of VGPR j // 2 for f16/bf16.
  Float products (exact in float64 for every input kind) and C are summed exactly and rounded once to the output
  format; integer sums wrap to 32 bits, or saturate with clamp."""
  ka, kb = wmma_kinds(kind_in)
  a, b = wmma_matrix(a_regs, ka, signed[0], fp8), wmma_matrix(b_regs, kb, signed[1], fp8)
  j, lane = np.arange(8)[:, None], np.arange(32)
  rows, cols = j + 8 * (lane // 16), np.broadcast_to(lane % 16, (8, 32))   # [element, lane]
  c = np.stack([np.asarray(r, u32) for r in c_regs], axis=1)      # [n, VGPR, lane]
  if index is None: bsel = b[:, cols, :]                          # [n, element, lane, K]: B's column for each product
  else:  # each compressed element meets the row of B at its dense K
    k = sparse_k(index, index_key, a.shape[-1] // 2)[:, rows, :]  # [n, element, lane, K']
    bsel = np.take_along_axis(b[:, cols, :], k, axis=-1)
  prods = a[:, rows, :] * bsel                                    # exact (integers: int64)
  if kind_out == "i32":
    acc = prods.sum(-1) + c.view(i32).astype(np.int64)
    acc = np.clip(acc, -2**31, 2**31 - 1) if clamp else acc
    return list(np.moveaxis(acc.astype(np.int64).astype(u32), 1, 0))
  nan_in = np.isnan(a[:, rows, :]).any(-1) | np.isnan(bsel).any(-1)   # [n, element, lane]: a NaN among its inputs
  prods = np.moveaxis(prods, -1, 0)                               # [K, n, element, lane]
  if kind_out == "f32":
    cval = c.view(f32).astype(f64)
    return list(np.moveaxis(generated_nan(exact_sum([*prods, cval], f32).view(u32), "f32", nan_in | np.isnan(cval)), 1, 0))
  ch = np.stack([(c[:, k // 2] >> (16 * (k % 2))) & 0xffff for k in range(8)], axis=1)   # [n, element, lane]
  cval = ch.astype(u16).view(f16).astype(f64) if kind_out == "f16" else bf16_to_f32(ch).astype(f64)
  odd = exact_sum([*prods, cval], None)                           # round-to-odd float64: rounds once more correctly
  res = odd.astype(f16).view(u16).astype(u32) if kind_out == "f16" else np.asarray(bf16bits_f64(odd), u32)
  res = generated_nan(res, kind_out, nan_in | np.isnan(cval))
  return [res[:, 2 * k] | (res[:, 2 * k + 1] << 16) for k in range(4)]

def dpp16(x, m, ctrl:int, bound_ctrl:bool, fetch_inactive:bool, row_mask:int, bank_mask:int):
  """DPP16 operand: each lane's source-lane value, and which lanes the instruction writes. An invalid source (off the
  row, or an inactive lane without FI) reads 0 with BOUND_CTRL, else leaves the lane unwritten; lanes of rows/banks
  outside ROW_MASK/BANK_MASK are never written."""
  from mockgpu.compiler.rdna.operands import dpp16_lanes, dpp16_enabled
  src, exists = dpp16_lanes(ctrl, m.shape[1])
  vals = np.asarray(x)[:, src]
  ok = exists[None, :] & (m[:, src] | fetch_inactive)
  return np.where(ok, vals, u32(0)), (ok | bound_ctrl) & dpp16_enabled(row_mask, bank_mask, m.shape[1])[None, :]

def permlane16(x, m, sel_lo, sel_hi, cross:bool, fi:bool, bound_ctrl:bool, sel_lanes=None):
  """v_permlane16/x16_b32 (operands.Permlane): each lane's value and which lanes are written. x, m: [n, lanes];
  sel_lo, sel_hi: the per-wave lane selects [n]; sel_lanes (the _var forms): each lane's own select [n, lanes]."""
  from mockgpu.compiler.rdna.operands import permlane16_lanes, permlane16_selects
  wave = x.shape[1]
  sel = np.asarray(sel_lanes) if sel_lanes is not None else permlane16_selects(r64(sel_lo, sel_hi), wave)
  src = np.broadcast_to(permlane16_lanes(sel, cross, wave), x.shape)
  ok = np.take_along_axis(m, src, 1) | fi
  return np.where(ok, np.take_along_axis(np.asarray(x), src, 1), u32(0)), ok | bound_ctrl

def permlane64(x, m):
  """v_permlane64_b32 (operands.permlane64_lanes): each lane's value [n, 64] and which lanes are written (the active
  ones; every source is read, active or not); in wave32 nothing is."""
  from mockgpu.compiler.rdna.operands import permlane64_lanes
  src = permlane64_lanes(m.shape[1])
  if src is None: return np.asarray(x), np.zeros(m.shape, bool)
  return np.asarray(x)[:, src], m

def dpp8(x, m, sels:list[int], fetch_inactive:bool):
  """DPP8 operand: lane i reads lane (i & ~7) | sels[i & 7]; an inactive source reads 0 unless FI."""
  from mockgpu.compiler.rdna.operands import dpp8_lanes
  src = dpp8_lanes(sels, m.shape[1])
  vals = np.asarray(x)[:, src]
  return np.where(m[:, src] | fetch_inactive, vals, u32(0)), np.ones(m.shape, bool)

@functools.lru_cache(maxsize=None)
def _mfma_shape(name:str) -> MFMAShape: return MFMAShape.parse(name.upper())

def mfma_regs(name:str, a:list, b:list, c, fp8:str) -> list[np.ndarray]:
  """CDNA v_mfma_* over waves: A, B and C registers [waves, 64] uint32 (c an int: that constant's bits in every
  element of C) -> the D registers (compiler/rdna/gfx9.mfma: the products summed exactly, rounded once)."""
  shape = _mfma_shape(name)
  if not isinstance(c, list):
    waves = np.asarray(a[0]).shape[0]
    words = [c & M32, c >> 32] * (shape.out_regs // 2) if shape.out == "F64" else [c] * shape.out_regs
    c = [np.full((waves, 64), x, u32) for x in words]
  return mfma(shape, a, b, c, fp8)
