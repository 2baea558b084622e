"""An NVIDIA GPU's performance monitor as a profiler object drives it: the PM registers its reg ops reach, the PMA
stream (a ring in memory the GPU writes records into, with its get/put handshake and overflow), and the PC sampler.

The driver side (mockgpu/driver/nv_profiler.py: the MAXWELL_PROFILER_DEVICE object and its controls) checks what the
runtime asks for and hands the GPU a `PerfMon`; the compute engine asks it at each launch whether to sample.

Register windows: the PM bases tinygrad 0.14.0 programs (ops_nv.py `_prof_setup_pc_sampling`): PMASYS, PMAGPC, the GR
GPC broadcast window and the per-GPC unicast window, Ampere/Ada or Blackwell. A reg op outside them is refused.
"""
from __future__ import annotations
import bisect, ctypes, operator
import numpy as np
from mockgpu.boards import NVBoard

# (PMASYS, PMAGPC, GR_GPC broadcast, GPC unicast) bases, Ampere/Ada and Blackwell (ops_nv.py:784)
BASES = {False: (0x24a000, 0x244000, 0x419800, 0x180000), True: (0x2b1000, 0x2b0000, 0x424000, 0x200000)}
GPC_STRIDE, PMAGPC_STRIDE = 0x4000, 0x200
PC_SAMPLING_ENABLE = 0x304     # GR_GPC broadcast register: PC sampling for the context (tinygrad writes 0x80808a)
SM_ENUMERATION, SM_INTERVAL = 0x128, 0x108  # per-SM PC-sampler registers: the id its records carry, the sample interval
PACKET, PAYLOAD = 32, 28       # a PMA packet: 4 payload bytes, a 4-byte header, 24 payload bytes

def blackwell(board:NVBoard) -> bool: return board.qmd_version == 5

def windows(board:NVBoard) -> list[tuple[int, int, str]]:
  """(first, end, name) of each PM register window of the board."""
  sys_, gpc_pma, gr, gpc = BASES[blackwell(board)]
  return [(sys_, sys_ + 0x1000, "PMASYS"), (gpc_pma, gpc_pma + (0x1000 if blackwell(board) else board.gpcs * PMAGPC_STRIDE), "PMAGPC"),
          (gr, gr + 0x800, "GR_GPC"), (gpc, gpc + board.gpcs * GPC_STRIDE, "GPC")]

def sm_reg(board:NVBoard, gpc:int, tpc:int, sm:int, reg:int) -> int:
  """The address of an SM's PC-sampler register, as tinygrad addresses it (every TPC of a GPC present)."""
  base = BASES[blackwell(board)][3] + gpc * GPC_STRIDE
  if blackwell(board): return base + 0x800 + (tpc * board.sm_per_tpc + sm) * 0x200 + reg
  return base + tpc * 0x200 + (0x400, 0x1000)[sm] + reg

class StreamError(Exception):
  """A malformed request to the PMA stream; the driver turns it into an NV status."""

class Stream:
  """A PMA channel's ring: `size` bytes at host address `base` the GPU writes 32-byte packets into at PUT, and the
  4 KiB mem-bytes page at `membytes` where it reports, on request, the bytes written and not yet consumed. The runtime
  reads from its own GET, then bumps it by the bytes consumed. A packet that does not fit in the free space is dropped
  and the overflow status set, as the PMA does; it stays set (the stream must be freed to clear it)."""
  def __init__(self, base:int, size:int, membytes:int):
    self.base, self.size, self.membytes = base, size, membytes
    self.put = self.unread = 0
    self.overflow = False
    self.written = self.dropped = 0   # bytes, for the trace and tests

  def write(self, data:bytes):
    """Append whole packets at PUT, wrapping at the end of the ring, until one does not fit."""
    for i in range(0, len(data), PACKET):
      pkt = data[i:i + PACKET]
      if self.overflow or self.unread + len(pkt) > self.size:
        self.overflow, self.dropped = True, self.dropped + len(data) - i
        return
      first = min(len(pkt), self.size - self.put)
      ctypes.memmove(self.base + self.put, pkt, first)
      if first < len(pkt): ctypes.memmove(self.base, pkt[first:], len(pkt) - first)
      self.put, self.unread, self.written = (self.put + len(pkt)) % self.size, self.unread + len(pkt), self.written + len(pkt)

  def bump(self, consumed:int):
    """MEM_BUMP: the runtime consumed `consumed` bytes from its GET."""
    if consumed > self.unread: raise StreamError(f"bytesConsumed {consumed} is more than the {self.unread} bytes available")
    self.unread -= consumed

  def update_membytes(self) -> int:
    """The PMA writes the available byte count (a 64-bit word) into the mem-bytes page; returns it."""
    ctypes.c_uint64.from_address(self.membytes).value = self.unread
    return self.unread

class PerfMon:
  """What one profiler object holds on a GPU: the PM registers written through reg ops (offset -> value), its PMA
  stream once allocated and bound, and whether a PM trigger armed the sampler."""
  def __init__(self, board:NVBoard):
    self.board, self.regs, self.stream, self.bound, self.triggered = board, {}, None, False, False

  def window(self, offset:int) -> str|None:
    return next((name for first, end, name in windows(self.board) if first <= offset < end), None)

  def trigger(self):
    """NVC6C0_PM_TRIGGER on the compute class: starts sampling for the launches that follow, once the resources are bound."""
    if self.bound: self.triggered = True

  def sms(self) -> list[tuple[int, int]]:
    """(id, sample interval) of each SM the runtime enumerated (SM_ENUMERATION written), in the order of the ids."""
    b, out = self.board, []
    for gpc in range(b.gpcs):
      for tpc in range(b.tpc_per_gpc):
        for sm in range(b.sm_per_tpc):
          if (ident:=self.regs.get(sm_reg(b, gpc, tpc, sm, SM_ENUMERATION))) is not None:
            out.append((ident, self.regs.get(sm_reg(b, gpc, tpc, sm, SM_INTERVAL), 0) & 0xff))
    return sorted(out)

  def sample_launch(self, kernel, grid:tuple, block:tuple, trace:list) -> int:
    """Model the launch on the SMs and write their PC samples into the stream; the bytes written."""
    nctas, wpc = grid[0] * grid[1] * grid[2], -(-(block[0] * block[1] * block[2]) // self.board.warp_size)
    sms = [(ident, interval) for ident, interval in self.sms() if interval]
    if not sms: return 0
    code, streams = kernel_blocks(kernel), warp_streams(trace, nctas, wpc)
    slots = min(self.board.max_blocks_per_sm, self.board.max_warps_per_sm // wpc) * wpc
    samples = []
    for order, (ident, interval) in enumerate(sms):
      m = SM(code, streams, list(range(order, nctas, len(sms))), wpc, slots, interval)
      m.run()
      samples += [(t, order, ident, pc, key, wave) for t, pc, key, wave in m.samples]
    data = packets(sorted(samples), record_size(self.board))
    self.stream.write(data)
    return len(data)

  def sampling(self) -> bool:
    """The PC sampler runs: resources bound, a trigger seen, sampling enabled for the context (GR_GPC + 0x304)."""
    return self.bound and self.triggered and self.stream is not None and bool(self.regs.get(BASES[blackwell(self.board)][2] + PC_SAMPLING_ENABLE))

# *** the PC-sampling model ***
#
# MODEL, not a measurement: what each warp runs and in which order is exact (the launch's blocks per warp, from the
# numpy path's trace); every cycle number is the model's. The PC is the PTX instruction index (x16, as SASS PCs step by
# 16 bytes), not a SASS address: mockgpu runs PTX.
#   - SMs: those the runtime enumerated (an SM_ENUMERATION write), in the order of the ids written; CTA i runs on SM
#     i mod count. An SM holds min(max_blocks_per_sm, max_warps_per_sm // warps per CTA) CTAs at once; the next CTA
#     takes the warp slots (wave ids, lowest free first) of one that ended.
#   - Issue: one warp-instruction per SM per cycle, loose round robin over the slots from the one after the last issuer.
#   - Latency before a warp's next instruction: global/local/generic loads and atomics 400 cycles, shared loads 30
#     (MEMORY_DEPENDENCY); bar.sync until every live warp of the CTA has arrived (SYNC); transcendentals and divisions
#     20, everything else 4 (EXEC_DEPENDENCY).
#   - Sampling: every `interval` cycles (the SM_INTERVAL register's low byte: tinygrad writes 32 on Ampere/Ada, 160 on
#     Blackwell) the SM samples the warp at the scheduler's pointer: NONE if it issues that cycle, else why it waits.
STALL = {"SYNC": 3, "EXEC_DEPENDENCY": 7, "MEMORY_DEPENDENCY": 9, "NONE": 18}   # hardware stall keys (Ampere map)
GLOBAL_LATENCY, SHARED_LATENCY, SLOW_ALU, ALU = 400, 30, 20, 4
SLOW_OPS = {"ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "tanh", "div", "rem"}
MEMORY_OPS = {"ld", "ldu", "atom", "red", "tex", "suld", "cp"}
# record layout, per record size: field -> (first bit, bits). 8 bytes on sm_86/sm_89, 9 on sm_120 (sm_version 0xa04).
RECORD = {8: {"pc": (0, 32), "stall": (32, 5), "wave": (40, 6), "active": (48, 1)},
          9: {"pc": (0, 40), "stall": (40, 6), "wave": (48, 6), "active": (56, 1)}}
HEADER = {"num_bytes": (0, 8), "tpc_id": (8, 12), "dropped": (31, 1)}   # the u32 at bytes 4..7 of a packet

def record_size(board:NVBoard) -> int: return 9 if board.sm_version >= 0xa04 else 8

def pack(fields:dict, layout:dict) -> int:
  out = 0
  for name, (lo, n) in layout.items():
    if not 0 <= (v:=fields[name]) < 1 << n: raise ValueError(f"PMA record field {name}={v} does not fit {n} bits")
    out |= v << lo
  return out

def classify(ins) -> tuple[int, str]:
  """(cycles before the warp's next instruction, the stall reason meanwhile) of a PTX instruction."""
  mods = set(ins.mods)
  if ins.op in ("bar", "barrier") and not mods & {"warp", "arrive"}: return -1, "SYNC"
  if ins.op in MEMORY_OPS and not mods & {"param", "const"}:
    return (SHARED_LATENCY if "shared" in mods else GLOBAL_LATENCY), "MEMORY_DEPENDENCY"
  return (SLOW_ALU if ins.op in SLOW_OPS and not mods & {"s32", "u32", "s64", "u64"} else ALU), "EXEC_DEPENDENCY"

def kernel_blocks(kernel) -> list[tuple[int, list[tuple[int, str]]]]:
  """Per block of the kernel: its first PTX instruction index and each instruction's (latency, reason); once per kernel."""
  if (cached:=getattr(kernel, "_pma_blocks", None)) is not None: return cached
  from mockgpu.compiler.ptx import parser as P
  from mockgpu.compiler.ptx.layout import entries
  from mockgpu.compiler.ptx.blocks import split_blocks
  fn = next(f for f, _ in entries(P.parse(kernel.module.text))[0] if f.name == kernel.name)
  out, first = [], 0
  for b in split_blocks(fn.body):
    out.append((first, [classify(i) for i in b.instrs]))
    first += len(b.instrs)
  kernel._pma_blocks = out
  return out

def warp_streams(trace:list, nctas:int, wpc:int) -> list[list[int]]:
  """The blocks each warp of the launch ran, in order, from a TracedEnv trace."""
  streams:list[list[int]] = [[] for _ in range(nctas * wpc)]
  for first, block, warps in trace:
    for w in (range(warps) if isinstance(warps, int) else warps.nonzero()[0]): streams[first * wpc + w].append(block)
  return streams

class Warp:
  def __init__(self, slot:int, cta:int, blocks:list[int]):
    self.slot, self.cta, self.blocks, self.bi, self.ii = slot, cta, blocks, 0, 0
    self.ready, self.reason = 0, "EXEC_DEPENDENCY"
  def done(self) -> bool: return self.bi >= len(self.blocks)
  def pc(self, code) -> int: return code[self.blocks[self.bi]][0] + self.ii if self.bi < len(self.blocks) else code[-1][0]
  def advance(self, code):
    self.ii += 1
    while self.bi < len(self.blocks) and self.ii >= len(code[self.blocks[self.bi]][1]): self.bi, self.ii = self.bi + 1, 0

SLOT = operator.attrgetter("slot")

class SM:
  """One SM of the model running its CTAs; `samples` collects (cycle, pc index, stall key, wave id)."""
  def __init__(self, code, streams, ctas:list[int], wpc:int, slots:int, interval:int):
    self.code, self.streams, self.pending, self.wpc, self.interval = code, streams, list(ctas), wpc, interval
    self.slots:list[Warp|None] = [None] * slots
    self.resident:list[Warp] = []   # the warps in slots, in slot order
    self.arrived:dict[int, list[Warp]] = {}
    self.live:dict[int, int] = {}
    self.samples:list[tuple[int, int, int, int]] = []
    self.ptr = self.t = 0

  def fill(self):
    """Start pending CTAs while their warps fit in free slots."""
    while self.pending and sum(s is None for s in self.slots) >= self.wpc:
      cta = self.pending.pop(0)
      free = [i for i, s in enumerate(self.slots) if s is None][:self.wpc]
      self.live[cta] = 0
      for w, i in enumerate(free):
        warp = Warp(i, cta, self.streams[cta * self.wpc + w])
        if warp.done(): continue
        self.slots[i], self.live[cta] = warp, self.live[cta] + 1
        bisect.insort(self.resident, warp, key=SLOT)

  def run(self):
    self.fill()
    n, res, iv = len(self.slots), self.resident, self.interval
    while res:
      i = bisect.bisect_left(res, self.ptr, key=SLOT)
      order = res[i:] + res[:i]          # the resident warps from the scheduler's pointer on
      head = order[0]                    # the warp the sampler looks at
      pick = next((w for w in order if w.ready <= self.t), None)
      if pick is None:   # every warp waits: the pointer warp is sampled, unchanged, until the first is ready
        nxt = min(w.ready for w in res)
        if nxt == float("inf"): raise AssertionError("PMA model: every warp waits at a barrier")  # a mockgpu bug
        pc, key = head.pc(self.code), STALL[head.reason]
        self.samples += [(t, pc, key, head.slot) for t in range(-(-self.t // iv) * iv, nxt, iv)]
        self.t = nxt
        continue
      if self.t % iv == 0: self.samples.append((self.t, head.pc(self.code), STALL["NONE" if head is pick else head.reason], head.slot))
      self.issue(pick)
      self.ptr, self.t = (pick.slot + 1) % n, self.t + 1

  def issue(self, w:Warp):
    latency, reason = self.code[w.blocks[w.bi]][1][w.ii]
    w.advance(self.code)
    if latency < 0:   # a barrier: wait for the CTA's live warps
      w.ready, w.reason = float("inf"), reason
      self.arrived.setdefault(w.cta, []).append(w)
    else: w.ready, w.reason = self.t + latency, reason
    if w.done(): self.retire(w)
    self.release(w.cta)

  def retire(self, w:Warp):
    self.slots[w.slot], self.live[w.cta] = None, self.live[w.cta] - 1
    self.resident.remove(w)
    if w in self.arrived.get(w.cta, ()): self.arrived[w.cta].remove(w)
    if self.live[w.cta] == 0: self.fill()

  def release(self, cta:int):
    waiting = self.arrived.get(cta, [])
    if waiting and len(waiting) >= self.live.get(cta, 0):
      for w in waiting: w.ready = self.t + 1
      self.arrived[cta] = []

def packets(samples:list, size:int) -> bytes:
  """The PMA packets of time-ordered samples (cycle, order, SM id, pc index, stall key, wave): each SM's records are a
  byte stream cut into 28-byte payloads, a packet sent when one fills (at its last record's cycle), the partial ones
  at the end."""
  layout, out, pkts = RECORD[size], bytearray(), []
  assert all(lo + n <= 64 for lo, n in layout.values())  # every field sits in the record's first 8 bytes
  by_sm:dict[int, list] = {}
  for smp in samples: by_sm.setdefault(smp[2], []).append(smp)
  for ident, rows in by_sm.items():
    a = np.array([(t, pc, key, wave) for t, _, _, pc, key, wave in rows], dtype=np.uint64).reshape(-1, 4)
    v = np.zeros(len(a), np.uint64)
    for name, col in (("pc", a[:, 1]), ("stall", a[:, 2]), ("wave", a[:, 3]), ("active", np.ones(len(a), np.uint64))):
      lo, n = layout[name]
      if len(col) and int(col.max()) >= 1 << n: raise ValueError(f"PMA record field {name}={int(col.max())} does not fit {n} bits")
      v |= col << np.uint64(lo)
    recs = np.zeros((len(a), size), np.uint8)
    recs[:, :8] = v.astype("<u8").view(np.uint8).reshape(-1, 8)
    data = recs.tobytes()
    for k in range(0, len(data), PAYLOAD):
      full = k + PAYLOAD <= len(data)
      pkts.append((int(a[(k + PAYLOAD - 1) // size, 0]) if full else float("inf"), rows[0][1], k, ident, data[k:k + PAYLOAD]))
  for _, _, _, ident, payload in sorted(pkts):
    hdr = pack({"num_bytes": len(payload), "tpc_id": ident, "dropped": 0}, HEADER)
    body = payload.ljust(PAYLOAD, b"\0")
    out.extend(body[:4] + hdr.to_bytes(4, "little") + body[4:])
  return bytes(out)
