"""The PM4 compute command processor, driven through a real KFD compute queue (ring, read/write pointers, doorbell)."""
import ctypes, time
import pytest
from tinygrad.runtime.autogen import amdgpu_kd, hsa, kfd
from tinygrad.runtime.autogen.am import pm4_nv as pm4, soc_11 as soc
import machines
from mockgpu.errors import PacketError
from mockgpu.emulators.amd_gpu import UnmodelledFeature
from support.kfd_client import Client, pkt3, lohi
from support.pm4 import FakeExecutor, dispatch_cmds, release_mem, set_sh, wait_mem

@pytest.fixture(autouse=True)
def fresh_machine(monkeypatch): monkeypatch.setattr(machines, "current", None)

@pytest.fixture
def q():
  c = Client().events()
  c.buf = c.alloc(0x1000)
  return c.queue()

def test_release_mem_data_selects_and_read_pointer(q):
  buf = q.c.buf
  cmds = release_mem(buf.va, 0x1234_5678_9abc_def0, 1) + release_mem(buf.va + 8, 0x1234_5678_9abc_def0, 2)
  t0 = time.perf_counter_ns() // 10
  q.submit(cmds + release_mem(buf.va + 16, 0, 3))
  assert buf.u32()[0] == 0x9abcdef0 and buf.u32()[1] == 0  # 32-bit low only
  assert buf.u64()[1] == 0x1234_5678_9abc_def0
  assert t0 <= buf.u64()[2] <= time.perf_counter_ns() // 10  # the 100 MHz GPU clock
  assert q.rptr == q.put == 24

def test_release_mem_interrupt_signals_the_mailbox_event(q):
  c = q.c
  mailbox = c.event_page.va + c.queue_event.event_slot_index * 8
  q.submit(release_mem(mailbox, c.queue_event.event_id, 1, pm4.int_sel__mec_release_mem__send_interrupt_after_write_confirm,
                       c.queue_event.event_id))
  assert c.wait(c.queue_event)[0] == kfd.KFD_IOC_WAIT_RESULT_COMPLETE

def test_wait_reg_mem_blocks_until_memory_is_written(q):
  buf = q.c.buf
  q.submit(wait_mem(buf.va, 5) + release_mem(buf.va + 8, 99, 1))
  assert buf.u32()[2] == 0 and q.rptr == 0  # stopped at the wait, which is not consumed
  buf.u32()[0] = 4
  machines.machine().kick()
  assert buf.u32()[2] == 0
  buf.u32()[0] = 5
  machines.machine().kick()
  assert buf.u32()[2] == 99 and q.rptr == q.put

@pytest.mark.parametrize("func,value,ok", [(0, 0, True), (1, 5, True), (1, 4, False), (2, 4, True), (2, 3, False), (3, 4, True), (3, 5, False),
                                           (4, 4, False), (4, 5, True), (5, 4, True), (5, 5, False), (6, 3, True), (6, 4, False)])
def test_wait_reg_mem_compare_functions(q, func, value, ok):
  buf = q.c.buf
  buf.u32()[0] = 0xf4  # masked with 0xf below: compares 4 against the reference
  q.submit(wait_mem(buf.va, value, func, mask=0xf) + release_mem(buf.va + 8, 1, 1))
  assert buf.u32()[2] == int(ok)

def test_memory_barrier_hdp_flush(q):
  nbio = q.c.gpu.nbio
  ctl = pm4.WAIT_REG_MEM_OPERATION(1) | pm4.WAIT_REG_MEM_FUNCTION(5)
  q.submit(pkt3(pm4.PACKET3_WAIT_REG_MEM, ctl, nbio.regBIF_BX_PF0_GPU_HDP_FLUSH_REQ.addr[0], nbio.regBIF_BX_PF0_GPU_HDP_FLUSH_DONE.addr[0],
                0xffffffff, 0xffffffff, 4) + release_mem(q.c.buf.va, 1, 1))
  assert q.c.buf.u32()[0] == 1

def test_copy_data(q):
  buf = q.c.buf
  buf.u64()[0] = 0x1111_2222_3333_4444
  q.submit(pkt3(pm4.PACKET3_COPY_DATA, 5 | (2 << 8), 0xabcd, 0, *lohi(buf.va + 16)) +  # immediate -> memory, 32 bit
           pkt3(pm4.PACKET3_COPY_DATA, 2 | (2 << 8) | (1 << 16), *lohi(buf.va), *lohi(buf.va + 24)))  # memory -> memory, 64 bit
  assert buf.u32()[4] == 0xabcd and buf.u64()[3] == 0x1111_2222_3333_4444

def test_indirect_buffer_and_pred_exec(q):
  c = q.c
  ib = c.alloc(0x1000)
  body = release_mem(c.buf.va, 7, 1) + pkt3(pm4.PACKET3_PRED_EXEC, (2 << 24) | 8) + release_mem(c.buf.va + 4, 8, 1)  # XCC 1 only: skipped
  body += wait_mem(c.buf.va + 12, 1) + release_mem(c.buf.va + 8, 9, 1)
  for i, d in enumerate(body): ib.u32()[i] = d
  q.submit(pkt3(pm4.PACKET3_INDIRECT_BUFFER, *lohi(ib.va), len(body) | pm4.INDIRECT_BUFFER_VALID) + release_mem(c.buf.va + 16, 10, 1))
  assert list(c.buf.u32()[:5]) == [7, 0, 0, 0, 0]  # blocked inside the IB: the ring packet after it waits too
  c.buf.u32()[3] = 1
  machines.machine().kick()
  assert list(c.buf.u32()[:5]) == [7, 0, 9, 1, 10]

def test_event_write_and_acquire_mem_are_accepted(q):
  flush = pkt3(pm4.PACKET3_EVENT_WRITE, pm4.EVENT_TYPE(soc.CS_PARTIAL_FLUSH) | pm4.EVENT_INDEX(4))
  q.submit(flush + pkt3(pm4.PACKET3_ACQUIRE_MEM, 0, *lohi((1 << 64) - 1), 0, 0, 0, 0x1ffff) + pkt3(pm4.PACKET3_NOP, 0, 0, 0))
  assert q.rptr == q.put

def test_unknown_opcode_names_queue_offset_opcode(q):
  q.submit(pkt3(pm4.PACKET3_NOP, 0))
  with pytest.raises(PacketError, match=r"AMD:0 PM4 queue 0: ring offset 0x8: PACKET3 opcode 0xee \(unknown\)"):
    q.submit(pkt3(0xee, 0, 0))
  assert q.hw.error is not None  # the queue stays stopped; the hardware-exception event reports it
  assert q.c.wait(q.c.hw_event)[1][0].hw_exception_data.gpu_id == q.c.gpu.gpu_id

def test_wrong_length_and_truncated_packets(q):
  with pytest.raises(PacketError, match="DISPATCH_DIRECT.*wrong packet length: 3 body dwords, expected 4"):
    q.submit(pkt3(pm4.PACKET3_DISPATCH_DIRECT, 1, 1, 1))

def test_truncated_packet(q):
  with pytest.raises(PacketError, match=r"RELEASE_MEM.*truncated packet: 8 dwords, but only 5 were submitted"):
    q.submit(release_mem(q.c.buf.va, 1, 1)[:5])

def test_thread_trace_and_counter_registers_are_strict(q):
  gc = q.c.gpu.gc
  uconfig = lambda reg, *v: pkt3(pm4.PACKET3_SET_UCONFIG_REG, reg.addr[0] - pm4.PACKET3_SET_UCONFIG_REG_START, *v)
  with pytest.raises(PacketError, match="SQ_THREAD_TRACE_CTRL mode 1 on SE 0 with a BUF0 size of 0"):
    q.submit(uconfig(gc.regSQ_THREAD_TRACE_CTRL, 1))

def test_spm_and_trace_modes_are_unmodelled(q):
  gc = q.c.gpu.gc
  uconfig = lambda reg, *v: pkt3(pm4.PACKET3_SET_UCONFIG_REG, reg.addr[0] - pm4.PACKET3_SET_UCONFIG_REG_START, *v)
  with pytest.raises(UnmodelledFeature, match="spm_perfmon_state 1: the streaming performance monitor"):
    q.submit(uconfig(gc.regCP_PERFMON_CNTL, gc.regCP_PERFMON_CNTL.encode(spm_perfmon_state=1)))
  assert isinstance(q.hw.error, NotImplementedError)

def test_unknown_counter_selection_names_it(q):
  gc = q.c.gpu.gc
  uconfig = lambda reg, *v: pkt3(pm4.PACKET3_SET_UCONFIG_REG, reg.addr[0] - pm4.PACKET3_SET_UCONFIG_REG_START, *v)
  grbm_all = gc.regGRBM_GFX_INDEX.encode(se_broadcast_writes=1, sa_broadcast_writes=1, instance_broadcast_writes=1)
  with pytest.raises(UnmodelledFeature, match=r"SQ_PERFCOUNTER0_SELECT: counter SQ_WAIT_ANY \(SQ 35\) is not modelled"):
    q.submit(uconfig(gc.regGRBM_GFX_INDEX, grbm_all) + uconfig(gc.regSQ_PERFCOUNTER0_SELECT, 35))

def test_counter_read_needs_a_sample(q):
  gc = q.c.gpu.gc
  uconfig = lambda reg, *v: pkt3(pm4.PACKET3_SET_UCONFIG_REG, reg.addr[0] - pm4.PACKET3_SET_UCONFIG_REG_START, *v)
  grbm_all = gc.regGRBM_GFX_INDEX.encode(se_broadcast_writes=1, sa_broadcast_writes=1, instance_broadcast_writes=1)
  q.submit(uconfig(gc.regGRBM_GFX_INDEX, grbm_all) + uconfig(gc.regGRBM_PERFCOUNTER0_SELECT, 2) + uconfig(gc.regCP_PERFMON_CNTL, 1))
  assert q.c.gpu.perf.xccs[0].counters[("GRBM", 0)][0] == "GRBM_GUI_ACTIVE"
  dst = q.c.alloc(0x1000)
  copy = pkt3(pm4.PACKET3_COPY_DATA, 2 << 8 | 4, gc.regGRBM_PERFCOUNTER0_LO.addr[0], 0, *lohi(dst.va))
  with pytest.raises(PacketError, match="GRBM_PERFCOUNTER0_LO without a sample latched"): q.submit(copy)

def test_perfcount_enable_takes_zero_or_one(q):
  gc = q.c.gpu.gc
  q.submit(set_sh(gc.regCOMPUTE_START_X, 0, 0, 0, 64, 1, 1, 0, 0))  # what tinygrad writes on every dispatch
  assert q.hw.regs["COMPUTE_NUM_THREAD_X"] == 64
  q.submit(set_sh(gc.regCOMPUTE_PERFCOUNT_ENABLE, 1))
  assert q.hw.regs["COMPUTE_PERFCOUNT_ENABLE"] == 1

def test_dispatch_direct_collects_the_registers(q, monkeypatch):
  ex = FakeExecutor()
  machines.stand_in(monkeypatch, ex.module())
  pgm, scratch = 0x7f12_3456_7800, 0x7f00_0000_1000
  q.submit(dispatch_cmds(q.c.gpu.gc, pgm, scratch, [5, 6, 7], (4, 2, 1), (32, 2, 1)))
  (d,) = ex.dispatches
  assert (d.arch, d.pgm_addr, d.scratch_base, d.rsrc1, d.rsrc2, d.rsrc3, d.tmpring_size) == ("rdna3", pgm, scratch, 0x11, 0x22, 0x33, 0x44)
  assert d.user_data[:4] == [5, 6, 7, 0] and len(d.user_data) == 16
  assert d.grid == (4, 2, 1) and d.block == (32, 2, 1) and d.wave32

def test_dispatch_page_fault_fires_the_memory_event(q, monkeypatch, caplog):
  machines.stand_in(monkeypatch, FakeExecutor(fault=0x1234_5678).module())
  mailbox = q.c.buf.va
  q.submit(dispatch_cmds(q.c.gpu.gc, 0x1000, 0, [0], (1, 1, 1), (1, 1, 1)) + release_mem(mailbox, 1, 1))  # a fault does not raise here
  assert q.c.buf.u32()[0] == 0  # the queue stopped at the dispatch
  result, data = q.c.wait(q.c.mem_event)
  assert result == kfd.KFD_IOC_WAIT_RESULT_COMPLETE
  m = data[0].memory_exception_data
  assert (m.gpu_id, m.va, m.failure.NotPresent) == (q.c.gpu.gpu_id, 0x1234_5000, 1)
  assert "0x12345678" in caplog.text and "pc 0x40" in caplog.text
  assert q.c.wait(q.c.mem_event)[0] == kfd.KFD_IOC_WAIT_RESULT_COMPLETE  # not auto-reset: later waits fail fast

def test_packets_that_wrap_around_the_ring():
  c = Client().events()
  buf, q = c.alloc(0x1000), c.queue(ring_size=0x100)  # 64 dwords: 8-dword packets soon straddle the end
  for batch in range(5):
    q.submit(release_mem(buf.va, batch, 1) + release_mem(buf.va + 4, batch * 10, 1) + pkt3(pm4.PACKET3_NOP, 0, 0))
    assert (buf.u32()[0], buf.u32()[1]) == (batch, batch * 10) and q.rptr == q.put
  assert q.put > 64

# *** AQL queues: 64-byte HSA packets; vendor packets carry PM4 indirect buffers ***

AQL_HDR = (1 << hsa.HSA_PACKET_HEADER_BARRIER) | (hsa.HSA_FENCE_SCOPE_SYSTEM << hsa.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)

@pytest.fixture
def aql():
  c = Client().events()
  c.buf = c.alloc(0x1000)
  return c.queue(kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, ring_size=0x1000)

def pm4_ib_packet(c, cmds) -> list[int]:
  ib = c.alloc(0x1000)
  for i, d in enumerate(cmds): ib.u32()[i] = d
  return [AQL_HDR | (hsa.HSA_PACKET_TYPE_VENDOR_SPECIFIC << hsa.HSA_PACKET_HEADER_TYPE) | (1 << 16),
          *pkt3(pm4.PACKET3_INDIRECT_BUFFER, *lohi(ib.va), len(cmds) | pm4.INDIRECT_BUFFER_VALID), 10] + [0] * 10

def test_aql_vendor_packet_runs_its_pm4_ib_and_advances_read_dispatch_id(aql):
  c = aql.c
  aql.submit(pm4_ib_packet(c, release_mem(c.buf.va, 11, 1)) + pm4_ib_packet(c, release_mem(c.buf.va + 4, 12, 1)))
  assert list(c.buf.u32()[:2]) == [11, 12] and aql.rptr == aql.put == 2

def test_aql_invalid_header_waits_for_the_packet(aql):
  c = aql.c
  pkt = pm4_ib_packet(c, release_mem(c.buf.va, 13, 1))
  aql.submit([hsa.HSA_PACKET_TYPE_INVALID] + pkt[1:])  # the write pointer moved, the header is not published yet
  assert c.buf.u32()[0] == 0 and aql.rptr == 0
  aql.ring.u32()[0] = pkt[0]
  machines.machine().kick()
  assert c.buf.u32()[0] == 13 and aql.rptr == 1

def test_aql_unknown_packet_type(aql):
  with pytest.raises(PacketError, match=r"AMD:0 AQL queue 0: ring offset 0x0: AQL AGENT_DISPATCH packet.*unknown or unmodelled"):
    aql.submit([hsa.HSA_PACKET_TYPE_AGENT_DISPATCH] + [0] * 15)

def test_aql_kernel_dispatch_takes_the_kernel_descriptor(aql, monkeypatch):
  c = aql.c
  ex = FakeExecutor()
  machines.stand_in(monkeypatch, ex.module())
  code = c.alloc(0x1000)
  props = (hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_DISPATCH_PTR | hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_KERNARG_SEGMENT_PTR |
           hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_WAVEFRONT_SIZE32)
  kd = amdgpu_kd.llvm_amdhsa_kernel_descriptor_t(kernel_code_entry_byte_offset=0x100, compute_pgm_rsrc1=0x11, compute_pgm_rsrc2=0x22,
                                                 compute_pgm_rsrc3=0x33, kernel_code_properties=props)
  ctypes.memmove(code.va, bytes(kd), ctypes.sizeof(kd))
  q = hsa.amd_queue_t.from_address(aql.gart.va)
  q.compute_tmpring_size, q.scratch_backing_memory_location = 0x44, 0x7f00_0000_0000
  pkt = hsa.hsa_kernel_dispatch_packet_t(header=AQL_HDR | (hsa.HSA_PACKET_TYPE_KERNEL_DISPATCH << hsa.HSA_PACKET_HEADER_TYPE), setup=3,
                                         workgroup_size_x=32, workgroup_size_y=2, workgroup_size_z=1, grid_size_x=128, grid_size_y=2,
                                         grid_size_z=3, group_segment_size=1000, kernel_object=code.va, kernarg_address=0x1234_5678_9000)
  aql.submit(list((ctypes.c_uint32 * 16).from_buffer_copy(bytes(pkt))))
  (d,) = ex.dispatches
  assert d.pgm_addr == code.va + 0x100 and (d.rsrc1, d.rsrc3, d.tmpring_size, d.scratch_base) == (0x11, 0x33, 0x44, 0x7f00_0000_0000)
  assert d.rsrc2 == 0x22 | (2 << 15)  # 1000 bytes of LDS: two 512-byte granules
  assert d.block == (32, 2, 1) and d.grid == (4, 1, 3) and d.wave32
  assert d.user_data[:5] == [*lohi(aql.ring.va), *lohi(0x1234_5678_9000), 0]  # the dispatch packet's address, then the kernarg pointer

def test_thread_trace_per_se_start_finish_wptr(q):
  # per-SE registers through GRBM_GFX_INDEX (one SE, then broadcast), a trace started on SE 2 only, and what
  # THREAD_TRACE_FINISH leaves: the blob in BUF0, STATUS finish_done, WPTR absolute in 32-byte units (gfx 11.0)
  gc, perf = q.c.gpu.gc, q.c.gpu.perf
  uconfig = lambda reg, *v: pkt3(pm4.PACKET3_SET_UCONFIG_REG, reg.addr[0] - pm4.PACKET3_SET_UCONFIG_REG_START, *v)
  buf, out = q.c.alloc(0x2000), q.c.alloc(0x1000)
  se2 = gc.regGRBM_GFX_INDEX.encode(se_index=2, sa_index=0, instance_broadcast_writes=1)
  grbm_all = gc.regGRBM_GFX_INDEX.encode(se_broadcast_writes=1, sa_broadcast_writes=1, instance_broadcast_writes=1)
  size = gc.regSQ_THREAD_TRACE_BUF0_SIZE.encode(size=2, base_hi=buf.va >> 44)
  q.submit(uconfig(gc.regGRBM_GFX_INDEX, grbm_all) + uconfig(gc.regSQ_THREAD_TRACE_MASK, 0x10000) +
           uconfig(gc.regGRBM_GFX_INDEX, se2) + uconfig(gc.regSQ_THREAD_TRACE_BUF0_SIZE, size) +
           uconfig(gc.regSQ_THREAD_TRACE_BUF0_BASE, (buf.va >> 12) & 0xffffffff) + uconfig(gc.regSQ_THREAD_TRACE_CTRL, 1))
  traces = perf.xccs[0].traces
  assert [t.regs["SQ_THREAD_TRACE_MASK"] for t in traces] == [0x10000] * 6
  assert [t.unit is not None for t in traces] == [False, False, True, False, False, False]
  finish = pkt3(pm4.PACKET3_EVENT_WRITE, pm4.EVENT_TYPE(soc.THREAD_TRACE_FINISH) | pm4.EVENT_INDEX(0))
  status = pkt3(pm4.PACKET3_COPY_DATA, 2 << 8 | 4, gc.regSQ_THREAD_TRACE_STATUS.addr[0], 0, *lohi(out.va))
  wptr = pkt3(pm4.PACKET3_COPY_DATA, 2 << 8 | 4, gc.regSQ_THREAD_TRACE_WPTR.addr[0], 0, *lohi(out.va + 4))
  q.submit(finish + status + wptr)
  st, wp = out.u32()[0], out.u32()[1]
  assert gc.regSQ_THREAD_TRACE_STATUS.decode(st)["finish_done"] == 1 and gc.regSQ_THREAD_TRACE_STATUS.decode(st)["finish_pending"] == 0
  n = (wp - (buf.va // 32)) & 0x1fffffff
  assert 0 < n * 32 <= 0x2000 - 32 and buf.u32()[0] & 0x7f == 0b0010001  # LAYOUT_HEADER first

def test_register_names_and_single_registers_come_from_the_raw_tables_as_tinygrads_amdip_gives_them():
  """registers_by_address and register() read tinygrad's raw register tables instead of building every AMDReg
  (AMDIP.regs): the same address -> name map and the same register, on every board's GC and NBIO versions."""
  from tinygrad.runtime.support.amd import AMDIP
  from mockgpu.boards import AMD_BOARDS
  from mockgpu.emulators.amd_gpu import register, register_block, registers_by_address
  for board in AMD_BOARDS.values():
    expect:dict[int, str] = {}
    for ip, ver in (("gc", board.gc_version), ("nbio", board.nbio_version)):
      b = register_block(ip, ver)
      for name, reg in AMDIP(b.name, b.version, b.bases).regs.items(): expect.setdefault(reg.addr[0], name.removeprefix("reg").removeprefix("mm"))
    assert registers_by_address(board.gc_version, board.nbio_version) == expect, board.name
    gc = AMDIP("gc", board.gc_version, register_block("gc", board.gc_version).bases)  # a fresh block: regs not built
    one = register(gc, "regCOMPUTE_DISPATCH_INITIATOR")
    assert "regs" not in vars(gc)
    assert one == gc.regCOMPUTE_DISPATCH_INITIATOR and one.addr == gc.regCOMPUTE_DISPATCH_INITIATOR.addr, board.name
  with pytest.raises(AttributeError, match="GC has no register regNO_SUCH"): register(AMDIP("gc", (11, 0, 0), gc.bases), "regNO_SUCH")
