"""A harness that runs tinygrad's gfx1100 kernels on the RDNA executor without any device model.

Kernels are scheduled on the CPU device, rendered with AMDLLVMRenderer and compiled by AMDLLVMCompiler("gfx1100");
the ELF is loaded as tinygrad's AMDProgram does (relocations, kernel descriptor, RSRC registers, user SGPRs) into
numpy memory mapped into an AddressSpace (host == va), and run_dispatch executes it. The same expression realized on
the CPU device is the reference.
"""
from __future__ import annotations
