"""The errors the mock raises. Each names its culprit: the ioctl, the packet and its queue offset, the instruction and its PC."""

class MockGPUError(RuntimeError):
  """Base of every error mockgpu raises on purpose."""

class Unmodelled(MockGPUError, NotImplementedError):
  """A feature real hardware or a real driver has that the mock does not model (a mode, a packet option, a launch
  form): names the feature. Every "unsupported" outcome is this type or one of its subclasses."""

class UnsupportedIoctl(Unmodelled):
  """An ioctl (or RM class, control command, CUDA call) the driver model does not model."""

class PacketError(MockGPUError):
  """A malformed or unknown command-processor packet: names the queue, the ring offset and the opcode."""

class UnsupportedInstruction(Unmodelled):
  """An instruction (or modifier) the executor does not implement: names it and its PC or PTX line."""

class InvalidInstruction(UnsupportedInstruction):
  """An instruction the ISA does not define (a reserved opcode or operand encoding, a register index past the register
  file): not a gap of the mock, hardware raises an illegal-instruction exception. Names the word, its PC and the kernel.
  A subclass of UnsupportedInstruction, as the PTX front end's InvalidPTX is, so callers of either see it."""

class KernelTrap(MockGPUError):
  """A kernel executed a trap instruction (PTX `trap`, RDNA `s_trap`) with no debugger attached: the launch stops. On
  AMD the trap handler KFD installs reports it to the runtime as a queue error, as a page fault is reported (the
  queue stops; tinygrad sees the device's exception event). Names the kernel, the instruction and its PC or PTX
  line, and on AMD the trap ID."""

class InstructionBudgetExceeded(MockGPUError):
  """A kernel ran past the configured instruction budget (MOCKGPU_BUDGET): it probably never ends."""

class GPUPageFault(MockGPUError):
  """An emulated memory access outside the device's allocations: its address and size (the whole access of the lane:
  16 bytes for a b128 store) and, as the layers above add them (add_context), the kernel, who made the access
  (AMD: workgroup, wave, lane; NVIDIA: CTA and thread) and the nearest allocation with the offset into it."""
  CONTEXT = ("kernel", "workgroup", "wave", "lane", "cta", "thread", "nearest")

  def __init__(self, va:int, size:int, write:bool, where:str="", space:str="global", **context):
    """space: "global" (va is a GPU virtual address; the nearest allocation means something) or the window or array
    the offset va is in ("LDS", "scratch", "shared", "local", "param", "module")."""
    self.va, self.size, self.write, self.where, self.space = va, size, write, where, space
    for k in self.CONTEXT: setattr(self, k, context.get(k))
    super().__init__(self.report())

  def add_context(self, **context):
    """Fill in what the raising layer did not know (fields already set stay), and say it in the message."""
    for k, v in context.items():
      if getattr(self, k) is None: setattr(self, k, v)
    self.args = (self.report(),)
    return self

  def report(self) -> str:
    who = ", ".join(f"{k} {_dims(v)}" for k in ("kernel", "workgroup", "wave", "lane", "cta", "thread") if (v:=getattr(self, k)) is not None)
    return (f"GPU page fault: {'write' if self.write else 'read'} of {self.size} bytes at 0x{self.va:x} is outside every allocation"
            + (f" ({self.where})" if self.where else "") + (f"; {who}" if who else "") + (f"; {self.nearest}" if self.nearest else ""))

  def fields(self) -> dict:
    """The report as data (the trace's `fault` event)."""
    return {"address": self.va, "size": self.size, "write": self.write, "where": self.where, "space": self.space,
            **{k: list(v) if isinstance(v, tuple) else v for k in self.CONTEXT if (v:=getattr(self, k)) is not None}}

def _dims(v) -> str: return f"({', '.join(map(str, v))})" if isinstance(v, tuple) else str(v)

class LaunchRefused(MockGPUError, ValueError):
  """A launch the board's limits refuse (block, grid, shared memory), as the hardware would: names the kernel and board."""

class EmulatorBug(MockGPUError):
  """An exception in mockgpu's own code that is not a modelled outcome: a bug in mockgpu, not in the kernel. Its message
  names the kernel (vendor/ISA, symbol), the instruction and its PC or PTX line, the grid and block, the path (numpy or
  C) and the replay file that `mockgpu replay FILE` re-runs; the original exception is its __cause__."""
  def __init__(self, message:str, replay_file:str|None=None, symbol:str="", path:str=""):
    super().__init__(message)
    self.replay_file, self.symbol, self.path = replay_file, symbol, path
  def __reduce__(self): return (type(self), (str(self), self.replay_file, self.symbol, self.path))

class DispatchTooLarge(Unmodelled):
  """A dispatch or launch larger than the emulator can hold (its workgroups, or the work-items of one workgroup): not a
  hardware outcome but the emulator's own limit, raised at the executor's entry before anything is allocated. Names
  the grid, the workgroup and the limit. (MOCKGPU_BUDGET bounds a dispatch's time; this bounds its memory.)"""

class ListenerFailed(MockGPUError):
  """A listener of the executors' reports (events.listen: the launch counters, coverage) raised: a bug in mockgpu, not
  in the kernel. Names the listener and the report's kind; the listener's exception is its __cause__."""
