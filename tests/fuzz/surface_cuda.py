"""Fuzz surface: CUDA driver calls (mockgpu.driver.cuda, as tinygrad's ops_cuda calls them) with bad handles, sizes and
pointers: out-parameters through byref, through pointers to a user page that ends at an unmapped guard page, to
unmapped memory or small integers; device pointers inside and outside allocations; PTX images by value, through
pointers and as junk; launches with hostile dimensions, shared memory, kernelParams and extra.

The fuzzed calls run in a context on device 0 (remade after a case leaves it sticky, or frees its objects); the
known-good op runs on device 1's context: a copy in, a kernel launch and a copy out that must give k*x.
"""
from __future__ import annotations
import ctypes, struct
from harness import interesting
from userpages import SCALE_PTX, guarded_page, inaccessible

NAME = "cuda"
ENV = {"MOCKGPU_COUNT": "2", "MOCKGPU_NV_MODEL": "sm_89", "MOCKGPU_BUDGET": "100000", "MOCKGPU_PTX_NATIVE": "0"}
BUF = 0x1000
PTRS = ("dev", "dev", "dev_end", "host", "user", "user_end", "unmapped", "small", 0, "kernel", "tiny", "tiny_ref")
OUTS = ("byref", "byref", "byref", "ptr_user", "ptr_user_end", "ptr_bad", "int_bad", None, "mistyped", "mistyped_ptr", "wide", "opaque",
        "handle", "array", "empty_array", "float", "struct")
HANDLES = ("ctx", "mod", "func", "stream", "event", 0, 1, "garbage")
SIZES = (0, 1, 4, 16, BUF, BUF + 1, 1 << 20, 1 << 40, -1)
cu = st = None

def _size(rng): return rng.choice(SIZES) if rng.random() > 0.2 else interesting(rng, 64)
def _dim(rng): return rng.choice((1, 1, 1, 2, 32, 1024)) if rng.random() > 0.25 else rng.choice((0, 65, 1025, 65535, 65536, 2**31, 2**32 - 1))

# call name -> argument kinds; each kind is drawn by _arg
CALLS = {
  "cuDeviceGetName": ("ptr", "namelen", "ordinal"), "cuDeviceGet": ("out", "ordinal"), "cuDeviceGetAttribute": ("out", "attr", "ordinal"),
  "cuDeviceComputeCapability": ("out", "out", "ordinal"), "cuDeviceTotalMem_v2": ("out", "ordinal"), "cuMemAlloc_v2": ("out", "size"),
  "cuMemFree_v2": ("ptr",), "cuMemHostAlloc": ("out", "size", "small"), "cuMemcpyHtoD_v2": ("ptr", "ptr", "size"),
  "cuMemcpyDtoH_v2": ("ptr", "ptr", "size"), "cuMemcpyDtoD_v2": ("ptr", "ptr", "size"), "cuMemcpyHtoDAsync_v2": ("ptr", "ptr", "size", "handle"),
  "cuMemcpyDtoHAsync_v2": ("ptr", "ptr", "size", "handle"), "cuModuleLoadData": ("out", "image"), "cuModuleGetFunction": ("out", "handle", "name"),
  "cuLaunchKernel": ("fhandle", "dim", "dim", "dim", "dim", "dim", "dim", "smem", "shandle", "kparams", "extra"),
  "cuFuncSetAttribute": ("handle", "fattr", "smem"), "cuStreamCreate": ("out", "small"), "cuStreamSynchronize": ("handle",),
  "cuEventCreate": ("out", "small"), "cuEventRecord": ("handle", "handle"), "cuEventElapsedTime": ("outf", "handle", "handle"),
  "cuCtxSetCurrent": ("handle",), "cuCtxGetCurrent": ("out",), "cuGetErrorString": ("code", "out"), "cuGetErrorName": ("code", "out"),
  "cuMemGetInfo_v2": ("out", "out"), "cuCtxSynchronize": (), "cuModuleUnload": ("handle",), "cuStreamDestroy_v2": ("handle",),
  "cuEventDestroy_v2": ("handle",), "cuCtxGetDevice": ("out",), "cuDeviceCanAccessPeer": ("out", "ordinal", "ordinal"),
}

def _arg(rng, kind:str):
  if kind == "ptr": return rng.choice(PTRS)
  if kind in ("out", "outf"): return (kind, rng.choice(OUTS))
  if kind == "size": return _size(rng)
  if kind == "namelen": return rng.choice((0, 1, 8, 64, 256, 65536, -1))
  if kind == "ordinal": return rng.choice((0, 0, 1, 2, -1, 1 << 31))
  if kind == "attr": return rng.choice((1, 2, 8, 16, 75, 76, 97, 0, 9999))
  if kind == "small": return rng.choice((0, 0, 1, 2, 4, 7, 0xff))
  if kind == "handle": return rng.choice(HANDLES)
  if kind == "fhandle": return rng.choice(("func",) * 8 + HANDLES)
  if kind == "shandle": return rng.choice((0, 0, 0, "stream", "stream") + HANDLES)
  if kind == "image": return rng.choice(("ptx", "ptx", "ptx_ptr", "ptx_ptr_end", "junk", "elf", "unmapped", "small", 0))
  if kind == "name": return rng.choice((b"scale", b"scale", b"nope", b"\xff\xfe", "user_end", "small", None))
  if kind == "dim": return _dim(rng)
  if kind == "smem": return rng.choice((0, 0, 0, 1024, 48 << 10, 99 << 10, 100 << 10, 1 << 31))
  if kind == "kparams": return rng.choice(("good", "good", "good", "user_end", "bad_entry", "unmapped", "small", None))
  if kind == "extra": return rng.choice((None, None, None, "struct", "buffer", "no_end", "unmapped", "small"))
  if kind == "fattr": return rng.choice((8, 8, 9, 0, 1, 99))
  if kind == "code": return rng.choice((0, 1, 700, 999, 12345, -1))
  raise AssertionError(kind)

# a valid call of each kind of argument; a case starts from the valid call and makes 0 to 3 of its arguments hostile
BASE = {"ptr": "dev", "out": ("out", "byref"), "outf": ("outf", "byref"), "size": 16, "namelen": 64, "ordinal": 0, "attr": 1, "small": 0,
        "handle": 0, "fhandle": "func", "shandle": 0, "image": "ptx", "name": b"scale", "dim": 1, "smem": 0, "kparams": "good",
        "extra": None, "fattr": 8, "code": 0}
CALL_BASE = {"cuMemcpyHtoD_v2": ["dev", "host", 16], "cuMemcpyDtoH_v2": ["host", "dev", 16], "cuMemcpyHtoDAsync_v2": ["dev", "host", 16, "stream"],
             "cuMemcpyDtoHAsync_v2": ["host", "dev", 16, "stream"], "cuModuleGetFunction": [("out", "byref"), "mod", b"scale"],
             "cuFuncSetAttribute": ["func", 8, 1024], "cuStreamSynchronize": ["stream"], "cuEventRecord": ["event", "stream"],
             "cuEventElapsedTime": [("outf", "byref"), "event", "event"], "cuCtxSetCurrent": ["ctx"], "cuModuleUnload": ["mod"],
             "cuStreamDestroy_v2": ["stream"], "cuEventDestroy_v2": ["event"]}

def generate(rng, n:int) -> list:
  weights = {"cuLaunchKernel": 6, "cuMemcpyHtoD_v2": 2, "cuMemcpyDtoH_v2": 2, "cuModuleLoadData": 2, "cuDeviceGetName": 2}
  pool = [c for c in sorted(CALLS) for _ in range(weights.get(c, 1))]
  cases = []
  for name in (rng.choice(pool) for _ in range(n)):
    kinds = CALLS[name]
    args = list(CALL_BASE.get(name, [BASE[k] for k in kinds]))
    if name == "cuLaunchKernel": args[4] = 32
    for i in rng.sample(range(len(kinds)), min(len(kinds), rng.choice((0, 1, 1, 1, 2, 3)))): args[i] = _arg(rng, kinds[i])
    cases.append((name, args))
  return cases

class State:
  def __init__(self):
    import importlib
    global cu
    cu = importlib.import_module("mockgpu.driver.cuda")
    assert cu.cuInit(0) == 0
    self.user = guarded_page()
    self.good = self.context(1)
    self.fuzz = self.context(0)

  def context(self, ordinal:int) -> dict:
    ctx = cu.CUcontext()
    assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, ordinal) == 0
    s = {"ctx": ctx}
    for name in ("dev", "inp"):
      p = cu.CUdeviceptr()
      assert cu.cuMemAlloc_v2(ctypes.byref(p), BUF) == 0
      s[name] = p.value
    h = ctypes.c_void_p()
    assert cu.cuMemHostAlloc(ctypes.byref(h), BUF, 0) == 0
    s["host"] = h.value
    mod, fn, stream, event = cu.CUmodule(), cu.CUfunction(), cu.CUstream(), cu.CUevent()
    assert cu.cuModuleLoadData(ctypes.byref(mod), SCALE_PTX.encode()) == 0
    assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"scale") == 0
    assert cu.cuStreamCreate(ctypes.byref(stream), 0) == 0 and cu.cuEventCreate(ctypes.byref(event), 0) == 0
    s.update(mod=mod, func=fn, stream=stream, event=event)
    return s

  def healthy(self, s:dict) -> bool:
    """Whether a context and all its objects are still alive and not sticky."""
    ctx = cu._handles.get(cu._addr(s["ctx"]))
    return ctx is not None and not ctx.error and all(cu._handles.get(cu._addr(s[k])) is not None for k in ("mod", "func", "stream", "event")) and \
           all(p in cu._drv.allocs for p in (s["dev"], s["inp"], s["host"]))

  def renew(self):
    """Destroy the fuzzed context (and everything in it) and make it again."""
    cu.cuCtxDestroy_v2(self.fuzz["ctx"])
    self.fuzz = self.context(0)

def setup():
  global st
  st = State()

# *** resolving a case's symbolic arguments ***

_tiny:list = []  # ctypes buffers smaller than most copies, given as host pointers (a ctypes object, not an address)

def _ptr(v):
  f = st.fuzz
  if v in ("tiny", "tiny_ref"):
    _tiny[:] = [buf:=(ctypes.c_uint8 * 8)()]
    return buf if v == "tiny" else ctypes.byref(buf, 4)
  return {"dev": f["dev"], "dev_end": f["dev"] + BUF - 4, "host": f["host"], "user": st.user, "user_end": st.user + 0x1000 - 4,
          "unmapped": inaccessible(), "small": 0x10, "kernel": 0xffff_8000_0000_0000}.get(v, v) if isinstance(v, str) else v

class _Junk(ctypes.Structure): _fields_ = [("a", ctypes.c_uint32), ("b", ctypes.c_uint16)]

def _mistyped(how:str, T, keep:list):
  """An out-parameter that points to an object of another type than T (the declared one): smaller, wider, the opaque
  handle struct, a handle, an array, a float, a struct. The driver refuses each with CUDA_ERROR_INVALID_VALUE."""
  small = ctypes.c_double if ctypes.sizeof(T) == 1 else ctypes.c_char
  if how in ("mistyped", "mistyped_ptr"):
    keep.append(x:=small())
    return ctypes.byref(x) if how == "mistyped" else ctypes.pointer(x)
  if how == "opaque":  # a handle (a pointer to an opaque struct) where a pointer to one goes, or its struct by reference
    keep.append(buf:=ctypes.create_string_buffer(16))
    return ctypes.cast(buf, cu.CUcontext)
  made = {"wide": lambda: (ctypes.c_uint64 * 2)() if ctypes.sizeof(T) != 16 else ctypes.c_char(), "handle": cu.CUstream,
          "array": lambda: (small * 4)(), "empty_array": lambda: (T * 0)(), "float": ctypes.c_double, "struct": _Junk}[how]()
  keep.append(made)
  return ctypes.byref(made)

def _out(spec, keep:list, T):
  """T: the type the ABI table declares the out-parameter to point to."""
  kind, how = spec
  if how == "byref":
    keep.append(x:=T())
    return ctypes.byref(x)
  if how not in ("ptr_user", "ptr_user_end", "ptr_bad", "int_bad", None): return _mistyped(how, T, keep)
  if how == "ptr_user": return ctypes.cast(st.user, ctypes.POINTER(T))
  if how == "ptr_user_end":  # the store crosses into the guard page
    return ctypes.cast(st.user + 0x1000 - max(ctypes.sizeof(T) // 2, 1), ctypes.POINTER(T))
  if how == "ptr_bad": return ctypes.cast(0x10, ctypes.POINTER(T))
  if how == "int_bad": return 0x10
  return None

def _handle(v):
  if v in ("ctx", "mod", "func", "stream", "event"): return st.fuzz[v]
  return 0xdead_beef_0000 if v == "garbage" else v

def _image(v, keep:list):
  text = SCALE_PTX.encode() + b"\0"
  if v == "ptx": return SCALE_PTX.encode()
  if v in ("ptx_ptr", "ptx_ptr_end"):  # the text in the user page; _end puts its NUL past the page's end (unmapped)
    at = st.user if v == "ptx_ptr" else st.user + 0x1000 - len(text) + 1
    ctypes.memmove(at, text, len(text) - (v == "ptx_ptr_end"))
    return at
  if v == "junk": return bytes(range(256)) * 4
  if v == "elf": return b"\x7fELF" + bytes(60)
  return _ptr(v)

def _kparams(v, keep:list):
  f = st.fuzz
  args = [ctypes.c_uint64(f["dev"]), ctypes.c_uint64(f["inp"]), ctypes.c_uint32(3)]
  keep.extend(args)
  ptrs = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in args])
  keep.append(ptrs)
  if v == "good": return ptrs
  if v == "bad_entry":
    ptrs[1] = 0x10
    return ptrs
  if v == "user_end":  # the pointer array runs into the guard page
    ctypes.memmove(st.user + 0x1000 - 16, ptrs, 16)
    return st.user + 0x1000 - 16
  return _ptr(v)

def _extra(v, keep:list):
  if v is None: return None
  f = st.fuzz
  if v == "struct":
    class Args(ctypes.Structure): _fields_ = [("out", ctypes.c_uint64), ("inp", ctypes.c_uint64), ("k", ctypes.c_uint32)]
    return Args(f["dev"], f["inp"], 2)
  if v in ("buffer", "no_end"):
    buf, size = (ctypes.c_uint8 * 24)(), ctypes.c_size_t(24)
    struct.pack_into("<QQI", buf, 0, f["dev"], f["inp"], 2)
    words = [cu.CU_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf), cu.CU_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size)]
    arr = (ctypes.c_void_p * 5)(*words, cu.CU_LAUNCH_PARAM_END)
    keep.extend((buf, size, arr))
    if v == "buffer": return arr
    at = st.user + 0x1000 - 32  # no END before the guard page
    ctypes.memmove(at, arr, 32)
    return at
  return _ptr(v)

def _resolve(kind:str, v, keep:list, T):
  if kind in ("out", "outf"): return _out(v, keep, T._type_)
  if kind == "ptr": return _ptr(v)
  if kind in ("handle", "fhandle", "shandle"): return _handle(v)
  if kind == "image": return _image(v, keep)
  if kind == "name": return _ptr(v) if isinstance(v, str) else v
  if kind == "kparams": return _kparams(v, keep)
  if kind == "extra": return _extra(v, keep)
  return v

def execute(case):
  name, args = case
  cu._tls.ctx = cu._handles[cu._addr(st.fuzz["ctx"])]
  keep:list = []
  declared = getattr(cu._abi, name).argtypes
  try: rc = getattr(cu, name)(*[_resolve(k, v, keep, T) for k, v, T in zip(CALLS[name], args, declared)])
  finally:
    if not st.healthy(st.fuzz): st.renew()
  return None if rc == 0 else cu.enum_cudaError_enum.get(rc, f"CUresult {rc}")

def known_good() -> bool:
  """On the fuzzed context (device 0: a case's errors are not sticky, or execute() has made it again after a sticky
  fault) and on device 1's: copy 16 floats in, launch scale by 5, copy them out: 5*x."""
  return _good(st.fuzz) and _good(st.good)

def _good(g:dict) -> bool:
  import numpy as np
  cu._tls.ctx = cu._handles[cu._addr(g["ctx"])]
  x = np.arange(16, dtype=np.float32)
  out = np.zeros(16, np.float32)
  args = [ctypes.c_uint64(g["dev"]), ctypes.c_uint64(g["inp"]), ctypes.c_uint32(5)]
  ptrs = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in args])
  rcs = [cu.cuMemcpyHtoD_v2(g["inp"], x.ctypes.data, x.nbytes), cu.cuLaunchKernel(g["func"], 1, 1, 1, 16, 1, 1, 0, None, ptrs, None),
         cu.cuMemcpyDtoH_v2(out.ctypes.data, g["dev"], out.nbytes)]
  return rcs == [0, 0, 0] and bool((out == 5 * x).all())
