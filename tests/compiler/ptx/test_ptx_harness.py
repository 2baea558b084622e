"""Helpers for the PTX executor tests: render tinygrad kernels to PTX (tinygrad's PTXRenderer, or its CUDA C renderer
through NVRTC) and run them on the executor over tinygrad CPU buffers mapped into an AddressSpace (host == va)."""
import os
if "tinygrad" not in os.sys.modules: os.environ["DEV"] = "CPU"   # these tests use tinygrad only to render kernels and hold buffers
