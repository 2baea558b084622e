"""Run a PTX launch through the kernel's C translation (compiler/ptx/backends/c.py), one thread at a time (in warp
mode, block by block in the numpy path's order, with the exchange buffers of the instructions that combine threads).

The numpy path pays numpy's per-call cost on every instruction, and its gathers of strided rows (each lane reading a
row of its own, as a reduction's lanes do) miss the TLB and caches lane after lane; a C thread walks its own row and
runs a few hundred million thread-instructions per second whatever the shape. As for RDNA (emulators/rdna/native.py),
a kernel takes the C translation when it pays (compiler/native.py Tier): once the numpy path has spent on it the
seconds its C build is estimated to take (0.1-0.5 s, once per machine: the shared object is cached on disk under the
hash of its source, and the artifact index finds it from the kernel's text without translating it again), built in the
background while numpy serves its launches; a kernel whose build is already on disk takes it at its first launch.
MOCKGPU_PTX_NATIVE=0 never uses it, =1 from the first launch (the tests run kernels both ways; the build is waited
for), unset or `auto` is the choice above.
Kernels the translation does not cover stay on the numpy path; why is counted in `declined`.
"""
from __future__ import annotations
import collections, ctypes
import numpy as np
from mockgpu.compiler import native
from mockgpu.compiler.ptx.layout import MODULE_WINDOW, CONST_WINDOW
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded, UnsupportedInstruction
from mockgpu.compiler.ptx.backends.numpy_runtime import KernelTrap

DONE, FAULT, BUDGET, UNSUPPORTED, TRAP = 0, 1, 2, 3, 4   # native_common.c's statuses and prelude.c's TRAP
NSRC, NRES = 16, 4   # prelude.c: per thread, the operands and results of an instruction that combines threads
GLOBAL_SPACE = 0
SHARED_SPACE, PARAM_SPACE, LOCAL_SPACE, CONST_SPACE, MISALIGNED_ATOMIC = 1, 2, 3, 4, 5   # prelude.c's fault kinds

declined:collections.Counter = collections.Counter()

class Ctx(ctypes.Structure):
  _fields_ = [("maps", ctypes.c_void_p), ("nmaps", ctypes.c_int64), ("hint", ctypes.c_int64),
              ("shared", ctypes.c_void_p), ("shared_size", ctypes.c_int64), ("local", ctypes.c_void_p), ("local_size", ctypes.c_int64),
              ("params", ctypes.c_char_p), ("nparams", ctypes.c_int64),
              *((f, ctypes.c_int64) for f in ("gx", "gy", "gz", "bx", "by", "bz", "dynamic_shared", "cta0", "nctas", "budget", "used", "warp")),
              ("save", ctypes.c_void_p), ("resume", ctypes.c_void_p), ("hints", ctypes.c_void_p),
              ("xsrc", ctypes.c_void_p), ("xres", ctypes.c_void_p), ("act", ctypes.c_void_p),
              *((f, ctypes.c_int64) for f in ("status", "fault_pc", "fault_size", "fault_write", "fault_kind")),
              ("fault_va", ctypes.c_uint64)]

class NativeKernel:
  """A kernel's C translation, loaded, with the buffers of its last launch shape."""
  def __init__(self, lib:ctypes.CDLL, messages:list[str], nsave:int):
    self.run = lib.mockgpu_run
    self.run.argtypes, self.run.restype = [ctypes.POINTER(Ctx)], ctypes.c_int64
    self.lib, self.messages, self.nsave = lib, messages, nsave
    self.hints = np.zeros(ctypes.c_int64.in_dll(lib, "mockgpu_hints").value, np.int64)   # indices into the mapping table
    self.buffers:dict[tuple, tuple] = {}
    self.table:tuple = (None, None)   # (the address space and its generation, the mapping rows)

  def maps(self, mem, module) -> np.ndarray:
    """The address space's mappings and, at their window addresses, the module's .global and .const variables."""
    if self.table[0] != (mem, mem.generation):
      rows = [(m.va, m.size, m.host) for m in mem.mappings()]
      rows += [(base, w.size, w.data.ctypes.data) for base, w in ((MODULE_WINDOW, module.memory.globals),
               (CONST_WINDOW, module.memory.consts)) if w.size]
      self.table = ((mem, mem.generation), np.array(sorted(rows) or [(0, 0, 0)], np.uint64).reshape(-1, 3))
      self.hints[:] = 0   # they index the old table
    return self.table[1]

  def scratch(self, tpc:int, shared:int, local:int) -> tuple[np.ndarray, ...]:
    """Shared and local memory, saved registers, resume points and the exchange of instructions that combine threads
    for a CTA of tpc threads (kept for the next launch)."""
    if (b:=self.buffers.get((tpc, shared))) is None:
      if len(self.buffers) > 8: self.buffers.clear()
      b = self.buffers[(tpc, shared)] = (np.zeros(max(shared, 1), np.uint8), np.zeros(max(tpc * local, 1), np.uint8),
                                         np.zeros(tpc * self.nsave, np.uint64), np.zeros(tpc, np.int64),
                                         np.zeros(tpc * NSRC, np.uint64), np.zeros(tpc * NRES, np.uint64), np.zeros(tpc, np.uint8))
    return b

TAG = "ptx"

def mode() -> str: return native.tier("MOCKGPU_PTX_NATIVE")
def off() -> bool: return mode() == "0"
def Tier(instructions:int) -> native.Tier: return native.Tier(TAG, instructions)

def key(kernel) -> str:
  """The kernel's key in the artifact index (compiler/native.py find): its module's text, its name and the translator."""
  version = native.files_version("compiler/ptx", "compiler/floats.py", "emulators/ptx/native.py")  # floats: backends/c.py's FP8
  return native.artifact_key(TAG, version, f"{kernel.name}|".encode() + kernel.module.text.encode())

def _cgen():
  """The C backend, imported at the first C translation: most of a suite's kernels never reach it (a third of the
  PTX executor's import)."""
  from mockgpu.compiler.ptx.backends import c
  return c

def _c_source(kernel) -> tuple[object, str, list]:
  """(the entry's parsed function, its C source, its messages); raises NoNative where C does not cover it."""
  from mockgpu.compiler.ptx import parser as P   # the parser is a translation's, not a cached kernel's (see ptx/__init__)
  from mockgpu.compiler.ptx.layout import entries
  cgen, (fn, layout) = _cgen(), next((fn, lay) for fn, lay in entries(P.parse(kernel.module.text))[0] if fn.name == kernel.name)
  return fn, *cgen.kernel_source(fn, layout)

def refusal(kernel) -> str|None:
  """Why the C translation declines a PTXKernel, or None (translated, not built): mockgpu coverage's verdict."""
  try: _c_source(kernel)
  except _cgen().NoNative as e: return str(e)
  return None

def translate(kernel, key:str|None=None) -> NativeKernel|None:
  """The C translation of a PTXKernel, or None when it uses something outside it (or there is no C compiler);
  recorded in the artifact index under key."""
  try:
    fn, src, messages = _c_source(kernel)
  except _cgen().NoNative as e:
    declined[str(e)] += 1
    if key is not None: native.remember(TAG, key, {"declined": str(e)})
    return None
  if (lib:=native.library(src, TAG)) is None:
    declined["no C build (no compiler, MOCKGPU_NATIVE=0, or the build failed or timed out: the mockgpu logger says which)"] += 1
    return None
  nsave = len(fn.regs) + 1   # warp mode's Regs: the registers and the carry flag
  if key is not None: native.remember(TAG, key, {"so": lib._name, "messages": messages, "nsave": nsave})
  return NativeKernel(lib, messages, nsave)

def cached(key:str):
  """The kernel's C translation as another process recorded it: a NativeKernel, None where C declines it, or
  native.NOT_CACHED."""
  return native.cached(TAG, key, declined, lambda lib, rec: NativeKernel(lib, rec["messages"], rec["nsave"]))

def launch(nk:NativeKernel, mem, kernel, grid:tuple, block:tuple, params:bytes, dynamic_shared:int, budget:int, warp:int) -> int:
  """Run every CTA; returns the thread-instructions executed (raises as the numpy path does). The budget counts
  warp-instructions, C thread-instructions: `warp` (the board's warp size) of them each."""
  shared = kernel.dynamic_base + dynamic_shared if dynamic_shared else kernel.shared_size
  tpc = block[0] * block[1] * block[2]
  smem, lmem, save, resume, xsrc, xres, act = nk.scratch(tpc, shared, kernel.local_size)
  maps = nk.maps(mem, kernel.module)
  c = Ctx(maps=maps.ctypes.data, nmaps=len(maps) if maps[0, 1] else 0, hint=0, shared=smem.ctypes.data, shared_size=shared,
          local=lmem.ctypes.data, local_size=kernel.local_size,
          params=params, nparams=len(params), gx=grid[0], gy=grid[1], gz=grid[2], bx=block[0], by=block[1], bz=block[2],
          dynamic_shared=dynamic_shared,
          cta0=0, nctas=grid[0] * grid[1] * grid[2], budget=budget * warp, used=0, warp=warp, save=save.ctypes.data, resume=resume.ctypes.data,
          hints=nk.hints.ctypes.data, xsrc=xsrc.ctypes.data, xres=xres.ctypes.data, act=act.ctypes.data)
  status = nk.run(ctypes.byref(c))
  if status == FAULT:
    where, va, space = nk.messages[c.fault_pc], c.fault_va, "global"
    if c.fault_kind == CONST_SPACE: where, space = f"{where} (.const is read-only)", "module"
    elif c.fault_kind == MISALIGNED_ATOMIC: where = f"{where} (misaligned atomic)"
    elif va >> 56 in (MODULE_WINDOW >> 56, CONST_WINDOW >> 56) and c.fault_kind == GLOBAL_SPACE:  # other tags: global memory
      w = kernel.module.memory.consts if va >> 56 == CONST_WINDOW >> 56 else kernel.module.memory.globals
      where, va, space = f"{where} (module .{w.name} variables, {w.size} bytes)", va & 0x00FF_FFFF_FFFF_FFFF, "module"
    if c.fault_kind == SHARED_SPACE: where, space = f"{where} (shared window of {shared} bytes)", "shared"
    elif c.fault_kind == PARAM_SPACE: where, space = f"{where} (param space of {len(params)} bytes)", "param"
    elif c.fault_kind == LOCAL_SPACE:
      space = "local"
      where = f"{where} (local window of {kernel.local_size} bytes)" if kernel.local_size else f"{where} (the kernel has no .local memory)"
    raise GPUPageFault(va, c.fault_size, bool(c.fault_write), where, space)
  if status == TRAP: raise KernelTrap(nk.messages[c.fault_pc])
  if status == UNSUPPORTED: raise UnsupportedInstruction(nk.messages[c.fault_pc])
  if status == BUDGET: raise InstructionBudgetExceeded(f"PTX kernel {kernel.name} ran past {budget} warp-instructions (MOCKGPU_BUDGET)")
  if status != DONE: raise RuntimeError(f"PTX native kernel {kernel.name}: unknown status {status}")
  return c.used
