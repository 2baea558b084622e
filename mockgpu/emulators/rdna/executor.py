"""Run a dispatch: set up every wave's registers as the SPI would, then advance the waves block by block.

All waves of a chunk of workgroups live in shared arrays (SGPRs [256, waves]; each VGPR [waves, lanes], the lanes
32 or 64 as the dispatch's wave size says: a wave64 wave's EXEC and VCC are SGPR pairs). While every wave
is at the same block they run as one group; once branches diverge, the waves at the lowest-addressed block run
together, so diverged waves regroup when they meet again. A wave that reaches s_barrier waits until no wave can run
any more, at which point every workgroup's live waves are at a barrier (or done) and all are released.
"""
from __future__ import annotations
import dataclasses, functools, gc, re, sys, time, weakref
from typing import TYPE_CHECKING
import numpy as np
from mockgpu import config, events, replay
from mockgpu.boards import WAVE64
from mockgpu.compiler.cache import translated, remembered
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded, KernelTrap, Unmodelled, UnsupportedInstruction
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import native, stencil
from mockgpu.emulators.rdna.dispatch import Dispatch, DispatchStats, field as _field, spi_setup, budget_exceeded, allocated_vgprs, check_size
from mockgpu.compiler.rdna import semantics
# The decoder and the translator (compiler/rdna/decode.py, backends/numpy.py, and through them the operand model and
# tinygrad's instruction tables: ~100 ms of imports) are imported where a kernel is not in the translation cache: a
# process whose kernels are all cached runs them without either.
from mockgpu.compiler.rdna.backends.numpy_version import VERSION
from mockgpu.compiler.rdna.backends.numpy_runtime import pack, watching
if TYPE_CHECKING: from mockgpu.compiler.rdna.backends.stepper import Stepper  # annotations only: stepper() imports it when asked
from tinygrad.runtime.autogen import amdgpu_kd as kd

ARCHS = tuple(semantics.FAMILIES)  # rdna3, rdna4, cdna3, cdna4
# register, LDS and scratch bytes per chunk of workgroups: about CACHE_CHUNK_BYTES, so that each instruction's arrays
# stay in cache, but at least MIN_CHUNK_WAVES waves, so that numpy's per-call cost is spread over enough lanes (kernels
# with many registers), and never over MAX_CHUNK_BYTES (kernels with large private segments)
CACHE_CHUNK_BYTES = 1 << 20
MIN_CHUNK_WAVES = 512
MAX_CHUNK_BYTES = 64 << 20
LDS_GRANULE = 512
DENORM_FLUSH, DENORM_ALLOW = 0, 3
MAX_CODE = 1 << 20  # bytes of a mapping we are willing to scan for one kernel


class Program:
  """A translated kernel (for one wave size): its code bytes (to confirm a cache hit), decoded instructions and block
  functions' builder, and its way to C (compiler/native.py Tier: the seconds the numpy path has spent on it)."""
  def __init__(self, code:bytes, ns:dict, lanes:int, arch:str, ninsts:int, insts:dict|None):
    self.code, self.build, self.arch, self._insts = code, ns["build"], arch, insts
    self.block_pc, self.block_len, self.block_barrier = ns["BLOCK_PC"], ns["BLOCK_LEN"], ns["BLOCK_BARRIER"]
    self.nvgpr = ns["NVGPR"]
    self.lanes = lanes
    self.tier = native.Tier(ninsts)

  @property
  def insts(self) -> dict:
    """The decoded instructions (decoded again only where the caches spared the decode and C wants them)."""
    from mockgpu.compiler.rdna import decode
    if self._insts is None: self._insts = decode.walk(self.code, self.arch)
    return self._insts

def _native_kernel(prog:Program, arch:str, ftz32:bool, ftz16:bool, m:str, ieee:bool) -> native.NativeKernel|None:
  """The kernel's C translation once it pays (see native.py), else None; m is the MOCKGPU_RDNA_NATIVE setting."""
  if m == "0": return None
  def build(key:str):
    from mockgpu.compiler.rdna import decode  # a C translation decodes; a cached build does not
    return native.translate(decode.blocks(prog.insts), ftz32, ftz16, arch, prog.lanes, ieee, key)
  return prog.tier.native(m, lambda: native.key(prog.code, arch, ftz32, ftz16, prog.lanes, ieee), build, native.cached)

_programs:dict[tuple, Program] = {}

def _code_window(mem:AddressSpace, pgm:int) -> bytes:
  for m in mem.mappings():
    if m.va <= pgm < m.end: return mem.read(pgm, min(m.end - pgm, MAX_CODE))
  raise GPUPageFault(pgm, 4, False, f"instruction fetch at PC 0x{pgm:x}")

def _code(mem:AddressSpace, arch:str, pgm:int) -> tuple[bytes, int, object]:
  """The kernel's code (its extent from the entry), its instruction count, and walk(): its decoded instructions, decoded
  once and only when asked."""
  window = _code_window(mem, pgm)
  decoded:list[dict] = []
  def walk() -> dict:
    from mockgpu.compiler.rdna import decode
    if not decoded: decoded.append(decode.walk(window, arch))
    return decoded[0]
  walk.decoded = decoded
  # the kernel's extent and instruction count by its code window (tinygrad's code allocation from the entry): a warm
  # first dispatch then decodes nothing (decoding is most of its mockgpu time: 143 instructions, 8 ms)
  size, ninsts = remembered(f"{arch}-extent", VERSION, window, lambda: (_extent(walk()), len(walk())),
                            lambda v: isinstance(v, tuple) and len(v) == 2 and 0 < v[0] <= len(window))
  return window[:size], ninsts, walk

def load_program(mem:AddressSpace, arch:str, pgm:int, ftz32:bool, ftz16:bool, lanes:int, ieee:bool=True) -> Program:
  """The kernel at pgm, translated once per process (and once per machine through the disk cache)."""
  key = (arch, pgm, ftz32, ftz16, lanes, ieee)
  if (prog:=_programs.get(key)) is not None and mem.holds(pgm, prog.code): return prog
  code, ninsts, walk = _code(mem, arch, pgm)
  def translate() -> str:
    from mockgpu.compiler.rdna import decode
    from mockgpu.compiler.rdna.backends.numpy import module
    return module(decode.blocks(walk()), ftz32, ftz16, arch, lanes, ieee)
  obj = translated(kind=arch, version=f"{VERSION}-ftz{int(ftz32)}{int(ftz16)}-w{lanes}-ieee{int(ieee)}", data=code,
                   build=translate)
  ns:dict = {}
  exec(obj, ns)
  _programs[key] = prog = Program(code, ns, lanes, arch, ninsts, walk.decoded[0] if walk.decoded else None)
  return prog

_stencils:dict[tuple, stencil.Entry] = {}

def load_stencil(mem:AddressSpace, arch:str, pgm:int, ftz32:bool, ftz16:bool, lanes:int, ieee:bool) -> stencil.Entry:
  """The kernel's stencil-tier record (emulators/rdna/stencil.py), once per process (once per machine on disk)."""
  key = (arch, pgm, ftz32, ftz16, lanes, ieee)
  if (e:=_stencils.get(key)) is not None and mem.holds(pgm, e.code): return e
  code, ninsts, walk = _code(mem, arch, pgm)
  def build() -> tuple:
    from mockgpu.compiler.rdna import decode
    from mockgpu.compiler.rdna.backends.stencil import record
    return record(decode.blocks(walk()), ftz32, ftz16, arch, lanes, ieee)
  rec = remembered(f"{arch}-stencil", f"{VERSION}-{stencil.version()}-ftz{int(ftz32)}{int(ftz16)}-w{lanes}-ieee{int(ieee)}",
                   code, build, lambda v: isinstance(v, tuple) and v[:1] in (("ok",), ("declined",)))
  _stencils[key] = e = stencil.Entry(code, rec, lanes, ninsts)
  return e

def _extent(insts:dict) -> int:
  from mockgpu.compiler.rdna import decode
  return decode.extent(insts)

@functools.lru_cache(maxsize=64)
def _float_modes(rsrc1:int) -> tuple[bool, bool]:
  """(flush f32 denormals, flush f16/f64 denormals) from RSRC1.FLOAT_MODE; other modes are not modelled."""
  r32 = _field(rsrc1, kd.COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_32_SHIFT, 2)
  r16 = _field(rsrc1, kd.COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_16_64_SHIFT, 2)
  if r32 or r16: raise Unmodelled(f"RDNA executor: FLOAT_ROUND_MODE {r32}/{r16} (only round-to-nearest-even is modelled)")
  out = []
  for shift in (kd.COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32_SHIFT, kd.COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64_SHIFT):
    mode = _field(rsrc1, shift, 2)
    if mode not in (DENORM_FLUSH, DENORM_ALLOW):
      raise Unmodelled(f"RDNA executor: FLOAT_DENORM_MODE {mode} (only flush-all and allow-all are modelled)")
    out.append(mode == DENORM_FLUSH)
  return out[0], out[1]

def ieee_mode(rsrc1:int, arch:str) -> bool:
  """MODE.IEEE of the waves: the descriptor's ENABLE_IEEE_MODE bit where the family has one (gfx12 has none)."""
  bit = semantics.setup(arch).IEEE_MODE_BIT
  return bit is not None and bool(rsrc1 >> bit & 1)

class State:
  """One chunk of workgroups: its registers, LDS and private memory, read by the translated code."""
  lds_watch = None  # a profiled dispatch's Recorder.lds, told every LDS access (numpy_memory._shared)
  def __init__(self, mem:AddressSpace, d:Dispatch, waves:int, lanes:int, nvgpr:int, wave_wg:np.ndarray, lds_size:int, private_size:int):
    self.mem, self.pgm, self.lanes = mem, d.pgm_addr, lanes
    self.S = np.zeros((256, waves), np.uint32)
    self.V = [np.zeros((waves, lanes), np.uint32)] * nvgpr  # shared zeros: registers are rebound, never written in place
    self.wave_index = np.arange(waves)
    self.wave_wg, self.lds_size = wave_wg, lds_size
    self.lds = np.zeros(max(1, (int(wave_wg.max()) + 1) * lds_size), np.uint8)
    self.private_size, self.scratch_base, self._scratch = private_size, d.scratch_base, None
    self.vgprs = min(nvgpr, allocated_vgprs(d))  # the VGPRs an M0-relative index may reach
  def scratch(self) -> np.ndarray:
    if self._scratch is None: self._scratch = np.zeros(max(1, len(self.wave_index) * self.lanes * self.private_size), np.uint8)
    return self._scratch

def _init_registers(st:State, d:Dispatch, wg_ids:np.ndarray, waves_per_wg:int):
  """User SGPRs, workgroup-ID SGPRs (gfx12: ttmp registers), packed work-item IDs in v0 and the live-lane EXEC, per
  the RSRC2 enables."""
  nuser, id_sgprs, comps = spi_setup(d.rsrc2, d.arch)
  if nuser: st.S[:nuser] = np.array([v & 0xffffffff for v in (list(d.user_data) + [0] * 32)[:nuser]], np.uint32)[:, None]
  gx, gy, _ = d.grid
  ids = wg_ids if waves_per_wg == 1 else np.repeat(wg_ids, waves_per_wg)
  xyz = (lambda: ids % gx, lambda: (ids // gx) % gy, lambda: ids // (gx * gy))
  sgpr = nuser
  for on, val in zip(id_sgprs, xyz):
    if on:
      st.S[sgpr] = val()
      sgpr += 1
  if (ttmp:=semantics.setup(d.arch).TTMP_WORKGROUP_IDS):  # gfx12: x in one ttmp register, y | z << 16 in another
    x, y, z = (f() for f in xyz)
    st.S[ttmp[0]], st.S[ttmp[1]] = x, (y & 0xffff) | (z << 16)
  v0, exec_mask = _workgroup_lanes(tuple(d.block), comps, waves_per_wg, st.lanes)
  st.V[0] = v0 if len(wg_ids) == 1 else np.tile(v0, (len(wg_ids), 1))  # read-only: registers are never written in place
  exec_mask = exec_mask.astype(np.uint64)
  st.S[126].reshape(len(wg_ids), waves_per_wg)[:] = exec_mask & 0xffffffff
  if st.lanes == WAVE64: st.S[127].reshape(len(wg_ids), waves_per_wg)[:] = exec_mask >> np.uint64(32)

@functools.lru_cache(maxsize=256)
def _workgroup_lanes(block:tuple[int, int, int], comps:int, waves_per_wg:int, lanes:int) -> tuple[np.ndarray, np.ndarray]:
  """One workgroup's v0 (work-item IDs packed x | y << 10 | z << 20, up to TIDIG_COMP_CNT) and EXEC per wave."""
  bx, by, bz = block
  t = np.arange(waves_per_wg)[:, None].astype(np.int64) * lanes + np.arange(lanes)
  x, y, z = t % bx, (t // bx) % by, t // (bx * by)
  v0 = (x | ((y << 10) if comps >= 1 else 0) | ((z << 20) if comps >= 2 else 0)).astype(np.uint32)
  v0.flags.writeable = False
  return v0, pack(t < bx * by * bz, waves_per_wg, lanes)

def _private_size(rsrc2:int, tmpring_size:int, lanes:int, arch:str) -> int:
  """Bytes of private memory per lane: the wave's COMPUTE_TMPRING_SIZE.WAVESIZE slot (in the family's units: 256 bytes
  on RDNA, 1 KiB on GFX9; as wide as its field) over its lanes."""
  if not rsrc2 & kd.COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT: return 0
  sem = semantics.setup(arch)
  return _field(tmpring_size, 12, sem.TMPRING_WAVESIZE_BITS) * sem.TMPRING_WAVESIZE_UNIT // lanes

def _budget_error(st:State, prog:Program, b:int, budget:int) -> InstructionBudgetExceeded:
  return budget_exceeded(st.pgm, budget, prog.block_pc[b])

def _run(st:State, prog:Program, waves:int, budget:int, used:int, rec=None) -> int:
  """Run every wave to s_endpgm. While all waves share one PC they run as one group with no scheduling work.
  rec: a profiled dispatch's recorder (emulators/rdna/recorder.py), told every block step."""
  (blocks, whole), lens = prog.build(st), prog.block_len
  b = 0
  while b >= 0:
    if rec is not None: rec.step(b, None)
    used += waves * lens[b]
    if used > budget: raise _budget_error(st, prog, b, budget)
    nxt = whole[b](waves)
    if isinstance(nxt, int): b = nxt
    elif (nxt == nxt[0]).all(): b = int(nxt[0])
    else: return _run_diverged(st, prog, blocks, whole, waves, nxt, budget, used, rec)
  return used

def _run_diverged(st:State, prog:Program, blocks, whole, waves:int, pc:np.ndarray, budget:int, used:int, rec=None) -> int:
  """Waves at different PCs: run the group at the lowest block; a wave at s_barrier waits until no wave can run."""
  lens, barrier = prog.block_len, prog.block_barrier
  pc = np.asarray(pc, np.int64).copy()
  waiting = np.zeros(waves, bool)
  while True:
    runnable = (pc >= 0) & ~waiting
    if not runnable.any():
      if not (pc >= 0).any(): return used
      waiting[:] = False
      continue
    b = int(pc[runnable].min())
    w = np.nonzero(runnable & (pc == b))[0]
    if rec is not None: rec.step(b, None if len(w) == waves else w)
    used += len(w) * lens[b]
    if used > budget: raise _budget_error(st, prog, b, budget)
    if len(w) == waves:  # reconverged: run as one group again, without indexing every register access
      pc[:] = whole[b](waves)
      w = slice(None)
    else: pc[w] = blocks[b](w, len(w))
    if barrier[b]: waiting[w] = True

def run_dispatch(mem:AddressSpace, d:Dispatch, recorder=None) -> DispatchStats:
  """Run dispatch d. Modelled outcomes raise as they are; any other exception becomes an EmulatorBug (see replay.py).
  recorder: a profiled dispatch's Recorder (emulators/rdna/recorder.py); the dispatch then runs on the numpy path,
  whose block steps it records (the C path runs whole waves and reports no blocks)."""
  t0 = time.perf_counter()
  if d.arch not in ARCHS: raise Unmodelled(f"RDNA executor: architecture {d.arch!r} is not implemented ({', '.join(ARCHS)})")
  check_size(d.grid, d.block)  # before anything is allocated for it (DispatchTooLarge)
  # an entered debug session (mockgpu/debug/amd.py) runs the dispatches it debugs on the stepper
  if (debugged:=events.intercepted("rdna_dispatch", mem, d)) is not None: return _launched(d, debugged)
  if d.xcc[1] > 1 and len(d.workgroup_ids()) == 0:   # an XCC with no share of a small grid fetches nothing (7 of gfx942's 8)
    return DispatchStats(0, 0, time.perf_counter() - t0)
  lanes = d.wave_size
  ftz32, ftz16 = _float_modes(d.rsrc1)
  ieee = ieee_mode(d.rsrc1, d.arch)
  mode, budget, start = native.mode(), config.instruction_budget(), replay.start_snapshot(mem)  # bad settings raise here
  prog = k = None
  try:
    waiting, t_cpu = None, time.thread_time()
    if mode == "auto" and recorder is None and not mem.checked and stencil.enabled():
      stats, waiting = _run_stencil(mem, d, ftz32, ftz16, lanes, ieee, mode, budget, t0)
      if stats is not None: return stats
    prog = load_program(mem, d.arch, d.pgm_addr, ftz32, ftz16, lanes, ieee)
    nwg, wpg, lds_size, private, chunk = _geometry(d.rsrc2, d.tmpring_size, d.block, d.grid, max(prog.nvgpr, 1), lanes, d.arch)
    wg_ids = d.workgroup_ids() if nwg else np.zeros(0, np.int64)  # this XCC's share of the workgroups
    if len(wg_ids) == 0: return DispatchStats(0, 0, time.perf_counter() - t0)
    nwg = len(wg_ids)
    c_ok = wpg <= native.MAX_WAVES_PER_GROUP and not mem.checked and recorder is None  # C checks neither permissions nor records blocks
    k = _native_kernel(prog, d.arch, ftz32, ftz16, mode, ieee) if c_ok else None
    # coverage and the C-launch counter: sent before the kernel runs, so a launch that faults in C still counts as one C ran
    events.notify("kernel_ran", isa=d.arch, code=prog.code, native=k is not None, ftz32=ftz32, ftz16=ftz16, lanes=lanes)
    if k is not None: used = native.run(k, mem, d, wpg, wg_ids, lds_size, budget, 0, private)
    else:
      t1 = time.thread_time()  # CPU seconds, as the build estimate's: a loaded machine's wall time would inflate them
      used = _run_chunks(mem, d, prog, wg_ids, wpg, lds_size, private, chunk, budget, recorder)
      prog.tier.ran(time.thread_time() - t1)
      if waiting: stencil.library.paid(time.thread_time() - t_cpu)   # its record, translation and run: the library's rent
  except (UnsupportedInstruction, KernelTrap) as e:
    e.args = (f"{e} in kernel {_kernel_symbol(d.pgm_addr)[0]}",)  # the PC alone does not say which kernel it is
    raise
  except GPUPageFault as e:
    e.add_context(kernel=kernel_name(d.pgm_addr), nearest=mem.nearest(e.va) if e.space == "global" else None)
    raise
  except InstructionBudgetExceeded as e:
    e.args = (f"kernel {kernel_name(d.pgm_addr)}: {e}",)
    raise
  except Exception as e:
    if replay.modelled(e): raise
    raise _bug(e, mem, d, prog, k, start) from e
  return _launched(d, DispatchStats(nwg * wpg, used, time.perf_counter() - t0, k is not None))

def _run_stencil(mem:AddressSpace, d:Dispatch, ftz32:bool, ftz16:bool, lanes:int, ieee:bool, mode:str, budget:int, t0:float):
  """(The dispatch's stats on the stencil tier (or the C tier, once the kernel is hot), or None where the numpy path must
  run it: a handler not built yet, or a kernel neither covers; whether the kernel waits for handlers to be built)."""
  key = (d.arch, d.pgm_addr, ftz32, ftz16, lanes, ieee)
  # no library here yet: a kernel's record is made at its second launch (one run once costs nothing); a launch shared by
  # several XCCs (gfx942's eight) is a dispatch per share, and its second launch is its next share on XCC 0
  if key not in _stencils and (key not in _programs or d.xcc[0]) and stencil.mode() == "auto" and stencil.library.core(lanes) is None:
    return None, True
  e = load_stencil(mem, d.arch, d.pgm_addr, ftz32, ftz16, lanes, ieee)
  if (sk:=e.kernel()) is None: return None, e.queued
  nwg, wpg, lds_size, private, _ = _geometry(d.rsrc2, d.tmpring_size, d.block, d.grid, max(sk.nvgpr, 1), lanes, d.arch)
  if wpg > native.MAX_WAVES_PER_GROUP: return None, False
  wg_ids = d.workgroup_ids() if nwg else np.zeros(0, np.int64)
  if len(wg_ids) == 0: return DispatchStats(0, 0, time.perf_counter() - t0, True, True), False
  def build(key:str):
    from mockgpu.compiler.rdna import decode
    return native.translate(decode.blocks(decode.walk(e.code, d.arch)), ftz32, ftz16, d.arch, lanes, ieee, key)
  k = e.tier.native(mode, lambda: native.key(e.code, d.arch, ftz32, ftz16, lanes, ieee), build, native.cached)
  events.notify("kernel_ran", isa=d.arch, code=e.code, native=True, ftz32=ftz32, ftz16=ftz16, lanes=lanes)
  t1 = time.thread_time()
  used = native.run(k or sk, mem, d, wpg, wg_ids, lds_size, budget, 0, private)
  if k is None: e.tier.ran(time.thread_time() - t1)
  return _launched(d, DispatchStats(len(wg_ids) * wpg, used, time.perf_counter() - t0, True, k is None)), False

def _launched(d:Dispatch, stats:DispatchStats) -> DispatchStats:
  """The dispatch's stats, also told to the `launch` listeners (the launch counters)."""
  events.notify("launch", isa=d.arch, groups=stats.waves, instructions=stats.wave_instructions, seconds=stats.seconds, thread_instructions=None)
  return stats

# *** naming an internal error (replay.py) ***

def _bug(e:Exception, mem:AddressSpace, d:Dispatch, prog:Program|None, k, start):
  symbol, lib = _kernel_symbol(d.pgm_addr)
  where = _where_c(d) if k is not None else _where_numpy(e, d, prog)
  return replay.bug(e, vendor=f"AMD {d.arch}", symbol=symbol, path="C" if k is not None else "numpy", where=where,
                    grid=d.grid, block=d.block, launch={"dispatch": dataclasses.asdict(d)}, mem=mem, start=start, code_object=lib)

def _kernel_symbol(pgm:int) -> tuple[str, bytes|None]:
  """The kernel's name and code object (ELF) from tinygrad's program object whose entry is pgm; the dispatch
  registers hold only the entry PC."""
  o = _program_object(pgm)
  return (kernel_name(pgm), getattr(o, "lib", None)) if o is not None else (f"kernel@0x{pgm:x}", None)

def _program_object(pgm:int):
  """tinygrad's program object whose entry is pgm, or None. Searched for only after an error or while tracing (it
  walks the garbage collector's objects)."""
  if (hcq:=sys.modules.get("tinygrad.runtime.support.hcq")) is not None:
    for o in gc.get_objects():
      if isinstance(o, hcq.HCQProgram) and getattr(o, "prog_addr", None) == pgm: return o
  return None

_names:dict[int, tuple[str, object]] = {}  # entry PC -> (kernel name, weak reference to tinygrad's program object)

def kernel_name(pgm:int) -> str:
  """The name of the kernel whose entry is pgm (for the trace and fault reports): tinygrad's program name, found once
  per program object; while that object lives its code allocation cannot hold another kernel."""
  if (hit:=_names.get(pgm)) is not None and hit[1] is not None and hit[1]() is not None: return hit[0]
  if (o:=_program_object(pgm)) is None: return f"kernel@0x{pgm:x}"
  _names[pgm] = (name:=str(getattr(o, "name", f"kernel@0x{pgm:x}")), weakref.ref(o))
  return name

def resources(d:Dispatch) -> tuple[int, int]:
  """(LDS bytes per workgroup, private (scratch) bytes per lane) that the dispatch's RSRC2 and TMPRING_SIZE give."""
  return _memory_sizes(d.rsrc2, d.tmpring_size, d.wave_size, d.arch)

def _memory_sizes(rsrc2:int, tmpring_size:int, lanes:int, arch:str) -> tuple[int, int]:
  lds = _field(rsrc2, kd.COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE_SHIFT, kd.COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE_WIDTH) * LDS_GRANULE
  return lds, _private_size(rsrc2, tmpring_size, lanes, arch)

def _where_c(d:Dispatch) -> str:
  return (f"PC not known: the C path runs whole waves and stops at an instruction only on a fault, a budget stop or an "
          f"unsupported instruction; the error came from its bridge (kernel entry PC 0x{d.pgm_addr:x})")

def _where_numpy(e:Exception, d:Dispatch, prog:Program|None) -> str:
  """The instruction the numpy path was at: the translated code's line in the traceback, mapped back to its PC."""
  if prog is None: return f"translating the kernel at PC 0x{d.pgm_addr:x}: no instruction ran"
  if (frame:=replay.generated_frame(e)) is None:
    return f"PC not known: raised outside the translated code (kernel entry PC 0x{d.pgm_addr:x})"
  fn, line = frame
  from mockgpu.compiler.rdna import decode
  try:
    insts = decode.walk(prog.code, d.arch)
    pc = replay.tagged_line(_annotating()(decode.blocks(insts), *_float_modes(d.rsrc1), d.arch, prog.lanes,
                                        ieee_mode(d.rsrc1, d.arch)).source(), line, "pc")
  except Exception: pc = None  # naming the instruction must not hide the error itself
  if pc is not None and pc in insts:
    return f"PC 0x{d.pgm_addr + pc:x} (kernel offset 0x{pc:x}): {decode.describe(insts[pc])}"
  if (blk:=re.fullmatch(r"_(?:blk|all)(\d+)", fn)) is not None:  # backends/numpy.py's block functions
    start = prog.block_pc[int(blk.group(1))]
    return f"the block at PC 0x{d.pgm_addr + start:x} (kernel offset 0x{start:x}); which of its instructions is not known"
  return f"PC not known: raised in the translated code's {fn} (kernel entry PC 0x{d.pgm_addr:x})"

@functools.cache
def _annotating() -> type:
  """The translator with every line it emits tagged with its instruction's offset (`# @pc N`): the traceback's line
  in the translated code then names the instruction. The lines are the same as the cached translation's. Made at the
  first error that needs it (the translator's import is the cache miss's, see the imports)."""
  from mockgpu.compiler.rdna.backends.numpy import Translator
  class _Annotating(Translator):
    def block(self, b):
      self.pc = b.start
      super().block(b)
    def out(self, line:str): super().out(f"{line}  # @pc {self.pc}")
  return _Annotating

@functools.lru_cache(maxsize=1024)
def _geometry(rsrc2:int, tmpring_size:int, block:tuple, grid:tuple, nvgpr:int, lanes:int, arch:str) -> tuple[int, int, int, int, int]:
  """(workgroups, waves per workgroup, LDS bytes, private bytes per lane, workgroups per chunk) of a dispatch;
  no workgroups when the grid or the block is empty."""
  bx, by, bz = block
  gx, gy, gz = grid
  threads, nwg = bx * by * bz, gx * gy * gz
  if threads == 0: nwg = 0
  wpg = -(-threads // lanes)
  lds_size, private = _memory_sizes(rsrc2, tmpring_size, lanes, arch)
  wave_bytes = lanes * (4 * (nvgpr + 8) + private)  # VGPRs (plus temporaries) and private memory of one wave
  per_wg = max(1, wpg * wave_bytes + lds_size)
  chunk = max(1, min(max(CACHE_CHUNK_BYTES // per_wg, MIN_CHUNK_WAVES // max(wpg, 1)), MAX_CHUNK_BYTES // per_wg))
  return nwg, wpg, lds_size, private, chunk

def stepper(mem:AddressSpace, d:Dispatch, workgroup:int=0, wave:int=0, nvgpr:int|None=None, like:Stepper|None=None) -> Stepper:
  """The reference stepper (compiler/rdna/backends/stepper.py) for one wave of dispatch d, its registers set up as the
  SPI sets them for the numpy and C paths; the wave has an LDS of its own (a one-wave workgroup's is the same). Its
  register file holds 256 VGPRs, and CDNA's AGPRs after them (from operands.AGPR). like: another wave's stepper of the
  same dispatch, whose decoded code this one shares."""
  from mockgpu.compiler.rdna.backends.stepper import Stepper, WaveState  # the debugger's: imported when it asks
  from mockgpu.compiler.rdna import decode
  from mockgpu.compiler.rdna.operands import AGPR
  lanes = d.wave_size
  nvgpr = nvgpr or (AGPR + 256 if semantics.setup(d.arch).GFX9 else 256)
  ftz32, ftz16 = _float_modes(d.rsrc1)
  nwg, wpg, lds_size, private, _ = _geometry(d.rsrc2, d.tmpring_size, d.block, d.grid, nvgpr, lanes, d.arch)
  st = State(mem, d, wpg, lanes, nvgpr, np.zeros(wpg, np.int64), lds_size, private)
  _init_registers(st, d, np.array([workgroup]), wpg)
  state = WaveState(st.S[:, wave].copy(), np.stack([st.V[r][wave] for r in range(nvgpr)]), np.zeros(lds_size, np.uint8),
                    scratch=np.zeros((lanes, private), np.uint8))
  code = b"" if like is not None else _code_window(mem, d.pgm_addr)
  return Stepper(code[:decode.extent(decode.walk(code, d.arch))] if like is None else b"", arch=d.arch, lanes=lanes, state=state,
                 mem=mem, pgm=d.pgm_addr, ftz32=ftz32, ftz16=ftz16, scratch_base=d.scratch_base, ieee=ieee_mode(d.rsrc1, d.arch),
                 like=like, vgprs=allocated_vgprs(d))

def _run_chunks(mem:AddressSpace, d:Dispatch, prog:Program, wg_ids:np.ndarray, wpg:int, lds_size:int, private:int, chunk:int,
                budget:int, rec=None) -> int:
  """The numpy path: the workgroups (linear IDs wg_ids) in chunks, all waves of a chunk advancing together."""
  used = 0
  for g0 in range(0, len(wg_ids), chunk):
    ids = wg_ids[g0:g0 + chunk]
    waves = len(ids) * wpg
    st = State(mem, d, waves, prog.lanes, max(prog.nvgpr, 1), np.repeat(np.arange(len(ids)), wpg), lds_size, private)
    _init_registers(st, d, ids, wpg)
    if rec is not None:
      rec.chunk(prog, ids, wpg)
      st.lds_watch = rec.lds
    try:
      with watching():  # IEEE results (inf, NaN, wrapping) are the point; numpy must not warn
        used = _run(st, prog, waves, budget, used, rec)
    except GPUPageFault as e:
      if (w:=getattr(e, "chunk_wave", None)) is not None: e.add_context(workgroup=d.workgroup(int(ids[w // wpg])), wave=w % wpg)
      raise
    except InstructionBudgetExceeded as e:
      e.args = (f"{e}; running: workgroups {d.workgroup(int(ids[0]))} to {d.workgroup(int(ids[-1]))}",)
      raise
  return used
