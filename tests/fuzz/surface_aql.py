"""Fuzz surface: AQL packets on a KFD AQL queue: vendor-specific PM4 indirect buffers, kernel dispatches (to the
recording executor stand-in, from a kernel descriptor in the data buffer), barriers, invalid headers; each 64-byte
packet mutated. The rig is surface_pm4's; the write pointer counts packets."""
from __future__ import annotations
import ctypes
from tinygrad.runtime.autogen import hsa, kfd
from harness import mutate_words, interesting
from surface_pm4 import Rig, lohi, release_mem, seed_packet as pm4_packet

NAME = "aql"
ENV = {"MOCKGPU_COUNT": "2"}
HDR = (1 << hsa.HSA_PACKET_HEADER_BARRIER) | (hsa.HSA_FENCE_SCOPE_SYSTEM << hsa.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) | \
      (hsa.HSA_FENCE_SCOPE_SYSTEM << hsa.HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE)
KD_OFF = 0x2000  # the kernel descriptor inside the data buffer
rig = None

def pm4_ib(words_ndw:int) -> list:
  from tinygrad.runtime.autogen.am import pm4_nv as pm4
  return [HDR | (hsa.HSA_PACKET_TYPE_VENDOR_SPECIFIC << hsa.HSA_PACKET_HEADER_TYPE) | (1 << 16),
          pm4.PACKET3(pm4.PACKET3_INDIRECT_BUFFER, 2), *lohi("ib", 0), pm4.INDIRECT_BUFFER_VALID | words_ndw, 10] + [0] * 10

def dispatch(rng) -> list:
  wg = [rng.choice((1, 32, 64, 256)), rng.choice((1, 2)), 1]
  grid = [w * rng.randint(1, 4) for w in wg]
  words = [HDR | (hsa.HSA_PACKET_TYPE_KERNEL_DISPATCH << hsa.HSA_PACKET_HEADER_TYPE) | (3 << 16),
           wg[0] | (wg[1] << 16), wg[2], grid[0], grid[1], grid[2], 0, rng.choice((0, 1000)), *lohi("data", KD_OFF), *lohi("data", 0x800), 0, 0, 0, 0]
  assert len(words) == 16
  return words

def seed_packet(rng) -> list:
  k = rng.randrange(4)
  if k == 0: return pm4_ib(rng.randrange(1, 32))
  if k == 1: return dispatch(rng)
  if k == 2: return [HDR | (hsa.HSA_PACKET_TYPE_BARRIER_AND << hsa.HSA_PACKET_HEADER_TYPE)] + [0] * 15
  return [hsa.HSA_PACKET_TYPE_INVALID] + [0] * 15  # not yet published: the queue waits

def generate(rng, n:int) -> list:
  cases = []
  for _ in range(n):
    pkts = [seed_packet(rng) for _ in range(rng.randint(1, 4))]
    for p in pkts:  # mutate inside a packet, keeping it 16 dwords so the stream stays packet-aligned
      if rng.random() < 0.6: p[:] = (mutate_words(rng, p) + [0] * 16)[:16]
    ib = [w for _ in range(rng.randint(1, 3)) for w in pm4_packet(rng)]
    wptr = None if rng.random() > 0.15 else rng.choice((0, len(pkts) + 1, 64, 65, 1 << 32, interesting(rng, 64)))
    cases.append({"ring": [w for p in pkts for w in p], "ib": mutate_words(rng, ib) if rng.random() < 0.3 else ib, "wptr": wptr})
  return cases

def setup():
  global rig
  from tinygrad.runtime.autogen import amdgpu_kd
  rig = Rig(kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL)
  props = (hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_DISPATCH_PTR | hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_KERNARG_SEGMENT_PTR |
           hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_WAVEFRONT_SIZE32)
  rig.kd = bytes(amdgpu_kd.llvm_amdhsa_kernel_descriptor_t(kernel_code_entry_byte_offset=0x100, compute_pgm_rsrc1=0x11, kernel_code_properties=props))

def execute(case):
  ctypes.memmove(rig.data.va + KD_OFF, rig.kd, len(rig.kd))  # cases may overwrite it
  err = rig.run(case["ring"], case["ib"], case["wptr"])
  return None if err is None else f"{type(err).__name__} (queue stopped)"

def known_good() -> bool:
  """A vendor-specific packet whose PM4 indirect buffer releases a new value into the known-good buffer."""
  rig.counter += 1
  value, ib = 0x5a000000 | rig.counter, release_mem("good", 0, 0x5a000000 | (rig.counter), 1)
  err = rig.run(pm4_ib(len(ib)), ib)
  return err is None and ctypes.c_uint32.from_address(rig.good.va).value == value
