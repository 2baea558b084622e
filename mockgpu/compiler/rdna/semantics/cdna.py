"""CDNA3 (gfx942, MI300X) as a semantics table: the GFX9-family ISA tinygrad decodes with its "cdna" tables, written as
RDNA3's rows where CDNA's pseudocode repeats RDNA3's (tests/compiler/rdna/test_cdna.py compares every such pair in both ISAs'
str_pcode) plus the rows CDNA computes differently. semantics/cdna4.py is this table plus gfx950's additions.

  names       CDNA op names RDNA3 renamed (v_add_u32 is v_add_nc_u32, s_andn2_b32 is s_and_not1_b32,
              global_load_dword is global_load_b32, ...) are ALIASES, applied by operands.lower, so the RDNA3 operand
              logic keyed on names (carries, accumulators, memory kinds) sees RDNA3's; every alias key is a CDNA name.
  rows        VOP/SOP/PACKED hold only what CDNA defines: an RDNA3 row CDNA does not repeat is not in this table, so
              executing it raises UnsupportedInstruction rather than running RDNA3's meaning.
  encodings   GFX9 = True: operands.lower takes the GFX9 encodings (operands._gfx9: M0 at 124, SDWA, GFX9 DPP, SMEM
              offsets, FLAT offsets, AGPRs, MFMA, packed f32).
  results     a 16-bit VALU result zeroes bits 31:16 of its VGPR (HIGH16_ZEROED) except for the ops GFX9 changed to
              preserve them (LLVM's GCNSubtarget::zeroesHigh16BitsOfDest: mad/fma/div_fixup f16 and the mix forms).
  waves       wave64 only; COMPUTE_TMPRING_SIZE.WAVESIZE is 13 bits of 1 KiB units on GFX9; workgroup IDs in the SGPRs
              after the user SGPRs (as RDNA3).
"""
from __future__ import annotations
from mockgpu.compiler.rdna.semantics import rdna3
from mockgpu.compiler.rdna.semantics.lang import table, WIDTH
from mockgpu.compiler.rdna.semantics.family_setup import CDNA3 as _SETUP

FAMILY = "cdna3"
GFX9 = _SETUP.GFX9

def strip(name:str) -> str:
  """A row key from an instruction name: no V_/S_ prefix, no _E32/_E64."""
  name = name[2:] if name.startswith(("V_", "S_")) else name
  return name.removesuffix("_E32").removesuffix("_E64")

# *** RDNA3 rows CDNA repeats (tests/compiler/rdna/test_cdna.py compares each pair's pseudocode) ***

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
SAME_SOP = frozenset("""
ABSDIFF_I32 ABS_I32 ADDC_U32 ADD_I32 ADD_U32 AND_B32 AND_B64 ASHR_I32 ASHR_I64 BCNT0_I32_B32 BCNT0_I32_B64 BCNT1_I32_B32
BCNT1_I32_B64 BFE_I32 BFE_I64 BFE_U32 BFE_U64 BFM_B32 BFM_B64 BITSET0_B32 BITSET0_B64 BITSET1_B32 BITSET1_B64 BREV_B32
BREV_B64 CMOV_B32 CMOV_B64 CSELECT_B32 CSELECT_B64 GETPC_B64 LSHL1_ADD_U32 LSHL2_ADD_U32 LSHL3_ADD_U32 LSHL4_ADD_U32 LSHL_B32
LSHL_B64 LSHR_B32 LSHR_B64 MAX_I32 MAX_U32 MIN_I32 MIN_U32 MOV_B32 MOV_B64 MUL_HI_I32 MUL_HI_U32 MUL_I32 NAND_B32
NAND_B64 NOR_B32 NOR_B64 NOT_B32 NOT_B64 OR_B32 OR_B64 PACK_HH_B32_B16 PACK_LH_B32_B16 PACK_LL_B32_B16 QUADMASK_B32
QUADMASK_B64 SEXT_I32_I16 SEXT_I32_I8 SUBB_U32 SUB_I32 SUB_U32 WQM_B32 WQM_B64 XNOR_B32 XNOR_B64 XOR_B32 XOR_B64
""".split())
# the packed 16-bit ops (CDNA's pseudocode computes the two halves in the other order), SOPC compares and bit tests
SAME_PACKED = frozenset("""PK_MAD_I16 PK_MUL_LO_U16 PK_ADD_I16 PK_SUB_I16 PK_LSHLREV_B16 PK_LSHRREV_B16 PK_ASHRREV_I16 PK_MAX_I16
PK_MIN_I16 PK_MAD_U16 PK_ADD_U16 PK_SUB_U16 PK_MAX_U16 PK_MIN_U16 PK_FMA_F16 PK_ADD_F16 PK_MUL_F16 PK_MIN_F16 PK_MAX_F16""".split())
SAME_SOPC = frozenset("""CMP_EQ_I32 CMP_LG_I32 CMP_GT_I32 CMP_GE_I32 CMP_LT_I32 CMP_LE_I32 CMP_EQ_U32 CMP_LG_U32 CMP_GT_U32
CMP_GE_U32 CMP_LT_U32 CMP_LE_U32 BITCMP0_B32 BITCMP1_B32 BITCMP0_B64 BITCMP1_B64 CMP_EQ_U64 CMP_LG_U64""".split())
# SOPP control with RDNA3's meaning (S_WAITCNT packs its counters differently on GFX9; it waits for nothing here either way)
CONTROL = frozenset("""NOP BRANCH CBRANCH_SCC0 CBRANCH_SCC1 CBRANCH_VCCZ CBRANCH_VCCNZ CBRANCH_EXECZ CBRANCH_EXECNZ ENDPGM WAITCNT
SLEEP BARRIER SETPRIO SENDMSG ICACHE_INV""".split())
# SOPK: RDNA3's rows (the operand model gives the 16-bit immediate, sign- or zero-extended as the type says)
SOPK = frozenset(("MOVK_I32", "CMOVK_I32", "ADDK_I32", "MULK_I32",
                  *(f"CMPK_{c}_{t}" for c in ("EQ", "LG", "GT", "GE", "LT", "LE") for t in ("I32", "U32"))))
# forms RDNA3 implements with special operands (lane access, carries, 64-bit results, the division helpers) whose
# pseudocode CDNA repeats (READFIRSTLANE/READLANE/WRITELANE: CDNA's text is RDNA3's wave64 branch)
SPECIAL = frozenset("""CNDMASK_B32 MAD_U64_U32 MAD_I64_I32 MBCNT_LO_U32_B32 MBCNT_HI_U32_B32 DIV_SCALE_F32 DIV_SCALE_F64 DIV_FMAS_F32
DIV_FMAS_F64 READFIRSTLANE_B32 READLANE_B32 WRITELANE_B32 ADD_CO_U32 SUB_CO_U32 SUBREV_CO_U32""".split())

# CDNA names of RDNA3 rows (RDNA renamed them): CDNA name -> RDNA3 name
RENAMED_VOP = {"ADD_U32": "ADD_NC_U32", "SUB_U32": "SUB_NC_U32", "SUBREV_U32": "SUBREV_NC_U32", "ADD_U16": "ADD_NC_U16",
               "SUB_U16": "SUB_NC_U16", "ADD_I16": "ADD_NC_I16", "SUB_I16": "SUB_NC_I16", "ADD_I32": "ADD_NC_I32",
               "SUB_I32": "SUB_NC_I32", "FFBH_U32": "CLZ_I32_U32", "FFBL_B32": "CTZ_I32_B32", "FFBH_I32": "CLS_I32",
               "CVT_PKRTZ_F16_F32": "CVT_PK_RTZ_F16_F32", "ALIGNBIT_B32": "ALIGNBIT_B32", "ALIGNBYTE_B32": "ALIGNBYTE_B32"}
RENAMED_SOP = {"FLBIT_I32_B32": "CLZ_I32_U32", "FF1_I32_B32": "CTZ_I32_B32", "FLBIT_I32": "CLS_I32",
               "FLBIT_I32_B64": "CLZ_I32_U64", "FF1_I32_B64": "CTZ_I32_B64", "ANDN2_B32": "AND_NOT1_B32",
               "ANDN2_B64": "AND_NOT1_B64", "ORN2_B32": "OR_NOT1_B32", "ORN2_B64": "OR_NOT1_B64"}
# the carry-in forms (GFX9 names them _CO_ with C/B; VOP2 reads VCC, VOP3b its third source): RDNA3's _CO_CI_ rows
CARRY_IN = {"ADDC_CO_U32": "ADD_CO_CI_U32", "SUBB_CO_U32": "SUB_CO_CI_U32", "SUBBREV_CO_U32": "SUBREV_CO_CI_U32"}
# s_*_saveexec_b64 (wave64: the whole EXEC) -> the operation of RDNA3's <op>_SAVEEXEC_B64 row
SAVEEXEC = {"AND": "AND", "OR": "OR", "XOR": "XOR", "NAND": "NAND", "NOR": "NOR", "XNOR": "XNOR", "ANDN1": "AND_NOT0",
            "ANDN2": "AND_NOT1", "ORN1": "OR_NOT0", "ORN2": "OR_NOT1"}
# v_mad_mix*: one fused multiply-add of f32 or f16 sources (erratum cdna-mad-mix-fused: LLVM's gfx940 names these
# opcodes v_fma_mix_*): RDNA3's FMA_MIX rows and their op_sel/op_sel_hi source selection
MIX = {"MAD_MIX_F32": "FMA_MIX_F32", "MAD_MIXLO_F16": "FMA_MIXLO_F16", "MAD_MIXHI_F16": "FMA_MIXHI_F16"}
# gfx90a+ packed f32 over 64-bit register pairs: each half is the f32 row (operands._pk_f32 picks the halves)
PACKED_F32 = {"PK_ADD_F32": "ADD_F32", "PK_MUL_F32": "MUL_F32", "PK_FMA_F32": "FMA_F32"}
# v_cmp/v_cmpx: RDNA3's compare rows; TRU is GFX9's name for T. GFX9's V_CMPX writes EXEC and its SDST (VCC in e32).
CMP_CONDITIONS = {"TRU": "T"}
CMP_TYPES = ("F16", "F32", "F64", "I16", "I32", "I64", "U16", "U32", "U64")

def compare(name:str) -> tuple[str, str]|None:
  """(condition, type) of a stripped V_CMP/V_CMPX name (CMPX_LT_F32 -> ("LT", "f32")), or None (CLASS is special)."""
  import re
  if (m:=re.fullmatch(r"CMPX?_([A-Z]+)_(" + "|".join(CMP_TYPES) + ")", name)) is None or m.group(1) == "CLASS": return None
  return (CMP_CONDITIONS.get(m.group(1), m.group(1)), m.group(2).lower())

# *** CDNA's own rows ***

# min/max: with two NaN operands CDNA's pseudocode returns S1 (quieted), RDNA3's S0; one NaN yields the other operand in
# both; +0 > -0 in both. v_accvgpr_*: a move between the register files (operands._accvgpr names them).
OWN = table("""
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
""")

# *** the table ***

def _cdna_names(*classes:str) -> list[str]:
  from tinygrad.runtime.autogen.amd.cdna import enum
  return [op.name for c in classes for op in getattr(enum, c)]

VOP_ENCODINGS = ("VOP1Op", "VOP2Op", "VOP3Op", "VOP3SDOp", "VOPCOp", "VOP3POp")

def _compares() -> dict:
  """RDNA3's compare rows under the names CDNA's VOPC/VOP3 compares take (CLASS included)."""
  keys = {strip(n) for n in _cdna_names("VOPCOp") if n.startswith("V_CMP")}
  return {k: rdna3.VOP[k] for k in (_vop_key(n) for n in sorted(keys))}

VOP_RENAMES = {**RENAMED_VOP, **CARRY_IN, **MIX}

def _vop_key(n:str) -> str:
  """The row key of stripped CDNA vector op n (CMP_TRU_F32 is RDNA3's CMP_T_F32)."""
  if n in VOP_RENAMES: return VOP_RENAMES[n]
  if compare(n) is not None:
    for gfx9, rdna in CMP_CONDITIONS.items(): n = n.replace(f"_{gfx9}_", f"_{rdna}_")
  return n

# sorted: a table's order is its rows' order everywhere (a frozenset's follows the process's string hashing)
VOP = {**{n: rdna3.VOP[n] for n in sorted(SAME_VOP | (SPECIAL - {"READFIRSTLANE_B32", "READLANE_B32", "WRITELANE_B32"}))},
       **{r: rdna3.VOP[r] for r in VOP_RENAMES.values()}, **_compares(), **OWN}
# gfx942's fp8/bf8 conversions in its FNUZ formats (floats.f32_to_fnuz8; CDNA4 replaces them with the OCP ones): the
# packed forms write the 16 bits op_sel[3] selects and keep the other half (not HIGH16_ZEROED, below); SDWA selects
# v_cvt_f32_fp8/bf8's byte, the e32 form reads byte 0
FNUZ8 = table("""
CVT_PK_FP8_F32 u16 f32 f32 = f32_fp8_fnuz(a) | (f32_fp8_fnuz(b) << 8)
CVT_PK_BF8_F32 u16 f32 f32 = f32_bf8_fnuz(a) | (f32_bf8_fnuz(b) << 8)
CVT_F32_FP8 f32 u32 = fp8_fnuz_f32(a & 0xff)
CVT_F32_BF8 f32 u32 = bf8_fnuz_f32(a & 0xff)
""")
VOP = {**VOP, **FNUZ8}
SOP = {**{n: rdna3.SOP[n] for n in sorted(SAME_SOP | SAME_SOPC | SOPK)}, **{r: rdna3.SOP[r] for r in RENAMED_SOP.values()},
       **{f"{op}_SAVEEXEC_B64": rdna3.SOP[f"{op}_SAVEEXEC_B64"] for op in SAVEEXEC.values()}}
PACKED = {n: rdna3.PACKED[n] for n in sorted(SAME_PACKED)}
CLAMPED = rdna3.CLAMPED
# VOP ops whose last source is the destination itself; VOP2 ops with the literal K as their third source
ACCUMULATE = {"FMAC_F32", "FMAC_F64"}
LITERAL_K = {"FMAMK_F32", "FMAAK_F32"}
FLOAT_MODS = rdna3.FLOAT_MODS
PACKED_CLAMPED = {n: r for n, r in rdna3.PACKED_CLAMPED.items() if n in PACKED}
DOT_SIGNS = rdna3.DOT_SIGNS
# the GFX9 lowering (operands._gfx9) names what it does not execute itself
NOT_EXECUTED:dict[str, str] = {}
# COMPUTE_PGM_RSRC1 bit 23 is ENABLE_IEEE_MODE on gfx9 as on gfx11 (the v_min/v_max sNaN rule, errata omod-ieee)
IEEE_MODE_BIT = _SETUP.IEEE_MODE_BIT
ATOMIC, ATOMIC_ALIASES, ASSOCIATIVE = rdna3.ATOMIC, rdna3.ATOMIC_ALIASES, rdna3.ASSOCIATIVE

# *** names: memory instructions (GFX9 name pieces -> RDNA3's; the access itself is the same) ***

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

def _renamed(name:str, renames:dict[str, str]) -> str|None:
  """name with its row key renamed (prefix and encoding suffix kept), or None."""
  n = strip(name)
  if (new:=renames.get(n)) is None or new == n: return None
  return name[:2] + new + name[2 + len(n):]

def _aliases() -> dict[str, str]:
  out = {}
  cmp_renames = {n: _vop_key(n) for n in (strip(x) for x in _cdna_names("VOPCOp", "VOP3Op")) if compare(n) is not None}
  for name in _cdna_names(*VOP_ENCODINGS):
    if (new:=_renamed(name, {**VOP_RENAMES, **cmp_renames})) is not None: out[name] = new
  sop = {**RENAMED_SOP, **{f"{k}_SAVEEXEC_B64": f"{v}_SAVEEXEC_B64" for k, v in SAVEEXEC.items()}}
  for name in _cdna_names("SOP1Op", "SOP2Op"):
    if (new:=_renamed(name, sop)) is not None: out[name] = new
  for name in _cdna_names("DSOp", "GLOBALOp", "FLATOp", "SCRATCHOp", "SMEMOp"):
    try: new = memory_alias(name)
    except ValueError: continue
    if new != name: out[name] = new
  return out

ALIASES = _aliases()

# write-backs and invalidates of caches (memory is coherent here), GFX9's extra wave controls
NOOPS = frozenset({"S_DCACHE_WB", "S_DCACHE_WB_VOL", "S_DCACHE_INV_VOL", "BUFFER_WBL2", "BUFFER_INV", "S_SET_VALU_COEXEC_MODE"})
SMEM_KINDS:dict[str, str] = {}
HIGH_HALF:set[str] = set()
# COMPUTE_TMPRING_SIZE.WAVESIZE: bits 12..24, in 1 KiB units (family_setup.py)
TTMP_WORKGROUP_IDS, TMPRING_WAVESIZE_BITS = _SETUP.TTMP_WORKGROUP_IDS, _SETUP.TMPRING_WAVESIZE_BITS
TMPRING_WAVESIZE_UNIT = _SETUP.TMPRING_WAVESIZE_UNIT
# e32 16-bit operands v[128+n] are VGPR 128+n on GFX9 (the true16 reading is RDNA3's, errata.true16)
TRUE16_E32 = False
# 16-bit results that zero bits 31:16 of the destination VGPR (erratum cdna-16bit-high-zero); GFX9 changed these to
# preserve them
PRESERVE_HIGH16 = frozenset({"FMA_F16", "MAD_U16", "MAD_I16", "DIV_FIXUP_F16", "FMA_MIXLO_F16", "FMA_MIXHI_F16"})
HIGH16_ZEROED = frozenset(n for n, r in VOP.items() if r.dst is not None and WIDTH[r.dst] == 16) - PRESERVE_HIGH16 - \
  {"CVT_PK_FP8_F32", "CVT_PK_BF8_F32"}
WMMA:dict = {}
WMMA_LAYOUT = None
# s_movrel* reach s0..s101 (gfx9: 102 SGPRs, then FLAT_SCRATCH and XNACK_MASK); s_trap's ID is SIMM16[7:0]
SGPRS = 102
TRAP_ID_BITS = 8
VGPR_GRANULES = _SETUP.VGPR_GRANULES  # gfx90a+: VGPRs and AGPRs together (cdna.VGPR_GRANULE)

# v_mfma_*: the forms gfx942 has that compiler/rdna/gfx9.MFMAShape models (the xf32, sparse SMFMAC and f8f6f4 forms
# are not modelled); FP8 names the fp8/bf8 formats (FNUZ on gfx942)
MFMA = frozenset(f"V_MFMA_{s}" for s in """
F32_32X32X1_2B_F32 F32_16X16X1_4B_F32 F32_4X4X1_16B_F32 F32_32X32X2_F32 F32_16X16X4_F32
F32_32X32X4_2B_F16 F32_16X16X4_4B_F16 F32_4X4X4_16B_F16 F32_32X32X8_F16 F32_16X16X16_F16
F32_32X32X4_2B_BF16 F32_16X16X4_4B_BF16 F32_4X4X4_16B_BF16 F32_32X32X8_BF16 F32_16X16X16_BF16
I32_32X32X4_2B_I8 I32_16X16X4_4B_I8 I32_4X4X4_16B_I8 I32_32X32X16_I8 I32_16X16X32_I8 F64_16X16X4_F64
F32_16X16X32_BF8_BF8 F32_16X16X32_BF8_FP8 F32_16X16X32_FP8_BF8 F32_16X16X32_FP8_FP8
F32_32X32X16_BF8_BF8 F32_32X32X16_BF8_FP8 F32_32X32X16_FP8_BF8 F32_32X32X16_FP8_FP8""".split())
FP8 = "cdna3"
