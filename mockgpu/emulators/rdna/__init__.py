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
  arch:str                     # "rdna3" (rdna4/cdna later)
  pgm_addr:int                 # byte address of the first instruction (COMPUTE_PGM_LO/HI << 8)
  rsrc1:int                    # COMPUTE_PGM_RSRC1
  rsrc2:int                    # COMPUTE_PGM_RSRC2
  rsrc3:int                    # COMPUTE_PGM_RSRC3
  user_data:list[int]          # COMPUTE_USER_DATA_0..15
  tmpring_size:int             # COMPUTE_TMPRING_SIZE
  scratch_base:int             # byte address (COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI << 8)
  block:tuple[int, int, int]   # COMPUTE_NUM_THREAD_X/Y/Z
  grid:tuple[int, int, int]    # DISPATCH_DIRECT dimensions, in workgroups
  wave32:bool                  # DISPATCH_INITIATOR.CS_W32_EN

@dataclass
class DispatchStats:
  waves:int
  wave_instructions:int
  seconds:float
  native:bool = False          # run by the kernel's C translation (emulators/rdna/native.py), not the numpy path

def __getattr__(name:str):
  # imported on first use: the translators under mockgpu/compiler/rdna import this package's semantics and runtime,
  # and the executor imports the translators, so an eager import here would be a cycle for whoever comes first
  if name == "run_dispatch":
    from mockgpu.emulators.rdna.executor import run_dispatch
    return run_dispatch
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Dispatch", "DispatchStats", "run_dispatch"]
