"""The arm64 CPU lane's debugger adapter (DEV=MOCK+CPU): one program call (every core_id, one after another, as tinygrad's
CPUProgram runs them) stepped an instruction at a time under unicorn.

A unit is a core_id: (core_id, 0). Each unit has its own registers (x0-x30, sp, pc, nzcv, v0-v31), kept here as arrays
and loaded into the machine for each step, so a step of any unit can be undone exactly (its registers' old values and
the old bytes of each store, recorded by a write hook). Disassembly is capstone's. The buffers stay mapped for the whole
debugged call.
"""
from __future__ import annotations
import numpy as np
from mockgpu import events
from mockgpu.debug.target import Change, DebugTarget, Delta, MemoryWrite, Unit

class CpuTarget(DebugTarget):
  isa, lanes = "arm64", 1

  def __init__(self, program, args:list[int], bufs, cores:int):
    from mockgpu.emulators.arm64 import machine as mm
    self.m, self.prog, self.kernel, self.bufs = program.machine, program.prog, program.name, bufs
    self.steps, self.selected = 0, (0, 0)
    core = program.runtimevars.get("core_id")
    self.state:dict[Unit, dict] = {}
    for tid in range(cores):
      a = list(args)
      if core is not None: a[core] = tid
      self.state[(tid, 0)] = self._fresh(a, mm)

  def _fresh(self, args:list[int], mm) -> dict:
    x = np.zeros(31, np.uint64)
    x[:min(8, len(args))] = [v & mm.MASK64 for v in args[:8]]
    x[30] = mm.RETURN_ADDR
    stacked = args[8:]
    sp = mm.STACK_BASE + mm.STACK_SIZE - mm._align16(8 * len(stacked))
    return {"x": x, "v": np.zeros((32, 2), np.uint64), "sp": sp, "pc": self.prog.base, "nzcv": 0, "stack": stacked}

  # *** the machine's registers <-> a unit's arrays ***
  def _load(self, s:dict):
    import struct
    uc, a = self.m.uc, self.m.reg
    for i in range(29): uc.reg_write(a.UC_ARM64_REG_X0 + i, int(s["x"][i]))
    uc.reg_write(a.UC_ARM64_REG_X29, int(s["x"][29]))
    uc.reg_write(a.UC_ARM64_REG_X30, int(s["x"][30]))
    for i in range(32): uc.reg_write(a.UC_ARM64_REG_V0 + i, int(s["v"][i][0]) | int(s["v"][i][1]) << 64)
    uc.reg_write(a.UC_ARM64_REG_SP, s["sp"])
    uc.reg_write(a.UC_ARM64_REG_NZCV, s["nzcv"])
    if s["stack"] and s["pc"] == self.prog.base:  # the unit's first instruction: its stacked arguments go in place
      uc.mem_write(s["sp"], struct.pack(f"<{len(s['stack'])}Q", *(v & (2**64 - 1) for v in s["stack"])))

  def _save(self, s:dict):
    uc, a = self.m.uc, self.m.reg
    regs = [a.UC_ARM64_REG_X0 + i for i in range(29)] + [a.UC_ARM64_REG_X29, a.UC_ARM64_REG_X30]
    s["x"] = np.array([uc.reg_read(r) for r in regs], np.uint64)
    s["v"] = np.array([[(q:=uc.reg_read(a.UC_ARM64_REG_V0 + i)) & (2**64 - 1), q >> 64] for i in range(32)], np.uint64)
    s["sp"], s["pc"], s["nzcv"] = uc.reg_read(a.UC_ARM64_REG_SP), uc.reg_read(a.UC_ARM64_REG_PC), uc.reg_read(a.UC_ARM64_REG_NZCV)

  # *** the protocol ***
  def units(self) -> list[Unit]: return list(self.state)
  def select(self, unit:Unit):
    if unit not in self.state: raise KeyError(f"{self.kernel} has core_id 0..{len(self.state) - 1}, not {unit[0]}")
    self.selected = unit
  def done(self, unit:Unit|None=None) -> bool:
    from mockgpu.emulators.arm64.machine import RETURN_ADDR
    return self.state[unit or self.selected]["pc"] == RETURN_ADDR
  def next_unit(self) -> Unit|None: return next((u for u in self.state if not self.done(u)), None)
  def runnable(self, unit:Unit|None=None) -> bool:
    u = unit or self.selected
    return not self.done(u) and self.next_unit() == u  # core_ids run one after another
  def pc(self, unit:Unit|None=None) -> int: return self.state[unit or self.selected]["pc"] - self.prog.base

  def step(self, unit:Unit|None=None) -> Change:
    from unicorn import UC_HOOK_MEM_WRITE, UcError
    u = unit or self.selected
    s = self.state[u]
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
    writes:list[MemoryWrite] = []
    def on_write(uc, access, addr, size, value, _):
      old = np.frombuffer(bytes(uc.mem_read(addr, size)), np.uint8).copy()
      writes.append(MemoryWrite(np.arange(addr, addr + size, dtype=np.uint64), old, np.zeros(size, np.uint8), np.zeros(size, np.int64)))
    self._load(s)
    h = self.m.uc.hook_add(UC_HOOK_MEM_WRITE, on_write)
    try:
      self.m.pending, self.m.bad, self.m.args = None, None, self.bufs
      try: self.m.uc.emu_start(s["pc"], 0xffff_ffff_ffff_fffc, count=1)
      except UcError as e: raise self.m._fault(self.prog, str(e), pc=s["pc"]) from None
      if self.m.pending is not None: raise self.m.pending
    finally: self.m.uc.hook_del(h)
    self._save(s)
    self.steps += 1
    arrays = {k: d for k in ("x", "v") if (d:=Delta.between(before[k], s[k])) is not None}
    return Change(u, before["pc"] - self.prog.base, arrays, {k: before[k] for k in ("sp", "pc", "nzcv")}, writes)

  def undo(self, change:Change):
    s = self.state[change.unit]
    for k, d in change.arrays.items(): d.undo(s[k])
    s.update(change.scalars)
    for w in reversed(change.writes): self.m.uc.mem_write(int(w.addrs[0]), w.old.tobytes())
    self.steps -= 1

  def location(self, unit:Unit|None=None) -> str:
    u = unit or self.selected
    if self.done(u): return f"core_id {u[0]}: returned"
    return f"core_id {u[0]} at {self.kernel}+0x{self.pc(u):x}: {self._text(self.state[u]['pc'])}"

  def _text(self, addr:int) -> str:
    from mockgpu.emulators.arm64.lint import disassemble_one
    return disassemble_one(bytes(self.m.uc.mem_read(addr, 4)), addr)

  def disassembly(self, unit:Unit|None=None, before:int=3, after:int=5) -> list[tuple[int, str, bool]]:
    u = unit or self.selected
    here = self.pc(u) if not self.done(u) else self.prog.size
    lo, hi = max(0, here - 4 * before), min(self.prog.size, here + 4 * (after + 1))
    return [(off, self._text(self.prog.base + off), off == here) for off in range(lo - lo % 4, hi, 4)]

  def registers(self, unit:Unit|None=None) -> dict[str, object]:
    s = self.state[unit or self.selected]
    return {"x": s["x"].copy(), "sp": s["sp"], "pc": s["pc"], "nzcv": s["nzcv"], "v": s["v"].copy()}

  def namespace(self, unit:Unit|None=None, change:Change|None=None) -> dict[str, object]:
    r = self.registers(unit)
    ns = {"x": r["x"], "v": r["v"], "sp": r["sp"], "pc": r["pc"] - self.prog.base, "nzcv": r["nzcv"], "np": np,
          "written": change is not None and bool(change.writes), "active": np.ones(1, bool), "lane": 0}
    ns.update({f"x{i}": int(r["x"][i]) for i in range(31)})
    return ns

  def read_memory(self, addr:int, size:int) -> bytes: return bytes(self.m.uc.mem_read(addr, size))
  def snapshot(self) -> object: return {u: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()} for u, s in self.state.items()}
  def restore(self, snap:object): self.state = {u: dict(s) for u, s in snap.items()}

def registers_text(t:CpuTarget) -> str:
  """x0-x30, sp, pc, nzcv, four to a line, then v0-v31 as 128-bit hex."""
  r = t.registers()
  names = [(f"x{i}", int(r["x"][i])) for i in range(31)] + [("sp", r["sp"]), ("pc", r["pc"]), ("nzcv", r["nzcv"])]
  rows = ["  ".join(f"{n:<4s} 0x{v:016x}" for n, v in names[i:i + 4]) for i in range(0, len(names), 4)]
  rows += ["  ".join(f"v{i:<3d} 0x{int(r['v'][i][1]):016x}{int(r['v'][i][0]):016x}" for i in range(j, j + 2)) for j in range(0, 32, 2)]
  return "\n".join(rows)

def run_debugged(session, program, args, bufs, cores:int) -> bool:
  """The lane's debug hook: run the call under the session when it debugs this kernel (True), else False."""
  if not session.debugs(program.name): return False
  from mockgpu.emulators.arm64.machine import _merge
  from unicorn import UC_PROT_READ, UC_PROT_WRITE
  m = program.machine
  spans = _merge(bufs)
  for lo, hi in spans: m.uc.mem_map_ptr(lo, hi - lo, UC_PROT_READ | UC_PROT_WRITE, lo)
  try: session.run(CpuTarget(program, args, bufs, cores))
  finally:
    for lo, hi in spans: m.uc.mem_unmap(lo, hi - lo)
  return True

def attach(session):
  """Run the lane's calls of the kernels the session debugs under it (events.intercept); returns what detach() takes back."""
  events.intercept("cpu_call", run := lambda *a: run_debugged(session, *a) or None)  # None: not this session's kernel
  return run

def detach(run): events.unintercept("cpu_call", run)
