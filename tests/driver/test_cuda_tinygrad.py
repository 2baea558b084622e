"""tinygrad's CUDA backend on the CUDA driver model (DEV=MOCK+CUDA, MOCK+CUDA:PTX), each case in a child process.

Misuse errors come back as tinygrad's own exceptions, and afterwards the same process still computes right. A kernel
fault is sticky for its context, as on CUDA: tinygrad raises "CUDA Error 700" and the process lives on, but tinygrad
(which keeps one context per device for life and synchronizes all devices before a copy-out) cannot use CUDA again in
that process; a new process can. Recovery through the driver API (a new context) is tested in test_cuda_driver.py.
"""
import pytest
from conftest import run_tinygrad

@pytest.mark.parametrize("dev", ["MOCK+CUDA", "MOCK+CUDA:PTX"])
def test_elementwise_and_reduce(dev):
  p = run_tinygrad(dev, """
    import numpy as np
    from tinygrad import Tensor
    a = np.random.default_rng(0).standard_normal((16, 33)).astype(np.float32)
    print((Tensor([1., 2, 3]) * 2).tolist())
    np.testing.assert_allclose((Tensor(a) * 2 + 1).relu().numpy(), np.maximum(a * 2 + 1, 0), rtol=1e-6)
    np.testing.assert_allclose(Tensor(a).sum(axis=1).numpy(), a.sum(axis=1), rtol=1e-5)
  """)
  assert p.stdout.strip() == "[2.0, 4.0, 6.0]"

def test_misuse_errors_then_recovery():
  p = run_tinygrad("MOCK+CUDA", """
    from tinygrad import Tensor, Device, dtypes
    from tinygrad.device import Buffer, TinyELF
    from tinygrad.runtime.ops_cuda import CUDAProgram
    dev = Device["CUDA"]
    lib = dev.compiler.compile('extern "C" __global__ void k(int* a) { a[threadIdx.x] = 7; }')
    for obj in (TinyELF(lib, "missing", None, ()), TinyELF(lib.replace(b"ret;", b"ret"), "k", None, ())):
      try: CUDAProgram(dev, obj)
      except RuntimeError as e: print(e)
    try: Buffer("CUDA", (30 << 30) // 4, dtypes.float32).allocate()
    except MemoryError as e: print("MemoryError")
    print((Tensor([1., 2, 3]) + 1).tolist())
  """)
  assert p.stdout.splitlines() == ["CUDA Error 500, named symbol not found",
                                   "module load failed with status code 218: CUDA_ERROR_INVALID_PTX", "MemoryError", "[2.0, 3.0, 4.0]"]

def test_out_of_bounds_kernel_is_error_700():
  p = run_tinygrad("MOCK+CUDA", """
    from tinygrad import Tensor, Device
    from tinygrad.device import TinyELF
    from tinygrad.runtime.ops_cuda import CUDAProgram
    dev, other = Device["CUDA:0"], Device["CUDA:1"]  # opened first: opening a device enables peer access from every open one
    buf = Tensor.zeros(16, dtype="int32", device="CUDA:0").contiguous().realize()
    lib = dev.compiler.compile('extern "C" __global__ void oob(int* a) { a[1 << 28] = 7; }')
    CUDAProgram(dev, TinyELF(lib, "oob", None, ()))(buf.uop.buffer._buf)
    try: dev.synchronize()
    except RuntimeError as e: print(e)
    other.synchronize()  # the other device's context is not affected...
    try: print((Tensor([1., 2, 3], device="CUDA:1") * 3).tolist())
    except RuntimeError as e: print(e)  # ...but tinygrad synchronizes every device before a copy-out, as with real CUDA
  """, env={"MOCKGPU_COUNT": "2"})
  assert p.stdout.splitlines() == ["CUDA Error 700, an illegal memory access was encountered"] * 2
  assert "GPU page fault: write of 4 bytes" in p.stderr and "cuLaunchKernel(oob) on CUDA:0" in p.stderr

def test_two_devices_and_copies():
  p = run_tinygrad("MOCK+CUDA", """
    import numpy as np
    from tinygrad import Tensor, Device
    a = np.arange(1000, dtype=np.float32)
    t1 = Tensor(a, device="CUDA:1").realize()
    back = (t1.to("CUDA:0") * 2).to("CUDA:1") + 1
    np.testing.assert_array_equal(back.numpy(), a * 2 + 1)
    print(Device["CUDA:0"].arch, Device["CUDA:1"].arch, Device["CUDA"].count())
  """, env={"MOCKGPU_COUNT": "2", "MOCKGPU_NV_MODEL": "sm_86"})
  assert p.stdout.split() == ["sm_86", "sm_86", "2"]

def test_trace_logs_driver_calls():
  p = run_tinygrad("MOCK+CUDA", "from tinygrad import Tensor; print((Tensor([1., 2]) * 2).tolist())", env={"MOCKGPU_TRACE": "1"})
  assert p.stdout.strip() == "[2.0, 4.0]"
  for call in ("call=cuInit args={Flags=0} out={} result=CUDA_SUCCESS", "call=cuModuleLoadData", "call=cuLaunchKernel", "call=cuMemcpyDtoH_v2"):
    assert call in p.stderr, call
