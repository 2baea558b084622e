"""The RDNA instruction-set executor: runs a compute dispatch's waves over an AddressSpace.

The PM4 command processor collects the dispatch registers into a Dispatch and calls run_dispatch on DISPATCH_DIRECT.

  semantics.py  what each ALU instruction computes, as numpy expressions
  (mockgpu/compiler/rdna/ decodes a kernel into basic blocks and translates them into Python over numpy arrays,
   cached by mockgpu.compiler.cache; mockgpu/compiler/native.py builds the C helpers, such as the exact FMA)
  runtime.py    numeric helpers of the translated code (lane masks, exact FMA, transcendentals, WMMA, DPP)
  memops.py     scalar/global/scratch/LDS memory instructions
  executor.py   register set-up from the dispatch registers, wave scheduling, barriers, the instruction budget
  native.py     the same for hot kernels translated to C (mockgpu/compiler/rdna/cgen.py), one wave at a time
"""
from __future__ import annotations
from dataclasses import dataclass

@dataclass
class Dispatch:
  arch:str                     # the board's ISA family: "rdna3", "rdna4" (cdna: raises Unmodelled)
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
  def wave_size(self) -> int: return 32 if self.wave32 else 64

  def workgroup_ids(self):
    """The linear workgroup indices (x + gx * (y + gy * z)) this dispatch runs, in order: its XCC's chunks."""
    import numpy as np
    x, n, chunk = self.xcc
    ids = np.arange(self.grid[0] * self.grid[1] * self.grid[2])
    return ids if n == 1 else ids[(ids // chunk) % n == x]

@dataclass
class DispatchStats:
  waves:int
  wave_instructions:int
  seconds:float
  native:bool = False          # run by the kernel's C translation (emulators/rdna/native.py), not the numpy path

# *** what both executor paths (numpy and native) read from the dispatch registers and say in their errors ***

def field(value:int, shift:int, width:int) -> int: return (value >> shift) & ((1 << width) - 1)

def spi_setup(rsrc2:int, arch:str="rdna3") -> tuple[int, tuple[bool, bool, bool], int]:
  """What RSRC2 asks the SPI to put in a wave's registers: the user SGPR count, which workgroup-ID SGPRs (x, y, z)
  follow them, and how many work-item ID components v0 packs. The workgroup-info SGPR is not modelled: it raises.
  gfx12 (rdna4) puts the workgroup IDs in ttmp registers instead (compiler/rdna/rdna4.py), so no SGPR follows."""
  from tinygrad.runtime.autogen import amdgpu_kd as kd
  if rsrc2 >> kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO_SHIFT & 1:
    from mockgpu.errors import Unmodelled
    raise Unmodelled("RDNA executor: the workgroup-info SGPR (RSRC2.TG_SIZE_EN) is not modelled")
  nuser = field(rsrc2, kd.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT_SHIFT, kd.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT_WIDTH)
  ids = tuple(bool(rsrc2 >> sh & 1) for sh in (kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X_SHIFT,
              kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y_SHIFT, kd.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z_SHIFT))
  comps = field(rsrc2, kd.COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID_SHIFT, kd.COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID_WIDTH)
  from mockgpu.compiler.rdna import rdna4
  return nuser, (False, False, False) if arch == rdna4.FAMILY else ids, comps

def at_pc(what:str, pgm:int, pc:int) -> str: return f"{what} at PC 0x{pgm + pc:x}"

def instruction_error(what:str, pgm:int, pc:int):
  """The error of an instruction that cannot run, on either path: InvalidInstruction when the ISA does not define it
  (its message starts with decode.INVALID), else UnsupportedInstruction."""
  from mockgpu.errors import InvalidInstruction, UnsupportedInstruction
  from mockgpu.compiler.rdna.decode import INVALID
  return (InvalidInstruction if what.startswith(INVALID) else UnsupportedInstruction)(at_pc(what, pgm, pc))

def outside(where:str, space:str, off:int, limit:int) -> str:
  return f"{where}: {space} offset 0x{off:x} is outside its {limit} byte allocation"

def budget_exceeded(pgm:int, budget:int, pc:int):
  from mockgpu.errors import InstructionBudgetExceeded
  return InstructionBudgetExceeded(f"dispatch of the kernel at PC 0x{pgm:x} ran past MOCKGPU_BUDGET={budget} "
                                   f"wave-instructions (waves at PC 0x{pgm + pc:x})")

def __getattr__(name:str):
  # imported on first use: the translators under mockgpu/compiler/rdna import this package's semantics and runtime,
  # and the executor imports the translators, so an eager import here would be a cycle for whoever comes first
  if name == "run_dispatch":
    from mockgpu.emulators.rdna.executor import run_dispatch
    return run_dispatch
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Dispatch", "DispatchStats", "run_dispatch"]
