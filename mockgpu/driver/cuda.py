"""The CUDA driver API, as tinygrad imports it for DEV=MOCK+CUDA (`test.mockgpu.cuda.cuda`).

The module is a drop-in for tinygrad.runtime.autogen.cuda: it re-exports that ABI table (types, enums, constants) and
defines the driver calls with the same conventions (ctypes byref out-params, CUdeviceptr as integers, CUresult return
codes). Kernels are PTX text run by the PTX executor (mockgpu.emulators.ptx).

Model:
- Devices: MOCKGPU_COUNT GPUs of the selected board (mockgpu.boards.selected_nv_board: DEV's arch field, else
  MOCKGPU_NV_MODEL): its attributes and launch limits; unified addressing, as on every 64-bit CUDA system.
- Memory: device and pinned host allocations are anonymous host mmaps, so a CUdeviceptr is a host address (host == va).
  A device allocation is mapped into its device's AddressSpace (and into the spaces of devices that enabled peer access
  to it); a cuMemHostAlloc allocation into every device's space. The board's memory size is enforced.
  Device pointers given to memcpys must lie inside one allocation; a host pointer that is not one of ours is pageable
  memory, which (as the real driver) we cannot check.
- Streams run synchronously: every operation has completed when its call returns, so issue order is execution order
  on every stream, events are complete once recorded (they hold the host time of the record), and cuStreamWaitEvent
  is always already satisfied.
- Faults: a kernel's GPUPageFault (or a hang stopped by MOCKGPU_BUDGET) makes its context sticky-errored, as on CUDA:
  the launch itself was enqueued (CUDA_SUCCESS) and every later call using the context returns
  CUDA_ERROR_ILLEGAL_ADDRESS (or CUDA_ERROR_LAUNCH_TIMEOUT). Recovery is what CUDA offers: cuCtxDestroy_v2 and a new
  context. Other contexts, devices and the process are unaffected. tinygrad's CUDADevice keeps its context for life and
  synchronizes every device before a copy-out, so after a fault tinygrad raises "CUDA Error 700" for CUDA work in that
  process (as with a real GPU) and a new process starts clean.
- Peer access (cuCtxEnablePeerAccess) is modelled per device pair: the peer device's allocations, present and future,
  are mapped into the enabling device's space. Any two distinct devices are peer-capable.
A driver call tinygrad's ABI table declares but this model does not implement raises UnsupportedIoctl naming it.
"""
from __future__ import annotations
import ctypes, functools, itertools, mmap, re, struct, threading, time, types
import tinygrad.runtime.autogen.cuda as _abi
from mockgpu import config, events
from mockgpu.boards import NVBoard, selected_nv_board
from mockgpu.errors import UnsupportedIoctl, UnsupportedInstruction, GPUPageFault, InstructionBudgetExceeded
from mockgpu.driver import uaccess
from mockgpu.hostmem import PAGE, MAP_NORESERVE, host_mmap, munmap, round_page
from mockgpu.memory import AddressSpace
from mockgpu import log

# tinygrad's ABI table: its types, structs, enums and constants (not its functions, which would call a real libcuda)
globals().update({k: v for k, v in vars(_abi).items() if not k.startswith("_") and (isinstance(v, type) or type(v) in (int, dict))})

# *** the driver ***

DRIVER_VERSION = 12090        # CUDA 12.9: JIT-compiles PTX ISA up to 8.8 (what the NVRTC 12.9 wheel emits)
MAX_PTX_VERSION = (8, 8)

# #defines of cuda.h, so not in the ABI table: cuLaunchKernel `extra` markers, cuMemHostAlloc flags
CU_LAUNCH_PARAM_END, CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE = 0, 1, 2
CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_WRITECOMBINED = 1, 2, 4
# the special stream handles: NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
_NULL_STREAMS = (0, 1, 2)

ERROR_STRINGS = {
  0: "no error", 1: "invalid argument", 2: "out of memory", 3: "initialization error", 4: "driver shutting down",
  5: "profiler disabled while using external profiling tool", 6: "profiler not initialized: call cudaProfilerInitialize()",
  7: "profiler already started", 8: "profiler already stopped", 34: "CUDA driver is a stub library",
  46: "CUDA-capable device(s) is/are busy or unavailable", 100: "no CUDA-capable device is detected",
  101: "invalid device ordinal", 102: "device doesn't have valid Grid license", 200: "device kernel image is invalid",
  201: "invalid device context", 202: "context already current", 205: "mapping of buffer object failed",
  206: "unmapping of buffer object failed", 207: "array is mapped", 208: "resource already mapped",
  209: "no kernel image is available for execution on the device", 210: "resource already acquired",
  211: "resource not mapped", 212: "resource not mapped as array", 213: "resource not mapped as pointer",
  214: "uncorrectable ECC error encountered", 215: "limit is not supported on this architecture",
  216: "exclusive-thread device already in use by a different thread",
  217: "peer access is not supported between these two devices", 218: "a PTX JIT compilation failed",
  219: "invalid OpenGL or DirectX context", 220: "uncorrectable NVLink error detected during the execution",
  221: "PTX JIT compiler library not found", 222: "the provided PTX was compiled with an unsupported toolchain.",
  223: "PTX JIT compilation was disabled", 224: "the provided execution affinity is not supported",
  300: "device kernel image is invalid", 301: "file not found", 302: "shared object symbol not found",
  303: "shared object initialization failed", 304: "OS call failed or operation not supported on this OS",
  400: "invalid resource handle", 401: "the operation cannot be performed in the present state",
  500: "named symbol not found", 600: "device not ready", 700: "an illegal memory access was encountered",
  701: "too many resources requested for launch", 702: "the launch timed out and was terminated",
  703: "launch uses incompatible texturing mode", 704: "peer access is already enabled",
  705: "peer access has not been enabled", 708: "cannot set while device is active in this process",
  709: "context is destroyed", 710: "device-side assert triggered", 711: "peer mapping resources exhausted",
  712: "part or all of the requested memory range is already mapped",
  713: "pointer does not correspond to a registered memory region", 714: "hardware stack error",
  715: "an illegal instruction was encountered", 716: "misaligned address",
  717: "operation not supported on global/shared address space", 718: "invalid program counter",
  719: "unspecified launch failure", 720: "too many blocks in cooperative launch", 800: "operation not permitted",
  801: "operation not supported", 802: "system not yet initialized",
  803: "system has unsupported display driver / cuda driver combination",
  804: "forward compatibility was attempted on non supported HW",
  805: "MPS client failed to connect to the MPS control daemon or the MPS server",
  806: "the remote procedural call between the MPS server and the MPS client failed",
  807: "MPS server is not ready to accept new MPS client requests",
  808: "the hardware resources required to create MPS client have been exhausted",
  809: "the hardware resources required to support device connections have been exhausted",
  810: "the MPS client has been terminated by the server",
  811: "is using CUDA Dynamic Parallelism but the current configuration, like MPS, does not support it",
  812: "unsupported interaction between different versions of CUDA Dynamic Parallelism",
  900: "operation not permitted when stream is capturing", 901: "operation failed due to a previous error during capture",
  902: "operation would result in a merge of separate capture sequences",
  903: "capture was not ended in the same stream as it began", 904: "capturing stream has unjoined work",
  905: "dependency created on uncaptured work in another stream",
  906: "operation would make the legacy stream depend on a capturing blocking stream",
  907: "operation not permitted on an event last recorded in a capturing stream",
  908: "attempt to terminate a thread-local capture sequence from another thread", 909: "wait operation timed out",
  910: "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update",
  911: "an async error has occured in a external entity outside of CUDA",
  912: "a kernel launch error has occurred due to cluster misconfiguration", 999: "unknown error",
}
# C strings for cuGetErrorString/cuGetErrorName: made once, alive for the process (the caller keeps only a pointer)
_C_STRINGS:dict[str, ctypes.Array] = {}

# *** driver state ***

class _Fail(Exception):
  """Internal: a call ends with this CUresult."""
  def __init__(self, code:int, why:str=""):
    super().__init__(why)
    self.code, self.why = code, why

class Device:
  def __init__(self, ordinal:int, board:NVBoard):
    self.ordinal, self.board, self.used = ordinal, board, 0
    self.mem = AddressSpace(f"CUDA:{ordinal}")
    self.peers_of:set[Device] = set()   # devices whose kernels may reach this device's memory (peer access)

class Context:
  def __init__(self, device:Device, flags:int):
    self.device, self.flags, self.error = device, flags, CUDA_SUCCESS
    self.peers:set[Context] = set()
    self.allocs:set[Allocation] = set()
    self.modules:set[Module] = set()
    self.handle = 0

class Allocation:
  def __init__(self, ptr:int, size:int, device:Device|None, ctx:Context):
    self.ptr, self.size, self.device, self.ctx = ptr, size, device, ctx   # device None: pinned host memory
    self.spaces:list[AddressSpace] = []

class Module:
  def __init__(self, ctx:Context, ptx):
    self.ctx, self.ptx, self.functions, self.handle = ctx, ptx, {}, 0

class Function:
  def __init__(self, module:Module, name:str, kernel):
    self.module, self.name, self.kernel, self.handle = module, name, kernel, 0
    # without cuFuncSetAttribute a block's static and dynamic shared memory together stay within the board's default
    self.max_dynamic_shared = max(module.ctx.device.board.shared_per_block - kernel.shared_size, 0)

class Stream:
  def __init__(self, ctx:Context, flags:int): self.ctx, self.flags, self.handle = ctx, flags, 0

class Event:
  def __init__(self, ctx:Context, flags:int): self.ctx, self.flags, self.time_ns, self.handle = ctx, flags, None, 0

class Driver:
  def __init__(self, devices:list[Device]):
    self.devices = devices
    self.uva = AddressSpace("CUDA unified address space")  # every allocation of every device, tagged with it
    self.allocs:dict[int, Allocation] = {}

_drv:Driver|None = None
_tls = threading.local()
_handles:dict[int, object] = {}
_handle_ids = itertools.count(0x7f0000010000, 0x100)

def _register(obj) -> int:
  obj.handle = next(_handle_ids)
  _handles[obj.handle] = obj
  return obj.handle

def _forget(obj): _handles.pop(obj.handle, None)

# *** argument conventions ***

def _addr(x) -> int:
  """The integer value of a handle or pointer argument (None, int, ctypes pointer, c_void_p, c_uint64, ...)."""
  if x is None: return 0
  if isinstance(x, int): return x
  if isinstance(x, ctypes._Pointer): return ctypes.cast(x, ctypes.c_void_p).value or 0
  if isinstance(x, ctypes._SimpleCData): return x.value or 0
  if isinstance(x, ctypes.Array): return ctypes.addressof(x)
  raise _Fail(CUDA_ERROR_INVALID_VALUE, f"cannot use {type(x).__name__} as a pointer")

def _target(ref):
  """The ctypes object an out-parameter (byref(x) or pointer(x)) refers to, and the address it points at (byref's
  offset included)."""
  if ref is None: raise _Fail(CUDA_ERROR_INVALID_VALUE, "NULL out-parameter")
  if isinstance(ref, ctypes._Pointer):
    if not ref: raise _Fail(CUDA_ERROR_INVALID_VALUE, "NULL out-parameter")
    return ref.contents, ctypes.cast(ref, ctypes.c_void_p).value
  if type(ref).__name__ == "CArgObject": return ref._obj, ctypes.cast(ref, ctypes.c_void_p).value  # ctypes.byref
  raise _Fail(CUDA_ERROR_INVALID_VALUE, f"out-parameter {type(ref).__name__} is not a pointer")

# *** argument types, as the ABI table declares them ***
# The driver is called in-process with the ctypes objects themselves, so unlike libcuda it can see the object behind
# every pointer: an argument whose ctypes type does not match the declared one is CUDA_ERROR_INVALID_VALUE (and logged
# by parameter name) before anything is read or written through it. Plain integers are raw addresses (or values):
# they keep the uaccess checks.

def _kind(T) -> str:
  """ptr (a pointer, handle, void* or char*), int, float, struct, array, func or other."""
  if T is None: return "ptr"
  if not isinstance(T, type): return "other"
  if issubclass(T, ctypes._Pointer): return "ptr"
  if issubclass(T, ctypes._CFuncPtr): return "func"
  if issubclass(T, ctypes.Array): return "array"
  if issubclass(T, (ctypes.Structure, ctypes.Union)): return "struct"
  if issubclass(T, ctypes._SimpleCData): return "ptr" if T._type_ in "PzZ" else "float" if T._type_ in "fdg" else "int"
  return "other"

def _opaque(T) -> bool: return _kind(T) == "struct" and ctypes.sizeof(T) == 0  # struct_CUctx_st and the other handle targets

def _fits(Y, X) -> bool:
  """Whether an object of ctypes type Y may be read or written as the declared type X: the same type, an array of it,
  or the same kind of scalar of the same size (c_int for CUdevice, c_void_p for a CUcontext). Two distinct typed
  pointers (a CUstream where a CUcontext goes) do not fit."""
  if Y is X or X is None: return True
  if _kind(Y) == "array": return Y._length_ > 0 and _fits(Y._type_, X)
  ky, kx = _kind(Y), _kind(X)
  if ky != kx or ky not in ("int", "float", "ptr") or ctypes.sizeof(Y) != ctypes.sizeof(X): return False
  return not (ky == "ptr" and issubclass(Y, ctypes._Pointer) and issubclass(X, ctypes._Pointer))

def _is_int(a) -> bool: return isinstance(a, int) or (_kind(type(a)) == "int" and not isinstance(a, ctypes.c_char))

def _arg_problem(T, kind:str, target, a, struct_ok:bool) -> str|None:
  """Why argument a cannot be passed as declared type T, of _kind kind, pointing to target (None: void* or not a
  pointer); None when it can."""
  if kind in ("int", "float"):
    ok = _is_int(a) or (kind == "float" and (isinstance(a, float) or _kind(type(a)) == "float"))
    if ok and isinstance(a, ctypes._SimpleCData) and ctypes.sizeof(type(a)) != ctypes.sizeof(T): ok = False
    return None if ok else f"a {type(a).__name__} where {T.__name__} is declared"
  if kind not in ("ptr", "func") or a is None: return None
  if type(a).__name__ == "CArgObject": Y = type(a._obj)  # ctypes.byref(x): x's type
  elif isinstance(a, ctypes._Pointer):
    if target is not None and _opaque(target): return None if isinstance(a, T) else f"a {type(a).__name__} where {T.__name__} is declared"
    Y = type(a)._type_
  elif isinstance(a, (ctypes.c_void_p, ctypes.c_char_p)) or (_is_int(a) and ctypes.sizeof(type(a)) == 8): return None  # an address
  elif isinstance(a, (bytes, bytearray)):
    return None if target is None or _fits(ctypes.c_char, target) else f"bytes where {T.__name__} is declared"
  elif isinstance(a, ctypes.Structure) and struct_ok: return None
  elif isinstance(a, (ctypes._SimpleCData, ctypes.Array, ctypes.Structure, ctypes.Union)): Y = type(a)
  else: return f"a {type(a).__name__} where {T.__name__} is declared"
  if target is None or _fits(Y, target): return None
  to = f"to {getattr(target, '__name__', target)}, {ctypes.sizeof(target)} bytes"
  return f"a {Y.__name__} ({ctypes.sizeof(Y)} bytes) where {T.__name__} ({to}) is declared"

# parameters that take what the ABI table does not say: tinygrad sends, for MOCK, the argument struct itself as extra
_STRUCT_PARAMS = {("cuLaunchKernel", "extra")}

def _arg_checks(name:str, names:tuple) -> list:
  """(index, parameter name, declared type, its kind, what it points to, struct allowed) for each parameter the ABI
  table declares, worked out once per call."""
  types_ = getattr(getattr(_abi, name, None), "argtypes", None) or ()
  def target(T): return T._type_ if isinstance(T, type) and issubclass(T, ctypes._Pointer) else None  # None: void*, anything
  return [(i, n, T, _kind(T), target(T), (name, n) in _STRUCT_PARAMS) for i, (n, T) in enumerate(zip(names, types_))]

def _check_args(name:str, checks:list, args:tuple):
  for i, pname, T, kind, target, struct_ok in checks:
    # a plain int is right for every kind (a value, or a raw address the uaccess checks cover)
    if i < len(args) and type(a:=args[i]) is not int and (why:=_arg_problem(T, kind, target, a, struct_ok)) is not None:
      log.warning("%s: parameter %s: %s: CUDA_ERROR_INVALID_VALUE", name, pname, why)
      raise _Fail(CUDA_ERROR_INVALID_VALUE, f"parameter {pname}: {why}")

def _span(a) -> int|None:
  """The bytes a ctypes object argument has room for from where it points (an array, byref(x, offset)); None for a
  raw address or a pointer made from one, which uaccess checks instead."""
  if type(a).__name__ == "CArgObject": return ctypes.sizeof(a._obj) - (ctypes.cast(a, ctypes.c_void_p).value - ctypes.addressof(a._obj))
  if isinstance(a, (ctypes.Array, ctypes.Structure, ctypes.Union)): return ctypes.sizeof(a)
  return None

def _buffer(a, n:int, what:str) -> int:
  """The address of a buffer argument the call reads or writes n bytes of; a ctypes object smaller than that is
  CUDA_ERROR_INVALID_VALUE."""
  if (room:=_span(a)) is not None and room < n:
    log.warning("%s: a %d-byte %s for %d bytes: CUDA_ERROR_INVALID_VALUE", what, room, type(a).__name__, n)
    raise _Fail(CUDA_ERROR_INVALID_VALUE, f"{what}: a {room}-byte {type(a).__name__} for {n} bytes")
  return (ctypes.cast(a, ctypes.c_void_p).value or 0) if type(a).__name__ == "CArgObject" else _addr(a)

def _user(call, *args):
  """A uaccess copy through a caller's pointer; a fault is CUDA_ERROR_INVALID_VALUE, as the driver reports a bad pointer."""
  try: return call(*args)
  except OSError as e: raise _Fail(CUDA_ERROR_INVALID_VALUE, str(e)) from None

def _out(ref, value):
  """Store an out-parameter. The pointer may be a ctypes pointer made from any address (pointer(T.from_address(x)),
  cast(x, POINTER(T))), so the store goes through copy_to_user, exactly sizeof(T) bytes (of an array: its first
  element). _api has checked that T is the type the call declares; a type that cannot hold the value (an opaque handle
  struct, a struct given a number) is CUDA_ERROR_INVALID_VALUE."""
  obj, addr = _target(ref)
  T = type(obj)
  while issubclass(T, ctypes.Array) and T._length_ > 0: T = T._type_
  try: raw = _encode(T, value)
  except (TypeError, ValueError, OverflowError): raw = None
  if raw is None: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"out-parameter of type {T.__name__} cannot hold {type(value).__name__} {value!r:.40}")
  _user(uaccess.copy_to_user, addr, raw, "out-parameter")
  if events.enabled: _outputs.append((ref, value))

def _encode(T, value) -> bytes|None:
  """value as sizeof(T) bytes of ctypes type T; None where T cannot hold it."""
  kind = _kind(T)
  if kind == "ptr": return bytes(ctypes.c_void_p(value))[:ctypes.sizeof(T)] if ctypes.sizeof(T) == 8 else None
  if kind in ("int", "float"):
    if kind == "int" and (not isinstance(value, int) or T._type_ in "zZP"): return None
    return bytes(T(value))
  if kind == "struct" and ctypes.sizeof(T) > 0:  # a struct out-parameter takes a struct of its type, or its bytes
    if isinstance(value, T): return bytes(value)
    if isinstance(value, (bytes, bytearray)) and len(value) == ctypes.sizeof(T): return bytes(value)
  return None

_outputs:list = []  # (out-parameter, value stored) of the running driver call, for the trace

def _get(h, cls, code=CUDA_ERROR_INVALID_HANDLE):
  obj = _handles.get(_addr(h))
  if not isinstance(obj, cls): raise _Fail(code, f"0x{_addr(h):x} is not a live {cls.__name__}")
  return obj

def _usable(ctx:Context) -> Context:
  if ctx.error: raise _Fail(ctx.error, "the context has a sticky error from an earlier kernel")
  return ctx

def _current() -> Context:
  ctx = getattr(_tls, "ctx", None)
  if ctx is None or ctx.handle not in _handles: raise _Fail(CUDA_ERROR_INVALID_CONTEXT, "no current context")
  return _usable(ctx)

def _stream_ctx(h) -> Context:
  """The context a stream argument runs in (the NULL/legacy/per-thread streams: the current one)."""
  return _current() if _addr(h) in _NULL_STREAMS else _usable(_get(h, Stream).ctx)

def _device(ordinal) -> Device:
  i = _addr(ordinal)
  if not 0 <= i < len(_drv.devices): raise _Fail(CUDA_ERROR_INVALID_DEVICE, f"no device {i}")
  return _drv.devices[i]

def _show(x) -> str:
  if isinstance(x, (bytes, bytearray)):
    return bytes(x).decode() if len(x) <= 256 and re.fullmatch(rb"[\w.$]+", bytes(x)) else f"<{len(x)} bytes>"  # a name, else its size
  if isinstance(x, ctypes.Structure): return f"<{type(x).__name__} {ctypes.sizeof(x)} bytes>"
  if hasattr(x, "_obj"): return f"&{type(x._obj).__name__}"
  try: v = _addr(x)
  except _Fail: return type(x).__name__
  return f"0x{v:x}" if v > 0xffff else str(v)

_NEEDS_NO_INIT = {"cuGetErrorString", "cuGetErrorName", "cuInit", "cuDriverGetVersion"}

def _api(fn):
  """A driver call: returns its CUresult; traced, a `cuda` event with its arguments, the values it stored through its
  out-parameters (by parameter name) and its result."""
  name, needs_init = fn.__name__, fn.__name__ not in _NEEDS_NO_INIT
  names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
  checks = _arg_checks(name, names)
  @functools.wraps(fn)
  def call(*args):
    why = ""
    t0 = events.now() if events.enabled else 0  # 0: not traced (a listener may join during the call)
    _outputs.clear()
    try:
      _check_args(name, checks, args)
      if needs_init and _drv is None: raise _Fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called")
      fn(*args)
      rc = CUDA_SUCCESS
    except _Fail as e: rc, why = e.code, e.why
    if t0 and events.enabled:
      outs = {names[i] if i < len(names) else str(i): v for ref, v in _outputs for i, a in enumerate(args) if a is ref}
      events.emit("cuda", ts=t0, dur=events.now() - t0, call=name, args={n: _show(a) for n, a in zip(names, args)}, out=outs,
                  result=enum_cudaError_enum.get(rc, rc), **({"why": why} if why else {}))
    return rc
  return call

def _c_string(s:str) -> int:
  if s not in _C_STRINGS: _C_STRINGS[s] = ctypes.create_string_buffer(s.encode())
  return ctypes.addressof(_C_STRINGS[s])

# *** errors, initialisation, devices ***

@_api
def cuGetErrorString(error, pStr):
  if (s:=ERROR_STRINGS.get(_addr(error))) is None: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"unknown CUresult {error}")
  _out(pStr, _c_string(s))

@_api
def cuGetErrorName(error, pStr):
  if (s:=enum_cudaError_enum.get(_addr(error))) is None: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"unknown CUresult {error}")
  _out(pStr, _c_string(s))

@_api
def cuInit(Flags):
  global _drv
  if _addr(Flags) != 0: raise _Fail(CUDA_ERROR_INVALID_VALUE, "cuInit flags must be 0")
  if _drv is not None: return
  board = selected_nv_board()  # an unknown board raises UnknownBoard, naming the boards mockgpu models
  if config.gpu_count() < 1: raise _Fail(CUDA_ERROR_NO_DEVICE, "MOCKGPU_COUNT is 0")
  _drv = Driver([Device(i, board) for i in range(config.gpu_count())])

@_api
def cuDriverGetVersion(driverVersion): _out(driverVersion, DRIVER_VERSION)

@_api
def cuDeviceGetCount(count): _out(count, len(_drv.devices))

@_api
def cuDeviceGet(device, ordinal): _out(device, _device(ordinal).ordinal)

@_api
def cuDeviceComputeCapability(major, minor, dev):
  cc = _device(dev).board.compute_capability
  _out(major, cc[0])
  _out(minor, cc[1])

@_api
def cuDeviceGetName(name, length, dev):
  if name is None or _addr(length) <= 0: raise _Fail(CUDA_ERROR_INVALID_VALUE, "no room for the name")
  data = _device(dev).board.marketing_name.encode()[:_addr(length) - 1] + b"\0"  # never more than the len the caller gave
  _user(uaccess.copy_to_user, _buffer(name, _addr(length), "cuDeviceGetName name"), data, "cuDeviceGetName name")

@_api
def cuDeviceTotalMem_v2(nbytes, dev): _out(nbytes, _device(dev).board.memory_size)

def _attributes(d:Device) -> dict[int, int]:
  """cuDeviceGetAttribute's answers: the board's record, and what is the same on every modelled system."""
  b = d.board
  return {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: b.max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: b.max_block[0],
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: b.max_block[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: b.max_block[2],
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: b.max_grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: b.max_grid[1],
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: b.max_grid[2], CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: b.shared_per_block,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: b.shared_per_block_optin,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: b.shared_per_sm,
    CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: b.reserved_shared_per_block, CU_DEVICE_ATTRIBUTE_WARP_SIZE: b.warp_size,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: b.sm_count, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: b.compute_capability[0],
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: b.compute_capability[1],
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: b.max_threads_per_sm,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: b.max_blocks_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: b.regs_per_block,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: b.regs_per_sm, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: b.constant_memory,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE: b.clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: b.memory_clock_khz,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: b.memory_bus_width, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: b.l2_size,
    # the PCI location (domain, bus, device/slot), where the RM model puts the same GPU (NVGPU.gpu_id: bus ordinal+1)
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: 0, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: d.ordinal + 1, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: 0,
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: 1, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: 1,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: 1, CU_DEVICE_ATTRIBUTE_INTEGRATED: 0,
  }

@_api
def cuDeviceGetAttribute(pi, attrib, dev):
  attrs, a = _attributes(_device(dev)), _addr(attrib)
  if a not in attrs: raise UnsupportedIoctl(f"cuDeviceGetAttribute: {enum_CUdevice_attribute_enum.get(a, a)} is not modelled")
  _out(pi, attrs[a])

@_api
def cuDeviceCanAccessPeer(canAccessPeer, dev, peerDev):
  # modelled as a peer-capable (NVLink/P2P) system: any two distinct devices may access each other
  _out(canAccessPeer, int(_device(dev) is not _device(peerDev)))

# *** contexts ***

@_api
def cuCtxCreate_v2(pctx, flags, dev):
  if _addr(flags) & ~CU_CTX_FLAGS_MASK: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"context flags 0x{_addr(flags):x}")
  ctx = Context(_device(dev), _addr(flags))
  _out(pctx, _register(ctx))
  _tls.ctx = ctx

@_api
def cuCtxDestroy_v2(ctx):
  c = _get(ctx, Context, CUDA_ERROR_INVALID_CONTEXT)
  for m in list(c.modules): _unload(m)
  for a in list(c.allocs): _free(a)
  for other in _handles.values():
    if isinstance(other, Context): other.peers.discard(c)
  for obj in [o for o in _handles.values() if isinstance(o, (Stream, Event)) and o.ctx is c]: _forget(obj)
  _forget(c)
  if getattr(_tls, "ctx", None) is c: _tls.ctx = None

@_api
def cuCtxSetCurrent(ctx):
  _tls.ctx = None if _addr(ctx) == 0 else _get(ctx, Context, CUDA_ERROR_INVALID_CONTEXT)

@_api
def cuCtxGetCurrent(pctx):
  ctx = getattr(_tls, "ctx", None)
  _out(pctx, ctx.handle if ctx is not None and ctx.handle in _handles else 0)

@_api
def cuCtxGetDevice(device): _out(device, _current().device.ordinal)

@_api
def cuCtxSynchronize(): _current()  # work completes when issued; what remains is the sticky error, if any

@_api
def cuCtxEnablePeerAccess(peerContext, Flags):
  ctx = _current()
  peer = _get(peerContext, Context, CUDA_ERROR_INVALID_CONTEXT)
  if _addr(Flags) != 0: raise _Fail(CUDA_ERROR_INVALID_VALUE, "peer access flags must be 0")
  if peer is ctx: raise _Fail(CUDA_ERROR_INVALID_CONTEXT, "a context cannot be its own peer")
  if peer.device is ctx.device: raise _Fail(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "both contexts are on one device")
  if peer in ctx.peers: raise _Fail(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "")
  ctx.peers.add(peer)
  if ctx.device not in peer.device.peers_of:
    peer.device.peers_of.add(ctx.device)
    for a in _drv.allocs.values():
      if a.device is peer.device: _map(a, ctx.device.mem)

# *** memory ***

def _map(a:Allocation, space:AddressSpace):
  # a GPU maps whole pages (the host pages backing the allocation, what _allocate rounds to): an access past the buffer
  # but inside its last page does not fault, as on hardware; the unified address space, which checks API pointers
  # (memcpy ranges), keeps the allocation's exact bounds
  space.map(a.ptr, a.size, tag=a, granularity=1 if space is _drv.uva else PAGE)
  a.spaces.append(space)

def _allocate(size:int, device:Device|None, ctx:Context) -> Allocation:
  if size <= 0: raise _Fail(CUDA_ERROR_INVALID_VALUE, "cannot allocate 0 bytes")
  if size >= uaccess.USER_END: raise _Fail(CUDA_ERROR_OUT_OF_MEMORY, f"{size} bytes requested")
  if device is not None and device.used + round_page(size) > device.board.memory_size:
    raise _Fail(CUDA_ERROR_OUT_OF_MEMORY, f"{size} bytes requested, {device.board.memory_size - device.used} free")
  try:  # the board's memory is reserved lazily (MAP_NORESERVE), like the host's own
    ptr = host_mmap(0, round_page(size), mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
  except OSError: raise _Fail(CUDA_ERROR_OUT_OF_MEMORY, f"host mmap of {size} bytes failed") from None
  a = Allocation(ptr, size, device, ctx)
  for space in [_drv.uva] + ([device.mem] + [d.mem for d in device.peers_of] if device else [d.mem for d in _drv.devices]): _map(a, space)
  if device is not None: device.used += round_page(size)
  _drv.allocs[ptr] = a
  ctx.allocs.add(a)
  return a

def _free(a:Allocation):
  for space in a.spaces: space.unmap(a.ptr)
  munmap(a.ptr, round_page(a.size))
  if a.device is not None: a.device.used -= round_page(a.size)
  del _drv.allocs[a.ptr]
  a.ctx.allocs.discard(a)

def _allocation(ptr, host:bool) -> Allocation:
  _current()
  a = _drv.allocs.get(_addr(ptr))
  if a is None or (a.device is None) != host:
    raise _Fail(CUDA_ERROR_INVALID_VALUE, f"0x{_addr(ptr):x} is not the start of a {'host' if host else 'device'} allocation")
  return a

def _out_alloc(ref, a:Allocation):
  """Return a new allocation through an out-parameter; a bad out-pointer frees it again (nothing leaks)."""
  try: _out(ref, a.ptr)
  except _Fail:
    _free(a)
    raise

@_api
def cuMemAlloc_v2(dptr, bytesize):
  ctx = _current()
  _out_alloc(dptr, _allocate(_addr(bytesize), ctx.device, ctx))

@_api
def cuMemFree_v2(dptr): _free(_allocation(dptr, host=False))

@_api
def cuMemHostAlloc(pp, bytesize, Flags):
  if _addr(Flags) & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED):
    raise _Fail(CUDA_ERROR_INVALID_VALUE, f"host allocation flags 0x{_addr(Flags):x}")
  _out_alloc(pp, _allocate(_addr(bytesize), None, _current()))

@_api
def cuMemAllocHost_v2(pp, bytesize): _out_alloc(pp, _allocate(_addr(bytesize), None, _current()))

@_api
def cuMemFreeHost(p): _free(_allocation(p, host=True))

@_api
def cuMemGetInfo_v2(free, total):
  d = _current().device
  _out(free, d.board.memory_size - d.used)
  _out(total, d.board.memory_size)

def _check_range(ptr:int, n:int, device:bool):
  """A device-side pointer must lie in one allocation; a host one is checked only when it is one of ours."""
  if ptr == 0: raise _Fail(CUDA_ERROR_INVALID_VALUE, "NULL pointer")
  if _drv.uva.is_mapped(ptr, n): return
  if device or _drv.uva.is_mapped(ptr) or _drv.uva.is_mapped(ptr + n - 1):
    raise _Fail(CUDA_ERROR_INVALID_VALUE, f"0x{ptr:x}+0x{n:x} is not inside one allocation")

def _copy(dst, dst_device:bool, src, src_device:bool, n, stream):
  _stream_ctx(stream)
  n = _addr(n)
  if n == 0: return
  if n < 0 or n >= uaccess.USER_END: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"ByteCount {n}")
  dst, src = _buffer(dst, n, "memcpy destination"), _buffer(src, n, "memcpy source")
  _check_range(dst, n, dst_device)
  _check_range(src, n, src_device)
  # memory that is not one of our allocations is the caller's pageable memory: copied through uaccess, so a pointer
  # into unmapped memory is CUDA_ERROR_INVALID_VALUE rather than a host segfault
  if not _drv.uva.is_mapped(src, n): _user(uaccess.copy_from_user_into, dst, src, n, "memcpy source")
  elif not _drv.uva.is_mapped(dst, n): _user(uaccess.copy_to_user_from, dst, src, n, "memcpy destination")
  else: ctypes.memmove(dst, src, n)

@_api
def cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount): _copy(dstDevice, True, srcHost, False, ByteCount, None)
@_api
def cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount): _copy(dstHost, False, srcDevice, True, ByteCount, None)
@_api
def cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount): _copy(dstDevice, True, srcDevice, True, ByteCount, None)
@_api
def cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, hStream): _copy(dstDevice, True, srcHost, False, ByteCount, hStream)
@_api
def cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, hStream): _copy(dstHost, False, srcDevice, True, ByteCount, hStream)
@_api
def cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, hStream): _copy(dstDevice, True, srcDevice, True, ByteCount, hStream)

def _peer_copy(dst, dst_ctx, src, src_ctx, n, stream):
  for c in (dst_ctx, src_ctx): _usable(_get(c, Context, CUDA_ERROR_INVALID_CONTEXT))
  _copy(dst, True, src, True, n, stream)

@_api
def cuMemcpyPeer(dstDevice, dstContext, srcDevice, srcContext, ByteCount):
  _peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, None)
@_api
def cuMemcpyPeerAsync(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream):
  _peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream)

# *** streams and events ***

@_api
def cuStreamCreate(phStream, Flags):
  if _addr(Flags) & ~CU_STREAM_NON_BLOCKING: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"stream flags 0x{_addr(Flags):x}")
  _out(phStream, _register(Stream(_current(), _addr(Flags))))

@_api
def cuStreamDestroy_v2(hStream): _forget(_get(hStream, Stream))

@_api
def cuStreamSynchronize(hStream): _stream_ctx(hStream)

@_api
def cuStreamQuery(hStream): _stream_ctx(hStream)  # always complete (CUDA_SUCCESS, never CUDA_ERROR_NOT_READY)

@_api
def cuStreamWaitEvent(hStream, hEvent, Flags):
  _stream_ctx(hStream)
  _get(hEvent, Event)
  if _addr(Flags) & ~CU_EVENT_WAIT_EXTERNAL: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"wait flags 0x{_addr(Flags):x}")
  # the work the event captured completed when it was issued: the wait is already satisfied

@_api
def cuEventCreate(phEvent, Flags):
  f = _addr(Flags)
  if (f & ~(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)
      or (f & CU_EVENT_INTERPROCESS and not f & CU_EVENT_DISABLE_TIMING)):
    raise _Fail(CUDA_ERROR_INVALID_VALUE, f"event flags 0x{f:x}")
  _out(phEvent, _register(Event(_current(), f)))

@_api
def cuEventRecord(hEvent, hStream):
  ev = _get(hEvent, Event)
  _usable(ev.ctx)
  if _stream_ctx(hStream).device is not ev.ctx.device: raise _Fail(CUDA_ERROR_INVALID_HANDLE, "event and stream are on different devices")
  ev.time_ns = time.perf_counter_ns()

@_api
def cuEventQuery(hEvent): _usable(_get(hEvent, Event).ctx)

@_api
def cuEventSynchronize(hEvent): _usable(_get(hEvent, Event).ctx)

@_api
def cuEventElapsedTime(pMilliseconds, hStart, hEnd):
  start, end = _get(hStart, Event), _get(hEnd, Event)
  for ev in (start, end):
    _usable(ev.ctx)
    if ev.time_ns is None or ev.flags & CU_EVENT_DISABLE_TIMING: raise _Fail(CUDA_ERROR_INVALID_HANDLE, "event not recorded or without timing")
  _out(pMilliseconds, (end.time_ns - start.time_ns) / 1e6)

@_api
def cuEventDestroy_v2(hEvent): _forget(_get(hEvent, Event))

# *** modules and kernels ***

def _ptx():
  from mockgpu.emulators import ptx  # imported on first use: the CUDA driver loads without the executor
  return ptx

def _image_text(image) -> str:
  if isinstance(image, (bytes, bytearray)): data = bytes(image).split(b"\0", 1)[0]
  elif _addr(image) == 0: raise _Fail(CUDA_ERROR_INVALID_VALUE, "NULL image")
  else: data = _user(uaccess.user_cstring, _addr(image), "cuModuleLoadData image")
  if data[:4] == b"\x7fELF" or data[:4] == b"\x50\xed\x55\xba":
    raise UnsupportedIoctl("cuModuleLoadData: cubin/fatbin images (SASS) are not modelled; load PTX text")
  try: text = data.decode()
  except UnicodeDecodeError: raise _Fail(CUDA_ERROR_INVALID_IMAGE, "the image is neither PTX text nor an ELF") from None
  if not re.search(r"^\s*\.version\s", text, re.M): raise _Fail(CUDA_ERROR_INVALID_IMAGE, "the image has no PTX .version directive")
  return text

def _check_ptx_header(text:str, device:Device):
  if (v:=re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.M)) is None: raise _Fail(CUDA_ERROR_INVALID_PTX, "malformed .version")
  if (int(v[1]), int(v[2])) > MAX_PTX_VERSION:
    raise _Fail(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, f"PTX ISA {v[1]}.{v[2]} is newer than this driver's {MAX_PTX_VERSION[0]}.{MAX_PTX_VERSION[1]}")
  if (t:=re.search(r"^\s*\.target\s+sm_(\d+)([af]?)", text, re.M)) is None: raise _Fail(CUDA_ERROR_INVALID_PTX, "no .target sm_XX directive")
  have = device.board.compute_capability[0] * 10 + device.board.compute_capability[1]
  if int(t[1]) > have or (t[2] and int(t[1]) != have):
    raise _Fail(CUDA_ERROR_INVALID_PTX, f"PTX .target sm_{t[1]}{t[2]} does not run on the device (sm_{have})")

_UNSUPPORTED = re.compile(r"unsupported|not supported")

@_api
def cuModuleLoadData(module, image):
  ctx = _current()
  text = _image_text(image)
  _check_ptx_header(text, ctx.device)
  try: ptx = _ptx().load_module(text)
  except UnsupportedInstruction as e:
    # the parser raises one type for malformed PTX and for valid PTX it does not implement; only the first is the
    # JIT's CUDA_ERROR_INVALID_PTX, the second stays a NotImplementedError naming the construct. The syntax module is
    # the parser's (a cached module loads without it): by the time it raised, it is imported
    from mockgpu.compiler.ptx.syntax import PTXSyntaxError
    if not isinstance(e, PTXSyntaxError) or _UNSUPPORTED.search(str(e)): raise
    log.error("cuModuleLoadData: PTX JIT failed: %s", e)
    raise _Fail(CUDA_ERROR_INVALID_PTX, str(e)) from None
  limit = ctx.device.board.shared_per_block
  for k in ptx.kernels.values():  # ptxas refuses an entry whose static shared memory exceeds the 48 KiB window
    if k.shared_size > limit:
      raise _Fail(CUDA_ERROR_INVALID_PTX, f"entry {k.name} uses too much shared data (0x{k.shared_size:x} bytes, 0x{limit:x} max)")
  m = Module(ctx, ptx)
  ctx.modules.add(m)
  _out(module, _register(m))

def _unload(m:Module):
  for f in m.functions.values(): _forget(f)
  m.ctx.modules.discard(m)
  _forget(m)

@_api
def cuModuleUnload(hmod):
  m = _get(hmod, Module)
  _usable(m.ctx)
  _unload(m)

@_api
def cuModuleGetFunction(hfunc, hmod, name):
  m = _get(hmod, Module)
  _usable(m.ctx)
  if name is None: raise _Fail(CUDA_ERROR_INVALID_VALUE, "NULL name")
  raw = name if isinstance(name, bytes) else _user(uaccess.user_cstring, _addr(name), "cuModuleGetFunction name", 4096)
  try: nm = raw.decode()
  except UnicodeDecodeError: raise _Fail(CUDA_ERROR_NOT_FOUND, f"no .entry {raw!r} in the module") from None
  if nm not in m.functions:
    try: kernel = m.ptx.kernel(nm)
    except KeyError: raise _Fail(CUDA_ERROR_NOT_FOUND, f"no .entry {nm} in the module") from None
    _register(f:=Function(m, nm, kernel))
    m.functions[nm] = f
  _out(hfunc, m.functions[nm].handle)

@_api
def cuFuncSetAttribute(hfunc, attrib, value):
  f, a, v = _get(hfunc, Function), _addr(attrib), _addr(value)
  if a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if not 0 <= v <= (optin:=f.module.ctx.device.board.shared_per_block_optin) - f.kernel.shared_size:
      raise _Fail(CUDA_ERROR_INVALID_VALUE, f"{v} bytes of dynamic shared memory + {f.kernel.shared_size} static > {optin}")
    f.max_dynamic_shared = v
  elif a == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    if not -1 <= v <= 100: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"carveout {v}%")  # a cache hint: no effect here
  else: raise UnsupportedIoctl(f"cuFuncSetAttribute: {enum_CUfunction_attribute_enum.get(a, a)} is not modelled")

def _param_bytes(f:Function, kernelParams, extra) -> bytes:
  """The kernel's packed .param block from kernelParams (one pointer per parameter), the `extra` buffer protocol, or,
  as tinygrad sends for MOCK, the argument struct itself in place of `extra`."""
  if kernelParams is not None and extra is not None: raise _Fail(CUDA_ERROR_INVALID_VALUE, "both kernelParams and extra given")
  if isinstance(extra, ctypes.Structure): data = bytes(extra)
  elif extra is not None: data = _extra_buffer(extra)
  elif kernelParams is not None:
    n = len(f.kernel.params)
    ptrs = struct.unpack(f"<{n}Q", _user(uaccess.copy_from_user, _buffer(kernelParams, 8 * n, "cuLaunchKernel kernelParams"), 8 * n,
                                         "cuLaunchKernel kernelParams"))
    block = bytearray(f.kernel.param_size)
    for i, (pname, size, _, off) in enumerate(f.kernel.params):
      block[off:off+size] = _user(uaccess.copy_from_user, ptrs[i], size, f"cuLaunchKernel kernelParams[{i}] ({pname})")
    data = bytes(block)
  else: data = b""
  if len(data) < (need:=f.kernel.param_size): raise _Fail(CUDA_ERROR_INVALID_VALUE, f"{f.name} takes {need} bytes of parameters, got {len(data)}")
  return data[:need]

MAX_EXTRA_KEYS = 16  # an `extra` list has at most one entry per key: longer is garbage, not a list

def _extra_buffer(extra) -> bytes:
  base = _addr(extra)
  buf = size = None
  for i in range(MAX_EXTRA_KEYS + 1):
    if i == MAX_EXTRA_KEYS: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"cuLaunchKernel extra has no CU_LAUNCH_PARAM_END in {MAX_EXTRA_KEYS} entries")
    key = struct.unpack("<Q", _user(uaccess.copy_from_user, base + 16 * i, 8, "cuLaunchKernel extra"))[0]
    if key == CU_LAUNCH_PARAM_END: break
    value = struct.unpack("<Q", _user(uaccess.copy_from_user, base + 16 * i + 8, 8, "cuLaunchKernel extra"))[0]
    if key == CU_LAUNCH_PARAM_BUFFER_POINTER: buf = value
    elif key == CU_LAUNCH_PARAM_BUFFER_SIZE: size = struct.unpack("<Q", _user(uaccess.copy_from_user, value, 8, "CU_LAUNCH_PARAM_BUFFER_SIZE"))[0]
    else: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"unknown cuLaunchKernel extra key {key}")
  if buf is None or size is None: raise _Fail(CUDA_ERROR_INVALID_VALUE, "extra needs CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE")
  if size > uaccess.MAX_COPY: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"CU_LAUNCH_PARAM_BUFFER_SIZE {size}")
  return _user(uaccess.copy_from_user, buf, size, "CU_LAUNCH_PARAM_BUFFER_POINTER")

def _check_dims(grid:tuple, block:tuple, smem:int, f:Function):
  """The launch limits, as cuLaunchKernel reports them: CUDA_ERROR_INVALID_VALUE for a configuration the kernel or
  the board cannot take (a 0 or too large dimension, a block above .maxntid, more dynamic shared memory than the
  function's limit), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES for more shared memory than a block can have."""
  if smem > f.max_dynamic_shared: raise _Fail(CUDA_ERROR_INVALID_VALUE, f"{f.name}: {smem} bytes of dynamic shared memory > {f.max_dynamic_shared}")
  if (bad:=f.module.ctx.device.board.launch_error(f.kernel, grid, block, smem)) is not None:
    raise _Fail(CUDA_ERROR_INVALID_VALUE if bad[0] == "value" else CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, bad[1])

def _fault(ctx:Context, code:int, f:Function, e:Exception):
  ctx.error = code
  events.fault(ctx.device.mem.name, None, e)
  log.error("cuLaunchKernel(%s) on CUDA:%d: %s; the context is now in error %d (%s)", f.name, ctx.device.ordinal, e, code,
            ERROR_STRINGS[code])

@_api
def cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra):
  fn = _get(f, Function)
  ctx = _usable(fn.module.ctx)
  if _stream_ctx(hStream) is not ctx: raise _Fail(CUDA_ERROR_INVALID_HANDLE, "the stream is not in the function's context")
  grid, block = tuple(map(_addr, (gridDimX, gridDimY, gridDimZ))), tuple(map(_addr, (blockDimX, blockDimY, blockDimZ)))
  _check_dims(grid, block, smem:=_addr(sharedMemBytes), fn)
  params = _param_bytes(fn, kernelParams, extra)
  t0 = events.now() if events.enabled else 0
  try: stats = _ptx().launch(ctx.device.mem, fn.kernel, grid, block, params, smem)
  except GPUPageFault as e: _fault(ctx, CUDA_ERROR_ILLEGAL_ADDRESS, fn, e)
  except InstructionBudgetExceeded as e: _fault(ctx, CUDA_ERROR_LAUNCH_TIMEOUT, fn, e)
  else:
    if t0 and events.enabled: events.emit("dispatch", ctx.device.mem.name, f"stream 0x{_addr(hStream):x}", ts=t0, dur=events.now() - t0,
                                   **_ptx().launch_fields(fn.kernel, grid, block, smem, stats))

# *** everything else in the ABI table ***

def __getattr__(name:str):
  """A driver call the ABI table declares but this model does not implement: calling it raises, naming it."""
  if isinstance(getattr(_abi, name, None), types.FunctionType) and name.startswith("cu"):
    def unmodelled(*args): raise UnsupportedIoctl(f"CUDA driver call {name} is not modelled by mockgpu")
    unmodelled.__name__ = name
    return unmodelled
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
