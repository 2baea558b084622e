"""The bridge tinygrad imports as `test.mockgpu.mockgpu` when DEV names a MOCK interface.

tinygrad's hcq module imports `MockFileIOInterface` from here in place of its FileIOInterface: file opens, ioctls,
mmaps, reads and listdirs of the mock's own paths go to the virtual files and driver models; every other path goes to
the real OS. tinygrad writes doorbells and MMIO registers through its MMIOInterface class; hcq is still importing
us when this runs, so we give it an MMIOInterface subclass that tells the device model about writes into watched
ranges (doorbell pages, usermode MMIO). Nothing else in the process is touched.

The bridge is the composition root: machine() builds the process's one machine (system.System) at first use and
installs each driver on it (drivers()); the drivers build their devices with it. Nothing below reaches back up here.
"""
from __future__ import annotations
import os, sys
from mockgpu import events, system
from mockgpu.errors import Unmodelled

if "tinygrad.runtime.support.hcq" not in sys.modules:
  raise ImportError("mockgpu.bridge is what tinygrad's hcq module imports when DEV names a MOCK interface; import tinygrad first")
_hcq = sys.modules["tinygrad.runtime.support.hcq"]  # usually partially initialised: we are imported from its body
_RealFileIO, _RealMMIO = _hcq.FileIOInterface, _hcq.MMIOInterface
_machine:system.System|None = None

def drivers() -> tuple:
  """The driver models that populate the machine, each with install(machine). Imported at the machine's first use:
  hcq is still importing us when this module runs. KFD is not among them: see _install_kfd."""
  from mockgpu.driver import host_pci, am_pci, nvidia
  return (host_pci, am_pci, nvidia)

def _install_kfd(m:system.System):
  """KFD, installed at the first look at its paths or devices (system.System.defer): an NVIDIA process spares its
  import and its GPUs."""
  from mockgpu.driver import kfd
  kfd.install(m)

def machine() -> system.System:
  """The machine of this process (tinygrad's mock devices all live on one), built at first use."""
  global _machine
  if _machine is None:
    from mockgpu import config
    from mockgpu.driver import amd_sysfs
    built = system.System()
    for driver in drivers(): driver.install(built)
    built.defer("amd", amd_sysfs.kfd_roots(config.gpu_count()), _install_kfd)
    _machine = built
  return _machine

class MockMMIOInterface(_RealMMIO):
  """tinygrad's MMIOInterface. One made over a watched range (a doorbell page, usermode MMIO) is a WatchedMMIOInterface,
  whose writes also reach the device model; all others keep tinygrad's own __setitem__, with no extra call per write
  (the runtime writes its rings a dword at a time)."""
  def __new__(cls, *args, **kwargs):
    # only a plain MMIOInterface(addr, nbytes, fmt) is ours to specialise: tinygrad's own subclasses (USBMMIOInterface,
    # RemoteMMIOInterface) have constructors of their own, whose arguments mean something else
    if cls is MockMMIOInterface and _system_ready():
      addr, nbytes, fmt = _mmio_args(*args, **kwargs)
      if _machine.watcher(addr, nbytes) is not None: cls = WatchedMMIOInterface
      elif _machine.window(addr, nbytes) is not None: cls = RegisterWindow
      elif nbytes == 8 and fmt == 'Q': cls = SignalMMIOInterface
    return super().__new__(cls)
  def view(self, offset:int=0, size:int|None=None, fmt=None) -> MockMMIOInterface:
    return MockMMIOInterface(self.addr+offset, (self.nbytes - offset) if size is None else size, fmt=fmt or self.fmt)

class WatchedMMIOInterface(MockMMIOInterface):
  def __init__(self, addr:int, nbytes:int, fmt='B'):
    super().__init__(addr, nbytes, fmt)
    self._cb = machine().watcher(addr, nbytes)
  def __setitem__(self, k, v):
    super().__setitem__(k, v)
    first = k.start or 0 if isinstance(k, slice) else k
    self._cb(self.addr + first * self.mv.itemsize, v)

class RegisterWindow(MockMMIOInterface):
  """A view of a register BAR (AM's BAR5): every dword read and write goes to the device model, which answers from
  its register file; a view of a view stays a RegisterWindow (tinygrad's remote server views a BAR that way)."""
  def __init__(self, addr:int, nbytes:int, fmt='B'):
    super().__init__(addr, nbytes, fmt)
    self._start, self._read, self._write = machine().window(addr, nbytes)
    if self.mv.itemsize != 4: raise Unmodelled(f"mockgpu: register BAR accesses of {self.mv.itemsize} bytes (fmt {fmt!r}) are not modelled")
  def _offset(self, k:int) -> int:
    if not -len(self) <= k < len(self): raise IndexError(f"register index {k} outside a window of {len(self)} dwords")
    return self.addr - self._start + (k % len(self)) * 4
  def __getitem__(self, k):
    if isinstance(k, slice): return [self._read(self._offset(i)) for i in range(*k.indices(len(self)))]
    return self._read(self._offset(k))
  def __setitem__(self, k, v):
    if isinstance(k, slice):
      for i, x in zip(range(*k.indices(len(self))), v): self._write(self._offset(i), x)
    else: self._write(self._offset(k), v)
  def view(self, offset:int=0, size:int|None=None, fmt=None) -> RegisterWindow:
    return RegisterWindow(self.addr + offset, (self.nbytes - offset) if size is None else size, fmt=fmt or self.fmt)

class SignalMMIOInterface(MockMMIOInterface):
  """An 8-byte 'Q' view: what HCQSignal.value (and .timestamp) read and write, a signal at a time. The runtime polls
  a signal in its wait loop and writes one from the CPU (a graph's kick signal) after it has submitted the work that
  waits on it; a real GPU notices both by itself. Each access here lets the machine re-step its queues that are
  blocked on memory (system.poll), and raises a GPU fault that no doorbell could report for the GPU owning the signal."""
  def __getitem__(self, k):
    machine().poll(self.addr)
    value = super().__getitem__(k)
    # a wait loop reads a signal thousands of times: say each change
    if events.enabled and isinstance(value, int) and _last_read.get(self.addr) != value:
      _last_read[self.addr] = value
      events.emit("signal", addr=self.addr, op="read", value=value)
    return value
  def __setitem__(self, k, v):
    super().__setitem__(k, v)
    if events.enabled and isinstance(v, int): events.emit("signal", addr=self.addr, op="write", value=v)
    machine().poll(self.addr)

_MAP_HUGETLB, _MAP_LOCKED, _MAP_POPULATE = 0x40000, 0x2000, 0x8000
_last_read:dict[int, int] = {}  # signal address -> the value the runtime last read there (the trace says each change)

def _system_ready() -> bool: return _machine is not None
def _mmio_args(addr:int, nbytes:int, fmt='B') -> tuple[int, int, str]: return addr, nbytes, fmt

class MockFileIOInterface(_RealFileIO):
  """FileIOInterface whose mock paths open virtual files; real paths behave exactly as tinygrad's own class."""
  def __init__(self, path:str="", flags:int=os.O_RDONLY, fd:int|None=None):
    self.path, self.handle = path, None
    vfs = machine().vfs
    if fd is None and vfs.owns(path):
      self.handle = vfs.open(path, flags)
      self.fd = self.handle.fd
    else: super().__init__(path, flags, fd)
  def __del__(self):
    if self.handle is not None: self.handle.close()
    elif hasattr(self, 'fd'): os.close(self.fd)
  def ioctl(self, request, arg):
    if self.handle is None: return super().ioctl(request, arg)
    return self.handle.ioctl(request, arg)
  def mmap(self, start, sz, prot, flags, offset):
    if self.handle is None: return super().mmap(start, sz, prot, flags, offset)
    addr = self.handle.mmap(start, sz, prot, flags, offset)
    if events.enabled: events.emit("mmap", path=self.path, addr=addr, size=sz, prot=prot, flags=flags, offset=offset)
    return addr
  @staticmethod
  def munmap(buf, sz):
    if events.enabled: events.emit("munmap", addr=int(buf), size=int(sz))
    res = _RealFileIO.munmap(buf, sz)
    if (pages:=getattr(_machine, "host_pages", None)) is not None: pages.retire(int(buf), int(sz))  # its frames are gone
    return res
  @staticmethod
  def anon_mmap(start, sz, prot, flags, offset):
    """tinygrad's system memory for PCI devices asks for MAP_LOCKED | MAP_POPULATE (| MAP_HUGETLB for a contiguous
    one): huge pages are not configured on most hosts, locking is capped by RLIMIT_MEMLOCK, and the mock's frames
    stay put without any of them (pages fault in as used), so all three are dropped. A fixed mapping over pages retires their frames."""
    flags &= ~(_MAP_HUGETLB | _MAP_LOCKED | _MAP_POPULATE)
    if start and (pages:=getattr(_machine, "host_pages", None)) is not None: pages.retire(int(start), int(sz))
    return _RealFileIO.anon_mmap(start, sz, prot, flags, offset)
  def read(self, size=None, binary=False, offset=None):
    if self.handle is None: return super().read(size, binary, offset)
    data = self.handle.read(size, offset)
    if events.enabled: events.emit("file_read", path=self.path, size=len(data), offset=offset, text=data[:256].decode(errors="replace"))
    return data if binary else data.decode()
  def write(self, content, binary=False, offset=None):
    if self.handle is None: return super().write(content, binary, offset)
    self.handle.write(content if isinstance(content, bytes) else str(content).encode(), offset)
  def listdir(self):
    vfs = machine().vfs
    return vfs.listdir(self.path) if vfs.owns(self.path) else super().listdir()
  def seek(self, offset):
    if self.handle is None: return super().seek(offset)
    self.handle.pos = offset
  @staticmethod
  def exists(path):
    vfs = machine().vfs
    return vfs.exists(path) if vfs.owns(path) else os.path.exists(path)
  @staticmethod
  def readlink(path):
    vfs = machine().vfs
    return vfs.readlink(path) if vfs.owns(path) else os.readlink(path)

_hcq.MMIOInterface = MockMMIOInterface
