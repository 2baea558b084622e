"""Hand-assembled CDNA (gfx942/gfx950) kernels: a wave64 prologue, loads and stores, and a run on either path.
(Moved from tests/compiler/rdna/test_cdna_exec.py so that no test file imports another.)"""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.cdna import ins as I
from support.rdna_harness import aligned
from support.rdna_isa import run as run_isa, RSRC1, RSRC2
M32 = 0xffffffff

def kernel(*body) -> list:
  """out/in pointers from the kernarg into s[4:5], s[6:7]; v1 = lane * 4 (each lane's dword of out), then the body."""
  return [I.s_load_dwordx4(sdata=s[4:7], sbase=s[0:1], offset=0, imm=1), I.s_waitcnt(simm16=0),
          I.v_lshlrev_b32_e32(v[1], 2, v[0]), *body]

def load(reg, k:int, acc:int=0):
  """v[reg] (a[reg] with acc) = input row k (64 dwords, one per lane)."""
  return [I.global_load_dword(vdst=reg, addr=v[1], saddr=s[6:7], offset=256 * k, acc=acc), I.s_waitcnt(simm16=0)]

def store(reg, k:int=0, acc:int=0):
  """Output row k (64 dwords, one per lane) = v[reg] (a[reg] with acc)."""
  return [I.global_store_dword(addr=v[1], data=reg, saddr=s[4:5], offset=256 * k, acc=acc)]

def marked(inst, marker:int):
  """inst with SRC0 set to GFX9's SDWA (249) or DPP (250) marker, which the DSL's constructors leave at s0."""
  raw = int.from_bytes(inst.to_bytes(), "little")
  return type(inst).from_bytes(((raw & ~0x1ff) | marker).to_bytes(inst.size(), "little"))

def run(insts, out:np.ndarray, inp:np.ndarray|None=None, path:str="numpy", monkeypatch=None, family:str="cdna3",
        block=(64, 1, 1), grid=(1, 1, 1), xcc=(0, 1, 1), rsrc1:int=RSRC1, lds:int=0):
  """test_rdna_isa.run's dispatch as wave64 on a CDNA family, on the path asked for (numpy: whatever other tests left
  in the environment, and however often this kernel ran before)."""
  mp = monkeypatch or pytest.MonkeyPatch()
  mp.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  try: stats, _ = run_isa(insts, out, inp, block, grid, rsrc1, RSRC2, lds=lds, arch=family, wave32=False, xcc=xcc)
  finally:
    if monkeypatch is None: mp.undo()
  assert stats.native == (path == "native"), f"{path}: the dispatch ran on the other path"
  return stats

def rows(n:int, fill:int=0xdeadbeef) -> np.ndarray:
  out = aligned(256 * n, 256).view(np.uint32).reshape(n, 64)
  out[:] = fill
  return out

def inputs(*cols) -> np.ndarray:
  inp = aligned(256 * len(cols), 256).view(np.uint32).reshape(len(cols), 64)
  for k, c in enumerate(cols): inp[k] = np.asarray(c, np.uint64) & M32
  return inp
