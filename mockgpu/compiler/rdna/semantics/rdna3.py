"""What each RDNA3 ALU instruction computes, as numpy expressions over typed operands.

Vector ops: `VOP[name] = (dst type, source types, expression)`; the expression uses a, b, c (the typed sources,
arrays [waves, 32] or broadcastable) and the helpers of backends/numpy_runtime.py. Names drop the V_ prefix and the _E32/_E64 suffix,
so one entry serves the VOP1/VOP2/VOP3/VOPD encodings of an op. Scalar ops: `SOP[name] = (dst type, source types,
expression, SCC expression or None)` over [waves] arrays. Types: b32 u32 i32 f32, b16 u16 i16 f16, b64 u64 i64 f64.
Comparisons (V_CMP*, V_CMPX*, S_CMP*) are derived from their names by compare_expr().
"""
from __future__ import annotations

def _table(text:str) -> dict[str, tuple]:
  out = {}
  for line in text.strip().splitlines():
    head, expr = line.split("=", 1)
    name, *types = head.split()
    out[name] = (types[0], tuple(types[1:]), expr.strip())
  return out

VOP = _table("""
MOV_B32 b32 b32 = a
NOT_B32 b32 b32 = ~a
MOV_B16 b16 b16 = a
NOT_B16 u16 u16 = ~a
BFREV_B32 b32 b32 = brev32(a)
CLZ_I32_U32 u32 u32 = clz(a)
CTZ_I32_B32 u32 u32 = ctz(a)
CLS_I32 u32 u32 = cls32(a)
ADD_F32 f32 f32 f32 = a + b
SUB_F32 f32 f32 f32 = a - b
SUBREV_F32 f32 f32 f32 = b - a
MUL_F32 f32 f32 f32 = a * b
MUL_DX9_ZERO_F32 f32 f32 f32 = np.where((a == 0) | (b == 0), f32(0), a * b)
FMA_F32 f32 f32 f32 f32 = fma32(a, b, c)
FMAC_F32 f32 f32 f32 f32 = fma32(a, b, c)
FMA_DX9_ZERO_F32 f32 f32 f32 f32 = np.where((a == 0) | (b == 0), c, fma32(a, b, c))
FMAC_DX9_ZERO_F32 f32 f32 f32 f32 = np.where((a == 0) | (b == 0), c, fma32(a, b, c))
FMAMK_F32 f32 f32 f32 f32 = fma32(a, c, b)
FMAAK_F32 f32 f32 f32 f32 = fma32(a, b, c)
MAX_F32 f32 f32 f32 = fmax(a, b)
MIN_F32 f32 f32 f32 = fmin(a, b)
MAX3_F32 f32 f32 f32 f32 = fmax(fmax(a, b), c)
MIN3_F32 f32 f32 f32 f32 = fmin(fmin(a, b), c)
MED3_F32 f32 f32 f32 f32 = fmed3(a, b, c)
LDEXP_F32 f32 f32 i32 = ldexp(a, b)
EXP_F32 f32 f32 = exp2(a, f32)
LOG_F32 f32 f32 = log2(a, f32)
RCP_F32 f32 f32 = rcp(a, f32)
RCP_IFLAG_F32 f32 f32 = rcp(a, f32)
RSQ_F32 f32 f32 = rsq(a, f32)
SQRT_F32 f32 f32 = sqrt(a, f32)
SIN_F32 f32 f32 = sin_rev(a, f32)
COS_F32 f32 f32 = cos_rev(a, f32)
FLOOR_F32 f32 f32 = np.floor(a)
CEIL_F32 f32 f32 = np.ceil(a)
TRUNC_F32 f32 f32 = np.trunc(a)
RNDNE_F32 f32 f32 = np.rint(a)
FRACT_F32 f32 f32 = fract(a)
FREXP_MANT_F32 f32 f32 = frexp_mant(a)
FREXP_EXP_I32_F32 i32 f32 = frexp_exp(a)
DIV_FIXUP_F32 f32 f32 f32 f32 = div_fixup(a, b, c)
CVT_F32_I32 f32 i32 = a.astype(f32)
CVT_F32_U32 f32 u32 = a.astype(f32)
CVT_I32_F32 i32 f32 = cvt_int(a, -2**31, 2**31 - 1, i32)
CVT_U32_F32 u32 f32 = cvt_int(a, 0, 2**32 - 1, u32)
CVT_FLOOR_I32_F32 i32 f32 = cvt_int(np.floor(a), -2**31, 2**31 - 1, i32)
CVT_NEAREST_I32_F32 i32 f32 = cvt_int(np.floor(a + f32(0.5)), -2**31, 2**31 - 1, i32)
CVT_F16_F32 f16 f32 = a.astype(f16)
CVT_F32_F16 f32 f16 = a.astype(f32)
CVT_F64_F32 f64 f32 = a.astype(f64)
CVT_F32_F64 f32 f64 = a.astype(f32)
CVT_F64_I32 f64 i32 = a.astype(f64)
CVT_F64_U32 f64 u32 = a.astype(f64)
CVT_I32_F64 i32 f64 = cvt_int(a, -2**31, 2**31 - 1, i32)
CVT_U32_F64 u32 f64 = cvt_int(a, 0, 2**32 - 1, u32)
CVT_F32_UBYTE0 f32 u32 = (a & 0xff).astype(f32)
CVT_F32_UBYTE1 f32 u32 = ((a >> 8) & 0xff).astype(f32)
CVT_F32_UBYTE2 f32 u32 = ((a >> 16) & 0xff).astype(f32)
CVT_F32_UBYTE3 f32 u32 = (a >> 24).astype(f32)
CVT_PK_RTZ_F16_F32 b32 f32 f32 = fbits16(cvt_rtz_f16(a)) | (fbits16(cvt_rtz_f16(b)) << 16)
CVT_I16_F16 i16 f16 = cvt_int(a, -2**15, 2**15 - 1, i16)
CVT_U16_F16 u16 f16 = cvt_int(a, 0, 2**16 - 1, u16)
CVT_F16_I16 f16 i16 = a.astype(f16)
CVT_F16_U16 f16 u16 = a.astype(f16)
CVT_I32_I16 i32 i16 = a.astype(i32)
CVT_U32_U16 u32 u16 = a.astype(u32)
PACK_B32_F16 b32 f16 f16 = fbits16(a) | (fbits16(b) << 16)
ADD_NC_U32 u32 u32 u32 = a + b
SUB_NC_U32 u32 u32 u32 = a - b
SUBREV_NC_U32 u32 u32 u32 = b - a
ADD_NC_I32 i32 i32 i32 = a + b
SUB_NC_I32 i32 i32 i32 = a - b
MUL_LO_U32 u32 u32 u32 = a * b
MUL_HI_U32 u32 u32 u32 = mul_hi_u32(a, b)
MUL_HI_I32 u32 u32 u32 = mul_hi_i32(a, b)
MUL_U32_U24 u32 u32 u32 = (a & 0xffffff) * (b & 0xffffff)
MUL_HI_U32_U24 u32 u32 u32 = mul_hi_u32(a & 0xffffff, b & 0xffffff)
MUL_I32_I24 u32 u32 u32 = bits32(sext(a, 24) * sext(b, 24))
MUL_HI_I32_I24 u32 u32 u32 = bits32((sext(a, 24) * sext(b, 24)) >> 32)
MAD_U32_U24 u32 u32 u32 u32 = (a & 0xffffff) * (b & 0xffffff) + c
MAD_I32_I24 u32 u32 u32 u32 = bits32(sext(a, 24) * sext(b, 24) + sext(c, 32))
LSHLREV_B32 u32 u32 u32 = b << (a & 31)
LSHRREV_B32 u32 u32 u32 = b >> (a & 31)
ASHRREV_I32 i32 u32 i32 = b >> (a & 31).astype(i32)
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
SAD_U32 u32 u32 u32 u32 = np.where(a > b, a - b, b - a) + c
BFE_U32 u32 u32 u32 u32 = bfe(a, b, c, False)
BFE_I32 u32 u32 u32 u32 = bfe(a, b, c, True)
BFI_B32 u32 u32 u32 u32 = (a & b) | (~a & c)
BFM_B32 u32 u32 u32 = ((u32(1) << (a & 31)) - u32(1)) << (b & 31)
ALIGNBIT_B32 u32 u32 u32 u32 = lo32(r64(b, a) >> (c & 31).astype(u64))
ALIGNBYTE_B32 u32 u32 u32 u32 = lo32(r64(b, a) >> ((c & 3) * 8).astype(u64))
PERM_B32 u32 u32 u32 u32 = perm(a, b, c)
BCNT_U32_B32 u32 u32 u32 = popcount(a) + b
MAX_I32 i32 i32 i32 = np.maximum(a, b)
MIN_I32 i32 i32 i32 = np.minimum(a, b)
MAX_U32 u32 u32 u32 = np.maximum(a, b)
MIN_U32 u32 u32 u32 = np.minimum(a, b)
MAX3_I32 i32 i32 i32 i32 = np.maximum(np.maximum(a, b), c)
MIN3_I32 i32 i32 i32 i32 = np.minimum(np.minimum(a, b), c)
MAX3_U32 u32 u32 u32 u32 = np.maximum(np.maximum(a, b), c)
MIN3_U32 u32 u32 u32 u32 = np.minimum(np.minimum(a, b), c)
MED3_I32 i32 i32 i32 i32 = med3(a, b, c)
MED3_U32 u32 u32 u32 u32 = med3(a, b, c)
ADD_F64 f64 f64 f64 = a + b
MUL_F64 f64 f64 f64 = a * b
FMA_F64 f64 f64 f64 f64 = fma64(a, b, c)
MAX_F64 f64 f64 f64 = fmax(a, b)
MIN_F64 f64 f64 f64 = fmin(a, b)
LDEXP_F64 f64 f64 i32 = ldexp(a, b)
DIV_FIXUP_F64 f64 f64 f64 f64 = div_fixup(a, b, c)
RCP_F64 f64 f64 = rcp(a, f64)
RSQ_F64 f64 f64 = rsq(a, f64)
SQRT_F64 f64 f64 = sqrt(a, f64)
FLOOR_F64 f64 f64 = np.floor(a)
CEIL_F64 f64 f64 = np.ceil(a)
TRUNC_F64 f64 f64 = np.trunc(a)
RNDNE_F64 f64 f64 = np.rint(a)
FRACT_F64 f64 f64 = fract(a)
FREXP_MANT_F64 f64 f64 = frexp_mant(a)
FREXP_EXP_I32_F64 i32 f64 = frexp_exp(a)
LSHLREV_B64 u64 u32 u64 = b << (a & 63).astype(u64)
LSHRREV_B64 u64 u32 u64 = b >> (a & 63).astype(u64)
ASHRREV_I64 i64 u32 i64 = b >> (a & 63).astype(i64)
ADD_F16 f16 f16 f16 = a + b
SUB_F16 f16 f16 f16 = a - b
SUBREV_F16 f16 f16 f16 = b - a
MUL_F16 f16 f16 f16 = a * b
FMA_F16 f16 f16 f16 f16 = fma16(a, b, c)
FMAC_F16 f16 f16 f16 f16 = fma16(a, b, c)
FMAMK_F16 f16 f16 f16 f16 = fma16(a, c, b)
FMAAK_F16 f16 f16 f16 f16 = fma16(a, b, c)
MAX_F16 f16 f16 f16 = fmax(a, b)
MIN_F16 f16 f16 f16 = fmin(a, b)
MAX3_F16 f16 f16 f16 f16 = fmax(fmax(a, b), c)
MIN3_F16 f16 f16 f16 f16 = fmin(fmin(a, b), c)
MED3_F16 f16 f16 f16 f16 = fmed3(a, b, c)
LDEXP_F16 f16 f16 i16 = ldexp(a, b)
EXP_F16 f16 f16 = exp2(a, f16)
LOG_F16 f16 f16 = log2(a, f16)
RCP_F16 f16 f16 = rcp(a, f16)
RSQ_F16 f16 f16 = rsq(a, f16)
SQRT_F16 f16 f16 = sqrt(a, f16)
SIN_F16 f16 f16 = sin_rev(a, f16)
COS_F16 f16 f16 = cos_rev(a, f16)
FLOOR_F16 f16 f16 = np.floor(a)
CEIL_F16 f16 f16 = np.ceil(a)
TRUNC_F16 f16 f16 = np.trunc(a)
RNDNE_F16 f16 f16 = np.rint(a)
FRACT_F16 f16 f16 = fract(a)
DIV_FIXUP_F16 f16 f16 f16 f16 = div_fixup(a, b, c)
ADD_NC_U16 u16 u16 u16 = a + b
SUB_NC_U16 u16 u16 u16 = a - b
ADD_NC_I16 i16 i16 i16 = a + b
SUB_NC_I16 i16 i16 i16 = a - b
MUL_LO_U16 u16 u16 u16 = a * b
LSHLREV_B16 u16 u16 u16 = b << (a & 15)
LSHRREV_B16 u16 u16 u16 = b >> (a & 15)
ASHRREV_I16 i16 u16 i16 = b >> (a & 15).astype(i16)
MAX_U16 u16 u16 u16 = np.maximum(a, b)
MIN_U16 u16 u16 u16 = np.minimum(a, b)
MAX_I16 i16 i16 i16 = np.maximum(a, b)
MIN_I16 i16 i16 i16 = np.minimum(a, b)
MAX3_U16 u16 u16 u16 u16 = np.maximum(np.maximum(a, b), c)
MIN3_U16 u16 u16 u16 u16 = np.minimum(np.minimum(a, b), c)
MED3_U16 u16 u16 u16 u16 = med3(a, b, c)
MAX3_I16 i16 i16 i16 i16 = np.maximum(np.maximum(a, b), c)
MIN3_I16 i16 i16 i16 i16 = np.minimum(np.minimum(a, b), c)
MED3_I16 i16 i16 i16 i16 = med3(a, b, c)
MAD_U16 u16 u16 u16 u16 = a * b + c
MAD_I16 i16 i16 i16 i16 = a * b + c
""")

# VOP ops whose last source is the destination register itself (accumulators)
ACCUMULATE = {"FMAC_F32", "FMAC_F16", "FMAC_DX9_ZERO_F32"}
# VOP ops with a literal constant K in the instruction: which source index K takes
LITERAL_K = {"FMAMK_F32": 2, "FMAAK_F32": 2, "FMAMK_F16": 2, "FMAAK_F16": 2}

# packed 16-bit math (VOP3P): name -> (lane type, expression over the a, b, c halves)
PACKED = {name: (t, e) for name, t, e in [
  ("PK_ADD_F16", "f16", "a + b"), ("PK_MUL_F16", "f16", "a * b"), ("PK_FMA_F16", "f16", "fma16(a, b, c)"),
  ("PK_MAX_F16", "f16", "fmax(a, b)"), ("PK_MIN_F16", "f16", "fmin(a, b)"),
  ("PK_ADD_U16", "u16", "a + b"), ("PK_SUB_U16", "u16", "a - b"), ("PK_ADD_I16", "i16", "a + b"), ("PK_SUB_I16", "i16", "a - b"),
  ("PK_MUL_LO_U16", "u16", "a * b"), ("PK_MAD_U16", "u16", "a * b + c"), ("PK_MAD_I16", "i16", "a * b + c"),
  ("PK_LSHLREV_B16", "u16", "b << (a & 15)"), ("PK_LSHRREV_B16", "u16", "b >> (a & 15)"),
  ("PK_ASHRREV_I16", "i16", "b >> (a & 15)"), ("PK_MAX_I16", "i16", "np.maximum(a, b)"), ("PK_MIN_I16", "i16", "np.minimum(a, b)"),
  ("PK_MAX_U16", "u16", "np.maximum(a, b)"), ("PK_MIN_U16", "u16", "np.minimum(a, b)")]}

def _stable(text:str) -> dict[str, tuple]:
  out = {}
  for line in text.strip().splitlines():
    head, rest = line.split("=", 1)
    expr, _, scc = rest.partition(";")
    name, *types = head.split()
    out[name] = (types[0], tuple(types[1:]), expr.strip(), scc.strip() or None)
  return out

# d in an expression is the destination's old value (s_bitset*: read-modify-write); SCC expressions may use d
# (the result) and a, b.
SOP = _stable("""
MOV_B32 b32 b32 = a
MOV_B64 b64 b64 = a
NOT_B32 u32 u32 = ~a ; d != 0
NOT_B64 u64 u64 = ~a ; d != 0
BREV_B32 u32 u32 = brev32(a)
CTZ_I32_B32 u32 u32 = ctz(a)
CLZ_I32_U32 u32 u32 = clz(a)
CLS_I32 u32 u32 = cls32(a)
SEXT_I32_I8 u32 u32 = bits32(sext(a, 8))
SEXT_I32_I16 u32 u32 = bits32(sext(a, 16))
ABS_I32 i32 i32 = np.abs(a) ; d != 0
BCNT1_I32_B32 u32 u32 = popcount(a) ; d != 0
BCNT0_I32_B32 u32 u32 = 32 - popcount(a) ; d != 0
BCNT1_I32_B64 u32 u64 = popcount(a) ; d != 0
BCNT0_I32_B64 u32 u64 = 64 - popcount(a) ; d != 0
BREV_B64 u64 u64 = brev64(a)
CLZ_I32_U64 u32 u64 = clz64(a)
CTZ_I32_B64 u32 u64 = ctz64(a)
QUADMASK_B32 u32 u32 = quadmask(a, 32) ; d != 0
QUADMASK_B64 u64 u64 = quadmask(a, 64) ; d != 0
WQM_B32 u32 u32 = wqm(a, 32) ; d != 0
WQM_B64 u64 u64 = wqm(a, 64) ; d != 0
BFM_B64 u64 u32 u32 = ((u64(1) << (a & 63).astype(u64)) - u64(1)) << (b & 63).astype(u64)
BITSET0_B32 u32 u32 = d & ~(u32(1) << (a & 31))
BITSET1_B32 u32 u32 = d | (u32(1) << (a & 31))
BITSET0_B64 u64 u32 = d & ~(u64(1) << (a & 63).astype(u64))
BITSET1_B64 u64 u32 = d | (u64(1) << (a & 63).astype(u64))
ADD_U32 u32 u32 u32 = a + b ; d < a
SUB_U32 u32 u32 u32 = a - b ; b > a
ADD_I32 i32 i32 i32 = a + b ; ((a < 0) == (b < 0)) & ((d < 0) != (a < 0))
SUB_I32 i32 i32 i32 = a - b ; ((a < 0) != (b < 0)) & ((d < 0) != (a < 0))
ABSDIFF_I32 i32 i32 i32 = np.abs(a - b) ; d != 0
LSHL_B32 u32 u32 u32 = a << (b & 31) ; d != 0
LSHR_B32 u32 u32 u32 = a >> (b & 31) ; d != 0
ASHR_I32 i32 i32 u32 = a >> (b & 31).astype(i32) ; d != 0
LSHL_B64 u64 u64 u32 = a << (b & 63).astype(u64) ; d != 0
LSHR_B64 u64 u64 u32 = a >> (b & 63).astype(u64) ; d != 0
ASHR_I64 i64 i64 u32 = a >> (b & 63).astype(i64) ; d != 0
LSHL1_ADD_U32 u32 u32 u32 = (a << 1) + b ; (a.astype(u64) << 1) + b >= 2**32
LSHL2_ADD_U32 u32 u32 u32 = (a << 2) + b ; (a.astype(u64) << 2) + b >= 2**32
LSHL3_ADD_U32 u32 u32 u32 = (a << 3) + b ; (a.astype(u64) << 3) + b >= 2**32
LSHL4_ADD_U32 u32 u32 u32 = (a << 4) + b ; (a.astype(u64) << 4) + b >= 2**32
MIN_I32 i32 i32 i32 = np.minimum(a, b) ; a < b
MIN_U32 u32 u32 u32 = np.minimum(a, b) ; a < b
MAX_I32 i32 i32 i32 = np.maximum(a, b) ; a >= b
MAX_U32 u32 u32 u32 = np.maximum(a, b) ; a >= b
AND_B32 u32 u32 u32 = a & b ; d != 0
OR_B32 u32 u32 u32 = a | b ; d != 0
XOR_B32 u32 u32 u32 = a ^ b ; d != 0
NAND_B32 u32 u32 u32 = ~(a & b) ; d != 0
NOR_B32 u32 u32 u32 = ~(a | b) ; d != 0
XNOR_B32 u32 u32 u32 = ~(a ^ b) ; d != 0
AND_NOT1_B32 u32 u32 u32 = a & ~b ; d != 0
OR_NOT1_B32 u32 u32 u32 = a | ~b ; d != 0
AND_B64 u64 u64 u64 = a & b ; d != 0
OR_B64 u64 u64 u64 = a | b ; d != 0
XOR_B64 u64 u64 u64 = a ^ b ; d != 0
NAND_B64 u64 u64 u64 = ~(a & b) ; d != 0
NOR_B64 u64 u64 u64 = ~(a | b) ; d != 0
XNOR_B64 u64 u64 u64 = ~(a ^ b) ; d != 0
AND_NOT1_B64 u64 u64 u64 = a & ~b ; d != 0
OR_NOT1_B64 u64 u64 u64 = a | ~b ; d != 0
BFE_U32 u32 u32 u32 = bfe(a, b, b >> 16, False, 7) ; d != 0
BFE_I32 u32 u32 u32 = bfe(a, b, b >> 16, True, 7) ; d != 0
BFE_U64 u64 u64 u32 = bfe64(a, b, False) ; d != 0
BFE_I64 u64 u64 u32 = bfe64(a, b, True) ; d != 0
BFM_B32 u32 u32 u32 = ((u32(1) << (a & 31)) - u32(1)) << (b & 31)
MUL_I32 u32 u32 u32 = a * b
MUL_HI_U32 u32 u32 u32 = mul_hi_u32(a, b)
MUL_HI_I32 u32 u32 u32 = mul_hi_i32(a, b)
PACK_LL_B32_B16 u32 u32 u32 = (a & 0xffff) | (b << 16)
PACK_LH_B32_B16 u32 u32 u32 = (a & 0xffff) | (b & 0xffff0000)
PACK_HH_B32_B16 u32 u32 u32 = (a >> 16) | (b & 0xffff0000)
PACK_HL_B32_B16 u32 u32 u32 = (a >> 16) | (b << 16)
""")

# SOP2 ops that read SCC (carry in) or select on it: name -> (dst type, source types, expression, SCC expression)
SOP_SCC_IN = {
  "ADDC_U32": ("u32", ("u32", "u32"), "a + b + scc", "(a.astype(u64) + b + scc) >= 2**32"),
  "SUBB_U32": ("u32", ("u32", "u32"), "a - b - scc", "b.astype(u64) + scc > a"),
  "CSELECT_B32": ("b32", ("b32", "b32"), "np.where(scc != 0, a, b)", None),
  "CSELECT_B64": ("b64", ("b64", "b64"), "np.where(scc != 0, a, b)", None),
  "CMOV_B32": ("b32", ("b32",), "np.where(scc != 0, a, d)", None),
  "CMOV_B64": ("b64", ("b64",), "np.where(scc != 0, a, d)", None),
}

# s_*_saveexec_b32: the new EXEC from S0 and the old EXEC (e)
SAVEEXEC = {"AND": "a & e", "OR": "a | e", "XOR": "a ^ e", "NAND": "~(a & e)", "NOR": "~(a | e)", "XNOR": "~(a ^ e)",
            "AND_NOT0": "~a & e", "OR_NOT0": "~a | e", "AND_NOT1": "a & ~e", "OR_NOT1": "a | ~e"}

_FCMP = {"F": "np.zeros(np.broadcast(a, b).shape, bool)", "LT": "a < b", "EQ": "a == b", "LE": "a <= b", "GT": "a > b",
         "LG": "(a < b) | (a > b)", "GE": "a >= b", "O": "~(np.isnan(a) | np.isnan(b))", "U": "np.isnan(a) | np.isnan(b)",
         "NGE": "~(a >= b)", "NLG": "~((a < b) | (a > b))", "NGT": "~(a > b)", "NLE": "~(a <= b)", "NEQ": "a != b",
         "NLT": "~(a < b)", "T": "np.ones(np.broadcast(a, b).shape, bool)"}
_ICMP = {"F": _FCMP["F"], "LT": "a < b", "EQ": "a == b", "LE": "a <= b", "GT": "a > b", "NE": "a != b", "LG": "a != b",
         "GE": "a >= b", "T": _FCMP["T"]}
CMP_TYPES = {"F16": "f16", "F32": "f32", "F64": "f64", "I16": "i16", "I32": "i32", "I64": "i64", "U16": "u16",
             "U32": "u32", "U64": "u64"}

def compare_expr(cond:str, typ:str) -> str|None:
  """The bool expression of a comparison `cond` (LT, NGE, ...) on operands of type `typ`, or None if unknown."""
  return (_FCMP if typ[0] == "f" else _ICMP).get(cond)
