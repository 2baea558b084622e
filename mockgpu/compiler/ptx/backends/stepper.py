"""The PTX reference stepper: one CTA of a kernel, one instruction at a time, its whole state visible and restorable.

Each instruction is its semantics row as the numpy backend renders it for a divergent block (backends/numpy.py, the
masked variant: every write through the mask `_m`), compiled alone. The stepper runs that code over the CTA's threads
in a namespace holding the registers (by their python names), the carry flag, the special registers and the launch
environment `_E` (compiler/ptx/backends/numpy_runtime.Env: the memories through the device's checked AddressSpace, the warp-wide
helpers, the instruction budget), and moves each thread's pc itself. No op's meaning is written here
(tests/compiler/ptx/test_ptx_stepper.py scans for per-op code).

Scheduling (what keeps divergence and barriers right):
- A step advances one warp by one instruction: the warp's live threads at its lowest pc (block, index). This is the
  numpy path's min-PC order restricted to one warp, so divergent lanes reconverge where their paths join and a
  warp-wide instruction (shfl, vote, redux) sees the same lanes on both.
- A warp whose lowest pc is a bar.sync waits there. When every warp with live threads waits, one step runs the barrier
  for all threads at it (bar.red reduces over them); exited threads do not take part, as on the other paths.
- The warp stepped is the current one while it can run, else the next one in order that can. Results equal the other
  paths' for race-free kernels: threads meet only at barriers, in warp-wide instructions and through memory.

Time travel: `step()` records what it changed (the register bindings: the rendered code never writes an array in
place, so a shallow copy of the namespace is the whole register file; the pcs; the counters; the environment's journal
of overwritten memory), and `undo()` restores it exactly. An instruction that raises (a page fault, a trap, the budget)
changes nothing: the state stays at that instruction for a post-mortem.

  st = Stepper(program_of(fn, layout), env, names)   # emulators/ptx.stepper(...) builds one for a launch
  st.step(); st.pc; st.line; st.reg("%r3"); st.undo(); st.run()
"""
from __future__ import annotations
from dataclasses import dataclass, field
import numpy as np
from mockgpu.errors import GPUPageFault, MockGPUError
from mockgpu.compiler.ptx import syntax as P
from mockgpu.compiler.ptx.types import np_dtype
from mockgpu.compiler.ptx.blocks import Block, split_blocks, ENDS_BLOCK, BARRIERS
from mockgpu.compiler.ptx.layout import Layout
from mockgpu.compiler.ptx.backends.numpy import Ctx, emit_instr, special_prologue

@dataclass
class Program:
  """One kernel's instructions, each compiled alone from its row; blocks as the other backends cut them."""
  fn: P.Function
  layout: Layout
  blocks: list[Block]
  code: list[list]                 # [block][index] -> code object of that instruction
  consts: dict[str, str]           # name -> expression of the constants the code reads
  prologue: object                 # code object: the special registers from _E

  @property
  def exit_block(self) -> int: return len(self.blocks)
  def instr(self, block:int, index:int) -> P.Instr: return self.blocks[block].instrs[index]

def program_of(fn:P.Function, layout:Layout) -> Program:
  """Render every instruction of fn from its row (unsupported ones raise here, as they do when a module is loaded)."""
  blocks = split_blocks(fn.body)
  consts: dict[str, str] = {}
  cx = Ctx(fn, layout, consts)
  for b in blocks:
    for lb in b.labels: cx.labels[lb] = b.index
  cx.exit_block, cx.masked_block = len(blocks), True
  code = []
  for b in blocks:
    cx.block, cx.fused = b, {}
    row = []
    for ins in b.instrs:
      cx.lines, cx.indent, cx.mask = [], 0, "_m"
      emit_instr(cx, ins, b.index + 1)
      row.append(compile("\n".join(cx.lines) or "pass", f"<PTX line {ins.line}: {ins.text}>", "exec"))
    code.append(row)
  prologue = compile("\n".join(special_prologue()), "<PTX special registers>", "exec")
  return Program(fn, layout, blocks, code, {name: expr for expr, name in consts.items()}, prologue)

@dataclass
class Change:
  """What one step changed, to undo it: the namespace before it, the pcs, the current warp, the counters, and the
  environment's journal of the memory it overwrote."""
  names: dict
  blk: np.ndarray
  idx: np.ndarray
  warp: int
  counters: list
  journal: list = field(default_factory=list)

@dataclass
class Stepped:
  """One step: the warp it advanced (None: a barrier released every warp), the instruction and the threads that ran it."""
  warp: int|None
  block: int
  index: int
  threads: np.ndarray              # bool per thread of the CTA
  instr: P.Instr

class Stepper:
  """One CTA of threads in warps of warp_size (the board's). `env` is the launch environment of this CTA alone (its
  `n` threads); `names` the run-time names the rendered code calls (compiler/ptx/backends/numpy_names.py). An env
  with begin_journal/end_journal/restore records the memory each step overwrites (for undo); without them undo restores
  registers and pcs only."""
  def __init__(self, program:Program, env, names:dict, warp_size:int, history:bool=True, cta:tuple[int, int, int]=(0, 0, 0)):
    self.program, self.env, self.history, self.warp_size, self.cta = program, env, history, warp_size, cta
    self.n = env.n
    self.globals = {"np": np, **names}
    for name, expr in program.consts.items(): self.globals[name] = eval(expr, self.globals)
    self.names: dict = {"_E": env, "_N": env.n, "_cc": np.zeros(self.n, np.uint32)}
    exec(program.prologue, self.globals, self.names)
    for r in program.fn.regs.values(): self.names[r.name] = np.zeros(self.n, np_dtype(r.type))
    self.by_ptx = {r.ptx: r for r in program.fn.regs.values()}
    self.blk, self.idx = np.zeros(self.n, np.int32), np.zeros(self.n, np.int32)
    self.lens = np.array([len(b.instrs) for b in program.blocks] + [1 << 30], np.int64)
    self.warp_of = np.arange(self.n) // warp_size
    self.nwarps = -(-self.n // warp_size)
    self.warp = 0
    self.steps = 0
    self.changes: list[Change] = []
    self._settle(np.ones(self.n, bool))

  # *** where the threads are ***
  @property
  def done(self) -> bool: return bool((self.blk == self.program.exit_block).all())
  def live(self) -> np.ndarray: return self.blk != self.program.exit_block
  def _keys(self) -> np.ndarray:
    """Each thread's pc as one number, ordered as (block, index)."""
    return self.blk.astype(np.int64) * (1 << 31) + self.idx
  @staticmethod
  def _pc_of(key:int) -> tuple[int, int]: return key >> 31, key & ((1 << 31) - 1)
  def warp_pc(self, w:int) -> tuple[int, int]|None:
    """The (block, index) the warp runs next: its live threads' lowest; None once they have all exited."""
    sel = (self.warp_of == w) & self.live()
    if not sel.any(): return None
    return self._pc_of(int(self._keys()[sel].min()))
  def warp_threads(self, w:int) -> np.ndarray:
    """The threads the warp's next step runs (bool per thread of the CTA)."""
    pc = self.warp_pc(w)
    if pc is None: return np.zeros(self.n, bool)
    return (self.warp_of == w) & (self.blk == pc[0]) & (self.idx == pc[1])
  @property
  def pc(self) -> tuple[int, int]|None:
    """The instruction the next step() runs (block, index): the current warp's, or the barrier every live warp waits
    at; None when the CTA is done."""
    if self.done: return None
    w = self._pick()
    return self._barrier_threads()[1] if w is None else self.warp_pc(w)
  @property
  def instr(self) -> P.Instr|None:
    pc = self.pc
    return None if pc is None else self.program.instr(*pc)
  @property
  def line(self) -> int|None:
    """The PTX source line of the current warp's next instruction."""
    i = self.instr
    return None if i is None else i.line
  def _waits(self, w:int) -> bool:
    pc = self.warp_pc(w)
    if pc is None: return False
    ins = self.program.instr(*pc)
    return ins.op in BARRIERS and "arrive" not in ins.mods
  def _pick(self) -> int|None:
    """The warp to step: the current one while it can run, else the next that can; None: every live warp waits at
    a barrier (or none is live)."""
    for k in range(self.nwarps):
      w = (self.warp + k) % self.nwarps
      if self.warp_pc(w) is not None and not self._waits(w): return w
    return None

  # *** state ***
  def reg(self, name:str) -> np.ndarray:
    """A register for every thread of the CTA, by its PTX name (%r3, %fd1, %p2) in its declared type."""
    r = self.by_ptx.get(name)
    if r is None: raise KeyError(f"kernel {self.program.fn.name} has no register {name}")
    return np.broadcast_to(self.names[r.name], (self.n,))
  def registers(self) -> dict[str, np.ndarray]: return {p: self.reg(p) for p in self.by_ptx}
  def lane(self, thread:int) -> tuple[int, int]:
    """(warp, lane) of a thread of the CTA."""
    return divmod(thread, self.warp_size)
  @property
  def carry(self) -> np.ndarray: return np.broadcast_to(self.names["_cc"], (self.n,))
  @property
  def shared(self) -> np.ndarray: return self.env.shared[0]

  # *** moving ***
  def step(self, warp:int|None=None) -> Stepped:
    """Run one instruction for one warp (default: the one the scheduler picks; a given warp that waits at a barrier
    every live warp has reached runs the barrier for the CTA). Raises what the instruction raises, the state left at
    it."""
    if self.done: raise StopIteration(f"the CTA of kernel {self.program.fn.name} has exited")
    w = self._pick() if warp is None else warp
    if w is not None and self._waits(w):
      if self._pick() is not None: raise ValueError(f"warp {w} waits at a barrier other warps have not reached")
      w = None
    if w is None: threads, pc = self._barrier_threads()
    elif (pc := self.warp_pc(w)) is None: raise ValueError(f"warp {w} has exited")
    else: threads = self.warp_threads(w)
    change = self._change()
    try: self._run(pc, threads)
    except BaseException as e:
      self._restore(change, self._journal(False))
      if isinstance(e, GPUPageFault) and hasattr(self.env, "fault_context"):   # names the CTA and the first culprit thread
        culprits = self.culprits(w)
        self.env.fault_context(e, culprits[0] if culprits else None)
      raise
    change.journal = self._journal(False)
    if self.history: self.changes.append(change)
    if w is not None: self.warp = w
    self.steps += 1
    return Stepped(w, pc[0], pc[1], threads, self.program.instr(*pc))

  def runnable(self, warp:int) -> bool:
    """Whether the warp can run an instruction now: it has live threads, and a barrier holds it only until every
    live warp has reached one."""
    if self.warp_pc(warp) is None: return False
    return not self._waits(warp) or self._pick() is None

  def culprits(self, warp:int|None=None) -> list[int]:
    """The threads whose own execution of the warp's next instruction raises (a post-mortem names them): each one is
    run alone, then undone."""
    w = self._pick() if warp is None else warp
    threads, pc = (self._barrier_threads() if w is None else (self.warp_threads(w), self.warp_pc(w)))
    out = []
    for t in np.flatnonzero(threads).tolist():
      alone = np.zeros(self.n, bool)
      alone[t] = True
      change = self._change()
      try: self._run(pc, alone)
      except MockGPUError: out.append(t)
      finally: self._restore(change, self._journal(False))
    return out

  def _change(self) -> Change:
    """The record of the state before a step; journaling of its memory writes starts."""
    change = Change(dict(self.names), self.blk.copy(), self.idx.copy(), self.warp, list(self.env.counters))
    self._journal(True)
    return change

  def _barrier_threads(self) -> tuple[np.ndarray, tuple[int, int]]:
    """Every live warp waits at a barrier: the threads at the lowest one run it together."""
    live = self.live()
    k = int(self._keys()[live].min())
    return live & (self._keys() == k), self._pc_of(k)

  def _run(self, pc:tuple[int, int], m:np.ndarray):
    ins = self.program.instr(*pc)
    self.names["_m"] = m
    self.names["_pc"] = self.blk.copy()
    self.env.tick(1, m)
    with np.errstate(all="ignore"): exec(self.program.code[pc[0]][pc[1]], self.globals, self.names)
    if ins.op in ENDS_BLOCK:
      self.blk[m] = np.asarray(self.names["_pc"])[m]
      self.idx[m] = 0
    else: self.idx[m] += 1
    self._settle(m)

  def _settle(self, m:np.ndarray):
    """Threads past the end of their block go to the next one (falling through, skipping empty blocks)."""
    while (end := m & (self.idx >= self.lens[self.blk])).any():
      self.blk[end] += 1
      self.idx[end] = 0

  def run(self, max_steps:int|None=None) -> int:
    """Step until the CTA is done (or max_steps); the number of steps."""
    k = 0
    while not self.done and (max_steps is None or k < max_steps):
      self.step()
      k += 1
    return k

  def undo(self) -> bool:
    """Return exactly to the state before the last step; False when there is none to undo."""
    if not self.changes: return False
    c = self.changes.pop()
    self._restore(c, c.journal)
    self.steps -= 1
    return True

  def _restore(self, c:Change, journal:list):
    if journal and hasattr(self.env, "restore"): self.env.restore(journal)
    self.names = dict(c.names)
    self.blk, self.idx, self.warp = c.blk, c.idx, c.warp
    self.env.counters[:] = c.counters

  def _journal(self, begin:bool) -> list:
    if not hasattr(self.env, "begin_journal"): return []
    if begin:
      self.env.begin_journal()
      return []
    return self.env.end_journal()
