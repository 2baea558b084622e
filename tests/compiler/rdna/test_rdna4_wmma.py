"""RDNA4 v_wmma_* (gfx1201) on the numpy path (the C translation declines VOP3P matrix ops) against a reference built
here from the RDNA4 ISA guide's matrix layout, independently of mockgpu's runtime:

  A (16 x K) and B (K x 16): lane l holds A's row / B's column l % 16; K runs in chunks of 8 elements, chunk c in lanes
  0-15 (c even) or 16-31 (c odd), at the lane's elements 8 * (c // 2) onward, packed low to high through its VGPRs
  (16-bit: two a VGPR, 8-bit: four, 4-bit: eight). C and D (16 x 16): element (r, c) in lane c + 16 * (r // 8) at
  index r % 8: VGPR r % 8 for f32/i32, half (r % 8) % 2 of VGPR (r % 8) // 2 for f16/bf16.
  Float: the exact sum of the products and C (Fractions) rounded once to nearest even (tests/pcode/numbers.py);
  integer: the exact sum wrapped to 32 bits, or saturated with clamp; NEG[0]/NEG[1] make A/B signed (iu8/iu4).
  fp8 is OCP E4M3 (bias 7, S.1111.111 NaN, no infinity), bf8 OCP E5M2 (bias 15)."""
from __future__ import annotations
from fractions import Fraction
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna4 import ins as I
from pcode import numbers as N
from support.rdna_harness import aligned
from support.rdna4 import kernel, run

BITS = {"f16": 16, "bf16": 16, "iu8": 8, "fp8": 8, "bf8": 8, "iu4": 4}
FORMS = [  # (instruction, A kind, B kind, K, output kind)
  ("v_wmma_f32_16x16x16_f16", "f16", "f16", 16, "f32"), ("v_wmma_f32_16x16x16_bf16", "bf16", "bf16", 16, "f32"),
  ("v_wmma_f16_16x16x16_f16", "f16", "f16", 16, "f16"), ("v_wmma_bf16_16x16x16_bf16", "bf16", "bf16", 16, "bf16"),
  ("v_wmma_i32_16x16x16_iu8", "iu8", "iu8", 16, "i32"), ("v_wmma_i32_16x16x16_iu4", "iu4", "iu4", 16, "i32"),
  ("v_wmma_i32_16x16x32_iu4", "iu4", "iu4", 32, "i32"),
  *[(f"v_wmma_f32_16x16x16_{a}_{b}", a, b, 16, "f32") for a in ("fp8", "bf8") for b in ("fp8", "bf8")]]

def value(code:int, kind:str, signed:bool=True):
  """An element's exact value (Fraction or int) from its bits, by the format's definition."""
  if kind in ("iu8", "iu4"):
    w = BITS[kind]
    return code - (1 << w) if signed and code >> (w - 1) else code
  e_bits, m_bits, bias = {"f16": (5, 10, 15), "bf16": (8, 7, 127), "fp8": (4, 3, 7), "bf8": (5, 2, 15)}[kind]
  sign, exp, man = code >> (e_bits + m_bits), code >> m_bits & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
  assert not (kind == "fp8" and exp == 15 and man == 7) and not (kind != "fp8" and exp == (1 << e_bits) - 1), "finite only"
  mag = Fraction(man, 1 << m_bits) * Fraction(2) ** (1 - bias) if exp == 0 else (1 + Fraction(man, 1 << m_bits)) * Fraction(2) ** (exp - bias)
  return -mag if sign else mag

def finite_codes(rng, kind:str, shape) -> np.ndarray:
  """Random element codes of a kind: every bit pattern but infinities and NaNs (subnormals, zeros of both signs
  included); 16-bit floats with exponents kept moderate so that sums stay finite."""
  w = BITS[kind]
  if kind == "f16": return (rng.integers(0, 2, shape) << 15 | rng.integers(5, 22, shape) << 10 | rng.integers(0, 1 << 10, shape))
  if kind == "bf16": return (rng.integers(0, 2, shape) << 15 | rng.integers(100, 150, shape) << 7 | rng.integers(0, 128, shape))
  codes = rng.integers(0, 1 << w, shape)
  if kind == "fp8": codes = np.where(codes & 0x7f == 0x7f, codes ^ 1, codes)
  if kind == "bf8": codes = np.where(codes >> 2 & 0x1f == 0x1f, codes & 0x83, codes)
  return codes

def pack_operand(codes:np.ndarray, kind:str, transpose:bool) -> np.ndarray:
  """A (16 x K codes) or B (K x 16, transpose) into [32 lanes, VGPRs] uint32 by the layout above."""
  m = codes.T if transpose else codes            # [16, K]: row of A / column of B
  K, w = m.shape[1], BITS[kind]
  per_lane = K // 2
  elems = np.zeros((32, per_lane), np.int64)
  for k in range(K):
    c = k // 8
    elems[16 * (c % 2):16 * (c % 2) + 16, 8 * (c // 2) + k % 8] = m[:, k]
  per_vgpr = 32 // w
  words = np.zeros((32, per_lane // per_vgpr), np.uint64)
  for e in range(per_lane): words[:, e // per_vgpr] |= (elems[:, e].astype(np.uint64) & ((1 << w) - 1)) << np.uint64(w * (e % per_vgpr))
  return words.astype(np.uint32)

def pack_cd(bits:np.ndarray, kind:str) -> np.ndarray:
  """C or D (16 x 16 codes) into [32 lanes, VGPRs]."""
  out = np.zeros((32, 8 if kind in ("f32", "i32") else 4), np.uint32)
  for r in range(16):
    for c in range(16):
      lane, j = c + 16 * (r // 8), r % 8
      if kind in ("f32", "i32"): out[lane, j] = bits[r, c]
      else: out[lane, j // 2] |= np.uint32(int(bits[r, c]) << (16 * (j % 2)))
  return out

def reference(A, B, C, form, signed=(False, False), clamp=False) -> np.ndarray:
  _, ka, kb, K, ko = form
  out = np.zeros((16, 16), np.uint64)
  for r in range(16):
    for c in range(16):
      total = sum(value(int(A[r, k]), ka, signed[0]) * value(int(B[k, c]), kb, signed[1]) for k in range(K))
      if ko == "i32":
        total += int(C[r, c]) - (1 << 32) * (int(C[r, c]) >> 31)
        out[r, c] = (max(-2**31, min(2**31 - 1, total)) if clamp else total) & 0xffffffff
      else:
        total += {"f32": lambda x: N.decode(x, "f32").v, "f16": lambda x: N.decode(x, "f16").v,
                  "bf16": lambda x: N.decode(x, "bf16").v}[ko](int(C[r, c]))
        total = Fraction(total)
        out[r, c] = N.round_ratio(total.numerator, total.denominator, ko) if total else 0
  return out

def run_wmma(form, A, B, Cbits, **mods) -> np.ndarray:
  name, ka, kb, K, ko = form
  a, b, c = pack_operand(A, ka, False), pack_operand(B, kb, True), pack_cd(Cbits, ko)
  na, nb, nc = a.shape[1], b.shape[1], c.shape[1]
  regs = np.concatenate([a, b, c], axis=1)
  inp = aligned(4 * regs.size, 256).view(np.uint32)
  inp[:] = regs.reshape(-1)
  out = aligned(4 * 32 * nc, 256).view(np.uint32)
  loads = [I.global_load_b32(vdst=v[8 + i], vaddr=v[1:2], saddr=s[6:7], ioffset=4 * i) for i in range(regs.shape[1])]
  r = lambda lo, n: v[lo] if n == 1 else v[lo:lo + n - 1]
  op = getattr(I, name)(r(40, nc), r(8, na), r(8 + na, nb), r(8 + na + nb, nc), **mods)
  body = [I.v_mul_u32_u24_e32(v[1], 4 * regs.shape[1], v[0]), *loads, I.s_wait_loadcnt(simm16=0), op,
          I.v_mul_u32_u24_e32(v[1], 4 * nc, v[0]),
          *(I.global_store_b32(vaddr=v[1:2], vsrc=v[40 + i], saddr=s[4:5], ioffset=4 * i) for i in range(nc)), I.s_endpgm()]
  run(kernel(*body), out, inp, "numpy", None)
  return out.reshape(32, nc)

@pytest.mark.parametrize("form", FORMS, ids=[f[0] for f in FORMS])
def test_wmma_rdna4_forms_against_the_layout(form, monkeypatch):
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  _, ka, kb, K, ko = form
  rng = np.random.default_rng(abs(hash(form[0])) % 2**32)
  A, B = finite_codes(rng, ka, (16, K)), finite_codes(rng, kb, (K, 16))
  if ko == "i32":
    C = rng.integers(0, 2**32, (16, 16))
    C[0], C[1] = 0x7fffffff, 0x80000000  # sums past the 32-bit range: wrap, or saturate with clamp
  elif ko == "f32": C = np.array([[N.round_ratio(int(x), 64, "f32") for x in row] for row in rng.integers(-4096, 4096, (16, 16))])
  else: C = finite_codes(rng, ko, (16, 16))
  got = run_wmma(form, A, B, C)
  np.testing.assert_array_equal(got, pack_cd(reference(A, B, C, form, (False, False)), ko))  # iu: NEG 0 is unsigned
  if ko == "i32":  # NEG[0]/NEG[1]: A/B signed; clamp saturates the 32-bit sum
    for neg, clamp in ((1, False), (2, True), (3, True)):
      got = run_wmma(form, A, B, C, neg=neg, clmp=int(clamp))
      np.testing.assert_array_equal(got, pack_cd(reference(A, B, C, form, (bool(neg & 1), bool(neg & 2)), clamp), ko))

def test_wmma_f32_rounds_the_exact_sum_once(monkeypatch):
  """Products 2**100, 1, -2**100 and C = 2**-30: the exact sum 1 + 2**-30 rounds once to 1.0 in f32, where a float64
  sum in K order loses the 1 against 2**100 and returns 2**-30."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  form = FORMS[1]  # bf16 -> f32
  A = np.full((16, 16), 0, np.int64)
  B = np.full((16, 16), 0, np.int64)
  one, big = 0x3f80, 0x7180  # bf16 1.0 and 2**100
  A[:, 0], B[0, :] = big, one
  A[:, 1], B[1, :] = one, one
  A[:, 2], B[2, :] = big ^ 0x8000, one
  C = np.full((16, 16), 0x30800000, np.int64)  # 2**-30
  got = run_wmma(form, A, B, C)
  want = reference(A, B, C, form)
  np.testing.assert_array_equal(got, pack_cd(want, "f32"))
  assert int(want[0, 0]) == 0x3f800000  # 1 + 2**-30 rounds to 1.0

# *** v_swmmac_*: A 2:4 structured-sparse (two nonzero elements in every group of four along K), given compressed ***

SPARSE = [  # (instruction, A kind, B kind, K (dense), output kind)
  ("v_swmmac_f32_16x16x32_f16", "f16", "f16", 32, "f32"), ("v_swmmac_f32_16x16x32_bf16", "bf16", "bf16", 32, "f32"),
  ("v_swmmac_f16_16x16x32_f16", "f16", "f16", 32, "f16"), ("v_swmmac_bf16_16x16x32_bf16", "bf16", "bf16", 32, "bf16"),
  ("v_swmmac_i32_16x16x32_iu8", "iu8", "iu8", 32, "i32"), ("v_swmmac_i32_16x16x32_iu4", "iu4", "iu4", 32, "i32"),
  ("v_swmmac_i32_16x16x64_iu4", "iu4", "iu4", 64, "i32"),
  *[(f"v_swmmac_f32_16x16x32_{a}_{b}", a, b, 32, "f32") for a in ("fp8", "bf8") for b in ("fp8", "bf8")]]

def sparse_index(offsets:np.ndarray, key:int) -> np.ndarray:
  """The index VGPR of each lane: two bits per compressed element the lane holds (its element e at bit 2e, moved up
  16 bits by the index key), the element's offset within its group of four. offsets: [16, K/2] per compressed (row,
  k'); lane l holds row l % 16 and, by the chunks of 8, k' = 8 * (2 * (e // 8) + l // 16) + e % 8."""
  per_lane = offsets.shape[1] // 2
  out = np.zeros(32, np.uint64)
  for l in range(32):
    for e in range(per_lane):
      k = 8 * (2 * (e // 8) + l // 16) + e % 8
      out[l] |= np.uint64(int(offsets[l % 16, k]) << (2 * e + 16 * key))
  return out.astype(np.uint32)

@pytest.mark.parametrize("form", SPARSE, ids=[f[0] for f in SPARSE])
def test_swmmac_rdna4_forms_against_the_layout(form, monkeypatch):
  """D = A x B + D with A the dense 16 x K matrix whose group g of four along K holds compressed elements 2g and
  2g + 1 at the offsets the index gives (distinct: a 2:4 pattern); B dense; index key 1 where the form has one."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  name, ka, kb, K, ko = form
  rng = np.random.default_rng(abs(hash(name)) % 2**32)
  Ac, B = finite_codes(rng, ka, (16, K // 2)), finite_codes(rng, kb, (K, 16))
  pairs = np.array([(i, j) for i in range(4) for j in range(4) if i != j])
  offsets = pairs[rng.integers(0, len(pairs), (16, K // 4))].reshape(16, K // 2)
  if ko == "i32": C = rng.integers(0, 2**32, (16, 16))
  elif ko == "f32": C = np.array([[N.round_ratio(int(x), 64, "f32") for x in row] for row in rng.integers(-4096, 4096, (16, 16))])
  else: C = finite_codes(rng, ko, (16, 16))
  key = 1 if K == 32 else 0
  # the dense A: zero codes but for the compressed elements at their places
  A = np.zeros((16, K), np.int64)
  for r in range(16):
    for k in range(K // 2): A[r, 4 * (k // 2) + offsets[r, k]] = Ac[r, k]
  a, b, c = pack_operand(Ac, ka, False), pack_operand(B, kb, True), pack_cd(C, ko)
  idx = sparse_index(offsets, key)[:, None]
  na, nb, nc = a.shape[1], b.shape[1], c.shape[1]
  regs = np.concatenate([a, b, idx, c], axis=1)
  inp = aligned(4 * regs.size, 256).view(np.uint32)
  inp[:] = regs.reshape(-1)
  out = aligned(4 * 32 * nc, 256).view(np.uint32)
  r = lambda lo, n: v[lo] if n == 1 else v[lo:lo + n - 1]
  dreg = 8 + na + nb + 1
  body = [I.v_mul_u32_u24_e32(v[1], 4 * regs.shape[1], v[0]),
          *(I.global_load_b32(vdst=v[8 + i], vaddr=v[1:2], saddr=s[6:7], ioffset=4 * i) for i in range(regs.shape[1])),
          I.s_wait_loadcnt(simm16=0), getattr(I, name)(r(dreg, nc), r(8, na), r(8 + na, nb), v[8 + na + nb], opsel=key),
          I.v_mul_u32_u24_e32(v[1], 4 * nc, v[0]),
          *(I.global_store_b32(vaddr=v[1:2], vsrc=v[dreg + i], saddr=s[4:5], ioffset=4 * i) for i in range(nc)), I.s_endpgm()]
  run(kernel(*body), out, inp, "numpy", None)
  want = reference(A, B, C, (name, ka, kb, K, ko))
  np.testing.assert_array_equal(out.reshape(32, nc), pack_cd(want, ko))

def test_swmmac_modifiers_it_does_not_have_raise(monkeypatch):
  """op_sel bits past the index key, an index key on the x64 form (it reads the whole index VGPR) and NEG on a float
  form raise UnsupportedInstruction naming the instruction."""
  from mockgpu.errors import UnsupportedInstruction
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  out = aligned(256, 256).view(np.uint32)
  cases = [(I.v_swmmac_f32_16x16x32_f16(v[24:31], v[8:11], v[12:19], v[20], opsel=2), r"v_swmmac_f32_16x16x32_f16: op_sel 0x2"),
           (I.v_swmmac_i32_16x16x64_iu4(v[24:31], v[8:9], v[12:15], v[20], opsel=1), r"v_swmmac_i32_16x16x64_iu4: op_sel 0x1"),
           (I.v_swmmac_f32_16x16x32_f16(v[24:31], v[8:11], v[12:19], v[20], neg=1), r"v_swmmac_f32_16x16x32_f16: modifiers")]
  for inst, msg in cases:
    with pytest.raises(UnsupportedInstruction, match=msg): run(kernel(inst, I.s_endpgm()), out, None, "numpy", None)
