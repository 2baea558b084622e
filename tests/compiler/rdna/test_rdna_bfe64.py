"""s_bfe_u64 / s_bfe_i64 (SOP2) on both executor paths (numpy and native, asserted), against a Python reference of the
ISA pseudocode (rdna3 str_pcode):
  tmp = (S0 >> S1[5:0]) & ((1 << S1[22:16]) - 1)     (S0.i64 >> ... arithmetic for i64)
  D0 = tmp, or signext_from_bit(tmp, S1[22:16]) for i64; SCC = D0 != 0
A width of 64 or more (the field has 7 bits) keeps every bit above the offset: (1 << width) - 1 is all ones in 64-bit
arithmetic once the one leaves the register. One wave per workgroup, each with its own S0/S1 (and a prior SCC to
overwrite) loaded by s_load, so thousands of cases run in one dispatch."""
from __future__ import annotations
import itertools
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run, salu_rows

M64 = (1 << 64) - 1

def ref_bfe64(s0:int, s1:int, signed:bool) -> tuple[int, int]:
  """(D0 as 64-bit bits, SCC)."""
  off, width = s1 & 0x3f, (s1 >> 16) & 0x7f
  x = s0 - (1 << 64) if signed and s0 >> 63 else s0          # S0.u64 / S0.i64
  tmp = (x >> off) & (((1 << width) - 1) & M64)               # Python's >> is arithmetic on negative ints
  if signed and 0 < width < 64 and (tmp >> (width - 1)) & 1: tmp -= 1 << width   # signext_from_bit
  d = tmp & M64
  return d, int(d != 0)

WIDTHS = [0, 1, 2, 7, 31, 32, 33, 48, 62, 63, 64, 65, 100, 127]
S0S = [0x8000000000000000, 0x7fffffffffffffff, 0xffffffffffffffff, 0x0000000000000001, 0xfedcba9876543210,
       0x0123456789abcdef, 0x8000000100000000, 0x00000000ffffffff, 0x5555555555555555, 0]

def cases() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """S0 (u64), S1 (u32), the SCC set before the op (u32): every offset 0..63 with each width and each S0, some with
  junk in the bits of S1 outside the fields (S1[15:6], S1[31:23])."""
  rng = np.random.default_rng(11)
  s0, s1, scc = [], [], []
  for i, (off, w, x) in enumerate(itertools.product(range(64), WIDTHS, S0S)):
    junk = int(rng.integers(0, 2**32)) & 0xff80ffc0 if i % 3 == 0 else 0
    s0.append(x if i % 5 else int(rng.integers(0, 2**63)) | (int(rng.integers(0, 2)) << 63))
    s1.append(off | (w << 16) | junk)
    scc.append(i & 1)
  return np.array(s0, np.uint64), np.array(s1, np.uint32), np.array(scc, np.uint32)

def run_bfe64(op, s0:np.ndarray, s1:np.ndarray, scc:np.ndarray, path:str, monkeypatch) -> tuple[np.ndarray, np.ndarray]:
  """Per workgroup g: s[8:9] = S0, s10 = S1, SCC = prior; s[12:13] = op(s[8:9], s10), s14 = SCC."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  rows = np.stack([(s0 & np.uint64(M64 >> 32)).astype(np.uint32), (s0 >> np.uint64(32)).astype(np.uint32), s1, scc], 1)
  body = [I.s_cmp_eq_u32(s[11], 1),                                              # the SCC the op must overwrite
          op(s[12:13], s[8:9], s[10])]
  out = salu_rows(rows, s[8:11], body, (s[12], s[13]), s[14], path)
  return out[:, 0].astype(np.uint64) | (out[:, 1].astype(np.uint64) << np.uint64(32)), out[:, 2].copy()

@pytest.mark.parametrize("signed", [False, True], ids=["u64", "i64"])
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_s_bfe_64(path, signed, monkeypatch):
  s0, s1, scc = cases()
  got_d, got_scc = run_bfe64(I.s_bfe_i64 if signed else I.s_bfe_u64, s0, s1, scc, path, monkeypatch)
  want = [ref_bfe64(int(a), int(b), signed) for a, b in zip(s0, s1)]
  bad = [(hex(s0[i]), hex(s1[i]), hex(int(got_d[i])), int(got_scc[i]), hex(want[i][0]), want[i][1])
         for i in range(len(want)) if (int(got_d[i]), int(got_scc[i])) != want[i]]
  assert not bad, bad[:10]
  # the cases cover both SCC outcomes, both sign-extended and zero-extended results
  assert {w[1] for w in want} == {0, 1} and any(w[0] >> 63 for w in want) and any(w[0] and not w[0] >> 63 for w in want)

def test_reference_spot_values():
  assert ref_bfe64(0xfedcba9876543210, 8 | 16 << 16, False) == (0x5432, 1)
  assert ref_bfe64(0xfedcba9876543210, 8 | 16 << 16, True) == (0x5432, 1)
  assert ref_bfe64(0xfedcba9876543210, 28 | 8 << 16, True) == ((-0x79) & M64, 1)       # 0x87 sign-extended
  assert ref_bfe64(0x8000000000000000, 63 | 1 << 16, True) == (M64, 1)
  assert ref_bfe64(0x8000000000000000, 63 | 1 << 16, False) == (1, 1)
  assert ref_bfe64(0x8000000000000000, 60 | 8 << 16, True) == ((-8) & M64, 1)            # the arithmetic shift fills the field
  assert ref_bfe64(0x8000000000000000, 60 | 8 << 16, False) == (8, 1)
  assert ref_bfe64(0xffffffffffffffff, 5 | 0 << 16, False) == (0, 0)
  assert ref_bfe64(0xfedcba9876543210, 0 | 64 << 16, True) == (0xfedcba9876543210, 1)
  assert ref_bfe64(0xfedcba9876543210, 4 | 127 << 16, False) == (0x0fedcba987654321, 1)

# *** the 32-bit forms: s_bfe_u32/i32 (width S1[22:16], 7 bits) and v_bfe_u32/i32 (width S2[4:0]) ***
M32 = (1 << 32) - 1
def ref_bfe32(s0:int, off:int, width:int, signed:bool) -> int:
  """tmp = (S0 >> off) & ((1 << width) - 1) (S0.i32 >> off arithmetic for i32); D0 = signext_from_bit(tmp, width)."""
  x = s0 - (1 << 32) if signed and s0 >> 31 else s0
  tmp = (x >> (off & 31)) & ((1 << width) - 1)
  if signed and 0 < width < 32 and (tmp >> (width - 1)) & 1: tmp -= 1 << width
  return tmp & M32

S0S32 = [0x80000000, 0x7fffffff, 0xffffffff, 1, 0xfedcba98, 0x01234567, 0x55555555, 0]
WIDTHS32 = [0, 1, 2, 7, 16, 31, 32, 33, 64, 127]

def run_bfe32(op, s0, s1, s2, path, monkeypatch, valu:bool) -> np.ndarray:
  """Per workgroup g: s8 = S0, s9 = S1, s10 = S2; s11/v2 = op(...); stored to out[4g]."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  n = len(s0)
  inp = aligned(16 * n, 256).view(np.uint32).reshape(n, 4)
  inp[:, 0], inp[:, 1], inp[:, 2], inp[:, 3] = s0, s1, s2, 0
  out = aligned(16 * n, 256).view(np.uint32).reshape(n, 4)
  out[:] = 0xdeadbeef
  compute = ([I.v_mov_b32_e32(v[6], s[8]), I.v_mov_b32_e32(v[7], s[9]), I.v_mov_b32_e32(v[8], s[10]), op(v[2], v[6], v[7], v[8])] if valu
             else [op(s[11], s[8], s[9]), I.v_mov_b32_e32(v[2], s[11])])
  body = [I.s_lshl_b32(s[16], s[2], 4),
          I.s_add_u32(s[6], s[6], s[16]), I.s_addc_u32(s[7], s[7], 0), I.s_add_u32(s[4], s[4], s[16]), I.s_addc_u32(s[5], s[5], 0),
          I.s_load_b128(sdata=s[8:11], sbase=s[6:7], offset=0), I.s_waitcnt(simm16=0), *compute,
          I.v_mov_b32_e32(v[3], 0x5a), I.v_mov_b32_e32(v[4], 0), I.v_mov_b32_e32(v[5], 0),
          I.v_mov_b32_e32(v[1], 0), I.global_store_b128(addr=v[1], data=v[2:5], saddr=s[4:5], offset=0), I.s_endpgm()]
  stats, _ = run(kernel(*body), out, inp, grid=(n, 1, 1))
  assert stats.native == (path == "native"), f"{path}: ran on the other path"
  assert (out[:, 1] == 0x5a).all()
  return out[:, 0].copy()

@pytest.mark.parametrize("signed", [False, True], ids=["u32", "i32"])
@pytest.mark.parametrize("form", ["salu", "valu"])
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_bfe_32(path, form, signed, monkeypatch):
  combos = list(itertools.product(range(32), WIDTHS32 if form == "salu" else range(32), S0S32))
  s0 = np.array([x for _, _, x in combos], np.uint32)
  off = np.array([o for o, _, _ in combos], np.uint32)
  w = np.array([wd for _, wd, _ in combos], np.uint32)
  if form == "salu":
    got = run_bfe32(I.s_bfe_i32 if signed else I.s_bfe_u32, s0, off | (w << 16), np.zeros_like(s0), path, monkeypatch, False)
  else:
    got = run_bfe32(I.v_bfe_i32 if signed else I.v_bfe_u32, s0, off, w, path, monkeypatch, True)
  want = [ref_bfe32(int(x), int(o), int(wd) & (127 if form == "salu" else 31), signed) for o, wd, x in combos]
  bad = [(hex(x), o, wd, hex(int(g)), hex(r)) for (o, wd, x), g, r in zip(combos, got, want) if int(g) != r]
  assert not bad, bad[:10]

def test_reference_spot_values_32():
  assert ref_bfe32(0x80000000, 31, 2, True) == M32          # the arithmetic shift fills the field past bit 31
  assert ref_bfe32(0x80000000, 31, 2, False) == 1
  assert ref_bfe32(0xfedcba98, 0, 32, True) == 0xfedcba98    # a width of 32 keeps every bit
  assert ref_bfe32(0xfedcba98, 4, 33, False) == 0x0fedcba9
  assert ref_bfe32(0x000000f0, 4, 4, True) == M32            # 0xf sign-extended
