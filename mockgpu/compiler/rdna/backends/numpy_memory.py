"""Memory instructions for the translated code: scalar, global, scratch and LDS loads and stores, all lanes at once.

Global and scalar accesses go through the dispatch's AddressSpace (a miss is a GPUPageFault naming the instruction
and its PC). Scratch (per-lane private memory) and LDS (per workgroup) are arrays owned by the dispatch; an access
outside the kernel's private segment or its workgroup's LDS allocation is reported as a GPUPageFault too.
"""
from __future__ import annotations
import functools
import numpy as np
from mockgpu.errors import GPUPageFault, UnsupportedInstruction
from mockgpu.memory import outside as out_of_bounds
from mockgpu.compiler.rdna.backends.numpy_runtime import u32, u64, lo32, hi32
from mockgpu.compiler.rdna.faults import at_pc, outside, misaligned, instruction_error
from mockgpu.compiler.rdna import buffer

DWORD = np.arange(16, dtype=np.uint64) * 4
NOT3 = ~np.uint64(3)

def unsupported(st, pc:int, what:str) -> UnsupportedInstruction: return instruction_error(what, st.pgm, pc)

def _where(st, pc:int, name:str) -> str: return at_pc(name, st.pgm, pc)

def _addrs(addr, ndw:int) -> np.ndarray:
  a = np.asarray(addr, u64).reshape(-1)
  return a if ndw == 1 else (a[:, None] + DWORD[:ndw]).reshape(-1)

def _widen(vals:np.ndarray) -> np.ndarray:
  """Loaded elements -> uint32, zero- or sign-extending sub-dword kinds."""
  return vals.astype(np.int64).astype(u32) if vals.dtype.kind == "i" else vals.astype(u32, copy=False)

def _spread(vals:np.ndarray, m:np.ndarray, full:bool, ndw:int) -> list[np.ndarray]:
  """Values of the active lanes ([lanes * ndw], lane-major, possibly a view of memory) -> one fresh contiguous
  [n, lanes] array per dword (inactive lanes 0)."""
  n, width = m.shape
  if full:
    if ndw == 1: return [vals.reshape(n, width).copy()]
    per_dword = vals.reshape(n * width, ndw).T.copy().reshape(ndw, n, width)  # one pass de-interleaves the dwords
    return [per_dword[j] for j in range(ndw)]  # (list(per_dword), numpy's iteration, costs twice as much)
  out = np.zeros((ndw, n * width), u32)
  per_dword, lanes = vals.reshape(-1, ndw).T, m.reshape(-1)
  for j in range(ndw): out[j][lanes] = per_dword[j]  # 1-D masked writes are far cheaper than one 3-D one
  return [o.reshape(n, width) for o in out]

_RAMPS:dict[tuple[int, int], bytes] = {}

def _tiles(a:np.ndarray, k:int, nbytes:int) -> bool:
  """Is a[i] == a[0] + i * nbytes for every lane? (A bytes compare against a cached ramp: one numpy call.)"""
  if k > 4096: return bool(((a[1:] - a[:-1]) == nbytes).all())
  if (ramp:=_RAMPS.get((k, nbytes))) is None: ramp = _RAMPS[(k, nbytes)] = (np.arange(k, dtype=u64) * np.uint64(nbytes)).tobytes()
  return (a - a[0]).tobytes() == ramp

def _dense(st, a:np.ndarray, nbytes:int, write:bool) -> np.ndarray|None:
  """When the lanes' accesses tile one contiguous range inside a single mapping (lane i at base + i * nbytes, the
  common case of a vectorized kernel), that range as a checked byte view; else None."""
  k = len(a)
  lo = int(a[0])
  if k > 1 and not (int(a[-1]) - lo == (k - 1) * nbytes and _tiles(a, k, nbytes)): return None
  return st.mem.view(lo, k * nbytes, write) if st.mem.is_mapped(lo, k * nbytes) else None

def _span(st, a:np.ndarray, nbytes:int, write:bool) -> tuple[np.ndarray, np.ndarray]|None:
  """When all addresses fall in one mapping (one buffer per instruction), its checked byte view and each address's
  offset in it; else None, and the caller goes through AddressSpace.load/store, which names the faulting address."""
  lo, hi = int(a.min()), int(a.max())
  if hi >> 63 or not st.mem.is_mapped(lo, hi - lo + nbytes): return None
  return st.mem.view(lo, hi - lo + nbytes, write), a.view(np.int64) - lo  # int64 math: much cheaper than uint64

_MIN, _MAX, _OR = np.minimum.reduce, np.maximum.reduce, np.bitwise_or.reduce
_ROW = {2: np.dtype(np.uint64), 4: np.dtype((np.void, 16))}  # one element per lane's dwords, for a 1-D take

def _dword_rows(st, a:np.ndarray, ndw:int) -> np.ndarray|None:
  """ndw-dword loads whose lane addresses all lie in one mapping at dword-aligned distances from the lowest: the
  dwords [lanes * ndw], gathered from that checked range (a fast 1-D take when the distances are multiples of the
  access size); else None."""
  lo, hi = int(_MIN(a)), int(_MAX(a))  # the ufuncs' reductions: a.min() adds ~0.5 us of Python around them
  size = hi - lo + 4 * ndw
  if hi >> 63 or not st.mem.is_mapped(lo, size): return None  # is_mapped: the debugger's recording memory says no
  rel = a.view(np.int64) - lo  # int64 math is much cheaper than uint64 in numpy; hi < 2**63 makes the view exact
  low = int(_OR(rel))  # every distance's low bits at once: dword-aligned, and aligned to the access size
  if low & 3: return None
  row = _ROW.get(ndw)
  words = st.mem.view(lo, size, False).view(u32)
  if row is not None and not low & (4 * ndw - 1): return words.view(row).take(rel >> (ndw.bit_length() + 1)).view(u32)
  window = np.lib.stride_tricks.as_strided(words, (len(words) - ndw + 1, ndw), (4, 4), writeable=False)
  return window[rel >> 2].reshape(-1)

def _load(st, a:np.ndarray, dt:np.dtype, ndw:int, pc:int, name:str) -> np.ndarray:
  """Elements of type dt (ndw dwords when dt is u32) at each lane address a: shape [lanes * ndw]; may be a view of
  the memory itself, so callers copy."""
  if not len(a): return np.zeros(0, dt)
  if (dense:=_dense(st, a, dt.itemsize * ndw, False)) is not None: return dense.view(dt)
  if ndw > 1 and (rows:=_dword_rows(st, a, ndw)) is not None: return rows
  e = _addrs(a, ndw)
  if (span:=_span(st, e, dt.itemsize, False)) is not None: return _gather(span[0], span[1], dt)
  try: return st.mem.load(e, dt, "")
  except GPUPageFault as err: raise (GPUPageFault(err.va, err.size, err.write, _where(st, pc, name)) if type(err) is GPUPageFault else err) from None

def _store(st, a:np.ndarray, vals:np.ndarray, ndw:int, pc:int, name:str):
  """Store vals ([lanes * ndw] elements) at each lane address a."""
  if not len(a): return
  if (dense:=_dense(st, a, vals.dtype.itemsize * ndw, True)) is not None:
    dense[:] = np.ascontiguousarray(vals).view(np.uint8)
    return
  e = _addrs(a, ndw)
  if (span:=_span(st, e, vals.dtype.itemsize, True)) is not None: return _scatter(span[0], span[1], vals)
  try: st.mem.store(e, vals, "")
  except GPUPageFault as err: raise (GPUPageFault(err.va, err.size, err.write, _where(st, pc, name)) if type(err) is GPUPageFault else err) from None

def _full(x, shape) -> np.ndarray:
  x = np.asarray(x)
  return x if x.shape == shape else np.broadcast_to(x, shape)

def _lanes(addr, m, full) -> np.ndarray:
  addr = _full(np.asarray(addr, u64), m.shape)
  return addr.reshape(-1) if full else addr[m]

def sload(st, addr, ndw:int, pc:int, name:str, kind=u32) -> list[np.ndarray]:
  """s_load_b*: ndw dwords per wave (the address's low two bits are ignored, as on hardware); RDNA4's s_load_u8/i8/
  u16/i16 (kind): one element, zero- or sign-extended, from its naturally aligned address (the low bit of a 16-bit
  load's address is ignored as a dword load's two are)."""
  if kind is not u32:
    a = np.asarray(addr, u64).reshape(-1) & ~u64(np.dtype(kind).itemsize - 1)
    return [_widen(_load(st, a, np.dtype(kind), 1, pc, name)).copy()]
  a = np.asarray(addr, u64).reshape(-1) & NOT3
  lo = int(a[0])
  if (len(a) == 1 or (a == a[0]).all()) and st.mem.is_mapped(lo, 4 * ndw):  # every wave reads the same dwords
    words = st.mem.view(lo, 4 * ndw).view(u32)
    return list(np.repeat(words[:, None], len(a), axis=1))
  return list(_load(st, a, np.dtype(u32), ndw, pc, name).reshape(-1, ndw).T.copy())

def lane_fault(st, w, a:np.ndarray, m, full:bool, nbytes:int, write:bool, pc:int, name:str, err=None) -> GPUPageFault:
  """The fault of a global memory instruction whose lane addresses `a` (the active lanes', wave-major) missed: the
  first lane whose whole access (nbytes: 16 for a b128) is not inside one mapping. A fault of another kind that the
  address space raised (a permission its page-table entry does not give) keeps its kind, named at its lane."""
  if err is not None and type(err) is not GPUPageFault:
    err.where = _where(st, pc, name)
    return _named(err, w, m, full, int(np.argmax((a <= np.uint64(err.va)) & (np.uint64(err.va) < a + np.uint64(nbytes)))))
  j = int(np.argmax(st.mem.unmapped(a, nbytes)))
  return _named(GPUPageFault(int(a[j]), nbytes, write, _where(st, pc, name)), w, m, full, j)

def _named(e:GPUPageFault, w, m, full:bool, j:int) -> GPUPageFault:
  """Name the j-th active lane (wave-major) in a fault: its lane, and its wave's index in the chunk as `chunk_wave`
  (the executor turns that into the workgroup and the wave in it)."""
  flat = j if full else int(np.flatnonzero(m.reshape(-1))[j])
  row, lane = divmod(flat, m.shape[1])
  e.chunk_wave = int(w[row]) if isinstance(w, np.ndarray) else row
  return e.add_context(lane=lane)

def gload(st, w, addr, m, full, kind, ndw:int, pc:int, name:str) -> list[np.ndarray]:
  a = _lanes(addr, m, full)
  try: vals = _load(st, a, np.dtype(kind), ndw, pc, name)
  except GPUPageFault as err: raise lane_fault(st, w, a, m, full, np.dtype(kind).itemsize * ndw, False, pc, name, err) from None
  return _spread(_widen(vals), m, full, ndw)

def gstore(st, w, addr, m, full, data:list, pc:int, name:str):
  a = _lanes(addr, m, full)
  try: _gstore(st, a, m, full, data, pc, name)
  except GPUPageFault as err: raise lane_fault(st, w, a, m, full, np.asarray(data[0]).dtype.itemsize * len(data), True, pc, name, err) from None

def _gstore(st, a:np.ndarray, m, full, data:list, pc:int, name:str):
  if full and len(a) and data[0].dtype == u32 and (dense:=_dense(st, a, 4 * len(data), True)) is not None:
    lanes = dense.view(u32).reshape(m.shape + (len(data),))
    for j, d in enumerate(data): lanes[:, :, j] = d  # interleave the dwords straight into memory
    return
  vals = np.stack([_full(d, m.shape) for d in data], axis=-1)
  _store(st, a, vals.reshape(-1) if full else vals[m].reshape(-1), len(data), pc, name)

def buffer_lanes(st, words, vindex, voffset, soffset, offset:int, idxen:bool, offen:bool, size:int, ndw:int, m, pc:int, name:str):
  """A MUBUF access's byte addresses [waves, lanes] and per element its in-range lanes (buffer.address); a V# with
  swizzling enabled in an active wave raises (not modelled)."""
  addr, ok, swizzled = buffer.address(words, vindex, voffset, soffset, offset, idxen, offen, size, ndw, m.shape[1])
  if (swizzled & m.any(1)).any():
    raise unsupported(st, pc, f"{name}: a V# with SWIZZLE_ENABLE set (the swizzled buffer layout) is not modelled")
  return addr, ok

def bstore(st, addr, ok:list, m, data:list, pc:int, name:str):
  """A MUBUF store: the in-range elements of the active lanes, lane after lane (a later lane's dword wins, as for a
  global store), every address checked before any is written."""
  sel = np.stack([m & o for o in ok], -1)
  a = np.stack([_full(addr + u64(4 * j), m.shape) for j in range(len(data))], -1)[sel]
  _store(st, a, np.stack([_full(d, m.shape) for d in data], -1)[sel], 1, pc, name)

# *** arrays owned by the dispatch (scratch, LDS) ***

def _gather(u8:np.ndarray, off:np.ndarray, dt:np.dtype) -> np.ndarray:
  n = dt.itemsize
  if n == 1: return u8[off].view(dt)
  if u8.size % n == 0 and not (off & (n - 1)).any(): return u8.view(dt)[off >> (n.bit_length() - 1)]  # n: 2, 4 or 8
  return u8[off[:, None] + np.arange(n)].copy().view(dt).reshape(-1)

def _scatter(u8:np.ndarray, off:np.ndarray, vals:np.ndarray):
  n = vals.dtype.itemsize
  if n == 1: u8[off] = vals.view(np.uint8)
  elif u8.size % n == 0 and not (off & (n - 1)).any(): u8.view(vals.dtype)[off >> (n.bit_length() - 1)] = vals
  else: u8[off[:, None] + np.arange(n)] = np.ascontiguousarray(vals).view(np.uint8).reshape(-1, n)

def _check(off:np.ndarray, nbytes:int, ndw:int, limit:int, base:np.ndarray, write:bool, where:str, space:str, who):
  """Raise the fault of the first lane with an element (nbytes each, ndw per lane) outside [0, limit): the lane's whole
  access, named by who (lane_fault's context)."""
  bad = out_of_bounds(off.astype(np.int64).view(np.uint64), nbytes, limit)  # a negative offset is huge: outside too
  if bad.any():
    first = int(np.argmax(bad)) // ndw * ndw
    e = GPUPageFault(int(base[first]) + int(off[first]), nbytes * ndw, write, outside(where, space, int(off[first]), limit),
                     "LDS" if space == "LDS" else "scratch")
    raise who(e, first // ndw)

def _private(st, w, off, m, full, ndw:int, nbytes:int, write:bool, pc:int, name:str):
  """Byte indices into the dispatch's scratch array for the active lanes, checked against the private segment size."""
  off = np.broadcast_to(np.asarray(off, u32), m.shape)
  lane = st.wave_index[w][:, None] * m.shape[1] + np.arange(m.shape[1])
  if not full: off, lane = off[m], lane[m]
  off, lane = off.reshape(-1), np.broadcast_to(lane, off.shape).reshape(-1)
  if ndw > 1:
    off = (off[:, None].astype(np.int64) + np.arange(ndw) * 4).reshape(-1)
    lane = np.repeat(lane, ndw)
  _check(off, nbytes, ndw, st.private_size, st.scratch_base + lane.astype(np.int64) * st.private_size, write,
         _where(st, pc, name), "private (scratch)", lambda e, j: _named(e, w, m, full, j))
  return lane.astype(np.int64) * st.private_size + off

def scload(st, w, off, m, full, kind, ndw:int, pc:int, name:str) -> list[np.ndarray]:
  dt = np.dtype(kind)
  idx = _private(st, w, off, m, full, ndw, dt.itemsize, False, pc, name)
  return _spread(_widen(_gather(st.scratch(), idx, dt)), m, full, ndw)

def scstore(st, w, off, m, full, data:list, pc:int, name:str):
  vals = np.stack([_full(d, m.shape) for d in data], axis=-1)
  idx = _private(st, w, off, m, full, len(data), vals.dtype.itemsize, True, pc, name)
  _scatter(st.scratch(), idx, (vals.reshape(-1) if full else vals[m].reshape(-1)))

def _shared(st, w, addr, m, full, ndw:int, nbytes:int, write:bool, pc:int, name:str):
  """Byte indices into the dispatch's LDS array for the active lanes, checked against the workgroup's LDS size."""
  addr = np.broadcast_to(np.asarray(addr, u32), m.shape)
  if st.lds_watch is not None: st.lds_watch(w, addr, m, ndw)  # a profiled dispatch's recorder: its bank conflicts
  base = (st.wave_wg[w] * st.lds_size)[:, None] + np.zeros(m.shape[1], np.int64)
  if not full: addr, base = addr[m], base[m]
  addr, base = addr.reshape(-1).astype(np.int64), base.reshape(-1)
  if ndw > 1:
    addr = (addr[:, None] + np.arange(ndw) * 4).reshape(-1)
    base = np.repeat(base, ndw)
  _check(addr, nbytes, ndw, st.lds_size, np.zeros_like(addr), write, _where(st, pc, name), "LDS", lambda e, j: _named(e, w, m, full, j))
  return base + addr

def ldsload(st, w, addr, m, full, kind, ndw:int, pc:int, name:str) -> list[np.ndarray]:
  dt = np.dtype(kind)
  idx = _shared(st, w, addr, m, full, ndw, dt.itemsize, False, pc, name)
  return _spread(_widen(_gather(st.lds, idx, dt)), m, full, ndw)

def ldsstore(st, w, addr, m, full, data:list, pc:int, name:str):
  vals = np.stack([_full(d, m.shape) for d in data], axis=-1)
  idx = _shared(st, w, addr, m, full, len(data), vals.dtype.itemsize, True, pc, name)
  _scatter(st.lds, idx, vals.reshape(-1) if full else vals[m].reshape(-1))

# *** atomics: read-modify-writes applied lane after lane ***

def _scan(seg:np.ndarray, vals:np.ndarray, fn) -> np.ndarray:
  """The inclusive prefix of an associative fn over vals within each run of equal seg (sorted runs): log2 of the
  longest run numpy passes (Hillis and Steele), whatever the number of conflicting lanes."""
  out, step = vals, 1
  while step < len(vals):
    i = np.nonzero(seg[step:] == seg[:-step])[0] + step
    if not len(i): break  # runs are contiguous: none is longer than step
    nxt = out.copy()
    nxt[i] = fn(out[i - step], out[i])
    out, step = nxt, 2 * step
  return out

def serial(keys:np.ndarray, current, cols:list[np.ndarray], fn, associative:bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """Read-modify-writes fn(old, *data) applied one after another in element order (keys: the word each element
  updates; current(words): their values before the instruction). Returns the value each element saw, the distinct
  words and their final values. Elements of one word apply in turn, all words at once: one numpy pass per element of
  the most contended word, or a prefix scan (log2 passes) for an associative row (semantics ATOMIC rows in ASSOCIATIVE)."""
  order = np.argsort(keys, kind="stable")  # groups equal words, keeping element order within each
  s = keys[order]
  start = np.ones(len(s), bool)
  start[1:] = s[1:] != s[:-1]
  first = np.nonzero(start)[0]
  uniq, old = s[first], current(s[first])
  cols = [c[order] for c in cols]
  before = np.empty(len(s), old.dtype)
  if len(first) == len(s):  # no two elements share a word
    before[order] = old
    return before, uniq, fn(old, *cols)
  seg = np.cumsum(start) - 1
  if associative:  # old (+) a1 (+) ... (+) ak: the prefixes of the data, each combined with old once
    pre = _scan(seg, cols[0], fn)
    last = np.r_[first[1:], len(s)] - 1
    shifted = np.r_[pre[:1], pre[:-1]]  # the prefix before each element (an element starting its word sees old)
    before[order] = np.where(start, old[seg], fn(old[seg], shifted))
    return before, uniq, fn(old, pre[last])
  acc = old.copy()
  rank = np.arange(len(s)) - first[seg]
  for k in range(int(rank.max()) + 1):  # the k-th element of every word at once
    sel = rank == k
    g = seg[sel]
    before[order[sel]] = acc[g]
    acc[g] = fn(acc[g], *(c[sel] for c in cols))
  return before, uniq, acc

def _selected(x, m, full) -> np.ndarray:
  """A per-lane operand ([waves, lanes] or broadcastable) as the active lanes' values, in wave then lane order."""
  x = _full(np.asarray(x), m.shape)
  return x.reshape(-1) if full else x[m]

def _returned(before:np.ndarray, m, full, nbytes:int) -> list[np.ndarray]:
  """The old words the active lanes saw as dwords [waves, lanes] (0 in inactive lanes)."""
  words = [before] if nbytes == 4 else [lo32(before), hi32(before)]
  out = []
  for x in words:
    if full: out.append(x.astype(u32).reshape(m.shape))
    else:
      r = np.zeros(m.shape, u32)
      r[m] = x
      out.append(r)
  return out

def _aligned(off:np.ndarray, nbytes:int, va:np.ndarray, where:str, space:str):
  bad = (off & (nbytes - 1)) != 0
  if bad.any():
    i = int(np.argmax(bad))
    raise GPUPageFault(int(va[i]), nbytes, True, misaligned(where, space, int(va[i]), nbytes), space)

WORD = {4: u32, 8: u64}

def ldsatomic(st, w, addrs:list, m, full, data:list, fn, nbytes:int, associative:bool, pc:int, name:str) -> list[np.ndarray]:
  """An LDS read-modify-write at one or two addresses per lane (addrs: per slot; data: per slot, the row's data
  operands as raw words). Every lane's slots are checked (bounds, then alignment) before any is written; lanes then
  apply in order, each reading all its slots before writing them. Returns the old words, slot after slot, as dwords."""
  where = _where(st, pc, name)
  idx = [_shared(st, w, a, m, full, 1, nbytes, True, pc, name) for a in addrs]
  for i in idx: _aligned(i, nbytes, i % max(st.lds_size, 1), where, "LDS")
  slots = len(addrs)
  keys = np.stack(idx, 1).reshape(-1)  # a lane's slots next to each other: lane order, then slot order
  cols = [np.stack([_selected(d[j], m, full) for d in data], 1).reshape(-1) for j in range(len(data[0]))]
  t = WORD[nbytes]
  words = st.lds[:len(st.lds) // nbytes * nbytes].view(t)
  before, uniq, final = serial(keys // nbytes, lambda u: words[u], [c.astype(t, copy=False) for c in cols], fn, associative)
  words[uniq] = final
  before = before.reshape(-1, slots)
  if slots == 2:  # a lane reads both its words before it writes either
    same = idx[0] == idx[1]
    before[same, 1] = before[same, 0]
  return [x for j in range(slots) for x in _returned(before[:, j], m, full, nbytes)]

def gatomic(st, w, addr, m, full, data:list, fn, nbytes:int, associative:bool, pc:int, name:str) -> list[np.ndarray]:
  """A FLAT/GLOBAL read-modify-write: every lane's address is checked (mapped, then aligned) before any is written;
  lanes then apply in order (waves in order). Returns the old words as dwords."""
  where = _where(st, pc, name)
  a = _lanes(addr, m, full)
  t = WORD[nbytes]
  if not len(a): return _returned(np.zeros(0, t), m, full, nbytes)
  if (span:=_span(st, a, nbytes, True)) is None: st.mem.locate(a, nbytes, True, where)  # raises for the first bad lane
  _aligned(a, nbytes, a, where, "global")
  cols = [_selected(d, m, full).astype(t, copy=False) for d in data]
  if span is not None:  # one mapping: its words, indexed directly
    words = span[0].view(t)
    before, uniq, final = serial(span[1] // nbytes, lambda u: words[u], cols, fn, associative)
    words[uniq] = final
  else:
    before, uniq, final = serial(a, lambda u: st.mem.load(u, t, where), cols, fn, associative)
    st.mem.store(uniq, final, where)
  return _returned(before, m, full, nbytes)

def bpermute(idx, data, m) -> np.ndarray:
  """ds_bpermute_b32: each lane reads `data` of lane idx % lanes (an inactive source lane reads 0)."""
  src = np.where(m, data, 0)
  lanes = np.broadcast_to(np.asarray(idx, u32) & (m.shape[1] - 1), m.shape).astype(np.int64)
  return np.take_along_axis(src, lanes, axis=1).astype(u32)

@functools.lru_cache(maxsize=None)
def _swizzle_src(offset:int, wave:int) -> np.ndarray:
  from mockgpu.compiler.rdna.operands import swizzle_lanes  # at first use: see numpy_runtime's lane tables
  return swizzle_lanes(offset, wave)

def swizzle(data, m, offset:int) -> np.ndarray:
  """ds_swizzle_b32: each lane reads `data` of its source lane (operands.swizzle_lanes; an inactive source reads 0)."""
  src = _swizzle_src(offset, m.shape[1])
  return np.where(m[:, src], np.broadcast_to(data, m.shape)[:, src], 0).astype(u32)

def permute(idx, data, m) -> np.ndarray:
  """ds_permute_b32: each active lane writes its `data` to lane idx % lanes (the highest writer wins)."""
  n = m.shape[0]
  out = np.zeros(m.shape, u32)
  lanes = np.broadcast_to(np.asarray(idx, u32) & (m.shape[1] - 1), m.shape).astype(np.int64)
  rows = np.broadcast_to(np.arange(n)[:, None], m.shape)
  out[rows[m], lanes[m]] = np.broadcast_to(data, m.shape)[m]
  return out
