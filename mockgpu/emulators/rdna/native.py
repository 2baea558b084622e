"""Run a dispatch through the kernel's C translation (compiler/rdna/backends/c.py), one wave at a time.

Which path runs a dispatch was chosen by measurement (bench/rdna_micro.py and bench/run.py, 2-core machine): the C
translation sustains 20-35 M wave-instructions/s from a few waves up (1-2 M/s on one wave, where the launch itself
dominates); the numpy path costs a few microseconds per instruction whatever the number of waves, so it reaches
0.05-0.1 M/s on one wave and 10-17 M/s on thousands. Where the C translation covers a hot kernel, it runs it.

A kernel gets a C translation when it pays (compiler/native.py Tier): once the numpy path has spent on it the seconds
its C build is estimated to take (0.1-2 s at -O2, once per machine: the shared object is cached on disk under the hash
of its source, and the artifact index finds it from the kernel's code without translating it again), built in the
background while numpy serves its dispatches; a kernel whose build is already on disk takes it at its first dispatch.
Most kernels of a test suite run once or twice and never pay a build. Until then, and for kernels the C translation
does not cover, the numpy path runs it. MOCKGPU_RDNA_NATIVE=0 never uses C, =1 uses it from the first dispatch (the
tests run kernels both ways; the build is waited for), unset or `auto` is the choice above.
"""
from __future__ import annotations
import collections, ctypes
import numpy as np
from mockgpu.compiler import native
from mockgpu.compiler.rdna import semantics
from mockgpu.errors import GPUPageFault
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna.dispatch import spi_setup, budget_exceeded, allocated_vgprs
from mockgpu.compiler.rdna.faults import at_pc, outside, misaligned, instruction_error, relative_error, jump_error, trap_error

HOT_DISPATCHES = native.HOT_DISPATCHES
TAG = "rdna"
MAX_WAVES_PER_GROUP = 32  # the waves of one workgroup the C scheduler (c/prelude.c, mockgpu_run) holds
CHUNK_BYTES = 32 << 20  # register and LDS bytes of one chunk of workgroups
DONE, FAULT, BUDGET, UNSUPPORTED = 0, 1, 2, 3
RELATIVE, BAD_JUMP, TRAPPED = 10, 11, 12  # c/prelude.c: a wave's stops besides faults
LDS_SPACE, MISALIGNED, SCRATCH_SPACE = 1, 2, 4  # c/prelude.c: a fault's space, | MISALIGNED for a misaligned atomic

declined:collections.Counter = collections.Counter()  # why kernels stayed on the numpy path, for `mockgpu info`-style reports

class Ctx(ctypes.Structure):
  _fields_ = [("s", ctypes.c_void_p), ("v", ctypes.c_void_p), ("lds", ctypes.c_void_p),
              ("maps", ctypes.c_void_p), ("nmaps", ctypes.c_int64), ("hint", ctypes.c_int64),
              *((f, ctypes.c_int64) for f in ("waves", "wpg", "nvgpr", "lds_size", "wg0", "gx", "gy", "gz", "bx", "by", "bz",
                                              "nuser", "enables", "comps", "ttmp_x", "ttmp_yz")),
              ("pgm", ctypes.c_uint64), ("budget", ctypes.c_int64), ("used", ctypes.c_int64),
              *((f, ctypes.c_int64) for f in ("status", "fault_pc", "fault_size", "fault_write", "fault_kind")),
              ("fault_va", ctypes.c_uint64), ("user", ctypes.c_void_p), ("wgs", ctypes.c_void_p), ("cur_wave", ctypes.c_int64),
              ("vgprs", ctypes.c_int64), ("scratch", ctypes.c_void_p), ("private_size", ctypes.c_int64),
              ("fault_off", ctypes.c_int64), ("scratch_base", ctypes.c_uint64),
              ("prog", ctypes.c_void_p), ("params", ctypes.c_void_p), ("blocks", ctypes.c_void_p)]

def mode() -> str: return native.tier("MOCKGPU_RDNA_NATIVE")

class NativeKernel:
  """A kernel's C translation, loaded: its entry point and what its fault statuses need to name."""
  def __init__(self, lib:ctypes.CDLL, nvgpr:int, names:dict[int, str], messages:list[str], lanes:int):
    self.run = lib.mockgpu_run
    self.run.argtypes, self.run.restype = [ctypes.POINTER(Ctx)], ctypes.c_int64
    self.nvgpr, self.names, self.messages, self.lanes = nvgpr, names, messages, lanes
    self.lib = lib  # keeps the library loaded
    self.launches:dict[tuple, Launch] = {}
    self.pointers:tuple|None = None   # a stencil-tier kernel's instruction, parameter and block arrays (emulators/rdna/stencil.py)

def Tier(instructions:int) -> native.Tier: return native.Tier(TAG, instructions)

def key(code:bytes, arch:str, ftz32:bool, ftz16:bool, lanes:int, ieee:bool) -> str:
  """The kernel's key in the artifact index (compiler/native.py find): its code and everything its translation reads."""
  version = native.files_version("compiler/rdna", "emulators/rdna/native.py")
  return native.artifact_key(TAG, version, f"{arch}|{int(ftz32)}{int(ftz16)}|{lanes}|{int(ieee)}|".encode() + code)

def translate(blocks, ftz32:bool, ftz16:bool, arch:str, lanes:int, ieee:bool=True, key:str|None=None) -> NativeKernel|None:
  """The C translation of a kernel, or None when it uses something outside it (or no C compiler is here); recorded in
  the artifact index under key."""
  from mockgpu.compiler.rdna.backends import c as c_backend  # imported at the first C translation only
  try:
    t = c_backend.CTranslator(blocks, ftz32, ftz16, arch, lanes, ieee)
    src = t.source()
  except c_backend.NoNative as e:
    declined[str(e)] += 1
    if key is not None: native.remember(TAG, key, {"declined": str(e)})
    return None
  lib = native.library(src, TAG)
  if lib is None:
    declined["no C build (no compiler, MOCKGPU_NATIVE=0, or the build failed or timed out: the mockgpu logger says which)"] += 1
    return None
  k = NativeKernel(lib, max(t.vregs) + 1, t.names, t.messages, t.wave)
  if key is not None:
    native.remember(TAG, key, {"so": lib._name, "nvgpr": k.nvgpr, "names": list(k.names.items()), "messages": k.messages, "lanes": k.lanes})
  return k

def cached(key:str):
  """The kernel's C translation as another process recorded it: a NativeKernel, None where C declines it, or
  native.NOT_CACHED."""
  return native.cached(TAG, key, declined, lambda lib, rec: NativeKernel(lib, rec["nvgpr"], dict(rec["names"]), rec["messages"], rec["lanes"]))

class Launch:
  """The C context and register buffers of one dispatch geometry, kept for the next dispatch of the same shape
  (tinygrad launches the same kernel over and over): a launch then only updates the user SGPRs and the budget."""
  def __init__(self, k:NativeKernel, d, wpg:int, nwg:int, lds_size:int, private:int):
    nuser, id_sgprs, comps = spi_setup(d.rsrc2, d.arch)
    ttmp_x, ttmp_yz = semantics.setup(d.arch).TTMP_WORKGROUP_IDS or (-1, -1)  # gfx12's workgroup IDs
    enables = sum(1 << i for i, on in enumerate(id_sgprs) if on)
    per_wg = wpg * (256 + k.nvgpr * k.lanes) * 4 + lds_size + wpg * k.lanes * private
    self.chunk = max(1, min(nwg, CHUNK_BYTES // per_wg))
    self.buffers = (np.empty(self.chunk * wpg * 256, np.uint32), np.empty(self.chunk * wpg * k.nvgpr * k.lanes, np.uint32),
                    np.empty(max(1, self.chunk * lds_size), np.uint8), np.empty(max(1, self.chunk * wpg * k.lanes * private), np.uint8))
    self.ctx = c = Ctx(s=self.buffers[0].ctypes.data, v=self.buffers[1].ctypes.data, lds=self.buffers[2].ctypes.data,
                       wpg=wpg, nvgpr=k.nvgpr, lds_size=lds_size, gx=d.grid[0], gy=d.grid[1], gz=d.grid[2],
                       bx=d.block[0], by=d.block[1], bz=d.block[2], nuser=nuser, enables=enables, comps=comps,
                       ttmp_x=ttmp_x, ttmp_yz=ttmp_yz, vgprs=min(k.nvgpr, allocated_vgprs(d)),
                       scratch=self.buffers[3].ctypes.data, private_size=private, scratch_base=d.scratch_base)
    self.user = np.zeros(32, np.uint32)
    c.user = self.user.ctypes.data
    if k.pointers is not None: c.prog, c.params, c.blocks = k.pointers
    c.wg0, c.waves = 0, self.chunk * wpg
    self.ref, self.nuser, self.generation, self.last_user, self.wgs = ctypes.byref(c), nuser, None, None, None

def run(k:NativeKernel, mem:AddressSpace, d, wpg:int, wg_ids:np.ndarray, lds_size:int, budget:int, used:int, private:int=0) -> int:
  """Run the workgroups wg_ids (linear IDs: this XCC's share) of dispatch d; returns the wave-instructions used so far
  (raises as the numpy path does)."""
  nwg = len(wg_ids)
  key = (wpg, nwg, lds_size, d.rsrc1, d.rsrc2, d.grid, d.block, private, d.scratch_base)
  if (ln:=k.launches.get(key)) is None:
    if len(k.launches) > 16: k.launches.clear()
    ln = k.launches[key] = Launch(k, d, wpg, nwg, lds_size, private)
  c = ln.ctx
  if ln.generation != (mem, mem.generation):
    ln.maps = mem.table()  # kept alive while the C side points at it
    c.maps, c.nmaps, c.hint, ln.generation = ln.maps.ctypes.data, len(mem.mappings()), 0, (mem, mem.generation)
  if d.user_data is not ln.last_user:
    u = d.user_data[:32]
    try: ln.user[:len(u)] = u
    except OverflowError: ln.user[:len(u)] = [x & 0xffffffff for x in u]  # registers hold 32 bits
    ln.last_user = d.user_data
  if ln.wgs is not wg_ids:  # dispatch.workgroup_ids shares one array per geometry
    ln.wgs = np.ascontiguousarray(wg_ids, np.int64)  # kept alive while the C side reads it
    c.wgs = ln.wgs.ctypes.data
  c.pgm, c.budget, c.used = d.pgm_addr, budget, used
  wg0 = 0
  if ln.chunk >= nwg: status = k.run(ln.ref)  # the common case: one chunk, set up once
  else:
    for g0 in range(0, nwg, ln.chunk):
      c.wg0, c.waves = g0, min(ln.chunk, nwg - g0) * wpg
      if (status:=k.run(ln.ref)) != DONE: break
    wg0 = c.wg0
    c.wg0, c.waves = 0, ln.chunk * wpg
  if status != DONE: raise _error(k, c, status, d, budget, int(wg_ids[wg0 + c.cur_wave // wpg]), c.cur_wave % wpg, mem)
  return c.used

def _error(k:NativeKernel, c:Ctx, status:int, d, budget:int, workgroup:int, wave:int, mem:AddressSpace) -> Exception:
  """The error of a C run that stopped, naming the wave that was running (the C path runs one at a time); the lane of a
  fault is not known here."""
  pgm = d.pgm_addr
  where = at_pc(k.names.get(c.fault_pc, "?"), pgm, c.fault_pc)
  wg = d.workgroup(workgroup)
  if status == FAULT and c.fault_kind == SCRATCH_SPACE:
    where = outside(where, "private (scratch)", c.fault_off, c.private_size)
    return GPUPageFault(c.fault_va, c.fault_size, bool(c.fault_write), where, "scratch", workgroup=wg, wave=wave)
  if status == FAULT:
    space = "LDS" if c.fault_kind & LDS_SPACE else "global"
    if c.fault_kind & MISALIGNED: where = misaligned(where, space, c.fault_va, c.fault_size)
    elif c.fault_kind == LDS_SPACE: where = outside(where, "LDS", c.fault_va, c.lds_size)
    return GPUPageFault(c.fault_va, c.fault_size, bool(c.fault_write), where, space, workgroup=wg, wave=wave)
  if status == BUDGET:
    e = budget_exceeded(pgm, budget, c.fault_pc)
    e.args = (f"{e}; the running wave: workgroup {wg}, wave {wave}",)
    return e
  if status == UNSUPPORTED: return instruction_error(k.messages[c.fault_size], pgm, c.fault_pc)
  if status == RELATIVE: return relative_error(k.messages[c.fault_kind], pgm, c.fault_pc, c.fault_va, c.fault_size)
  if status == BAD_JUMP: return jump_error(mem, k.messages[c.fault_kind], pgm, c.fault_pc, c.fault_va)
  if status == TRAPPED: return trap_error(pgm, c.fault_pc, c.fault_va)
  return RuntimeError(f"RDNA native kernel at PC 0x{pgm:x}: unknown status {status}")
