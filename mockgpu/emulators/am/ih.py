"""IH: the interrupt handler's rings. AM programs two rings (RB_BASE, RB_CNTL, the WPTR writeback address) and reads
ring 0 in its interrupt handler. The model writes 32-byte SOC15 entries into ring 0 while it is enabled, advances
IH_RB_WPTR (a byte offset in bits 17:2) and writes the WPTR back; a full ring sets rb_overflow and drops the entry.
tinygrad writes IH_RB_RPTR with a dword index where hardware takes bytes (ip.py drain); the model reads it as tinygrad
writes it, since only the overflow accounting depends on it.
"""
from __future__ import annotations
import struct, time
from mockgpu import events

class IH:
  def __init__(self, dev):
    self.dev = dev
    self.entries = 0

  def _ring(self) -> tuple[int, int]|None:
    regs = self.dev.regs
    cntl = regs.get("regIH_RB_CNTL")
    if not regs.field("regIH_RB_CNTL", cntl, "rb_enable"): return None
    base = (regs.get("regIH_RB_BASE") | regs.get("regIH_RB_BASE_HI") << 32) << 8
    return base, 4 << regs.field("regIH_RB_CNTL", cntl, "rb_size")

  def post(self, client:int, src:int, ctx:tuple[int, int, int, int]=(0, 0, 0, 0), vmid:int=0, ring_id:int=0) -> bool:
    """Write one entry to ring 0; False when the ring is off or full (the interrupt is lost, as on hardware)."""
    regs, ring = self.dev.regs, self._ring()
    if ring is None: return False
    base, size = ring
    wptr = regs.field("regIH_RB_WPTR", regs.get("regIH_RB_WPTR"), "offset") * 4
    rptr = (regs.get("regIH_RB_RPTR") * 4) % size   # tinygrad's dword index (see above)
    if (wptr + 32) % size == rptr:
      regs.set("regIH_RB_WPTR", regs.get("regIH_RB_WPTR") | 1)   # rb_overflow
      return False
    ts = time.perf_counter_ns() // 10
    entry = struct.pack("<8I", client | src << 8 | ring_id << 16 | vmid << 24, ts & 0xffffffff, (ts >> 32) & 0xffff, 0, *ctx)
    self.dev.write_fb(base + wptr, entry)
    new = (wptr + 32) % size
    regs.set("regIH_RB_WPTR", (regs.get("regIH_RB_WPTR") & 1) | new)
    wb = regs.get("regIH_RB_WPTR_ADDR_LO") | regs.get("regIH_RB_WPTR_ADDR_HI") << 32
    if wb: self.dev.write_fb(wb, new.to_bytes(4, "little"))
    self.entries += 1
    if events.enabled: events.emit("ih", self.dev.name, client=client, src=src, ctx=list(ctx), wptr=new)
    return True
