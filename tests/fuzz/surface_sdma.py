"""Fuzz surface: SDMA streams on a KFD SDMA queue, mutated from the packets tinygrad's AMDCopyQueue builds (copy,
write, fence, trap, poll, timestamp, constant fill, indirect buffer, GCR, NOP); hostile write pointers too. The rig
(one fresh queue per case, symbolic addresses) is surface_pm4's."""
from __future__ import annotations
from tinygrad.runtime.autogen import kfd
from tinygrad.runtime.autogen.am import sdma_6_0_0 as sdma
from surface_pm4 import Rig, lohi, ring_cases, wptr_mutation

NAME = "sdma"
ENV = {"MOCKGPU_COUNT": "2"}
rig = None

def copy(dst, src, n):
  return [sdma.SDMA_OP_COPY | sdma.SDMA_PKT_COPY_LINEAR_HEADER_SUB_OP(sdma.SDMA_SUBOP_COPY_LINEAR), sdma.SDMA_PKT_COPY_LINEAR_COUNT_COUNT(n - 1),
          0, *lohi(*src), *lohi(*dst)]
def fence(dst, value): return [sdma.SDMA_OP_FENCE | sdma.SDMA_PKT_FENCE_HEADER_MTYPE(3), *lohi(*dst), value]

def seed_packet(rng) -> list:
  off, k = rng.randrange(0, 0x800) * 8, rng.randrange(10)
  if k == 0: return copy(("data", off), ("data", rng.randrange(0, 0x800) * 8), rng.choice((1, 4, 255, 0x1000, 0x4000)))
  if k == 1: return [sdma.SDMA_OP_WRITE, *lohi("data", off), (n:=rng.randint(1, 4)) - 1, *[rng.getrandbits(32) for _ in range(n)]]
  if k == 2: return fence(("data", off), rng.getrandbits(32))
  if k == 3: return fence(("mailbox", 0), 1) + [sdma.SDMA_OP_TRAP, sdma.SDMA_PKT_TRAP_INT_CONTEXT_INT_CONTEXT(rng.randrange(4))]
  if k == 4: return [sdma.SDMA_OP_POLL_REGMEM | sdma.SDMA_PKT_POLL_REGMEM_HEADER_FUNC(3) | sdma.SDMA_PKT_POLL_REGMEM_HEADER_MEM_POLL(1),
                     *lohi("data", off), 0, 0, sdma.SDMA_PKT_POLL_REGMEM_DW5_INTERVAL(4) | sdma.SDMA_PKT_POLL_REGMEM_DW5_RETRY_COUNT(0xfff)]
  if k == 5:
    return [sdma.SDMA_OP_TIMESTAMP | sdma.SDMA_PKT_TIMESTAMP_GET_GLOBAL_HEADER_SUB_OP(sdma.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL), *lohi("data", off)]
  if k == 6: return [sdma.SDMA_OP_CONST_FILL | sdma.SDMA_PKT_CONSTANT_FILL_HEADER_FILLSIZE(rng.choice((0, 2))), *lohi("data", off),
                     rng.getrandbits(32), rng.choice((3, 15, 0xfff))]
  if k == 7: return [sdma.SDMA_OP_INDIRECT, *lohi("ib", 0), rng.randrange(1, 32), 0, 0]
  if k == 8: return [sdma.SDMA_OP_GCR_REQ, 0, 0, 0, 0]
  return [sdma.SDMA_OP_NOP | sdma.SDMA_PKT_NOP_HEADER_COUNT(c:=rng.randrange(3))] + [0] * c

def sdma_wptr(rng, ring:list):
  """SDMA's write pointer is in bytes: a hostile one, or half of those a pointer that is not dword-aligned."""
  w = wptr_mutation(rng, len(ring) * 4)
  return w if w is None or rng.random() < 0.5 else len(ring) * 4 + rng.choice((1, 2, 3))

def generate(rng, n:int) -> list: return ring_cases(rng, n, seed_packet, lambda ring: sdma_wptr(rng, ring))

def setup():
  global rig
  rig = Rig(kfd.KFD_IOC_QUEUE_TYPE_SDMA)

def execute(case):
  err = rig.run(case["ring"], case["ib"], case["wptr"])
  return None if err is None else f"{type(err).__name__} (queue stopped)"

def known_good() -> bool: return rig.known_good(lambda v: fence(("good", 0), v))
