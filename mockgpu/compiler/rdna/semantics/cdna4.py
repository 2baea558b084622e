"""CDNA4 (gfx950, MI350X) as the CDNA3 table (semantics/cdna.py) plus what gfx950 adds: v_bitop3 (its truth table spread
over the VOP3 modifier fields, operands._bitop3), v_cvt_pk_f16_f32, the doubled-K MFMA forms, and the OCP fp8/bf8
formats (e4m3fn, e5m2) of its fp8 MFMAs. Everything else is CDNA3's, attribute for attribute."""
from __future__ import annotations
from mockgpu.compiler.rdna.semantics import cdna
from mockgpu.compiler.rdna.semantics.cdna import *  # noqa: F401,F403 (the CDNA3 attributes this table keeps)
from mockgpu.compiler.rdna.semantics.lang import table, WIDTH

FAMILY = "cdna4"

# ttbl: v_bitop3's 8-bit truth table, a constant source the operand model gives from the instruction's modifier bits
VOP = {**cdna.VOP, **table("""
BITOP3_{B16,B32} T T T T ttbl:u32 = bitop3(a, b, c, ttbl)
CVT_PK_F16_F32 b32 f32 f32 = fbits16(f16(a)) | (fbits16(f16(b)) << 16)
CVT_PK_FP8_F32 u16 f32 f32 = f32_fp8(a) | (f32_fp8(b) << 8)
CVT_PK_BF8_F32 u16 f32 f32 = f32_bf8(a) | (f32_bf8(b) << 8)
CVT_F32_FP8 f32 u32 = fp8_f32(a & 0xff)
CVT_F32_BF8 f32 u32 = bf8_f32(a & 0xff)
MAD_LEGACY_U16 u16 u16 u16 u16 = a * b + c
""")}
# the OCP fp8/bf8 conversions: v_cvt_pk_fp8/bf8_f32 write the 16 bits op_sel[3] selects and keep the other half; the
# SDWA form of v_cvt_f32_fp8/bf8 selects the byte (SDWA_SRC0_SEL), the e32 form reads byte 0. v_mad_legacy_u16 zeroes
# bits 31:16 (op_sel[3] clear) as the other GFX9 16-bit results do.
HIGH16_ZEROED = frozenset(n for n, r in VOP.items() if r.dst is not None and WIDTH[r.dst] == 16) - cdna.PRESERVE_HIGH16 - \
  {"CVT_PK_FP8_F32", "CVT_PK_BF8_F32"}
MFMA = cdna.MFMA | frozenset(f"V_MFMA_{s}" for s in "F32_16X16X32_F16 F32_32X32X16_F16 F32_16X16X32_BF16 F32_32X32X16_BF16 "
                                                    "I32_16X16X64_I8 I32_32X32X32_I8".split())
FP8 = "cdna4"
