"""The PTX adapter: a launch on the PTX reference stepper (compiler/ptx/backends/stepper.py, being built on branch
ptx-step), one warp of a CTA at a time. Until that stepper is merged, debugging a MOCK+NV / MOCK+CUDA kernel raises."""
from __future__ import annotations
from mockgpu.debug.target import DebugTarget

class PTXTarget(DebugTarget):
  isa = "ptx"
  def __init__(self, *args, **kwargs):
    raise NotImplementedError("MOCK+NV debugging needs the PTX stepper (compiler/ptx/backends/stepper.py), not merged yet")
