"""RDNA3 MUBUF buffer loads, stores and atomics through the V# (mockgpu/compiler/rdna/buffer.py), against the RDNA3
manual's buffer addressing restated per lane below: address base + soffset + offset + stride * index, range checking
by OOB_SELECT without the soffset (0: index and offset against stride, 1: index, 2: NUM_RECORDS == 0, 3: raw bytes),
per dword for multi-dword accesses, out of range loading 0 and storing nothing; atomics all or nothing. On numpy and
the reference stepper (the C path hands these kernels to numpy: checked), with EXEC patterns."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, EXEC_LO, NULL as NULL_S
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.errors import GPUPageFault, UnsupportedInstruction
from support.rdna_harness import aligned
from support.rdna_lane_memory import run_on, PROLOGUE, EXEC_PATTERN
from support.rdna_buffer import CASES, check_loads_and_stores, vsharp

PATHS = ("numpy", "native", "stepper")

def set_vsharp(words:list[int]) -> list:
  return [I.s_mov_b32(s[8 + k], w) for k, w in enumerate(words)]

def buffer_kernel(vs:list[int], c, vindex, voffset, load:bool) -> list:
  oob, stride, nr, idxen, offen, add_tid, soff, ioff, ndw = c
  name = {1: "b32", 2: "b64", 3: "b96", 4: "b128"}[ndw]
  code = PROLOGUE + set_vsharp(vs) + [I.s_mov_b32(s[12], soff), I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[6:7], offset=0),
                                      I.global_load_b32(vdst=v[3], addr=v[1], saddr=s[6:7], offset=128), I.s_waitcnt(simm16=0)]
  vaddr = v[2] if idxen else v[3]
  code += [I.v_mov_b32_e32(v[10 + j], 0xdead) if load else I.v_add_nc_u32_e32(v[10 + j], 0x1000 * (j + 1), v[0]) for j in range(ndw)]
  code.append(I.s_mov_b32(EXEC_LO, EXEC_PATTERN))
  fn = getattr(I, f"buffer_{'load' if load else 'store'}_{name}")
  code.append(fn(vdata=v[10:10 + ndw - 1] if ndw > 1 else v[10], vaddr=v[2:3] if idxen and offen else vaddr, srsrc=s[8:11],
                 soffset=s[12], offset=ioff, offen=int(offen), idxen=int(idxen)))
  code += [I.s_waitcnt(simm16=0), I.s_mov_b32(EXEC_LO, 0xffffffff)]
  if load: code += [I.global_store_b32(addr=v[1], data=v[10 + j], saddr=s[4:5], offset=128 * j) for j in range(ndw)]
  return code

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("c", CASES, ids=[f"oob{c[0]}-stride{c[1]}-nr{c[2]}-{'idx' if c[3] else ''}{'off' if c[4] else ''}{'-tid' if c[5] else ''}"
                                          f"-x{c[8]}" for c in CASES])
def test_buffer_loads_and_stores_as_the_manual(path, c, monkeypatch):
  check_loads_and_stores(path, c, monkeypatch, lambda vs, c, load: buffer_kernel(vs, c, None, None, load))

@pytest.mark.parametrize("path", PATHS)
def test_buffer_atomic_add_serial_and_out_of_range(path, monkeypatch):
  """buffer_atomic_add_u32 with GLC from every lane on three words of a raw buffer: in-range lanes add in lane order
  (each returns the sum before it), out-of-range lanes change nothing and return 0."""
  mem = aligned(256, 256).view(np.uint32)
  mem[:] = 5
  out = aligned(128, 256).view(np.uint32)
  inp = aligned(256, 256).view(np.uint32)
  voff = (np.arange(32) % 4 * 4).astype(np.uint32)  # word 3 (byte 12) is past NUM_RECORDS = 12
  inp[32:64] = voff
  code = PROLOGUE + set_vsharp(vsharp(mem.ctypes.data, 0, 12, 3)) + [
    I.global_load_b32(vdst=v[3], addr=v[1], saddr=s[6:7], offset=128), I.s_waitcnt(simm16=0), I.v_add_nc_u32_e32(v[4], 1, v[0]),
    I.v_mov_b32_e32(v[5], 0xdead), I.s_mov_b32(EXEC_LO, EXEC_PATTERN), I.v_mov_b32_e32(v[5], v[4]),
    I.buffer_atomic_add_u32(vdata=v[5], vaddr=v[3], srsrc=s[8:11], soffset=NULL_S, offset=0, offen=1, glc=1),
    I.s_waitcnt(simm16=0), I.s_mov_b32(EXEC_LO, 0xffffffff), I.global_store_b32(addr=v[1], data=v[5], saddr=s[4:5], offset=0)]
  run_on(path, code, [out, inp, mem], monkeypatch, native_expected=False, block=(32, 1, 1))
  words, ret = [5, 5, 5, 5], np.full(32, 0xdead, np.uint32)
  for l in range(32):
    if not EXEC_PATTERN >> l & 1: continue
    w = l % 4
    if w == 3: ret[l] = 0; continue
    ret[l] = words[w]
    words[w] += l + 1
  assert list(mem[:4]) == words
  assert (out[:32] == ret).all(), (out[:32], ret)

@pytest.mark.parametrize("path", PATHS)
def test_buffer_errors_name_the_instruction(path, monkeypatch):
  """A swizzled V# is not modelled (UnsupportedInstruction naming the instruction); an in-range access to unmapped
  memory is a GPU page fault naming it."""
  out = aligned(128, 256).view(np.uint32)
  def code(vs): return PROLOGUE + set_vsharp(vs) + [I.buffer_load_b32(vdata=v[5], vaddr=v[1], srsrc=s[8:11], soffset=NULL_S, offset=0, offen=1),
                                                   I.s_waitcnt(simm16=0)]
  with pytest.raises(UnsupportedInstruction, match=r"buffer_load_b32: a V# with SWIZZLE_ENABLE set .* at PC 0x"):
    run_on(path, code(vsharp(out.ctypes.data, 4, 64, 1, swizzle=1)), [out], monkeypatch, native_expected=False, block=(32, 1, 1))
  with pytest.raises(GPUPageFault, match=r"buffer_load_b32 at PC 0x"):
    run_on(path, code(vsharp(1 << 40, 0, 1 << 20, 3)), [out], monkeypatch, native_expected=False, block=(32, 1, 1))

UNMODELLED_CASES = [
  (lambda: I.image_load(vdata=v[4:7], vaddr=v[0:3], srsrc=s[8:15], dmask=0xf), "image_load", "image instructions"),
  (lambda: I.tbuffer_load_format_x(vdata=v[4], vaddr=v[1], srsrc=s[8:11], soffset=NULL_S, offset=0, offen=1), "tbuffer_load_format_x",
   "typed buffer access"),
  (lambda: I.buffer_load_format_x(vdata=v[4], vaddr=v[1], srsrc=s[8:11], soffset=NULL_S, offset=0, offen=1), "buffer_load_format_x",
   "format conversions"),
  (lambda: I.ds_append(vdst=v[4]), "ds_append", "GDS"),
  (lambda: I.global_load_lds_b32(addr=v[1], saddr=s[4:5], offset=0), "global_load_lds_b32", "LDS DMA")]

@pytest.mark.parametrize("path", ["numpy", "stepper"])
@pytest.mark.parametrize("make,name,why", UNMODELLED_CASES, ids=[c[1] for c in UNMODELLED_CASES])
def test_unmodelled_memory_instructions_say_why(path, make, name, why, monkeypatch):
  """Instructions the table lists as not modelled (semantics/rdna3.py UNMODELLED) decode, and running one raises
  UnsupportedInstruction naming it, its PC and the reason."""
  out = aligned(128, 256).view(np.uint32)
  with pytest.raises(UnsupportedInstruction, match=rf"{name}.*not modelled: .*{why}"):
    run_on(path, PROLOGUE + [make(), I.s_waitcnt(simm16=0)], [out], monkeypatch, native_expected=False, block=(32, 1, 1))

@pytest.mark.parametrize("path", ["numpy", "stepper"])
def test_buffer_sub_dword_forms(path, monkeypatch):
  """buffer_load_i8 (sign-extended), buffer_load_u16, buffer_load_d16_hi_u8 (into the high half, the low kept),
  buffer_store_b8 and buffer_store_d16_hi_b16, byte offsets per lane through a raw V# of 40 bytes: lanes past it load
  0 and store nothing."""
  mem = aligned(256, 256).view(np.uint8)
  mem[:] = (np.arange(256) * 37 + 200) % 256
  start = mem.copy()
  out = aligned(3 * 128, 256).view(np.uint32)
  inp = aligned(256, 256).view(np.uint32)
  off = np.arange(32, dtype=np.uint32) * 3 % 48   # bytes 0..45: some past NUM_RECORDS = 40
  inp[32:64] = off
  rs = dict(vaddr=v[3], srsrc=s[8:11], soffset=NULL_S, offset=0, offen=1)
  code = PROLOGUE + set_vsharp(vsharp(mem.ctypes.data, 0, 40, 3)) + [
    I.global_load_b32(vdst=v[3], addr=v[1], saddr=s[6:7], offset=128), I.s_waitcnt(simm16=0),
    I.v_mov_b32_e32(v[4], 0xdead), I.v_mov_b32_e32(v[5], 0xdead), I.v_mov_b32_e32(v[6], 0x12345678),
    I.buffer_load_i8(vdata=v[4], **rs), I.buffer_load_u16(vdata=v[5], **rs), I.buffer_load_d16_hi_u8(vdata=v[6], **rs), I.s_waitcnt(simm16=0),
    I.global_store_b32(addr=v[1], data=v[4], saddr=s[4:5], offset=0), I.global_store_b32(addr=v[1], data=v[5], saddr=s[4:5], offset=128),
    I.global_store_b32(addr=v[1], data=v[6], saddr=s[4:5], offset=256),
    I.v_lshlrev_b32_e32(v[7], 16, v[0]), I.v_or_b32_e32(v[7], 0x80, v[7]), I.s_waitcnt(simm16=0),
    I.buffer_store_b8(vdata=v[7], **rs), I.buffer_store_d16_hi_b16(vdata=v[7], **{**rs, "offset": 1})]
  run_on(path, code, [out, inp, mem], monkeypatch, native_expected=False, block=(32, 1, 1))
  o = off.astype(np.int64)
  def byte(a): return np.where(a + 1 <= 40, start[np.minimum(a, 255)], 0).astype(np.int64)
  half = np.where(o + 2 <= 40, start[o].astype(np.int64) | start[np.minimum(o + 1, 255)].astype(np.int64) << 8, 0)
  assert (out[:32] == (((byte(o) ^ 0x80) - 0x80) & 0xffffffff)).all()
  assert (out[32:64] == half).all()
  assert (out[64:96] == (byte(o) << 16 | 0x5678)).all()
  want = start.copy()
  for l in range(32):  # lane order: a later lane's byte wins
    if o[l] + 1 <= 40: want[o[l]] = 0x80
  for l in range(32):
    if o[l] + 1 + 2 <= 40: want[o[l] + 1:o[l] + 3] = [l & 0xff, l >> 8]  # the instruction offset counts in the check
  assert (mem == want).all(), np.nonzero(mem != want)
