"""mockgpu: software AMD and NVIDIA GPUs for tinygrad.

Importing this package is cheap on purpose: the interpreter imports `mockgpu._finder` at start-up (through mockgpu.pth)
so that tinygrad's `test.mockgpu.*` imports resolve here. Everything heavy is imported lazily by the bridge.
"""
__version__ = "0.1.0"
