"""Translate a whole RDNA3 kernel into C: one function that runs a wave from a block until s_barrier or s_endpgm.

The numpy translation (translate.py) advances every wave of a dispatch together, so each instruction costs a few
numpy calls whatever the number of waves: cheap per lane on large dispatches, but about 10 us per instruction on a
one-wave dispatch. This translation runs one wave at a time with a C loop over its 32 lanes, which costs about the
same per lane and nothing per instruction. It covers the integer, float32/float64 and memory instructions tinygrad's
kernels are made of; a kernel with any instruction outside that set (16-bit floats, packed math, WMMA, DPP, scratch)
raises NoNative and keeps the numpy path. Both translations compute the same bits (tests/test_rdna_native.py runs
kernels and single instructions through both and compares).

Registers, per wave: `s` uint32 [256] (SCC is s[253]), `v` uint32 [nvgpr][32]. A block is a label; a branch is a goto
(branches are scalar, so a wave never diverges across blocks: EXEC masks the lanes). The function returns the block
to resume at after s_barrier, or -1 at s_endpgm; the runtime (prelude.c) schedules the waves of a workgroup around
barriers and turns the status of a fault into the same GPUPageFault the numpy path raises.
"""
from __future__ import annotations
import os, re
from mockgpu.compiler import native
from tinygrad.renderer.amd.dsl import Reg
from mockgpu.compiler.rdna.decode import Block, Bad, op_name, branch_target, imm_offset, BRANCHES, BARRIERS, describe
from mockgpu.emulators.rdna import semantics as sem
from mockgpu.emulators.rdna.semantics import _table  # the same table format as the numpy semantics
from mockgpu.compiler.rdna import errata, rdna4
from mockgpu.compiler.rdna.translate import NOOPS, MSG_DEALLOC_VGPRS, SCC, VCC, EXEC, NULL, WIDTH, _const_bits, strip, split_hi, failure, bad_vgprs, bad_sgprs

PRELUDE = native.prelude(os.path.join(os.path.dirname(os.path.abspath(__file__)), "prelude.c"))
CTYPE = {"b16": "uint16_t", "u16": "uint16_t", "i16": "int16_t", "f16": "float", "b32": "uint32_t", "u32": "uint32_t", "i32": "int32_t", "f32": "float",
         "b64": "uint64_t", "u64": "uint64_t", "i64": "int64_t", "f64": "double"}

CVREG = re.compile(r"\bV\((-?\d+)\)")  # a VGPR the C code of an instruction touches
CSREG = re.compile(r"\bs\[(\d+)\]")     # and an SGPR
OLD_D = re.compile(r"\bd\b")  # the destination's old value, in CMOV and s_bitset*

class NoNative(Exception):
  """The kernel uses something this translation does not cover: it runs on the numpy path."""

# What each vector op computes, in C over typed operands a, b, c (the numpy table is semantics.VOP). Float results
# that may be NaN go through helpers that pick the NaN numpy (x86) produces, so both paths give the same bits.
VOP = _table("""
CLZ_I32_U32 u32 u32 = clz32(a)
CTZ_I32_B32 u32 u32 = ctz32(a)
ADD_F32 f32 f32 f32 = add32(a, b)
SUB_F32 f32 f32 f32 = sub32(a, b)
SUBREV_F32 f32 f32 f32 = sub32(b, a)
MUL_F32 f32 f32 f32 = mul32(a, b)
MAX_F32 f32 f32 f32 = fmax32(a, b)
MIN_F32 f32 f32 f32 = fmin32(a, b)
MAX3_F32 f32 f32 f32 f32 = fmax32(fmax32(a, b), c)
MIN3_F32 f32 f32 f32 f32 = fmin32(fmin32(a, b), c)
LDEXP_F32 f32 f32 i32 = ldexp32(a, b)
EXP_F32 f32 f32 = (float)exp2((double)a)
LOG_F32 f32 f32 = log2_32(a)
RCP_F32 f32 f32 = (float)(1.0 / (double)a)
RCP_IFLAG_F32 f32 f32 = (float)(1.0 / (double)a)
RSQ_F32 f32 f32 = rsq32(a)
SQRT_F32 f32 f32 = sqrt32(a)
FLOOR_F32 f32 f32 = floor32(a)
CEIL_F32 f32 f32 = ceil32(a)
TRUNC_F32 f32 f32 = trunc32(a)
RNDNE_F32 f32 f32 = rint32(a)
CVT_F32_I32 f32 i32 = (float)a
CVT_F32_U32 f32 u32 = (float)a
CVT_I32_F32 i32 f32 = (int32_t)cvt_int(a, -2147483648.0, 2147483647.0)
CVT_U32_F32 u32 f32 = (uint32_t)cvt_int(a, 0.0, 4294967295.0)
CVT_F64_F32 f64 f32 = (double)a
CVT_F32_F64 f32 f64 = (float)a
CVT_F64_I32 f64 i32 = (double)a
CVT_F64_U32 f64 u32 = (double)a
CVT_I32_F64 i32 f64 = (int32_t)cvt_int(a, -2147483648.0, 2147483647.0)
CVT_U32_F64 u32 f64 = (uint32_t)cvt_int(a, 0.0, 4294967295.0)
CVT_F32_UBYTE0 f32 u32 = (float)(a & 0xff)
CVT_F32_UBYTE1 f32 u32 = (float)((a >> 8) & 0xff)
CVT_F32_UBYTE2 f32 u32 = (float)((a >> 16) & 0xff)
CVT_F32_UBYTE3 f32 u32 = (float)(a >> 24)
MUL_HI_U32 u32 u32 u32 = (uint32_t)(((uint64_t)a * b) >> 32)
MUL_HI_I32 u32 u32 u32 = (uint32_t)(((int64_t)(int32_t)a * (int32_t)b) >> 32)
MUL_HI_U32_U24 u32 u32 u32 = (uint32_t)(((uint64_t)(a & 0xffffff) * (b & 0xffffff)) >> 32)
MUL_I32_I24 u32 u32 u32 = (uint32_t)(sext(a, 24) * sext(b, 24))
MUL_HI_I32_I24 u32 u32 u32 = (uint32_t)((sext(a, 24) * sext(b, 24)) >> 32)
MAD_I32_I24 u32 u32 u32 u32 = (uint32_t)(sext(a, 24) * sext(b, 24) + (int32_t)c)
ASHRREV_I32 i32 u32 i32 = b >> (a & 31)
BFE_U32 u32 u32 u32 u32 = bfe(a, b, c, 0)
BFE_I32 u32 u32 u32 u32 = bfe(a, b, c, 1)
BFM_B32 u32 u32 u32 = ((1u << (a & 31)) - 1u) << (b & 31)
ALIGNBIT_B32 u32 u32 u32 u32 = (uint32_t)((((uint64_t)a << 32) | b) >> (c & 31))
ALIGNBYTE_B32 u32 u32 u32 u32 = (uint32_t)((((uint64_t)a << 32) | b) >> ((c & 3) * 8))
BCNT_U32_B32 u32 u32 u32 = (uint32_t)__builtin_popcount(a) + b
MAX_I32 i32 i32 i32 = a > b ? a : b
MIN_I32 i32 i32 i32 = a < b ? a : b
MAX_U32 u32 u32 u32 = a > b ? a : b
MIN_U32 u32 u32 u32 = a < b ? a : b
MAX3_I32 i32 i32 i32 i32 = imax(imax(a, b), c)
MIN3_I32 i32 i32 i32 i32 = imin(imin(a, b), c)
MAX3_U32 u32 u32 u32 u32 = umax(umax(a, b), c)
MIN3_U32 u32 u32 u32 u32 = umin(umin(a, b), c)
MED3_I32 i32 i32 i32 i32 = imax(imin(a, b), imin(imax(a, b), c))
MED3_U32 u32 u32 u32 u32 = umax(umin(a, b), umin(umax(a, b), c))
ADD_F64 f64 f64 f64 = add64(a, b)
MUL_F64 f64 f64 f64 = mul64(a, b)
MAX_F64 f64 f64 f64 = fmax64(a, b)
MIN_F64 f64 f64 f64 = fmin64(a, b)
ASHRREV_I16 i16 u16 i16 = b >> (a & 15)
MAX_U16 u16 u16 u16 = imax(a, b)
MIN_U16 u16 u16 u16 = imin(a, b)
MAX_I16 i16 i16 i16 = imax(a, b)
MIN_I16 i16 i16 i16 = imin(a, b)
MAX3_U16 u16 u16 u16 u16 = imax(imax(a, b), c)
MIN3_U16 u16 u16 u16 u16 = imin(imin(a, b), c)
MED3_U16 u16 u16 u16 u16 = imax(imin(a, b), imin(imax(a, b), c))
MAX3_I16 i16 i16 i16 i16 = imax(imax(a, b), c)
MIN3_I16 i16 i16 i16 i16 = imin(imin(a, b), c)
MED3_I16 i16 i16 i16 i16 = imax(imin(a, b), imin(imax(a, b), c))
ADD_F16 f16 f16 f16 = add32(a, b)
SUB_F16 f16 f16 f16 = sub32(a, b)
SUBREV_F16 f16 f16 f16 = sub32(b, a)
MUL_F16 f16 f16 f16 = mul32(a, b)
MAX_F16 f16 f16 f16 = fmax32(a, b)
MIN_F16 f16 f16 f16 = fmin32(a, b)
MAX3_F16 f16 f16 f16 f16 = fmax32(fmax32(a, b), c)
MIN3_F16 f16 f16 f16 f16 = fmin32(fmin32(a, b), c)
CVT_F16_F32 f16 f32 = a
CVT_F32_F16 f32 f16 = a
CVT_F16_I16 f16 i16 = (float)a
CVT_F16_U16 f16 u16 = (float)a
CVT_I16_F16 i16 f16 = (int16_t)cvt_int(a, -32768.0, 32767.0)
CVT_U16_F16 u16 f16 = (uint16_t)cvt_int(a, 0.0, 65535.0)
PACK_B32_F16 b32 f16 f16 = (uint32_t)f2h(a) | ((uint32_t)f2h(b) << 16)
CVT_I32_I16 i32 i16 = a
CVT_U32_U16 u32 u16 = a
LSHLREV_B64 u64 u32 u64 = b << (a & 63)
LSHRREV_B64 u64 u32 u64 = b >> (a & 63)
ASHRREV_I64 i64 u32 i64 = b >> (a & 63)
""")
# ops whose numpy expression (semantics.VOP) is already C over the typed operands (the helpers it names are in prelude.c)
SAME_IN_C = """
MOV_B32 NOT_B32 MOV_B16 NOT_B16 BFREV_B32 CLS_I32 FMA_F32 FMAC_F32 FMAMK_F32 FMAAK_F32 ADD_NC_U32 SUB_NC_U32 SUBREV_NC_U32
ADD_NC_I32 SUB_NC_I32 MUL_LO_U32 MUL_U32_U24 MAD_U32_U24 LSHLREV_B32 LSHRREV_B32 AND_B32 OR_B32 XOR_B32 XNOR_B32
AND_OR_B32 OR3_B32 XOR3_B32 ADD3_U32 LSHL_OR_B32 LSHL_ADD_U32 ADD_LSHL_U32 XAD_U32 BFI_B32 ADD_NC_U16 SUB_NC_U16
ADD_NC_I16 SUB_NC_I16 MUL_LO_U16 LSHLREV_B16 LSHRREV_B16 MAD_U16 MAD_I16
"""
VOP.update({name: sem.VOP[name] for name in SAME_IN_C.split()})
ACCUMULATE = {"FMAC_F32"}
LITERAL_K = {"FMAMK_F32", "FMAAK_F32"}

# Scalar ops: (dst type, source types, C expression of d, C expression of SCC or None); SCC may use d, a, b.
SOP = {
  "MOV_B32": ("b32", ("b32",), "a", None), "MOV_B64": ("b64", ("b64",), "a", None),
  "NOT_B32": ("u32", ("u32",), "~a", "d != 0"), "NOT_B64": ("u64", ("u64",), "~a", "d != 0"),
  "BREV_B32": ("u32", ("u32",), "brev32(a)", None), "CTZ_I32_B32": ("u32", ("u32",), "ctz32(a)", None),
  "CLZ_I32_U32": ("u32", ("u32",), "clz32(a)", None), "CLS_I32": ("u32", ("u32",), "cls32(a)", None),
  "SEXT_I32_I8": ("u32", ("u32",), "(uint32_t)(int32_t)(int8_t)a", None),
  "SEXT_I32_I16": ("u32", ("u32",), "(uint32_t)(int32_t)(int16_t)a", None),
  "ABS_I32": ("i32", ("i32",), "a < 0 ? -a : a", "d != 0"),
  "BCNT1_I32_B32": ("u32", ("u32",), "(uint32_t)__builtin_popcount(a)", "d != 0"),
  "BCNT0_I32_B32": ("u32", ("u32",), "32u - (uint32_t)__builtin_popcount(a)", "d != 0"),
  "BCNT1_I32_B64": ("u32", ("u64",), "(uint32_t)__builtin_popcountll(a)", "d != 0"),
  "BCNT0_I32_B64": ("u32", ("u64",), "64u - (uint32_t)__builtin_popcountll(a)", "d != 0"),
  "BREV_B64": ("u64", ("u64",), "brev64(a)", None),
  "CLZ_I32_U64": ("u32", ("u64",), "a ? (uint32_t)__builtin_clzll(a) : 0xffffffffu", None),
  "CTZ_I32_B64": ("u32", ("u64",), "a ? (uint32_t)__builtin_ctzll(a) : 0xffffffffu", None),
  "QUADMASK_B32": ("u32", ("u32",), "(uint32_t)quadmask(a, 32)", "d != 0"), "QUADMASK_B64": ("u64", ("u64",), "quadmask(a, 64)", "d != 0"),
  "WQM_B32": ("u32", ("u32",), "(uint32_t)wqm(a, 32)", "d != 0"), "WQM_B64": ("u64", ("u64",), "wqm(a, 64)", "d != 0"),
  "BFM_B64": ("u64", ("u32", "u32"), "((1ull << (a & 63)) - 1ull) << (b & 63)", None),
  "BITSET0_B32": ("u32", ("u32",), "d & ~(1u << (a & 31))", None), "BITSET1_B32": ("u32", ("u32",), "d | (1u << (a & 31))", None),
  "BITSET0_B64": ("u64", ("u32",), "d & ~(1ull << (a & 63))", None), "BITSET1_B64": ("u64", ("u32",), "d | (1ull << (a & 63))", None),
  "ADD_U32": ("u32", ("u32", "u32"), "a + b", "d < a"), "SUB_U32": ("u32", ("u32", "u32"), "a - b", "b > a"),
  "ADD_I32": ("i32", ("i32", "i32"), "a + b", "((a < 0) == (b < 0)) && ((d < 0) != (a < 0))"),
  "SUB_I32": ("i32", ("i32", "i32"), "a - b", "((a < 0) != (b < 0)) && ((d < 0) != (a < 0))"),
  "ABSDIFF_I32": ("i32", ("i32", "i32"), "(a - b) < 0 ? -(a - b) : (a - b)", "d != 0"),
  "LSHL_B32": ("u32", ("u32", "u32"), "a << (b & 31)", "d != 0"), "LSHR_B32": ("u32", ("u32", "u32"), "a >> (b & 31)", "d != 0"),
  "ASHR_I32": ("i32", ("i32", "u32"), "a >> (b & 31)", "d != 0"),
  "LSHL_B64": ("u64", ("u64", "u32"), "a << (b & 63)", "d != 0"), "LSHR_B64": ("u64", ("u64", "u32"), "a >> (b & 63)", "d != 0"),
  "ASHR_I64": ("i64", ("i64", "u32"), "a >> (b & 63)", "d != 0"),
  **{f"LSHL{k}_ADD_U32": ("u32", ("u32", "u32"), f"(a << {k}) + b", f"((uint64_t)a << {k}) + b >= 4294967296ull") for k in (1, 2, 3, 4)},
  "MIN_I32": ("i32", ("i32", "i32"), "a < b ? a : b", "a < b"), "MIN_U32": ("u32", ("u32", "u32"), "a < b ? a : b", "a < b"),
  "MAX_I32": ("i32", ("i32", "i32"), "a > b ? a : b", "a >= b"), "MAX_U32": ("u32", ("u32", "u32"), "a > b ? a : b", "a >= b"),
  **{f"{op}_B{w}": (f"u{w}", (f"u{w}", f"u{w}"), e, "d != 0") for w in (32, 64) for op, e in (
     ("AND", "a & b"), ("OR", "a | b"), ("XOR", "a ^ b"), ("NAND", "~(a & b)"), ("NOR", "~(a | b)"), ("XNOR", "~(a ^ b)"),
     ("AND_NOT1", "a & ~b"), ("OR_NOT1", "a | ~b"))},
  "BFE_U32": ("u32", ("u32", "u32"), "bfe_w(a, b, b >> 16, 0, 127)", "d != 0"),
  "BFE_I32": ("u32", ("u32", "u32"), "bfe_w(a, b, b >> 16, 1, 127)", "d != 0"),
  "BFE_U64": ("u64", ("u64", "u32"), "bfe64(a, b, 0)", "d != 0"), "BFE_I64": ("u64", ("u64", "u32"), "bfe64(a, b, 1)", "d != 0"),
  "BFM_B32": ("u32", ("u32", "u32"), "((1u << (a & 31)) - 1u) << (b & 31)", None),
  "MUL_I32": ("u32", ("u32", "u32"), "a * b", None),
  "MUL_HI_U32": ("u32", ("u32", "u32"), "(uint32_t)(((uint64_t)a * b) >> 32)", None),
  "MUL_HI_I32": ("u32", ("u32", "u32"), "(uint32_t)(((int64_t)(int32_t)a * (int32_t)b) >> 32)", None),
  "PACK_LL_B32_B16": ("u32", ("u32", "u32"), "(a & 0xffff) | (b << 16)", None),
  "PACK_LH_B32_B16": ("u32", ("u32", "u32"), "(a & 0xffff) | (b & 0xffff0000u)", None),
  "PACK_HH_B32_B16": ("u32", ("u32", "u32"), "(a >> 16) | (b & 0xffff0000u)", None),
  "PACK_HL_B32_B16": ("u32", ("u32", "u32"), "(a >> 16) | (b << 16)", None),
  "ADDC_U32": ("u32", ("u32", "u32"), "a + b + scc", "(uint64_t)a + b + scc >= 4294967296ull"),
  "SUBB_U32": ("u32", ("u32", "u32"), "a - b - scc", "(uint64_t)b + scc > a"),
  "CSELECT_B32": ("b32", ("b32", "b32"), "scc ? a : b", None), "CSELECT_B64": ("b64", ("b64", "b64"), "scc ? a : b", None),
  "CMOV_B32": ("b32", ("b32",), "scc ? a : d", None), "CMOV_B64": ("b64", ("b64",), "scc ? a : d", None),
}
SAVEEXEC = {"AND": "a & e", "OR": "a | e", "XOR": "a ^ e", "NAND": "~(a & e)", "NOR": "~(a | e)", "XNOR": "~(a ^ e)",
            "AND_NOT0": "~a & e", "OR_NOT0": "~a | e", "AND_NOT1": "a & ~e", "OR_NOT1": "a | ~e"}
FCMP = {"F": "0", "LT": "a < b", "EQ": "a == b", "LE": "a <= b", "GT": "a > b", "LG": "(a < b) || (a > b)", "GE": "a >= b",
        "O": "!(a != a || b != b)", "U": "a != a || b != b", "NGE": "!(a >= b)", "NLG": "!((a < b) || (a > b))",
        "NGT": "!(a > b)", "NLE": "!(a <= b)", "NEQ": "a != b", "NLT": "!(a < b)", "T": "1"}
ICMP = {"F": "0", "LT": "a < b", "EQ": "a == b", "LE": "a <= b", "GT": "a > b", "NE": "a != b", "LG": "a != b",
        "GE": "a >= b", "T": "1"}
CMP_TYPES = {"F16": "f16", "F32": "f32", "F64": "f64", "I16": "i16", "I32": "i32", "I64": "i64", "U16": "u16", "U32": "u32", "U64": "u64"}
VOP4, SOP4 = rdna4.tables(VOP, SOP, numpy=False)  # RDNA4: RDNA3's rows plus its new ones (their helpers are in prelude.c)
MEM_KIND = {"U8": ("uint8_t", 1), "I8": ("int8_t", 1), "U16": ("uint16_t", 2), "I16": ("int16_t", 2), "B8": ("uint8_t", 1),
            "B16": ("uint16_t", 2)}

def mem_kind(n:str) -> tuple[str, str, int, int]:
  """(operation, C element type, element bytes, element count) of a memory op's stripped name (LOAD_U8, STORE_B128)."""
  op, _, size = n.rpartition("_")
  if size in MEM_KIND: return op, *MEM_KIND[size], 1
  if size in ("B32", "B64", "B96", "B128"): return op, "uint32_t", 4, int(size[1:]) // 32
  raise NoNative(n)

def store_data(ctype:str, reg:int, count:int) -> str:
  """A C array t_ holding a lane's store data, element j from VGPR reg + j."""
  return f"{ctype} t_[{count}] = {{{', '.join(f'({ctype})V({reg + j})[l]' for j in range(count))}}};"

def typed(raw:str, t:str, hi:bool=False) -> str:
  """Raw register bits (uint32_t, or uint64_t for 64-bit types) as type t; 16-bit types take the low or high half."""
  if t == "f16": return f"h2f((uint16_t)({raw}{' >> 16' if hi else ''}))"
  if WIDTH[t] == 16: return f"(({CTYPE[t]})({raw}{' >> 16' if hi else ''}))"
  if t in ("b32", "u32", "b64", "u64"): return raw
  if t in ("i32", "i64"): return f"(({CTYPE[t]})({raw}))"
  if t == "f32": return f"F32({raw})"
  if t == "f64": return f"F64({raw})"
  raise NoNative(f"operand type {t}")

def bits(t:str, expr:str) -> str:
  """A value of type t as the raw bits it is stored as (uint32_t, or uint64_t for 64-bit types)."""
  if t == "f32": return f"U32F({expr})"
  if t == "f64": return f"U64F({expr})"
  if t == "f16": return f"(uint32_t)f2h({expr})"  # in a scalar register: zero-extended
  return f"(uint64_t)({expr})" if WIDTH[t] == 64 else f"(uint32_t)({expr})"

class CTranslator:
  def __init__(self, blocks:list[Block], ftz32:bool, ftz16:bool, arch:str="rdna3"):
    if ftz16: raise NoNative("flushed f16/f64 denormals")
    self.blocks, self.ftz32 = blocks, ftz32
    self.vop, self.sop = (VOP4, SOP4) if arch == rdna4.FAMILY else (VOP, SOP)
    self.index = {b.start: k for k, b in enumerate(blocks)}
    self.lines:list[str] = []
    self.vregs:set[int] = {0}
    self.names:dict[int, str] = {}    # pc -> instruction name, for fault messages
    self.messages:list[str] = []      # runtime 'unsupported' messages, by index

  def out(self, line:str): self.lines.append("  " + line)

  def source(self) -> str:
    body:list[str] = []
    for k, b in enumerate(self.blocks):
      self.lines = []
      self.block(b)
      body.append(f" B{k}: if ((c->used += {len(b.insts)}) > c->budget) return over_budget(c, {b.start});")
      body += self.lines
    cases = " ".join(f"case {k}: goto B{k};" for k in range(len(self.blocks)))
    return "\n".join([PRELUDE, "static int64_t wave(Ctx *c, uint32_t *s, uint32_t *v, uint8_t *lds, int64_t b) {",
                      f"  switch (b) {{ {cases} default: return -1; }}", *body, "}", ""])

  def block(self, b:Block):
    for pc, inst in b.insts:
      self.pc = pc
      if isinstance(inst, Bad): return self.fail(inst.reason)
      self.names[pc] = op_name(inst).lower()
      start, regs = len(self.lines), set(self.vregs)
      nxt = self.inst(inst)
      used = (self.vregs - regs) | {int(i) for ln in self.lines[start:] for i in CVREG.findall(ln)}
      sgprs = [int(i) for ln in self.lines[start:] for i in CSREG.findall(ln)]
      if (bad := bad_vgprs(used) or bad_sgprs(sgprs)) is not None:  # the numpy path raises the same InvalidInstruction
        del self.lines[start:]
        self.vregs = regs
        return self.fail(failure(inst, bad))
      if nxt is not None: return self.out(nxt)
    end = b.insts[-1][0] + b.insts[-1][1].size()
    if end in self.index: self.out(f"goto B{self.index[end]};")
    else: self.fail("execution runs past the end of the decoded code")

  def fail(self, what:str):
    self.messages.append(what)
    self.out(f"return unsupported(c, {self.pc}, {len(self.messages) - 1});")

  def inst(self, inst) -> str|None:
    cls, name = type(inst).__name__, op_name(inst)
    if "DPP" in cls: raise NoNative("DPP")
    if name in NOOPS: return None
    for prefix, fn in (("SOPP", self.sopp), ("SOPK", self.sopk), ("SOPC", self.sopc), ("SOP1", self.sop1),
                       ("SOP2", self.sop2), ("SMEM", self.smem), ("VOPD", self.vopd), ("VOPC", self.vopc_enc),
                       ("VOP3SD", self.vop3sd), ("VOP3P", None), ("VOP3", self.vop3), ("VOP1", self.vop1),
                       ("VOP2", self.vop2), ("DS", self.ds), ("GLOBAL", self.glob), ("FLAT", self.flat)):
      if cls.startswith(prefix):
        if fn is None: break
        return fn(inst, name)
    raise NoNative(f"{cls} {name}")

  # *** operands ***
  def raw(self, r:Reg, width:int, lit:int|None, vec:bool, t:str="b32") -> str:
    o = r.offset
    if 256 <= o < 512:
      if not vec: raise NoNative("a VGPR operand in a scalar instruction")
      v = o - 256
      self.vregs |= {v, v + 1} if width > 32 else {v}
      return f"V({v})[l]" if width <= 32 else f"R64(V({v})[l], V({v + 1})[l])"
    if o == NULL: return "0u" if width <= 32 else "0ull"
    if o < 128: return f"s[{o}]" if width <= 32 else f"R64(s[{o}], s[{o + 1}])"
    if o == SCC: return "s[253]" if width <= 32 else "(uint64_t)s[253]"
    if o in (251, 252): return f"(uint32_t)(s[{VCC if o == 251 else EXEC}] == 0)"
    if o == 255:
      if lit is None: raise NoNative("literal operand without a literal")
      if width <= 32: return f"0x{lit:x}u"
      if t == "f64": return f"0x{lit << 32:x}ull"
      return f"0x{(lit - (1 << 32) if t == 'i64' and lit >> 31 else lit) & (2**64 - 1):x}ull"
    c = _const_bits(o, width)
    if c is None: raise NoNative(f"operand {describe(r)}")
    return f"0x{c:x}u" if width <= 32 else f"0x{c:x}ull"

  def src(self, r:Reg, t:str, lit, vec:bool=True, hi:bool=False, neg:bool=False, abs_:bool=False) -> str:
    code = typed(self.raw(r, WIDTH[t], lit, vec, t), t, hi)
    if t[0] == "f":
      if t == "f32" and self.ftz32: code = f"ftz32({code})"
      if abs_: code = f"{'fabs' if t == 'f64' else 'fabsf'}({code})"
      if neg: code = f"(-{code})"
    elif neg or abs_: raise NoNative(f"neg/abs on a {t} operand")
    return code

  def lanes(self, body:list[str], masks:dict[int, str]|None=None):
    """A loop over the active lanes; masks: SGPR -> bool expression gathered into it (inactive lanes write 0). With
    every lane on (the common case) the loop has no per-lane test, so the C compiler can vectorize it."""
    masks = masks or {}
    self.out("{ const uint32_t ex = s[126];" + "".join(f" uint32_t mk{d} = 0;" for d in masks))
    inner = [*body, *(f"mk{d} |= (uint32_t)({cond} ? 1u : 0u) << l;" for d, cond in masks.items())]
    self.out("  if (ex == 0xffffffffu) for (int l = 0; l < 32; l++) {")
    for ln in inner: self.out("    " + ln)
    self.out("  } else for (int l = 0; l < 32; l++) { if (!(ex >> l & 1)) continue;")
    for ln in inner: self.out("    " + ln)
    self.out("  }")
    for d in masks: self.out(f"  s[{d}] = mk{d};")
    self.out("}")

  def vstore(self, d:int, t:str, val:str, hi:bool=False) -> list[str]:
    """Lines writing a typed lane value to VGPR d (and d+1 for 64-bit types); a 16-bit value to one half of d."""
    if WIDTH[t] == 16:
      if t == "f16": val = f"f2h({val})"
      self.vregs.add(d)
      if hi: return [f"V({d})[l] = (V({d})[l] & 0xffffu) | ((uint32_t)(uint16_t)({val}) << 16);"]
      return [f"V({d})[l] = (V({d})[l] & 0xffff0000u) | (uint16_t)({val});"]
    if WIDTH[t] == 64:
      self.vregs |= {d, d + 1}
      return [f"{{ uint64_t t_ = {bits(t, val)}; V({d})[l] = (uint32_t)t_; V({d + 1})[l] = (uint32_t)(t_ >> 32); }}"]
    self.vregs.add(d)
    return [f"V({d})[l] = {bits(t, val)};"]

  def float_out(self, t:str, expr:str, omod:int, clamp:bool) -> str:
    if t == "f16" and (omod or clamp): expr = f"r16({expr})"  # the op's own rounding, before the modifiers
    if omod: expr = f"({expr}) * {[1, 2.0, 4.0, 0.5][omod]}{'' if t == 'f64' else 'f'}"
    if clamp: expr = f"clamp01_{'64' if t == 'f64' else '32'}({expr})"
    if t == "f32" and self.ftz32: expr = f"ftz32({expr})"
    return expr

  def mask_dst(self, d:int) -> int|None:
    if d == NULL: return None
    if d == EXEC + 1: raise NoNative("a lane mask written to EXEC_HI")  # VCC_HI is an ordinary SGPR in wave32
    if d >= 128: raise NoNative(f"mask destination {d}")
    return d

  # *** VALU ***
  def valu(self, name:str, dst:int, srcs:list, lit, neg:int=0, abs_:int=0, opsel:int=0, omod:int=0, clamp:bool=False,
           mask_reg:int=VCC, sdst:int|None=None):
    if name == "CNDMASK_B32":
      if opsel: raise NoNative("op_sel")
      t = "f32" if neg or abs_ else "b32"
      a, b = (self.src(s, t, lit, neg=bool(neg >> i & 1), abs_=bool(abs_ >> i & 1)) for i, s in enumerate(srcs[:2]))
      sel = f"(s[{mask_reg}] >> l & 1)" if mask_reg != NULL else "0"
      return self.lanes([f"{CTYPE[t]} a = {a}, b = {b};", *self.vstore(dst, t, f"{sel} ? b : a")])
    if name in ("ADD_CO_U32", "SUB_CO_U32", "SUBREV_CO_U32", "ADD_CO_CI_U32", "SUB_CO_CI_U32", "SUBREV_CO_CI_U32"):
      return self.carry_op(name, dst, srcs, lit, sdst if sdst is not None else VCC, mask_reg, clamp)
    if opsel and name not in self.vop: raise NoNative("op_sel")
    if name in ("MAD_U64_U32", "MAD_I64_I32"):
      if clamp: raise NoNative("clamp on mad64")
      a, b = (self.src(s, "u32", lit) for s in srcs[:2])
      fn = "mad_u64_u32" if name == "MAD_U64_U32" else "mad_i64_i32"
      d = self.mask_dst(sdst)
      body = [f"uint32_t cy; uint64_t r = {fn}({a}, {b}, {self.src(srcs[2], 'u64', lit)}, &cy);", *self.vstore(dst, "u64", "r")]
      return self.lanes(body, {d: "cy"} if d is not None else None)
    if name in ("MBCNT_LO_U32_B32", "MBCNT_HI_U32_B32"):
      a, b = self.src(srcs[0], "u32", lit), self.src(srcs[1], "u32", lit)
      expr = f"(uint32_t)__builtin_popcount({a} & ((1u << l) - 1u)) + {b}" if "LO" in name else b
      return self.lanes(self.vstore(dst, "u32", expr))
    entry = self.vop.get(name)
    if entry is None: raise NoNative(name)
    t_d, t_s, expr = entry
    if name in ACCUMULATE: srcs = srcs[:len(t_s) - 1] + [Reg(256 + dst)]
    if name in LITERAL_K: srcs = srcs[:2] + [Reg(255)]
    if len(srcs) < len(t_s): raise NoNative(f"{name} needs {len(t_s)} sources")
    if clamp and t_d[0] != "f": raise NoNative("integer clamp")
    if omod and t_d[0] != "f": raise NoNative("output modifier on an integer op")
    if any(opsel >> i & 1 and WIDTH[t] != 16 for i, t in enumerate(t_s)) or (opsel & 8 and WIDTH[t_d] != 16):
      raise NoNative("op_sel on a 32-bit operand")
    decl = [f"{CTYPE[t]} {'abc'[i]} = {self.src(s, t, lit, hi=bool(opsel >> i & 1), neg=bool(neg >> i & 1), abs_=bool(abs_ >> i & 1))};"
            for i, (s, t) in enumerate(zip(srcs, t_s))]
    if t_d[0] == "f": expr = self.float_out(t_d, expr, omod, clamp)
    self.lanes(decl + self.vstore(dst, t_d, expr, hi=bool(opsel & 8)))

  def carry_op(self, name:str, dst:int, srcs:list, lit, sdst:int, cin_reg:int, clamp:bool):
    if clamp: raise NoNative("clamp on a carry op")
    a, b = (self.src(s, "u32", lit) for s in srcs[:2])
    if name.startswith("SUBREV"): a, b = b, a
    add, op = name.startswith("ADD"), "+" if name.startswith("ADD") else "-"
    body = [f"uint32_t a = {a}, b = {b};"]
    if "_CI_" in name:
      body.append(f"uint32_t i = s[{cin_reg}] >> l & 1; uint32_t r = a {op} b {op} i;")
      carry = "(r < a) || (i && r == a)" if add else "(b > a) || (i && b == a)"
    else:
      body.append(f"uint32_t r = a {op} b;")
      carry = "r < a" if add else "b > a"
    d = self.mask_dst(sdst)
    self.lanes(body + self.vstore(dst, "u32", "r"), {d: f"({carry})"} if d is not None else None)

  def vop1(self, inst, name):
    n, lit = strip(name), getattr(inst, "literal", None)
    if n == "READFIRSTLANE_B32":
      d = inst.vdst.offset
      if d >= 128 and d != SCC: raise NoNative("readfirstlane destination")
      if inst.src0.offset >= 256:
        v = inst.src0.offset - 256
        self.vregs.add(v)
        return self.out(f"s[{d}] = V({v})[s[126] ? __builtin_ctz(s[126]) : 0];") if d != NULL else None
      return self.out(f"s[{d}] = {self.raw(inst.src0, 32, lit, vec=False)};") if d != NULL else None
    if n == "SWAP_B32": raise NoNative("v_swap")
    self.valu_e32(n, *self.e32_halves(n, inst.vdst.offset - 256, [inst.src0]), lit)

  def vop2(self, inst, name):
    n = strip(name)
    self.valu_e32(n, *self.e32_halves(n, inst.vdst.offset - 256, [inst.src0, inst.vsrc1]), getattr(inst, "literal", None))

  def valu_e32(self, n, dst, srcs, opsel, lit): return self.valu(n, dst, srcs, lit, 0, 0, opsel)

  def e32_halves(self, n:str, dst:int, srcs:list) -> tuple[int, list, int]:
    """16-bit e32 operands v[128+n] are high halves (errata true16-e32), as translate.Translator.e32_halves."""
    entry = self.vop.get(n)
    if entry is None or n in ACCUMULATE or n in LITERAL_K: return dst, srcs, 0
    return errata.true16(entry, dst, srcs)

  def vop3(self, inst, name):
    n, lit = strip(name), getattr(inst, "literal", None)
    srcs = [inst.src0, inst.src1, inst.src2]
    if n.startswith("CMP"): return self.vcmp(n, srcs, lit, inst.vdst.offset, inst.neg, inst.abs)
    if n.startswith("S_"):  # RDNA4's v_s_exp_f32 etc.: a VALU op on one scalar, its result in an SGPR
      if inst.neg or inst.abs or inst.omod or inst.clmp or inst.opsel: raise NoNative("modifiers on a scalar-result VALU op")
      return self.sop_common(n, inst.vdst.offset, [inst.src0], lit)
    if n in ("READLANE_B32", "WRITELANE_B32", "PERMLANE16_B32", "PERMLANEX16_B32"): raise NoNative(n)
    mask = inst.src2.offset if n in ("CNDMASK_B32", "ADD_CO_CI_U32", "SUB_CO_CI_U32", "SUBREV_CO_CI_U32") else VCC
    self.valu(n, inst.vdst.offset - 256, srcs, lit, inst.neg, inst.abs, inst.opsel, inst.omod, bool(inst.clmp), mask)

  def vop3sd(self, inst, name):
    n = strip(name)
    mask = inst.src2.offset if "_CI_" in n else VCC
    self.valu(n, inst.vdst.offset - 256, [inst.src0, inst.src1, inst.src2], getattr(inst, "literal", None), inst.neg, 0,
              0, inst.omod, bool(inst.clmp), mask, sdst=inst.sdst.offset)

  def vopc_enc(self, inst, name):
    self.vcmp(strip(name), [inst.src0, inst.vsrc1], getattr(inst, "literal", None), VCC, 0, 0)

  def vcmp(self, n:str, srcs, lit, sdst:int, neg:int, abs_:int):
    parts = n.split("_")
    if len(parts) != 3 or parts[2] not in CMP_TYPES: raise NoNative(n)
    cond, t = parts[1], CMP_TYPES[parts[2]]
    a = self.src(srcs[0], t, lit, neg=bool(neg & 1), abs_=bool(abs_ & 1))
    if cond == "CLASS":
      if t != "f32": raise NoNative(n)
      body, expr = [f"float a = {a}; uint32_t b = {self.src(srcs[1], 'u32', lit)};"], "cmp_class32(a, b)"
    else:
      expr = (FCMP if t[0] == "f" else ICMP).get(cond)
      if expr is None: raise NoNative(n)
      body = [f"{CTYPE[t]} a = {a}, b = {self.src(srcs[1], t, lit, neg=bool(neg & 2), abs_=bool(abs_ & 2))};"]
    d = EXEC if parts[0] == "CMPX" else self.mask_dst(sdst)
    if d is None: return None
    self.lanes(body, {d: f"({expr})"})

  def vopd(self, inst, name):
    lit = getattr(inst, "literal", None)
    body, writes = [], []
    for tag, op, s0, s1, vd in (("x", inst.opx, inst.srcx0, inst.vsrcx1, inst.vdstx), ("y", inst.opy, inst.srcy0, inst.vsrcy1, inst.vdsty)):
      n, d = rdna4.rdna3_name(op.name)[len("V_DUAL_"):], vd.offset - 256
      srcs = [s0] if n == "MOV_B32" else [s0, s1]
      if n == "CNDMASK_B32":
        body.append(f"uint32_t r{tag} = (s[{VCC}] >> l & 1) ? {self.src(s1, 'b32', lit)} : {self.src(s0, 'b32', lit)};")
        writes.append(f"V({d})[l] = r{tag};")
        self.vregs.add(d)
        continue
      entry = self.vop.get(n)
      if entry is None: raise NoNative(f"{n} in VOPD")
      t_d, t_s, expr = entry
      if n in ACCUMULATE: srcs = srcs + [Reg(256 + d)]
      if n in LITERAL_K: srcs = srcs + [Reg(255)]
      decl = ", ".join(f"{'abc'[i]} = {self.src(s, t, lit)}" for i, (s, t) in enumerate(zip(srcs, t_s)))
      if len(set(t_s)) != 1: raise NoNative(f"{n} in VOPD")
      if t_d[0] == "f": expr = self.float_out(t_d, expr, 0, False)
      body.append(f"uint32_t r{tag}; {{ {CTYPE[t_s[0]]} {decl}; r{tag} = {bits(t_d, expr)}; }}")
      writes.append(f"V({d})[l] = r{tag};")
      self.vregs.add(d)
    self.lanes(body + writes)  # both ops read their sources before either writes

  # *** SALU ***
  def swrite(self, d:int, t:str, expr:str) -> list[str]:
    if d == NULL: return []
    if d >= 128 and d != SCC: raise NoNative(f"scalar destination {d}")
    if WIDTH[t] == 64:
      return [f"{{ uint64_t t_ = {bits(t, expr)}; s[{d}] = (uint32_t)t_; s[{d + 1}] = (uint32_t)(t_ >> 32); }}"]
    return [f"s[{d}] = {bits(t, expr)};"]

  def scalar(self, lines:list[str]): self.out("{ " + " ".join(lines) + " }")

  def sop_common(self, n:str, dst:int, srcs:list, lit):
    if n not in self.sop: raise NoNative(n)
    t_d, t_s, expr, scc = self.sop[n]
    lines = ["uint32_t scc = s[253];"]
    if OLD_D.search(expr): lines.append(f"{CTYPE[t_d]} d0 = {self.src(Reg(dst), t_d, None, vec=False)};")
    for i, (s, t) in enumerate(zip(srcs, t_s)):
      t, hi = split_hi(t)
      lines.append(f"{CTYPE[t]} {'abc'[i]} = {self.src(s, t, lit, vec=False, hi=hi)};")
    expr = OLD_D.sub('d0', expr)
    lines.append(f"{CTYPE[t_d]} d = {self.float_out(t_d, expr, 0, False) if t_d[0] == 'f' else expr};")
    lines.append("(void)scc;")
    if scc: lines.append(f"s[253] = ({scc}) ? 1u : 0u;")
    self.scalar(lines + self.swrite(dst, t_d, "d"))

  def sop1(self, inst, name):
    n, lit, d = strip(name), getattr(inst, "literal", None), inst.sdst.offset
    if n.endswith("_SAVEEXEC_B32"):
      op = n[:-len("_SAVEEXEC_B32")]
      if op not in SAVEEXEC: raise NoNative(n)
      return self.scalar([f"uint32_t a = {self.raw(inst.ssrc0, 32, lit, vec=False)}, e = s[126];",
                          f"s[126] = {SAVEEXEC[op]}; s[253] = s[126] != 0;", *self.swrite(d, "u32", "e")])
    if n == "GETPC_B64": return self.scalar(self.swrite(d, "u64", f"c->pgm + {self.pc + 4}ull"))
    if name == rdna4.BARRIER_SIGNAL: return self.barrier(inst)
    self.sop_common(n, d, [inst.ssrc0], lit)

  def sop2(self, inst, name):
    n = strip(name)
    k = [Reg(255)] if n in LITERAL_K else []  # s_fmaak/s_fmamk: the literal K is a third source
    self.sop_common(n, inst.sdst.offset, [inst.ssrc0, inst.ssrc1, *k], getattr(inst, "literal", None))

  def sopc(self, inst, name):
    n, lit = strip(name), getattr(inst, "literal", None)
    parts = n.split("_")
    if parts[0] in ("BITCMP0", "BITCMP1"):
      w64 = parts[1] == "B64"
      a, b = self.raw(inst.ssrc0, 64 if w64 else 32, lit, vec=False), self.raw(inst.ssrc1, 32, lit, vec=False)
      bit = f"(({a} >> ({b} & {63 if w64 else 31})) & 1)"
      return self.out(f"s[253] = {bit} == {0 if parts[0] == 'BITCMP0' else 1};")
    if len(parts) != 3 or parts[0] != "CMP" or parts[2] not in CMP_TYPES: raise NoNative(n)
    t = CMP_TYPES[parts[2]]
    expr = (FCMP if t[0] == "f" else ICMP).get(parts[1])
    if expr is None: raise NoNative(n)
    a, b = (typed(self.raw(s, WIDTH[t], lit, vec=False, t=t), t) for s in (inst.ssrc0, inst.ssrc1))
    self.scalar([f"{CTYPE[t]} a = {a}, b = {b};", f"s[253] = ({expr}) ? 1u : 0u;"])

  def sopk(self, inst, name):
    n, d, k = strip(name), inst.sdst.offset, inst.simm16
    sk = k - (1 << 16) if k & 0x8000 else k
    if n == "MOVK_I32": return self.scalar(self.swrite(d, "u32", f"{sk & 0xffffffff}u"))
    if n == "CMOVK_I32": return self.scalar(self.swrite(d, "u32", f"s[253] ? {sk & 0xffffffff}u : s[{d}]"))
    if d >= 128: raise NoNative(f"scalar destination {d}")
    if n.startswith("CMPK_"):
      _, cond, typ = n.split("_")
      expr = ICMP.get(cond)
      if expr is None or typ not in ("I32", "U32"): raise NoNative(n)
      a, b = (f"(int32_t)s[{d}]", f"(int32_t){sk}") if typ == "I32" else (f"s[{d}]", f"{k}u")
      return self.scalar([f"{'int32_t' if typ == 'I32' else 'uint32_t'} a = {a}, b = {b};", f"s[253] = ({expr}) ? 1u : 0u;"])
    if n == "ADDK_I32":
      return self.scalar([f"int32_t a = (int32_t)s[{d}], b = {sk}; int32_t r = a + b;",
                          "s[253] = ((a < 0) == (b < 0)) && ((r < 0) != (a < 0));", f"s[{d}] = (uint32_t)r;"])
    if n == "MULK_I32": return self.scalar([f"s[{d}] = (uint32_t)((int32_t)s[{d}] * {sk});"])
    raise NoNative(n)

  def barrier(self, inst):
    """The wave returns to the scheduler (prelude.c) at the end of its block; it resumes once its workgroup's live
    waves are all at a barrier."""
    if op_name(inst) != "S_BARRIER" and (why:=rdna4.barrier_problem(inst)): raise NoNative(why)
    if op_name(inst) not in BARRIERS: return None  # s_barrier_signal -1: the wait does it
    return f"return {self.index[self.pc + 4]};" if self.pc + 4 in self.index else None

  def sopp(self, inst, name):
    if name == "S_ENDPGM": return "return -1;"
    if name in BARRIERS: return self.barrier(inst)
    if name == "S_SENDMSG":
      if inst.simm16 & 0xff == MSG_DEALLOC_VGPRS: return None
      raise NoNative(f"message {inst.simm16:#x}")
    if name in BRANCHES:
      tgt = branch_target(self.pc, inst)
      if tgt not in self.index: raise NoNative("branch target outside the decoded code")
      if name == "S_BRANCH": return f"goto B{self.index[tgt]};"
      cond = {"S_CBRANCH_SCC0": "s[253] == 0", "S_CBRANCH_SCC1": "s[253] != 0", "S_CBRANCH_VCCZ": "s[106] == 0",
              "S_CBRANCH_VCCNZ": "s[106] != 0", "S_CBRANCH_EXECZ": "s[126] == 0", "S_CBRANCH_EXECNZ": "s[126] != 0"}[name]
      return f"if ({cond}) goto B{self.index[tgt]}; goto B{self.index[self.pc + 4]};"
    raise NoNative(name)

  # *** memory ***
  def smem(self, inst, name):
    n = strip(name)
    if not n.startswith("LOAD_B") and n not in rdna4.SMEM_KINDS: raise NoNative(n)
    # dwords from a dword-aligned address; RDNA4's s_load_u8/i8/u16/i16: one element from its aligned address
    ctype, nbytes, ndw = (*MEM_KIND[n[5:]], 1) if n in rdna4.SMEM_KINDS else ("uint32_t", 4, int(n[len("LOAD_B"):]) // 32)
    off = imm_offset(inst)
    soff = "" if inst.soffset.offset == NULL else f" + {self.raw(inst.soffset, 32, None, vec=False)}"
    d = inst.sdata.offset
    if d + ndw > 128 and not (d <= EXEC < d + ndw): raise NoNative("s_load into special registers")
    b = inst.sbase.offset
    addr = f"(R64(s[{b}], s[{b + 1}]) + {off & (2**64 - 1)}ull{soff}) & ~{nbytes - 1}ull"
    self.scalar([f"{ctype} t_[{ndw}];", f"gload(c, t_, {addr}, {nbytes}, {ndw}, {self.pc});",
                 *(f"s[{d + j}] = (uint32_t)t_[{j}];" for j in range(ndw) if d + j != NULL)])

  def vmem(self, inst, name:str, seg:str, addr:str):
    n = strip(name)[len(seg) + 1:]
    if "ATOMIC" in n or "LDS" in n or "ADDTID" in n or "D16" in n: raise NoNative(n)
    op, ctype, nbytes, ndw = mem_kind(n)
    if op == "LOAD":
      d = inst.vdst.offset - 256
      self.vregs |= set(range(d, d + ndw))
      fetch = f"{ctype} t_[{ndw}]; gload(c, t_, a_, {nbytes}, {ndw}, {self.pc});"
      return self.lanes([f"uint64_t a_ = {addr};", fetch, *(f"V({d + j})[l] = (uint32_t)t_[{j}];" for j in range(ndw))])
    if op != "STORE": raise NoNative(n)
    data = inst.data.offset - 256
    self.vregs |= set(range(data, data + ndw))
    # every lane's address is checked before any lane writes, as the numpy path does
    self.lanes([f"uint64_t a_ = {addr}; gcheck(c, a_, {nbytes}, {ndw}, 1, {self.pc});"])
    self.lanes([f"uint64_t a_ = {addr}; {store_data(ctype, data, ndw)}", f"gstore(c, a_, t_, {nbytes}, {ndw});"])

  def glob(self, inst, name):
    off = imm_offset(inst)
    v = inst.addr.offset - 256
    if inst.saddr.offset == NULL:
      self.vregs |= {v, v + 1}
      addr = f"R64(V({v})[l], V({v + 1})[l]) + {off & (2**64 - 1)}ull"
    else:
      self.vregs.add(v)
      s = inst.saddr.offset
      addr = f"R64(s[{s}], s[{s + 1}]) + (uint64_t)V({v})[l] + {off & (2**64 - 1)}ull"
    self.vmem(inst, name, "GLOBAL", addr)

  def flat(self, inst, name):
    if (off:=imm_offset(inst)) < 0 or inst.saddr.offset != NULL: raise NoNative("FLAT offset/saddr form")
    v = inst.addr.offset - 256
    self.vregs |= {v, v + 1}
    self.vmem(inst, name, "FLAT", f"R64(V({v})[l], V({v + 1})[l]) + {off}ull")

  def ds(self, inst, name):
    n = strip(name)[3:] if name.startswith("DS_") else strip(name)
    a = inst.addr.offset - 256
    self.vregs.add(a)
    off = inst.offset0 | (inst.offset1 << 8)
    if "2ADDR" in n:
      if n.startswith("STOREXCHG"): raise NoNative(n)
      ndw = 2 if n.endswith("B64") else 1
      scale = (8 if ndw == 2 else 4) * (64 if "STRIDE64" in n else 1)
      offs = (inst.offset0 * scale, inst.offset1 * scale)
      if n.startswith("LOAD"):
        d = inst.vdst.offset - 256
        self.vregs |= set(range(d, d + 2 * ndw))
        for o in offs: self.lanes([f"ldscheck(c, V({a})[l] + {o}u, 4, {ndw}, 0, {self.pc});"])
        body = [f"uint32_t t_[{2 * ndw}];"] + [f"ldsload(lds, t_ + {i * ndw}, V({a})[l] + {o}u, 4, {ndw});" for i, o in enumerate(offs)]
        return self.lanes(body + [f"V({d + j})[l] = t_[{j}];" for j in range(2 * ndw)])
      for o in offs: self.lanes([f"ldscheck(c, V({a})[l] + {o}u, 4, {ndw}, 1, {self.pc});"])
      for i, o in enumerate(offs):
        dr = (inst.data0 if i == 0 else inst.data1).offset - 256
        self.vregs |= set(range(dr, dr + ndw))
        self.lanes([store_data("uint32_t", dr, ndw), f"ldsstore(lds, V({a})[l] + {o}u, t_, 4, {ndw});"])
      return None
    if not n.startswith(("LOAD", "STORE")) or "ADDTID" in n or "D16" in n or "XCHG" in n: raise NoNative(n)
    op, ctype, nbytes, ndw = mem_kind(n)
    addr = f"V({a})[l] + {off}u"
    if op == "LOAD":  # checked lane by lane as it loads: the first lane out of range is still the one reported
      d = inst.vdst.offset - 256
      self.vregs |= set(range(d, d + ndw))
      return self.lanes([f"ldscheck(c, {addr}, {nbytes}, {ndw}, 0, {self.pc});", f"{ctype} t_[{ndw}]; ldsload(lds, t_, {addr}, {nbytes}, {ndw});",
                         *(f"V({d + j})[l] = (uint32_t)t_[{j}];" for j in range(ndw))])
    data = inst.data0.offset - 256
    self.vregs |= set(range(data, data + ndw))
    self.lanes([f"ldscheck(c, {addr}, {nbytes}, {ndw}, 1, {self.pc});"])  # every lane checked before any lane writes
    self.lanes([store_data(ctype, data, ndw), f"ldsstore(lds, {addr}, t_, {nbytes}, {ndw});"])
