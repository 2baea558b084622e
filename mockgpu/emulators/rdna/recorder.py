"""What a profiled dispatch ran, exactly: the numpy path's block steps, kept per chunk of workgroups.

The numpy path advances the waves of a chunk block by block (executor._run / _run_diverged): every step runs one
basic block for all waves of the chunk or for a subset of them. A Recorder handed to run_dispatch keeps those steps
(the executor's two hooks: `chunk` when a chunk starts, `step` per block step). From them follow, exactly:
- per wave, how many times each block ran, hence its per-class instruction counts (PMC);
- per wave, its dynamic block sequence, hence its (pc, instruction, branch taken) stream (SQTT);
- per wave, the LDS bank conflict cycles of its DS accesses (the third hook, `lds`, sees each access's lane addresses).
Profiled dispatches run on the numpy path (the C path runs whole waves and does not report blocks).
"""
from __future__ import annotations
from dataclasses import dataclass, field
import numpy as np
from mockgpu.errors import EmulatorBug

@dataclass
class Chunk:
  ids:np.ndarray            # linear workgroup ids of the chunk, in order
  wpg:int                   # waves per workgroup
  whole:list = field(default_factory=list)    # per step: block index, or -1 where the step ran a subset
  subsets:dict = field(default_factory=dict)  # step number -> (block, wave indexes) of a subset step
  conflicts:np.ndarray|None = None            # per wave of the chunk: its LDS bank conflict cycles (bank_conflicts)

class Recorder:
  """Handed to executor.run_dispatch(mem, d, recorder): collects the block steps of every chunk."""
  def __init__(self):
    self.chunks:list[Chunk] = []
    self.prog = None

  # *** the executor's hooks ***
  def chunk(self, prog, ids:np.ndarray, wpg:int):
    if self.prog is None: self.prog = prog
    self.chunks.append(Chunk(np.asarray(ids), wpg, conflicts=np.zeros(len(ids) * wpg, np.int64)))

  def step(self, b:int, waves):
    """Block b ran for every wave of the chunk (waves None) or for the wave indexes `waves`."""
    c = self.chunks[-1]
    if waves is None: c.whole.append(b)
    else:
      c.subsets[len(c.whole)] = (b, np.array(waves, np.int64))
      c.whole.append(-1)

  def lds(self, w, addr:np.ndarray, m:np.ndarray, ndw:int):
    """An LDS access of the waves w (a slice or wave indexes): addr [waves, lanes] byte addresses, m the active lanes,
    ndw dwords per lane. A two-address DS op (ds_load_2addr) calls this once per address, as it makes two passes."""
    c = self.chunks[-1]
    c.conflicts[w] += bank_conflicts(addr, m, ndw)

  # *** what follows from them ***
  @property
  def nblocks(self) -> int: return len(self.prog.block_pc)

  def visits(self, c:Chunk) -> np.ndarray:
    """[blocks, waves of the chunk]: how many times each wave ran each block."""
    out = np.zeros((self.nblocks, len(c.ids) * c.wpg), np.int64)
    whole = np.bincount(np.array([b for b in c.whole if b >= 0], np.int64), minlength=self.nblocks)
    out += whole[:, None]
    for b, w in c.subsets.values(): out[b, w] += 1
    return out

  def wave_blocks(self, c:Chunk, wave:int) -> list[int]:
    """The blocks wave `wave` of the chunk ran, in order."""
    out = []
    for i, b in enumerate(c.whole):
      if b >= 0: out.append(b)
      else:
        sb, w = c.subsets[i]
        j = np.searchsorted(w, wave)
        if j < len(w) and w[j] == wave: out.append(sb)
    return out

def check_blocks(prog, blocks:list[list[int]]) -> None:
  """The translated program's blocks are decode.blocks' (same starts, same order): the stream expansion relies on it."""
  starts = [b[0] for b in blocks]
  if list(prog.block_pc) != starts:
    raise EmulatorBug(f"profiling: the translated kernel's block starts {list(prog.block_pc)[:8]}... differ from decode.blocks' {starts[:8]}...")

LDS_BANKS = 32  # dword-wide banks; one pass serves 32 dwords (see bank_conflicts)

def bank_conflicts(addr:np.ndarray, m:np.ndarray, ndw:int) -> np.ndarray:
  """Per wave, the conflict cycles of one LDS access. Bank rule: 32 banks, each 4 bytes wide, bank = (byte address / 4)
  mod 32; a pass serves 32 dwords, so the lanes go in passes of 32 // ndw lanes (b32: 32 lanes, b64: 16, b96/b128: 8;
  a wave64 b32 access makes two). Per pass, the bank serving the most distinct dwords of its lanes' elements takes that
  many cycles: the conflict cycles are that count less one; lanes reading the same dword share it (broadcast).
  Sources: the RDNA3 ISA guide, "Local Data Share" (each 64 KB half of a WGP's LDS is 32 banks of 512 dwords), the
  CDNA3 ISA guide (32 banks), spec.md 4.6 of issue 26 (conflict cycles = max lanes per bank - 1 per instruction); the
  split of wide accesses into 32-dword passes is AMD's LDS optimisation guidance (consecutive lanes' b64/b128 accesses
  are conflict-free), consistent with the 0 conflicts a gfx1100 capture of tinygrad's gemm reads."""
  waves, lanes = m.shape
  width = 4 if ndw == 3 else ndw  # a b96 element takes a b128 slot of the pass
  per_pass = max(1, min(lanes, 32 // width))
  dw = (np.asarray(addr, np.uint32) >> 2).astype(np.int32)[..., None] + np.arange(ndw, dtype=np.int32)  # dwords: < 2**30
  d = np.where(np.asarray(m, bool)[..., None], dw, -1).reshape(waves * (lanes // per_pass), per_pass * ndw)
  out = np.zeros(len(d), np.int64)
  # passes whose banks each see at most one element have no conflict (the common case): only the others are sorted
  slot = np.where(d >= 0, d & (LDS_BANKS - 1), LDS_BANKS)  # one more slot for the inactive lanes
  seen = np.bincount((np.arange(len(d))[:, None] * (LDS_BANKS + 1) + slot).reshape(-1), minlength=len(d) * (LDS_BANKS + 1))
  hot = np.nonzero(seen.reshape(len(d), LDS_BANKS + 1)[:, :LDS_BANKS].max(axis=1) > 1)[0]
  if len(hot): out[hot] = _busiest_bank(d[hot]) - 1
  return out.reshape(waves, -1).sum(axis=1)

def _busiest_bank(d:np.ndarray) -> np.ndarray:
  """Per pass (row of dwords, -1 for an inactive lane), the distinct dwords of its busiest bank."""
  d = np.sort(d, axis=1)
  new = d >= 0
  new[:, 1:] &= d[:, 1:] != d[:, :-1]  # the distinct dwords of a pass
  r, j = np.nonzero(new)
  per_bank = np.bincount(r * LDS_BANKS + (d[r, j] & (LDS_BANKS - 1)), minlength=len(d) * LDS_BANKS).reshape(len(d), LDS_BANKS)
  return np.maximum(per_bank.max(axis=1), 1)
