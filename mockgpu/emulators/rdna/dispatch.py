"""A compute dispatch as the PM4 command processor hands it to the executor, and what both executor paths (numpy and
native) read from its registers and say in their errors."""
from __future__ import annotations
import functools
from dataclasses import dataclass
from tinygrad.runtime.autogen import amdgpu_kd as kd
from mockgpu.errors import DispatchTooLarge, InstructionBudgetExceeded, Unmodelled
from mockgpu.boards import WAVE32, WAVE64
from mockgpu.compiler.rdna import semantics

# what the executor holds for a dispatch: its workgroup ids (8 bytes each, 2 GiB at the limit) and the registers of at
# least one whole workgroup (the hardware's 1024 work-items at most: a 65535x65535 one would be 128 GiB of VGPRs)
MAX_WORKGROUPS = 1 << 28
MAX_WORKGROUP_ITEMS = 1024

def check_size(grid:tuple, block:tuple, what:str="RDNA executor"):
  """DispatchTooLarge, naming the dimensions, for a dispatch beyond what the executor can hold."""
  nwg, items = grid[0] * grid[1] * grid[2], block[0] * block[1] * block[2]
  if nwg > MAX_WORKGROUPS or items > MAX_WORKGROUP_ITEMS:
    raise DispatchTooLarge(f"{what}: a grid of {tuple(grid)} workgroups ({nwg}) of {tuple(block)} work-items ({items}) is beyond what the "
                           f"emulator holds: at most {MAX_WORKGROUPS} workgroups of at most {MAX_WORKGROUP_ITEMS} work-items")

@dataclass
class Dispatch:
  arch:str                     # the board's ISA family: "rdna3", "rdna4", "cdna3", "cdna4"
  pgm_addr:int                 # byte address of the first instruction (COMPUTE_PGM_LO/HI << 8)
  rsrc1:int                    # COMPUTE_PGM_RSRC1
  rsrc2:int                    # COMPUTE_PGM_RSRC2
  rsrc3:int                    # COMPUTE_PGM_RSRC3
  user_data:list[int]          # COMPUTE_USER_DATA_0..15
  tmpring_size:int             # COMPUTE_TMPRING_SIZE
  scratch_base:int             # byte address (COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI << 8)
  block:tuple[int, int, int]   # COMPUTE_NUM_THREAD_X/Y/Z
  grid:tuple[int, int, int]    # DISPATCH_DIRECT dimensions, in workgroups
  wave32:bool                  # DISPATCH_INITIATOR.CS_W32_EN (gfx9 has no such bit: wave64 only)
  # the workgroups this dispatch runs: (XCC, XCCs sharing the dispatch, COMPUTE_TG_CHUNK_SIZE); chunk k of `chunk`
  # consecutive workgroup indices (x fastest) runs on XCC k mod XCCs. One XCC runs them all.
  xcc:tuple[int, int, int] = (0, 1, 1)

  @property
  def wave_size(self) -> int:
    """Lanes per wave: CS_W32_EN set is wave32, clear wave64 (RDNA runs both; CDNA only wave64)."""
    return WAVE32 if self.wave32 else WAVE64

  def workgroup(self, linear:int) -> tuple[int, int, int]:
    """The (x, y, z) of the workgroup with linear index `linear` (x fastest)."""
    gx, gy, _ = self.grid
    return (linear % gx, (linear // gx) % gy, linear // (gx * gy))

  def workgroup_ids(self):
    """The linear workgroup indices (x + gx * (y + gy * z)) this dispatch runs, in order: its XCC's chunks (read-only,
    shared by the dispatches of one geometry)."""
    return _workgroup_ids(self.grid[0] * self.grid[1] * self.grid[2], *self.xcc)

@dataclass
class DispatchStats:
  waves:int
  wave_instructions:int
  seconds:float
  native:bool = False          # run by the kernel's C translation (emulators/rdna/native.py), not the numpy path
  stencil:bool = False         # run by the stencil tier (emulators/rdna/stencil.py; native is then True too)

def field(value:int, shift:int, width:int) -> int: return (value >> shift) & ((1 << width) - 1)


def spi_setup(rsrc2:int, arch:str="rdna3") -> tuple[int, tuple[bool, bool, bool], int]:
  """What RSRC2 asks the SPI to put in a wave's registers: the user SGPR count, which workgroup-ID SGPRs (x, y, z)
  follow them, and how many work-item ID components v0 packs. The workgroup-info SGPR is not modelled: it raises.
  gfx12 (rdna4) puts the workgroup IDs in ttmp registers instead (semantics/rdna4.py TTMP_WORKGROUP_IDS), so no SGPR
  follows the user SGPRs."""
  if rsrc2 >> kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO_SHIFT & 1:
    raise Unmodelled("RDNA executor: the workgroup-info SGPR (RSRC2.TG_SIZE_EN) is not modelled")
  nuser = field(rsrc2, kd.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT_SHIFT, kd.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT_WIDTH)
  ids = tuple(bool(rsrc2 >> sh & 1) for sh in (kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X_SHIFT,
              kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y_SHIFT, kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z_SHIFT))
  comps = field(rsrc2, kd.COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID_SHIFT, kd.COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID_WIDTH)
  return nuser, (False, False, False) if semantics.setup(arch).TTMP_WORKGROUP_IDS else ids, comps

def budget_exceeded(pgm:int, budget:int, pc:int) -> InstructionBudgetExceeded:
  return InstructionBudgetExceeded(f"dispatch of the kernel at PC 0x{pgm:x} ran past MOCKGPU_BUDGET={budget} "
                                   f"wave-instructions (waves at PC 0x{pgm + pc:x})")

def allocated_vgprs(d:Dispatch) -> int:
  """The VGPRs a wave of d has (RSRC1.GRANULATED_WORKITEM_VGPR_COUNT in the family's unit for its wave size), at most
  256: the registers an M0-relative VGPR index may reach."""
  count = field(d.rsrc1, kd.COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT_SHIFT, kd.COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT_WIDTH)
  return min(256, (count + 1) * semantics.setup(d.arch).VGPR_GRANULES[d.wave_size])

@functools.lru_cache(maxsize=64)
def _workgroup_ids(total:int, x:int, n:int, chunk:int):
  import numpy as np
  ids = np.arange(total, dtype=np.int64)
  ids = ids if n == 1 else ids[(ids // chunk) % n == x]
  ids.flags.writeable = False
  return ids
