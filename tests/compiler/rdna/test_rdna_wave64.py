"""RDNA3 in wave64 (DISPATCH_INITIATOR.CS_W32_EN clear): 64 lanes per wave, EXEC and VCC are the SGPR pairs
s[126:127] and s[106:107], lane masks 64 bits wide. Hand-assembled kernels on both executor paths; the expected values
come from the ISA's definitions, written here per lane."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC, VCC_LO, VCC_HI, EXEC, DPP
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from tinygrad.runtime.autogen.amd.rdna3.enum import VOP1Op
from support.rdna_wave64 import LANES, run64, store

both_paths = pytest.mark.usefixtures("rdna_path")  # on the numpy and the native path

lane = np.arange(LANES)

@both_paths
def test_lanes_masks_and_exec_pair():
  body = [*store(0, v[0]),                                                                 # work-item ids 0..63
          I.v_cmp_gt_u32_e32(40, v[0]), I.v_cndmask_b32_e64(v[2], 0, 1, VCC), *store(1, v[2]),  # VCC: lanes < 40
          I.s_and_saveexec_b64(s[8:9], VCC), I.v_mov_b32_e32(v[3], 7), *store(2, v[3]),        # EXEC: lanes < 40 write
          I.s_or_b64(EXEC, EXEC, s[8:9]),
          I.v_mbcnt_lo_u32_b32(v[4], -1, 0), I.v_mbcnt_hi_u32_b32(v[4], -1, v[4]), *store(3, v[4]),  # each lane's id
          I.s_bcnt1_i32_b64(s[10], VCC), I.v_mov_b32_e32(v[5], s[10]), *store(4, v[5]),        # 40 lanes in VCC
          I.s_mov_b32(s[12], 0), I.s_mov_b32(s[13], 0x100), I.s_mov_b64(EXEC, s[12:13]),       # only lane 40 on
          I.v_readfirstlane_b32_e32(s[14], v[0]), I.s_mov_b64(EXEC, -1), I.v_mov_b32_e32(v[6], s[14]), *store(5, v[6]),
          I.s_endpgm()]
  out = run64(body, 6)
  np.testing.assert_array_equal(out[0], lane)
  np.testing.assert_array_equal(out[1], lane < 40)
  np.testing.assert_array_equal(out[2], np.where(lane < 40, 7, 0xdead))
  np.testing.assert_array_equal(out[3], lane)
  np.testing.assert_array_equal(out[4], np.full(LANES, 40))
  np.testing.assert_array_equal(out[5], np.full(LANES, 40))

@both_paths
def test_vcc_high_half_branches_and_carries():
  # VCC with only bit 40 set is not zero: s_cbranch_vccz falls through; a 64-lane carry chain reads VCC's high half
  body = [I.s_mov_b32(VCC_LO, 0), I.s_mov_b32(VCC_HI, 0x100),
          I.v_mov_b32_e32(v[2], 1), I.s_cbranch_vccz(simm16=1), I.v_mov_b32_e32(v[2], 2), *store(0, v[2]),
          I.v_mov_b32_e32(v[3], 0xffffffff), I.v_add_co_u32(v[3], VCC, v[3], v[0]),             # carry out where tid > 0
          I.v_mov_b32_e32(v[4], 0), I.v_add_co_ci_u32_e32(v[4], 0, v[4]), *store(1, v[4]), I.s_endpgm()]
  out = run64(body, 2)
  np.testing.assert_array_equal(out[0], np.full(LANES, 2))
  np.testing.assert_array_equal(out[1], (lane > 0).astype(np.uint32))

@both_paths
def test_partial_second_wave():
  out = run64([*store(0, v[0]), I.s_endpgm()], 1, block=100)
  np.testing.assert_array_equal(out[:100], np.arange(100))  # wave 1 holds threads 64..99; lanes 36..63 are off

@both_paths
def test_cross_lane_over_64_lanes():
  # ds_bpermute reads lane (addr / 4) % 64: lane l reads lane 63 - l; DPP row_shr:1 works on each of four rows of 16
  dpp = I.VOP1_DPP16(VOP1Op.V_MOV_B32_E32, v[6], src0=DPP, vsrc0=v[0], dpp=0x111, row_mask=15, bank_mask=15, bc=1)
  body = [I.v_sub_nc_u32_e32(v[2], 63, v[0]), I.v_lshlrev_b32_e32(v[2], 2, v[2]), I.ds_bpermute_b32(v[3], v[2], v[0]),
          I.s_waitcnt(simm16=0), *store(0, v[3]), I.v_mov_b32_e32(v[6], 0), dpp, *store(1, v[6]), I.s_endpgm()]
  out = run64(body, 2, lds=512)
  np.testing.assert_array_equal(out[0], 63 - lane)
  np.testing.assert_array_equal(out[1], np.where(lane % 16 == 0, 0, lane - 1))

def test_stepper_runs_wave64(monkeypatch):
  """The reference stepper gives the executor's results on the wave64 kernels above."""
  bodies = [([*store(0, v[0]), I.v_mbcnt_lo_u32_b32(v[4], -1, 0), I.v_mbcnt_hi_u32_b32(v[4], -1, v[4]), *store(1, v[4]),
              I.v_cmp_gt_u32_e32(40, v[0]), I.s_and_saveexec_b64(s[8:9], VCC), I.v_mov_b32_e32(v[3], 7), *store(2, v[3]),
              I.s_endpgm()], 3, LANES, 0),
            ([*store(0, v[0]), I.s_endpgm()], 1, 100, 0)]
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  for body, nout, block, lds in bodies:
    np.testing.assert_array_equal(run64(body, nout, block, lds, stepper=True), run64(body, nout, block, lds))
