"""Per-lane memory kernels: an EXEC pattern, a prologue, and a dispatch on either path.
(Moved from tests/compiler/rdna/test_rdna_lane_memory.py so that no test file imports another.)"""
from __future__ import annotations
import importlib, struct
import numpy as np
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu import system
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch, executor
from support.rdna_harness import aligned
from support.rdna_isa import RSRC1, RSRC2
EXEC_PATTERN = 0xf7fe_bfed  # lanes off in each wave: a source lane inactive reads 0

def dispatch(code:list, bufs:list[np.ndarray], block=(64, 1, 1), lds:int=0, arch:str="rdna3") -> tuple[AddressSpace, Dispatch]:
  """bufs' addresses are the kernel arguments (s[0:1] points at them); code in the ISA family `arch`'s encodings."""
  endpgm = importlib.import_module(f"tinygrad.runtime.autogen.amd.{arch}.ins").s_endpgm
  raw = b"".join(i.to_bytes() for i in code + [endpgm()])
  img, args = aligned(4096), aligned(256, 256)
  img[:len(raw)] = np.frombuffer(raw, np.uint8)
  for k, b in enumerate(bufs): struct.pack_into("<Q", args, 8 * k, b.ctypes.data)
  mem = AddressSpace("lane-memory")
  for a in (img, args, *bufs): mem.map(a.ctypes.data, a.nbytes)
  dispatch.keep = (img, args)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  return mem, Dispatch(arch, img.ctypes.data, RSRC1, RSRC2 | -(-lds // 512) << 15, 0, user, 0, 0, block, (1, 1, 1), True)

def run_on(path:str, code:list, bufs:list[np.ndarray], monkeypatch, native_expected:bool, block=(64, 1, 1), lds:int=0,
           arch:str="rdna3"):
  mem, d = dispatch(code, bufs, block, lds, arch)
  if path == "stepper":
    for w in range(-(-block[0] // 32)): executor.stepper(mem, d, 0, w).run()
    return
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  before = system.stats[f"{arch}.native_launches"]
  run_dispatch(mem, d)
  ran = system.stats[f"{arch}.native_launches"] > before
  assert ran == (path == "native" and native_expected), f"{path}: the C path {'ran' if ran else 'did not run'}"

PROLOGUE = [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0), I.v_lshlrev_b32_e32(v[1], 2, v[0])]
