"""Operations that combine lanes: atomics (with colliding addresses), warp shuffles/votes/reductions, CTA barrier
reductions and mma.sync. A mixin of runtime.Env: `self` is the launch batch (lanes, warps, memories)."""
from __future__ import annotations
import numpy as np
from mockgpu.errors import GPUPageFault, UnsupportedInstruction
from mockgpu.compiler.ptx.types import np_dtype
from mockgpu.compiler.ptx import fragments
from mockgpu.compiler.floats import bf16_to_f32

U64 = np.uint64

class Collective:
  # *** atomics ***

  def atomic(self, space:str, op:str, t:str, a, vals:list, m, where:str):
    """atom/red: apply op lane by lane (lane order within each address) and return each lane's old value."""
    dt = np_dtype(t)
    a = np.broadcast_to(np.asarray(a, U64), (self.n,))
    act = a if m is None else a[m]
    if space == "generic":
      tags = np.unique(act & U64(0xFF00_0000_0000_0000))
      if len(tags) > 1 or (len(tags) == 1 and self._window_of(int(tags[0])) not in (None, "shared")):
        raise UnsupportedInstruction(f"{where}: generic atomics outside global and shared memory")
      space = "shared" if len(tags) == 1 and tags[0] else "global"
    vals = [np.broadcast_to(np.asarray(v, dt), (self.n,)) for v in vals]
    if m is not None: vals = [v[m] for v in vals]
    old = np.zeros(len(act), dt)
    if not len(act): return old
    if (act % U64(dt.itemsize)).any():
      raise GPUPageFault(int(act[np.argmax(act % U64(dt.itemsize) != 0)]), dt.itemsize, True, f"{where} (misaligned atomic)")
    if space == "shared":
      flat, idx = self._flat("shared", a, dt.itemsize, m, True, where)
      groups = [(flat.view(dt), slice(None), idx // dt.itemsize)]
    elif space == "global": groups = self._global_cells(act, dt, where)
    else: raise UnsupportedInstruction(f"{where}: atomics on .{space}")
    for cells, lanes, idx in groups: old[lanes] = _apply_serial(cells, idx, op, [v[lanes] for v in vals], dt)
    return old

  def _global_cells(self, a:np.ndarray, dt:np.dtype, where:str):
    """(typed view of an allocation, lanes, element index) for each allocation the addresses touch; the bounds are
    AddressSpace.locate's (an address near 2**64 faults: a + itemsize wrapped to a small sum here once)."""
    n = dt.itemsize
    which, off = self.mem.locate(a, n, True, where)
    out = []
    for w in np.unique(which):
      lanes = np.flatnonzero(which == w)
      mp = self.mem.mappings()[int(w)]
      if mp.va % n or mp.size % n: raise UnsupportedInstruction(f"{where}: atomic on an allocation not aligned to {n} bytes")
      out.append((mp.u8().view(dt), lanes, off[lanes] // n))
    return out

  # *** warp-wide ***

  def _full(self, v, dt=None):
    v = np.asarray(v) if dt is None else np.asarray(v, dt)
    return np.broadcast_to(v, (self.n,))

  def shfl(self, mode:str, a, b, c):
    # b[4:0], c[4:0] (the clamp) and c[12:8] (the segment mask) are lane indices: their bits are the warp's
    lane, top = self.laneid.astype(np.int64), self.shape.warp - 1
    bval = self._full(b).astype(np.int64) & top
    cv = self._full(c).astype(np.int64)
    cval, seg = cv & top, (cv >> 8) & top
    max_lane = (lane & seg) | (cval & ~seg)
    min_lane = lane & seg
    if mode == "up": j = lane - bval
    elif mode == "down": j = lane + bval
    elif mode == "bfly": j = lane ^ bval
    else: j = min_lane | (bval & ~seg)
    p = (j >= max_lane) if mode == "up" else (j <= max_lane)
    j = np.where(p, j, lane)
    j = np.where((j >= 0) & (j < self.warp_size), j, lane)
    src = self.lane_base + j
    return self._full(a)[src], p

  def vote(self, mode:str, p, m):
    act = np.ones(self.n, bool) if m is None else self._full(m, bool)
    p = self._full(p, bool) & act
    starts, of = self.warp_starts, self.warp_of
    if mode == "ballot":
      bitsv = np.where(p, np.uint32(1) << self.laneid, np.uint32(0))
      return np.bitwise_or.reduceat(bitsv, starts)[of]
    anyv = np.logical_or.reduceat(p, starts)[of]
    allv = np.logical_and.reduceat(p | ~act, starts)[of]
    if mode == "any": return anyv
    if mode == "all": return allv
    return allv | ~anyv   # uni: every active lane agrees

  def redux(self, op:str, a, m):
    act = np.ones(self.n, bool) if m is None else self._full(m, bool)
    a = self._full(a)
    ident = {"add": 0, "and": -1, "or": 0, "xor": 0, "min": np.iinfo(a.dtype).max, "max": np.iinfo(a.dtype).min}[op]
    x = np.where(act, a, np.array(ident).astype(a.dtype))
    uf = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "min": np.minimum, "max": np.maximum}[op]
    return uf.reduceat(x, self.warp_starts).astype(a.dtype)[self.warp_of]

  def cta_reduce(self, p, op:str, m):
    """bar.red: popc/and/or of a predicate over the CTA's threads."""
    act = np.ones(self.n, bool) if m is None else self._full(m, bool)
    p = self._full(p, bool)
    cta = np.broadcast_to(self.cta, (self.n,)).astype(np.int64)
    cnt = np.bincount(cta, weights=(p & act), minlength=self.shared.shape[0])
    tot = np.bincount(cta, weights=act, minlength=self.shared.shape[0])
    if op == "popc": return cnt.astype(np.uint32)[cta]
    return (cnt == tot)[cta] if op == "and" else (cnt > 0)[cta]

  # *** tensor cores ***

  def mma(self, shape:str, td:str, ta:str, tb:str, tc:str, a:list, b:list, c:list, where:str):
    """mma.sync.aligned (row.col): D = A*B + C per warp, products exact, sums in float64 (fragments.multiply), rounded once."""
    w = self.shape.warp
    if self.n % w or (self.block[0] * self.block[1] * self.block[2]) % w:
      raise UnsupportedInstruction(f"{where}: mma.sync in a partial warp")
    try: lay = fragments.layout(shape, ta)
    except fragments.Unmodelled as e: raise UnsupportedInstruction(f"{where}: {e}") from None
    nw, M, N, K = self.n // w, fragments.M, fragments.N, lay["k"]
    am, bm, cm = np.zeros((nw, M * K)), np.zeros((nw, K * N)), np.zeros((nw, M * N))
    am[:, lay["a"]] = _frag(a, ta, nw, self.n)
    bm[:, lay["b"]] = _frag(b, tb, nw, self.n)
    cm[:, lay["c"]] = _frag(c, tc, nw, self.n)
    dm = fragments.multiply(am.reshape(nw, M, K), bm.reshape(nw, K, N), cm.reshape(nw, M, N))
    D = dm.reshape(nw, M * N)[:, lay["c"]].reshape(self.n, -1)
    if td == "f32":
      out = D.astype(np.float32).view(np.uint32)
      return [out[:, i] for i in range(4)]
    h = np.ascontiguousarray(D.astype(np.float16)).view(np.uint32)
    return [h[:, i] for i in range(2)]

def _frag(regs:list, t:str, nw:int, n:int) -> np.ndarray:
  """Fragment elements (float64) in lane-major order, (nw, lanes * elements), from b32 registers (low half first)."""
  r = np.stack([np.broadcast_to(np.asarray(x, np.uint32), (n,)) for x in regs], axis=1)
  if t == "f32": v = r.view(np.float32)
  elif t == "tf32": v = (r & np.uint32(0xffffe000)).view(np.float32)   # tf32 ignores the 13 low mantissa bits
  elif t == "f16": v = r.view(np.float16)
  else: v = bf16_to_f32(r.view(np.uint16))
  return v.astype(np.float64).reshape(nw, -1)

# *** serial semantics of colliding atomics ***

_ASSOC = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "min": np.minimum, "max": np.maximum}

def _apply_serial(cells:np.ndarray, idx:np.ndarray, op:str, vals:list, dt:np.dtype) -> np.ndarray:
  """Apply the atomics in lane order per address; return each lane's old value. Integer add/and/or/xor/min/max and float
  min/max are associative: a segmented scan does them in O(log n) vector passes. The rest go in rounds (one lane per
  address per round)."""
  order = np.argsort(idx, kind="stable")
  sidx = idx[order]
  first = np.ones(len(sidx), bool)
  first[1:] = sidx[1:] != sidx[:-1]
  starts = np.flatnonzero(first)
  group_start = starts[np.cumsum(first) - 1]
  rank = np.arange(len(sidx)) - group_start
  init = cells[sidx[first]]
  if op == "exch":
    v = vals[0][order]
    old_sorted = np.empty_like(v)
    old_sorted[first] = init
    old_sorted[~first] = v[:-1][~first[1:]]
    last = np.append(starts[1:], len(v)) - 1
    cells[sidx[first]] = v[last]
    return _unsort(old_sorted, order)
  if op in _ASSOC and (dt.kind in "iu" or op in ("min", "max")):
    uf = _ASSOC[op]
    v = vals[0][order].copy()
    incl = _segmented_scan(uf, v, group_start)
    old_sorted = np.empty_like(v)
    old_sorted[first] = init
    prev = uf(np.repeat(init, np.diff(np.append(starts, len(v)))), incl)
    old_sorted[~first] = prev[:-1][~first[1:]]
    last = np.append(starts[1:], len(v)) - 1
    cells[sidx[first]] = prev[last]
    return _unsort(old_sorted, order)
  old = np.empty(len(idx), dt)
  for r in range(int(rank.max()) + 1):
    lanes = order[rank == r]
    cur = cells[idx[lanes]]
    old[lanes] = cur
    cells[idx[lanes]] = _combine(op, cur, [v[lanes] for v in vals], dt)
  return old

def _unsort(sorted_vals, order):
  out = np.empty_like(sorted_vals)
  out[order] = sorted_vals
  return out

def _segmented_scan(uf, v:np.ndarray, group_start:np.ndarray) -> np.ndarray:
  """Inclusive scan of v with uf, restarting at each group (Hillis-Steele)."""
  pos = np.arange(len(v))
  d = 1
  while d < len(v):
    ok = pos - d >= group_start
    shifted = np.empty_like(v)
    shifted[d:] = v[:-d]
    v = np.where(ok, uf(shifted, v), v)
    d *= 2
  return v

def _combine(op:str, cur:np.ndarray, vals:list, dt:np.dtype) -> np.ndarray:
  b = vals[0]
  if op == "add": return (cur + b).astype(dt)
  if op == "inc": return np.where(cur >= b, np.zeros((), dt), cur + np.ones((), dt))
  if op == "dec": return np.where((cur == 0) | (cur > b), b, cur - np.ones((), dt))
  if op == "cas": return np.where(cur == b, vals[1], cur)
  if op in _ASSOC: return _ASSOC[op](cur, b)
  raise UnsupportedInstruction(f"atomic {op}")
