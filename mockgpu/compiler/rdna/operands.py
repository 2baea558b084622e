"""The operand model: each encoding's decoded instruction (a tinygrad Inst) lowered, once, into one description that
no longer depends on the encoding: which semantics row it runs, which registers and constants it reads (with their
neg/abs/op_sel modifiers), what it writes, its output modifiers and lane masks, a memory access's address parts.
v_add_f32 in VOP2, VOP3, VOPD and DPP encodings all become a Valu naming row ADD_F32. Every backend (numpy, C, the
stepper) consumes these descriptions; none of them looks at an encoding's fields.

Operands keep their encoded number (Src.reg): 0-105 SGPRs, 106/107 VCC, 108-123 trap temporaries, 124 NULL, 125 M0,
126/127 EXEC, 128-208 inline integers, 240-248 inline floats, 233/234/250 a DPP source, 251 VCCZ, 252 EXECZ, 253 SCC,
255 the literal, 256-511 VGPRs, and for CDNA 768-1023 the AGPRs (accumulation registers, a second file that every
backend holds after the VGPRs: a[n] is register index AGPR + n). GFX9 (CDNA) words are renumbered into this model
(its M0 is 124) by the GFX9 section at the end. An instruction this model cannot express raises Unsupported (its
message starts with decode.INVALID when the ISA itself does not define it).
"""
from __future__ import annotations
import struct
from dataclasses import dataclass, replace
import numpy as np
from tinygrad.renderer.amd.dsl import Inst, Reg, SrcField, VGPRField
from mockgpu.compiler.rdna.decode import op_name, branch_target, imm_offset, BRANCHES, INVALID, describe, invalid_operand
from mockgpu.boards import WAVE64
from mockgpu.compiler.rdna import errata
from mockgpu.compiler.rdna.semantics.lang import WIDTH
from mockgpu.compiler.rdna.gfx9 import bitop3_table, flat_offset, MFMAShape

SCC, VCC, EXEC, NULL, M0, LITERAL = 253, 106, 126, 124, 125, 255
VCCZ, EXECZ = 251, 252
INLINE_MINUS_ONE = 193  # the operand encoding of the inline constant -1 (the workgroup barrier's ID)
DPP_SRC = (233, 234, 250)
FCONST = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
INV_2PI = {16: 0x3118, 32: 0x3e22f983, 64: 0x3fc45f306dc9c882}
NOOPS = {"S_NOP", "S_WAITCNT", "S_WAITCNT_DEPCTR", "S_DELAY_ALU", "S_CLAUSE", "S_SET_INST_PREFETCH_DISTANCE",
         "S_SLEEP", "S_WAIT_IDLE", "S_SETPRIO", "S_ICACHE_INV", "S_TTRACEDATA", "S_TTRACEDATA_IMM", "S_WAKEUP",
         "S_INCPERFLEVEL", "S_DECPERFLEVEL", "S_WAITCNT_VSCNT", "S_WAITCNT_VMCNT", "S_WAITCNT_EXPCNT",
         "S_WAITCNT_LGKMCNT", "S_VERSION", "S_DCACHE_INV", "S_GL1_INV", "V_NOP", "V_PIPEFLUSH", "DS_NOP"}
MSG_DEALLOC_VGPRS = 3
CARRY_IN = ("CNDMASK_B32", "CNDMASK_B16", "ADD_CO_CI_U32", "SUB_CO_CI_U32", "SUBREV_CO_CI_U32")  # read src2's mask in VOP3
BRANCH_CONDS = {"S_BRANCH": None, "S_CBRANCH_SCC0": "scc0", "S_CBRANCH_SCC1": "scc1", "S_CBRANCH_VCCZ": "vccz",
                "S_CBRANCH_VCCNZ": "vccnz", "S_CBRANCH_EXECZ": "execz", "S_CBRANCH_EXECNZ": "execnz"}

class Unsupported(Exception):
  """An instruction no backend can run: becomes UnsupportedInstruction (InvalidInstruction when its message starts
  with decode.INVALID) where it executes."""

# *** operands ***

@dataclass(frozen=True)
class Src:
  """A source operand: its encoded number, the instruction's literal, its modifiers. type overrides the row's type
  for this source (v_fma_mix reads f16 or f32 sources by op_sel_hi)."""
  reg:int
  lit:int|None = None
  neg:bool = False
  abs:bool = False
  hi:bool = False
  type:str|None = None
  sdwa:tuple[int, bool]|None = None   # GFX9 SDWA: (SRC_SEL, SEXT): a byte or word of the 32-bit operand, extended
  quad:int|None = None                # VINTERP: the VGPR read in lane (lane & ~3) + quad of this lane's quad, whatever
                                      # EXEC holds there (the pseudocode's VGPR[(laneId & 0xfffffffc) + quad][SRC])

  @property
  def vgpr(self) -> int|None: return self.reg - 256 if self.reg >= 256 else None
  @property
  def sgpr(self) -> int|None: return self.reg if self.reg < 128 and self.reg != NULL else None

  def bits(self, width:int, t:str) -> int|None:
    """The bits of a constant operand (an inline constant, the literal, NULL) read as a width-bit operand of ISA type
    t; None for a register. Raises Unsupported for an encoding that is neither."""
    o = self.reg
    if o == NULL: return 0
    if o == LITERAL:
      if self.lit is None: raise Unsupported("literal operand without a literal")
      if width <= 32: return self.lit
      if t == "f64": return self.lit << 32                      # a 64-bit float literal is the high half
      return (self.lit - (1 << 32) if t == "i64" and self.lit >> 31 else self.lit) & (2**64 - 1)
    if o < 128 or o >= 256 or o in DPP_SRC or o in (SCC, VCCZ, EXECZ): return None
    bits = const_bits(o, 16 if width == 16 else width)
    if bits is None: raise Unsupported(invalid_operand(Reg(o)) or f"operand {describe(Reg(o))}")
    return bits

def const_bits(o:int, width:int) -> int|None:
  """The bits of inline constant o as a width-bit operand (floats in that width's format), or None."""
  if 128 <= o <= 208: return (o - 128 if o <= 192 else -(o - 192)) & ((1 << width) - 1)
  if o in FCONST: return int.from_bytes(struct.pack("<" + {16: "e", 32: "f", 64: "d"}[width], FCONST[o]), "little")
  if o == 248: return INV_2PI[width]
  return None

def literal(inst:Inst) -> int|None: return getattr(inst, "literal", None)

def strip(name:str) -> str:
  """The row name of an instruction: no V_/S_ prefix, no _E32/_E64 suffix."""
  name = name[2:] if name.startswith(("V_", "S_")) else name
  for suffix in ("_E32", "_E64"):
    if name.endswith(suffix): return name[:-len(suffix)]
  return name

def signed(x:int, bits:int) -> int: return x - (1 << bits) if x >> (bits - 1) & 1 else x

# *** what an instruction does ***

@dataclass(frozen=True)
class Dpp:
  """A DPP source: VGPR vsrc read from other lanes. ctrl is the DPP16 control word (None: DPP8 with sels)."""
  vsrc:int
  ctrl:int|None
  bound_ctrl:bool = False
  fetch_inactive:bool = False
  row_mask:int = 15
  bank_mask:int = 15
  sels:tuple[int, ...] = ()

@dataclass
class Valu:
  """A vector ALU op: row of semantics.VOP over srcs, writing VGPR dst (and the lane mask mask_out, when the row
  writes `vcc`); mask_in is the SGPR the row's `vcc` reads."""
  row:str
  dst:int
  srcs:list[Src]
  dst_hi:bool = False
  omod:int = 0
  clamp:bool = False
  mask_in:int = VCC
  mask_out:int|None = VCC
  dpp:Dpp|None = None
  mask_copy:int|None = None                 # GFX9 v_cmpx: the lane mask also goes to this SGPR (VCC or SDST)
  sdwa_dst:tuple[int, int]|None = None      # GFX9 SDWA: (DST_SEL, DST_UNUSED) place the result in a byte or word

@dataclass
class Dual:
  """VOPD: two Valu ops that both read their sources before either writes."""
  x:Valu
  y:Valu

@dataclass
class Packed:
  """A VOP3P packed 16-bit op: the row run on the low halves (lo sources) and on the high halves (hi sources); clamp
  saturates each half (semantics PACKED_CLAMPED; f16: to [0, 1])."""
  row:str
  dst:int
  lo:list[Src]
  hi:list[Src]
  clamp:bool = False

@dataclass
class Wmma:
  """v_wmma_*: D (as many VGPRs as C) from the VGPR blocks a, b, c, in the family's register layout."""
  row:str
  dst:int
  a:list[int]
  b:list[int]
  c:list[int]
  kind_in:str
  kind_out:str
  hi:bool
  signed:tuple[bool, bool]
  clamp:bool
  layout:str
  fp8:str|None = None   # the family's fp8/bf8 formats (semantics FP8) for the fp8/bf8 forms
  index:int|None = None  # RDNA4 v_swmmac_*: the VGPR of A's sparsity index (A is then the compressed 2:4 matrix, C is D)
  index_key:int = 0      # which 16 bits of the index VGPR the x32 forms read (op_sel bit 0)

@dataclass
class Mfma:
  """CDNA v_mfma_*: D = A * B + C over the wave in the form's register layout (compiler/rdna/gfx9.MFMAShape); registers
  are backend indexes (AGPRs at AGPR + n); c is None when C is the inline constant c_bits in every element."""
  name:str
  dst:list[int]
  a:list[int]
  b:list[int]
  c:list[int]|None
  c_bits:int
  fp8:str               # the family's fp8/bf8 formats (semantics FP8: FNUZ on cdna3, OCP on cdna4)

@dataclass
class Salu:
  """A scalar ALU op: row of semantics.SOP over srcs, writing SGPR dst (NULL: nowhere). omod, clamp: the float output
  modifiers of RDNA4's v_s_* (VOP3 with an SGPR result), which also take their source's neg/abs/op_sel in srcs."""
  row:str
  dst:int
  srcs:list[Src]
  omod:int = 0
  clamp:bool = False

@dataclass
class ReadLane:
  """v_readfirstlane (lane None: the first active lane) / v_readlane into SGPR dst."""
  dst:int
  src:int
  lane:Src|None

@dataclass
class WriteLane:
  dst:int
  value:Src
  lane:Src

@dataclass
class Mode:
  """MODE's float fields, bits offset..offset + size - 1 (3:0 the rounding modes, 7:4 the denormal modes): read into
  SGPR dst (s_getreg_b32) or written with value (s_round_mode, s_denorm_mode, s_setreg_b32, s_setreg_imm32_b32). A
  kernel runs in the one float mode of its RSRC1 (program.mode_field): a write that changes it raises."""
  offset:int
  size:int
  dst:int|None = None
  value:Src|None = None

HW_REG_MODE = 1

def _hwreg(simm16:int) -> tuple[int, int]:
  """(offset, size) of an s_getreg/s_setreg field: only MODE's float bits 7:0 are modelled."""
  reg, offset, size = simm16 & 0x3f, simm16 >> 6 & 0x1f, (simm16 >> 11) + 1
  if reg != HW_REG_MODE or offset + size > 8:
    raise Unsupported(f"hardware register {reg} bits {offset}..{offset + size - 1} (only MODE's float bits 7:0 are modelled)")
  return offset, size

@dataclass
class Permlane:
  """v_permlane16_b32 / v_permlanex16_b32 (width 16): lane i of each row of 16 reads lane sel_i of its own row (cross:
  of the other row of its pair, 0<->1, 2<->3), sel_i nibble i of the 64 bits {sel_hi, sel_lo}; op_sel[0] (fi) reads
  inactive source lanes too, else such a lane is written 0 with op_sel[1] (bound_ctrl) and left alone without it.
  v_permlane64_b32 (width 64): lane i reads lane i ^ 32 of a wave64, active or not; a NOP in wave32. RDNA4's
  v_permlane16_var/x16_var_b32 take lane i's select from bits 3:0 of VGPR sel_vgpr in lane i instead."""
  dst:int
  src:int
  width:int
  sel_lo:Src|None = None
  sel_hi:Src|None = None
  cross:bool = False
  fi:bool = False
  bound_ctrl:bool = False
  sel_vgpr:int|None = None

@dataclass
class Swap:
  """v_swap_b32 (halves None) / v_swap_b16: VGPRs a (src0) and b (vdst) exchange their values (v_swap_b16: the 16-bit
  halves halves[0] of a and halves[1] of b, True the high one)."""
  a:int
  b:int
  halves:tuple[bool, bool]|None = None

@dataclass
class Branch:
  cond:str|None   # scc0 scc1 vccz vccnz execz execnz, None: always
  target:int      # byte offsets from the kernel's entry
  fallthrough:int

@dataclass
class Jump:
  """A computed or saved program counter: s_setpc_b64 (the target address in `target`, a 64-bit source), s_swappc_b64
  (and the return address, the next instruction's, into the SGPR pair `link`), s_call_b64 (the static target `offset`
  and a link). ret: the byte offset of the next instruction."""
  name:str
  target:Src|None       # the source holding the target address; None: the static offset
  link:int|None         # the SGPR pair receiving the return address, or None
  ret:int
  offset:int|None = None

@dataclass
class Trap:
  """s_trap: the wave enters the trap handler KFD installs, which reports the trap to the runtime as a queue error."""
  trap_id:int

# M0 bit fields an M0-relative move adds to an encoded register index: (shift, bits)
M0_ALL, M0_SRC, M0_DST = (0, 32), (0, 10), (16, 10)

@dataclass
class MovRel:
  """An M0-relative move (v_movrel*/v_swaprel_b32 over the VGPRs, s_movrel* over the SGPRs): the destination register
  dst, plus the M0 field dst_rel when it is relative, gets either the value of the operand src (movreld) or register
  src_reg plus the M0 field src_rel; swap exchanges the two registers (v_swaprel_b32). ndw: 1, or 2 for the _b64
  forms (a pair from the relative index). limit: the registers a relative index may reach (SGPRs: the family's file;
  VGPRs: 256, narrowed at run time to the wave's allocation). name: for error messages."""
  name:str
  vgpr:bool
  dst:int
  dst_rel:tuple[int, int]|None
  src:Src|None
  src_reg:int|None
  src_rel:tuple[int, int]|None
  limit:int
  ndw:int = 1
  swap:bool = False

@dataclass
class End: pass
@dataclass
class Barrier: pass
@dataclass
class Nop: pass

@dataclass
class Smem:
  dst:int
  ndw:int
  base:int              # the SGPR pair holding the base address
  offset:int
  soffset:Src|None
  name:str
  kind:str = "u32"      # dwords; RDNA4's s_load_u8/i8/u16/i16: one element of that type, extended

@dataclass
class Addr:
  """A vector memory address: VGPR vaddr (a pair when wide), plus the SGPR pair sbase (global) or the 32-bit soff
  (scratch), plus offset."""
  vaddr:int|None
  wide:bool
  sbase:int|None = None
  soff:Src|None = None
  offset:int = 0
  addtid:bool = False   # global_load/store_addtid: the lane's index * 4 in place of a VGPR (vaddr None)

@dataclass
class BufAddr:
  """A MUBUF address (buffer.py): the V# in SGPRs srsrc..srsrc+3, VGPR vaddr (the index with IDXEN, then the offset
  with OFFEN: vaddr + 1 when both), the SGPR offset soffset and the instruction's offset."""
  srsrc:int
  vaddr:int
  idxen:bool
  offen:bool
  soffset:Src
  offset:int

@dataclass
class Vmem:
  seg:str               # GLOBAL, FLAT (addressed as global), SCRATCH, BUFFER (addr a BufAddr)
  load:bool
  kind:str              # element type: u8 i8 u16 i16 u32
  ndw:int
  d16:str|None          # lo / hi: a 16-bit element to or from one half of the VGPR
  reg:int               # the loaded VGPR (vdst) or the stored one (data)
  addr:Addr
  name:str

@dataclass
class DsLoad:
  addr:int|None         # None: ds_load_addtid (M0[15:0] + the lane's index * 4 in place of a VGPR)
  offset:int
  kind:str
  ndw:int
  d16:str|None
  dst:int
  name:str

@dataclass
class DsStore:
  addr:int|None         # None: ds_store_addtid, as DsLoad
  offset:int
  kind:str
  ndw:int
  d16:str|None
  data:int
  name:str

@dataclass
class DsSwizzle:
  """ds_swizzle_b32: each lane i reads `data` of lane swizzle_lanes(offset, wave)[i] (an inactive source lane gives 0);
  no LDS access."""
  data:int
  dst:int
  offset:int

@dataclass
class DsPair:
  """ds_load_2addr / ds_store_2addr: ndw dwords at each of two offsets."""
  load:bool
  addr:int
  offsets:tuple[int, int]
  ndw:int
  regs:tuple[int, int]   # the loaded VGPR (both halves follow it) / the two stored ones
  name:str

@dataclass
class DsPermute:
  back:bool             # ds_bpermute (each lane reads) / ds_permute (each lane writes)
  addr:int
  offset:int
  data:int
  dst:int

@dataclass
class DsAtomic:
  """A DS read-modify-write (a row of semantics ATOMIC) at each slot's address ((V[addr] + offset) & mask) + slot: one
  slot, or two (ds_storexchg_2addr: DATA to the first address, DATA2 to the second; ds_condxchg32_rtn_b64: DATA's low
  and high halves to ADDR0 and ADDR0 + 4, ADDR0 masked to 0xfff8). data: per slot, the first VGPR of each source of
  the row after `old` (a, b; a 64-bit source is a pair). A lane reads all its slots before it writes any. dst: where
  the _RTN forms return the old words, slot after slot (None: the forms without _RTN)."""
  addr:int
  offset:int
  slots:tuple[int, ...]
  data:tuple[tuple[int, ...], ...]
  row:str
  width:int             # bits of the word the row updates: 32 or 64
  dst:int|None
  name:str
  mask:int = 0xffffffff

@dataclass
class VAtomic:
  """A FLAT/GLOBAL atomic: the row of semantics ATOMIC at addr; data: the first VGPR of each row source after `old`
  (a cmpswap's compare value follows its new value); dst: where GLC (RDNA4: TH_ATOMIC_RETURN) returns the old word."""
  seg:str
  addr:Addr
  row:str
  width:int
  data:tuple[int, ...]
  dst:int|None
  name:str

def atomic_row(n:str, sem) -> str:
  """The ATOMIC row of an atomic's name without its segment prefix and _RTN (ADD_U32, SWAP_B32, SUB_CLAMP_U32)."""
  op, _, t = n.rpartition("_")
  row = f"{sem.ATOMIC_ALIASES.get(op, op)}_{t}"
  if row not in sem.ATOMIC: raise Unsupported("not implemented")
  return row

def atomic_data(first:int, row:str, sem) -> tuple[int, ...]:
  """The VGPRs of an atomic's sources after `old`, consecutive from first (pairs for a 64-bit row)."""
  r = sem.ATOMIC[row]
  step = WIDTH[r.dst] // 32
  return tuple(first + i * step for i in range(len(r.srcs) - 1))

# *** lowering, one function per encoding ***

# lowered instructions by (family, encoding class, bits): the kernels of a process share most of their instructions
# (decode._decoded) and lowering one costs ~25 us. A lowering reads the PC only to make a Branch or a Jump (their
# targets, the return address): those are not kept. An op is read, never changed: the backends only read its fields.
_lowered:dict[tuple, object] = {}
MEMO_LIMIT = 1 << 16

def lower(inst:Inst, pc:int, sem) -> object:
  """inst (at byte offset pc) as the description above; sem is the family's semantics table module (a renamed op,
  sem.ALIASES, is lowered under the name of its row). One that raises Unsupported is lowered (and raises) again."""
  if (op:=_lowered.get(key:=(sem, type(inst), inst._raw))) is None:
    op = _lower(inst, pc, sem)
    if len(_lowered) < MEMO_LIMIT and not isinstance(op, (Branch, Jump)): _lowered[key] = op
  return op

def _lower(inst:Inst, pc:int, sem) -> object:
  cls, name = type(inst).__name__, op_name(inst)
  name = sem.ALIASES.get(name, name)
  if sem.GFX9: return _gfx9(inst, name, pc, sem)
  if "DPP" in cls: return _dpp(inst, name, cls, sem)
  base = name[:-len("_E32")] if name.endswith(("_E32", "_E64")) else name  # v_nop_e32, v_pipeflush_e64
  if base in sem.NOT_EXECUTED: raise Unsupported(sem.NOT_EXECUTED[base])
  if (why := unmodelled(cls, name, sem)) is not None: raise Unsupported(f"not modelled: {why}")
  if base in NOOPS or base in sem.NOOPS: return Nop()
  for prefix, fn in _ENCODINGS:
    if cls.startswith(prefix): return fn(inst, name, pc, sem)
  raise Unsupported(f"{cls} encoding is not implemented")

def unmodelled(cls:str, name:str, sem) -> str|None:
  """Why the family's table leaves this instruction unmodelled (sem.UNMODELLED, by encoding or name prefix), or None."""
  table = getattr(sem, "UNMODELLED", {})
  return table.get(cls) or next((why for k, why in table.items() if name.startswith(k)), None)

def _vop1(inst, name, pc, sem, dpp=None, mods=(0, 0)):
  n, lit = strip(name), literal(inst)
  if n in ("READFIRSTLANE_B32", "SWAP_B32", "SWAP_B16") and dpp is not None: raise Unsupported("DPP on this op")
  if n == "READFIRSTLANE_B32": return _readfirstlane(inst, lit)
  if n in getattr(sem, "BYTE_SELECT", ()) and inst.src0.offset < 256 and dpp is None:
    raise Unsupported(f"{describe(inst.src0)} as S0, which the pseudocode reads as a VGPR")
  if n in VMOVREL:
    if dpp is not None: raise Unsupported("DPP on this op")
    return _vmovrel(n, inst.vdst.offset - 256, inst.src0, lit)
  if n == "SWAP_B32": return Swap(inst.src0.offset - 256, inst.vdst.offset - 256)
  if n == "PERMLANE64_B32":
    if dpp is not None: raise Unsupported("DPP on this op")
    return Permlane(inst.vdst.offset - 256, _vgpr(inst.src0, "v_permlane64_b32"), 64)
  if n == "SWAP_B16":  # true16 (errata true16-e32): v[128+n] is the high half of v[n]
    d, (r,), opsel = errata.true16("b16", ("b16",), inst.vdst.offset - 256, [inst.src0])
    if r.offset < 256: raise Unsupported(f"{describe(r)} where v_swap_b16 needs a VGPR")
    return Swap(r.offset - 256, d, (bool(opsel & 1), bool(opsel & 8)))
  return _e32(n, inst.vdst.offset - 256, [inst.src0], lit, sem, dpp, mods)

# VGPR M0-relative moves: name -> (destination M0 field, source M0 field or None for a plain operand, swap)
VMOVREL = {"MOVRELD_B32": (M0_ALL, None, False), "MOVRELS_B32": (None, M0_ALL, False), "MOVRELSD_B32": (M0_ALL, M0_ALL, False),
           "MOVRELSD_2_B32": (M0_DST, M0_SRC, False), "SWAPREL_B32": (M0_DST, M0_SRC, True)}
SMOVREL = {"MOVRELD_B32": (M0_ALL, None), "MOVRELD_B64": (M0_ALL, None), "MOVRELS_B32": (None, M0_ALL),
           "MOVRELS_B64": (None, M0_ALL), "MOVRELSD_2_B32": (M0_DST, M0_SRC)}

def _vmovrel(n:str, d:int, src0:Reg, lit) -> MovRel:
  dst_rel, src_rel, swap = VMOVREL[n]
  name = f"v_{n.lower()}"
  if src_rel is None: return MovRel(name, True, d, dst_rel, Src(src0.offset, lit), None, None, 256)
  if src0.offset < 256: raise Unsupported(f"{INVALID}{describe(src0)} where {name} needs a VGPR (its source is a register index)")
  return MovRel(name, True, d, dst_rel, None, src0.offset - 256, src_rel, 256, swap=swap)

def _smovrel(n:str, d:int, src0:int, lit, sem) -> MovRel:
  """s_movrel*: the indexes reach the SGPR file (sem.SGPRS), not VCC, M0, EXEC or the trap temporaries."""
  dst_rel, src_rel = SMOVREL[n]
  ndw = 2 if n.endswith("_B64") else 1
  if src_rel is None: return MovRel(f"s_{n.lower()}", False, d, dst_rel, Src(src0, lit), None, None, sem.SGPRS, ndw)
  if Src(src0).sgpr is None: raise Unsupported(f"{INVALID}{describe(Reg(src0))} where s_{n.lower()} needs an SGPR (its source is a register index)")
  return MovRel(f"s_{n.lower()}", False, d, dst_rel, None, src0, src_rel, sem.SGPRS, ndw)

def _vgpr(r:Reg, what:str) -> int:
  if r.offset < 256: raise Unsupported(f"{describe(r)} where {what} needs a VGPR")
  return r.offset - 256

def _readfirstlane(inst, lit) -> ReadLane|Salu:
  """v_readfirstlane_b32 (VOP1, or VOP3 without modifiers): a VGPR's first active lane into SGPR vdst; a scalar or
  constant source is a plain move."""
  if inst.src0.offset >= 256: return ReadLane(inst.vdst.offset, inst.src0.offset - 256, None)
  return Salu("MOV_B32", inst.vdst.offset, [Src(inst.src0.offset, lit)])

def _vop2(inst, name, pc, sem, dpp=None, mods=(0, 0)):
  n, lit = strip(name), literal(inst)
  if n == "PK_FMAC_F16":  # packed f16 fma into D: each half of D its half of S0 * S1 + D
    if dpp is not None: raise Unsupported("DPP on this op")
    d, srcs = inst.vdst.offset - 256, [_packed(inst.src0.offset, lit, False), (inst.vsrc1.offset, None), (inst.vdst.offset, None)]
    return Packed("PK_FMA_F16", d, [Src(*r) for r in srcs], [Src(*r, hi=True) for r in srcs])
  if n in ("DOT2ACC_F32_F16", "DOT2ACC_F32_BF16"):
    return _dot2(n, inst.vdst.offset - 256, [inst.src0.offset, inst.vsrc1.offset, inst.vdst.offset], lit, 0, 3, 0, 0, dpp)
  return _e32(n, inst.vdst.offset - 256, [inst.src0, inst.vsrc1], lit, sem, dpp, mods)

def _e32(n:str, dst:int, regs:list, lit, sem, dpp, mods) -> Valu:
  """VOP1/VOP2 e32 (and their DPP forms): 16-bit operands v[128+n] are high halves (errata true16-e32), the
  accumulator of v_fmac_f16 the destination's half, but not under DPP (its src0 is permuted separately)."""
  row = _vop_row(n, sem)
  opsel = 0
  if dpp is None and sem.TRUE16_E32: dst, regs, opsel = errata.true16(row.dst or "b32", row.source_types(), dst, regs)
  neg, abs_ = mods
  srcs = [_src(r.offset, lit, neg, abs_, opsel, i) for i, r in enumerate(regs)]
  return _valu(n, sem, dst, srcs, lit, opsel=opsel, dpp=dpp)

def _vop_row(n:str, sem):
  row = sem.VOP.get(n)
  if row is None: raise Unsupported("not implemented")
  return row

def _src(reg:int, lit, neg:int, abs_:int, opsel:int, i:int, t:str|None=None) -> Src:
  return Src(reg, lit, bool(neg >> i & 1), bool(abs_ >> i & 1), bool(opsel >> i & 1), t)

def _valu(n:str, sem, dst:int, srcs:list[Src], lit, *, opsel=0, omod=0, clamp=False, mask_in=VCC, mask_out=VCC, dpp=None) -> Valu:
  """The generic vector op: accumulators read their destination (the half op_sel bit 3 or a true16 name writes),
  K-literal ops their literal, as the last source."""
  row = _vop_row(n, sem)
  nsrc = len(row.srcs)
  if n in sem.ACCUMULATE: srcs = srcs[:nsrc - 1] + [Src(256 + dst, hi=bool(opsel & 8))]
  if n in sem.LITERAL_K: srcs = srcs[:2] + [Src(LITERAL, lit)]
  if len(srcs) < nsrc: raise Unsupported(f"needs {nsrc} sources")
  return Valu(n, dst, srcs[:nsrc], bool(opsel & 8), omod, clamp, mask_in, mask_out, dpp)

# VINTERP: which quad lane each source reads (None: the lane itself), from the pseudocode: P10 reads S0 from the quad's
# lane 1 and S2 from its lane 0, P2 reads S0 from lane 2
INTERP_QUAD = {"P10": (1, None, 0), "P2": (2, None, None)}

def _vinterp(inst, name, pc, sem):
  """v_interp_p10/p2_{f32,f16_f32,rtz_f16_f32}: an fma whose quad sources are VGPRs read from other lanes of the quad
  (Src.quad); NEG negates source i, op_sel bit i picks a 16-bit source's high half and bit 3 the f16 result's; CLAMP
  clamps; WAIT_EXP (a wait for exports, which a compute dispatch has none of) is a no-op."""
  n = strip(name)
  quads = INTERP_QUAD[n.split("_")[1]]
  srcs = []
  for i, (f, quad) in enumerate(zip((inst.src0, inst.src1, inst.src2), quads)):
    if f.offset == LITERAL: raise Unsupported("a literal in the VINTERP encoding")
    if quad is not None and f.offset < 256: raise Unsupported(f"{describe(f)} as S{i}, which is read from another lane: it must be a VGPR")
    srcs.append(Src(f.offset, None, bool(inst.neg >> i & 1), False, bool(inst.opsel >> i & 1), quad=quad))
  return _valu(n, sem, inst.vdst.offset - 256, srcs, None, opsel=inst.opsel, clamp=bool(inst.clmp), mask_out=None)

def _vop3(inst, name, pc, sem, dpp=None, mods=None):
  n, lit = strip(name), literal(inst)
  regs = [inst.src0.offset, inst.src1.offset, inst.src2.offset]
  if n.startswith("CMP"): return _vcmp(n, regs, lit, inst.vdst.offset, inst.neg, inst.abs, sem, dpp)
  if n.startswith("S_"):  # RDNA4's v_s_exp_f32 etc.: a VALU op on one scalar, its result in an SGPR
    # VOP3's modifiers apply as on any VALU op: neg/abs and op_sel[0] (an f16 source's high half) on S0, omod and clamp
    # on the result (LLVM emits them for pow and normalize); op_sel[3] would pick a half of an SGPR result the
    # pseudocode writes whole (D0[31:16] = 0)
    if dpp is not None or inst.opsel & ~1 or (inst.neg | inst.abs) & ~1: raise Unsupported("modifiers on a scalar-result VALU op")
    op = _salu(n, inst.vdst.offset, [Src(regs[0], lit, bool(inst.neg & 1), bool(inst.abs & 1), bool(inst.opsel & 1))], sem)
    return replace(op, omod=inst.omod, clamp=bool(inst.clmp))
  if n in VMOVREL:
    if inst.neg or inst.abs or inst.omod or inst.clmp or inst.opsel or dpp is not None: raise Unsupported("modifiers on this op")
    return _vmovrel(n, inst.vdst.offset - 256, inst.src0, lit)
  if n in VOP3_WHOLE:
    if inst.neg or inst.abs or inst.omod or inst.clmp or inst.opsel or dpp is not None: raise Unsupported("modifiers on this op")
    if n == "READFIRSTLANE_B32": return _readfirstlane(inst, lit)
  if n in ("DOT2_F16_F16", "DOT2_BF16_BF16"):  # packed S0, S1; op_sel picks S2's half (bit 2) and D's (bit 3)
    if inst.opsel & 3: raise Unsupported("op_sel on the packed sources of a VOP3 dot product")
    if inst.clmp or inst.omod: raise Unsupported("output modifiers on a VOP3 dot product")
    neg, abs_ = inst.neg, inst.abs
    if abs_ & 3: raise Unsupported("abs on the packed sources of a VOP3 dot product")
    op = _dot2(n, inst.vdst.offset - 256, regs, lit, 0, 3, neg & 3, neg & 3, dpp)  # neg negates both halves
    op.srcs[4] = Src(regs[2], lit, bool(neg & 4), bool(abs_ & 4), bool(inst.opsel & 4))
    op.dst_hi = bool(inst.opsel & 8)
    return op
  if n == "MQSAD_U32_U8": regs = regs[:2] + _quad(regs[2])
  if n in ("PERMLANE16_B32", "PERMLANEX16_B32"):
    if inst.neg or inst.abs or inst.omod or inst.clmp or inst.opsel & ~3 or dpp is not None: raise Unsupported("modifiers on this op")
    return Permlane(inst.vdst.offset - 256, _vgpr(inst.src0, n.lower()), 16, Src(inst.src1.offset, lit), Src(inst.src2.offset, lit),
                    n == "PERMLANEX16_B32", bool(inst.opsel & 1), bool(inst.opsel & 2))
  if n in ("PERMLANE16_VAR_B32", "PERMLANEX16_VAR_B32"):   # RDNA4: each lane's select from its own VGPR S1
    if inst.neg or inst.abs or inst.omod or inst.clmp or inst.opsel & ~3 or dpp is not None: raise Unsupported("modifiers on this op")
    return Permlane(inst.vdst.offset - 256, _vgpr(inst.src0, n.lower()), 16, cross=n == "PERMLANEX16_VAR_B32", fi=bool(inst.opsel & 1),
                    bound_ctrl=bool(inst.opsel & 2), sel_vgpr=_vgpr(inst.src1, n.lower()))
  if n == "READLANE_B32":
    if dpp is not None: raise Unsupported("DPP on this op")
    return ReadLane(inst.vdst.offset, inst.src0.offset - 256, Src(inst.src1.offset, lit))
  if n == "WRITELANE_B32":
    if dpp is not None: raise Unsupported("DPP on this op")
    return WriteLane(inst.vdst.offset - 256, Src(inst.src0.offset, lit), Src(inst.src1.offset, lit))
  opsel = inst.opsel
  if n in getattr(sem, "BYTE_SELECT", ()): n, opsel = _byte_select(n, regs[0], opsel, sem)
  srcs = [_src(r, lit, inst.neg, inst.abs, opsel if i < 3 else 0, i) for i, r in enumerate(regs)]
  return _valu(n, sem, inst.vdst.offset - 256, srcs, lit, opsel=opsel, omod=inst.omod, clamp=bool(inst.clmp),
               mask_in=inst.src2.offset if n in CARRY_IN else VCC, dpp=dpp)

def _byte_select(n:str, reg:int, opsel:int, sem) -> tuple[str, int]:
  """RDNA4 v_cvt_f32_fp8/bf8 (VOP3): the row of the byte op_sel[1:0] selects, and the op_sel bits left; the pseudocode
  reads S0 as VGPR[laneId][SRC0], so S0 must be a VGPR."""
  if reg < 256: raise Unsupported(f"{describe(Reg(reg, 1))} as S0, which the pseudocode reads as a VGPR")
  k = sem.OPSEL_BYTE[opsel & 3]
  return (f"{n}_BYTE{k}" if k else n), opsel & ~3

VOP3_WHOLE = ("READFIRSTLANE_B32",)  # VOP1 ops with no semantics row, lowered as in VOP1 when VOP3 adds no modifier

def _quad(reg:int) -> list[int]:
  """v_mqsad_u32_u8's 128-bit S2: four consecutive VGPRs or SGPRs (a constant has no 128-bit form)."""
  if reg < 256 and Src(reg).sgpr is None: raise Unsupported(f"{describe(Reg(reg))} as a 128-bit operand")
  return [reg + j for j in range(4)]

def _vop3sd(inst, name, pc, sem, dpp=None, mods=None):
  n, lit = strip(name), literal(inst)
  srcs = [_src(r.offset, lit, inst.neg, 0, 0, i) for i, r in enumerate((inst.src0, inst.src1, inst.src2))]
  return _valu(n, sem, inst.vdst.offset - 256, srcs, lit, omod=inst.omod, clamp=bool(inst.clmp),
               mask_in=inst.src2.offset if "_CI_" in n else VCC, mask_out=inst.sdst.offset, dpp=dpp)

def _vopc(inst, name, pc, sem, dpp=None, mods=(0, 0)):
  """e32 compares: a 16-bit operand v[128+n] is v[n]'s high half (errata true16-vopc), but not under DPP."""
  n, regs, opsel = strip(name), [inst.src0, inst.vsrc1], 0
  if dpp is None: _, regs, opsel = errata.true16(None, _vop_row(n, sem).source_types(), -1, regs)
  return _vcmp(n, [r.offset for r in regs], literal(inst), VCC, *mods, sem, dpp, opsel)

def _vcmp(n:str, regs:list[int], lit, sdst:int, neg:int, abs_:int, sem, dpp, opsel:int=0) -> Valu:
  """V_CMP writes its lane bits to sdst (VCC in e32), V_CMPX to EXEC. In VOP3, op_sel is ignored (errata
  vop3-cmp16-opsel: the low halves are read); opsel here is the e32 true16 names' selection. The class mask
  (source 1) takes no modifiers."""
  row = _vop_row(n, sem)
  if "_CLASS_" in n: neg, abs_ = neg & 1, abs_ & 1
  srcs = [_src(r, lit, neg, abs_, opsel, i) for i, r in enumerate(regs)]
  return Valu(n, -1, srcs[:len(row.srcs)], mask_out=EXEC if n.startswith("CMPX_") else sdst, dpp=dpp)

def _dot2(n:str, dst:int, regs:list[int], lit, opsel:int, opsel_hi:int, neg:int, neg_hi:int, dpp=None) -> Valu:
  """v_dot2 sources: the low products take op_sel/neg, the high ones op_sel_hi/neg_hi, the addend neg bit 2."""
  a0, b0 = (Src(regs[i], lit, bool(neg >> i & 1), hi=bool(opsel >> i & 1)) for i in (0, 1))
  a1, b1 = (Src(regs[i], lit, bool(neg_hi >> i & 1), hi=bool(opsel_hi >> i & 1)) for i in (0, 1))
  return Valu(n, dst, [a0, b0, a1, b1, Src(regs[2], lit, bool(neg >> 2 & 1))], dpp=dpp)

def _vop3p(inst, name, pc, sem):
  n, lit = strip(name), literal(inst)
  regs = [inst.src0.offset, inst.src1.offset, inst.src2.offset]
  opsel, opsel_hi = inst.opsel, inst.opsel_hi | (inst.opsel_hi2 << 2)
  d = inst.vdst.offset - 256
  if n.startswith("WMMA_"): return _wmma(n, d, regs, inst, sem)
  if n.startswith("SWMMAC_"): return _swmmac(n, d, regs, inst, sem)
  if n.startswith(("DOT4_", "DOT8_")): return _dot_int(n, d, regs, lit, inst, sem)
  if n in ("DOT2_F32_F16", "DOT2_F32_BF16"):
    op = _dot2(n, d, regs, lit, opsel, opsel_hi, inst.neg, inst.neg_hi)
    op.clamp = bool(inst.clmp)
    return op
  if n.startswith("FMA_MIX"):
    srcs = [_src(r, lit, inst.neg, inst.neg_hi, opsel & opsel_hi, i, "f16" if opsel_hi >> i & 1 else "f32")
            for i, r in enumerate(regs)]
    return Valu(n, d, srcs, dst_hi=n == "FMA_MIXHI_F16", clamp=bool(inst.clmp), mask_out=None)
  row = sem.PACKED.get(n)
  if row is None: raise Unsupported("not implemented")
  t, nsrc = row.dst, len(row.srcs)
  if t != "f16" and (inst.neg | inst.neg_hi) & ((1 << nsrc) - 1): raise Unsupported("neg on integer packed math")
  lo = [Src(*_packed(r, lit, t != "f16"), neg=bool(inst.neg >> i & 1), hi=bool(opsel >> i & 1)) for i, r in enumerate(regs[:nsrc])]
  hi = [Src(*_packed(r, lit, t != "f16"), neg=bool(inst.neg_hi >> i & 1), hi=bool(opsel_hi >> i & 1)) for i, r in enumerate(regs[:nsrc])]
  return Packed(n, d, lo, hi, bool(inst.clmp))

def _dot_int(n:str, d:int, regs:list[int], lit, inst, sem) -> Valu:
  """v_dot4/v_dot8 integer dot products over whole 32-bit sources. In the _IU forms NEG bit i makes source i's elements
  signed: the row of that signedness (semantics/rdna3.py DOT_SIGNS); the clamp bit saturates the sum."""
  if inst.opsel: raise Unsupported("op_sel on an integer dot product")
  signs = inst.neg & 3
  if "_IU" not in n and inst.neg: raise Unsupported("neg on an unsigned dot product")
  if inst.neg & 4 or inst.neg_hi: raise Unsupported("neg on the accumulator or neg_hi on an integer dot product")
  row = n + sem.DOT_SIGNS[signs] if "_IU" in n else n
  return _valu(row, sem, d, [Src(r, lit) for r in regs], lit, clamp=bool(inst.clmp), mask_out=None)

def _packed(reg:int, lit, integer:bool) -> tuple[int, int|None]:
  """A packed op's operand: an inline constant becomes the 32 bits hardware reads for it (errata vop3-inline)."""
  bits = const_bits(reg, 16)
  if bits is None: return reg, lit
  return LITERAL, errata.packed_inline(bits, const_bits(reg, 32), reg > 208, integer)

def _wmma(n:str, d:int, regs:list[int], inst, sem) -> Wmma:
  """Matrix multiply-accumulate over the wave: A, B and C/D in the VGPR counts of the family's layout (RDNA3: 8 VGPRs
  of f16/bf16, 4 of iu8 or 2 of iu4 for A and B, 8 for C/D)."""
  if n not in sem.WMMA: raise Unsupported("not implemented")
  kind_in, kind_out, nab, ncd = sem.WMMA[n]
  integer = kind_in in ("iu8", "iu4")
  if not integer and (inst.neg or inst.neg_hi): raise Unsupported("neg modifiers on WMMA")
  if not integer and inst.clmp: raise Unsupported("clamp on a float WMMA")
  if sem.WMMA_LAYOUT != "rdna3" and inst.opsel: raise Unsupported(f"op_sel on an {sem.FAMILY.upper()} WMMA")
  blocks = []
  for r, cnt in zip(regs, (nab, nab, ncd)):
    if not 256 <= r < 512: raise Unsupported("WMMA operands must be VGPRs")
    blocks.append([r - 256 + j for j in range(cnt)])
  return Wmma(n, d, *blocks, kind_in, kind_out, bool(inst.opsel & 4), (bool(inst.neg & 1), bool(inst.neg & 2)),
              bool(inst.clmp), sem.WMMA_LAYOUT, sem.FP8)

def _swmmac(n:str, d:int, regs:list[int], inst, sem) -> Wmma:
  """RDNA4's sparse WMMA: D = A x B + D, A 2:4 structured-sparse, given compressed (src0) with its index VGPR (src2);
  the layout is numpy_runtime.wmma_rdna4's. op_sel bit 0 is the index key of the x32 forms (the x64 form reads the
  whole index VGPR); NEG[1:0] make integer A and B signed, as WMMA's; the other modifiers raise."""
  if n not in getattr(sem, "SWMMAC", {}): raise Unsupported("not implemented")
  kind_in, kind_out, na, nb, ncd = sem.SWMMAC[n]
  integer = kind_in in ("iu8", "iu4")
  if (inst.neg & ~3) or inst.neg_hi or (not integer and (inst.neg or inst.clmp)): raise Unsupported(f"modifiers on {n.lower()}")
  key_bits = 1 if "X32" in n else 0
  if inst.opsel & ~key_bits: raise Unsupported(f"op_sel 0x{inst.opsel:x} on {n.lower()} (bit 0 is the index key of the x32 forms)")
  blocks = []
  for r, cnt in zip((regs[0], regs[1], 256 + d, regs[2]), (na, nb, ncd, 1)):
    if not 256 <= r < 512: raise Unsupported("SWMMAC operands must be VGPRs")
    blocks.append([r - 256 + j for j in range(cnt)])
  return Wmma(n, d, *blocks[:3], kind_in, kind_out, False, (bool(inst.neg & 1), bool(inst.neg & 2)), bool(inst.clmp),
              sem.WMMA_LAYOUT, sem.FP8, blocks[3][0], inst.opsel & key_bits)

def _vopd(inst, name, pc, sem):
  lit = literal(inst)
  halves = []
  for op, s0, s1, vd in ((inst.opx, inst.srcx0, inst.vsrcx1, inst.vdstx), (inst.opy, inst.srcy0, inst.vsrcy1, inst.vdsty)):
    n, d = sem.ALIASES.get(op.name, op.name)[len("V_DUAL_"):], vd.offset - 256
    if n in ("DOT2ACC_F32_F16", "DOT2ACC_F32_BF16"):
      halves.append(_dot2(n, d, [s0.offset, s1.offset, vd.offset], lit, 0, 3, 0, 0))
      continue
    if n not in sem.VOP: raise Unsupported(f"{n.lower()} in VOPD")
    srcs = [Src(s0.offset, lit)] if n == "MOV_B32" else [Src(s0.offset, lit), Src(s1.offset, lit)]
    halves.append(_valu(n, sem, d, srcs, lit, mask_out=None))
  return Dual(*halves)

def _dpp(inst, name:str, cls:str, sem):
  """A VOP with a DPP source: src0 is VGPR vsrc0 read from other lanes; only lanes with a valid source write."""
  if cls.startswith(("VOPD", "VOP3P")): raise Unsupported("DPP on this encoding")
  v0 = inst.vsrc0.offset - 256
  if "DPP16" in cls:
    if not dpp16_valid(inst.dpp) and inst.dpp not in RDNA_BCAST: raise Unsupported(reserved_dpp16(inst.dpp))
    ctrl = NO_SOURCE_DPP if inst.dpp in RDNA_BCAST else inst.dpp
    d = Dpp(v0, ctrl, bool(inst.bc), bool(inst.fi), inst.row_mask, inst.bank_mask)
  else: d = Dpp(v0, None, fetch_inactive=inst.src0.offset == 234, sels=tuple(getattr(inst, f"lane_sel_{k}") for k in range(8)))
  mods = (getattr(inst, "src0_neg", 0) | getattr(inst, "src1_neg", 0) << 1, getattr(inst, "src0_abs", 0) | getattr(inst, "src1_abs", 0) << 1)
  base = {"VOP1": _vop1, "VOP2": _vop2, "VOPC": _vopc, "VOP3": _vop3, "VOP3SD": _vop3sd}[cls.split("_DPP")[0]]
  return base(inst, name, 0, sem, d, mods)

def dpp16_valid(ctrl:int) -> bool:
  """quad_perm (0x00-0xff), row_shl/shr/ror 1-15, row_mirror, row_half_mirror, row_share, row_xmask."""
  return ctrl <= 0xff or 0x101 <= ctrl <= 0x10f or 0x111 <= ctrl <= 0x11f or 0x121 <= ctrl <= 0x12f or \
         ctrl in (0x140, 0x141) or 0x150 <= ctrl <= 0x16f

# GCN's row_bcast15 (0x142) and row_bcast31 (0x143) are not RDNA controls, but RDNA3 hardware executes them (in wave64,
# with BOUND_CTRL the first lane of each row compares true against lane & 15): as a source no lane has, read as 0 with
# BOUND_CTRL and leaving the lane unwritten without it, as a row shift off the row does. Inferred from that example;
# dpp16_lanes reads them as the model's NO_SOURCE_DPP (outside the 9-bit control space).
RDNA_BCAST, NO_SOURCE_DPP = (0x142, 0x143), 0x1000

def reserved_dpp16(ctrl:int) -> str:
  return f"{INVALID}DPP16 control 0x{ctrl:x} is reserved on RDNA (the wave shifts are GCN's)"

def dpp16_lanes(ctrl:int, wave:int) -> tuple[np.ndarray, np.ndarray]:
  """For a DPP16 control word (RDNA's, or GFX9's DPP_CTRL: dpp16_valid / gfx9_dpp_valid say which are defined): each
  lane's source lane and whether that source exists (row shifts fall off a row of 16 lanes; a wave has wave // 16 rows;
  GFX9's wave shifts move one lane across the wave, its row broadcasts feed a row from lane 15 of the row below, or
  rows 2 and 3 from lane 31)."""
  lane = np.arange(wave)
  row, i = lane & ~15, lane & 15
  if ctrl <= 0xff: return (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3), np.ones(wave, bool)
  if ctrl in GFX9_WAVE_DPP: return GFX9_WAVE_DPP[ctrl](lane, row, wave)
  if ctrl == NO_SOURCE_DPP: return lane, np.zeros(wave, bool)
  n = ctrl & 15
  if 0x101 <= ctrl <= 0x10f: src = i + n                       # row_shl: read from n lanes up
  elif 0x111 <= ctrl <= 0x11f: src = i - n                     # row_shr: read from n lanes down
  elif 0x121 <= ctrl <= 0x12f: src = (i - n) & 15              # row_ror
  elif ctrl == 0x140: src = 15 - i                             # row_mirror
  elif ctrl == 0x141: src = (i & 8) | (7 - (i & 7))            # row_half_mirror
  elif 0x150 <= ctrl <= 0x15f: src = np.full(wave, n)          # row_share
  elif 0x160 <= ctrl <= 0x16f: src = i ^ n                     # row_xmask
  else: raise Unsupported(reserved_dpp16(ctrl))
  return row | (src & 15), (src >= 0) & (src <= 15)

# GFX9 DPP_CTRL values that are not row-local: wave_shl1, wave_rol1, wave_shr1, wave_ror1, row_bcast15, row_bcast31
GFX9_WAVE_DPP = {0x130: lambda lane, row, wave: ((lane + 1) % wave, lane + 1 < wave),
                 0x134: lambda lane, row, wave: ((lane + 1) % wave, np.ones(wave, bool)),
                 0x138: lambda lane, row, wave: ((lane - 1) % wave, lane >= 1),
                 0x13c: lambda lane, row, wave: ((lane - 1) % wave, np.ones(wave, bool)),
                 0x142: lambda lane, row, wave: (np.maximum(row - 1, 0), row >= 16),
                 0x143: lambda lane, row, wave: (np.full(wave, 31), lane >= 32)}

def gfx9_dpp_valid(ctrl:int) -> bool:
  """GFX9's DPP_CTRL: quad_perm, row_shl/shr/ror 1-15, the wave shifts and row broadcasts, row_mirror,
  row_half_mirror and (gfx90a+) row_newbcast (RDNA's row_share)."""
  return ctrl <= 0xff or 0x101 <= ctrl <= 0x10f or 0x111 <= ctrl <= 0x11f or 0x121 <= ctrl <= 0x12f or \
         ctrl in GFX9_WAVE_DPP or ctrl in (0x140, 0x141) or 0x150 <= ctrl <= 0x15f

def dpp16_enabled(row_mask:int, bank_mask:int, wave:int) -> np.ndarray:
  """The lanes a DPP16 op may write: its row in ROW_MASK and its bank (4 lanes of a row) in BANK_MASK."""
  lane = np.arange(wave)
  return ((row_mask >> (lane >> 4)) & 1).astype(bool) & ((bank_mask >> ((lane >> 2) & 3)) & 1).astype(bool)

def dpp8_lanes(sels, wave:int) -> np.ndarray:
  """DPP8: lane i reads lane (i & ~7) | sels[i & 7]."""
  lane = np.arange(wave)
  return (lane & ~7) | np.asarray(sels)[lane & 7]

def permlane16_lanes(selects, cross:bool, wave:int) -> np.ndarray:
  """v_permlane16/x16 (and the _var forms): each lane's source lane, given each lane's 4-bit select ([..., wave]; the
  _var forms' VGPR, bits 3:0, or permlane16_selects of the SGPR pair). Lane i of row r (16 lanes) reads lane select_i of
  row r, or with cross (x16) of row r ^ 1 (0<->1, 2<->3)."""
  lane = np.arange(wave)
  return (((lane >> 4) ^ int(cross)) << 4) + (np.asarray(selects).astype(np.int64) & 15)

def permlane16_nibble(wave:int) -> np.ndarray:
  """Which nibble of the 64-bit select {sel_hi, sel_lo} each lane of v_permlane16/x16 reads (lane i of a row: nibble i)."""
  return np.arange(wave) & 15

def permlane16_selects(sel64, wave:int) -> np.ndarray:
  """Each lane's select from the 64-bit {sel_hi, sel_lo} (an int, or an array [n] -> [n, wave])."""
  shift = (4 * permlane16_nibble(wave)).astype(np.uint64)
  return ((np.asarray(sel64, np.uint64)[..., None] >> shift) & np.uint64(15)).astype(np.int64)

def permlane16_table(cross:bool, wave:int) -> np.ndarray:
  """permlane16_lanes for every select value, [16, wave]: row n holds the source lanes when every lane selects n (the
  C backend bakes it and indexes it by each lane's select)."""
  return permlane16_lanes(np.repeat(np.arange(16)[:, None], wave, 1), cross, wave)

def permlane64_lanes(wave:int) -> np.ndarray|None:
  """v_permlane64_b32: lane i reads lane i ^ 32 (0<->32, ..., 31<->63) of a wave64, active or not; None in wave32
  (the op is a NOP there)."""
  return np.arange(wave) ^ (WAVE64 // 2) if wave == WAVE64 else None

# *** scalar ***

def _sop1(inst, name, pc, sem):
  n, lit, d = strip(name), literal(inst), inst.sdst.offset
  if n in ("SETPC_B64", "SWAPPC_B64"):
    return Jump(f"s_{n.lower()}", Src(inst.ssrc0.offset, lit), d if n == "SWAPPC_B64" else None, pc + inst.size())
  if n in SMOVREL: return _smovrel(n, d, inst.ssrc0.offset, lit, sem)
  if name == "S_BARRIER_SIGNAL":  # the wait (s_barrier_wait) does the work: a signalled wave still holds the others
    if inst.ssrc0.offset != INLINE_MINUS_ONE:
      raise Unsupported("a barrier ID other than the workgroup barrier -1 (named barriers are not modelled)")
    return Nop()
  return _salu(n, d, [Src(inst.ssrc0.offset, lit, hi=n in sem.HIGH_HALF)] if n != "GETPC_B64" else [], sem)

def _salu(n:str, d:int, srcs:list[Src], sem) -> Salu:
  if n not in sem.SOP: raise Unsupported("not implemented")
  return Salu(n, d, srcs)

def _sop2(inst, name, pc, sem):
  n, lit = strip(name), literal(inst)
  k = [Src(LITERAL, lit)] if n in sem.LITERAL_K else []  # s_fmaak/s_fmamk: the literal K is a third source
  return _salu(n, inst.sdst.offset, [Src(inst.ssrc0.offset, lit), Src(inst.ssrc1.offset, lit), *k], sem)

def _sopc(inst, name, pc, sem):
  lit = literal(inst)
  return _salu(strip(name), NULL, [Src(inst.ssrc0.offset, lit), Src(inst.ssrc1.offset, lit)], sem)

def _sopk(inst, name, pc, sem):
  """The 16-bit immediate as a literal source: sign-extended, but zero-extended for the unsigned compares."""
  n, d, k = strip(name), inst.sdst.offset, inst.simm16
  imm = Src(LITERAL, k if n.endswith("_U32") else signed(k, 16) & 0xffffffff)
  if n.startswith("CMPK_"): return _salu(n, NULL, [Src(d), imm], sem)
  if n in ("MOVK_I32", "CMOVK_I32", "ADDK_I32", "MULK_I32"): return _salu(n, d, [imm], sem)
  if n == "GETREG_B32": return Mode(*_hwreg(k), dst=d)
  if n == "SETREG_B32": return Mode(*_hwreg(k), value=Src(d))  # SDST names the source SGPR
  if n == "SETREG_IMM32_B32": return Mode(*_hwreg(k), value=Src(LITERAL, literal(inst)))
  if n == "CALL_B64": return Jump("s_call_b64", None, d, pc + 4, branch_target(pc, inst))
  raise Unsupported("not implemented")

def _sopp(inst, name, pc, sem):
  """RDNA4 splits s_barrier into s_barrier_signal -1 and s_barrier_wait -1: a wave waits at s_barrier_wait until every
  live wave of its workgroup is at one; named barriers (IDs 1..16) are not modelled."""
  if name == "S_ENDPGM": return End()
  if name == "S_BARRIER": return Barrier()
  if name == "S_BARRIER_WAIT":
    if (bid := signed(inst.simm16, 16)) != -1: raise Unsupported(f"named barrier {bid} (only the workgroup barrier -1 is modelled)")
    return Barrier()
  if name == "S_SENDMSG":
    if inst.simm16 & 0xff == MSG_DEALLOC_VGPRS: return Nop()
    raise Unsupported(f"message {inst.simm16:#x}")
  if name in BRANCHES: return Branch(BRANCH_CONDS[name], branch_target(pc, inst), pc + 4)
  if name == "S_TRAP": return Trap(inst.simm16 & ((1 << sem.TRAP_ID_BITS) - 1))
  if name == "S_ROUND_MODE": return Mode(0, 4, value=Src(LITERAL, inst.simm16 & 15))
  if name == "S_DENORM_MODE": return Mode(4, 4, value=Src(LITERAL, inst.simm16 & 15))
  raise Unsupported("not implemented")

# *** memory ***

def _smem(inst, name, pc, sem):
  n = strip(name)
  kind = sem.SMEM_KINDS.get(n, "u32")
  if not n.startswith("LOAD_B") and n not in sem.SMEM_KINDS: raise Unsupported("not implemented")
  soff = None if inst.soffset.offset == NULL else Src(inst.soffset.offset)
  ndw = 1 if kind != "u32" else int(n[len("LOAD_B"):]) // 32
  return Smem(inst.sdata.offset, ndw, inst.sbase.offset, imm_offset(inst), soff, name.lower(), kind)

MEM_KINDS = {"U8": "u8", "I8": "i8", "U16": "u16", "I16": "i16", "B8": "u8", "B16": "u16"}

def mem_common(n:str) -> tuple[bool, str, int, str|None]:
  """(is_load, element kind, dword count, d16 half) from a memory op's name without its segment prefix."""
  op, _, size = n.rpartition("_")
  d16 = "hi" if "D16_HI" in op else ("lo" if "D16" in op else None)
  if size in MEM_KINDS: return op.startswith("LOAD"), MEM_KINDS[size], 1, d16
  if size in ("B32", "B64", "B96", "B128"): return op.startswith("LOAD"), "u32", int(size[1:]) // 32, d16
  raise Unsupported("not implemented")

def _field(inst, rdna3:str, rdna4:str):
  """A memory encoding's field by its RDNA3 name, or by its RDNA4 one (VGLOBAL/VSCRATCH/VFLAT say vaddr for addr,
  vsrc for data)."""
  return getattr(inst, rdna4 if any(n == rdna4 for n, _ in type(inst)._fields) else rdna3)

def _vmem(inst, name:str, seg:str, addr:Addr, sem):
  n = strip(name)[len(seg) + 1:]
  if n.startswith("ATOMIC_"): return _vatomic(inst, name, seg, addr, n[len("ATOMIC_"):], sem)
  if "LDS" in n: raise Unsupported("not implemented")
  if "ADDTID" in n:  # SGPR_ADDR + INST_OFFSET + laneID * 4: no VGPR address
    if seg != "GLOBAL" or addr.sbase is None: raise Unsupported(f"{n} needs the GLOBAL encoding with an SGPR base (saddr)")
    addr, n = Addr(None, False, sbase=addr.sbase, offset=addr.offset, addtid=True), n.replace("_ADDTID", "")
  load, kind, ndw, d16 = mem_common(n)
  return Vmem(seg, load, kind, ndw, d16, (inst.vdst if load else _field(inst, "data", "vsrc")).offset - 256, addr, name.lower())

def _vatomic(inst, name:str, seg:str, addr:Addr, n:str, sem) -> VAtomic:
  """GLC (RDNA4: TH bit 0, TH_ATOMIC_RETURN) asks for the old value."""
  row = atomic_row(n, sem)
  rtn = bool(inst.th & 1) if hasattr(inst, "th") else bool(inst.glc)
  data = atomic_data(_field(inst, "data", "vsrc").offset - 256, row, sem)
  return VAtomic(seg, addr, row, WIDTH[sem.ATOMIC[row].dst], data, inst.vdst.offset - 256 if rtn else None, name.lower())

def _global(inst, name, pc, sem):
  off, v = imm_offset(inst), _field(inst, "addr", "vaddr").offset - 256
  if inst.saddr.offset == NULL: return _vmem(inst, name, "GLOBAL", Addr(v, True, offset=off), sem)
  return _vmem(inst, name, "GLOBAL", Addr(v, False, sbase=inst.saddr.offset, offset=off), sem)

def _flat(inst, name, pc, sem):
  """FLAT addresses are treated as global ones: the LDS and private apertures are not modelled."""
  if (off := imm_offset(inst)) < 0: raise Unsupported("negative FLAT offset")
  if inst.saddr.offset != NULL: raise Unsupported("an SGPR base on a FLAT-segment access")
  return _vmem(inst, name, "FLAT", Addr(_field(inst, "addr", "vaddr").offset - 256, True, offset=off), sem)

def _scratch(inst, name, pc, sem):
  soff = None if inst.saddr.offset == NULL else Src(inst.saddr.offset)
  addr = Addr(_field(inst, "addr", "vaddr").offset - 256 if inst.sve else None, False, soff=soff, offset=imm_offset(inst))
  return _vmem(inst, name, "SCRATCH", addr, sem)

def _mubuf(inst, name, pc, sem):
  """Raw buffer loads, stores and atomics through the V# (buffer.py); the cache invalidations are no-ops (the mock has
  no caches)."""
  n = strip(name)[len("BUFFER_"):]
  if n in ("GL0_INV", "GL1_INV"): return Nop()
  if "FORMAT" in n: raise Unsupported("not modelled: the format conversions of the V#'s FORMAT field (raw loads and stores are)")
  if "LDS" in n: raise Unsupported("not modelled: loads into LDS (M0-addressed LDS DMA)")
  if inst.tfe: raise Unsupported("not modelled: TFE (the texture-fail status VGPR)")
  srsrc, offset, rtn = _buffer_fields(inst)
  addr = BufAddr(srsrc, inst.vaddr.offset - 256, bool(inst.idxen), bool(inst.offen), Src(inst.soffset.offset), offset)
  vdata = inst.vdata.offset - 256
  if n.startswith("ATOMIC_"):
    row = atomic_row(n[len("ATOMIC_"):], sem)
    return VAtomic("BUFFER", addr, row, WIDTH[sem.ATOMIC[row].dst], atomic_data(vdata, row, sem), vdata if rtn else None, name.lower())
  load, kind, ndw, d16 = mem_common(n)
  return Vmem("BUFFER", load, kind, ndw, d16, vdata, addr, name.lower())

V_SHARP_SGPRS = (range(0, 103, 4), range(108, 121, 4))  # s0..s103 and ttmp0..ttmp15, four at a time

def _buffer_fields(inst) -> tuple[int, int, bool]:
  """(the V#'s first SGPR, the immediate offset, whether an atomic returns the old value) of an RDNA3 MUBUF or an
  RDNA4 VBUFFER word. VBUFFER's RSRC holds the SGPR's operand number (9 bits; MUBUF's SRSRC its index / 4), its
  IOFFSET is 24 bits, and TH bit 0 (TH_ATOMIC_RETURN) is MUBUF's GLC."""
  if not hasattr(inst, "rsrc"): return inst.srsrc.offset, inst.offset, bool(inst.glc)
  if not any(inst.rsrc in r for r in V_SHARP_SGPRS):
    raise Unsupported(f"{INVALID}RSRC {inst.rsrc} does not name four aligned SGPRs (s0..s103 or ttmp0..ttmp15 by fours)")
  if inst.ioffset >> 23: raise Unsupported(f"a negative buffer offset (IOFFSET 0x{inst.ioffset:06x}, bit 23 set) is not modelled")
  return inst.rsrc, inst.ioffset, bool(inst.th & 1)

def _ds(inst, name, pc, sem):
  n = strip(name)[3:] if name.startswith("DS_") else strip(name)
  a, off, nm = inst.addr.offset - 256, inst.offset0 | (inst.offset1 << 8), name.lower()
  if "2ADDR" in n:
    ndw = 2 if n.endswith("B64") else 1
    scale = (8 if ndw == 2 else 4) * (64 if "STRIDE64" in n else 1)
    offs = (inst.offset0 * scale, inst.offset1 * scale)
    if n.startswith("STOREXCHG"):  # each lane exchanges DATA at the first address and DATA2 at the second
      row = f"STOREXCHG_B{32 * ndw}"
      return DsAtomic(a, 0, offs, ((inst.data0.offset - 256,), (inst.data1.offset - 256,)), row, 32 * ndw, inst.vdst.offset - 256, nm)
    if n.startswith("LOAD"): return DsPair(True, a, offs, ndw, (inst.vdst.offset - 256, inst.vdst.offset - 256 + ndw), nm)
    return DsPair(False, a, offs, ndw, (inst.data0.offset - 256, inst.data1.offset - 256), nm)
  if n in ("BPERMUTE_B32", "PERMUTE_B32"):
    return DsPermute(n == "BPERMUTE_B32", a, off, inst.data0.offset - 256, inst.vdst.offset - 256)
  if n == "SWIZZLE_B32": return DsSwizzle(inst.data0.offset - 256, inst.vdst.offset - 256, off)
  if n in ("LOAD_ADDTID_B32", "STORE_ADDTID_B32"):  # MEM[{OFFSET1, OFFSET0} + M0[15:0] + laneID * 4]
    if n.startswith("LOAD"): return DsLoad(None, off, "u32", 1, None, inst.vdst.offset - 256, nm)
    return DsStore(None, off, "u32", 1, None, inst.data0.offset - 256, nm)
  if n.startswith(("LOAD", "STORE")) and "XCHG" not in n:
    if "_D16" in n:  # DS names put D16 last (LOAD_U8_D16_HI): reorder to the VMEM form (LOAD_D16_HI_U8)
      op, size, *d16 = n.split("_")
      n = "_".join([op, *d16, size])
    load, kind, ndw, d16 = mem_common(n)
    if load: return DsLoad(a, off, kind, ndw, d16, inst.vdst.offset - 256, nm)
    return DsStore(a, off, kind, ndw, d16, inst.data0.offset - 256, nm)
  dst = inst.vdst.offset - 256 if "_RTN" in n else None
  if n == "CONDXCHG32_RTN_B64":  # two 32-bit exchanges, each taking its half of DATA when that half's bit 31 is set
    d = inst.data0.offset - 256
    return DsAtomic(a, off, (0, 4), ((d,), (d + 1,)), "CONDXCHG32_B32", 32, dst, nm, mask=0xfff8)
  row = atomic_row(n.replace("_RTN", ""), sem)
  r = sem.ATOMIC[row]
  data = (inst.data0.offset - 256, inst.data1.offset - 256)[:len(r.srcs) - 1]
  return DsAtomic(a, off, (0,), (data,), row, WIDTH[r.dst], dst, nm)

def swizzle_lanes(offset:int, wave:int) -> np.ndarray:
  """The lane each lane reads in ds_swizzle_b32 with this 16-bit offset, as the RDNA3 manual's pseudocode gives it
  (tinygrad's copy stops after the FFT case): FFT (offset >= 0xe000), rotate (>= 0xc000), the quad permute (bit 15)
  and the and/or/xor bit mask (bit 15 clear); each stays within its group of 32 lanes. The rotate's
  (i + rotate) & ~mask is taken within the 5 lane bits (the manual's ~mask has no width)."""
  out = []
  for i in range(wave):
    lo, group = i & 0x1f, i & 0x20
    if offset >= 0xe000:
      mask = offset & 0x1f
      j = (int(f"{lo:05b}"[::-1], 2) >> bin(mask).count("1")) | (lo & mask)
    elif offset >= 0xc000:
      mask, rot = offset & 0x1f, (offset >> 5) & 0x1f
      rot = -rot if offset >> 10 & 1 else rot
      j = (lo & mask) | ((lo + rot) & ~mask & 0x1f)
    elif offset & 0x8000: j = (lo & ~3) | (offset >> (2 * (lo & 3)) & 3)
    else: j = (((lo & offset) & 0x1f) | (offset >> 5 & 0x1f)) ^ (offset >> 10 & 0x1f)
    out.append(j | group)
  return np.array(out, np.int64)

_ENCODINGS = (("SOPP", _sopp), ("SOPK", _sopk), ("SOPC", _sopc), ("SOP1", _sop1), ("SOP2", _sop2), ("SMEM", _smem),
              ("VOPD", _vopd), ("VOP3P", _vop3p), ("VOPC", _vopc), ("VOP3SD", _vop3sd), ("VOP3", _vop3),
              ("VOP1", _vop1), ("VOP2", _vop2), ("DS", _ds), ("GLOBAL", _global), ("FLAT", _flat), ("SCRATCH", _scratch),
              ("MUBUF", _mubuf), ("VBUFFER", _mubuf), ("VINTERP", _vinterp), ("VGLOBAL", _global), ("VFLAT", _flat), ("VSCRATCH", _scratch))

def failure(inst:Inst, why:str) -> str:
  """The message of an instruction that cannot run: an invalid one names its bytes as well."""
  if why.startswith(INVALID): return f"{INVALID}{op_name(inst).lower()} (bytes {inst.to_bytes().hex()}): {why[len(INVALID):]}"
  return f"{op_name(inst).lower()}: {why}"

# *** GFX9 (CDNA3/CDNA4): lower() sends every word of a GFX9 family here (semantics GFX9). Each encoding is renumbered
# into the model (GFX9's M0 is 124, the model's 125; a FLAT-family SADDR of 0x7f is "off") and lowered by the gfx11
# function where the encodings agree, by its own where they differ: SDWA, GFX9 DPP, SMEM offsets, FLAT offsets, the ACC
# bits (AGPRs), v_cmpx (writes EXEC and SDST), packed f32, v_accvgpr_*, v_bitop3 and MFMA. ***

AGPR = 512                # the register index of a0 in every backend's register file (after v0..v255 and a gap)
AGPR_SRC = 256 + AGPR     # a[n] as an operand number (Src.reg; Src.vgpr is then AGPR + n)
GFX9_M0, GFX9_SADDR_OFF = 124, 0x7f
GFX9_RESERVED = frozenset({125}) | frozenset(range(209, 235))
GFX9_UNMODELLED = {102: "FLAT_SCRATCH_LO", 103: "FLAT_SCRATCH_HI", 104: "XNACK_MASK_LO", 105: "XNACK_MASK_HI"}
SDWA_DWORD = 6            # SDWA SRC_SEL/DST_SEL: 0-3 bytes, 4-5 words, 6 the whole dword; 7 is reserved
SDWA_PRESERVE = 2         # DST_UNUSED: 0 pad with zeros, 1 sign-extend, 2 keep the old bits

def _gfx9(inst, name:str, pc:int, sem):
  cls = type(inst).__name__
  if name in NOOPS or name in sem.NOOPS: return Nop()
  base = cls.removesuffix("_LIT")
  fn = _GFX9_ENCODINGS.get(base)
  if fn is None: raise Unsupported(f"{cls} encoding is not implemented")
  return fn(_renumbered(inst), name, pc, sem)

def gfx9_reg(o:int, field:str="") -> int:
  """A GFX9 scalar operand encoding in the model's numbering."""
  if o in GFX9_RESERVED: raise Unsupported(f"{INVALID}operand encoding {o} is reserved on CDNA")
  if o in GFX9_UNMODELLED: raise Unsupported(f"{GFX9_UNMODELLED[o]} is not modelled")
  if field == "saddr" and o == GFX9_SADDR_OFF: return NULL
  return M0 if o == GFX9_M0 else o

def _renumbered(inst):
  """inst with every scalar operand field (not the VGPR fields, not SMEM's, which _smem9 reads) renumbered."""
  if type(inst).__name__ == "SMEM": return inst
  raw = int.from_bytes(inst.to_bytes(), "little")
  for name, f in type(inst)._fields:
    if not isinstance(f, SrcField) or isinstance(f, VGPRField): continue
    o = (raw >> f.lo) & f.mask
    if o >= 235: continue  # the aperture registers, constants, SDWA/DPP markers and VGPRs: as they are
    raw = (raw & ~(f.mask << f.lo)) | (gfx9_reg(o, name) << f.lo)
  return type(inst).from_bytes(raw.to_bytes(inst.size(), "little"))

def _sopp9(inst, name, pc, sem):
  """gfx11's SOPP but s_sendmsg: GFX9 has no dealloc-VGPRs message and no message a compute kernel's result needs."""
  if name == "S_SENDMSG": raise Unsupported(f"message {inst.simm16:#x}")
  return _sopp(inst, name, pc, sem)

def _smem9(inst, name, pc, sem):
  """s_load_dword*: the SGPR pair's base (VCC too, s[106:107]) plus, by IMM/SOFFSET_EN, the SGPR OFFSET[6:0] names (0/0), the 21-bit signed
  OFFSET (1/0), the SGPR SOFFSET names (0/1), or both (1/1)."""
  n = strip(name)
  if not n.startswith("LOAD_B"): raise Unsupported("not implemented")
  if inst.sbase.offset >= 102 and inst.sbase.offset != VCC: raise Unsupported(f"{INVALID}s[{inst.sbase.offset}] is not an SGPR pair base")
  if inst.soffset_en: soff = Src(gfx9_reg(inst.soffset.offset))
  elif not inst.imm: soff = Src(gfx9_reg(inst.offset & 0x7f))
  else: soff = None
  off = signed(inst.offset, 21) if inst.imm else 0
  return Smem(gfx9_reg(inst.sdata.offset), int(n[len("LOAD_B"):]) // 32, inst.sbase.offset, off, soff, op_name(inst).lower())

def _cmpx9(op:Valu, sdst:int) -> Valu:
  """GFX9's V_CMPX writes its lane mask to EXEC and to its SDST (VCC in e32)."""
  if op.row.startswith("CMPX_"): op.mask_copy = sdst
  return op

def _vop1_9(inst, name, pc, sem, dpp=None, mods=(0, 0)):
  n = strip(name)
  if n in ("ACCVGPR_MOV_B32", "READFIRSTLANE_B32") and dpp is not None: raise Unsupported("DPP on this op")
  if n == "ACCVGPR_MOV_B32":
    return Valu("ACCVGPR_MOV_B32", AGPR + inst.vdst.offset - 256, [Src(_agpr_src(inst.src0.offset))], mask_out=None)
  if n == "READFIRSTLANE_B32": return _readlane9(inst, None)
  return _vop1(inst, name, pc, sem, dpp, mods)

def _readlane9(inst, lane:Src|None):
  """v_readfirstlane_b32 (lane None) / v_readlane_b32: tinygrad's cdna tables give their SGPR destination a VGPR field,
  so the encoded number is vdst - 256, in GFX9's scalar numbering."""
  dst, src = gfx9_reg(inst.vdst.offset - 256), inst.src0.offset
  if src < 256:
    if lane is not None: raise Unsupported(f"{INVALID}v_readlane_b32 needs a VGPR source")
    return Salu("MOV_B32", dst, [Src(src, literal(inst))])
  return ReadLane(dst, src - 256, lane)

def _vopc9(inst, name, pc, sem):
  return _cmpx9(_vopc(inst, name, pc, sem), VCC)

def _vop3_9(inst, name, pc, sem):
  n = strip(name)
  if n.startswith("BITOP3_"): return _bitop3(inst, n, sem)
  if n in ("READLANE_B32", "READFIRSTLANE_B32"):
    if inst.neg or inst.abs or inst.omod or inst.clmp or inst.opsel: raise Unsupported("modifiers on a lane read")
    return _readlane9(inst, Src(inst.src1.offset, literal(inst)) if n == "READLANE_B32" else None)
  return _cmpx9(_vop3(inst, name, pc, sem), inst.vdst.offset) if n.startswith("CMP") else _vop3(inst, name, pc, sem)

def _bitop3(inst, n:str, sem) -> Valu:
  """v_bitop3 (gfx950): the truth table sits in the OMOD/ABS/NEG fields, so the op has no modifiers; it is the row's
  fourth (constant) source."""
  if inst.clmp or inst.opsel: raise Unsupported("clamp or op_sel on v_bitop3")
  srcs = [Src(r.offset) for r in (inst.src0, inst.src1, inst.src2)] + [Src(LITERAL, bitop3_table(inst))]
  return _valu(n, sem, inst.vdst.offset - 256, srcs, None)

def _agpr_src(o:int) -> int:
  if not 256 <= o < 512: raise Unsupported(f"{INVALID}operand encoding {o} where an AGPR is required")
  return o - 256 + AGPR_SRC

def _vop3p9(inst, name, pc, sem):
  """GFX9 VOP3P: packed 16-bit and mix ops as gfx11's; v_accvgpr_read/write, packed f32 and v_pk_mov_b32 here."""
  n = strip(name)
  if n in ("ACCVGPR_READ", "ACCVGPR_WRITE"):
    if inst.neg or inst.neg_hi or inst.clmp or inst.opsel: raise Unsupported("modifiers on v_accvgpr_*")
    if n == "ACCVGPR_READ": return Valu(n, inst.vdst.offset - 256, [Src(_agpr_src(inst.src0.offset))], mask_out=None)
    return Valu(n, AGPR + inst.vdst.offset - 256, [Src(inst.src0.offset, literal(inst))], mask_out=None)
  if n in sem.PACKED_F32: return _pk_f32(inst, sem.PACKED_F32[n], sem)
  if n == "PK_MOV_B32": return _pk_mov_b32(inst)
  if n.startswith("DOT"): raise Unsupported("not implemented")
  return _vop3p(inst, name, pc, sem)

def _pair_half(o:int, hi:int) -> int:
  """The register holding half `hi` of the 64-bit register pair operand o (a VGPR or SGPR pair). An inline constant is
  its 32-bit value in the low half; which value the high half of a constant reads (the constant again, or the high
  word of its 64-bit form) is not modelled, except for the constant 0, whose high half is 0 either way (LLVM passes
  it for bfloat16 negation)."""
  if 128 <= o <= 248 and o not in GFX9_RESERVED:
    if hi and o != 128: raise Unsupported(f"the high half of constant operand {describe(Reg(o))} of a packed 32-bit op")
    return o
  if not (o < 106 or o in (VCC, EXEC) or 108 <= o < 124 or 256 <= o < 512):
    raise Unsupported(f"operand {describe(Reg(o))} of a packed 32-bit op (only register pairs and constants are modelled)")
  return o + hi

def _pk_f32(inst, row:str, sem) -> Dual:
  """v_pk_{add,mul,fma}_f32: the low result from the halves op_sel picks (neg), the high one from those op_sel_hi
  picks (neg_hi); both read before either writes."""
  regs = [inst.src0.offset, inst.src1.offset, inst.src2.offset][:len(sem.VOP[row].srcs)]
  d, opsel_hi = inst.vdst.offset - 256, inst.opsel_hi | inst.opsel_hi2 << 2
  halves = [Valu(row, d + k, [Src(_pair_half(r, sel >> i & 1), neg=bool(negs >> i & 1)) for i, r in enumerate(regs)],
                 clamp=bool(inst.clmp), mask_out=None) for k, (sel, negs) in enumerate(((inst.opsel, inst.neg), (opsel_hi, inst.neg_hi)))]
  return Dual(*halves)

def _pk_mov_b32(inst) -> Dual:
  """v_pk_mov_b32: the low dword from S0's half op_sel[0] picks, the high dword from S1's half op_sel[1] picks."""
  if inst.neg or inst.neg_hi or inst.clmp: raise Unsupported("modifiers on v_pk_mov_b32")
  d = inst.vdst.offset - 256
  return Dual(Valu("MOV_B32", d, [Src(_pair_half(inst.src0.offset, inst.opsel & 1))], mask_out=None),
              Valu("MOV_B32", d + 1, [Src(_pair_half(inst.src1.offset, inst.opsel >> 1 & 1))], mask_out=None))

def _mfma(inst, name, pc, sem) -> Mfma:
  """v_mfma_*: A, B from VGPRs or AGPRs (ACC bits 0, 1), C and D from AGPRs with ACC_CD; C may be an inline constant.
  The broadcast controls (CBSZ, ABID, BLGP) and f64's NEG are not modelled."""
  if name not in sem.MFMA: raise Unsupported("not implemented")
  # VOP3P's NEG_HI, OP_SEL and NEG bits are CBSZ, ABID and BLGP here; its CLAMP bit is ACC_CD
  if inst.cbsz or inst.abid or inst.blgp: raise Unsupported("CBSZ/ABID/BLGP broadcasts (f64: NEG) on MFMA are not modelled")
  shape = MFMAShape.parse(name)
  def regs(o:int, count:int, acc:bool, what:str) -> list[int]:
    if not 256 <= o <= 512 - count: raise Unsupported(f"{INVALID}MFMA {what} must be {count} VGPRs or AGPRs")
    return [(AGPR if acc else 0) + o - 256 + j for j in range(count)]
  a = regs(inst.src0.offset, shape.in_regs(shape.a), inst.acc & 1, "A")
  b = regs(inst.src1.offset, shape.in_regs(shape.b), inst.acc >> 1 & 1, "B")
  d = regs(inst.vdst.offset, shape.out_regs, inst.acc_cd, "D")
  if inst.src2.offset >= 256: c, c_bits = regs(inst.src2.offset, shape.out_regs, inst.acc_cd, "C"), 0
  else:
    width = 64 if shape.out == "F64" else 32
    c, c_bits = None, Src(inst.src2.offset).bits(width, "f64" if width == 64 else shape.out.lower())
    if c_bits is None: raise Unsupported("an SGPR as MFMA's C (only registers and inline constants are modelled)")
  return Mfma(op_name(inst).lower(), d, a, b, c, c_bits, sem.FP8)

ACC_FIELDS = ("dst", "data", "reg", "regs")  # the fields of the memory ops that name data or destination VGPRs

def _acc(op, inst):
  """A memory op under its CDNA name, its data or destination registers AGPRs when the ACC bit is set."""
  changes = {"name": op_name(inst).lower()} if hasattr(op, "name") else {}
  for k in ACC_FIELDS if inst.acc else ():
    v = getattr(op, k, None)
    if v is not None: changes[k] = tuple(x + AGPR for x in v) if isinstance(v, tuple) else v + AGPR
  return replace(op, **changes)

def _ds9(inst, name, pc, sem):
  if inst.gds: raise Unsupported("GDS is not modelled")
  return _acc(_ds(inst, name, pc, sem), inst)

def _saddr9(inst):
  s = inst.saddr.offset
  # GFX9 addresses VCC as an SGPR pair there (LLVM allocates it as one: s_load_dwordx16 s[..], vcc, global_store_dword .., vcc)
  if s != NULL and s != VCC and (s >= 102 or s & 1): raise Unsupported(f"{INVALID}SADDR {describe(Reg(s))} is not an SGPR pair or off")
  if inst.sve and type(inst).__name__ != "SCRATCH": raise Unsupported(f"{INVALID}SVE set on a {type(inst).__name__} access")

def _global9(inst, name, pc, sem):
  _saddr9(inst)
  return _acc(_global(inst, name, pc, sem), inst)

def _flat9(inst, name, pc, sem):
  """FLAT on gfx940: a 12-bit unsigned offset, no SGPR base; addressed as global (the apertures are not modelled)."""
  _saddr9(inst)
  if inst.saddr.offset != NULL: raise Unsupported("an SGPR base on a FLAT-segment access")
  return _acc(_vmem(inst, name, "FLAT", Addr(inst.addr.offset - 256, True, offset=flat_offset("FLAT", inst.offset))), inst)

def _scratch9(inst, name, pc, sem):
  _saddr9(inst)
  return _acc(_scratch(inst, name, pc, sem), inst)

def _sdwa_src(o:int, as_sgpr:int, sel:int, sext:int, neg:int, abs_:int) -> Src:
  """An SDWA source: VGPR field o (256 + n), or the scalar operand n when the S bit is set; its byte or word."""
  if sel > SDWA_DWORD: raise Unsupported(f"{INVALID}SDWA select {sel} is reserved")
  reg = gfx9_reg(o - 256) if as_sgpr else o
  return Src(reg, None, bool(neg), bool(abs_), sdwa=None if sel == SDWA_DWORD and not sext else (sel, bool(sext)))

def _sdwa(inst, name, pc, sem):
  """VOP1/VOP2/VOPC with SDWA: each source a byte or word of its register (SRC_SEL, SEXT); a VOP1/VOP2 result goes
  to the byte or word DST_SEL names (DST_UNUSED: the other bits zero, sign-extended, or kept)."""
  n, cls = strip(name), type(inst).__name__
  srcs = [_sdwa_src(inst.vsrc0.offset, inst.s0, inst.src0_sel, inst.src0_sext, inst.src0_neg, inst.src0_abs)]
  if not cls.startswith("VOP1"):
    srcs.append(_sdwa_src(inst.vsrc1.offset, inst.s1, inst.src1_sel, inst.src1_sext, inst.src1_neg, inst.src1_abs))
  row = _vop_row(n, sem)
  if any(WIDTH[t] == 64 for t in row.source_types()) or (row.dst and WIDTH[row.dst] == 64): raise Unsupported("SDWA on a 64-bit op")
  if cls.startswith("VOPC"):
    sdst = inst.sdst.offset if inst.sd else VCC
    return _cmpx9(Valu(n, -1, srcs[:len(row.srcs)], mask_out=EXEC if n.startswith("CMPX_") else sdst), sdst)
  if n in sem.ACCUMULATE or n in sem.LITERAL_K or n in ("READFIRSTLANE_B32", "SWAP_B32", "ACCVGPR_MOV_B32"):
    raise Unsupported("SDWA on this op")
  if inst.dst_sel > SDWA_DWORD or inst.dst_unused > SDWA_PRESERVE:
    raise Unsupported(f"{INVALID}SDWA DST_SEL {inst.dst_sel} / DST_UNUSED {inst.dst_unused} is reserved")
  op = _valu(n, sem, inst.vdst.offset - 256, srcs, None, omod=inst.omod, clamp=bool(inst.clmp))
  op.sdwa_dst = None if inst.dst_sel == SDWA_DWORD else (inst.dst_sel, inst.dst_unused)
  return op

def _dpp9(inst, name, pc, sem):
  """VOP1/VOP2 with GFX9 DPP: as gfx11's DPP16, with GFX9's DPP_CTRL set and no fetch-inactive bit."""
  if not gfx9_dpp_valid(inst.dpp): raise Unsupported(f"{INVALID}DPP_CTRL 0x{inst.dpp:x} is reserved on CDNA")
  d = Dpp(inst.vsrc0.offset - 256, inst.dpp, bool(inst.bc), False, inst.row_mask, inst.bank_mask)
  mods = (inst.src0_neg | inst.src1_neg << 1, inst.src0_abs | inst.src1_abs << 1)
  return (_vop1_9 if type(inst).__name__.startswith("VOP1") else _vop2)(inst, name, 0, sem, d, mods)

_GFX9_ENCODINGS = {"SOPP": _sopp9, "SOPK": _sopk, "SOPC": _sopc, "SOP1": _sop1, "SOP2": _sop2, "SMEM": _smem9,
                   "VOP1": _vop1_9, "VOP2": _vop2, "VOPC": _vopc9, "VOP3": _vop3_9, "VOP3_SDST": _vop3_9, "VOP3SD": _vop3sd,
                   "VOP3P": _vop3p9, "VOP3P_MFMA": _mfma, "DS": _ds9, "GLOBAL": _global9, "FLAT": _flat9,
                   "SCRATCH": _scratch9, "VOP1_SDWA": _sdwa, "VOP2_SDWA": _sdwa, "VOPC_SDWA_SDST": _sdwa,
                   "VOP1_DPP16": _dpp9, "VOP2_DPP16": _dpp9}
