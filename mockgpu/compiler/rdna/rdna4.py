"""RDNA4 (gfx12, RX 9070 XT) as RDNA3 plus its deltas: everything the RDNA translators need to know about RDNA4 that
RDNA3 does not already say. tinygrad decodes RDNA4 words with its own tables (arch "rdna4"); this module maps them
onto the RDNA3 paths, so translate.py (numpy) and cgen.py (C) stay one code path per encoding.

  renames     RDNA4 renamed ops whose pseudocode did not change (s_add_co_u32 was s_add_u32, v_mad_co_u64_u32
              v_mad_u64_u32): ALIASES maps the RDNA4 name to the RDNA3 row. Every key is a name RDNA3 does not
              have, so the mapping cannot change what an RDNA3 kernel means.
  new rows    instructions RDNA3 lacks, in family tables the translators pick by the dispatch's family (gfx1100 has
              no float SALU; tinygrad's RDNA3 table lists RDNA3.5's, which gfx1100 must reject): the float SALU,
              64-bit scalar add/sub/mul, the V_S_* scalar-result transcendentals, v_min_num/v_max_num and
              v_minimum/v_maximum, s_load_u8/i8/u16/i16, the WMMA layouts. SALU_FROM_VALU derives each float SALU
              op from the VALU row that computes the same thing, so no op's meaning is written twice.
  encodings   the VGLOBAL/VSCRATCH/VFLAT encodings name their fields vaddr/vsrc/ioffset (RDNA3: addr/data/offset):
              adapt() gives the translators a view with RDNA3's names. SMEM's 24-bit ioffset is read through
              decode.imm_offset, which sign-extends either family's offset field by its width.
  waves       s_wait_* counters (no-ops: memory is synchronous here), the split barrier (s_barrier_signal -1 then
              s_barrier_wait -1), and gfx12's architected workgroup IDs: x in ttmp9, y and z in ttmp7's halves,
              instead of the SGPRs after the user SGPRs (LLVM's gfx12 ABI; RSRC2 still enables them).

Where the manual leaves the behaviour open, mockgpu chooses (tests/test_rdna4.py checks each):
  - a 16-bit float SALU result (s_add_f16, s_cvt_f16_f32, v_s_exp_f16) is zero-extended in its SGPR (the pseudocode
    writes D0.f16 only);
  - s_load_u16/i16 ignore the address's low bit, as dword loads ignore two (the pseudocode's CalcGlobalAddr is silent);
  - ttmp9/ttmp7 hold the workgroup ID whatever RSRC2 enables, and no SGPR after the user SGPRs does;
  - a wave waits at s_barrier_wait -1 until every live wave of its workgroup is at one (not from the last
    s_barrier_signal -1 on): the same for any code between the two that does not wait on another wave.
"""
from __future__ import annotations
import re
from mockgpu.emulators.rdna import semantics as sem

FAMILY = "rdna4"

# *** renames: RDNA4 name -> the RDNA3 name of the same operation ***

# (v_max_num_f32 & co. are not renames of v_max_f32: RDNA3's IEEE mode quiets a signalling NaN operand where RDNA4's
# maximumNumber returns the other operand, so they have rows of their own below)
ALIASES = {"S_ADD_CO_U32": "S_ADD_U32", "S_SUB_CO_U32": "S_SUB_U32", "S_ADD_CO_I32": "S_ADD_I32", "S_SUB_CO_I32": "S_SUB_I32",
           "S_ADD_CO_CI_U32": "S_ADDC_U32", "S_SUB_CO_CI_U32": "S_SUBB_U32", "S_ADDK_CO_I32": "S_ADDK_I32",
           "V_MAD_CO_U64_U32": "V_MAD_U64_U32", "V_MAD_CO_I64_I32": "V_MAD_I64_I32"}

def rdna3_name(name:str) -> str:
  """The RDNA3 name of an op's row: its RDNA4 rename's target, else the name itself."""
  return ALIASES.get(name, name)

# *** instructions with nothing to do here ***

# the s_wait_* counters (every memory access completes before the next instruction), prefetches and cache
# write-back/invalidate (host memory is coherent)
NOOPS = frozenset({"S_WAIT_LOADCNT", "S_WAIT_STORECNT", "S_WAIT_SAMPLECNT", "S_WAIT_BVHCNT", "S_WAIT_EXPCNT", "S_WAIT_DSCNT",
                   "S_WAIT_KMCNT", "S_WAIT_LOADCNT_DSCNT", "S_WAIT_STORECNT_DSCNT", "S_WAIT_ALU", "S_PREFETCH_INST",
                   "S_PREFETCH_INST_PC_REL", "S_PREFETCH_DATA", "S_PREFETCH_DATA_PC_REL", "GLOBAL_WB", "GLOBAL_INV", "GLOBAL_WBINV"})

# *** the split barrier ***

BARRIER_WAIT, BARRIER_SIGNAL = "S_BARRIER_WAIT", "S_BARRIER_SIGNAL"
WORKGROUP_BARRIER = -1  # the barrier ID of the workgroup barrier; named barriers (1..16) are not modelled
INLINE_MINUS_ONE = 193  # the operand encoding of the inline constant -1

def barrier_problem(inst) -> str|None:
  """Why a barrier instruction cannot run here, or None: only the workgroup barrier (ID -1) is modelled. The wave
  waits at s_barrier_wait until every live wave of its workgroup reaches one; s_barrier_signal -1 has nothing left
  to do (a wave between its signal and its wait still holds the others, which no LLVM code can observe)."""
  if inst.op_name == BARRIER_WAIT:
    simm = inst.simm16 - (1 << 16) if inst.simm16 & 0x8000 else inst.simm16
    return None if simm == WORKGROUP_BARRIER else f"named barrier {simm} (only the workgroup barrier -1 is modelled)"
  if inst.ssrc0.offset != INLINE_MINUS_ONE: return "a barrier ID other than the workgroup barrier -1 (named barriers are not modelled)"
  return None

# *** gfx12's architected workgroup IDs ***

TTMP7, TTMP9 = 115, 117  # operand encodings 108-123 are ttmp0-15

def ttmp_workgroup_ids(x, y, z) -> dict[int, object]:
  """The ttmp registers the SPI writes with a wave's workgroup ID: x in ttmp9, y in ttmp7[15:0], z in ttmp7[31:16]."""
  return {TTMP9: x, TTMP7: (y & 0xffff) | (z << 16)}

# COMPUTE_TMPRING_SIZE.WAVESIZE (the wave's scratch slot, 256-byte units) is bits 12..29 on gfx12 (gfx11: 12..26)
TMPRING_WAVESIZE_BITS = 18

# *** new rows ***

# float SALU op (stripped name) -> the VALU row (semantics.VOP / cgen.VOP) computing the same value from scalars
SALU_FROM_VALU = {**{op: op for op in ("ADD_F32", "SUB_F32", "MUL_F32", "FMAC_F32", "FMAAK_F32", "FMAMK_F32", "ADD_F16",
                                        "SUB_F16", "MUL_F16", "FMAC_F16",
                                        "CVT_PK_RTZ_F16_F32", "CEIL_F32", "FLOOR_F32", "TRUNC_F32", "RNDNE_F32", "CEIL_F16",
                                        "FLOOR_F16", "TRUNC_F16", "RNDNE_F16", "CVT_F32_I32", "CVT_F32_U32", "CVT_I32_F32",
                                        "CVT_U32_F32", "CVT_F16_F32", "CVT_F32_F16", "MINIMUM_F32", "MAXIMUM_F32",
                                        "MINIMUM_F16", "MAXIMUM_F16", "MIN_NUM_F32", "MAX_NUM_F32", "MIN_NUM_F16", "MAX_NUM_F16")},
                  # v_s_exp_f32 s0, s1 (VOP3, an SGPR result): strip() keeps their S_ prefix, which no SALU name has
                  **{f"S_{op}_{t}": f"{op}_{t}" for op in ("EXP", "LOG", "RCP", "RSQ", "SQRT") for t in ("F32", "F16")}}
HIGH_HALF = {"CVT_HI_F32_F16": "CVT_F32_F16"}  # s_cvt_hi_f32_f16 converts S0[31:16]: source type "f16hi"

def salu_rows(vop:dict) -> dict[str, tuple]:
  """The float SALU rows (dst type, source types, expression, SCC: None) from a backend's VALU table `vop` (the
  numpy table or the C one: both have the same row format). An accumulating op's third source is its destination,
  which the SALU expression reads as d; s_fmaak/s_fmamk's is the literal K, as for their VALU forms (LITERAL_K)."""
  rows = {}
  for s, v in SALU_FROM_VALU.items():
    if v not in vop: continue
    t_d, t_s, expr = vop[v]
    if v in sem.ACCUMULATE: t_s, expr = t_s[:2], re.sub(r"\bc\b", "d", expr)
    rows[s] = (t_d, t_s, expr, None)
  for s, v in HIGH_HALF.items():
    if v in vop: rows[s] = (vop[v][0], ("f16hi",), vop[v][2], None)
  return rows

# 64-bit scalar integer ops (no SCC), the same expression in numpy and C
SOP64 = {"ADD_NC_U64": ("u64", ("u64", "u64"), "a + b", None), "SUB_NC_U64": ("u64", ("u64", "u64"), "a - b", None),
         "MUL_U64": ("u64", ("u64", "u64"), "a * b", None)}

def _rows(ops:dict[str, str], types=("F32", "F16", "F64"), n:int=2) -> dict[str, tuple]:
  return {f"{op}_{t}": (t.lower(), (t.lower(),) * n, expr) for op, expr in ops.items() for t in types}

# VALU ops RDNA3 lacks, in text that is numpy (runtime.py) and C (prelude.c) alike: IEEE 754-2019 maximumNumber/
# minimumNumber (a NaN operand gives the other one, two NaNs S0 quieted; -0 < +0) and minimum/maximum (the first
# signalling NaN operand quieted, else the first quiet one)
VOP = {**_rows({"MIN_NUM": "min_num(a, b)", "MAX_NUM": "max_num(a, b)", "MINIMUM": "minimum754(a, b)", "MAXIMUM": "maximum754(a, b)"}),
       **_rows({"MIN3_NUM": "min_num(min_num(a, b), c)", "MAX3_NUM": "max_num(max_num(a, b), c)",
                "MINIMUM3": "minimum754(minimum754(a, b), c)", "MAXIMUM3": "maximum754(maximum754(a, b), c)"}, ("F32", "F16"), 3)}
# and numpy-only (the C translation declines them): v_med3_num (its pseudocode's NaN and zero cases follow numpy's
# min/max, which C does not reproduce)
NUMPY_ONLY_VOP = _rows({"MED3_NUM": "med3_num(a, b, c)"}, ("F32", "F16"), 3)
PACKED = {"PK_MIN_NUM_F16": ("f16", "min_num(a, b)"), "PK_MAX_NUM_F16": ("f16", "max_num(a, b)"),
          "PK_MINIMUM_F16": ("f16", "minimum754(a, b)"), "PK_MAXIMUM_F16": ("f16", "maximum754(a, b)")}
DS_ATOMICS = {"MIN_NUM_F32": "min_num_f", "MAX_NUM_F32": "max_num_f"}  # memops.ldsatomic's ops

def tables(vop:dict, sop:dict, numpy:bool) -> tuple[dict, dict]:
  """A backend's RDNA4 (VALU, SALU) tables from its RDNA3 ones: RDNA3's rows plus RDNA4's new ones."""
  vop4 = {**vop, **VOP, **(NUMPY_ONLY_VOP if numpy else {})}
  return vop4, {**sop, **salu_rows(vop4), **SOP64}

NUMPY_VOP, NUMPY_SOP = tables(sem.VOP, sem.SOP, numpy=True)
NUMPY_PACKED = {**sem.PACKED, **PACKED}

# *** WMMA: wave32 layouts without RDNA3's replicated halves (runtime.wmma, layout "rdna4") ***

# name -> (A/B element kind, C/D kind, VGPRs of A and B, VGPRs of C and D): lanes 16-31 hold the second half of K, so
# A and B take half RDNA3's VGPRs; an f16 D is packed two elements a VGPR
WMMA = {"WMMA_F32_16X16X16_F16": ("f16", "f32", 4, 8), "WMMA_F32_16X16X16_BF16": ("bf16", "f32", 4, 8),
        "WMMA_F16_16X16X16_F16": ("f16", "f16", 4, 4), "WMMA_I32_16X16X16_IU8": ("iu8", "i32", 2, 8)}

# *** SMEM sub-dword loads ***

SMEM_KINDS = {"LOAD_U8": "u8", "LOAD_I8": "i8", "LOAD_U16": "u16", "LOAD_I16": "i16"}

# *** encodings: VGLOBAL/VSCRATCH/VFLAT seen with RDNA3's field names ***

class _Memory:
  """An RDNA4 VGLOBAL/VSCRATCH/VFLAT instruction seen as RDNA3's GLOBAL/SCRATCH/FLAT: vaddr is addr, vsrc is data.
  The class name is RDNA3's, which is what the translators dispatch on; the immediate offset (ioffset) is read with
  decode.imm_offset; everything else is the instruction's own (its name, bytes, size, repr)."""
  RENAMES = {"addr": "vaddr", "data": "vsrc"}
  _fields:list = []
  def __init__(self, inst): self.inst = inst
  def __getattr__(self, name:str): return getattr(self.inst, self.RENAMES.get(name, name))
  def __repr__(self) -> str: return repr(self.inst)

_VIEWS:dict[type, type] = {}

def adapt(inst):
  """inst as the RDNA3 translators read it: a view for the memory encodings, else inst itself."""
  cls = type(inst)
  name = cls.__name__
  if name not in ("VGLOBAL", "VSCRATCH", "VFLAT"): return inst
  if (view:=_VIEWS.get(cls)) is None: view = _VIEWS[cls] = type(name[1:], (_Memory,), {"_fields": cls._fields})
  return view(inst)
