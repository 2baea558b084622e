"""mockgpu: software AMD and NVIDIA GPUs for tinygrad.

Importing this package is cheap on purpose: the interpreter imports `mockgpu._finder` at start-up (through mockgpu.pth)
so that tinygrad's `test.mockgpu.*` imports resolve here. Everything heavy is imported lazily by the bridge.
(PYTEST_DONT_REWRITE: the package is imported at start-up, before pytest could rewrite its asserts.)
"""
__version__ = "0.1.0"

class _Log:
  """mockgpu's logger ("mockgpu", tests and users configure it by that name), made at its first use: importing `logging`
  (~3 ms) is spared by a process that logs nothing, as a first op on a mock device does."""
  def __getattr__(self, name:str):
    import logging
    return getattr(logging.getLogger("mockgpu"), name)

log = _Log()
