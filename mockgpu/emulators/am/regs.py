"""The register file behind BAR5: every register the board defines, by name, from tinygrad's autogen register tables
placed at the board's IP base addresses (the same bases its IP discovery table publishes).

An access to an address no block defines raises UndefinedRegister naming the address and the nearest register, as a
strict model must (real hardware would read 0 or hang the bus); the reserved slots inside the HQD range, which AM's
MQD-image write covers, are the documented exception. Blocks (nbio.py, psp.py, smu.py, gmc.py, ih.py, gfx.py) attach
read and write handlers to their registers; a register without a handler is plain storage: what was written reads
back. A handler may bank a register (GRBM_GFX_CNTL selects the HQD a CP_HQD_* access reaches).
"""
from __future__ import annotations
import bisect, functools
from typing import Callable
from tinygrad.runtime.autogen.am import am, navi_offsets
from tinygrad.runtime.support.amd import AMDReg, import_asic_regs
from mockgpu import events
from mockgpu.errors import MockGPUError

class UndefinedRegister(MockGPUError):
  """A BAR5 access to an address the board's register model does not define: names the device, the address and the
  nearest register."""

class ReadOnlyRegister(MockGPUError):
  """A write to a status or read-only register (RCC_CONFIG_MEMSIZE, the FB location, CP_STAT): names it and the value."""

def read_only(device:str, name:str):
  """A write handler that refuses every write to register `name`."""
  def refuse(value:int): raise ReadOnlyRegister(f"{device}: {name} is read-only (write of 0x{value:x})")
  return refuse

# hardware ID -> the navi_offsets prefix of its base addresses
BASE_PREFIX = {am.GC_HWID: "GC", am.SDMA0_HWID: "SDMA0", am.NBIF_HWID: "NBIO", am.HDP_HWID: "HDP", am.MMHUB_HWID: "MMHUB",
               am.ATHUB_HWID: "ATHUB", am.OSSSYS_HWID: "OSSSYS", am.MP0_HWID: "MP0", am.MP1_HWID: "MP1", am.SMUIO_HWID: "SMUIO",
               am.UMC_HWID: "UMC"}

def ip_bases(hwid:int, inst:int=0) -> tuple[int, ...]:
  prefix = BASE_PREFIX[hwid] if not (hwid == am.SDMA0_HWID and inst == 1) else "SDMA1"
  return tuple(getattr(navi_offsets, f"{prefix}_BASE__INST0_SEG{s}", 0) for s in range(6))

@functools.cache
def register_table(board) -> tuple[dict[int, tuple[str, str, AMDReg]], dict[str, AMDReg]]:
  """(address -> (block, name, register), name -> register) of every register AM can name on this board: the blocks
  AMDev._build_regs imports (mp on MP0, hdp, gc, mmhub, osssys, nbio|nbif, and mp 11.0.0 on MP1 for the SMU)."""
  gc = board.gc_version
  blocks = [("mp", am.MP0_HWID, board.ip_version(am.MP0_HWID)), ("hdp", am.HDP_HWID, board.ip_version(am.HDP_HWID)),
            ("gc", am.GC_HWID, gc), ("mmhub", am.MMHUB_HWID, board.ip_version(am.MMHUB_HWID)),
            ("osssys", am.OSSSYS_HWID, board.ip_version(am.OSSSYS_HWID)),
            ("nbio" if gc < (12, 0, 0) else "nbif", am.NBIF_HWID, board.nbio_version), ("mp", am.MP1_HWID, (11, 0, 0))]
  by_addr:dict[int, tuple[str, str, AMDReg]] = {}
  by_name:dict[str, AMDReg] = {}
  for prefix, hwid, ver in blocks:
    for name, reg in import_asic_regs(prefix, ver, cls=functools.partial(AMDReg, bases={0: ip_bases(hwid)})).items():
      if prefix == "mp" and (hwid == am.MP1_HWID) != name.startswith("mmMP1"): continue   # MP0 names on MP0, MP1 names on MP1
      by_name.setdefault(name, reg)
      by_addr.setdefault(reg.addr[0], (prefix.upper(), name, reg))
  return by_addr, by_name

class RegisterFile:
  def __init__(self, device_name:str, board):
    self.device_name = device_name
    self.by_addr, self.by_name = register_table(board)
    self._sorted = sorted(self.by_addr)
    self.values:dict[int, int] = {}
    self.readers:dict[int, Callable[[], int]] = {}
    self.writers:dict[int, Callable[[int], None]] = {}
    self.extra:dict[int, str] = {}   # addresses defined beyond the named tables (the HDP flush remap slot, reserved HQD slots)

  def addr(self, name:str) -> int:
    if (reg:=self.by_name.get(name)) is None: raise UndefinedRegister(f"{self.device_name}: the board defines no register {name}")
    return reg.addr[0]
  def reg(self, name:str) -> AMDReg: return self.by_name[name]
  def name(self, addr:int) -> str:
    if (e:=self.by_addr.get(addr)) is not None: return e[1]
    return self.extra.get(addr, f"0x{addr:x}")

  def on_read(self, name:str, fn:Callable[[], int]): self.readers[self.addr(name)] = fn
  def on_write(self, name:str, fn:Callable[[int], None]): self.writers[self.addr(name)] = fn
  def define(self, addr:int, what:str, reader=None, writer=None):
    """An address with no name in the tables that this board still decodes (the HDP flush remap target, reserved slots)."""
    self.extra[addr] = what
    if reader is not None: self.readers[addr] = reader
    if writer is not None: self.writers[addr] = writer

  def get(self, name:str) -> int: return self.values.get(self.addr(name), 0)
  def set(self, name:str, value:int): self.values[self.addr(name)] = value & 0xffffffff
  def field(self, name:str, value:int, fieldname:str) -> int:
    lo, hi = self.by_name[name].fields[fieldname]
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)

  def _check(self, addr:int, op:str):
    if addr in self.by_addr or addr in self.extra: return
    i = bisect.bisect_left(self._sorted, addr)
    near = min((self._sorted[j] for j in (i - 1, i) if 0 <= j < len(self._sorted)), key=lambda a: abs(a - addr))
    block, name, _ = self.by_addr[near]
    raise UndefinedRegister(f"{self.device_name}: BAR5 {op} of dword 0x{addr:x} (byte 0x{addr * 4:x}): no register is defined there; "
                            f"the nearest is {block} {name} at 0x{near:x}")

  def read(self, addr:int) -> int:
    self._check(addr, "read")
    value = fn() if (fn:=self.readers.get(addr)) is not None else self.values.get(addr, 0)
    if events.enabled: events.emit("mmio", self.device_name, op="read", reg=self.name(addr), addr=addr, value=value)
    return value

  def write(self, addr:int, value:int):
    self._check(addr, "write")
    value &= 0xffffffff
    if events.enabled: events.emit("mmio", self.device_name, op="write", reg=self.name(addr), addr=addr, value=value)
    if (fn:=self.writers.get(addr)) is not None: fn(value)
    else: self.values[addr] = value
