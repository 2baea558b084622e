"""A mock machine: its virtual files, its GPUs, their queues, the doorbells that wake them and its kernel executors.

The bridge (bridge.py, the composition root) builds the one machine of a tinygrad process and installs each driver
on it; a driver builds its devices with the machine, and each device receives its executor (System.rdna, System.ptx)
when it is built. Nothing reaches up to a process-wide machine: several can live in one process (tests build their
own). Command processors register as queues;
`kick()` runs every runnable queue of every device until none makes progress, so a queue waiting on a signal that
another queue (or device) will write simply yields and is resumed by the next pass.
"""
from __future__ import annotations
import bisect, collections, weakref
from typing import Callable, Protocol
from mockgpu.vfs import VFS
from mockgpu import coverage, events


class Queue(Protocol):
  name:str
  def step(self) -> bool:
    """Process commands until blocked or empty; True if anything was consumed."""

class Executor:
  """A kernel executor as a device receives it when built: an executor module (emulators/rdna: Dispatch, run_dispatch;
  emulators/ptx: load_module, launch, launch_fields), imported at its first use, since copies and signals need none.
  Attributes are looked up on the module at each use, so a test may stand a recording function in for one."""
  def __init__(self, load:Callable[[], object]): self._load, self._module = load, None
  def __getattr__(self, name:str): return getattr(self._module or self._loaded(), name)
  def _loaded(self):
    self._module = self._load()
    return self._module

def _rdna():
  from mockgpu.emulators import rdna
  return rdna

def _ptx():
  from mockgpu.emulators import ptx
  return ptx

class Devices(dict):
  """vendor -> device models, filled by drivers; a vendor whose driver is deferred (System.defer) is installed at the
  first lookup of its key."""
  def __init__(self):
    super().__init__()
    self.deferred:dict[str, Callable[[], None]] = {}
  def __missing__(self, vendor:str):
    if (install:=self.deferred.pop(vendor, None)) is None: raise KeyError(vendor)
    install()
    return self[vendor]

class System:
  """One machine. rdna, ptx: the executors its devices are built with (default: the real ones, imported lazily)."""
  def __init__(self, rdna=None, ptx=None):
    self.vfs = VFS()
    self.queues:list[Queue] = []
    self._watch_starts:list[int] = []
    self._watches:list[tuple[int, int, Callable[[int, int], None]]] = []
    self._running = False
    self._windows:dict[int, tuple[int, Callable, Callable]] = {}
    self.devices = Devices()  # vendor -> device models, filled by drivers
    # NV: signal address -> the channel groups (any NV GPU of this machine) whose work has released a semaphore there:
    # a wait fails fast only when every one of them has stopped on a fault (a signal address the runtime reuses, or
    # shares between groups, may still be written by a live one). nv_gpu.NVGPU.release and poll_check
    self.releasers:dict[int, weakref.WeakSet] = {}
    self.rdna = rdna if rdna is not None else Executor(_rdna)
    self.ptx = ptx if ptx is not None else Executor(_ptx)

  def defer(self, vendor:str, roots:list[str], install:Callable[[System], None]):
    """Install a driver at its first use: a lookup under one of `roots` (the paths its install claims) or of
    devices[vendor]. The bridge defers KFD so: its six GPUs and sysfs topology cost ~30 ms of every process's device
    open, a process on NVIDIA devices included."""
    done:list[bool] = []
    def once():
      if done: return
      done.append(True)
      install(self)
    self.vfs.defer(roots, once)
    self.devices.deferred[vendor] = once

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

# launches, waves/threads, instructions and seconds per ISA, for the demo and the benchmarks: the executors' `launch`
# and `kernel_ran` reports (events.notify), counted from the moment this module is imported. Process-wide, not per
# System: MOCK+CUDA launches kernels without the HCQ machine.
stats:collections.Counter = collections.Counter()
_KEYS:dict[str, tuple[str, ...]] = {}

def _count_launch(r:dict):
  """A `launch` report: `groups` are waves (RDNA) or threads (PTX), `instructions` wave- or warp-instructions,
  `thread_instructions` (PTX) the instructions summed over the threads that executed them."""
  if (keys:=_KEYS.get(isa:=r["isa"])) is None:
    keys = _KEYS[isa] = tuple(f"{isa}.{k}" for k in ("thread_instructions", "launches", "groups", "instructions", "seconds"))
  if (ti:=r["thread_instructions"]) is not None: stats[keys[0]] += ti
  stats[keys[1]] += 1
  stats[keys[2]] += r["groups"]
  stats[keys[3]] += r["instructions"]
  stats[keys[4]] += r["seconds"]

def _count_native(r:dict):
  stats[f"{r['isa']}.{'native' if r['native'] else 'numpy'}_launches"] += 1  # [native] tests count both (tests/conftest.py)

events.listen("launch", _count_launch)
events.listen("kernel_ran", _count_native)
coverage.listen()
