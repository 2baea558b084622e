"""RDNA3 instruction classes whose expectations were read on hardware (tinygrad's hardware-validated RDNA3 tests), each
from its hardware example, on the numpy and C paths:
  - 16-bit VOPC e32 compares with an operand v[128+n]: the high half of v[n] (errata true16-vopc), both operands high
    (v_cmp_eq_u16 hi == hi) and vsrc1 high (v_cmp_gt_f16);
  - DPP16 controls 0x142 (row_bcast15) and 0x143 (row_bcast31), GCN's, which RDNA3 executes in wave64: with BOUND_CTRL
    the first lane of each row compares true against lane & 15, i.e. the source reads 0 in every lane (operands.RDNA_BCAST:
    a source no lane has; inferred from that example), and without BOUND_CTRL a DPP move leaves every lane unwritten."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC, VCC_LO, DPP
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from tinygrad.runtime.autogen.amd.rdna3.enum import VOP1Op, VOPCOp
from support.rdna_harness import aligned
from support.rdna_isa import run, kernel
from support.rdna_errata import lanes, f16

PATHS = ["numpy", "native"]

@pytest.mark.parametrize("path", PATHS)
def test_vopc_e32_true16_high_halves(path):
  lane = np.arange(32)
  # v3.hi = lane % 4, v4.hi = lane % 2 (low halves differ): v_cmp_eq_u16_e32 v[131], v[132] is hi == hi
  body = [I.v_and_b32_e32(v[5], 3, v[0]), I.v_lshlrev_b32_e32(v[3], 16, v[5]), I.v_or_b32_e32(v[3], 0x1234, v[3]),
          I.v_and_b32_e32(v[6], 1, v[0]), I.v_lshlrev_b32_e32(v[4], 16, v[6]), I.v_or_b32_e32(v[4], 0x5678, v[4]),
          I.v_cmp_eq_u16_e32(v[131], v[132]), I.v_cndmask_b32_e64(v[2], 0, 1, VCC_LO)]
  np.testing.assert_array_equal(lanes(body, path, True), (lane % 4 == lane % 2).astype(np.uint32))
  # v_cmp_gt_f16_e32 v3, v[132]: 1.0 > v4.hi = 0.5 (v4.lo = 3.0 would make it false)
  body = [I.v_mov_b32_e32(v[3], f16(1.0)), I.v_mov_b32_e32(v[4], f16(0.5) << 16 | f16(3.0)), I.v_cmp_gt_f16_e32(v[3], v[132]),
          I.v_cndmask_b32_e64(v[2], 0, 1, VCC_LO)]
  assert (lanes(body, path, True) == 1).all()

def wave64(body, path:str, monkeypatch) -> np.ndarray:
  """v2 of each of 64 lanes after body (v9 = lane * 4 for the store), one wave64 workgroup."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  out = aligned(256, 256).view(np.uint32)
  out[:] = 0
  stats, _ = run(kernel(I.v_lshlrev_b32_e32(v[9], 2, v[0]), *body, I.global_store_b32(addr=v[9], data=v[2], saddr=s[4:5], offset=0),
                        I.s_endpgm()), out, block=(64, 1, 1), wave32=False)
  assert stats.native == (path == "native")
  return out.copy()

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("ctrl", [0x142, 0x143])
def test_row_bcast_in_wave64(path, ctrl, monkeypatch):
  lane = np.arange(64)
  cmp = I.VOPC_DPP16(VOPCOp.V_CMP_EQ_U32_E32, vsrc1=v[1], src0=DPP, vsrc0=v[0], dpp=ctrl, bc=1, row_mask=15, bank_mask=15)
  got = wave64([I.v_and_b32_e32(v[1], 15, v[0]), cmp, I.v_cndmask_b32_e64(v[2], 0, 1, VCC)], path, monkeypatch)
  np.testing.assert_array_equal(got, (lane % 16 == 0).astype(np.uint32))   # the hardware example
  for bc, want in ((1, np.zeros(64, np.uint32)), (0, (1000 + lane).astype(np.uint32))):
    mov = I.VOP1_DPP16(VOP1Op.V_MOV_B32_E32, v[2], src0=DPP, vsrc0=v[0], dpp=ctrl, bc=bc, row_mask=15, bank_mask=15)
    np.testing.assert_array_equal(wave64([I.v_add_nc_u32_e32(v[2], 1000, v[0]), mov], path, monkeypatch), want)

# *** v_div_scale_f32's VCC (errata div-scale-vcc; on both paths: the C backend runs the two-result row, prelude div_scale32) ***

@pytest.mark.parametrize("path", PATHS)
def test_div_scale_vcc_tiny_zero_numerator_and_tiny_quotient(path):
  """The hardware examples: VCC for a tiny numerator (biased exponent <= 23) in the denominator's call, for a zero
  numerator, and for a quotient that would be denormal (below 2^-126, also one that f32 rounds to zero). Thresholds
  inferred from these and from LLVM's precise division, which stays correctly rounded (tests/compiler/rdna/test_rdna_division.py)."""
  from support.rdna_errata import div_scale, f32
  tiny = 2.0 ** -110                                            # biased exponent 17
  assert div_scale(path, 3.0, 3.0, tiny) == (f32(3.0 * 2.0 ** 64), 1)   # the denominator's call: scaled, VCC
  assert div_scale(path, tiny, 3.0, tiny)[0] == f32(tiny * 2.0 ** 64)   # the numerator's call: scaled as the pseudocode
  d, vcc = div_scale(path, 0.0, 3.0, 0.0)                       # a zero numerator: the pseudocode's NaN, and VCC
  assert vcc == 1 and (d & 0x7fffffff) > 0x7f800000
  assert div_scale(path, 3.0, 3.0, 0.0)[1] == 1
  assert div_scale(path, 2.0 ** -100, 2.0 ** 30, 2.0 ** -100) == (f32(2.0 ** -36), 1)   # quotient 2^-130: denormal
  assert div_scale(path, 2.0 ** -100, 2.0 ** 60, 2.0 ** -100) == (f32(2.0 ** -36), 1)   # 2^-160: f32 rounds it to 0
  assert div_scale(path, 1.5, 3.0, 1.5) == (f32(1.5), 0)        # an ordinary quotient: D = S0, no VCC
