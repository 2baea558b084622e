"""The CUDA driver API refuses arguments whose ctypes type does not match the one its ABI table declares.

mockgpu's CUDA API is called in-process with the ctypes objects themselves, so it can see the object behind every
pointer: a mistyped out-parameter (a c_char where a CUdeviceptr goes) is CUDA_ERROR_INVALID_VALUE, logged by
parameter name, with the object left as it was, instead of a write past it (a heap overwrite in the caller). Each case
is followed by a known-good op on the same context (a type error is not sticky).
"""
import ctypes, importlib, logging
import numpy as np
import pytest
from userpages import SCALE_PTX

@pytest.fixture
def cu(monkeypatch):
  monkeypatch.setenv("MOCKGPU_COUNT", "2")
  monkeypatch.delenv("MOCKGPU_NV_MODEL", raising=False)
  import mockgpu.driver.cuda as mod
  return importlib.reload(mod)

class Scale(ctypes.Structure):
  _fields_ = [("out", ctypes.c_uint64), ("inp", ctypes.c_uint64), ("k", ctypes.c_int32)]

class State:
  """A context on device 0 with two buffers, a module, its function, a stream and two recorded events."""
  def __init__(self, cu):
    self.cu = cu
    assert cu.cuInit(0) == 0
    self.ctx = cu.CUcontext()
    assert cu.cuCtxCreate_v2(ctypes.byref(self.ctx), 0, 0) == 0
    self.out, self.inp = self.alloc(64), self.alloc(64)
    self.mod, self.func, self.stream = cu.CUmodule(), cu.CUfunction(), cu.CUstream()
    assert cu.cuModuleLoadData(ctypes.byref(self.mod), SCALE_PTX.encode()) == 0
    assert cu.cuModuleGetFunction(ctypes.byref(self.func), self.mod, b"scale") == 0
    assert cu.cuStreamCreate(ctypes.byref(self.stream), 0) == 0
    self.events = [cu.CUevent(), cu.CUevent()]
    for ev in self.events: assert cu.cuEventCreate(ctypes.byref(ev), 0) == 0 and cu.cuEventRecord(ev, None) == 0
    self.vals = [ctypes.c_uint64(self.out), ctypes.c_uint64(self.inp), ctypes.c_int32(2)]
    self.params = (ctypes.c_void_p * 3)(*[ctypes.addressof(v) for v in self.vals])

  def alloc(self, n:int) -> int:
    p = self.cu.CUdeviceptr()
    assert self.cu.cuMemAlloc_v2(ctypes.byref(p), n) == 0
    return p.value

  def known_good(self):
    """16 floats in, scale by 3, out: 3*x, on the same context."""
    cu, x, y = self.cu, np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    assert cu.cuCtxSetCurrent(self.ctx) == 0
    assert cu.cuMemcpyHtoD_v2(self.inp, x.ctypes.data, x.nbytes) == 0
    assert cu.cuLaunchKernel(self.func, 1, 1, 1, 16, 1, 1, 0, None, None, Scale(self.out, self.inp, 3)) == 0
    assert cu.cuMemcpyDtoH_v2(y.ctypes.data, self.out, y.nbytes) == 0
    np.testing.assert_array_equal(y, 3 * x)

# a valid call of every modelled function with a pointer to data among its parameters: its arguments, fresh objects
# of the declared types (the test checks each one succeeds as given, then mistypes one parameter at a time)
def VALID(cu, st:State) -> dict:
  b, i32 = ctypes.byref, ctypes.c_int32
  return {
    "cuGetErrorString": lambda: (700, b(ctypes.POINTER(ctypes.c_char)())), "cuGetErrorName": lambda: (700, b(ctypes.POINTER(ctypes.c_char)())),
    "cuDriverGetVersion": lambda: (b(i32()),), "cuDeviceGetCount": lambda: (b(i32()),), "cuDeviceGet": lambda: (b(cu.CUdevice()), 1),
    "cuDeviceComputeCapability": lambda: (b(i32()), b(i32()), 0), "cuDeviceGetName": lambda: (ctypes.create_string_buffer(64), 64, 0),
    "cuDeviceTotalMem_v2": lambda: (b(ctypes.c_size_t()), 0), "cuDeviceGetAttribute": lambda: (b(i32()), 1, 0),
    "cuDeviceCanAccessPeer": lambda: (b(i32()), 0, 1), "cuCtxCreate_v2": lambda: (b(cu.CUcontext()), 0, 1),
    "cuCtxGetCurrent": lambda: (b(cu.CUcontext()),), "cuCtxGetDevice": lambda: (b(cu.CUdevice()),),
    "cuMemAlloc_v2": lambda: (b(cu.CUdeviceptr()), 64), "cuMemHostAlloc": lambda: (b(ctypes.c_void_p()), 64, 0),
    "cuMemAllocHost_v2": lambda: (b(ctypes.c_void_p()), 64), "cuMemGetInfo_v2": lambda: (b(ctypes.c_size_t()), b(ctypes.c_size_t())),
    "cuStreamCreate": lambda: (b(cu.CUstream()), 0), "cuEventCreate": lambda: (b(cu.CUevent()), 0),
    "cuEventElapsedTime": lambda: (b(ctypes.c_float()), *st.events), "cuModuleLoadData": lambda: (b(cu.CUmodule()), SCALE_PTX.encode()),
    "cuModuleGetFunction": lambda: (b(cu.CUfunction()), st.mod, b"scale"),
    "cuLaunchKernel": lambda: (st.func, 1, 1, 1, 16, 1, 1, 0, None, st.params, None),
    "cuMemcpyHtoD_v2": lambda: (st.out, (ctypes.c_float * 16)(), 64), "cuMemcpyDtoH_v2": lambda: ((ctypes.c_float * 16)(), st.out, 64),
    "cuMemcpyHtoDAsync_v2": lambda: (st.out, (ctypes.c_float * 16)(), 64, None),
    "cuMemcpyDtoHAsync_v2": lambda: ((ctypes.c_float * 16)(), st.out, 64, None),
  }

def modelled(cu) -> dict:
  """Every driver call mockgpu models, with the parameter names and types the ABI table declares for it."""
  out = {}
  for name, fn in vars(cu).items():
    if name.startswith("cu") and hasattr(fn, "__wrapped__") and hasattr(getattr(cu._abi, name, None), "argtypes"):
      code = fn.__wrapped__.__code__
      out[name] = list(zip(code.co_varnames[:code.co_argcount], getattr(cu._abi, name).argtypes))
  return out

def data_pointer(cu, T) -> bool:
  """A pointer parameter to data (an out-parameter or an input buffer), not a handle (a pointer to an opaque struct)."""
  return issubclass(T, ctypes._Pointer) and not cu._opaque(T._type_)

def mistyped(cu, T):
  """An object of the wrong size for what T points to; a c_char where any wider type goes."""
  target = T._type_ if issubclass(T, ctypes._Pointer) else None
  return ctypes.c_double(1.5) if target is not None and ctypes.sizeof(target) == 1 else ctypes.c_char(b"Z")

def test_every_data_pointer_parameter_is_covered(cu):
  """The valid-call table covers every modelled call with a pointer to data, enumerated from the ABI table."""
  st = State(cu)
  need = {n for n, params in modelled(cu).items() if any(data_pointer(cu, T) for _, T in params)}
  assert need <= set(VALID(cu, st)), sorted(need - set(VALID(cu, st)))
  assert {"cuMemAlloc_v2", "cuCtxCreate_v2", "cuGetErrorString", "cuEventElapsedTime", "cuLaunchKernel"} <= need

@pytest.mark.parametrize("how", ["byref", "pointer"])
def test_mistyped_out_parameter_of_every_call(cu, caplog, how):
  st = State(cu)
  params = modelled(cu)
  done = 0
  for name, make in VALID(cu, st).items():
    fn = getattr(cu, name)
    assert fn(*make()) == 0, name  # the call is valid as given
    for i, (pname, T) in enumerate(params[name]):
      if not data_pointer(cu, T): continue
      bad = mistyped(cu, T)
      before = bytes(bad)
      args = list(make())
      args[i] = ctypes.byref(bad) if how == "byref" else ctypes.pointer(bad)
      caplog.clear()
      with caplog.at_level(logging.WARNING, logger="mockgpu"):
        assert fn(*args) == cu.CUDA_ERROR_INVALID_VALUE, (name, pname)
      assert bytes(bad) == before, (name, pname)  # nothing was written through it
      assert any(f"{name}: parameter {pname}:" in r.getMessage() for r in caplog.records), (name, pname, caplog.text)
      st.known_good()
      done += 1
  assert done >= 25  # 27 parameters today

@pytest.mark.parametrize("opaque", ["byref", "pointer"])
def test_opaque_handle_out_parameter(cu, opaque):
  """A pointer to the opaque struct itself (struct_CUctx_st, where a CUcontext goes) is refused, not decoded (it was an
  AttributeError '_real_fields_'). "pointer": the handle itself (a CUcontext is a pointer to the opaque struct) given
  where a pointer to a handle goes."""
  st = State(cu)
  for name, T, args in (("cuCtxCreate_v2", cu.struct_CUctx_st, (0, 0)), ("cuStreamCreate", cu.struct_CUstream_st, (0,)),
                        ("cuModuleLoadData", cu.struct_CUmod_st, (SCALE_PTX.encode(),)), ("cuEventCreate", cu.struct_CUevent_st, (0,))):
    buf = ctypes.create_string_buffer(16)
    ref = ctypes.byref(T.from_buffer(buf)) if opaque == "byref" else ctypes.cast(buf, ctypes.POINTER(T))
    assert getattr(cu, name)(ref, *args) == cu.CUDA_ERROR_INVALID_VALUE, name
    assert buf.raw == bytes(16), name
    st.known_good()

def test_out_stores_every_declared_type(cu):
  """_out, given any type the ABI table declares behind an out-parameter, stores or refuses by name, never raises."""
  seen = set()
  for params in modelled(cu).values():
    for _, T in params:
      if issubclass(T, ctypes._Pointer): seen.add(T._type_)
  assert cu.struct_CUctx_st in seen and ctypes.c_float in seen
  for X in sorted(seen, key=lambda t: t.__name__):
    obj = X.from_buffer(ctypes.create_string_buffer(max(ctypes.sizeof(X), 1)))  # an opaque struct cannot be made with X()
    for value in (5, 1.5, b"x"):
      try: cu._out(ctypes.byref(obj), value)
      except cu._Fail as e: assert e.code == cu.CUDA_ERROR_INVALID_VALUE and X.__name__ in e.why
  h = cu.CUcontext()
  cu._out(ctypes.byref(h), 0x1234_5000)
  assert ctypes.cast(h, ctypes.c_void_p).value == 0x1234_5000
  f = ctypes.c_float()
  cu._out(ctypes.byref(f), 2.5)
  assert f.value == 2.5

def test_mistyped_in_parameters(cu, caplog):
  st = State(cu)
  with caplog.at_level(logging.WARNING, logger="mockgpu"):
    assert cu.cuDeviceGet(ctypes.byref(cu.CUdevice()), 0.5) == cu.CUDA_ERROR_INVALID_VALUE
    assert "cuDeviceGet: parameter ordinal:" in caplog.text
    assert cu.cuCtxSetCurrent(st.stream) == cu.CUDA_ERROR_INVALID_VALUE  # a CUstream where a CUcontext goes
    assert cu.cuMemAlloc_v2(ctypes.byref(cu.CUdeviceptr()), "64") == cu.CUDA_ERROR_INVALID_VALUE
    assert cu.cuLaunchKernel(st.func, 1, 1, 1, 16, 1, 1, 0, None, None, 1.5) == cu.CUDA_ERROR_INVALID_VALUE
  st.known_good()

def test_buffer_smaller_than_the_copy(cu):
  """A ctypes buffer smaller than the byte count is refused, not written past."""
  st = State(cu)
  small = (ctypes.c_uint8 * 8)()
  assert cu.cuMemcpyDtoH_v2(small, st.out, 64) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemcpyDtoH_v2(ctypes.byref(small, 4), st.out, 8) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemcpyDtoH_v2(ctypes.byref(small, 4), st.out, 4) == 0
  assert cu.cuDeviceGetName((ctypes.c_char * 4)(), 64, 0) == cu.CUDA_ERROR_INVALID_VALUE
  st.known_good()
