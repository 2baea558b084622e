"""The CUDA driver API model (mockgpu.driver.cuda), called directly the way tinygrad's ops_cuda calls it.

Each test gets a freshly loaded driver module (the driver's state is per process, like libcuda's), with two devices.
"""
import ctypes, importlib, logging
import numpy as np
import pytest
from mockgpu.errors import UnsupportedIoctl
from userpages import SCALE_PTX


# writes 1 GiB past its buffer
FAULT_PTX = """
.version 7.8
.target sm_89
.address_size 64
.visible .entry oob(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  add.s64 %rd2, %rd1, 1073741824;
  mov.u32 %r1, 7;
  st.global.u32 [%rd2], %r1;
  ret;
}
"""

@pytest.fixture
def cu(monkeypatch):
  monkeypatch.setenv("MOCKGPU_COUNT", "2")
  monkeypatch.delenv("MOCKGPU_NV_MODEL", raising=False)
  import mockgpu.driver.cuda as mod
  return importlib.reload(mod)

def ctx_on(cu, ordinal=0):
  assert cu.cuInit(0) == 0
  ctx = cu.CUcontext()
  assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, ordinal) == 0
  return ctx

def alloc(cu, size) -> int:
  ptr = cu.CUdeviceptr()
  assert cu.cuMemAlloc_v2(ctypes.byref(ptr), size) == 0
  return ptr.value

def upload(cu, arr:np.ndarray) -> int:
  ptr = alloc(cu, arr.nbytes)
  assert cu.cuMemcpyHtoD_v2(ptr, arr.ctypes.data, arr.nbytes) == 0
  return ptr

def download(cu, ptr, like:np.ndarray) -> np.ndarray:
  out = np.empty_like(like)
  assert cu.cuMemcpyDtoH_v2(out.ctypes.data, ptr, out.nbytes) == 0
  return out

def function(cu, ptx:str, name:str):
  mod, fn = cu.CUmodule(), cu.CUfunction()
  assert cu.cuModuleLoadData(ctypes.byref(mod), ptx.encode()) == 0
  assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()) == 0
  return mod, fn

def error_string(cu, code) -> str:
  s = ctypes.POINTER(ctypes.c_char)()
  assert cu.cuGetErrorString(code, ctypes.byref(s)) == 0
  return ctypes.string_at(s).decode()

# *** errors and initialisation ***

def test_calls_before_cuinit_are_not_initialized(cu):
  n, ptr = ctypes.c_int(), cu.CUdeviceptr()
  assert cu.cuDeviceGetCount(ctypes.byref(n)) == cu.CUDA_ERROR_NOT_INITIALIZED
  assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 16) == cu.CUDA_ERROR_NOT_INITIALIZED
  assert error_string(cu, cu.CUDA_ERROR_NOT_INITIALIZED) == "initialization error"
  assert cu.cuInit(1) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuInit(0) == 0 and cu.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value == 2

def test_error_strings(cu):
  assert error_string(cu, 700) == "an illegal memory access was encountered"
  assert error_string(cu, 1) == "invalid argument"
  assert error_string(cu, 500) == "named symbol not found"
  for code in cu.enum_cudaError_enum: assert error_string(cu, code)
  s = ctypes.POINTER(ctypes.c_char)()
  assert cu.cuGetErrorString(12345, ctypes.byref(s)) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuGetErrorName(700, ctypes.byref(s)) == 0 and ctypes.string_at(s) == b"CUDA_ERROR_ILLEGAL_ADDRESS"

def test_no_device(cu, monkeypatch):
  monkeypatch.setenv("MOCKGPU_COUNT", "0")
  assert cu.cuInit(0) == cu.CUDA_ERROR_NO_DEVICE

def test_unmodelled_call_raises_naming_it(cu):
  with pytest.raises(UnsupportedIoctl, match="cuGraphCreate"): cu.cuGraphCreate(None, 0)
  with pytest.raises(AttributeError): cu.cuNotARealCall
  assert cu.CUdeviceptr_v2 is ctypes.c_uint64 and cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES == 8

# *** devices ***

@pytest.mark.parametrize("model,cc,name,gib", [("sm_89", (8, 9), "RTX 4090", 24), ("sm_86", (8, 6), "RTX 3090", 24),
                                                ("sm_120", (12, 0), "RTX 5090", 32)])
def test_device_queries(cu, monkeypatch, model, cc, name, gib):
  monkeypatch.setenv("MOCKGPU_NV_MODEL", model)
  assert cu.cuInit(0) == 0
  dev, major, minor, total, attr = cu.CUdevice(), ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t(), ctypes.c_int()
  assert cu.cuDeviceGet(ctypes.byref(dev), 1) == 0 and dev.value == 1
  assert cu.cuDeviceComputeCapability(ctypes.byref(major), ctypes.byref(minor), dev) == 0
  assert (major.value, minor.value) == cc
  buf = ctypes.create_string_buffer(64)
  assert cu.cuDeviceGetName(buf, 64, 0) == 0 and name in buf.value.decode()
  assert cu.cuDeviceTotalMem_v2(ctypes.byref(total), 0) == 0 and total.value == gib << 30
  assert cu.cuDeviceGetAttribute(ctypes.byref(attr), cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == 0 and attr.value == cc[0]
  assert cu.cuDeviceGetAttribute(ctypes.byref(attr), cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0) == 0 and attr.value == 1024
  assert cu.cuDeviceGet(ctypes.byref(dev), 2) == cu.CUDA_ERROR_INVALID_DEVICE
  with pytest.raises(UnsupportedIoctl, match="CU_DEVICE_ATTRIBUTE_ECC_ENABLED"):
    cu.cuDeviceGetAttribute(ctypes.byref(attr), cu.CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 0)

def test_unknown_model_is_named(cu, monkeypatch):
  from mockgpu.boards import UnknownBoard
  monkeypatch.setenv("MOCKGPU_NV_MODEL", "sm_75")
  with pytest.raises(UnknownBoard, match=r"unknown NVIDIA board 'sm_75': mockgpu models sm_86, sm_89, sm_120"): cu.cuInit(0)

# *** contexts ***

def test_context_required_and_destroyed(cu):
  assert cu.cuInit(0) == 0
  ptr = cu.CUdeviceptr()
  assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 16) == cu.CUDA_ERROR_INVALID_CONTEXT
  ctx = ctx_on(cu, 1)
  cur, dev = cu.CUcontext(), cu.CUdevice()
  assert cu.cuCtxGetCurrent(ctypes.byref(cur)) == 0 and ctypes.cast(cur, ctypes.c_void_p).value == ctypes.cast(ctx, ctypes.c_void_p).value
  assert cu.cuCtxGetDevice(ctypes.byref(dev)) == 0 and dev.value == 1
  p = alloc(cu, 64)
  assert cu.cuCtxDestroy_v2(ctx) == 0
  assert cu.cuCtxSetCurrent(ctx) == cu.CUDA_ERROR_INVALID_CONTEXT
  assert cu.cuCtxSynchronize() == cu.CUDA_ERROR_INVALID_CONTEXT
  ctx_on(cu, 1)
  assert cu.cuMemFree_v2(p) == cu.CUDA_ERROR_INVALID_VALUE  # destroying the context freed it
  assert cu.cuCtxCreate_v2(ctypes.byref(cu.CUcontext()), 0x100, 0) == cu.CUDA_ERROR_INVALID_VALUE

def test_peer_access(cu):
  c0, c1 = ctx_on(cu, 0), ctx_on(cu, 1)
  can = ctypes.c_int()
  assert cu.cuDeviceCanAccessPeer(ctypes.byref(can), 0, 1) == 0 and can.value == 1
  assert cu.cuDeviceCanAccessPeer(ctypes.byref(can), 0, 0) == 0 and can.value == 0
  before = alloc(cu, 4096)  # on device 1 (c1 is current)
  d0, d1 = cu._drv.devices
  assert d1.mem.is_mapped(before, 4096) and not d0.mem.is_mapped(before)
  assert cu.cuCtxSetCurrent(c0) == 0
  assert cu.cuCtxEnablePeerAccess(c0, 0) == cu.CUDA_ERROR_INVALID_CONTEXT
  assert cu.cuCtxEnablePeerAccess(c1, 1) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuCtxEnablePeerAccess(c1, 0) == 0
  assert cu.cuCtxEnablePeerAccess(c1, 0) == cu.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
  assert d0.mem.is_mapped(before, 4096)  # device 0 kernels now reach device 1's memory, old and new
  assert cu.cuCtxSetCurrent(c1) == 0
  after = alloc(cu, 4096)
  assert d0.mem.is_mapped(after, 4096)
  assert cu.cuMemFree_v2(after) == 0 and not d0.mem.is_mapped(after) and not d1.mem.is_mapped(after)

# *** memory ***

def test_alloc_free_errors(cu):
  ctx_on(cu)
  ptr = cu.CUdeviceptr()
  assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 0) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemAlloc_v2(None, 16) == cu.CUDA_ERROR_INVALID_VALUE
  p = alloc(cu, 1000)
  assert cu.cuMemFree_v2(p + 8) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemFree_v2(0xdead0000) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemFreeHost(p) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemFree_v2(p) == 0
  assert cu.cuMemFree_v2(p) == cu.CUDA_ERROR_INVALID_VALUE

def test_out_of_memory(cu):
  ctx_on(cu)
  ptr, free, total = cu.CUdeviceptr(), ctypes.c_size_t(), ctypes.c_size_t()
  assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 25 << 30) == cu.CUDA_ERROR_OUT_OF_MEMORY
  big = alloc(cu, 13 << 30)  # reserved lazily: no host memory is touched
  assert cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) == 0
  assert (free.value, total.value) == (11 << 30, 24 << 30)
  assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 13 << 30) == cu.CUDA_ERROR_OUT_OF_MEMORY
  assert error_string(cu, cu.CUDA_ERROR_OUT_OF_MEMORY) == "out of memory"
  assert cu.cuMemFree_v2(big) == 0
  assert cu.cuMemFree_v2(alloc(cu, 13 << 30)) == 0

def test_memcpy_roundtrip_and_bounds(cu):
  ctx_on(cu)
  a = np.arange(256, dtype=np.float32)
  pa = upload(cu, a)
  np.testing.assert_array_equal(download(cu, pa, a), a)
  pb = alloc(cu, a.nbytes)
  assert cu.cuMemcpyDtoDAsync_v2(pb, pa + 512, 512, None) == 0
  np.testing.assert_array_equal(download(cu, pb, a[:128]), a[128:])
  assert cu.cuMemcpyHtoD_v2(pa + 8, a.ctypes.data, a.nbytes) == cu.CUDA_ERROR_INVALID_VALUE  # runs past the end
  assert cu.cuMemcpyDtoH_v2(a.ctypes.data, 0xdead0000, 4) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemcpyDtoH_v2(a.ctypes.data, 0, 4) == cu.CUDA_ERROR_INVALID_VALUE
  np.testing.assert_array_equal(download(cu, pa, a), np.arange(256, dtype=np.float32))  # nothing was written

def test_host_alloc_is_mapped_on_every_device(cu):
  ctx_on(cu)
  host = ctypes.c_void_p()
  assert cu.cuMemHostAlloc(ctypes.byref(host), 64, 0x40) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemHostAlloc(ctypes.byref(host), 64, 0x01) == 0
  ctypes.memmove(host.value, b"mockgpu!" * 8, 64)
  assert all(d.mem.read(host.value, 8) == b"mockgpu!" for d in cu._drv.devices)
  dev = alloc(cu, 64)
  assert cu.cuMemcpyHtoDAsync_v2(dev, host, 64, None) == 0
  assert cu._drv.devices[0].mem.read(dev, 64) == b"mockgpu!" * 8
  assert cu.cuMemFree_v2(host.value) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemFreeHost(host) == 0 and not any(d.mem.is_mapped(host.value) for d in cu._drv.devices)

def test_cross_device_copies(cu):
  c0 = ctx_on(cu, 0)
  a = np.arange(64, dtype=np.int32)
  p0 = upload(cu, a)
  c1 = ctx_on(cu, 1)
  p1 = alloc(cu, a.nbytes)
  assert cu.cuMemcpyPeerAsync(p1, c1, p0, c0, a.nbytes, None) == 0
  np.testing.assert_array_equal(download(cu, p1, a), a)
  assert cu.cuMemcpyPeer(p1, c1, p0, 0x1234, a.nbytes) == cu.CUDA_ERROR_INVALID_CONTEXT

# *** streams and events ***

def test_events_and_streams(cu):
  ctx_on(cu)
  start, end, untimed, ms = cu.CUevent(), cu.CUevent(), cu.CUevent(), ctypes.c_float()
  for ev, flags in ((start, 0), (end, 0), (untimed, cu.CU_EVENT_DISABLE_TIMING)): assert cu.cuEventCreate(ctypes.byref(ev), flags) == 0
  assert cu.cuEventElapsedTime(ctypes.byref(ms), start, end) == cu.CUDA_ERROR_INVALID_HANDLE  # not recorded yet
  stream = cu.CUstream()
  assert cu.cuStreamCreate(ctypes.byref(stream), 0) == 0
  assert cu.cuEventRecord(start, stream) == 0
  upload(cu, np.zeros(1 << 16, np.float32))
  assert cu.cuEventRecord(end, None) == 0 and cu.cuEventRecord(untimed, None) == 0
  assert cu.cuEventSynchronize(end) == 0 and cu.cuEventQuery(end) == 0
  assert cu.cuEventElapsedTime(ctypes.byref(ms), start, end) == 0 and ms.value >= 0
  assert cu.cuEventElapsedTime(ctypes.byref(ms), start, untimed) == cu.CUDA_ERROR_INVALID_HANDLE
  assert cu.cuStreamWaitEvent(stream, end, 0) == 0 and cu.cuStreamSynchronize(stream) == 0
  assert cu.cuStreamDestroy_v2(stream) == 0
  assert cu.cuStreamSynchronize(stream) == cu.CUDA_ERROR_INVALID_HANDLE
  assert cu.cuEventDestroy_v2(end) == 0
  assert cu.cuEventSynchronize(end) == cu.CUDA_ERROR_INVALID_HANDLE
  assert cu.cuEventCreate(ctypes.byref(end), cu.CU_EVENT_INTERPROCESS) == cu.CUDA_ERROR_INVALID_VALUE

def test_trace_event_per_call(cu):
  from mockgpu import events
  seen = []
  events.subscribe(seen.append)
  try:
    assert cu.cuInit(0) == 0
    assert cu.cuMemAlloc_v2(ctypes.byref(cu.CUdeviceptr()), 16) == cu.CUDA_ERROR_INVALID_CONTEXT
    assert cu.cuDriverGetVersion(ctypes.byref(v:=ctypes.c_int())) == 0
  finally: events.unsubscribe(seen.append)
  calls = [e for e in seen if e["kind"] == "cuda"]
  assert [(e["call"], e["result"]) for e in calls] == [("cuInit", "CUDA_SUCCESS"), ("cuMemAlloc_v2", "CUDA_ERROR_INVALID_CONTEXT"),
                                                        ("cuDriverGetVersion", "CUDA_SUCCESS")]
  assert calls[0]["args"] == {"Flags": "0"} and calls[1]["why"] == "no current context" and calls[1]["args"]["bytesize"] == "16"
  assert calls[2]["out"] == {"driverVersion": v.value}  # the value stored, not `&c_int`

# *** modules ***

def test_bad_modules(cu):
  ctx_on(cu)
  mod = cu.CUmodule()
  assert cu.cuModuleLoadData(ctypes.byref(mod), b"\xff\xfe garbage") == cu.CUDA_ERROR_INVALID_IMAGE
  assert cu.cuModuleLoadData(ctypes.byref(mod), b"not ptx at all\0") == cu.CUDA_ERROR_INVALID_IMAGE
  assert cu.cuModuleLoadData(ctypes.byref(mod), None) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuModuleLoadData(ctypes.byref(mod),
                             SCALE_PTX.replace("ld.param.u32 %r1, [k];", "ld.param.u32 %r1 [k").encode()) == cu.CUDA_ERROR_INVALID_PTX
  assert cu.cuModuleLoadData(ctypes.byref(mod), SCALE_PTX.replace(".version 7.8", ".version 9.0").encode()) == cu.CUDA_ERROR_UNSUPPORTED_PTX_VERSION
  assert cu.cuModuleLoadData(ctypes.byref(mod), SCALE_PTX.replace("sm_89", "sm_120").encode()) == cu.CUDA_ERROR_INVALID_PTX
  with pytest.raises(NotImplementedError, match="address_size 32"):  # valid PTX the executor does not implement
    cu.cuModuleLoadData(ctypes.byref(mod), SCALE_PTX.replace(".address_size 64", ".address_size 32").encode())
  with pytest.raises(UnsupportedIoctl, match="cubin"): cu.cuModuleLoadData(ctypes.byref(mod), b"\x7fELF\x02\x01\x01")

def test_missing_function_and_unload(cu):
  ctx_on(cu)
  mod, fn = function(cu, SCALE_PTX, "scale")
  other = cu.CUfunction()
  assert cu.cuModuleGetFunction(ctypes.byref(other), mod, b"scale") == 0
  assert ctypes.cast(other, ctypes.c_void_p).value == ctypes.cast(fn, ctypes.c_void_p).value
  assert cu.cuModuleGetFunction(ctypes.byref(other), mod, b"nope") == cu.CUDA_ERROR_NOT_FOUND
  assert cu.cuFuncSetAttribute(fn, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 << 10) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuFuncSetAttribute(fn, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 << 10) == 0
  assert cu.cuModuleUnload(mod) == 0
  assert cu.cuModuleUnload(mod) == cu.CUDA_ERROR_INVALID_HANDLE
  assert cu.cuModuleGetFunction(ctypes.byref(other), mod, b"scale") == cu.CUDA_ERROR_INVALID_HANDLE

# *** launches ***

class ScaleArgs(ctypes.Structure):
  _fields_ = [("out", ctypes.c_uint64), ("inp", ctypes.c_uint64), ("k", ctypes.c_int32)]

@pytest.mark.parametrize("style", ["struct", "extra", "kernelParams"])
def test_launch_param_styles(cu, style):
  ctx_on(cu)
  _, fn = function(cu, SCALE_PTX, "scale")
  a = np.random.default_rng(0).standard_normal(96).astype(np.float32)
  pin, pout = upload(cu, a), alloc(cu, a.nbytes)
  args = ScaleArgs(pout, pin, 3)
  if style == "struct": kp, extra = None, args  # what tinygrad sends for MOCK
  elif style == "extra":
    size = ctypes.c_size_t(ctypes.sizeof(args))
    kp, extra = None, (ctypes.c_void_p * 5)(1, ctypes.addressof(args), 2, ctypes.addressof(size), 0)
  else:
    vals = [ctypes.c_uint64(pout), ctypes.c_uint64(pin), ctypes.c_int32(3)]
    kp, extra = (ctypes.c_void_p * 3)(*[ctypes.addressof(v) for v in vals]), None
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 96, 1, 1, 0, None, kp, extra) == 0
  assert cu.cuCtxSynchronize() == 0
  np.testing.assert_array_equal(download(cu, pout, a), a * np.float32(3))

def test_launch_checks(cu):
  ctx_on(cu)
  _, fn = function(cu, SCALE_PTX, "scale")
  args = ScaleArgs(alloc(cu, 64), alloc(cu, 64), 1)
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 2048, 1, 1, 0, None, None, args) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 65, 0, None, None, args) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuLaunchKernel(fn, 0, 1, 1, 1, 1, 1, 0, None, None, args) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 64 << 10, None, None, args) == cu.CUDA_ERROR_INVALID_VALUE  # no opt-in
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, None) == cu.CUDA_ERROR_INVALID_VALUE  # no parameters
  short = (ctypes.c_uint8 * 8)()
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0x4321, None, args) == cu.CUDA_ERROR_INVALID_HANDLE
  assert cu.cuLaunchKernel(0x4321, 1, 1, 1, 1, 1, 1, 0, None, None, args) == cu.CUDA_ERROR_INVALID_HANDLE
  size = ctypes.c_size_t(8)
  extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(short), 2, ctypes.addressof(size), 0)
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, extra) == cu.CUDA_ERROR_INVALID_VALUE  # buffer too short

class OobArgs(ctypes.Structure):
  _fields_ = [("out", ctypes.c_uint64)]

def test_fault_is_sticky_until_a_new_context(cu, caplog):
  c0 = ctx_on(cu, 0)
  _, bad = function(cu, FAULT_PTX, "oob")
  buf = alloc(cu, 64)
  with caplog.at_level(logging.ERROR, logger="mockgpu"):
    assert cu.cuLaunchKernel(bad, 1, 1, 1, 1, 1, 1, 0, None, None, OobArgs(buf)) == 0  # enqueued; the fault is sticky
  assert f"0x{buf + (1 << 30):x}" in caplog.text and "oob" in caplog.text
  assert cu.cuCtxSynchronize() == cu.CUDA_ERROR_ILLEGAL_ADDRESS
  assert cu.cuMemAlloc_v2(ctypes.byref(cu.CUdeviceptr()), 16) == cu.CUDA_ERROR_ILLEGAL_ADDRESS
  assert cu.cuMemcpyDtoH_v2(ctypes.create_string_buffer(4), buf, 4) == cu.CUDA_ERROR_ILLEGAL_ADDRESS
  # the other device's context is untouched
  ctx_on(cu, 1)
  _, fn = function(cu, SCALE_PTX, "scale")
  a = np.arange(32, dtype=np.float32)
  pin, pout = upload(cu, a), alloc(cu, a.nbytes)
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, ScaleArgs(pout, pin, 2)) == 0
  np.testing.assert_array_equal(download(cu, pout, a), a * 2)
  # recovery as on CUDA: destroy the faulted context, create a new one
  assert cu.cuCtxDestroy_v2(c0) == 0
  ctx_on(cu, 0)
  assert cu.cuCtxSynchronize() == 0
  np.testing.assert_array_equal(download(cu, upload(cu, a), a), a)

SPIN_PTX = """
.version 7.8
.target sm_89
.address_size 64
.visible .entry spin()
{
$L_top:
  bra.uni $L_top;
}
"""

def test_hang_is_launch_timeout(cu, monkeypatch):
  monkeypatch.setenv("MOCKGPU_BUDGET", "10000")
  ctx_on(cu)
  _, fn = function(cu, SPIN_PTX, "spin")
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None) == 0
  assert cu.cuCtxSynchronize() == cu.CUDA_ERROR_LAUNCH_TIMEOUT
  assert error_string(cu, cu.CUDA_ERROR_LAUNCH_TIMEOUT) == "the launch timed out and was terminated"

def test_kernels_reach_pinned_host_memory_and_peers_only_with_access(cu):
  c0, c1 = ctx_on(cu, 0), ctx_on(cu, 1)
  a = np.arange(64, dtype=np.float32)
  host = ctypes.c_void_p()
  assert cu.cuMemHostAlloc(ctypes.byref(host), a.nbytes, 0) == 0
  ctypes.memmove(host.value, a.ctypes.data, a.nbytes)
  on1 = alloc(cu, a.nbytes)  # device 1 (c1 is current)
  _, fn1 = function(cu, SCALE_PTX, "scale")
  assert cu.cuLaunchKernel(fn1, 1, 1, 1, 64, 1, 1, 0, None, None, ScaleArgs(on1, host.value, 5)) == 0
  np.testing.assert_array_equal(download(cu, on1, a), a * 5)
  assert cu.cuCtxSetCurrent(c0) == 0
  on0 = alloc(cu, a.nbytes)
  _, fn0 = function(cu, SCALE_PTX, "scale")
  assert cu.cuCtxEnablePeerAccess(c1, 0) == 0  # device 0 may now read device 1's memory
  assert cu.cuLaunchKernel(fn0, 1, 1, 1, 64, 1, 1, 0, None, None, ScaleArgs(on0, on1, 2)) == 0
  np.testing.assert_array_equal(download(cu, on0, a), a * 10)
  assert cu.cuCtxSetCurrent(c1) == 0  # but device 1 was not given access to device 0's memory
  assert cu.cuLaunchKernel(fn1, 1, 1, 1, 64, 1, 1, 0, None, None, ScaleArgs(on1, on0, 1)) == 0
  assert cu.cuCtxSynchronize() == cu.CUDA_ERROR_ILLEGAL_ADDRESS
