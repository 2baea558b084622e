"""Hand-assembled RDNA4 (gfx12) kernels, their run on either path, and exact references (f16/f32 bits, rounding).
(Moved from tests/compiler/rdna/test_rdna4.py so that no test file imports another.)"""
from __future__ import annotations
from fractions import Fraction
import numpy as np
from tinygrad.renderer.amd.dsl import s, v, ttmp
from tinygrad.runtime.autogen.amd.rdna4 import ins as I
from mockgpu.compiler.rdna.semantics import rdna4
from support.rdna_harness import aligned
from support.rdna_isa import run as run_isa, RSRC1
def kernel(*body) -> list:
  """The kernarg's out/in pointers into s[4:5], s[6:7] (as test_rdna_isa.kernel, in RDNA4 encodings), then the body."""
  return [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], ioffset=0), I.s_wait_kmcnt(simm16=0), *body]

def run(insts, out, inp=None, path:str="numpy", monkeypatch=None, **kw):
  if monkeypatch is not None: monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  stats, _ = run_isa(insts, out, inp, arch=rdna4.FAMILY, **kw)
  assert stats.native == (path == "native"), f"{path}: the dispatch ran on the other path"
  return stats

def store_lane0(regs:tuple[int, int]):
  """Lane 0 stores v[regs] (two dwords) at the workgroup's 8 bytes of out (s[4:5] already advanced to them)."""
  return [I.v_mov_b32_e32(v[1], 0), I.global_store_b64(vaddr=v[1:2], vsrc=v[regs[0]:regs[1]], saddr=s[4:5], ioffset=0)]

def scalar_cases(body:list, s0:list[int], s1:list[int], path:str, monkeypatch, rsrc1:int=RSRC1) -> list[int]:
  """Runs `body` once per workgroup (one lane each), the case's S0 in s[12:13] and S1 in s[14:15], loaded from the
  input at 16 * ttmp9 (the workgroup ID, with s_add_nc_u64); returns each case's s[20:21] after it as a 64-bit int."""
  n = len(s0)
  inp = aligned(16 * n, 256).view(np.uint32).reshape(n, 4)
  inp[:, 0], inp[:, 1] = [x & 0xffffffff for x in s0], [x >> 32 for x in s0]
  inp[:, 2], inp[:, 3] = [x & 0xffffffff for x in s1], [x >> 32 for x in s1]
  out = aligned(8 * n, 256).view(np.uint32).reshape(n, 2)
  out[:] = 0xdeadbeef
  prologue = [I.s_lshl_b32(s[16], ttmp[9], 4), I.s_mov_b32(s[17], 0), I.s_add_nc_u64(s[6:7], s[6:7], s[16:17]),
              I.s_lshl_b32(s[16], ttmp[9], 3), I.s_add_nc_u64(s[4:5], s[4:5], s[16:17]),
              I.s_load_b128(sdata=s[12:15], sbase=s[6:7], ioffset=0), I.s_wait_kmcnt(simm16=0),
              I.s_mov_b32(s[20], 0x77777777), I.s_mov_b32(s[21], 0x77777777)]
  epilogue = [I.v_mov_b32_e32(v[2], s[20]), I.v_mov_b32_e32(v[3], s[21]), *store_lane0((2, 3)), I.s_endpgm()]
  run(kernel(*prologue, *body, *epilogue), out, inp, path, monkeypatch, block=(1, 1, 1), grid=(n, 1, 1), rsrc1=rsrc1)
  return [int(lo) | int(hi) << 32 for lo, hi in out]

# *** float references from the pseudocode, rounded exactly (Fraction) ***

def f32(bits:int) -> np.float32: return np.uint32(bits).view(np.float32)
def f16(bits:int) -> np.float16: return np.uint16(bits).view(np.float16)
def bits_of(x) -> int: return int(np.asarray(x).view(np.uint32 if np.asarray(x).dtype == np.float32 else np.uint16))

def round_exact(fr:Fraction, t) -> int:
  """The exact value fr rounded to nearest even in type t (float32/float16), as bits."""
  with np.errstate(all="ignore"):  # within one step of the answer: check the neighbours exactly
    x = t(float(fr))
    near = (np.nextafter(x, t(-np.inf)), x, np.nextafter(x, t(np.inf)))
  best = None
  for c in near:
    if not np.isfinite(c): continue
    err = abs(Fraction(float(c)) - fr)
    even = (bits_of(c) & 1) == 0
    if best is None or err < best[0] or (err == best[0] and even): best = (err, c)
  top = Fraction(float(np.finfo(t).max)) + Fraction(float(np.finfo(t).max - np.nextafter(np.finfo(t).max, t(0)))) / 2
  if abs(fr) >= top: return bits_of(t(np.inf) if fr > 0 else t(-np.inf))  # past max + half an ulp: overflow
  return bits_of(best[1])
