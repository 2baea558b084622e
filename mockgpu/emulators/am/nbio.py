"""NBIO / RCC / BIF / HDP / S2A: the registers of the PCIe host interface block that AM reads and programs.

- RCC_CONFIG_MEMSIZE (dword 0xde3, read before AM knows any IP base): the VRAM size in MiB; read-only.
- BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL: where the HDP flush register is remapped in BAR5. AM never programs it and relies
  on its value; the model holds 0x7F000 (amdgpu's MMIO remap page, MMIO_REG_HOLE_OFFSET) and decodes a write there as
  an HDP flush.
- RSMU_INDEX / RSMU_DATA: the indirect window to registers past BAR5's 1 MiB.
- RCC_DOORBELL_APER_EN: doorbells count only once it is set.
"""
from __future__ import annotations
from mockgpu.errors import MockGPUError
from mockgpu.emulators.am.regs import read_only

MEMSIZE = 0xde3
HDP_REMAP = 0x7F000

class DoorbellRefused(MockGPUError):
  """A doorbell write the hardware would not deliver: the doorbell aperture is off, or it routes to no active queue."""

class NBIO:
  def __init__(self, dev):
    self.dev, regs = dev, dev.regs
    regs.define(MEMSIZE, "RCC_CONFIG_MEMSIZE", reader=lambda: dev.board.vram_size >> 20, writer=read_only(dev.name, "RCC_CONFIG_MEMSIZE"))
    regs.set("regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL", HDP_REMAP)
    regs.on_write("regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL", lambda v: regs.set("regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL", v))
    regs.define(HDP_REMAP // 4, "HDP_MEM_FLUSH_CNTL (remapped)", reader=lambda: 0, writer=lambda v: dev.hdp_flush())
    regs.on_read("regBIF_BX_PF0_RSMU_DATA", lambda: regs.read(self._rsmu_target()))
    regs.on_write("regBIF_BX_PF0_RSMU_DATA", lambda v: regs.write(self._rsmu_target(), v))

  def _rsmu_target(self) -> int: return self.dev.regs.get("regBIF_BX_PF0_RSMU_INDEX") // 4

  def doorbells_enabled(self) -> bool: return bool(self.dev.regs.get("regRCC_DEV0_EPF0_RCC_DOORBELL_APER_EN") & 1)
