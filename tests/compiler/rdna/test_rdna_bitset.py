"""s_bitset0/s_bitset1 (SOP1, b32 and b64) on both executor paths (numpy and native, asserted), against a Python
reference of the ISA pseudocode (rdna3):
  S_BITSET0_B32: D0.u32[S0.u32[4:0]] = 1'0U      S_BITSET1_B32: D0.u32[S0.u32[4:0]] = 1'1U
  S_BITSET0_B64: D0.u64[S0.u32[5:0]] = 1'0U      S_BITSET1_B64: D0.u64[S0.u32[5:0]] = 1'1U
They read-modify-write the destination: every other bit of D keeps its value, and SCC is not written. Both semantics
tables once wrote ~(1 << n) (bitset0) or 1 << n (bitset1), dropping D: tinygrad's fabs of a float computed in SALU
(s_bitset0_b32 sN, 31) zeroed the value, so EMULATED_DTYPES=half/bfloat16 abs, casts and copies came out wrong.
The bit index comes from an SGPR (with junk above the index field), an inline constant or a literal; D's old value
and the prior SCC differ per workgroup (one wave each, loaded by s_load), so every case runs in one dispatch."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_isa import salu_rows

M64 = (1 << 64) - 1
OPS = {"bitset0_b32": (I.s_bitset0_b32, 32, 0), "bitset1_b32": (I.s_bitset1_b32, 32, 1),
       "bitset0_b64": (I.s_bitset0_b64, 64, 0), "bitset1_b64": (I.s_bitset1_b64, 64, 1)}

def ref(d:int, s0:int, width:int, value:int) -> int:
  n = s0 & (width - 1)
  d &= (1 << width) - 1
  return (d | (1 << n)) if value else (d & ~(1 << n) & ((1 << width) - 1))

def cases() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """D's old value (u64), the SGPR bit index (u32, junk above bit 5 in some), the prior SCC: every index with
  several D values (all zeros, all ones, patterns, random)."""
  rng = np.random.default_rng(5)
  ds = [0, M64, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0x8000000000000001, 0xfedcba9876543210]
  d, idx, scc = [], [], []
  for i in range(64 * 8):
    n = i % 64
    d.append(ds[i // 64] if i // 64 < len(ds) else int(rng.integers(0, 2**63)) << 1 | (i & 1))
    idx.append(n | (int(rng.integers(0, 2**26)) << 6 if i % 3 == 0 else 0))
    scc.append((i >> 1) & 1)
  return np.array(d, np.uint64), np.array(idx, np.uint32), np.array(scc, np.uint32)

def run_bitset(op, wide:bool, src, d:np.ndarray, idx:np.ndarray, scc:np.ndarray, path:str, monkeypatch):
  """Per workgroup g: s[12:13] = D, s10 = index, SCC = prior; op(s12 or s[12:13], src); returns D and SCC."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  rows = np.stack([(d & np.uint64(0xffffffff)).astype(np.uint32), (d >> np.uint64(32)).astype(np.uint32), idx, scc], 1)
  body = [I.s_mov_b32(s[10], s[14]),
          I.s_cmp_eq_u32(s[15], 1),                                   # SCC: the op must leave it as it is
          op(s[12:13] if wide else s[12], s[10] if src is None else src)]
  out = salu_rows(rows, s[12:15], body, (s[12], s[13]), s[14], path)
  return out[:, 0].astype(np.uint64) | (out[:, 1].astype(np.uint64) << np.uint64(32)), out[:, 2].copy()

# the bit index operand: the SGPR (per case), inline constants, literals (only the low 5/6 bits count)
SOURCES = {"sgpr": None, "inline0": 0, "inline31": 31, "inline63": 63, "inline64": 64, "inline_neg1": -1,
           "literal": 0x12345, "literal_hi": 0x80000021}

@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_s_bitset(path, name, source, monkeypatch):
  op, width, value = OPS[name]
  d, idx, scc = cases()
  src = SOURCES[source]
  got_d, got_scc = run_bitset(op, width == 64, src, d, idx, scc, path, monkeypatch)
  s0 = idx if src is None else np.full(len(d), src & 0xffffffff, np.uint32)
  want = [ref(int(x), int(i), width, value) for x, i in zip(d, s0)]
  # a 32-bit op leaves s13 (the upper word loaded with D) as it was
  want = [w | (int(x) >> 32 << 32 if width == 32 else 0) for w, x in zip(want, d)]
  bad = [(hex(int(d[i])), int(s0[i]), hex(int(got_d[i])), hex(want[i])) for i in range(len(d)) if int(got_d[i]) != want[i]]
  assert not bad, bad[:8]
  np.testing.assert_array_equal(got_scc, scc, err_msg="s_bitset* wrote SCC")

def test_reference_spot_values():
  assert ref(0xbf830000, 31, 32, 0) == 0x3f830000          # fabs: only the sign bit goes
  assert ref(0x3f830000, 31, 32, 1) == 0xbf830000
  assert ref(0, 0x12345, 32, 1) == 1 << 5                   # S0[4:0]
  assert ref(M64, 0x80000021, 64, 0) == M64 & ~(1 << 33)    # S0[5:0]
  assert ref(0, 63, 64, 1) == 1 << 63
