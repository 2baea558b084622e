"""Fuzz surface: GPFIFO channels and QMDs. Pushbuffers of host-class methods (semaphores, SET_OBJECT), copy-class
copies and compute-class QMD launches, mutated word by word; GPFIFO entries and GP_PUT mutated; QMDs encoded with
tinygrad's autogen field table (as tests/emulators/test_nv_gpfifo.py does) and mutated field by field (grid, block, constant
buffer, DEPENDENT_QMD0 pointing at itself or another QMD, releases, version) and bit by bit.

One NVGPU for the whole worker, its memory mapped at a fixed GPU VA (cases hold plain GPU addresses); each case runs on
a fresh channel group (a page fault stops a group for good, as RM's robust-channel recovery does). Launches go to a
stand-in for the PTX executor that checks the launch the model hands it (what the real executor asserts) and
records it; the PTX programs in memory declare their limits (.maxntid, static shared memory) for the model to honour.
"""
from __future__ import annotations
import re, types
import numpy as np
from tinygrad.runtime.autogen import nv_570 as nv
from harness import interesting, mutate_words

NAME = "gpfifo"
ENV = {"MOCKGPU_COUNT": "1"}
VA, SIZE, ENTRIES = 0x10_0000_0000, 0x40000, 16
RING, PB, DATA, PROG, CBUF, QMDS, GOOD = 0x0, 0x1000, 0x8000, 0x10000, 0x14000, 0x18000, 0x3f000
INC, NON_INC, IMMD, ONE_INC = 1, 3, 4, 5
PROGRAMS = [b".version 8.0\n.target sm_89\n.visible .entry E_3(.param .u64 data0, .param .u64 data1, .param .u32 var0) { ret; }\n\0",
            b".version 8.0\n.target sm_89\n.visible .entry E_4(.param .u64 data0, .param .u64 data1, .param .u32 var0) .maxntid 128, 1, 1 { ret; }\n"
            b"\0",
            b".version 8.0\n.target sm_89\n.visible .entry E_5(.param .u64 data0, .param .u64 data1, .param .u32 var0) { .shared .align 4 .b8 "
            b"s[110000]; ret; }\n\0"]
PARAMS = {name: [("data0", 8, 8, 0), ("data1", 8, 8, 8), ("var0", 4, 4, 16)] for name in ("E_3", "E_4", "E_5")}
rig = None

def hdr(op, count, subch, mthd): return (op << 29) | (count << 16) | (subch << 13) | (mthd >> 2)
def nvm(subch, mthd, *args): return [hdr(INC, len(args), subch, mthd), *args]

class StubPTX:
  """mockgpu.emulators.ptx for this surface: kernels from the program text (name, parameters, .maxntid, static shared);
  launch() raises ValueError for what the real executor could not run, so the model must refuse those first."""
  def __init__(self): self.launches = 0
  def load_module(self, text:str):
    name = re.search(r"\.entry\s+(\w+)", text)[1]
    maxntid = re.search(r"\.maxntid\s+(\d+)", text)
    shared = re.search(r"\.b8 s\[(\d+)\]", text)
    k = types.SimpleNamespace(name=name, params=PARAMS.get(name, []), max_threads=int(maxntid[1]) if maxntid else 1024,
                              shared_size=int(shared[1]) if shared else 0, dynamic_base=0)
    return types.SimpleNamespace(kernel=lambda n: k)
  def launch(self, mem, k, grid, block, params, dynamic_shared=0, board=None):
    tpc = block[0] * block[1] * block[2]
    if min(grid + block) < 1 or tpc > min(1024, k.max_threads) or k.shared_size > 99 << 10 or grid[0] >= 2**31 or max(grid[1:]) > 65535:
      raise ValueError(f"the executor was handed kernel {k.name} grid {grid} block {block}")
    if len(params) < sum(p[1] for p in k.params): raise ValueError(f"{len(params)} bytes of parameters")
    self.launches += 1

class Rig:
  def __init__(self):
    from mockgpu.emulators.nv_gpu import NVGPU
    from mockgpu.boards import nv_board
    from mockgpu.system import System
    self.ptx = StubPTX()
    self.gpu = NVGPU(0, nv_board("sm_89"), System(), self.ptx)
    self.mem = np.zeros(SIZE, np.uint8)
    self.gpu.mem.map(VA, SIZE, host=self.mem.ctypes.data)
    self.userd, self.notifier = np.zeros(128, np.uint32), np.zeros(16, np.uint8)
    self.chid, self.counter = 0, 0

  def put(self, off:int, data:bytes): self.mem[off:off + len(data)] = np.frombuffer(data, np.uint8)

  def channel(self):
    from mockgpu.emulators.gpfifo import Channel, ChannelGroup
    from mockgpu.emulators.nv_gpu import engine_for
    group = ChannelGroup()
    group.scheduled = True
    self.chid += 1
    self.userd[:] = 0
    ch = Channel(self.gpu, nv.AMPERE_CHANNEL_GPFIFO_A, self.chid, group, VA + RING, ENTRIES, self.userd.ctypes.data, self.notifier.ctypes.data)
    for cls in (self.gpu.board.compute, self.gpu.board.dma): ch.objects[cls] = engine_for(self.gpu, cls)
    return ch

  def run(self, segments:list[list[int]], entries:list|None=None, put:int|None=None):
    """Write the segments back to back at PB with one GPFIFO entry each (or the case's raw entries), publish GP_PUT,
    step the channel until it stops progressing; raise the first error, as the doorbell write does."""
    from mockgpu.emulators.gpfifo import GP_PUT
    self.mem[RING:RING + ENTRIES * 8] = 0
    ch, off, raw = self.channel(), PB, []
    for words in segments:
      words = [w & 0xffffffff for w in words][:(DATA - PB) // 4]
      if off + 4 * len(words) > DATA: break
      self.put(off, np.array(words, np.uint32).tobytes())
      raw.append(((VA + off) // 4 << 2) | (len(words) << 42) | (1 << 41))
      off += 4 * len(words)
    raw = (raw if entries is None else [e % 2**64 for e in entries])[:ENTRIES]
    self.put(RING, np.array(raw, np.uint64).tobytes())
    self.userd[GP_PUT // 4] = len(raw) % ENTRIES if put is None else put % 2**32
    ch.doorbell()
    for _ in range(4):
      if not ch.step(): break
    if errors:=self.gpu.take_errors(): raise errors[0]
    return None if ch.group.error is None else f"{type(ch.group.error).__name__} (channel group stopped)"

def sem(addr, payload, op, wide=True):
  return nvm(0, nv.NVC56F_SEM_ADDR_LO, addr & 0xffffffff, addr >> 32, payload & 0xffffffff, payload >> 32, op | (int(wide) << 24))

# *** QMDs ***

def encode_qmd(vals:dict) -> bytes:
  from mockgpu.emulators.nv_gpu import qmd_fields
  fields, bits = qmd_fields("NVC6C0_QMDV03_00"), 0
  for k, v in {"qmd_major_version": 3, **vals}.items():
    hi, lo = fields[k.upper()]
    bits |= (v & ((1 << (hi - lo + 1)) - 1)) << lo
  return bits.to_bytes(0x100, "little")

QMD_FIELDS = ["cta_raster_width", "cta_raster_height", "cta_raster_depth", "cta_thread_dimension0", "cta_thread_dimension1",
              "cta_thread_dimension2", "constant_buffer_size_shifted4_0", "dependent_qmd0_enable", "dependent_qmd0_action",
              "dependent_qmd0_pointer", "release0_enable", "release0_structure_size", "release0_reduction_enable", "release0_payload64b",
              "qmd_major_version", "program_address_lower", "constant_buffer_addr_lower_0", "release0_address_lower", "shared_memory_size"]

def qmd(rng, index:int) -> dict:
  prog = VA + PROG + 0x400 * rng.choice((0, 0, 0, 1, 2))
  vals = {"program_address_upper": prog >> 32, "program_address_lower": prog & 0xffffffff, "constant_buffer_addr_upper_0": (VA + CBUF) >> 32,
          "constant_buffer_addr_lower_0": (VA + CBUF) & 0xffffffff, "constant_buffer_size_shifted4_0": 0x160,
          "cta_thread_dimension0": rng.choice((1, 32, 128, 256)), "cta_thread_dimension1": 1, "cta_thread_dimension2": 1,
          "cta_raster_width": rng.randint(1, 8), "cta_raster_height": 1, "cta_raster_depth": 1, "release0_enable": 1,
          "release0_address_upper": (VA + DATA) >> 32, "release0_address_lower": (VA + DATA + 16 * index) & 0xffffffff,
          "release0_payload_lower": rng.getrandbits(32)}
  if rng.random() < 0.3:  # a chain: to the next QMD, or back to itself (a loop on hardware)
    target = index if rng.random() < 0.5 else index + 1
    vals |= {"dependent_qmd0_enable": 1, "dependent_qmd0_action": 1, "dependent_qmd0_pointer": (VA + QMDS + 0x100 * target) >> 8}
  for _ in range(rng.choice((0, 0, 0, 1, 2, 3))): vals[rng.choice(QMD_FIELDS)] = interesting(rng, 32)
  return vals

def seed_method(rng) -> list:
  k = rng.choice((0, 1, 2, 3, 3, 3, 4, 5, 6))
  if k == 0: return sem(VA + DATA + 0x800 + 8 * rng.randrange(64), rng.getrandbits(64), nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE)
  if k == 1: return sem(VA + DATA + 0x800, 0, nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ)  # satisfied: >= 0
  if k == 2:
    return nvm(4, nv.NVC56F_SET_OBJECT, nv.AMPERE_DMA_COPY_B) + nvm(4, nv.NVC6B5_OFFSET_IN_UPPER, VA >> 32, DATA, VA >> 32, DATA + 0x1000) + \
                    nvm(4, nv.NVC6B5_LINE_LENGTH_IN, rng.choice((4, 256, 0x1000))) + nvm(4, nv.NVC6B5_LAUNCH_DMA, (1 << 7) | (1 << 8) | 2)
  if k == 3: return nvm(1, nv.NVC56F_SET_OBJECT, nv.ADA_COMPUTE_A) + nvm(1, nv.NVC6C0_SEND_PCAS_A, (VA + QMDS + 0x100 * rng.randrange(4)) >> 8) + \
                    nvm(1, nv.NVC6C0_SEND_SIGNALING_PCAS2_B, nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE)
  if k == 4: return [hdr(IMMD, rng.getrandbits(13), rng.randrange(8), nv.NVC56F_NOP)]
  if k == 5: return [hdr(NON_INC, 2, 0, nv.NVC56F_NOP), 0, 0]
  return [0]

def generate(rng, n:int) -> list:
  cases = []
  for _ in range(n):
    segments = [mutate_words(rng, seg) if rng.random() < 0.4 else seg
                for seg in ([w for _ in range(rng.randint(1, 4)) for w in seed_method(rng)] for _ in range(rng.randint(1, 3)))]
    entries = None if rng.random() > 0.1 else [interesting(rng, 64) for _ in range(rng.randint(1, 3))]
    put = None if rng.random() > 0.1 else interesting(rng, 32)
    flips = [(rng.randrange(4), rng.randrange(0x800)) for _ in range(rng.choice((0, 0, 0, 1, 4)))]
    counts = [2, 1] if rng.random() > 0.1 else [interesting(rng, 32), interesting(rng, 32)]
    cases.append({"segments": segments, "entries": entries, "put": put, "qmds": [qmd(rng, i) for i in range(4)], "flips": flips, "counts": counts})
  return cases

def setup():
  global rig
  rig = Rig()

def execute(case):
  for i, p in enumerate(PROGRAMS): rig.put(PROG + 0x400 * i, p)  # an earlier case may have written over them
  rig.put(CBUF + 320, np.array(case["counts"], np.uint32).tobytes())
  rig.put(CBUF + 0x160, np.array([VA + DATA, VA + DATA + 0x100, 7], np.uint64).tobytes())
  for i, vals in enumerate(case["qmds"]):
    b = bytearray(encode_qmd(vals))
    for qi, bit in case["flips"]:
      if qi == i: b[bit // 8] ^= 1 << (bit % 8)
    rig.put(QMDS + 0x100 * i, bytes(b))
  return rig.run(case["segments"], case["entries"], case["put"])

def known_good() -> bool:
  """A fresh channel on the same GPU releases a new value at a spot no case writes."""
  rig.counter += 1
  value = 0x5a00000000 | rig.counter
  err = rig.run([sem(VA + GOOD, value, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE)])
  return err is None and int(rig.mem[GOOD:GOOD + 8].view(np.uint64)[0]) == value
