"""The reference stepper: one wave of an RDNA kernel, one instruction at a time, its whole state visible and copyable
between instructions.

It reads the same operand model (operands.py) and the same semantics rows (program.py) as the numpy and C backends,
but it is a plain interpreter: nothing is translated ahead, no lane mask is kept aside, no waves are grouped; each
instruction reads its registers, evaluates its row (the row's numpy rendering, over this wave's lanes) and writes its
results as the ISA describes, memory lane by lane. Cross-lane selections (DPP, the permlanes, ds_swizzle and
ds_permute/bpermute) are the numpy path's functions (numpy_runtime, numpy_memory) over this one wave, which read the
operand model's lane tables. It is the oracle the fast backends are tested against
(tests/compiler/rdna/test_rdna_stepper.py) and the ground of a debugger:

  st = Stepper(code, arch=d.arch, lanes=d.wave_size, state=WaveState.empty(d.wave_size, sgprs={0: lo, 1: hi}, vgprs={0: tids}), mem=address_space)
  st.step()            # one instruction; st.pc is the byte offset of the next from the kernel's entry
  snapshot = st.state.copy()
  st.run()             # to s_endpgm
"""
from __future__ import annotations
from dataclasses import dataclass, field, replace
import numpy as np
from mockgpu.boards import WAVE32, WAVE64
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded
from mockgpu.memory import AddressSpace
from mockgpu.compiler.rdna import buffer, decode, operands as ops, program, semantics
from mockgpu.compiler.rdna.decode import Bad
from mockgpu.compiler.rdna.operands import Unsupported, SCC, VCC, EXEC, NULL, M0, failure
from mockgpu.compiler.rdna.faults import at_pc, instruction_error, outside, misaligned, relative_error, jump_error, trap_error
from mockgpu.compiler.rdna.semantics.lang import WIDTH
from mockgpu.compiler.rdna.backends import numpy_memory, numpy_runtime
from mockgpu.compiler.rdna.backends.numpy import np_body, bad_vgprs
from mockgpu.compiler.rdna.backends.reads import Reads

NP = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32, "i32": np.int32,
      "u64": np.uint64, "i64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}

@dataclass
class WaveState:
  """Everything of one wave: SGPRs (VCC is s106/s107, M0 s125, EXEC s126/s127, SCC s253), VGPRs per lane, its LDS,
  the byte offset of its next instruction, and whether it has ended."""
  sgpr:np.ndarray              # uint32 [256]
  vgpr:np.ndarray              # uint32 [nvgpr, lanes]
  lds:np.ndarray               # uint8 [lds bytes]
  pc:int = 0
  done:bool = False
  scratch:np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))  # uint8 [lanes, private bytes]

  @staticmethod
  def empty(lanes:int, nvgpr:int=256, lds_size:int=0, private_size:int=0, sgprs:dict|None=None, vgprs:dict|None=None,
            exec_mask:int|None=None) -> WaveState:
    """A wave with every lane on (or exec_mask) and the given registers set (vgprs: index -> [lanes] values)."""
    st = WaveState(np.zeros(256, np.uint32), np.zeros((nvgpr, lanes), np.uint32), np.zeros(lds_size, np.uint8),
                   scratch=np.zeros((lanes, private_size), np.uint8))
    for r, x in (sgprs or {}).items(): st.sgpr[r] = x & 0xffffffff
    for r, x in (vgprs or {}).items(): st.vgpr[r] = x
    st.exec = (1 << lanes) - 1 if exec_mask is None else exec_mask
    return st

  @property
  def lanes(self) -> int: return self.vgpr.shape[1]
  def mask(self, r:int) -> int:
    """The lane mask in SGPR r (the pair r, r + 1 in wave64)."""
    return int(self.sgpr[r]) | (int(self.sgpr[r + 1]) << 32 if self.lanes == WAVE64 else 0)
  def set_mask(self, r:int, x:int):
    self.sgpr[r] = x & 0xffffffff
    if self.lanes == WAVE64: self.sgpr[r + 1] = (x >> 32) & 0xffffffff
  @property
  def exec(self) -> int: return self.mask(EXEC)
  @exec.setter
  def exec(self, x:int): self.set_mask(EXEC, x)
  @property
  def vcc(self) -> int: return self.mask(VCC)
  @property
  def scc(self) -> int: return int(self.sgpr[SCC])
  def active(self) -> np.ndarray:
    """EXEC as one bool per lane."""
    return (np.uint64(self.exec) >> np.arange(self.lanes, dtype=np.uint64) & np.uint64(1)).astype(bool)
  def copy(self) -> WaveState:
    return replace(self, sgpr=self.sgpr.copy(), vgpr=self.vgpr.copy(), lds=self.lds.copy(), scratch=self.scratch.copy())

def lane_bits(bools:np.ndarray) -> int:
  """bool per lane -> a lane mask."""
  return sum(1 << int(i) for i in np.nonzero(bools)[0])

_COMPILED:dict[str, object] = {}

def evaluate(prog:program.Program, read) -> dict[str, object]:
  """The program's outputs, its inputs read by read(input node): the row's numpy rendering, run once. Every input is
  an array (one element for a scalar), as in the numpy backend: numpy's scalar arithmetic picks another NaN than its
  array arithmetic when both operands are NaNs."""
  inputs = []
  def placeholder(e):
    inputs.append(e)
    return f"_in[{len(inputs) - 1}]"
  lines = np_body(prog, placeholder)
  src = "def _row(_in):\n" + "".join(f"  {ln}\n" for ln in lines) + f"  return ({', '.join(prog.out)},)\n"
  if (fn:=_COMPILED.get(src)) is None:
    ns = dict(vars(numpy_runtime))
    exec(compile(src, "<row>", "exec"), ns)
    fn = _COMPILED[src] = ns["_row"]
  with np.errstate(all="ignore"): values = fn([np.atleast_1d(read(e)) for e in inputs])
  return dict(zip(prog.out, values))

def typed(raw, isa:str, hi:bool):
  """Raw register bits (uint32, or uint64 for 64-bit types) as ISA type isa; 16-bit types take a half."""
  if isa in ("b32", "u32", "b64", "u64"): return raw
  if isa in ("i32", "f32", "i64", "f64"): return raw.view(NP[isa])
  half = ((raw >> np.uint32(16)) if hi else raw).astype(np.uint16)
  if isa == "f16": return half.view(np.float16)
  if isa == "bf16": return (half.astype(np.uint32) << np.uint32(16)).view(np.float32)
  return half.view(np.int16) if isa == "i16" else half

def bits(value, isa:str) -> np.ndarray:
  """A value stored as ISA type isa: its raw bits (uint16/32/64): floats rounded to the type, integers wrapped."""
  t = {"b16": "u16", "b32": "u32", "b64": "u64", "bf16": "u16"}.get(isa, isa)
  width = WIDTH[isa]
  if isa == "bf16": return numpy_runtime.bf16bits(value).astype(np.uint16)
  if t[0] == "f": return np.asarray(value, NP[t]).view(UINT[width])
  return np.asarray(value).astype(UINT[width])

class Stepper(Reads):
  def __init__(self, code:bytes, *, arch:str, lanes:int, state:WaveState|None=None, mem:AddressSpace|None=None,
               pgm:int=0, ftz32:bool=False, ftz16:bool=False, scratch_base:int=0, ieee:bool=True, like:Stepper|None=None,
               vgprs:int|None=None):
    """like: a stepper of the same code whose decoded instructions and lowered ops this one shares (the waves of a
    dispatch: decoding and lowering once, not per wave). vgprs: the VGPRs the wave has (the ones an M0-relative index
    may reach; default its register file, at most 256)."""
    self.insts, self.sem, self.pgm = like.insts if like is not None else decode.walk(code, arch), semantics.family(arch), pgm
    self.lowered:dict[int, object] = like.lowered if like is not None else {}  # pc -> ops.lower(the instruction there)
    self.state = state if state is not None else WaveState.empty(lanes)
    self.mem = mem if mem is not None else AddressSpace("stepper")
    self.ftz32, self.ftz16, self.scratch_base, self.ieee = ftz32, ftz16, scratch_base, ieee
    self.steps = 0
    self.handlers = {ops.Valu: self.valu, ops.Dual: self.dual, ops.Packed: self.packed, ops.Wmma: self.wmma,
                     ops.Salu: self.salu, ops.ReadLane: self.readlane, ops.WriteLane: self.writelane, ops.Swap: self.swap,
                     ops.Branch: self.branch, ops.End: self.end, ops.Barrier: lambda op: None, ops.Nop: lambda op: None,
                     ops.Smem: self.smem, ops.Vmem: self.vmem, ops.DsLoad: self.ds_load, ops.DsStore: self.ds_store,
                     ops.DsPair: self.ds_pair, ops.DsPermute: self.ds_permute, ops.DsSwizzle: self.ds_swizzle, ops.DsAtomic: self.ds_atomic,
                     ops.VAtomic: self.vatomic, ops.Mfma: self.mfma, ops.Permlane: self.permlane, ops.Mode: self.mode,
                     ops.MovRel: self.movrel, ops.Jump: self.jump, ops.Trap: self.trap}
    self.vgprs = min(256, self.state.vgpr.shape[0]) if vgprs is None else vgprs

  @property
  def pc(self) -> int: return self.state.pc
  @property
  def done(self) -> bool: return self.state.done
  @property
  def lanes(self) -> int: return self.state.lanes

  def instruction(self):
    """The decoded instruction at the PC (a decode.Bad for a word that does not decode)."""
    return self.insts.get(self.pc) or Bad(0, "execution runs past the end of the decoded code")

  def step(self):
    """Run the instruction at the PC."""
    if self.done: return
    inst, pc = self.instruction(), self.pc
    if isinstance(inst, Bad): raise instruction_error(inst.reason, self.pgm, pc)
    if (op:=self.lowered.get(pc)) is None:
      try: op = self.lowered[pc] = ops.lower(inst, pc, self.sem)
      except Unsupported as e: raise instruction_error(failure(inst, str(e)), self.pgm, pc) from None
    self.next_pc, self.name = pc + inst.size(), op_name_lower(inst)
    try: self.handlers[type(op)](op)
    except Unsupported as e: raise instruction_error(failure(inst, str(e)), self.pgm, pc) from None
    self.state.pc = self.next_pc
    self.steps += 1

  def run(self, budget:int=10**7) -> WaveState:
    """Step until s_endpgm; more than budget instructions raise InstructionBudgetExceeded."""
    while not self.done:
      if self.steps >= budget:
        raise InstructionBudgetExceeded(f"stepper: ran past {budget} instructions (at PC 0x{self.pgm + self.pc:x})")
      self.step()
    return self.state

  # *** registers ***
  def vreg(self, r:int) -> int:
    if (bad := bad_vgprs([r])) is not None or r >= self.state.vgpr.shape[0]: raise Unsupported(bad or f"v{r} past the register file")
    return r

  # *** operands (the dispatch on their kind is reads.Reads): values of this wave ***
  typed = staticmethod(typed)
  def raw_dpp(self): return self.dpp_value
  def raw_vgpr(self, v:int, width:int):
    st = self.state
    return st.vgpr[self.vreg(v)].copy() if width <= 32 else numpy_runtime.r64(st.vgpr[self.vreg(v)], st.vgpr[self.vreg(v + 1)])
  def raw_quad(self, v:int, quad:int): return self.state.vgpr[self.vreg(v)][numpy_runtime.quad_lanes(self.lanes, quad)]
  def raw_sgpr(self, o:int, width:int, vec:bool):
    st = self.state
    return np.uint32(st.sgpr[o]) if width <= 32 else np.uint64(int(st.sgpr[o]) | int(st.sgpr[o + 1]) << 32)
  def raw_scc(self, width:int, vec:bool): return UINT[max(width, 32)](self.state.sgpr[SCC])
  def raw_zero(self, mask:int, width:int, vec:bool): return UINT[max(width, 32)](self.state.mask(mask) == 0)
  def raw_const(self, bits:int, width:int): return UINT[max(width, 32)](bits)
  def sdwa(self, raw, sel:int, sext:bool): return numpy_runtime.sdwa_src(raw, sel, sext)
  def read_vcc(self):
    if self.mask_in == NULL: return np.bool_(False)
    return (np.uint64(self.state.mask(self.mask_in)) >> np.arange(self.lanes, dtype=np.uint64) & np.uint64(1)).astype(bool)
  def read_lane(self): return np.arange(self.lanes, dtype=np.uint32)
  def read_scc(self): return np.uint32(self.state.sgpr[SCC])
  def read_exec(self): return UINT[self.lanes](self.state.exec)
  def read_pc(self): return np.uint64(self.pgm + self.pc)

  def vwrite(self, d:int, isa:str, value, lanes:np.ndarray, hi:bool=False, sdwa:tuple[int, int]|None=None):
    """Write value (as ISA type isa) to VGPR d (d, d + 1 for 64 bits; one half for 16; a byte or word of it for a
    GFX9 SDWA destination) in the given lanes."""
    st, b = self.state, np.broadcast_to(bits(value, isa), (self.lanes,))
    if sdwa is not None: st.vgpr[self.vreg(d)] = np.where(lanes, numpy_runtime.sdwa_dst(b, st.vgpr[d], *sdwa), st.vgpr[d])
    elif WIDTH[isa] == 16:
      old = st.vgpr[self.vreg(d)]
      new = (old & 0xffff) | (b.astype(np.uint32) << 16) if hi else (old & 0xffff0000) | b.astype(np.uint32)
      st.vgpr[d] = np.where(lanes, new, old)
    elif WIDTH[isa] == 64:
      st.vgpr[self.vreg(d)] = np.where(lanes, (b & 0xffffffff).astype(np.uint32), st.vgpr[d])
      st.vgpr[self.vreg(d + 1)] = np.where(lanes, (b >> np.uint64(32)).astype(np.uint32), st.vgpr[d + 1])
    else: st.vgpr[self.vreg(d)] = np.where(lanes, b, st.vgpr[d])

  def swrite(self, d:int, isa:str, value):
    """Write a scalar result (as ISA type isa) to SGPR d (and d + 1 for 64 bits)."""
    if d == NULL: return
    if d >= 128 and d != SCC:
      from tinygrad.renderer.amd.dsl import Reg
      raise Unsupported(decode.invalid_operand(Reg(d, 1)) or f"scalar destination {decode.describe(Reg(d))}")
    x = int(bits(value, isa))
    self.state.sgpr[d] = x & 0xffffffff
    if WIDTH[isa] == 64: self.state.sgpr[d + 1] = x >> 32

  def mask_write(self, d:int|None, bools, lanes:np.ndarray):
    """A lane mask result (compares, carries): one bit per active lane, 0 for the others."""
    if d is None or d == NULL: return
    if d == EXEC + 1: raise Unsupported("a lane mask written to EXEC_HI (wave64 only)")
    if self.lanes == WAVE64 and d & 1: raise Unsupported(f"a wave64 lane mask written to the odd SGPR {d}")
    self.state.set_mask(d, lane_bits(np.broadcast_to(bools, (self.lanes,)) & lanes))

  # *** vector ALU ***
  def valu_outputs(self, op:ops.Valu) -> tuple[program.Program, dict, np.ndarray]:
    """The op's program evaluated on this wave, and the lanes it writes (EXEC, narrowed by a DPP source)."""
    prog = program.valu(op, self.sem, self.ftz32, self.ftz16, self.ieee)
    lanes = self.state.active()
    self.dpp, self.dpp_value, self.mask_in = op.dpp, None, op.mask_in
    if op.dpp is not None: self.dpp_value, lanes = self.dpp_source(op.dpp, lanes)
    return prog, evaluate(prog, lambda e: self.read(e, vec=True)), lanes

  def dpp_source(self, dpp:ops.Dpp, lanes:np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A DPP source (numpy_runtime.dpp16 / dpp8, the numpy path's, over this one wave): each lane's source lane's value
    and the lanes the op then writes."""
    x = self.state.vgpr[self.vreg(dpp.vsrc)][None]
    if dpp.ctrl is None: val, ok = numpy_runtime.dpp8(x, lanes[None], list(dpp.sels), dpp.fetch_inactive)
    else: val, ok = numpy_runtime.dpp16(x, lanes[None], dpp.ctrl, dpp.bound_ctrl, dpp.fetch_inactive, dpp.row_mask, dpp.bank_mask)
    return val[0], lanes & ok[0]

  def valu(self, op:ops.Valu):
    prog, out, lanes = self.valu_outputs(op)
    if "d" in out: self.vwrite(op.dst, prog.dst, out["d"], lanes, op.dst_hi, op.sdwa_dst)
    for k, name in enumerate(program.D_MORE, 1):
      if name in out: self.vwrite(op.dst + k, prog.dst, out[name], lanes)
    if "vcc" in out:
      self.mask_write(op.mask_out, out["vcc"], lanes)
      self.mask_write(op.mask_copy, out["vcc"], lanes)  # GFX9 v_cmpx: EXEC and SDST

  def dual(self, op:ops.Dual):
    results = [(half, *self.valu_outputs(half)) for half in (op.x, op.y)]  # both read before either writes
    for half, prog, out, lanes in results: self.vwrite(half.dst, prog.dst, out["d"], lanes)

  def packed(self, op:ops.Packed):
    self.dpp, self.mask_in = None, VCC
    prog = program.packed(op, self.sem, self.ieee)
    self.vwrite(op.dst, "b32", evaluate(prog, lambda e: self.read(e, vec=True))["d"], self.state.active())

  def wmma(self, op:ops.Wmma):
    if self.lanes != WAVE32: raise Unsupported("WMMA in a wave64 wave (its wave64 register layout is not modelled)")
    regs = [[self.state.vgpr[self.vreg(r)][None, :] for r in block] for block in (op.a, op.b, op.c)]
    index = None if op.index is None else self.state.vgpr[self.vreg(op.index)][None, :]
    d = numpy_runtime.wmma(*regs, op.kind_in, op.kind_out, op.hi, op.signed, op.clamp, op.layout, op.fp8, index, op.index_key)
    for j in range(len(op.c)): self.vwrite(op.dst + j, "b32", d[j][0], self.state.active())

  def mfma(self, op:ops.Mfma):
    regs = lambda block: [self.state.vgpr[self.vreg(r)][None, :] for r in block]
    d = numpy_runtime.mfma_regs(op.name, regs(op.a), regs(op.b), regs(op.c) if op.c is not None else op.c_bits, op.fp8)
    for r, x in zip(op.dst, d): self.vwrite(r, "b32", x[0], self.state.active())

  def readlane(self, op:ops.ReadLane):
    if op.lane is None:
      lanes = self.state.active()
      lane = int(np.argmax(lanes)) if lanes.any() else 0
    else: lane = int(self.raw(op.lane, 32, False, "u32")) & (self.lanes - 1)
    self.swrite(op.dst, "u32", self.state.vgpr[self.vreg(op.src)][lane])

  def writelane(self, op:ops.WriteLane):
    self.dpp = None
    lane = int(self.raw(op.lane, 32, False, "u32")) & (self.lanes - 1)
    value = np.broadcast_to(self.raw(op.value, 32, True, "b32"), (self.lanes,))
    self.state.vgpr[self.vreg(op.dst), lane] = value[lane]  # EXEC does not apply

  def mode(self, op:ops.Mode):
    if op.dst is not None: return self.swrite(op.dst, "u32", program.mode_field(op, self.ftz32, self.ftz16))
    program.check_mode_write(op, self.ftz32, self.ftz16, int(self.raw(op.value, 32, False, "u32")))

  def permlane(self, op:ops.Permlane):
    lanes, x = self.state.active(), self.state.vgpr[self.vreg(op.src)].copy()
    if op.width == 64:
      val, ok = numpy_runtime.permlane64(x[None], lanes[None])
      self.state.vgpr[self.vreg(op.dst)] = np.where(ok[0], val[0], self.state.vgpr[op.dst])
      return
    if op.sel_vgpr is not None:
      sel_lanes = self.state.vgpr[self.vreg(op.sel_vgpr)].copy()[None]
      val, ok = numpy_runtime.permlane16(x[None], lanes[None], None, None, op.cross, op.fi, op.bound_ctrl, sel_lanes)
    else:
      sel = [np.array([self.raw(s, 32, False, "u32")], np.uint32) for s in (op.sel_lo, op.sel_hi)]
      val, ok = numpy_runtime.permlane16(x[None], lanes[None], *sel, op.cross, op.fi, op.bound_ctrl)
    self.state.vgpr[self.vreg(op.dst)] = np.where(lanes & ok[0], val[0], self.state.vgpr[op.dst])

  def swap(self, op:ops.Swap):
    lanes, v = self.state.active(), self.state.vgpr
    a, b = v[self.vreg(op.a)].copy(), v[self.vreg(op.b)].copy()
    if op.halves is not None:  # v_swap_b16: the chosen 16-bit halves change places, the other halves stay
      (ha, hb), half = op.halves, lambda x, hi: (x >> 16) if hi else (x & 0xffff)
      self.vwrite(op.a, "b16", half(b, hb), lanes, ha)
      self.vwrite(op.b, "b16", half(a, ha), lanes, hb)
      return
    v[op.a], v[op.b] = np.where(lanes, b, a), np.where(lanes, a, b)

  # *** scalar ALU and control ***
  def salu(self, op:ops.Salu):
    prog = program.salu(op, self.sem, self.lanes, self.ftz32, self.ftz16, self.ieee)
    self.dpp = None
    out = {k: np.asarray(x).reshape(-1)[0] for k, x in evaluate(prog, lambda e: self.read(e, vec=False)).items()}
    if "exec" in out: self.state.exec = int(out["exec"])
    if "scc" in out: self.state.sgpr[SCC] = int(bool(out["scc"]))
    if "d" in out: self.swrite(op.dst, prog.dst, out["d"])

  def branch(self, op:ops.Branch):
    st = self.state
    take = {None: True, "scc0": st.scc == 0, "scc1": st.scc != 0, "vccz": st.vcc == 0, "vccnz": st.vcc != 0,
            "execz": st.exec == 0, "execnz": st.exec != 0}[op.cond]
    if take: self.next_pc = op.target

  def end(self, op):
    self.state.done, self.next_pc = True, self.pc

  # *** M0-relative moves, computed jumps, traps ***
  def rel_index(self, op:ops.MovRel, base:int, field:tuple[int, int]) -> int:
    """base plus the M0 field (shift, bits), in uint32 as the pseudocode adds; past the reachable registers it raises."""
    shift, bits = field
    idx = (base + (int(self.state.sgpr[M0]) >> shift & ((1 << bits) - 1))) & 0xffffffff
    limit = self.vgprs if op.vgpr else op.limit
    if idx + op.ndw > limit: raise relative_error(op.name, self.pgm, self.pc, idx, limit)
    return idx

  def movrel(self, op:ops.MovRel):
    st, t = self.state, "b64" if op.ndw == 2 else "b32"
    si = self.rel_index(op, op.src_reg, op.src_rel) if op.src is None else None
    di = self.rel_index(op, op.dst, op.dst_rel) if op.dst_rel is not None else None
    if op.vgpr:
      lanes = st.active()
      x = np.broadcast_to(self.raw(op.src, 32, True, t), (self.lanes,)) if op.src is not None else st.vgpr[si].copy()
      if di is None: return self.vwrite(op.dst, "b32", x, lanes)
      y = st.vgpr[di].copy()
      st.vgpr[di] = np.where(lanes, x, y)
      if op.swap: st.vgpr[si] = np.where(lanes, y, st.vgpr[si])
      return
    if op.src is not None: x = int(np.asarray(self.raw(op.src, 32 * op.ndw, False, t)).reshape(-1)[0])
    else: x = sum(int(st.sgpr[si + j]) << 32 * j for j in range(op.ndw))
    if di is None: return self.swrite(op.dst, "u64" if op.ndw == 2 else "u32", np.uint64(x) if op.ndw == 2 else np.uint32(x))
    for j in range(op.ndw): st.sgpr[di + j] = x >> 32 * j & 0xffffffff

  def jump(self, op:ops.Jump):
    """The target is read before the return address is written (s_swappc_b64 may name one pair twice)."""
    target = self.pgm + op.offset if op.target is None else int(np.asarray(self.raw(op.target, 64, False, "b64")).reshape(-1)[0])
    if op.link is not None: self.swrite(op.link, "u64", np.uint64(self.pgm + op.ret))
    if (target - self.pgm) not in self.insts: raise jump_error(self.mem, op.name, self.pgm, self.pc, target)
    self.next_pc = target - self.pgm

  def trap(self, op:ops.Trap): raise trap_error(self.pgm, self.pc, op.trap_id)

  # *** memory: lane by lane ***
  def where(self) -> str: return at_pc(self.name, self.pgm, self.pc)

  def smem(self, op:ops.Smem):
    st = self.state
    base = int(st.sgpr[op.base]) | int(st.sgpr[op.base + 1]) << 32
    soff = 0 if op.soffset is None else int(self.raw(op.soffset, 32, False, "u32"))
    dt = np.dtype(NP[op.kind])  # dwords, or one sub-dword element (RDNA4), zero- or sign-extended
    addr = (base + op.offset + soff) & (2**64 - 1) & ~(dt.itemsize - 1)  # the low bits are ignored, as on hardware
    words = self.mem.load(addr + dt.itemsize * np.arange(op.ndw, dtype=np.uint64), dt, self.where())
    for j in range(op.ndw):
      if op.dst + j != NULL: st.sgpr[op.dst + j] = np.int64(words[j]) & 0xffffffff

  def address(self, a:ops.Addr, lane:int) -> int:
    v = self.state.vgpr
    if a.wide: return (int(v[self.vreg(a.vaddr), lane]) | int(v[self.vreg(a.vaddr + 1), lane]) << 32) + a.offset & (2**64 - 1)
    base = int(self.state.sgpr[a.sbase]) | int(self.state.sgpr[a.sbase + 1]) << 32
    return (base + (4 * lane if a.addtid else int(v[self.vreg(a.vaddr), lane])) + a.offset) & (2**64 - 1)

  def buffer_lanes(self, a:ops.BufAddr, size:int, ndw:int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each lane's first byte address and, per element, whether it is in range (buffer.address) of a MUBUF access."""
    st, v = self.state, self.state.vgpr
    words = [np.array([st.sgpr[a.srsrc + k]]) for k in range(4)]
    idx = v[self.vreg(a.vaddr)][None] if a.idxen else None
    off = v[self.vreg(a.vaddr + a.idxen)][None] if a.offen else None
    soff = int(self.raw(a.soffset, 32, False, "u32"))
    addr, ok, swizzled = buffer.address(words, idx, off, soff, a.offset, a.idxen, a.offen, size, ndw, self.lanes)
    if swizzled.any() and st.active().any():
      raise instruction_error(f"{self.name}: a V# with SWIZZLE_ENABLE set (the swizzled buffer layout) is not modelled", self.pgm, self.pc)
    return addr[0], [o[0] for o in ok]

  def buffer(self, op:ops.Vmem):
    """A MUBUF load or store: each element only in the lanes where it is in range (a load out of range gives 0)."""
    dt = np.dtype(NP[op.kind])
    addr, ok = self.buffer_lanes(op.addr, dt.itemsize, op.ndw)
    lanes = np.nonzero(self.state.active())[0]
    if op.load:
      vals = np.zeros((len(lanes), op.ndw), dt)
      for j in range(op.ndw):
        sel = ok[j][lanes]
        vals[sel, j] = self.mem.load(addr[lanes[sel]] + np.uint64(4 * j), dt, self.where())
      return self.load_write(op.reg, lanes, vals.reshape(-1), op.ndw, op.d16)
    data = self.store_data(op.reg, lanes, dt, op.ndw, op.d16).reshape(len(lanes), op.ndw)
    sel = np.stack([o[lanes] for o in ok], 1)  # lane after lane: a later lane's dword wins
    addrs = addr[lanes][:, None] + np.uint64(4) * np.arange(op.ndw, dtype=np.uint64)
    self.mem.store(addrs[sel], data[sel], self.where())

  def vmem(self, op:ops.Vmem):
    if op.seg == "BUFFER": return self.buffer(op)
    if op.seg == "SCRATCH": return self.scratch_access(op)
    lanes = np.nonzero(self.state.active())[0]
    dt = np.dtype(NP[op.kind])
    addrs = np.array([self.address(op.addr, int(l)) + dt.itemsize * j for l in lanes for j in range(op.ndw)], np.uint64)
    if op.load: return self.load_write(op.reg, lanes, self.mem.load(addrs, dt, self.where()), op.ndw, op.d16)
    self.mem.store(addrs, self.store_data(op.reg, lanes, dt, op.ndw, op.d16), self.where())

  def load_write(self, d:int, lanes:np.ndarray, vals:np.ndarray, ndw:int, d16:str|None):
    """Loaded elements (lane-major, ndw per lane) into VGPRs d.., zero- or sign-extended; d16 into one half."""
    v = self.state.vgpr
    vals = vals.reshape(len(lanes), ndw)
    widened = vals.astype(np.int64).astype(np.uint32) if vals.dtype.kind == "i" else vals.astype(np.uint32)
    for j in range(ndw):
      r = self.vreg(d + j)
      if d16: v[r, lanes] = (v[r, lanes] & 0xffff) | (widened[:, j] << 16) if d16 == "hi" else (v[r, lanes] & 0xffff0000) | (widened[:, j] & 0xffff)
      else: v[r, lanes] = widened[:, j]

  def store_data(self, data:int, lanes:np.ndarray, dt:np.dtype, ndw:int, d16:str|None) -> np.ndarray:
    v = self.state.vgpr
    cols = [v[self.vreg(data + j), lanes] >> (16 if d16 == "hi" else 0) for j in range(ndw)]
    return np.stack(cols, axis=1).reshape(-1).astype(dt)

  def scratch_access(self, op:ops.Vmem):
    st, a = self.state, op.addr
    size, dt = st.scratch.shape[1], np.dtype(NP[op.kind])
    lanes = np.nonzero(st.active())[0]
    offs = []
    for l in lanes:
      off = ((int(st.vgpr[self.vreg(a.vaddr), l]) if a.vaddr is not None else 0) +
             (int(self.raw(a.soff, 32, False, "u32")) if a.soff is not None else 0) + a.offset) & 0xffffffff
      for j in range(op.ndw):
        o = off + dt.itemsize * j
        if o + dt.itemsize > size:
          raise GPUPageFault(self.scratch_base + int(l) * size + o, dt.itemsize, not op.load,
                             outside(self.where(), "private (scratch)", o, size))
        offs.append((int(l), o))
    mem = st.scratch.reshape(-1)
    idx = np.array([l * size + o for l, o in offs], np.int64)
    if op.load:
      return self.load_write(op.reg, lanes, np.stack([mem[idx + k] for k in range(dt.itemsize)], 1).copy().view(dt).reshape(-1), op.ndw, op.d16)
    vals = self.store_data(op.reg, lanes, dt, op.ndw, op.d16).view(np.uint8).reshape(-1, dt.itemsize)
    for k in range(dt.itemsize): mem[idx + k] = vals[:, k]

  def lds_index(self, addr:int, nbytes:int, write:bool) -> int:
    if addr + nbytes > len(self.state.lds):
      raise GPUPageFault(addr, nbytes, write, outside(self.where(), "LDS", addr, len(self.state.lds)))
    return addr

  def lds_lanes(self, base:int|None, offset:int, dt:np.dtype, ndw:int, write:bool) -> tuple[np.ndarray, np.ndarray]:
    """The active lanes and the LDS byte index of each of their elements (checked before any is touched); base None:
    the ADDTID forms' M0[15:0] + the lane's index * 4."""
    lanes = np.nonzero(self.state.active())[0]
    if base is None: v = (int(self.state.sgpr[ops.M0]) & 0xffff) + 4 * np.arange(self.lanes)
    else: v = self.state.vgpr[self.vreg(base)]
    idx = [self.lds_index((int(v[l]) + offset + dt.itemsize * j) & 0xffffffff, dt.itemsize, write) for l in lanes for j in range(ndw)]
    return lanes, np.array(idx, np.int64)

  def lds_get(self, idx:np.ndarray, dt:np.dtype) -> np.ndarray:
    return np.stack([self.state.lds[idx + k] for k in range(dt.itemsize)], 1).copy().view(dt).reshape(-1)

  def lds_put(self, idx:np.ndarray, vals:np.ndarray):
    b = np.ascontiguousarray(vals).view(np.uint8).reshape(len(idx), -1)
    for i, ix in enumerate(idx): self.state.lds[ix:ix + b.shape[1]] = b[i]  # lane order: the highest lane wins

  def ds_load(self, op:ops.DsLoad):
    dt = np.dtype(NP[op.kind])
    lanes, idx = self.lds_lanes(op.addr, op.offset, dt, op.ndw, False)
    self.load_write(op.dst, lanes, self.lds_get(idx, dt), op.ndw, op.d16)

  def ds_store(self, op:ops.DsStore):
    dt = np.dtype(NP[op.kind])
    lanes, idx = self.lds_lanes(op.addr, op.offset, dt, op.ndw, True)
    self.lds_put(idx, self.store_data(op.data, lanes, dt, op.ndw, op.d16))

  def ds_pair(self, op:ops.DsPair):
    dt = np.dtype(np.uint32)
    parts = [self.lds_lanes(op.addr, o, dt, op.ndw, not op.load) for o in op.offsets]
    if op.load:
      lanes = parts[0][0]
      vals = np.concatenate([self.lds_get(idx, dt).reshape(len(lanes), op.ndw) for _, idx in parts], axis=1)
      return self.load_write(op.regs[0], lanes, vals.reshape(-1), 2 * op.ndw, None)
    for (lanes, idx), data in zip(parts, op.regs): self.lds_put(idx, self.store_data(data, lanes, dt, op.ndw, None))

  def ds_permute(self, op:ops.DsPermute):
    """ds_permute/bpermute_b32: numpy_memory's, the numpy path's, over this one wave."""
    st, lanes = self.state, self.state.active()
    idx = (st.vgpr[self.vreg(op.addr)] + np.uint32(op.offset)) >> 2
    fn = numpy_memory.bpermute if op.back else numpy_memory.permute
    out = fn(idx[None], st.vgpr[self.vreg(op.data)][None], lanes[None])[0]
    st.vgpr[self.vreg(op.dst)] = np.where(lanes, out, st.vgpr[op.dst])

  def ds_swizzle(self, op:ops.DsSwizzle):
    """ds_swizzle_b32: numpy_memory.swizzle (operands.swizzle_lanes) over this one wave."""
    st, lanes = self.state, self.state.active()
    out = numpy_memory.swizzle(st.vgpr[self.vreg(op.data)][None], lanes[None], op.offset)[0]
    st.vgpr[self.vreg(op.dst)] = np.where(lanes, out, st.vgpr[self.vreg(op.dst)])

  # *** atomics: lane after lane, each lane reading all its words before writing them ***
  def atomic_word(self, prog:program.Program, old:int, data:list[int], width:int) -> int:
    """The row's new word from the old one and the lane's data (raw bits as Python ints)."""
    raw = {"old": old, **dict(zip("ab", data))}
    t = UINT[width]
    out = evaluate(prog, lambda e: typed(t(raw[e.val.special]), e.val.isa, False))
    return int(bits(out["d"], prog.dst)[0])

  def lane_data(self, regs, width:int, lane:int) -> list[int]:
    v = self.state.vgpr
    return [int(v[self.vreg(r), lane]) | (int(v[self.vreg(r + 1), lane]) << 32 if width == 64 else 0) for r in regs]

  def write_old(self, dst:int|None, lane:int, olds:list[int], width:int):
    """An atomic's returned words into VGPRs dst.. of one lane."""
    if dst is None: return
    dwords = [w >> (32 * j) & 0xffffffff for w in olds for j in range(width // 32)]
    for j, x in enumerate(dwords): self.state.vgpr[self.vreg(dst + j), lane] = x

  def ds_atomic(self, op:ops.DsAtomic):
    st, nbytes = self.state, op.width // 8
    prog, lanes = program.atomic(op.row, self.sem), np.nonzero(st.active())[0]
    v = st.vgpr[self.vreg(op.addr)]
    addrs = [[((((int(v[l]) + op.offset) & 0xffffffff & op.mask) + s) & 0xffffffff) for l in lanes] for s in op.slots]
    for slot in addrs:  # every lane's words checked (bounds, then alignment) before any is written
      for a in slot: self.lds_index(a, nbytes, True)
    for slot in addrs:
      for a in slot:
        if a % nbytes: raise GPUPageFault(a, nbytes, True, misaligned(self.where(), "LDS", a, nbytes), "LDS")
    words = st.lds[:len(st.lds) // nbytes * nbytes].view(UINT[op.width])
    for i, l in enumerate(lanes):
      olds = [int(words[slot[i] // nbytes]) for slot in addrs]
      for slot, regs in zip(addrs, op.data):  # in slot order: a second word equal to the first sees its new value
        words[slot[i] // nbytes] = self.atomic_word(prog, int(words[slot[i] // nbytes]), self.lane_data(regs, op.width, l), op.width)
      self.write_old(op.dst, l, olds, op.width)

  def vatomic(self, op:ops.VAtomic):
    nbytes, t = op.width // 8, np.dtype(UINT[op.width])
    prog, lanes = program.atomic(op.row, self.sem), np.nonzero(self.state.active())[0]
    if op.seg == "BUFFER":  # lanes out of range neither update nor return (0)
      addr, ok = self.buffer_lanes(op.addr, nbytes, 1)
      for l in lanes[~ok[0][lanes]]: self.write_old(op.dst, int(l), [0], op.width)
      lanes = lanes[ok[0][lanes]]
      addrs = addr[lanes]
    else: addrs = np.array([self.address(op.addr, int(l)) for l in lanes], np.uint64)
    if len(addrs): self.mem.locate(addrs, nbytes, True, self.where())  # every lane checked before any is written
    for a in addrs:
      if int(a) % nbytes: raise GPUPageFault(int(a), nbytes, True, misaligned(self.where(), "global", int(a), nbytes))
    for a, l in zip(addrs, lanes):
      old = int(self.mem.load(a[None], t, self.where())[0])
      new = self.atomic_word(prog, old, self.lane_data(op.data, op.width, l), op.width)
      self.mem.store(a[None], np.array([new], t), self.where())
      self.write_old(op.dst, l, [old], op.width)

def op_name_lower(inst) -> str: return decode.op_name(inst).lower()
