"""Where mockgpu's RDNA3 (and CDNA) model departs from the ISA manual's pseudocode (tinygrad.runtime.autogen.amd.rdna3
str_pcode) because hardware is believed to: one record per departure. The table holds departures only (behaviour that
is the manual's, however easily broken, is a regression test, not an erratum). Each record says the instructions,
what the pseudocode says, what hardware does, where mockgpu implements it, the test that checks it
(tests/compiler/rdna/test_rdna_errata.py, both backends where the C backend covers the encoding), and what the record rests on:
`evidence`, one of
  "hardware: <source>"     a result read on a real card, and where that reading is recorded;
  "llvm: <what>"           inferred from the code LLVM's AMDGPU backend emits or the properties it assumes of the
                           instruction (a compiler's reading of hardware, not a measurement);
  "unverified: <why>"      mockgpu's reading, not checked against hardware or a compiler.
Few records are hardware readings: most rest on LLVM. `status` is "fixed" (both backends follow the record),
"numpy" (the C backend declines the encoding, so the numpy backend alone runs it) or "open" (not yet modelled:
mockgpu still follows the pseudocode or raises UnsupportedInstruction)."""
from __future__ import annotations
from dataclasses import dataclass
from tinygrad.renderer.amd.dsl import Reg

EVIDENCE_KINDS = ("hardware", "llvm", "unverified")
# the hardware anchor values (true16-e32, vop3p-inline) came with the table's first version (commit 37db9ac); the
# card and the person who read them are not recorded
ANCHORS = "the anchor value in the table's first record (commit 37db9ac, tests/compiler/rdna/test_rdna_errata.py); the card is not recorded"

@dataclass(frozen=True)
class Erratum:
  id: str
  instructions: str
  manual: str
  hardware: str
  where: str
  test: str|None
  status: str
  evidence: str

ERRATA = [
  Erratum("true16-e32", "VOP1/VOP2 e32 with a 16-bit operand or destination (v_add_f16_e32, v_mov_b16, ...)",
          "v[128+n] names VGPR 128+n", "v[128+n] names the high half of v[n]; v_add_f16_e32 v2, v[128], v1 with "
          "v0=0x40003c00, v1=0x4500 gives 0x4700", "errata.true16 (operands._e32, read by every backend)",
          "test_true16_e32", "fixed",
          "hardware: " + ANCHORS),
  Erratum("true16-vopc", "VOPC e32 16-bit compares (v_cmp_*_f16/i16/u16_e32, v_cmpx_*, v_cmp_class_f16)",
          "v[128+n] names VGPR 128+n", "the high half of v[n]", "errata.true16 (operands._vopc, every backend)",
          "test_true16_vopc", "fixed",
          "llvm: LLVM's true16 assembler encodes a VOPC e32 operand v[n].h as VGPR 128+n, as it does for VOP1/VOP2 (true16-e32)"),
  Erratum("vop3p-inline", "VOP3P packed ops with an inline constant (v_pk_add_u16, v_pk_add_f16, ...)",
          "the constant in both halves", "the constant fills bits 15:0 only, high half 0; integer packed ops take "
          "a float constant's f32 bit pattern (v_pk_add_u16 v1, v0=0x00030005, 2.0, op_sel_hi=3 gives 0x40030005)",
          "errata.packed_inline (operands._packed; the C backend has no VOP3P)", "test_vop3p_inline_constant", "numpy",
          "hardware: " + ANCHORS),
  Erratum("vop3-cmp16-opsel", "16-bit V_CMP/V_CMPX in VOP3 encoding", "op_sel selects operand halves",
          "op_sel is ignored", "operands._vcmp reads the low halves whatever op_sel says (every backend)",
          "tests/pcode/test_conformance.py::test_family_conforms_on_both_paths (the op_sel cases, readings.halves_read)",
          "fixed",
          "unverified: mockgpu's reading; no hardware reading or LLVM property is recorded for it"),
  Erratum("div-fmas-scale", "v_div_fmas_f32/f64", "where VCC: fma(S0, S1, S2) rounded, then scaled by 2^32 / 2^64",
          "where VCC: 2^64 (f64: 2^128) * (S0*S1 + S2) when S2's biased exponent is above 127 (1023), else 2^-64 "
          "(2^-128), rounded once: v_div_scale's 2^64 scaling undone (the quotient estimate is too small when the "
          "denominator was scaled up, too large when the numerator was)", "numpy_runtime.div_fmas, prelude.c "
          "div_fmas32 (the C backend has no f64 fma: f64 on numpy, test_div_fmas_scale_f64)", "test_div_fmas_scale",
          "fixed",
          "llvm: the scaling that makes LLVM's f32/f64 division sequence (v_div_scale, v_div_fmas, v_div_fixup) "
          "return the quotient (tests/compiler/rdna/test_rdna_division.py)"),
  Erratum("div-scale-vcc", "v_div_scale_f32/f64", "VCC per the pseudocode's range checks", "VCC also for a zero "
          "denominator, and for a denormal or tiny one (biased exponent <= 23 / 53) in the denominator's own call "
          "(S0 = S1 != S2); the numerator's call, the one LLVM passes to v_div_fmas, keeps the pseudocode's VCC. Also VCC "
          "for a zero numerator (both calls), a tiny numerator (biased exponent <= 23 / 53; the denominator's call) and "
          "an f32 quotient that would be denormal (below 2^-126, also one f32 rounds to zero or to the smallest normal; "
          "the pseudocode's denormal-quotient branch; inferred from hardware examples, tests/compiler/rdna/test_rdna_hw_classes.py). f64: a "
          "huge denominator of a denormal quotient (1/S1 and S2/S1 denormal) is scaled by 2^-128, not 2^128 (which "
          "overflows it; inferred from LLVM's f64 division, tests/compiler/rdna/test_rdna_division.py). A huge "
          "quotient (exponent gap >= 96 / 768) scales the denominator by 2^64 with VCC set, as the pseudocode says "
          "(thresholds: mockgpu's reading of the record, not measured)", "numpy_runtime.div_scale and prelude.c's "
          "div_scale32/64 (a two-result row: D and VCC)", "test_div_scale_vcc", "fixed",
          "llvm: inferred from LLVM's division sequence (tests/compiler/rdna/test_rdna_division.py); the huge-quotient thresholds are unverified"),
  Erratum("div-fixup-nan", "v_div_fixup_f32 (measured), v_div_fixup_f64 (inferred)", "a NaN estimate S0 propagates",
          "a NaN estimate S0 (NaN-free S1, S2) gives infinity with the quotient's sign: the estimate of an overflowing "
          "quotient is inf - inf in LLVM's Newton chain; f64 by the same rule, without which LLVM's precise f64 "
          "division returns NaN for an overflowing quotient (tests/compiler/rdna/test_rdna_division.py)",
          "numpy_runtime.div_fixup, prelude.c div_fixup32/64 (the C backend)",
          "test_div_fixup_nan_estimate", "fixed",
          "llvm: without it LLVM's precise division returns NaN for an overflowing quotient "
          "(tests/compiler/rdna/test_rdna_division.py); the f32 reading called measured has no recorded source"),
  Erratum("omod-ieee", "VOP3 float ops with omod", "omod scales the result", "with IEEE_MODE set (COMPUTE_PGM_RSRC1 "
          "bit 23, set in LLVM's and tinygrad's RDNA3 descriptors) omod is ignored; gfx12 has no IEEE mode",
          "program.valu (ieee from executor.ieee_mode, semantics IEEE_MODE_BIT; every backend)", "test_omod_ieee",
          "fixed",
          "llvm: LLVM folds an output modifier only where IEEE mode is off (SIFoldOperands), and sets IEEE mode in its compute descriptors"),
  Erratum("cdna-mad-mix-fused", "CDNA v_mad_mix_f32, v_mad_mixlo_f16, v_mad_mixhi_f16 (gfx942/gfx950)",
          "D = in[0] * in[1] + in[2], a multiply then an add", "one fused multiply-add (rounded once to f32): LLVM's "
          "gfx940 target names these opcodes v_fma_mix_* (FeatureFmaMixInsts) and selects them only for fma; not "
          "checked on MI300 hardware", "semantics/cdna.py MIX: aliases to RDNA3's FMA_MIX rows (every backend)",
          "tests/compiler/rdna/test_cdna_exec.py::test_mad_mix_is_one_fused_rounding", "fixed",
          "llvm: the gfx940 target names these opcodes v_fma_mix_* and selects them only for fma; not checked on MI300"),
  Erratum("cdna-16bit-high-zero", "CDNA 16-bit VALU results (v_add_f16, v_mul_lo_u16, v_cvt_f16_f32, ...; not v_fma_f16, "
          "v_mad_u16/i16, v_div_fixup_f16, the mix forms)", "D0.f16 = ...: bits 31:16 of the VGPR not written",
          "GFX9 writes 0 to bits 31:16 (LLVM's GCNSubtarget::zeroesHigh16BitsOfDest; gfx9 changed the listed ops to "
          "keep them); not checked on MI300 hardware", "semantics/cdna.py HIGH16_ZEROED (program.valu, every backend)",
          "tests/compiler/rdna/test_cdna_exec.py::test_16bit_results_zero_the_high_half", "fixed",
          "llvm: GCNSubtarget::zeroesHigh16BitsOfDest; not checked on MI300"),
  Erratum("rndne-ieee", "v_rndne_f16/f32/f64", "D0 = floor(S0 + 0.5), then 1 subtracted at an odd tie: +0 for "
          "-0.5 < S0 < 0, and for f16 S0 + 0.5 is rounded first (1601 gives 1602)", "IEEE roundToIntegralTiesToEven: "
          "-0.3 gives -0, 1601 stays 1601 (LLVM lowers llvm.rint/roundeven to it unchanged)",
          "semantics/rdna3.py RNDNE_* (rint: numpy np.rint, C rint32)", "tests/pcode/test_conformance.py::"
          "test_family_conforms_on_both_paths (readings.OVERRIDES)", "fixed",
          "llvm: LLVM lowers llvm.rint/llvm.roundeven to v_rndne unchanged"),
  Erratum("fract-below-one", "v_fract_f16/f32/f64", "D0 = S0 + -floor(S0): 1.0 for a tiny negative S0",
          "the largest value below 1.0 (0x3f7fffff for f32; LLVM folds llvm.amdgcn.fract as min(x - floor(x), "
          "0x1.fffffep-1))", "numpy_runtime.fract", "tests/pcode/test_conformance.py::test_family_conforms_on_both_paths "
          "(readings.OVERRIDES)", "fixed",
          "llvm: LLVM folds llvm.amdgcn.fract as min(x - floor(x), 0x1.fffffep-1)"),
  Erratum("frexp-exponent", "v_frexp_exp_i32_f32/f64, v_frexp_exp_i16_f16", "exponent(S0) - bias + 1: 1 - bias for "
          "zero and subnormals", "frexp's exponent: 0 for zero, the true exponent of a subnormal (LLVM lowers "
          "llvm.frexp to it with denormals enabled)", "numpy_runtime.frexp_exp", "tests/pcode/test_conformance.py::"
          "test_family_conforms_on_both_paths (readings.OVERRIDES)", "fixed",
          "llvm: LLVM lowers llvm.frexp to v_frexp_exp/v_frexp_mant with denormals enabled"),
]

def true16(t_d:str|None, t_s:tuple[str, ...], dst:int, srcs:list[Reg], opsel:int=0) -> tuple[int, list[Reg], int]:
  """errata true16-e32 and true16-vopc: in an e32 encoding a 16-bit operand or destination v[128+n] is the high half
  of v[n]. t_d, t_s are the op's destination and source types (t_d None: no VGPR destination, a compare); dst is a
  VGPR index, srcs encoded operands (VGPRs at 256+).
  Returns the remapped dst, srcs and the op_sel bits (bit i: source i, bit 3: destination) that select high halves."""
  out = list(srcs)
  for i, (r, t) in enumerate(zip(srcs, t_s)):
    if t[1:] == "16" and r.offset >= 256 + 128:
      out[i], opsel = Reg(r.offset - 128), opsel | 1 << i
  if t_d is not None and t_d[1:] == "16" and dst >= 128: dst, opsel = dst - 128, opsel | 8
  return dst, out, opsel

def packed_inline(bits16:int, bits32:int, is_float_const:bool, integer_op:bool) -> int:
  """errata vop3p-inline: the 32 bits a packed op reads for an inline constant. bits16/bits32 are the constant's
  16- and 32-bit encodings (f16/f32 for the float constants)."""
  if integer_op and is_float_const: return bits32
  return bits16
