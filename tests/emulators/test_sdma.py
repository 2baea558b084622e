"""The SDMA engine, driven through a real KFD SDMA queue, with the packets tinygrad's AMDCopyQueue builds."""
import ctypes, os, time
import pytest
from tinygrad.runtime.autogen import kfd
from tinygrad.runtime.autogen.am import sdma_6_0_0 as sdma
import machines
from mockgpu.errors import PacketError
from mockgpu.emulators.amd_gpu import UnmodelledFeature
from support.kfd_client import Client, lohi
from support.sdma import copy, sdma_queue

@pytest.fixture(autouse=True)
def fresh_machine(monkeypatch): monkeypatch.setattr(machines, "current", None)

@pytest.fixture
def q(): return sdma_queue()
def fence(addr, value): return [sdma.SDMA_OP_FENCE | sdma.SDMA_PKT_FENCE_HEADER_MTYPE(3), *lohi(addr), value]
def poll(addr, value, func=5):
  return [sdma.SDMA_OP_POLL_REGMEM | sdma.SDMA_PKT_POLL_REGMEM_HEADER_FUNC(func) | sdma.SDMA_PKT_POLL_REGMEM_HEADER_MEM_POLL(1), *lohi(addr),
          value, 0xffffffff, sdma.SDMA_PKT_POLL_REGMEM_DW5_INTERVAL(4) | sdma.SDMA_PKT_POLL_REGMEM_DW5_RETRY_COUNT(0xfff)]

def test_copy_linear_and_byte_pointers(q):
  buf = q.c.buf
  data = os.urandom(0x1001)  # an odd size: SDMA copies bytes
  ctypes.memmove(buf.va, data, len(data))
  q.submit(copy(buf.va + 0x2000, buf.va, len(data)))
  assert ctypes.string_at(buf.va + 0x2000, len(data)) == data and ctypes.string_at(buf.va + 0x2000 + len(data), 1) == b"\0"
  assert q.rptr == q.put == 7 * 4  # pointers in bytes

def test_write_fence_timestamp_fill(q):
  buf = q.c.buf
  t0 = time.perf_counter_ns() // 10
  q.submit([sdma.SDMA_OP_WRITE, *lohi(buf.va), 1, 0xaaaa5555, 0x12345678] + fence(buf.va + 8, 42) +
           [sdma.SDMA_OP_TIMESTAMP | sdma.SDMA_PKT_TIMESTAMP_GET_GLOBAL_HEADER_SUB_OP(sdma.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL), *lohi(buf.va + 16)] +
           [sdma.SDMA_OP_CONST_FILL | sdma.SDMA_PKT_CONSTANT_FILL_HEADER_FILLSIZE(2), *lohi(buf.va + 32), 0xcafef00d, 15] + [0, 0])
  assert buf.u64()[0] == 0x12345678_aaaa5555 and buf.u32()[2] == 42
  assert t0 <= buf.u64()[2] <= time.perf_counter_ns() // 10
  assert list(buf.u32()[8:13]) == [0xcafef00d] * 4 + [0]
  assert q.rptr == q.put

def test_poll_regmem_blocks_and_trap_signals(q):
  c, buf = q.c, q.c.buf
  mailbox = c.event_page.va + c.queue_event.event_slot_index * 8
  q.submit(poll(buf.va, 3) + fence(mailbox, c.queue_event.event_id) +
           [sdma.SDMA_OP_TRAP, sdma.SDMA_PKT_TRAP_INT_CONTEXT_INT_CONTEXT(c.queue_event.event_id)])
  assert c.wait(c.queue_event)[0] == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT and q.rptr == 0
  buf.u32()[0] = 3  # a host write, then the wait's kick, resumes the engine
  assert c.wait(c.queue_event)[0] == kfd.KFD_IOC_WAIT_RESULT_COMPLETE and q.rptr == q.put

def test_indirect_buffer(q):
  c = q.c
  ib = c.alloc(0x1000)
  body = fence(c.buf.va, 5) + fence(c.buf.va + 4, 6)
  for i, d in enumerate(body): ib.u32()[i] = d
  q.submit([sdma.SDMA_OP_INDIRECT, *lohi(ib.va), len(body), 0, 0])
  assert list(c.buf.u32()[:2]) == [5, 6]

def test_copy_fault_stops_the_queue_and_reports(q):
  c = q.c
  q.submit(copy(0x10, c.buf.va, 64) + fence(c.buf.va, 1))  # a destination that is not mapped
  assert c.buf.u32()[0] == 0 and q.hw.error is not None
  result, data = c.wait(c.mem_event)
  assert result == kfd.KFD_IOC_WAIT_RESULT_COMPLETE and data[0].memory_exception_data.va == 0 and data[0].memory_exception_data.gpu_id

def test_unknown_opcode(q):
  with pytest.raises(PacketError, match=r"AMD:0 SDMA queue 0: ring offset 0x0: SDMA op 99 \(unknown\)"): q.submit([99, 0, 0, 0])

def test_unmodelled_sub_op(q):
  with pytest.raises(UnmodelledFeature, match="sub_op 1"): q.submit([sdma.SDMA_OP_COPY | (1 << 8), 0, 0, 0, 0, 0, 0])

def test_truncated_packet(q):
  with pytest.raises(PacketError, match="truncated packet: 7 dwords, but only 3"): q.submit(copy(0, 0, 4)[:3])

def test_a_page_fault_evicts_the_gpus_queues_but_not_other_gpus(monkeypatch):
  monkeypatch.setenv("MOCKGPU_COUNT", "2")
  c0, c1 = Client(0).events(), Client(1)
  b0, b1 = c0.alloc(0x1000), c1.alloc(0x1000)
  s0, p0, s1 = c0.queue(kfd.KFD_IOC_QUEUE_TYPE_SDMA), c0.queue(), c1.queue(kfd.KFD_IOC_QUEUE_TYPE_SDMA)
  s0.submit(copy(0x10, b0.va, 4))  # faults
  assert p0.hw.error is s0.hw.error is not None
  s1.submit(fence(b1.va, 9))
  assert b1.u32()[0] == 9 and s1.hw.error is None
