"""The SDMA engine of an AMD GPU, for one KFD SDMA queue: SDMA 6.0 (gfx11), 7.0 (gfx12), 4.4 (CDNA3/CDNA4).

Packets are read from the ring between the read and write pointers (64-bit byte offsets in memory, as the SDMA
firmware keeps them). Copies and fills are done at once through the GPU's AddressSpace, so a copy that touches an
unmapped address is a GPU page fault and stops the queue. A POLL_REGMEM whose condition does not hold yet stops the
queue at that packet until the next kick; its retry count is not modelled (the engine keeps polling, never times out).

The packet formats are tinygrad's tables for the board's SDMA IP version, chosen as tinygrad chooses them (the newest
table of the same major version not above it, capped at 6.0). They differ: SDMA 4.x has no GCR_REQ, its
COPY_LINEAR counts 22 bits (4 MiB per packet) and its FENCE has no MTYPE. A header bit no field of the packet's table
defines is reserved: a packet that sets one raises PacketError naming the bits.
"""
from __future__ import annotations
import functools
from tinygrad.runtime.autogen.am import am
from tinygrad.runtime.support.amd import import_module
from mockgpu import events
from mockgpu.emulators.amd_gpu import RingQueue, Stream, UnmodelledFeature, compare, gpu_clock

def sdma_module(board):
  """tinygrad's SDMA packet table for the board, as ops_amd picks it: import_module('sdma', min(version, 6.0.0))."""
  return import_module("sdma", min(board.ip_version(am.SDMA0_HWID), (6, 0, 0)))

@functools.cache
def _tables(sdma):
  """(opcode names, fixed packet lengths (0: variable), the header fields each packet defines) of one SDMA table."""
  names = {v: k.removeprefix("SDMA_OP_") for k, v in vars(sdma).items() if k.startswith("SDMA_OP_") and isinstance(v, int)}
  lengths = {sdma.SDMA_OP_COPY: 7, sdma.SDMA_OP_WRITE: 0, sdma.SDMA_OP_INDIRECT: 6, sdma.SDMA_OP_FENCE: 4, sdma.SDMA_OP_TRAP: 2,
             sdma.SDMA_OP_POLL_REGMEM: 6, sdma.SDMA_OP_TIMESTAMP: 3, sdma.SDMA_OP_CONST_FILL: 5, sdma.SDMA_OP_NOP: 0}
  if hasattr(sdma, "SDMA_OP_GCR_REQ"): lengths[sdma.SDMA_OP_GCR_REQ] = 5
  return names, lengths

@functools.cache
def header_mask(sdma, packet:str) -> int:
  """The header bits that SDMA_PKT_<packet>_HEADER_* fields define in this table."""
  prefix, mask = f"SDMA_PKT_{packet}_HEADER_", 0
  for k, v in vars(sdma).items():
    if k.startswith(prefix) and k.endswith("_mask") and isinstance(v, int): mask |= v << getattr(sdma, k.removesuffix("_mask") + "_shift")
  return mask

# the table's packet name of each opcode (and sub-opcode), for naming the fields of a traced packet
PACKETS = {"COPY": "COPY_LINEAR", "WRITE": "WRITE_UNTILED", "CONST_FILL": "CONSTANT_FILL", "GCR_REQ": "GCR_REQ", "NOP": "NOP",
           "INDIRECT": "INDIRECT", "FENCE": "FENCE", "TRAP": "TRAP", "POLL_REGMEM": "POLL_REGMEM", "TIMESTAMP": "TIMESTAMP_GET_GLOBAL"}

@functools.cache
def packet_fields(sdma, packet:str) -> tuple[tuple[str, int, int, int], ...]:
  """(field, dword, shift, mask) of each field the table defines for SDMA_PKT_<packet>, but the header's op and sub_op
  and reserved bits. A constant's name is <packet>_<DWORD NAME>_<field>: the dword's name is upper case, the field's
  lower; a longer packet sharing the prefix (COPY_LINEAR_RECT) has a header of its own and is left out."""
  prefix, out = f"SDMA_PKT_{packet}_", []
  for k, v in vars(sdma).items():
    if not (k.startswith(prefix) and k.endswith("_shift") and isinstance(v, int)): continue
    tokens = k.removeprefix(prefix).removesuffix("_shift").split("_")
    first_lower = next(i for i, t in enumerate(tokens) if not t.isupper() and not t.isdigit())
    section, name = tokens[:first_lower], "_".join(tokens[first_lower:])
    if section[0] != "HEADER" and hasattr(sdma, f"{prefix}{section[0]}_HEADER_op_shift"): continue  # another packet's
    if name in ("op", "sub_op") or name.startswith("reserved"): continue
    base = k.removesuffix("_shift")
    out.append((name, getattr(sdma, base + "_offset"), v, getattr(sdma, base + "_mask")))
  return tuple(out)

def decode(sdma, packet:str, words:list[int]) -> dict:
  """A packet's fields by name; a 64-bit address split into *_31_N and *_63_32 fields is joined into one."""
  f = {name: (words[dw] >> shift) & mask for name, dw, shift, mask in packet_fields(sdma, packet) if dw < len(words)}
  for lo in [k for k in f if "_31_" in k]:
    base, low_bit = lo.rsplit("_31_", 1)
    if (hi:=base + "_63_32") in f and low_bit.isdigit(): f[base] = (f.pop(hi) << 32) | (f.pop(lo) << int(low_bit))
  return f

class SDMAQueue(RingQueue):
  KIND, PTR_BYTES = "SDMA", 1

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    s = self.sdma = sdma_module(self.gpu.board)
    self.opnames, self.lengths = _tables(s)
    self.handlers = {s.SDMA_OP_NOP: self._nop, s.SDMA_OP_COPY: self._copy, s.SDMA_OP_WRITE: self._write, s.SDMA_OP_INDIRECT: self._indirect,
                     s.SDMA_OP_FENCE: self._fence, s.SDMA_OP_TRAP: self._trap, s.SDMA_OP_POLL_REGMEM: self._poll_regmem,
                     s.SDMA_OP_TIMESTAMP: self._timestamp, s.SDMA_OP_CONST_FILL: self._const_fill}
    if hasattr(s, "SDMA_OP_GCR_REQ"): self.handlers[s.SDMA_OP_GCR_REQ] = self._gcr_req

  def field(self, dw:int, name:str) -> int:
    return (dw >> getattr(self.sdma, f"SDMA_PKT_{name}_shift")) & getattr(self.sdma, f"SDMA_PKT_{name}_mask")

  def opname(self, header:int, s:Stream) -> str:
    return f"SDMA op {(op:=header & 0xff)} ({self.opnames.get(op, 'unknown')}) sub_op {(header >> 8) & 0xff}"

  def describe(self, header:int, body:list[int], s:Stream) -> tuple[str, dict]:
    name = self.opnames.get(header & 0xff, f"op {header & 0xff}")
    packet = "TIMESTAMP_GET" if name == "TIMESTAMP" and (header >> 8) & 0xff == self.sdma.SDMA_SUBOP_TIMESTAMP_GET else PACKETS.get(name, name)
    return packet, decode(self.sdma, packet, [header, *body])

  def _length(self, header:int, s:Stream) -> int:
    op = header & 0xff
    if op not in self.lengths: raise self.packet_error(s, header, "unknown or unmodelled opcode")
    if op == self.sdma.SDMA_OP_NOP: return 1 + self.field(header, "NOP_HEADER_count")
    if op == self.sdma.SDMA_OP_WRITE:  # header, address (2), count (dwords - 1), data
      if s.pos + 4 > s.end: return 4
      return 4 + self.field(s.read(self.gpu.mem, s.pos + 3, 1)[0], "WRITE_UNTILED_DW_3_count") + 1
    return self.lengths[op]

  def _execute(self, header:int, body:list[int], s:Stream) -> int|None:
    return self.handlers[header & 0xff](header, body, s)

  def _header(self, header:int, s:Stream, packet:str):
    """Reject header bits that this SDMA version's packet does not define."""
    if (extra:=header & ~header_mask(self.sdma, packet)):
      raise self.packet_error(s, header, f"header bits 0x{extra:08x} are reserved in {self.sdma.__name__.rsplit('.', 1)[-1]}'s {packet}")

  def _sub_op(self, header:int, s:Stream, allowed:dict[int, str]) -> int:
    if (sub:=(header >> 8) & 0xff) not in allowed: raise self.packet_error(s, header, f"sub_op {sub} is not modelled", UnmodelledFeature)
    return sub

  def _nop(self, header, body, s):
    self._header(header, s, "NOP")
    return 0

  def _gcr_req(self, header, body, s): return 0  # cache control: memory is coherent

  def _copy(self, header, body, s) -> int:
    self._sub_op(header, s, {self.sdma.SDMA_SUBOP_COPY_LINEAR: "linear"})
    backwards = hasattr(self.sdma, "SDMA_PKT_COPY_LINEAR_HEADER_backwards_mask") and self.field(header, "COPY_LINEAR_HEADER_backwards")
    if backwards or self.field(header, "COPY_LINEAR_HEADER_broadcast"):
      raise self.packet_error(s, header, "backwards and broadcast copies are not modelled", UnmodelledFeature)
    self._header(header, s, "COPY_LINEAR")
    count, _, src_lo, src_hi, dst_lo, dst_hi = body
    if count & ~(self.sdma.SDMA_PKT_COPY_LINEAR_COUNT_count_mask << self.sdma.SDMA_PKT_COPY_LINEAR_COUNT_count_shift):
      raise self.packet_error(s, header, f"COPY_LINEAR count 0x{count:x} is wider than the count field "
                                         f"(0x{self.sdma.SDMA_PKT_COPY_LINEAR_COUNT_count_mask:x} is the largest)")
    size = self.field(count, "COPY_LINEAR_COUNT_count") + 1
    t0 = events.now() if events.enabled else 0
    self.gpu.mem.copy((dst_hi << 32) | dst_lo, (src_hi << 32) | src_lo, size, where=f"{self.name} COPY_LINEAR")
    if t0 and events.enabled: events.emit("copy", self.gpu.name, self.name, ts=t0, dur=events.now() - t0, src=(src_hi << 32) | src_lo,
                                   dst=(dst_hi << 32) | dst_lo, size=size)
    return 0

  def _write(self, header, body, s) -> int:
    self._sub_op(header, s, {self.sdma.SDMA_SUBOP_WRITE_LINEAR: "linear"})
    self._header(header, s, "WRITE_UNTILED")
    lo, hi, _, *data = body
    self.gpu.mem.write((hi << 32) | lo, b"".join(d.to_bytes(4, "little") for d in data), where=f"{self.name} WRITE_UNTILED")
    return 0

  def _const_fill(self, header, body, s) -> int:
    self._header(header, s, "CONSTANT_FILL")
    lo, hi, data, count = body
    width = 1 << self.field(header, "CONSTANT_FILL_HEADER_fillsize")  # 1, 2 or 4 bytes (3 is reserved)
    if width == 8: raise self.packet_error(s, header, "CONSTANT_FILL fillsize 3 is reserved")
    size = self.field(count, "CONSTANT_FILL_COUNT_count") + 1  # in bytes
    dst = self.gpu.mem.view((hi << 32) | lo, size, True, f"{self.name} CONSTANT_FILL")  # faults before anything is written
    whole = size - size % width  # filled in place as elements, then the bytes of a last partial element
    dst[:whole].view(f"<u{width}")[:] = data & ((1 << 8 * width) - 1)
    dst[whole:] = list(data.to_bytes(4, "little")[:size - whole])
    return 0

  def _fence(self, header, body, s) -> int:
    self._header(header, s, "FENCE")
    lo, hi, data = body
    self.gpu.mem.write_u32(((hi << 32) | lo) & ~3, data, where=f"{self.name} FENCE")
    return 0

  def _trap(self, header, body, s) -> int:
    self._header(header, s, "TRAP")
    self.gpu.interrupt(self.field(body[0], "TRAP_INT_CONTEXT_int_context"), 28)
    return 0

  def _poll_regmem(self, header, body, s) -> int|None:
    self._header(header, s, "POLL_REGMEM")
    lo, hi, ref, mask, _ = body
    if not self.field(header, "POLL_REGMEM_HEADER_mem_poll"):
      raise self.packet_error(s, header, "POLL_REGMEM of a register is not modelled", UnmodelledFeature)
    if (func:=self.field(header, "POLL_REGMEM_HEADER_func")) == 7: raise self.packet_error(s, header, "POLL_REGMEM function 7 is reserved")
    value = self.gpu.mem.read_u32(((hi << 32) | lo) & ~3, where=f"{self.name} POLL_REGMEM")
    return 0 if compare(func, value & mask, ref) else None

  def _timestamp(self, header, body, s) -> int:
    sub = self._sub_op(header, s, {self.sdma.SDMA_SUBOP_TIMESTAMP_GET: "get", self.sdma.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL: "get global"})
    self._header(header, s, "TIMESTAMP_GET_GLOBAL" if sub == self.sdma.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL else "TIMESTAMP_GET")
    lo, hi = body
    self.gpu.mem.write_u64(((hi << 32) | lo) & ~7, gpu_clock(), where=f"{self.name} TIMESTAMP")
    return 0

  def _indirect(self, header, body, s) -> int:
    self._header(header, s, "INDIRECT")
    lo, hi, size, _, _ = body
    self.push_ib(s, header, (hi << 32) | lo, self.field(size, "INDIRECT_IB_SIZE_ib_size"))
    return 0
