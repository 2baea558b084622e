"""The RDNA adapter: a whole dispatch on the reference stepper (compiler/rdna/backends/stepper.py), every workgroup and
wave of it, so that a debugged dispatch leaves memory as the fast paths would.

Workgroups run in the dispatch's order; a workgroup's waves share one LDS and are set up when it is first reached
(executor.stepper: registers as the SPI sets them). The next wave to run is the first live one of the lowest unfinished
workgroup that is not held at a barrier: a wave at its n-th s_barrier (s_barrier_wait on RDNA4) passes it once every
live wave of its workgroup has reached its n-th barrier or gone past it, as hardware releases a barrier when all
non-terminated waves arrive.

Each step is recorded as a Change: the SGPR, VGPR, LDS and private-memory elements it changed (found by comparing
with the state before the step) and the global-memory stores it made (the old values, saved by RecordingMemory
before the store), so reverse-step puts them back exactly.
"""
from __future__ import annotations
import math
import numpy as np
from mockgpu import events
from mockgpu.errors import GPUPageFault
from mockgpu.memory import AddressSpace
from mockgpu.compiler.rdna import decode
from mockgpu.compiler.rdna.operands import M0
from mockgpu.emulators.rdna import executor
from mockgpu.emulators.rdna.dispatch import Dispatch, DispatchStats
from mockgpu.debug.target import Change, DebugTarget, Delta, MemoryWrite, Unit

class RecordingMemory:
  """The stepper's view of the AddressSpace: a store saves what it overwrites (and which lane wrote each element),
  a fault notes its lane; everything else is the AddressSpace's own."""
  def __init__(self, mem:AddressSpace):
    self.mem, self.writes, self.lanes, self.stepper = mem, [], np.zeros(0, np.int64), None
    self.fault:tuple[int, GPUPageFault]|None = None   # (lane or -1 for a scalar access, the fault) of the last step
  def __getattr__(self, name): return getattr(self.mem, name)
  # the stepper runs the numpy path's memory helpers, which read and write a mapping through a view of it when one
  # mapping holds every lane's access: said to hold none, they go through load and store, which record
  def is_mapped(self, va:int, size:int=1) -> bool: return False

  def lane_of(self, addrs:np.ndarray, i:int) -> int:
    """The lane of element i of a global/flat load or store (the stepper lists every active lane's elements, lane by
    lane); -1 where that is not known (scalar loads, atomics and buffer accesses, which pass other lists)."""
    name = getattr(self.stepper, "name", "")
    if not name.startswith(("global_", "flat_")) or "atomic" in name: return -1
    if len(self.lanes) == 0 or len(addrs) % len(self.lanes): return -1
    return int(self.lanes[i // (len(addrs) // len(self.lanes))])

  def _faulted(self, e:GPUPageFault, addrs:np.ndarray):
    hit = np.flatnonzero(addrs.astype(np.uint64) == np.uint64(e.va))
    self.fault = (self.lane_of(addrs, int(hit[0])) if len(hit) else -1, e)

  def load(self, addrs:np.ndarray, dtype, where:str="") -> np.ndarray:
    try: return self.mem.load(addrs, dtype, where)
    except GPUPageFault as e:
      self._faulted(e, addrs)
      raise

  def store(self, addrs:np.ndarray, values:np.ndarray, where:str=""):
    values = np.asarray(values)
    try:
      self.mem.locate(addrs, values.dtype.itemsize, True, where)  # a write fault, before anything is read or written
      old = self.mem.load(addrs, values.dtype, where)
    except GPUPageFault as e:
      self._faulted(e, addrs)
      raise
    self.mem.store(addrs, values, where)
    lanes = np.array([self.lane_of(addrs, i) for i in range(len(addrs))], np.int64)
    self.writes.append(MemoryWrite(np.asarray(addrs, np.uint64).copy(), old, values.copy(), lanes))

class Wave:
  """One wave's stepper, where it is in its workgroup's barriers, and its place in the dispatch."""
  def __init__(self, stepper, unit:Unit):
    self.st, self.unit, self.barriers = stepper, unit, 0
  @property
  def state(self): return self.st.state
  def at_barrier(self) -> bool:
    inst = self.st.instruction()
    return not self.st.done and not isinstance(inst, decode.Bad) and decode.op_name(inst) in decode.BARRIERS

class AMDTarget(DebugTarget):
  """A dispatch of an RDNA kernel on the stepper."""
  def __init__(self, mem:AddressSpace, d:Dispatch, kernel:str):
    self.d, self.kernel, self.isa, self.lanes = d, kernel, d.arch, d.wave_size
    self.mem = RecordingMemory(mem)
    self.groups = [int(g) for g in d.workgroup_ids()]
    self.waves_per_group = -(-math.prod(d.block) // self.lanes)
    self.nvgpr = max(executor.load_program(mem, d.arch, d.pgm_addr, *executor._float_modes(d.rsrc1), self.lanes).nvgpr, 1)
    self.waves:dict[Unit, Wave] = {}
    self.like = None           # the first wave's stepper: the others share its decoded code
    self.first_live = 0        # index into groups of the lowest workgroup that may still have a live wave
    self.selected = (self.groups[0], 0) if self.groups else (0, 0)
    self.steps = 0

  # *** units ***
  def units(self) -> list[Unit]: return [(g, w) for g in self.groups for w in range(self.waves_per_group)]

  def group(self, g:int) -> list[Wave]:
    """The waves of workgroup g, set up (sharing one LDS) the first time it is asked for."""
    if (g, 0) not in self.waves:
      if g not in self.groups: raise KeyError(f"workgroup {g} is not in this dispatch (workgroups {self.groups[0]}..{self.groups[-1]})")
      waves = []
      for w in range(self.waves_per_group):
        self.like = executor.stepper(self.mem, self.d, g, w, self.nvgpr, like=self.like)
        waves.append(Wave(self.like, (g, w)))
      for w in waves[1:]: w.st.state.lds = waves[0].st.state.lds
      for w in waves: self.waves[w.unit] = w
    return [self.waves[(g, w)] for w in range(self.waves_per_group)]

  def wave(self, unit:Unit|None=None) -> Wave:
    g, w = unit or self.selected
    if not 0 <= w < self.waves_per_group: raise KeyError(f"wave {w} is not in a workgroup of {self.waves_per_group} waves")
    return self.group(g)[w]

  def select(self, unit:Unit):
    self.wave(unit)
    self.selected = unit

  def may_run(self, w:Wave, peers:list[Wave]) -> bool:
    if w.st.done: return False
    if not w.at_barrier(): return True
    return all(p.st.done or p.barriers > w.barriers or (p.barriers == w.barriers and p.at_barrier()) for p in peers)

  def runnable(self, unit:Unit|None=None) -> bool:
    w = self.wave(unit)
    return self.may_run(w, self.group(w.unit[0]))

  def next_unit(self) -> Unit|None:
    while self.first_live < len(self.groups):
      peers = self.group(self.groups[self.first_live])
      for w in peers:
        if self.may_run(w, peers): return w.unit
      if not all(w.st.done for w in peers):
        raise RuntimeError(f"debugger: workgroup {self.groups[self.first_live]} has live waves but none may run")  # an EmulatorBug
      self.first_live += 1
    return None

  # *** stepping and undoing ***
  def step(self, unit:Unit|None=None) -> Change:
    w = self.wave(unit)
    st = w.state
    before = {name: getattr(st, name).copy() for name in ("sgpr", "vgpr", "lds", "scratch") if getattr(st, name).size}
    change = Change(w.unit, st.pc, scalars={"done": st.done, "barriers": w.barriers, "steps": w.st.steps})
    passing = w.at_barrier()
    self.mem.writes, self.mem.fault, self.mem.lanes, self.mem.stepper = change.writes, None, np.nonzero(st.active())[0], w.st
    try: w.st.step()
    except GPUPageFault as e:  # the report the fast paths give: kernel, workgroup, wave, lane, nearest allocation
      lane = self.mem.fault[0] if self.mem.fault is not None and self.mem.fault[1] is e and self.mem.fault[0] >= 0 else None
      e.add_context(kernel=self.kernel, workgroup=self.d.workgroup(w.unit[0]), wave=w.unit[1], lane=lane,
                    nearest=self.mem.mem.nearest(e.va) if e.space == "global" else None)
      raise
    if passing: w.barriers += 1
    for name, old in before.items():
      if (delta:=Delta.between(old, getattr(st, name))) is not None: change.arrays[name] = delta
    self.steps += 1
    return change

  def undo(self, change:Change):
    w = self.wave(change.unit)
    st = w.state
    for name, delta in change.arrays.items(): delta.undo(getattr(st, name))
    for wr in reversed(change.writes): self.mem.mem.store(wr.addrs, wr.old)
    st.pc, st.done, w.barriers, w.st.steps = change.pc, change.scalars["done"], change.scalars["barriers"], change.scalars["steps"]
    self.first_live = min(self.first_live, self.groups.index(change.unit[0]))
    self.steps -= 1

  # *** views ***
  def pc(self, unit:Unit|None=None) -> int: return self.wave(unit).st.pc
  def done(self, unit:Unit|None=None) -> bool: return self.wave(unit).st.done

  def text(self, pc:int) -> str:
    inst = self.wave().st.insts.get(pc)
    if inst is None: return "(not decoded: no path from the entry reaches it)"
    return f"<bad word 0x{inst.word:08x}: {inst.reason}>" if isinstance(inst, decode.Bad) else decode.describe(inst)

  def location(self, unit:Unit|None=None) -> str:
    w = self.wave(unit)
    pc = w.st.pc
    where = "ended" if w.st.done else f"0x{pc:04x} (PC 0x{self.d.pgm_addr + pc:x})"
    return f"{self.kernel} workgroup {w.unit[0]} wave {w.unit[1]}: {where}: {self.text(pc)}"

  def disassembly(self, unit:Unit|None=None, before:int=3, after:int=5) -> list[tuple[int, str, bool]]:
    w = self.wave(unit)
    pcs = sorted(w.st.insts)
    i = pcs.index(w.st.pc) if w.st.pc in pcs else 0
    return [(pc, self.text(pc), pc == w.st.pc) for pc in pcs[max(0, i - before): i + after + 1]]

  def registers(self, unit:Unit|None=None) -> dict[str, object]:
    st = self.wave(unit).state
    return {"s": st.sgpr, "v": st.vgpr, "exec": st.exec, "vcc": st.vcc, "scc": st.scc, "m0": int(st.sgpr[M0]),
            "lds": st.lds, "pc": st.pc}

  def namespace(self, unit:Unit|None=None, change:Change|None=None) -> dict[str, object]:
    """Computed on first use (a condition is evaluated after every instruction and reads a few of these)."""
    w = self.wave(unit)
    st = w.state
    def readonly(a):
      a = a.view()
      a.flags.writeable = False
      return a
    def written():
      rows = np.zeros(0, np.int64)
      if change is not None and (delta:=change.arrays.get("vgpr")) is not None and change.unit == w.unit:
        rows = np.unique(delta.index // self.lanes)
      return rows
    return Names(HELPERS, v=lambda: readonly(st.vgpr), s=lambda: readonly(st.sgpr), exec=lambda: st.exec, vcc=lambda: st.vcc,
                 scc=lambda: st.scc, m0=lambda: int(st.sgpr[M0]), lds=lambda: readonly(st.lds), pc=lambda: st.pc,
                 lane=lambda: np.arange(self.lanes), active=st.active, workgroup=lambda: w.unit[0], wave=lambda: w.unit[1],
                 written=lambda: readonly(st.vgpr)[written()], written_regs=lambda: [int(r) for r in written()])

  def read_memory(self, addr:int, size:int) -> bytes: return self.mem.mem.read(addr, size)

  def snapshot(self) -> object:
    return {u: (w.state.copy(), w.barriers, w.st.steps) for u, w in self.waves.items()}

  def restore(self, snap:object):
    for u, (state, barriers, steps) in snap.items():
      w = self.waves[u]
      w.st.state, w.barriers, w.st.steps = state.copy(), barriers, steps
    for g in {u[0] for u in snap}:  # the copies hold LDS apart: share the workgroup's again
      waves = [self.waves[(g, i)] for i in range(self.waves_per_group)]
      for w in waves[1:]: w.st.state.lds = waves[0].st.state.lds
    self.first_live = 0

class Names(dict):
  """A condition's names: fixed ones, and the others computed when the expression first reads them."""
  def __init__(self, fixed:dict, **makers):
    super().__init__(fixed)
    self.makers = makers
  def __missing__(self, name:str):
    if name not in self.makers: raise KeyError(name)
    value = self[name] = self.makers[name]()
    return value

# *** the predicate namespace's helpers: views of register bits ***
def _u32(x): return np.asarray(x, np.uint32)
HELPERS = {
  "f32": lambda x: _u32(x).view(np.float32), "i32": lambda x: _u32(x).view(np.int32), "u32": _u32,
  "f16": lambda x: (_u32(x) & 0xffff).astype(np.uint16).view(np.float16),
  "f16hi": lambda x: (_u32(x) >> 16).astype(np.uint16).view(np.float16),
  "f64": lambda lo, hi: (_u32(lo).astype(np.uint64) | _u32(hi).astype(np.uint64) << np.uint64(32)).view(np.float64),
  "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "np": np,
}

def run_debugged(session, mem:AddressSpace, d:Dispatch) -> DispatchStats|None:
  """The executor's debug hook: a dispatch of a kernel the session debugs runs on the stepper; others return None."""
  name = executor.kernel_name(d.pgm_addr)
  if not session.debugs(name): return None
  target = AMDTarget(mem, d, name)
  seconds = session.run(target)
  return DispatchStats(len(target.groups) * target.waves_per_group, target.steps, seconds)  # the executor reports it

def attach(run):
  """Offer the RDNA executor's dispatches to run(mem, d) -> DispatchStats|None (events.intercept); returns what
  detach() takes back."""
  events.intercept("rdna_dispatch", run)
  return run

def detach(run): events.unintercept("rdna_dispatch", run)
