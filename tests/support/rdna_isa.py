"""Hand-assembled RDNA3 kernels: the kernarg prologue, stores, and one dispatch on the executor.
(Moved from tests/compiler/rdna/test_rdna_isa.py so that no test file imports another.)"""
from __future__ import annotations
import struct
import numpy as np
from tinygrad.renderer.amd.dsl import s, v, DPP
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from tinygrad.runtime.autogen.amd.rdna3.enum import VOP1Op
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch
from support.rdna_harness import aligned
RSRC1 = 0x3 << 16 | 0x3 << 18          # f32 and f16/f64 denormals allowed, round to nearest even
RSRC2 = 2 << 1 | 1 << 7                  # two user SGPRs (kernarg pointer), TGID_X in s2

def kernel(*insts) -> list:
  """A prologue that loads out/in pointers from the kernarg into s[4:5], s[6:7], then the body."""
  return [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0), *insts]

def run(insts, out:np.ndarray, inp:np.ndarray|None=None, block=(32, 1, 1), grid=(1, 1, 1), rsrc1=RSRC1, rsrc2=RSRC2,
        lds:int=0, tmpring:int=0, mem:AddressSpace|None=None, arch:str="rdna3", wave32:bool=True, xcc=(0, 1, 1)):
  code = b"".join(i.to_bytes() for i in insts)
  img = aligned(4096)
  img[:len(code)] = np.frombuffer(code, np.uint8)
  inp = np.zeros(4, np.uint32) if inp is None else inp
  args = aligned(256, 256)
  struct.pack_into("<QQ", args, 0, out.ctypes.data, inp.ctypes.data)
  mem = mem or AddressSpace("isa")
  for a in (img, args, out, inp): mem.map(a.ctypes.data, a.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  d = Dispatch(arch, img.ctypes.data, rsrc1, rsrc2 | (lds // 512) << 15, 0, user, tmpring, 0, block, grid, wave32, xcc)
  return run_dispatch(mem, d), img.ctypes.data

def salu_rows(rows:np.ndarray, sdata, body:list, result, scc, path:str) -> np.ndarray:
  """A scalar op per row: workgroup g loads row g of rows (n x 4 dwords) into the SGPRs sdata, runs body, then stores
  (result lo, result hi, SCC as 0/1, 0x5a) as row g of the (n x 4) array returned; asserts the path it ran on."""
  n = len(rows)
  inp = aligned(16 * n, 256).view(np.uint32).reshape(n, 4)
  inp[:] = rows
  out = aligned(16 * n, 256).view(np.uint32).reshape(n, 4)
  out[:] = 0xdeadbeef
  code = [I.s_lshl_b32(s[16], s[2], 4),                                          # this workgroup's 16 bytes
          I.s_add_u32(s[6], s[6], s[16]), I.s_addc_u32(s[7], s[7], 0), I.s_add_u32(s[4], s[4], s[16]), I.s_addc_u32(s[5], s[5], 0),
          I.s_load_b128(sdata=sdata, sbase=s[6:7], offset=0), I.s_waitcnt(simm16=0), *body,
          I.s_cselect_b32(scc, 1, 0),
          I.v_mov_b32_e32(v[2], result[0]), I.v_mov_b32_e32(v[3], result[1]), I.v_mov_b32_e32(v[4], scc), I.v_mov_b32_e32(v[5], 0x5a),
          I.v_mov_b32_e32(v[1], 0), I.global_store_b128(addr=v[1], data=v[2:5], saddr=s[4:5], offset=0), I.s_endpgm()]
  stats, _ = run(kernel(*code), out, inp, grid=(n, 1, 1))
  assert stats.native == (path == "native"), f"{path}: ran on the other path"
  assert (out[:, 3] == 0x5a).all()
  return out

def tid_times4():
  return I.v_lshlrev_b32_e32(v[1], 2, v[0])

def store(reg):
  return I.global_store_b32(addr=v[1], data=reg, saddr=s[4:5], offset=0)

def _dpp_mov(**kw) -> np.ndarray:
  """v2 = 1000 + tid, then v2 = DPP-moved v0 (tid), stored per lane."""
  out = aligned(4 * 32, 256).view(np.uint32)
  dpp = I.VOP1_DPP16(VOP1Op.V_MOV_B32_E32, v[2], src0=DPP, vsrc0=v[0], **{"row_mask": 15, "bank_mask": 15, **kw})
  run(kernel(tid_times4(), I.v_add_nc_u32_e32(v[2], 1000, v[0]), dpp, store(v[2]), I.s_endpgm()), out)
  return out.copy()
