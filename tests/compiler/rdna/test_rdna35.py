"""RDNA3.5 (gfx1151, "Strix Halo"): the scalar float ops gfx115x adds to RDNA3 (semantics/rdna35.py), on the numpy and C
paths, against references written here from the RDNA3.5 pseudocode (tinygrad.runtime.autogen.amd.rdna3.str_pcode:
s_fmamk_f32 D = fma(S0, K, S1), s_fmaak_f32 D = fma(S0, S1, K), s_fmac_f32 D = fma(S0, S1, D), each rounded once;
s_min/s_max_f32 as v_min/v_max in IEEE mode: a signalling NaN operand quieted, a quiet one gives the other operand,
-0 < +0; s_cvt_hi_f32_f16 reads S0[31:16]), and the board itself: tinygrad on DEV=MOCKKFD+AMD:LLVM:gfx1151."""
from __future__ import annotations
from fractions import Fraction
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.compiler.rdna.semantics import rdna35
from support.rdna_harness import aligned
from support.rdna_isa import run as run_isa, kernel, RSRC1
from support.rdna4 import round_exact, f32, f16, bits_of
from conftest import run_tinygrad

F32, F16 = np.float32, np.float16
fr = lambda x: Fraction(float(x))
QNAN, SNAN = 0x7fc00001, 0x7f800005

# (instruction, S0 bits, S1 bits, the initial D for the accumulator, the reference result bits)
def cases() -> list:
  a, b, c, k = 0x3f800001, 0x3f7ffffe, 0xbf7fffff, 0x3fc00001   # products whose fma and mul-then-add differ
  out = [(I.s_fmamk_f32(s[20], s[12], s[14], literal=k), a, c, 0, round_exact(fr(f32(a)) * fr(f32(k)) + fr(f32(c)), F32)),
         (I.s_fmaak_f32(s[20], s[12], s[14], literal=k), a, b, 0, round_exact(fr(f32(a)) * fr(f32(b)) + fr(f32(k)), F32)),
         (I.s_fmac_f32(s[20], s[12], s[14]), a, b, c, round_exact(fr(f32(a)) * fr(f32(b)) + fr(f32(c)), F32)),
         (I.s_add_f32(s[20], s[12], s[14]), a, c, 0, round_exact(fr(f32(a)) + fr(f32(c)), F32)),
         (I.s_mul_f32(s[20], s[12], s[14]), a, b, 0, round_exact(fr(f32(a)) * fr(f32(b)), F32)),
         (I.s_min_f32(s[20], s[12], s[14]), 0x80000000, 0, 0, 0x80000000), (I.s_max_f32(s[20], s[12], s[14]), 0x80000000, 0, 0, 0),
         (I.s_min_f32(s[20], s[12], s[14]), QNAN, 0x40000000, 0, 0x40000000), (I.s_max_f32(s[20], s[12], s[14]), 0x40000000, SNAN, 0, 0x7fc00005),
         (I.s_cvt_f32_i32(s[20], s[12]), 16777217, 0, 0, bits_of(F32(16777216))),
         (I.s_cvt_i32_f32(s[20], s[12]), 0xcf800000, 0, 0, 0x80000000),   # -2^32 saturates to INT_MIN
         (I.s_cvt_hi_f32_f16(s[20], s[12]), 0x3c00abcd, 0, 0, bits_of(F32(1.0))),
         (I.s_cvt_f16_f32(s[20], s[12]), 0x3f800001, 0, 0, 0x3c00),
         (I.s_rndne_f32(s[20], s[12]), bits_of(F32(2.5)), 0, 0, bits_of(F32(2.0))),
         (I.s_floor_f32(s[20], s[12]), bits_of(F32(-0.5)), 0, 0, bits_of(F32(-1.0))),
         (I.s_add_f16(s[20], s[12], s[14]), 0x3c00, 0x1400, 0, bits_of(F16(f16(0x3c00)) + f16(0x1400)))]
  return out

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_scalar_float_ops(path, monkeypatch):
  """Every case in one wave32 kernel: S0, S1 and D set by s_mov (literals), the op, its s[20] stored by lane 0 to
  out[case] (a 16-bit result's bits 31:16 masked: the pseudocode writes D0.f16 only)."""
  cs = cases()
  out = aligned(4 * len(cs), 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[1], 0)]
  for k, (op, a, b, d, _) in enumerate(cs):
    body += [I.s_mov_b32(s[12], a), I.s_mov_b32(s[14], b), I.s_mov_b32(s[20], d), op, I.v_mov_b32_e32(v[2], s[20]),
             I.global_store_b32(addr=v[1], data=v[2], saddr=s[4:5], offset=4 * k)]
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  stats, _ = run_isa(kernel(*body, I.s_endpgm()), out, block=(1, 1, 1), arch=rdna35.FAMILY, rsrc1=RSRC1 | 1 << 23)   # IEEE mode, as LLVM sets it
  assert stats.native == (path == "native")
  got = [int(x) & (0xffff if "f16_f32" in repr(op) or "add_f16" in repr(op) else 0xffffffff) for x, (op, *_r) in zip(out, cs)]
  assert got == [w for *_r, w in cs], [(repr(c[0]).split("(")[0], hex(g), hex(c[-1])) for g, c in zip(got, cs) if g != c[-1]]

def test_gfx1151_board_runs_tinygrad():
  """tinygrad compiles for gfx1151 (LLVM 19) and runs on the board: a matmul, a reduction and a division against numpy."""
  p = run_tinygrad("MOCKKFD+AMD:LLVM:gfx1151", """
  import numpy as np
  from tinygrad import Tensor, Device
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((16, 24)).astype(np.float32), rng.standard_normal((24, 8)).astype(np.float32)
  print("ARCH", Device["AMD"].arch)
  np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b, rtol=1e-5, atol=1e-5)
  assert (Tensor(a).sum(axis=1) / 3).numpy().shape == (16,)
  np.testing.assert_allclose((Tensor(a) / 7).numpy(), a / np.float32(7), rtol=3e-7, atol=0)   # tinygrad's division: rcp, multiply
  print("OK")
  """)
  assert "ARCH gfx1151" in p.stdout and "OK" in p.stdout, p.stdout
