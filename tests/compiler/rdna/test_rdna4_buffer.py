"""RDNA4 VBUFFER buffer loads, stores and atomics (gfx1201), lowered to the MUBUF model (buffer.py), against the
buffer addressing of tests/compiler/rdna/test_rdna_buffer.py restated per lane (base + soffset + offset + stride * index; range
checking by OOB_SELECT per dword, out of range loading 0 and storing nothing; atomics all or nothing). VBUFFER's own
fields: RSRC holds the V#'s first SGPR by its operand number, IOFFSET is 24 bits, TH bit 0 (TH_ATOMIC_RETURN) returns
the old value. On numpy and the reference stepper; the C path hands these kernels to numpy (checked)."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, ttmp, EXEC_LO, NULL
from tinygrad.runtime.autogen.amd.rdna4 import ins as I
from mockgpu.errors import GPUPageFault, UnsupportedInstruction
from mockgpu.compiler.rdna.semantics import rdna4
from support.rdna_harness import aligned
from support.rdna_lane_memory import run_on, EXEC_PATTERN
from support.rdna_buffer import vsharp, CASES, check_loads_and_stores

PATHS = ("numpy", "native", "stepper")
ARCH = rdna4.FAMILY
TH_ATOMIC_RETURN = 1

def wait() -> list: return [I.s_wait_loadcnt(simm16=0), I.s_wait_storecnt(simm16=0)]

# kernargs (out, in, buffer memory) in s[4:9]; v1 = lane * 4
PROLOGUE = [I.s_load_b256(sdata=s[4:11], sbase=s[0:1], ioffset=0), I.s_wait_kmcnt(simm16=0), I.v_lshlrev_b32_e32(v[1], 2, v[0])]

def gload(dst, off:int): return I.global_load_b32(vdst=dst, vaddr=v[1:2], saddr=s[6:7], ioffset=off)
def gstore(data, off:int): return I.global_store_b32(vaddr=v[1:2], vsrc=data, saddr=s[4:5], ioffset=off)

def set_vsharp(words:list[int], at:int=12) -> list:
  regs = [s[at + k] if at < 108 else ttmp[at - 108 + k] for k in range(4)]
  return [I.s_mov_b32(r, w) for r, w in zip(regs, words)]

def buffer_kernel(vs:list[int], c, load:bool) -> list:
  oob, stride, nr, idxen, offen, add_tid, soff, ioff, ndw = c
  name = {1: "b32", 2: "b64", 3: "b96", 4: "b128"}[ndw]
  code = PROLOGUE + set_vsharp(vs) + [I.s_mov_b32(s[16], soff), gload(v[2], 0), gload(v[3], 128), *wait()]
  vaddr = v[2] if idxen else v[3]
  code += [I.v_mov_b32_e32(v[10 + j], 0xdead) if load else I.v_add_nc_u32_e32(v[10 + j], 0x1000 * (j + 1), v[0]) for j in range(ndw)]
  code.append(I.s_mov_b32(EXEC_LO, EXEC_PATTERN))
  fn = getattr(I, f"buffer_{'load' if load else 'store'}_{name}")
  code.append(fn(vdata=v[10:10 + ndw - 1] if ndw > 1 else v[10], vaddr=v[2:3] if idxen and offen else vaddr, rsrc=12,
                 soffset=s[16], ioffset=ioff, offen=int(offen), idxen=int(idxen)))
  code += [*wait(), I.s_mov_b32(EXEC_LO, 0xffffffff)]
  if load: code += [gstore(v[10 + j], 128 * j) for j in range(ndw)]
  return code

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("c", CASES, ids=[f"oob{c[0]}-stride{c[1]}-nr{c[2]}-{'idx' if c[3] else ''}{'off' if c[4] else ''}{'-tid' if c[5] else ''}"
                                          f"-x{c[8]}" for c in CASES])
def test_vbuffer_loads_and_stores_as_the_manual(path, c, monkeypatch):
  check_loads_and_stores(path, c, monkeypatch, buffer_kernel, ARCH)

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("th", [TH_ATOMIC_RETURN, 0])
def test_vbuffer_atomics_serial_out_of_range_and_return(path, th, monkeypatch):
  """buffer_atomic_add_u32 from every active lane on three words (a fourth is past NUM_RECORDS) through a V# in ttmp
  registers: in-range lanes add in lane order, out-of-range ones change nothing; with TH_ATOMIC_RETURN each lane gets
  the word before its add (0 out of range), without it VDATA keeps its value. Then buffer_atomic_cmpswap_b32 swaps
  where the compare value matches."""
  mem = aligned(256, 256).view(np.uint32)
  mem[:] = 5
  out = aligned(256, 256).view(np.uint32)
  inp = aligned(256, 256).view(np.uint32)
  inp[32:64] = (np.arange(32) % 4 * 4).astype(np.uint32)
  code = PROLOGUE + set_vsharp(vsharp(mem.ctypes.data, 0, 12, 3), at=112) + [
    gload(v[3], 128), *wait(), I.v_add_nc_u32_e32(v[4], 1, v[0]), I.v_mov_b32_e32(v[5], 0xdead),
    I.s_mov_b32(EXEC_LO, EXEC_PATTERN), I.v_mov_b32_e32(v[5], v[4]),
    I.buffer_atomic_add_u32(vdata=v[5], vaddr=v[3], rsrc=112, soffset=NULL, ioffset=0, offen=1, th=th), *wait(),
    I.s_mov_b32(EXEC_LO, 0xffffffff), gstore(v[5], 0)]
  run_on(path, code, [out, inp, mem], monkeypatch, native_expected=False, block=(32, 1, 1), arch=ARCH)
  words, ret = [5, 5, 5, 5], np.full(32, 0xdead, np.uint32)
  for l in range(32):
    if not EXEC_PATTERN >> l & 1: continue
    w = l % 4
    ret[l] = l + 1 if not th else 0 if w == 3 else words[w]
    if w < 3: words[w] += l + 1
  assert list(mem[:4]) == words
  assert (out[:32] == ret).all(), (out[:32], ret)

@pytest.mark.parametrize("path", PATHS)
def test_vbuffer_cmpswap_and_sub_dword(path, monkeypatch):
  """buffer_atomic_cmpswap_b32 (VDATA: the new value, then the compare value) on a word per lane, half of them
  matching; buffer_load_i8 sign-extends and buffer_store_b16 writes two bytes, by the lane's byte offset."""
  mem = aligned(512, 256).view(np.uint32)
  mem[:128] = np.arange(128, dtype=np.uint32) * 0x01010101 + 0x80
  start = mem.copy()
  out = aligned(2 * 128, 256).view(np.uint32)
  inp = aligned(256, 256).view(np.uint32)
  code = PROLOGUE + set_vsharp(vsharp(mem.ctypes.data, 0, 512, 3)) + [
    I.v_add_nc_u32_e32(v[6], 0x7700, v[0]), I.v_and_b32_e32(v[7], 1, v[0]), I.v_mul_u32_u24_e32(v[7], 0x01010101, v[7]),
    I.v_add_nc_u32_e32(v[7], 0x80, v[7]), I.v_mad_u32_u24(v[7], v[0], 0x04040404, v[7]),  # lane l expects word l when l is odd
    I.buffer_atomic_cmpswap_b32(vdata=v[6:7], vaddr=v[1], rsrc=12, soffset=NULL, ioffset=0, offen=1, th=TH_ATOMIC_RETURN),
    I.v_mul_u32_u24_e32(v[8], 3, v[0]), I.v_mov_b32_e32(v[9], 0xdead), I.v_add_nc_u32_e32(v[10], 0x7700, v[0]),
    I.buffer_load_i8(vdata=v[9], vaddr=v[8], rsrc=12, soffset=NULL, ioffset=256, offen=1),
    I.buffer_store_b16(vdata=v[10], vaddr=v[8], rsrc=12, soffset=NULL, ioffset=384, offen=1), *wait(),
    gstore(v[6], 0), gstore(v[9], 128)]
  run_on(path, code, [out, inp, mem], monkeypatch, native_expected=False, block=(32, 1, 1), arch=ARCH)
  lanes = np.arange(32)
  old = start[:32]
  cmp = (lanes & 1) * 0x01010101 + 0x80 + lanes * 0x04040404
  assert (out[:32] == old).all()  # returned: the word before
  np.testing.assert_array_equal(mem[:32], np.where(old == cmp, 0x7700 + lanes, old))
  b = start.view(np.uint8)
  assert (out[32:64] == ((b[256 + 3 * lanes].astype(np.int64) ^ 0x80) - 0x80) % 2**32).all()
  want = start.view(np.uint8).copy()
  for l in range(32): want[384 + 3 * l:386 + 3 * l] = [(0x7700 + l) & 0xff, (0x7700 + l) >> 8]
  np.testing.assert_array_equal(mem.view(np.uint8)[384:], want[384:])

@pytest.mark.parametrize("path", PATHS)
def test_vbuffer_fault_and_errors_name_the_instruction(path, monkeypatch):
  """An in-range access to unmapped memory is a GPU page fault naming the instruction; a swizzled V#, an RSRC that is
  not four aligned SGPRs, a negative IOFFSET and the typed TBUFFER forms raise UnsupportedInstruction naming it."""
  out = aligned(128, 256).view(np.uint32)
  def go(vs, inst): run_on(path, PROLOGUE + set_vsharp(vs) + [inst, *wait()], [out], monkeypatch, native_expected=False,
                          block=(32, 1, 1), arch=ARCH)
  load = lambda **kw: I.buffer_load_b32(**{"vdata": v[5], "vaddr": v[1], "rsrc": 12, "soffset": NULL, "ioffset": 0, "offen": 1, **kw})
  with pytest.raises(GPUPageFault, match=r"buffer_load_b32 at PC 0x"):
    go(vsharp(1 << 40, 0, 1 << 20, 3), load())
  with pytest.raises(UnsupportedInstruction, match=r"buffer_load_b32: a V# with SWIZZLE_ENABLE set"):
    go(vsharp(out.ctypes.data, 4, 64, 1, swizzle=1), load())
  with pytest.raises(UnsupportedInstruction, match=r"buffer_load_b32.*RSRC 13 does not name four aligned SGPRs"):
    go(vsharp(out.ctypes.data, 0, 64, 3), load(rsrc=13))
  with pytest.raises(UnsupportedInstruction, match=r"buffer_load_b32.*negative buffer offset \(IOFFSET 0xfffffc"):
    go(vsharp(out.ctypes.data, 0, 64, 3), load(ioffset=0xfffffc))
  with pytest.raises(UnsupportedInstruction, match=r"tbuffer_load_format_x.*not modelled: typed buffer access"):
    go(vsharp(out.ctypes.data, 0, 64, 3), I.tbuffer_load_format_x(vdata=v[5], vaddr=v[1], rsrc=12, soffset=NULL, ioffset=0, offen=1))
  with pytest.raises(UnsupportedInstruction, match=r"buffer_load_format_x.*format conversions"):
    go(vsharp(out.ctypes.data, 0, 64, 3), I.buffer_load_format_x(vdata=v[5], vaddr=v[1], rsrc=12, soffset=NULL, ioffset=0, offen=1))
