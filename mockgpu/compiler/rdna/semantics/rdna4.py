"""RDNA4 (gfx12, RX 9070 XT) as the RDNA3 table plus its deltas: what RDNA4 instructions compute that RDNA3's rows do
not already say, in the same language (lang.py). tinygrad decodes RDNA4 words with its own tables (arch "rdna4"); the
operand model (operands.py) lowers them as RDNA3's encodings, reading this module where the families differ.

  renames     RDNA4 renamed ops whose pseudocode did not change (s_add_co_u32 was s_add_u32, v_mad_co_u64_u32
              v_mad_u64_u32): ALIASES maps the RDNA4 name to the RDNA3 row. Every key is a name RDNA3 does not
              have, so the mapping cannot change what an RDNA3 kernel means.
  new rows    instructions RDNA3 lacks (gfx1100 has no float SALU; tinygrad's RDNA3 table lists RDNA3.5's, which
              gfx1100 must reject, so they are rows of this table only): the float SALU, 64-bit scalar add/sub/mul,
              the V_S_* scalar-result transcendentals, v_min_num/v_max_num and v_minimum/v_maximum (and their
              3-operand, packed and DS forms), s_load_u8/i8/u16/i16, the WMMA layouts and forms, the sparse
              SWMMAC, the OCP fp8/bf8 conversions and dot products. SALU_FROM_VALU derives each
              float SALU row from the VALU row that computes the same thing, so no op's meaning is written twice.
  waves       s_wait_* counters (no-ops: memory is synchronous here), and gfx12's architected workgroup IDs: x in
              ttmp9, y and z in ttmp7's halves, instead of the SGPRs after the user SGPRs (LLVM's gfx12 ABI; RSRC2
              still enables them). The split barrier (s_barrier_signal -1, s_barrier_wait -1) is the operand model's.

Where the manual leaves the behaviour open, mockgpu chooses (tests/compiler/rdna/test_rdna4.py checks each):
  - a 16-bit float SALU result (s_add_f16, s_cvt_f16_f32, v_s_exp_f16) is zero-extended in its SGPR (the pseudocode
    writes D0.f16 only);
  - s_load_u16/i16 ignore the address's low bit, as dword loads ignore two (the pseudocode's CalcGlobalAddr is silent);
  - ttmp9/ttmp7 hold the workgroup ID whatever RSRC2 enables, and no SGPR after the user SGPRs does;
  - a wave waits at s_barrier_wait -1 until every live wave of its workgroup is at one (not from the last
    s_barrier_signal -1 on): the same for any code between the two that does not wait on another wave.
"""
from __future__ import annotations
import re
from mockgpu.compiler.rdna.semantics import rdna3
from mockgpu.compiler.rdna.semantics.lang import Row, row, table
from mockgpu.compiler.rdna.semantics.family_setup import RDNA4 as _SETUP

FAMILY = "rdna4"

# *** renames: RDNA4 name -> the RDNA3 name of the same operation ***

# (v_max_num_f32 & co. are not renames of v_max_f32: RDNA3's IEEE mode quiets a signalling NaN operand where RDNA4's
# maximumNumber returns the other operand, so they have rows of their own below)
ALIASES = {"S_ADD_CO_U32": "S_ADD_U32", "S_SUB_CO_U32": "S_SUB_U32", "S_ADD_CO_I32": "S_ADD_I32", "S_SUB_CO_I32": "S_SUB_I32",
           "S_ADD_CO_CI_U32": "S_ADDC_U32", "S_SUB_CO_CI_U32": "S_SUBB_U32", "S_ADDK_CO_I32": "S_ADDK_I32",
           "V_MAD_CO_U64_U32": "V_MAD_U64_U32", "V_MAD_CO_I64_I32": "V_MAD_I64_I32"}

# the s_wait_* counters (every memory access completes before the next instruction), prefetches and cache
# write-back/invalidate (host memory is coherent)
NOOPS = frozenset({"S_WAIT_LOADCNT", "S_WAIT_STORECNT", "S_WAIT_SAMPLECNT", "S_WAIT_BVHCNT", "S_WAIT_EXPCNT", "S_WAIT_DSCNT",
                   "S_WAIT_KMCNT", "S_WAIT_LOADCNT_DSCNT", "S_WAIT_STORECNT_DSCNT", "S_WAIT_ALU", "S_PREFETCH_INST",
                   "S_PREFETCH_INST_PC_REL", "S_PREFETCH_DATA", "S_PREFETCH_DATA_PC_REL", "GLOBAL_WB", "GLOBAL_INV", "GLOBAL_WBINV"})

# *** gfx12's architected workgroup IDs ***

# ttmp9 and ttmp7 (family_setup.py); COMPUTE_TMPRING_SIZE.WAVESIZE is bits 12..29 on gfx12 (gfx11: 12..26)
TTMP_WORKGROUP_IDS, TMPRING_WAVESIZE_BITS = _SETUP.TTMP_WORKGROUP_IDS, _SETUP.TMPRING_WAVESIZE_BITS
# as RDNA3: gfx11-style encodings, 256-byte scratch units, true16 e32 operands, 16-bit results keep bits 31:16, no MFMA
GFX9, TMPRING_WAVESIZE_UNIT, TRUE16_E32 = rdna3.GFX9, rdna3.TMPRING_WAVESIZE_UNIT, rdna3.TRUE16_E32
HIGH16_ZEROED, MFMA, PACKED_F32 = rdna3.HIGH16_ZEROED, rdna3.MFMA, rdna3.PACKED_F32
# gfx12 has no IEEE mode: RSRC1 bit 23 is DISABLE_PERF, and omod always applies
IEEE_MODE_BIT = _SETUP.IEEE_MODE_BIT
# s_trap's trap ID is SIMM16[3:0] on gfx12 (RDNA3: [7:0]); the M0-indexed SGPR file is RDNA3's
TRAP_ID_BITS, SGPRS, VGPR_GRANULES = 4, rdna3.SGPRS, rdna3.VGPR_GRANULES

# *** new VALU rows: IEEE 754-2019 maximumNumber/minimumNumber (a NaN operand gives the other one, two NaNs S0
# quieted; -0 < +0) and minimum/maximum (the first signalling NaN operand quieted, else the first quiet one) ***

VOP = {**rdna3.VOP, **table("""
MIN_NUM_{F16,F32,F64} T T T = min_num(a, b)
MAX_NUM_{F16,F32,F64} T T T = max_num(a, b)
MINIMUM_{F16,F32,F64} T T T = minimum754(a, b)
MAXIMUM_{F16,F32,F64} T T T = maximum754(a, b)
MIN3_NUM_{F16,F32} T T T T = min_num(min_num(a, b), c)
MAX3_NUM_{F16,F32} T T T T = max_num(max_num(a, b), c)
MINIMUM3_{F16,F32} T T T T = minimum754(minimum754(a, b), c)
MAXIMUM3_{F16,F32} T T T T = maximum754(maximum754(a, b), c)
MED3_NUM_{F16,F32} T T T T = med3_num(a, b, c)
""")}

# *** OCP fp8/bf8 (E4M3, E5M2; FP8 below): v_cvt_f32_fp8/bf8 convert one byte of S0, which op_sel[1:0] selects in VOP3
# in the manual's reversed order (0: bits 7:0, 2: 15:8, 1: 23:16, 3: 31:24), one row per byte (the e32 form reads byte
# 0); v_dot4_f32_* add four products to S2 in order, each sum rounded to f32 as the pseudocode's tmp += ... does ***

BYTE_SELECT = ("CVT_F32_FP8", "CVT_F32_BF8")
OPSEL_BYTE = (0, 2, 1, 3)   # op_sel[1:0] -> the byte
def _dot4_f32(a:str, b:str) -> str:
  terms = [f"{a}_f32((a >> {8 * k}) & 0xff) * {b}_f32((b >> {8 * k}) & 0xff)" for k in range(4)]
  body = "c"
  for t in terms: body = f"({body} + {t})"
  return f"DOT4_F32_{a.upper()}_{b.upper()} f32 u32 u32 f32 = {body}"
VOP = {**VOP, **{f"{n}{f'_BYTE{k}' if k else ''}": row(f"{n}{f'_BYTE{k}' if k else ''} f32 u32 = {n[-3:].lower()}_f32((a >> {8 * k}) & 0xff)")
                 for n in BYTE_SELECT for k in range(4)},
       **{f"DOT4_F32_{a}_{b}": row(_dot4_f32(a.lower(), b.lower())) for a in ("FP8", "BF8") for b in ("FP8", "BF8")},
       # v_cvt_pk_f32_fp8/bf8: the two bytes of a 16-bit source (op_sel bit 0 / a true16 name: S0's high half) as two
       # f32, the low byte's in D's first VGPR
       **{f"CVT_PK_F32_{k}": row(f"CVT_PK_F32_{k} u64 u16 = {k.lower()}_pk_f32(a)") for k in ("FP8", "BF8")}}

CLAMPED, ACCUMULATE, LITERAL_K, FLOAT_MODS = rdna3.CLAMPED, rdna3.ACCUMULATE, rdna3.LITERAL_K, rdna3.FLOAT_MODS
PACKED_CLAMPED, DOT_SIGNS = rdna3.PACKED_CLAMPED, rdna3.DOT_SIGNS

PACKED = {**rdna3.PACKED, **table("""
PK_MIN_NUM_F16 f16 f16 f16 = min_num(a, b)
PK_MAX_NUM_F16 f16 f16 f16 = max_num(a, b)
PK_MINIMUM_F16 f16 f16 f16 = minimum754(a, b)
PK_MAXIMUM_F16 f16 f16 f16 = maximum754(a, b)
""")}

# *** new SALU rows ***

# float SALU op (row name) -> the VALU row computing the same value from scalars
SALU_FROM_VALU = {**{op: op for op in ("ADD_F32", "SUB_F32", "MUL_F32", "FMAC_F32", "FMAAK_F32", "FMAMK_F32", "ADD_F16",
                                        "SUB_F16", "MUL_F16", "FMAC_F16",
                                        "CVT_PK_RTZ_F16_F32", "CEIL_F32", "FLOOR_F32", "TRUNC_F32", "RNDNE_F32", "CEIL_F16",
                                        "FLOOR_F16", "TRUNC_F16", "RNDNE_F16", "CVT_F32_I32", "CVT_F32_U32", "CVT_I32_F32",
                                        "CVT_U32_F32", "CVT_F16_F32", "CVT_F32_F16", "MINIMUM_F32", "MAXIMUM_F32",
                                        "MINIMUM_F16", "MAXIMUM_F16", "MIN_NUM_F32", "MAX_NUM_F32", "MIN_NUM_F16", "MAX_NUM_F16")},
                  # s_cvt_hi_f32_f16 converts S0[31:16] (HIGH_HALF: the operand model reads the source's high half)
                  "CVT_HI_F32_F16": "CVT_F32_F16",
                  # v_s_exp_f32 s0, s1 (VOP3, an SGPR result): the row name keeps its S_ prefix, which no SALU name has
                  **{f"S_{op}_{t}": f"{op}_{t}" for op in ("EXP", "LOG", "RCP", "RSQ", "SQRT") for t in ("F32", "F16")}}
HIGH_HALF = {"CVT_HI_F32_F16"}

def salu_row(name:str, v:Row) -> Row:
  """The SALU form of VALU row v: an accumulator's third source is its destination, which a scalar row reads as d;
  s_fmaak/s_fmamk keep the literal K as their third source, as their VALU forms (LITERAL_K)."""
  srcs, body = v.source_types(), v.text
  if v.name in ACCUMULATE: srcs, body = srcs[:2], re.sub(r"\bc\b", "d", body)
  return row(f"{name} {v.dst} {' '.join(srcs)} = {body}")

SOP = {**rdna3.SOP, **{s: salu_row(s, VOP[v]) for s, v in SALU_FROM_VALU.items()}, **table("""
ADD_NC_U64 u64 u64 u64 = a + b
SUB_NC_U64 u64 u64 u64 = a - b
MUL_U64 u64 u64 u64 = a * b
""")}

# read-modify-write memory ops: RDNA3's, plus ds/global min_num/max_num (IEEE 754-2019 minimumNumber with the data as
# the first operand: two NaNs give the data quieted) and cond_sub; sub_clamp is RDNA3's csub under a new name
ATOMIC = {**rdna3.ATOMIC, **table("""
MIN_NUM_{F32,F64} T old:T a:T = min_num(a, old)
MAX_NUM_{F32,F64} T old:T a:T = max_num(a, old)
COND_SUB_U32 u32 old:u32 a:u32 = old - a if old >= a else old
""")}
ATOMIC_ALIASES, ASSOCIATIVE = {**rdna3.ATOMIC_ALIASES, "SUB_CLAMP": "CSUB"}, rdna3.ASSOCIATIVE

# RDNA3's list less the scalar float ops, which RDNA4 executes
NOT_EXECUTED = {n: why for n, why in rdna3.NOT_EXECUTED.items() if why != rdna3.SALU_FLOAT_WHY}

# RDNA3's unmodelled encodings under their gfx12 names (VBUFFER's raw loads, stores and atomics run as MUBUF's; its
# TBUFFER_* forms are MTBUF's typed access)
UNMODELLED = {**rdna3.UNMODELLED, "VIMAGE": rdna3.UNMODELLED["MIMG"], "VSAMPLE": rdna3.UNMODELLED["MIMG"],
              "VEXPORT": rdna3.UNMODELLED["EXP"], "VDSDIR": rdna3.UNMODELLED["LDSDIR"], "TBUFFER_": rdna3.UNMODELLED["MTBUF"]}

# s_load_u8/i8/u16/i16: one element, zero- or sign-extended
SMEM_KINDS = {"LOAD_U8": "u8", "LOAD_I8": "i8", "LOAD_U16": "u16", "LOAD_I16": "i16"}

# *** WMMA: wave32 layouts without RDNA3's replicated halves (numpy_runtime.wmma_rdna4, layout "rdna4") ***

# name -> (A/B element kind, C/D kind, VGPRs of A and B, VGPRs of C and D): lanes 16-31 hold the odd chunks of 8 K
# elements (numpy_runtime.wmma_matrix), so A and B take half RDNA3's VGPRs; an f16/bf16 D is packed two elements a
# VGPR. A mixed fp8 form names A's kind then B's ('fp8_bf8': A fp8, B bf8; numpy_runtime.wmma_kinds).
WMMA = {"WMMA_F32_16X16X16_F16": ("f16", "f32", 4, 8), "WMMA_F32_16X16X16_BF16": ("bf16", "f32", 4, 8),
        "WMMA_F16_16X16X16_F16": ("f16", "f16", 4, 4), "WMMA_I32_16X16X16_IU8": ("iu8", "i32", 2, 8),
        "WMMA_BF16_16X16X16_BF16": ("bf16", "bf16", 4, 4), "WMMA_I32_16X16X16_IU4": ("iu4", "i32", 1, 8),
        "WMMA_I32_16X16X32_IU4": ("iu4", "i32", 2, 8),
        **{f"WMMA_F32_16X16X16_{a}_{b}": (a.lower() if a == b else f"{a}_{b}".lower(), "f32", 2, 8)
           for a in ("FP8", "BF8") for b in ("FP8", "BF8")}}
# v_swmmac_*: (A/B element kinds, C/D kind, VGPRs of the compressed A, of B, of C/D): A is 16 x K with two nonzero
# elements in every group of four along K, given as its 16 x K/2 compressed elements and an index VGPR
SWMMAC = {"SWMMAC_F32_16X16X32_F16": ("f16", "f32", 4, 8, 8), "SWMMAC_F32_16X16X32_BF16": ("bf16", "f32", 4, 8, 8),
          "SWMMAC_F16_16X16X32_F16": ("f16", "f16", 4, 8, 4), "SWMMAC_BF16_16X16X32_BF16": ("bf16", "bf16", 4, 8, 4),
          "SWMMAC_I32_16X16X32_IU8": ("iu8", "i32", 2, 4, 8), "SWMMAC_I32_16X16X32_IU4": ("iu4", "i32", 1, 2, 8),
          "SWMMAC_I32_16X16X64_IU4": ("iu4", "i32", 2, 4, 8),
          **{f"SWMMAC_F32_16X16X32_{a}_{b}": (a.lower() if a == b else f"{a}_{b}".lower(), "f32", 2, 4, 8)
             for a in ("FP8", "BF8") for b in ("FP8", "BF8")}}
WMMA_LAYOUT = "rdna4"
# gfx12's fp8/bf8 are the OCP formats (E4M3 with one NaN and no infinity, E5M2), as gfx950's: gfx9.FP8[("cdna4", ...)]
FP8 = "cdna4"
