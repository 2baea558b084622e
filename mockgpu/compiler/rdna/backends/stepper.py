"""The reference stepper: one wave of an RDNA kernel, one instruction at a time, its whole state visible and copyable
between instructions.

Each instruction is what the numpy backend makes of it (backends/numpy.py's Translator, with numpy_runtime,
numpy_memory and numpy_control under it), translated as a block of its own: the kernel is translated once with every
instruction its own block (a fall-through past the decoded code goes to a block that is not there, which raises
when it is stepped to, as a word that does not decode does). A step runs that block over a chunk
of one wave whose registers, LDS and private memory are this wave's WaveState. No op's meaning is written here
(tests/compiler/rdna/test_rdna_stepper.py scans for per-op code): the numpy path is the one executor of an op outside
the rows, and the stepper is what it does one wave and one instruction at a time, the ground of a debugger. The C
backend, which writes its own, is tested against it (test_rdna_stepper.py's random programs).

  st = Stepper(code, arch=d.arch, lanes=d.wave_size, state=WaveState.empty(d.wave_size, sgprs={0: lo, 1: hi}, vgprs={0: tids}), mem=address_space)
  st.step()            # one instruction; st.pc is the byte offset of the next from the kernel's entry
  snapshot = st.state.copy()
  st.run()             # to s_endpgm
"""
from __future__ import annotations
from dataclasses import dataclass, field, replace
import numpy as np
from mockgpu.boards import WAVE64
from mockgpu.errors import InstructionBudgetExceeded
from mockgpu.memory import AddressSpace
from mockgpu.compiler.rdna import decode
from mockgpu.compiler.rdna.decode import Bad, Block
from mockgpu.compiler.rdna.operands import Unsupported, SCC, VCC, EXEC, failure
from mockgpu.compiler.rdna.faults import instruction_error
from mockgpu.compiler.cache import translated
from mockgpu.compiler.rdna.backends.numpy import Translator, VERSION, split_subset

SLOTS = 256  # the scalar register file's slots (SCC is s253), as the numpy path's chunk state holds them
VGPRS = 256  # the VGPRs an M0-relative index may reach by default

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
    st = WaveState(np.zeros(SLOTS, np.uint32), np.zeros((nvgpr, lanes), np.uint32), np.zeros(lds_size, np.uint8),
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

# *** the translation: every instruction a block ***

def block_index(insts:dict) -> dict[int, int]:
  """Byte offset -> block index of a kernel's one-instruction blocks, in address order; a fall-through that is not a
  decoded instruction (decode.walk decoded every branch target) gets an index past them, so stepping there raises."""
  index = {pc: k for k, pc in enumerate(sorted(insts))}
  for pc, inst in sorted(insts.items()):
    if not isinstance(inst, Bad): index.setdefault(pc + inst.size(), len(index))
  return index

class OneInstructionBlocks(Translator):
  """The numpy Translator over blocks of one instruction each (block_index)."""
  def __init__(self, insts:dict, ftz32:bool, ftz16:bool, arch:str, lanes:int, ieee:bool):
    super().__init__([Block(pc, [(pc, inst)]) for pc, inst in sorted(insts.items())], ftz32, ftz16, arch, lanes, ieee)
    self.index = block_index(insts)

class Code:
  """A kernel's one-instruction blocks, compiled once per machine (the translation cache, as the numpy path's): the
  module's builder and each block index's byte offset."""
  def __init__(self, code:bytes, insts:dict, arch:str, lanes:int, ftz32:bool, ftz16:bool, ieee:bool):
    build = lambda: split_subset(OneInstructionBlocks(insts, ftz32, ftz16, arch, lanes, ieee).source())
    ns:dict = {}
    exec(translated(f"{arch}-stepper", f"{VERSION}-ftz{int(ftz32)}{int(ftz16)}-w{lanes}-ieee{int(ieee)}", code, build), ns)
    self.build, self.index = ns["build"], block_index(insts)
    self.pcs = {k: pc for pc, k in self.index.items()}  # block index -> byte offset

class Registers:
  """The VGPRs as the translated code sees them (a list of [waves, lanes] arrays it rebinds, never writes in place),
  over the wave's [nvgpr, lanes] array: a read is a copy of the row, a rebinding writes the row."""
  def __init__(self, stepper:Stepper): self.stepper = stepper
  def __getitem__(self, r:int) -> np.ndarray:
    vgpr = self.stepper.state.vgpr
    if not 0 <= r < vgpr.shape[0]: raise Unsupported(f"v{r} past the register file")
    return vgpr[r][None].copy()
  def __setitem__(self, r:int, x): self.stepper.state.vgpr[r] = x

class OneWave:
  """The chunk state the translated code reads (emulators/rdna/executor.State) for one wave, over its WaveState: the
  SGPRs are copied in and out around each step (the code holds their array), the rest is the WaveState's own."""
  lds_watch = None
  def __init__(self, stepper:Stepper, vgprs:int):
    self.stepper, self.mem, self.pgm, self.lanes = stepper, stepper.mem, stepper.pgm, stepper.lanes
    self.S, self.V = np.zeros((SLOTS, 1), np.uint32), Registers(stepper)
    self.wave_index, self.wave_wg = np.zeros(1, np.int64), np.zeros(1, np.int64)
    self.scratch_base, self.vgprs = stepper.scratch_base, vgprs
  @property
  def lds(self) -> np.ndarray: return self.stepper.state.lds
  @property
  def lds_size(self) -> int: return len(self.stepper.state.lds)
  @property
  def private_size(self) -> int: return self.stepper.state.scratch.shape[1]
  def scratch(self) -> np.ndarray: return self.stepper.state.scratch.ravel()  # a view: the array is contiguous

class Stepper:
  def __init__(self, code:bytes, *, arch:str, lanes:int, state:WaveState|None=None, mem:AddressSpace|None=None,
               pgm:int=0, ftz32:bool=False, ftz16:bool=False, scratch_base:int=0, ieee:bool=True, like:Stepper|None=None,
               vgprs:int|None=None):
    """like: a stepper of the same code whose decoded instructions and translation this one shares (the waves of a
    dispatch: decoding and translating once, not per wave). vgprs: the VGPRs the wave has (the ones an M0-relative index
    may reach; default its register file, at most 256)."""
    self.insts = like.insts if like is not None else decode.walk(code, arch)
    self.code = like.code if like is not None else Code(code, self.insts, arch, lanes, ftz32, ftz16, ieee)
    self.state = state if state is not None else WaveState.empty(lanes)
    self.mem = mem if mem is not None else AddressSpace("stepper")
    self.pgm, self.scratch_base, self.steps, self.name = pgm, scratch_base, 0, ""
    self.wave = OneWave(self, min(VGPRS, self.state.vgpr.shape[0]) if vgprs is None else vgprs)
    self.blocks = self.code.build(self.wave)[1]  # the whole-chunk form of each block, bound to this wave

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
    """Run the instruction at the PC: its block, on this wave's registers (its SGPRs written back once it completes)."""
    if self.done: return
    inst, pc, st, S = self.instruction(), self.pc, self.state, self.wave.S
    if isinstance(inst, Bad): raise instruction_error(inst.reason, self.pgm, pc)
    self.name = decode.op_name(inst).lower()
    S[:, 0] = st.sgpr
    try:
      with np.errstate(all="ignore"): nxt = int(np.asarray(self.blocks[self.code.index[pc]](1)).flat[0])
    except Unsupported as e: raise instruction_error(failure(inst, str(e)), self.pgm, pc) from None
    st.sgpr[:] = S[:, 0]
    if nxt < 0: st.done = True
    else: st.pc = self.code.pcs[nxt]
    self.count()

  def count(self): self.steps += 1

  def run(self, budget:int=10**7) -> WaveState:
    """Step until s_endpgm; more than budget instructions raise InstructionBudgetExceeded."""
    while not self.done:
      if self.steps >= budget:
        raise InstructionBudgetExceeded(f"stepper: ran past {budget} instructions (at PC 0x{self.pgm + self.pc:x})")
      self.step()
    return self.state
