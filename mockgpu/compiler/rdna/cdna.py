"""CDNA3/CDNA4 (gfx942 MI300X, gfx950 MI350X): what the GFX9-family ISA adds to, or changes from, the RDNA3 semantics.

tinygrad decodes CDNA code with arch "cdna" (tinygrad.runtime.autogen.amd.cdna: ins, enum, str_pcode). This module is
the CDNA knowledge, once, in the shape a semantics-table backend consumes:

  rows        `vop_row(name)` / `sop_row(name)`: the semantics row of a stripped CDNA name (V_/S_ and _E32/_E64 gone,
              as semantics/rdna3.py keys RDNA3). Three sources, in order: CDNA's own rows (semantics/cdna.py: VOP,
              PACKED_F32; CARRY and SOPK are RDNA3's rows; MIX), renamed RDNA3 rows (RENAMED_*: v_ffbh_u32 is
              v_clz_i32_u32), and RDNA3 rows of the same name whose pseudocode CDNA repeats (SAME_VOP, SAME_SOP;
              SAME_PACKED, SAME_SOPC, CONTROL and SPECIAL for the forms RDNA3 implements in code).
              tests/test_cdna.py checks every alias against both ISAs' str_pcode. A name in none of them is not
              modelled; classify(encoding, name) says which source an instruction takes.
  operands    OPERANDS: the GFX9 operand encodings (M0 is 124 here, 125 reserved; SDWA 249, DPP 250, VCCZ 251 ...).
              AGPRs (accumulation VGPRs, v_accvgpr_*, MFMA C/D with acc_cd) are a second file of AGPRS registers.
  adapters    SDWA operand selection (sdwa_src, sdwa_dst), GFX9 DPP lane maps (dpp_lanes), buffer (MUBUF) and scalar
              memory addressing (BufferResource, mubuf_address, smem_address), memory instruction names (memory_alias).
  MFMA        MFMA: the shapes and register layouts of v_mfma_*; mfma() computes D = A*B + C as the pseudocode says,
              the products summed exactly and rounded once (the project's rule for WMMA), via exact_sum().
  descriptor  ProgramResources: COMPUTE_PGM_RSRC1/RSRC3 of a gfx90a+ kernel (accum_offset, tg_split; wave64 only).

Sources: the CDNA3 ISA manual (its pseudocode is tinygrad's cdna.str_pcode), LLVM's AMDGPUUsage (kernel descriptor),
AMD's matrix instruction calculator layouts (the same as tinygrad's ops_python MFMA emulation).
"""
from __future__ import annotations
import functools
from dataclasses import dataclass
import numpy as np
from mockgpu.compiler.rdna.semantics import rdna3
from mockgpu.compiler.rdna.semantics.cdna import VOP, ACCUMULATE, PACKED_F32  # noqa: F401 (CDNA's own rows)

WAVE = 64          # CDNA runs wave64 only
SGPRS = 102        # s0..s101 are addressable; 102..107 are FLAT_SCRATCH, XNACK_MASK, VCC
AGPRS = 256        # accumulation registers a0..a255 (gfx90a+: the unified 512-register file's second half)
VGPR_GRANULE = 8   # RSRC1.GRANULATED_WORKITEM_VGPR_COUNT unit on gfx90a+ wave64 (VGPRs and AGPRs together)

# *** the kernel descriptor's program resources (LLVM AMDGPUUsage, "Kernel Descriptor", GFX90A/GFX942) ***

def _bits(value:int, lo:int, hi:int) -> int: return (value >> lo) & ((1 << (hi - lo + 1)) - 1)

# bits a gfx90a+ kernel descriptor reserves (must be zero): RSRC1 27:28 and 29:31 (gfx10+ WGP_MODE, MEM_ORDERED,
# FWD_PROGRESS), RSRC3 6:15 and 17:31
RSRC1_RESERVED = 0xf8000000
RSRC3_RESERVED = 0xfffeffc0

@dataclass(frozen=True)
class ProgramResources:
  """COMPUTE_PGM_RSRC1/RSRC3 of a CDNA kernel. vgprs counts ArchVGPRs and AGPRs together (the unified file);
  the AGPRs start at accum_offset, so a kernel has accum_offset VGPRs and vgprs - accum_offset AGPRs."""
  vgprs:int            # (GRANULATED_WORKITEM_VGPR_COUNT + 1) * 8
  sgprs:int            # (GRANULATED_WAVEFRONT_SGPR_COUNT + 1) * 16 (used by gfx9 hardware, unlike gfx10+)
  accum_offset:int     # (ACCUM_OFFSET + 1) * 4: the first AGPR's index in the unified file
  tg_split:bool        # TG_SPLIT: a workgroup's waves may run on different CUs (the same results here: memory is coherent)
  ieee_mode:bool
  dx10_clamp:bool
  fp16_overflow:bool   # FP16_OVFL: f16 results that overflow clamp to max finite instead of inf

  @property
  def agprs(self) -> int: return self.vgprs - self.accum_offset

  @staticmethod
  def decode(rsrc1:int, rsrc3:int, wave_size:int=WAVE) -> "ProgramResources":
    """Decode, raising ValueError naming the field for what a gfx90a+ descriptor cannot hold."""
    if wave_size != WAVE: raise ValueError(f"CDNA runs wave64 only, not wave{wave_size}")
    if rsrc1 & RSRC1_RESERVED: raise ValueError(f"COMPUTE_PGM_RSRC1 0x{rsrc1:08x}: reserved bits 0x{rsrc1 & RSRC1_RESERVED:08x} are set "
                                                "(bits 29-31 are WGP_MODE/MEM_ORDERED/FWD_PROGRESS on gfx10+ only)")
    if rsrc3 & RSRC3_RESERVED: raise ValueError(f"COMPUTE_PGM_RSRC3 0x{rsrc3:08x}: reserved bits 0x{rsrc3 & RSRC3_RESERVED:08x} are set")
    r = ProgramResources(vgprs=(_bits(rsrc1, 0, 5) + 1) * VGPR_GRANULE, sgprs=(_bits(rsrc1, 6, 9) + 1) * 16,
                         accum_offset=(_bits(rsrc3, 0, 5) + 1) * 4, tg_split=bool(rsrc3 >> 16 & 1), ieee_mode=bool(rsrc1 >> 23 & 1),
                         dx10_clamp=bool(rsrc1 >> 21 & 1), fp16_overflow=bool(rsrc1 >> 26 & 1))
    if r.accum_offset > r.vgprs:
      raise ValueError(f"COMPUTE_PGM_RSRC3.ACCUM_OFFSET: AGPRs start at {r.accum_offset}, past the kernel's {r.vgprs} registers")
    return r

# *** operands: the GFX9 source-operand encodings (CDNA3 ISA, "Scalar/Vector operand encodings") ***

OPERANDS:dict[int, str] = {102: "FLAT_SCRATCH_LO", 103: "FLAT_SCRATCH_HI", 104: "XNACK_MASK_LO", 105: "XNACK_MASK_HI",
  106: "VCC_LO", 107: "VCC_HI", **{108 + i: f"TTMP{i}" for i in range(16)}, 124: "M0", 126: "EXEC_LO", 127: "EXEC_HI",
  **{128 + i: f"INT {i}" for i in range(65)}, **{193 + i: f"INT {-1 - i}" for i in range(16)},
  235: "SRC_SHARED_BASE", 236: "SRC_SHARED_LIMIT", 237: "SRC_PRIVATE_BASE", 238: "SRC_PRIVATE_LIMIT", 239: "SRC_POPS_EXITING_WAVE_ID",
  240: "0.5", 241: "-0.5", 242: "1.0", 243: "-1.0", 244: "2.0", 245: "-2.0", 246: "4.0", 247: "-4.0", 248: "INV_2PI",
  249: "SDWA", 250: "DPP", 251: "VCCZ", 252: "EXECZ", 253: "SCC", 254: "LDS_DIRECT", 255: "LITERAL"}
# the RDNA3 meaning of the encodings that differ, for a backend that starts from the RDNA3 operand model
RDNA3_DIFFERENCES = {124: ("NULL", "M0"), 125: ("M0", "reserved"), 249: ("DPP8 marker on gfx10+ (gfx11: 233)", "SDWA"),
                     250: ("DPP16", "DPP"), 251: ("reserved", "VCCZ"), 252: ("reserved", "EXECZ"), 102: ("s102", "FLAT_SCRATCH_LO"),
                     103: ("s103", "FLAT_SCRATCH_HI"), 104: ("s104", "XNACK_MASK_LO"), 105: ("s105", "XNACK_MASK_HI")}

def operand(off:int) -> tuple[str, int]:
  """(kind, index) of a 9-bit source encoding: ("sgpr", n), ("vgpr", n), ("special", off), ("int", value),
  ("float", off) or ("literal", 0). Reserved encodings raise ValueError naming them."""
  if off < SGPRS: return ("sgpr", off)
  if 256 <= off < 512: return ("vgpr", off - 256)
  if off not in OPERANDS: raise ValueError(f"operand encoding {off} is reserved on CDNA")
  if 128 <= off <= 208: return ("int", off - 128 if off <= 192 else 192 - off)
  if 240 <= off <= 248: return ("float", off)
  return ("literal", 0) if off == 255 else ("special", off)

def acc_registers(inst) -> dict[str, str]:
  """Which register file ("vgpr" or "agpr") each vector-register field of a CDNA instruction names. DS, FLAT/GLOBAL/
  SCRATCH and MUBUF data and destination registers are AGPRs when the ACC bit is set; MFMA's C and D when ACC_CD is set
  and A, B when the two ACC bits are; v_accvgpr_write writes an AGPR, v_accvgpr_read reads one, v_accvgpr_mov both."""
  name, cls = inst.op_name, type(inst).__name__
  if name.startswith("V_ACCVGPR_"):
    return {"READ": {"src0": "agpr", "vdst": "vgpr"}, "WRITE": {"src0": "vgpr", "vdst": "agpr"},
            "MOV_B32": {"src0": "agpr", "vdst": "agpr"}}[name.removeprefix("V_ACCVGPR_").removesuffix("_E32").removesuffix("_E64")]
  if "MFMA" in name:
    acc = getattr(inst, "acc", 0)
    cd = "agpr" if inst.acc_cd else "vgpr"
    return {"src0": "agpr" if acc & 1 else "vgpr", "src1": "agpr" if acc & 2 else "vgpr", "src2": cd, "vdst": cd}
  if cls in ("DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF"):
    f = "agpr" if inst.acc else "vgpr"
    return {k: f for k in ("vdst", "vdata", "data", "data0", "data1") if k in dict(type(inst)._fields)}
  return {}

# *** semantics rows: CDNA names onto RDNA3 rows, and the rows CDNA has of its own ***

def strip(name:str) -> str:
  """A semantics key from an instruction name, as semantics/rdna3.py keys RDNA3: no V_/S_ prefix, no _E32/_E64."""
  name = name[2:] if name.startswith(("V_", "S_")) else name
  return name.removesuffix("_E32").removesuffix("_E64")

# RDNA3 VOP rows whose pseudocode CDNA repeats word for word (tests/test_cdna.py compares both str_pcode tables)
SAME_VOP = frozenset("""
ADD3_U32 ADD_F16 ADD_F32 ADD_F64 ADD_LSHL_U32 AND_B32 AND_OR_B32 ASHRREV_I16 ASHRREV_I32 ASHRREV_I64 BCNT_U32_B32
BFE_I32 BFE_U32 BFI_B32 BFM_B32 BFREV_B32 CEIL_F16 CEIL_F32 CEIL_F64 COS_F16 COS_F32 CVT_F16_F32 CVT_F16_I16 CVT_F16_U16
CVT_F32_F16 CVT_F32_F64 CVT_F32_I32 CVT_F32_U32 CVT_F32_UBYTE0 CVT_F32_UBYTE1 CVT_F32_UBYTE2 CVT_F32_UBYTE3 CVT_F64_F32
CVT_F64_I32 CVT_F64_U32 CVT_I16_F16 CVT_I32_F32 CVT_I32_F64 CVT_U16_F16 CVT_U32_F32 CVT_U32_F64 DIV_FIXUP_F16 DIV_FIXUP_F32
DIV_FIXUP_F64 EXP_F16 EXP_F32 FLOOR_F16 FLOOR_F32 FLOOR_F64 FMAAK_F32 FMAC_F32 FMAMK_F32 FMA_F16 FMA_F32 FMA_F64 FRACT_F16
FRACT_F32 FRACT_F64 FREXP_EXP_I32_F32 FREXP_EXP_I32_F64 FREXP_MANT_F32 FREXP_MANT_F64 LDEXP_F16 LDEXP_F32 LDEXP_F64 LOG_F16
LOG_F32 LSHLREV_B16 LSHLREV_B32 LSHLREV_B64 LSHL_ADD_U32 LSHL_OR_B32 LSHRREV_B16 LSHRREV_B32 LSHRREV_B64 MAD_I16
MAD_I32_I24 MAD_U16 MAD_U32_U24 MAX3_F16 MAX3_F32 MAX3_I16 MAX3_I32 MAX3_U16 MAX3_U32 MAX_I16 MAX_I32 MAX_U16 MAX_U32
MED3_F16 MED3_F32 MED3_I16 MED3_I32 MED3_U16 MED3_U32 MIN3_F16 MIN3_F32 MIN3_I16 MIN3_I32 MIN3_U16 MIN3_U32 MIN_I16
MIN_I32 MIN_U16 MIN_U32 MOV_B32 MUL_F16 MUL_F32 MUL_F64 MUL_HI_I32 MUL_HI_I32_I24 MUL_HI_U32 MUL_HI_U32_U24 MUL_I32_I24
MUL_LO_U16 MUL_LO_U32 MUL_U32_U24 NOT_B32 OR3_B32 OR_B32 PACK_B32_F16 PERM_B32 RCP_F16 RCP_F32 RCP_F64 RCP_IFLAG_F32
RNDNE_F16 RNDNE_F32 RNDNE_F64 RSQ_F16 RSQ_F32 RSQ_F64 SAD_U32 SIN_F16 SIN_F32 SQRT_F16 SQRT_F32 SQRT_F64 SUBREV_F16
SUBREV_F32 SUB_F16 SUB_F32 TRUNC_F16 TRUNC_F32 TRUNC_F64 XAD_U32 XNOR_B32 XOR_B32
""".split())
# RDNA3 SOP rows whose pseudocode CDNA repeats word for word
SAME_SOP = frozenset("""
ABSDIFF_I32 ABS_I32 ADDC_U32 ADD_I32 ADD_U32 AND_B32 AND_B64 ASHR_I32 ASHR_I64 BCNT0_I32_B32 BCNT0_I32_B64 BCNT1_I32_B32
BCNT1_I32_B64 BFE_I32 BFE_I64 BFE_U32 BFE_U64 BFM_B32 BFM_B64 BITSET0_B32 BITSET0_B64 BITSET1_B32 BITSET1_B64 BREV_B32
BREV_B64 CMOV_B32 CMOV_B64 CSELECT_B32 CSELECT_B64 LSHL1_ADD_U32 LSHL2_ADD_U32 LSHL3_ADD_U32 LSHL4_ADD_U32 LSHL_B32
LSHL_B64 LSHR_B32 LSHR_B64 MAX_I32 MAX_U32 MIN_I32 MIN_U32 MOV_B32 MOV_B64 MUL_HI_I32 MUL_HI_U32 MUL_I32 NAND_B32
NAND_B64 NOR_B32 NOR_B64 NOT_B32 NOT_B64 OR_B32 OR_B64 PACK_HH_B32_B16 PACK_LH_B32_B16 PACK_LL_B32_B16 QUADMASK_B32
QUADMASK_B64 SEXT_I32_I16 SEXT_I32_I8 SUBB_U32 SUB_I32 SUB_U32 WQM_B32 WQM_B64 XNOR_B32 XNOR_B64 XOR_B32 XOR_B64
""".split())

# CDNA names of RDNA3 rows (RDNA renamed them): CDNA name -> RDNA3 name. Each pair's pseudocode is compared by the tests,
# which list where the wording differs and why the meaning does not.
RENAMED_VOP = {"ADD_U32": "ADD_NC_U32", "SUB_U32": "SUB_NC_U32", "SUBREV_U32": "SUBREV_NC_U32", "ADD_U16": "ADD_NC_U16",
               "SUB_U16": "SUB_NC_U16", "ADD_I16": "ADD_NC_I16", "SUB_I16": "SUB_NC_I16", "ADD_I32": "ADD_NC_I32",
               "SUB_I32": "SUB_NC_I32", "FFBH_U32": "CLZ_I32_U32", "FFBL_B32": "CTZ_I32_B32", "FFBH_I32": "CLS_I32",
               "CVT_PKRTZ_F16_F32": "CVT_PK_RTZ_F16_F32", "ALIGNBIT_B32": "ALIGNBIT_B32", "ALIGNBYTE_B32": "ALIGNBYTE_B32"}
RENAMED_SOP = {"FLBIT_I32_B32": "CLZ_I32_U32", "FF1_I32_B32": "CTZ_I32_B32", "FLBIT_I32": "CLS_I32",
               "FLBIT_I32_B64": "CLZ_I32_U64", "FF1_I32_B64": "CTZ_I32_B64", "ANDN2_B32": "AND_NOT1_B32",
               "ANDN2_B64": "AND_NOT1_B64", "ORN2_B32": "OR_NOT1_B32", "ORN2_B64": "OR_NOT1_B64"}
# s_*_saveexec_b64 (wave64: the whole 64-bit EXEC) -> the operation of RDNA3's <op>_SAVEEXEC_B64 row
SAVEEXEC = {"AND": "AND", "OR": "OR", "XOR": "XOR", "NAND": "NAND", "NOR": "NOR", "XNOR": "XNOR", "ANDN1": "AND_NOT0",
            "ANDN2": "AND_NOT1", "ORN1": "OR_NOT0", "ORN2": "OR_NOT1"}

# names the rows use beyond the numpy runtime's helpers (a backend puts them in the rows' namespace); ttbl is
# v_bitop3's truth table, from the instruction (bitop3_table)
ROW_HELPERS = ("fmax_gfx9", "fmin_gfx9", "bitop3")

# carry-out forms (GFX9 names them _CO_; VOP2 writes the carry to VCC, VOP3b to its SDST) and their carry-in forms
# (VOP2 reads VCC, VOP3b its third source): RDNA3's rows (SPECIAL names them; `vcc` is the carry in and out)
CARRY_IN = frozenset({"ADDC_CO_U32", "SUBB_CO_U32", "SUBBREV_CO_U32"})
CARRY = {n: rdna3.VOP[r] for n, r in {"ADD_CO_U32": "ADD_CO_U32", "SUB_CO_U32": "SUB_CO_U32", "SUBREV_CO_U32": "SUBREV_CO_U32",
         "ADDC_CO_U32": "ADD_CO_CI_U32", "SUBB_CO_U32": "SUB_CO_CI_U32", "SUBBREV_CO_U32": "SUBREV_CO_CI_U32"}.items()}

# v_mad_mix*: sources are f32, or f16 halves chosen by op_sel/op_sel_hi (see mix_source); the result is an f32 fma
# (one rounding), rounded again to f16 for the _lo/_hi forms, which write one half of the destination
MIX = {"MAD_MIX_F32": "f32", "MAD_MIXLO_F16": "lo", "MAD_MIXHI_F16": "hi"}

# SOPK: RDNA3's rows (the operand model gives the 16-bit immediate, sign- or zero-extended as the type says; the
# in-place forms read the destination's old value d, the compares the SGPR as a and the immediate as b)
SOPK = {n: rdna3.SOP[n] for n in ("MOVK_I32", "CMOVK_I32", "ADDK_I32", "MULK_I32",
                                  *(f"CMPK_{c}_{t}" for c in ("EQ", "LG", "GT", "GE", "LT", "LE") for t in ("I32", "U32")))}

def vop_row(name:str):
  """The semantics row of CDNA vector op `name` (stripped): CDNA's own, a renamed RDNA3 row, or an RDNA3 row of the
  same name; KeyError when CDNA's meaning is not modelled."""
  if name in VOP: return VOP[name]
  if name in RENAMED_VOP: return rdna3.VOP[RENAMED_VOP[name]]
  if name in SAME_VOP: return rdna3.VOP[name]
  raise KeyError(f"CDNA vector op {name} is not modelled")

def sop_row(name:str):
  """The same for scalar ops (SOP1/SOP2 rows of semantics/rdna3.py)."""
  if name in RENAMED_SOP: return rdna3.SOP[RENAMED_SOP[name]]
  if name in SAME_SOP: return rdna3.SOP[name]
  raise KeyError(f"CDNA scalar op {name} is not modelled")

# the packed 16-bit ops: RDNA3's PACKED rows (CDNA's pseudocode computes the two halves in the other order)
SAME_PACKED = frozenset("""PK_MAD_I16 PK_MUL_LO_U16 PK_ADD_I16 PK_SUB_I16 PK_LSHLREV_B16 PK_LSHRREV_B16 PK_ASHRREV_I16 PK_MAX_I16
PK_MIN_I16 PK_MAD_U16 PK_ADD_U16 PK_SUB_U16 PK_MAX_U16 PK_MIN_U16 PK_FMA_F16 PK_ADD_F16 PK_MUL_F16 PK_MIN_F16 PK_MAX_F16""".split())
# forms the RDNA3 translator implements in code rather than as rows (lane access, carries, 64-bit results, the
# division helpers): CDNA name -> RDNA3 name with the same pseudocode (READFIRSTLANE/READLANE/WRITELANE: CDNA's text
# is RDNA3's wave64 branch). The carries' encodings differ: GFX9's VOP2 v_add_co_u32 writes its carry to VCC (RDNA3 has
# no VOP2 carry-out-only form); VOP3b forms use SDST and SRC2 as on RDNA3 (CARRY holds them as rows).
SPECIAL = {"ADD_CO_U32": "ADD_CO_U32", "SUB_CO_U32": "SUB_CO_U32", "SUBREV_CO_U32": "SUBREV_CO_U32", "ADDC_CO_U32": "ADD_CO_CI_U32",
           "SUBB_CO_U32": "SUB_CO_CI_U32", "SUBBREV_CO_U32": "SUBREV_CO_CI_U32", "CNDMASK_B32": "CNDMASK_B32",
           "MAD_U64_U32": "MAD_U64_U32", "MAD_I64_I32": "MAD_I64_I32", "MBCNT_LO_U32_B32": "MBCNT_LO_U32_B32",
           "MBCNT_HI_U32_B32": "MBCNT_HI_U32_B32", "DIV_SCALE_F32": "DIV_SCALE_F32", "DIV_SCALE_F64": "DIV_SCALE_F64",
           "DIV_FMAS_F32": "DIV_FMAS_F32", "DIV_FMAS_F64": "DIV_FMAS_F64", "READFIRSTLANE_B32": "READFIRSTLANE_B32",
           "READLANE_B32": "READLANE_B32", "WRITELANE_B32": "WRITELANE_B32"}
# v_cmp / v_cmpx: `compare(name)` gives (condition, type) of semantics/rdna3.py's compare rows (FCMP, ICMP). GFX9's V_CMPX writes the result to
# EXEC and to its destination (VCC, or VOP3's SDST); RDNA3's writes EXEC only. TRU is GFX9's name for T.
CMPX_WRITES_SDST = True
# SOPC compares and bit tests with RDNA3's pseudocode; SOPP control with RDNA3's meaning (S_WAITCNT packs its counters
# differently on GFX9, vmcnt 3:0 and 15:14, expcnt 6:4, lgkmcnt 11:8; it waits for nothing here either way)
SAME_SOPC = frozenset("""CMP_EQ_I32 CMP_LG_I32 CMP_GT_I32 CMP_GE_I32 CMP_LT_I32 CMP_LE_I32 CMP_EQ_U32 CMP_LG_U32 CMP_GT_U32
CMP_GE_U32 CMP_LT_U32 CMP_LE_U32 BITCMP0_B32 BITCMP1_B32 BITCMP0_B64 BITCMP1_B64 CMP_EQ_U64 CMP_LG_U64""".split())
CONTROL = frozenset("""NOP BRANCH CBRANCH_SCC0 CBRANCH_SCC1 CBRANCH_VCCZ CBRANCH_VCCNZ CBRANCH_EXECZ CBRANCH_EXECNZ ENDPGM WAITCNT
SLEEP BARRIER SETPRIO SENDMSG ICACHE_INV""".split())
CMP_TYPES = ("F16", "F32", "F64", "I16", "I32", "I64", "U16", "U32", "U64")

def compare(name:str) -> tuple[str, str]|None:
  """(condition, type) of a stripped V_CMP/V_CMPX name (CMPX_LT_F32 -> ("LT", "f32")), or None (CLASS is special)."""
  import re
  if (m:=re.fullmatch(r"CMPX?_([A-Z]+)_(" + "|".join(CMP_TYPES) + ")", name)) is None or m.group(1) == "CLASS": return None
  return ({"TRU": "T"}.get(m.group(1), m.group(1)), m.group(2).lower())

def classify(encoding:str, name:str) -> str:
  """Where the meaning of CDNA instruction `name` (tinygrad's op name) in `encoding` (its tinygrad class) comes from;
  KeyError when this module does not describe it. The coverage test runs it over every instruction LLVM emits."""
  n = strip(name)
  if encoding.startswith(("GLOBAL", "FLAT", "SCRATCH", "DS", "SMEM")): return f"memory: RDNA3 {memory_alias(name)}"
  if encoding.startswith("VOP3P"):
    if name.startswith("V_MFMA_"): return f"mfma: {MFMAShape.parse(name).name}"
    if n in PACKED_F32 or n == "PK_MOV_B32": return "packed f32"
    if n in MIX: return "mix"
    if n in SAME_PACKED: return f"packed16: RDNA3 {n}"
    if n.startswith("ACCVGPR"): return "row: CDNA"
  elif encoding.startswith(("VOPC", "VOP3_SDST")) or encoding.startswith("VOP3") and n.startswith("CMP"):
    if compare(n) is not None: return f"compare{' (CMPX writes EXEC and SDST)' if n.startswith('CMPX') else ''}"
    if "CLASS" in n: return "special: RDNA3 " + n
  elif encoding.startswith(("VOP1", "VOP2", "VOP3")):
    if n in CARRY: return f"carry: RDNA3 {SPECIAL[n]}"
    if n in SPECIAL: return f"special: RDNA3 {SPECIAL[n]}"
    vop_row(n)
    return "row: CDNA" if n in VOP else f"row: RDNA3 {RENAMED_VOP.get(n, n)}"
  elif encoding.startswith("SOPK"):
    if n in SOPK: return "sopk"
  elif encoding.startswith("SOPC"):
    if n in SAME_SOPC: return f"sopc: RDNA3 {n}"
  elif encoding.startswith("SOPP"):
    if n in CONTROL: return f"control: RDNA3 {n}"
  elif encoding.startswith(("SOP1", "SOP2")):
    if n.endswith("_SAVEEXEC_B64") and n.removesuffix("_SAVEEXEC_B64") in SAVEEXEC: return f"saveexec: RDNA3 {SAVEEXEC[n.removesuffix('_SAVEEXEC_B64')]}"
    sop_row(n)
    return f"row: RDNA3 {RENAMED_SOP.get(n, n)}"
  raise KeyError(f"CDNA {encoding} {name} is not described")

# *** numeric helpers of the CDNA rows ***

def _quiet(x:np.ndarray) -> np.ndarray:
  """x with a signaling NaN made quiet (the quiet bit set), as the pseudocode's cvtToQuietNAN."""
  x = np.asarray(x)
  u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
  bit = u(1) << u({2: 9, 4: 22, 8: 51}[x.dtype.itemsize])
  return np.where(np.isnan(x), (x.view(u) | bit).view(x.dtype), x)

def _snan(x:np.ndarray) -> np.ndarray:
  x = np.asarray(x)
  u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
  bit = u(1) << u({2: 9, 4: 22, 8: 51}[x.dtype.itemsize])
  return np.isnan(x) & ((x.view(u) & bit) == 0)

def _minmax_gfx9(a, b, pick_a):
  """CDNA v_max/v_min (IEEE mode, the descriptor's default): a signaling NaN operand is returned quieted (S0 first);
  a quiet NaN yields the other operand, so two quiet NaNs give S1; +0 beats -0 for max, -0 for min."""
  a, b = np.asarray(a), np.asarray(b)
  out = np.where(pick_a, a, b)
  out = np.where(np.isnan(b), a, out)
  out = np.where(np.isnan(a), b, out)
  out = np.where(_snan(b), _quiet(b), out)
  return np.where(_snan(a), _quiet(a), out)

def fmax_gfx9(a, b):
  a, b = np.asarray(a), np.asarray(b)
  return _minmax_gfx9(a, b, (a > b) | ((a == b) & ~np.signbit(a)))

def fmin_gfx9(a, b):
  a, b = np.asarray(a), np.asarray(b)
  return _minmax_gfx9(a, b, (a < b) | ((a == b) & np.signbit(a)))

def bitop3(a, b, c, ttbl:int):
  """v_bitop3: each result bit is bit (a<<2 | b<<1 | c) of the 8-bit truth table."""
  a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
  out = np.zeros(np.broadcast(a, b, c).shape, a.dtype)
  for k in range(8):
    if ttbl >> k & 1: out |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
  return out

def bitop3_table(inst) -> int:
  """v_bitop3's truth table, spread over the VOP3 modifier fields: { OMOD[1:0], ABS[2:0], NEG[2:0] }."""
  return (inst.omod << 6) | (inst.abs << 3) | inst.neg

def pk_mov_b32(s0:np.ndarray, s1:np.ndarray, op_sel:int) -> np.ndarray:
  """v_pk_mov_b32: the low dword from S0's half op_sel bit 0 picks, the high dword from S1's half bit 1 picks."""
  lo = (np.asarray(s0, np.uint64) >> np.uint64(32 * (op_sel & 1))) & np.uint64(0xffffffff)
  hi = (np.asarray(s1, np.uint64) >> np.uint64(32 * (op_sel >> 1 & 1))) & np.uint64(0xffffffff)
  return lo | (hi << np.uint64(32))

def mix_source(raw:np.ndarray, i:int, op_sel:int, op_sel_hi:int) -> np.ndarray:
  """Source i of v_mad_mix*: the f32 register when op_sel_hi bit i is clear, else the f16 half op_sel bit i picks."""
  raw = np.asarray(raw, np.uint32)
  if not op_sel_hi >> i & 1: return raw.view(np.float32)
  half = (raw >> 16) if op_sel >> i & 1 else (raw & 0xffff)
  return half.astype(np.uint16).view(np.float16).astype(np.float32)

def mix(raws, op_sel:int, op_sel_hi:int, form:str, old=None) -> np.ndarray:
  """v_mad_mix_f32 / _mixlo_f16 / _mixhi_f16 (MIX[name] is the form): one fused multiply-add of the three mix sources
  (erratum cdna-mad-mix-fused), then for lo/hi rounded to f16 into that half of `old`, the other half kept."""
  from mockgpu.compiler.rdna.backends.numpy_runtime import fma32
  a, b, c = (mix_source(r, i, op_sel, op_sel_hi) for i, r in enumerate(raws))
  d = fma32(a, b, c)
  if form == "f32": return d.view(np.uint32)
  half = d.astype(np.float16).view(np.uint16).astype(np.uint32)
  old = np.asarray(old, np.uint32)
  return (old & np.uint32(0xffff0000)) | half if form == "lo" else (old & np.uint32(0xffff)) | (half << np.uint32(16))

def packed_f32(raw:np.ndarray, i:int, op_sel:int, op_sel_hi:int) -> tuple[np.ndarray, np.ndarray]:
  """The (low-result, high-result) f32 inputs of source i of a v_pk_*_f32, from its 64-bit register pair: op_sel bit i
  picks the half feeding the low result, op_sel_hi bit i the half feeding the high result."""
  raw = np.asarray(raw, np.uint64)
  halves = ((raw & 0xffffffff).astype(np.uint32).view(np.float32), (raw >> 32).astype(np.uint32).view(np.float32))
  return halves[op_sel >> i & 1], halves[op_sel_hi >> i & 1]

# *** SDWA: sub-dword operand selection (VOP1/VOP2/VOPC with src0 = 249) ***

SDWA_SEL = {0: "BYTE_0", 1: "BYTE_1", 2: "BYTE_2", 3: "BYTE_3", 4: "WORD_0", 5: "WORD_1", 6: "DWORD"}
SDWA_UNUSED = {0: "UNUSED_PAD", 1: "UNUSED_SEXT", 2: "UNUSED_PRESERVE"}

def _sel_field(sel:int) -> tuple[int, int]:
  if sel not in SDWA_SEL: raise ValueError(f"SDWA select {sel} is reserved")
  return ((sel * 8, 8) if sel < 4 else ((sel - 4) * 16, 16) if sel < 6 else (0, 32))

def sdwa_src(x:np.ndarray, sel:int, sext:bool) -> np.ndarray:
  """An SDWA source: the selected byte or word of the 32-bit register moved to bit 0, zero- or sign-extended."""
  shift, width = _sel_field(sel)
  x = np.asarray(x, np.uint32)
  if width == 32: return x
  v = (x >> np.uint32(shift)) & np.uint32((1 << width) - 1)
  if not sext: return v
  sign = np.uint32(1 << (width - 1))
  return np.where(v & sign, v | np.uint32((0xffffffff << width) & 0xffffffff), v).astype(np.uint32)

def sdwa_dst(result:np.ndarray, old:np.ndarray, sel:int, unused:int) -> np.ndarray:
  """An SDWA destination: the result's low bits go to the selected byte or word; the other bits are zero (PAD),
  copies of the written field's top bit (SEXT) or the old register's bits (PRESERVE)."""
  shift, width = _sel_field(sel)
  if unused not in SDWA_UNUSED: raise ValueError(f"SDWA dst_unused {unused} is reserved")
  result = np.asarray(result, np.uint32)
  if width == 32: return result
  field = np.uint32(((1 << width) - 1) << shift)
  placed = (result << np.uint32(shift)) & field
  if unused == 0: return placed
  if unused == 2: return placed | (np.asarray(old, np.uint32) & ~field)
  above = np.uint32((0xffffffff << (shift + width)) & 0xffffffff)  # SEXT: bits above the field copy its top bit
  return np.where(placed >> np.uint32(shift + width - 1) & 1, placed | above, placed).astype(np.uint32)

# *** DPP (GFX9 DPP_CTRL over a 64-lane wave) ***

def dpp_lanes(ctrl:int) -> tuple[np.ndarray, np.ndarray]:
  """For a GFX9 DPP_CTRL: each of the 64 lanes' source lane and whether that source exists. quad_perm and the row
  (16-lane) shifts, rotates and mirrors act within a row as on RDNA; wave_shl/rol/shr/ror move by one lane across
  the whole wave; row_bcast15 feeds each row from lane 15 of the row below, row_bcast31 rows 2 and 3 from lane 31;
  row_newbcast (gfx90a+) broadcasts lane n of each row to that row. Other values are reserved (ValueError)."""
  lane = np.arange(WAVE)
  row, i = lane & ~15, lane & 15
  if ctrl <= 0xff: return (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3), np.ones(WAVE, bool)
  n = ctrl & 15
  if 0x101 <= ctrl <= 0x10f: src, ok = row | ((i + n) & 15), i + n <= 15        # row_shl: read n lanes up
  elif 0x111 <= ctrl <= 0x11f: src, ok = row | ((i - n) & 15), i - n >= 0       # row_shr: read n lanes down
  elif 0x121 <= ctrl <= 0x12f: src, ok = row | ((i - n) & 15), np.ones(WAVE, bool)  # row_ror
  elif ctrl == 0x130: src, ok = (lane + 1) % WAVE, lane + 1 < WAVE              # wave_shl1
  elif ctrl == 0x134: src, ok = (lane + 1) % WAVE, np.ones(WAVE, bool)          # wave_rol1
  elif ctrl == 0x138: src, ok = (lane - 1) % WAVE, lane >= 1                    # wave_shr1
  elif ctrl == 0x13c: src, ok = (lane - 1) % WAVE, np.ones(WAVE, bool)          # wave_ror1
  elif ctrl == 0x140: src, ok = row | (15 - i), np.ones(WAVE, bool)             # row_mirror
  elif ctrl == 0x141: src, ok = row | ((i & 8) | (7 - (i & 7))), np.ones(WAVE, bool)  # row_half_mirror
  elif ctrl == 0x142: src, ok = np.maximum(row - 1, 0), row >= 16               # row_bcast15
  elif ctrl == 0x143: src, ok = np.full(WAVE, 31), lane >= 32                   # row_bcast31
  elif 0x150 <= ctrl <= 0x15f: src, ok = row | n, np.ones(WAVE, bool)           # row_newbcast
  else: raise ValueError(f"DPP_CTRL 0x{ctrl:x} is reserved on CDNA")
  return src, np.asarray(ok, bool)

def dpp(x:np.ndarray, exec_lanes:np.ndarray, ctrl:int, bound_ctrl:bool, row_mask:int, bank_mask:int) -> tuple[np.ndarray, np.ndarray]:
  """A DPP source operand [waves, 64] and the lanes the instruction writes. A source lane that does not exist or is
  inactive (GFX9 has no fetch-inactive) reads 0 with BOUND_CTRL, else the lane is not written; rows and banks
  outside ROW_MASK/BANK_MASK are never written."""
  src, exists = dpp_lanes(ctrl)
  vals = np.asarray(x)[:, src]
  ok = exists[None, :] & np.asarray(exec_lanes, bool)[:, src]
  lane = np.arange(WAVE)
  enabled = ((row_mask >> (lane >> 4)) & 1).astype(bool) & ((bank_mask >> ((lane >> 2) & 3)) & 1).astype(bool)
  return np.where(ok, vals, vals.dtype.type(0)), (ok | bound_ctrl) & enabled[None, :]

# *** memory addressing ***

@dataclass(frozen=True)
class BufferResource:
  """A GFX9 buffer resource (V#, four SGPRs)."""
  base:int; stride:int; swizzle:bool; num_records:int; index_stride:int; element_size:int; add_tid:bool  # noqa: E702

  @staticmethod
  def decode(words) -> "BufferResource":
    w0, w1, w2, w3 = (int(w) & 0xffffffff for w in words)
    return BufferResource(base=w0 | (w1 & 0xffff) << 32, stride=(w1 >> 16) & 0x3fff, swizzle=bool(w1 >> 31 & 1), num_records=w2,
                          index_stride=8 << ((w3 >> 21) & 3), element_size=2 << ((w3 >> 19) & 3), add_tid=bool(w3 >> 23 & 1))

def mubuf_address(r:BufferResource, vindex, voffset, soffset:int, inst_offset:int, idxen:bool, offen:bool, size:int):
  """Byte addresses [waves, 64] and in-range masks of a MUBUF access of `size` bytes per lane.
  offset = VGPR offset (OFFEN) + the instruction's 12-bit offset; index = VGPR index (IDXEN) + the lane id (V#.ADD_TID).
  Linear: base + soffset + offset + stride * index. Swizzled (V#.SWIZZLE): elements of ELEMENT_SIZE bytes are
  interleaved over INDEX_STRIDE consecutive indices. Range check (the soffset is not part of it): raw buffers (stride 0)
  need offset + size <= num_records; structured ones index < num_records (and offset + size <= stride when swizzled).
  An access out of range loads 0 and stores nothing."""
  lane = np.arange(WAVE, dtype=np.int64)
  index = (np.asarray(vindex, np.int64) if idxen else 0) + (lane if r.add_tid else 0)
  offset = (np.asarray(voffset, np.int64) & 0xffffffff if offen else 0) + inst_offset
  index, offset = np.broadcast_arrays(np.asarray(index, np.int64), np.asarray(offset, np.int64))
  if r.swizzle:
    addr = ((index // r.index_stride) * r.stride + (offset // r.element_size) * r.element_size) * r.index_stride \
           + (index % r.index_stride) * r.element_size + offset % r.element_size
  else: addr = offset + r.stride * index
  if r.stride == 0: ok = offset + size <= r.num_records
  else: ok = (index < r.num_records) & ((offset + size <= r.stride) if r.swizzle else True)
  return (r.base + soffset + addr) & 0xffffffffffff, np.asarray(ok, bool)

def smem_address(base:int, inst, read_sgpr) -> int:
  """The address of a GFX9 scalar memory load (low two bits ignored): the SGPR pair's base plus, by IMM/SOFFSET_EN,
  the SGPR that OFFSET[6:0] names (0/0), the 21-bit signed immediate OFFSET (1/0), the SGPR SOFFSET names (0/1), or
  the immediate plus that SGPR (1/1). read_sgpr(n) -> the value of SGPR n."""
  imm_off = inst.offset - (1 << 21) if inst.offset >> 20 & 1 else inst.offset
  if inst.imm: off = imm_off + (read_sgpr(inst.soffset.offset) if inst.soffset_en else 0)
  else: off = read_sgpr(inst.soffset.offset) if inst.soffset_en else read_sgpr(inst.offset & 0x7f)
  return (base + off) & ~3 & 0xffffffffffffffff

FLAT_OFFSET_BITS = {"FLAT": (12, False), "GLOBAL": (13, True), "SCRATCH": (13, True)}  # gfx940: width, signed
SADDR_OFF = 0x7f  # GLOBAL/SCRATCH saddr that means "no SGPR base"

def flat_offset(kind:str, field:int) -> int:
  """The immediate offset of a FLAT (12-bit unsigned), GLOBAL or SCRATCH (13-bit signed) instruction on gfx940+."""
  bits, signed = FLAT_OFFSET_BITS[kind]
  field &= (1 << bits) - 1
  return field - (1 << bits) if signed and field >> (bits - 1) else field

# memory instruction names: GFX9 name pieces -> RDNA3's (global_load_dword is global_load_b32, ds_read2_b32 is
# ds_load_2addr_b32, s_load_dwordx4 is s_load_b128); the access itself is the same
_SIZES = [("DWORDX16", "B512"), ("DWORDX8", "B256"), ("DWORDX4", "B128"), ("DWORDX3", "B96"), ("DWORDX2", "B64"), ("DWORD", "B32"),
          ("UBYTE", "U8"), ("SBYTE", "I8"), ("USHORT", "U16"), ("SSHORT", "I16"), ("STORE_BYTE", "STORE_B8"), ("STORE_SHORT", "STORE_B16")]
# the 16-bit-destination loads and high-half stores (RDNA3 puts D16 before the type)
_D16 = {"LOAD_U8_D16_HI": "LOAD_D16_HI_U8", "LOAD_U8_D16": "LOAD_D16_U8", "LOAD_I8_D16_HI": "LOAD_D16_HI_I8", "LOAD_I8_D16": "LOAD_D16_I8",
        "LOAD_SHORT_D16_HI": "LOAD_D16_HI_B16", "LOAD_SHORT_D16": "LOAD_D16_B16", "STORE_B8_D16_HI": "STORE_D16_HI_B8",
        "STORE_B16_D16_HI": "STORE_D16_HI_B16"}
_DS = [("READ2ST64", "LOAD_2ADDR_STRIDE64"), ("WRITE2ST64", "STORE_2ADDR_STRIDE64"), ("READ2", "LOAD_2ADDR"), ("WRITE2", "STORE_2ADDR"),
       ("WRXCHG2ST64", "STOREXCHG_2ADDR_STRIDE64"), ("WRXCHG2", "STOREXCHG_2ADDR"), ("WRXCHG", "STOREXCHG"), ("READ", "LOAD"),
       ("WRITE", "STORE"), ("CMPST", "CMPSTORE")]

# GFX9 atomics name the operation only (and _X2 for 64 bits); RDNA3 adds the type
_ATOMIC_TYPES = {"SWAP": "SWAP_B", "CMPSWAP": "CMPSWAP_B", "ADD": "ADD_U", "SUB": "SUB_U", "SMIN": "MIN_I", "UMIN": "MIN_U",
                 "SMAX": "MAX_I", "UMAX": "MAX_U", "AND": "AND_B", "OR": "OR_B", "XOR": "XOR_B", "INC": "INC_U", "DEC": "DEC_U"}

def _atomic(n:str) -> str:
  head, _, op = n.partition("_ATOMIC_")
  wide = op.endswith("_X2")
  op = op.removesuffix("_X2")
  return f"{head}_ATOMIC_{_ATOMIC_TYPES[op]}{64 if wide else 32}" if op in _ATOMIC_TYPES else n

def memory_alias(name:str) -> str:
  """The RDNA3 name of a CDNA memory instruction; ValueError when RDNA3 has none (buffer, LDS-DMA, GFX9-only atomics)."""
  n = name
  for a, b in _SIZES: n = n.replace(a, b)
  if "_ATOMIC_" in n: n = _atomic(n)
  if n.startswith(("GLOBAL_", "FLAT_", "SCRATCH_")):
    for a, b in _D16.items():
      if a in n:
        n = n.replace(a, b)
        break
  elif n.startswith("DS_"):
    for a, b in _DS: n = n.replace(a, b)
  from tinygrad.runtime.autogen.amd.rdna3 import enum
  for cls in (enum.GLOBALOp, enum.FLATOp, enum.SCRATCHOp, enum.DSOp, enum.SMEMOp):
    if n in cls.__members__: return n
  raise ValueError(f"CDNA memory instruction {name} has no RDNA3 counterpart (tried {n})")

# *** exact sums, rounded once (MFMA's accumulation) ***

_U = 2.0 ** -53  # float64 unit roundoff

def _two_sum(a, b):
  """s, e with s = fl(a + b) and a + b = s + e exactly (Knuth's TwoSum)."""
  s = a + b
  bv = s - a
  return s, (a - (s - bv)) + (b - bv)

def _grow(expansion:list, b) -> list:
  """Shewchuk's Grow-Expansion: the components of expansion + b exactly (nonoverlapping, increasing magnitude);
  components that are zero everywhere are dropped, which keeps the expansion short."""
  out, q = [], b
  for e in expansion:
    q, h = _two_sum(q, e)
    if h.any(): out.append(h)
  out.append(q)
  return out

def _top(expansion:list):
  """The largest-magnitude nonzero component (its sign is the sign of the whole expansion), or 0."""
  top = np.zeros_like(expansion[0])
  for c in expansion: top = np.where(c != 0, c, top)
  return top

def _bracket(expansion:list):
  """s (float64) next to the exact sum and the exact residual sum - s (an expansion) with |residual| below s's
  smaller gap to its neighbours, so the sum lies between s and its neighbour on the residual's side."""
  s = expansion[0]
  for c in expansion[1:]: s = s + c
  for _ in range(8):
    r = _grow(expansion, -s)
    approx = np.zeros_like(s)
    for c in r: approx = approx + c  # within a few ulp of the residual (nonoverlapping components, smallest first)
    gap = np.abs(np.nextafter(s, np.where(approx > 0, np.inf, -np.inf)) - s)  # to the neighbour on the residual's side
    far = 2 * np.abs(approx) > gap  # (gap / 2 would underflow to 0 next to zero)
    if not far.any(): return s, r
    s = np.where(far, s + approx, s)
  raise ArithmeticError("exact_sum: the residual did not converge")  # cannot happen for finite terms

def _round_expansion(expansion:list, dtype) -> np.ndarray:
  """The exact sum of a finite expansion rounded once to dtype (float32 via float64 round-to-odd, which then rounds
  to float32 correctly, Boldo-Melquiond; float64 by comparing the residual with half a gap)."""
  s, r = _bracket(expansion)
  sign = np.sign(_top(r))
  nb = np.nextafter(s, np.where(sign > 0, np.inf, -np.inf))
  if dtype == np.float64:
    beyond = np.sign(_top(_grow(r, -sign * np.abs(nb - s) / 2)))  # the residual past the midpoint: +sign, short: -sign
    even = (s.view(np.uint64) & 1) == 0
    return np.where(sign == 0, s, np.where(beyond == sign, nb, np.where(beyond == 0, np.where(even, s, nb), s)))
  odd = (s.view(np.uint64) & 1) == 1
  return np.where((sign == 0) | odd, s, nb).astype(dtype)

def exact_sum(terms, dtype=np.float32) -> np.ndarray:
  """sum(terms) over axis 0 of float64 terms that are exact values, rounded once to dtype (float32 or float64).
  float32: the float64 sum is used where its error bound (n u sum|t|) keeps the exact value inside one float32
  rounding interval, as it nearly always does; the rest are summed exactly (Grow-Expansion). Non-finite terms give
  the float64 sum's inf or NaN. Zeros are signed as IEEE addition signs them (x + -x is +0, -0 + -0 is -0, and a
  nonzero sum too small for dtype keeps its sign)."""
  t = np.asarray(terms, np.float64)
  n = t.shape[0]
  with np.errstate(all="ignore"):
    naive = t[0].copy()
    for x in t[1:]: naive += x  # (numpy's sum starts from +0 and loses a lone -0's sign)
    special = ~np.isfinite(t).all(0)
    if dtype == np.float32:
      r = naive.astype(np.float32)
      bound = n * _U * np.abs(t).sum(0) * 1.001
      up = (r.astype(np.float64) + np.nextafter(r, np.float32(np.inf)).astype(np.float64)) / 2
      down = (r.astype(np.float64) + np.nextafter(r, np.float32(-np.inf)).astype(np.float64)) / 2
      done = special | (np.isfinite(r) & (naive - bound > down) & (naive + bound < up))
      out = r
    else: done, out = special, naive.astype(np.float64)
    if done.all(): return out
    idx = np.nonzero(~done)
    sub = t[(slice(None),) + idx]
    expansion = [sub[0]]
    for x in sub[1:]: expansion = _grow(expansion, x)
    out = out.copy()
    out[idx] = _round_expansion(expansion, dtype)
  return out

def two_product(a, b):
  """p, e with a*b = p + e exactly for float64 a, b (e from an exact fma)."""
  from mockgpu.compiler.exact import fma64
  p = np.multiply(a, b)
  return p, fma64(a, b, -p)

# *** MFMA: shapes, register layouts, D = A * B + C ***

# fp8 formats: (exponent bits, mantissa bits, exponent bias, has inf, the NaN encodings). gfx942's v_mfma_*_fp8/bf8
# take the FNUZ formats (no inf, no -0: 0x80 is the only NaN); gfx950 the OCP formats (e4m3fn: 0x7f/0xff NaN, no inf;
# e5m2: IEEE-like with inf and NaNs)
FP8 = {("cdna3", "FP8"): (4, 3, 8, False, (0x80,)), ("cdna3", "BF8"): (5, 2, 16, False, (0x80,)),
       ("cdna4", "FP8"): (4, 3, 7, False, (0x7f, 0xff)), ("cdna4", "BF8"): (5, 2, 15, True, ())}

@functools.lru_cache(maxsize=None)
def fp8_table(arch:str, kind:str) -> np.ndarray:
  """The float64 value of each of the 256 codes of an fp8 format."""
  e_bits, m_bits, bias, has_inf, nans = FP8[(arch, kind)]
  out = np.empty(256, np.float64)
  for code in range(256):
    sign, exp, man = code >> 7, (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if code in nans or (has_inf and exp == (1 << e_bits) - 1 and man): v = np.nan
    elif has_inf and exp == (1 << e_bits) - 1: v = np.inf
    elif exp == 0: v = man * 2.0 ** (1 - bias - m_bits)
    else: v = (1 + man / (1 << m_bits)) * 2.0 ** (exp - bias)
    out[code] = -v if sign else v
  return out

_BITS = {"F32": 32, "F16": 16, "BF16": 16, "I8": 8, "FP8": 8, "BF8": 8, "F64": 64}

@dataclass(frozen=True)
class MFMAShape:
  name:str
  out:str                # F32, I32, F64
  m:int; n:int; k:int    # noqa: E702 (per block)
  blocks:int
  a:str; b:str           # noqa: E702 input kinds (F32 F16 BF16 I8 FP8 BF8 F64)

  @property
  def k_per_lane(self) -> int: return self.m * self.blocks * self.k // WAVE
  def in_regs(self, kind:str) -> int: return max(1, self.k_per_lane * _BITS[kind] // 32)
  @property
  def out_regs(self) -> int: return self.m * self.n * self.blocks * (2 if self.out == "F64" else 1) // WAVE

  @staticmethod
  def parse(name:str) -> "MFMAShape":
    """The shape of v_mfma_<out>_<M>x<N>x<K>[_<B>b]_<in>; ValueError for the forms not modelled (sparse SMFMAC, xf32,
    the f8f6f4 family, whose formats live in CBSZ/BLGP, and 4x4 f64 blocks)."""
    import re
    m = re.fullmatch(r"V_MFMA_(F32|I32|F64)_(\d+)X(\d+)X(\d+)(?:_(\d+)B)?_(F32|F16|BF16|I8|F64|(?:FP8|BF8)_(?:FP8|BF8))", name)
    if m is None or (m.group(1) == "F64" and m.group(5)): raise ValueError(f"{name}: this MFMA form is not modelled")
    out, M, N, K, B, ins = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5) or 1), m.group(6)
    a, b = ins.split("_") if "_" in ins else (ins, ins)
    return MFMAShape(name, out, M, N, K, B, a, b)

  def operand_index(self) -> tuple[np.ndarray, np.ndarray]:
    """For A (and B): each (block, row-or-column, k) element's lane and its index among the lane's K-elements."""
    b, i, k = np.meshgrid(np.arange(self.blocks), np.arange(self.m), np.arange(self.k), indexing="ij")
    kpl = self.k_per_lane
    return i + self.m * (b + self.blocks * (k // kpl)), k % kpl

  def output_index(self) -> tuple[np.ndarray, np.ndarray]:
    """For C and D: each (block, row, column) element's lane and its element index (a register, or a register pair
    for f64). 4x4 blocks sit in groups of 4 lanes, one row per register; 16 and 32-wide blocks put 4 consecutive rows
    in 4 registers of one lane group, the next 4 rows in the next group of n lanes."""
    b, i, j = np.meshgrid(np.arange(self.blocks), np.arange(self.m), np.arange(self.n), indexing="ij")
    if self.m == 4: return j + 4 * b, i
    groups = WAVE // self.n
    per_block = self.m * self.n // WAVE
    return j + self.n * ((i // 4) % groups), (i % 4) + 4 * (i // (4 * groups)) + per_block * b

def _unpack(regs, kind:str, count:int, arch:str) -> np.ndarray:
  """count elements of `kind` packed low to high in consecutive 32-bit registers [waves, 64] -> [waves, 64, count]."""
  words = np.stack([np.asarray(r, np.uint32) for r in regs], axis=-1)       # [waves, 64, regs]
  raw = words.view(np.uint8).reshape(words.shape[:-1] + (-1,))            # little-endian bytes
  nbytes = _BITS[kind] // 8
  raw = raw[..., :count * nbytes]
  if kind == "F32": return raw.view(np.float32).astype(np.float64)
  if kind == "F64": return raw.view(np.float64)
  if kind == "F16": return raw.view(np.float16).astype(np.float64)
  if kind == "BF16": return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
  if kind == "I8": return raw.view(np.int8).astype(np.int64)
  return fp8_table(arch, kind)[raw]

def mfma(shape:MFMAShape, a_regs, b_regs, c_regs, arch:str="cdna3", cbsz:int=0, abid:int=0, blgp:int=0, neg:int=0):
  """D = A * B + C of v_mfma_* for registers [waves, 64] uint32 (A, B from VGPRs or AGPRs, C/D per ACC_CD): the list of
  D registers. Float results are the products summed exactly and rounded once (f32 products of f16/bf16/fp8/f32
  inputs are exact in float64; f64 products are split with an exact fma); integer results wrap to 32 bits.
  The broadcast controls CBSZ/ABID/BLGP and f64's NEG are not modelled: nonzero values raise ValueError."""
  if cbsz or abid or blgp or neg: raise ValueError(f"{shape.name}: CBSZ/ABID/BLGP/NEG {cbsz}/{abid}/{blgp}/{neg} are not modelled")
  kpl = shape.k_per_lane
  lane, e = shape.operand_index()                                           # [blocks, m, k]
  A = _unpack(a_regs, shape.a, kpl, arch)[:, lane, e]                       # [waves, blocks, m, k]
  B = _unpack(b_regs, shape.b, kpl, arch)[:, lane, e]                       # [waves, blocks, n, k]
  olane, oelem = shape.output_index()                                       # [blocks, m, n]
  words = np.stack([np.asarray(r, np.uint32) for r in c_regs], axis=-1)     # C: [waves, 64, registers]
  if shape.out == "I32":
    acc = np.einsum("wbik,wbjk->wbij", A, B) + words.view(np.int32)[:, olane, oelem].astype(np.int64)
    return _pack(shape, (acc & 0xffffffff).astype(np.uint32), words)
  a4, b4 = A[:, :, :, None, :], B[:, :, None, :, :]                         # [waves, blocks, m, n, k] by broadcasting
  if shape.out == "F32":
    terms = [*np.moveaxis(a4 * b4, -1, 0), words.view(np.float32)[:, olane, oelem].astype(np.float64)]
    return _pack(shape, exact_sum(terms, np.float32).view(np.uint32), words)
  p, err = two_product(a4, b4)
  terms = [*np.moveaxis(p, -1, 0), *np.moveaxis(err, -1, 0), words.view(np.float64)[:, olane, oelem]]
  return _pack(shape, exact_sum(terms, np.float64).view(np.uint64), words)

def _pack(shape:MFMAShape, d:np.ndarray, words:np.ndarray) -> list:
  """D elements [waves, blocks, m, n] into the output registers' layout -> list of [waves, 64] uint32."""
  lane, elem = shape.output_index()
  if shape.out == "F64":
    out = np.zeros(words.shape[:2] + (shape.out_regs // 2,), np.uint64)
    out[:, lane, elem] = d
    out = out.view(np.uint32).reshape(words.shape[:2] + (shape.out_regs,))
  else:
    out = np.zeros(words.shape[:2] + (shape.out_regs,), np.uint32)
    out[:, lane, elem] = d
  return [out[..., r] for r in range(shape.out_regs)]
