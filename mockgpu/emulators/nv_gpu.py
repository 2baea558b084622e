"""An NVIDIA GPU: its board (a mockgpu.boards.NVBoard record), its address space, its channels and the engine classes
bound on them.

The GPU side of the RM model: `NVGPU` holds what the hardware holds (the VA space the channels see, the channels by
work-submit token, the MMU faults the engines raised). The engines are the class objects the RM allocates on a
channel: the compute class (QMD launches into the PTX executor) and the DMA copy class. The host class (semaphores,
GPFIFO) is the channel itself, in mockgpu/emulators/gpfifo.py. Method numbers, field positions and the QMD layout come
from tinygrad's autogen tables (nv_570, the ABI our RM reports), never retyped.
"""
from __future__ import annotations
import functools, hashlib, os, re, struct, time, weakref
from dataclasses import dataclass
import numpy as np
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu import events
from mockgpu.boards import NVBoard
from mockgpu.memory import AddressSpace
from mockgpu.errors import PacketError, GPUPageFault, Unmodelled

from mockgpu import log

@dataclass
class Fault:
  """An MMU fault as RM's debugger reports it (NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY)."""
  address:int
  fault_type:int
  access_type:int
  where:str

class NVGPU:
  """One GPU, built with its machine (system.System: where its channels run) and its executor (the PTX executor:
  load_module, launch, launch_fields), as a QEMU device gets its bus."""
  def __init__(self, index:int, board:NVBoard, machine, executor):
    self.index, self.board, self.machine, self.executor = index, board, machine, executor
    self.mem = AddressSpace(f"NV:{index}")
    self.kernels:dict[int, tuple[bytes, object]] = {}  # program address -> (its PTX text + NUL, parsed kernel)
    self.uuid = hashlib.md5(f"mockgpu {board.name} {index}".encode()).digest()
    self.channels:dict[int, object] = {}  # work-submit token -> gpfifo.Channel
    self.faults:list[Fault] = []
    self.released:set[int] = set()  # addresses the engines have released semaphores at: the runtime's signals for this GPU
    self.running = None  # the channel group whose channel Host is stepping now: the one an engine's release belongs to
    self.errors:list[Exception] = []  # failures of the last scheduler pass, raised by the doorbell write that started it
    self.vram_used = 0
    self.pm = None            # the bound profiler's performance monitor (emulators/nv_pma.PerfMon), if any
    self.pm_reserved:dict[str, object] = {}  # PM resource ("hwpm", "pc_sampler") -> the profiler object holding it
  @property
  def name(self) -> str: return f"NV:{self.index}"
  @property
  def gpu_id(self) -> int: return (self.index + 1) << 8  # RM's gpuId is the PCI bus << 8; boards sit on buses 1, 2, ...
  def take_errors(self) -> list[Exception]:
    errors, self.errors = self.errors, []
    return errors
  def fault(self, f:Fault):
    log.warning("%s: MMU fault at 0x%x (%s)", self.name, f.address, f.where)
    self.faults.append(f)
  def release(self, addr:int):
    """An engine (or Host) released a semaphore at addr, in the work of the channel group running now."""
    self.released.add(addr)
    if (groups:=self.machine.releasers.get(addr)) is None: groups = self.machine.releasers[addr] = weakref.WeakSet()
    groups.add(self.running if self.running is not None else _OUTSIDE)

  def poll_check(self, addr:int|None):
    """The runtime touched the signal at `addr` from the CPU (system.poll, after re-stepping blocked channels): raise
    the failures of that pass (no doorbell write is there to raise them), and raise for a signal that only channel
    groups stopped on an MMU fault release: it will not move again. RM's robust-channel recovery stops the faulting
    channel group, not the GPU, so a signal another (live) group releases still may. tinygrad's wait loop then reaches
    its on_device_hang (which reads the MMU-fault report) at once instead of after HCQDEV_WAIT_TIMEOUT_MS."""
    if self.errors: raise self.take_errors()[0]
    if not self.faults or addr not in self.released or not (groups:=list(self.machine.releasers.get(addr, ()))): return
    if all(g.error is not None for g in groups) and any(g.channels and g.channels[0].gpu is self for g in groups):
      where = "; ".join(sorted(g.fault_where for g in groups))
      raise RuntimeError(f"{self.name}: the signal at 0x{addr:x} will not be written: the channel group that releases it stopped on an "
                         f"MMU fault ({where})")

class _Outside:
  """The releaser of a semaphore written outside any channel's pass: never stopped."""
  error, channels, fault_where = None, (), ""
_OUTSIDE = _Outside()

def timestamp_ns() -> int: return time.perf_counter_ns()  # tinygrad compares GPU timestamps with perf_counter_ns

# *** method tables and names, from the autogen headers ***

def field(value:int, bits:tuple[int, int]) -> int:
  hi, lo = bits
  return (value >> lo) & ((1 << (hi - lo + 1)) - 1)

@functools.cache
def method_names(prefix:str) -> dict[int, str]:
  """Method offset -> name for one class header (e.g. 'NVC6B5'): the int constants that are not an enum of a field."""
  d = vars(nv)
  out = {}
  for name, v in d.items():
    if not name.startswith(prefix + "_") or not isinstance(v, int) or isinstance(v, bool) or v % 4: continue
    parts = name.split("_")
    if any(isinstance(d.get("_".join(parts[:i])), tuple) for i in range(2, len(parts))): continue
    out.setdefault(v, name)
  return out

_CLASS_SUFFIXES = ("A", "B", "C", *"0123456789", "CLIENT", "DEBUGGER", "DEVICE", "DECODER", "USER", "SYSTEM", "VIRTUAL", "DESCRIPTOR")
_CLASS = re.compile(rf"[A-Z0-9]+(_[A-Z0-9]+)*_({'|'.join(_CLASS_SUFFIXES)})")

QMD_PREFIXES = ("NVC6C0_QMDV03_00", "NVCEC0_QMDV05_00")   # the QMD layouts the boards read (NVBoard.qmd_version 3, 5)

def _index() -> dict[str, dict]:
  """The lookups the NV models make by number or name in nv_570's ~15,000 names, in one pass: class names (the first
  name that looks like a class's; the suffix test spares most names the regex), RM control names (the first
  *_CTRL_CMD_*), NV_ESC_* escape names, UVM ioctl names (those with a _PARAMS struct; the last one wins) and each QMD
  layout's fields (qmd_fields)."""
  classes:dict[int, str] = {}
  controls:dict[int, str] = {}
  escapes:dict[int, str] = {}
  uvm:dict[int, str] = {}
  qmd:dict[str, dict] = {p: {} for p in QMD_PREFIXES}
  for name, v in vars(nv).items():
    if isinstance(v, int):
      if v not in classes and name.rpartition("_")[2] in _CLASS_SUFFIXES and "CTRL" not in name and _CLASS.fullmatch(name): classes[v] = name
      if "_CTRL_CMD_" in name: controls.setdefault(v, name)
      if name.startswith("NV_ESC_"): escapes.setdefault(v, name)
      if name.startswith("UVM_") and hasattr(nv, name + "_PARAMS"): uvm[v] = name
    if name.startswith("NV") and (prefix:=name[:16]) in qmd and name[16:17] == "_":
      if isinstance(v, tuple): qmd[prefix][name[17:]] = v
      elif callable(v): qmd[prefix].update({f"{name[17:]}_{i}": v(i) for i in range(8)})
  return {"class": classes, "ctrl": controls, "escape": escapes, "uvm": uvm, **{f"qmd {p}": f for p, f in qmd.items()}}

@functools.cache
def names() -> dict[str, dict]:
  """_index(), kept on disk (compiler/cache.py) under the table file's size and time and this module's text: building
  it costs ~11 ms of every NV process (a pass per kind, ~1-4 ms each), reading it back ~1 ms."""
  from mockgpu.compiler.cache import remembered
  st = os.stat(nv.__file__)
  with open(__file__, "rb") as f: key = f"{nv.__file__}|{st.st_size}|{st.st_mtime_ns}|".encode() + f.read()
  kinds = {"class", "ctrl", "escape", "uvm", *(f"qmd {p}" for p in QMD_PREFIXES)}
  return remembered("nv-names", "1", key, _index, lambda v: isinstance(v, dict) and set(v) == kinds)

def class_name(cls:int) -> str: return names()["class"].get(cls, "unknown class")

def write_semaphore(mem:AddressSpace, addr:int, payload:int, payload64:bool, timestamp:bool, where:str):
  """A semaphore release: the payload (one or two words), then for a four-word semaphore the 64-bit timestamp at +8.
  A 32-bit four-word release also clears word 1, so the pair reads back as a 64-bit value."""
  if payload64 or timestamp: mem.write_u64(addr, payload if payload64 else payload & 0xffffffff, where)
  else: mem.write_u32(addr, payload, where)
  if timestamp: mem.write_u64(addr + 8, timestamp_ns(), where)

class Engine:
  """A class object on a channel: methods >= 0x100 on the subchannel it is bound to. State methods are registers."""
  prefix = ""
  state:frozenset[int] = frozenset()
  def __init__(self, gpu:NVGPU, cls:int):
    self.gpu, self.cls, self.regs = gpu, cls, {}
    self.queue:str|None = None  # the channel it is bound to (set by the driver), for the trace
    self.actions = self._actions()
  def _actions(self) -> dict: return {}
  def method(self, mthd:int, data:int, where:str):
    if mthd in self.state: self.regs[mthd] = data
    elif (fn:=self.actions.get(mthd)) is not None: fn(data, where)
    else: raise PacketError(f"{where}: unknown method 0x{mthd:x} for class {class_name(self.cls)} (0x{self.cls:x})")
  def reg64(self, hi:int, lo:int, hi_bits:tuple[int, int]) -> int: return (field(self.regs.get(hi, 0), hi_bits) << 32) | self.regs.get(lo, 0)
  def ignore(self, data:int, where:str): pass  # no-op methods: cache invalidates, perf-monitor triggers, NOPs

class CopyEngine(Engine):
  """The DMA copy class (AMPERE_DMA_COPY_B, BLACKWELL_DMA_COPY_B): pitch-linear copies and semaphore releases."""
  prefix = "NVC6B5"
  state = frozenset([nv.NVC6B5_SET_SEMAPHORE_A, nv.NVC6B5_SET_SEMAPHORE_B, nv.NVC6B5_SET_SEMAPHORE_PAYLOAD, nv.NVC6B5_OFFSET_IN_UPPER,
                     nv.NVC6B5_OFFSET_IN_LOWER, nv.NVC6B5_OFFSET_OUT_UPPER, nv.NVC6B5_OFFSET_OUT_LOWER, nv.NVC6B5_PITCH_IN, nv.NVC6B5_PITCH_OUT,
                     nv.NVC6B5_LINE_LENGTH_IN, nv.NVC6B5_LINE_COUNT])
  def _actions(self): return {nv.NVC6B5_NOP: self.ignore, nv.NVC6B5_PM_TRIGGER: self.ignore, nv.NVC6B5_LAUNCH_DMA: self.launch}

  def launch(self, flags:int, where:str):
    def f(name): return field(flags, getattr(nv, f"NVC6B5_LAUNCH_DMA_{name}"))
    for name in ("REMAP_ENABLE", "SRC_TYPE", "DST_TYPE", "SEMAPHORE_REDUCTION_ENABLE"):
      if f(name): raise Unmodelled(f"{where}: LAUNCH_DMA with {name} is not modelled")
    if f("DATA_TRANSFER_TYPE") != nv.NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE: self._copy(f("SRC_MEMORY_LAYOUT"), f("DST_MEMORY_LAYOUT"),
                                                                                         f("MULTI_LINE_ENABLE"), where)
    sem = f("SEMAPHORE_TYPE")
    if sem == nv.NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE: return
    if sem == nv.NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE:
      raise Unmodelled(f"{where}: LAUNCH_DMA conditional-interrupt semaphores are not modelled")
    addr = self.reg64(nv.NVC6B5_SET_SEMAPHORE_A, nv.NVC6B5_SET_SEMAPHORE_B, nv.NVC6B5_SET_SEMAPHORE_A_UPPER)
    four = sem == nv.NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE
    write_semaphore(self.gpu.mem, addr, self.regs.get(nv.NVC6B5_SET_SEMAPHORE_PAYLOAD, 0), False, four, f"{where}: copy semaphore")
    self.gpu.release(addr)

  def _copy(self, src_layout:int, dst_layout:int, multi_line:int, where:str):
    if src_layout != nv.NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH or dst_layout != nv.NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH:
      raise Unmodelled(f"{where}: LAUNCH_DMA with a block-linear surface is not modelled")
    src = self.reg64(nv.NVC6B5_OFFSET_IN_UPPER, nv.NVC6B5_OFFSET_IN_LOWER, nv.NVC6B5_OFFSET_IN_UPPER_UPPER)
    dst = self.reg64(nv.NVC6B5_OFFSET_OUT_UPPER, nv.NVC6B5_OFFSET_OUT_LOWER, nv.NVC6B5_OFFSET_OUT_UPPER_UPPER)
    length = self.regs.get(nv.NVC6B5_LINE_LENGTH_IN, 0)
    lines = self.regs.get(nv.NVC6B5_LINE_COUNT, 1) if multi_line else 1
    pitch_in, pitch_out = self.regs.get(nv.NVC6B5_PITCH_IN, 0), self.regs.get(nv.NVC6B5_PITCH_OUT, 0)
    t0 = events.now() if events.enabled else 0
    for i in range(lines): self.gpu.mem.copy(dst + i * pitch_out, src + i * pitch_in, length, f"{where}: copy")
    if t0 and events.enabled: events.emit("copy", self.gpu.name, self.queue, ts=t0, dur=events.now() - t0, src=src, dst=dst, size=length * lines,
                                   lines=lines, pitch_in=pitch_in, pitch_out=pitch_out)

class ComputeEngine(Engine):
  """The compute class (AMPERE_COMPUTE_B, ADA_COMPUTE_A, BLACKWELL_COMPUTE_B): QMD launches and their semaphores."""
  prefix = "NVC6C0"
  state = frozenset([nv.NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A, nv.NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_B,
                     nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_B, nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_A,
                     nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_B, nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A,
                     nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B, nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C, nv.NVC6C0_SEND_PCAS_A])
  # PCAS actions that schedule the QMD (the others only invalidate or prefetch it)
  SCHEDULE = {nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE, nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE,
              nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE,
              nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE,
              nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING}
  NO_SCHEDULE = {nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_NOP, nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE,
                 nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH}

  def _actions(self): return {nv.NVC6C0_NO_OPERATION: self.ignore, nv.NVC6C0_PM_TRIGGER: self.pm_trigger,
                              nv.NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI: self.ignore, nv.NVC6C0_SEND_SIGNALING_PCAS2_B: self.pcas}

  def pm_trigger(self, data:int, where:str):
    if self.gpu.pm is not None: self.gpu.pm.trigger()  # with no profiler bound no PM listens: a no-op

  def pcas(self, data:int, where:str):
    action = field(data, nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION)
    if action in self.NO_SCHEDULE: return
    if action not in self.SCHEDULE: raise Unmodelled(f"{where}: SEND_SIGNALING_PCAS2_B action {action} (QMD queues) is not modelled")
    launch_qmd(self.gpu, self.regs.get(nv.NVC6C0_SEND_PCAS_A, 0) << 8, where, self.queue)

def engine_for(gpu:NVGPU, cls:int) -> Engine|None:
  if cls == gpu.board.compute: return ComputeEngine(gpu, cls)
  if cls == gpu.board.dma: return CopyEngine(gpu, cls)
  return None

def method_name(prefix:str, mthd:int) -> str: return method_names(prefix).get(mthd, f"0x{mthd:x}")

# *** QMD launches ***

def qmd_fields(prefix:str) -> dict[str, tuple[int, int]]:
  """Field name -> (hi, lo) bit, from the autogen QMD header; indexed fields become NAME_i, as tinygrad names them."""
  if (fields:=names().get(f"qmd {prefix}")) is None: raise KeyError(f"no QMD layout {prefix!r} ({', '.join(QMD_PREFIXES)})")
  return fields

class QMD:
  """A queue-meta-data block read from GPU memory, of the version the board's compute class reads (NVBoard.qmd_version):
  V03 (Ampere, Ada) or V05 (Blackwell)."""
  def __init__(self, mem:AddressSpace, addr:int, board:NVBoard, where:str):
    if board.qmd_version not in (3, 5): raise Unmodelled(f"{where}: QMD version {board.qmd_version} ({board.name}) is not modelled")
    self.addr, self.v5 = addr, board.qmd_version == 5
    self.fields = qmd_fields("NVCEC0_QMDV05_00" if self.v5 else "NVC6C0_QMDV03_00")
    self.bits = int.from_bytes(mem.read(addr, 0x180 if self.v5 else 0x100, f"{where}: QMD"), "little")
    if (ver:=self["qmd_major_version"]) != board.qmd_version:
      raise PacketError(f"{where}: QMD at 0x{addr:x} has major version {ver}, class {board.compute_class} takes {board.qmd_version}")
  def __getitem__(self, name:str) -> int: return field(self.bits, self.fields[name.upper()])
  def wide(self, hi:str, lo:str) -> int: return (self[hi] << 32) | self[lo]

  def program(self) -> int:
    return self.wide("program_address_upper_shifted4", "program_address_lower_shifted4") << 4 if self.v5 else \
           self.wide("program_address_upper", "program_address_lower")
  def grid(self) -> tuple[int, int, int]:
    return tuple(self[f"{'grid' if self.v5 else 'cta_raster'}_{d}"] for d in ("width", "height", "depth"))
  def block(self) -> tuple[int, int, int]: return tuple(self[f"cta_thread_dimension{i}"] for i in range(3))
  def cbuf(self, i:int) -> int:
    if self.v5: return self.wide(f"constant_buffer_addr_upper_shifted6_{i}", f"constant_buffer_addr_lower_shifted6_{i}") << 6
    return self.wide(f"constant_buffer_addr_upper_{i}", f"constant_buffer_addr_lower_{i}")
  def releases(self):
    """(address, payload, structure size, 64-bit payload, reduction) of each enabled release semaphore."""
    for i in range(3):
      if not self[f"release_enable_{i}" if self.v5 else f"release{i}_enable"]: continue
      if self.v5:
        yield (self.wide(f"release_semaphore{i}_addr_upper", f"release_semaphore{i}_addr_lower"),
               self.wide(f"release_semaphore{i}_payload_upper", f"release_semaphore{i}_payload_lower"),
               self[f"release_structure_size_{i}"], self[f"release_payload64b_{i}"], self[f"release_reduction_enable_{i}"])
      else:
        yield (self.wide(f"release{i}_address_upper", f"release{i}_address_lower"),
               self.wide(f"release{i}_payload_upper", f"release{i}_payload_lower"),
               self[f"release{i}_structure_size"], self[f"release{i}_payload64b"], self[f"release{i}_reduction_enable"])
  def dependent(self) -> int|None:
    if not self["dependent_qmd0_enable"]: return None
    if self["dependent_qmd0_action"] != nv.NVC6C0_QMDV03_00_DEPENDENT_QMD0_ACTION_QMD_SCHEDULE:
      raise Unmodelled(f"QMD at 0x{self.addr:x}: dependent QMD action {self['dependent_qmd0_action']} is not modelled")
    return self["dependent_qmd0_pointer"] << 8

MAX_QMD_CHAIN = 1024  # QMDs one PCAS schedule may run through DEPENDENT_QMD0 (a bound: the model reports a longer chain)

def launch_qmd(gpu:NVGPU, addr:int, where:str, queue:str|None=None):
  """Run a QMD and the chain of QMDs it schedules, each followed by its release semaphores. A kernel the executor
  cannot run (not a page fault: that is a channel error) still releases its semaphores, which carry the runtime's
  timeline; the first such error is raised once the chain is done."""
  error, seen, first = None, set(), addr
  while addr is not None:
    # a chain that comes back to a QMD it ran would run forever on hardware (DEPENDENT_QMD0 pointing at itself)
    if addr in seen or len(seen) >= MAX_QMD_CHAIN:
      raise PacketError(f"{where}: dependent QMD chain from 0x{first:x} " + (f"loops back to QMD 0x{addr:x}" if addr in seen else
                        f"is longer than {MAX_QMD_CHAIN} QMDs") + " (DEPENDENT_QMD0_POINTER)")
    seen.add(addr)
    q = QMD(gpu.mem, addr, gpu.board, where)
    try: run_kernel(gpu, q, f"{where}: QMD 0x{addr:x}", queue)
    except GPUPageFault: raise
    except Exception as e: error = error or e
    for sem_addr, payload, structure, payload64, reduction in q.releases():
      if reduction: raise Unmodelled(f"{where}: QMD 0x{addr:x}: release reductions are not modelled")
      four = structure == nv.NVC6C0_QMDV03_00_RELEASE0_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS
      wide = payload64 or structure == nv.NVC6C0_QMDV03_00_RELEASE0_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS
      write_semaphore(gpu.mem, sem_addr, payload, bool(wide), four, f"{where}: QMD 0x{addr:x} release")
      gpu.release(sem_addr)
    addr = q.dependent()
  if error is not None: raise error

# tinygrad's MOCK constant-bank ABI (ops_nv NVArgsState): cbuf0 holds the driver words (at least 12, 224 on Blackwell, and at
# least the QMD's bank size), then one 8-byte slot per argument, buffers first; words 80 and 81 count buffers and values.
def args_offset(q:QMD) -> int: return max(q["constant_buffer_size_shifted4_0"], (224 if q.v5 else 12) * 4)

def ptx_text(mem:AddressSpace, addr:int, where:str) -> str:
  """The NUL-terminated PTX source tinygrad uploaded at the program address."""
  m = next((m for m in mem.mappings() if m.va <= addr < m.end), None)
  if m is None: mem.view(addr, 1, False, where)  # raises the page fault
  text = m.u8()[addr - m.va:]
  nul = int(np.argmax(text == 0))
  if text[nul] != 0: raise PacketError(f"{where}: the program at 0x{addr:x} is not NUL-terminated inside its allocation")
  try: return text[:nul].tobytes().decode()
  except UnicodeDecodeError as e:
    raise PacketError(f"{where}: the program at 0x{addr:x} is not PTX text (byte 0x{text[e.start]:02x} at offset {e.start} is not UTF-8)") from None

COUNTS = 320  # byte offset of cbuf0 words 80 and 81 (the buffer and value counts)

def kernel_params(kernel, cbuf:np.ndarray, first:int, where:str) -> bytes:
  """The kernel's parameter block, packed from the 8-byte argument slots at cbuf[first:]."""
  if len(cbuf) < max(COUNTS + 8, first + 8 * len(kernel.params)):
    raise PacketError(f"{where}: cbuf0 of {len(cbuf)} bytes holds no argument counts (words 80, 81) or not {len(kernel.params)} argument slots")
  nbufs, nvals = struct.unpack_from("<II", cbuf, COUNTS)
  if nbufs + nvals != len(kernel.params):
    raise PacketError(f"{where}: cbuf0 holds {nbufs} buffers and {nvals} values, the kernel takes {len(kernel.params)} parameters")
  out = bytearray(max((off + size for _, size, _, off in kernel.params), default=0))
  for i, (name, size, _, off) in enumerate(kernel.params):
    if size > 8: raise Unmodelled(f"{where}: kernel parameter {name} of {size} bytes (aggregates) is not modelled")
    out[off:off+size] = cbuf[first+8*i:first+8*i+size].tobytes()
  return bytes(out)

def program_kernel(gpu:"NVGPU", addr:int, where:str):
  """The kernel of the PTX program at addr: parsed once, and found again on a relaunch after checking that the same
  text is still there (tinygrad relaunches a program thousands of times)."""
  mem = gpu.mem
  if (hit:=gpu.kernels.get(addr)) is not None and mem.holds(addr, hit[0]): return hit[1]
  text = ptx_text(mem, addr, f"{where}: program")
  names = re.findall(r"\.entry\s+([\w$]+)", text)
  if len(names) != 1: raise Unmodelled(f"{where}: a program with {len(names)} kernels ({', '.join(names)}) is not modelled")
  kernel = gpu.executor.load_module(text).kernel(names[0])
  if len(gpu.kernels) > 4096: gpu.kernels.clear()
  gpu.kernels[addr] = (text.encode() + b"\0", kernel)
  return kernel

def run_kernel(gpu:NVGPU, q:QMD, where:str, queue:str|None=None):
  ptx = gpu.executor
  kernel = program_kernel(gpu, q.program(), where)
  first = args_offset(q)
  cbuf = gpu.mem.view(q.cbuf(0), max(first + 8 * len(kernel.params), COUNTS + 8), False, f"{where}: cbuf0")
  params = kernel_params(kernel, cbuf, first, where)
  # tinygrad's kernels declare all their shared memory statically in the PTX, so nothing is dynamic
  if (bad:=gpu.board.launch_error(kernel, q.grid(), q.block(), 0)) is not None: raise PacketError(f"{where}: {bad[1]}")
  if gpu.pm is not None and gpu.pm.sampling(): return sampled_launch(gpu, kernel, q, params, where, queue)
  if not events.enabled: return ptx.launch(gpu.mem, kernel, q.grid(), q.block(), params, 0, board=gpu.board)
  events.emit("qmd", gpu.name, queue, addr=q.addr, fields={k: v for k in q.fields if (v:=q[k])})
  t0 = events.now()
  stats = ptx.launch(gpu.mem, kernel, q.grid(), q.block(), params, 0, board=gpu.board)
  events.emit("dispatch", gpu.name, queue, ts=t0, dur=events.now() - t0, **ptx.launch_fields(kernel, q.grid(), q.block(), 0, stats))

def sampled_launch(gpu:NVGPU, kernel, q:QMD, params:bytes, where:str, queue:str|None):
  """A launch while the PC sampler runs (emulators/nv_pma.py): on the numpy path with its block trace, then the
  samples into the PMA stream."""
  trace:list = []
  t0 = events.now() if events.enabled else 0
  stats = gpu.executor.launch(gpu.mem, kernel, q.grid(), q.block(), params, 0, board=gpu.board, trace=trace)
  written = gpu.pm.sample_launch(kernel, q.grid(), q.block(), trace)
  if events.enabled: events.emit("dispatch", gpu.name, queue, ts=t0, dur=events.now() - t0, pma_bytes=written,
                                 **gpu.executor.launch_fields(kernel, q.grid(), q.block(), 0, stats))
