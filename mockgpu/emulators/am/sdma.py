"""SDMA engine 0, queue 0 as AM programs it: the ring registers, RB_CNTL.rb_enable starting the queue (the existing
SDMA executor, mockgpu.emulators.sdma.SDMAQueue), disabling it stopping the queue, and GRBM_SOFT_RESET.soft_reset_sdma0.
Enabling needs the engine unhalted ({F32|MCU}_CNTL.halt = 0), a power-of-two ring and a doorbell. AM never resets a
faulted SDMA queue: it stays stopped until the process ends.
"""
from __future__ import annotations
from tinygrad.runtime.autogen.am import am
from mockgpu.errors import MockGPUError

class SDMA:
  def __init__(self, dev):
    self.dev, regs = dev, dev.regs
    self.engine = "F32" if dev.board.ip_version(am.SDMA0_HWID) < (7, 0, 0) else "MCU"
    self.queue = None
    regs.set(f"regSDMA0_{self.engine}_CNTL", 1 << regs.reg(f"regSDMA0_{self.engine}_CNTL").fields["halt"][0])
    regs.on_write("regSDMA0_QUEUE0_RB_CNTL", self._rb_cntl)

  def _get64(self, lo:str, hi:str) -> int: return self.dev.regs.get(lo) | self.dev.regs.get(hi) << 32

  def _rb_cntl(self, value:int):
    regs, r = self.dev.regs, "regSDMA0_QUEUE0"
    regs.set(f"{r}_RB_CNTL", value)
    enable = regs.field(f"{r}_RB_CNTL", value, "rb_enable")
    if not enable:
      self.stop()
      return
    cntl = f"regSDMA0_{self.engine}_CNTL"
    if regs.field(cntl, regs.get(cntl), "halt"): raise MockGPUError(f"{self.dev.name}: SDMA0 queue 0 enabled while the engine is halted")
    if not regs.field(f"{r}_DOORBELL", regs.get(f"{r}_DOORBELL"), "enable"):
      raise MockGPUError(f"{self.dev.name}: SDMA0 queue 0 enabled without a doorbell")
    from mockgpu.emulators.sdma import SDMAQueue
    ring = self._get64(f"{r}_RB_BASE", f"{r}_RB_BASE_HI") << 8
    size = 4 << regs.field(f"{r}_RB_CNTL", value, "rb_size")
    rptr, wptr = self._get64(f"{r}_RB_RPTR_ADDR_LO", f"{r}_RB_RPTR_ADDR_HI"), self._get64(f"{r}_RB_WPTR_POLL_ADDR_LO", f"{r}_RB_WPTR_POLL_ADDR_HI")
    doorbell = regs.field(f"{r}_DOORBELL_OFFSET", regs.get(f"{r}_DOORBELL_OFFSET"), "offset") * 4
    self.stop()
    self.queue = SDMAQueue(self.dev, 100, ring, size, rptr, wptr)
    self.dev.add_queue(self.queue, doorbell)

  def stop(self):
    if self.queue is not None:
      self.dev.remove_queue(self.queue.queue_id)
      self.queue = None
