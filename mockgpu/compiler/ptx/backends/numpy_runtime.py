"""What translated kernels call at run time: the launch environment, memory spaces and bit-level helpers.

A value in a translated kernel is a numpy array with one element per thread of the batch, or a numpy scalar when it is
the same for every thread (constants, parameters, loop counters): scalars keep uniform work O(1).
State-space addresses: .shared and .local addresses are offsets in the CTA's (thread's) window; generic addresses of
those windows (cvta) carry a window tag in the top bits; module-scope .global/.const variables live in a window of
their own; every other generic address is a global one and goes through the device's AddressSpace.
"""
from __future__ import annotations
import functools
import numpy as np
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded, KernelTrap, MockGPUError  # noqa: F401 (KernelTrap: the PTX layer names it here)
from mockgpu.memory import outside
from mockgpu.compiler.ptx.types import np_dtype
from mockgpu.compiler.ptx.layout import SHARED_WINDOW, LOCAL_WINDOW, MODULE_WINDOW, CONST_WINDOW, WINDOW_MASK, LOW_BITS, LOWEST_WINDOW
from mockgpu.compiler.ptx.backends.collective import Collective

_LOW = np.uint64(LOW_BITS)
U64 = np.uint64


class BatchShape:
  """Per-thread index arrays of a batch of `nctas` CTAs of `block` threads in warps of `warp` (the board's warp_size);
  shared by every such batch of a launch."""
  def __init__(self, block:tuple, nctas:int, warp:int):
    self.block, self.nctas, self.warp = block, nctas, warp
    self.tpc = tpc = block[0] * block[1] * block[2]
    self.n = tpc * nctas
    lin = np.arange(tpc, dtype=np.uint32)
    self.cta = np.int64(0) if nctas == 1 else np.repeat(np.arange(nctas, dtype=np.int64), tpc)
    self.cta_u32 = np.uint32(0) if nctas == 1 else self.cta.astype(np.uint32)
    self.lin = lin if nctas == 1 else np.tile(lin, nctas)
    bx, by = np.uint32(block[0]), np.uint32(block[1])
    z = np.uint32(0)
    self.tid = (self.lin, z, z) if block[1] == block[2] == 1 else (self.lin % bx, (self.lin // bx) % by, self.lin // (bx * by))
    self.laneid = self.lin % np.uint32(warp) if tpc > warp or nctas > 1 else self.lin
    self.warpid = self.lin // np.uint32(warp)
  # the warp structure is only needed by divergent blocks and warp-wide instructions
  @functools.cached_property
  def thread(self): return np.arange(self.n, dtype=np.int64)
  @functools.cached_property
  def warp_starts(self): return np.flatnonzero(self.laneid == 0)
  @functools.cached_property
  def warp_of(self): return np.cumsum(self.laneid == 0) - 1
  @functools.cached_property
  def lane_base(self): return self.thread - self.laneid.astype(np.int64)
  @functools.cached_property
  def warp_size(self): return np.diff(np.append(self.warp_starts, self.n))[self.warp_of]

class Env(Collective):
  """One batch of CTAs of a launch: thread ids, memories and counters."""
  def __init__(self, mem, kernel, module_mem, grid, shape:BatchShape, first_cta:int, params:bytes, dynamic_shared:int, budget:int,
               counters:list):
    self.mem, self.kernel, self.module_mem, self.params = mem, kernel, module_mem, params
    self.grid, self.block, self.budget, self.counters, self.shape = grid, shape.block, budget, counters, shape
    self.n, self.cta, self.tid, self.laneid, self.warpid = shape.n, shape.cta, shape.tid, shape.laneid, shape.warpid
    c = shape.cta_u32 + np.uint32(first_cta)
    gx, gy = np.uint32(grid[0]), np.uint32(grid[1])
    z = np.uint32(0)
    self.ctaid = (c, z, z) if grid[1] == grid[2] == 1 else (c % gx, (c // gx) % gy, c // (gx * gy))
    self.ntid = tuple(np.uint32(x) for x in shape.block)
    self.nctaid = tuple(np.uint32(x) for x in grid)
    self.nwarpid = np.uint32(-(-shape.tpc // shape.warp))
    self.nwarps = shape.nctas * -(-shape.tpc // shape.warp)
    self.smid, self.nsmid, self.gridid = np.uint32(0), np.uint32(1), np.uint64(0)
    self.shared_bytes = kernel.dynamic_base + dynamic_shared if dynamic_shared else kernel.shared_size
    self.dynamic_smem_size, self.total_smem_size = np.uint32(dynamic_shared), np.uint32(self.shared_bytes)
    self.shared = np.zeros((shape.nctas, _align(max(self.shared_bytes, 1), 16)), np.uint8)
    self.local_bytes = kernel.local_size
    self.local = np.zeros((self.n, _align(kernel.local_size, 16)), np.uint8) if kernel.local_size else None

  thread = property(lambda self: self.shape.thread)
  warp_starts = property(lambda self: self.shape.warp_starts)
  warp_of = property(lambda self: self.shape.warp_of)
  lane_base = property(lambda self: self.shape.lane_base)
  warp_size = property(lambda self: self.shape.warp_size)

  def lanemask(self, kind:str):
    lane = self.laneid.astype(np.uint64)
    eq = np.uint64(1) << lane
    m = {"eq": eq, "lt": eq - np.uint64(1), "le": (eq << np.uint64(1)) - np.uint64(1)}
    m["gt"], m["ge"] = ~m["le"], ~m["lt"]
    return (m[kind] & np.uint64(0xffffffff)).astype(np.uint32)

  # *** counters ***

  def tick(self, ninstr:int, m=None, block:int=-1):
    """Account one block's execution: warp-instructions for the budget, thread-instructions for the stats. `block`
    (its index) is for a traced launch (TracedEnv)."""
    if m is None: warps, threads = self.nwarps, self.n
    else: warps, threads = int(np.count_nonzero(np.logical_or.reduceat(m, self.warp_starts))), int(np.count_nonzero(m))
    c = self.counters
    c[0] += ninstr * warps
    c[1] += ninstr * threads
    if c[0] > self.budget:
      raise InstructionBudgetExceeded(f"PTX kernel {self.kernel.name} ran past {self.budget} warp-instructions (MOCKGPU_BUDGET)")

  def clock(self, bits:int, k:int):
    """%clock/%clock64/%globaltimer: warp-instructions executed so far (monotonic, like a cycle counter); k is the
    instruction's index in its block, so reads within one block advance too."""
    v = self.counters[0] + k
    return np.uint32(v & 0xffffffff) if bits == 32 else np.uint64(v)

  # *** parameters ***

  def param(self, off:int, dt:np.dtype, where:str):
    if off < 0 or off + dt.itemsize > len(self.params):
      raise GPUPageFault(off, dt.itemsize, False, f"{where} (param space of {len(self.params)} bytes)", "param")
    return np.frombuffer(self.params, dt, 1, off)[0]

  # *** per-CTA and per-thread memories ***

  def _flat(self, space:str, a, nbytes:int, m, write:bool, where:str):
    """The flat byte array of a shared/local space and the indices in it of state-space offsets `a` (active lanes)."""
    a = np.asarray(a, U64) & _LOW
    if space == "shared": size, owner, store = self.shared_bytes, self.cta, self.shared
    else: size, owner, store = self.local_bytes, self.thread, self.local
    if store is None: raise GPUPageFault(int(np.max(a)), nbytes, write, f"{where} (the kernel has no .local memory)", "local")
    if m is not None:
      a = np.broadcast_to(a, (self.n,))[m]
      owner = np.broadcast_to(owner, (self.n,))[m]
    if a.size and (bad := np.atleast_1d(outside(a, nbytes, size))).any():   # a uniform address is 0-d
      raise GPUPageFault(int(np.broadcast_to(a, bad.shape)[np.argmax(bad)]), nbytes, write, f"{where} ({space} window of {size} bytes)", space)
    return store.reshape(-1), owner * store.shape[1] + a.astype(np.int64)

  def ld_space(self, space:str, a, dt:np.dtype, nvec:int, m, where:str):
    flat, idx = self._flat(space, a, dt.itemsize * nvec, m, False, where)
    n = dt.itemsize
    if not (idx % n).any():
      typed, base = flat.view(dt), idx // n
      return [typed[base + i] for i in range(nvec)]
    # a misaligned access, read byte by byte; a uniform one (idx 0-d: one address for every lane) stays one value per
    # component, as the aligned path gives it, not a 1-element array (which no mask of the batch's lanes can index)
    uniform = np.ndim(idx) == 0
    idx = np.atleast_1d(idx)
    vals = flat[idx[:, None] + np.arange(n * nvec)].view(dt).reshape(len(idx), nvec)
    return [vals[0, i] for i in range(nvec)] if uniform else [vals[:, i] for i in range(nvec)]

  def st_space(self, space:str, a, vals:list, dt:np.dtype, m, where:str):
    flat, idx = self._flat(space, a, dt.itemsize * len(vals), m, True, where)
    idx = np.broadcast_to(idx, (self.n,) if m is None else (int(np.count_nonzero(m)),))
    if not len(idx): return
    n = dt.itemsize
    if not (idx % n).any():
      typed, base = flat.view(dt), idx // n
      for i, v in enumerate(vals): typed[base + i] = _lanes(v, m, self.n)
      return
    data = self._pack(vals, dt, m, len(idx))
    flat[idx[:, None] + np.arange(n * len(vals))] = data.view(np.uint8).reshape(len(idx), -1)

  def ld_const(self, a, dt:np.dtype, nvec:int, m, where:str):
    a = np.asarray(a, U64) & _LOW
    uniform = a.ndim == 0
    if not uniform and m is not None: a = a[m]
    out = self.module_mem.consts.load(a, dt, nvec, where)
    return [o[0] for o in out] if uniform else out

  # *** global (generic) memory ***

  def ld_global(self, a, dt:np.dtype, nvec:int, m, where:str):
    """Generic/global load: values for the active lanes (a scalar per component when the address is uniform)."""
    try: return self._ld_global(a, dt, nvec, m, where)
    except GPUPageFault as e: raise self.thread_fault(e, a, dt.itemsize * nvec, m) from None

  def thread_fault(self, e:GPUPageFault, a, nbytes:int, m) -> GPUPageFault:
    """A global access that faulted, named by the first active thread whose whole access (nbytes: 16 for a .v4.f32)
    misses every allocation: its address, its CTA and thread. A fault in a state-space window keeps its own report."""
    a = np.broadcast_to(np.asarray(a, U64), (self.n,))
    glob = (a < U64(LOWEST_WINDOW)) if m is None else (np.asarray(m, bool) & (a < U64(LOWEST_WINDOW)))
    bad = np.zeros(self.n, bool)
    bad[glob] = self.mem.unmapped(a[glob], nbytes)
    if not bad.any(): return e
    i = int(np.argmax(bad))
    def at(xyz): return tuple(int(np.broadcast_to(c, (self.n,))[i]) for c in xyz)
    return GPUPageFault(int(a[i]), nbytes, e.write, e.where, cta=at(self.ctaid), thread=at(self.tid))

  def _ld_global(self, a, dt:np.dtype, nvec:int, m, where:str):
    a = np.asarray(a, U64)
    if a.ndim == 0:
      if m is not None and not m.any(): return [np.zeros(0, dt)] * nvec
      if int(a) < LOWEST_WINDOW: return [o[0] for o in self._gather(a.reshape(1), dt, nvec, where)]
      a = np.broadcast_to(a, (self.n,))
    act_a = a if m is None else a[m]
    if not act_a.size: return [np.zeros(0, dt)] * nvec
    lo, hi = int(_MIN(act_a)), int(_MAX(act_a))
    if hi < LOWEST_WINDOW: return self._gather(act_a, dt, nvec, where, lo, hi)
    tags = a & U64(WINDOW_MASK)
    act = np.ones(self.n, bool) if m is None else m
    out = [np.zeros(self.n, dt) for _ in range(nvec)]
    for tag in np.unique(tags[act]):
      sel = act & (tags == tag)
      space = self._window_of(int(tag))
      if space is None: part = self._gather(a[sel], dt, nvec, where)
      elif isinstance(space, str): part = self.ld_space(space, a, dt, nvec, sel, where)
      else: part = space.load(a[sel] & _LOW, dt, nvec, where)
      for o, p in zip(out, part): o[sel] = p
    return out if m is None else [o[m] for o in out]

  def ld_rows(self, a, count:int, dt:np.dtype, m):
    """The prefetch of a fused cluster of loads (compiler/ptx/backends/numpy_fuse.py): the `count` dt elements at a of each active
    lane, as a (count, lanes) array whose rows are contiguous, or None when the cluster cannot be read at once (a
    uniform or small access, not global memory, not inside one allocation); the loads then run one by one."""
    a = np.asarray(a, U64)
    if a.ndim == 0: return None
    if m is not None: a = a[m]
    if a.size < 64: return None
    span, lo, hi = count * dt.itemsize, int(_MIN(a)), int(_MAX(a))
    if hi >= LOWEST_WINDOW or not self.mem.is_mapped(lo, hi - lo + span): return None
    view = self.mem.view(lo, hi - lo + span)
    if (step := _stride(a, lo, hi, 1)) is not None: rows = np.lib.stride_tricks.as_strided(view, (a.size, span), (step, 1))
    else: rows = _take_rows(view, (a - U64(lo)).view(np.int64), span)
    return _transpose(rows, count, dt)

  def ld_group(self, a, offsets:tuple, dt:np.dtype, nvec:int, m):
    """The read of a group of loads (compiler/ptx/backends/numpy_fuse.py): the nvec dt elements at a + k of each active
    lane for each offset k, as a (loads, nvec, lanes) array whose rows are contiguous; or None when the group cannot
    be read at once (a uniform address, not global memory, not inside one allocation, misaligned): the loads then run
    one by one, each checked and faulting as itself."""
    a = np.asarray(a, U64)
    if a.ndim == 0: return None
    if m is not None: a = a[m]
    if not a.size: return None
    nb, kmin = dt.itemsize * nvec, min(offsets)
    base = int(_MIN(a))
    lo, hi = base + kmin, int(_MAX(a)) + max(offsets) + nb
    if lo < 0 or hi > LOWEST_WINDOW or not self.mem.is_mapped(lo, hi - lo): return None
    rel = (a - U64(base)).view(np.int64)
    if (int(np.bitwise_or.reduce(rel)) | functools.reduce(int.__or__, (k - kmin for k in offsets))) % nb: return None
    idx = _div(rel, nb) + np.array([(k - kmin) // nb for k in offsets], np.int64)[:, None]
    vals = self.mem.view(lo, hi - lo).view(_void(nb)).take(idx).view(dt).reshape(len(offsets), a.size, nvec)
    return vals.transpose(0, 2, 1).copy()

  def st_global(self, a, vals:list, dt:np.dtype, m, where:str):
    try: return self._st_global(a, vals, dt, m, where)
    except GPUPageFault as e: raise self.thread_fault(e, a, dt.itemsize * len(vals), m) from None

  def _st_global(self, a, vals:list, dt:np.dtype, m, where:str):
    a = np.asarray(a, U64)
    if a.ndim == 0: a = np.broadcast_to(a, (self.n,))
    act_a = a if m is None else a[m]
    if not act_a.size: return
    lo, hi = int(_MIN(act_a)), int(_MAX(act_a))
    if hi < LOWEST_WINDOW: return self._scatter(act_a, [_lanes(v, m, self.n) for v in vals], dt, where, lo, hi)
    tags = a & U64(WINDOW_MASK)
    act = np.ones(self.n, bool) if m is None else m
    full = [bcast(v, self.n) for v in vals]
    for tag in np.unique(tags[act]):
      sel = act & (tags == tag)
      space = self._window_of(int(tag))
      if space is None: self._scatter(a[sel], [v[sel] for v in full], dt, where)
      elif isinstance(space, str): self.st_space(space, a, full, dt, sel, where)
      elif space is self.module_mem.consts:
        raise GPUPageFault(int(a[sel][0]), dt.itemsize * len(vals), True, f"{where} (.const is read-only)", "module")
      else: space.store(a[sel] & _LOW, self._pack(full, dt, sel, int(sel.sum())), where)

  def _pack(self, vals:list, dt:np.dtype, m, count:int) -> np.ndarray:
    data = np.empty((count, len(vals)), dt)
    for i, v in enumerate(vals): data[:, i] = _lanes(v, m, self.n)
    return data

  def _window_of(self, tag:int):
    """None for global memory, a space name for the shared/local windows, a _Window for module variables."""
    if tag == 0: return None
    if tag == SHARED_WINDOW: return "shared"
    if tag == LOCAL_WINDOW: return "local"
    if tag == MODULE_WINDOW: return self.module_mem.globals
    if tag == CONST_WINDOW: return self.module_mem.consts
    return None

  def _gather(self, a:np.ndarray, dt:np.dtype, nvec:int, where:str, lo:int|None=None, hi:int|None=None) -> list:
    nb, n = dt.itemsize * nvec, dt.itemsize
    if a.size == 0: return [np.zeros(0, dt)] * nvec
    if lo is None: lo, hi = int(_MIN(a)), int(_MAX(a))
    if not self.mem.is_mapped(lo, hi - lo + nb): return [self.mem.load(a + U64(i * n), dt, where) for i in range(nvec)]
    # fast paths: every lane inside one allocation
    view = self.mem.view(lo, hi - lo + nb, False, where)
    if lo % n == 0 and (hi - lo) % n == 0:
      typed = view.view(dt)
      if (step := _stride(a, lo, hi, n)) is not None:   # lane i at lo + i*step: strided copies, no gather
        if step == 0: return [np.full(a.size, typed[i]) for i in range(nvec)]
        if step <= 2 * nvec:   # dense: one contiguous copy, lanes as strided views of it
          block = typed[:step * (a.size - 1) + nvec].copy()
          return [block[i::step][:a.size] for i in range(nvec)]
        if nvec == 1: return [typed[:step * (a.size - 1) + 1:step].copy()]
        # one strided copy of whole vectors reads each lane's cache line once (a copy per component would read it nvec times)
        return _columns(np.lib.stride_tricks.as_strided(typed, (a.size, nvec), (step * n, n), writeable=False).copy())
      off = (a - U64(lo)).view(np.int64)   # in [0, hi - lo]: the view is exact
      align = int(np.bitwise_or.reduce(off))
      if not align % nb:   # whole vectors: one take of nb-byte items (far cheaper than fancy-indexing rows)
        rows = view.view(_void(nb)).take(_div(off, nb)).view(dt).reshape(a.size, nvec)
        return _columns(rows)
      if not align % n:
        base = _div(off, n)
        return [typed.take(base + i if i else base) for i in range(nvec)]
    off = (a - U64(lo)).view(np.int64)
    vals = view[off[:, None] + np.arange(nb)].view(dt).reshape(a.size, nvec)
    return [vals[:, i].copy() for i in range(nvec)]

  def _scatter(self, a:np.ndarray, cols:list, dt:np.dtype, where:str, lo:int|None=None, hi:int|None=None):
    """Store cols[i] (values or scalars for the lanes of a) at a + i*itemsize; on a collision the highest lane wins."""
    nvec, n = len(cols), dt.itemsize
    nb = n * nvec
    if lo is None: lo, hi = int(_MIN(a)), int(_MAX(a))
    if not self.mem.is_mapped(lo, hi - lo + nb):
      for i, c in enumerate(cols): self.mem.store(a + U64(i * n), np.ascontiguousarray(np.broadcast_to(np.asarray(c, dt), a.shape)), where)
      return
    view = self.mem.view(lo, hi - lo + nb, True, where)
    if lo % n == 0 and (hi - lo) % n == 0:
      typed = view.view(dt)
      if (step := _stride(a, lo, hi, n)) is not None:
        for i, c in enumerate(cols):
          if step: typed[i:i + step * (a.size - 1) + 1:step] = c
          else: typed[i] = c if np.ndim(c) == 0 else c[-1]
        return
      off = (a - U64(lo)).view(np.int64)
      if not (np.bitwise_or.reduce(off) % n):
        base = _div(off, n)
        for i, c in enumerate(cols): typed[base + i if i else base] = c
        return
    off = (a - U64(lo)).view(np.int64)
    data = np.empty((a.size, nvec), dt)
    for i, c in enumerate(cols): data[:, i] = c
    view[off[:, None] + np.arange(nb)] = data.view(np.uint8).reshape(a.size, nb)

def fault_context(e:GPUPageFault, mem, kernel) -> GPUPageFault:
  """A launch's fault names its kernel and, for global memory, the nearest allocation (both paths and the stepper)."""
  return e.add_context(kernel=kernel.name, nearest=mem.nearest(e.va) if e.space == "global" else None)

class JournalEnv(Env):
  """The environment of the reference stepper (compiler/ptx/backends/stepper.py): one CTA, whose every write is
  journaled first, so a step can be undone exactly: the old bytes of the global memory a store or atomic overwrites,
  and a copy of the shared, local or module window it writes. A journal entry is ("global", address, old bytes, the
  thread that wrote there last) or ("window", array, old contents, None)."""
  journal: list|None = None

  def fault_context(self, e:GPUPageFault, thread:int|None) -> GPUPageFault:
    """The launch's context of a fault (fault_context), with this CTA and the thread (its %tid) that faulted."""
    tid = None if thread is None else tuple(int(np.broadcast_to(t, (self.n,))[thread]) for t in self.tid)
    cta = tuple(int(np.atleast_1d(c)[0]) for c in self.ctaid)   # one CTA: each id is one value
    return fault_context(e, self.mem, self.kernel).add_context(cta=cta, thread=tid)

  def begin_journal(self): self.journal = []
  def end_journal(self) -> list:
    j, self.journal = self.journal or [], None
    return j
  def restore(self, journal:list):
    for kind, where, old, _ in reversed(journal):
      if kind == "global": self.mem.write(where, old)
      else: where[...] = old

  def _keep_window(self, arr):
    if self.journal is not None and arr is not None: self.journal.append(("window", arr, arr.copy(), None))
  def _keep_global(self, a, nbytes:int, m):
    """The old bytes at each active lane's global address (a tagged one is a window's: all of it is kept)."""
    if self.journal is None: return
    a = np.broadcast_to(np.asarray(a, U64), (self.n,))
    threads = np.arange(self.n) if m is None else np.flatnonzero(m)
    act = a if m is None else a[m]
    glob = act < U64(LOWEST_WINDOW)
    vas, last = np.unique(act[glob][::-1], return_index=True)   # the highest thread writing an address wins
    for va, t in zip(vas.tolist(), threads[glob][::-1][last].tolist()):
      if self.mem.is_mapped(va, nbytes): self.journal.append(("global", va, self.mem.read(va, nbytes), t))
    if not glob.all():
      for arr in (self.shared, self.local, self.module_mem.globals.data): self._keep_window(arr)

  def st_space(self, space:str, a, vals:list, dt:np.dtype, m, where:str):
    self._keep_window(self.shared if space == "shared" else self.local)
    super().st_space(space, a, vals, dt, m, where)
  def st_global(self, a, vals:list, dt:np.dtype, m, where:str):
    self._keep_global(a, dt.itemsize * len(vals), m)
    super().st_global(a, vals, dt, m, where)
  def atomic(self, space:str, op:str, t:str, a, vals:list, m, where:str):
    if space == "shared": self._keep_window(self.shared)
    else: self._keep_global(a, np_dtype(t).itemsize, m)
    return super().atomic(space, op, t, a, vals, m, where)

# the ufuncs' reductions (a.min() adds ~0.5 us of Python around one: a fifth of a small load)
_MIN, _MAX = np.minimum.reduce, np.maximum.reduce

@functools.cache
def _void(n:int) -> np.dtype:
  """The n-byte void dtype that a whole vector is taken as (built once: parsing "V16" costs ~1 us a load)."""
  return np.dtype(f"V{n}")

def _stride(a:np.ndarray, lo:int, hi:int, n:int) -> int|None:
  """The element step s if lane i's address is lo + i*s*n (s >= 0), else None (also for small accesses: not worth it)."""
  cnt = a.size
  if cnt == 1: return 1
  if cnt < 256: return None
  span = hi - lo
  if span % (cnt - 1) or (span // (cnt - 1)) % n or int(a[0]) != lo: return None
  s = span // (cnt - 1)
  if s == 0: return 0
  return s // n if (np.diff(a) == U64(s)).all() else None

_CHUNK = 1 << 15   # bytes of lanes x span staged at once by _transpose: they stay in L1/L2 for the transposing copy

def _transpose(rows:np.ndarray, count:int, dt:np.dtype) -> np.ndarray:
  """(lanes, count*itemsize) bytes -> (count, lanes) dt, contiguous. Staged through a small buffer a few hundred lanes
  at a time: one transposing copy straight from memory (each element a different cache line) is 3-4x slower."""
  lanes = rows.shape[0]
  out = np.empty((count, lanes), dt)
  c = max(16, _CHUNK // rows.shape[1])
  stage = np.empty((min(c, lanes), count), dt)
  for s in range(0, lanes, c):
    part = stage[:min(c, lanes - s)]
    np.copyto(part.view(np.uint8), rows[s:s + c])
    out[:, s:s + c] = part.T
  return out

def _take_rows(view:np.ndarray, off:np.ndarray, span:int) -> np.ndarray:
  """view[off[i] : off[i] + span] for each lane i, as a (lanes, span) uint8 array: one take in the widest unit (up to
  16 bytes) that divides every offset and the span."""
  g = 16
  while (int(np.bitwise_or.reduce(off)) | span | view.size) % g: g //= 2
  idx = _div(off, g)[:, None] + np.arange(span // g)
  return (view.view(_void(g)) if g > 1 else view).take(idx).view(np.uint8).reshape(off.size, span)

def _align(x:int, a:int) -> int: return (x + a - 1) // a * a

def _columns(rows:np.ndarray) -> list:
  """The components of loaded vectors as contiguous arrays: every later instruction reads them at full speed (a
  strided operand costs numpy about twice as much, and a loaded value is typically read several times). One
  transposing copy, its rows the components (a copy per component cost 0.6 us more on a 256-lane .v4 load)."""
  return [rows.reshape(-1)] if rows.shape[1] == 1 else list(rows.T.copy())

def _div(off:np.ndarray, n:int) -> np.ndarray:
  """off // n for non-negative offsets; a shift for the power-of-two sizes of every load and store."""
  return off >> np.int64(n.bit_length() - 1) if n & (n - 1) == 0 else off // n

def _lanes(v, m, n:int=0):
  """A value for the active lanes (all lanes when m is None)."""
  if np.ndim(v) == 0: return v
  return v if m is None else v[m]

class ModuleMemory:
  """Module-scope .global (writable) and .const variables of one loaded module, shared by its launches."""
  def __init__(self, gsize:int, ginit:bytes, csize:int, cinit:bytes):
    self.globals, self.consts = _Window("global", gsize, ginit), _Window("const", csize, cinit)

class _Window:
  def __init__(self, name:str, size:int, init:bytes):
    self.name, self.data = name, np.zeros(max(size, 1), np.uint8)
    self.size = size
    self.data[:len(init)] = np.frombuffer(init, np.uint8)
  def _idx(self, off:np.ndarray, nbytes:int, write:bool, where:str):
    off = np.asarray(off, U64).reshape(-1)
    if off.size and (bad := outside(off, nbytes, self.size)).any():
      raise GPUPageFault(int(off[np.argmax(bad)]), nbytes, write, f"{where} (module .{self.name} variables, {self.size} bytes)", "module")
    return off.astype(np.int64)[:, None] + np.arange(nbytes)
  def load(self, off, dt, nvec, where):
    idx = self._idx(off, dt.itemsize * nvec, False, where)
    vals = self.data[idx].view(dt).reshape(-1, nvec)
    return [vals[:, i] for i in range(nvec)]
  def store(self, off, data, where):
    idx = self._idx(off, data.dtype.itemsize * data.shape[1], True, where)
    self.data[idx] = np.ascontiguousarray(data).view(np.uint8).reshape(len(idx), -1)

# *** helpers for the generated code ***

def put(d, m, v, n:int):
  """d with the lanes selected by m replaced by v (v holds values for the selected lanes only)."""
  out = np.array(np.broadcast_to(d, (n,)))
  out[m] = v
  return out

def bcast(v, n:int):
  return np.broadcast_to(v, (n,)) if np.ndim(v) == 0 else v

def resize(x, dt:np.dtype, signed:bool):
  """Relaxed-type register access: truncate, or zero/sign-extend (by the instruction type), to dt's size."""
  x = np.asarray(x) if np.ndim(x) else x
  src = x.dtype
  if src.itemsize == dt.itemsize: return x.view(dt)
  if src.kind == "b": return x.astype(dt)
  if src.itemsize > dt.itemsize:
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return x.astype(u).view(dt)
  if src.kind == "f": return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[src.itemsize]).astype(dt)
  s = {1: (np.int8, np.uint8), 2: (np.int16, np.uint16), 4: (np.int32, np.uint32), 8: (np.int64, np.uint64)}[src.itemsize]
  return x.view(s[0] if signed else s[1]).astype({1: (np.int8, np.uint8), 2: (np.int16, np.uint16), 4: (np.int32, np.uint32),
                                                  8: (np.int64, np.uint64)}[dt.itemsize][0 if signed else 1]).view(dt)

def uniformity(t):
  """1 if every lane of predicate t is set, 0 if none is, -1 when they differ."""
  if np.ndim(t) == 0: return 1 if t else 0
  if t.all(): return 1
  return 0 if not t.any() else -1

class TracedEnv(Env):
  """An Env that also records each block it runs, in order: (first CTA of the batch, block index, the batch's warps
  that ran it: a bool per warp, or the batch's warp count when all did). A launch's dynamic instruction stream per warp, for the PC sampler
  (emulators/nv_pma.py); launch(trace=list) runs with it, on the numpy path."""
  def __init__(self, *args, trace:list, **kw):
    super().__init__(*args, **kw)
    self.trace, self.first_cta = trace, int(args[5])
  def tick(self, ninstr:int, m=None, block:int=-1):
    super().tick(ninstr, m)
    self.trace.append((self.first_cta, block, self.nwarps if m is None else np.logical_or.reduceat(m, self.warp_starts)))
