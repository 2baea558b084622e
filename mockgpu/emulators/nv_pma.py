"""An NVIDIA GPU's performance monitor as a profiler object drives it: the PM registers its reg ops reach, the PMA
stream (a ring in memory the GPU writes records into, with its get/put handshake and overflow), and the PC sampler.

The driver side (mockgpu/driver/nv_profiler.py: the MAXWELL_PROFILER_DEVICE object and its controls) checks what the
runtime asks for and hands the GPU a `PerfMon`; the compute engine asks it at each launch whether to sample.

Register windows: the PM bases tinygrad 0.14.0 programs (ops_nv.py `_prof_setup_pc_sampling`): PMASYS, PMAGPC, the GR
GPC broadcast window and the per-GPC unicast window, Ampere/Ada or Blackwell. A reg op outside them is refused.
"""
from __future__ import annotations
import ctypes
from mockgpu.boards import NVBoard

# (PMASYS, PMAGPC, GR_GPC broadcast, GPC unicast) bases, Ampere/Ada and Blackwell (ops_nv.py:784)
BASES = {False: (0x24a000, 0x244000, 0x419800, 0x180000), True: (0x2b1000, 0x2b0000, 0x424000, 0x200000)}
GPC_STRIDE, PMAGPC_STRIDE = 0x4000, 0x200
PC_SAMPLING_ENABLE = 0x304     # GR_GPC broadcast register: PC sampling for the context (tinygrad writes 0x80808a)
SM_ENUMERATION, SM_INTERVAL = 0x128, 0x108  # per-SM PC-sampler registers: the id its records carry, the sample interval
PACKET, PAYLOAD = 32, 28       # a PMA packet: 4 payload bytes, a 4-byte header, 24 payload bytes

def blackwell(board:NVBoard) -> bool: return board.qmd_version == 5

def windows(board:NVBoard) -> list[tuple[int, int, str]]:
  """(first, end, name) of each PM register window of the board."""
  sys_, gpc_pma, gr, gpc = BASES[blackwell(board)]
  return [(sys_, sys_ + 0x1000, "PMASYS"), (gpc_pma, gpc_pma + (0x1000 if blackwell(board) else board.gpcs * PMAGPC_STRIDE), "PMAGPC"),
          (gr, gr + 0x800, "GR_GPC"), (gpc, gpc + board.gpcs * GPC_STRIDE, "GPC")]

def sm_reg(board:NVBoard, gpc:int, tpc:int, sm:int, reg:int) -> int:
  """The address of an SM's PC-sampler register, as tinygrad addresses it (every TPC of a GPC present)."""
  base = BASES[blackwell(board)][3] + gpc * GPC_STRIDE
  if blackwell(board): return base + 0x800 + (tpc * board.sm_per_tpc + sm) * 0x200 + reg
  return base + tpc * 0x200 + (0x400, 0x1000)[sm] + reg

class StreamError(Exception):
  """A malformed request to the PMA stream; the driver turns it into an NV status."""

class Stream:
  """A PMA channel's ring: `size` bytes at host address `base` the GPU writes 32-byte packets into at PUT, and the
  4 KiB mem-bytes page at `membytes` where it reports, on request, the bytes written and not yet consumed. The runtime
  reads from its own GET, then bumps it by the bytes consumed. A packet that does not fit in the free space is dropped
  and the overflow status set, as the PMA does; it stays set (the stream must be freed to clear it)."""
  def __init__(self, base:int, size:int, membytes:int):
    self.base, self.size, self.membytes = base, size, membytes
    self.put = self.unread = 0
    self.overflow = False
    self.written = self.dropped = 0   # bytes, for the trace and tests

  def write(self, data:bytes):
    """Append whole packets at PUT, wrapping at the end of the ring, until one does not fit."""
    for i in range(0, len(data), PACKET):
      pkt = data[i:i + PACKET]
      if self.overflow or self.unread + len(pkt) > self.size:
        self.overflow, self.dropped = True, self.dropped + len(data) - i
        return
      first = min(len(pkt), self.size - self.put)
      ctypes.memmove(self.base + self.put, pkt, first)
      if first < len(pkt): ctypes.memmove(self.base, pkt[first:], len(pkt) - first)
      self.put, self.unread, self.written = (self.put + len(pkt)) % self.size, self.unread + len(pkt), self.written + len(pkt)

  def bump(self, consumed:int):
    """MEM_BUMP: the runtime consumed `consumed` bytes from its GET."""
    if consumed > self.unread: raise StreamError(f"bytesConsumed {consumed} is more than the {self.unread} bytes available")
    self.unread -= consumed

  def update_membytes(self) -> int:
    """The PMA writes the available byte count (a 64-bit word) into the mem-bytes page; returns it."""
    ctypes.c_uint64.from_address(self.membytes).value = self.unread
    return self.unread

class PerfMon:
  """What one profiler object holds on a GPU: the PM registers written through reg ops (offset -> value), its PMA
  stream once allocated and bound, and whether a PM trigger armed the sampler."""
  def __init__(self, board:NVBoard):
    self.board, self.regs, self.stream, self.bound, self.triggered = board, {}, None, False, False

  def window(self, offset:int) -> str|None:
    return next((name for first, end, name in windows(self.board) if first <= offset < end), None)

  def trigger(self):
    """NVC6C0_PM_TRIGGER on the compute class: starts sampling for the launches that follow, once the resources are bound."""
    if self.bound: self.triggered = True

  def sampling(self) -> bool:
    """The PC sampler runs: resources bound, a trigger seen, sampling enabled for the context (GR_GPC + 0x304)."""
    return self.bound and self.triggered and self.stream is not None and bool(self.regs.get(BASES[blackwell(self.board)][2] + PC_SAMPLING_ENABLE))
