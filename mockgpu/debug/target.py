"""What the debugger asks of an instruction set: one dispatch (launch) stepped one instruction of one wave (warp) at a
time, its state visible, each step's changes recorded so that it can be undone.

An adapter per ISA implements DebugTarget (amd.py: RDNA over compiler/rdna/backends/stepper.py; ptx_target.py: PTX
over compiler/ptx/backends/stepper.py). The session (session.py), the views (view.py) and the command line (repl.py)
see only this protocol.

A unit is what one instruction advances: an RDNA wave, a PTX warp. Units are named by (group, index): the workgroup
(CTA) as its linear index in the grid, and the wave (warp) in it.
"""
from __future__ import annotations
from dataclasses import dataclass, field
import numpy as np

Unit = tuple[int, int]  # (workgroup / CTA linear index, wave / warp index in it)

@dataclass
class Delta:
  """The old contents of the elements of one array one step changed (flat indices): what undoing the step puts back."""
  index:np.ndarray
  old:np.ndarray

  @staticmethod
  def between(before:np.ndarray, after:np.ndarray) -> Delta|None:
    """The elements that differ, with their values before; None when nothing changed."""
    if before.shape != after.shape: raise ValueError(f"undo log: an array changed shape {before.shape} -> {after.shape}")
    idx = np.flatnonzero(before != after)
    return Delta(idx, before.reshape(-1)[idx].copy()) if len(idx) else None

  def undo(self, arr:np.ndarray): arr.reshape(-1)[self.index] = self.old

@dataclass
class MemoryWrite:
  """A store one step made: the element addresses, the values they held before (same dtype) and the lane of each."""
  addrs:np.ndarray
  old:np.ndarray
  new:np.ndarray
  lanes:np.ndarray

@dataclass
class Change:
  """What one step of one unit changed: enough to undo it exactly, never a copy of the whole state."""
  unit:Unit
  pc:int                                             # the unit's PC before the step: the instruction it ran
  arrays:dict[str, Delta] = field(default_factory=dict)   # register files, LDS / shared memory, private memory
  scalars:dict[str, object] = field(default_factory=dict) # small per-unit fields before the step (done, barrier count)
  writes:list[MemoryWrite] = field(default_factory=list)  # global memory, in order

class DebugTarget:
  """One dispatch under the debugger. Adapters implement every method; the docstrings are the contract."""
  isa:str = "?"          # "rdna3", "rdna4", "ptx"
  kernel:str = "?"       # the kernel's symbol name
  lanes:int = 0          # lanes per wave (threads per warp)
  selected:Unit = (0, 0)

  def units(self) -> list[Unit]:
    """Every unit of the dispatch, in the order the dispatch runs them."""
    raise NotImplementedError
  def select(self, unit:Unit):
    """Make unit the one the views show and step() advances (its group's units are set up if they were not yet)."""
    raise NotImplementedError
  def next_unit(self) -> Unit|None:
    """The unit the dispatch would run next (barriers respected); None when every unit has ended."""
    raise NotImplementedError
  def runnable(self, unit:Unit|None=None) -> bool:
    """Whether unit may run an instruction now (it has not ended and no barrier holds it)."""
    raise NotImplementedError
  def step(self, unit:Unit|None=None) -> Change:
    """Run one instruction of unit (default: the selected one) and return what it changed. A fault or a budget stop
    raises with the unit's state as it was at the instruction."""
    raise NotImplementedError
  def undo(self, change:Change):
    """Put back what change changed (the most recent change first)."""
    raise NotImplementedError
  def pc(self, unit:Unit|None=None) -> int:
    """The unit's next instruction: a byte offset from the kernel entry (RDNA), a PTX line (PTX)."""
    raise NotImplementedError
  def done(self, unit:Unit|None=None) -> bool:
    raise NotImplementedError
  def location(self, unit:Unit|None=None) -> str:
    """The unit's next instruction as text, with its place."""
    raise NotImplementedError
  def disassembly(self, unit:Unit|None=None, before:int=3, after:int=5) -> list[tuple[int, str, bool]]:
    """(pc, text, is the unit's pc) of the instructions around the unit's PC."""
    raise NotImplementedError
  def registers(self, unit:Unit|None=None) -> dict[str, object]:
    """The unit's state by name: register files as arrays ([registers, lanes] for per-lane ones), masks as ints,
    LDS / shared memory as bytes."""
    raise NotImplementedError
  def namespace(self, unit:Unit|None=None, change:Change|None=None) -> dict[str, object]:
    """The names a condition (a Python expression, evaluated with this mapping as its locals) sees for unit; change is
    the step just run (for `written`)."""
    raise NotImplementedError
  def read_memory(self, addr:int, size:int) -> bytes:
    """Global memory as the dispatch sees it (a miss raises GPUPageFault)."""
    raise NotImplementedError
  def snapshot(self) -> object:
    """The whole state of the dispatch's units (not global memory), for restore()."""
    raise NotImplementedError
  def restore(self, snap:object):
    raise NotImplementedError
