"""The GPU's address space under AM: the translation the GMC built at the last TLB invalidation, with what a mapping
does not permit and which translations the TLB holds although their PTEs have changed since.

Permissions. A leaf PTE carries READABLE (bit 5), WRITEABLE (bit 6) and EXECUTABLE (bit 4) on gfx10-12 (tinygrad's
get_pte_flags sets all three on every leaf). A load through a PTE without READABLE, a store without WRITEABLE, or an
instruction fetch (the kernel's entry) without EXECUTABLE is a PermissionFault: a GPUPageFault that names the VA and
the missing permission, which the GMC latches as PERMISSION_FAULTS (bit 1 read, 2 write, 3 execute; bit 0 is the
valid bit, a mapping error) with the rw bit.

Stale translations. AM's unmap_range writes invalid PTEs and does not invalidate (map_range does), so the TLB may
still hold the old translation: on hardware an access then reads the old page or faults, depending on what the UTCL2
still caches. The model keeps the old translation until the next invalidation (deterministic) and, when a queue is
rung, compares the page tables it walked with VRAM: the VA ranges whose entries changed are stale. An access inside
a stale range is reported, not refused (hardware may well complete it): a warning on the "mockgpu" logger and a
`stale_translation` event naming the VA and the range, once per range, and it is counted in `stale_uses`.

The C executors check only that an access lies inside a mapping, so while any mapping restricts an access or any
range is stale the address space is `checked` and kernels run on the numpy path, which asks view/locate/holds.
"""
from __future__ import annotations
import numpy as np
from mockgpu import events
from mockgpu.errors import GPUPageFault
from mockgpu.memory import AddressSpace

from mockgpu import log
READ, WRITE, EXECUTE = 1, 2, 4          # what a mapping may lack (the `lacks` bits)
NAMES = {READ: "readable", WRITE: "writeable", EXECUTE: "executable"}

class PermissionFault(GPUPageFault):
  """An access the PTE does not permit: a load without READABLE, a store without WRITEABLE, a fetch without EXECUTABLE."""
  def __init__(self, va:int, size:int, write:bool, where:str="", lacking:int=READ, **context):
    self.lacking = lacking
    super().__init__(va, size, write, where, **context)
  def report(self) -> str:
    what = "instruction fetch" if self.lacking == EXECUTE else ("write" if self.write else "read")
    return super().report().replace("is outside every allocation", f"is not permitted: its PTE is not {NAMES[self.lacking]}", 1) \
      .replace(f"{'write' if self.write else 'read'} of", f"{what} of", 1)

class PagedAddressSpace(AddressSpace):
  def __init__(self, name:str):
    self.lacks:dict[int, int] = {}              # mapping va -> the permissions its PTEs do not give
    self.stale:list[tuple[int, int]] = []       # [va, end) ranges whose PTEs changed since the last invalidation
    self.reported:set[tuple[int, int]] = set()
    self.stale_uses = 0
    super().__init__(name)
    self._np_lacks = np.zeros(0, np.int64)

  @property
  def checked(self) -> bool: return bool(self.stale or self.lacks)

  def map(self, va:int, size:int, host:int|None=None, tag=None, granularity:int=1, lacks:int=0):
    if lacks: self.lacks[va] = lacks   # only restricted mappings are listed: an empty dict costs the accesses nothing
    return super().map(va, size, host, tag, granularity)

  def unmap(self, va:int):
    self.lacks.pop(va, None)
    return super().unmap(va)

  def _reindex(self):
    super()._reindex()
    self._np_lacks = np.array([self.lacks.get(m.va, 0) for m in self._maps] if self.lacks else np.zeros(len(self._maps)), np.int64)

  def set_stale(self, ranges:list[tuple[int, int]]): self.stale = sorted(ranges)   # `checked` now: the next dispatch runs on numpy
  def clear_stale(self): self.stale, self.reported = [], set()

  # *** the checks ***
  def _deny(self, va:int, size:int, write:bool, where:str, lacks:int, need:int):
    if lacks & need: raise PermissionFault(va, size, write, where, lacking=need)

  def _used_stale(self, lo:int, hi:int, where:str):
    for r in self.stale:
      if r[0] < hi and lo < r[1] and r not in self.reported:
        self.reported.add(r)
        self.stale_uses += 1
        log.warning("%s: access at 0x%x%s uses a stale translation: the PTEs of [0x%x, 0x%x) changed with no TLB invalidation since",
                    self.name, max(lo, r[0]), f" ({where})" if where else "", r[0], r[1])
        if events.enabled: events.emit("stale_translation", self.name, va=max(lo, r[0]), start=r[0], end=r[1], where=where)

  def view(self, va:int, size:int, write:bool=False, where:str="") -> np.ndarray:
    out = super().view(va, size, write, where)
    if self.lacks: self._deny(va, size, write, where, self.lacks.get(self._find(va).va, 0), WRITE if write else READ)
    if self.stale: self._used_stale(va, va + size, where)
    return out

  def locate(self, addrs:np.ndarray, nbytes:int, write:bool, where:str) -> tuple[np.ndarray, np.ndarray]:
    idx, off = super().locate(addrs, nbytes, write, where)
    need = WRITE if write else READ
    if self.lacks and (bad:=(self._np_lacks[idx] & need) != 0).any():
      raise PermissionFault(int(np.asarray(addrs, np.uint64)[np.argmax(bad)]), nbytes, write, where, lacking=need)
    if self.stale:
      a = np.asarray(addrs, np.uint64)
      for lo, hi in self.stale:
        if (hit:=(a < np.uint64(hi)) & (a + np.uint64(nbytes) > np.uint64(lo))).any():
          first = int(a[np.argmax(hit)])
          self._used_stale(first, first + nbytes, where)
    return idx, off

  def fetch(self, pc:int):
    """An instruction fetch at a kernel's entry: the page must be mapped and executable."""
    m = self._find(pc)
    if m is None: raise GPUPageFault(pc, 4, False, f"instruction fetch at PC 0x{pc:x}")
    self._deny(pc, 4, False, f"instruction fetch at PC 0x{pc:x}", self.lacks.get(m.va, 0), EXECUTE)
    if self.stale: self._used_stale(pc, pc + 4, "instruction fetch")
