"""Fuzz surface: PM4 streams on a KFD compute queue (ring and one indirect buffer), mutated from the packets tinygrad's
AMDComputeQueue builds (tests/emulators/test_pm4.py's encodings). Also the AMD rig the SDMA and AQL surfaces share.

Each case runs on a fresh queue (a stopped queue stays stopped, as on hardware), created and destroyed through the
KFD ioctls; DISPATCH_DIRECT and AQL dispatches go to a recording stand-in for the RDNA executor (the ISA has its own
surfaces), which checks the Dispatch the command processor built. Addresses in a case are symbolic (("A", buffer,
offset, 0 for the low word or 1 for the high word)): the worker resolves them to its own buffers.
"""
from __future__ import annotations
import ctypes, os, sys, types
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: test_kfd's in-process KFD client
from tinygrad.runtime.autogen import kfd
from tinygrad.runtime.autogen.am import pm4_nv as pm4, soc_11 as soc
from harness import interesting, mutate_words
from userpages import inaccessible

NAME = "pm4"
ENV = {"MOCKGPU_COUNT": "2", "MOCKGPU_BUDGET": "100000"}
QTYPE, UNIT = kfd.KFD_IOC_QUEUE_TYPE_COMPUTE, 4  # write-pointer unit in bytes
RING_BYTES, DATA_BYTES, IB_BYTES = 0x1000, 0x10000, 0x1000
rig = None

def A(buf:str, off:int, hi:int=0): return ("A", buf, off, hi)
def lohi(buf:str, off:int): return [A(buf, off, 0), A(buf, off, 1)]
def pkt3(op, *body) -> list: return [pm4.PACKET3(op, len(body) - 1), *body]

class StubExecutor:
  """Stands in for mockgpu.emulators.rdna: checks what a real executor relies on (a 1..1024-thread workgroup, a
  non-empty grid) and records the dispatch."""
  def __init__(self): self.count = 0
  def Dispatch(self, **kw): return types.SimpleNamespace(**kw)
  def run_dispatch(self, mem, d):
    tpc = d.block[0] * d.block[1] * d.block[2]
    if not 1 <= tpc <= 1024 or min(d.grid) < 1: raise ValueError(f"the executor was handed block {d.block} grid {d.grid}")
    self.count += 1

class Rig:
  """GPU 0 of the process: a KFD client with its events, a data buffer, an IB buffer and a reusable ring."""
  def __init__(self, qtype:int):
    from support.kfd_client import Client
    self.c = Client(0).events()
    self.data, self.ib, self.good = self.c.alloc(DATA_BYTES), self.c.alloc(IB_BYTES), self.c.alloc(0x1000)
    self.ring, self.gart = self.c.alloc(RING_BYTES), self.c.alloc(0x1000)
    self.qtype, self.counter = qtype, 0
    self.stub = StubExecutor()
    for gpu in self.c.sys.devices["amd"]: gpu.executor = self.stub  # each device holds the executor it was built with

  def addr(self, name:str) -> int:
    c = self.c
    return {"data": self.data.va, "ib": self.ib.va, "ring": self.ring.va, "gart": self.gart.va, "unmapped": inaccessible(),
            "mailbox": c.event_page.va + c.queue_event.event_slot_index * 8, "good": self.good.va}[name]

  def resolve(self, words:list) -> list[int]:
    out = []
    for w in words:
      if isinstance(w, tuple):
        a = (self.addr(w[1]) + w[2]) % 2**64
        out.append(a >> 32 if w[3] else a & 0xffffffff)
      else: out.append(w & 0xffffffff)
    return out

  def run(self, ring:list, ib:list, wptr=None, qtype:int|None=None):
    """Create a queue, put `ring` in it, publish the write pointer (its length, or the case's), kick, destroy it.
    Returns the queue's error (a fault stops the queue without raising), or None."""
    from support.kfd_client import call
    import machines
    ring, ib = self.resolve(ring)[:RING_BYTES // 4], self.resolve(ib)[:IB_BYTES // 4]
    ctypes.memset(self.ring.va, 0, RING_BYTES)
    ctypes.memset(self.gart.va, 0, 0x1000)
    (ctypes.c_uint32 * len(ring)).from_address(self.ring.va)[:] = ring
    (ctypes.c_uint32 * len(ib)).from_address(self.ib.va)[:] = ib
    desc = call(self.c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, ring_base_address=self.ring.va, ring_size=RING_BYTES, gpu_id=self.c.gpu.gpu_id,
                queue_type=self.qtype if qtype is None else qtype, queue_percentage=kfd.KFD_MAX_QUEUE_PERCENTAGE, queue_priority=7,
                write_pointer_address=self.gart.va + 0x38, read_pointer_address=self.gart.va + 0x80)
    hw = self.c.gpu.queues[desc.queue_id]
    try:
      unit = {kfd.KFD_IOC_QUEUE_TYPE_SDMA: 1, kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: 64}.get(self.qtype if qtype is None else qtype, 4)
      ctypes.c_uint64.from_address(self.gart.va + 0x38).value = (len(ring) * 4 // unit if wptr is None else wptr) % 2**64
      machines.machine().kick()
      return hw.error
    finally: call(self.c.kfd, kfd.AMDKFD_IOC_DESTROY_QUEUE, queue_id=desc.queue_id)

  def known_good(self, ring_for) -> bool:
    """A fresh queue of this rig's kind writes a new value into a buffer no case writes on purpose."""
    self.counter += 1
    value = 0x5a000000 | self.counter
    err = self.run(ring_for(value), [])
    return err is None and ctypes.c_uint32.from_address(self.good.va).value == value

# *** PM4 packets, as tinygrad's AMDComputeQueue encodes them ***

def release_mem(buf, off, value, data_sel=1, int_sel=0, ctxid=0):
  event = pm4.PACKET3_RELEASE_MEM_EVENT_TYPE(pm4.CACHE_FLUSH_AND_INV_TS_EVENT) | pm4.PACKET3_RELEASE_MEM_EVENT_INDEX(5)
  sel = pm4.PACKET3_RELEASE_MEM_DATA_SEL(data_sel) | pm4.PACKET3_RELEASE_MEM_INT_SEL(int_sel)
  return pkt3(pm4.PACKET3_RELEASE_MEM, event, sel, *lohi(buf, off), value & 0xffffffff, value >> 32, ctxid)

def wait_mem(buf, off, value, func=3):
  return pkt3(pm4.PACKET3_WAIT_REG_MEM, pm4.WAIT_REG_MEM_MEM_SPACE(1) | pm4.WAIT_REG_MEM_FUNCTION(func), *lohi(buf, off), value, 0xffffffff, 4)

def _gc():
  from mockgpu.emulators.amd_gpu import register_block
  return register_block("gc", (11, 0, 0))

def set_sh(reg:str, *values): return pkt3(pm4.PACKET3_SET_SH_REG, getattr(_gc(), reg).addr[0] - pm4.PACKET3_SET_SH_REG_START, *values)

def dispatch(rng) -> list:
  local = [rng.choice((1, 32, 64, 256)), 1, 1]
  init = 1 | (1 << 2) | (1 << 15)  # COMPUTE_SHADER_EN, FORCE_START_AT_000, CS_W32_EN
  return (set_sh("regCOMPUTE_PGM_LO", *lohi("data", 0x100)) + set_sh("regCOMPUTE_PGM_RSRC1", 0x11, 0x22) + set_sh("regCOMPUTE_PGM_RSRC3", 0) +
          set_sh("regCOMPUTE_TMPRING_SIZE", 0) + set_sh("regCOMPUTE_USER_DATA_0", *lohi("data", 0x800)) +
          set_sh("regCOMPUTE_START_X", 0, 0, 0, *local, 0, 0) + set_sh("regCOMPUTE_RESOURCE_LIMITS", 0) +
          pkt3(pm4.PACKET3_DISPATCH_DIRECT, rng.choice((1, 4, 64)), 1, 1, init))

def seed_packet(rng) -> list:
  off = rng.randrange(0, 0x100) * 8
  k = rng.randrange(12)
  if k == 0: return release_mem("data", off, rng.getrandbits(64), rng.choice((1, 2, 3)))
  if k == 1: return release_mem("mailbox", 0, 1, 1, rng.choice((0, 2, 3)), rng.randrange(4))
  if k == 2: return wait_mem("data", off, 0, rng.choice((0, 3, 5)))
  if k == 3: return pkt3(pm4.PACKET3_COPY_DATA, 5 | (2 << 8), rng.getrandbits(32), 0, *lohi("data", off))
  if k == 4: return pkt3(pm4.PACKET3_COPY_DATA, 2 | (2 << 8) | (1 << 16), *lohi("data", off), *lohi("data", off + 8))
  if k == 5: return pkt3(pm4.PACKET3_ACQUIRE_MEM, 0, 0xffffffff, 0xff, 0, 0, 0, 0x10)
  if k == 6: return pkt3(pm4.PACKET3_EVENT_WRITE, pm4.EVENT_TYPE(soc.CS_PARTIAL_FLUSH) | pm4.EVENT_INDEX(4))
  if k == 7: return pkt3(pm4.PACKET3_INDIRECT_BUFFER, *lohi("ib", 0), pm4.INDIRECT_BUFFER_VALID | rng.randrange(1, 64))
  if k == 8: return pkt3(pm4.PACKET3_NOP, *([0] * rng.randrange(1, 4)))
  if k == 9: return pkt3(pm4.PACKET3_PRED_EXEC, (1 << 24) | rng.randrange(0, 4))
  if k == 10: return dispatch(rng)
  req = _hdp()  # tinygrad's memory barrier: an HDP flush request, then a wait for its done register
  return pkt3(pm4.PACKET3_WAIT_REG_MEM, pm4.WAIT_REG_MEM_OPERATION(1) | pm4.WAIT_REG_MEM_FUNCTION(5), req, req + 1, 0xffffffff, 0xffffffff, 4)

def _hdp() -> int:
  from mockgpu.emulators.amd_gpu import register_block
  nbio = register_block("nbio", (4, 3, 0))
  assert nbio.regBIF_BX_PF0_GPU_HDP_FLUSH_DONE.addr[0] == nbio.regBIF_BX_PF0_GPU_HDP_FLUSH_REQ.addr[0] + 1
  return nbio.regBIF_BX_PF0_GPU_HDP_FLUSH_REQ.addr[0]

def stream(rng, seed_fn, n:int) -> list:
  return [w for _ in range(n) for w in seed_fn(rng)]

def wptr_mutation(rng, length:int, unit_dwords:int=1):
  """None (the stream's own length) mostly; sometimes a hostile write pointer."""
  if rng.random() > 0.15: return None
  return rng.choice((0, length + 1, length * 2, 1 << 32, (1 << 64) - 1, 1 << 63, RING_BYTES // 4 // unit_dwords + 1, interesting(rng, 64)))

def ring_cases(rng, n:int, seed_fn, wptr) -> list:
  """n cases of a ring and an indirect buffer of seed_fn's packets, mostly mutated, with the write pointer wptr(ring)."""
  cases = []
  for _ in range(n):
    ring, ib = stream(rng, seed_fn, rng.randint(1, 6)), stream(rng, seed_fn, rng.randint(0, 3))
    if rng.random() < 0.85: ring = mutate_words(rng, ring)
    if rng.random() < 0.3: ib = mutate_words(rng, ib)
    cases.append({"ring": ring, "ib": ib, "wptr": wptr(ring)})
  return cases

def generate(rng, n:int) -> list: return ring_cases(rng, n, seed_packet, lambda ring: wptr_mutation(rng, len(ring)))

def setup():
  global rig
  rig = Rig(QTYPE)

def execute(case):
  err = rig.run(case["ring"], case["ib"], case["wptr"])
  return None if err is None else f"{type(err).__name__} (queue stopped)"

def known_good() -> bool: return rig.known_good(lambda v: release_mem("good", 0, v, 1))
