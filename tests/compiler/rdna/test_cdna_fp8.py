"""gfx950's (cdna4) OCP fp8/bf8 conversions and v_mad_legacy_u16 on hand-assembled wave64 kernels, against references
written here from the formats' definitions (e4m3fn: bias 7, S.1111.111 the only NaNs, no infinity; e5m2: IEEE-like,
bias 15) and the CDNA4 pseudocode (tinygrad.runtime.autogen.amd.cdna.str_pcode): v_cvt_pk_fp8/bf8_f32 write
{f32_to_fp8(S1), f32_to_fp8(S0)} to the 16 bits OPSEL[3] selects and keep the other half; f32_to_fp8 rounds to nearest
even, and past the largest finite value gives the NaN (fp8) or infinity (bf8), as tests/pcode/readings.py reads the
manual (and tests/pcode's evaluator checks here); v_cvt_f32_fp8/bf8 read the byte SDWA_SRC0_SEL selects (byte 0 in e32).
Each kernel runs on the numpy path and on the C path (the prelude's fp8/bf8 helpers, compiler/rdna/c/prelude.c). gfx942
(cdna3) runs the same instructions in its FNUZ formats (test_gfx942_fnuz_conversions)."""
from __future__ import annotations
from fractions import Fraction
import bisect, functools, math
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import v
from tinygrad.runtime.autogen.amd.cdna import ins as I
from support.cdna_exec import kernel, load, store, run, rows, inputs, marked

FORMATS = {"fp8": (4, 3, 7), "bf8": (5, 2, 15)}   # exponent bits, mantissa bits, bias

def value(code:int, fmt:str) -> Fraction|float:
  E, M, bias = FORMATS[fmt]
  s, e, m = code >> 7, (code >> M) & ((1 << E) - 1), code & ((1 << M) - 1)
  if fmt == "fp8" and e == 15 and m == 7: return math.nan
  if fmt == "bf8" and e == 31: return math.nan if m else (-math.inf if s else math.inf)
  x = Fraction(m, 1 << M) * Fraction(2) ** (1 - bias) if e == 0 else (1 + Fraction(m, 1 << M)) * Fraction(2) ** (e - bias)
  return -x if s else x

@functools.lru_cache(maxsize=None)
def grid(fmt:str) -> tuple:
  """(value, code) of the finite non-negative codes, then one step past the largest (code -1)."""
  top = 0x7e if fmt == "fp8" else 0x7b
  g = [(value(c, fmt), c) for c in range(top + 1)]
  return tuple(g + [(2 * g[-1][0] - g[-2][0], -1)])

def encode(x:float, fmt:str) -> int: return _encode(x, math.copysign(1.0, x) < 0, fmt)   # -0.0 == 0.0 for the cache

@functools.lru_cache(maxsize=None)
def _encode(x:float, neg:bool, fmt:str) -> int:
  """f32_to_fp8/bf8: round to nearest even over the finite codes extended by one step past the largest (which, when
  chosen, is the overflow: NaN 0x7f for fp8, infinity 0x7c for bf8), the sign kept; a NaN gives 0x7f with its sign."""
  sign = 0x80 if neg else 0
  if math.isnan(x): return 0x7f | sign
  top = 0x7e if fmt == "fp8" else 0x7b
  over = 0x7f if fmt == "fp8" else 0x7c
  if math.isinf(x): return over | sign
  a = abs(Fraction(x))
  best = min(grid(fmt), key=lambda vc: (abs(vc[0] - a), vc[1] % 2 if vc[1] >= 0 else top % 2 ^ 1))
  return (over if best[1] < 0 else best[1]) | sign

def f32s() -> np.ndarray:
  """float32 bits: every finite fp8/bf8 value, the midpoints of neighbours (ties) and their float32 neighbours, the
  overflow boundaries, subnormals of both formats and of float32, +-0, +-inf, NaNs; both signs; 64 per row."""
  vals = set()
  for fmt in FORMATS:
    top = 0x7e if fmt == "fp8" else 0x7b
    fin = [float(value(c, fmt)) for c in range(top + 1)] + [float(2 * value(top, fmt) - value(top - 1, fmt))]
    for a, b in zip(fin, fin[1:]):
      for x in (a, (a + b) / 2):
        f = np.float32(x)
        vals.update({f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(0))})
  bits = np.array(sorted(vals), np.float32).view(np.uint32)
  bits = np.concatenate([bits, np.array([1, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0x7f800001, 0x3f800000], np.uint32)])
  bits = np.concatenate([bits, bits | np.uint32(0x80000000)])
  return np.resize(bits, -(-len(bits) // 64) * 64).reshape(-1, 64)

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_cvt_pk_to_fp8_bf8(path):
  """v_cvt_pk_{fp8,bf8}_f32 v, v2, v3 with op_sel[3] clear and set, over every class of input: S0 to the low byte, S1
  to the high byte of the half written; the other half of the destination kept."""
  old = 0x5a5aa5a5
  forms = [(fmt, hi) for fmt in FORMATS for hi in (False, True)]
  f = lambda u: float(np.uint32(u).view(np.float32))
  for row in f32s():
    a, b = row, np.roll(row, 1)
    out = rows(len(forms))
    body = [*load(v[2], 0), *load(v[3], 1)]
    for k, (fmt, hi) in enumerate(forms):
      op = I.v_cvt_pk_fp8_f32 if fmt == "fp8" else I.v_cvt_pk_bf8_f32
      body += [I.v_mov_b32_e32(v[4 + k], old), op(v[4 + k], v[2], v[3], opsel=8 if hi else 0), *store(v[4 + k], k)]
    run(kernel(*body, I.s_endpgm()), out, inputs(a, b), path=path, family="cdna4")
    for k, (fmt, hi) in enumerate(forms):
      want = [(encode(f(y), fmt) << 8 | encode(f(x), fmt)) for x, y in zip(a, b)]
      want = [(w << 16 | old & 0xffff) if hi else (old & 0xffff0000 | w) for w in want]
      assert [int(x) for x in out[k]] == want, (fmt, hi, [(hex(int(x)), hex(int(y)), hex(int(g)), hex(w)) for x, y, g, w in
                                                          zip(a, b, out[k], want) if int(g) != w][:4])

def test_reference_agrees_with_the_pcode_reading():
  """The encoder above against tests/pcode's numbers (the manual's f32_to_fp8/bf8 as readings.py reads it), on every
  input but NaNs (the reading leaves a conversion's NaN loose)."""
  from pcode import numbers as N
  for fmt in FORMATS:
    for u in f32s().ravel():
      x = float(np.uint32(u).view(np.float32))
      if math.isnan(x) or x == 0: continue   # an exact zero has no sign in the reading
      bits, loose = N.encode(N.Float(None, Fraction(x) if math.isfinite(x) else x), fmt, False)
      assert (loose and encode(x, fmt) & 0x7f == 0x7f) or (not loose and bits == encode(x, fmt)), (fmt, x, hex(bits), loose)

@pytest.mark.parametrize("path", ["numpy", "native"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_cvt_f32_from_each_byte(fmt, path):
  """v_cvt_f32_{fp8,bf8}: the e32 form converts byte 0; the SDWA form the byte SRC0_SEL names (0-3), every code."""
  codes = np.arange(256, dtype=np.uint32).reshape(4, 64)
  e32 = I.v_cvt_f32_fp8_e32 if fmt == "fp8" else I.v_cvt_f32_bf8_e32
  opc = I.VOP1Op.V_CVT_F32_FP8_E32 if fmt == "fp8" else I.VOP1Op.V_CVT_F32_BF8_E32
  for row in codes:
    for sel in range(4):
      fill = np.uint32(0xc33ca55a) & ~np.uint32(0xff << (8 * sel))
      w = fill | (row << np.uint32(8 * sel))   # the code in byte sel, the other bytes filled
      conv = marked(I.VOP1_SDWA(opc, vdst=v[4], vsrc0=v[2], src0_sel=sel, dst_sel=6), 249)   # DST_SEL DWORD
      out = rows(2)
      run(kernel(*load(v[2], 0), conv, e32(v[5], v[2]), *store(v[4]), *store(v[5], 1), I.s_endpgm()), out, inputs(w),
          path=path, family="cdna4")
      for k, (g, c, b0) in enumerate(zip(out[0], row, w & 0xff)):
        for got, code in ((g, int(c)), (out[1][k], int(b0))):
          want = value(code, fmt)
          f = float(np.uint32(got).view(np.float32))
          assert (math.isnan(f) and isinstance(want, float) and math.isnan(want)) or f == want and \
            math.copysign(1, f) == (-1 if code & 0x80 else 1), (fmt, sel, hex(code), f, want)

def test_mad_legacy_u16():
  """D = S0.u16 * S1.u16 + S2.u16 (16 bits): op_sel[3] clear writes {0, tmp}, set writes {tmp, D[15:0]}."""
  rng = np.random.default_rng(23)
  a, b, c = (rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(3))
  old = 0x12345678
  out = rows(2)
  body = [*load(v[2], 0), *load(v[3], 1), *load(v[5], 2), I.v_mov_b32_e32(v[4], old), I.v_mov_b32_e32(v[6], old),
          I.v_mad_legacy_u16_e64(v[4], v[2], v[3], v[5]), I.v_mad_legacy_u16_e64(v[6], v[2], v[3], v[5], opsel=8),
          *store(v[4]), *store(v[6], 1), I.s_endpgm()]
  run(kernel(*body), out, inputs(a, b, c), family="cdna4")
  tmp = [(int(x) & 0xffff) * (int(y) & 0xffff) + (int(z) & 0xffff) & 0xffff for x, y, z in zip(a, b, c)]
  assert [int(x) for x in out[0]] == tmp
  assert [int(x) for x in out[1]] == [t << 16 | old & 0xffff for t in tmp]

def test_numpy_and_c_agree_bit_for_bit():
  """Both conversions on both paths give the same bits, NaNs' signs included: every code decoded, every class of f32
  encoded (both formats, both halves)."""
  codes = np.arange(256, dtype=np.uint32).reshape(4, 64)
  for row in [*codes, *f32s()]:
    outs = {}
    for path in ("numpy", "native"):
      out = rows(6)
      body = [*load(v[2], 0), *load(v[3], 1), I.v_cvt_f32_fp8_e32(v[4], v[2]), I.v_cvt_f32_bf8_e32(v[5], v[2]),
              I.v_mov_b32_e32(v[6], 0x5a5aa5a5), I.v_cvt_pk_fp8_f32(v[6], v[2], v[3]), I.v_mov_b32_e32(v[7], 0x5a5aa5a5),
              I.v_cvt_pk_bf8_f32(v[7], v[2], v[3], opsel=8), *store(v[4]), *store(v[5], 1), *store(v[6], 2), *store(v[7], 3)]
      run(kernel(*body, I.s_endpgm()), out, inputs(row, np.roll(row, 1)), path=path, family="cdna4")
      outs[path] = out[:4].copy()
    np.testing.assert_array_equal(outs["native"], outs["numpy"])

# *** gfx942 (cdna3): the same instructions in the FNUZ formats ***

FNUZ = {"fp8": (3, 8), "bf8": (2, 16)}   # mantissa bits, bias; 0x80 the only NaN, no infinity, no -0

def fnuz_value(code:int, fmt:str) -> Fraction|float:
  M, bias = FNUZ[fmt]
  if code == 0x80: return math.nan
  e, m = (code & 0x7f) >> M, code & ((1 << M) - 1)
  x = Fraction(m, 1 << M) * Fraction(2) ** (1 - bias) if e == 0 else (1 + Fraction(m, 1 << M)) * Fraction(2) ** (e - bias)
  return -x if code & 0x80 else x

@functools.lru_cache(maxsize=None)
def fnuz_grid(fmt:str) -> tuple:
  g = [(fnuz_value(c, fmt), c) for c in range(0x80)]
  return tuple(g + [(2 * g[-1][0] - g[-2][0], 0x80)])

def fnuz_encode(x:float, fmt:str) -> int:
  """Round to nearest even over the finite codes 0x00-0x7f extended by one step past the largest (chosen: overflow);
  overflow, infinities and NaNs give the NaN 0x80 (non-saturating, inferred); a zero result has no sign."""
  if math.isnan(x) or math.isinf(x): return 0x80
  g = fnuz_grid(fmt)
  a = abs(Fraction(x))
  i = bisect.bisect_left([v for v, _ in g], a)          # g[i - 1] < a <= g[i]
  near = [g[j] for j in (i - 1, i) if 0 <= j < len(g)]
  _, code = min(near, key=lambda vc: (abs(vc[0] - a), vc[1] % 2))
  return code if code in (0, 0x80) else code | (0x80 if x < 0 else 0)

def fnuz_f32s() -> np.ndarray:
  """float32 bits around every FNUZ value and midpoint (both formats), the overflow boundary, zeros, inf, NaN."""
  vals = set()
  for fmt in FNUZ:
    fin = [float(fnuz_value(c, fmt)) for c in range(0x80)] + [float(2 * fnuz_value(0x7f, fmt) - fnuz_value(0x7e, fmt))]
    for a, b in zip(fin, fin[1:]):
      for x in (a, (a + b) / 2):
        f = np.float32(x)
        vals.update({f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(0))})
  bits = np.array(sorted(vals), np.float32).view(np.uint32)
  bits = np.concatenate([bits, np.array([1, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0x3f800000], np.uint32)])
  bits = np.concatenate([bits, bits | np.uint32(0x80000000)])
  return np.resize(bits, -(-len(bits) // 64) * 64).reshape(-1, 64)

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_gfx942_fnuz_conversions(path):
  """v_cvt_pk_fp8/bf8_f32 (both halves, the other kept) and v_cvt_f32_fp8/bf8 (e32: byte 0) on gfx942 in its FNUZ
  formats, against the formats' definitions; numpy and C give the same bits."""
  f = lambda u: float(np.uint32(u).view(np.float32))
  old = 0x5a5aa5a5
  for row in fnuz_f32s():
    a, b = row, np.roll(row, 1)
    out = rows(4)
    body = [*load(v[2], 0), *load(v[3], 1)]
    for k, (op, hi) in enumerate([(I.v_cvt_pk_fp8_f32, False), (I.v_cvt_pk_fp8_f32, True), (I.v_cvt_pk_bf8_f32, False),
                                  (I.v_cvt_pk_bf8_f32, True)]):
      body += [I.v_mov_b32_e32(v[4 + k], old), op(v[4 + k], v[2], v[3], opsel=8 if hi else 0), *store(v[4 + k], k)]
    run(kernel(*body, I.s_endpgm()), out, inputs(a, b), path=path, family="cdna3")
    for k, (fmt, hi) in enumerate([("fp8", False), ("fp8", True), ("bf8", False), ("bf8", True)]):
      want = [fnuz_encode(f(y), fmt) << 8 | fnuz_encode(f(x), fmt) for x, y in zip(a, b)]
      want = [(w << 16 | old & 0xffff) if hi else (old & 0xffff0000 | w) for w in want]
      assert [int(x) for x in out[k]] == want, (path, fmt, hi, [(hex(int(x)), hex(int(g)), hex(w)) for x, g, w in
                                                                zip(a, out[k], want) if int(g) != w][:4])
  codes = np.arange(256, dtype=np.uint32).reshape(4, 64)
  for row in codes:
    out = rows(2)
    run(kernel(*load(v[2], 0), I.v_cvt_f32_fp8_e32(v[4], v[2]), I.v_cvt_f32_bf8_e32(v[5], v[2]), *store(v[4]), *store(v[5], 1),
               I.s_endpgm()), out, inputs(row | np.uint32(0xc33ca500)), path=path, family="cdna3")
    for k, fmt in enumerate(("fp8", "bf8")):
      for c, g in zip(row, out[k]):
        want, got = fnuz_value(int(c), fmt), float(np.uint32(g).view(np.float32))
        assert (math.isnan(want) and int(g) == 0xffc00000) or got == want, (path, fmt, hex(int(c)), hex(int(g)))
