"""A debugging session: breakpoints, the run of a debugged dispatch, its stops, and moving at a stop (step, reverse-step,
reverse-continue, finish). ISA-neutral: it drives a DebugTarget (target.py).

A dispatch is debugged (runs on the stepper) when its kernel's symbol matches a breakpoint's kernel pattern (fnmatch);
a breakpoint given no pattern (a condition, a watch) matches every kernel, so under it every dispatch runs on the
stepper. Other dispatches stay on their fast paths. At a stop the session calls on_stop(session, stop); whatever that
does with the session's movement methods happens inside the dispatch, and returning from it continues the dispatch.
"""
from __future__ import annotations
import fnmatch, itertools, time
from dataclasses import dataclass, field
import numpy as np
from mockgpu import config
from mockgpu.errors import EmulatorBug, GPUPageFault, InstructionBudgetExceeded, MockGPUError
from mockgpu.debug.target import Change, DebugTarget, Unit
from mockgpu.debug import buffers

from mockgpu import log

class ConditionError(MockGPUError, ValueError):
  """A breakpoint condition that does not evaluate: names the expression, the wave and the error."""

@dataclass
class Breakpoint:
  id:int
  kind:str                      # "launch", "pc", "condition", "watch"
  kernel:str = "*"              # fnmatch pattern over the kernel's symbol name
  pc:int|None = None            # "pc": the byte offset (RDNA) / PTX line the unit is about to run
  expr:str|None = None          # "condition": a Python expression over the unit's state (target.namespace)
  watch:tuple[int, int]|None = None   # "watch": [address, address + bytes)
  label:str = ""
  enabled:bool = True
  hits:int = 0
  code:object = field(default=None, repr=False)

  def matches(self, kernel:str) -> bool: return self.enabled and fnmatch.fnmatchcase(kernel, self.kernel)
  def describe(self) -> str:
    what = {"launch": "launch", "pc": f"at 0x{self.pc or 0:x}", "condition": f"if {self.expr}", "watch": f"watch {self.label}"}[self.kind]
    return f"#{self.id} {what} in {self.kernel}{'' if self.enabled else ' (disabled)'}, {self.hits} hits"

@dataclass
class Stop:
  """Why the dispatch stopped, and where."""
  kind:str                      # launch, break, condition, watch, fault, budget, start (reverse-continue's end)
  kernel:str
  unit:Unit
  pc:int
  message:str
  lanes:list[int] = field(default_factory=list)
  address:int|None = None
  breakpoint:Breakpoint|None = None
  error:BaseException|None = None

class Session:
  def __init__(self, on_stop=None, postmortem:bool|str=True):
    """on_stop(session, stop) is called at each stop. postmortem: stop at a fault or budget stop of a debugged dispatch
    (True), also debug every kernel matching this pattern (a str), or never (False)."""
    self.on_stop, self.postmortem = on_stop, postmortem
    self.breakpoints:list[Breakpoint] = []
    self.stops:list[Stop] = []
    self.target:DebugTarget|None = None
    self.log:list[Change] = []
    self.finishing = False
    self.faulted:BaseException|None = None   # the fault or budget stop the dispatch is stopped at (post-mortem)
    self.dispatches = 0
    self._ids = itertools.count(1)
    self._attached = None

  # *** breakpoints ***
  def _add(self, bp:Breakpoint) -> Breakpoint:
    self.breakpoints.append(bp)
    return bp
  def break_kernel(self, pattern:str) -> Breakpoint:
    """Stop at the launch of each kernel whose symbol matches pattern, before its first instruction."""
    return self._add(Breakpoint(next(self._ids), "launch", pattern))
  def break_at(self, pc:int, kernel:str="*") -> Breakpoint:
    """Stop when a wave of a matching kernel is about to run the instruction at byte offset pc."""
    return self._add(Breakpoint(next(self._ids), "pc", kernel, pc=pc))
  def break_if(self, expr:str, kernel:str="*") -> Breakpoint:
    """Stop after an instruction when expr holds for the wave that ran it. A per-lane bool array (shape [lanes], or
    [rows, lanes]: any row) holds where it is true in an active lane, and names those lanes."""
    try: code = compile(expr, "<condition>", "eval")
    except SyntaxError as e: raise ConditionError(f"condition {expr!r}: {e}") from None
    return self._add(Breakpoint(next(self._ids), "condition", kernel, expr=expr, code=code))
  def watch(self, what, size:int|None=None, kernel:str="*") -> Breakpoint:
    """Stop after a store into an address range: an address with size, a tinygrad Buffer or a realized Tensor."""
    va, n, label = buffers.resolve(what, size)
    return self._add(Breakpoint(next(self._ids), "watch", kernel, watch=(va, va + n), label=label))
  def delete(self, bp_id:int):
    self.breakpoints = [b for b in self.breakpoints if b.id != bp_id]

  def debugs(self, kernel:str) -> bool:
    """Whether a dispatch of this kernel runs on the stepper."""
    if isinstance(self.postmortem, str) and fnmatch.fnmatchcase(kernel, self.postmortem): return True
    return any(b.matches(kernel) for b in self.breakpoints)

  # *** attaching ***
  def __enter__(self) -> Session:
    """Intercept the executors' launches on the event bus (events.intercept; the adapters are imported here: a session
    may be built before any device exists)."""
    from mockgpu.debug import amd, cpu_target, ptx_target
    self._attached = (amd.attach(lambda mem, d: amd.run_debugged(self, mem, d)), ptx_target.attach(self), cpu_target.attach(self))
    return self
  def __exit__(self, *exc):
    from mockgpu.debug import amd, cpu_target, ptx_target
    amd.detach(self._attached[0])
    ptx_target.detach(self._attached[1])
    cpu_target.detach(self._attached[2])

  # *** running a debugged dispatch ***
  def run(self, target:DebugTarget) -> float:
    """Run the whole dispatch, stopping where the breakpoints say; returns the seconds it took."""
    t0 = time.perf_counter()
    self.target, self.log, self.finishing, self.faulted = target, [], False, None
    self.budget = config.instruction_budget()
    self.dispatches += 1
    try:
      if (bp:=next((b for b in self.breakpoints if b.kind == "launch" and b.matches(target.kernel)), None)) is not None:
        self.stopped(Stop("launch", target.kernel, target.selected, target.pc(), f"launch of {target.kernel}", breakpoint=bp))
      elif (stop:=self.check_start()) is not None: self.stopped(stop)
      while (unit:=target.next_unit()) is not None: self.advance(unit, check=not self.finishing)
    finally: self.target = None
    return time.perf_counter() - t0

  def advance(self, unit:Unit, check:bool=True) -> Change:
    """One instruction of unit, logged; with check, a stop when a breakpoint says so."""
    t = self.target
    try:
      if t.steps >= self.budget:
        raise InstructionBudgetExceeded(f"dispatch of {t.kernel} ran past MOCKGPU_BUDGET={self.budget} wave-instructions on the "
                                        f"debugger's stepper (at {t.location(unit)})")
      change = t.step(unit)
    except (GPUPageFault, InstructionBudgetExceeded) as e:
      self.post_mortem(unit, e)
      raise
    except Exception as e:
      if isinstance(e, (MockGPUError, NotImplementedError)): raise
      raise EmulatorBug(f"debugger: {type(e).__name__}: {e} stepping {t.location(unit)}") from e
    self.log.append(change)
    if check and (stop:=self.check(change)) is not None: self.stopped(stop)
    return change

  def check_start(self) -> Stop|None:
    """A pc breakpoint at the first instruction (nothing has run yet)."""
    t = self.target
    for b in self.breakpoints:
      if b.kind == "pc" and b.matches(t.kernel) and t.pc() == b.pc:
        return Stop("break", t.kernel, t.selected, t.pc(), f"breakpoint #{b.id} at 0x{b.pc:x}", breakpoint=b)
    return None

  def check(self, change:Change) -> Stop|None:
    """The stop the state after change calls for (change being the latest step), or None."""
    t, unit = self.target, change.unit
    for b in self.breakpoints:
      if not b.matches(t.kernel): continue
      if b.kind == "pc" and not t.done(unit) and t.pc(unit) == b.pc:
        return Stop("break", t.kernel, unit, t.pc(unit), f"breakpoint #{b.id} at 0x{b.pc:x}", breakpoint=b)
      if b.kind == "watch" and (stop:=self.watch_hit(b, change)) is not None: return stop
      if b.kind == "condition" and (lanes:=self.condition(b, change)) is not None:
        named = f": lanes {', '.join(map(str, lanes))}" if lanes else ""
        return Stop("condition", t.kernel, unit, change.pc, f"condition #{b.id} {b.expr!r} holds after 0x{change.pc:x}{named}",
                    lanes=lanes, breakpoint=b)
    return None

  def watch_hit(self, b:Breakpoint, change:Change) -> Stop|None:
    lo, hi = b.watch
    for wr in change.writes:
      end = wr.addrs + np.uint64(wr.old.dtype.itemsize)
      hit = np.flatnonzero((wr.addrs < np.uint64(hi)) & (end > np.uint64(lo)))
      if len(hit):
        lanes = sorted({int(l) for l in wr.lanes[hit] if l >= 0})
        addr = int(wr.addrs[hit[0]])
        return Stop("watch", self.target.kernel, change.unit, change.pc,
                    f"watch #{b.id} ({b.label}): store at 0x{addr:x} (offset {addr - lo}) by lanes {', '.join(map(str, lanes))}",
                    lanes=lanes, address=addr, breakpoint=b)
    return None

  def condition(self, b:Breakpoint, change:Change) -> list[int]|None:
    """The lanes named when b's expression holds after change (empty for a plain true), else None."""
    t = self.target
    ns = t.namespace(change.unit, change)
    try: r = eval(b.code, {}, ns)  # ns as locals: a mapping that computes names on first use
    except Exception as e:
      raise ConditionError(f"condition #{b.id} {b.expr!r} on {t.location(change.unit)}: {type(e).__name__}: {e}") from e
    a = np.asarray(r)
    if a.dtype == bool and a.ndim >= 1 and a.shape[-1] == t.lanes:
      lanes = a.reshape(-1, t.lanes).any(axis=0) & ns["active"]
      return [int(x) for x in np.flatnonzero(lanes)] if lanes.any() else None
    return [] if bool(r) else None

  def post_mortem(self, unit:Unit, e:BaseException):
    self.faulted = e
    if self.postmortem is False: return
    t = self.target
    kind, lane, addr = ("fault", -1, None) if isinstance(e, GPUPageFault) else ("budget", -1, None)
    msg = str(e)
    fault = getattr(getattr(t, "mem", None), "fault", None)
    if isinstance(e, GPUPageFault):
      addr = e.va
      if e.lane is not None: lane = e.lane
      elif fault is not None and fault[1] is e: lane = fault[0]
      msg = (f"{'write' if e.write else 'read'} of {e.size} bytes at 0x{e.va:x} faults"
             f"{f' in lane {lane}' if lane >= 0 else ''}; {buffers.nearest(t.mem.mem, e.va)}")
    t.select(unit)
    self.stopped(Stop(kind, t.kernel, unit, t.pc(unit), msg, lanes=[lane] if lane >= 0 else [], address=addr, error=e))

  def stopped(self, stop:Stop):
    if stop.breakpoint is not None: stop.breakpoint.hits += 1
    self.target.select(stop.unit)
    self.stops.append(stop)
    log.debug("debugger stop: %s", stop.message)
    if self.on_stop is not None: self.on_stop(self, stop)

  # *** moving, at a stop ***
  def _need_target(self) -> DebugTarget:
    if self.target is None: raise RuntimeError("no dispatch is stopped: the program is not inside a debugged dispatch")
    return self.target

  def step(self, n:int=1) -> int:
    """Run n instructions of the selected wave (others of its workgroup run first while it waits at a barrier);
    returns how many ran (fewer when it ends)."""
    t = self._need_target()
    if self.faulted is not None:
      raise RuntimeError(f"the dispatch stopped at: {self.faulted}; reverse-step and reverse-continue still go back")
    for i in range(n):
      if t.done(): return i
      while not t.runnable() and (nxt:=t.next_unit()) not in (None, t.selected): self.advance(nxt, check=False)
      self.advance(t.selected, check=False)
    return n

  def reverse_step(self, n:int=1) -> int:
    """Undo the last n instructions of the dispatch (any wave: the one undone is selected); returns how many."""
    t = self._need_target()
    for i in range(n):
      if not self.log: return i
      c = self.log.pop()
      t.undo(c)
      t.select(c.unit)
    return n

  def reverse_continue(self) -> Stop:
    """Undo instructions back to the latest state where a breakpoint would have stopped, or to the dispatch's start."""
    t = self._need_target()
    while self.log:
      self.reverse_step()
      if self.log and (stop:=self.check(self.log[-1])) is not None:
        t.select(stop.unit)
        return stop
    stop = self.check_start() or Stop("start", t.kernel, t.selected, t.pc(), f"the start of the dispatch of {t.kernel}")
    return stop

  def finish(self):
    """Run the rest of the dispatch without stopping (it still runs on the stepper); effective on return."""
    self._need_target()
    self.finishing = True

def session(break_kernel:str|None=None, break_at:int|None=None, condition:str|None=None, watch=None, kernel:str="*",
            on_stop=None, postmortem:bool|str=True) -> Session:
  """A Session with the given breakpoints; use it as a context manager around the tinygrad code to debug.

    with mockgpu.debug.session(break_kernel="r_*", on_stop=lambda dbg, stop: print(stop.message)) as dbg: ...
  """
  s = Session(on_stop, postmortem)
  if break_kernel is not None: s.break_kernel(break_kernel)
  if break_at is not None: s.break_at(break_at, break_kernel or kernel)
  if condition is not None: s.break_if(condition, kernel)
  if watch is not None: s.watch(*watch, kernel=kernel) if isinstance(watch, tuple) else s.watch(watch, kernel=kernel)
  return s
