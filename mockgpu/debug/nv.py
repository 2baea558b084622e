"""The PTX side of a session until the PTX adapter (branch ptx-step: mockgpu/debug/ptx_target.py over the PTX
reference stepper, with the PTX executor's debug_hook) is merged: a launch the session debugs raises
NotImplementedError; the others run on their fast paths. Same attach/detach as that adapter."""
from __future__ import annotations
from mockgpu.emulators import ptx

NEEDS_STEPPER = "MOCK+NV debugging needs the PTX stepper (compiler/ptx/backends/stepper.py)"

def run_debugged(session, mem, k, grid, block, params, dynamic_shared):
  """The PTX executor's debug hook: None (the fast paths) for a kernel the session does not debug."""
  if not session.debugs(k.name): return None
  raise NotImplementedError(f"{NEEDS_STEPPER}: cannot debug kernel {k.name}")

def attach(session):
  """Install the hook (the PTX executor reads ptx.debug_hook at each launch once the stepper branch adds it)."""
  before, ptx.debug_hook = getattr(ptx, "debug_hook", None), lambda *launch: run_debugged(session, *launch)
  return before

def detach(before): ptx.debug_hook = before
