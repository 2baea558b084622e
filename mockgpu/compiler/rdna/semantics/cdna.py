"""What CDNA3/CDNA4 (the GFX9 family: gfx942, gfx950) computes where it is not RDNA3: its own rows, in the language of
lang.py. Everything else CDNA runs is an RDNA3 row under the same or another name; compiler/rdna/cdna.py holds those
aliases (checked against both ISAs' pseudocode), the operand adapters and MFMA. No backend runs CDNA yet."""
from __future__ import annotations
from mockgpu.compiler.rdna.semantics.lang import table

# CDNA vector rows that RDNA3 lacks or defines differently. min/max: with two NaN operands CDNA's pseudocode returns S1
# (quieted), RDNA3's S0; one NaN yields the other operand in both; +0 > -0 in both. ttbl is v_bitop3's truth table,
# from the instruction (cdna.bitop3_table).
VOP = table("""
MOV_B64 b64 b64 = a
LSHL_ADD_U64 u64 u64 u32 u64 = (a << u64(b & 7)) + c
MAX_{F16,F32,F64} T T T = fmax_gfx9(a, b)
MIN_{F16,F32,F64} T T T = fmin_gfx9(a, b)
FMAC_F64 f64 f64 f64 f64 = fma(a, b, c)
MUL_LEGACY_F32 f32 f32 f32 = f32(0) if a == 0 or b == 0 else a * b
SUBREV_U16 u16 u16 u16 = b - a
MAD_U32_U16 u32 u32 u32 u32 = (a & 0xffff) * (b & 0xffff) + c
MAD_I32_I16 u32 u32 u32 u32 = u32(sext(a, 16) * sext(b, 16) + sext(c, 32))
CVT_FLR_I32_F32 i32 f32 = i32(cvt_int(floor(a), -2**31, 2**31 - 1))
CVT_RPI_I32_F32 i32 f32 = i32(cvt_int(floor(a + f32(0.5)), -2**31, 2**31 - 1))
ACCVGPR_{READ,WRITE,MOV_B32} b32 b32 = a
CVT_PK_F16_F32 b32 f32 f32 = fbits16(f16(a)) | (fbits16(f16(b)) << 16)
BITOP3_{B16,B32} T T T T = bitop3(a, b, c, ttbl)
""")
# VOP ops whose last source is the destination itself
ACCUMULATE = {"FMAC_F64"}

# gfx90a+ packed f32 (VOP3P over 64-bit register pairs): each row one half; op_sel / op_sel_hi pick, per source, which
# half feeds the low and the high result (cdna.packed_f32)
PACKED_F32 = table("""
PK_ADD_F32 f32 f32 f32 = a + b
PK_MUL_F32 f32 f32 f32 = a * b
PK_FMA_F32 f32 f32 f32 f32 = fma(a, b, c)
""")
