"""The RDNA executor: runs a compute dispatch's waves over an AddressSpace.

The PM4 command processor collects the dispatch registers into a Dispatch and calls run_dispatch on DISPATCH_DIRECT.
What the instructions compute, and the code that computes it, come from below (mockgpu/compiler/rdna/: decoding, the
operand model, the semantics table and the numpy and C backends generated from it); this package runs that code.

  dispatch.py   the Dispatch record, the SPI register set-up fields, the budget error
  executor.py   register set-up from the dispatch registers, wave scheduling, barriers, the instruction budget
  native.py     the same for hot kernels translated to C (compiler/rdna/backends/c.py), one wave at a time
"""
from __future__ import annotations
from mockgpu.emulators.rdna.dispatch import Dispatch, DispatchStats
from mockgpu.emulators.rdna.executor import run_dispatch

__all__ = ["Dispatch", "DispatchStats", "run_dispatch"]
