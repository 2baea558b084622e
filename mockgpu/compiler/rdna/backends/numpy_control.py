"""The numpy backend's run-time helpers for what a translation cannot fix ahead: M0-relative register indexes and
computed jump targets. Each works per wave (M0 and the target are wave-uniform, and waves of one group may differ):
a gather or scatter over the register file per distinct index, never a loop over lanes."""
from __future__ import annotations
import numpy as np
from mockgpu.compiler.cache import translated as _translated  # underscored: the translated code imports this module with *
from mockgpu.compiler.rdna.backends.numpy_runtime import u32, u64, vw
from mockgpu.compiler.rdna.faults import relative_error, jump_error, trap_error  # noqa: F401 (trap_error: the translated code raises it)

def relative(st, base:int, m0, field:tuple[int, int], ndw:int, limit:int, pc:int, name:str) -> np.ndarray:
  """Per wave, the register index base plus the M0 field (shift, bits) (uint32 arithmetic, as the pseudocode's
  `addr += M0.u32[...]`), checked: an index whose ndw registers reach past limit raises."""
  m0, (shift, bits) = np.asarray(m0, u32), field
  idx = ((m0 >> u32(shift)) & u32((1 << bits) - 1) if bits < 32 else m0).astype(u32)
  idx = (idx + u32(base)).astype(np.int64)  # wraps in uint32 first
  bad = idx + ndw > limit
  if bad.any(): raise relative_error(name, st.pgm, pc, int(idx[bad][0]), limit)
  return idx

class LazyBlocks:
  """A translation's subset blocks (backends/numpy.py split_subset), compiled at the first divergence of a kernel
  (once per machine: through the translation cache, as the rest of the translation; once per process: kept in the
  module's globals g) and bound to the chunk's state st at its first use."""
  __slots__ = ("st", "g", "fns")
  def __init__(self, st, g:dict): self.st, self.g, self.fns = st, g, None
  def __getitem__(self, k:int):
    if self.fns is None:
      if "build_subset" not in self.g:  # the lines before keep every line number what it is in the whole source
        src, name = "\n" * self.g["SUBSET_LINE"] + self.g["SUBSET_SOURCE"], self.g["build"].__code__.co_filename
        exec(_translated("rdna-subset", "1", f"{name}\n{src}".encode(), lambda: src, name), self.g)
      self.fns = self.g["build_subset"](self.st)
    return self.fns[k]

def _waves(w, n:int) -> np.ndarray:
  return np.arange(n) if type(w) is slice else np.asarray(w)

def vgather(V:list, w, idx:np.ndarray) -> np.ndarray:
  """Each wave's VGPR idx[wave] (all lanes): one copy per distinct index."""
  first = V[int(idx[0])][w]
  if (idx == idx[0]).all(): return first
  out = np.empty_like(first)
  for r in np.unique(idx):
    sel = idx == r
    out[sel] = V[int(r)][w][sel]
  return out

def vscatter(V:list, w, idx:np.ndarray, val, m:np.ndarray, full:bool):
  """Write val to each wave's VGPR idx[wave] in its active lanes m."""
  val = np.broadcast_to(val, m.shape)
  if (idx == idx[0]).all(): return vw(V, int(idx[0]), w, val, m, full)
  waves = _waves(w, len(idx))
  for r in np.unique(idx):
    sel = idx == r
    vw(V, int(r), waves[sel], val[sel], m[sel], full)

def sgather(S:np.ndarray, w, idx:np.ndarray, ndw:int) -> np.ndarray:
  """Each wave's SGPR idx[wave] (ndw 2: the pair from it, as uint64)."""
  waves = _waves(w, len(idx))
  lo = S[idx, waves]
  return lo if ndw == 1 else lo.astype(u64) | S[idx + 1, waves].astype(u64) << u64(32)

def sscatter(S:np.ndarray, w, idx:np.ndarray, val, ndw:int):
  waves = _waves(w, len(idx))
  val = np.broadcast_to(np.asarray(val, u64 if ndw == 2 else u32), idx.shape)
  S[idx, waves] = val.astype(u32) if ndw == 1 else (val & u64(0xffffffff)).astype(u32)
  if ndw == 2: S[idx + 1, waves] = (val >> u64(32)).astype(u32)

def jump(st, target, starts:np.ndarray, pc:int, name:str) -> np.ndarray:
  """The block each wave's computed jump goes to: target (a byte address per wave) must be the first instruction of
  a block (starts: the blocks' offsets from the entry, ascending; every instruction is one in code with computed
  jumps; a branch to before the entry is a negative one), else jump_error."""
  off = (np.asarray(target, u64) - u64(st.pgm)).view(np.int64)
  k = np.minimum(np.searchsorted(starts, off), len(starts) - 1)
  ok = starts[k] == off
  if not ok.all(): raise jump_error(st.mem, name, st.pgm, pc, int(np.asarray(target, u64)[~ok][0]))
  return k
