"""One AArch64 machine (unicorn) per process that runs tinygrad's arm64 CPU kernels.

Memory. tinygrad's buffers are mapped for the length of one call, at their own host addresses (mem_map_ptr over the
host pages), so the pointers tinygrad passes need no translation, and nothing else of the host is visible. The
emulator's own regions (kernel code, external-call stubs, the stack, the return page) lie above the host's user address
range (x86-64: below 0x8000_0000_0000), so they can never collide with a buffer. An access anywhere else stops the
kernel with a CPUKernelFault naming the kernel and offset, the instruction (capstone), the access and the argument
(dataN) it lies past or before. Mapping is page-granular: MOCKGPU_SANITIZE=memory adds a check of each buffer's last
page, so an access past a buffer's exact end faults too (a Python memory hook on that page only: it is slow).

External calls. A kernel's undefined symbols resolve (tinygrad's jit_loader, link_libs) to slots of a stub page; the
stubs (memset, memcpy, memmove) run in Python on the emulated memory, and a symbol with no stub is refused when the
kernel loads, naming it.

Runaway kernels. A call that runs MOCKGPU_CPU_TIMEOUT seconds without returning is stopped by the watchdog and raises
CPUKernelHang naming the kernel, the core_id, the PC and the instruction there.
"""
from __future__ import annotations
import ctypes, os, struct, threading, time
from dataclasses import dataclass
from mockgpu import config
from mockgpu.errors import InstructionBudgetExceeded, MockGPUError, Unmodelled, UnsupportedInstruction
from mockgpu.hostmem import PAGE  # unicorn maps whole pages; the lane maps the buffers' host pages at their host addresses


CODE_BASE = 0x9000_0000_0000     # above the host's user range (x86-64 and arm64 Linux: 47/48-bit user addresses)
STUB_BASE = 0xA000_0000_0000
STACK_BASE, STACK_SIZE = 0xB000_0000_0000, 1 << 20
RETURN_ADDR = 0xC000_0000_0000  # LR for each call: emu_start runs until the kernel returns here
MASK64 = (1 << 64) - 1
RET = bytes.fromhex("c0035fd6")  # ret

class CPUKernelFault(MockGPUError):
  """An arm64 kernel's memory access outside tinygrad's buffers (or past a buffer's exact end under
  MOCKGPU_SANITIZE=memory), or an emulator stop: names the kernel and offset, the instruction, the access (read, write,
  fetch; address and size) and the dataN argument the address lies past or before, by how many bytes."""
  def __init__(self, message:str, kernel:str="", offset:int|None=None, address:int|None=None, write:bool=False,
               argument:str|None=None, distance:int|None=None):
    super().__init__(message)
    self.kernel, self.offset, self.address, self.write, self.argument, self.distance = kernel, offset, address, write, argument, distance

class CPUKernelHang(InstructionBudgetExceeded):
  """An arm64 kernel call ran MOCKGPU_CPU_TIMEOUT seconds without returning (it probably never ends): names the
  kernel, the core_id, the PC and the instruction it stopped at (capstone)."""
  def __init__(self, message:str, kernel:str="", offset:int|None=None, seconds:float=0.0):
    super().__init__(message)
    self.kernel, self.offset, self.seconds = kernel, offset, seconds

class UnknownExternalSymbol(Unmodelled):
  """A kernel calls a function outside itself that the arm64 lane has no stub for (only memset, memcpy, memmove)."""

def _align(n:int) -> int: return (n + PAGE - 1) // PAGE * PAGE

@dataclass
class Loaded:
  """A kernel's image in the emulator."""
  name:str
  base:int
  size:int

@dataclass
class Arg:
  """A buffer argument of one call: its name (dataN), host address and size in bytes."""
  name:str
  addr:int
  size:int

class StubTable:
  """link_libs for tinygrad's jit_loader: getattr(table, symbol) is the address of the symbol's stub slot."""
  def __init__(self, machine:Machine, kernel:str): self.machine, self.kernel = machine, kernel
  def __getattr__(self, sym:str):
    if sym.startswith("__") and sym.endswith("__") and sym not in STUBS: raise AttributeError(sym)  # Python's own probes
    if sym not in STUBS:
      raise UnknownExternalSymbol(f"arm64 kernel {self.kernel} calls external symbol {sym!r}: the arm64 lane has stubs only for "
                                  f"{', '.join(sorted(STUBS))}")
    return ctypes.c_void_p(STUB_BASE + 4 * sorted(STUBS).index(sym))

def _memset(m:Machine, x0:int, x1:int, x2:int) -> int:
  m.uc.mem_write(x0, bytes([x1 & 0xff]) * x2)
  return x0
def _memcpy(m:Machine, x0:int, x1:int, x2:int) -> int:
  m.uc.mem_write(x0, bytes(m.uc.mem_read(x1, x2)))  # read whole, then write: memmove's overlap rule holds for both
  return x0
STUBS = {"memset": _memset, "memcpy": _memcpy, "memmove": _memcpy}

class Machine:
  def __init__(self, cpu:str):
    from unicorn import Uc, UC_ARCH_ARM64, UC_MODE_ARM, UC_PROT_READ, UC_PROT_WRITE, UC_PROT_EXEC, UC_HOOK_CODE, UC_HOOK_MEM_INVALID
    from unicorn import arm64_const as a
    self.uc, self.cpu, self.loaded, self.code_top = Uc(UC_ARCH_ARM64, UC_MODE_ARM), cpu, [], CODE_BASE
    # cortex-a72 runs on unicorn's A72 model (an instruction the core lacks is undefined there, as on the chip); other
    # cores (apple-m1: ARMv8.5) on its MAX model
    self.uc.ctl_set_cpu_model(a.UC_CPU_ARM64_A72 if cpu == "cortex-a72" else a.UC_CPU_ARM64_MAX)
    self.uc.mem_map(STUB_BASE, PAGE, UC_PROT_READ | UC_PROT_EXEC)
    self.uc.mem_write(STUB_BASE, RET * (PAGE // 4))
    self.uc.mem_map(STACK_BASE, STACK_SIZE, UC_PROT_READ | UC_PROT_WRITE)
    self.uc.mem_map(RETURN_ADDR, PAGE, UC_PROT_READ | UC_PROT_EXEC)
    self.uc.hook_add(UC_HOOK_CODE, self._stub, begin=STUB_BASE, end=STUB_BASE + PAGE - 1)
    self.uc.hook_add(UC_HOOK_MEM_INVALID, self._invalid)
    self.reg = a
    self.pending:Exception|None = None
    self.bad:tuple[int, int, int]|None = None   # (unicorn access type, address, size) of the last invalid access
    self.args:list[Arg] = []
    self.watchdog = Watchdog(self.uc)

  # *** loading ***
  def load(self, name:str, link) -> Loaded:
    """link(base) -> the relocated image (tinygrad's jit_loader); mapped read+execute with an unmapped guard page after it."""
    from unicorn import UC_PROT_READ, UC_PROT_EXEC
    image = link(self.code_top)
    size = _align(len(image))
    self.uc.mem_map(self.code_top, size, UC_PROT_READ | UC_PROT_EXEC)
    self.uc.mem_write(self.code_top, image)
    prog = Loaded(name, self.code_top, len(image))
    self.loaded.append(prog)
    self.code_top += size + PAGE
    return prog

  # *** calls ***
  def call(self, prog:Loaded, args:list[int], bufs:list[Arg], core:int=0):
    """Run prog(args) once (AAPCS64: x0-x7, the rest on the stack) with bufs mapped at their own addresses, for at most
    MOCKGPU_CPU_TIMEOUT seconds (the watchdog)."""
    from unicorn import UC_PROT_READ, UC_PROT_WRITE, UcError
    spans = _merge(bufs)
    for lo, hi in spans: self.uc.mem_map_ptr(lo, hi - lo, UC_PROT_READ | UC_PROT_WRITE, lo)
    hooks = self._sanitize_hooks(bufs)
    try:
      a = self.reg
      for i, v in enumerate(args[:8]): self.uc.reg_write(a.UC_ARM64_REG_X0 + i, v & MASK64)
      stacked = args[8:]
      sp = STACK_BASE + STACK_SIZE - _align16(8 * len(stacked))
      if stacked: self.uc.mem_write(sp, struct.pack(f"<{len(stacked)}Q", *(v & MASK64 for v in stacked)))
      self.uc.reg_write(a.UC_ARM64_REG_SP, sp)
      self.uc.reg_write(a.UC_ARM64_REG_LR, RETURN_ADDR)
      self.pending, self.bad, self.args = None, None, bufs
      seconds = config.setting("MOCKGPU_CPU_TIMEOUT")
      self.watchdog.arm(seconds)
      try: self.uc.emu_start(prog.base, RETURN_ADDR)
      except UcError as e: raise self._fault(prog, str(e)) from None
      finally: self.watchdog.disarm()
      if self.pending is not None: raise self.pending
      # emu_start returned without an error short of the return address: only the watchdog's emu_stop does that
      if (pc:=self.uc.reg_read(a.UC_ARM64_REG_PC)) != RETURN_ADDR: raise self._hang(prog, pc, seconds, core)
    finally:
      for h in hooks: self.uc.hook_del(h)
      for lo, hi in spans: self.uc.mem_unmap(lo, hi - lo)

  def _stub(self, uc, addr, size, _):
    sym = sorted(STUBS)[(addr - STUB_BASE) // 4]
    a = self.reg
    x = [uc.reg_read(a.UC_ARM64_REG_X0 + i) for i in range(3)]
    from unicorn import UcError
    try: uc.reg_write(a.UC_ARM64_REG_X0, STUBS[sym](self, *x))
    except UcError as e:
      caller = uc.reg_read(a.UC_ARM64_REG_LR) - 4
      self.pending = self._fault(self._prog_at(caller), f"{sym}({x[0]:#x}, {x[1]:#x}, {x[2]}) failed: {e}", pc=caller)
      uc.emu_stop()

  def _invalid(self, uc, access, addr, size, value, _):
    self.bad = (access, addr, size)
    return False

  # *** MOCKGPU_SANITIZE=memory: the exact end of each buffer ***
  def _sanitize_hooks(self, bufs:list[Arg]) -> list[int]:
    from mockgpu.memory import sanitizing
    if not sanitizing(): return []
    from unicorn import UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE
    hooks = []
    for b in bufs:
      end = b.addr + b.size
      if end % PAGE == 0: continue  # the page ends where the buffer does: the unmapped page after it faults by itself
      hooks.append(self.uc.hook_add(UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, self._exact, begin=end // PAGE * PAGE, end=_align(end) - 1))
    return hooks

  def _exact(self, uc, access, addr, size, value, _):
    from unicorn import UC_MEM_WRITE
    if any(b.addr <= addr and addr + size <= b.addr + b.size for b in self.args): return
    pc = uc.reg_read(self.reg.UC_ARM64_REG_PC)
    self.pending = self._fault(self._prog_at(pc), "MOCKGPU_SANITIZE=memory: past a buffer's exact end", pc=pc,
                               bad=(UC_MEM_WRITE if access == UC_MEM_WRITE else 0, addr, size))
    uc.emu_stop()

  # *** fault reports ***
  def _hang(self, prog:Loaded, pc:int, seconds:float, core:int) -> CPUKernelHang:
    from mockgpu.emulators.arm64.lint import disassemble_one
    at = self._prog_at(pc)
    where = f"{at.name}+{pc - at.base:#x}" if at else f"pc {pc:#x} (outside every loaded kernel)"
    text = disassemble_one(bytes(self.uc.mem_read(pc, 4)), pc) if at else "?"
    return CPUKernelHang(f"arm64 kernel {prog.name} (core_id {core}) ran past MOCKGPU_CPU_TIMEOUT={seconds:g} s without "
                         f"returning; stopped at {where}: {text}", kernel=prog.name, offset=pc - prog.base if at is prog else None,
                         seconds=seconds)

  def _prog_at(self, pc:int) -> Loaded|None: return next((p for p in self.loaded if p.base <= pc < p.base + p.size), None)

  def _fault(self, prog:Loaded|None, why:str, pc:int|None=None, bad=None) -> Exception:
    from unicorn import UC_MEM_WRITE, UC_MEM_WRITE_UNMAPPED, UC_MEM_WRITE_PROT, UC_MEM_FETCH_UNMAPPED, UC_MEM_FETCH_PROT
    from mockgpu.emulators.arm64.lint import disassemble_one
    pc = self.uc.reg_read(self.reg.UC_ARM64_REG_PC) if pc is None else pc
    prog = prog or self._prog_at(pc)
    where = f"{prog.name}+{pc - prog.base:#x}" if prog else f"pc {pc:#x} (outside every loaded kernel)"
    text = disassemble_one(bytes(self.uc.mem_read(pc, 4)), pc) if prog else "?"
    bad = bad or self.bad
    if bad is None:
      if "INSN_INVALID" in why or "EXCEPTION" in why:
        return UnsupportedInstruction(f"arm64 kernel {where}: {text}: undefined on the emulated {self.cpu} ({why})")
      return CPUKernelFault(f"arm64 kernel {where}: {text}: {why}", kernel=prog.name if prog else "", offset=pc - prog.base if prog else None)
    access, addr, size = bad
    write = access in (UC_MEM_WRITE, UC_MEM_WRITE_UNMAPPED, UC_MEM_WRITE_PROT)
    kind = "fetch" if access in (UC_MEM_FETCH_UNMAPPED, UC_MEM_FETCH_PROT) else "write" if write else "read"
    arg, dist, rel = self._nearest(addr, size)
    msg = (f"arm64 kernel {where}: {text}: {kind} of {size} bytes at {addr:#x}"
           + (f" lies {dist} bytes {rel} {arg.name} (a {arg.size}-byte buffer at {arg.addr:#x})" if arg else " (no buffer argument)")
           + f" [{why}]")
    return CPUKernelFault(msg, kernel=prog.name if prog else "", offset=pc - prog.base if prog else None, address=addr, write=write,
                          argument=arg.name if arg else None, distance=dist)

  def _nearest(self, addr:int, size:int) -> tuple[Arg|None, int, str]:
    """The argument the access lies past (of the buffers starting at or below it, the one ending last): how far past its
    end the access starts (or, starting inside it, ends); below every buffer, how far before the lowest one it ends."""
    if below := [b for b in self.args if b.addr <= addr]:
      b = max(below, key=lambda b: b.addr + b.size)
      end = b.addr + b.size
      return (b, addr - end, "past the end of") if addr >= end else (b, addr + size - end, "(its end) past the end of")
    if self.args:
      b = min(self.args, key=lambda b: b.addr)
      return b, b.addr - addr, "before"
    return None, 0, ""

class Watchdog:
  """Stops a kernel call that runs past its time: unicorn's own emu_start timeout does the same (uc_emu_stop from a
  thread) but starts a thread per call (measured 270 us, several times a launch), and its count budget instruments every
  instruction (measured 2x slower kernels). One daemon thread per machine wakes a few times a second instead; arm and
  disarm only set two attributes. A stop that lands just after the call returned does nothing (emu_start clears it)."""
  def __init__(self, uc):
    self.uc, self.lock, self.deadline, self.thread = uc, threading.Lock(), None, None

  def arm(self, seconds:float):
    self.deadline, self.period = time.monotonic() + seconds, min(0.25, seconds / 4)
    if self.thread is None:
      self.thread = threading.Thread(target=self._run, name="mockgpu-arm64-watchdog", daemon=True)
      self.thread.start()

  def disarm(self):
    with self.lock: self.deadline = None

  def _run(self):
    while True:
      time.sleep(self.period)
      with self.lock:
        if self.deadline is not None and time.monotonic() >= self.deadline:
          self.deadline = None
          self.uc.emu_stop()

def _align16(n:int) -> int: return (n + 15) // 16 * 16

def _merge(bufs:list[Arg]) -> list[tuple[int, int]]:
  """The buffers' pages, page-rounded and merged (buffers may share a page, views overlap their base)."""
  spans:list[tuple[int, int]] = []
  for lo, hi in sorted((b.addr // PAGE * PAGE, _align(b.addr + max(b.size, 1))) for b in bufs):
    if spans and lo <= spans[-1][1]: spans[-1] = (spans[-1][0], max(hi, spans[-1][1]))
    else: spans.append((lo, hi))
  return spans

_machines:dict[tuple[int, str], Machine] = {}

def machine(cpu:str) -> Machine:
  """This process's machine for cpu (a forked child makes its own: unicorn's state is not fork-safe)."""
  key = (os.getpid(), cpu)
  if key not in _machines: _machines[key] = Machine(cpu)
  return _machines[key]
