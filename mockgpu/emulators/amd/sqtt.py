"""SQ thread traces (SQTT) for RDNA3 (layout 3) and RDNA4 (layout 4): a timing MODEL of the traced SIMD of each shader
engine, fed with the exact instruction streams the executor ran, and an encoder built from tinygrad's own packet
classes (renderer/amd/sqtt.py), so that what is written is what tinygrad's decoder reads.

Exact: which instructions each traced wave ran, in order, their PCs and branch outcomes (from the numpy path's block
steps, emulators/rdna/recorder.py), and which waves ran on the traced unit by the placement below.
MODEL (documented, deterministic, not a measurement):
- placement: workgroup i of the dispatch goes to SE i mod SEs, then SA, then WGP round robin; wave k of a workgroup to
  SIMD k mod 4 (WGP mode: two CUs' SIMDs); at most the board's wave slots per SIMD (16), a slot reused only after its wave ends; a workgroup is
  admitted when its waves fit; only WGPs the COMPUTE_STATIC_THREAD_MGMT_SE<i> CU masks enable take work.
  VGPR/LDS occupancy is not modelled.
- issue: one instruction per cycle per SIMD and issue port (VALU, SALU, SMEM, VMEM, LDS, branch; the sequencer for
  waits, no-ops, messages and barriers), a wave one at a time; the wave ready earliest issues first (then the
  oldest). The cycles a wave
  waits between two of its instructions come from the gfx1100 gaps measured on real captures (GAP, AFTER below:
  VALU->VALU 5, SALU->SALU 2, VALU->SALU 7, VALU->branch 18, VALU->memory 18, branch->next 3, s_waitcnt->next 2).
- memory: fixed latencies (SMEM 850, VMEM load 1500, store 300, LDS 12 cycles; cold-cache numbers of the captures),
  returned in order per counter; s_waitcnt / s_wait_* wait for the counter exactly as the ISA defines; s_endpgm waits
  for outstanding stores.
- barriers: released when every live wave of the workgroup on the traced SIMD has arrived (the waves on the other
  SIMDs are assumed to keep pace), plus 18 cycles.
- clock: the board's engine clock (AMDBoard.max_engine_clk); realtime markers every 4096 cycles carry 100 MHz ticks.
Not emitted: REG, TS_WAVE_STATE, UTILCTR, SNAPSHOT, PERF, EVENT tokens and the OTHER_* tokens of untraced SIMDs.
Cost is bounded by the buffer: a wave's stream is expanded when it starts, and the simulation stops once its events
could not fit in BUF0 any more (the trace is full either way, as on hardware).
"""
from __future__ import annotations
import heapq
from dataclasses import dataclass, field
from tinygrad.renderer.amd import sqtt as tg

RT_PERIOD = 4096
LAUNCH = 16            # cycles from the trace start to the first wave of a dispatch
GAP = {("valu", "valu"): 5, ("valu", "salu"): 7, ("valu", "smem"): 7, ("valu", "branch"): 18, ("valu", "lds"): 18,
       ("valu", "vmem_ld"): 18, ("valu", "vmem_st"): 18, ("salu", "smem"): 9, ("vmem_ld", "vmem_ld"): 1, ("trans", "valu"): 8}
AFTER = {"valu": 5, "trans": 8, "salu": 2, "smem": 1, "vmem_ld": 1, "vmem_st": 1, "lds": 1, "branch": 3, "wait": 2, "imm": 1,
         "barrier": 1, "msg": 1, "hint": 0, "end": 1}
MEM_LATENCY = {"smem": 850, "vmem_ld": 1500, "vmem_st": 300, "lds": 12}
BARRIER_RELEASE = 18
EXEC_DELAY = {"VALU": 5, "SALU": 2, "VMEM": 1, "LDS": 1}
# the SIMD's issue ports: each cycle it issues at most one instruction per port, from different waves (a wave issues one
# instruction at a time); waits, no-ops, messages and barriers are handled by the sequencer ("sched")
PORTS = {"valu": "valu", "trans": "valu", "salu": "salu", "branch": "branch", "smem": "smem", "vmem_ld": "vmem", "vmem_st": "vmem",
         "lds": "lds"}

@dataclass
class Layout:
  """The packet classes and op enum of a layout (3: RDNA3, 4: RDNA4), and each class's nibble count."""
  number:int
  types:dict
  op:type
  nibbles:dict = field(default_factory=dict)
  def __post_init__(self):
    self.nibbles = {cls: nc for cls, nc, *_ in tg._build_decode_tables(self.types)[0].values()}
    by_name = {cls.__name__.removesuffix("_RDNA4"): cls for cls in self.types.values()}
    self.cls = by_name

LAYOUTS = {3: Layout(3, tg.PACKET_TYPES_RDNA3, tg.InstOp), 4: Layout(4, tg.PACKET_TYPES_RDNA4, tg.InstOpRDNA4)}

class Encoder:
  """Packs packets nibble by nibble, with time filler packets where a gap exceeds a packet's delta field."""
  def __init__(self, layout:Layout, limit:int):
    self.layout, self.limit, self.nib, self.t, self.full = layout, limit * 2, bytearray(), 0, False
    self.put("LAYOUT_HEADER", 0, layout=layout.number, sel_a=6)

  def put(self, name:str, t:int, **kw):
    cls = self.layout.cls[name]
    gap = t - self.t
    dmax = cls.delta.mask if getattr(cls, "delta", None) is not None else 0
    while gap > dmax:
      if gap - dmax <= 19:
        d = max(4, gap - dmax)
        self._raw(self.layout.cls["TS_DELTA_SHORT"], delta=d - 4)
      else:
        d = gap - dmax
        self._raw(self.layout.cls["TS_DELTA_OR_MARK"], delta=d)
      gap -= d
    if dmax: kw["delta"] = gap
    self._raw(cls, **kw)
    self.t = t

  def marker(self, t:int, realtime:int):
    """A realtime marker (TS_DELTA_OR_MARK rt=1, pl=0): it adds no cycles, its delta is the 100 MHz clock."""
    if t > self.t: self._raw(self.layout.cls["TS_DELTA_OR_MARK"], delta=t - self.t)  # a plain time filler up to t
    self.t = t
    self._raw(self.layout.cls["TS_DELTA_OR_MARK"], delta=realtime, rt=1, pl=0)

  def _raw(self, cls, **kw):
    if self.full: return
    raw = cls.encoding.default
    for k, v in kw.items(): raw = getattr(cls, k).set(raw, v)
    n = self.layout.nibbles[cls]
    if len(self.nib) + n > self.limit:
      self.full = True  # the hardware stops writing at the buffer's end
      return
    self.nib += bytes((raw >> (4 * i)) & 0xf for i in range(n))

  def blob(self) -> bytes:
    """The bytes written, padded with NOP nibbles to whole 32-byte units (what WPTR counts)."""
    n = self.nib + bytes(-len(self.nib) % 64)
    return bytes(n[i] | (n[i + 1] << 4) for i in range(0, len(n), 2))

@dataclass
class Wave:
  order:int
  wg:int
  make:object            # () -> its stream [(pc, InstInfo, taken, simm16)], expanded when the wave starts
  stream:list|None = None
  pos:int = 0
  ready:int = 0
  slot:int = -1
  prev:str = ""
  out:dict = field(default_factory=dict)  # memory counter -> in-order completion times

def _wait_until(w:Wave, counter:str, n:int) -> int:
  q = w.out.get(counter, [])
  return q[len(q) - n - 1] if len(q) > n else 0

def wait_time(w:Wave, name:str, simm:int, rdna4:bool) -> int:
  """The cycle at which the counters a wait instruction names have dropped to its counts (ISA semantics)."""
  if not rdna4:
    if name == "S_WAITCNT":
      return max(_wait_until(w, "vm", simm >> 10 & 0x3f), _wait_until(w, "lgkm", simm >> 4 & 0x3f))
    return {"S_WAITCNT_VSCNT": lambda: _wait_until(w, "vs", simm), "S_WAITCNT_VMCNT": lambda: _wait_until(w, "vm", simm),
            "S_WAITCNT_LGKMCNT": lambda: _wait_until(w, "lgkm", simm)}.get(name, lambda: 0)()
  single = {"S_WAIT_LOADCNT": "load", "S_WAIT_STORECNT": "store", "S_WAIT_DSCNT": "ds", "S_WAIT_KMCNT": "km"}
  if name in single: return _wait_until(w, single[name], simm)
  if name in ("S_WAIT_LOADCNT_DSCNT", "S_WAIT_STORECNT_DSCNT"):
    return max(_wait_until(w, "load" if "LOAD" in name else "store", simm >> 8 & 0x3f), _wait_until(w, "ds", simm & 0x3f))
  return 0

@dataclass
class Unit:
  """The traced SIMD of one shader engine: what the model issued there, as (time, seq, packet name, fields)."""
  rdna4:bool
  t0:int
  simd:int
  slots:int                                  # wave slots per SIMD (the board's max_waves_per_simd)
  events:list = field(default_factory=list)
  seq:int = 0
  end:int = 0
  exclude:set = field(default_factory=set)   # token names TOKEN_MASK.token_exclude leaves out
  limit:int = 1 << 62                        # bytes the buffer takes: past them the hardware writes nothing more
  place:tuple = (0, 0)                       # the traced (SA, WGP) of the SE (SQ_THREAD_TRACE_MASK); CDNA: (0, CU)
  timing:Timing|None = None                  # the generation's timing model (None: RDNA's, RDNA_TIMING)
  ops:dict = field(default_factory=dict)     # CDNA: per PC its INST op (isa.cdna_ops)
  lanes:int = 0                              # CDNA: the dispatch's wave size
  simds:list = field(default_factory=list)   # CDNA: the traced CU's SIMDs (SQ_THREAD_TRACE_MASK.simd_en)
  cs:bool = True                             # CDNA: SQ_THREAD_TRACE_MODE.mask_cs (compute waves are traced)
  def emit(self, t:int, name:str, **kw):
    if name in self.exclude: return
    self.events.append((t, self.seq, name, kw))
    self.seq += 1
    self.end = max(self.end, t)

@dataclass(frozen=True)
class Timing:
  """A generation's timing MODEL: per-wave gaps between instruction classes (gap, else after), memory latencies, wave
  barrier release and wave launch spacing, its wait semantics and the tokens an issued instruction emits."""
  gap:dict
  after:dict
  latency:dict
  barrier_release:int
  launch_step:int
  wait:object    # (wave, instruction name, simm16, rdna4) -> the cycle its counters allow
  issue:object   # (unit, wave, (pc, info, taken, simm16), t, layout) -> None: emits the tokens
  start:object   # (unit, wave, t) -> None: emits the wave start

def _rdna_start(unit:Unit, w:Wave, t:int): unit.emit(t, "WAVESTART", wave=w.slot, simd=unit.simd, wgp=0, sa=0, id7=w.slot)

def simulate(unit:Unit, waves_by_wg:list[list[Wave]], layout:Layout):
  """Schedule the waves (grouped by workgroup, in placement order) on one SIMD; their tokens go to unit.events."""
  tm = unit.timing or RDNA_TIMING
  pending, free, heap, live = list(waves_by_wg), list(range(unit.slots)), [], {}
  barrier:dict[int, list[Wave]] = {}
  port_free:dict[str, int] = {}  # issue port -> its next free cycle
  def admit(t:int):
    while pending and len(pending[0]) <= len(free):
      for w in pending.pop(0):
        w.slot, w.ready, w.stream = free.pop(0), t, w.make()
        tm.start(unit, w, t)
        live.setdefault(w.wg, []).append(w)
        heapq.heappush(heap, (w.ready + 1, w.order, w))
        t += tm.launch_step
  admit(unit.t0)
  while heap:
    if len(unit.events) > unit.limit * 2 // 3: return  # every event takes 3 or more nibbles: the buffer is full already
    ready, _, w = heapq.heappop(heap)
    pc, info, taken, simm = w.stream[w.pos]
    if info.timing in ("wait", "end"):
      ready = max(ready, tm.wait(w, info.name, simm, unit.rdna4) if info.timing == "wait" else
                  max((q[-1] for q in w.out.values() if q), default=0))
    if info.timing == "hint":  # s_delay_alu: a scheduling hint, no issue slot and no token
      w.pos += 1
      heapq.heappush(heap, (ready, w.order, w))
      continue
    port = PORTS.get(info.timing, "sched")
    t = max(ready, port_free.get(port, unit.t0))
    port_free[port] = t + 1
    tm.issue(unit, w, w.stream[w.pos], t, layout)
    w.pos += 1
    if info.timing == "end":
      live[w.wg].remove(w)
      free.append(w.slot)
      free.sort()
      _release(barrier, live, w.wg, t, heap, tm.barrier_release)
      admit(t + 1)
      continue
    nxt = w.stream[w.pos][1]
    w.ready = t + tm.gap.get((info.timing, nxt.timing), tm.after[info.timing]) + (simm if info.name == "S_NOP" else 0)
    w.prev = info.timing
    if info.name in ("S_BARRIER", "S_BARRIER_WAIT"):
      barrier.setdefault(w.wg, []).append(w)
      _release(barrier, live, w.wg, t, heap, tm.barrier_release)
    else: heapq.heappush(heap, (w.ready, w.order, w))

def _release(barrier:dict, live:dict, wg:int, t:int, heap:list, delay:int):
  """Release a workgroup's barrier once every live wave of it on the SIMD has arrived."""
  waiting = barrier.get(wg, [])
  if waiting and len(waiting) == len(live.get(wg, [])):
    release = t + delay  # t: the last arrival's issue (or the end of the wave it waited for)
    for w in barrier.pop(wg):
      w.ready = release
      heapq.heappush(heap, (release, w.order, w))

def _issue(unit:Unit, w:Wave, step:tuple, t:int, layout:Layout):
  """The tokens of one issued instruction."""
  _, info, taken, _ = step
  if info.counter: _push(w, info.counter, t + MEM_LATENCY[info.timing])
  if info.token == "END":
    unit.emit(t, "WAVEEND", wave=w.slot, simd=unit.simd, wgp=0, sa=0)
    return
  if not info.token: return
  if info.token == "VALUINST": unit.emit(t, "VALUINST", wave=w.slot)
  elif info.token == "IMMEDIATE": unit.emit(t, "IMMEDIATE", wave=w.slot)
  elif info.token == "BRANCH": unit.emit(t, "INST", wave=w.slot, op=layout.op.JUMP if taken else layout.op.JUMP_NO)
  else: unit.emit(t, "INST", wave=w.slot, op=layout.op[info.token.removeprefix("INST:")])
  if info.exec_kind:
    kind = info.exec_kind
    if kind in ("VALU", "SALU"): unit.emit(t + EXEC_DELAY[kind], "ALUEXEC", src=tg.AluSrc[kind])
    else: unit.emit(t + EXEC_DELAY[kind], "VMEMEXEC", src=tg.MemSrc[kind])

def _push(w:Wave, counter:str, done:int):
  q = w.out.setdefault(counter, [])
  q.append(max(done, q[-1]) if q else done)  # in-order return per counter

RDNA_TIMING = Timing(GAP, AFTER, MEM_LATENCY, BARRIER_RELEASE, 1, wait_time, _issue, _rdna_start)

def encode(unit:Unit, layout:Layout, limit:int, sclk_mhz:int) -> tuple[bytes, bool]:
  """The unit's events as a blob of at most `limit` bytes (and whether it overflowed), with realtime markers."""
  enc = Encoder(layout, limit)
  marks = [(k * RT_PERIOD, -1, "MARK", {}) for k in range(unit.end // RT_PERIOD + 2)]
  for t, _, name, kw in sorted(unit.events + marks, key=lambda e: (e[0], e[1])):
    if name == "MARK": enc.marker(t, t * 100 // sclk_mhz)
    else: enc.put(name, t, **kw)
  return enc.blob(), enc.full
