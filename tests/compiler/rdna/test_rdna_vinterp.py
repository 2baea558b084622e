"""VINTERP (v_interp_p10/p2_f32, _f16_f32, _rtz_f16_f32) on RDNA3 (gfx1100) and RDNA4 (gfx1201), hand-assembled, on
the numpy path, the reference stepper and the C path (all but the RTZ forms, which stay on numpy: checked), against the
manual's pseudocode computed here with Fractions: P10 D = fma(VGPR[quad lane 1][SRC0], S1, VGPR[quad lane 0][SRC2]),
P2 D = fma(VGPR[quad lane 2][SRC0], S1, S2), the quad lane of lane l being (l & ~3) + k, read whatever EXEC holds
there; the f16 forms convert their f16 sources exactly and P2 rounds to f32 and then to f16 (16'F(fma(...))); the
RTZ forms round toward zero. NEG negates a source, op_sel picks a 16-bit source's (bit i) or result's (bit 3) high
half, CLAMP clamps to [0, 1]."""
from __future__ import annotations
import importlib
from fractions import Fraction
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, EXEC_LO
from mockgpu.errors import UnsupportedInstruction
from pcode import numbers as N
from support.rdna_harness import aligned
from support.rdna_lane_memory import run_on, EXEC_PATTERN

ARCHS = ("rdna3", "rdna4")
PATHS = ("numpy", "native", "stepper")
FORMS = {  # name: (P10 or P2, f16 sources, f16 result, round toward zero)
  "v_interp_p10_f32": ("p10", False, False, False), "v_interp_p2_f32": ("p2", False, False, False),
  "v_interp_p10_f16_f32": ("p10", True, False, False), "v_interp_p2_f16_f32": ("p2", True, True, False),
  "v_interp_p10_rtz_f16_f32": ("p10", True, False, True), "v_interp_p2_rtz_f16_f32": ("p2", True, True, True)}

def prologue(I, arch:str) -> list:
  """out, in pointers in s[4:7]; v2..v4 the lane's three input words (in + 128 * k), v1 = lane * 4."""
  wait = [I.s_waitcnt(simm16=0)] if arch == "rdna3" else [I.s_wait_kmcnt(simm16=0), I.s_wait_loadcnt(simm16=0)]
  off = "offset" if arch == "rdna3" else "ioffset"
  load = lambda d, o: I.global_load_b32(**{"vdst": d, ("addr" if arch == "rdna3" else "vaddr"): v[1] if arch == "rdna3" else v[1:2],
                                           "saddr": s[6:7], off: o})
  smem = I.s_load_b128(sdata=s[4:7], sbase=s[0:1], **{off: 0})
  return [smem, *wait, I.v_lshlrev_b32_e32(v[1], 2, v[0]), load(v[2], 0), load(v[3], 128), load(v[4], 256), *wait]

def store(I, arch:str, data, o:int):
  if arch == "rdna3": return I.global_store_b32(addr=v[1], data=data, saddr=s[4:5], offset=o)
  return I.global_store_b32(vaddr=v[1:2], vsrc=data, saddr=s[4:5], ioffset=o)

def f32v(bits:int) -> Fraction|float: return N.decode(bits, "f32").v
def f16v(bits:int) -> Fraction|float: return N.decode(bits & 0xffff, "f16").v

def expected(name:str, words:np.ndarray, neg:int=0, opsel:int=0, clamp:bool=False, old=0xdead) -> list[int]:
  """Each lane's result bits (all 32 lanes write: the test runs with EXEC all ones)."""
  kind, f16_src, f16_dst, rtz = FORMS[name]
  out = []
  for l in range(32):
    q = l & ~3
    lane0 = q + (1 if kind == "p10" else 2)
    raw = [int(words[0][lane0]), int(words[1][l]), int(words[2][q] if kind == "p10" else words[2][l])]
    vals = []
    for i, x in enumerate(raw):
      if f16_src and (i == 0 or (i == 2 and kind == "p10")): x = f16v(x >> 16 if opsel >> i & 1 else x)
      else: x = f32v(x)
      vals.append(-x if neg >> i & 1 else x)
    exact = Fraction(vals[0]) * Fraction(vals[1]) + Fraction(vals[2])
    bits = N.round_ratio(exact.numerator, exact.denominator, "f32", rtz) if exact else 0
    if f16_dst:
      x = Fraction(N.decode(bits, "f32").v) if bits & 0x7fffffff else Fraction(0)
      h = N.round_ratio(x.numerator, x.denominator, "f16", rtz) if x else bits >> 16 & 0x8000
      out.append((old & 0xffff) | h << 16 if opsel & 8 else (old & 0xffff0000) | h)
      continue
    if clamp: bits = 0 if bits >> 31 else min(bits, 0x3f800000)
    out.append(bits)
  return out

def words_for(rng, name:str) -> np.ndarray:
  """Three words per lane, one per source: f32 values, or two f16 values for an f16 source, of moderate size (no
  result overflows)."""
  kind, f16_src, _, _ = FORMS[name]
  f32s = rng.uniform(-3, 3, (3, 32)).astype(np.float32).view(np.uint32)
  f16s = rng.uniform(-3, 3, (3, 32, 2)).astype(np.float16).view(np.uint32).reshape(3, 32)
  half = [f16_src, False, f16_src and kind == "p10"]
  return np.stack([f16s[i] if half[i] else f32s[i] for i in range(3)])

def run_form(arch, path, name, words, monkeypatch, **mods):
  I = importlib.import_module(f"tinygrad.runtime.autogen.amd.{arch}.ins")
  kind, f16_src, f16_dst, _ = FORMS[name]
  inp = aligned(4 * 96, 256).view(np.uint32)
  inp[:] = words.reshape(-1)
  out = aligned(4 * 32, 256).view(np.uint32)
  # P2 takes S2 (the P10 result) from the lane itself
  code = prologue(I, arch) + [I.v_mov_b32_e32(v[5], 0xdead), I.s_mov_b32(EXEC_LO, -1),
                              getattr(I, name)(v[5], v[2], v[3], v[4], **mods), store(I, arch, v[5], 0)]
  # C renders the quad reads; the RTZ forms' fma_rtz has no C form, so their kernels stay on numpy
  run_on(path, code, [out, inp], monkeypatch, native_expected=not FORMS[name][3], block=(32, 1, 1), arch=arch)
  return out

@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", FORMS)
def test_vinterp_against_the_pseudocode(arch, path, name, monkeypatch):
  rng = np.random.default_rng([len(name), ARCHS.index(arch)])
  words = words_for(rng, name)
  f16_dst = FORMS[name][2]
  for mods in ({}, {"neg": 5}, {"opsel": 0b1001 if f16_dst else 0b0101} if FORMS[name][1] else {"clmp": 1}):
    got = run_form(arch, path, name, words, monkeypatch, **mods)
    want = expected(name, words, mods.get("neg", 0), mods.get("opsel", 0), bool(mods.get("clmp", 0)))
    assert [int(x) for x in got] == want, (name, mods)

def test_vinterp_reads_inactive_quad_lanes_and_names_bad_operands(monkeypatch):
  """With EXEC clearing some lanes, the active ones still read their quad's lanes 1 and 0 (the pseudocode reads the
  register); an SGPR where a quad source must be a VGPR raises UnsupportedInstruction naming the instruction."""
  I = importlib.import_module("tinygrad.runtime.autogen.amd.rdna3.ins")
  rng = np.random.default_rng(7)
  words = rng.uniform(-3, 3, (3, 32)).astype(np.float32).view(np.uint32)
  inp = aligned(4 * 96, 256).view(np.uint32)
  inp[:] = words.reshape(-1)
  out = aligned(4 * 32, 256).view(np.uint32)
  code = prologue(I, "rdna3") + [I.v_mov_b32_e32(v[5], 0xdead), I.s_mov_b32(EXEC_LO, EXEC_PATTERN),
                                 I.v_interp_p10_f32(v[5], v[2], v[3], v[4]), I.s_mov_b32(EXEC_LO, -1), store(I, "rdna3", v[5], 0)]
  run_on("numpy", code, [out, inp], monkeypatch, native_expected=False, block=(32, 1, 1))
  want = expected("v_interp_p10_f32", words)
  for l in range(32): assert int(out[l]) == (want[l] if EXEC_PATTERN >> l & 1 else 0xdead), l
  with pytest.raises(UnsupportedInstruction, match=r"v_interp_p10_f32: s\[8\] as S0, which is read from another lane"):
    run_on("numpy", prologue(I, "rdna3") + [I.v_interp_p10_f32(v[5], s[8], v[3], v[4])], [out, inp], monkeypatch,
           native_expected=False, block=(32, 1, 1))
