"""MUBUF/VBUFFER buffer-resource cases (V#s) and their reference from the manual's range checks.
(Moved from tests/compiler/rdna/test_rdna_buffer.py so that no test file imports another.)"""
from __future__ import annotations
import numpy as np
from support.rdna_harness import aligned
from support.rdna_lane_memory import run_on, EXEC_PATTERN
WORDS = 1024

def vsharp(base:int, stride:int, num_records:int, oob:int, add_tid:int=0, swizzle:int=0) -> list[int]:
  return [base & 0xffffffff, (base >> 32) & 0xffff | stride << 16 | swizzle << 30, num_records, add_tid << 23 | oob << 28]

def in_range(oob:int, stride:int, nr:int, index:int, offset:int, size:int) -> bool:
  if oob == 0: return index < nr and offset + size <= stride
  if oob == 1: return index < nr
  if oob == 2: return nr != 0
  return stride * index + offset + size <= nr

def lane_regs(rng, idx_hi:int, off_hi:int) -> tuple[np.ndarray, np.ndarray]:
  return rng.integers(0, idx_hi, 32).astype(np.uint32), (rng.integers(0, off_hi, 32) * 4).astype(np.uint32)

CASES = [  # (oob, stride, num_records, idxen, offen, add_tid, soffset, inst offset, ndw)
  (3, 0, 600, False, True, 0, 64, 8, 1), (3, 0, 601, False, True, 0, 0, 4, 4), (3, 16, 500, True, True, 0, 12, 0, 2),
  (1, 16, 20, True, False, 0, 4, 4, 4), (0, 16, 30, True, True, 0, 0, 0, 2), (0, 12, 40, True, True, 0, 0, 4, 3),
  (2, 8, 0, True, True, 0, 0, 0, 1), (2, 8, 7, True, True, 0, 16, 0, 2), (1, 32, 36, False, True, 1, 0, 0, 1),
  (1, 8, 40, True, False, 1, 0, 0, 1)]

def expected(c, vindex, voffset, lane_ok, fn):
  """fn(lane, j, byte offset from the buffer's base, in range) for every active lane and dword."""
  oob, stride, nr, idxen, offen, add_tid, soff, ioff, ndw = c
  for l in range(32):
    if not lane_ok[l]: continue
    index = (int(vindex[l]) if idxen else 0) + (l if add_tid else 0)
    offset = (int(voffset[l]) if offen else 0) + ioff
    for j in range(ndw):
      fn(l, j, soff + offset + stride * index + 4 * j, in_range(oob, stride, nr, index, offset + 4 * j, 4))

def check_loads_and_stores(path:str, c, monkeypatch, make, arch:str="rdna3"):
  """Case c's loads, then its stores, through a V# over a buffer of known words, by the kernel make(vs, c, load) (each
  lane's index at in[0:32], offset at in[32:64]; loads stored to out, 128 bytes a dword), against expected()."""
  rng = np.random.default_rng(list(c[:3]))
  vindex, voffset = lane_regs(rng, 48, 160 if c[0] else c[1] // 4 + 2)  # OOB_SELECT 0: offsets about the stride
  lane_ok = [(EXEC_PATTERN >> l) & 1 == 1 for l in range(32)]
  mem = aligned(WORDS * 4 * 2, 256).view(np.uint32)
  mem[:] = np.arange(len(mem), dtype=np.uint32) * 3 + 7
  inp = aligned(256, 256).view(np.uint32)
  inp[:32], inp[32:64] = vindex, voffset
  out = aligned(128 * 4, 256).view(np.uint32)
  vs = vsharp(mem.ctypes.data, c[1], c[2], c[0], c[5])
  run_on(path, make(vs, c, True), [out, inp, mem], monkeypatch, native_expected=False, block=(32, 1, 1), arch=arch)
  want = np.zeros((4, 32), np.uint32)
  def load(l, j, off, ok): want[j, l] = mem[off // 4] if ok else 0
  expected(c, vindex, voffset, lane_ok, load)
  got = out.reshape(4, 32)
  for j in range(c[8]):
    assert (got[j][lane_ok] == want[j][lane_ok]).all(), f"dword {j}: {got[j]} != {want[j]}"
    assert (got[j][~np.array(lane_ok)] == 0xdead).all()
  # stores: the same addresses, data 0x1000 * (j + 1) + lane; out of range writes nothing
  start = mem.copy()
  run_on(path, make(vs, c, False), [out, inp, mem], monkeypatch, native_expected=False, block=(32, 1, 1), arch=arch)
  ref = start.copy()
  def store(l, j, off, ok):
    if ok: ref[off // 4] = 0x1000 * (j + 1) + l
  expected(c, vindex, voffset, lane_ok, store)
  assert (mem == ref).all(), np.nonzero(mem != ref)
