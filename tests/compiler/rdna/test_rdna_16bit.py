"""16-bit VALU instructions (VOP3 encodings) on both executor paths (numpy and native, asserted), each source operand
kind against a Python reference of the ISA pseudocode:
  sources: a VGPR's low half, its high half (op_sel), an SGPR's low and high half (op_sel), an inline integer
  constant (positive, negative: sign-extended to 16 bits), an inline float constant (its float16 bits), a literal
  (its low 16 bits);
  destination: the low or the high half (op_sel[3]); the other half of the VGPR keeps its bits.
Integer ops wrap (no clamp); shifts take S0[3:0]; f16 ops round to nearest even (numpy's float16 arithmetic is
correctly rounded for one +, -, * of float16 values: float32 holds their exact results to 2p+2 bits). Written
while looking for the EMULATED_DTYPES=half/bfloat16 wrong results (which were s_bitset0/1, tests/compiler/rdna/test_rdna_bitset.py):
the 16-bit instructions that integer code is made of agree with the pseudocode for every operand kind."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run

def sx(x:int) -> int: return x - 0x10000 if x & 0x8000 else x
def f16(x:int) -> np.float16: return np.array([x], np.uint16).view(np.float16)[0]
def bits16(x) -> int: return int(np.array([x], np.float16).view(np.uint16)[0])
def fop(fn):
  def f(a, b, c=0):
    with np.errstate(all="ignore"): return bits16(fn(f16(a), f16(b)))
  return f
def fmin16(a, b):
  if np.isnan(a): return b
  if np.isnan(b): return a
  if a == 0 and b == 0: return a if np.signbit(a) else b
  return min(a, b)
def fmax16(a, b):
  if np.isnan(a): return b
  if np.isnan(b): return a
  if a == 0 and b == 0: return b if np.signbit(a) else a
  return max(a, b)
def med3(a, b, c): return max(min(a, b), min(max(a, b), c))

# name -> (instruction, source count, reference over the three 16-bit source values -> 16-bit result)
OPS = {
  "add_nc_u16": (I.v_add_nc_u16, 2, lambda a, b, c: a + b), "sub_nc_u16": (I.v_sub_nc_u16, 2, lambda a, b, c: a - b),
  "add_nc_i16": (I.v_add_nc_i16, 2, lambda a, b, c: sx(a) + sx(b)), "sub_nc_i16": (I.v_sub_nc_i16, 2, lambda a, b, c: sx(a) - sx(b)),
  "mul_lo_u16": (I.v_mul_lo_u16, 2, lambda a, b, c: a * b),
  "lshlrev_b16": (I.v_lshlrev_b16, 2, lambda a, b, c: b << (a & 15)), "lshrrev_b16": (I.v_lshrrev_b16, 2, lambda a, b, c: b >> (a & 15)),
  "ashrrev_i16": (I.v_ashrrev_i16, 2, lambda a, b, c: sx(b) >> (a & 15)),
  "max_u16": (I.v_max_u16, 2, lambda a, b, c: max(a, b)), "min_u16": (I.v_min_u16, 2, lambda a, b, c: min(a, b)),
  "max_i16": (I.v_max_i16, 2, lambda a, b, c: max(sx(a), sx(b))), "min_i16": (I.v_min_i16, 2, lambda a, b, c: min(sx(a), sx(b))),
  "mad_u16": (I.v_mad_u16, 3, lambda a, b, c: a * b + c), "mad_i16": (I.v_mad_i16, 3, lambda a, b, c: sx(a) * sx(b) + sx(c)),
  "max3_u16": (I.v_max3_u16, 3, lambda a, b, c: max(a, b, c)), "min3_u16": (I.v_min3_u16, 3, lambda a, b, c: min(a, b, c)),
  "med3_u16": (I.v_med3_u16, 3, lambda a, b, c: med3(a, b, c)),
  "max3_i16": (I.v_max3_i16, 3, lambda a, b, c: max(sx(a), sx(b), sx(c))), "min3_i16": (I.v_min3_i16, 3, lambda a, b, c: min(sx(a), sx(b), sx(c))),
  "med3_i16": (I.v_med3_i16, 3, lambda a, b, c: med3(sx(a), sx(b), sx(c))),
  "add_f16": (I.v_add_f16_e64, 2, fop(lambda a, b: a + b)), "sub_f16": (I.v_sub_f16_e64, 2, fop(lambda a, b: a - b)),
  "subrev_f16": (I.v_subrev_f16_e64, 2, fop(lambda a, b: b - a)), "mul_f16": (I.v_mul_f16_e64, 2, fop(lambda a, b: a * b)),
  "max_f16": (I.v_max_f16_e64, 2, fop(fmax16)), "min_f16": (I.v_min_f16_e64, 2, fop(fmin16)),
}
FLOAT = {n for n in OPS if n.endswith("f16")}

# source operand kinds: (the operand, op_sel bit, its 16-bit value per lane given the lane's v2/v3/v4 and s8)
KINDS = {
  "vgpr_lo": lambda i: (v[2 + i], 0, lambda vals, s8: vals[i] & 0xffff),
  "vgpr_hi": lambda i: (v[2 + i], 1, lambda vals, s8: vals[i] >> 16),
  "sgpr_lo": lambda i: (s[8], 0, lambda vals, s8: s8 & 0xffff),
  "sgpr_hi": lambda i: (s[8], 1, lambda vals, s8: s8 >> 16),
  "inline_int": lambda i: (7, 0, lambda vals, s8: 7),
  "inline_neg": lambda i: (-3, 0, lambda vals, s8: 0xfffd),
  "inline_float": lambda i: (2.0, 0, lambda vals, s8: 0x4000),   # float16 2.0 for a 16-bit operand
  "literal": lambda i: (0x9876, 0, lambda vals, s8: 0x9876),
}
S8 = 0x3c01c4ff  # its halves: f16 -4.996 (low), 1.0009765625 (high)

def inputs(float_:bool) -> np.ndarray:
  """v2, v3, v4 and the destination's old value per lane: edge patterns and random bits (finite halves for f16 ops,
  plus zeros of both signs, infinities and a NaN in some lanes)."""
  rng = np.random.default_rng(3)
  x = rng.integers(0, 2**32, (4, 32), dtype=np.uint64).astype(np.uint32)
  if float_:
    halves = x.view(np.uint16).reshape(4, 32, 2)
    halves &= np.uint16(0xbfff)                                      # keep exponents below 0x1f: finite, no overflow
    specials = np.array([0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x3c00], np.uint16)
    halves[:3, :8, 0] = specials
    halves[:3, 8:16, 1] = specials[::-1]
  else:
    x[:3, :6] = np.array([0, 0xffffffff, 0x80008000, 0x7fff7fff, 0x0001ffff, 0x000f0010], np.uint32)
  return x

def run_op(name:str, kinds:tuple, dst_hi:bool, path:str, monkeypatch) -> tuple[np.ndarray, np.ndarray]:
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  op, nsrc, fn = OPS[name]
  x = inputs(name in FLOAT)
  inp = aligned(4 * 128, 256).view(np.uint32)
  inp[:] = x.reshape(-1)
  out = aligned(4 * 32, 256).view(np.uint32)
  srcs, opsel, getters = [], 8 if dst_hi else 0, []
  for i, k in enumerate(kinds[:nsrc]):
    operand, hi, get = KINDS[k](i)
    srcs.append(operand)
    opsel |= hi << i
    getters.append(get)
  body = [I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.s_mov_b32(s[8], S8)]
  body += [I.global_load_b32(vdst=v[2 + j], addr=v[1], saddr=s[6:7], offset=128 * j) for j in range(4)]
  body += [I.s_waitcnt(simm16=0), op(v[5], *srcs, opsel=opsel), I.global_store_b32(addr=v[1], data=v[5], saddr=s[4:5], offset=0),
           I.s_endpgm()]
  stats, _ = run(kernel(*body), out, inp)
  assert stats.native == (path == "native"), f"{path}: ran on the other path"
  want = np.zeros(32, np.uint32)
  for lane in range(32):
    vals = [int(x[j, lane]) for j in range(3)]
    r = fn(*[g(vals, S8) for g in getters], *([0] * (3 - nsrc))) & 0xffff
    old = int(x[3, lane])
    want[lane] = (old & 0xffff) | (r << 16) if dst_hi else (old & 0xffff0000) | r
  return out.copy(), want

# (src0, src1, src2 kinds, destination half): every kind in every source position at least once, both halves written
COMBOS = [("vgpr_lo", "vgpr_hi", "vgpr_lo", False), ("vgpr_hi", "vgpr_lo", "vgpr_hi", True), ("sgpr_lo", "vgpr_hi", "sgpr_hi", False),
          ("sgpr_hi", "vgpr_lo", "vgpr_lo", True), ("vgpr_lo", "sgpr_lo", "vgpr_hi", True), ("inline_int", "vgpr_lo", "inline_neg", True),
          ("vgpr_hi", "inline_neg", "vgpr_lo", False), ("inline_float", "vgpr_hi", "inline_float", False),
          ("vgpr_lo", "inline_float", "literal", True), ("literal", "vgpr_lo", "vgpr_hi", True), ("vgpr_hi", "literal", "sgpr_lo", False)]

@pytest.mark.parametrize("combo", COMBOS, ids=["-".join(c[:3]) + ("-dst_hi" if c[3] else "-dst_lo") for c in COMBOS])
@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_16bit_op(path, name, combo, monkeypatch):
  kinds, dst_hi = combo[:3], combo[3]
  got, want = run_op(name, kinds, dst_hi, path, monkeypatch)
  if name in FLOAT:  # a NaN result may have any payload (x86 and GPUs differ): compare NaN-ness there
    h = (lambda a: (a >> 16) if dst_hi else (a & 0xffff))
    nan = np.isnan(np.array([h(int(g)) for g in got], np.uint16).view(np.float16)) & \
          np.isnan(np.array([h(int(w)) for w in want], np.uint16).view(np.float16))
    got, want = np.where(nan, 0, got), np.where(nan, 0, want)
  bad = [(lane, hex(int(got[lane])), hex(int(want[lane]))) for lane in range(32) if got[lane] != want[lane]]
  assert not bad, bad[:6]
