"""The PTX adapter: a launch on the PTX reference stepper (compiler/ptx/backends/stepper.py, being built on branch
ptx-step), one warp of a CTA at a time. Until that stepper is merged, a launch the session debugs raises
NotImplementedError (the others run on their fast paths)."""
from __future__ import annotations
from mockgpu.debug.target import DebugTarget
from mockgpu.emulators import ptx

NEEDS_STEPPER = "MOCK+NV debugging needs the PTX stepper (compiler/ptx/backends/stepper.py)"

class PTXTarget(DebugTarget):
  isa = "ptx"
  def __init__(self, *args, **kwargs): raise NotImplementedError(NEEDS_STEPPER)

def run_debugged(session, mem, k, grid, block, params, dynamic_shared):
  """The PTX executor's debug hook: None (the fast paths) for a kernel the session does not debug."""
  if not session.debugs(k.name): return None
  raise NotImplementedError(f"{NEEDS_STEPPER}: cannot debug kernel {k.name}")

def attach(run):
  before, ptx.debug_hook = ptx.debug_hook, run
  return before

def detach(before): ptx.debug_hook = before
