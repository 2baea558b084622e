"""The mock machine of one process: its virtual files, its GPUs, their queues and the doorbells that wake them.

Each process (each pytest-xdist worker) gets its own, built on first use. Command processors register as queues;
`kick()` runs every runnable queue of every device until none makes progress, so a queue waiting on a signal that
another queue (or device) will write simply yields and is resumed by the next pass.
"""
from __future__ import annotations
import bisect, collections, importlib, logging, sys
from typing import Callable, Protocol
from mockgpu.vfs import VFS
from mockgpu import config

log = logging.getLogger("mockgpu")

class Queue(Protocol):
  name:str
  def step(self) -> bool:
    """Process commands until blocked or empty; True if anything was consumed."""

# the driver models that populate the machine; each has install(system)
DRIVERS = ("mockgpu.driver.host_pci", "mockgpu.driver.am_pci", "mockgpu.driver.kfd", "mockgpu.driver.nvidia")

class System:
  def __init__(self):
    self.vfs = VFS()
    self.queues:list[Queue] = []
    self._watch_starts:list[int] = []
    self._watches:list[tuple[int, int, Callable[[int, int], None]]] = []
    self._running = False
    self._windows:dict[int, tuple[int, Callable, Callable]] = {}
    self.devices:dict[str, list] = {}  # vendor -> device models, filled by drivers
    for name in DRIVERS: importlib.import_module(name).install(self)

  # *** doorbells and MMIO ***
  def watch(self, addr:int, size:int, callback:Callable[[int, int], None]):
    """Call callback(address, value) whenever the runtime writes through an MMIOInterface inside [addr, addr+size)."""
    i = bisect.bisect_right(self._watch_starts, addr)
    self._watch_starts.insert(i, addr)
    self._watches.insert(i, (addr, addr + size, callback))

  def unwatch(self, addr:int):
    i = bisect.bisect_left(self._watch_starts, addr)
    if i < len(self._watch_starts) and self._watch_starts[i] == addr:
      self._watch_starts.pop(i)
      self._watches.pop(i)

  def watcher(self, addr:int, size:int) -> Callable[[int, int], None]|None:
    i = bisect.bisect_right(self._watch_starts, addr) - 1
    if i >= 0 and (w:=self._watches[i])[0] <= addr and addr + size <= w[1]: return w[2]
    return None

  # *** register windows: MMIO whose every access goes to a device model (AM's BAR5) ***
  def add_window(self, addr:int, size:int, read:Callable[[int], int], write:Callable[[int, int], None]):
    """Route every MMIOInterface access inside [addr, addr+size) to read(offset) / write(offset, value) (dword offsets in bytes)."""
    self._windows[addr] = (size, read, write)

  def window(self, addr:int, size:int):
    for start, (wsize, read, write) in self._windows.items():
      if start <= addr and addr + size <= start + wsize: return start, read, write
    return None

  # *** scheduling ***
  def add_queue(self, q:Queue): self.queues.append(q)
  def remove_queue(self, q:Queue):
    if q in self.queues: self.queues.remove(q)

  def poll(self, addr:int|None=None):
    """The runtime read or wrote a signal from the CPU (bridge.SignalMMIOInterface): re-step the queues blocked on
    memory the host may have written (a queue with a true `blocked`), and let each device with a `poll_check` raise
    what it owes the runtime (the failures of that pass, a fault of the GPU that owns `addr`)."""
    if self._running: return
    if any(getattr(q, "blocked", False) for q in self.queues): self.kick()
    for devs in self.devices.values():
      for d in devs:
        if (check:=getattr(d, "poll_check", None)) is not None: check(addr)

  def kick(self):
    """Run all queues until none progresses. Re-entrant calls (a queue ringing a doorbell) fold into the running pass."""
    if self._running: return
    self._running = True
    try:
      progress = True
      while progress:
        progress = False
        for q in list(self.queues): progress |= bool(q.step())
    finally: self._running = False

# launches, waves/threads, instructions and seconds per ISA, for the demo and the benchmarks. Process-wide, not per
# System: MOCK+CUDA launches kernels without the HCQ machine.
stats:collections.Counter = collections.Counter()
_KEYS:dict[str, tuple[str, ...]] = {}

def record_launch(isa:str, groups:int, instructions:int, seconds:float, thread_instructions:int|None=None):
  """Executors report each launch: `groups` are waves (RDNA) or threads (PTX), `instructions` wave- or warp-instructions,
  `thread_instructions` (PTX) the instructions summed over the threads that executed them."""
  if (keys:=_KEYS.get(isa)) is None:
    keys = _KEYS[isa] = tuple(f"{isa}.{k}" for k in ("thread_instructions", "launches", "groups", "instructions", "seconds"))
  if thread_instructions is not None: stats[keys[0]] += thread_instructions
  stats[keys[1]] += 1
  stats[keys[2]] += groups
  stats[keys[3]] += instructions
  stats[keys[4]] += seconds

_system:System|None = None
def get() -> System:
  global _system
  if _system is None: _system = System()
  return _system
