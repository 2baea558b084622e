"""What the conformance suite compares with where the manual's pseudocode is not enough: each entry says what it
changes and why. Three kinds:

  UNTESTABLE  instructions this suite cannot compare (no data result, control flow, hardware state), with the reason
  OVERRIDES   replacement pseudocode, in the manual's own language, for an instruction whose pseudocode is incomplete
              or ambiguous (class c: the choice and why) or which hardware does differently (class b: the erratum of
              mockgpu/compiler/rdna/errata.py it follows, by id; written here independently of mockgpu's code)
  CHOICES     readings built into the evaluator or the harness (operand rules, NaN rule, inactive lanes, ...)

TOLERANCE lists the instructions the ISA documents as approximations, compared within ulps instead of bit for bit.
"""
from __future__ import annotations
import re

UNTESTABLE = [
  (r"V_NOP|V_PIPEFLUSH", "no operands and no result"),
  (r"S_(GETPC|SETPC|SWAPPC|RFE|CALL)_B64", "control flow: the result is a program counter or a jump"),
  (r"S_SENDMSG_RTN_B(32|64)", "returns a message-bus value (no modelled source)"),
  (r"S_(GETREG|SETREG|SETREG_IMM32)_B32", "reads or writes hardware registers (HW_REGISTERS)"),
  (r"S_WAITCNT_.*|S_VERSION|S_SUBVECTOR_LOOP_.*", "no data result (a wait, a version tag, a loop marker)"),
  (r"S_MOVREL.*|V_MOVREL.*|V_SWAPREL_B32.*", "M0-relative register addressing: the index is the encoded register "
   "number plus M0, and this harness's evaluator reads named operands, not a register file indexed at run time (its M0 "
   "is 0); tests/compiler/rdna/test_rdna_control.py checks these against the pseudocode with M0 different per wave"),
  (r"V_PERMLANE(16|X16|64)_B32.*", "cross-lane within a row of 16 (wave64: across the halves): the pseudocode reads "
   "inactive source lanes regardless of op_sel's FI and BOUND_CTRL and loops over 64 lanes; tests/compiler/rdna/test_rdna_alu_outside_pcode.py "
   "checks these against the manual's loop with the FI/BOUND_CTRL rule"),
  (r"V_PERMLANEX?16_VAR_B32", "RDNA4's cross-lane selects with a per-lane lane operand: the pseudocode loops over the "
   "wave's lanes (and reads an undefined lower-case `wave32`); tests/compiler/rdna/test_rdna4_hw.py checks them against the manual's loop"),
  (r"V_WMMA_.*|V_SWMMAC_.*", "the pseudocode is prose (D = A x B + C; RDNA4's sparse SWMMAC too); the matrix layouts "
   "are not in it (tests/compiler/rdna/test_rdna_alu_outside_pcode.py and tests/compiler/rdna/test_rdna4_wmma.py check them "
   "against the ISA guide's layouts)"),
  (r"DS_GWS_.*|DS_ORDERED_COUNT|DS_(ADD|SUB)_GS_REG_RTN|DS_APPEND|DS_CONSUME", "global wave sync, ordered-count and "
   "GDS counters: state outside the LDS this harness models"),
  (r"DS_NOP", "no operands and no result"),
  (r"DS_(PERMUTE|BPERMUTE|SWIZZLE)_B32|DS_BVH_STACK_RTN_B32", "cross-lane data movement through the LDS unit (and "
   "for BVH a traversal stack): the per-lane memory model of this harness does not cover it"),
  (r"DS_(LOAD|STORE)_ADDTID_B32", "the address comes from M0 and the lane id, not from a register"),
  (r"S_BARRIER_SIGNAL(_ISFIRST)?|S_GET_BARRIER_STATE", "RDNA4's split barriers: the named barriers' state "
   "(BARRIER_STATE[n].signalCnt/memberCnt, WAVE_STATUS.PRIV) is workgroup state outside one wave's registers; "
   "tests/compiler/rdna/test_rdna4.py runs s_barrier_signal -1 / s_barrier_wait across waves"),
]

def _rndne(t): return f"D0.{t} = rint(S0.{t})"
def _fract(t, below_one):
  return f"tmp = S0.{t} + -floor(S0.{t});\nD0.{t} = tmp >= 1.0 ? {below_one} : tmp"
def _frexp_exp(t, d):
  return (f"if ((64'F(S0.{t}) == +INF) || (64'F(S0.{t}) == -INF) || isNAN(64'F(S0.{t}))) then\nD0.{d} = 0\nelse\n"
          f"D0.{d} = frexpExponent(S0.{t})\nendif")
RNDNE_WHY = ("errata rndne-ieee: the pseudocode (floor(S0 + 0.5), then a tie fix-up) gives +0 for -0.5 < S0 < 0 and, "
             "for f16, rounds S0 + 0.5 first (1601 -> 1602); hardware rounds to the nearest even integer as IEEE's "
             "roundToIntegralTiesToEven, -0 kept")
FRACT_WHY = ("errata fract-below-one: S0 + -floor(S0) rounds to 1.0 for tiny negative S0; hardware returns the "
             "largest value below 1.0")
FREXP_WHY = ("errata frexp-exponent: the pseudocode's exponent(S0) - bias + 1 gives 1 - bias for zero and subnormals; "
             "hardware returns frexp's exponent (0 for zero, the true exponent of a subnormal)")
TRIG_WHY = ("the reference is mockgpu's own model, not hardware's: the argument's integer part removed exactly, then "
            "sin/cos of 2*pi*r rounded once (mockgpu's v_sin/v_cos implement the same model), compared within 1 ulp "
            "(TOLERANCE). Hardware's bound beside it: the ISA documents the transcendentals as 1 ulp approximations "
            "of the exact result over its input domain, not measured here for sin/cos. The pseudocode rounds S0 * 2*pi "
            "to the operand's format first, which loses the argument beyond a few revolutions (and overflows f16)")

def _div_scale_vcc(t:str, tiny:int) -> str:
  u = "u32" if t == "f32" else "u64"
  return (f"if ((64'F(S1.{t}) == 0.0) || ((S0.{u} == S1.{u}) && (S0.{u} != S2.{u}) && (exponent(S1.{t}) <= {tiny}))) then\n"
          "VCC = 0x1LL\nendif;\n"
          # a zero numerator (both calls), a tiny one in the denominator's call (inferred)
          f"if ((64'F(S2.{t}) == 0.0) && (64'F(S1.{t}) != 0.0) && !isNAN(64'F(S1.{t}))) then\nVCC = 0x1LL\nendif;\n"
          f"if ((S0.{u} == S1.{u}) && (S0.{u} != S2.{u}) && (64'F(S2.{t}) != 0.0) && (exponent(S2.{t}) <= {tiny})) then\n"
          "VCC = 0x1LL\nendif")
def _div_scale_tiny_quotient(text:str) -> str:
  """f32: the denormal-quotient branch asks about the quotient in exact terms (the f64 quotient of the operands), so a
  quotient f32 rounds to zero or up to the smallest normal takes it too (inferred from the hardware examples)."""
  return text.replace("elsif S2.f32 / S1.f32 == DENORM.f32 then", "elsif 64'F(S2.f32) / 64'F(S1.f32) == DENORM.f32 then")
def _div_scale_huge_den(text:str) -> str:
  """The branch of a huge denominator and a denormal quotient (1.0 / S1 and S2 / S1 denormal, f64 only: f32's
  1.0 / S1 is never a denormal f64) scales the denominator down, not up (errata div-scale-vcc)."""
  branch = "elsif ((1.0 / S1.f64 == DENORM.f64) && (S2.f64 / S1.f64 == DENORM.f64)) then\nVCC = 0x1LL;\nif S0.f64 == S1.f64 then\n"
  return text.replace(branch + "// Only scale the denominator\nD0.f64 = ldexp(S0.f64, 128)",
                      branch + "D0.f64 = ldexp(S0.f64, -128)")

DIV_SCALE_WHY = ("errata div-scale-vcc: VCC is also set for a zero denominator, and for a denormal or tiny one (biased exponent "
                 "<= 23 / 53) in the denominator's own call (S0 is S1, not S2), which LLVM's division does not read; for a zero "
                 "numerator (both calls) and a tiny numerator (the denominator's call); f32's denormal-quotient branch takes the"
                 " exact quotient (one f32 rounds to zero or to the smallest normal too): thresholds inferred from hardware "
                 "examples (tests/compiler/rdna/test_rdna_hw_classes.py); where 1.0 / S1 and the quotient are both denormal "
                 "(f64), the denominator is scaled by 2**-128, not 2**128 (the manual's 2**128 overflows it; LLVM's f64 division"
                 " returns the denormal quotient only this way: inferred, not measured); and (class c) the pseudocode only "
                 "assigns D0 in its special cases, elsewhere the instruction passes S0 through (the manual's text: 'otherwise D "
                 "= S0'), so D0 = S0 comes first")
DIV_FMAS_WHY = ("errata div-fmas-scale: where VCC is set, the fused result is scaled by 2**64 (f64: 2**128) when S2's "
                "biased exponent is above 127 (1023), else by 2**-64 (2**-128), before its one rounding (fmaScaled); the "
                "pseudocode's 2**32 (2**64) after the rounding would leave v_div_scale's quotients scaled")

INTERP_RTZ_WHY = ("the RTZ forms' pseudocode is the round-to-nearest forms' text; the instruction rounds toward zero "
                  "(its name; RDNA3 ISA: 'round toward zero'), so the reading evaluates it under ROUND_TOWARD_ZERO")

# instruction name -> (replacement pseudocode ({NAME} stands for the manual's text) or a function of the manual's text,
# class, reason)
OVERRIDES = {
  **{f"V_RNDNE_{t.upper()}": (_rndne(t), "b", RNDNE_WHY) for t in ("f16", "f32", "f64")},
  **{f"S_RNDNE_{t.upper()}": (_rndne(t), "b", RNDNE_WHY) for t in ("f16", "f32")},  # RDNA4's float SALU
  "V_FRACT_F16": (_fract("f16", "16'F(0x3bff)"), "b", FRACT_WHY),
  "V_FRACT_F32": (_fract("f32", "32'F(0x3f7fffff)"), "b", FRACT_WHY),
  "V_FRACT_F64": (_fract("f64", "64'F(0x3fefffffffffffffLL)"), "b", FRACT_WHY),
  "V_FREXP_EXP_I32_F32": (_frexp_exp("f32", "i32"), "b", FREXP_WHY),
  "V_FREXP_EXP_I32_F64": (_frexp_exp("f64", "i32"), "b", FREXP_WHY),
  "V_FREXP_EXP_I16_F16": (_frexp_exp("f16", "i16"), "b", FREXP_WHY),
  **{f"V_{fn.upper()}_{t.upper()}": (f"D0.{t} = {fn}Revolutions(S0.{t})", "c", TRIG_WHY)
     for fn in ("sin", "cos") for t in ("f16", "f32")},
  "V_LDEXP_F16": ("D0.f16 = S0.f16 * 2.0F ** 32'I(S1.i16)", "c",
                  "the pseudocode rounds the scale 2**S1 to f16 first (16'F(...)), which is 0 or inf for most "
                  "S1 and makes ldexp(inf, -20) NaN; the instruction scales exactly (reading power-of-two)"),
  **{f"V_DIV_FIXUP_{t.upper()}": (lambda text, t=t: text.replace(
      f"else\nD0.{t} = sign_out ? -abs(S0.{t}) : abs(S0.{t})\nendif",
      f"elsif isNAN(64'F(S0.{t})) then\nD0.{t} = sign_out ? -INF.{t} : +INF.{t}\n"
      f"else\nD0.{t} = sign_out ? -abs(S0.{t}) : abs(S0.{t})\nendif"), "b",
      "errata div-fixup-nan: where the pseudocode returns the estimate S0 with the quotient's sign, a NaN estimate "
      "gives +-inf (f32 measured; f64 by the same rule, which LLVM's f64 division needs for an overflowing quotient)")
     for t in ("f32", "f64")},
  "V_INTERP_P10_RTZ_F16_F32": ("ROUND_MODE = ROUND_TOWARD_ZERO;\n{V_INTERP_P10_RTZ_F16_F32}", "c", INTERP_RTZ_WHY),
  "V_INTERP_P2_RTZ_F16_F32": ("ROUND_MODE = ROUND_TOWARD_ZERO;\nD0.f16 = 16'F(fma(32'F(VGPR[(laneId.u32 & 0xfffffffcU) + 2U]"
                              "[SRC0.u32].f16), S1.f32, S2.f32))", "c", INTERP_RTZ_WHY + "; and its D0.f32 is the f16 "
                              "result V_INTERP_P2_F16_F32 writes (the operand table's f16 VDST)"),
  "V_TRIG_PREOP_F64": (lambda text: text.replace("result = 64'F((1201'B(2.0 / PI)[1200 : 0] << shift.u32) & 1201'0x1fffffffffffff)",
                                                 "result = 64'F(twoOverPiSegment(shift.u32))"), "c",
                       "1201'B(2.0 / PI) is the 1201-bit fraction of 2/pi (its comment: 0.{b_1200 ... b_0}), not a float "
                       "cast, and '<< shift, keep the whole part, & (2**53 - 1)' reads as the 53 bits the shift brings "
                       "past the point: twoOverPiSegment, computed in integers by the evaluator"),
  "V_FMAC_DX9_ZERO_F32": ("S2 = D0;\n{V_FMAC_DX9_ZERO_F32}", "c",
                          "the pseudocode (copied from V_FMA_DX9_ZERO) returns S2 for a zero product; the FMAC form "
                          "has no S2: its addend is D0"),
  **{f"V_DIV_SCALE_{t.upper()}": (lambda text, t=t, tiny=tiny: f"D0.{t} = S0.{t};\n"
                                  f"{_div_scale_tiny_quotient(_div_scale_huge_den(text))};\n" + _div_scale_vcc(t, tiny),
                                  "b", DIV_SCALE_WHY) for t, tiny in (("f32", 23), ("f64", 53))},
  **{f"V_DIV_FMAS_{t.upper()}": (f"if VCC.u64[laneId] then\nD0.{t} = fmaScaled(S0.{t}, S1.{t}, S2.{t}, "
                                 f"exponent(S2.{t}) > {bias} ? {k} : -{k})\nelse\nD0.{t} = fma(S0.{t}, S1.{t}, S2.{t})\nendif",
                                 "b", DIV_FMAS_WHY) for t, bias, k in (("f32", 127, 64), ("f64", 1023, 128))},
}

CHOICES = [
  ("nan-payload", "every float instruction",
   "a NaN made by arithmetic or by a conversion function matches any quiet NaN of its format; a NaN that is moved, "
   "selected, negated, sized-cast (64'F(x)) or quieted (cvtToQuietNAN) must keep its exact bits",
   "the manual does not say which NaN an arithmetic operation returns; moves and the min/max/class rules do specify "
   "their NaN"),
  ("inactive-lanes", "VOPC, VOP2/VOP3SD carry-outs, v_cmpx",
   "a lane with EXEC clear writes 0 into an SGPR lane mask (VCC, SDST); its VGPR destination keeps its value",
   "the pseudocode only describes active lanes; the ISA's VOPC section: results of inactive lanes are zero"),
  ("whole-vcc", "V_DIV_SCALE_F32/F64",
   "VCC = 0x1LL in a per-lane instruction sets that lane's bit of the carry-out",
   "the pseudocode assigns the whole register, which only means something per lane"),
  ("sized-casts", "every instruction",
   "N'F(x) of a float re-encodes the number (rounded once when narrowing) and keeps a NaN's sign and payload; "
   "N'F(integer) reinterprets the integer's bits (32'F(0xffc00000))",
   "the manual classifies operands through 64'F(S0.f32) and builds NaNs through 32'F(0x...)"),
  ("power-of-two", "V_LDEXP_F32/F64/F16, V_DIV_FMAS_F32/F64",
   "x ** n is exact: S0.f32 * 2.0F ** S1.i32 is rounded once, after the multiply",
   "rounding 2.0F ** 200 to f32 first would make ldexp overflow for results the instruction returns"),
  ("div-fixup-limits", "V_DIV_FIXUP_F32/F64",
   "UNDERFLOW_F32/F64 = +0 and OVERFLOW_F32/F64 = +inf (signed by sign_out)",
   "the manual names these constants without values; a quotient below the smallest subnormal rounds to zero, one "
   "above the largest finite to infinity"),
  ("cvt-off-table", "V_CVT_OFF_F32_I4",
   "CVT_OFF_TABLE[i] = signed 4-bit i / 16 (0, 0.0625, ..., 0.4375, -0.5, ..., -0.0625)",
   "the pseudocode declares the table without contents; the manual's text describes the 4-bit signed offset"),
  ("conversions", "f32_to_i32 and the other float-to-integer functions",
   "round toward zero, saturate at the integer type's range, NaN gives 0",
   "the manual's conversion rules for V_CVT_*; the pseudocode only names the functions"),
  ("norm-u8", "f16/f32_to_snorm/unorm, f32_to_u8",
   "clamp to [-1, 1] ([0, 1]) or [0, 255], scale, round to nearest even; NaN gives 0",
   "named without a definition in the pseudocode"),
  ("high-halves", "VOP3 and e32 16-bit instructions",
   "op_sel bit i (VOP3) or the operand v[128 + n] (e32) hands source i's high half to the pseudocode's S<i>[15 : 0], "
   "and op_sel bit 3 / vdst v[128 + n] writes the result's 16 bits to the high half, keeping the low one",
   "op_sel and true16 register names are encoding fields the pseudocode does not mention; errata vop3-cmp16-opsel "
   "(compares ignore op_sel) and true16-e32/true16-vopc apply. Not run with op_sel: VOP3 instructions that read "
   "their destination (v_fmac_f16), where the manual does not say which op_sel bit picks the accumulator's half"),
  ("packed-sources", "VOP3P",
   "op_sel 0 and op_sel_hi 1 (the encodings' defaults): lane i of a packed operand reads half i, as the pseudocode's "
   "S0[31 : 16] / S0[15 : 0] do; v_fma_mix* read f16 low halves (OPSEL_HI = 7)",
   "op_sel is an encoding field the pseudocode does not mention"),
  ("ds-addr", "DS", "ADDR is the address register plus the instruction's offset, except where the pseudocode adds "
   "OFFSET (or OFFSET0/OFFSET1) itself; each lane accesses its own 16-byte slot (528 for STRIDE64), set before the "
   "instruction and read back after it", "the pseudocode uses ADDR both ways (MEM[ADDR + OFFSET] for loads and "
   "stores, MEM[ADDR] for atomics)"),
  ("class-mask", "V_CMP_CLASS_F16/F32/F64, V_CMPX_CLASS_*", "the class mask S1 gets integer inline constants only",
   "it is a bit mask (S1.u32[i]); tinygrad's operand table gives V_CMP_CLASS_F16's S1 the F16 format, which would make "
   "a float constant's encoding (f16 or f32 bits) a guess"),
  ("sopk-s0", "SOPK", "RDNA3: S0 is the instruction's SDST register (the pseudocode of S_CMPK_* reads S0.u32); "
   "RDNA4: S0 is the 16-bit immediate (its pseudocode names SIMM16 S0: S_MOVK_I32 is D0 = signext(S0.i16))",
   "SOPK has one register field"),
  ("pseudo-scalar", "RDNA4's V_S_EXP/LOG/RCP/RSQ/SQRT_F16/F32",
   "evaluated once per wave from the scalar operand (SGPRs, constants and literals only: the sources are scalar), the "
   "SGPR destination set whatever EXEC holds (EXEC 0 included); the F16 forms' pseudocode zeroes bits 31:16 itself",
   "the pseudocode has no lane and no EXEC test; the instructions are VALU-issued scalar operations"),
  ("trapsts-invalid", "RDNA4's min/max NUM/IMUM and their 3-operand and packed forms",
   "TRAPSTS.INVALID = 1 (IEEE's invalid-operation flag, set for a signalling NaN operand) is recorded, not compared",
   "mockgpu does not model the trap status register; the flag changes no result"),
  ("fp8-formats", ".fp8 and .bf8 (RDNA4's conversions and dot products)",
   "OCP FP8: .fp8 is E4M3 (bias 7, no infinity, S.1111.111 the NaN, largest 448), .bf8 E5M2 (IEEE-like, bias 15); "
   "f32_to_fp8/f32_to_bf8 round to nearest even and, past the largest finite, give the NaN (fp8) or infinity (bf8)",
   "the manual names the formats and functions without defining them; gfx12 implements the OCP formats (LLVM's "
   "gfx12 FP8 conversion instructions), and the non-saturating conversion is OCP's default (the clamp bit is not set "
   "by this harness)"),
  ("literal-64", "64-bit operands with a literal",
   "a float64 operand takes a 32-bit literal as its high half; 64-bit integer operands are only given literals "
   "below 2**31, where zero and sign extension agree",
   "the manual leaves the extension of a literal for 64-bit integer operands open"),
]

# errata of mockgpu/compiler/rdna/errata.py the suite does not compare against, and why (so they stay visible)
NOT_COMPARED = [
  ("omod-ieee", "the harness does not set output modifiers (omod, clamp) or input modifiers (neg, abs); "
   "tests/compiler/rdna/test_rdna_errata.py checks it"),
]

# instruction regex -> (ulps, format, reason)
TOLERANCE = [
  (r"V_S_(RCP|RSQ|SQRT|EXP|LOG)_F32", 1, "f32", "RDNA4's pseudo-scalar forms of the 1 ULP approximations"),
  (r"V_S_(RCP|RSQ|SQRT|EXP|LOG)_F16", 1, "f16", "RDNA4's pseudo-scalar forms of the 1 ULP approximations"),
  (r"V_(RCP|RCP_IFLAG|RSQ|SQRT|EXP|LOG)_F32", 1, "f32", "the ISA documents these as approximations accurate to 1 ULP"),
  (r"V_(RCP|RSQ|SQRT|EXP|LOG)_F16", 1, "f16", "the ISA documents these as approximations accurate to 1 ULP"),
  (r"V_(SIN|COS)_F32", 1, "f32", "within 1 ulp of mockgpu's own model (TRIG_WHY), which is what mockgpu implements; "
   "hardware's documented bound is 1 ulp of the exact result, not measured"),
  (r"V_(SIN|COS)_F16", 1, "f16", "within 1 ulp of mockgpu's own model (TRIG_WHY), which is what mockgpu implements; "
   "hardware's documented bound is 1 ulp of the exact result, not measured"),
  (r"V_(RCP|RSQ|SQRT)_F64", 1, "f64", "the ISA documents these as approximations accurate to 1 ULP"),
]

def base_name(name:str) -> str: return re.sub(r"_E(32|64)$", "", name)

def halves_read(name:str, family:str, halves:int) -> int:
  """The high-half selections hardware applies (harness.Case.halves: bit i source i, bit 3 the destination).
  Errata vop3-cmp16-opsel: 16-bit compares in the VOP3 encoding ignore op_sel. Errata true16-e32 and true16-vopc:
  in e32 encodings v[128 + n] names the high half of v[n] (so the e32 variant reads and writes high halves)."""
  if family == "VOP3" and re.match(r"V_CMPX?_", name): return 0
  return halves

def untestable(name:str) -> str|None:
  for pat, why in UNTESTABLE:
    if re.fullmatch(pat, name) or re.fullmatch(pat, base_name(name)): return why
  return None

def pcode_for(family:str, name:str, text:str|None, arch:str="rdna3") -> tuple[str|None, str|None]:
  """(the pseudocode the suite evaluates for an instruction, or None with the reason it cannot). The readings were
  written for RDNA3's pseudocode: an RDNA4 text they do not match (rewritten in the RDNA4 manual) is read as it is."""
  if (why:=untestable(name)) is not None: return None, why
  if text is None: return None, "tinygrad's table has no pseudocode for it"
  o = OVERRIDES.get(base_name(name))
  if o is not None:
    new = o[0](text) if callable(o[0]) else o[0].replace("{" + base_name(name) + "}", text)
    if new == text and arch == "rdna3": raise ValueError(f"readings.OVERRIDES[{base_name(name)}] no longer applies to the pseudocode")
    text = new
  return text, None

def tolerance(name:str) -> tuple[int, str]|None:
  for pat, ulps, fmt, _ in TOLERANCE:
    if re.fullmatch(pat, base_name(name)): return ulps, fmt
  return None

def packed_constant_bits(c, cls:str, name:str) -> int:
  """Errata vop3p-inline (mockgpu/compiler/rdna/errata.py): in a packed (VOP3P) instruction an inline constant fills
  bits 15:0 only, the high half is 0; integer packed instructions take a float constant's f32 bit pattern. 32-bit
  sources of VOP3P (the dot products) take the constant as any 32-bit operand does."""
  from pcode import operands as O
  if cls in ("f16", "bf16", "b16"):
    if isinstance(c, int): return c & 0xffff
    if cls == "b16": return O.float_constant_bits(c, "f32")
    return O.float_constant_bits(c, "f16")
  return O.constant_bits(c, cls if cls in ("f32", "f64") else "b32", 32)
