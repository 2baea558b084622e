"""mockgpu: software AMD and NVIDIA GPUs for tinygrad.

Importing this package is cheap on purpose: the interpreter imports `mockgpu._finder` at start-up (through mockgpu.pth)
so that tinygrad's `test.mockgpu.*` imports resolve here. Everything heavy is imported lazily by the bridge.
(PYTEST_DONT_REWRITE: the package is imported at start-up, before pytest could rewrite its asserts.)
"""
__version__ = "0.1.0"
