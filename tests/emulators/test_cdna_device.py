"""The CDNA boards up to the executor: soc15 PM4 and AQL queues over several XCCs (PRED_EXEC, the workgroup split),
SDMA 4.4, and the KFD answers, driven by the in-process KFD client (test_kfd.Client) on gfx942 and gfx950 and by
tinygrad itself in child processes (DEV=MOCKKFD+AMD:LLVM:gfx942)."""
import ctypes, functools, json, os, types
import numpy as np
import pytest
from tinygrad.runtime.autogen import amdgpu_drm, amdgpu_kd, hsa, kfd
from tinygrad.runtime.autogen.am import pm4_soc15 as pm4, sdma_4_0_0 as sdma
import machines
from mockgpu.compiler import toolchain
from mockgpu.emulators import rdna
from mockgpu.emulators.amd_gpu import UnmodelledFeature
from mockgpu.errors import PacketError
from support.kfd_client import Client, call, lohi, request
from support.sdma import copy, sdma_queue  # the SDMA queue and COPY_LINEAR (the same encoding on 4.4)
from conftest import run_tinygrad

@pytest.fixture(autouse=True, params=["gfx942", "gfx950"])
def board(request, monkeypatch):
  """A fresh machine of the CDNA board (MOCKGPU_AMD_BOARD; DEV names no arch here)."""
  monkeypatch.setattr(machines, "current", None)
  monkeypatch.delenv("DEV", raising=False)
  monkeypatch.setenv("MOCKGPU_AMD_BOARD", request.param)
  monkeypatch.setenv("MOCKGPU_COUNT", "1")
  return request.param

def pkt3(op, *body) -> list[int]: return [pm4.PACKET3(op, len(body) - 1), *body]

def set_sh(reg, *values): return pkt3(pm4.PACKET3_SET_SH_REG, reg.addr[0] - pm4.PACKET3_SET_SH_REG_START, *values)

def pred_exec(mask:int, body:list[int]) -> list[int]: return pkt3(pm4.PACKET3_PRED_EXEC, (mask << 24) | len(body)) + body

def release_mem(addr, value, data_sel=1, int_sel=0):
  """tinygrad's soc15 RELEASE_MEM (ops_amd release_mem, target 9): cache actions in the event dword, ctxid 0."""
  event = pm4.EVENT_TYPE(pm4.CACHE_FLUSH_AND_INV_TS_EVENT) | pm4.EVENT_INDEX(pm4.event_index__mec_release_mem__end_of_pipe)
  return pkt3(pm4.PACKET3_RELEASE_MEM, event | pm4.EOP_TC_WB_ACTION_EN | pm4.EOP_TC_NC_ACTION_EN, pm4.DATA_SEL(data_sel) | pm4.INT_SEL(int_sel),
              *lohi(addr), *lohi(value), 0)

def acquire_mem():
  """tinygrad's soc15 ACQUIRE_MEM: CP_COHER_CNTL, size, base, poll interval (6 body dwords)."""
  cntl = pm4.PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_ICACHE_ACTION_ENA(1) | pm4.PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(1)
  return pkt3(pm4.PACKET3_ACQUIRE_MEM, cntl, *lohi((1 << 64) - 1), *lohi(0), 0xa)

AQL_HDR = (1 << hsa.HSA_PACKET_HEADER_BARRIER) | (hsa.HSA_FENCE_SCOPE_SYSTEM << hsa.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)

def ib_packet(c, cmds:list[int]) -> list[int]:
  """An AQL vendor-specific packet carrying a PM4 indirect buffer, as AMDComputeAQLQueue._pm4_pkt builds it."""
  ib = c.alloc(0x1000)
  for i, d in enumerate(cmds): ib.u32()[i] = d
  return [AQL_HDR | (hsa.HSA_PACKET_TYPE_VENDOR_SPECIFIC << hsa.HSA_PACKET_HEADER_TYPE) | (1 << 16),
          *pkt3(pm4.PACKET3_INDIRECT_BUFFER, *lohi(ib.va), len(cmds) | pm4.INDIRECT_BUFFER_VALID), 10] + [0] * 10

@pytest.fixture
def aql():
  c = Client().events()
  c.buf = c.alloc(0x1000)
  return c.queue(kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, ring_size=0x1000)

class Recorder:
  """A stand-in for the executor that keeps every Dispatch (the real Dataclass, so its fields are the contract)."""
  def __init__(self, monkeypatch):
    self.dispatches = []
    machines.stand_in(monkeypatch, types.SimpleNamespace(Dispatch=rdna.Dispatch, run_dispatch=self.run))
  def run(self, mem, d): self.dispatches.append(d)

# *** soc15 PM4 ***

def test_aql_queue_runs_on_every_xcc_with_the_mqd_chunk(aql, board):
  hw = aql.hw
  assert hw.xccs == tuple(range(8)) and [r["COMPUTE_TG_CHUNK_SIZE"] for r in hw.xcc_regs] == [1] * 8
  assert hw.pm4.__name__.endswith("pm4_soc15") and hw.gpu.gc.version[:2] == {"gfx942": (9, 4), "gfx950": (9, 5)}[board]

def test_soc15_release_and_acquire_mem(aql):
  c = aql.c
  aql.submit(ib_packet(c, acquire_mem() + release_mem(c.buf.va, 0x1234_5678_9abc_def0, 2) + release_mem(c.buf.va + 8, 7, 1)))
  assert c.buf.u64()[0] == 0x1234_5678_9abc_def0 and c.buf.u32()[2] == 7 and aql.rptr == aql.put == 1

def test_acquire_mem_takes_the_soc15_length(aql):
  # pm4_nv's 7-dword ACQUIRE_MEM (with GCR_CNTL) is not a soc15 packet
  with pytest.raises(PacketError, match="ACQUIRE_MEM.*wrong packet length: 7 body dwords, expected 6"):
    aql.submit(ib_packet(aql.c, pkt3(pm4.PACKET3_ACQUIRE_MEM, 0, *lohi((1 << 64) - 1), 0, 0, 0, 0)))

def test_set_sh_reg_names_gc9_registers_on_each_xcc(aql):
  gc = aql.hw.gpu.gc
  aql.submit(ib_packet(aql.c, set_sh(gc.regCOMPUTE_PGM_RSRC1, 0x00af_0081, 0x0000_0090) + set_sh(gc.regCOMPUTE_PGM_RSRC3, 0x1_0003)))
  assert all((r["COMPUTE_PGM_RSRC1"], r["COMPUTE_PGM_RSRC2"], r["COMPUTE_PGM_RSRC3"]) == (0x00af_0081, 0x90, 0x1_0003) for r in aql.hw.xcc_regs)

def test_unknown_register_is_named(aql):
  gc = aql.hw.gpu.gc
  with pytest.raises(UnmodelledFeature, match=r"register COMPUTE_DISPATCH_PKT_ADDR_LO \(0x[0-9a-f]+\) is not modelled"):
    aql.submit(ib_packet(aql.c, set_sh(gc.regCOMPUTE_DISPATCH_PKT_ADDR_LO, 1)))

# *** PRED_EXEC: the next EXEC_COUNT dwords run on the XCCs of the mask ***

def test_pred_exec_selects_xccs(aql):
  gc = aql.hw.gpu.gc
  cmds = []
  for x in range(8): cmds += pred_exec(1 << x, set_sh(gc.regCOMPUTE_USER_DATA_0, 100 + x))
  cmds += pred_exec(0b1010_0101, set_sh(gc.regCOMPUTE_USER_DATA_1, 7)) + set_sh(gc.regCOMPUTE_USER_DATA_2, 9)
  aql.submit(ib_packet(aql.c, cmds))
  regs = aql.hw.xcc_regs
  assert [r["COMPUTE_USER_DATA_0"] for r in regs] == [100 + x for x in range(8)]
  assert [r["COMPUTE_USER_DATA_1"] for r in regs] == [7, 0, 7, 0, 0, 7, 0, 7]
  assert [r["COMPUTE_USER_DATA_2"] for r in regs] == [9] * 8  # after the block: every XCC again

def test_pred_exec_of_no_xcc_skips_its_block(aql):
  c = aql.c
  aql.submit(ib_packet(c, pred_exec(0, release_mem(c.buf.va, 5)) + release_mem(c.buf.va + 4, 6)))
  assert list(c.buf.u32()[:2]) == [0, 6]

def test_pred_exec_blocks_are_checked(aql):
  gc, c = aql.hw.gpu.gc, aql.c
  with pytest.raises(PacketError, match="runs past the end of its PRED_EXEC block"):  # the block ends inside a packet
    aql.submit(ib_packet(c, pkt3(pm4.PACKET3_PRED_EXEC, (1 << 24) | 2) + set_sh(gc.regCOMPUTE_USER_DATA_0, 1, 2)))

def test_pred_exec_in_a_ring_is_unmodelled_on_multi_xcc(board):
  c = Client().events()
  q = c.queue()  # a PM4 ring: tinygrad wraps PRED_EXEC in an IB because it "doesn't work in rings" on MI300
  with pytest.raises(UnmodelledFeature, match="PRED_EXEC in the ring of a multi-XCC GPU"): q.submit(pred_exec(1, pkt3(pm4.PACKET3_NOP, 0)))

def test_pred_exec_nested_is_unmodelled(aql):
  with pytest.raises(UnmodelledFeature, match="PRED_EXEC inside a PRED_EXEC block"):
    aql.submit(ib_packet(aql.c, pred_exec(1, pred_exec(1, pkt3(pm4.PACKET3_NOP, 0)))))

# *** a dispatch split across XCCs ***

def kernel_descriptor(c, rsrc1=0x00af_0041, rsrc2=0x0000_0090, rsrc3=0x0000_0003,
                      props=hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_KERNARG_SEGMENT_PTR):
  code = c.alloc(0x1000)
  kd = amdgpu_kd.llvm_amdhsa_kernel_descriptor_t(kernel_code_entry_byte_offset=0x100, compute_pgm_rsrc1=rsrc1, compute_pgm_rsrc2=rsrc2,
                                                 compute_pgm_rsrc3=rsrc3, kernel_code_properties=props)
  ctypes.memmove(code.va, bytes(kd), ctypes.sizeof(kd))
  return code

def dispatch_packet(code, wg, grid_wgs, kernarg=0x1234_5678_9000):
  pkt = hsa.hsa_kernel_dispatch_packet_t(header=AQL_HDR | (hsa.HSA_PACKET_TYPE_KERNEL_DISPATCH << hsa.HSA_PACKET_HEADER_TYPE), setup=3,
                                         workgroup_size_x=wg[0], workgroup_size_y=wg[1], workgroup_size_z=wg[2],
                                         grid_size_x=wg[0] * grid_wgs[0], grid_size_y=wg[1] * grid_wgs[1], grid_size_z=wg[2] * grid_wgs[2],
                                         kernel_object=code.va, kernarg_address=kernarg)
  return list((ctypes.c_uint32 * 16).from_buffer_copy(bytes(pkt)))

def test_aql_dispatch_is_split_round_robin_across_xccs(aql, board, monkeypatch):
  rec, c = Recorder(monkeypatch), aql.c
  q = hsa.amd_queue_t.from_address(aql.gart.va)
  q.scratch_backing_memory_location, q.compute_tmpring_size = 0x7f00_0000_0000, 0x44
  q.scratch_resource_descriptor[2] = 0x10_0000  # one XCC's share, as tinygrad's _ensure_has_local_memory writes it
  aql.submit(dispatch_packet(kernel_descriptor(c), (64, 1, 1), (5, 3, 2)))
  assert len(rec.dispatches) == 8
  family = {"gfx942": "cdna3", "gfx950": "cdna4"}[board]
  seen = []
  for x, d in enumerate(rec.dispatches):
    assert (d.arch, d.wave_size, d.xcc, d.grid, d.block) == (family, 64, (x, 8, 1), (5, 3, 2), (64, 1, 1))
    assert d.scratch_base == 0x7f00_0000_0000 + x * 0x10_0000 and d.user_data[:2] == list(lohi(0x1234_5678_9000))
    ids = d.workgroup_ids()
    assert list(ids) == list(range(x, 30, 8))  # workgroup k (x fastest) on XCC k mod 8
    seen += list(ids)
  assert sorted(seen) == list(range(30))  # every workgroup runs once

def test_tg_chunk_size_groups_consecutive_workgroups(aql, monkeypatch):
  rec, c, gc = Recorder(monkeypatch), aql.c, aql.hw.gpu.gc
  aql.submit(ib_packet(c, set_sh(gc.regCOMPUTE_TG_CHUNK_SIZE, 4)) + dispatch_packet(kernel_descriptor(c), (64, 1, 1), (70, 1, 1)))
  assert [list(d.workgroup_ids()[:5]) for d in rec.dispatches[:2]] == [[0, 1, 2, 3, 32], [4, 5, 6, 7, 36]]
  assert sorted(i for d in rec.dispatches for i in d.workgroup_ids()) == list(range(70))

def test_tg_chunk_size_zero_over_several_xccs_is_unmodelled(aql, monkeypatch):
  Recorder(monkeypatch)
  c, gc = aql.c, aql.hw.gpu.gc
  with pytest.raises(UnmodelledFeature, match="COMPUTE_TG_CHUNK_SIZE 0"):
    aql.submit(ib_packet(c, set_sh(gc.regCOMPUTE_TG_CHUNK_SIZE, 0)) + dispatch_packet(kernel_descriptor(c), (64, 1, 1), (2, 1, 1)))

def test_dispatch_direct_in_an_aql_ib_uses_each_xccs_registers(aql, monkeypatch):
  # tinygrad's PM4 exec: the scratch base per XCC under PRED_EXEC, the rest for all; gfx9's initiator has no CS_W32_EN
  rec, gc = Recorder(monkeypatch), aql.hw.gpu.gc
  cmds = set_sh(gc.regCOMPUTE_PGM_LO, *lohi(0x7f12_3456_7800 >> 8)) + set_sh(gc.regCOMPUTE_PGM_RSRC1, 0x00af_0041, 0x90)
  for x in range(8): cmds += pred_exec(1 << x, set_sh(gc.regCOMPUTE_DISPATCH_SCRATCH_BASE_LO, *lohi((0x7e00_0000_0000 + x * 0x1_0000) >> 8)))
  cmds += set_sh(gc.regCOMPUTE_START_X, 0, 0, 0, 256, 1, 1, 0, 0)
  cmds += pkt3(pm4.PACKET3_DISPATCH_DIRECT, 16, 1, 1, gc.regCOMPUTE_DISPATCH_INITIATOR.encode(force_start_at_000=1, compute_shader_en=1))
  aql.submit(ib_packet(aql.c, cmds))
  assert [d.scratch_base for d in rec.dispatches] == [0x7e00_0000_0000 + x * 0x1_0000 for x in range(8)]
  assert all(d.pgm_addr == 0x7f12_3456_7800 and d.block == (256, 1, 1) and not d.wave32 and d.xcc == (x, 8, 1) for x, d in enumerate(rec.dispatches))

def test_pm4_queue_runs_on_its_target_xcc(board, monkeypatch):
  _rec, c = Recorder(monkeypatch), Client().events()
  ring, gart = c.alloc(0x1000), c.alloc(0x1000)
  args = dict(ring_base_address=ring.va, ring_size=0x1000, gpu_id=c.gpu.gpu_id, queue_type=kfd.KFD_IOC_QUEUE_TYPE_COMPUTE,
              queue_priority=7, write_pointer_address=gart.va + 0x38, read_pointer_address=gart.va + 0x80 + 8 * 3)
  with pytest.raises(OSError, match="pm4_target_xcc 8"): call(c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, queue_percentage=100 | (8 << 8), **args)
  desc = call(c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, queue_percentage=100 | (3 << 8), **args)
  hw = c.gpu.queues[desc.queue_id]
  assert hw.xccs == (3,) and hw.xcc_regs[0]["COMPUTE_TG_CHUNK_SIZE"] == 0  # KFD's MQD: no split, logical XCC 0

def test_bad_program_resources_are_named(aql, monkeypatch):
  Recorder(monkeypatch)
  c = aql.c
  with pytest.raises(PacketError, match="COMPUTE_PGM_RSRC3 0x00020003: reserved bits 0x00020000"):
    aql.submit(dispatch_packet(kernel_descriptor(c, rsrc3=0x2_0003), (64, 1, 1), (1, 1, 1)))
  q2 = c.queue(kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, ring_size=0x1000)  # the first queue stays stopped, as hardware's
  with pytest.raises(PacketError, match="sets ENABLE_WAVEFRONT_SIZE32.*wave64 is its only mode"):
    props = hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_WAVEFRONT_SIZE32
    q2.submit(dispatch_packet(kernel_descriptor(c, props=props), (64, 1, 1), (1, 1, 1)))

# *** SDMA 4.4 ***

def fence(addr, value, flags=0): return [sdma.SDMA_OP_FENCE | flags, *lohi(addr), value]  # gfx9: tinygrad sends no MTYPE

@pytest.fixture
def dma(): return sdma_queue()

def test_sdma_4_4_copy_fence_poll_trap(dma):
  c, buf = dma.c, dma.c.buf
  assert dma.hw.sdma is sdma  # tinygrad's table for SDMA 4.4.x: sdma_4_0_0
  data = os.urandom(0xc01)
  ctypes.memmove(buf.va, data, len(data))
  mailbox = c.event_page.va + c.queue_event.event_slot_index * 8
  dma.submit([sdma.SDMA_OP_POLL_REGMEM | sdma.SDMA_PKT_POLL_REGMEM_HEADER_FUNC(3) | sdma.SDMA_PKT_POLL_REGMEM_HEADER_MEM_POLL(1),
              *lohi(buf.va + 0x3800), 1, 0xffffffff, sdma.SDMA_PKT_POLL_REGMEM_DW5_INTERVAL(4) | sdma.SDMA_PKT_POLL_REGMEM_DW5_RETRY_COUNT(0xfff)]
             + copy(buf.va + 0x1000, buf.va, len(data)) + fence(buf.va + 0x3000, 42) + fence(mailbox, c.queue_event.event_id)
             + [sdma.SDMA_OP_TRAP, sdma.SDMA_PKT_TRAP_INT_CONTEXT_INT_CONTEXT(c.queue_event.event_id)])
  assert buf.u32()[0x3000 // 4] == 0 and dma.rptr == 0  # waiting for the poll
  buf.u32()[0x3800 // 4] = 1
  assert c.wait(c.queue_event)[0] == kfd.KFD_IOC_WAIT_RESULT_COMPLETE
  assert ctypes.string_at(buf.va + 0x1000, len(data)) == data and buf.u32()[0x3000 // 4] == 42 and dma.rptr == dma.put

def test_sdma_4_4_fence_has_no_mtype(dma):
  # SDMA 5+ takes FENCE MTYPE(3) (what tinygrad sends off gfx9); on 4.4 the bits are reserved
  with pytest.raises(PacketError, match=r"FENCE.*header bits 0x00030000 are reserved in sdma_4_0_0's FENCE"):
    dma.submit(fence(dma.c.buf.va, 1, 3 << 16))

def test_sdma_4_4_copy_count_is_22_bits(dma):
  with pytest.raises(PacketError, match=r"COPY_LINEAR count 0x400000 is wider than the count field \(0x3fffff"):
    dma.submit(copy(dma.c.buf.va, dma.c.buf.va, 2)[:1] + [0x400000] + copy(0, dma.c.buf.va, 2)[2:])

def test_sdma_4_4_has_no_gcr_req(dma):
  with pytest.raises(PacketError, match=r"SDMA op 17 \(GCR\).*unknown or unmodelled opcode"): dma.submit([17, 0, 0, 0, 0])

# *** KFD and DRM answers ***

def test_dev_info_reports_gfx9_family_and_hbm(board):
  c = Client()
  inf = amdgpu_drm.struct_drm_amdgpu_info_device()
  st = amdgpu_drm.struct_drm_amdgpu_info(return_pointer=ctypes.addressof(inf), return_size=ctypes.sizeof(inf), query=amdgpu_drm.AMDGPU_INFO_DEV_INFO)
  c.render.ioctl(request(amdgpu_drm.DRM_IOCTL_AMDGPU_INFO, st), st)
  assert inf.family == amdgpu_drm.AMDGPU_FAMILY_AI and inf.wave_front_size == 64 and inf.num_shader_engines == 4
  assert inf.vram_type == {"gfx942": amdgpu_drm.AMDGPU_VRAM_TYPE_HBM, "gfx950": amdgpu_drm.AMDGPU_VRAM_TYPE_HBM3E}[board]

# *** tinygrad itself ***

RECORD = """
import json, sys
import mockgpu.emulators.rdna as r
seen = []
def record(mem, d):
  if d.arch not in ("cdna3", "cdna4"): raise AssertionError(d)
  seen.append({"arch": d.arch, "wave": d.wave_size, "xcc": list(d.xcc), "grid": list(d.grid), "block": list(d.block), "pgm": d.pgm_addr,
               "scratch": d.scratch_base, "rsrc": [d.rsrc1, d.rsrc2, d.rsrc3], "ids": [int(i) for i in d.workgroup_ids()]})
  return r.DispatchStats(0, 0, 0.0)
r.run_dispatch = record
from tinygrad import Tensor, Device
dev = Device["AMD"]
Tensor.empty(3000).realize()
(Tensor.empty(3000) * 2).realize()  # one kernel
dev.synchronize()
import gc
from tinygrad.runtime.ops_amd import AMDProgram
from mockgpu import bridge
(prg,) = [o for o in gc.get_objects() if isinstance(o, AMDProgram)]
(q,) = [q for q in bridge.machine().queues if type(q).__name__ in ("PM4Queue", "AQLQueue")]
regs = {k: v for k, v in q.xcc_regs[0].items() if v}
print("RESULT", json.dumps({"dispatches": seen, "aql": dev.is_aql, "scratch": dev.scratch.va_addr, "xccs": dev.xccs, "regs": regs,
                            "size_per_xcc": dev.scratch.size // dev.xccs, "prog": [prg.rsrc1, prg.rsrc2, prg.rsrc3, prg.prog_addr]}))
"""

@functools.cache
def compiles_for(arch:str) -> tuple[bool, str]:
  """Whether a tinygrad process with DEV naming arch compiles for it: the libLLVM toolchain.bind_llvm gives it (gfx950:
  a newer one than tinygrad's own choice)."""
  choice = toolchain.llvm_for(arch)
  return choice.lib is not None, choice.detail

def _recorded(arch:str, env:dict) -> dict:
  if not compiles_for(arch)[0]: pytest.skip(f"no LLVM here compiles for {arch} ({compiles_for(arch)[1]})")
  p = run_tinygrad(f"MOCKKFD+AMD:LLVM:{arch}", RECORD, env=env)
  return json.loads(p.stdout.split("RESULT ", 1)[1])

def test_tinygrad_aql_dispatch_reaches_the_executor_split_over_xccs(board):
  out = _recorded(board, {"MOCKGPU_AMD_BOARD": ""})
  assert out["aql"] == 1 and out["xccs"] == 8
  ds = out["dispatches"]
  assert len(ds) == 8 and all(d["arch"] == {"gfx942": "cdna3", "gfx950": "cdna4"}[board] and d["wave"] == 64 for d in ds)
  assert [d["xcc"] for d in ds] == [[x, 8, 1] for x in range(8)]
  assert [d["scratch"] for d in ds] == [out["scratch"] + x * out["size_per_xcc"] for x in range(8)]
  nwg = int(np.prod(ds[0]["grid"]))
  assert sorted(i for d in ds for i in d["ids"]) == list(range(nwg))
  assert all(d["rsrc"] == out["prog"][:3] and d["pgm"] == out["prog"][3] for d in ds)  # from the kernel descriptor, as tinygrad reads it

def test_tinygrad_pm4_queue_dispatch_runs_whole_on_xcc0(board):
  # AMD_AQL=0: tinygrad's PM4 path (per-XCC scratch bases under PRED_EXEC, wrapped in an IB); its queue targets XCC 0
  out = _recorded(board, {"MOCKGPU_AMD_BOARD": "", "AMD_AQL": "0"})
  (d,) = out["dispatches"]
  assert out["aql"] == 0 and d["xcc"] == [0, 1, 1] and d["scratch"] == out["scratch"] and len(d["ids"]) == int(np.prod(d["grid"]))
  # the registers as tinygrad's AMDComputeQueue.exec wrote them on XCC 0 (SET_SH_REG / SET_UCONFIG_REG, GC 9.4.3 names)
  r, (rsrc1, rsrc2, rsrc3, pgm) = out["regs"], out["prog"]
  assert (r["COMPUTE_PGM_RSRC1"], r["COMPUTE_PGM_RSRC2"], r["COMPUTE_PGM_RSRC3"]) == (rsrc1, rsrc2, rsrc3) and d["rsrc"] == [rsrc1, rsrc2, rsrc3]
  assert (r["COMPUTE_PGM_HI"] << 32 | r["COMPUTE_PGM_LO"]) << 8 == pgm == d["pgm"]
  assert r["COMPUTE_NUM_THREAD_X"] == d["block"][0] and r["COMPUTE_DISPATCH_SCRATCH_BASE_LO"] == (out["scratch"] >> 8) & 0xffffffff

def test_tinygrad_copies_through_sdma_and_its_kernel_runs_on_every_xcc(board):
  if not compiles_for(board)[0]: pytest.skip(f"no LLVM here compiles for {board} ({compiles_for(board)[1]})")
  p = run_tinygrad(f"MOCKKFD+AMD:LLVM:{board}", """
    import numpy as np
    from tinygrad import Tensor, Device
    x = np.arange(3 << 20, dtype=np.float32)  # 12 MiB: three 4 MiB SDMA 4.4 copies each way
    assert (Tensor(x).realize().numpy() == x).all()
    from mockgpu import bridge, system
    print("SDMA", sum(isinstance(q, __import__("mockgpu.emulators.sdma", fromlist=["x"]).SDMAQueue) for q in bridge.machine().queues))
    print("ADD", ((Tensor(x) + 1).numpy() == x + 1).all(), system.stats["cdna3.launches"] + system.stats["cdna4.launches"])""",
                   env={"MOCKGPU_AMD_BOARD": ""})
  assert "SDMA 1" in p.stdout, p.stdout + p.stderr[-3000:]
  assert "ADD True 8" in p.stdout, p.stdout[-3000:]  # one dispatch per XCC of the 8 (AQL: every XCC takes its share)
