"""The SDMA 6.0 engine of a gfx11 GPU, for one KFD SDMA queue.

Packets are read from the ring between the read and write pointers (64-bit byte offsets in memory, as the SDMA
firmware keeps them). Copies and fills are done at once through the GPU's AddressSpace, so a copy that touches an
unmapped address is a GPU page fault and stops the queue. A POLL_REGMEM whose condition does not hold yet stops the
queue at that packet until the next kick; its retry count is not modelled (the engine keeps polling, never times out).
"""
from __future__ import annotations
from tinygrad.runtime.autogen.am import sdma_6_0_0 as sdma
from mockgpu.emulators.amd_gpu import RingQueue, Stream, UnmodelledFeature, compare, gpu_clock

OPCODES = {v: k.removeprefix("SDMA_OP_") for k, v in vars(sdma).items() if k.startswith("SDMA_OP_") and isinstance(v, int)}
# header op -> total packet length in dwords (0: variable, computed from the packet itself)
LENGTHS = {sdma.SDMA_OP_COPY: 7, sdma.SDMA_OP_WRITE: 0, sdma.SDMA_OP_INDIRECT: 6, sdma.SDMA_OP_FENCE: 4, sdma.SDMA_OP_TRAP: 2,
           sdma.SDMA_OP_POLL_REGMEM: 6, sdma.SDMA_OP_TIMESTAMP: 3, sdma.SDMA_OP_CONST_FILL: 5, sdma.SDMA_OP_GCR_REQ: 5, sdma.SDMA_OP_NOP: 0}

def field(dw:int, name:str) -> int:
  return (dw >> getattr(sdma, f"SDMA_PKT_{name}_shift")) & getattr(sdma, f"SDMA_PKT_{name}_mask")

class SDMAQueue(RingQueue):
  KIND, PTR_BYTES = "SDMA", 1

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.handlers = {sdma.SDMA_OP_NOP: self._nop, sdma.SDMA_OP_COPY: self._copy, sdma.SDMA_OP_WRITE: self._write,
                     sdma.SDMA_OP_INDIRECT: self._indirect, sdma.SDMA_OP_FENCE: self._fence, sdma.SDMA_OP_TRAP: self._trap,
                     sdma.SDMA_OP_POLL_REGMEM: self._poll_regmem, sdma.SDMA_OP_TIMESTAMP: self._timestamp,
                     sdma.SDMA_OP_CONST_FILL: self._const_fill, sdma.SDMA_OP_GCR_REQ: self._nop}

  def opname(self, header:int, s:Stream) -> str:
    return f"SDMA op {(op:=header & 0xff)} ({OPCODES.get(op, 'unknown')}) sub_op {(header >> 8) & 0xff}"

  def _length(self, header:int, s:Stream) -> int:
    op = header & 0xff
    if op not in LENGTHS: raise self.packet_error(s, header, "unknown or unmodelled opcode")
    if op == sdma.SDMA_OP_NOP: return 1 + field(header, "NOP_HEADER_count")
    if op == sdma.SDMA_OP_WRITE:  # header, address (2), count (dwords - 1), data
      if s.pos + 4 > s.end: return 4
      return 4 + field(s.read(self.gpu.mem, s.pos + 3, 1)[0], "WRITE_UNTILED_DW_3_count") + 1
    return LENGTHS[op]

  def _execute(self, header:int, body:list[int], s:Stream) -> int|None:
    return self.handlers[header & 0xff](header, body, s)

  def _sub_op(self, header:int, s:Stream, allowed:dict[int, str]) -> int:
    if (sub:=(header >> 8) & 0xff) not in allowed: raise self.packet_error(s, header, f"sub_op {sub} is not modelled", UnmodelledFeature)
    return sub

  def _nop(self, header, body, s): return 0

  def _copy(self, header, body, s) -> int:
    self._sub_op(header, s, {sdma.SDMA_SUBOP_COPY_LINEAR: "linear"})
    if field(header, "COPY_LINEAR_HEADER_backwards") or field(header, "COPY_LINEAR_HEADER_broadcast"):
      raise self.packet_error(s, header, "backwards and broadcast copies are not modelled", UnmodelledFeature)
    count, _, src_lo, src_hi, dst_lo, dst_hi = body
    size = field(count, "COPY_LINEAR_COUNT_count") + 1
    self.gpu.mem.copy((dst_hi << 32) | dst_lo, (src_hi << 32) | src_lo, size, where=f"{self.name} COPY_LINEAR")
    return 0

  def _write(self, header, body, s) -> int:
    self._sub_op(header, s, {sdma.SDMA_SUBOP_WRITE_LINEAR: "linear"})
    lo, hi, _, *data = body
    self.gpu.mem.write((hi << 32) | lo, b"".join(d.to_bytes(4, "little") for d in data), where=f"{self.name} WRITE_UNTILED")
    return 0

  def _const_fill(self, header, body, s) -> int:
    lo, hi, data, count = body
    width = 1 << field(header, "CONSTANT_FILL_HEADER_fillsize")  # 1, 2 or 4 bytes (3 is reserved)
    if width == 8: raise self.packet_error(s, header, "CONSTANT_FILL fillsize 3 is reserved")
    size = field(count, "CONSTANT_FILL_COUNT_count") + 1  # in bytes
    dst = self.gpu.mem.view((hi << 32) | lo, size, True, f"{self.name} CONSTANT_FILL")  # faults before anything is written
    whole = size - size % width  # filled in place as elements, then the bytes of a last partial element
    dst[:whole].view(f"<u{width}")[:] = data & ((1 << 8 * width) - 1)
    dst[whole:] = list(data.to_bytes(4, "little")[:size - whole])
    return 0

  def _fence(self, header, body, s) -> int:
    lo, hi, data = body
    self.gpu.mem.write_u32(((hi << 32) | lo) & ~3, data, where=f"{self.name} FENCE")
    return 0

  def _trap(self, header, body, s) -> int:
    self.gpu.interrupt(field(body[0], "TRAP_INT_CONTEXT_int_context"), 28)
    return 0

  def _poll_regmem(self, header, body, s) -> int|None:
    lo, hi, ref, mask, _ = body
    if not field(header, "POLL_REGMEM_HEADER_mem_poll"):
      raise self.packet_error(s, header, "POLL_REGMEM of a register is not modelled", UnmodelledFeature)
    if (func:=field(header, "POLL_REGMEM_HEADER_func")) == 7: raise self.packet_error(s, header, "POLL_REGMEM function 7 is reserved")
    value = self.gpu.mem.read_u32(((hi << 32) | lo) & ~3, where=f"{self.name} POLL_REGMEM")
    return 0 if compare(func, value & mask, ref) else None

  def _timestamp(self, header, body, s) -> int:
    self._sub_op(header, s, {sdma.SDMA_SUBOP_TIMESTAMP_GET: "get", sdma.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL: "get global"})
    lo, hi = body
    self.gpu.mem.write_u64(((hi << 32) | lo) & ~7, gpu_clock(), where=f"{self.name} TIMESTAMP")
    return 0

  def _indirect(self, header, body, s) -> int:
    lo, hi, size, _, _ = body
    self.push_ib(s, header, (hi << 32) | lo, field(size, "INDIRECT_IB_SIZE_ib_size"))
    return 0
