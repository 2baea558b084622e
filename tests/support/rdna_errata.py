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
  """(D, VCC) of v_div_scale_f32 in lane 0, on the given path (the C backend runs the two-result row: asserted)."""
  body = [I.v_mov_b32_e32(v[3], f32(s0)), I.v_mov_b32_e32(v[4], f32(s1)), I.v_mov_b32_e32(v[5], f32(s2)),
          I.v_div_scale_f32(v[2], VCC_LO, v[3], v[4], v[5]), I.v_cndmask_b32_e64(v[6], 0, 1, VCC_LO)]
  got = lanes(body, path, True, n=5)
  return int(got[0, 0]), int(got[0, 4])

UINT = {np.float32: np.uint32, np.float64: np.uint64}

def div_scale_lanes(path:str, s0:np.ndarray, s1:np.ndarray, s2:np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """(D bits, VCC) of v_div_scale_f32 or _f64 (the operands' dtype) over n lanes (a multiple of 32: one wave32 workgroup
  each), on the given path (asserted)."""
  t, n = s0.dtype.type, len(s0)
  wide = t is np.float64
  row = 8 if wide else 4                                   # input dwords a lane: S0, S1, S2 (and padding)
  inp = aligned(4 * row * n, 256).view(np.uint32).reshape(n, row)
  inp[:] = 0
  for k, x in enumerate((s0, s1, s2)):
    if wide: inp[:, 2 * k:2 * k + 2] = x.astype(np.float64).view(np.uint32).reshape(n, 2)
    else: inp[:, k] = x.astype(np.float32).view(np.uint32)
  out = aligned(16 * n, 256).view(np.uint32).reshape(n, 4)
  out[:] = 0xdeadbeef
  load = ([I.global_load_b128(vdst=v[2:5], addr=v[11], saddr=s[6:7], offset=0),
           I.global_load_b64(vdst=v[6:7], addr=v[11], saddr=s[6:7], offset=16)] if wide else
          [I.global_load_b128(vdst=v[2:5], addr=v[11], saddr=s[6:7], offset=0)])
  op = (I.v_div_scale_f64(v[20:21], VCC_LO, v[2:3], v[4:5], v[6:7]) if wide else
        I.v_div_scale_f32(v[20], VCC_LO, v[2], v[3], v[4]))
  code = [I.s_lshl_b32(s[16], s[2], 5), I.v_add_nc_u32_e32(v[10], s[16], v[0]),              # the lane's index
          I.v_lshlrev_b32_e32(v[11], 5 if wide else 4, v[10]), I.v_lshlrev_b32_e32(v[12], 4, v[10]), *load,
          I.s_waitcnt(simm16=0), I.v_mov_b32_e32(v[21], 0), op, I.v_cndmask_b32_e64(v[22], 0, 1, VCC_LO),
          I.v_mov_b32_e32(v[23], 0x5a), I.global_store_b128(addr=v[12], data=v[20:23], saddr=s[4:5], offset=0), I.s_endpgm()]
  os.environ["MOCKGPU_RDNA_NATIVE"] = "0" if path == "numpy" else "1"
  stats, _ = run(kernel(*code), out, inp, grid=(n // 32, 1, 1))
  assert stats.native == (path == "native"), f"{path}: ran on the other path"
  assert (out[:, 3] == 0x5a).all()
  d = out[:, :2].copy().view(np.uint64)[:, 0] if wide else out[:, 0].copy()
  return d, out[:, 2].copy()

def edge_floats(rng:np.random.Generator, t, n:int) -> np.ndarray:
  """n values of float type t, edge-heavy: biased exponents near 0, near the tiny/huge thresholds and at the top
  (infinities and NaNs, signalling too), mantissas 0, 1, all ones or random, either sign; a tenth zeros."""
  mant_bits, exp_max = (23, 255) if t is np.float32 else (52, 2047)
  ut = UINT[t]
  exps = np.concatenate([np.arange(0, 60), np.arange(exp_max // 2 - 40, exp_max // 2 + 40), np.arange(exp_max - 60, exp_max + 1)])
  e = rng.choice(exps, n).astype(np.uint64)
  full = (1 << mant_bits) - 1
  pick = rng.integers(0, 4, n)
  rand = rng.integers(0, 1 << mant_bits, n, dtype=np.uint64)
  m = np.where(pick == 0, 0, np.where(pick == 1, 1, np.where(pick == 2, full, rand))).astype(np.uint64)
  zero = rng.random(n) < 0.1                                  # and a tenth signed zeros
  e, m = np.where(zero, 0, e).astype(np.uint64), np.where(zero, 0, m).astype(np.uint64)
  sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(mant_bits + (8 if t is np.float32 else 11))
  return (sign | e << np.uint64(mant_bits) | m).astype(ut).view(t)
