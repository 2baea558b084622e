"""SALU ops added from tinygrad's RDNA3 table (s_quadmask, s_wqm, s_brev_b64, s_bcnt0_i32_b64, s_bfm_b64) on both
executor paths (numpy and native, asserted), against a Python reference of the ISA pseudocode (rdna3 str_pcode):
  S_QUADMASK_B32/B64: for i in 0..7 / 0..15: D0[i] = S0[i*4+3:i*4] != 0;            SCC = D0 != 0
  S_WQM_B32/B64:      for i in 0..31 / 0..63 step 4: D0[i+3:i] = S0[i+3:i] != 0 ? 0xf : 0; SCC = D0 != 0
  S_BREV_B64: D0[63:0] = S0[0:63];   S_BCNT0_I32_B64: D0 = count of 0 bits in S0.u64; SCC = D0 != 0
  S_CLZ_I32_U64 / S_CTZ_I32_B64: the first 1 from bit 63 down / from bit 0 up, -1 for none
  S_BFM_B64: D0.u64 = ((1ULL << S0[5:0]) - 1) << S1[5:0]
Each workgroup is one case: S0 in s[12:13], S1 in s[14:15], loaded by s_load; D and SCC are stored."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_isa import salu_rows

M64 = (1 << 64) - 1

def quadmask(x:int, width:int) -> int: return sum(1 << i for i in range(width // 4) if (x >> 4 * i) & 0xf)
def wqm(x:int, width:int) -> int: return sum(0xf << 4 * i for i in range(width // 4) if (x >> 4 * i) & 0xf)
def brev64(x:int) -> int: return int(f"{x:064b}"[::-1], 2)

# name -> (instruction, D is 64-bit, S0 is 64-bit, two sources, reference(s0, s1), SCC written)
OPS = {"quadmask_b32": (I.s_quadmask_b32, False, False, False, lambda a, b: quadmask(a & 0xffffffff, 32), True),
       "quadmask_b64": (I.s_quadmask_b64, True, True, False, lambda a, b: quadmask(a, 64), True),
       "wqm_b32": (I.s_wqm_b32, False, False, False, lambda a, b: wqm(a & 0xffffffff, 32), True),
       "wqm_b64": (I.s_wqm_b64, True, True, False, lambda a, b: wqm(a, 64), True),
       "brev_b64": (I.s_brev_b64, True, True, False, lambda a, b: brev64(a), False),
       "bcnt0_i32_b64": (I.s_bcnt0_i32_b64, False, True, False, lambda a, b: 64 - bin(a).count("1"), True),
       "clz_i32_u64": (I.s_clz_i32_u64, False, True, False, lambda a, b: 64 - a.bit_length() if a else 0xffffffff, False),
       "ctz_i32_b64": (I.s_ctz_i32_b64, False, True, False, lambda a, b: (a & -a).bit_length() - 1 if a else 0xffffffff, False),
       "bfm_b64": (I.s_bfm_b64, True, False, True, lambda a, b: (((1 << (a & 63)) - 1) << (b & 63)) & M64, False)}

def cases(n:int=256) -> tuple[list[int], list[int]]:
  rng = np.random.default_rng(11)
  fixed = [0, M64, 1, 0x8000000000000000, 0x1000100010001, 0xf0f0f0f0f0f0f0f0, 0x0123456789abcdef, 0x3f, 0x40]
  s0 = fixed + [int(rng.integers(0, 2**63)) << 1 | int(rng.integers(0, 2)) for _ in range(n - len(fixed))]
  # sparse patterns so that quads are often all zero
  s0 = [x & int(rng.integers(0, 2**63)) if i % 3 == 0 else x for i, x in enumerate(s0)]
  s1 = [int(rng.integers(0, 2**32)) if i % 4 else i % 70 for i in range(n)]
  return s0, s1

def run_op(name:str, path:str, monkeypatch) -> tuple[list[int], list[int], list[int], list[int]]:
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  op, wide_d, wide_s, two, _, _ = OPS[name]
  s0, s1 = cases()
  rows = np.array([[x & 0xffffffff, x >> 32, y, 0] for x, y in zip(s0, s1)], np.uint32)
  srcs = (s[12:13] if wide_s else s[12], s[14]) if two else (s[12:13] if wide_s else s[12],)
  body = [I.s_mov_b32(s[20], 0x77777777), I.s_mov_b32(s[21], 0x77777777),
          I.s_cmp_eq_u32(s[2], s[2]),                              # SCC = 1 before: an op that does not write it keeps it
          op(s[20:21] if wide_d else s[20], *srcs)]
  out = salu_rows(rows, s[12:15], body, (s[20], s[21]), s[22], path)
  d = [int(lo) | int(hi) << 32 for lo, hi in zip(out[:, 0], out[:, 1])]
  return s0, s1, d, [int(x) for x in out[:, 2]]

@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_salu_op(path, name, monkeypatch):
  _, wide_d, _, _, ref, writes_scc = OPS[name]
  s0, s1, d, scc = run_op(name, path, monkeypatch)
  want = [ref(a, b) if wide_d else ref(a, b) | 0x77777777 << 32 for a, b in zip(s0, s1)]  # a 32-bit D leaves s21
  bad = [(hex(a), hex(b), hex(g), hex(w)) for a, b, g, w in zip(s0, s1, d, want) if g != w]
  assert not bad, bad[:8]
  want_scc = [int((w & (M64 if wide_d else 0xffffffff)) != 0) if writes_scc else 1 for w in want]
  assert scc == want_scc

def test_reference_spot_values():
  assert quadmask(0x000f0010, 32) == 0b10010 and wqm(0x000f0010, 32) == 0x000f00f0
  assert brev64(1) == 1 << 63 and brev64(0x0123456789abcdef) == 0xf7b3d591e6a2c480
