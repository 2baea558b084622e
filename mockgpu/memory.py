"""A GPU's view of memory: the allocations mapped to it, each backed by host memory.

Every emulated access goes through an AddressSpace. It checks, for all lanes at once, that each access lies inside
one mapped allocation, and turns a miss into a GPUPageFault (which the device model reports through its driver,
never as a host segfault). A mapping covers its allocation rounded up to the granularity at which the driver maps
memory (a page for the CUDA model's allocations; the KFD and NVIDIA models already map whole pages), so an access a
little past a buffer but inside its page reads or writes the page's slack, as on hardware, and does not fault.
MOCKGPU_SANITIZE=memory reports (a warning on the "mockgpu" logger, and a SanitizerReport in
AddressSpace.sanitizer_reports) each access that goes past an allocation's exact bounds but stays inside its mapped
extent, without faulting. It sees the numpy paths and the command processors' scalar accesses; the C executors check
only the mapped extent (MOCKGPU_PTX_NATIVE=0 / MOCKGPU_RDNA_NATIVE=0 to sanitize every kernel access). The driver
knows an allocation's exact size only where the runtime does not round it itself (CUDA's cuMemAlloc; tinygrad's KFD
and NVIDIA allocators ask for whole pages). Backing memory is host memory at `host` for the GPU range
[va, va+size); for the KFD model host == va (the runtime maps VRAM at the GPU address), the NVIDIA model may map them apart.
"""
from __future__ import annotations
import bisect, ctypes
import numpy as np
from mockgpu import config
from mockgpu.errors import GPUPageFault

from mockgpu import log

def sanitizing() -> bool:
  """MOCKGPU_SANITIZE=memory (a comma-separated list; read on every check, so tests may change it)."""
  return config.sanitize("memory")

def outside(off, nbytes:int, room) -> np.ndarray:
  """The one bounds check of every vectorized access (global memory, the PTX windows and module variables, scratch
  and LDS): whether an access of nbytes at byte offset off does not fit in the room bytes of its space. In uint64, with
  no sum that can wrap past 2**64 (off + nbytes would, for an address just below it); native_memory.c's gptr is the
  same comparison in C."""
  off, room = np.asarray(off, np.uint64), np.asarray(room, np.uint64)
  return (off >= room) | (room - np.minimum(off, room) < np.uint64(nbytes))

class SanitizerReport:
  """An access past an allocation's exact bounds but inside its mapped extent (no fault: hardware allows it)."""
  __slots__ = ("va", "nbytes", "write", "where", "base", "size", "offset", "tag")
  def __init__(self, va, nbytes, write, where, m:Mapping):
    self.va, self.nbytes, self.write, self.where, self.base, self.size, self.offset, self.tag = \
      va, nbytes, write, where, m.va, m.exact, va - m.va, m.tag
  def __repr__(self):
    return (f"{'write' if self.write else 'read'} of {self.nbytes} bytes at 0x{self.va:x}: offset 0x{self.offset:x} of the "
            f"buffer at 0x{self.base:x} of 0x{self.size:x} bytes{' (' + self.where + ')' if self.where else ''}")

class Mapping:
  """[va, va+size) is the mapped extent (what faults); the allocation itself is its first `exact` bytes."""
  __slots__ = ("va", "size", "host", "tag", "_u8", "exact")
  def __init__(self, va:int, size:int, host:int, tag, exact:int|None=None):
    self.va, self.size, self.host, self.tag, self._u8 = va, size, host, tag, None
    self.exact = size if exact is None else exact
  @property
  def end(self) -> int: return self.va + self.size
  def u8(self) -> np.ndarray:
    """The whole mapping as a writable uint8 array (made once; numpy never copies it)."""
    if self._u8 is None: self._u8 = np.ctypeslib.as_array((ctypes.c_uint8 * self.size).from_address(self.host))
    return self._u8

class AddressSpace:
  """The sorted, non-overlapping GPU ranges one device may touch."""
  checked = False  # a subclass that checks more than the mapped extent per access sets it (the C executors check only that)

  def __init__(self, name:str="gpu"):
    self.name, self._starts, self._maps = name, [], []
    self._np_starts = self._np_ends = np.zeros(0, np.uint64)
    self.generation = 0  # counts mapping changes (the native executor re-reads the table when it moves)
    self._table:np.ndarray|None = None
    self._np_sizes = self._np_exact = np.zeros(0, np.uint64)
    self._slack = False  # whether any mapping extends past its allocation (only then is there anything to sanitize)
    self.sanitizer_reports:list[SanitizerReport] = []

  # *** mapping management, called by the driver models ***

  def map(self, va:int, size:int, host:int|None=None, tag=None, granularity:int=1) -> Mapping:
    """Map an allocation of `size` bytes; its extent is size rounded up to `granularity` (host memory at `host` must
    back the whole extent)."""
    if size <= 0: raise ValueError(f"{self.name}: cannot map {size} bytes at 0x{va:x}")
    if granularity < 1: raise ValueError(f"{self.name}: mapping granularity {granularity}")
    exact, size = size, (size + granularity - 1) // granularity * granularity
    i = bisect.bisect_right(self._starts, va)
    if (i > 0 and self._maps[i-1].end > va) or (i < len(self._maps) and self._maps[i].va < va + size):
      raise ValueError(f"{self.name}: mapping 0x{va:x}+0x{size:x} overlaps an existing one")
    m = Mapping(va, size, va if host is None else host, tag, exact)
    self._starts.insert(i, va)
    self._maps.insert(i, m)
    self._reindex()
    return m

  def unmap(self, va:int) -> Mapping:
    i = bisect.bisect_left(self._starts, va)
    if i == len(self._starts) or self._starts[i] != va: raise KeyError(f"{self.name}: nothing is mapped at 0x{va:x}")
    self._starts.pop(i)
    m = self._maps.pop(i)
    self._reindex()
    return m

  def is_mapped(self, va:int, size:int=1) -> bool:
    m = self._find(va)
    return m is not None and va + size <= m.end

  def mappings(self) -> list[Mapping]: return list(self._maps)

  def holds(self, va:int, data:bytes) -> bool:
    """Whether [va, va+len(data)) is mapped and holds exactly data (a kernel's code still in place, say)."""
    m = self._find(va)
    return m is not None and va + len(data) <= m.end and m.u8()[va - m.va : va - m.va + len(data)].tobytes() == data

  def table(self) -> np.ndarray:
    """The mappings as rows of uint64 (va, size, host), sorted by va, for native code; one empty row when there are none."""
    if self._table is None:
      self._table = np.array([(m.va, m.size, m.host) for m in self._maps] or [(0, 0, 0)], np.uint64)
    return self._table

  def _reindex(self):
    self.generation += 1
    self._table = None
    self._np_starts = np.array([m.va for m in self._maps], np.uint64)
    self._np_ends = np.array([m.end for m in self._maps], np.uint64)
    self._np_sizes = self._np_ends - self._np_starts
    self._np_exact = np.array([m.exact for m in self._maps], np.uint64)
    self._slack = any(m.exact < m.size for m in self._maps)

  def _report(self, va:int, nbytes:int, write:bool, where:str, m:Mapping):
    r = SanitizerReport(va, nbytes, write, where, m)
    self.sanitizer_reports.append(r)
    log.warning("MOCKGPU_SANITIZE=memory: %s: %r", self.name, r)

  def _find(self, va:int) -> Mapping|None:
    i = bisect.bisect_right(self._starts, va) - 1
    return self._maps[i] if i >= 0 and va < self._maps[i].end else None

  def nearest(self, va:int) -> str|None:
    """Where va lies against the closest allocation, for a fault report: "0x10 bytes past the end of the allocation
    at 0x... (0x1000 bytes)", "0x8 bytes before ...", "offset 0x... into ..."."""
    if not self._maps: return None
    i = bisect.bisect_right(self._starts, va)
    near = [m for m in self._maps[max(i - 1, 0):i + 1]]
    m = min(near, key=lambda m: 0 if m.va <= va < m.va + m.exact else (va - (m.va + m.exact) if va >= m.va else m.va - va))
    alloc = f"the allocation at 0x{m.va:x} (0x{m.exact:x} bytes)"
    if va < m.va: return f"0x{m.va - va:x} bytes before {alloc}"
    if va == m.va + m.exact: return f"offset 0x{va - m.va:x}: just past the end of {alloc}"
    if va > m.va + m.exact: return f"offset 0x{va - m.va:x}: 0x{va - m.va - m.exact:x} bytes past the end of {alloc}"
    return f"offset 0x{va - m.va:x} into {alloc}"

  def unmapped(self, addrs:np.ndarray, nbytes:int) -> np.ndarray:
    """For each address, whether the nbytes there are not inside one mapping (what locate faults on)."""
    a = np.asarray(addrs, np.uint64).reshape(-1)
    if not self._maps: return np.ones(len(a), bool)
    idx = np.searchsorted(self._np_starts, a, side="right").astype(np.int64) - 1
    j = np.maximum(idx, 0)
    return (idx < 0) | outside(a - self._np_starts[j], nbytes, self._np_sizes[j])

  # *** scalar (host-side, command processor) accesses ***

  def view(self, va:int, size:int, write:bool=False, where:str="") -> np.ndarray:
    """A checked uint8 view of [va, va+size) inside one mapping."""
    m = self._find(va)
    if m is None or va + size > m.end: raise GPUPageFault(va, size, write, where)
    if va + size > m.va + m.exact and self._slack and sanitizing(): self._report(va, size, write, where, m)
    return m.u8()[va - m.va : va - m.va + size]

  def read(self, va:int, size:int, where:str="") -> bytes: return self.view(va, size, False, where).tobytes()
  def write(self, va:int, data, where:str=""):
    src = np.frombuffer(bytes(data), np.uint8)
    self.view(va, len(src), True, where)[:] = src
  def read_u32(self, va:int, where:str="") -> int: return int(self.view(va, 4, False, where).view(np.uint32)[0])
  def read_u64(self, va:int, where:str="") -> int: return int(self.view(va, 8, False, where).view(np.uint64)[0])
  def write_u32(self, va:int, v:int, where:str=""): self.view(va, 4, True, where).view(np.uint32)[0] = v & 0xffffffff
  def write_u64(self, va:int, v:int, where:str=""): self.view(va, 8, True, where).view(np.uint64)[0] = v & 0xffffffffffffffff
  def copy(self, dst:int, src:int, size:int, where:str=""):
    if size: self.view(dst, size, True, where)[:] = self.view(src, size, False, where)

  # *** vectorized (executor) accesses: one call per instruction, all lanes at once ***

  def locate(self, addrs:np.ndarray, nbytes:int, write:bool, where:str) -> tuple[np.ndarray, np.ndarray]:
    """For each address: the index of its mapping and its offset in it. Raises GPUPageFault on the first miss."""
    a = addrs.astype(np.uint64, copy=False)
    if not self._maps: raise GPUPageFault(int(a[0]), nbytes, write, where)
    idx = np.searchsorted(self._np_starts, a, side="right").astype(np.int64) - 1
    j = np.maximum(idx, 0)
    off = a - self._np_starts[j]   # wraps for an address below every mapping: idx < 0 faults it below
    ok = (idx >= 0) & ~outside(off, nbytes, self._np_sizes[j])
    if not ok.all():
      bad = int(a[np.argmin(ok)])
      raise GPUPageFault(bad, nbytes, write, where)
    if self._slack and sanitizing():
      past = outside(off, nbytes, self._np_exact[idx])
      if past.any():
        lane = int(np.argmax(past))
        self._report(int(a[lane]), nbytes, write, where, self._maps[int(idx[lane])])
    return idx, off.astype(np.int64)

  def load(self, addrs:np.ndarray, dtype, where:str="") -> np.ndarray:
    """Gather one `dtype` element from each address (any alignment)."""
    dt = np.dtype(dtype)
    out = np.empty(len(addrs), dt)
    if len(addrs) == 0: return out
    idx, off = self.locate(addrs, dt.itemsize, False, where)
    for i in np.unique(idx) if len(self._maps) > 1 else (idx[0],):
      sel = (idx == i) if len(self._maps) > 1 else slice(None)
      out[sel] = self._gather(self._maps[int(i)].u8(), off[sel], dt)
    return out

  def store(self, addrs:np.ndarray, values:np.ndarray, where:str=""):
    """Scatter values[i] to addrs[i]; on duplicate addresses the highest lane wins, as on hardware."""
    values = np.asarray(values)
    dt = values.dtype
    if len(addrs) == 0: return
    idx, off = self.locate(addrs, dt.itemsize, True, where)
    for i in np.unique(idx) if len(self._maps) > 1 else (idx[0],):
      sel = (idx == i) if len(self._maps) > 1 else slice(None)
      self._scatter(self._maps[int(i)].u8(), off[sel], values[sel], dt)

  @staticmethod
  def _gather(u8:np.ndarray, off:np.ndarray, dt:np.dtype) -> np.ndarray:
    n = dt.itemsize
    if n == 1: return u8[off].view(dt)
    if not (off % n).any() and u8.size % n == 0: return u8.view(dt)[off // n]
    return u8[off[:, None] + np.arange(n)].copy().view(dt).reshape(-1)

  @staticmethod
  def _scatter(u8:np.ndarray, off:np.ndarray, vals:np.ndarray, dt:np.dtype):
    n = dt.itemsize
    if n == 1: u8[off] = vals.view(np.uint8)
    elif not (off % n).any() and u8.size % n == 0: u8.view(dt)[off // n] = vals
    else: u8[off[:, None] + np.arange(n)] = np.ascontiguousarray(vals).view(np.uint8).reshape(-1, n)
