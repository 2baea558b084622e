"""What each RDNA3 instruction computes, once, in the expression language of lang.py; every backend (numpy, C, the
stepper) reads these rows.

Row names drop the V_/S_ prefix and the _E32/_E64 suffix, so one row serves every encoding of an op (VOP1, VOP2, VOP3,
VOPD, DPP): the operand model (operands.py) says which registers an encoding reads and writes, the row what is
computed. A row is `NAME dst-type source-types = body` (lang.row); a row for several types names them once
(`MAX_{F16,F32} T T T = fmax(a, b)`, lang.table). Vector rows (VOP) read their sources a, b, c, the
lane's bit `vcc` of the lane mask they read (VCC, or the SGPR VOP3 names) and `lane`, and write d and `vcc` (the lane's
bit of the mask they write: a carry, a compare); `ieee` is the wave's IEEE mode (MODE.IEEE, from the descriptor's
IEEE_MODE bit: IEEE_MODE_BIT), a constant of the translation. Conversions quiet a signalling NaN (`quiet`), as
hardware's do. Scalar rows (SOP) read a, b, d (the destination's old value), `scc`,
`exec`, `pc` (this instruction's address) and write d, `scc`, `exec`.
"""
from __future__ import annotations
from mockgpu.compiler.rdna.semantics.lang import table
from mockgpu.compiler.rdna.semantics.family_setup import RDNA3 as _SETUP

FAMILY = "rdna3"

VOP = table("""
MOV_B32 b32 b32 = a
NOT_B32 b32 b32 = ~a
MOV_B16 b16 b16 = a
NOT_B16 u16 u16 = ~a
BFREV_B32 b32 b32 = brev32(a)
CLZ_I32_U32 u32 u32 = clz(a)
CTZ_I32_B32 u32 u32 = ctz(a)
CLS_I32 u32 u32 = cls32(a)
CNDMASK_{B16,B32} T T T = b if vcc else a
ADD_{F16,F32,F64} T T T = a + b
SUB_{F16,F32} T T T = a - b
SUBREV_{F16,F32} T T T = b - a
MUL_{F16,F32,F64} T T T = a * b
MUL_DX9_ZERO_F32 f32 f32 f32 = f32(0) if a == 0 or b == 0 else a * b
FMA_{F16,F32,F64} T T T T = fma(a, b, c)
FMAC_{F16,F32} T T T T = fma(a, b, c)
FMAMK_{F16,F32} T T T T = fma(a, c, b)
FMAAK_{F16,F32} T T T T = fma(a, b, c)
FMA_DX9_ZERO_F32 f32 f32 f32 f32 = c if a == 0 or b == 0 else fma(a, b, c)
FMAC_DX9_ZERO_F32 f32 f32 f32 f32 = c if a == 0 or b == 0 else fma(a, b, c)
MAX_{F16,F32,F64} T T T = fmax(a, b, ieee)
MIN_{F16,F32,F64} T T T = fmin(a, b, ieee)
MAX3_{F16,F32} T T T T = fmax(fmax(a, b, ieee), c, ieee)
MIN3_{F16,F32} T T T T = fmin(fmin(a, b, ieee), c, ieee)
MED3_{F16,F32} T T T T = fmed3(a, b, c, ieee)
LDEXP_{F32,F64} T T i32 = ldexp(a, b)
LDEXP_F16 f16 f16 i16 = ldexp(a, b)
EXP_{F16,F32} T T = exp2(a)
LOG_{F16,F32} T T = log2(a)
RCP_{F16,F32,F64} T T = rcp(a)
RCP_IFLAG_F32 f32 f32 = rcp(a)
RSQ_{F16,F32,F64} T T = rsq(a)
SQRT_{F16,F32,F64} T T = sqrt(a)
SIN_{F16,F32} T T = sin_rev(a)
COS_{F16,F32} T T = cos_rev(a)
FLOOR_{F16,F32,F64} T T = floor(a)
CEIL_{F16,F32,F64} T T = ceil(a)
TRUNC_{F16,F32,F64} T T = trunc(a)
RNDNE_{F16,F32,F64} T T = rint(a)
FRACT_{F16,F32,F64} T T = fract(a)
FREXP_MANT_{F32,F64} T T = frexp_mant(a)
FREXP_EXP_I32_{F32,F64} i32 T = frexp_exp(a)
DIV_FIXUP_{F16,F32,F64} T T T T = div_fixup(a, b, c)
DIV_SCALE_{F32,F64} T T T T = d, vcc = div_scale(a, b, c)
DIV_FMAS_{F32,F64} T T T T = div_fmas(a, b, c, vcc)
CVT_F32_{I32,U32} f32 T = f32(a)
CVT_F64_{I32,U32,F32} f64 T = f64(a)
CVT_F16_{I16,U16} f16 T = f16(a)
CVT_F16_F32 f16 f32 = f16(quiet(a))
CVT_F32_{F16,F64} f32 T = f32(quiet(a))
CVT_I32_{F32,F64} i32 T = i32(cvt_int(a, -2**31, 2**31 - 1))
CVT_U32_{F32,F64} u32 T = u32(cvt_int(a, 0, 2**32 - 1))
CVT_FLOOR_I32_F32 i32 f32 = i32(cvt_int(floor(a), -2**31, 2**31 - 1))
CVT_NEAREST_I32_F32 i32 f32 = i32(cvt_int(floor(a + f32(0.5)), -2**31, 2**31 - 1))
CVT_F32_UBYTE0 f32 u32 = f32(a & 0xff)
CVT_F32_UBYTE1 f32 u32 = f32((a >> 8) & 0xff)
CVT_F32_UBYTE2 f32 u32 = f32((a >> 16) & 0xff)
CVT_F32_UBYTE3 f32 u32 = f32(a >> 24)
CVT_PK_RTZ_F16_F32 b32 f32 f32 = fbits16(cvt_rtz_f16(quiet(a))) | (fbits16(cvt_rtz_f16(quiet(b))) << 16)
CVT_I16_F16 i16 f16 = i16(cvt_int(a, -2**15, 2**15 - 1))
CVT_U16_F16 u16 f16 = u16(cvt_int(a, 0, 2**16 - 1))
CVT_I32_I16 i32 i16 = i32(a)
CVT_U32_U16 u32 u16 = u32(a)
PACK_B32_F16 b32 f16 f16 = fbits16(a) | (fbits16(b) << 16)
ADD_NC_{U16,I16,U32,I32} T T T = a + b
SUB_NC_{U16,I16,U32,I32} T T T = a - b
SUBREV_NC_U32 u32 u32 u32 = b - a
ADD_CO_U32 u32 u32 u32 = d = a + b; vcc = d < a
SUB_CO_U32 u32 u32 u32 = d = a - b; vcc = b > a
SUBREV_CO_U32 u32 u32 u32 = d = b - a; vcc = a > b
ADD_CO_CI_U32 u32 u32 u32 = d = a + b + vcc; vcc = (d < a) or (vcc and d == a)
SUB_CO_CI_U32 u32 u32 u32 = d = a - b - vcc; vcc = (b > a) or (vcc and b == a)
SUBREV_CO_CI_U32 u32 u32 u32 = d = b - a - vcc; vcc = (a > b) or (vcc and a == b)
MUL_LO_{U16,U32} T T T = a * b
MUL_HI_U32 u32 u32 u32 = u32((u64(a) * u64(b)) >> 32)
MUL_HI_I32 u32 i32 i32 = u32((i64(a) * i64(b)) >> 32)
MUL_U32_U24 u32 u32 u32 = (a & 0xffffff) * (b & 0xffffff)
MUL_HI_U32_U24 u32 u32 u32 = u32((u64(a & 0xffffff) * u64(b & 0xffffff)) >> 32)
MUL_I32_I24 u32 u32 u32 = u32(sext(a, 24) * sext(b, 24))
MUL_HI_I32_I24 u32 u32 u32 = u32((sext(a, 24) * sext(b, 24)) >> 32)
MAD_U32_U24 u32 u32 u32 u32 = (a & 0xffffff) * (b & 0xffffff) + c
MAD_I32_I24 u32 u32 u32 u32 = u32(sext(a, 24) * sext(b, 24) + sext(c, 32))
MAD_{U16,I16} T T T T = a * b + c
MAD_U32_U16 u32 u16 u16 u32 = u32(a) * u32(b) + c
MAD_U64_U32 u64 u32 u32 u64 = p = u64(a) * u64(b); d = p + c; vcc = d < p
MAD_I64_I32 u64 i32 i32 u64 = p = i64(a) * i64(b); s = p + i64(c); d = u64(s); vcc = (s < 0) != ((p < 0) == (i64(c) < 0) and (s < 0) != (p < 0))
MBCNT_LO_U32_B32 u32 u32 u32 = popcount(a & u32((u64(1) << u64(lane)) - 1)) + b
MBCNT_HI_U32_B32 u32 u32 u32 = popcount(a & u32(((u64(1) << u64(lane)) - 1) >> 32)) + b
LSHLREV_B16 u16 u16 u16 = b << (a & 15)
LSHRREV_B16 u16 u16 u16 = b >> (a & 15)
ASHRREV_I16 i16 u16 i16 = b >> i16(a & 15)
LSHLREV_B32 u32 u32 u32 = b << (a & 31)
LSHRREV_B32 u32 u32 u32 = b >> (a & 31)
ASHRREV_I32 i32 u32 i32 = b >> i32(a & 31)
LSHLREV_B64 u64 u32 u64 = b << u64(a & 63)
LSHRREV_B64 u64 u32 u64 = b >> u64(a & 63)
ASHRREV_I64 i64 u32 i64 = b >> i64(a & 63)
AND_B32 u32 u32 u32 = a & b
OR_B32 u32 u32 u32 = a | b
XOR_B32 u32 u32 u32 = a ^ b
XNOR_B32 u32 u32 u32 = ~(a ^ b)
AND_OR_B32 u32 u32 u32 u32 = (a & b) | c
OR3_B32 u32 u32 u32 u32 = a | b | c
XOR3_B32 u32 u32 u32 u32 = a ^ b ^ c
ADD3_U32 u32 u32 u32 u32 = a + b + c
LSHL_OR_B32 u32 u32 u32 u32 = (a << (b & 31)) | c
LSHL_ADD_U32 u32 u32 u32 u32 = (a << (b & 31)) + c
ADD_LSHL_U32 u32 u32 u32 u32 = (a + b) << (c & 31)
XAD_U32 u32 u32 u32 u32 = (a ^ b) + c
SAD_U32 u32 u32 u32 u32 = (a - b if a > b else b - a) + c
BFE_U32 u32 u32 u32 u32 = bfe(a, b, c, False)
BFE_I32 u32 u32 u32 u32 = bfe(a, b, c, True)
BFI_B32 u32 u32 u32 u32 = (a & b) | (~a & c)
BFM_B32 u32 u32 u32 = ((u32(1) << (a & 31)) - u32(1)) << (b & 31)
ALIGNBIT_B32 u32 u32 u32 u16 = u32(r64(b, a) >> u64(c & 31))
ALIGNBYTE_B32 u32 u32 u32 u16 = u32(r64(b, a) >> u64((c & 3) * 8))
PERM_B32 u32 u32 u32 u32 = perm(a, b, c)
BCNT_U32_B32 u32 u32 u32 = popcount(a) + b
MAX_{I16,U16,I32,U32} T T T = max(a, b)
MIN_{I16,U16,I32,U32} T T T = min(a, b)
MAX3_{I16,U16,I32,U32} T T T T = max(max(a, b), c)
MIN3_{I16,U16,I32,U32} T T T T = min(min(a, b), c)
MED3_{I16,U16,I32,U32} T T T T = max(min(a, b), min(max(a, b), c))
DOT2_F32_{F16,BF16} f32 a0:T b0:T a1:T b1:T c:f32 = (c + f32(a0) * f32(b0)) + f32(a1) * f32(b1)
DOT2ACC_F32_{F16,BF16} f32 a0:T b0:T a1:T b1:T c:f32 = (c + f32(a0) * f32(b0)) + f32(a1) * f32(b1)
FMA_MIX_F32 f32 f32 f32 f32 = fma(f32(a), f32(b), f32(c))
FMA_MIX{LO,HI}_F16 f16 f32 f32 f32 = f16(fma(f32(a), f32(b), f32(c)))
INTERP_{P10,P2}_F32 f32 f32 f32 f32 = fma(a, b, c)
INTERP_P10_F16_F32 f32 f16 f32 f16 = fma(f32(a), b, f32(c))
INTERP_P2_F16_F32 f16 f16 f32 f32 = f16(fma(f32(a), b, c))
INTERP_P10_RTZ_F16_F32 f32 f16 f32 f16 = fma_rtz(f32(a), b, f32(c))
INTERP_P2_RTZ_F16_F32 f16 f16 f32 f32 = cvt_rtz_f16(fma_rtz(f32(a), b, c))
""")

# *** byte and halfword arithmetic: sums of absolute differences, averages, packing conversions ***

def _byte(x:str, i:int) -> str: return f"(({x} >> {8 * i}) & 255)" if i else f"({x} & 255)"
def _absdiff(x:str, y:str) -> str: return f"(max({x}, {y}) - min({x}, {y}))"

def _sad8(x:str, y:str, masked:bool=False) -> str:
  """v_sad_u8's sum over the four bytes of u32 values x and y (v_msad_u8, masked: a zero byte of y adds nothing)."""
  terms = [_absdiff(_byte(x, i), _byte(y, i)) for i in range(4)]
  if masked: terms = [f"(u32(0) if {_byte(y, i)} == 0 else {t})" for i, t in enumerate(terms)]
  return " + ".join(terms)

def _qsad(masked:bool, fields:int, clamp:bool=False) -> str:
  """v_qsad_pk_u16_u8 / v_mqsad_pk_u16_u8 (fields 16: four 16-bit accumulators in S2, D) and v_mqsad_u32_u8 (fields
  32: four 32-bit ones, S2 and D as four VGPRs c0..c3 / d, d1..d3): field k is the SAD of S0's bytes k..k+3 with S1,
  plus field k of S2 (clamp: saturated at the field's maximum)."""
  lines = [f"w{k} = u32(a >> {8 * k})" for k in range(4)]
  for k in range(4):
    acc = f"((c >> {16 * k}) & 0xffff)" if fields == 16 else f"c{k}"
    total = f"{acc} + {_sad8(f'w{k}', 'b', masked)}"
    lines.append(f"s{k} = u32(min(i64({acc}) + i64({_sad8(f'w{k}', 'b', masked)}), 2**{fields} - 1))" if clamp else f"s{k} = {total}")
  if fields == 32: return "; ".join(lines + ["d = s0; d1 = s1; d2 = s2; d3 = s3"])
  return "; ".join(lines + ["d = " + " | ".join(f"(u64(s{k} & 0xffff) << {16 * k})" for k in range(4))])

# float -> snorm/unorm 16 and u8: clamped to [-1, 1] ([0, 1]), scaled exactly in f64, rounded to nearest even; NaN 0
def _norm(x:str, signed:bool) -> str:
  lo, scale = (-1.0, 32767) if signed else (0.0, 65535)
  return (f"(i64(0) if isnan({x}) else cvt_int(rint(f64(fmin(fmax({x}, {lo}), 1.0)) * {scale}.0), "
          f"{-scale if signed else 0}, {scale}))")
def _pk16(lo:str, hi:str) -> str: return f"u32(u16({lo})) | (u32(u16({hi})) << 16)"

# rows longer than a line: their bodies written in pieces (the table takes one row a line)
_CVT_PK_U8 = ("sh = (b & 3) * 8; v = u32(0) if isnan(a) else u32(cvt_int(rint(fmin(fmax(a, 0.0), 255.0)), 0, 255)); "
              "d = (c & ~(u32(255) << sh)) | (v << sh)")
VOP.update(table(f"""
AND_B16 u16 u16 u16 = a & b
OR_B16 u16 u16 u16 = a | b
XOR_B16 u16 u16 u16 = a ^ b
MAD_I32_I16 i32 i16 i16 i32 = i32(a) * i32(b) + c
MAXMIN_{{F16,F32}} T T T T = fmin(fmax(a, b, ieee), c, ieee)
MINMAX_{{F16,F32}} T T T T = fmax(fmin(a, b, ieee), c, ieee)
MAXMIN_{{I32,U32}} T T T T = min(max(a, b), c)
MINMAX_{{I32,U32}} T T T T = max(min(a, b), c)
LERP_U8 u32 u32 u32 u32 = {" + ".join(f"((({_byte('a', i)} + {_byte('b', i)} + ((c >> {8 * i}) & 1)) >> 1) << {8 * i})" for i in range(4))}
SAD_U8 u32 u32 u32 u32 = c + {_sad8("a", "b")}
SAD_HI_U8 u32 u32 u32 u32 = (({_sad8("a", "b")}) << 16) + c
SAD_U16 u32 u32 u32 u32 = c + {_absdiff("(a & 0xffff)", "(b & 0xffff)")} + {_absdiff("(a >> 16)", "(b >> 16)")}
MSAD_U8 u32 u32 u32 u32 = c + {_sad8("a", "b", True)}
QSAD_PK_U16_U8 b64 b64 u32 b64 = {_qsad(False, 16)}
MQSAD_PK_U16_U8 b64 b64 u32 b64 = {_qsad(True, 16)}
MQSAD_U32_U8 b32 a:b64 b:u32 c0:u32 c1:u32 c2:u32 c3:u32 = {_qsad(True, 32)}
CVT_PK_I16_F32 b32 f32 f32 = {_pk16("cvt_int(a, -2**15, 2**15 - 1)", "cvt_int(b, -2**15, 2**15 - 1)")}
CVT_PK_U16_F32 b32 f32 f32 = {_pk16("cvt_int(a, 0, 2**16 - 1)", "cvt_int(b, 0, 2**16 - 1)")}
CVT_PK_I16_I32 b32 i32 i32 = {_pk16("min(max(a, -2**15), 2**15 - 1)", "min(max(b, -2**15), 2**15 - 1)")}
CVT_PK_U16_U32 b32 u32 u32 = {_pk16("min(a, 2**16 - 1)", "min(b, 2**16 - 1)")}
CVT_PK_NORM_I16_{{F16,F32}} b32 T T = {_pk16(_norm("a", True), _norm("b", True))}
CVT_PK_NORM_U16_{{F16,F32}} b32 T T = {_pk16(_norm("a", False), _norm("b", False))}
CVT_NORM_I16_F16 i16 f16 = i16({_norm("a", True)})
CVT_NORM_U16_F16 u16 f16 = u16({_norm("a", False)})
CVT_PK_U8_F32 b32 f32 u32 u32 = {_CVT_PK_U8}
SAT_PK_U8_I16 u16 u32 = u16(min(max(i16(a), 0), 255)) | (u16(min(max(i16(a >> 16), 0), 255)) << 8)
CVT_OFF_F32_I4 f32 u32 = f32(sext(a, 4)) * f32(0.0625)
FREXP_MANT_F16 f16 f16 = frexp_mant(a)
FREXP_EXP_I16_F16 i16 f16 = i16(frexp_exp(a))
"""))

# *** dot products: v_dot2 of f16/bf16 pairs into f16/bf16 (the pseudocode's products and sums each rounded to the
# format; rbf16 rounds an f32 to bf16), v_dot4/v_dot8 of bytes/nibbles into 32 bits ***
VOP.update(table("""
DOT2_F16_F16 f16 a0:f16 b0:f16 a1:f16 b1:f16 c:f16 = t = c + a0 * b0; d = t + a1 * b1
DOT2_BF16_BF16 bf16 a0:bf16 b0:bf16 a1:bf16 b1:bf16 c:bf16 = t = rbf16(c + rbf16(a0 * b0)); d = t + rbf16(a1 * b1)
"""))

# the _IU forms' row per NEG[1:0] (bit i set: source i's elements are signed), e.g. DOT4_I32_IU8_SU
DOT_SIGNS = {0: "", 1: "_SU", 2: "_US", 3: "_SS"}

def _dot_sum(n:int, bits:int, signed:tuple[bool, bool]) -> str:
  """S2 plus the n products of the bits-wide elements of S0 and S1, exactly (i64)."""
  def el(x:str, i:int, sgn:bool) -> str:
    v = f"({x} >> {bits * i})" if i else x
    return f"sext({v}, {bits})" if sgn else f"i64({v} & {(1 << bits) - 1})"
  return "i64(c) + " + " + ".join(f"{el('a', i, signed[0])} * {el('b', i, signed[1])}" for i in range(n))

def _dots(clamp:bool) -> dict:
  rows = []
  for n, bits in ((4, 8), (8, 4)):
    s = _dot_sum(n, bits, (False, False))
    rows.append(f"DOT{n}_U32_U{bits} u32 u32 u32 u32 = u32({f'min({s}, 2**32 - 1)' if clamp else s})")
    for signs, suffix in DOT_SIGNS.items():
      s = _dot_sum(n, bits, (bool(signs & 1), bool(signs & 2)))
      rows.append(f"DOT{n}_I32_IU{bits}{suffix} i32 u32 u32 i32 = i32({f'min(max({s}, -2**31), 2**31 - 1)' if clamp else s})")
  return table("\n".join(rows))
VOP.update(_dots(False))

# *** v_trig_preop_f64: a 53-bit segment of 2/pi for the argument reduction of sin/cos (numpy_runtime.trig_preop) ***
VOP.update(table("""
TRIG_PREOP_F64 f64 f64 u32 = trig_preop(a, b)
"""))

# *** cube maps, v_mullit ***
_MAJOR_Z, _MAJOR_Y = "(abs(c) >= abs(a) and abs(c) >= abs(b))", "(abs(b) >= abs(a))"
_CUBEID = (f"(f32(5.0) if c < 0 else f32(4.0)) if {_MAJOR_Z} else "
           f"((f32(3.0) if b < 0 else f32(2.0)) if {_MAJOR_Y} else (f32(1.0) if a < 0 else f32(0.0)))")
VOP.update(table(f"""
CUBEID_F32 f32 f32 f32 f32 = {_CUBEID}
CUBESC_F32 f32 f32 f32 f32 = (-a if c < 0 else a) if {_MAJOR_Z} else (a if {_MAJOR_Y} else (c if a < 0 else -c))
CUBETC_F32 f32 f32 f32 f32 = -b if {_MAJOR_Z} else ((-c if b < 0 else c) if {_MAJOR_Y} else -b)
CUBEMA_F32 f32 f32 f32 f32 = (c if {_MAJOR_Z} else (b if {_MAJOR_Y} else a)) * f32(2.0)
MULLIT_F32 f32 f32 f32 f32 = f32(-3.4028234663852886e+38) if (b <= f32(-3.4028234663852886e+38) or isnan(b) or c <= 0 or isnan(c)) else a * b
"""))

# integer ops whose clamp bit saturates instead of wrapping (computed in i64; a carry-out stays the carry of the
# unsaturated result; v_mad_u64_u32/v_mad_i64_i32 saturate where their 64-bit sum overflows)
def _sat(x:str, t:str) -> str:
  lo, hi = {"u16": (0, "2**16 - 1"), "i16": ("-2**15", "2**15 - 1"), "u32": (0, "2**32 - 1"), "i32": ("-2**31", "2**31 - 1")}[t]
  return f"min(max({x}, {lo}), {hi})"
_NC_SAT = "\n".join(f"{op}_NC_{t.upper()} {t} {t} {t} = {_sat(f'i64(a) {sign} i64(b)', t)}"
                    for op, sign in (("ADD", "+"), ("SUB", "-")) for t in ("u16", "i16", "u32", "i32"))
_MAD_I64_SAT = ("p = i64(a) * i64(b); s = p + i64(c); ov = (p < 0) == (i64(c) < 0) and (s < 0) != (p < 0); vcc = (s < 0) != ov; "
                "d = u64((i64(2**63 - 1) if p >= 0 else i64(-2**63)) if ov else s)")
CLAMPED = table(f"""
{_NC_SAT}
SUBREV_NC_U32 u32 u32 u32 = {_sat("i64(b) - i64(a)", "u32")}
ADD_CO_U32 u32 u32 u32 = s = i64(a) + i64(b); d = min(s, 2**32 - 1); vcc = s > 2**32 - 1
SUB_CO_U32 u32 u32 u32 = s = i64(a) - i64(b); d = max(s, 0); vcc = s < 0
SUBREV_CO_U32 u32 u32 u32 = s = i64(b) - i64(a); d = max(s, 0); vcc = s < 0
ADD_CO_CI_U32 u32 u32 u32 = s = i64(a) + i64(b) + i64(vcc); d = min(s, 2**32 - 1); vcc = s > 2**32 - 1
SUB_CO_CI_U32 u32 u32 u32 = s = i64(a) - i64(b) - i64(vcc); d = max(s, 0); vcc = s < 0
SUBREV_CO_CI_U32 u32 u32 u32 = s = i64(b) - i64(a) - i64(vcc); d = max(s, 0); vcc = s < 0
{chr(10).join(f"MAD_{t.upper()} {t} {t} {t} {t} = {_sat('i64(a) * i64(b) + i64(c)', t)}" for t in ("u16", "i16"))}
MAD_U32_U16 u32 u16 u16 u32 = {_sat("i64(a) * i64(b) + i64(c)", "u32")}
MAD_I32_I16 i32 i16 i16 i32 = {_sat("i64(a) * i64(b) + i64(c)", "i32")}
MAD_U32_U24 u32 u32 u32 u32 = {_sat("i64(a & 0xffffff) * i64(b & 0xffffff) + i64(c)", "u32")}
MAD_I32_I24 u32 u32 u32 u32 = u32({_sat("sext(a, 24) * sext(b, 24) + sext(c, 32)", "i32")})
MUL_U32_U24 u32 u32 u32 = {_sat("i64(a & 0xffffff) * i64(b & 0xffffff)", "u32")}
MUL_I32_I24 u32 u32 u32 = u32({_sat("sext(a, 24) * sext(b, 24)", "i32")})
MAD_U64_U32 u64 u32 u32 u64 = p = u64(a) * u64(b); s = p + c; vcc = s < p; d = ~u64(0) if vcc else s
MAD_I64_I32 u64 i32 i32 u64 = {_MAD_I64_SAT}
SAD_U8 u32 u32 u32 u32 = {_sat(f"i64(c) + i64({_sad8('a', 'b')})", "u32")}
SAD_HI_U8 u32 u32 u32 u32 = {_sat(f"(i64({_sad8('a', 'b')}) << 16) + i64(c)", "u32")}
SAD_U16 u32 u32 u32 u32 = {_sat(f"i64(c) + i64({_absdiff('(a & 0xffff)', '(b & 0xffff)')} + {_absdiff('(a >> 16)', '(b >> 16)')})", "u32")}
SAD_U32 u32 u32 u32 u32 = {_sat(f"i64(c) + i64({_absdiff('a', 'b')})", "u32")}
MSAD_U8 u32 u32 u32 u32 = {_sat(f"i64(c) + i64({_sad8('a', 'b', True)})", "u32")}
QSAD_PK_U16_U8 b64 b64 u32 b64 = {_qsad(False, 16, True)}
MQSAD_PK_U16_U8 b64 b64 u32 b64 = {_qsad(True, 16, True)}
MQSAD_U32_U8 b32 a:b64 b:u32 c0:u32 c1:u32 c2:u32 c3:u32 = {_qsad(True, 32, True)}
""")

CLAMPED.update(_dots(True))

# what the comparisons of V_CMP*, V_CMPX* and S_CMP* compute, by condition; the types come from the name
FCMP = {"F": "False", "LT": "a < b", "EQ": "a == b", "LE": "a <= b", "GT": "a > b", "LG": "(a < b) or (a > b)",
        "GE": "a >= b", "O": "not (isnan(a) or isnan(b))", "U": "isnan(a) or isnan(b)", "NGE": "not (a >= b)",
        "NLG": "not ((a < b) or (a > b))", "NGT": "not (a > b)", "NLE": "not (a <= b)", "NEQ": "a != b",
        "NLT": "not (a < b)", "T": "True"}
ICMP = {"F": "False", "LT": "a < b", "EQ": "a == b", "LE": "a <= b", "GT": "a > b", "NE": "a != b", "LG": "a != b",
        "GE": "a >= b", "T": "True"}
CMP_TYPES = {"F16": "f16", "F32": "f32", "F64": "f64", "I16": "i16", "I32": "i32", "I64": "i64", "U16": "u16",
             "U32": "u32", "U64": "u64"}

def _compares(out:str, kinds:tuple[str, ...]) -> dict:
  lines = []
  for suffix, t in CMP_TYPES.items():
    for cond, expr in (FCMP if t[0] == "f" else ICMP).items():
      lines += [f"{k}_{cond}_{suffix} - {t} {t} = {out} = {expr}" for k in kinds]
    # the class mask: bits 9:0 of a 16-bit operand for f16 (so a true16 name v[128+n] reads v[n]'s high half)
    if t[0] == "f": lines += [f"{k}_CLASS_{suffix} - {t} {'u16' if t == 'f16' else 'u32'} = {out} = cmp_class(a, b)" for k in kinds]
  return table("\n".join(lines))

VOP.update(_compares("vcc", ("CMP", "CMPX")))

# VOP ops whose last source is the destination register itself (accumulators)
ACCUMULATE = {"FMAC_F32", "FMAC_F16", "FMAC_DX9_ZERO_F32"}
# VOP ops with a literal constant K in the instruction: K is their third source
LITERAL_K = {"FMAMK_F32", "FMAAK_F32", "FMAMK_F16", "FMAAK_F16"}
# b32 ops whose neg/abs source modifiers make them f32 ops (v_cndmask_b32 with modifiers selects between floats)
FLOAT_MODS = {"CNDMASK_B32"}

# packed 16-bit math (VOP3P): each row is one half, run on the low halves and on the high halves
PACKED = table("""
PK_ADD_F16 f16 f16 f16 = a + b
PK_MUL_F16 f16 f16 f16 = a * b
PK_FMA_F16 f16 f16 f16 f16 = fma(a, b, c)
PK_MAX_F16 f16 f16 f16 = fmax(a, b, ieee)
PK_MIN_F16 f16 f16 f16 = fmin(a, b, ieee)
PK_ADD_U16 u16 u16 u16 = a + b
PK_SUB_U16 u16 u16 u16 = a - b
PK_ADD_I16 i16 i16 i16 = a + b
PK_SUB_I16 i16 i16 i16 = a - b
PK_MUL_LO_U16 u16 u16 u16 = a * b
PK_MAD_U16 u16 u16 u16 u16 = a * b + c
PK_MAD_I16 i16 i16 i16 i16 = a * b + c
PK_LSHLREV_B16 u16 u16 u16 = b << (a & 15)
PK_LSHRREV_B16 u16 u16 u16 = b >> (a & 15)
PK_ASHRREV_I16 i16 i16 i16 = b >> (a & 15)
PK_MAX_I16 i16 i16 i16 = max(a, b)
PK_MIN_I16 i16 i16 i16 = min(a, b)
PK_MAX_U16 u16 u16 u16 = max(a, b)
PK_MIN_U16 u16 u16 u16 = min(a, b)
""")

# packed integer ops whose clamp bit saturates each half (min/max cannot leave the range: their rows serve); the f16
# ones clamp each half to [0, 1]
PACKED_CLAMPED = {**{n: PACKED[n] for n in ("PK_MAX_I16", "PK_MIN_I16", "PK_MAX_U16", "PK_MIN_U16")}, **table(chr(10).join(
  [f"PK_{op}_{t.upper()} {t} {t} {t} = {_sat(f'i64(a) {sign} i64(b)', t)}" for op, sign in (("ADD", "+"), ("SUB", "-")) for t in ("u16", "i16")] +
  [f"PK_MAD_{t.upper()} {t} {t} {t} {t} = {_sat('i64(a) * i64(b) + i64(c)', t)}" for t in ("u16", "i16")] +
  [f"PK_MUL_LO_U16 u16 u16 u16 = {_sat('i64(a) * i64(b)', 'u16')}"]))}

SOP = table("""
MOV_{B32,B64} T T = a
NOT_{B32,B64} T T = d = ~a; scc = d != 0
BREV_B32 u32 u32 = brev32(a)
BREV_B64 u64 u64 = brev64(a)
CTZ_I32_B32 u32 u32 = ctz(a)
CLZ_I32_U32 u32 u32 = clz(a)
CLZ_I32_U64 u32 u64 = clz64(a)
CTZ_I32_B64 u32 u64 = ctz64(a)
CLS_I32 u32 u32 = cls32(a)
SEXT_I32_I8 u32 u32 = u32(sext(a, 8))
SEXT_I32_I16 u32 u32 = u32(sext(a, 16))
ABS_I32 i32 i32 = d = abs(a); scc = d != 0
BCNT1_I32_{B32,B64} u32 T = d = popcount(a); scc = d != 0
BCNT0_I32_B32 u32 u32 = d = 32 - popcount(a); scc = d != 0
BCNT0_I32_B64 u32 u64 = d = 64 - popcount(a); scc = d != 0
QUADMASK_{B32,B64} T T = d = quadmask(a); scc = d != 0
WQM_{B32,B64} T T = d = wqm(a); scc = d != 0
BITSET0_B32 u32 u32 = d & ~(u32(1) << (a & 31))
BITSET1_B32 u32 u32 = d | (u32(1) << (a & 31))
BITSET0_B64 u64 u32 = d & ~(u64(1) << u64(a & 63))
BITSET1_B64 u64 u32 = d | (u64(1) << u64(a & 63))
ADD_U32 u32 u32 u32 = d = a + b; scc = d < a
SUB_U32 u32 u32 u32 = d = a - b; scc = b > a
ADD_I32 i32 i32 i32 = d = a + b; scc = ((a < 0) == (b < 0)) and ((d < 0) != (a < 0))
SUB_I32 i32 i32 i32 = d = a - b; scc = ((a < 0) != (b < 0)) and ((d < 0) != (a < 0))
ADDC_U32 u32 u32 u32 = d = a + b + scc; scc = (u64(a) + b + scc) >= 2**32
SUBB_U32 u32 u32 u32 = d = a - b - scc; scc = u64(b) + scc > a
ABSDIFF_I32 i32 i32 i32 = d = abs(a - b); scc = d != 0
LSHL_B32 u32 u32 u32 = d = a << (b & 31); scc = d != 0
LSHR_B32 u32 u32 u32 = d = a >> (b & 31); scc = d != 0
ASHR_I32 i32 i32 u32 = d = a >> i32(b & 31); scc = d != 0
LSHL_B64 u64 u64 u32 = d = a << u64(b & 63); scc = d != 0
LSHR_B64 u64 u64 u32 = d = a >> u64(b & 63); scc = d != 0
ASHR_I64 i64 i64 u32 = d = a >> i64(b & 63); scc = d != 0
LSHL1_ADD_U32 u32 u32 u32 = d = (a << 1) + b; scc = (u64(a) << 1) + b >= 2**32
LSHL2_ADD_U32 u32 u32 u32 = d = (a << 2) + b; scc = (u64(a) << 2) + b >= 2**32
LSHL3_ADD_U32 u32 u32 u32 = d = (a << 3) + b; scc = (u64(a) << 3) + b >= 2**32
LSHL4_ADD_U32 u32 u32 u32 = d = (a << 4) + b; scc = (u64(a) << 4) + b >= 2**32
MIN_{I32,U32} T T T = d = min(a, b); scc = a < b
MAX_{I32,U32} T T T = d = max(a, b); scc = a >= b
AND_{B32,B64} T T T = d = a & b; scc = d != 0
OR_{B32,B64} T T T = d = a | b; scc = d != 0
XOR_{B32,B64} T T T = d = a ^ b; scc = d != 0
NAND_{B32,B64} T T T = d = ~(a & b); scc = d != 0
NOR_{B32,B64} T T T = d = ~(a | b); scc = d != 0
XNOR_{B32,B64} T T T = d = ~(a ^ b); scc = d != 0
AND_NOT1_{B32,B64} T T T = d = a & ~b; scc = d != 0
OR_NOT1_{B32,B64} T T T = d = a | ~b; scc = d != 0
BFE_U32 u32 u32 u32 = d = bfe(a, b, b >> 16, False, 7); scc = d != 0
BFE_I32 u32 u32 u32 = d = bfe(a, b, b >> 16, True, 7); scc = d != 0
BFE_U64 u64 u64 u32 = d = bfe64(a, b, False); scc = d != 0
BFE_I64 u64 u64 u32 = d = bfe64(a, b, True); scc = d != 0
BFM_B32 u32 u32 u32 = ((u32(1) << (a & 31)) - u32(1)) << (b & 31)
BFM_B64 u64 u32 u32 = ((u64(1) << u64(a & 63)) - u64(1)) << u64(b & 63)
MUL_I32 u32 u32 u32 = a * b
MUL_HI_U32 u32 u32 u32 = u32((u64(a) * u64(b)) >> 32)
MUL_HI_I32 u32 i32 i32 = u32((i64(a) * i64(b)) >> 32)
PACK_LL_B32_B16 u32 u32 u32 = (a & 0xffff) | (b << 16)
PACK_LH_B32_B16 u32 u32 u32 = (a & 0xffff) | (b & 0xffff0000)
PACK_HH_B32_B16 u32 u32 u32 = (a >> 16) | (b & 0xffff0000)
PACK_HL_B32_B16 u32 u32 u32 = (a >> 16) | (b << 16)
CSELECT_{B32,B64} T T T = a if scc != 0 else b
CMOV_{B32,B64} T T = a if scc != 0 else d
BITCMP0_B32 - u32 u32 = scc = ((a >> (b & 31)) & 1) == 0
BITCMP1_B32 - u32 u32 = scc = ((a >> (b & 31)) & 1) == 1
BITCMP0_B64 - u64 u32 = scc = ((a >> u64(b & 63)) & 1) == 0
BITCMP1_B64 - u64 u32 = scc = ((a >> u64(b & 63)) & 1) == 1
MOVK_I32 u32 u32 = a
CMOVK_I32 u32 u32 = a if scc != 0 else d
ADDK_I32 i32 i32 = r = d + a; scc = ((d < 0) == (a < 0)) and ((r < 0) != (d < 0)); d = r
MULK_I32 i32 i32 = d * a
GETPC_B64 u64 = pc + 4
""")

# s_*_saveexec: D gets the old EXEC, EXEC the op of S0 and the old EXEC, SCC whether the new EXEC is not zero
_SAVEEXEC = {"AND": "a & exec", "OR": "a | exec", "XOR": "a ^ exec", "NAND": "~(a & exec)", "NOR": "~(a | exec)",
             "XNOR": "~(a ^ exec)", "AND_NOT0": "~a & exec", "OR_NOT0": "~a | exec", "AND_NOT1": "a & ~exec",
             "OR_NOT1": "a | ~exec"}
SOP.update(table("\n".join(f"{op}_SAVEEXEC_B{w} u{w} u{w} = d = exec; exec = {e}; scc = exec != 0"
                           for op, e in _SAVEEXEC.items() for w in (32, 64))))
# s_*_wrexec: EXEC the op of S0 and EXEC, D the new EXEC, SCC whether it is not zero
SOP.update(table("\n".join(f"{op}_WREXEC_B{w} u{w} u{w} = exec = {_SAVEEXEC[op]}; d = exec; scc = exec != 0"
                           for op in ("AND_NOT0", "AND_NOT1") for w in (32, 64))))
_BITREPLICATE = ("x = u64(a); x = (x | (x << 16)) & 0x0000ffff0000ffff; x = (x | (x << 8)) & 0x00ff00ff00ff00ff; "
                 "x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0f; x = (x | (x << 2)) & 0x3333333333333333; x = (x | (x << 1)) & 0x5555555555555555; "
                 "d = x | (x << 1)")
SOP.update(table(f"""
CLS_I32_I64 u32 u64 = clz64(~a if (a >> 63) == 1 else a)
BITREPLICATE_B64_B32 u64 u32 = {_BITREPLICATE}
"""))
SOP.update(_compares("scc", ("CMP",)))
# s_cmpk_*: the comparison of S_CMP with the 16-bit immediate as its second source
SOP.update({f"CMPK_{n[4:]}": r for n, r in SOP.items() if n.startswith("CMP_") and n.endswith(("_I32", "_U32"))})

# read-modify-write memory ops (DS, FLAT/GLOBAL and buffer atomics): `old` is the memory word's value before the op,
# a its DATA and b its second operand (DS's DATA2, a cmpswap's compare half); d is what memory gets, and the _RTN forms
# (and FLAT/GLOBAL/buffer atomics with GLC) return old. Lanes of one instruction hitting one word apply in lane order,
# the waves of a dispatch in wave order. min/max of floats are the manual's compare-and-select (a NaN on either side
# keeps the memory word, a signalling NaN unquieted), not v_min/v_max's IEEE-mode rule
ATOMIC = table("""
ADD_{U32,U64,F32} T old:T a:T = old + a
SUB_{U32,U64} T old:T a:T = old - a
RSUB_{U32,U64} T old:T a:T = a - old
MIN_{I32,U32,I64,U64} T old:T a:T = min(old, a)
MAX_{I32,U32,I64,U64} T old:T a:T = max(old, a)
MIN_{F32,F64} T old:T a:T = a if a < old else old
MAX_{F32,F64} T old:T a:T = a if a > old else old
AND_{B32,B64} T old:T a:T = old & a
OR_{B32,B64} T old:T a:T = old | a
XOR_{B32,B64} T old:T a:T = old ^ a
INC_{U32,U64} T old:T a:T = 0 if old >= a else old + 1
DEC_{U32,U64} T old:T a:T = a if old == 0 or old > a else old - 1
MSKOR_{B32,B64} T old:T a:T b:T = (old & ~a) | b
CMPSTORE_{B32,B64,F32,F64} T old:T a:T b:T = a if old == b else old
STOREXCHG_{B32,B64} T old:T a:T = a
WRAP_B32 u32 old:u32 a:u32 b:u32 = old - a if old >= a else old + b
CSUB_U32 u32 old:u32 a:u32 = 0 if old < a else old - a
CONDXCHG32_B32 u32 old:u32 a:u32 = (a & 0x7fffffff) if (a >> 31) != 0 else old
""")
# FLAT/GLOBAL/buffer names of the same rows (global_atomic_swap_b32 is ds_storexchg_rtn_b32's row; cmpswap's DATA holds
# the new value in its low half and the compare value in its high half, ds_cmpstore's DATA and DATA2)
ATOMIC_ALIASES = {"SWAP": "STOREXCHG", "CMPSWAP": "CMPSTORE"}
# rows that are old (+) a for an associative (+): conflicting lanes may be applied as a prefix scan of (+) over their data
# (the numpy backend's log-step scan) with the same result as one after another (tests/compiler/rdna/test_rdna_atomics.py checks it)
ASSOCIATIVE = frozenset({"ADD_U32", "ADD_U64", "MIN_I32", "MIN_U32", "MIN_I64", "MIN_U64", "MAX_I32", "MAX_U32", "MAX_I64",
                         "MAX_U64", "AND_B32", "AND_B64", "OR_B32", "OR_B64", "XOR_B32", "XOR_B64", "STOREXCHG_B32",
                         "STOREXCHG_B64"})

# instructions mockgpu does not model, by encoding or name prefix, with the reason (operands.lower raises it; the
# conformance report lists them): graphics-pipeline state a compute dispatch does not have, or GDS/GWS state outside it
UNMODELLED = {
  "MIMG": "image instructions: no image resources (T#) or samplers (S#) are modelled; tinygrad's AMD backend uses none",
  "EXP": "exports go to the graphics pipeline's render targets and position buffers, which a compute dispatch lacks",
  "LDSDIR": "LDS parameter and direct loads feed pixel-shader attribute interpolation from the SPI, which a compute "
            "dispatch lacks (the manual gives LDS_PARAM_LOAD no pseudocode): the attribute data they read is written by "
            "the graphics pipeline's primitive setup, so there is nothing for a compute kernel to load",
  "MTBUF": "typed buffer access: the conversions of the instruction's FORMAT field are not modelled (MUBUF raw access is)",
  "DS_GWS_": "global wave sync: a resource shared across dispatches (GWS), not modelled",
  "DS_APPEND": "append/consume counters live in GDS (M0 names a GDS word), not modelled",
  "DS_CONSUME": "append/consume counters live in GDS (M0 names a GDS word), not modelled",
  "DS_ORDERED_COUNT": "ordered count: a GDS counter ordered across waves by the dispatcher, not modelled",
  "DS_ADD_GS_REG_RTN": "geometry-shader stream-out registers (GS_REG), which a compute dispatch lacks",
  "DS_SUB_GS_REG_RTN": "geometry-shader stream-out registers (GS_REG), which a compute dispatch lacks",
  "DS_BVH_STACK_RTN_B32": "the ray-tracing traversal stack (paired with IMAGE_BVH_INTERSECT_RAY), not modelled",
  "GLOBAL_LOAD_LDS_": "LDS DMA (memory to LDS at M0): the manual gives no pseudocode; not modelled",
  "SCRATCH_LOAD_LDS_": "LDS DMA (memory to LDS at M0): the manual gives no pseudocode; not modelled",
  "BUFFER_LOAD_LDS_": "LDS DMA (memory to LDS at M0): the manual gives no pseudocode; not modelled",
}

# v_wmma_*: (A/B element kind, C/D kind, VGPRs of A and of B, VGPRs of C and D); the layout and the exact sum are
# numpy_runtime.wmma's (WMMA_LAYOUT): lanes 16-31 replicate lanes 0-15
WMMA = {"WMMA_F32_16X16X16_F16": ("f16", "f32", 8, 8), "WMMA_F32_16X16X16_BF16": ("bf16", "f32", 8, 8),
        "WMMA_F16_16X16X16_F16": ("f16", "f16", 8, 8), "WMMA_I32_16X16X16_IU8": ("iu8", "i32", 4, 8),
        "WMMA_BF16_16X16X16_BF16": ("bf16", "bf16", 8, 8), "WMMA_I32_16X16X16_IU4": ("iu4", "i32", 2, 8)}
WMMA_LAYOUT = "rdna3"

# what later families change (semantics/rdna4.py): RDNA3 renames nothing, has no extra no-ops, no sub-dword SMEM
# loads, no op reading a source's high half by name; what a dispatch's set-up reads (the workgroup IDs' registers, the
# scratch slot, the IEEE mode bit, the VGPR granule, GFX9) is semantics/family_setup.py's, a dispatch of a cached kernel reading
# no table
ALIASES:dict[str, str] = {}
NOOPS:frozenset[str] = frozenset()
SMEM_KINDS:dict[str, str] = {}
HIGH_HALF:set[str] = set()
TTMP_WORKGROUP_IDS, TMPRING_WAVESIZE_BITS = _SETUP.TTMP_WORKGROUP_IDS, _SETUP.TMPRING_WAVESIZE_BITS
TMPRING_WAVESIZE_UNIT = _SETUP.TMPRING_WAVESIZE_UNIT
# what the GFX9 family (semantics/cdna.py) changes: its encodings (operands._gfx9), COMPUTE_TMPRING_SIZE.WAVESIZE in 1 KiB
# units (RDNA: 256 bytes), e32 16-bit operands v[128+n] as VGPRs (RDNA3: high halves, errata true16-e32), 16-bit results
# zeroing bits 31:16 (RDNA: kept), MFMA forms
GFX9 = _SETUP.GFX9
TRUE16_E32 = True
HIGH16_ZEROED:frozenset[str] = frozenset()
MFMA:frozenset[str] = frozenset()
PACKED_F32:dict[str, str] = {}  # GFX9's v_pk_*_f32 (semantics/cdna.py)
FP8 = None  # the fp8/bf8 formats of the MFMA forms (semantics/cdna.py)
IEEE_MODE_BIT = _SETUP.IEEE_MODE_BIT   # RSRC1's ENABLE_IEEE_MODE (family_setup.py): MODE.IEEE, errata omod-ieee
# the SGPRs an M0-relative index (s_movrel*) may reach: s0..s105 (VCC, the trap temporaries, M0 and EXEC are not in the
# indexed file); the bits of s_trap's SIMM16 that are its trap ID (RDNA3: [7:0])
SGPRS = 106
TRAP_ID_BITS = 8
VGPR_GRANULES = _SETUP.VGPR_GRANULES

# *** instructions of tinygrad's RDNA3 tables that mockgpu does not execute, each with the reason: operands.lower
# raises UnsupportedInstruction (InvalidInstruction where the reason starts "invalid instruction: ") naming it and its
# PC; tests/conformance_report.py lists them. Keys are instruction names without _E32/_E64. ***
SALU_FLOAT_WHY = ("invalid instruction: RDNA3.5 (gfx115x) scalar float op: the RDNA3 boards of boards.py (gfx110x) do not decode it (RDNA4 "
               "executes it: semantics/rdna4.py)")
_NOT_EXECUTED_WHY = {
  SALU_FLOAT_WHY: [f"S_{op}_{t}" for op in ("ADD", "SUB", "MIN", "MAX", "MUL", "FMAC") for t in ("F32", "F16")] +
    ["S_FMAAK_F32", "S_FMAMK_F32", "S_CVT_PK_RTZ_F16_F32", "S_CVT_F32_I32", "S_CVT_F32_U32", "S_CVT_I32_F32", "S_CVT_U32_F32",
     "S_CVT_F16_F32", "S_CVT_F32_F16", "S_CVT_HI_F32_F16"] + [f"S_{op}_{t}" for op in ("CEIL", "FLOOR", "TRUNC", "RNDNE") for t in ("F32", "F16")],
  "a return from the trap handler: no trap handler runs here (s_trap stops the dispatch as KFD's handler does, "
  "errors.KernelTrap), so no wave is ever in one to return": ["S_RFE_B64"],
  "executed s_code_end: the padding after s_endpgm (the program ran past its end)": ["S_CODE_END"],
  "debugger state (halt, kill, the host debugger's CDBG bits) is not modelled":
    ["S_SETHALT", "S_SETKILL", "S_SENDMSGHALT", "S_CBRANCH_CDBGSYS", "S_CBRANCH_CDBGUSER", "S_CBRANCH_CDBGSYS_OR_USER",
     "S_CBRANCH_CDBGSYS_AND_USER"],
  "the message bus (doorbell ID, real time, TMA) has no modelled source for a returned value": ["S_SENDMSG_RTN_B32", "S_SENDMSG_RTN_B64"],
  "graphics and context-save program ends (pixel-shader ordering, CWSR) are not modelled": ["S_ENDPGM_SAVED", "S_ENDPGM_ORDERED_PS_DONE"],
  "graphics export events are not modelled": ["S_WAIT_EVENT"],
  "subvector looping (a wave64 run as two wave32 halves in a loop) is not modelled": ["S_SUBVECTOR_LOOP_BEGIN", "S_SUBVECTOR_LOOP_END"],
}
NOT_EXECUTED:dict[str, str] = {name: why for why, names in _NOT_EXECUTED_WHY.items() for name in names}
