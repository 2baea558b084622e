"""RDNA3.5 (gfx115x; boards.py's gfx1151, "Strix Halo") as the RDNA3 table plus the scalar float ops gfx115x decodes
(s_add/sub/mul/fmac/min/max_f32/f16, s_fmaak/s_fmamk_f32, s_cvt_*, s_ceil/floor/trunc/rndne_*): each is the VALU row
computing the same value (rdna3.5's pseudocode is v_*'s over scalars; s_min/s_max_f32 follow WAVE_MODE.IEEE as v_min/
v_max do), made a scalar row by rdna4.salu_row. Encodings, decode tables (tinygrad's rdna3) and everything else are
RDNA3's, attribute for attribute."""
from __future__ import annotations
from mockgpu.compiler.rdna.semantics import rdna3, rdna4
from mockgpu.compiler.rdna.semantics.rdna3 import *  # noqa: F401,F403 (the RDNA3 attributes this table keeps)

FAMILY = "rdna35"

# float SALU op (row name) -> the VALU row computing the same value from scalars (s_cvt_hi_f32_f16 reads S0[31:16]:
# HIGH_HALF)
SALU_FROM_VALU = {**{op: op for op in (*(f"{o}_{t}" for o in ("ADD", "SUB", "MUL", "FMAC", "MIN", "MAX") for t in ("F32", "F16")),
                                        "FMAAK_F32", "FMAMK_F32", "CVT_PK_RTZ_F16_F32", "CVT_F32_I32", "CVT_F32_U32", "CVT_I32_F32",
                                        "CVT_U32_F32", "CVT_F16_F32", "CVT_F32_F16",
                                        *(f"{o}_{t}" for o in ("CEIL", "FLOOR", "TRUNC", "RNDNE") for t in ("F32", "F16")))},
                  "CVT_HI_F32_F16": "CVT_F32_F16"}
HIGH_HALF = {"CVT_HI_F32_F16"}
SOP = {**rdna3.SOP, **{s: rdna4.salu_row(s, rdna3.VOP[v]) for s, v in SALU_FROM_VALU.items()}}
# RDNA3's list less the scalar float ops, which gfx115x executes
NOT_EXECUTED = {n: why for n, why in rdna3.NOT_EXECUTED.items() if why != rdna3.SALU_FLOAT_WHY}
