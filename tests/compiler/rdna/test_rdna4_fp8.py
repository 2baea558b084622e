"""RDNA4's OCP fp8/bf8 VALU forms (gfx1201) on the numpy and the C path (the prelude's fp8/bf8 helpers): v_cvt_f32_fp8 and
v_cvt_f32_bf8 with every op_sel byte select (the pseudocode's reversed order: 0 bits 7:0, 2 bits 15:8, 1 bits 23:16, 3
bits 31:24), v_cvt_pk_f32_fp8/bf8 (either half) and every byte value against the formats' definitions (E4M3: bias 7,
S.1111.111 the only NaN, no infinity; E5M2: IEEE-like, bias 15), computed here; v_dot4_f32_* against the pseudocode's four f32 additions in order."""
from __future__ import annotations
import math
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna4 import ins as I
from mockgpu.errors import UnsupportedInstruction
from support.rdna_harness import aligned
from support.rdna4 import kernel, run

def ocp(code:int, kind:str) -> float:
  e_bits, m_bits, bias = (4, 3, 7) if kind == "fp8" else (5, 2, 15)
  sign, exp, man = code >> 7, code >> m_bits & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
  if kind == "fp8" and code & 0x7f == 0x7f: return math.nan
  if kind == "bf8" and exp == 31: return math.nan if man else -math.inf if sign else math.inf
  x = man * 2.0 ** (1 - bias - m_bits) if exp == 0 else (1 + man / (1 << m_bits)) * 2.0 ** (exp - bias)
  return -x if sign else x

def one_lane_op(body:list, words:np.ndarray, path:str="numpy", mp=None) -> np.ndarray:
  """Each of the 32 lanes loads its word of `words` (n x 32 uint32, one dispatch per row) into v2 (and v3, v4: the
  next rows) and stores v5 after `body`."""
  inp = aligned(words.nbytes, 256).view(np.uint32)
  inp[:] = words.reshape(-1)
  out = aligned(4 * 32, 256).view(np.uint32)
  code = [I.v_lshlrev_b32_e32(v[1], 2, v[0])] + [I.global_load_b32(vdst=v[2 + k], vaddr=v[1:2], saddr=s[6:7], ioffset=128 * k)
                                                  for k in range(words.shape[0])]
  code += [I.s_wait_loadcnt(simm16=0), *body, I.global_store_b32(vaddr=v[1:2], vsrc=v[5], saddr=s[4:5], ioffset=0), I.s_endpgm()]
  run(kernel(*code), out, inp, path, mp)
  return out.copy()

@pytest.mark.parametrize("kind", ["fp8", "bf8"])
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_cvt_f32_from_every_byte_and_byte_select(kind, path, monkeypatch):
  op = {"fp8": (I.v_cvt_f32_fp8_e64, I.v_cvt_f32_fp8_e32), "bf8": (I.v_cvt_f32_bf8_e64, I.v_cvt_f32_bf8_e32)}[kind]
  for start in range(0, 256, 32):
    codes = np.arange(start, start + 32, dtype=np.uint32)
    for opsel, byte in ((0, 0), (2, 1), (1, 2), (3, 3)):
      words = (codes << np.uint32(8 * byte)) | np.uint32(0x5a5a5a5a & ~(0xff << (8 * byte)))
      got = one_lane_op([op[0](v[5], v[2], opsel=opsel)], words[None, :], path, monkeypatch).view(np.float32)
      for c, g in zip(codes, got):
        want = ocp(int(c), kind)
        assert (math.isnan(g) and math.isnan(want)) or float(g) == want, (kind, hex(c), opsel, g, want)
    e32 = one_lane_op([op[1](v[5], v[2])], codes[None, :], path, monkeypatch).view(np.float32)  # the e32 form reads byte 0
    assert all((math.isnan(g) and math.isnan(ocp(int(c), kind))) or float(g) == ocp(int(c), kind) for c, g in zip(codes, e32))
  with pytest.raises(UnsupportedInstruction, match=r"s\[8\] as S0, which the pseudocode reads as a VGPR"):
    one_lane_op([op[0](v[5], s[8])], codes[None, :], path, monkeypatch)

@pytest.mark.parametrize("a,b", [("fp8", "fp8"), ("fp8", "bf8"), ("bf8", "fp8"), ("bf8", "bf8")])
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_dot4_f32_adds_in_order(a, b, path, monkeypatch):
  """tmp = S2; tmp += f32(S0 byte k) * f32(S1 byte k) for k = 0..3, each addition rounded to f32 (products of 8-bit
  floats are exact in f32); finite bytes only."""
  rng = np.random.default_rng([ord(a[0]), ord(b[0])])
  def finite(kind, n):
    c = rng.integers(0, 256, n)
    ok = np.array([math.isfinite(ocp(int(x), kind)) for x in c.reshape(-1)]).reshape(c.shape)
    return np.where(ok, c, 0x38)
  A, B = finite(a, (32, 4)), finite(b, (32, 4))
  C = rng.uniform(-64, 64, 32).astype(np.float32)
  pack = lambda x: (x[:, 0] | x[:, 1] << 8 | x[:, 2] << 16 | x[:, 3] << 24).astype(np.uint32)
  words = np.stack([pack(A), pack(B), C.view(np.uint32)])
  op = getattr(I, f"v_dot4_f32_{a}_{b}")
  got = one_lane_op([op(v[5], v[2], v[3], v[4])], words, path, monkeypatch).view(np.float32)
  for l in range(32):
    tmp = np.float32(C[l])
    for k in range(4): tmp = np.float32(np.float64(tmp) + ocp(int(A[l, k]), a) * ocp(int(B[l, k]), b))  # one rounding each
    assert got[l].view(np.uint32) == tmp.view(np.uint32), (l, got[l], tmp)

@pytest.mark.parametrize("kind", ["fp8", "bf8"])
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_cvt_pk_f32_both_bytes_of_either_half(kind, path, monkeypatch):
  """v_cvt_pk_f32_fp8/bf8: bytes 0 and 1 of S0's low half (op_sel bit 0: of its high half) as two f32, the low byte's
  in the first VGPR of D."""
  op = getattr(I, f"v_cvt_pk_f32_{kind}_e64")
  rng = np.random.default_rng(ord(kind[0]))
  words = rng.integers(0, 2**32, 32).astype(np.uint32)
  for opsel in (0, 1):
    lo = one_lane_op([op(v[4:5], v[2], opsel=opsel), I.v_mov_b32_e32(v[5], v[4])], words[None, :], path, monkeypatch).view(np.float32)
    hi = one_lane_op([op(v[4:5], v[2], opsel=opsel), I.v_mov_b32_e32(v[5], v[5])], words[None, :], path, monkeypatch).view(np.float32)
    for w, g0, g1 in zip(words, lo, hi):
      half = int(w) >> (16 * opsel) & 0xffff
      for g, code in ((g0, half & 0xff), (g1, half >> 8)):
        want = ocp(code, kind)
        assert (math.isnan(g) and math.isnan(want)) or float(g) == want, (kind, hex(int(w)), opsel)
