"""GMC: the two VM hubs (GC and MM), their TLB invalidation engines, the protection-fault registers, and the
translation the GPU uses, read from the page tables AM writes into VRAM.

Apertures: the framebuffer sits at MC address FB_BASE (MMMC_VM_FB_LOCATION_BASE/TOP, read-only); MC addresses the
PSP, IH, SMU and MQDs use must lie in [FB_BASE, FB_TOP]. Page-table entries hold physical addresses (VRAM offsets, or
for SYSTEM entries a bus address: a page of host memory the pagemap gave out, or a peer's BAR0).

Translation changes only at an invalidation (INVALIDATE_ENG17_REQ on the GC hub for VMID 0): the model walks the
tables from CONTEXT0_PAGE_TABLE_BASE with the generation's PTE format (gfx11: PDE_PTE bit 54 marks a huge page above
the PTB; gfx12: bit 63), turns the valid leaves into runs (contiguous in VA and memory, same kind) and updates the
device's AddressSpace: VRAM runs through a shadow window (the VRAM memfd mapped so each VA-contiguous run is
host-contiguous), system runs on the host pages behind their bus addresses. Each table page is decoded with numpy,
its leaves merged into runs at once. A system page that is no longer a live host page is left unmapped (an access
faults), and so is all system memory while PCI_COMMAND.MASTER is clear (no DMA without bus mastering). A munmap drops
the translations to its pages at once (drop_host). Each leaf's READABLE/WRITEABLE/EXECUTABLE bits go with its mapping
(vm.py checks them); its FRAG field is checked when its table is decoded (_check_fragments); at each doorbell the
tables of the last walk are compared with VRAM, and the ranges whose entries changed are stale (vm.py reports their use).

The MM hub's SEM/REQ/ACK handshake is modelled (the semaphore is acquired by a read that returns 1 and released by
writing 0); its translation is not used by any engine here, so it is not walked.
"""
from __future__ import annotations
import ctypes, mmap
import numpy as np
from tinygrad.runtime.autogen.am import am
from mockgpu import events, hostmem
from mockgpu.hostmem import host_mmap, MAP_FIXED, MAP_NORESERVE
from mockgpu.errors import MockGPUError
from mockgpu.emulators.am.regs import read_only
from mockgpu.emulators.am.vm import READ, WRITE, EXECUTE

FB_BASE = 0x8000000000          # where Navi parts place the framebuffer in the MC address space
ADDR_MASK = 0x0000FFFFFFFFF000
PERMS = ((am.AMDGPU_PTE_READABLE, READ), (am.AMDGPU_PTE_WRITEABLE, WRITE), (am.AMDGPU_PTE_EXECUTABLE, EXECUTE))


class FragmentMismatch(MockGPUError):
  """A PTE's FRAG field claims a fragment (2**frag pages the TLB may cache as one entry) that is not aligned in VA and
  memory, not contiguous, or whose entries differ in flags or validity: names the VA, the fragment and what differs."""

def lacks(pte:int) -> int:
  """The permissions a leaf PTE does not give (vm.READ / WRITE / EXECUTE bits)."""
  return sum(bit for flag, bit in PERMS if not pte & flag)
SHADOW_SIZE = 1 << 44           # tinygrad's whole GPU VA range (AMMemoryManager.va_allocator)

class GMC:
  def __init__(self, dev):
    self.dev, regs = dev, dev.regs
    self.fb_top = FB_BASE + dev.board.vram_size - 1
    gfx12 = dev.board.gc_version >= (12, 0, 0)
    self.huge_bit = am.AMDGPU_PDE_PTE_GFX12 if gfx12 else am.AMDGPU_PDE_PTE
    self.pte_marker = am.AMDGPU_PTE_IS_PTE if gfx12 else 0
    self.status_reg = "regGCVM_L2_PROTECTION_FAULT_STATUS" + ("_LO32" if gfx12 else "")
    for hub in ("MM", "GC"):
      for n, v in (("BASE", FB_BASE >> 24), ("TOP", self.fb_top >> 24)):
        regs.set(f"reg{hub}MC_VM_FB_LOCATION_{n}", v)
        regs.on_write(f"reg{hub}MC_VM_FB_LOCATION_{n}", read_only(dev.name, f"{hub}MC_VM_FB_LOCATION_{n}"))
    self.sem_held, self.ack = False, {"MM": 0, "GC": 0}
    regs.on_read("regMMVM_INVALIDATE_ENG17_SEM", self._sem_acquire)
    regs.on_write("regMMVM_INVALIDATE_ENG17_SEM", self._sem_write)
    for hub in ("MM", "GC"):
      regs.on_write(f"reg{hub}VM_INVALIDATE_ENG17_REQ", lambda v, hub=hub: self._invalidate(hub, v))
      regs.on_read(f"reg{hub}VM_INVALIDATE_ENG17_ACK", lambda hub=hub: self.ack[hub])
    regs.on_write("regGCVM_L2_PROTECTION_FAULT_CNTL", self._fault_cntl)
    self.shadow = host_mmap(0, SHADOW_SIZE, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
    self.runs:dict[tuple, object] = {}        # (va, size, host, lacks) -> the AddressSpace mapping
    self.shadowed:dict[tuple[int, int], int] = {}   # (va, size) of a VRAM piece in the shadow window -> its paddr
    self.walks = 0
    self.decoded:dict[int, tuple] = {}   # table paddr -> (its bytes, (shift, va), child tables, leaf runs) at the last walk
    self.walked:list[int] = []           # the tables the GC hub's last walk visited (what its TLB was filled from)
    self.vram_q = np.ctypeslib.as_array((ctypes.c_uint64 * (dev.board.vram_size // 8)).from_address(dev.vram_base))
    self.walked_runs:list = []
    self.walked_cmp:list[tuple[int, int, int]] = []

  # *** apertures ***
  def in_fb(self, mc:int, size:int) -> bool: return FB_BASE <= mc and mc + size - 1 <= self.fb_top
  def mc_to_paddr(self, mc:int) -> int: return mc - FB_BASE

  # *** invalidation ***
  def _sem_acquire(self) -> int:
    if self.sem_held: return 0
    self.sem_held = True
    return 1
  def _sem_write(self, value:int):
    if value & 1 == 0: self.sem_held = False

  def _invalidate(self, hub:str, value:int):
    regs = self.dev.regs
    regs.set(f"reg{hub}VM_INVALIDATE_ENG17_REQ", value)
    vmids = regs.field(f"reg{hub}VM_INVALIDATE_ENG17_REQ", value, "per_vmid_invalidate_req")
    if hub == "MM" and not self.sem_held: raise MockGPUError(f"{self.dev.name}: MM hub invalidation without holding INVALIDATE_ENG17_SEM")
    if hub == "GC" and vmids & 1: self.retranslate()
    self.ack[hub] = vmids
    if events.enabled: events.emit("tlb", self.dev.name, hub=hub, vmids=vmids)

  def _fault_cntl(self, value:int):
    regs = self.dev.regs
    if regs.field("regGCVM_L2_PROTECTION_FAULT_CNTL", value, "clear_protection_fault_status_addr"):
      regs.set(self.status_reg, 0)
      value &= ~(1 << regs.reg("regGCVM_L2_PROTECTION_FAULT_CNTL").fields["clear_protection_fault_status_addr"][0])
    regs.set("regGCVM_L2_PROTECTION_FAULT_CNTL", value)

  # *** the walk ***
  def context0(self, hub:str="GC") -> tuple[int, int, int, int]|None:
    """(root table paddr, levels, VA start, VA end) of the hub's CONTEXT0, or None while it is not enabled."""
    regs, r = self.dev.regs, f"reg{hub}VM_CONTEXT0"
    cntl = regs.get(f"{r}_CNTL")
    if not regs.field(f"{r}_CNTL", cntl, "enable_context"): return None
    pair = lambda n: regs.get(f"{r}_PAGE_TABLE_{n}_ADDR_LO32") | regs.get(f"{r}_PAGE_TABLE_{n}_ADDR_HI32") << 32
    base, start, end = pair("BASE"), pair("START") << 12, pair("END") << 12 | 0xfff
    depth = regs.field(f"{r}_CNTL", cntl, "page_table_depth")
    if not base & 1: raise MockGPUError(f"{self.dev.name}: GCVM CONTEXT0 enabled with an invalid page-table base 0x{base:x}")
    return base & ADDR_MASK, depth + 1, start, end

  def leaves(self, hub:str="GC") -> list[tuple[int, int, int, int]]:
    """Every valid leaf as (va, size, address, pte), merged into runs contiguous in VA and address with equal flags."""
    ctx = self.context0(hub)
    if ctx is None: return []
    root, levels, start, end = ctx
    out:list[tuple[int, int, int, int]] = []
    self._visit(root, 12 + 9 * (levels - 1), start, out, seen:=set())
    if hub == "GC": self._snapshot(seen)
    return [r for r in out if r[0] <= end]

  def _visit(self, paddr:int, shift:int, va0:int, out:list, seen:set):
    if paddr in seen or paddr + 0x1000 > self.dev.board.vram_size:
      raise MockGPUError(f"{self.dev.name}: page table at 0x{paddr:x} (level shift {shift}) is outside VRAM or forms a loop")
    seen.add(paddr)
    raw = self.dev.vram_bytes(paddr, 0x1000)
    if (hit:=self.decoded.get(paddr)) is not None and hit[0] == raw and hit[1] == (shift, va0): children, leaves = hit[2], hit[3]
    else:   # a table that changed since the last walk (or is new) is decoded again; the others keep their decoding
      ents = np.frombuffer(raw, np.uint64)
      idx = np.nonzero(ents & np.uint64(1))[0]
      leaf = np.ones(len(idx), bool) if shift == 12 else (ents[idx] & np.uint64(self.huge_bit)) != 0
      children = [(int(ents[i]) & ADDR_MASK, va0 + (int(i) << shift)) for i in idx[~leaf]]
      if leaf.any(): self._check_fragments(ents, idx[leaf], shift, va0)
      leaves = self._runs(ents, idx[leaf], shift, va0) if leaf.any() else []
      self.decoded[paddr] = (raw, (shift, va0), children, leaves)
    for child, va in children: self._visit(child, shift - 9, va, out, seen)
    out.extend(leaves)

  def _check_fragments(self, ents, idx, shift, va0):
    """FRAG (bits 7-11, the same field on gfx10-12) says 2**frag pages form one fragment the TLB may cache as one
    entry: every entry of the fragment (within this table; it is aligned in VA) must be valid with the same flags, and
    the fragment contiguous in memory. Its memory need not be aligned to it: AM maps 16 MiB fragments on VRAM chunks
    that are only 16 KiB aligned (its valloc), and the hardware computes a page's address from the fragment's base.
    Entries that cover more than their fragment need nothing."""
    per = ((ents[idx] >> np.uint64(7)) & np.uint64(0x1f)).astype(np.int64) - (shift - 12)   # log2 entries per fragment
    size = 1 << shift
    for n in np.unique(per[per > 0]):
      count = 1 << min(int(n), 9)
      for start in np.unique(idx[per == n] & ~(count - 1)):
        blk = ents[start:start + count]
        addrs = blk & np.uint64(ADDR_MASK)
        why = ("an entry of it is invalid" if not (blk & np.uint64(1)).all() else
               "its entries' flags differ" if ((blk & ~np.uint64(ADDR_MASK)) != (blk[0] & ~np.uint64(ADDR_MASK))).any() else
               "it is not contiguous in memory" if (addrs != addrs[0] + np.arange(count, dtype=np.uint64) * np.uint64(size)).any() else None)
        if why is not None:
          raise FragmentMismatch(f"{self.dev.name}: the PTE for VA 0x{va0 + int(start) * size:x} claims a fragment of 0x{size << int(n):x} "
                                 f"bytes (FRAG {int(n) + shift - 12}), but {why}")

  def _runs(self, ents, idx, shift, va0) -> list[tuple[int, int, int, int]]:
    size = 1 << shift
    flags = ents[idx] & ~np.uint64(ADDR_MASK)
    addrs = ents[idx] & np.uint64(ADDR_MASK)
    vas = np.uint64(va0) + idx.astype(np.uint64) * np.uint64(size)
    # a run breaks where VA or address is not contiguous, or the flags change
    brk = np.ones(len(idx), bool)
    brk[1:] = (np.diff(vas) != size) | (np.diff(addrs) != size) | (flags[1:] != flags[:-1])
    starts = np.nonzero(brk)[0]
    ends = np.append(starts[1:], len(idx))
    return [(int(vas[s]), int(e - s) * size, int(addrs[s]), int(flags[s])) for s, e in zip(starts, ends)]

  def retranslate(self):
    """Rebuild the GPU's view from the page tables (an invalidation of VMID 0 on the GC hub). VRAM pieces are mapped
    into the shadow window at their VA, so VA-contiguous VRAM (physically scattered chunks of one buffer) is one
    host-contiguous mapping; system runs map where their host pages are, merged where those are contiguous too."""
    self.walks += 1
    master = self.dev.pci.bus_master()
    segments:list[list] = []   # [va, size, host, kind, lacks]
    for va, size, addr, pte in self.leaves():
      for kind, run_va, run_size, host in self._targets(va, size, addr, pte, master):
        if kind == "vram": self._shadow_map(run_va, run_size, addr)
        last, no = segments[-1] if segments else None, lacks(pte)
        if last is not None and last[3:] == [kind, no] and last[0] + last[1] == run_va and last[2] + last[1] == host: last[1] += run_size
        else: segments.append([run_va, run_size, host, kind, no])
    wanted = {(va, size, host, no): kind for va, size, host, kind, no in segments}
    mem = self.dev.mem
    for key in [k for k in self.runs if k not in wanted]:
      mem.unmap(key[0])
      del self.runs[key]
    for key in sorted(k for k in wanted if k not in self.runs): self.runs[key] = mem.map(*key[:3], tag=wanted[key], lacks=key[3])
    mem.clear_stale()

  def drop_host(self, start:int, end:int):
    """Host pages [start, end) were unmapped: the frames behind system PTEs there are gone, so the translations to them
    are dropped at once, whether or not the TLB was invalidated (a GPU access there faults; the mock cannot reach
    memory the process no longer has, where hardware would reach whatever the frame now holds)."""
    mem = self.dev.mem
    for key in [k for k, m in self.runs.items() if m.tag == "system" and k[2] < end and start < k[2] + k[1]]:
      va, size, host, no = key
      mem.unmap(va)
      del self.runs[key]
      for lo, hi in ((host, min(start, host + size)), (max(end, host), host + size)):
        if hi > lo: self.runs[(va + lo - host, hi - lo, lo, no)] = mem.map(va + lo - host, hi - lo, lo, tag="system", lacks=no)

  def _snapshot(self, tables:set[int]):
    """Remember the entries of the tables this walk read, as runs of adjacent table pages (AM allocates its tables
    mostly one after another), so that check_stale compares a few slices."""
    self.walked = sorted(tables)
    self.walked_runs:list[list] = []   # [first table's index in walked, start, end in vram_q, the entries as walked]
    for k, paddr in enumerate(self.walked):
      if self.walked_runs and self.walked_runs[-1][2] == paddr // 8: self.walked_runs[-1][2] += 512
      else: self.walked_runs.append([k, paddr // 8, paddr // 8 + 512, None])
    for r in self.walked_runs: r[3] = self.vram_q[r[1]:r[2]].copy()
    # (vram address, snapshot address, bytes) per run: the per-doorbell test is one memcmp each
    self.walked_cmp = [(self.dev.vram_base + lo * 8, ents.ctypes.data, (hi - lo) * 8) for _, lo, hi, ents in self.walked_runs]

  def check_stale(self):
    """A queue is rung: the VA ranges whose entries changed in the tables the last walk read, with no invalidation
    since, are stale (the TLB may still hold their old translation; see vm.py)."""
    if not any(hostmem.libc.memcmp(a, b, n) for a, b, n in self.walked_cmp):
      if self.dev.mem.stale: self.dev.mem.set_stale([])
      return
    ranges:list[tuple[int, int]] = []
    for k0, lo_q, hi_q, ents in self.walked_runs:
      now = self.vram_q[lo_q:hi_q]
      if np.array_equal(now, ents): continue
      for k in np.nonzero(now != ents)[0]:
        shift, va0 = self.decoded[self.walked[k0 + int(k) // 512]][1]
        lo = va0 + ((int(k) % 512) << shift)
        if ranges and ranges[-1][1] == lo: ranges[-1] = (ranges[-1][0], lo + (1 << shift))
        else: ranges.append((lo, lo + (1 << shift)))
    if sorted(ranges) != self.dev.mem.stale: self.dev.mem.set_stale(ranges)

  def _shadow_map(self, va:int, size:int, paddr:int):
    if self.shadowed.get((va, size)) == paddr: return
    host_mmap(self.shadow + va - self.dev.va_base, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED | MAP_FIXED, self.dev.vram_fd, paddr)
    self.shadowed[(va, size)] = paddr

  def _targets(self, va:int, size:int, addr:int, pte:int, master:bool):
    if not pte & am.AMDGPU_PTE_SYSTEM:
      if addr + size > self.dev.board.vram_size: return   # past VRAM: unmapped, an access faults
      yield "vram", va, size, self.shadow + va - self.dev.va_base
      return
    if not master: return
    if (windows:=self.dev.dma_windows) is not None:   # behind a USB bridge: its DMA windows, nothing else
      for bus, wsize, host in windows:
        if bus <= addr and addr + size <= bus + wsize: yield "system", va, size, host + addr - bus
      return
    for run_va, run_size, host in self.dev.host_pages.resolve(va, addr, size, self.dev): yield "system", run_va, run_size, host

  def host_of(self, va:int, size:int, hub:str="GC") -> int|None:
    """Where [va, va+size) is now, walked from the hub's tables at once (an engine's miss: the PSP fetching from a VA)."""
    for leaf_va, leaf_size, addr, pte in self.leaves(hub):
      if leaf_va <= va and va + size <= leaf_va + leaf_size:
        for kind, run_va, run_size, host in self._targets(leaf_va, leaf_size, addr, pte, self.dev.pci.bus_master()):
          if run_va <= va and va + size <= run_va + run_size:
            return (self.dev.vram_base + addr + va - leaf_va) if kind == "vram" else host + va - run_va
    return None

  # *** faults ***
  def latch_fault(self, va:int, write:bool, lacking:int=0) -> bool:
    """Latch a translation fault: the first one sets STATUS (mapping_error, or for a PTE that does not permit the access
    PERMISSION_FAULTS bit 1 read, 2 write, 3 execute; and rw) and ADDR (the page); while STATUS is set, a later one only
    sets more_faults. Returns whether this one was latched."""
    regs, name = self.dev.regs, self.status_reg
    if (st:=regs.get(name)) != 0:
      regs.set(name, st | 1 << regs.reg(name).fields["more_faults"][0])
      return False
    f = regs.reg(name).fields
    kind = {0: 1 << f["mapping_error"][0], READ: 2 << f["permission_faults"][0], WRITE: 4 << f["permission_faults"][0],
            EXECUTE: 8 << f["permission_faults"][0]}[lacking]
    regs.set(name, kind | int(write) << f["rw"][0])
    regs.set("regGCVM_L2_PROTECTION_FAULT_ADDR_LO32", (va >> 12) & 0xffffffff)
    regs.set("regGCVM_L2_PROTECTION_FAULT_ADDR_HI32", va >> 44)
    return True
