"""GFX: GRBM banking, the RLC (autoload, safe mode), the MEC (program counter, pipe reset and halt) and the HQDs.

GRBM_GFX_CNTL selects which bank the banked registers reach: the HQD registers (CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI,
CP_HQD_ACTIVE, CP_HQD_DEQUEUE_REQUEST) by (me, pipe, queue), SH_MEM_CONFIG/BASES by VMID, the CP program-counter
registers by (me, pipe). An HQD access with a selection that names no HQD (me 1, pipe < 4, queue < 8) is an error.
The reserved dwords inside the HQD range that AM's MQD-image write covers are defined (storage only).

Writing CP_HQD_ACTIVE = 1 starts the compute queue its registers describe (the existing PM4 executor; AQL when
CP_HQD_AQL_CONTROL says so), after the checks the MEC makes: RLC autoload done, the MEC program counter at its
firmware's start, pipe 0 out of reset and the MEC unhalted, an enabled doorbell inside the MEC doorbell range.
CP_HQD_DEQUEUE_REQUEST and GRBM_SOFT_RESET (cp/cpc) stop it and clear ACTIVE. CP_STAT reads 0 (idle) once the RLC
autoload has run; RLC_SAFE_MODE's cmd bit is acknowledged (cleared) by a running RLC.
"""
from __future__ import annotations
from mockgpu.errors import GPUPageFault, MockGPUError
from mockgpu.emulators.am import firmware
from mockgpu.emulators.am.regs import read_only

class HQDError(MockGPUError):
  """An HQD programmed in a way the MEC refuses (named: the device, me/pipe/queue and the reason)."""

BUSY = 0x80000000

class GFX:
  def __init__(self, dev):
    self.dev, regs = dev, dev.regs
    self.autoloaded, self.queues = False, {}
    lo, hi = regs.addr("regCP_MQD_BASE_ADDR"), regs.addr("regCP_HQD_PQ_WPTR_HI")
    for a in range(lo, hi + 1):
      if a not in regs.by_addr: regs.define(a, f"CP_HQD reserved slot 0x{a:x}")
    self.hqd_addrs = set(range(lo, hi + 1)) | {regs.addr("regCP_HQD_ACTIVE"), regs.addr("regCP_HQD_DEQUEUE_REQUEST")}
    self.vmid_addrs = {regs.addr("regSH_MEM_CONFIG"), regs.addr("regSH_MEM_BASES")}
    self.pc_addrs = {regs.addr(n) for n in regs.by_name if n.startswith("regCP_") and "_PRGRM_CNTR_START" in n}
    self.banks:dict[tuple, dict[int, int]] = {}
    for a in self.hqd_addrs | self.vmid_addrs | self.pc_addrs:
      regs.readers[a] = lambda a=a: self._bank(a).get(a, 0)
      regs.writers[a] = lambda v, a=a: self._bank_write(a, v)
    regs.on_read("regCP_STAT", lambda: 0 if self.autoloaded else BUSY)
    regs.on_write("regCP_STAT", read_only(dev.name, "CP_STAT"))
    regs.on_read("regRLC_RLCS_BOOTLOAD_STATUS", lambda: (1 << regs.reg("regRLC_RLCS_BOOTLOAD_STATUS").fields["bootload_complete"][0])
                 if self.autoloaded else 0)
    regs.on_write("regRLC_SAFE_MODE", lambda v: regs.set("regRLC_SAFE_MODE", v & ~1 if self.autoloaded else v))
    regs.on_write("regGRBM_SOFT_RESET", self._soft_reset)

  # *** banking ***
  def select(self) -> dict[str, int]:
    regs, v = self.dev.regs, self.dev.regs.get("regGRBM_GFX_CNTL")
    return {f: regs.field("regGRBM_GFX_CNTL", v, f) for f in ("meid", "pipeid", "queueid", "vmid")}

  def _key(self, addr:int) -> tuple:
    s = self.select()
    if addr in self.vmid_addrs: return ("vmid", s["vmid"])
    if addr in self.pc_addrs: return ("pc", s["meid"], s["pipeid"])
    if s["meid"] != 1 or s["pipeid"] >= 4 or s["queueid"] >= 8:
      raise HQDError(f"{self.dev.name}: {self.dev.regs.name(addr)} with GRBM_GFX_CNTL selecting me {s['meid']} pipe {s['pipeid']} "
                     f"queue {s['queueid']}: no compute HQD there")
    return ("hqd", s["pipeid"], s["queueid"])

  def _bank(self, addr:int) -> dict[int, int]: return self.banks.setdefault(self._key(addr), {})

  def _bank_write(self, addr:int, value:int):
    key = self._key(addr)
    bank = self.banks.setdefault(key, {})
    regs = self.dev.regs
    if addr == regs.addr("regCP_HQD_ACTIVE"):
      if value & 1 and not bank.get(addr, 0) & 1: self._activate(key, bank)
      elif not value & 1: self._deactivate(key, bank)
      return
    if addr == regs.addr("regCP_HQD_DEQUEUE_REQUEST"):
      bank[addr] = value
      if value: self._deactivate(key, bank)
      return
    bank[addr] = value

  # *** RLC / MEC ***
  def autoload_done(self, loaded):
    """PSP's AUTOLOAD_RLC: the RLC starts and brings the CP out of reset."""
    self.autoloaded = True

  def _soft_reset(self, value:int):
    regs = self.dev.regs
    regs.set("regGRBM_SOFT_RESET", value)
    f = lambda n: regs.field("regGRBM_SOFT_RESET", value, n) if n in regs.reg("regGRBM_SOFT_RESET").fields else 0
    if f("soft_reset_cp") or f("soft_reset_cpc"):
      for key, bank in self.banks.items():
        if key[0] == "hqd": self._deactivate(key, bank)
    if f("soft_reset_sdma0"): self.dev.sdma.stop()

  def _mec_ready(self) -> str|None:
    regs = self.dev.regs
    if not self.autoloaded: return "the RLC autoload has not run"
    pc = self.banks.get(("pc", 1, 0), {})
    start = pc.get(regs.addr("regCP_MEC_RS64_PRGRM_CNTR_START"), 0) | pc.get(regs.addr("regCP_MEC_RS64_PRGRM_CNTR_START_HI"), 0) << 32
    if start != (want:=firmware.UCODE_START >> 2): return f"CP_MEC_RS64_PRGRM_CNTR_START is 0x{start:x}, the MEC firmware starts at 0x{want:x}"
    cntl = regs.get("regCP_MEC_RS64_CNTL")
    for fld, want in (("mec_pipe0_reset", 0), ("mec_halt", 0), ("mec_pipe0_active", 1)):
      if regs.field("regCP_MEC_RS64_CNTL", cntl, fld) != want: return f"CP_MEC_RS64_CNTL.{fld} is not {want}"
    return None

  # *** HQDs ***
  def _activate(self, key:tuple, bank:dict[int, int]):
    regs, name = self.dev.regs, f"{self.dev.name} HQD me 1 pipe {key[1]} queue {key[2]}"
    g = lambda n: bank.get(regs.addr(n), 0)
    if (why:=self._mec_ready()) is not None: raise HQDError(f"{name}: activated but {why}")
    db = g("regCP_HQD_PQ_DOORBELL_CONTROL")
    if not regs.field("regCP_HQD_PQ_DOORBELL_CONTROL", db, "doorbell_en"): raise HQDError(f"{name}: activated without a doorbell")
    offset = regs.field("regCP_HQD_PQ_DOORBELL_CONTROL", db, "doorbell_offset")  # dwords in the doorbell BAR
    lower, upper = regs.get("regCP_MEC_DOORBELL_RANGE_LOWER"), regs.get("regCP_MEC_DOORBELL_RANGE_UPPER")
    if not lower <= offset * 4 <= upper: raise HQDError(f"{name}: doorbell dword {offset} is outside the MEC doorbell range 0x{lower:x}..0x{upper:x}")
    ring = (g("regCP_HQD_PQ_BASE") | g("regCP_HQD_PQ_BASE_HI") << 32) << 8
    size = 4 << (regs.field("regCP_HQD_PQ_CONTROL", g("regCP_HQD_PQ_CONTROL"), "queue_size") + 1)
    rptr = g("regCP_HQD_PQ_RPTR_REPORT_ADDR") | g("regCP_HQD_PQ_RPTR_REPORT_ADDR_HI") << 32
    wptr = g("regCP_HQD_PQ_WPTR_POLL_ADDR") | g("regCP_HQD_PQ_WPTR_POLL_ADDR_HI") << 32
    from mockgpu.emulators.pm4 import AQLQueue, PM4Queue
    cls = AQLQueue if g("regCP_HQD_AQL_CONTROL") & 1 else PM4Queue
    bank[regs.addr("regCP_HQD_ACTIVE")] = 1
    try: queue = cls(self.dev, key[1] * 8 + key[2], ring, size, rptr, wptr)
    except GPUPageFault as e:   # the CP's first write (the read-pointer report) faults: reported as any fault, the HQD stays dead
      self.dev.fault(None, e.add_context(nearest=f"{name} activation"))
      return
    self.queues[key] = queue
    self.dev.add_queue(queue, offset * 4)

  def _deactivate(self, key:tuple, bank:dict[int, int]):
    bank[self.dev.regs.addr("regCP_HQD_ACTIVE")] = 0
    if (queue:=self.queues.pop(key, None)) is not None: self.dev.remove_queue(queue.queue_id)
