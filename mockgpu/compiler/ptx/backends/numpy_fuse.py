"""Load fusion: the loads of a basic block off one base register at nearby constant offsets become one read per lane.

NVRTC unrolls loops into runs like `ld [%rd+0]; ld [%rd+4]; ...` where each lane reads a different cache line: one
strided gather per load costs numpy a pass over every lane's line. A cluster of such loads is read once instead
(Env.ld_rows: each lane's whole range, transposed so that every loaded element is a contiguous array), and each load
takes its rows of that. It stays exact because nothing that writes memory (st, atom, red) and no write of the base
register may come between the loads of a cluster, so each load reads the bytes it would have read at its own place;
and the prefetch never faults: when a lane's range is not inside one global allocation it gives None and the loads run
one by one as before, each checked and faulting as itself.

Loads off one base register that no cluster takes (offsets too far apart: a matmul's rows, 256 bytes apart) but of one
type and width form a group: one call reads them all (Env.ld_group: one bounds check of the span they cover, one
take of every load's vectors), under the same rules, and gives None where the loads must run one by one.
"""
from __future__ import annotations
from dataclasses import dataclass
from typing import NamedTuple
from mockgpu.errors import UnsupportedInstruction
from mockgpu.compiler.ptx import syntax as P
from mockgpu.compiler.ptx.types import PTX_TYPES, np_dtype

MAX_SPAN = 512   # bytes of one lane's range: wider clusters read more unused bytes and stage fewer lanes per transpose step
MAX_GAP = 32     # unread bytes allowed between two loads of a cluster
_WRITES_MEMORY = ("st", "atom", "red")

@dataclass
class Fused:
  """One load of a cluster: its rows `index .. index+nvec` of the cluster's prefetch `name`."""
  name: str
  index: int
  head: bool            # the cluster's first load in program order: it emits the prefetch
  base: P.Addr          # the cluster's lowest address (base register + lowest offset)
  count: int            # elements of the cluster's itemsize per lane
  dtype: str            # PTX type the prefetch is read as (the head's)

@dataclass
class Grouped:
  """One load of a group: its entry `index` of the group's read `name` (a (loads, nvec, lanes) array)."""
  name: str
  index: int
  head: bool            # the group's first load in program order: it emits the read
  base: P.Addr          # the base register (offset 0)
  offsets: tuple        # each load's byte offset from the base, in the group's order
  dtype: str
  nvec: int

class _Load(NamedTuple):
  addr: P.Addr
  type: str
  size: int             # itemsize
  nvec: int
  ins: P.Instr
  pos: int              # index in the block
  @property
  def end(self) -> int: return self.addr.offset + self.size * self.nvec

def plan(instrs:list, tmp) -> dict[int, Fused|Grouped]:
  """Clusters and groups of the fusable loads of one block, keyed by id() of each member instruction; tmp() names a
  prefetch."""
  out: dict[int, Fused|Grouped] = {}
  open_: dict[str, list[_Load]] = {}   # base register -> loads off it since it was last written
  def close(reg:str):
    loads = open_.pop(reg, [])
    for c in _clusters(loads): _name(c, tmp, out)
    for g in _groups([ld for ld in loads if id(ld.ins) not in out]): _name_group(g, tmp, out)
  for pos, ins in enumerate(instrs):
    if (load := _candidate(ins, pos)) is not None: open_.setdefault(load.addr.base.name, []).append(load)
    if ins.op in _WRITES_MEMORY:
      for reg in list(open_): close(reg)
    for reg in _written(ins):
      if reg in open_: close(reg)
  for reg in list(open_): close(reg)
  return out

def _candidate(ins:P.Instr, pos:int) -> _Load|None:
  """An unguarded global/generic load off a register, else None."""
  if ins.op not in ("ld", "ldu") or ins.guard is not None or ins.error is not None or len(ins.args) != 2: return None
  if any(s in ins.mods for s in ("shared", "local", "const", "param", "shared::cta")): return None
  types = [m for m in ins.mods if m in PTX_TYPES]
  d, a = ins.args
  if len(types) != 1 or not isinstance(a, P.Addr) or not isinstance(a.base, P.Reg): return None
  nvec = next((int(f[1:]) for f in ins.mods if f in ("v2", "v4", "v8")), 1)
  if len(d.items if isinstance(d, P.Vec) else [d]) != nvec: return None
  try: size = np_dtype(types[0]).itemsize
  except UnsupportedInstruction: return None
  return _Load(a, types[0], size, nvec, ins, pos)

def _written(ins:P.Instr) -> list[str]:
  """Registers an instruction writes: its first operand (PTX puts destinations first), unless it is a store."""
  if ins.op in ("st", "red") or not ins.args: return []
  d = ins.args[0]
  items = d.items if isinstance(d, P.Vec) else (d.p, d.q) if isinstance(d, P.PredPair) else (d,)
  return [x.name for x in items if isinstance(x, P.Reg)]

def _clusters(loads:list[_Load]) -> list[list[_Load]]:
  """Loads of one base register split by offset into runs of one itemsize, dense enough and at most MAX_SPAN wide."""
  out, cur = [], []
  for ld in sorted(loads, key=lambda x: x.addr.offset):
    if cur:
      lo, end = cur[0].addr.offset, max(x.end for x in cur)
      if ld.size != cur[0].size or (ld.addr.offset - lo) % ld.size or ld.addr.offset > end + MAX_GAP or ld.end - lo > MAX_SPAN:
        out.append(cur)
        cur = []
    cur.append(ld)
  out.append(cur)
  return [c for c in out if len(c) > 1]

def _groups(loads:list[_Load]) -> list[list[_Load]]:
  """The loads of one type and width, two or more (in program order)."""
  by: dict[tuple, list[_Load]] = {}
  for ld in loads: by.setdefault((ld.type, ld.nvec), []).append(ld)
  return [g for g in by.values() if len(g) > 1]

def _name_group(group:list[_Load], tmp, out:dict):
  name, offsets = tmp(), tuple(ld.addr.offset for ld in group)
  for i, ld in enumerate(group):
    out[id(ld.ins)] = Grouped(name, i, i == 0, P.Addr(ld.addr.base, 0), offsets, ld.type, ld.nvec)

def _name(cluster:list[_Load], tmp, out:dict):
  lo, size = cluster[0].addr.offset, cluster[0].size
  first = min(cluster, key=lambda x: x.pos)
  name, base, count = tmp(), P.Addr(first.addr.base, lo), (max(x.end for x in cluster) - lo) // size
  for ld in cluster: out[id(ld.ins)] = Fused(name, (ld.addr.offset - lo) // size, ld is first, base, count, first.type)
