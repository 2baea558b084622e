"""The compute command processor (MEC) of an AMD GPU, for one KFD compute queue: PM4 rings and AQL rings.

It executes type-3 packets from the ring between its read pointer and the write pointer the runtime publishes (the
64-bit dword count at write_pointer_address), and reports how far it has read at read_pointer_address, as the MEC
does (at the end of each step, and before a failing packet raises). Dispatches run synchronously in the RDNA
executor, so a dispatch is complete when DISPATCH_DIRECT returns: CS_PARTIAL_FLUSH, ACQUIRE_MEM and the cache-control
fields of RELEASE_MEM have nothing left to wait for and are accepted as no-ops (host memory is coherent). A
WAIT_REG_MEM that is not yet satisfied stops the queue at that packet until the next kick. Registers are known by
name from tinygrad's tables of the board's GC / NBIO versions; performance-counter and thread-trace registers go to the
GPU's performance monitor (emulators/amd/perf.py), whose dispatches run with a recorder; any other register the
dispatch does not use raises UnmodelledFeature (a PacketError and NotImplementedError).

Packet generations (the board's `pm4`): gfx11/gfx12 take tinygrad's pm4_nv encodings, gfx9 (CDNA) pm4_soc15, whose
ACQUIRE_MEM is one dword shorter (CP_COHER_CNTL, size, base, poll interval: no GCR_CNTL) and whose DISPATCH_INITIATOR
has no CS_W32_EN (wave64 is the only mode).

Several XCCs (MI300X, MI350X): KFD loads a queue's MQD on every XCC of the partition (SPX: all of them). An AQL
queue runs on every XCC, each MEC with its own registers: a packet runs on each XCC in turn, PRED_EXEC limits the next
EXEC_COUNT dwords to the XCCs of its VIRTUAL_XCC_ID_SELECT mask, and a dispatch runs on each XCC with its share of the
workgroups (xcc_share); the read pointer is reported once (KFD sets NO_UPDATE_RPTR on all but the first XCC). A PM4
queue's MQD names one target XCC (pm4_target_xcc, from CREATE_QUEUE's queue_percentage bits 15:8) with no workgroup
split (COMPUTE_TG_CHUNK_SIZE 0, logical XCC 0): it runs on that XCC alone, whole dispatches included.
"""
from __future__ import annotations
import importlib, collections, ctypes, functools, struct, time
from tinygrad.runtime.autogen import amdgpu_kd, hsa
from tinygrad.runtime.autogen.am import pm4_nv
from tinygrad.runtime.support.amd import import_soc
from mockgpu import events
from mockgpu.errors import DispatchTooLarge, PacketError, Unmodelled
from mockgpu.emulators.amd_gpu import RingQueue, Stream, UnmodelledFeature, compare, gpu_clock, register, registers_by_address

PM4 = {gen: importlib.import_module(f"tinygrad.runtime.autogen.am.pm4_{gen}") for gen in ("nv", "soc15")}
OPCODES = {}  # the opcode numbers are the same in both generations
for _k, _v in vars(pm4_nv).items():
  if _k.startswith("PACKET3_") and isinstance(_v, int) and 0 <= _v < 0x100: OPCODES.setdefault(_v, _k.removeprefix("PACKET3_"))
# the exact body length of each fixed-size packet, as tinygrad encodes them for each generation
LENGTHS = {gen: {m.PACKET3_ACQUIRE_MEM: 7 if gen == "nv" else 6, m.PACKET3_RELEASE_MEM: 7, m.PACKET3_WAIT_REG_MEM: 6, m.PACKET3_COPY_DATA: 5,
                 m.PACKET3_DISPATCH_DIRECT: 4, m.PACKET3_INDIRECT_BUFFER: 3, m.PACKET3_EVENT_WRITE: 1, m.PACKET3_PRED_EXEC: 1}
           for gen, m in PM4.items()}
# packets that steer the stream (run once, for every XCC together) rather than act on one XCC's pipe
FLOW = {pm4_nv.PACKET3_INDIRECT_BUFFER, pm4_nv.PACKET3_PRED_EXEC}
SH_RANGE = (pm4_nv.PACKET3_SET_SH_REG_START, pm4_nv.PACKET3_SET_SH_REG_END)
UCONFIG_RANGE = (pm4_nv.PACKET3_SET_UCONFIG_REG_START, pm4_nv.PACKET3_SET_UCONFIG_REG_START + 0x10000)
# compute-pipe registers the dispatch reads (or that only steer work between CUs, which are all alike here)
DISPATCH_REGS = {"COMPUTE_PGM_LO", "COMPUTE_PGM_HI", "COMPUTE_PGM_RSRC1", "COMPUTE_PGM_RSRC2", "COMPUTE_PGM_RSRC3",
                 "COMPUTE_TMPRING_SIZE", "COMPUTE_DISPATCH_SCRATCH_BASE_LO", "COMPUTE_DISPATCH_SCRATCH_BASE_HI", "COMPUTE_RESTART_X",
                 "COMPUTE_RESTART_Y", "COMPUTE_RESTART_Z", "COMPUTE_RESOURCE_LIMITS", "COMPUTE_START_X", "COMPUTE_START_Y",
                 "COMPUTE_START_Z", "COMPUTE_NUM_THREAD_X", "COMPUTE_NUM_THREAD_Y", "COMPUTE_NUM_THREAD_Z", "GRBM_GFX_INDEX",
                 "COMPUTE_TG_CHUNK_SIZE", *(f"COMPUTE_USER_DATA_{i}" for i in range(16)),
                 *(f"COMPUTE_STATIC_THREAD_MGMT_SE{i}" for i in range(8))}
ZERO_ONLY_REGS = {"COMPUTE_PIPELINESTAT_ENABLE": "pipeline statistics"}
# one register, two names in tinygrad's tables (gfx11: the SE0-3 CU masks): the name the queue keeps it under
ALIASES = {f"COMPUTE_DESTINATION_EN_SE{i}": f"COMPUTE_STATIC_THREAD_MGMT_SE{i}" for i in range(4)}
PERF_QUEUE_REGS = {"COMPUTE_PERFCOUNT_ENABLE", "COMPUTE_THREAD_TRACE_ENABLE"}  # the pipe's switches for PMC / SQTT (0 or 1)
INITIATOR_FIELDS = ("compute_shader_en", "force_start_at_000", "cs_w32_en")  # the DISPATCH_INITIATOR fields modelled (gfx9 has no cs_w32_en)
MAX_WORKGROUP = 1024  # work-items per workgroup (gfx9 and gfx11 alike)
CLOCK_SELECTS = {9: gpu_clock, 10: lambda: time.monotonic_ns() // 10}  # COPY_DATA src_sel GPU / system clock counters

def xcc_share(xcc:int, num_xcc:int, chunk:int) -> tuple[int, int, int]:
  """Which workgroups the `xcc`-th of the `num_xcc` XCCs running a queue runs of a dispatch, as Dispatch.xcc carries
  it: (xcc, num_xcc, chunk). In SPX mode the dispatcher deals the workgroups out round robin in chunks of
  COMPUTE_TG_CHUNK_SIZE consecutive workgroup indices (x fastest, then y, then z): chunk k goes to XCC k mod num_xcc;
  KFD's MQD sets the chunk to 1 for AQL queues (MI300's round robin by workgroup id). One XCC runs the whole grid.
  A chunk of 0 over several XCCs (only a SET_SH_REG can make one) names no split: that raises."""
  if num_xcc == 1: return (0, 1, max(chunk, 1))
  if chunk == 0: raise Unmodelled(f"a dispatch over {num_xcc} XCCs with COMPUTE_TG_CHUNK_SIZE 0: the split is not defined")
  return (xcc, num_xcc, chunk)

def unmodelled_reason(name:str) -> str|None:
  if "THREAD_TRACE" in name or name == "SPI_CONFIG_CNTL": return "thread trace (SQTT) is not modelled"  # SPI_CONFIG_CNTL: SQ event tokens
  if "PERFCOUNTER" in name or "PERFMON" in name: return "performance counters (PMC) are not modelled"
  return None

class PM4Queue(RingQueue):
  KIND, PTR_BYTES = "PM4", 4
  TG_CHUNK = 0  # COMPUTE_TG_CHUNK_SIZE as KFD's MQD sets it for this kind of queue (0 for PM4 queues)

  def __init__(self, *args, xccs:tuple[int, ...]=(0,), **kwargs):
    """xccs: the XCCs that run the queue (KFD: every XCC of the partition for AQL, the target XCC for PM4)."""
    super().__init__(*args, **kwargs)
    board = self.gpu.board
    self.pm4, self.soc = PM4[board.pm4], import_soc(board.gc_version)
    self.lengths = LENGTHS[board.pm4]
    self.xccs = xccs
    # each running XCC's registers, by name; unwritten registers read 0 but the chunk size the MQD loads
    self.xcc_regs = [collections.defaultdict(int, COMPUTE_TG_CHUNK_SIZE=self.TG_CHUNK) for _ in xccs]
    self.xcc = 0  # which of self.xccs runs the current packet
    self.handlers = {pm4_nv.PACKET3_NOP: self._nop, pm4_nv.PACKET3_SET_SH_REG: self._set_sh_reg,
                     pm4_nv.PACKET3_SET_UCONFIG_REG: self._set_uconfig_reg, pm4_nv.PACKET3_ACQUIRE_MEM: self._acquire_mem,
                     pm4_nv.PACKET3_RELEASE_MEM: self._release_mem, pm4_nv.PACKET3_WAIT_REG_MEM: self._wait_reg_mem,
                     pm4_nv.PACKET3_COPY_DATA: self._copy_data, pm4_nv.PACKET3_DISPATCH_DIRECT: self._dispatch_direct,
                     pm4_nv.PACKET3_INDIRECT_BUFFER: self._indirect_buffer, pm4_nv.PACKET3_EVENT_WRITE: self._event_write,
                     pm4_nv.PACKET3_PRED_EXEC: self._pred_exec}

  @property
  def regs(self) -> collections.defaultdict[str, int]: return self.xcc_regs[self.xcc]
  @property
  def num_xcc(self) -> int: return len(self.xccs)

  def opname(self, header:int, s:Stream) -> str:
    if header >> 30 != 3: return f"type-{header >> 30} packet"
    return f"PACKET3 opcode 0x{(op:=(header >> 8) & 0xff):02x} ({OPCODES.get(op, 'unknown')})"

  def _length(self, header:int, s:Stream) -> int:
    kind = header >> 30
    if kind == 2: return 1  # type-2 filler
    if kind != 3: raise self.packet_error(s, header, "only type-3 packets (and type-2 fillers) are executed on a compute queue")
    op, count = (header >> 8) & 0xff, (header >> 16) & 0x3fff
    if op == pm4_nv.PACKET3_NOP and count == 0x3fff: return 1  # the one-dword NOP
    return count + 2

  def _execute(self, header:int, body:list[int], s:Stream) -> int|None:
    if header >> 30 == 2: return 0
    op = (header >> 8) & 0xff
    if (handler:=self.handlers.get(op)) is None: raise self.packet_error(s, header, "unknown or unmodelled opcode")
    if (want:=self.lengths.get(op)) is not None and len(body) != want:
      raise self.packet_error(s, header, f"wrong packet length: {len(body)} body dwords, expected {want}")
    if op in FLOW: return handler(body, s, header)
    for self.xcc in self._active_xccs(s, header, len(body) + 1):
      if handler(body, s, header) is None: return None  # blocked: every XCC waits at this packet until the next kick
    return 0

  @functools.cached_property
  def _all_xccs(self) -> tuple[int, ...]: return tuple(range(self.num_xcc))

  def _active_xccs(self, s:Stream, header:int, n:int) -> tuple[int, ...]|list[int]:
    """The XCCs that run the packet at s.pos (n dwords): those of the enclosing PRED_EXEC's mask, else all."""
    if s.pred is None or s.pos >= s.pred[0]: return self._all_xccs
    if s.pos + n > s.pred[0]: raise self.packet_error(s, header, f"the packet runs past the end of its PRED_EXEC block (dword {s.pred[0]})")
    return [i for i, x in enumerate(self.xccs) if s.pred[1] >> x & 1]

  def describe(self, header:int, body:list[int], s:Stream) -> tuple[str, dict]:
    if header >> 30 != 3: return f"type-{header >> 30} filler", {}
    op = (header >> 8) & 0xff
    name = OPCODES.get(op, f"opcode 0x{op:02x}")
    if op in (pm4_nv.PACKET3_SET_SH_REG, pm4_nv.PACKET3_SET_UCONFIG_REG):
      start = (SH_RANGE if op == pm4_nv.PACKET3_SET_SH_REG else UCONFIG_RANGE)[0] + (body[0] & 0xffff)
      names = registers_by_address(self.gpu.board.gc_version, self.gpu.board.nbio_version)
      return name, {"registers": {names.get(start + i, f"0x{start + i:x}"): v for i, v in enumerate(body[1:])}}
    if op == pm4_nv.PACKET3_RELEASE_MEM:
      f = release_mem_fields(body)
      return name, {"event": self.soc.enum_VGT_EVENT_TYPE.get(f["event_type"], f["event_type"]), **f}
    if op == pm4_nv.PACKET3_EVENT_WRITE: return name, {"event": self.soc.enum_VGT_EVENT_TYPE.get(body[0] & 0x3f, body[0] & 0x3f)}
    if (decode:=PACKET_FIELDS.get(op)) is not None: return name, decode(body)
    if op == pm4_nv.PACKET3_DISPATCH_DIRECT:
      return name, {"dim_x": body[0], "dim_y": body[1], "dim_z": body[2], "initiator": self._initiator.decode(body[3])}
    return name, {"body": body}

  # *** registers ***
  def _set_sh_reg(self, body, s, header): return self._set_regs(body, s, header, SH_RANGE)
  def _set_uconfig_reg(self, body, s, header): return self._set_regs(body, s, header, UCONFIG_RANGE)

  def _set_regs(self, body, s, header, rng) -> int:
    if len(body) < 2: raise self.packet_error(s, header, f"wrong packet length: {len(body)} body dwords, a register write needs 2 or more")
    start = rng[0] + (body[0] & 0xffff)
    if start + len(body) - 1 > rng[1]: raise self.packet_error(s, header, f"register range 0x{start:x}+{len(body)-1} leaves the block")
    regs, names, hdp = self.regs, self._register_names, self.gpu.hdp
    for i, value in enumerate(body[1:]):
      # the dispatch registers (most writes) inline: _write_reg's first two checks, done once per packet
      if start + i not in hdp and (name:=names.get(start + i)) in DISPATCH_REGS: regs[name] = value
      else: self._write_reg(start + i, value, s, header)
    return 0

  @functools.cached_property
  def _register_names(self) -> dict[int, str]:
    names = registers_by_address(self.gpu.board.gc_version, self.gpu.board.nbio_version)
    out = {addr: ALIASES.get(name, name) for addr, name in names.items()}
    if self.gpu.board.gc_version[0] == 9:  # tinygrad's gfx9 sqtt_stop waits on STATUS at its UCONFIG offset (amd/perf.py)
      out.setdefault(self.gpu.gc.regs["regSQ_THREAD_TRACE_STATUS"].addr[0] - UCONFIG_RANGE[0], "SQ_THREAD_TRACE_STATUS")
    return out

  def _reg_name(self, addr:int, s, header) -> str:
    if (name:=self._register_names.get(addr)) is None: raise self.packet_error(s, header, f"no register at address 0x{addr:x}")
    return name

  def _write_reg(self, addr:int, value:int, s, header):
    if self.gpu.mmio_write(addr, value): return
    name = self._reg_name(addr, s, header)
    if name in DISPATCH_REGS: self.regs[name] = value
    elif name in PERF_QUEUE_REGS and value in (0, 1): self.regs[name] = value
    elif name in PERF_QUEUE_REGS: raise self.packet_error(s, header, f"register {name} = 0x{value:x}: only 0 and 1 are defined")
    elif name in ZERO_ONLY_REGS and value == 0: self.regs[name] = 0
    elif (perf:=self.gpu.perf.owns(addr)) is not None: self._perf(s, header, self.gpu.perf.write, self.xccs[self.xcc], perf, value,
                                                                  self.regs["GRBM_GFX_INDEX"])
    elif name in ZERO_ONLY_REGS: raise self.packet_error(s, header, f"register {name} = 0x{value:x}: {ZERO_ONLY_REGS[name]} are not modelled",
                                                        UnmodelledFeature)
    elif (why:=unmodelled_reason(name)) is not None: raise self.packet_error(s, header, f"register {name}: {why}", UnmodelledFeature)
    else: raise self.packet_error(s, header, f"register {name} (0x{addr:x}) is not modelled", UnmodelledFeature)

  def _read_reg(self, addr:int, s, header) -> int:
    if (value:=self.gpu.mmio_read(addr)) is not None: return value
    name = self._reg_name(addr, s, header)
    if name in DISPATCH_REGS or name in ZERO_ONLY_REGS or name in PERF_QUEUE_REGS: return self.regs[name]
    if (perf:=self.gpu.perf.owns(addr)) is not None:
      return self._perf(s, header, self.gpu.perf.read, self.xccs[self.xcc], perf, self.regs["GRBM_GFX_INDEX"])
    raise self.packet_error(s, header, f"register {name} (0x{addr:x}): {unmodelled_reason(name) or 'reading it is not modelled'}",
                            UnmodelledFeature)

  def _perf(self, s, header, fn, *args):
    """A performance-monitor access (emulators/amd/perf.py), its errors as this packet's."""
    try: return fn(*args)
    except Unmodelled as e: raise self.packet_error(s, header, str(e), UnmodelledFeature) from None
    except PacketError as e: raise self.packet_error(s, header, str(e)) from None

  # *** synchronisation and memory ***
  def _nop(self, body, s, header): return 0
  def _acquire_mem(self, body, s, header): return 0  # cache invalidation/writeback: host memory is coherent

  def _event_write(self, body, s, header) -> int:
    event = body[0] & 0x3f
    if event in (self.soc.CS_PARTIAL_FLUSH, self.soc.CACHE_FLUSH, self.soc.CACHE_FLUSH_AND_INV_EVENT): return 0  # every dispatch has finished
    name = self.soc.enum_VGT_EVENT_TYPE.get(event, f"event 0x{event:x}")
    if name in ("THREAD_TRACE_MARKER", "THREAD_TRACE_FINISH"): return self._perf(s, header, self.gpu.perf.event, self.xccs[self.xcc], name) or 0
    raise self.packet_error(s, header, f"EVENT_WRITE {name}: {unmodelled_reason(name) or 'this event is not modelled'}", UnmodelledFeature)

  def _pred_exec(self, body, s, header) -> int:
    """Run the next EXEC_COUNT dwords only on the XCCs in bits 31:24 (VIRTUAL_XCC_ID_SELECT); skip them when none of
    this GPU's XCCs is selected."""
    count, mask = body[0] & 0x3fff, body[0] >> 24
    if s.pred is not None and s.pos < s.pred[0]: raise self.packet_error(s, header, "PRED_EXEC inside a PRED_EXEC block", UnmodelledFeature)
    if s.is_ring and self.gpu.board.num_xcc > 1:  # tinygrad: "PACKET3_PRED_EXEC doesn't work in rings, only in IBs" (MI300)
      raise self.packet_error(s, header, "PRED_EXEC in the ring of a multi-XCC GPU (it works in indirect buffers only)", UnmodelledFeature)
    if s.pos + 2 + count > s.end: raise self.packet_error(s, header, f"predicated block of {count} dwords runs past the end")
    if not any(mask >> x & 1 for x in self.xccs): return count
    s.pred = (s.pos + 2 + count, mask)
    return 0

  def _wait_reg_mem(self, body, s, header) -> int|None:
    w = wait_reg_mem_fields(body)
    func, mem_space, operation, a_lo, a_hi, ref, mask = w["function"], w["mem_space"], w["operation"], body[1], body[2], w["reference"], w["mask"]
    if func == 7: raise self.packet_error(s, header, "WAIT_REG_MEM compare function 7 is reserved")
    if mem_space == 1 and operation == 0:
      value = self.gpu.mem.read_u32(((a_hi << 32) | a_lo) & ~3, where=f"{self.name} WAIT_REG_MEM")
    elif mem_space == 0 and operation in (0, 1):
      if operation == 1: self._write_reg(a_lo & 0x3ffff, ref, s, header)  # write-wait-write: the request goes to the first register
      value = self._read_reg((a_hi if operation == 1 else a_lo) & 0x3ffff, s, header)
    else: raise self.packet_error(s, header, f"WAIT_REG_MEM mem_space {mem_space} operation {operation} is not modelled", UnmodelledFeature)
    return 0 if compare(func, value & mask, ref) else None

  def _copy_data(self, body, s, header) -> int:
    _, src_lo, src_hi, dst_lo, dst_hi = body
    c = copy_data_fields(body)
    src_sel, dst_sel, wide = c["src_sel"], c["dst_sel"], c["count_sel"]
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
    r = release_mem_fields(body)
    event, dst_sel, int_sel, data_sel, va, d_lo, d_hi, ctxid = (r[k] for k in ("event_type", "dst_sel", "int_sel", "data_sel", "address",
                                                                               "data_lo", "data_hi", "int_ctxid"))
    if event not in (self.soc.CACHE_FLUSH_TS, self.soc.CACHE_FLUSH_AND_INV_TS_EVENT, self.soc.BOTTOM_OF_PIPE_TS, self.soc.CS_DONE):
      raise self.packet_error(s, header, f"RELEASE_MEM event {self.soc.enum_VGT_EVENT_TYPE.get(event, hex(event))} is not an end-of-pipe event")
    if dst_sel > 1: raise self.packet_error(s, header, f"RELEASE_MEM dst_sel {dst_sel} (queue write pointer) is not modelled", UnmodelledFeature)
    if data_sel == 1: self.gpu.mem.write_u32(va & ~3, d_lo, self.name)
    elif data_sel == 2: self.gpu.mem.write_u64(va & ~7, (d_hi << 32) | d_lo, self.name)
    elif data_sel == 3: self.gpu.mem.write_u64(va & ~7, gpu_clock(), self.name)
    elif data_sel != 0: raise self.packet_error(s, header, f"RELEASE_MEM data_sel {data_sel} is not modelled", UnmodelledFeature)
    if int_sel in (1, 2, 4): self.gpu.interrupt(ctxid, 23)  # 3 sends data only; 5 and 6 are conditional on a compare
    elif int_sel not in (0, 3): raise self.packet_error(s, header, f"RELEASE_MEM int_sel {int_sel} is not modelled", UnmodelledFeature)
    return 0

  def _indirect_buffer(self, body, s, header) -> int:
    lo, hi, ctl = body
    if not ctl & self.pm4.INDIRECT_BUFFER_VALID: raise self.packet_error(s, header, "INDIRECT_BUFFER without the VALID bit")
    if ctl & (1 << 20): raise self.packet_error(s, header, "chained indirect buffers are not modelled", UnmodelledFeature)
    if s.pred is not None and s.pos < s.pred[0]:
      raise self.packet_error(s, header, "an INDIRECT_BUFFER inside a PRED_EXEC block is not modelled", UnmodelledFeature)
    self.push_ib(s, header, (hi << 32) | (lo & ~3), ctl & 0xfffff)
    return 0

  # *** dispatch ***
  def _check_workgroup(self, block:tuple[int, int, int], what:str, s, header):
    """A workgroup has 1 to 1024 work-items (the hardware cannot launch more)."""
    if min(block) < 1 or block[0] * block[1] * block[2] > MAX_WORKGROUP:
      raise self.packet_error(s, header, f"{what} = {block}: {block[0] * block[1] * block[2]} work-items per workgroup, "
                                         f"the hardware takes 1 to {MAX_WORKGROUP}")

  def _share(self, s, header) -> tuple[int, int, int]:
    """This XCC's share of the dispatch's workgroups (xcc_share), from its COMPUTE_TG_CHUNK_SIZE."""
    try: return xcc_share(self.xcc, self.num_xcc, self.regs["COMPUTE_TG_CHUNK_SIZE"])
    except Unmodelled as e: raise self.packet_error(s, header, str(e), UnmodelledFeature) from None

  def _check_program(self, rsrc1:int, rsrc3:int, s, header):
    """The program resource words of a gfx9 (CDNA) board must decode as the gfx9 kernel descriptor defines them."""
    if self.gpu.board.gc_version[0] != 9: return
    from mockgpu.compiler.rdna import gfx9
    try: gfx9.ProgramResources.decode(rsrc1, rsrc3, self.gpu.board.wave_front_size)
    except ValueError as e: raise self.packet_error(s, header, str(e)) from None

  @functools.cached_property
  def _initiator_mask(self) -> int:
    """The COMPUTE_DISPATCH_INITIATOR bits the model acts on (the others raise)."""
    reg = self._initiator
    return reg.fields_mask(*(f for f in INITIATOR_FIELDS if f in reg.fields))

  @functools.cached_property
  def _initiator(self): return register(self.gpu.gc, "regCOMPUTE_DISPATCH_INITIATOR")

  def _dispatch_direct(self, body, s, header) -> int:
    gx, gy, gz, initiator = body
    init = self._initiator.decode(initiator)
    if not init["compute_shader_en"]: raise self.packet_error(s, header, "DISPATCH_DIRECT without COMPUTE_SHADER_EN")
    if (extra:=initiator & ~self._initiator_mask):
      raise self.packet_error(s, header, f"DISPATCH_INITIATOR bits 0x{extra:x} are not modelled", UnmodelledFeature)
    if not init["force_start_at_000"] and any(self.regs[f"COMPUTE_START_{a}"] for a in "XYZ"):
      raise self.packet_error(s, header, "a dispatch that starts at a non-zero workgroup is not modelled", UnmodelledFeature)
    if gx * gy * gz == 0: return 0
    r = self.regs
    self._check_workgroup(tuple(r[f"COMPUTE_NUM_THREAD_{a}"] & 0xffff for a in "XYZ"), "COMPUTE_NUM_THREAD_X/Y/Z", s, header)
    self._check_program(r["COMPUTE_PGM_RSRC1"], r["COMPUTE_PGM_RSRC3"], s, header)
    d = self.gpu.executor.Dispatch(arch=self.gpu.board.family, pgm_addr=((r["COMPUTE_PGM_HI"] << 32) | r["COMPUTE_PGM_LO"]) << 8,
                                   rsrc1=r["COMPUTE_PGM_RSRC1"], rsrc2=r["COMPUTE_PGM_RSRC2"], rsrc3=r["COMPUTE_PGM_RSRC3"],
                                   user_data=[r[f"COMPUTE_USER_DATA_{i}"] for i in range(16)], tmpring_size=r["COMPUTE_TMPRING_SIZE"],
                                   scratch_base=((r["COMPUTE_DISPATCH_SCRATCH_BASE_HI"] << 32) | r["COMPUTE_DISPATCH_SCRATCH_BASE_LO"]) << 8,
                                   block=tuple(r[f"COMPUTE_NUM_THREAD_{a}"] & 0xffff for a in "XYZ"), grid=(gx, gy, gz),
                                   wave32=bool(init.get("cs_w32_en", 0)), xcc=self._share(s, header))
    self._run(d, s, header)
    return 0

  def _run(self, d, s, header):
    """Run a dispatch. One beyond what the executor holds (DispatchTooLarge, raised at its entry before it allocates)
    is the queue's fault for an unmodelled dispatch, as the packets' other unmodelled features are."""
    try: return self._run_traced(d)
    except DispatchTooLarge as e: raise self.packet_error(s, header, str(e), UnmodelledFeature) from None
    except PacketError as e:  # the performance monitor's (a dispatch with no CU enabled): this packet's
      if isinstance(e, UnmodelledFeature): raise
      raise self.packet_error(s, header, str(e)) from None

  def _run_traced(self, d):
    """Run a dispatch; traced, a `dispatch` event with its kernel, geometry, decoded resources and what it ran."""
    if not events.enabled: return self._run_profiled(d)[0]
    t0 = events.now()
    stats, prof = self._run_profiled(d)
    fields = self._dispatch_fields(d, stats)
    if prof is not None: fields["modelled_cycles"] = prof.cycles
    events.emit("dispatch", self.gpu.name, self.name, ts=t0, dur=events.now() - t0, **fields)
    return stats

  def _run_profiled(self, d):
    """Run a dispatch; while its XCC counts (PMC) or traces (SQTT) for this queue, on the numpy path with a recorder
    whose block steps give the exact counts and streams (emulators/amd/perf.py)."""
    if not self.gpu.profiling: return self.gpu.executor.run_dispatch(self.gpu.mem, d), None
    perf, xcc = self.gpu.perf, self.xccs[self.xcc]
    if not perf.wants(xcc, self.regs): return self.gpu.executor.run_dispatch(self.gpu.mem, d), None
    from mockgpu.emulators.rdna.recorder import Recorder
    stats = self.gpu.executor.run_dispatch(self.gpu.mem, d, rec:=Recorder())
    return stats, perf.dispatched(xcc, d, rec, self.regs)

  def _dispatch_fields(self, d, stats) -> dict:
    from mockgpu.emulators.rdna.executor import kernel_name, resources
    lds, private = resources(d)
    gc = self.gpu.gc
    return {"kernel": kernel_name(d.pgm_addr), "pgm_addr": d.pgm_addr, "grid": list(d.grid), "block": list(d.block), "wave_size": d.wave_size,
            "rsrc1": gc.regCOMPUTE_PGM_RSRC1.decode(d.rsrc1), "rsrc2": gc.regCOMPUTE_PGM_RSRC2.decode(d.rsrc2),
            "lds_bytes": lds, "scratch_bytes_per_lane": private, "xcc": list(d.xcc), "waves": stats.waves,
            "instructions": stats.wave_instructions, "seconds": stats.seconds, "path": "C" if stats.native else "numpy"}

# *** packet fields, as the PM4 specification names them: what the handlers act on and what the trace shows ***

def release_mem_fields(body:list[int]) -> dict:
  event_dw, sel, a_lo, a_hi, d_lo, d_hi, ctxid = body
  return {"event_type": event_dw & 0x3f, "event_index": (event_dw >> 8) & 0xf, "gcr_cntl": (event_dw >> 12) & 0xfff,
          "dst_sel": (sel >> 16) & 3, "int_sel": (sel >> 24) & 7, "data_sel": (sel >> 29) & 7, "address": (a_hi << 32) | a_lo,
          "data_lo": d_lo, "data_hi": d_hi, "int_ctxid": ctxid}

def wait_reg_mem_fields(body:list[int]) -> dict:
  ctl, a_lo, a_hi, ref, mask, poll = body[:6]
  return {"function": ctl & 7, "mem_space": (ctl >> 4) & 3, "operation": (ctl >> 6) & 3, "engine_sel": (ctl >> 8) & 3,
          "address": (a_hi << 32) | a_lo, "reference": ref, "mask": mask, "poll_interval": poll & 0xffff}

def copy_data_fields(body:list[int]) -> dict:
  ctl, src_lo, src_hi, dst_lo, dst_hi = body
  return {"src_sel": ctl & 0xf, "dst_sel": (ctl >> 8) & 0xf, "count_sel": bool(ctl & (1 << 16)), "wr_confirm": bool(ctl & (1 << 20)),
          "src": (src_hi << 32) | src_lo, "dst": (dst_hi << 32) | dst_lo}

def acquire_mem_fields(body:list[int]) -> dict:
  """gfx10+ (pm4_nv): CP_COHER_CNTL, size (lo, hi), base (lo, hi), poll interval, GCR_CNTL; gfx9 has no GCR_CNTL."""
  out = {"coher_cntl": body[0], "coher_size": (body[2] << 32) | body[1], "coher_base": (body[4] << 32) | body[3], "poll_interval": body[5]}
  if len(body) > 6: out["gcr_cntl"] = body[6]
  return out

PACKET_FIELDS = {pm4_nv.PACKET3_WAIT_REG_MEM: wait_reg_mem_fields, pm4_nv.PACKET3_COPY_DATA: copy_data_fields,
                 pm4_nv.PACKET3_ACQUIRE_MEM: acquire_mem_fields,
                 pm4_nv.PACKET3_INDIRECT_BUFFER: lambda b: {"address": (b[1] << 32) | (b[0] & ~3), "size_dw": b[2] & 0xfffff, "control": b[2]},
                 pm4_nv.PACKET3_PRED_EXEC: lambda b: {"exec_count": b[0] & 0x3fff, "xcc_mask": b[0] >> 24},
                 pm4_nv.PACKET3_NOP: lambda b: {"dwords": len(b)}}

AQL_TYPES = {hsa.HSA_PACKET_TYPE_VENDOR_SPECIFIC: "VENDOR_SPECIFIC", hsa.HSA_PACKET_TYPE_INVALID: "INVALID",
             hsa.HSA_PACKET_TYPE_KERNEL_DISPATCH: "KERNEL_DISPATCH", hsa.HSA_PACKET_TYPE_BARRIER_AND: "BARRIER_AND",
             hsa.HSA_PACKET_TYPE_AGENT_DISPATCH: "AGENT_DISPATCH", hsa.HSA_PACKET_TYPE_BARRIER_OR: "BARRIER_OR"}
AMD_AQL_FORMAT_PM4_IB = 1  # the vendor-specific format whose body is a PM4 INDIRECT_BUFFER packet
# the user SGPRs the packet processor loads, in the order the kernel descriptor's enable bits list them (AMDHSA ABI)
USER_SGPRS = ("PRIVATE_SEGMENT_BUFFER", "DISPATCH_PTR", "QUEUE_PTR", "KERNARG_SEGMENT_PTR", "DISPATCH_ID", "FLAT_SCRATCH_INIT",
              "PRIVATE_SEGMENT_SIZE", "GRID_WORKGROUP_COUNT_X", "GRID_WORKGROUP_COUNT_Y", "GRID_WORKGROUP_COUNT_Z")

class AQLQueue(PM4Queue):
  """An AQL (HSA) compute queue: the MEC reads 64-byte packets; a vendor-specific packet runs a PM4 indirect buffer.

  The read/write pointers are packet indices (read_dispatch_id / write_dispatch_id of the runtime's amd_queue_t). A
  kernel dispatch takes its program, resources and user SGPRs from the kernel descriptor and the amd_queue_t (scratch),
  as the packet processor does, and runs on every XCC with its share of the workgroups (xcc_share). Barrier bits and
  fences have nothing to wait for: every packet has completed when the next one is read. A packet whose header still
  reads INVALID has not been published yet: the queue waits for it.
  """
  KIND, PTR_BYTES = "AQL", 64
  TG_CHUNK = 1  # KFD's MQD for AQL queues (init_mqd_v9_4_3: compute_tg_chunk_size = 1)

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.queue_va = self.rptr_va - hsa.amd_queue_t.read_dispatch_id.offset

  def opname(self, header:int, s:Stream) -> str:
    if not s.is_ring: return super().opname(header, s)
    return f"AQL {AQL_TYPES.get(header & 0xff, f'packet type 0x{header & 0xff:x}')} packet"

  def _length(self, header:int, s:Stream) -> int: return 16 if s.is_ring else super()._length(header, s)

  def describe(self, header:int, body:list[int], s:Stream) -> tuple[str, dict]:
    if not s.is_ring: return super().describe(header, body, s)
    name = AQL_TYPES.get(header & 0xff, f"packet type 0x{header & 0xff:x}")
    if header & 0xff != hsa.HSA_PACKET_TYPE_KERNEL_DISPATCH: return name, {"header": header, "body": body}
    pkt = hsa.hsa_kernel_dispatch_packet_t.from_buffer_copy(struct.pack("<16I", header, *body))
    return name, {k: getattr(pkt, k) or 0 for k in ("setup", "workgroup_size_x", "workgroup_size_y", "workgroup_size_z", "grid_size_x",
                  "grid_size_y", "grid_size_z", "private_segment_size", "group_segment_size", "kernel_object", "kernarg_address")}

  def _execute(self, header:int, body:list[int], s:Stream) -> int|None:
    if not s.is_ring: return super()._execute(header, body, s)
    kind = header & 0xff
    if kind == hsa.HSA_PACKET_TYPE_INVALID: return None
    if kind == hsa.HSA_PACKET_TYPE_VENDOR_SPECIFIC: self._vendor(header, body, s)
    elif kind == hsa.HSA_PACKET_TYPE_KERNEL_DISPATCH: self._kernel_dispatch(header, body, s)
    elif kind in (hsa.HSA_PACKET_TYPE_BARRIER_AND, hsa.HSA_PACKET_TYPE_BARRIER_OR):
      if any(body[1:11]): raise self.packet_error(s, header, "barrier packets with dependency signals are not modelled", UnmodelledFeature)
    else: raise self.packet_error(s, header, "unknown or unmodelled AQL packet type")
    return 0

  def _vendor(self, header, body, s):
    if header >> 16 != AMD_AQL_FORMAT_PM4_IB: raise self.packet_error(s, header, f"vendor format {header >> 16} is not modelled", UnmodelledFeature)
    if body[0] != self.pm4.PACKET3(self.pm4.PACKET3_INDIRECT_BUFFER, 2): raise self.packet_error(s, header, f"PM4_IB packet holds 0x{body[0]:08x}")
    self._indirect_buffer(body[1:4], s, header)

  def _kernel_dispatch(self, header, body, s):
    pkt = hsa.hsa_kernel_dispatch_packet_t.from_buffer_copy(struct.pack("<16I", header, *body))
    if pkt.completion_signal.handle: raise self.packet_error(s, header, "completion signals are not modelled", UnmodelledFeature)
    wg, size = (pkt.workgroup_size_x, pkt.workgroup_size_y, pkt.workgroup_size_z), (pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z)
    self._check_workgroup(wg, "workgroup_size_x/y/z", s, header)
    if any(w == 0 or g % w for g, w in zip(size, wg)):
      raise self.packet_error(s, header, f"grid {size} is not a whole number of {wg} workgroups (partial workgroups are not modelled)",
                              UnmodelledFeature)
    if 0 in size: return  # an empty grid: nothing to run, as DISPATCH_DIRECT with a zero dimension
    kd = amdgpu_kd.llvm_amdhsa_kernel_descriptor_t.from_buffer_copy(self.gpu.mem.read(pkt.kernel_object, 64, where=f"{self.name} kernel descriptor"))
    q = hsa.amd_queue_t.from_buffer_copy(self.gpu.mem.read(self.queue_va, ctypes.sizeof(hsa.amd_queue_t), where=f"{self.name} amd_queue_t"))
    wave32 = bool(kd.kernel_code_properties & hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_WAVEFRONT_SIZE32)
    if wave32 and self.gpu.board.wave64:
      raise self.packet_error(s, header, f"the kernel descriptor at 0x{pkt.kernel_object:x} sets ENABLE_WAVEFRONT_SIZE32, which "
                                         f"{self.gpu.board.name} does not have (wave64 is its only mode)")
    self._check_program(kd.compute_pgm_rsrc1, kd.compute_pgm_rsrc3, s, header)
    lds = (pkt.group_segment_size + 511) // 512
    user = self._user_sgprs(kd, pkt, q, s, header)
    for self.xcc in range(self.num_xcc):
      d = self.gpu.executor.Dispatch(arch=self.gpu.board.family, pgm_addr=pkt.kernel_object + kd.kernel_code_entry_byte_offset,
                                     rsrc1=kd.compute_pgm_rsrc1, rsrc2=(kd.compute_pgm_rsrc2 & ~(0x1ff << 15)) | (lds << 15),
                                     rsrc3=kd.compute_pgm_rsrc3, user_data=user, tmpring_size=q.compute_tmpring_size,
                                     scratch_base=self._xcc_scratch(q), block=wg, grid=tuple(g // w for g, w in zip(size, wg)),
                                     wave32=wave32, xcc=self._share(s, header))
      self._run(d, s, header)

  def _xcc_scratch(self, q) -> int:
    """This XCC's scratch: the queue's scratch backing memory holds one slice per XCC, of the size the runtime puts in
    the scratch buffer descriptor's NUM_RECORDS (tinygrad: size_per_xcc); XCC x takes the x-th slice, as tinygrad's
    PM4 path programs COMPUTE_DISPATCH_SCRATCH_BASE per XCC."""
    return q.scratch_backing_memory_location + self.xccs[self.xcc] * q.scratch_resource_descriptor[2]

  def _user_sgprs(self, kd, pkt, q, s, header) -> list[int]:
    values = {"PRIVATE_SEGMENT_BUFFER": list(q.scratch_resource_descriptor), "DISPATCH_PTR": _lohi(self.ring.va + s.offset(s.pos)),
              "QUEUE_PTR": _lohi(self.queue_va), "KERNARG_SEGMENT_PTR": _lohi(pkt.kernarg_address), "DISPATCH_ID": _lohi(s.pos // 16),
              "PRIVATE_SEGMENT_SIZE": [pkt.private_segment_size]}
    out:list[int] = []
    for name in USER_SGPRS:
      if not kd.kernel_code_properties & getattr(hsa, f"AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_{name}"): continue
      if name not in values: raise self.packet_error(s, header, f"the {name} user SGPR is not modelled", UnmodelledFeature)
      out += values[name]
    if len(out) > 16: raise self.packet_error(s, header, f"{len(out)} user SGPRs, the hardware has 16")
    return out + [0] * (16 - len(out))

def _lohi(x:int|None) -> list[int]:
  x = x or 0  # a c_void_p field of the packet (kernarg_address) reads None when it is 0
  return [x & 0xffffffff, x >> 32]
