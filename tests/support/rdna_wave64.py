"""Wave64 RDNA3 dispatches (run64) and their store offsets.
(Moved from tests/compiler/rdna/test_rdna_wave64.py so that no test file imports another.)"""
from __future__ import annotations
import struct
import numpy as np
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch, executor
from support.rdna_harness import aligned
from support.rdna_isa import RSRC1, RSRC2, kernel
LANES = 64

def run64(body:list, nout:int, block:int=LANES, lds:int=0, stepper:bool=False) -> np.ndarray:
  """Run kernel(body) as one wave64 workgroup of `block` threads; out holds nout dwords per thread. stepper: on the
  reference stepper, wave by wave, instead of the executor."""
  code = b"".join(i.to_bytes() for i in kernel(*body))
  img = aligned(4096)
  img[:len(code)] = np.frombuffer(code, np.uint8)
  out = aligned(4 * nout * block, 256).view(np.uint32)
  out[:] = 0xdead
  inp = np.zeros(4, np.uint32)
  args = aligned(256, 256)
  struct.pack_into("<QQ", args, 0, out.ctypes.data, inp.ctypes.data)
  mem = AddressSpace("w64")
  for a in (img, args, out, inp): mem.map(a.ctypes.data, a.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  d = Dispatch("rdna3", img.ctypes.data, RSRC1, RSRC2 | (lds // 512) << 15, 0, user, 0, 0, (block, 1, 1), (1, 1, 1), False)
  if stepper:
    for w in range(-(-block // LANES)): executor.stepper(mem, d, 0, w).run()
  else: assert run_dispatch(mem, d).waves == -(-block // LANES)
  return out.reshape(nout, block) if nout > 1 else out

def offsets(k:int) -> list:
  """v1 = the byte offset of this thread's dword in output row k (rows of one dword per thread)."""
  return [I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.v_add_nc_u32_e32(v[1], 4 * LANES * k, v[1])]

def store(k:int, reg) -> list:
  return [*offsets(k), I.global_store_b32(addr=v[1], data=reg, saddr=s[4:5], offset=0)]
