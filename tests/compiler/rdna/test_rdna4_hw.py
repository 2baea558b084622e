"""RDNA4's pseudo-scalar transcendentals (v_s_exp/log/rcp/rsq/sqrt_f32/f16: VOP3 with an SGPR result) with every
modifier the encoding allows, on the numpy and C paths, against the pseudocode (D0.f32 = 1.0 / S0.f32, ...; the f16
forms write D0[31:16] = 0) with VOP3's modifiers: neg/abs on S0 (abs first), op_sel[0] an f16 source's high half, omod
(x2, x4, /2) then clamp to [0, 1] on the result (gfx12 has no IEEE mode, so omod applies). LLVM emits them for pow and
normalize (v_s_rcp_f32 with neg, v_s_sqrt_f32 with abs, ...); they were refused, which left the device in its sticky
error state."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s
from tinygrad.runtime.autogen.amd.rdna4 import ins as I
from support.rdna4 import scalar_cases, f32, bits_of

PATHS = ["numpy", "native"]
OMOD = {0: 1.0, 1: 2.0, 2: 4.0, 3: 0.5}

def modded(x:float, neg:bool, abs_:bool) -> float:
  if abs_: x = abs(x)
  return -x if neg else x

def out_mods(y:float, omod:int, clamp:bool) -> float:
  y = y * OMOD[omod]
  if not clamp: return y
  return 0.0 if y != y else min(max(y, 0.0), 1.0)   # clamp takes a NaN to 0 (the VALU's clamp01)

# (op, exact function in float64: the row's own rounding is checked by tests/compiler/rdna/test_rdna4.py, here the modifiers)
F32_OPS = {"v_s_rcp_f32": lambda x: 1.0 / x if x else np.copysign(np.inf, x), "v_s_sqrt_f32": lambda x: float(np.sqrt(x)) if x >= 0 else np.nan,
           "v_s_exp_f32": lambda x: float(2.0 ** x)}
VALUES = [0x3fc00000, 0xc0800000, 0x3e800000, 0xbf400000, 0x40490fdb]   # 1.5, -4, 0.25, -0.75, pi

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", F32_OPS)
@pytest.mark.parametrize("neg,abs_,omod,clamp", [(1, 0, 0, 0), (0, 1, 0, 0), (1, 1, 0, 0), (0, 0, 1, 0), (0, 0, 3, 0), (0, 1, 2, 1),
                                                (1, 0, 0, 1)])
def test_f32_forms_with_modifiers(path, name, neg, abs_, omod, clamp, monkeypatch):
  op = getattr(I, name)
  d = scalar_cases([op(s[20], s[12], neg=neg, abs=abs_, omod=omod, clmp=clamp)], VALUES, [0] * len(VALUES), path, monkeypatch)
  for x, got in zip(VALUES, d):
    want = np.float32(out_mods(float(np.float32(F32_OPS[name](modded(float(f32(x)), neg, abs_)))), omod, clamp))
    g = f32(got & 0xffffffff)
    # the row's value is within an ulp of the exact function (tests/compiler/rdna/test_rdna4.py checks its rounding); the modifiers
    # move it by exact powers of two and clamps, so sign, scale and clamping show here
    assert (np.isnan(want) and np.isnan(g)) or abs(float(g) - float(want)) <= 2 * float(np.spacing(np.abs(want))), (name, hex(x), g, want)

@pytest.mark.parametrize("path", PATHS)
def test_f16_form_reads_the_high_half_and_zeroes_bits_31_16(path, monkeypatch):
  """v_s_sqrt_f16 with op_sel[0]: the square root of S0[31:16] (4.0 -> 2.0; -4.0 with abs), bits 31:16 of D zero."""
  vals = [0x4400_3c00, 0xc400_3c00]
  d = scalar_cases([I.v_s_sqrt_f16(s[20], s[12], opsel=1, abs=1)], vals, [0, 0], path, monkeypatch)
  assert [x & 0xffffffff for x in d] == [bits_of(np.float16(2.0))] * 2

def test_op_sel_on_the_result_is_refused():
  """op_sel[3] would pick a half of the SGPR result, which the pseudocode writes whole: named, not guessed."""
  from mockgpu.errors import UnsupportedInstruction
  with pytest.raises(UnsupportedInstruction, match="modifiers on a scalar-result VALU op"):
    scalar_cases([I.v_s_sqrt_f16(s[20], s[12], opsel=8)], [0x3c00], [0], "numpy", pytest.MonkeyPatch())

# *** v_permlane16_var_b32 / v_permlanex16_var_b32: each lane's select from its own VGPR ***

def permlane_var_ref(x:list[int], old:list[int], sel:list[int], active:list[bool], cross:bool, fi:bool, bc:bool) -> list[int]:
  """The pseudocode (lane row*16 + i of an active lane reads tmp[row*16 + S1[3:0]], x16: of the other row of its pair)
  with the op_sel bits mockgpu's v_permlane16 model gives (operands.Permlane): FI reads an inactive source lane, else
  such a lane is written 0 with BOUND_CTRL and left alone without it."""
  out = list(old)
  for lane in range(len(x)):
    if not active[lane]: continue
    src = ((lane // 16) ^ int(cross)) * 16 + (sel[lane] & 15)
    if active[src] or fi: out[lane] = x[src]
    elif bc: out[lane] = 0
  return out

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("opsel", [0, 1, 2])
def test_permlane16_var(path, cross, opsel, monkeypatch):
  from tinygrad.renderer.amd.dsl import v, EXEC_LO
  from support.rdna4 import kernel, run
  from support.rdna_harness import aligned
  rng = np.random.default_rng(16 + 2 * cross + 4 * opsel)
  sel = [int(x) for x in rng.integers(0, 2 ** 32, 32)]   # bits above 3:0 are ignored
  mask = 0xf0ff7ffe
  inp = aligned(128, 256).view(np.uint32)
  inp[:] = sel
  out = aligned(128, 256).view(np.uint32)
  op = I.v_permlanex16_var_b32 if cross else I.v_permlane16_var_b32
  body = [I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.global_load_b32(vdst=v[3], vaddr=v[1:2], saddr=s[6:7], ioffset=0), I.s_wait_loadcnt(simm16=0),
          I.v_mul_u32_u24_e32(v[2], 0x101, v[0]), I.v_add_nc_u32_e32(v[2], 0x5000, v[2]), I.v_mov_b32_e32(v[4], 0xdead), I.s_mov_b32(EXEC_LO, mask),
          op(v[4], v[2], v[3], opsel=opsel), I.s_mov_b32(EXEC_LO, 0xffffffff),
          I.global_store_b32(vaddr=v[1:2], vsrc=v[4], saddr=s[4:5], ioffset=0), I.s_endpgm()]
  run(kernel(*body), out, inp, path, monkeypatch)
  x = [lane * 0x101 + 0x5000 for lane in range(32)]
  want = permlane_var_ref(x, [0xdead] * 32, sel, [bool(mask >> l & 1) for l in range(32)], cross, bool(opsel & 1), bool(opsel & 2))
  assert [int(g) for g in out] == want
