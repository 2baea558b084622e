"""The PCI bus as tinygrad's AM driver (DEV=MOCKPCI+AMD) sees it in sysfs, and the pagemap of host memory.

MOCKGPU_COUNT functions of the selected AMD board sit under /sys/bus/pci/devices (claimed by host_pci.py). Each has a
bus name unique to the process (the PCI domain is the process id: pytest-xdist workers never share AM's per-bus lock
file), its own BAR bus addresses, and the files tinygrad's PCIDevice uses: vendor, device, class, enable, config
(offset-aware reads and writes of the configuration space), resource (the BAR table), resource0/2/5 (BAR mmaps: VRAM,
doorbells, registers) and resource0_resize (Resizable BAR). No kernel driver is bound and there are no sibling
functions. A device model (mockgpu.emulators.am.device) is built the first time one of its files is opened.

/proc/self/pagemap gives each host page tinygrad asks about a fake page frame number, the same one on every read
while the page stays mapped; munmap (and a MAP_FIXED mapping over it) retires it, so a page-table entry left pointing at
it (tinygrad's free keeps the PTEs of system memory) translates to nothing and the GPU faults on it.
"""
from __future__ import annotations
import bisect, errno, mmap, os
from mockgpu import config
from mockgpu.boards import selected_amd_board
from mockgpu.vfs import Handle
from mockgpu.driver.host_pci import PCI_DEVICES, PAGEMAP
from mockgpu.hostmem import PAGE, MS_ASYNC, libc as _libc

FIRST_PFN = 0x100000          # fake frames from 4 GiB up: below the BAR bus addresses
BAR0_BUS, BAR0_STRIDE = 0x100_0000_0000, 0x20_0000_0000    # BAR0 of function i: 64-bit window, 128 GiB apart
BAR2_OFFSET = 0x10_0000_0000
BAR5_BUS = 0xf000_0000
RES_MEM64_PREF, RES_MEM32, RES_IO = 0x14220c, 0x40200, 0x40101

def bus_name(index:int) -> str: return f"{os.getpid():04x}:{index + 1:02x}:00.0"

class HostPages:
  """Fake physical frames of host pages, stable while mapped. Frames are handed out in runs: the pages of one pagemap
  read that are mapped and not yet numbered get consecutive frames, so a buffer's pages form one extent
  (host page, first frame, pages) and translating a run of bus addresses is a search, not a walk over pages."""
  def __init__(self):
    self.by_host:list[tuple[int, int, int]] = []   # (host page address, first frame, pages), sorted by host address
    self.by_pfn:list[tuple[int, int, int]] = []    # (first frame, host page address, pages), sorted by frame
    self.next_pfn = FIRST_PFN
    self.devices:list = []             # the PCI functions, for peer BAR0 bus addresses

  @staticmethod
  def mapped(addr:int, size:int=PAGE) -> bool: return _libc.msync(addr, size, MS_ASYNC) == 0

  def _frame(self, page:int) -> int|None:
    i = bisect.bisect_right(self.by_host, (page, 1 << 64)) - 1
    if i >= 0 and (h:=self.by_host[i])[0] <= page < h[0] + h[2] * PAGE: return h[1] + (page - h[0]) // PAGE
    return None

  def _add(self, page:int, count:int):
    bisect.insort(self.by_host, (page, self.next_pfn, count))
    bisect.insort(self.by_pfn, (self.next_pfn, page, count))
    self.next_pfn += count

  def entries(self, first:int, count:int) -> list[int]:
    """The pagemap entries of `count` host pages from `first`: present bit and frame, or 0 where nothing is mapped."""
    if not self.mapped(first, count * PAGE):
      return [self.entries(first + i * PAGE, 1)[0] if self.mapped(first + i * PAGE) else self._unmapped(first + i * PAGE)
              for i in range(count)]
    out, i = [], 0
    while i < count:
      page = first + i * PAGE
      if (pfn:=self._frame(page)) is not None:
        out.append(1 << 63 | pfn)
        i += 1
        continue
      j = i   # a stretch of unnumbered pages gets consecutive frames
      while j < count and self._frame(first + j * PAGE) is None: j += 1
      base = self.next_pfn
      self._add(page, j - i)
      out.extend(1 << 63 | (base + k) for k in range(j - i))
      i = j
    return out

  def _unmapped(self, page:int) -> int:
    self.retire(page, PAGE)
    return 0

  def retire(self, addr:int, size:int):
    """The host pages of [addr, addr+size) went away (munmap, or a fixed mapping over them): their frames are gone."""
    start, end = addr & ~(PAGE - 1), addr + size
    keep = []
    for h, pfn, n in self.by_host:
      hend = h + n * PAGE
      if hend <= start or h >= end: keep.append((h, pfn, n)); continue
      if h < start: keep.append((h, pfn, (start - h) // PAGE))
      if hend > end:
        skip = (-(-end // PAGE) * PAGE - h) // PAGE
        keep.append((h + skip * PAGE, pfn + skip, n - skip))
    if len(keep) != len(self.by_host) or keep != self.by_host:
      self.by_host = keep
      self.by_pfn = sorted((pfn, h, n) for h, pfn, n in keep)
      for fn in self.devices:   # a translation the GPUs hold to these pages reaches nothing now
        if fn.built: fn.model.gmc.drop_host(start, end)

  def resolve(self, va:int, bus:int, size:int, dev):
    """The host runs (va, size, host address) behind `size` bytes of system bus addresses from `bus`: live frames or a
    peer's BAR0. Addresses that are neither are left out (the GPU faults there)."""
    for peer in self.devices:
      if peer.built and peer.model.pci.bar_addr[0] <= bus and bus + size <= peer.model.pci.bar_addr[0] + peer.model.board.vram_size:
        yield va, size, peer.model.vram_base + bus - peer.model.pci.bar_addr[0]
        return
    pfn, last = bus >> 12, (bus + size) >> 12
    i = max(bisect.bisect_right(self.by_pfn, (pfn, 1 << 64)) - 1, 0)
    while pfn < last and i < len(self.by_pfn):
      first, host, n = self.by_pfn[i]
      if first + n <= pfn: i += 1; continue
      if first > pfn: pfn = min(first, last); continue
      take = min(first + n, last) - pfn
      yield va + (pfn - (bus >> 12)) * PAGE, take * PAGE, host + (pfn - first) * PAGE
      pfn += take
      i += 1

class PagemapHandle(Handle):
  def __init__(self, path, flags, pages:HostPages):
    super().__init__(path, flags)
    self.pages = pages
  def read(self, size=None, offset=None):
    start = self.pos if offset is None else offset
    if size is None or start % 8 or size % 8: raise OSError(errno.EINVAL, f"{PAGEMAP}: reads are whole 8-byte entries")
    out = b"".join(e.to_bytes(8, "little") for e in self.pages.entries(start // 8 * PAGE, size // 8))
    self.pos = start + size
    return out

class Function:
  """One PCI function's sysfs directory; its device model is built on first use."""
  def __init__(self, index:int, system, pages:HostPages):
    self.index, self.system, self.pages, self.bus = index, system, pages, bus_name(index)
    self.board, self.model = selected_amd_board(), None
  @property
  def built(self) -> bool: return self.model is not None
  def dev(self):
    if self.model is None:
      from mockgpu.emulators.am.device import AMDevice
      peers = [f for f in self.pages.devices if f is not self]
      self.model = AMDevice(self.index, self.board, self.bus, self.system, self.pages, peers)
      pci = self.model.pci
      pci.bar_addr[0], pci.bar_addr[2] = BAR0_BUS + self.index * BAR0_STRIDE, BAR0_BUS + self.index * BAR0_STRIDE + BAR2_OFFSET
      pci.bar_addr[5] = BAR5_BUS + self.index * (1 << 20)
      for bar in (0, 2, 5): pci._write_bar_regs(bar)
      self.system.devices.setdefault("AM", []).append(self.model)
    return self.model

  def resource(self) -> str:
    pci = self.dev().pci
    lines = []
    for bar in range(13):
      if bar in (0, 2, 5):
        start, flags = pci.bar_addr[bar], RES_MEM32 if bar == 5 else RES_MEM64_PREF
        lines.append(f"0x{start:016x} 0x{start + pci.bar_size[bar] - 1:016x} 0x{flags:016x}")
      elif bar == 4: lines.append(f"0x{0xe000 + self.index * 0x100:016x} 0x{0xe0ff + self.index * 0x100:016x} 0x{RES_IO:016x}")
      else: lines.append(f"0x{0:016x} 0x{0:016x} 0x{0:016x}")
    return "\n".join(lines) + "\n"

  def enable(self, data:bytes):
    """pci_enable_device / pci_disable_device: memory and I/O decoding on or off."""
    pci, value = self.dev().pci, data.strip()
    if value not in (b"0", b"1"): raise OSError(errno.EINVAL, f"{self.bus}/enable: {data!r}")
    from tinygrad.runtime.autogen import pci as P
    cmd = pci.read(P.PCI_COMMAND, 2)
    decode = P.PCI_COMMAND_MEMORY | P.PCI_COMMAND_IO
    pci.write(P.PCI_COMMAND, (cmd | decode) if value == b"1" else cmd & ~decode, 2)

  def resize(self, data:bytes):
    try: index = int(data.strip())
    except ValueError: raise OSError(errno.EINVAL, f"{self.bus}/resource0_resize: {data!r}") from None
    self.dev().pci.resize(index)

class ConfigHandle(Handle):
  def __init__(self, path, flags, fn:Function):
    super().__init__(path, flags)
    self.fn = fn
  def read(self, size=None, offset=None):
    start, pci = self.pos if offset is None else offset, self.fn.dev().pci
    size = 4096 - start if size is None else size
    data = b"".join(pci.read(start + i, 1).to_bytes(1, "little") for i in range(size))
    self.pos = start + size
    return data
  def write(self, data, offset=None):
    start, pci = self.pos if offset is None else offset, self.fn.dev().pci
    if len(data) in (1, 2, 4) and start % len(data) == 0: pci.write(start, int.from_bytes(data, "little"), len(data))
    else:
      for i, b in enumerate(data): pci.write(start + i, b, 1)
    self.pos = start + len(data)

class BarHandle(Handle):
  def __init__(self, path, flags, fn:Function, bar:int):
    super().__init__(path, flags)
    self.fn, self.bar = fn, bar
  def mmap(self, start, size, prot, flags, offset):
    dev = self.fn.dev()
    dev.pci.require_memory(f"mmap of BAR{self.bar}")
    if offset < 0 or offset + size > dev.pci.bar_size[self.bar]:
      raise OSError(errno.EINVAL, f"{self.path}: mmap of 0x{offset:x}+0x{size:x} is outside the BAR (0x{dev.pci.bar_size[self.bar]:x} bytes)")
    from mockgpu.hostmem import host_mmap, MAP_FIXED
    if self.bar == 0: return host_mmap(start, size, prot, mmap.MAP_SHARED | (flags & MAP_FIXED), dev.vram_fd, offset)
    if self.bar == 2:
      addr = dev.doorbell_mem.map_at(start, size, prot, flags, offset)
      dev.doorbell_base = addr - offset
      self.fn.system.watch(addr, size, dev.doorbell)
      return addr
    addr = host_mmap(start, size, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | (flags & MAP_FIXED), -1, 0)
    self.fn.system.add_window(addr, size, lambda off: dev.bar5_read(offset + off), lambda off, v: dev.bar5_write(offset + off, v))
    return addr

def install(system):
  vfs, pages = system.vfs, HostPages()
  system.host_pages = pages
  vfs.add_device(PAGEMAP, lambda path, flags: PagemapHandle(path, flags, pages))
  board = selected_amd_board()
  for i in range(config.gpu_count()):
    fn = Function(i, system, pages)
    pages.devices.append(fn)
    d = f"{PCI_DEVICES}/{fn.bus}"
    vfs.add_file(f"{d}/vendor", f"0x{board.vendor_id:04x}\n")
    vfs.add_file(f"{d}/device", f"0x{board.device_id:04x}\n")
    vfs.add_file(f"{d}/class", "0x030000\n")
    vfs.add_file(f"{d}/enable", lambda fn=fn: "1\n" if fn.built and fn.model.pci.memory_enabled() else "0\n", on_write=fn.enable)
    vfs.add_file(f"{d}/resource", fn.resource)
    vfs.add_file(f"{d}/resource0_resize", lambda fn=fn: f"{_rebar_mask(fn):08x}\n", on_write=fn.resize)
    vfs.add_device(f"{d}/config", lambda path, flags, fn=fn: ConfigHandle(path, flags, fn))
    for bar in (0, 2, 5): vfs.add_device(f"{d}/resource{bar}", lambda path, flags, fn=fn, bar=bar: BarHandle(path, flags, fn, bar))

def _rebar_mask(fn:Function) -> int:
  from mockgpu.emulators.am.pci import rebar_mask
  return rebar_mask(fn.dev().pci)
