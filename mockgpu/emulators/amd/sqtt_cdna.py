"""SQ thread traces for CDNA (gfx942, gfx950): tinygrad's CDNA packets (renderer/amd/sqtt.py PACKET_TYPES_CDNA), and a
wave64 timing MODEL of the traced CU, fed with the exact instruction streams the executor ran (as sqtt.py for RDNA).

Exact: which instructions each traced wave ran, in order, and their branch outcomes (JUMP / NEXT), from the numpy path's
block steps; the INST op of each (isa.cdna_op, as the MI350X captures show them).
MODEL (documented, deterministic, not a measurement), calibrated on tinygrad's MI350X capture of a 32x32 gemm
(extra/sqtt/examples gfx950, per-wave gaps between INST tokens on CU 0, medians over the 8 traced waves of two runs):
- placement: workgroup i of an XCC's share goes to the (i mod n)-th of the n enabled CUs, SE first (perf.py); the waves
  arriving at a CU go to its SIMDs round robin; the board's wave slots per SIMD (8), reused after the wave ends.
- issue: a wave64 instruction takes 4 cycles on its SIMD16 (every gap of the capture is a multiple of 4, most are 4);
  gaps VALU->LDS 12, VALU->VMEM 12, VMEM load->VALU 16, LDS->SALU 8, s_waitcnt->SALU 8, and SALU->VALU 0 (the capture
  issues a wave's SALU and the VALU after it in the same cycle); one instruction per cycle per port and SIMD.
- memory: SMEM 770, VMEM load 1890, store 232, LDS store 40, LDS load 24 cycles (the capture's issue-to-s_waitcnt
  times); in order per counter; s_waitcnt's vmcnt (loads and stores, gfx9 has no vscnt) and lgkmcnt.
- barriers as on RDNA (sqtt.py), released 16 cycles after the last arrival.
Tokens: WAVESTART / WAVEEND for the traced CU's waves, per instruction an ISSUE (code 2: issued with an INST token, 3: an
s_waitcnt or s_nop, which have none) and its INST; s_endpgm's INST is OTHER_MSG. Time: CDNA_MISC deltas (4-cycle units,
the decoder's resolution) and, past 1020 cycles, an absolute CDNA_TIMESTAMP (modelled cycle + 4: tinygrad's decoder
places one 4 cycles early). Not emitted: REG, REG_CS(_PRIV), USERDATA, EVENT, PERF, INST_PC, ISSUE stall codes (1), and
the wave tokens of the SE's other CUs.
"""
from __future__ import annotations
from tinygrad.renderer.amd import sqtt as tg
from mockgpu.emulators.amd.sqtt import Layout, Timing, Unit, Wave, _push, _wait_until

LAYOUT = Layout(0, tg.PACKET_TYPES_CDNA, tg.InstOpCDNA)
QUANTUM = 4        # cycles per CDNA_MISC delta unit
MISC_MAX = 255     # CDNA_MISC.delta's largest value
LANES_PER_COUNT = 4  # CDNA_WAVESTART.count: the wave's lanes / 4 (16 for wave64 in the captures)
GAP = {("valu", "lds"): 12, ("valu", "vmem_ld"): 12, ("valu", "vmem_st"): 12, ("vmem_ld", "valu"): 16, ("lds", "salu"): 8,
       ("salu", "valu"): 0, ("wait", "salu"): 8, ("trans", "valu"): 8}
AFTER = {k: 4 for k in ("valu", "trans", "salu", "smem", "vmem_ld", "vmem_st", "lds", "branch", "wait", "imm", "barrier", "msg", "end")}
AFTER["hint"] = 0
MEM_LATENCY = {"smem": 770, "vmem_ld": 1890, "vmem_st": 232, "lds": 40}
LDS_LOAD_LATENCY = 24
# tinygrad's decoder reads a 16-nibble window ahead of the packet it decodes: the last packets need 16 nibbles after them
TAIL = 16
ISSUED, IMMEDIATE = 2, 3   # CDNA_ISSUE codes: an instruction with an INST token, one without (s_waitcnt, s_nop)

def wait_time(w:Wave, name:str, simm:int, rdna4:bool) -> int:
  """gfx9 s_waitcnt: vmcnt in bits 3:0 and 15:14, lgkmcnt in 11:8 (expcnt, 6:4, has nothing to count in compute)."""
  if name != "S_WAITCNT": return 0
  vm, lgkm = (simm & 0xf) | (simm >> 14 & 3) << 4, simm >> 8 & 0xf
  return max(_wait_until(w, "vm", vm), _wait_until(w, "lgkm", lgkm))

def start(unit:Unit, w:Wave, t:int):
  unit.emit(t, "CDNA_WAVESTART", cu=unit.place[1], wave=w.slot, simd=unit.simd, count=unit.lanes // LANES_PER_COUNT)

def issue(unit:Unit, w:Wave, step:tuple, t:int, layout:Layout):
  pc, info, taken, _ = step
  if info.counter:
    latency = LDS_LOAD_LATENCY if info.token == "INST:LDS_RD" else MEM_LATENCY[info.timing]
    _push(w, "vm" if info.counter == "vs" else info.counter, t + latency)
  op = unit.ops[pc]
  if op == "ISSUE" and info.timing == "hint": return
  unit.emit(t, "CDNA_ISSUE", simd=unit.simd, **{f"inst{w.slot}": IMMEDIATE if op == "ISSUE" else ISSUED})
  if op == "ISSUE": return
  if op == "BRANCH": op = "JUMP" if taken else "NEXT"
  unit.emit(t, "CDNA_INST", wave=w.slot, simd=unit.simd, op=tg.InstOpCDNA["OTHER_MSG" if op == "END" else op])
  if op == "END": unit.emit(t, "CDNA_WAVEEND", cu=unit.place[1], wave=w.slot, simd=unit.simd)

TIMING = Timing(GAP, AFTER, MEM_LATENCY, 16, QUANTUM, wait_time, issue, start)

class Encoder:
  """Packs CDNA packets nibble by nibble; time advances by CDNA_MISC deltas or an absolute CDNA_TIMESTAMP."""
  def __init__(self, limit:int):
    self.limit, self.nib, self.t, self.full = limit * 2 - TAIL, bytearray(), 0, False
    self._raw(LAYOUT.cls["CDNA_TIMESTAMP"], timestamp=0)  # the anchor: the decoder's time 0 is the trace's start

  def put(self, name:str, t:int, **kw):
    t -= t % QUANTUM
    units = (t - self.t) // QUANTUM
    if units > 4 * MISC_MAX: self._raw(LAYOUT.cls["CDNA_TIMESTAMP"], timestamp=t + QUANTUM)
    else:
      while units > 0:
        self._raw(LAYOUT.cls["CDNA_MISC"], delta=min(units, MISC_MAX))
        units -= MISC_MAX
    self.t = max(self.t, t)
    self._raw(LAYOUT.cls[name], **kw)

  def _raw(self, cls, **kw):
    if self.full: return
    raw = cls.encoding.default
    for k, v in kw.items(): raw = getattr(cls, k).set(raw, v)
    n = LAYOUT.nibbles[cls]
    if len(self.nib) + n > self.limit:
      self.full = True  # the hardware stops writing at the buffer's end
      return
    self.nib += bytes((raw >> (4 * i)) & 0xf for i in range(n))

  def blob(self) -> bytes:
    """The bytes written, then zero nibbles (CDNA_MISC packets of no delta) to whole 32-byte units, at least TAIL of them."""
    n = self.nib + bytes(TAIL + -(len(self.nib) + TAIL) % 64)
    return bytes(n[i] | (n[i + 1] << 4) for i in range(0, len(n), 2))

def encode(unit:Unit, limit:int) -> tuple[bytes, bool]:
  """The unit's events as a blob of at most `limit` bytes, and whether it overflowed."""
  enc = Encoder(limit)
  for t, _, name, kw in sorted(unit.events, key=lambda e: (e[0], e[1])): enc.put(name, t, **kw)
  return enc.blob(), enc.full
