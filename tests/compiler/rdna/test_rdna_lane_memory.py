"""RDNA3 DS and GLOBAL forms addressed by lane: ds_swizzle_b32 (a cross-lane move through the LDS unit, no LDS access)
against the ISA manual's DS_SWIZZLE_B32 pseudocode transcribed below (tinygrad's copy stops after its FFT case), and
ds_load/store_addtid_b32 and global_load/store_addtid_b32 (MEM[base + INST_OFFSET + laneID * 4]), on the numpy path,
the C path where it runs them and the reference stepper, with EXEC patterns."""
from __future__ import annotations
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hs
from tinygrad.renderer.amd.dsl import s, v, EXEC_LO, M0
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_harness import aligned
from support.rdna_lane_memory import EXEC_PATTERN, PROLOGUE, run_on

def manual_swizzle(offset:int, data:list[int], valid:list[bool]) -> list[int]:
  """DS_SWIZZLE_B32 as the RDNA3 ISA manual writes it, for one wave (64 lanes in the manual's loops; a wave32 wave is
  its first group of 32): thread_out[i] = thread_valid[j] ? thread_in[j] : 0."""
  n, out = len(data), [0] * len(data)
  def take(i, j): out[i] = data[j] if j < n and valid[j] else 0
  if offset >= 0xe000:
    mask = offset & 0x1f
    for i in range(n):
      j = int(format(i & 0x1f, "05b")[::-1], 2)
      j = j >> bin(mask).count("1")
      j |= i & mask
      j |= i & 0x20
      take(i, j)
  elif offset >= 0xc000:
    rotate, mask = (offset >> 5) & 0x1f, offset & 0x1f
    if offset >> 10 & 1: rotate = -rotate
    for i in range(n):
      j = (i & mask) | ((i + rotate) & ~mask & 0x1f)  # mockgpu's reading: the rotation stays within the 32 lanes
      j |= i & 0x20
      take(i, j)
  elif offset & 0x8000:
    for i in range(0, n, 4):
      for k in range(4): take(i + k, i + (offset >> (2 * k) & 3))
  else:
    xor_mask, or_mask, and_mask = (offset >> 10) & 0x1f, (offset >> 5) & 0x1f, offset & 0x1f
    for i in range(n): take(i, ((((i & 0x1f) & and_mask) | or_mask) ^ xor_mask) | (i & 0x20))
  return out

# *** ds_swizzle_b32 ***

KNOWN = [0x401f, 0x7c1f, 0x801b, 0x8000, 0x00e0 | 0x1c, 0x0003, 0xe000, 0xe01f, 0xe005, 0xc021, 0xc421, 0xc3e7, 0xffff]

def swizzle_case(offsets:list[int], path:str, monkeypatch):
  n = len(offsets)
  inp = aligned(64 * 4, 256).view(np.uint32)
  inp[:] = np.arange(64, dtype=np.uint32) * 0x01010101 + 0x100
  out = aligned(64 * 4 * n, 256).view(np.uint32)
  code = PROLOGUE + [I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[6:7], offset=0), I.s_waitcnt(simm16=0)]
  for off in offsets:
    code += [I.v_mov_b32_e32(v[3], 0xdead), I.s_mov_b32(EXEC_LO, EXEC_PATTERN),
             I.ds_swizzle_b32(vdst=v[3], data0=v[2], offset0=off & 0xff, offset1=off >> 8), I.s_waitcnt(simm16=0),
             I.s_mov_b32(EXEC_LO, 0xffffffff), I.global_store_b32(addr=v[1], data=v[3], saddr=s[4:5], offset=0),
             I.s_add_u32(s[4], s[4], 256), I.s_addc_u32(s[5], s[5], 0)]
  run_on(path, code, [out, inp], monkeypatch, native_expected=True)
  valid = [bool(EXEC_PATTERN >> (i % 32) & 1) for i in range(32)]
  got = out.reshape(n, 2, 32)
  for k, off in enumerate(offsets):
    for w in range(2):
      data = [int(x) for x in inp[32 * w:32 * (w + 1)]]
      want = manual_swizzle(off, data, valid)
      want = [x if ok else 0xdead for x, ok in zip(want, valid)]  # inactive lanes keep their VGPR
      assert [int(x) for x in got[k, w]] == want, f"offset 0x{off:04x} wave {w}"

@pytest.mark.parametrize("path", ["numpy", "native", "stepper"])
def test_swizzle_known_patterns(path, monkeypatch):
  """swap 16 (0x401f), reverse 32 (0x7c1f), quad reverse (0x801b), broadcast, FFT and rotate encodings as the manual
  gives them; the native variant asserts the C path ran it."""
  swizzle_case(KNOWN, path, monkeypatch)

def test_swizzle_known_values():
  """A few results worked out by hand from the manual's definitions (independent of both transcriptions)."""
  data, valid = list(range(32)), [True] * 32
  assert manual_swizzle(0x401f, data, valid)[:3] == [16, 17, 18]          # xor 16: the halves swap
  assert manual_swizzle(0x7c1f, data, valid)[:2] == [31, 30]              # xor 31: reversed
  assert manual_swizzle(0x801b, data, valid)[:8] == [3, 2, 1, 0, 7, 6, 5, 4]
  assert manual_swizzle(0x0060, data, valid)[:4] == [3, 3, 3, 3]          # and 0, or 3: broadcast lane 3
  assert manual_swizzle(0xc020, data, valid)[:3] == [1, 2, 3] and manual_swizzle(0xc020, data, valid)[31] == 0
  assert manual_swizzle(0xc420, data, valid)[:2] == [31, 0]               # rotate right by one

@settings(max_examples=6, deadline=None)
@given(offsets=hs.lists(hs.integers(0, 0xffff), min_size=8, max_size=8))
def test_swizzle_random_offsets_all_paths(offsets):
  for path in ("numpy", "native", "stepper"):
    with pytest.MonkeyPatch.context() as mp: swizzle_case(offsets, path, mp)

# *** the ADDTID forms: the lane's index * 4 in place of an address VGPR ***

@pytest.mark.parametrize("path", ["numpy", "native", "stepper"])
def test_global_addtid_load_and_store(path, monkeypatch):
  """global_load_addtid_b32 reads MEM[saddr + offset + lane * 4], global_store_addtid_b32 writes there; inactive
  lanes neither load (their VGPR kept) nor store."""
  inp = aligned(256 * 4, 256).view(np.uint32)
  inp[:] = np.arange(256, dtype=np.uint32) * 7 + 1
  out = aligned(256 * 4, 256).view(np.uint32)
  out[:] = 0xdead
  code = PROLOGUE + [I.v_mov_b32_e32(v[2], 0xbeef), I.s_mov_b32(EXEC_LO, EXEC_PATTERN),
                     I.global_load_addtid_b32(vdst=v[2], saddr=s[6:7], offset=64), I.s_waitcnt(simm16=0),
                     I.global_store_addtid_b32(data=v[2], saddr=s[4:5], offset=128), I.s_mov_b32(EXEC_LO, 0xffffffff),
                     I.global_store_b32(addr=v[1], data=v[2], saddr=s[4:5], offset=512)]
  run_on(path, code, [out, inp], monkeypatch, native_expected=True, block=(32, 1, 1))
  lane = np.arange(32)
  on = (EXEC_PATTERN >> lane & 1).astype(bool)
  loaded = np.where(on, inp[16 + lane], 0xbeef)
  assert (out[128 + lane] == loaded).all()
  stored = out[32:64]
  assert (stored[on] == inp[16 + lane][on]).all() and (stored[~on] == 0xdead).all()

@pytest.mark.parametrize("path", ["numpy", "native", "stepper"])
def test_ds_addtid_store_then_load(path, monkeypatch):
  """ds_store_addtid_b32 writes LDS[{OFFSET1, OFFSET0} + M0[15:0] + lane * 4] (M0's high half ignored), and
  ds_load_addtid_b32 reads it back from another base; read through ds_load_b32 at the lane's own address."""
  out = aligned(64 * 4 * 3, 256).view(np.uint32)
  code = PROLOGUE + [I.v_mad_u32_u24(v[2], v[0], 3, 5), I.v_mov_b32_e32(v[3], 0), I.s_mov_b32(M0, 0x7_0000 | 0x40),
                     I.ds_store_b32(addr=v[1], data0=v[3], offset0=0, offset1=0), I.ds_store_b32(addr=v[1], data0=v[3], offset0=0, offset1=1),
                     I.s_waitcnt(simm16=0), I.s_barrier(),
                     I.s_mov_b32(EXEC_LO, EXEC_PATTERN), I.ds_store_addtid_b32(data0=v[2], offset0=0xc0, offset1=0),
                     I.s_waitcnt(simm16=0), I.s_mov_b32(EXEC_LO, 0xffffffff), I.s_barrier(),
                     I.ds_load_b32(vdst=v[4], addr=v[1], offset0=0, offset1=1), I.v_mov_b32_e32(v[5], 0xbeef),
                     I.s_mov_b32(M0, 0x100), I.s_mov_b32(EXEC_LO, EXEC_PATTERN), I.ds_load_addtid_b32(vdst=v[5], offset0=0, offset1=0),
                     I.s_waitcnt(simm16=0), I.s_mov_b32(EXEC_LO, 0xffffffff),
                     I.global_store_b32(addr=v[1], data=v[4], saddr=s[4:5], offset=0),
                     I.global_store_b32(addr=v[1], data=v[5], saddr=s[4:5], offset=256)]
  run_on(path, code, [out], monkeypatch, native_expected=True, block=(32, 1, 1), lds=1024)
  lane = np.arange(32)
  on = (EXEC_PATTERN >> lane & 1).astype(bool)
  lds = np.zeros(256, np.uint32)
  lds[(0x40 + 0xc0) // 4 + lane[on]] = (lane * 3 + 5)[on]  # byte 0x100 + lane * 4: dword 64 + lane
  assert (out[:32] == lds[64:96]).all()
  assert (out[64:96] == np.where(on, lds[64:96], 0xbeef)).all()
