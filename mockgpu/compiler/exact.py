"""Exact float64 arithmetic both ISAs' numpy runtimes share (RDNA's v_fma_f64, PTX's fma.f64 and its rounding modes):
the error-free transformations (TwoSum, Dekker's TwoProduct), a float64 fma rounded once (Boldo & Melquiond's
round-to-odd, with the rare lanes the transformations cannot hold computed with rationals), a float64 operation's
result with the sign of its exact error (op_with_error_sign: PTX's rounding modes), directed rounding of a float64
whose exact error sign is known, and sums of many exact terms rounded once (exact_sum: Shewchuk's expansions;
MFMA's and WMMA's accumulation)."""
from __future__ import annotations
import numpy as np
from mockgpu.errors import UnsupportedInstruction

U64 = np.uint64

# *** error-free transformations ***

def two_sum(a, b):
  s = a + b
  bb = s - a
  return s, (a - (s - bb)) + (b - bb)

def _split(a):
  c = a * 134217729.0  # 2^27 + 1 (Veltkamp)
  hi = c - (c - a)
  return hi, a - hi

def two_prod(a, b):
  p = a * b
  ah, al = _split(a)
  bh, bl = _split(b)
  return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl

def nudge64(s, esign, mode:str):
  """Directed rounding of a float64 result s whose exact value is s + tiny (sign esign)."""
  if mode == "rn": return s
  toward = {"rz": np.where(np.signbit(s), esign > 0, esign < 0), "rm": esign < 0, "rp": esign > 0}[mode]
  tgt = {"rz": 0.0, "rm": -np.inf, "rp": np.inf}[mode]
  return np.where(toward & np.isfinite(s), np.nextafter(s, tgt), s)

def fma64(a, b, c, mode:str="rn"):
  """float64 fma: RN(uh + RO(ul + pl)) (Boldo & Melquiond), then the directed modes from the remaining error."""
  a0, b0 = a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  # Veltkamp's split overflows from |x| ~ 2^996: the large factor scaled down and the other up by 2^60 (exact; the
  # product keeps its value)
  sa = np.abs(a) >= 2.0 ** 995
  sb = ~sa & (np.abs(b) >= 2.0 ** 995)
  if np.any(sa | sb):
    a, b = np.where(sa, a * 2.0 ** -60, np.where(sb, a * 2.0 ** 60, a)), np.where(sa, b * 2.0 ** 60, np.where(sb, b * 2.0 ** -60, b))
  ph, pl = two_prod(a, b)
  uh, ul = two_sum(c, ph)
  t, te = two_sum(ul, pl)
  # round-to-odd: an inexact t with an even last bit moves to its neighbour on the exact side
  tb = np.asarray(t).view(U64)
  fix = (te != 0) & ((tb & U64(1)) == 0) & np.isfinite(t)
  t = np.where(fix, np.nextafter(t, np.where(te > 0, np.inf, -np.inf)), t)
  r, re = two_sum(uh, t)
  # the lanes the error-free transformations cannot hold exactly: a product below ~2^-900 (its error terms underflow),
  # or near or past float64's range (Veltkamp's split of it overflows: max*-1+1 gave -inf, 1.5*max-max gave inf), or
  # a sum that overflows (two_sum's error of an infinite sum is NaN), with finite operands: computed exactly with rationals
  finite = np.isfinite(a0) & np.isfinite(b0) & np.isfinite(c)
  big = finite & ~((np.abs(ph) < 2.0 ** 1000) & np.isfinite(r))
  tiny = finite & np.isfinite(ph) & (np.abs(ph) < 2.0 ** -900) & (a0 != 0) & (b0 != 0)
  # an infinite or NaN operand: a*b+c in float64 is the IEEE result (inf*0 and inf-inf are NaN, inf+finite is inf)
  r = np.where(finite, r if mode == "rn" else nudge64(r, np.sign(np.where(np.isfinite(r), re + (ul + pl - t), 0.0)), mode), a0 * b0 + c)
  # a zero product: c plus a signed zero, exact in float64 (the transformations' +0 error terms lost -0 + -0's sign)
  zero = (a0 == 0) | (b0 == 0)
  r = np.where(finite & zero, a0 * b0 + c, r)
  if mode == "rm":   # an exact zero sum is -0 rounding toward -inf, unless both the product and c are +0
    plus = zero & ~(np.signbit(a0) ^ np.signbit(b0)) & (c == 0) & ~np.signbit(c)
    r = np.where(finite & (r == 0), np.where(plus, 0.0, -0.0), r)
  return _fma64_exact(r, big | tiny, a0, b0, c, mode) if np.any(big | tiny) else r

def _fma64_exact(r, lanes, a, b, c, mode:str):
  """fma's rare lanes (`lanes`) computed exactly with rationals and rounded in mode; an exact cancellation of a
  nonzero product is +0 (-0 in .rm)."""
  from fractions import Fraction
  r = np.array(r, np.float64, copy=True)
  flat, idx = r.reshape(-1), np.flatnonzero(lanes)
  A, B, C = (np.broadcast_to(x, r.shape).reshape(-1) for x in (a, b, c))
  for i in idx: flat[i] = round_fraction(Fraction(float(A[i])) * Fraction(float(B[i])) + Fraction(float(C[i])), mode)
  return r if r.ndim else r[()]

F64_MAX = float(np.finfo(np.float64).max)
F64_OVERFLOW = 2 ** 1024 - 2 ** 970   # halfway from the largest finite float64 to 2^1024: from here RN gives inf
def op_with_error_sign(op:str, a, b=None, c=None):
  """float64 approximation s of op and the sign of (exact - s), for float64 operands."""
  if op == "add": s, e = two_sum(a, b)
  elif op == "sub": s, e = two_sum(a, -b)
  elif op == "mul": s, e = two_prod(a, b)
  elif op == "fma":
    ph, pl = two_prod(a, b)
    s, e1 = two_sum(ph, c)
    e = e1 + pl
  elif op == "div":
    s = a / b
    ph, pl = two_prod(s, b)
    e = ((a - ph) - pl) * np.sign(b)
  elif op == "sqrt":
    s = np.sqrt(a)
    ph, pl = two_prod(s, s)
    e = (a - ph) - pl
  else: raise UnsupportedInstruction(f"float operation {op}")
  e = np.where(np.isfinite(s), e, 0.0)
  return s, np.sign(np.nan_to_num(e))

def round_fraction(v, mode:str) -> float:
  """The exact rational v rounded to float64 in mode (rn: to nearest even; rz, rm, rp: directed), overflow included."""
  from fractions import Fraction
  if v == 0: return -0.0 if mode == "rm" else 0.0
  if abs(v) >= F64_OVERFLOW:   # float(v) would raise OverflowError
    toward_inf = mode == "rn" or (mode == "rp" and v > 0) or (mode == "rm" and v < 0)
    return float(np.copysign(np.inf if toward_inf else F64_MAX, float(np.sign(v))))
  x = float(v)   # correctly rounded to nearest (finite below F64_OVERFLOW)
  fx = Fraction(x)
  if mode == "rz" and abs(fx) > abs(v): x = float(np.nextafter(x, 0.0))
  elif mode == "rm" and fx > v: x = float(np.nextafter(x, -np.inf))
  elif mode == "rp" and fx < v: x = float(np.nextafter(x, np.inf))
  return x

# *** exact sums, rounded once (MFMA's and WMMA's accumulation) ***

# per output format: the magnitude mask, infinity's bits, the default NaN (+qNaN)
_NAN_BITS = {"f16": (0x7fff, 0x7c00, 0x7e00), "bf16": (0x7fff, 0x7f80, 0x7fc0), "f32": (0x7fffffff, 0x7f800000, 0x7fc00000),
             "f64": (0x7fffffffffffffff, 0x7ff0000000000000, 0x7ff8000000000000)}

def generated_nan(bits:np.ndarray, kind:str, nan_in:np.ndarray) -> np.ndarray:
  """A matrix op's output elements as bits (unsigned) of format kind: one that is a NaN while none of the float inputs
  feeding it (its row of A, its column of B, its C element: nan_in False) is one was generated (inf * 0, inf - inf in
  the accumulation) and is the hardware's default NaN, +qNaN, not the host's (x86: the sign set), as a VALU row's."""
  mag, inf, qnan = _NAN_BITS[kind]
  return np.where(((bits & mag) > inf) & ~nan_in, bits.dtype.type(qnan), bits)

_U = 2.0 ** -53  # float64 unit roundoff

def _grow(expansion:list, b) -> list:
  """Shewchuk's Grow-Expansion: the components of expansion + b exactly (nonoverlapping, increasing magnitude);
  components that are zero everywhere are dropped, which keeps the expansion short."""
  out, q = [], b
  for e in expansion:
    q, h = two_sum(q, e)
    if h.any(): out.append(h)
  out.append(q)
  return out

def _top(expansion:list):
  """The largest-magnitude nonzero component (its sign is the sign of the whole expansion), or 0."""
  top = np.zeros_like(expansion[0])
  for c in expansion: top = np.where(c != 0, c, top)
  return top

def _bracket(expansion:list):
  """s (float64) next to the exact sum and the exact residual sum - s (an expansion) with |residual| below s's
  smaller gap to its neighbours, so the sum lies between s and its neighbour on the residual's side."""
  s = expansion[0]
  for c in expansion[1:]: s = s + c
  for _ in range(8):
    r = _grow(expansion, -s)
    approx = np.zeros_like(s)
    for c in r: approx = approx + c  # within a few ulp of the residual (nonoverlapping components, smallest first)
    gap = np.abs(np.nextafter(s, np.where(approx > 0, np.inf, -np.inf)) - s)  # to the neighbour on the residual's side
    far = 2 * np.abs(approx) > gap  # (gap / 2 would underflow to 0 next to zero)
    if not far.any(): return s, r
    s = np.where(far, s + approx, s)
  raise ArithmeticError("exact_sum: the residual did not converge")  # cannot happen for finite terms

def _round_expansion(expansion:list, dtype) -> np.ndarray:
  """The exact sum of a finite expansion rounded once to dtype (float32 via float64 round-to-odd, which then rounds
  to float32 correctly, Boldo-Melquiond; float64 by comparing the residual with half a gap)."""
  s, r = _bracket(expansion)
  sign = np.sign(_top(r))
  nb = np.nextafter(s, np.where(sign > 0, np.inf, -np.inf))
  if dtype == np.float64:
    beyond = np.sign(_top(_grow(r, -sign * np.abs(nb - s) / 2)))  # the residual past the midpoint: +sign, short: -sign
    even = (s.view(np.uint64) & 1) == 0
    return np.where(sign == 0, s, np.where(beyond == sign, nb, np.where(beyond == 0, np.where(even, s, nb), s)))
  odd = (s.view(np.uint64) & 1) == 1
  r = np.where((sign == 0) | odd, s, nb)
  return r if dtype is None else r.astype(dtype)

def exact_sum(terms, dtype=np.float32) -> np.ndarray:
  """sum(terms) over axis 0 of float64 terms that are exact values, rounded once to dtype (float32 or float64; None:
  float64 rounded to odd, which a caller rounds once more to a format of at most 51 bits, f16 or bf16, correctly).
  float32: the float64 sum is used where its error bound (n u sum|t|) keeps the exact value inside one float32
  rounding interval, as it nearly always does; the rest are summed exactly (Grow-Expansion). Non-finite terms give
  the float64 sum's inf or NaN. Zeros are signed as IEEE addition signs them (x + -x is +0, -0 + -0 is -0, and a
  nonzero sum too small for dtype keeps its sign)."""
  t = np.asarray(terms, np.float64)
  n = t.shape[0]
  with np.errstate(all="ignore"):
    naive = t[0].copy()
    for x in t[1:]: naive += x  # (numpy's sum starts from +0 and loses a lone -0's sign)
    special = ~np.isfinite(t).all(0)
    if dtype == np.float32:
      r = naive.astype(np.float32)
      bound = n * _U * np.abs(t).sum(0) * 1.001
      up = (r.astype(np.float64) + np.nextafter(r, np.float32(np.inf)).astype(np.float64)) / 2
      down = (r.astype(np.float64) + np.nextafter(r, np.float32(-np.inf)).astype(np.float64)) / 2
      done = special | (np.isfinite(r) & (naive - bound > down) & (naive + bound < up))
      out = r
    else: done, out = special, naive.astype(np.float64)  # float64 and round-to-odd: the exact path
    if done.all(): return out
    idx = np.nonzero(~done)
    sub = t[(slice(None),) + idx]
    expansion = [sub[0]]
    for x in sub[1:]: expansion = _grow(expansion, x)
    out = out.copy()
    out[idx] = _round_expansion(expansion, dtype)
  return out

def two_product(a, b):
  """p, e with a*b = p + e exactly for float64 a, b (e from an exact fma)."""
  p = np.multiply(a, b)
  return p, fma64(a, b, -p)
