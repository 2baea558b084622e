"""Memory instructions for the translated code: scalar, global, scratch and LDS loads and stores, all lanes at once.

Global and scalar accesses go through the dispatch's AddressSpace (a miss is a GPUPageFault naming the instruction
and its PC). Scratch (per-lane private memory) and LDS (per workgroup) are arrays owned by the dispatch; an access
outside the kernel's private segment or its workgroup's LDS allocation is reported as a GPUPageFault too.
"""
from __future__ import annotations
import numpy as np
from mockgpu.errors import GPUPageFault, UnsupportedInstruction
from mockgpu.memory import outside as out_of_bounds
from mockgpu.compiler.rdna.backends.numpy_runtime import u32, u64, min_num, max_num
from mockgpu.compiler.rdna.faults import at_pc, outside, instruction_error

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
    per_dword = vals.reshape(n * width, ndw).T.copy()  # one pass de-interleaves the dwords into registers
    return [per_dword[j].reshape(n, width) for j in range(ndw)]
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

_ROW = {2: np.dtype(np.uint64), 4: np.dtype((np.void, 16))}  # one element per lane's dwords, for a 1-D take

def _dword_rows(st, a:np.ndarray, ndw:int) -> np.ndarray|None:
  """ndw-dword loads whose lane addresses all lie in one mapping at dword-aligned distances from the lowest: the
  dwords [lanes * ndw], gathered from that checked range (a fast 1-D take when the distances are multiples of the
  access size); else None."""
  lo, hi = int(a.min()), int(a.max())
  size = hi - lo + 4 * ndw
  if hi >> 63 or not st.mem.is_mapped(lo, size): return None
  rel = a.view(np.int64) - lo  # int64 math is much cheaper than uint64 in numpy; hi < 2**63 makes the view exact
  if (rel & 3).any(): return None
  row = _ROW.get(ndw)
  words = st.mem.view(lo, size, False).view(u32)
  if row is not None and not (rel & (4 * ndw - 1)).any(): return np.take(words.view(row), rel >> (ndw.bit_length() + 1)).view(u32)
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
  except GPUPageFault as err: raise GPUPageFault(err.va, err.size, err.write, _where(st, pc, name)) from None

def _store(st, a:np.ndarray, vals:np.ndarray, ndw:int, pc:int, name:str):
  """Store vals ([lanes * ndw] elements) at each lane address a."""
  if not len(a): return
  if (dense:=_dense(st, a, vals.dtype.itemsize * ndw, True)) is not None:
    dense[:] = np.ascontiguousarray(vals).view(np.uint8)
    return
  e = _addrs(a, ndw)
  if (span:=_span(st, e, vals.dtype.itemsize, True)) is not None: return _scatter(span[0], span[1], vals)
  try: st.mem.store(e, vals, "")
  except GPUPageFault as err: raise GPUPageFault(err.va, err.size, err.write, _where(st, pc, name)) from None

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

def lane_fault(st, w, a:np.ndarray, m, full:bool, nbytes:int, write:bool, pc:int, name:str) -> GPUPageFault:
  """The fault of a global memory instruction whose lane addresses `a` (the active lanes', wave-major) missed: the
  first lane whose whole access (nbytes: 16 for a b128) is not inside one mapping."""
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
  except GPUPageFault: raise lane_fault(st, w, a, m, full, np.dtype(kind).itemsize * ndw, False, pc, name) from None
  return _spread(_widen(vals), m, full, ndw)

def gstore(st, w, addr, m, full, data:list, pc:int, name:str):
  a = _lanes(addr, m, full)
  try: _gstore(st, a, m, full, data, pc, name)
  except GPUPageFault: raise lane_fault(st, w, a, m, full, np.asarray(data[0]).dtype.itemsize * len(data), True, pc, name) from None

def _gstore(st, a:np.ndarray, m, full, data:list, pc:int, name:str):
  if full and len(a) and data[0].dtype == u32 and (dense:=_dense(st, a, 4 * len(data), True)) is not None:
    lanes = dense.view(u32).reshape(m.shape + (len(data),))
    for j, d in enumerate(data): lanes[:, :, j] = d  # interleave the dwords straight into memory
    return
  vals = np.stack([_full(d, m.shape) for d in data], axis=-1)
  _store(st, a, vals.reshape(-1) if full else vals[m].reshape(-1), len(data), pc, name)

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

# each operation (semantics DS_ATOMIC's names): (the new memory value from the old one and the lane's data, the
# element type); the stepper applies the same functions one lane at a time
ATOMIC = {"add": (np.add, "u4"), "sub": (np.subtract, "u4"), "min_i": (np.minimum, "i4"), "max_i": (np.maximum, "i4"),
          "min_u": (np.minimum, "u4"), "max_u": (np.maximum, "u4"), "and": (np.bitwise_and, "u4"),
          "or": (np.bitwise_or, "u4"), "xor": (np.bitwise_xor, "u4"), "add_f": (np.add, "f4"),
          # ds_min_f32/ds_max_f32: src < tmp ? src : tmp (the manual's pseudocode): a NaN on either side keeps memory
          "min_f": (lambda old, new: np.where(new < old, new, old), "f4"),
          "max_f": (lambda old, new: np.where(new > old, new, old), "f4"),
          "xchg": (lambda old, new: new, "u4"),  # ds_storexchg_rtn: stores data, returns the old value
          # RDNA4 ds_min_num/max_num_f32: the data is the pseudocode's first operand (two NaNs: it, quieted)
          "min_num_f": (lambda old, new: min_num(new, old), "f4"), "max_num_f": (lambda old, new: max_num(new, old), "f4")}

def ldsatomic(st, w, addr, m, full, data, op:str, pc:int, name:str) -> np.ndarray:
  """A 32-bit LDS read-modify-write. Lanes hitting the same address apply in lane order; each returns the value it saw."""
  ufunc, t = ATOMIC[op]
  idx = _shared(st, w, addr, m, full, 1, 4, True, pc, name)
  if (idx % 4).any(): raise GPUPageFault(int(idx[0]), 4, True, _where(st, pc, name) + ": misaligned LDS atomic", "LDS")
  words = st.lds.view(t)
  d = np.broadcast_to(data, m.shape)
  d = (d.reshape(-1) if full else d[m]).view(t)
  slot = idx // 4
  before = np.empty(len(slot), np.dtype(t))
  order = np.argsort(slot, kind="stable")  # group equal addresses, keeping lane order within each
  s, dv = slot[order], d[order]
  start = np.r_[True, s[1:] != s[:-1]]
  seg = np.cumsum(start) - 1
  first = np.nonzero(start)[0]
  acc = words[s[first]].copy()
  # walk the k-th lane of every address group at once: loops over the deepest conflict, not over lanes
  rank = np.arange(len(s)) - first[seg]
  for k in range(int(rank.max()) + 1 if len(s) else 0):
    sel = rank == k
    g = seg[sel]
    before[order[sel]] = acc[g]
    acc[g] = ufunc(acc[g], dv[sel]).astype(t)
  words[s[first]] = acc
  ret = np.zeros(m.shape, np.dtype(t))
  if full: ret = before.reshape(m.shape)
  else: ret[m] = before
  return ret.view(u32)

def bpermute(idx, data, m) -> np.ndarray:
  """ds_bpermute_b32: each lane reads `data` of lane idx % lanes (an inactive source lane reads 0)."""
  src = np.where(m, data, 0)
  lanes = np.broadcast_to(np.asarray(idx, u32) & (m.shape[1] - 1), m.shape).astype(np.int64)
  return np.take_along_axis(src, lanes, axis=1).astype(u32)

def permute(idx, data, m) -> np.ndarray:
  """ds_permute_b32: each active lane writes its `data` to lane idx % lanes (the highest writer wins)."""
  n = m.shape[0]
  out = np.zeros(m.shape, u32)
  lanes = np.broadcast_to(np.asarray(idx, u32) & (m.shape[1] - 1), m.shape).astype(np.int64)
  rows = np.broadcast_to(np.arange(n)[:, None], m.shape)
  out[rows[m], lanes[m]] = np.broadcast_to(data, m.shape)[m]
  return out
