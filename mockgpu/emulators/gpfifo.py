"""A GPFIFO channel: Host's fetch of GPFIFO entries and pushbuffer segments, the host-class methods, subchannels.

tinygrad writes an entry (pushbuffer address and length) into the ring, bumps GP_PUT in the channel's USERD and
writes the channel's work-submit token to the usermode doorbell. Host then walks GP_GET up to GP_PUT, decodes each
segment's method headers (incrementing, non-incrementing, increment-once, immediate) and sends methods below 0x100 to
itself (semaphores, SET_OBJECT) and the rest to the class bound on the subchannel. A semaphore acquire that is not yet
satisfied stops the channel on that method; the next scheduler pass retries it (a doorbell, or the runtime touching a
signal from the CPU: system.poll).

Errors: a method that fails (an unknown method raises PacketError naming the class, the method and the pushbuffer
address; a kernel the executor cannot run raises its own error) is skipped, the rest of the entry still runs (so the
entry's semaphore releases keep the runtime's timeline moving) and the first error is raised when the entry ends. An
undecodable header skips the rest of its entry. The error goes to the GPU's error list; the doorbell write that started
the scheduler pass raises it once the pass is over (every channel has run as far as it can). tinygrad then does not
advance its put pointer and its next submission rewrites that GPFIFO slot: `submission_failed` rewinds GP_GET to it
and holds it until the doorbell rings again. A GPUPageFault is a channel error instead: it is recorded as an MMU
fault, written to the error notifier, and the whole channel group stops, as RM's robust-channel recovery does
(the faulting channel group, not the GPU: other groups keep running); the runtime's next read of a signal that only
stopped groups release raises (NVGPU.poll_check), so tinygrad's wait loop reaches on_device_hang at once and raises
with the fault address, from the debugger's MMU fault report.
"""
from __future__ import annotations
import ctypes, struct
import numpy as np
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu import events
from mockgpu.errors import PacketError, GPUPageFault, Unmodelled
from mockgpu.emulators.nv_gpu import NVGPU, Engine, Fault, field, write_semaphore, class_name, method_name, timestamp_ns

from mockgpu import log

GP_GET = nv.AmpereAControlGPFifo.GPGet.offset
GP_PUT = nv.AmpereAControlGPFifo.GPPut.offset
ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT = 31  # RM's rc code for an MMU fault, written to the error notifier's info32

class ChannelGroup:
  """A TSG (KEPLER_CHANNEL_GROUP_A): its channels are scheduled together and torn down together on an error."""
  def __init__(self):
    self.channels:list[Channel] = []
    self.scheduled, self.error = False, None
    self.fault_where = ""  # the channel and fault that stopped it (its MMU-fault report's text)

class Channel:
  def __init__(self, gpu:NVGPU, cls:int, chid:int, group:ChannelGroup, ring_va:int, entries:int, userd_host:int, notifier_host:int|None):
    self.gpu, self.cls, self.chid, self.group = gpu, cls, chid, group
    self.name = f"{gpu.name} channel {chid}"
    self.ring_va, self.entries, self.notifier_host = ring_va, entries, notifier_host
    self.userd = np.ctypeslib.as_array((ctypes.c_uint32 * 128).from_address(userd_host))  # AmpereAControlGPFifo, as words
    self.gp_get, self.held = 0, None  # held: a slot the runtime will rewrite, not run before the next doorbell
    self.pos, self.resume, self.executed = 0, 0, 0  # where in the current entry: header word, method within it; methods run
    self._wait_since = 0  # when the method the channel is blocked at was first tried (events.now()), for the trace
    self.error:Exception|None = None  # the first failure in the current entry, reported when the entry ends or blocks
    self.objects:dict[int, Engine] = {}  # class -> the engine object RM allocated on this channel
    self.subch:list[Engine|None] = [None] * 8
    self.sem = {nv.NVC56F_SEM_ADDR_LO: 0, nv.NVC56F_SEM_ADDR_HI: 0, nv.NVC56F_SEM_PAYLOAD_LO: 0, nv.NVC56F_SEM_PAYLOAD_HI: 0}
    group.channels.append(self)

  def doorbell(self): self.held = None

  def submission_failed(self):
    """The runtime's doorbell write raised, so it did not advance its put pointer: its next submission rewrites slot
    GP_PUT-1. Rewind GP_GET to that slot (dropping what is left of it) and hold it until the doorbell rings again."""
    slot = (int(self.userd[GP_PUT // 4]) - 1) % self.entries
    if self.gp_get in (slot, (slot + 1) % self.entries): self.gp_get, self.pos, self.resume = slot, 0, 0
    self.held, self.userd[GP_GET // 4] = slot, self.gp_get

  # *** system.Queue ***
  @property
  def blocked(self) -> bool:
    """Work is left that the last pass could not run: a semaphore acquire waits on memory, perhaps one the CPU writes
    after submitting (a graph's kick signal). NV queues run on doorbells only; system.poll re-steps these when the
    runtime reads or writes a signal, as a real channel would notice the write by itself."""
    return self.group.error is None and self.group.scheduled and self.gp_get != self.held and self.gp_get != int(self.userd[GP_PUT // 4])

  def step(self) -> bool:
    if self.group.error is not None or not self.group.scheduled: return False
    before, outer, self.gpu.running = self.executed, self.gpu.running, self.group
    try: return self._step(before)
    finally: self.gpu.running = outer

  def _step(self, before:int) -> bool:
    while self.gp_get != (put:=int(self.userd[GP_PUT // 4])) and self.gp_get != self.held:
      if put >= self.entries:
        self.held = self.gp_get
        self.gpu.errors.append(PacketError(f"{self.name}: GP_PUT {put} is past the ring's {self.entries} entries"))
        break
      try: done = self._entry(self.gp_get)
      except GPUPageFault as e:
        self._channel_error(e)
        return True
      if done: self.gp_get, self.pos, self.executed = (self.gp_get + 1) % self.entries, 0, self.executed + 1
      self.userd[GP_GET // 4] = self.gp_get
      if self.error is not None: self.gpu.errors.append(self.error)
      self.error = None
      if not done: break
    return self.executed != before

  # *** GPFIFO entries and pushbuffer segments ***
  def _entry(self, idx:int) -> bool:
    """Run GPFIFO entry idx from self.pos on; False if a semaphore acquire blocked it."""
    e = self.gpu.mem.read_u64(self.ring_va + idx * 8, f"{self.name}: GPFIFO entry {idx}")
    lo, hi = e & 0xffffffff, e >> 32
    length = field(hi, nv.NVC56F_GP_ENTRY1_LENGTH)
    if length == 0:  # a control entry
      if (op:=field(hi, nv.NVC56F_GP_ENTRY1_OPCODE)) != nv.NVC56F_GP_ENTRY1_OPCODE_NOP:
        self._failed(PacketError(f"{self.name}: GPFIFO entry {idx}: control opcode {op} is not modelled"))
      return True
    addr = (field(hi, nv.NVC56F_GP_ENTRY1_GET_HI) << 32) | (field(lo, nv.NVC56F_GP_ENTRY0_GET) << 2)
    if events.enabled and self.pos == 0 and self.resume == 0:
      events.emit("gpfifo", self.gpu.name, self.name, entry=idx, address=addr, length=length, fetch=field(hi, nv.NVC56F_GP_ENTRY1_SYNC))
    words = self.gpu.mem.view(addr, length * 4, False, f"{self.name}: pushbuffer").view(np.uint32)
    return self._segment(addr, [int(w) for w in words])

  def _segment(self, addr:int, words:list[int]) -> bool:
    while self.pos < len(words):
      hdr, where = words[self.pos], f"{self.name}: pushbuffer 0x{addr + self.pos * 4:x}"
      op, count = hdr >> 29, (hdr >> 16) & 0x1fff
      subch, mthd = (hdr >> 13) & 7, (hdr & 0xfff) << 2
      if op == nv.NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD: data, steps = [count], [0]
      elif op in (nv.NVC56F_DMA_SEC_OP_INC_METHOD, nv.NVC56F_DMA_SEC_OP_NON_INC_METHOD, 5):  # 5: SEC_OP_ONE_INC
        if self.pos + 1 + count > len(words):
          return self._failed(PacketError(f"{where}: method 0x{mthd:x} with {count} data words runs past the segment end"))
        data = words[self.pos + 1 : self.pos + 1 + count]
        steps = [4 * i for i in range(count)] if op == nv.NVC56F_DMA_SEC_OP_INC_METHOD else \
                [0] * count if op == nv.NVC56F_DMA_SEC_OP_NON_INC_METHOD else [min(i, 1) * 4 for i in range(count)]
      elif op == 7: return True  # SEC_OP_END_PB_SEGMENT
      elif hdr == 0: data, steps = [], []  # a zero word is an empty GRP0 method: no operation
      else: return self._failed(PacketError(f"{where}: method header 0x{hdr:08x} has an unsupported opcode (SEC_OP {op})"))
      for i in range(self.resume, len(data)):
        t0 = (self._wait_since or events.now()) if events.enabled else 0  # 0: not traced (a listener may join meanwhile)
        try: ran = self._method(subch, mthd + steps[i], data[i], where)
        except GPUPageFault: raise
        except Exception as e: ran = self._failed(e)
        if not ran:
          self.resume = i  # blocked: retry this very method on the next pass
          if t0 and not self._wait_since: self._wait_since = t0  # the wait's span starts at its first try
          return False
        if t0 and events.enabled: self._traced(subch, mthd + steps[i], data[i], where, t0)
        self.executed += 1
      self.resume = 0
      self.pos += 1 if op == nv.NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD or hdr == 0 else 1 + count
    return True

  def _failed(self, e:Exception) -> bool:
    """Skip what failed and go on; the entry's first error is raised when the entry ends."""
    log.warning("%s", e)
    events.fault(self.gpu.name, self.name, e)
    if self.error is None: self.error = e
    return True

  def _method(self, subch:int, mthd:int, data:int, where:str) -> bool:
    if mthd < 0x100: return self._host(subch, mthd, data, where)
    if (obj:=self.subch[subch]) is None: raise PacketError(f"{where}: method 0x{mthd:x} on subchannel {subch}, which has no object (SET_OBJECT)")
    obj.method(mthd, data, where)
    return True

  def _traced(self, subch:int, mthd:int, data:int, where:str, t0:int):
    """The `method` event of a method that ran, by class and method name (a `wait` span too for a semaphore acquire that waited)."""
    host = mthd < 0x100
    cls = self.cls if host else self.subch[subch].cls
    name = method_name("NVC56F" if host else self.subch[subch].prefix, mthd)
    end = events.now()
    events.emit("method", self.gpu.name, self.name, ts=t0, dur=end - t0, where=where, subchannel=subch, cls=class_name(cls), method=name, data=data)
    if self._wait_since: events.emit("wait", self.gpu.name, self.name, ts=t0, dur=end - t0, op=name,
                                     semaphore={method_name("NVC56F", k): v for k, v in self.sem.items()})
    self._wait_since = 0

  # *** host class (AMPERE_CHANNEL_GPFIFO_A and later share these methods) ***
  def _host(self, subch:int, mthd:int, data:int, where:str) -> bool:
    if mthd == nv.NVC56F_SET_OBJECT:
      cls = field(data, nv.NVC56F_SET_OBJECT_NVCLASS)
      if cls not in self.objects: raise PacketError(f"{where}: SET_OBJECT {class_name(cls)} (0x{cls:x}): no such object on this channel")
      self.subch[subch] = self.objects[cls]
    elif mthd in self.sem: self.sem[mthd] = data
    elif mthd == nv.NVC56F_SEM_EXECUTE: return self._semaphore(data, where)
    elif mthd not in (nv.NVC56F_NOP, nv.NVC56F_WFI, nv.NVC56F_NON_STALL_INTERRUPT):  # no interrupt handlers to wake: nothing to do
      raise PacketError(f"{where}: unknown host method 0x{mthd:x} for class {class_name(self.cls)} (0x{self.cls:x})")
    return True

  def _semaphore(self, data:int, where:str) -> bool:
    addr = (field(self.sem[nv.NVC56F_SEM_ADDR_HI], nv.NVC56F_SEM_ADDR_HI_OFFSET) << 32) | \
           (field(self.sem[nv.NVC56F_SEM_ADDR_LO], nv.NVC56F_SEM_ADDR_LO_OFFSET) << 2)
    wide = field(data, nv.NVC56F_SEM_EXECUTE_PAYLOAD_SIZE) == nv.NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT
    payload = (self.sem[nv.NVC56F_SEM_PAYLOAD_HI] << 32 | self.sem[nv.NVC56F_SEM_PAYLOAD_LO]) if wide else self.sem[nv.NVC56F_SEM_PAYLOAD_LO]
    op = field(data, nv.NVC56F_SEM_EXECUTE_OPERATION)
    if op == nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE:
      write_semaphore(self.gpu.mem, addr, payload, wide, bool(field(data, nv.NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP)), f"{where}: semaphore")
      self.gpu.release(addr)
      return True
    if op == nv.NVC56F_SEM_EXECUTE_OPERATION_REDUCTION: raise Unmodelled(f"{where}: semaphore reductions are not modelled")
    value = self.gpu.mem.read_u64(addr, where) if wide else self.gpu.mem.read_u32(addr, where)
    return acquired(op, value, payload, 64 if wide else 32)

  def _channel_error(self, e:GPUPageFault):
    """RC: record the fault for the debugger, write every channel's error notifier, stop the group."""
    access = nv.NV_PFAULT_ACCESS_TYPE_VIRT_WRITE if e.write else nv.NV_PFAULT_ACCESS_TYPE_VIRT_READ
    if e.space == "global": e.add_context(nearest=self.gpu.mem.nearest(e.va))  # a method's own access (a copy, a semaphore)
    events.fault(self.gpu.name, self.name, e)
    self.gpu.fault(Fault(e.va, nv.NV_PFAULT_FAULT_TYPE_PTE, access, f"{self.name}: {e}"))
    self.group.error, self.group.fault_where = e, f"{self.name}: {e}"
    for ch in self.group.channels: ch.write_error_notifier(ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT)

  def write_error_notifier(self, code:int):
    """An NvNotification at index NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR: timestamp, info32 = rc code, info16 = chid, status."""
    if self.notifier_host is not None: ctypes.memmove(self.notifier_host, struct.pack("<QIHH", timestamp_ns(), code, self.chid, 0xffff), 16)

def acquired(op:int, value:int, payload:int, bits:int) -> bool:
  mask = (1 << bits) - 1
  if op == nv.NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE: return value == payload
  if op == nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ: return value >= payload
  if op == nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ: return ((value - payload) & mask) < (1 << (bits - 1))  # wrap-around compare
  if op == nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND: return (value & payload) != 0
  if op == nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR: return (~(value | payload) & mask) != 0
  raise PacketError(f"semaphore operation {op} is not a valid SEM_EXECUTE operation")
