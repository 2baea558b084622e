"""The PTX adapter of the debugger: a whole launch on the PTX reference stepper (compiler/ptx/backends/stepper.py),
one warp of one CTA per step, so that a debugged launch leaves memory as the fast paths would.

CTAs run in launch order (x fastest), each set up when first reached (emulators.ptx.stepper: special registers,
parameters and memories as launch() gives them). Inside a CTA the stepper's scheduler decides: a warp's live threads
at its lowest pc run together; a warp at bar.sync waits until every live warp of its CTA is at one, and then stepping
any of them runs the barrier for all. A unit is (CTA linear index, warp).

Each step is a target.Change whose scalars hold the stepper's own record (the namespace of registers before the step,
the pcs, the counters) and whose writes are the global stores the step made (from the journal: the old bytes, read
before the store), so reverse-step is the stepper's undo. The PTX line is the pc.
"""
from __future__ import annotations
import numpy as np
from mockgpu import events
from mockgpu.errors import GPUPageFault
from mockgpu.emulators import ptx
from mockgpu.emulators.ptx import Launch, LaunchStats
from mockgpu.boards import selected_nv_board
from mockgpu.debug.target import Change, DebugTarget, MemoryWrite, Unit

FORMATS = {"x": np.uint32, "u": np.uint32, "d": np.int32, "f": np.float32}

class FaultNote:
  """What the session reads of a faulting step: the AddressSpace (`mem`, for the nearest allocation) and (lane, fault)."""
  def __init__(self, mem):
    self.mem, self.fault = mem, None

class PTXTarget(DebugTarget):
  """A launch of a PTX kernel on the stepper."""
  isa = "ptx"

  def __init__(self, launch:Launch):
    self.launch, self.kernel = launch, launch.kernel.name
    self.lanes = selected_nv_board().warp_size   # the board launch() runs on by default
    self.mem = FaultNote(launch.mem)
    self.ctas = ptx.ctas(tuple(launch.grid))
    self.warps = -(-int(np.prod(launch.block)) // self.lanes)
    self.steppers:dict[int, object] = {}
    self.first_live = 0
    self.selected:Unit = (0, 0)
    self.steps = 0
    self.fault_threads:list[int] = []   # the CTA threads whose own access faults, at a post-mortem
    self.source = launch.kernel.module.text.splitlines()

  # *** units ***
  def units(self) -> list[Unit]: return [(c, w) for c in range(len(self.ctas)) for w in range(self.warps)]
  def cta(self, c:int):
    """CTA c's stepper, set up the first time it is asked for."""
    if c not in self.steppers:
      if not 0 <= c < len(self.ctas): raise KeyError(f"CTA {c} is not in this launch of {len(self.ctas)} CTAs")
      self.steppers[c] = ptx.stepper(self.launch, self.ctas[c])
    return self.steppers[c]
  def _unit(self, unit:Unit|None) -> Unit:
    c, w = unit or self.selected
    if not 0 <= w < self.warps: raise KeyError(f"warp {w} is not in a CTA of {self.warps} warps")
    return c, w
  def select(self, unit:Unit):
    c, w = self._unit(unit)
    self.cta(c)
    self.selected = (c, w)
  def next_unit(self) -> Unit|None:
    while self.first_live < len(self.ctas):
      st = self.cta(self.first_live)
      if not st.done:
        w = st._pick()
        return self.first_live, w if w is not None else next(w for w in range(self.warps) if st.warp_pc(w) is not None)
      self.first_live += 1
    return None
  def runnable(self, unit:Unit|None=None) -> bool:
    c, w = self._unit(unit)
    return self.cta(c).runnable(w)
  def done(self, unit:Unit|None=None) -> bool:
    c, w = self._unit(unit)
    return self.cta(c).warp_pc(w) is None

  # *** moving ***
  def step(self, unit:Unit|None=None) -> Change:
    c, w = self._unit(unit)
    st = self.cta(c)
    line = self.pc((c, w))
    self.mem.fault = None
    try: s = st.step(w)
    except GPUPageFault as e:
      culprits = st.culprits(w)
      self.mem.fault = (culprits[0] % self.lanes if culprits else -1, e)
      self.fault_threads = culprits
      raise
    self.steps += 1
    before = st.changes[-1].names
    written = [p for p, r in st.by_ptx.items() if before.get(r.name) is not st.names[r.name]]   # writes rebind, never mutate
    change = Change((c, w), line, scalars={"cta": c, "threads": s.threads, "written": written})
    for kind, va, old, thread in st.changes[-1].journal:
      if kind == "global":
        new = self.launch.mem.read(va, len(old))
        change.writes.append(MemoryWrite(np.array([va], np.uint64), np.frombuffer(old, f"V{len(old)}"),
                                         np.frombuffer(new, f"V{len(new)}"), np.array([thread % self.lanes], np.int64)))
    return change
  def undo(self, change:Change):
    st = self.cta(change.scalars["cta"])
    st.undo()
    self.steps -= 1
    self.first_live = min(self.first_live, change.scalars["cta"])

  # *** where ***
  def pc(self, unit:Unit|None=None) -> int:
    """The PTX line of the warp's next instruction (0 once it has exited)."""
    c, w = self._unit(unit)
    st = self.cta(c)
    pc = st.warp_pc(w)
    return 0 if pc is None else st.program.instr(*pc).line
  def location(self, unit:Unit|None=None) -> str:
    c, w = self._unit(unit)
    st = self.cta(c)
    pc = st.warp_pc(w)
    where = f"CTA {self.ctas[c]} warp {w}"
    if pc is None: return f"{where}: exited"
    ins = st.program.instr(*pc)
    return f"{where}: PTX line {ins.line}: {ins.text}"
  def disassembly(self, unit:Unit|None=None, before:int=3, after:int=5) -> list[tuple[int, str, bool]]:
    """The PTX source lines around the warp's line (instructions and labels as written)."""
    line = self.pc(unit)
    if not line: return []
    lo, hi = max(1, line - before), min(len(self.source), line + after)
    return [(n, self.source[n - 1].strip(), n == line) for n in range(lo, hi + 1)]

  # *** state ***
  def threads(self, unit:Unit|None=None) -> np.ndarray:
    """The CTA's thread indices of the warp (fewer in a CTA's last, partial warp)."""
    c, w = self._unit(unit)
    return np.arange(w * self.lanes, min((w + 1) * self.lanes, self.cta(c).n))
  def _lanes(self, v:np.ndarray, t:np.ndarray) -> np.ndarray:
    """Threads t's values as a row of the warp's lanes; lanes with no thread hold 0 (and are never active)."""
    out = np.zeros(self.lanes, v.dtype)
    out[:len(t)] = v[t]
    return out
  def registers(self, unit:Unit|None=None) -> dict[str, object]:
    """Every register of the warp by PTX name ([lanes] in its declared type; predicates as bool), the carry flag,
    the threads at the warp's pc (`active`, bool per lane) and the CTA's shared memory."""
    c, w = self._unit(unit)
    st, t = self.cta(c), self.threads(unit)
    out:dict[str, object] = {name: self._lanes(st.reg(name), t) for name in sorted(st.by_ptx, key=_natural)}
    out["carry"] = self._lanes(st.carry, t)
    out["active"] = self._lanes(st.warp_threads(w), t)
    out["shared"] = st.shared.tobytes()
    return out
  def namespace(self, unit:Unit|None=None, change:Change|None=None) -> dict[str, object]:
    """For conditions: each register without its % (r3, fd1, p2) over the warp's lanes; `regs` the bits of every
    32-bit register and `regs64` of every 64-bit one ([registers, lanes]); `written` the bits of the 32-bit registers
    the step just ran wrote (`written_regs` their names); f32/i32/u32/f64 views of such bits; `active` (the lanes the
    step ran, else those at the pc), `lane`, `tid`, `shared`, `isnan`, `np`."""
    c, w = self._unit(unit)
    st, t = self.cta(c), self.threads(unit)
    regs = {name: self._lanes(st.reg(name), t) for name in st.by_ptx}
    b32 = [v.view(np.uint32) for v in regs.values() if v.dtype.itemsize == 4]
    b64 = [v.view(np.uint64) for v in regs.values() if v.dtype.itemsize == 8]
    u32 = np.stack(b32) if b32 else np.zeros((0, self.lanes), np.uint32)
    u64 = np.stack(b64) if b64 else np.zeros((0, self.lanes), np.uint64)
    active = self._lanes(change.scalars["threads"] if change is not None else st.warp_threads(w), t)
    wrote = [p for p in (change.scalars["written"] if change is not None and change.unit == (c, w) else []) if regs[p].dtype.itemsize == 4]
    ns = {name.lstrip("%"): v for name, v in regs.items()}
    ns.update(HELPERS, regs=u32, regs64=u64, written=np.stack([regs[p].view(np.uint32) for p in wrote]) if wrote else u32[:0],
              written_regs=wrote, active=active,
              lane=np.arange(self.lanes), tid=np.arange(w * self.lanes, (w + 1) * self.lanes), shared=st.shared)
    return ns
  def read_memory(self, addr:int, size:int) -> bytes: return self.launch.mem.read(addr, size)
  def snapshot(self) -> object:
    return {c: (dict(st.names), st.blk.copy(), st.idx.copy(), st.warp, st.carry.copy(), st.shared.copy(),
                None if st.env.local is None else st.env.local.copy(), list(st.env.counters)) for c, st in self.steppers.items()}
  def restore(self, snap:object):
    for c, (names, blk, idx, warp, _, shared, local, counters) in snap.items():
      st = self.cta(c)
      st.names, st.blk, st.idx, st.warp = dict(names), blk.copy(), idx.copy(), warp
      st.shared[...] = shared
      if local is not None: st.env.local[...] = local
      st.env.counters[:] = counters

# views of register bits, as a condition writes them: isnan(f32(written))
HELPERS = {"f32": lambda x: np.asarray(x, np.uint32).view(np.float32), "i32": lambda x: np.asarray(x, np.uint32).view(np.int32),
           "u32": lambda x: np.asarray(x, np.uint32), "f64": lambda x: np.asarray(x, np.uint64).view(np.float64),
           "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "np": np}

def _natural(name:str):
  """%r2 before %r10."""
  head = name.rstrip("0123456789")
  return head, int(name[len(head):] or -1)

def thread_table(t:PTXTarget, reg:str, fmt:str="x", unit:Unit|None=None) -> str:
  """A register for every thread of a warp: its bits and, for fmt f/d, the value; '*' marks the threads at the pc."""
  r = t.registers(unit)
  if reg not in r: raise KeyError(f"kernel {t.kernel} has no register {reg}")
  tids = t.threads(unit)
  vals, active = np.asarray(r[reg])[:len(tids)], r["active"][:len(tids)]
  out = [f"{reg} ({vals.dtype}):"]
  for lane, (v, on, tid) in enumerate(zip(vals, active, tids)):
    bits = int(v.view(f"u{v.dtype.itemsize}")) if v.dtype.kind != "b" else int(v)
    shown = "" if fmt in ("x", "u") or v.dtype.kind == "b" else f"  {v.view(FORMATS[fmt]) if v.dtype.itemsize == 4 else v}"
    out.append(f"  lane {lane:2d} thread {int(tid):4d}{'*' if on else ' '} 0x{bits:0{2 * v.dtype.itemsize}x}{shown}")
  return "\n".join(out)

def stop_text(t:PTXTarget, message:str) -> str:
  """A stop as the command line shows it: why, where, and the PTX source around the line."""
  lines = [f"{'=>' if here else '  '} {n:5d}  {text}" for n, text, here in t.disassembly()]
  return "\n".join([f"stopped: {message}", f"{t.kernel} [ptx]: {t.location()}"] + lines)

def run_debugged(session, mem, k, grid, block, params, dynamic_shared) -> LaunchStats|None:
  """The PTX executor's debug hook: the launch on the stepper under the session, or None (the fast paths) for a kernel
  the session does not debug."""
  if not session.debugs(k.name): return None
  target = PTXTarget(Launch(mem, k, tuple(grid), tuple(block), bytes(params), dynamic_shared))
  seconds = session.run(target)
  threads = int(np.prod(grid)) * int(np.prod(block))
  return LaunchStats(threads, target.steps, sum(int(st.env.counters[1]) for st in target.steppers.values()), seconds)

def attach(session):
  """Send the launches of the kernels the session debugs to the stepper (events.intercept); returns what detach()
  takes back."""
  events.intercept("ptx_launch", run := lambda *a: run_debugged(session, *a))
  return run

def detach(run): events.unintercept("ptx_launch", run)
