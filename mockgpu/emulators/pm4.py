"""The PM4 compute command processor (MEC) of a gfx11 GPU, for one KFD compute queue.

It executes type-3 packets from the ring between its read pointer and the write pointer the runtime publishes (the
64-bit dword count at write_pointer_address), and reports its read pointer at read_pointer_address after each packet,
as the MEC does. Dispatches run synchronously in the RDNA executor, so a dispatch is complete when DISPATCH_DIRECT
returns: CS_PARTIAL_FLUSH, ACQUIRE_MEM and the cache-control fields of RELEASE_MEM have nothing left to wait for and
are accepted as no-ops (host memory is coherent). A WAIT_REG_MEM that is not yet satisfied stops the queue at that
packet until the next kick.
"""
from __future__ import annotations
import logging, time
from tinygrad.runtime.autogen.am import pm4_nv as pm4, soc_11 as soc
from mockgpu.emulators.amd_gpu import RingQueue, Stream, UnmodelledFeature, compare, gpu_clock, registers_by_address

log = logging.getLogger("mockgpu")
OPCODES = {}
for _k, _v in vars(pm4).items():
  if _k.startswith("PACKET3_") and isinstance(_v, int) and 0 <= _v < 0x100: OPCODES.setdefault(_v, _k.removeprefix("PACKET3_"))
EVENTS = soc.enum_VGT_EVENT_TYPE
# events with nothing to do here: every dispatch has finished and memory is coherent when the packet is reached
NOOP_EVENTS = {soc.CS_PARTIAL_FLUSH, soc.CACHE_FLUSH, soc.CACHE_FLUSH_AND_INV_EVENT}
EOP_EVENTS = {soc.CACHE_FLUSH_TS, soc.CACHE_FLUSH_AND_INV_TS_EVENT, soc.BOTTOM_OF_PIPE_TS, soc.CS_DONE}
SH_RANGE = (pm4.PACKET3_SET_SH_REG_START, pm4.PACKET3_SET_SH_REG_END)
UCONFIG_RANGE = (pm4.PACKET3_SET_UCONFIG_REG_START, pm4.PACKET3_SET_UCONFIG_REG_START + 0x10000)
# compute-pipe registers the dispatch reads (or that only steer work between CUs, which are all alike here)
DISPATCH_REGS = {"COMPUTE_PGM_LO", "COMPUTE_PGM_HI", "COMPUTE_PGM_RSRC1", "COMPUTE_PGM_RSRC2", "COMPUTE_PGM_RSRC3",
                 "COMPUTE_TMPRING_SIZE", "COMPUTE_DISPATCH_SCRATCH_BASE_LO", "COMPUTE_DISPATCH_SCRATCH_BASE_HI", "COMPUTE_RESTART_X",
                 "COMPUTE_RESTART_Y", "COMPUTE_RESTART_Z", "COMPUTE_RESOURCE_LIMITS", "COMPUTE_START_X", "COMPUTE_START_Y",
                 "COMPUTE_START_Z", "COMPUTE_NUM_THREAD_X", "COMPUTE_NUM_THREAD_Y", "COMPUTE_NUM_THREAD_Z", "GRBM_GFX_INDEX",
                 *(f"COMPUTE_USER_DATA_{i}" for i in range(16)), *(f"COMPUTE_STATIC_THREAD_MGMT_SE{i}" for i in range(8))}
ZERO_ONLY_REGS = {"COMPUTE_PIPELINESTAT_ENABLE": "pipeline statistics", "COMPUTE_PERFCOUNT_ENABLE": "performance counters"}
INITIATOR_BITS = {0: "compute_shader_en", 2: "force_start_at_000", 15: "cs_w32_en"}  # the DISPATCH_INITIATOR bits modelled
CLOCK_SELECTS = {9: gpu_clock, 10: lambda: time.monotonic_ns() // 10}  # COPY_DATA src_sel GPU / system clock counters

def unmodelled_reason(name:str) -> str|None:
  if "THREAD_TRACE" in name or name == "SPI_CONFIG_CNTL": return "thread trace (SQTT) is not modelled"  # SPI_CONFIG_CNTL: SQ event tokens
  if "PERFCOUNTER" in name or "PERFMON" in name: return "performance counters (PMC) are not modelled"
  return None

class PM4Queue(RingQueue):
  KIND, PTR_BYTES = "PM4", 4

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.regs:dict[str, int] = {}
    self.handlers = {pm4.PACKET3_NOP: self._nop, pm4.PACKET3_SET_SH_REG: self._set_sh_reg, pm4.PACKET3_SET_UCONFIG_REG: self._set_uconfig_reg,
                     pm4.PACKET3_ACQUIRE_MEM: self._acquire_mem, pm4.PACKET3_RELEASE_MEM: self._release_mem,
                     pm4.PACKET3_WAIT_REG_MEM: self._wait_reg_mem, pm4.PACKET3_COPY_DATA: self._copy_data,
                     pm4.PACKET3_DISPATCH_DIRECT: self._dispatch_direct, pm4.PACKET3_INDIRECT_BUFFER: self._indirect_buffer,
                     pm4.PACKET3_EVENT_WRITE: self._event_write, pm4.PACKET3_PRED_EXEC: self._pred_exec}
    # the exact body length of each fixed-size packet (tinygrad's gfx11 encodings)
    self.lengths = {pm4.PACKET3_ACQUIRE_MEM: 7, pm4.PACKET3_RELEASE_MEM: 7, pm4.PACKET3_WAIT_REG_MEM: 6, pm4.PACKET3_COPY_DATA: 5,
                    pm4.PACKET3_DISPATCH_DIRECT: 4, pm4.PACKET3_INDIRECT_BUFFER: 3, pm4.PACKET3_EVENT_WRITE: 1, pm4.PACKET3_PRED_EXEC: 1}

  def opname(self, header:int) -> str:
    if header >> 30 != 3: return f"type-{header >> 30} packet"
    return f"PACKET3 opcode 0x{(op:=(header >> 8) & 0xff):02x} ({OPCODES.get(op, 'unknown')})"

  def _length(self, header:int, s:Stream) -> int:
    kind = header >> 30
    if kind == 2: return 1  # type-2 filler
    if kind != 3: raise self.packet_error(s, header, "only type-3 packets (and type-2 fillers) are executed on a compute queue")
    op, count = (header >> 8) & 0xff, (header >> 16) & 0x3fff
    if op == pm4.PACKET3_NOP and count == 0x3fff: return 1  # the one-dword NOP
    return count + 2

  def _execute(self, header:int, body:list[int], s:Stream) -> int|None:
    if header >> 30 == 2: return 0
    op = (header >> 8) & 0xff
    if (handler:=self.handlers.get(op)) is None: raise self.packet_error(s, header, "unknown or unmodelled opcode")
    if (want:=self.lengths.get(op)) is not None and len(body) != want:
      raise self.packet_error(s, header, f"wrong packet length: {len(body)} body dwords, expected {want}")
    return handler(body, s, header)

  # *** registers ***
  def _set_sh_reg(self, body, s, header): return self._set_regs(body, s, header, SH_RANGE)
  def _set_uconfig_reg(self, body, s, header): return self._set_regs(body, s, header, UCONFIG_RANGE)

  def _set_regs(self, body, s, header, rng) -> int:
    if len(body) < 2: raise self.packet_error(s, header, f"wrong packet length: {len(body)} body dwords, a register write needs 2 or more")
    start = rng[0] + (body[0] & 0xffff)
    if start + len(body) - 1 > rng[1]: raise self.packet_error(s, header, f"register range 0x{start:x}+{len(body)-1} leaves the block")
    for i, value in enumerate(body[1:]): self._write_reg(start + i, value, s, header)
    return 0

  def _reg_name(self, addr:int, s, header) -> str:
    if (name:=registers_by_address().get(addr)) is None: raise self.packet_error(s, header, f"no register at address 0x{addr:x}")
    return name

  def _write_reg(self, addr:int, value:int, s, header):
    if self.gpu.mmio_write(addr, value): return
    name = self._reg_name(addr, s, header)
    if name in DISPATCH_REGS: self.regs[name] = value
    elif name in ZERO_ONLY_REGS and value == 0: self.regs[name] = 0
    elif name in ZERO_ONLY_REGS: raise self.packet_error(s, header, f"register {name} = 0x{value:x}: {ZERO_ONLY_REGS[name]} are not modelled",
                                                        UnmodelledFeature)
    elif (why:=unmodelled_reason(name)) is not None: raise self.packet_error(s, header, f"register {name}: {why}", UnmodelledFeature)
    else: raise self.packet_error(s, header, f"register {name} (0x{addr:x}) is not modelled", UnmodelledFeature)

  def _read_reg(self, addr:int, s, header) -> int:
    if (value:=self.gpu.mmio_read(addr)) is not None: return value
    name = self._reg_name(addr, s, header)
    if name in DISPATCH_REGS or name in ZERO_ONLY_REGS: return self.regs.get(name, 0)
    raise self.packet_error(s, header, f"register {name} (0x{addr:x}): {unmodelled_reason(name) or 'reading it is not modelled'}",
                            UnmodelledFeature)

  # *** synchronisation and memory ***
  def _nop(self, body, s, header): return 0
  def _acquire_mem(self, body, s, header): return 0  # cache invalidation/writeback: host memory is coherent

  def _event_write(self, body, s, header) -> int:
    event = body[0] & 0x3f
    if event in NOOP_EVENTS: return 0
    name = EVENTS.get(event, f"event 0x{event:x}")
    raise self.packet_error(s, header, f"EVENT_WRITE {name}: {unmodelled_reason(name) or 'this event is not modelled'}", UnmodelledFeature)

  def _pred_exec(self, body, s, header) -> int:
    # execute the next N dwords only on the XCCs selected in bits 31:24; this GPU has one XCC (number 0)
    return 0 if (body[0] >> 24) & 1 else body[0] & 0x3fff

  def _wait_reg_mem(self, body, s, header) -> int|None:
    ctl, a_lo, a_hi, ref, mask = body[:5]
    func, mem_space, operation = ctl & 7, (ctl >> 4) & 3, (ctl >> 6) & 3
    if func == 7: raise self.packet_error(s, header, "WAIT_REG_MEM compare function 7 is reserved")
    if mem_space == 1 and operation == 0:
      value = self.gpu.mem.read_u32(((a_hi << 32) | a_lo) & ~3, where=f"{self.name} WAIT_REG_MEM")
    elif mem_space == 0 and operation in (0, 1):
      if operation == 1: self._write_reg(a_lo & 0x3ffff, ref, s, header)  # write-wait-write: the request goes to the first register
      value = self._read_reg((a_hi if operation == 1 else a_lo) & 0x3ffff, s, header)
    else: raise self.packet_error(s, header, f"WAIT_REG_MEM mem_space {mem_space} operation {operation} is not modelled", UnmodelledFeature)
    return 0 if compare(func, value & mask, ref) else None

  def _copy_data(self, body, s, header) -> int:
    ctl, src_lo, src_hi, dst_lo, dst_hi = body
    src_sel, dst_sel, wide = ctl & 0xf, (ctl >> 8) & 0xf, bool(ctl & (1 << 16))
    if src_sel == 0: value = self._read_reg(src_lo & 0x3ffff, s, header)
    elif src_sel == 2:
      va = (src_hi << 32) | src_lo
      value = self.gpu.mem.read_u64(va, self.name) if wide else self.gpu.mem.read_u32(va, self.name)
    elif src_sel == 4: value = self._read_reg(src_lo & 0x3ffff, s, header)  # perfcounter space: reaches the PMC/SQTT registers
    elif src_sel == 5: value = (src_hi << 32) | src_lo if wide else src_lo
    elif src_sel in CLOCK_SELECTS: value = CLOCK_SELECTS[src_sel]()
    else: raise self.packet_error(s, header, f"COPY_DATA src_sel {src_sel} is not modelled", UnmodelledFeature)
    if not wide: value &= 0xffffffff
    if dst_sel == 0: self._write_reg(dst_lo & 0x3ffff, value, s, header)
    elif dst_sel in (2, 5):
      va = (dst_hi << 32) | dst_lo
      if wide: self.gpu.mem.write_u64(va, value, self.name)
      else: self.gpu.mem.write_u32(va, value, self.name)
    else: raise self.packet_error(s, header, f"COPY_DATA dst_sel {dst_sel} is not modelled", UnmodelledFeature)
    return 0

  def _release_mem(self, body, s, header) -> int:
    event_dw, sel, a_lo, a_hi, d_lo, d_hi, ctxid = body
    event, dst_sel, int_sel, data_sel = event_dw & 0x3f, (sel >> 16) & 3, (sel >> 24) & 7, (sel >> 29) & 7
    if event not in EOP_EVENTS: raise self.packet_error(s, header, f"RELEASE_MEM event {EVENTS.get(event, hex(event))} is not an end-of-pipe event")
    if dst_sel > 1: raise self.packet_error(s, header, f"RELEASE_MEM dst_sel {dst_sel} (queue write pointer) is not modelled", UnmodelledFeature)
    va = (a_hi << 32) | a_lo
    if data_sel == 1: self.gpu.mem.write_u32(va & ~3, d_lo, self.name)
    elif data_sel == 2: self.gpu.mem.write_u64(va & ~7, (d_hi << 32) | d_lo, self.name)
    elif data_sel == 3: self.gpu.mem.write_u64(va & ~7, gpu_clock(), self.name)
    elif data_sel != 0: raise self.packet_error(s, header, f"RELEASE_MEM data_sel {data_sel} is not modelled", UnmodelledFeature)
    if int_sel in (1, 2, 4): self.gpu.interrupt(ctxid, 23)  # 3 sends data only; 5 and 6 are conditional on a compare
    elif int_sel not in (0, 3): raise self.packet_error(s, header, f"RELEASE_MEM int_sel {int_sel} is not modelled", UnmodelledFeature)
    return 0

  def _indirect_buffer(self, body, s, header) -> int:
    lo, hi, ctl = body
    if not ctl & pm4.INDIRECT_BUFFER_VALID: raise self.packet_error(s, header, "INDIRECT_BUFFER without the VALID bit")
    if ctl & (1 << 20): raise self.packet_error(s, header, "chained indirect buffers are not modelled", UnmodelledFeature)
    self.push_ib(s, header, (hi << 32) | (lo & ~3), ctl & 0xfffff)
    return 0

  # *** dispatch ***
  def _dispatch_direct(self, body, s, header) -> int:
    gx, gy, gz, initiator = body
    if not initiator & 1: raise self.packet_error(s, header, "DISPATCH_DIRECT without COMPUTE_SHADER_EN")
    if (extra:=initiator & ~sum(1 << b for b in INITIATOR_BITS)):
      raise self.packet_error(s, header, f"DISPATCH_INITIATOR bits 0x{extra:x} are not modelled", UnmodelledFeature)
    if not initiator & 4 and any(self.regs.get(f"COMPUTE_START_{a}", 0) for a in "XYZ"):
      raise self.packet_error(s, header, "a dispatch that starts at a non-zero workgroup is not modelled", UnmodelledFeature)
    if gx * gy * gz == 0: return 0
    try: from mockgpu.emulators.rdna import Dispatch, run_dispatch  # imported at first dispatch: copies and signals need no executor
    except ImportError as e: raise self.packet_error(s, header, f"the RDNA executor is not available ({e})", UnmodelledFeature) from e
    r = self.regs
    d = Dispatch(arch="rdna3", pgm_addr=((r.get("COMPUTE_PGM_HI", 0) << 32) | r.get("COMPUTE_PGM_LO", 0)) << 8,
                 rsrc1=r.get("COMPUTE_PGM_RSRC1", 0), rsrc2=r.get("COMPUTE_PGM_RSRC2", 0), rsrc3=r.get("COMPUTE_PGM_RSRC3", 0),
                 user_data=[r.get(f"COMPUTE_USER_DATA_{i}", 0) for i in range(16)], tmpring_size=r.get("COMPUTE_TMPRING_SIZE", 0),
                 scratch_base=((r.get("COMPUTE_DISPATCH_SCRATCH_BASE_HI", 0) << 32) | r.get("COMPUTE_DISPATCH_SCRATCH_BASE_LO", 0)) << 8,
                 block=tuple(r.get(f"COMPUTE_NUM_THREAD_{a}", 0) & 0xffff for a in "XYZ"), grid=(gx, gy, gz),
                 wave32=bool(initiator & (1 << 15)))
    if log.isEnabledFor(logging.DEBUG): log.debug("%s: dispatch %s", self.name, d)
    run_dispatch(self.gpu.mem, d)
    return 0
