"""An AMD GPU as tinygrad's own driver (AM) sees it over PCI: the PCI function, VRAM (BAR0), the doorbells (BAR2),
the register file (BAR5) with its IP blocks, and the executors (PM4, SDMA, RDNA) over the translation AM's page tables
give.

The device receives what it needs from the machine at construction (`machine`: queue scheduling and the MMIO watches;
`host_pages`: the bus addresses of host memory the pagemap gave out; `peers`: the other functions, for P2P) and
never looks the machine up. It is the `gpu` object the existing PM4 and SDMA executors take (mockgpu.emulators.amd_gpu.
AMDGPU): `mem` is built from the page tables, faults land in the GMC fault registers and the IH ring.
"""
from __future__ import annotations
import ctypes, mmap
from tinygrad.runtime.autogen.am import am
from mockgpu import events
from mockgpu.emulators.amd_gpu import AMDGPU
from mockgpu.hostmem import SharedMemory, host_mmap
from mockgpu.emulators.am import discovery, firmware
from mockgpu.emulators.am.pci import PCIFunction, BAR2_SIZE, BAR5_SIZE
from mockgpu.emulators.am.regs import RegisterFile
from mockgpu.emulators.am.nbio import NBIO, DoorbellRefused
from mockgpu.emulators.am.psp import PSP
from mockgpu.emulators.am.smu import SMU
from mockgpu.emulators.am.gmc import GMC
from mockgpu.emulators.am.ih import IH
from mockgpu.emulators.am.gfx import GFX
from mockgpu.emulators.am.sdma import SDMA
from mockgpu.emulators.am.vm import PagedAddressSpace, PermissionFault
from mockgpu.errors import GPUPageFault, KernelTrap, Unmodelled

from mockgpu import log
VA_BASE = 0x200000000000   # tinygrad's AMMemoryManager.va_allocator base: where CONTEXT0's page tables start

class FetchChecked:
  """The RDNA executor as an AM device runs it: the kernel's entry is fetched through its PTE first (EXECUTABLE)."""
  def __init__(self, executor): self.executor = executor
  def __getattr__(self, name:str): return getattr(self.executor, name)   # Dispatch: looked up (imported) at first use
  def run_dispatch(self, mem:PagedAddressSpace, d):
    mem.fetch(d.pgm_addr)
    return self.executor.run_dispatch(mem, d)

class AMDevice(AMDGPU):
  def __init__(self, index:int, board, bus:str, machine, host_pages, peers:list):
    if board.gc_version < (11, 0, 0):
      raise Unmodelled(f"AM (DEV=MOCKPCI/MOCKUSB) models the RDNA boards gfx1100 and gfx1201: {board.name} ({board.family}, {board.num_xcc} "
                       "XCCs over AIDs, NBIO 7.9's indirect PCIe writes, AQL queues) is not modelled; DEV=MOCKKFD+AMD runs it")
    super().__init__(index, 0, {}, board, machine, FetchChecked(machine.rdna))
    self.mem = PagedAddressSpace(self.name)   # the translation the GMC builds at each invalidation
    self.machine, self.host_pages, self.peers, self.bus = machine, host_pages, peers, bus
    self.name = f"AM {bus}"
    self.pci = PCIFunction(self.name, board.vendor_id, board.device_id, board.revision, board.subsystem_vendor, board.subsystem_device,
                           board.vram_size)
    self.vram_fd, self.vram_base = self.vram.mem.fd, self.vram.mem.base
    self.va_base = VA_BASE
    self.doorbell_mem = SharedMemory(f"mockgpu-{self.name}-bar2", BAR2_SIZE)
    discovery.write_table(self)
    self.regs = RegisterFile(self.name, board)
    self.nbio, self.gmc, self.ih = NBIO(self), GMC(self), IH(self)
    self.psp, self.smu, self.gfx, self.sdma = PSP(self), SMU(self), GFX(self), SDMA(self)
    self.regs_window = host_mmap(0, BAR5_SIZE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    self.faults = 0
    self.dma_windows:list[tuple[int, int, int]]|None = None   # behind a USB bridge: the only system memory the GPU reaches
    self.pci.on_master_change = self.gmc.retranslate

  # *** memory the device reaches by MC address (PSP, IH, SMU) ***
  def vram_bytes(self, paddr:int, size:int) -> bytes: return ctypes.string_at(self.vram_base + paddr, size)
  def read_fb(self, mc:int, size:int) -> bytes: return self.vram_bytes(self.gmc.mc_to_paddr(mc), size)
  def write_fb(self, mc:int, data:bytes): ctypes.memmove(self.vram_base + self.gmc.mc_to_paddr(mc), data, len(data))

  def firmware_piece(self, fw_type:str) -> tuple[str|None, str]: return firmware.piece_for(self.board, fw_type)
  def log_refusal(self, what:str):
    log.warning("%s: %s", self.name, what)
    if events.enabled: events.emit("refused", self.name, what=what)

  def hdp_flush(self):
    if events.enabled: events.emit("hdp_flush", self.name)

  def mode1_reset(self):
    """SMU mode-1 reset: every IP's state goes back to power-on; VRAM keeps its contents."""
    self.psp.reset()
    self.gfx.autoloaded = False

  # *** BAR accesses ***
  def bar5_read(self, offset:int) -> int:
    self.pci.require_memory(f"BAR5 read at 0x{offset:x}")
    return self.regs.read(offset // 4)
  def bar5_write(self, offset:int, value:int):
    self.pci.require_memory(f"BAR5 write at 0x{offset:x}")
    self.regs.write(offset // 4, value)

  def doorbell(self, addr:int, value:int): self.ring(addr - self.doorbell_base, value)

  def doorbell_at(self, offset:int, value:int):
    """A doorbell write that arrives as a memory TLP (over USB) rather than through a mapping of BAR2."""
    ctypes.c_uint64.from_address(self.doorbell_mem.base + offset).value = value
    self.ring(offset, value)

  def ring(self, offset:int, value:int):
    self.pci.require_memory(f"BAR2 doorbell write at 0x{offset:x}")
    if not self.nbio.doorbells_enabled(): raise DoorbellRefused(f"{self.name}: doorbell write at 0x{offset:x} with RCC_DOORBELL_APER_EN clear")
    if offset & ~7 not in self.doorbell_queues:
      raise DoorbellRefused(f"{self.name}: doorbell write 0x{value:x} at BAR2 offset 0x{offset:x} routes to no active queue")
    self.gmc.check_stale()
    if events.enabled: events.emit("doorbell", self.name, self.doorbell_queues[offset & ~7].name, offset=offset, value=value)
    self.machine.kick()

  # add_queue/remove_queue: AMDGPU's, on the machine it was given

  def interrupt(self, ctxid:int, valid_bits:int):
    """An interrupt a packet asked for. SDMA's TRAP (28 context bits) is SDMA_TRAP from the GFX client on soc21, sent
    when SDMA0_CNTL.trap_enable is set (AM sets it; its handler skips the entry). RELEASE_MEM's INT_SEL (23 bits) on a
    compute queue is gated by the MEC pipe's TIME_STAMP_INT_ENABLE (CP_ME1_PIPE0_INT_CNTL), which AM never sets: at its
    reset value 0 the interrupt is masked and nothing reaches the IH ring."""
    gc, regs = self.board.gc_version[0], self.regs
    if valid_bits == 28 and regs.field("regSDMA0_CNTL", regs.get("regSDMA0_CNTL"), "trap_enable"):
      self.ih.post(am.SOC21_IH_CLIENTID_GFX, getattr(am, f"GFX_{gc}_0_0__SRCID__SDMA_TRAP"), (ctxid, 0, 0, 0))
    elif events.enabled: events.emit("interrupt_masked", self.name, source="SDMA_TRAP" if valid_bits == 28 else "CP_EOP", ctxid=ctxid)

  def fault(self, queue, err:Exception):
    """A queue stopped on a fault: latch it in the GMC and tell the host through the IH ring, as the UTCL2 does. The
    queue stays stopped (AM recovers by resetting the MEC and re-creating its compute queue)."""
    self.faults += 1
    if not self.pci.bus_master(): self.log_refusal(f"device DMA refused with PCI_COMMAND.MASTER clear: {err}")
    gc = self.board.gc_version[0]
    if isinstance(err, GPUPageFault) and err.space == "global":
      self.gmc.latch_fault(err.va, err.write, err.lacking if isinstance(err, PermissionFault) else 0)
      self.ih.post(am.SOC21_IH_CLIENTID_GFX, getattr(am, f"GFX_{gc}_0_0__SRCID__UTCL2_FAULT"), vmid=0)
    elif isinstance(err, GPUPageFault) or isinstance(err, KernelTrap):
      # an SQ error interrupt: enc_type 2 (error), err_type 1 (ILLEGAL_INST) / 2 (MEMVIOL)
      err_type = 2 if isinstance(err, GPUPageFault) else 1
      self.ih.post(am.SOC21_IH_CLIENTID_GRBM_CP, getattr(am, f"GFX_{gc}_0_0__SRCID__SQ_INTERRUPT_ID"), (err_type << 21, 2 << 6, 0, 0))

  def poll_check(self, addr:int|None):
    """The runtime read or wrote a signal from the CPU: AM has no interrupt or wait ioctl that would run the queues (KFD's
    WAIT_EVENTS does), and a GPU notices memory the CPU wrote by itself (a graph's kick signal), so the queues run: those
    stopped at a packet that waits (a queue that consumed all it was given needs a doorbell to go on)."""
    if any(q._current() is not None for q in self.queues.values()): self.machine.kick()   # only a queue that waits can go on
