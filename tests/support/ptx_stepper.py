"""A launch on the PTX reference stepper.
(Moved from tests/compiler/ptx/test_ptx_stepper.py so that no test file imports another.)"""
import numpy as np
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, Launch
def _launch(src:str, arrays:list[np.ndarray], grid=(1, 1, 1), block=(32, 1, 1)) -> Launch:
  mem = AddressSpace("stepper")
  for a in arrays:
    if not mem.is_mapped(a.ctypes.data, a.nbytes): mem.map(a.ctypes.data, a.nbytes)
  k = load_module(src).kernel("k")
  params = b"".join(int(a.ctypes.data).to_bytes(8, "little") for a in arrays)
  return Launch(mem, k, grid, block, params.ljust(k.param_size, b"\0"))
