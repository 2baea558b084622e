"""Host memory: the one binding of libc's memory calls, the page size, and shared memfd pages.

Every device model keeps its memory in the host process that runs tinygrad: AMD's VRAM, GTT, doorbell and event pages
are memfd pages (SharedMemory) that the runtime maps where it asks and the GPU model reads through its own view; RM's
memory objects are shared anonymous pages that a CPU mapping aliases (alias: mremap with old size 0); the CUDA driver's
allocations are private anonymous pages reserved lazily; uaccess copies user pointers with process_vm_readv/writev;
the PCI function's frame table asks whether a page is mapped (msync). Ground floor: imports nothing of mockgpu.
"""
from __future__ import annotations
import ctypes, errno, mmap, os, weakref

PAGE = 0x1000  # the host's page (mmap.PAGESIZE on x86-64 and 4 KiB-page arm64 Linux), which the GPUs' 4 KiB pages match
# Linux's mmap, mremap, madvise and msync flags that Python's mmap module does not name on every version
MAP_FIXED, MAP_NORESERVE = 0x10, 0x4000
MREMAP_MAYMOVE, MREMAP_FIXED = 1, 2
MADV_REMOVE, MS_ASYNC = 9, 1
MAP_FAILED = ctypes.c_void_p(-1).value

class iovec(ctypes.Structure): _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64]
libc.mremap.restype, libc.mremap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
libc.munmap.restype, libc.munmap.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.memcmp.restype, libc.memcmp.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
for _fn in (libc.process_vm_readv, libc.process_vm_writev):
  _fn.restype = ctypes.c_ssize_t
  _fn.argtypes = [ctypes.c_int, ctypes.POINTER(iovec), ctypes.c_ulong, ctypes.POINTER(iovec), ctypes.c_ulong, ctypes.c_ulong]

def round_page(n:int) -> int: return (n + PAGE - 1) & ~(PAGE - 1)

def host_mmap(addr:int, size:int, prot:int, flags:int, fd:int, offset:int) -> int:
  """libc's mmap (at addr when MAP_FIXED is in flags, else a hint; 0: anywhere); OSError naming the size and address."""
  res = libc.mmap(addr or None, size, prot, flags, fd, offset)
  if res is None or res == MAP_FAILED:
    err = ctypes.get_errno()
    raise OSError(err, f"mmap of 0x{size:x} bytes at 0x{addr:x}: {os.strerror(err)}")
  return res

def munmap(addr:int, size:int) -> int: return libc.munmap(addr, size)

def alias(addr:int, size:int, target:int|None) -> int:
  """A second mapping of the shared pages at addr (at target if given): mremap with old_size 0 duplicates a shared mapping."""
  new = libc.mremap(addr, 0, size, MREMAP_MAYMOVE | (MREMAP_FIXED if target is not None else 0), target)
  if new == MAP_FAILED: raise OSError(ctypes.get_errno(), f"mockgpu: cannot map 0x{size:x} bytes at {target}: {os.strerror(ctypes.get_errno())}")
  return new

def mapped(addr:int, size:int=PAGE) -> bool:
  """Whether every page of [addr, addr+size) is mapped in this process (msync fails with ENOMEM on a hole)."""
  return libc.msync(addr, size, MS_ASYNC) == 0

class SharedMemory:
  """Host memory in a memfd: one view for the device model (`base`), and as many runtime mappings as it asks for."""
  def __init__(self, name:str, size:int):
    self.name, self.size = name, size
    self.fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.ftruncate(self.fd, size)
    self.base = host_mmap(0, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED | MAP_NORESERVE, self.fd, 0)
    # the descriptor goes with this object; the pages stay while any mapping (ours included) does, as address spaces may still use them
    weakref.finalize(self, os.close, self.fd)

  def map_at(self, addr:int, size:int, prot:int, flags:int, offset:int) -> int:
    """Map [offset, offset+size) of this memory at `addr` (MAP_FIXED when the runtime asks for it), as the kernel's mmap would."""
    if offset < 0 or offset + size > self.size: raise OSError(errno.EINVAL, f"{self.name}: mmap of 0x{offset:x}+0x{size:x} is out of range")
    return host_mmap(addr, size, prot, mmap.MAP_SHARED | (flags & MAP_FIXED), self.fd, offset)

  def release(self, offset:int, size:int):
    """Give the pages back to the host (freed VRAM reads as zero again, like a fresh allocation)."""
    libc.madvise(self.base + offset, round_page(size), MADV_REMOVE)
