"""The ASM2464 USB4/PCIe bridge with tinygrad's custom firmware, as tinygrad's USB path (DEV=MOCKUSB+AMD) drives it:
its vendor requests over a USB device, and behind it the same AM PCI function (emulators/am/device.py) as on MOCKPCI.

- XDATA (0xE4 read, 0xE5 per-byte write): the chip's 64 KiB data space. 0xB450 is the PCIe LTSSM state: 0 until the
  host powers the link on (0xF3), 0x78 (L0) after.
- The TLP engine (0xF0): a control OUT carries fmt/type, byte enables, mode and 12 bytes (address, value or dword
  count). Mode 0 sends one TLP; non-posted ones (reads, config writes) complete through a control IN of 8 bytes
  (data, completion status in byte 4 bits 7:5). Config TLPs reach bus 0 (the bridge's own port) directly and bus N
  only through the bus numbers the host programmed into the bridges on the way; memory TLPs only land inside the
  bridges' windows on a BAR the GPU decodes. Anything else completes as Unsupported Request. Mode 1 streams the next
  bulk OUT as dwords to memory; mode 2 streams memory to the next bulk IN.
- The SRAM engine (0xF2): arms a bulk OUT into the 512 KiB SRAM (slots of 16 KiB) or, with bit 15 of wValue, the
  next bulk IN from it.
- DMA windows the GPU reaches with system PTEs: bus 0x200000 is the SRAM, 0x820000 the 4 KiB at XDATA 0xA000
  (tinygrad's sys_buf; its fence at XDATA 0xA800), 0x822000 the 4 KiB at XDATA 0xB800 (cq_buf). GPU DMA elsewhere in
  system memory is a fault: the bridge has no path to host memory.
- Asynchronous transfers complete in order, at once; every transfer that lands lets blocked queues run again.
"""
from __future__ import annotations
import ctypes, struct
from tinygrad.runtime.autogen import pci
from mockgpu import events
from mockgpu.errors import MockGPUError

SRAM_BUS, SRAM_SIZE = 0x200000, 0x80000
XDATA_WINDOWS = ((0xA000, 0x820000, 0x1000), (0xB800, 0x822000, 0x1000))   # (XDATA address, bus address, size)
LTSSM, L0 = 0xB450, 0x78
GPU_BUS, BRIDGES = 4, 4
UR, OK = 0b001, 0

class USBProtocolError(MockGPUError):
  """A USB transfer the bridge's firmware does not accept in its state (a bulk with nothing armed, a size that does not
  match, a stream outside a window): names the request."""

class Bridge:
  """One PCIe bridge port on the way to the GPU: a type-1 header's bus numbers, windows and COMMAND."""
  def __init__(self): self.cfg = bytearray(4096)
  def read(self, off:int, size:int) -> int: return int.from_bytes(self.cfg[off:off+size], "little")
  def write(self, off:int, value:int, size:int): self.cfg[off:off+size] = value.to_bytes(size, "little")
  def secondary(self) -> tuple[int, int]: return self.cfg[pci.PCI_SECONDARY_BUS], self.cfg[pci.PCI_SUBORDINATE_BUS]

class ASM2464:
  def __init__(self, dev, machine):
    self.dev, self.machine = dev, machine
    self.xdata = (ctypes.c_uint8 * 0x10000)()
    self.sram = (ctypes.c_uint8 * SRAM_SIZE)()
    self.bridges = [Bridge() for _ in range(BRIDGES)]
    self.completion:bytes|None = None
    self.pending_out:tuple|None = None   # what the next bulk OUT is for: ("stream", address, dwords) / ("sram", offset, size)
    self.pending_in:tuple|None = None
    self.windows = [(SRAM_BUS, SRAM_SIZE, ctypes.addressof(self.sram))] + \
                   [(bus, size, ctypes.addressof(self.xdata) + x) for x, bus, size in XDATA_WINDOWS]

  # *** vendor requests ***
  def control_write(self, request:int, value:int, index:int, data:bytes):
    if events.enabled: events.emit("usb", self.dev.name, op="control_out", request=request, value=value, index=index, size=len(data))
    if request == 0xF3: self.xdata[LTSSM] = L0 if value else 0
    elif request == 0xE5: self.xdata[value & 0xffff] = index & 0xff
    elif request == 0xF0: self._tlp(value & 0xff, value >> 8, index, data)
    elif request == 0xF2: self._sram_arm(value, index)
    else: raise USBProtocolError(f"{self.dev.name}: vendor request 0x{request:02x} (OUT) is not one the bridge firmware knows")
    self.machine.kick()

  def control_read(self, request:int, length:int, value:int, index:int) -> bytes:
    if events.enabled: events.emit("usb", self.dev.name, op="control_in", request=request, value=value, size=length)
    self.machine.kick()
    if request == 0xE4: return bytes(self.xdata[value:value + length])
    if request == 0xF0:
      if self.completion is None: raise USBProtocolError(f"{self.dev.name}: TLP completion read with no non-posted request outstanding")
      data, self.completion = self.completion, None
      return data
    raise USBProtocolError(f"{self.dev.name}: vendor request 0x{request:02x} (IN) is not one the bridge firmware knows")

  def bulk_write(self, payload:bytes):
    if events.enabled: events.emit("usb", self.dev.name, op="bulk_out", size=len(payload))
    if self.pending_out is None: raise USBProtocolError(f"{self.dev.name}: bulk OUT of {len(payload)} bytes with nothing armed")
    kind, where, size = self.pending_out
    self.pending_out = None
    if len(payload) != size: raise USBProtocolError(f"{self.dev.name}: bulk OUT of {len(payload)} bytes, {size} were armed")
    if kind == "sram": ctypes.memmove(ctypes.addressof(self.sram) + where, payload, size)
    else: self._mem_write(where, payload)
    self.machine.kick()

  def bulk_read(self, length:int) -> bytes:
    if events.enabled: events.emit("usb", self.dev.name, op="bulk_in", size=length)
    self.machine.kick()
    if self.pending_in is None: raise USBProtocolError(f"{self.dev.name}: bulk IN of {length} bytes with nothing armed")
    kind, where, size = self.pending_in
    self.pending_in = None
    if length != size: raise USBProtocolError(f"{self.dev.name}: bulk IN of {length} bytes, {size} were armed")
    if kind == "sram": return bytes(self.sram[where:where + size])
    return self._mem_read(where, size)

  # *** the SRAM engine ***
  def _sram_arm(self, value:int, index:int):
    sectors, slot = value & 0x7fff, index & 0xff
    size, off = sectors * 512, slot * 0x4000
    if off + size > SRAM_SIZE: raise USBProtocolError(f"{self.dev.name}: SRAM transfer of {size} bytes at slot {slot} leaves the 512 KiB SRAM")
    if value & 0x8000: self.pending_in = ("sram", off, size)
    else: self.pending_out = ("sram", off, size)

  # *** the TLP engine ***
  def _tlp(self, fmt_type:int, byte_en:int, mode:int, data:bytes):
    lo, hi, val = struct.unpack("<III", data)
    addr = lo | hi << 32
    if mode == 1: self.pending_out = ("stream", addr, val * 4); return
    if mode == 2: self.pending_in = ("stream", addr, val * 4); return
    if fmt_type & 0x1e == 0x4: self._config(fmt_type, byte_en, addr, val)
    elif fmt_type & 0xdf == 0x40: self._mem_single(addr, byte_en, val, write=True)
    elif fmt_type & 0xdf == 0x00: self._mem_single(addr, byte_en, val, write=False)
    else: self._complete(UR)

  def _complete(self, status:int, value:int=0): self.completion = struct.pack("<IBBBB", value, status << 5, 0, 0, 0)

  def _config(self, fmt_type:int, byte_en:int, addr:int, value:int):
    bus, reg, write = addr >> 24, addr & 0xffc, bool(fmt_type & 0x40)
    off = (byte_en & -byte_en).bit_length() - 1
    size = bin(byte_en).count("1")
    target = self._route_config(bus, (addr >> 19) & 0x1f, (addr >> 16) & 0x7, bool(fmt_type & 1))
    if target is None: return self._complete(UR)
    if write: target.write(reg + off, (value >> (8 * off)) & ((1 << (8 * size)) - 1), size)
    self._complete(OK, 0 if write else target.read(reg + off, size) << (8 * off))

  def _route_config(self, bus:int, devn:int, fn:int, type1:bool):
    if devn or fn: return None
    if bus == 0: return None if type1 else self.bridges[0]
    for b in range(bus):   # each bridge on the way must forward the bus number
      sec, sub = self.bridges[b].secondary()
      if not sec <= bus <= sub: return None
    return self.bridges[bus] if bus < BRIDGES else self.dev.pci if bus == GPU_BUS else None

  def _decode(self, addr:int, size:int) -> tuple[int, int]|None:
    """(BAR, offset) a memory TLP at addr lands on, or None (Unsupported Request)."""
    p = self.dev.pci
    if not p.memory_enabled(): return None
    for bar in (0, 2, 5):
      if p.bar_addr[bar] <= addr and addr + size <= p.bar_addr[bar] + p.bar_size[bar]: return bar, addr - p.bar_addr[bar]
    return None

  def _mem_single(self, addr:int, byte_en:int, value:int, write:bool):
    if self._decode(addr, 4) is None or byte_en != 0xf: return self._complete(UR) if not write else None
    if write: self._mem_write(addr, value.to_bytes(4, "little"))
    else: self._complete(OK, int.from_bytes(self._mem_read(addr, 4), "little"))

  def _mem_write(self, addr:int, data:bytes):
    if (hit:=self._decode(addr, len(data))) is None: raise USBProtocolError(f"{self.dev.name}: memory write of {len(data)} bytes at "
                                                                             f"0x{addr:x}: no BAR decodes it (Unsupported Request)")
    bar, off = hit
    if bar == 0: ctypes.memmove(self.dev.vram_base + off, data, len(data))
    elif bar == 5:
      for i in range(0, len(data), 4): self.dev.bar5_write(off + i, int.from_bytes(data[i:i+4], "little"))
    else:
      for i in range(0, len(data), 8): self.dev.doorbell_at(off + i, int.from_bytes(data[i:i+8], "little"))

  def _mem_read(self, addr:int, size:int) -> bytes:
    if (hit:=self._decode(addr, size)) is None: raise USBProtocolError(f"{self.dev.name}: memory read of {size} bytes at 0x{addr:x}: "
                                                                       "no BAR decodes it (Unsupported Request)")
    bar, off = hit
    if bar == 0: return ctypes.string_at(self.dev.vram_base + off, size)
    if bar == 5: return b"".join(self.dev.bar5_read(off + i).to_bytes(4, "little") for i in range(0, size, 4))
    return ctypes.string_at(self.dev.doorbell_mem.base + off, size)
