"""Integer and bit-level helpers for translated kernels (vectorized; each also works on numpy scalars)."""
from __future__ import annotations
import numpy as np
from mockgpu.compiler.ptx.types import np_dtype
from mockgpu.compiler.ptx.backends.numerics import from64
from mockgpu.compiler.floats import F16, BF16, bf16_to_f32, bf16_isnan

U32, U64 = np.uint32, np.uint64

def _arr(x): return np.asarray(x)
def _ret(r, *srcs):
  """Scalars in, scalar out (keeps uniform values uniform)."""
  return r[()] if all(np.ndim(s) == 0 for s in srcs) and np.ndim(r) == 0 else r

def idiv(a, b):
  """div.s/u: truncating division; x/0 gives all ones (what the hardware returns)."""
  a, b = _arr(a), _arr(b)
  dt = np.result_type(a, b)
  zero = b == 0
  bb = np.where(zero, np.ones((), dt), b)
  if dt.kind == "u": q = a // bb
  else:
    q = a // bb
    q = q + ((a - q * bb != 0) & ((a < 0) != (bb < 0))).astype(dt)
  return _ret(np.where(zero, np.array(-1).astype(dt) if dt.kind == "i" else np.array(np.iinfo(dt).max, dt), q).astype(dt), a, b)

def irem(a, b):
  """rem.s/u: the remainder of the truncating division (sign of the dividend); x%0 gives x."""
  a, b = _arr(a), _arr(b)
  dt = np.result_type(a, b)
  zero = b == 0
  bb = np.where(zero, np.ones((), dt), b)
  if dt.kind == "u": r = a % bb
  else:
    r = np.fmod(a, bb)
  return _ret(np.where(zero, a, r).astype(dt), a, b)

def mulhi64(a, b, signed:bool):
  """The high 64 bits of a 64x64-bit product, from 32-bit halves."""
  au, bu = _arr(a).view(U64) if np.ndim(a) else np.uint64(a.view(U64)), _arr(b).view(U64) if np.ndim(b) else np.uint64(b.view(U64))
  m32 = U64(0xffffffff)
  a0, a1, b0, b1 = au & m32, au >> U64(32), bu & m32, bu >> U64(32)
  p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
  mid = (p00 >> U64(32)) + (p01 & m32) + (p10 & m32)
  hi = p11 + (p01 >> U64(32)) + (p10 >> U64(32)) + (mid >> U64(32))
  if signed:
    hi = hi - np.where(_arr(a).view(np.int64) < 0, bu, U64(0)) - np.where(_arr(b).view(np.int64) < 0, au, U64(0))
    return _ret(_arr(hi).view(np.int64), a, b)
  return _ret(_arr(hi), a, b)

def sext24(x):
  v = _arr(x).astype(np.int64) & 0xffffff
  return np.where(v >= 0x800000, v - 0x1000000, v)

def int_to_int(x, t:str, saturate:bool):
  dt = np_dtype(t)
  if saturate:
    info = np.iinfo(dt)
    xi = _arr(x)
    if xi.dtype.kind == "u" and dt.kind == "i": r = np.minimum(xi, np.array(info.max).astype(xi.dtype)).astype(dt)
    elif xi.dtype.kind == "i" and dt.kind == "u": r = np.clip(xi, 0, min(info.max, np.iinfo(xi.dtype).max)).astype(dt)
    else: r = np.clip(xi, max(info.min, np.iinfo(xi.dtype).min), min(info.max, np.iinfo(xi.dtype).max)).astype(dt)
    return _ret(r, x)
  return x.astype(dt)

def prmt(a, b, c):
  """prmt.b32 (semantics.Backend.prmt): pick 4 bytes out of the 8 bytes {b, a}, a selector nibble per byte."""
  a, b, c = _arr(a).astype(U64), _arr(b).astype(U64), _arr(c).astype(U64)
  x = (b << U64(32)) | a
  out = U64(0)
  for i in range(4):
    sel = (c >> U64(4 * i)) & U64(0xf)
    v = (x >> ((sel & U64(7)) * U64(8))) & U64(0xff)
    sign = (v >> U64(7)) & U64(1)
    v = np.where((sel & U64(8)) != 0, sign * U64(0xff), v)
    out = out | (v << U64(8 * i))
  return _ret(out.astype(U32), a, b, c)

def bfe(a, pos, ln, nbits:int, signed:bool):
  """bfe: extract ln bits from pos (both taken mod 256), sign-extending for signed types."""
  ua = _arr(a).view({32: U32, 64: U64}[nbits]).astype(U64)
  p, l = (_arr(pos).astype(U64) & U64(0xff)), (_arr(ln).astype(U64) & U64(0xff))
  msb = U64(nbits - 1)
  shifted = np.where(p > msb, U64(0), ua >> np.minimum(p, msb))
  keep = np.minimum(l, np.where(p > msb, U64(0), U64(nbits) - np.minimum(p, msb)))
  mask = np.where(keep >= U64(64), U64(0xffffffffffffffff), (U64(1) << np.minimum(keep, U64(63))) - U64(1))
  v = shifted & mask
  if signed:
    sbit_pos = np.minimum(p + l - U64(1), msb)
    sbit = np.where(l == 0, U64(0), (ua >> np.minimum(sbit_pos, msb)) & U64(1))
    v = np.where(sbit == 1, v | ~mask, v)
  out = (v & U64((1 << nbits) - 1)).astype({32: U32, 64: U64}[nbits])
  return _ret(out.view({32: np.int32, 64: np.int64}[nbits]) if signed else out, a, pos, ln)

def bfi(f, b, pos, ln, nbits:int):
  """bfi: b with ln bits at pos replaced by the low bits of f."""
  ut = {32: U32, 64: U64}[nbits]
  uf, ub = _arr(f).view(ut).astype(U64), _arr(b).view(ut).astype(U64)
  p, l = _arr(pos).astype(U64) & U64(0xff), _arr(ln).astype(U64) & U64(0xff)
  l = np.minimum(l, np.where(p >= U64(nbits), U64(0), U64(nbits) - np.minimum(p, U64(nbits))))
  mask = np.where(l >= U64(64), U64(0xffffffffffffffff), (U64(1) << np.minimum(l, U64(63))) - U64(1))
  sh = np.minimum(p, U64(63))
  out = np.where(l == 0, ub, (ub & ~(mask << sh)) | ((uf & mask) << sh))
  return _ret((out & U64((1 << nbits) - 1)).astype(ut).view(_arr(b).dtype), f, b, pos, ln)

_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)

def brev(x, nbits:int):
  a = np.ascontiguousarray(_arr(x))
  by = a.reshape(-1).view(np.uint8).reshape(-1, nbits // 8)
  return _ret(_REV8[by[:, ::-1]].copy().view(a.dtype).reshape(a.shape), x)

def clz(x, nbits:int):
  """Leading zeros of an unsigned value (exact: 32-bit halves go through float64)."""
  u = _arr(x).astype(U64)
  if nbits == 64:
    hi, lo = u >> U64(32), u & U64(0xffffffff)
    return _ret(np.where(hi != 0, _clz32(hi), U32(32) + _clz32(lo)).astype(U32), x)
  return _ret((_clz32(u) - U32(32 - nbits)).astype(U32), x)

def _clz32(u):
  _, e = np.frexp(u.astype(np.float64))
  return np.where(u == 0, 32, 32 - e).astype(U32)

def bfind(x, nbits:int, signed:bool, shiftamt:bool):
  """Position of the most significant non-sign bit; 0xffffffff when there is none."""
  a = _arr(x)
  u = a.view({32: U32, 64: U64}[nbits]).astype(U64)
  if signed: u = np.where(a < 0, ~u & U64((1 << nbits) - 1), u)
  lz = clz(u, nbits).astype(np.int64)
  pos = nbits - 1 - lz
  none = u == 0
  r = np.where(none, 0xffffffff, (nbits - 1 - pos) if shiftamt else pos)
  return _ret(_arr(r).astype(U32), x)

# *** packed halves ***

def half_of(x, half:int, h:str):
  """The low (0) or high (1) 16-bit half of a b32 as f16 (or bf16 bits)."""
  v = (x >> U32(16 * half)) & U32(0xffff) if half else x & U32(0xffff)
  v = v.astype(np.uint16)
  return v.view(np.float16) if h == "f16" else v

def join_halves(lo, hi, h:str):
  """Pack two f16 (or bf16 bits) into a b32: lo in bits 0-15."""
  to16 = lambda v: (v.view(np.uint16) if h == "f16" else v).astype(U32)
  return to16(lo) | (to16(hi) << U32(16))

def relu(x, t:str):
  """.relu: negative results (and NaN) become +0."""
  if t == "bf16":
    neg = ((_arr(x) & np.uint16(0x8000)) != 0) | bf16_isnan(_arr(x))
    return _ret(np.where(neg, np.uint16(0), x), x)
  return np.where(np.isnan(x) | (x < 0), np.zeros((), x.dtype), x)

def satfinite(x, t:str):
  """.satfinite: out-of-range values (and infinities) clamp to the largest finite value; NaN stays NaN."""
  if t == "f16": return np.where(np.isinf(x), np.copysign(np.float16(F16.max), x), x)
  f = bf16_to_f32(x)
  clamped = from64(np.copysign(BF16.max, f.astype(np.float64)), "bf16")
  return np.where(np.isinf(f), clamped, x)

def shl(x, s, nbits:int):
  """shl: amounts >= the width give 0. Uniform amounts (the usual case) take one numpy shift."""
  if np.ndim(s) == 0:
    return x << x.dtype.type(s) if int(s) < nbits else np.zeros_like(x)
  s = _arr(s).astype(x.dtype)
  return np.where(s >= nbits, np.zeros((), x.dtype), x << np.minimum(s, x.dtype.type(nbits - 1)))

def shr(x, s, nbits:int):
  """shr: logical for unsigned/bit types, arithmetic (sign fill) for signed; amounts saturate at the width."""
  signed = x.dtype.kind == "i"
  if np.ndim(s) == 0:
    if int(s) < nbits: return x >> x.dtype.type(s)
    return x >> x.dtype.type(nbits - 1) if signed else np.zeros_like(x)
  s = np.minimum(_arr(s), nbits).astype(x.dtype)
  if signed: return x >> np.minimum(s, x.dtype.type(nbits - 1))
  return np.where(s >= nbits, np.zeros((), x.dtype), x >> np.minimum(s, x.dtype.type(nbits - 1)))
