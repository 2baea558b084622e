"""The GPU boards mockgpu models: one frozen record per board, and the selection of the AMD board for a process.

Every board number mockgpu publishes (KFD topology, DRM sysfs, IP discovery, register blocks, the executor's ISA family)
comes from a record here, so a board is added in one place. The numbers are the public specifications of each product
(CU counts, LDS, memory) and the versions the amdgpu/amdkfd drivers report for its chip.
"""
from __future__ import annotations
import dataclasses
from tinygrad.runtime.autogen.am import am
from mockgpu import config
from mockgpu.errors import MockGPUError

class UnknownBoard(MockGPUError, ValueError):
  """A board name (a DEV arch field, MOCKGPU_AMD_BOARD) that no record in mockgpu.boards describes: lists the known ones."""

def _ip(gc, sdma, sdma_count, nbio, hdp, mmhub, athub, osssys, mp0, mp1, smuio, umc) -> tuple:
  # (hardware id, instance) -> (major, minor, revision), as in the board's IP discovery table
  return ((am.GC_HWID, 0, gc), *((am.SDMA0_HWID, i, sdma) for i in range(sdma_count)), (am.NBIF_HWID, 0, nbio),
          (am.HDP_HWID, 0, hdp), (am.MMHUB_HWID, 0, mmhub), (am.ATHUB_HWID, 0, athub), (am.OSSSYS_HWID, 0, osssys),
          (am.MP0_HWID, 0, mp0), (am.MP1_HWID, 0, mp1), (am.SMUIO_HWID, 0, smuio), (am.UMC_HWID, 0, umc))

@dataclasses.dataclass(frozen=True)
class AMDBoard:
  name: str                 # the gfx target (KFD node name, tinygrad's AMDDevice.arch)
  marketing_name: str
  family: str               # the executor's ISA family: rdna3, rdna4, cdna3, cdna4
  gfx_target_version: int   # as KFD publishes it (major*10000 + minor*100 + stepping of the gfx target, not of GC)
  device_id: int
  revision: int
  subsystem_device: int
  cu_count: int             # active CUs over all XCCs
  se: int                   # shader engines per XCC
  sa_per_se: int
  cu_per_sa: int            # CUs per shader array when none is harvested
  simd_per_cu: int
  max_waves_per_simd: int
  wave_front_size: int
  lds_size_in_kb: int
  num_xcc: int
  vram_size: int
  vram_width: int
  mem_clk_max: int
  max_engine_clk: int
  num_sdma_engines: int
  num_cp_queues: int
  fw_version: int
  sdma_fw_version: int
  pm4: str                  # the PM4 packet generation tinygrad builds for it (autogen.am.pm4_nv / pm4_soc15)
  ip_table: tuple           # ((hardware id, instance, (major, minor, revision)), ...)
  vendor_id: int = 0x1002
  subsystem_vendor: int = 0x1002
  max_slots_scratch_cu: int = 32
  num_gws: int = 64
  num_sdma_queues_per_engine: int = 6
  vram_type: str = "GDDR6"  # amdgpu_drm's AMDGPU_VRAM_TYPE_<name>, as AMDGPU_INFO_DEV_INFO reports it

  @property
  def ip(self) -> dict: return {(hwid, inst): ver for hwid, inst, ver in self.ip_table}
  def ip_version(self, hwid:int) -> tuple[int, int, int]: return self.ip[(hwid, 0)]
  @property
  def gc_version(self) -> tuple[int, int, int]: return self.ip_version(am.GC_HWID)
  @property
  def nbio_version(self) -> tuple[int, int, int]: return self.ip_version(am.NBIF_HWID)
  @property
  def wave64(self) -> bool: return self.wave_front_size == 64

AMD_BOARDS: dict[str, AMDBoard] = {b.name: b for b in (
  # Navi31: 96 CUs in 6 SEs x 2 SAs x 8, 24 GiB GDDR6 on 384 bits
  AMDBoard("gfx1100", "AMD Radeon RX 7900 XTX", "rdna3", 110000, 0x744c, 0xc8, 0x0e3b, cu_count=96, se=6, sa_per_se=2, cu_per_sa=8,
           simd_per_cu=2, max_waves_per_simd=16, wave_front_size=32, lds_size_in_kb=64, num_xcc=1, vram_size=24 << 30, vram_width=384,
           mem_clk_max=1250, max_engine_clk=2482, num_sdma_engines=2, num_cp_queues=8, fw_version=2140, sdma_fw_version=21, pm4="nv",
           ip_table=_ip((11,0,0), (6,0,0), 2, (4,3,0), (6,0,0), (3,0,0), (3,0,0), (6,0,0), (13,0,0), (13,0,0), (13,0,0), (8,10,0))),
  # Navi48: 64 CUs in 4 SEs x 2 SAs x 8, 16 GiB GDDR6 on 256 bits
  AMDBoard("gfx1201", "AMD Radeon RX 9070 XT", "rdna4", 120001, 0x7550, 0xc0, 0x0e3b, cu_count=64, se=4, sa_per_se=2, cu_per_sa=8,
           simd_per_cu=2, max_waves_per_simd=16, wave_front_size=32, lds_size_in_kb=64, num_xcc=1, vram_size=16 << 30, vram_width=256,
           mem_clk_max=1258, max_engine_clk=2970, num_sdma_engines=2, num_cp_queues=8, fw_version=2390, sdma_fw_version=14, pm4="nv",
           ip_table=_ip((12,0,1), (7,0,1), 2, (6,3,1), (7,0,0), (4,1,0), (4,1,0), (7,0,0), (14,0,3), (14,0,3), (15,0,0), (8,14,0))),
  # MI300X: 304 CUs over 8 XCCs (38 each of 40: 4 SEs x 1 SA x 10), 192 GiB HBM3 on 8192 bits
  AMDBoard("gfx942", "AMD Instinct MI300X", "cdna3", 90402, 0x74a1, 0x00, 0x74a1, cu_count=304, se=4, sa_per_se=1, cu_per_sa=10,
           simd_per_cu=4, max_waves_per_simd=8, wave_front_size=64, lds_size_in_kb=64, num_xcc=8, vram_size=192 << 30, vram_width=8192,
           mem_clk_max=1300, max_engine_clk=2100, num_sdma_engines=16, num_cp_queues=24, fw_version=157, sdma_fw_version=19, pm4="soc15",
           ip_table=_ip((9,4,3), (4,4,2), 16, (7,9,0), (4,4,2), (1,8,0), (1,8,0), (4,4,2), (13,0,6), (13,0,6), (13,0,3), (6,7,0)), vram_type="HBM"),
  # MI350X: 256 CUs over 8 XCCs (32 each of 36: 4 SEs x 1 SA x 9), 160 KiB LDS, 288 GiB HBM3E on 8192 bits
  AMDBoard("gfx950", "AMD Instinct MI350X", "cdna4", 90500, 0x75a0, 0x00, 0x75a0, cu_count=256, se=4, sa_per_se=1, cu_per_sa=9,
           simd_per_cu=4, max_waves_per_simd=8, wave_front_size=64, lds_size_in_kb=160, num_xcc=8, vram_size=288 << 30, vram_width=8192,
           mem_clk_max=2000, max_engine_clk=2200, num_sdma_engines=16, num_cp_queues=24, fw_version=177, sdma_fw_version=19, pm4="soc15",
           ip_table=_ip((9,5,0), (4,4,5), 16, (7,9,1), (4,4,5), (1,8,1), (1,8,1), (4,4,5), (13,0,14), (13,0,14), (13,0,3), (12,5,0)), vram_type="HBM3E"),
)}
DEFAULT_AMD_BOARD = "gfx1100"

def amd_board(name:str) -> AMDBoard:
  """The record of AMD board `name` (a gfx target); UnknownBoard lists the known ones."""
  if (b:=AMD_BOARDS.get(name.lower())) is None:
    raise UnknownBoard(f"unknown AMD board {name!r}: mockgpu models {', '.join(AMD_BOARDS)}")
  return b

def _dev_arch() -> str:
  """The arch field of DEV when its device is AMD (DEV=MOCKKFD+AMD:LLVM:gfx1201), as tinygrad parses it."""
  from tinygrad.helpers import Target
  dev = config.env("DEV", "")
  if not dev: return ""
  try: targets = [Target.parse(t) for t in dev.split(";")]  # DEV lists targets separated by ';', as tinygrad's _DEV
  except RuntimeError: return ""  # a DEV tinygrad cannot parse is tinygrad's error to report, not the board's
  return next((t.arch for t in targets if t.device == "AMD"), "")

def selected_amd_board() -> AMDBoard:
  """The board every mock AMD GPU of the process is: DEV's arch field, else MOCKGPU_AMD_BOARD, else gfx1100."""
  return amd_board(_dev_arch() or config.amd_board() or DEFAULT_AMD_BOARD)
