"""An AMD GPU: its address space, its VRAM, its doorbell page, its register blocks, its queues and its fault state.

Memory that the runtime can map more than once (VRAM and GTT buffer objects, the doorbell and event pages) lives in a
memfd (`SharedMemory`): the runtime's CPU mappings (render-node or /dev/kfd mmaps at the address it chose) and the
GPU's own view (`host` of the AddressSpace mapping) are the same pages, so the GPU side never depends on what the
runtime maps or unmaps, and freed VRAM is returned to the host by punching holes in the file.
"""
from __future__ import annotations
import errno, functools, importlib, time
from mockgpu.memory import AddressSpace
from mockgpu.hostmem import PAGE, SharedMemory, round_page
from mockgpu.errors import GPUPageFault, KernelTrap, PacketError, Unmodelled
from mockgpu import events

from mockgpu import log
class Pool:
  """A memory heap (VRAM of one GPU, or the process's GTT): first-fit page allocator over a SharedMemory."""
  def __init__(self, name:str, size:int):
    self.mem, self.size, self.used = SharedMemory(name, size), size, 0
    self.free_list:list[tuple[int, int]] = [(0, size)]  # (offset, size), sorted, coalesced

  def alloc(self, size:int) -> int:
    size = round_page(size)
    for i, (off, sz) in enumerate(self.free_list):
      if sz >= size:
        self.free_list[i:i+1] = [(off + size, sz - size)] if sz > size else []
        self.used += size
        return off
    raise OSError(errno.ENOMEM, f"{self.mem.name}: out of memory allocating {size} bytes ({self.used} of {self.size} in use)")

  def free(self, off:int, size:int):
    size = round_page(size)
    self.mem.release(off, size)
    self.used -= size
    self.free_list.append((off, size))
    self.free_list.sort()
    merged:list[tuple[int, int]] = []
    for o, s in self.free_list:
      if merged and merged[-1][0] + merged[-1][1] == o: merged[-1] = (merged[-1][0], merged[-1][1] + s)
      else: merged.append((o, s))
    self.free_list = merged

@functools.cache
def register_block(ip:str, version:tuple[int, int, int]):
  """tinygrad's register table of an IP block (names, fields, absolute dword addresses) on the register bases tinygrad
  uses for that generation (vega for GC 9 / CDNA, navi otherwise). Gfx12 calls the NBIO block 'nbif', as tinygrad does."""
  from tinygrad.runtime.support.amd import AMDIP
  gfx9 = (ip == "gc" and version[0] == 9) or (ip == "nbio" and version[0] == 7)
  offsets = importlib.import_module(f"tinygrad.runtime.autogen.am.{'vega' if gfx9 else 'navi'}_offsets")
  if ip == "nbio" and version[0] == 6: ip = "nbif"  # NBIF 6.3 (gfx12): tinygrad's AMDIP('nbif', ...)
  prefix = {"gc": "GC", "nbio": "NBIO", "nbif": "NBIO"}[ip]
  bases = {i: tuple(getattr(offsets, f"{prefix}_BASE__INST{i}_SEG{s}", 0) for s in range(9)) for i in range(6)}
  return AMDIP(ip, version, bases=bases)

def register_table(block) -> dict[str, tuple[int, int, dict]]:
  """tinygrad's raw register table of a block (AMDIP): name -> (offset, segment, fields), what AMDIP.regs makes an
  AMDReg of for each of its ~1600 registers (3 ms and ~5000 objects for GC 11)."""
  from tinygrad.runtime.support.amd import import_module as versioned_table  # picks a table by IP version: not importlib's
  return versioned_table(block.name, block.version, submod="regs")

def register(block, name:str):
  """One register of a block as AMDIP's attribute gives it (tinygrad's AMDReg, 'mm' names too), without AMDIP.regs."""
  from tinygrad.runtime.support.amd import AMDReg
  if "regs" in vars(block): return getattr(block, name)  # the block's table is built already
  table = register_table(block)
  key = name if name in table else name.replace("reg", "mm")
  if key not in table: return getattr(block, name)  # AMDIP's own error
  off, seg, fields = table[key]
  return AMDReg(name=key, offset=off, segment=seg, fields=fields, bases=block.bases)

@functools.cache
def registers_by_address(version_gc:tuple[int, int, int], version_nbio:tuple[int, int, int]) -> dict[int, str]:
  """Absolute dword address -> register name (without the 'reg' prefix), GC and NBIO blocks: an AMDReg's addr[0] is
  its instance 0 base of its segment plus its offset, computed here from the raw tables."""
  out:dict[int, str] = {}
  for ip, ver in (("gc", version_gc), ("nbio", version_nbio)):
    block = register_block(ip, ver)
    base = block.bases[0]
    for name, (off, seg, _) in register_table(block).items(): out.setdefault(base[seg] + off, name.removeprefix("reg").removeprefix("mm"))
  return out

def gpu_clock() -> int:
  """The GPU's 100 MHz reference clock (what RELEASE_MEM / SDMA TIMESTAMP write); tinygrad divides it by 100 to get us."""
  return time.perf_counter_ns() // 10

class AMDGPU:
  """One GPU as the driver model sees it. Built with its machine (system.System: where its queues run and its
  doorbells wake them) and its executor (the RDNA executor: Dispatch, run_dispatch), as a QEMU device gets its bus."""
  DOORBELL_PAGES = 2  # the process's doorbell region on one GPU: 2 pages of 64-bit doorbells, as KFD maps it

  def __init__(self, index:int, gpu_id:int, props:dict, board, machine, executor):
    self.index, self.gpu_id, self.props, self.name, self.board = index, gpu_id, props, f"AMD:{index}", board
    self.machine, self.executor = machine, executor
    vram_size = board.vram_size
    self.mem = AddressSpace(self.name)
    self.vram = Pool(f"mockgpu-{self.name}-vram", vram_size)
    self.doorbells = SharedMemory(f"mockgpu-{self.name}-doorbells", self.DOORBELL_PAGES * PAGE)
    self.doorbell_queues:dict[int, object] = {}  # doorbell byte offset -> queue
    self.queues:dict[int, object] = {}
    self.gc, self.nbio = register_block("gc", board.gc_version), register_block("nbio", board.nbio_version)
    self.mmio:dict[int, int] = {}  # global (non-queue) registers: HDP flush request/done
    self.on_interrupt = lambda gpu, ctxid, valid_bits: None  # set by the driver: the interrupt handler (KFD events)
    self.on_fault = lambda gpu, queue, err: None  # set by the driver: memory / hardware exception reporting

  # made at their first use (the NBIO register table: ~10 ms, spared where no queue of the GPU reaches register space,
  # as on the GPUs of a process that runs on another device)
  @functools.cached_property
  def hdp(self) -> dict[int, int]:
    """HDP flush request -> done register of each PCIe function the NBIO block has (tinygrad flushes through PF1 on
    NBIO 7.11, the APUs' block, through PF0 elsewhere)."""
    regs = register_block("nbio", self.board.nbio_version).regs  # not self.nbio: AM's device model has its own NBIO there
    return {regs[f"regBIF_BX_PF{pf}_GPU_HDP_FLUSH_REQ"].addr[0]: regs[f"regBIF_BX_PF{pf}_GPU_HDP_FLUSH_DONE"].addr[0]
            for pf in range(8) if f"regBIF_BX_PF{pf}_GPU_HDP_FLUSH_REQ" in regs}
  @functools.cached_property
  def hdp_regs(self) -> set[int]: return set(self.hdp) | set(self.hdp.values())

  @functools.cached_property
  def perf(self):
    """The performance monitor: thread-trace and counter registers, per XCC and SE (emulators/amd/perf.py)."""
    from mockgpu.emulators.amd.perf import Perf
    return Perf(self)

  @property
  def profiling(self) -> bool: return "perf" in self.__dict__  # the monitor exists once a perf register was touched

  def add_queue(self, queue, doorbell_offset:int):
    self.queues[queue.queue_id] = queue
    self.doorbell_queues[doorbell_offset] = queue
    self.machine.add_queue(queue)

  def remove_queue(self, queue_id:int):
    queue = self.queues.pop(queue_id)
    self.doorbell_queues = {k: q for k, q in self.doorbell_queues.items() if q is not queue}
    self.machine.remove_queue(queue)

  def ring_doorbell(self, offset:int, value:int):
    """A doorbell write at `offset` in the doorbell page wakes the machine. The queue reads its new write pointer from
    write_pointer_address (the MEC's write-pointer polling), which the runtime updates before ringing."""
    if offset & ~7 not in self.doorbell_queues:
      log.warning("%s: doorbell write 0x%x at offset 0x%x rings no queue", self.name, value, offset)
      return
    if events.enabled: events.emit("doorbell", self.name, self.doorbell_queues[offset & ~7].name, offset=offset, value=value)
    self.machine.kick()

  def interrupt(self, ctxid:int, valid_bits:int):
    """An interrupt to the host with a context id of which the source delivers `valid_bits` bits (CP: 23, SDMA: 28)."""
    self.on_interrupt(self, ctxid, valid_bits)
  def fault(self, queue, err:Exception): self.on_fault(self, queue, err)

  # *** global registers, reached through WAIT_REG_MEM / COPY_DATA in register space ***
  def mmio_write(self, addr:int, value:int) -> bool:
    """Write a modelled global register; False if this address is not one."""
    if addr not in self.hdp: return False
    # an HDP flush completes at once: memory is coherent here, so every requested client reports done
    self.mmio[addr] = self.mmio[self.hdp[addr]] = value
    return True

  def mmio_read(self, addr:int) -> int|None:
    return self.mmio.get(addr, 0) if addr in self.hdp_regs else None

class UnmodelledFeature(PacketError, Unmodelled):
  """A valid packet asks for something the command processor does not model (performance counters, thread trace, ...)."""

class Stream:
  """Where a command processor reads: the ring (positions wrap modulo its size) or an indirect buffer. In dwords.

  The dwords between the read position and the end are fetched in one go and kept until the next step (the runtime
  cannot change them while a step runs; it may while the queue is blocked, so each step starts afresh). `pred` is the
  PM4 PRED_EXEC block the stream is in: (end position, XCC mask), or None."""
  __slots__ = ("va", "ndw", "pos", "end", "is_ring", "pred", "_cache", "_cache_pos")
  def __init__(self, va:int, ndw:int, pos:int, end:int, is_ring:bool):
    self.va, self.ndw, self.pos, self.end, self.is_ring = va, ndw, pos, end, is_ring
    self.pred:tuple[int, int]|None = None
    self._cache, self._cache_pos = [], 0
  def offset(self, pos:int) -> int: return (pos % self.ndw) * 4
  def where(self, pos:int) -> str: return f"ring offset 0x{self.offset(pos):x}" if self.is_ring else f"IB 0x{self.va:x} offset 0x{pos*4:x}"
  def forget(self): self._cache = []
  def read(self, mem:AddressSpace, pos:int, n:int) -> list[int]:
    if not (self._cache_pos <= pos and pos + n <= self._cache_pos + len(self._cache)):
      self._cache, self._cache_pos = self._fetch(mem, pos, max(n, self.end - pos)), pos
    return self._cache[pos - self._cache_pos : pos - self._cache_pos + n]
  def _fetch(self, mem:AddressSpace, pos:int, n:int) -> list[int]:
    """n dwords from pos on, a contiguous piece at a time (a ring wraps at its end)."""
    out:list[int] = []
    while n > 0:
      first = min(n, self.ndw - pos % self.ndw)
      out += mem.view(self.va + self.offset(pos), first * 4, where=self.where(pos)).view("<u4").tolist()
      pos, n = pos + first, n - first
    return out

class RingQueue:
  """The part a PM4 compute queue and an SDMA queue share: ring and IB streams, read/write pointers, fault state.

  Subclasses set KIND and PTR_BYTES (the unit of the 64-bit read/write pointers in memory: dwords for PM4, bytes for
  SDMA) and implement _length(header) and _execute(header, body, stream) -> extra dwords to skip, or None when blocked.
  """
  KIND, PTR_BYTES = "", 4

  def __init__(self, gpu:AMDGPU, queue_id:int, ring_va:int, ring_size:int, rptr_va:int, wptr_va:int):
    self.gpu, self.queue_id, self.rptr_va, self.wptr_va = gpu, queue_id, rptr_va, wptr_va
    self.name = f"{gpu.name} {self.KIND} queue {queue_id}"
    self.ring = Stream(ring_va, ring_size // 4, 0, 0, True)
    self.ibs:list[Stream] = []
    self.error:Exception|None = None
    self._wait_since = 0  # when the packet the queue is blocked at was first tried (events.now()), for the trace
    gpu.mem.write_u64(rptr_va, 0, where=f"{self.name} read pointer")

  def step(self) -> bool:
    if self.error is not None: return False  # a faulted queue stays stopped, like a hung hardware queue
    try: return self._process()
    except (GPUPageFault, KernelTrap) as e:  # reported through the driver's exception events, as hardware reports them
      self._stop(e)
      return False
    except Exception as e:
      self._stop(e)
      raise

  def _stop(self, err:Exception):
    self.error = err
    if isinstance(err, GPUPageFault) and err.space == "global": err.add_context(nearest=self.gpu.mem.nearest(err.va))  # a packet's access
    events.fault(self.gpu.name, self.name, err)
    log.warning("%s stopped: %s", self.name, err)
    self.gpu.fault(self, err)

  def _current(self) -> Stream|None:
    while self.ibs and self.ibs[-1].pos >= self.ibs[-1].end: self.ibs.pop()
    if self.ibs: return self.ibs[-1]
    return self.ring if self.ring.pos < self.ring.end else None

  def _process(self) -> bool:
    wptr = self.gpu.mem.read_u64(self.wptr_va, where=f"{self.name} write pointer")
    end = wptr * self.PTR_BYTES // 4
    # the runtime can have at most a ring's worth of dwords outstanding; a write pointer behind the read pointer or
    # more than a ring ahead of it would make the CP re-read stale packets around the ring: name it instead
    if not self.ring.pos <= end <= self.ring.pos + self.ring.ndw:
      raise PacketError(f"{self.name}: {self.ring.where(self.ring.pos)}: write pointer 0x{wptr:x} is "
                        f"{'behind the read pointer' if end < self.ring.pos else f'{end - self.ring.pos} dwords ahead of the read pointer'}"
                        f" (read pointer 0x{self.ring.pos * 4 // self.PTR_BYTES:x}), the ring holds {self.ring.ndw} dwords")
    self.ring.end = end
    for st in (self.ring, *self.ibs): st.forget()
    start, progress = self.ring.pos, False
    try:
      while (s:=self._current()) is not None:
        header = s.read(self.gpu.mem, s.pos, 1)[0]
        n = self._length(header, s)
        if s.pos + n > s.end: raise self.packet_error(s, header, f"truncated packet: {n} dwords, but only {s.end - s.pos} were submitted")
        body = s.read(self.gpu.mem, s.pos + 1, n - 1)
        t0 = (self._wait_since or events.now()) if events.enabled else 0  # 0: not traced (a listener may join meanwhile)
        if (skip:=self._execute(header, body, s)) is None:
          if t0 and not self._wait_since: self._wait_since = t0  # the wait's span starts at its first try
          break
        if t0 and events.enabled: self._traced(header, body, s, t0)
        if s.pos + n + skip > s.end: raise self.packet_error(s, header, f"predicated block of {skip} dwords runs past the end")
        s.pos += n + skip
        progress = True
    finally:  # report how far the ring was consumed, also when a packet failed
      if self.ring.pos != start: self.gpu.mem.write_u64(self.rptr_va, self.ring.pos * 4 // self.PTR_BYTES, where=f"{self.name} read pointer")
    return progress

  def _traced(self, header:int, body:list[int], s:Stream, t0:int):
    """The `packet` event of the packet just executed (a `wait` span too when it had to wait), decoded by describe()."""
    op, fields = self.describe(header, body, s)
    end = events.now()
    events.emit("packet", self.gpu.name, self.name, ts=t0, dur=end - t0, engine=self.KIND, where=s.where(s.pos), op=op, **fields)
    if self._wait_since: events.emit("wait", self.gpu.name, self.name, ts=t0, dur=end - t0, op=op, **fields)
    self._wait_since = 0

  def describe(self, header:int, body:list[int], s:Stream) -> tuple[str, dict]:
    """A packet's name and decoded fields, for the trace; subclasses know their packets."""
    return self.opname(header, s), {"body": body}

  def push_ib(self, s:Stream, header:int, va:int, ndw:int):
    if self.ibs: raise self.packet_error(s, header, "an indirect buffer inside an indirect buffer is not modelled", UnmodelledFeature)
    self.ibs.append(Stream(va, max(ndw, 1), 0, ndw, False))

  def opname(self, header:int, s:Stream) -> str: raise Unmodelled(f"{type(self).__name__}.opname")  # subclasses name their packets
  def packet_error(self, s:Stream, header:int, msg:str, cls:type[PacketError]=PacketError) -> PacketError:
    return cls(f"{self.name}: {s.where(s.pos)}: {self.opname(header, s)} (header 0x{header:08x}): {msg}")

def compare(func:int, value:int, ref:int) -> bool:
  """The WAIT_REG_MEM / POLL_REGMEM compare functions (value already masked)."""
  return (True, value < ref, value <= ref, value == ref, value != ref, value >= ref, value > ref)[func]
