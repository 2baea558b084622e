"""The RM profiler object: MAXWELL_PROFILER_DEVICE (class 0xb2cc, its controls NVB0CC_CTRL_CMD_*), as tinygrad 0.14.0's
PMA=1 drives it (ops_nv.py `_prof_init`, `_prof_setup_pc_sampling`, `_prof_readback`).

The eight controls, each checked as RM checks it, a failure being an NV status with a message naming the culprit:
  POWER_REQUEST_FEATURES       clock/power-gating requests: each 2-bit field IGNORE/DISABLE/ENABLE; all fulfilled
  ALLOC_PMA_STREAM             the ring (a Memory object, offset + size within it, at most NVB0CC_PMA_BUFFER_SIZE_MAX)
                               and the 4 KiB mem-bytes page; one stream per profiler
  RESERVE_HWPM_LEGACY          the GPU's PM system, exclusive: another profiler holding it is NV_ERR_STATE_IN_USE
  RESERVE_PM_AREA_PC_SAMPLER   the PC sampler, exclusive likewise (no parameters)
  BIND_PM_RESOURCES            binds what is reserved and the stream (no parameters): needs a reservation and a stream
  SET_HS_CREDITS               streaming credits per chiplet of the stream: GPC indexes of the board
  EXEC_REG_OPS                 at most 124 32-bit reads/writes inside the PM windows (emulators/nv_pma.py), after
                               RESERVE_HWPM_LEGACY; a bad op sets its regStatus; ALL_OR_NONE applies none of them then
  PMA_STREAM_UPDATE_GET_PUT    consume bytes (MEM_BUMP), update and read the mem-bytes count, PUT, the overflow status
Each call is also checked against the object's state (the order above): the stream named by pmaChannelIdx must exist.
"""
from __future__ import annotations
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu.driver import nv_rm as R
from mockgpu.emulators.nv_pma import PerfMon, Stream, StreamError

POWER_FIELDS = ("ELCG", "BLCG", "SLCG", "ELPG", "IDLE_SLOWDOWN", "VAT")
READS = {nv.NV2080_CTRL_GPU_REG_OP_READ_32}
WRITES = {nv.NV2080_CTRL_GPU_REG_OP_WRITE_32}
WIDE_OR_BYTE = {nv.NV2080_CTRL_GPU_REG_OP_READ_64, nv.NV2080_CTRL_GPU_REG_OP_WRITE_64, nv.NV2080_CTRL_GPU_REG_OP_READ_08,
                nv.NV2080_CTRL_GPU_REG_OP_WRITE_08}
REG_TYPES = {nv.NV2080_CTRL_GPU_REG_OP_TYPE_GLOBAL, nv.NV2080_CTRL_GPU_REG_OP_TYPE_GR_CTX}

def error(status:str, msg:str) -> R.RMError: return R.RMError(getattr(nv, status), f"profiler: {msg}")

class Profiler(R.Object):
  """A profiler object under a subdevice: its reservations, its stream and the PM state it hands the GPU."""
  def __init__(self, h, cls, parent, context:R.Object|None):
    super().__init__(h, cls, parent)
    self.context, self.pm = context, PerfMon(self.gpu.board)
    self.hwpm = self.pc_sampler = False
    self.buffers:tuple = ()   # the stream's Memory objects, referenced while the profiler lives
  def free(self):
    if self.gpu.pm is self.pm: self.gpu.pm = None
    for m in self.buffers: m.uvm_unmapped()
    self.buffers = ()
    for what in ("hwpm", "pc_sampler"):
      if self.gpu.pm_reserved.get(what) is self: del self.gpu.pm_reserved[what]

def alloc(rm:R.RM, h:int, cls:int, parent:R.Object, params:int|None) -> Profiler:
  """MAXWELL_PROFILER_DEVICE under a subdevice; hClientTarget a client, hContextTarget 0 (device profiling) or a channel
  group or channel of that client on the same GPU."""
  rm._expect(parent, R.Subdevice, cls)
  p = R._params(nv.NVB2CC_ALLOC_PARAMETERS, params, "MAXWELL_PROFILER_DEVICE")
  target = rm.client(p.hClientTarget)
  context = None
  if p.hContextTarget:
    context = rm.get(target.handle, p.hContextTarget, (R.GroupObject, R.ChannelObject), "profiler context target")
    if context.gpu is not parent.gpu: raise error("NV_ERR_INVALID_ARGUMENT", f"context 0x{p.hContextTarget:x} is on another GPU")
  return Profiler(h, cls, parent, context)

def power_request(obj:Profiler, p):
  for i, name in enumerate(POWER_FIELDS):
    if (v:=(p.controlMask >> 2 * i) & 3) not in (nv.NVB0CC_CTRL_POWER_FEATURE_IGNORE, nv.NVB0CC_CTRL_POWER_FEATURE_DISABLE,
                                                 nv.NVB0CC_CTRL_POWER_FEATURE_ENABLE):
      raise error("NV_ERR_INVALID_ARGUMENT", f"POWER_REQUEST_FEATURES: {name} request {v}")
  if p.controlMask >> 2 * len(POWER_FIELDS): raise error("NV_ERR_INVALID_ARGUMENT", f"POWER_REQUEST_FEATURES: controlMask 0x{p.controlMask:x}")
  p.globalStatus, p.statusMask = nv.NVB0CC_CTRL_POWER_FEATURE_REQUEST_FULFILLED, 0  # the mock gates nothing: every request holds

def alloc_pma_stream(rm:R.RM, obj:Profiler, p):
  if obj.pm.stream is not None: raise error("NV_ERR_STATE_IN_USE", "ALLOC_PMA_STREAM: the profiler has a PMA stream (channel 0) already")
  client = obj.root().handle
  buf = rm.get(client, p.hMemPmaBuffer, R.Memory, "PMA buffer memory")
  avail = rm.get(client, p.hMemPmaBytesAvailable, R.Memory, "PMA bytes-available memory")
  if p.pmaBufferSize == 0 or p.pmaBufferSize > nv.NVB0CC_PMA_BUFFER_SIZE_MAX or p.pmaBufferSize % 32:
    raise error("NV_ERR_INVALID_ARGUMENT", f"ALLOC_PMA_STREAM: pmaBufferSize 0x{p.pmaBufferSize:x}")
  if p.pmaBufferOffset + p.pmaBufferSize > buf.size:
    raise error("NV_ERR_INVALID_LIMIT", f"ALLOC_PMA_STREAM: 0x{p.pmaBufferOffset:x}+0x{p.pmaBufferSize:x} past the buffer's 0x{buf.size:x} bytes")
  if p.pmaBytesAvailableOffset + nv.NVB0CC_PMA_BYTES_AVAILABLE_SIZE > avail.size:
    raise error("NV_ERR_INVALID_LIMIT", f"ALLOC_PMA_STREAM: bytes-available page at 0x{p.pmaBytesAvailableOffset:x} past 0x{avail.size:x} bytes")
  obj.pm.stream = Stream(buf.host + p.pmaBufferOffset, p.pmaBufferSize, avail.host + p.pmaBytesAvailableOffset)
  # RM holds references to both until the stream goes: the pages stay even if the runtime frees its handles first
  # (counted as mappings, which keep a Memory's backing alive the same way)
  obj.buffers = (buf, avail)
  for m in obj.buffers: m.uvm_maps += 1
  # outputs: the channel, and the buffer's address in the PMA's own VA space (RM maps it there at its start)
  p.pmaChannelIdx, p.pmaBufferVA = 0, 0

def _reserve(obj:Profiler, what:str, name:str):
  held = obj.gpu.pm_reserved.get(what)
  if held is obj: raise error("NV_ERR_STATE_IN_USE", f"{name}: already reserved by this profiler")
  if held is not None: raise error("NV_ERR_STATE_IN_USE", f"{name}: reserved by profiler 0x{held.handle:x}")
  obj.gpu.pm_reserved[what] = obj
  setattr(obj, what, True)

def reserve_hwpm(obj:Profiler, p):
  _reserve(obj, "hwpm", "RESERVE_HWPM_LEGACY" + (" (context-switched)" if p.ctxsw else ""))

def reserve_pc_sampler(obj:Profiler, p): _reserve(obj, "pc_sampler", "RESERVE_PM_AREA_PC_SAMPLER")

def bind(obj:Profiler, p):
  if obj.pm.bound: raise error("NV_ERR_INVALID_STATE", "BIND_PM_RESOURCES: already bound")
  if not (obj.hwpm or obj.pc_sampler): raise error("NV_ERR_INVALID_STATE", "BIND_PM_RESOURCES: nothing is reserved")
  if obj.pm.stream is None: raise error("NV_ERR_INVALID_STATE", "BIND_PM_RESOURCES: no PMA stream is allocated")
  obj.pm.bound, obj.gpu.pm = True, obj.pm

def _stream(obj:Profiler, idx:int, name:str) -> Stream:
  if obj.pm.stream is None or idx != 0: raise error("NV_ERR_INVALID_ARGUMENT", f"{name}: no PMA stream on channel {idx}")
  return obj.pm.stream

def set_hs_credits(obj:Profiler, p):
  _stream(obj, p.pmaChannelIdx, "SET_HS_CREDITS")
  p.statusInfo.status, p.statusInfo.entryIndex = nv.NVB0CC_HS_CREDITS_CMD_STATUS_OK, 0
  if p.numEntries > nv.NVB0CC_MAX_CREDIT_INFO_ENTRIES: raise error("NV_ERR_INVALID_ARGUMENT", f"SET_HS_CREDITS: {p.numEntries} entries")
  for i in range(p.numEntries):
    e = p.creditInfo[i]
    bad = e.chipletType != nv.NVB0CC_CHIPLET_TYPE_GPC or e.chipletIndex >= obj.gpu.board.gpcs
    if bad or e.numCredits == 0:
      p.statusInfo.status = nv.NVB0CC_HS_CREDITS_CMD_STATUS_INVALID_CHIPLET if bad else nv.NVB0CC_HS_CREDITS_CMD_STATUS_INVALID_CREDITS
      p.statusInfo.entryIndex = i
      raise error("NV_ERR_INVALID_ARGUMENT", f"SET_HS_CREDITS: entry {i}: chiplet type {e.chipletType} index {e.chipletIndex}, "
                                             f"{e.numCredits} credits ({obj.gpu.board.name} has {obj.gpu.board.gpcs} GPCs)")

def _reg_status(obj:Profiler, op) -> int:
  if op.regOp in WIDE_OR_BYTE: return nv.NV2080_CTRL_GPU_REG_OP_STATUS_UNSUPPORTED_OP
  if op.regOp not in READS | WRITES: return nv.NV2080_CTRL_GPU_REG_OP_STATUS_INVALID_OP
  if op.regType not in REG_TYPES: return nv.NV2080_CTRL_GPU_REG_OP_STATUS_INVALID_TYPE
  if op.regOffset % 4 or obj.pm.window(op.regOffset) is None: return nv.NV2080_CTRL_GPU_REG_OP_STATUS_INVALID_OFFSET
  return nv.NV2080_CTRL_GPU_REG_OP_STATUS_SUCCESS

def exec_reg_ops(obj:Profiler, p):
  if not 0 < p.regOpCount <= nv.NVB0CC_REGOPS_MAX_COUNT: raise error("NV_ERR_INVALID_ARGUMENT", f"EXEC_REG_OPS: regOpCount {p.regOpCount}")
  if p.mode not in nv.enum_NVB0CC_REGOPS_MODE: raise error("NV_ERR_INVALID_ARGUMENT", f"EXEC_REG_OPS: mode {p.mode}")
  if not obj.hwpm: raise error("NV_ERR_INVALID_STATE", "EXEC_REG_OPS: the PM registers are not reserved (RESERVE_HWPM_LEGACY)")
  ops = [p.regOps[i] for i in range(p.regOpCount)]
  for op in ops: op.regStatus = _reg_status(obj, op)
  bad = [i for i, op in enumerate(ops) if op.regStatus]
  p.bPassed = not bad
  if bad and p.mode == nv.NVB0CC_REGOPS_MODE_ALL_OR_NONE:
    op = ops[bad[0]]
    raise error("NV_ERR_INVALID_ARGUMENT", f"EXEC_REG_OPS: op {bad[0]} (op {op.regOp}, type {op.regType}) at 0x{op.regOffset:x}: "
                                           f"status {op.regStatus}; {len(bad)} of {len(ops)} refused, none applied")
  regs = obj.pm.regs
  for op in ops:
    if op.regStatus: continue
    if op.regOp in WRITES: regs[op.regOffset] = (regs.get(op.regOffset, 0) & ~op.regAndNMaskLo | op.regValueLo & op.regAndNMaskLo) & 0xffffffff
    else: op.regValueLo, op.regValueHi = regs.get(op.regOffset, 0), 0

def update_get_put(obj:Profiler, p):
  s = _stream(obj, p.pmaChannelIdx, "PMA_STREAM_UPDATE_GET_PUT")
  if p.bWait and not p.bUpdateAvailableBytes: raise error("NV_ERR_INVALID_ARGUMENT", "PMA_STREAM_UPDATE_GET_PUT: bWait without bUpdateAvailableBytes")
  try:
    if p.bytesConsumed: s.bump(p.bytesConsumed)
  except StreamError as e: raise error("NV_ERR_INVALID_ARGUMENT", f"PMA_STREAM_UPDATE_GET_PUT: {e}") from None
  # the mock's PMA has written everything by the time the launch's semaphore is released: the wait is over at once
  if p.bUpdateAvailableBytes: p.bytesAvailable = s.update_membytes()
  if p.bReturnPut: p.putPtr = s.put
  p.bOverflowStatus = s.overflow

def attach(rm:R.RM):
  """Adds the profiler class and its eight controls to RM's literal tables. NVIDIA's root (nvidia.build) calls it after
  building RM, so RM does not import this module (which builds on RM)."""
  rm.alloc_handlers[nv.MAXWELL_PROFILER_DEVICE] = lambda h, cls, parent, params: alloc(rm, h, cls, parent, params)
  rm.controls.update({
    nv.NVB0CC_CTRL_CMD_POWER_REQUEST_FEATURES: (Profiler, nv.struct_NVB0CC_CTRL_POWER_REQUEST_FEATURES_PARAMS, power_request),
    nv.NVB0CC_CTRL_CMD_ALLOC_PMA_STREAM: (Profiler, nv.struct_NVB0CC_CTRL_ALLOC_PMA_STREAM_PARAMS, lambda o, p: alloc_pma_stream(rm, o, p)),
    nv.NVB0CC_CTRL_CMD_RESERVE_HWPM_LEGACY: (Profiler, nv.struct_NVB0CC_CTRL_RESERVE_HWPM_LEGACY_PARAMS, reserve_hwpm),
    nv.NVB0CC_CTRL_CMD_RESERVE_PM_AREA_PC_SAMPLER: (Profiler, None, reserve_pc_sampler),
    nv.NVB0CC_CTRL_CMD_BIND_PM_RESOURCES: (Profiler, None, bind),
    nv.NVB0CC_CTRL_CMD_SET_HS_CREDITS: (Profiler, nv.struct_NVB0CC_CTRL_HS_CREDITS_PARAMS, set_hs_credits),
    nv.NVB0CC_CTRL_CMD_EXEC_REG_OPS: (Profiler, nv.struct_NVB0CC_CTRL_EXEC_REG_OPS_PARAMS, exec_reg_ops),
    nv.NVB0CC_CTRL_CMD_PMA_STREAM_UPDATE_GET_PUT: (Profiler, nv.struct_NVB0CC_CTRL_PMA_STREAM_UPDATE_GET_PUT_PARAMS, update_get_put),
  })
