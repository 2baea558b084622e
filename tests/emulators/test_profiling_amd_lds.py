"""SQC_LDS_BANK_CONFLICT from the lanes' LDS addresses (emulators/rdna/recorder.py bank_conflicts): kernels whose
conflict cycles are known analytically, run on the numpy path with a recorder."""
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.emulators.rdna import run_dispatch
from mockgpu.emulators.rdna.recorder import Recorder, bank_conflicts
from support.rdna_harness import aligned
from support.rdna_lane_memory import dispatch, PROLOGUE

def strided(stride:int, wide:bool=False) -> list:
  """Each lane stores its index at LDS byte lane * 4 * stride, loads it back and writes it out (global, lane order)."""
  st, ld = (I.ds_store_b64, I.ds_load_b64) if wide else (I.ds_store_b32, I.ds_load_b32)
  data = v[3:4] if wide else v[3]
  return PROLOGUE + [I.v_mul_u32_u24_e32(v[2], 4 * stride, v[0]), I.v_mov_b32_e32(v[3], v[0]), I.v_mov_b32_e32(v[4], v[0]),
                     st(addr=v[2], data0=data, offset0=0, offset1=0), I.s_waitcnt(simm16=0),
                     ld(vdst=v[5:6] if wide else v[5], addr=v[2], offset0=0, offset1=0), I.s_waitcnt(simm16=0),
                     I.global_store_b32(addr=v[1], data=v[5], saddr=s[4:5], offset=0)]

# stride (dwords) -> conflict cycles per wave32 access: distinct dwords of the busiest of the 32 banks, less one
# (stride 1: one lane per bank; 2: lanes i and i + 16 share bank 2i; 32: every lane on bank 0; 0: one dword, a broadcast)
@pytest.mark.parametrize("stride,per_access", [(1, 0), (2, 1), (4, 3), (32, 31), (33, 0), (0, 0)])
def test_strided_access_conflicts(stride, per_access, monkeypatch):
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  out = aligned(64 * 4, 256).view(np.uint32)
  mem, d = dispatch(strided(stride), [out], block=(64, 1, 1), lds=64 * 33 * 4)
  rec = Recorder()
  run_dispatch(mem, d, rec)
  if stride: assert (out[:64] == np.arange(64)).all()
  else: assert len(set(out[:32].tolist())) == len(set(out[32:64].tolist())) == 1  # one dword: a wave's lanes read one value
  (c,) = rec.chunks
  assert c.conflicts.tolist() == [2 * per_access] * 2  # two waves, each a store and a load

# b64: passes of 16 lanes (32 dwords). stride 2 dwords: consecutive elements, conflict-free; stride 4: lane i's dwords
# 4i and 4i+1, lanes i and i+8 of a pass share their banks (1 cycle), 2 passes
@pytest.mark.parametrize("stride,per_access", [(2, 0), (4, 2), (32, 30)])
def test_b64_access_conflicts(stride, per_access, monkeypatch):
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  out = aligned(64 * 4, 256).view(np.uint32)
  mem, d = dispatch(strided(stride, wide=True), [out], block=(64, 1, 1), lds=64 * 33 * 4)
  rec = Recorder()
  run_dispatch(mem, d, rec)
  assert (out[:64] == np.arange(64)).all()
  (c,) = rec.chunks
  assert c.conflicts.tolist() == [2 * per_access] * 2

def test_b128_consecutive_and_b96():
  m = np.ones((1, 32), bool)
  assert bank_conflicts(np.arange(32, dtype=np.uint32)[None] * 16, m, 4).tolist() == [0]  # 4 passes of 8 lanes x 4 dwords
  assert bank_conflicts(np.arange(32, dtype=np.uint32)[None] * 32, m, 4).tolist() == [4]  # 8 lanes on 16 banks: 2 each
  assert bank_conflicts(np.arange(32, dtype=np.uint32)[None] * 12, m, 3).tolist() == [0]  # b96: 8 lanes x 3 dwords, 24 banks

def test_inactive_lanes_and_wave64_passes():
  addr = np.arange(64, dtype=np.uint32)[None] * 128  # stride 32 dwords: every lane on bank 0
  m = np.ones((1, 64), bool)
  assert bank_conflicts(addr, m, 1).tolist() == [62]  # wave64: two passes of 32 lanes, 31 each
  m[0, 1::2] = False
  assert bank_conflicts(addr, m, 1).tolist() == [30]  # 16 active lanes per pass
  m[:] = False
  assert bank_conflicts(addr, m, 1).tolist() == [0]
