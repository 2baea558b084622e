"""The PCI function of an AMD GPU as its configuration space shows it: the type-0 header, the capability list, the
extended capabilities with Resizable BAR, the BARs and the COMMAND gates.

Layout (a Navi-class dGPU endpoint): BAR0 VRAM (64-bit, prefetchable, resizable), BAR2 doorbells (64-bit,
prefetchable), BAR4 I/O, BAR5 registers (32-bit, 1 MiB). Capabilities: vendor-specific 0x48 -> power management 0x50
-> PCI Express 0x64 -> MSI 0xa0; extended: Resizable BAR at 0x100 (BAR0 only). Read-only fields stay read-only (a
write to them is dropped, as the hardware drops it); the BAR address registers keep only their address bits, so
writing all-ones and reading back sizes them.

Gates: register (BAR5) and doorbell (BAR2) accesses need COMMAND.MEMORY (the kernel's `enable` sets it); the device's
own DMA to system memory needs COMMAND.MASTER, which AM clears around a mode-1 reset and sets before it programs the
hubs. A gated access raises PCIAccessRefused naming the function, the BAR and the missing bit.
"""
from __future__ import annotations

from tinygrad.runtime.autogen import pci
from mockgpu.errors import MockGPUError

class PCIAccessRefused(MockGPUError):
  """An access the PCI function does not decode or perform with its COMMAND register as it is: BAR access with memory
  decoding off (a real host reads all-ones and drops writes), device DMA with bus mastering off. Names the function."""

MB = 1 << 20
CAP_VNDR, CAP_PM, CAP_EXP, CAP_MSI, EXT_REBAR = 0x48, 0x50, 0x64, 0xa0, 0x100
BAR0_INITIAL = 256 * MB          # before the driver resizes it: the classic 256 MiB window ("small BAR")
BAR2_SIZE, BAR5_SIZE = 2 * MB, 1 * MB
COMMAND_RW = pci.PCI_COMMAND_IO | pci.PCI_COMMAND_MEMORY | pci.PCI_COMMAND_MASTER | pci.PCI_COMMAND_PARITY | pci.PCI_COMMAND_SERR | \
             pci.PCI_COMMAND_INTX_DISABLE
LNKCTL_RW = 0x0fff               # ASPM control, RCB, link disable/retrain, common clock, ... (the writable low bits)

class PCIFunction:
  def __init__(self, name:str, vendor:int, device:int, revision:int, subsystem_vendor:int, subsystem:int, vram_size:int):
    self.name, self.vram_size = name, vram_size
    self.on_master_change = None   # the device's DMA view follows COMMAND.MASTER at once
    self.cfg = bytearray(4096)
    self.rebar_sizes = [n for n in range(8, 40) if (1 << n) * MB >= BAR0_INITIAL and (1 << n) * MB <= _pow2_at_least(vram_size)]
    self.bar_size = {0: BAR0_INITIAL, 2: BAR2_SIZE, 5: BAR5_SIZE}
    self.bar_addr = {0: 0, 2: 0, 5: 0}
    self._header(vendor, device, revision, subsystem_vendor, subsystem)
    self._capabilities()

  # *** layout ***
  def _put(self, off:int, value:int, size:int): self.cfg[off:off+size] = value.to_bytes(size, "little")
  def _get(self, off:int, size:int) -> int: return int.from_bytes(self.cfg[off:off+size], "little")
  def _header(self, vendor, device, revision, subsystem_vendor, subsystem):
    self._put(pci.PCI_VENDOR_ID, vendor, 2); self._put(pci.PCI_DEVICE_ID, device, 2)
    self._put(pci.PCI_STATUS, pci.PCI_STATUS_CAP_LIST, 2)
    self._put(pci.PCI_REVISION_ID, revision, 1); self._put(pci.PCI_CLASS_PROG, 0x00, 1); self._put(pci.PCI_CLASS_DEVICE, 0x0300, 2)
    self._put(pci.PCI_HEADER_TYPE, pci.PCI_HEADER_TYPE_NORMAL, 1)
    self._put(pci.PCI_SUBSYSTEM_VENDOR_ID, subsystem_vendor, 2); self._put(pci.PCI_SUBSYSTEM_ID, subsystem, 2)
    self._put(pci.PCI_CAPABILITY_LIST, CAP_VNDR, 1)
    self._put(pci.PCI_INTERRUPT_PIN, 1, 1)
    self._put(pci.PCI_BASE_ADDRESS_4, pci.PCI_BASE_ADDRESS_SPACE_IO, 4)
    for bar in (0, 2, 5): self._write_bar_regs(bar)
  def _capabilities(self):
    self._put(CAP_VNDR, pci.PCI_CAP_ID_VNDR | CAP_PM << 8 | 0x08 << 16, 4)
    self._put(CAP_PM, pci.PCI_CAP_ID_PM | CAP_EXP << 8 | 0x0003 << 16, 4)
    self._put(CAP_EXP, pci.PCI_CAP_ID_EXP | CAP_MSI << 8 | (0x2 | pci.PCI_EXP_TYPE_ENDPOINT << 4) << 16, 4)
    self._put(CAP_EXP + pci.PCI_EXP_LNKCAP, 0x4 | 16 << 4 | 0x3 << 10, 4)   # gen4 x16, ASPM L0s/L1 supported
    self._put(CAP_EXP + pci.PCI_EXP_LNKCTL, 0x2, 2)                       # power-on default: ASPM L1 enabled
    self._put(CAP_MSI, pci.PCI_CAP_ID_MSI | 0 << 8 | pci.PCI_MSI_FLAGS_64BIT << 16, 4)
    # Resizable BAR: one resizable BAR (BAR0); capability bits 4.. say which 2^n MiB sizes it takes
    self._put(EXT_REBAR, pci.PCI_EXT_CAP_ID_REBAR | 1 << 16 | 0 << 20, 4)
    self._put(EXT_REBAR + 4, sum(1 << (n + 4) for n in self.rebar_sizes), 4)
    self._rebar_ctrl()
  def _rebar_ctrl(self):
    self._put(EXT_REBAR + 8, 0 | 1 << 5 | (self.bar_size[0] // MB).bit_length() - 1 << 8, 4)

  def _write_bar_regs(self, bar:int):
    off = pci.PCI_BASE_ADDRESS_0 + bar * 4
    if bar == 5: self._put(off, (self.bar_addr[5] & 0xfffffff0) | pci.PCI_BASE_ADDRESS_MEM_TYPE_32, 4); return
    flags = pci.PCI_BASE_ADDRESS_MEM_TYPE_64 | pci.PCI_BASE_ADDRESS_MEM_PREFETCH
    self._put(off, (self.bar_addr[bar] & 0xfffffff0) | flags, 4); self._put(off + 4, self.bar_addr[bar] >> 32, 4)

  # *** config accesses ***
  def read(self, offset:int, size:int) -> int:
    self._check(offset, size)
    return self._get(offset, size)
  def write(self, offset:int, value:int, size:int):
    self._check(offset, size)
    for i in range(size): self._write_byte(offset + i, (value >> (8 * i)) & 0xff)

  def _check(self, offset:int, size:int):
    if size not in (1, 2, 4) or offset % size or not 0 <= offset < len(self.cfg):
      raise PCIAccessRefused(f"{self.name}: config access of {size} bytes at 0x{offset:x} is not naturally aligned inside 4 KiB")

  def _write_byte(self, off:int, byte:int):
    reg, shift = off & ~3, (off & 3) * 8
    if off in (pci.PCI_COMMAND, pci.PCI_COMMAND + 1):
      cmd = (self._get(pci.PCI_COMMAND, 2) & ~(0xff << (8 * (off - pci.PCI_COMMAND)))) | byte << (8 * (off - pci.PCI_COMMAND))
      before = self.bus_master()
      self._put(pci.PCI_COMMAND, cmd & COMMAND_RW, 2)
      if before != self.bus_master() and self.on_master_change is not None: self.on_master_change()
    elif pci.PCI_BASE_ADDRESS_0 <= reg <= pci.PCI_BASE_ADDRESS_5: self._write_bar_byte(reg, shift, byte)
    elif reg == CAP_EXP + pci.PCI_EXP_LNKCTL and shift < 16:
      ctl = (self._get(reg, 2) & ~(0xff << shift)) | byte << shift
      self._put(reg, ctl & LNKCTL_RW, 2)
    elif reg == EXT_REBAR + 8 and shift == 8: self._resize(byte & 0x3f)
    elif off in (pci.PCI_INTERRUPT_LINE, pci.PCI_CACHE_LINE_SIZE, pci.PCI_LATENCY_TIMER) or CAP_MSI + 4 <= off < CAP_MSI + 14 or off == CAP_MSI + 2:
      self.cfg[off] = byte
    # everything else is read-only: dropped, as the hardware drops it

  def _write_bar_byte(self, reg:int, shift:int, byte:int):
    bar = (reg - pci.PCI_BASE_ADDRESS_0) // 4
    hi = bar in (1, 3)
    bar = bar - 1 if hi else bar
    if bar not in self.bar_addr: return          # BAR4 (I/O) and unimplemented BARs: read-only
    mask = ~(self.bar_size[bar] - 1) & (0xffffffffffffffff if bar != 5 else 0xffffffff)
    addr = self.bar_addr[bar]
    bit = shift + (32 if hi else 0)
    addr = (addr & ~(0xff << bit)) | byte << bit
    self.bar_addr[bar] = addr & mask & ~0xf
    self._write_bar_regs(bar)

  def _resize(self, index:int):
    if index + 0 not in self.rebar_sizes: return   # an unsupported size: the control field keeps its value
    self.bar_size[0] = (1 << index) * MB
    self.bar_addr[0] &= ~(self.bar_size[0] - 1)
    self._rebar_ctrl(); self._write_bar_regs(0)

  def resize(self, index:int):
    """The kernel's resourceN_resize: a size index from the capability's mask, else EINVAL."""
    if index not in self.rebar_sizes: raise OSError(22, f"{self.name}: BAR0 cannot be resized to 2^{index} MiB (sizes: {self.rebar_sizes})")
    self._resize(index)

  # *** gates ***
  @property
  def command(self) -> int: return self._get(pci.PCI_COMMAND, 2)
  def memory_enabled(self) -> bool: return bool(self.command & pci.PCI_COMMAND_MEMORY)
  def bus_master(self) -> bool: return bool(self.command & pci.PCI_COMMAND_MASTER)
  def require_memory(self, what:str):
    if not self.memory_enabled(): raise PCIAccessRefused(f"{self.name}: {what} with PCI_COMMAND.MEMORY clear (memory decoding is off)")
  def require_master(self, what:str):
    if not self.bus_master(): raise PCIAccessRefused(f"{self.name}: device DMA ({what}) with PCI_COMMAND.MASTER clear (bus mastering is off)")

def _pow2_at_least(n:int) -> int: return 1 << (n - 1).bit_length()

def rebar_mask(fn:PCIFunction) -> int:
  """resource0_resize reads this: the capability's size bits (bit n = 2^n MiB)."""
  return fn.read(EXT_REBAR + 4, 4) >> 4

