"""The PTX side of a session: the PTX adapter (mockgpu/debug/ptx_target.py, a launch on the PTX reference stepper
through the PTX executor's debug_hook). Kept as the name session.py attaches."""
from mockgpu.debug.ptx_target import PTXTarget, run_debugged, attach, detach  # noqa: F401
