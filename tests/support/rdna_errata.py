"""Errata test helpers: lane values and the IEEE mode bit.
(Moved from tests/compiler/rdna/test_rdna_errata.py so that no test file imports another.)"""
from __future__ import annotations
import os, struct
import numpy as np
from tinygrad.renderer.amd.dsl import s, v, VCC_LO
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run, RSRC1
IEEE = 1 << 23   # COMPUTE_PGM_RSRC1.ENABLE_IEEE_MODE: set in every descriptor LLVM and tinygrad build for RDNA3

def lanes(body, path:str, c_runs:bool, ieee:bool=False, out_reg:int=2, n:int=1) -> np.ndarray:
  """v2 (or n VGPRs from out_reg) of each of 32 lanes after body, [32] (or [32, n]); asserts which path ran (c_runs:
  the C backend covers the kernel). ieee: the descriptor's IEEE_MODE bit."""
  os.environ["MOCKGPU_RDNA_NATIVE"] = "0" if path == "numpy" else "1"
  out = aligned(128 * n, 256).view(np.uint32)
  out[:] = 0
  stores = [I.global_store_b32(addr=v[9], data=v[out_reg + j], saddr=s[4:5], offset=128 * j) for j in range(n)]
  code = kernel(I.v_lshlrev_b32_e32(v[9], 2, v[0]), *body, *stores, I.s_endpgm())
  stats, _ = run(code, out, lds=512, rsrc1=RSRC1 | (IEEE if ieee else 0))
  assert stats.native == (path == "native" and c_runs), f"{path}: ran on the other path"
  return out.copy() if n == 1 else out.reshape(n, 32).T.copy()
def f16(x:float) -> int: return int(np.array([x], np.float16).view(np.uint16)[0])

def f32(x:float) -> int: return struct.unpack("<I", struct.pack("<f", x))[0]

def div_scale(path:str, s0:float, s1:float, s2:float) -> tuple[int, int]:
  """(D, VCC) of v_div_scale_f32 in every lane; the C backend declines it (two results), so numpy runs it."""
  body = [I.v_mov_b32_e32(v[3], f32(s0)), I.v_mov_b32_e32(v[4], f32(s1)), I.v_mov_b32_e32(v[5], f32(s2)),
          I.v_div_scale_f32(v[2], VCC_LO, v[3], v[4], v[5]), I.v_cndmask_b32_e64(v[6], 0, 1, VCC_LO)]
  got = lanes(body, path, False, n=5)
  return int(got[0, 0]), int(got[0, 4])
