"""The GPU boards mockgpu models: one frozen record per board, and the selection of the AMD and NVIDIA board of a process.

Every board number mockgpu publishes comes from a record here, so a board is added in one place: for AMD the KFD
topology, DRM sysfs, IP discovery, register blocks and the executor's ISA family; for NVIDIA the RM/UVM answers (GR
info, class list, memory size, PCI id), the CUDA driver's device attributes and the launch limits. The numbers are the
public specifications of each product (CU/SM counts, LDS/shared memory, memory) and the versions or classes the vendor's
kernel driver reports for its chip.
"""
from __future__ import annotations
import dataclasses, functools
from mockgpu import config
from mockgpu.errors import MockGPUError

class UnknownBoard(MockGPUError, ValueError):
  """A board name (a DEV arch field, MOCKGPU_AMD_BOARD, MOCKGPU_NV_MODEL) that no record in mockgpu.boards describes: lists
  the known ones of its vendor."""

def _ip(gc, sdma, sdma_count, nbio, hdp, mmhub, athub, osssys, mp0, mp1, smuio, umc) -> tuple:
  # (hardware id, instance) -> (major, minor, revision), as in the board's IP discovery table. The ids by their names in
  # tinygrad's autogen.am, whose numbers AMDBoard.ip reads at its first use: that table costs ~10 ms of an import, which
  # a process running only NVIDIA devices never needs
  return (("GC_HWID", 0, gc), *(("SDMA0_HWID", i, sdma) for i in range(sdma_count)), ("NBIF_HWID", 0, nbio),
          ("HDP_HWID", 0, hdp), ("MMHUB_HWID", 0, mmhub), ("ATHUB_HWID", 0, athub), ("OSSSYS_HWID", 0, osssys),
          ("MP0_HWID", 0, mp0), ("MP1_HWID", 0, mp1), ("SMUIO_HWID", 0, smuio), ("UMC_HWID", 0, umc))

def _am():
  from tinygrad.runtime.autogen.am import am
  return am

# The lanes of a wave in the two wave modes of AMD's compute ISAs: RDNA runs either (DISPATCH_INITIATOR.CS_W32_EN set:
# WAVE32, clear: WAVE64), CDNA WAVE64 only. Code outside the compiler names these (or a dispatch's wave_size, a
# board's wave_front_size), never the numbers; the compiler is handed the wave size as a parameter.
WAVE32, WAVE64 = 32, 64
# NVIDIA's warp: every NV board's warp_size, and the 32 threads over which the PTX ISA lays out mma.sync's fragments
NV_WARP = 32

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
  ip_table: tuple           # ((hardware id's name in autogen.am, instance, (major, minor, revision)), ...): see ip
  vendor_id: int = 0x1002
  subsystem_vendor: int = 0x1002
  max_slots_scratch_cu: int = 32
  num_gws: int = 64
  num_sdma_queues_per_engine: int = 6
  vram_type: str = "GDDR6"  # amdgpu_drm's AMDGPU_VRAM_TYPE_<name>, as AMDGPU_INFO_DEV_INFO reports it

  # cached: the PM4 model names every register it writes by these versions
  @functools.cached_property
  def ip(self) -> dict:
    """(hardware id, instance) -> (major, minor, revision), in the discovery table's order."""
    am = _am()
    return {(getattr(am, hwid), inst): ver for hwid, inst, ver in self.ip_table}
  def ip_version(self, hwid:int) -> tuple[int, int, int]: return self.ip[(hwid, 0)]
  @functools.cached_property
  def gc_version(self) -> tuple[int, int, int]: return self.ip_version(_am().GC_HWID)
  @functools.cached_property
  def nbio_version(self) -> tuple[int, int, int]: return self.ip_version(_am().NBIF_HWID)
  @property
  def wave64(self) -> bool: return self.wave_front_size == WAVE64

AMD_BOARDS: dict[str, AMDBoard] = {b.name: b for b in (
  # Navi31: 96 CUs in 6 SEs x 2 SAs x 8, 24 GiB GDDR6 on 384 bits
  AMDBoard("gfx1100", "AMD Radeon RX 7900 XTX", "rdna3", 110000, 0x744c, 0xc8, 0x0e3b, cu_count=96, se=6, sa_per_se=2, cu_per_sa=8,
           simd_per_cu=2, max_waves_per_simd=16, wave_front_size=32, lds_size_in_kb=64, num_xcc=1, vram_size=24 << 30, vram_width=384,
           mem_clk_max=1250, max_engine_clk=2482, num_sdma_engines=2, num_cp_queues=8, fw_version=2140, sdma_fw_version=21, pm4="nv",
           ip_table=_ip((11,0,0), (6,0,0), 2, (4,3,0), (6,0,0), (3,0,0), (3,0,0), (6,0,0), (13,0,0), (13,0,0), (13,0,0), (8,10,0))),
  # Strix Halo (Ryzen AI Max+ 395's Radeon 8060S, RDNA3.5): 40 CUs in 2 SEs x 2 SAs x 10, LPDDR5X-8000 on 256 bits shared with
  # the CPU (a 64 GiB carve-out here); GC 11.5.1 and SDMA 6.1.1 as amdgpu's IP discovery reports them, the other IP
  # versions those of its generation (Strix Point's; not read by tinygrad's compute path)
  AMDBoard("gfx1151", "AMD Radeon 8060S Graphics", "rdna35", 110501, 0x1586, 0xc1, 0x0000, cu_count=40, se=2, sa_per_se=2, cu_per_sa=10,
           simd_per_cu=2, max_waves_per_simd=16, wave_front_size=32, lds_size_in_kb=64, num_xcc=1, vram_size=64 << 30, vram_width=256,
           mem_clk_max=4000, max_engine_clk=2900, num_sdma_engines=1, num_cp_queues=8, fw_version=2140, sdma_fw_version=21, pm4="nv",
           ip_table=_ip((11,5,1), (6,1,1), 1, (7,11,0), (6,1,0), (3,3,0), (3,3,0), (6,1,0), (14,0,0), (14,0,0), (14,0,0), (8,14,0)),
           vram_type="LPDDR5"),
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
           ip_table=_ip((9,5,0), (4,4,5), 16, (7,9,1), (4,4,5), (1,8,1), (1,8,1), (4,4,5), (13,0,12), (13,0,12), (13,0,3),
                        (12,5,0)), vram_type="HBM3E"),
)}
DEFAULT_AMD_BOARD = "gfx1100"

def amd_board(name:str) -> AMDBoard:
  """The record of AMD board `name` (a gfx target); UnknownBoard lists the known ones."""
  if (b:=AMD_BOARDS.get(name.lower())) is None:
    raise UnknownBoard(f"unknown AMD board {name!r}: mockgpu models {', '.join(AMD_BOARDS)}")
  return b

def _dev_arch(devices:tuple[str, ...]) -> str:
  """The arch field of DEV's first target whose device is one of `devices` (DEV=MOCKKFD+AMD:LLVM:gfx1201,
  DEV=MOCK+CUDA:PTX:sm_86), as tinygrad parses it: the arch tinygrad's renderer compiles for."""
  from tinygrad.helpers import Target
  dev = config.env("DEV", "")
  if not dev: return ""
  try: targets = [Target.parse(t) for t in dev.split(";")]  # DEV lists targets separated by ';', as tinygrad's _DEV
  except RuntimeError: return ""  # a DEV tinygrad cannot parse is tinygrad's error to report, not the board's
  return next((t.arch for t in targets if t.device in devices), "")

def selected_amd_board() -> AMDBoard:
  """The board every mock AMD GPU of the process is: DEV's arch field, else MOCKGPU_AMD_BOARD, else gfx1100."""
  return _selected(amd_board, _dev_arch(("AMD",)), "MOCKGPU_AMD_BOARD", config.amd_board(), DEFAULT_AMD_BOARD)

def _selected(lookup, arch:str, var:str, setting:str, default:str):
  """lookup's board for DEV's arch field, else the setting, else the default; an unknown one says where it came from."""
  try: return lookup(arch or setting or default)
  except UnknownBoard as e: raise UnknownBoard(f"{e} (from {'DEV' if arch else var})") from None

# *** NVIDIA ***

def _nv_class(name:str) -> int:
  """An RM class number by its name in NVIDIA's headers (tinygrad's nv_570 tables, imported by NV paths only)."""
  from tinygrad.runtime.autogen import nv_570
  return getattr(nv_570, name)

@dataclasses.dataclass(frozen=True)
class NVBoard:
  name: str                       # the SM target: MOCKGPU_NV_MODEL, DEV's arch field, tinygrad's device arch, NVRTC's target
  marketing_name: str             # cuDeviceGetName, /proc/driver/nvidia/gpus/*/information
  compute_capability: tuple[int, int]
  sm_version: int                 # NV2080_CTRL_GR_INFO_INDEX_SM_VERSION, (major << 8) | minor; GB20x reports 0xa04
  pci_device_id: int
  sm_count: int
  gpcs: int                       # the GR LITTER values RM reports (tinygrad sizes local memory with them)
  tpc_per_gpc: int
  sm_per_tpc: int
  memory_size: int
  memory_bus_width: int           # bits
  memory_clock_khz: int           # as CUDA reports it: half the data rate per pin
  l2_size: int
  clock_khz: int                  # the boost clock
  max_threads_per_sm: int         # from here to shared_per_block_optin: the CUDA C++ Programming Guide's
  max_blocks_per_sm: int          # "Technical Specifications per Compute Capability" table
  shared_per_sm: int
  shared_per_block_optin: int     # a CTA's shared memory with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
  # the chip's RM classes (names from NVIDIA's class headers) that the class list reports: tinygrad's ops_nv picks its
  # host, compute, copy and usermode classes from that list, and its QMD version from the compute class
  gpfifo_classes: tuple[str, ...]
  compute_class: str
  dma_class: str
  usermode_classes: tuple[str, ...]
  qmd_version: int                # 3: Ampere/Ada (NVC6C0_QMDV03_00), 5: Blackwell (NVCEC0_QMDV05_00)
  # the same for every compute capability from 7.0 to 12.0 (the same table)
  shared_per_block: int = 48 << 10          # a CTA's shared memory without opting in; also ptxas's static limit
  reserved_shared_per_block: int = 1 << 10  # what the system takes of each CTA's share (8.0 and later)
  max_threads_per_block: int = 1024
  max_block: tuple[int, int, int] = (1024, 1024, 64)
  max_grid: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
  regs_per_sm: int = 64 << 10
  regs_per_block: int = 64 << 10
  regs_per_thread: int = 255
  warp_size: int = NV_WARP
  constant_memory: int = 64 << 10
  pci_vendor_id: int = 0x10de

  @property
  def max_warps_per_sm(self) -> int: return self.max_threads_per_sm // self.warp_size
  @property
  def gpfifo(self) -> tuple[int, ...]: return tuple(map(_nv_class, self.gpfifo_classes))
  @property
  def compute(self) -> int: return _nv_class(self.compute_class)
  @property
  def dma(self) -> int: return _nv_class(self.dma_class)
  @property
  def usermode(self) -> tuple[int, ...]: return tuple(map(_nv_class, self.usermode_classes))

  def launch_error(self, kernel, grid:tuple, block:tuple, dynamic_shared:int) -> tuple[str, str]|None:
    """None if a launch of `kernel` fits this board's limits, else (kind, why): kind "value" for an invalid launch
    configuration (CUDA_ERROR_INVALID_VALUE), "resources" for more shared memory than a CTA has
    (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES); the CUDA model answers with the CUresult, the QMD path with a PacketError, the
    PTX executor with LaunchRefused. Names the kernel, the board and the dimension at fault."""
    name, tpc, on = getattr(kernel, "name", "?"), block[0] * block[1] * block[2], f"({self.name})"
    if min(grid + block) < 1: return "value", f"kernel {name}: grid {grid} block {block} has a dimension of 0"
    if any(g > m for g, m in zip(grid, self.max_grid)): return "value", f"kernel {name}: grid {grid} exceeds the hardware's {self.max_grid} {on}"
    if any(x > m for x, m in zip(block, self.max_block)) or tpc > self.max_threads_per_block:
      return "value", (f"kernel {name}: block {block} ({tpc} threads) exceeds the hardware's {self.max_block} and "
                       f"{self.max_threads_per_block} threads {on}")
    if tpc > (limit:=getattr(kernel, "max_threads", None) or self.max_threads_per_block):
      return "value", f"kernel {name}: block {block} ({tpc} threads) exceeds its .maxntid/.reqntid of {limit}"
    if dynamic_shared < 0: return "value", f"kernel {name}: {dynamic_shared} bytes of dynamic shared memory"
    shared = (getattr(kernel, "dynamic_base", 0) + dynamic_shared) if dynamic_shared else getattr(kernel, "shared_size", 0)
    if shared > self.shared_per_block_optin:
      return "resources", f"kernel {name}: {shared} bytes of shared memory exceed the {self.shared_per_block_optin} bytes of a CTA {on}"
    return None

# SM counts, memory, bus width, data rate and boost clock: NVIDIA's product specifications; L2: the GA102, AD102 and
# GB202 whitepapers; PCI device ids: the PCI ID repository. Compute capability 9.0 (H100/H200) is not here: tinygrad
# 0.14.0's ops_nv picks its compute class from BLACKWELL_COMPUTE_B, ADA_COMPUTE_A and AMPERE_COMPUTE_B and builds QMD
# V03/V05 only, so it cannot drive Hopper's HOPPER_COMPUTE_A and its QMD V04 as the RM reports them.
NV_BOARDS: dict[str, NVBoard] = {b.name: b for b in (
  # GA102: 82 SMs, 24 GiB GDDR6X on 384 bits at 19.5 Gbps, 6 MiB L2, 1.70 GHz
  NVBoard("sm_86", "NVIDIA GeForce RTX 3090", (8, 6), 0x806, 0x2204, sm_count=82, gpcs=7, tpc_per_gpc=6, sm_per_tpc=2,
          memory_size=24 << 30, memory_bus_width=384, memory_clock_khz=9_751_000, l2_size=6 << 20, clock_khz=1_695_000,
          max_threads_per_sm=1536, max_blocks_per_sm=16, shared_per_sm=100 << 10, shared_per_block_optin=99 << 10,
          gpfifo_classes=("AMPERE_CHANNEL_GPFIFO_A",), compute_class="AMPERE_COMPUTE_B", dma_class="AMPERE_DMA_COPY_B",
          usermode_classes=("TURING_USERMODE_A", "AMPERE_USERMODE_A"), qmd_version=3),
  # AD102: 128 SMs, 24 GiB GDDR6X on 384 bits at 21 Gbps, 72 MiB L2, 2.52 GHz
  NVBoard("sm_89", "NVIDIA GeForce RTX 4090", (8, 9), 0x809, 0x2684, sm_count=128, gpcs=11, tpc_per_gpc=6, sm_per_tpc=2,
          memory_size=24 << 30, memory_bus_width=384, memory_clock_khz=10_501_000, l2_size=72 << 20, clock_khz=2_520_000,
          max_threads_per_sm=1536, max_blocks_per_sm=24, shared_per_sm=100 << 10, shared_per_block_optin=99 << 10,
          gpfifo_classes=("AMPERE_CHANNEL_GPFIFO_A",), compute_class="ADA_COMPUTE_A", dma_class="AMPERE_DMA_COPY_B",
          usermode_classes=("TURING_USERMODE_A", "AMPERE_USERMODE_A"), qmd_version=3),
  # GB202: 170 SMs, 32 GiB GDDR7 on 512 bits at 28 Gbps, 96 MiB L2, 2.41 GHz
  NVBoard("sm_120", "NVIDIA GeForce RTX 5090", (12, 0), 0xa04, 0x2b85, sm_count=170, gpcs=11, tpc_per_gpc=8, sm_per_tpc=2,
          memory_size=32 << 30, memory_bus_width=512, memory_clock_khz=14_001_000, l2_size=96 << 20, clock_khz=2_407_000,
          max_threads_per_sm=1536, max_blocks_per_sm=32, shared_per_sm=100 << 10, shared_per_block_optin=99 << 10,
          gpfifo_classes=("BLACKWELL_CHANNEL_GPFIFO_A", "BLACKWELL_CHANNEL_GPFIFO_B"), compute_class="BLACKWELL_COMPUTE_B",
          dma_class="BLACKWELL_DMA_COPY_B", usermode_classes=("HOPPER_USERMODE_A", "BLACKWELL_USERMODE_A"), qmd_version=5),
)}
DEFAULT_NV_BOARD = "sm_89"

def nv_board(name:str) -> NVBoard:
  """The record of NVIDIA board `name` (an SM target, sm_89); UnknownBoard lists the known ones."""
  if (b:=NV_BOARDS.get(name.lower())) is None:
    raise UnknownBoard(f"unknown NVIDIA board {name!r}: mockgpu models {', '.join(NV_BOARDS)}")
  return b

def selected_nv_board() -> NVBoard:
  """The board every mock NVIDIA GPU of the process is (RM and CUDA alike): DEV's arch field (DEV=MOCK+NV:PTX:sm_86,
  MOCK+CUDA:CUDA:sm_120), else MOCKGPU_NV_MODEL, else sm_89."""
  return _selected(nv_board, _dev_arch(("NV", "CUDA")), "MOCKGPU_NV_MODEL", config.nv_model(), DEFAULT_NV_BOARD)

def selection_summary() -> str:
  """The boards this process's settings select, for the pytest header and `mockgpu info`: an unknown name is shown with
  the UnknownBoard message here, and raised where a GPU is opened."""
  out = []
  for vendor, select in (("AMD", selected_amd_board), ("NV", selected_nv_board)):
    try: b = select()
    except UnknownBoard as e: out.append(f"{vendor} {e}")
    else: out.append(f"{vendor} {b.name} ({b.marketing_name})")
  return ", ".join(out)
