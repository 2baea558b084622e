"""VALU operand generators (u32s, small) and one-op kernels (run_op).
(Moved from tests/compiler/rdna/test_rdna_valu.py so that no test file imports another.)"""
from __future__ import annotations
import numpy as np
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run, tid_times4, store
rng = np.random.default_rng(3)
U = np.uint32

def run_op(op, a:np.ndarray, b:np.ndarray, c:np.ndarray, extra=()) -> np.ndarray:
  """v4 = op(v2, v3, v5) per lane, with v2, v3, v5 loaded from a, b, c (32 lanes each, as uint32 bits)."""
  inp = aligned(4 * 96, 256).view(np.uint32)
  inp[:] = np.concatenate([x.view(np.uint32) for x in (a, b, c)])
  out = aligned(4 * 32, 256).view(np.uint32)
  ld = lambda d, off: I.global_load_b32(vdst=d, addr=v[1], saddr=s[6:7], offset=off)
  body = [tid_times4(), ld(v[2], 0), ld(v[3], 128), ld(v[5], 256), I.s_waitcnt(simm16=0), *extra, op, store(v[4]), I.s_endpgm()]
  run(kernel(*body), out, inp)
  return out.copy()

def u32s(): return rng.integers(0, 2**32, 32, dtype=np.uint64).astype(U)
def small(): return rng.integers(0, 40, 32).astype(U)
A, B, C, SH = u32s(), u32s(), u32s(), small()

def _scalar(*insts) -> int:
  """Run scalar instructions that leave their result in s12; returns it."""
  return int(run_op(I.v_mov_b32_e32(v[4], s[12]), A, B, C, list(insts))[0])
