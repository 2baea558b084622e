"""The NVIDIA command processor in-process: GPFIFO entries, method headers, host semaphores, the copy class, QMD decoding."""
import struct, time
import numpy as np
import pytest
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu.errors import PacketError, GPUPageFault, UnsupportedInstruction
from mockgpu.emulators.nv_gpu import QMD, qmd_fields
from mockgpu.emulators.gpfifo import acquired, GP_GET
from support.nv_gpfifo import DATA, FakePTX, IMMD, INC, NON_INC, ONE_INC, PTX_TEXT, Rig, VA, copy_methods, encode_qmd, hdr, nvm, sem

PITCH = (1 << 7) | (1 << 8)  # src and dst pitch layout

def test_release_64bit_with_timestamp():
  r = Rig()
  before = time.perf_counter_ns()
  r.submit(sem(VA + DATA, 0x1_2345_6789, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE, timestamp=True))
  assert r.u64(DATA) == 0x1_2345_6789
  assert before <= r.u64(DATA + 8) <= time.perf_counter_ns()
  assert r.userd[GP_GET // 4] == 1

def test_release_32bit_writes_one_word():
  r = Rig()
  r.mem[DATA:DATA+8] = 0xee
  r.submit(sem(VA + DATA, 0xabcdef01_22334455, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE, wide=False))
  assert r.u32(DATA) == 0x22334455 and r.u32(DATA + 4) == 0xeeeeeeee and r.u64(DATA + 8) == 0

def test_acquire_blocks_then_resumes():
  r = Rig()
  r.submit(sem(VA + DATA, 7, nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ) + sem(VA + DATA + 16, 9, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE))
  assert r.progress and r.u64(DATA + 16) == 0 and r.userd[GP_GET // 4] == 0
  assert not r.ch.step()  # still blocked: no progress, so the scheduler can move on
  r.mem[DATA:DATA+8] = np.array([7], np.uint64).view(np.uint8)
  assert r.ch.step()
  assert r.u64(DATA + 16) == 9 and r.userd[GP_GET // 4] == 1

@pytest.mark.parametrize("op,value,payload,bits,expect", [
  (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE, 5, 5, 32, True), (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE, 6, 5, 32, False),
  (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ, 0xffffffff, 1, 32, True), (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ, 0, 1, 32, False),
  (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, 1, 0xffffffff, 32, True),   # wrapped past the payload
  (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, 0xffffffff, 1, 32, False),
  (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, 1 << 40, (1 << 40) - 1, 64, True),
  (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND, 0b1010, 0b0010, 32, True), (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND, 0b1000, 0b0010, 32, False),
  (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR, 0xfffffff0, 0x0000000f, 32, False), (nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR, 0xfffffff0, 0x7, 32, True),
])
def test_acquire_operations(op, value, payload, bits, expect):
  assert acquired(op, value, payload, bits) is expect

def test_header_forms():
  r = Rig()
  r.submit(nvm(4, nv.NVC56F_SET_OBJECT, nv.AMPERE_DMA_COPY_B) +
           [hdr(IMMD, 0x123, 4, nv.NVC6B5_LINE_LENGTH_IN)] +
           [hdr(NON_INC, 3, 4, nv.NVC6B5_LINE_COUNT), 1, 2, 3] +
           [hdr(ONE_INC, 3, 4, nv.NVC6B5_OFFSET_IN_UPPER), 0x11, 0x22, 0x33] + [0])  # a zero word is a no-op
  regs = r.ch.objects[nv.AMPERE_DMA_COPY_B].regs
  assert regs[nv.NVC6B5_LINE_LENGTH_IN] == 0x123 and regs[nv.NVC6B5_LINE_COUNT] == 3
  assert regs[nv.NVC6B5_OFFSET_IN_UPPER] == 0x11 and regs[nv.NVC6B5_OFFSET_IN_LOWER] == 0x33
  assert r.userd[GP_GET // 4] == 1

def test_unknown_method_is_skipped_and_raised_at_the_end_of_its_entry():
  r = Rig()
  addr = VA + r.pb
  with pytest.raises(PacketError, match=r"unknown method 0x1234 for class ADA_COMPUTE_A \(0xc9c0\)") as e:
    r.submit(nvm(1, nv.NVC56F_SET_OBJECT, nv.ADA_COMPUTE_A) + nvm(1, 0x1234, 0) + sem(VA + DATA, 5, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE))
  assert f"pushbuffer 0x{addr + 8:x}" in str(e.value)
  assert r.u64(DATA) == 5 and r.userd[GP_GET // 4] == 1  # the release after the bad method still ran

def test_undecodable_header_skips_the_rest_of_its_entry():
  r = Rig()
  with pytest.raises(PacketError, match="SEC_OP 6"): r.submit([6 << 29] + sem(VA + DATA, 5, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE))
  assert r.u64(DATA) == 0 and r.userd[GP_GET // 4] == 1

def test_failed_submission_rewinds_to_the_slot_the_runtime_rewrites():
  r = Rig()
  with pytest.raises(PacketError): r.submit(nvm(0, 0x44, 0))
  r.ch.submission_failed()  # what the doorbell does when the error propagates to the runtime
  assert r.userd[GP_GET // 4] == 0 and not r.ch.step()  # held until the doorbell rings again
  r.entry(sem(VA + DATA, 6, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE), slot=0)  # the runtime rewrites the slot, GP_PUT stays 1
  r.ch.doorbell()
  assert r.ch.step() and r.u64(DATA) == 6 and r.userd[GP_GET // 4] == 1

@pytest.mark.parametrize("words,match", [
  (nvm(4, nv.NVC6B5_LAUNCH_DMA, 0), "subchannel 4, which has no object"),
  ([6 << 29], r"unsupported opcode \(SEC_OP 6\)"),
  ([hdr(INC, 5, 0, nv.NVC56F_SEM_ADDR_LO), 1, 2], "runs past the segment end"),
  (nvm(0, 0x44, 0), "unknown host method 0x44 for class AMPERE_CHANNEL_GPFIFO_A"),
  (nvm(0, nv.NVC56F_SET_OBJECT, nv.BLACKWELL_COMPUTE_B), "SET_OBJECT BLACKWELL_COMPUTE_B .* no such object"),
])
def test_malformed_pushbuffers(words, match):
  with pytest.raises(PacketError, match=match): Rig().submit(words)

def test_copy_and_four_word_semaphore():
  r = Rig()
  src = np.random.default_rng(0).integers(0, 256, 300, dtype=np.uint8)
  r.mem[DATA:DATA+300] = src
  flags = 2 | PITCH | (nv.NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE << 3)
  r.mem[DATA + 0x800:DATA + 0x808] = 0xff
  r.submit(nvm(4, nv.NVC56F_SET_OBJECT, nv.AMPERE_DMA_COPY_B) + nvm(4, nv.NVC6B5_SET_SEMAPHORE_A, 0x10, DATA + 0x800, 42) +
           copy_methods(VA + DATA, VA + DATA + 0x400, 300, flags))
  np.testing.assert_array_equal(r.mem[DATA + 0x400:DATA + 0x400 + 300], src)
  assert r.u64(DATA + 0x800) == 42 and r.u64(DATA + 0x808) > 0  # the payload's upper word is cleared; then the timestamp

def test_copy_fault_stops_the_channel_group():
  r = Rig()
  bad = 0x20_0000_0000
  r.submit(nvm(4, nv.NVC56F_SET_OBJECT, nv.AMPERE_DMA_COPY_B) + copy_methods(bad, VA + DATA, 64, 2 | PITCH) +
           sem(VA + DATA + 0x100, 1, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE))
  f = r.gpu.faults[0]
  assert (f.address, f.access_type, f.fault_type) == (bad, nv.NV_PFAULT_ACCESS_TYPE_VIRT_READ, nv.NV_PFAULT_FAULT_TYPE_PTE)
  assert r.u64(DATA + 0x100) == 0  # nothing after the fault ran
  assert int(r.notifier[8:12].view(np.uint32)[0]) == 31 and int(r.notifier[12:14].view(np.uint16)[0]) == 3
  r.ch.doorbell()
  assert not r.ch.step()

def test_block_linear_copy_is_not_modelled():
  with pytest.raises(NotImplementedError, match="block-linear"):
    Rig().submit(nvm(4, nv.NVC56F_SET_OBJECT, nv.AMPERE_DMA_COPY_B) + copy_methods(VA + DATA, VA + DATA + 64, 64, 2))

@pytest.mark.parametrize("model", ["sm_89", "sm_120"])
def test_qmd_decoding(model):
  """Encode a QMD with the autogen field table, as tinygrad does, and read it back through the model."""
  cls = {"sm_89": nv.ADA_COMPUTE_A, "sm_120": nv.BLACKWELL_COMPUTE_B}[model]
  v5 = cls >= nv.BLACKWELL_COMPUTE_A
  fields = qmd_fields("NVCEC0_QMDV05_00" if v5 else "NVC6C0_QMDV03_00")
  prog, cbuf = 0x12_3456_7800, 0x10_0000_4000
  vals = {"qmd_major_version": 5 if v5 else 3, "cta_thread_dimension0": 32, "cta_thread_dimension1": 4, "cta_thread_dimension2": 2,
          "release0_enable": 1, "dependent_qmd0_enable": 0}
  if v5: vals |= {"grid_width": 100, "grid_height": 3, "grid_depth": 1, "program_address_upper_shifted4": (prog >> 4) >> 32,
                  "program_address_lower_shifted4": (prog >> 4) & 0xffffffff, "constant_buffer_addr_upper_shifted6_0": (cbuf >> 6) >> 32,
                  "constant_buffer_addr_lower_shifted6_0": (cbuf >> 6) & 0xffffffff, "release_semaphore0_addr_lower": 0x5000,
                  "release_semaphore0_addr_upper": 0x10, "release_semaphore0_payload_lower": 77, "release_payload64b_0": 1}
  else: vals |= {"cta_raster_width": 100, "cta_raster_height": 3, "cta_raster_depth": 1, "program_address_upper": prog >> 32,
                 "program_address_lower": prog & 0xffffffff, "constant_buffer_addr_upper_0": cbuf >> 32,
                 "constant_buffer_addr_lower_0": cbuf & 0xffffffff,
                 "release0_address_lower": 0x5000, "release0_address_upper": 0x10, "release0_payload_lower": 77, "release0_payload64b": 1}
  bits = 0
  for k, v in vals.items():
    hi, lo = fields[k.upper()]
    assert v < (1 << (hi - lo + 1))
    bits |= v << lo
  r = Rig(model)
  r.mem[DATA:DATA + 0x180] = np.frombuffer(bits.to_bytes(0x180, "little"), np.uint8)
  q = QMD(r.gpu.mem, VA + DATA, r.gpu.board, "test")
  assert (q.program(), q.cbuf(0), q.grid(), q.block()) == (prog, cbuf, (100, 3, 1), (32, 4, 2))
  assert list(q.releases()) == [(0x10_0000_5000, 77, 0, 1, 0)] and q.dependent() is None

def test_qmd_version_mismatch():
  r = Rig()
  with pytest.raises(PacketError, match="major version 0, class ADA_COMPUTE_A takes 3"): QMD(r.gpu.mem, VA + DATA, r.gpu.board, "test")

def qmd_rig(monkeypatch, fake):
  r = fake.rig = Rig(executor=fake)
  prog, cbuf, qmd0, qmd1 = DATA, DATA + 0x1000, DATA + 0x2000, DATA + 0x2100
  r.mem[prog:prog + len(PTX_TEXT)] = np.frombuffer(PTX_TEXT, np.uint8)
  r.mem[cbuf + 320:cbuf + 328] = np.array([2, 1], np.uint32).view(np.uint8)
  r.mem[cbuf + 0x160:cbuf + 0x178] = np.array([0x1111, 0x2222, 0xffff_ffff_0000_0007], np.uint64).view(np.uint8)
  common = {"program_address_upper": (VA + prog) >> 32, "program_address_lower": (VA + prog) & 0xffffffff,
            "constant_buffer_addr_upper_0": (VA + cbuf) >> 32,
            "constant_buffer_addr_lower_0": (VA + cbuf) & 0xffffffff, "constant_buffer_size_shifted4_0": 0x160, "cta_thread_dimension0": 8,
            "cta_thread_dimension1": 1, "cta_thread_dimension2": 1, "cta_raster_height": 1, "cta_raster_depth": 1}
  q0 = encode_qmd({**common, "cta_raster_width": 5, "dependent_qmd0_enable": 1, "dependent_qmd0_action": 1,
                   "dependent_qmd0_pointer": (VA + qmd1) >> 8})
  q1 = encode_qmd({**common, "cta_raster_width": 6, "release0_enable": 1, "release0_address_upper": (VA + DATA + 0x3000) >> 32,
                   "release0_address_lower": (VA + DATA + 0x3000) & 0xffffffff, "release0_payload_lower": 55})
  r.mem[qmd0:qmd0 + 0x100], r.mem[qmd1:qmd1 + 0x100] = np.frombuffer(q0, np.uint8), np.frombuffer(q1, np.uint8)
  r.submit(nvm(1, nv.NVC6C0_SET_OBJECT, nv.ADA_COMPUTE_A) + nvm(1, nv.NVC6C0_SEND_PCAS_A, (VA + qmd0) >> 8) +
           nvm(1, nv.NVC6C0_SEND_SIGNALING_PCAS2_B, nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE))
  return r

def test_qmd_chain_launches_with_packed_params(monkeypatch):
  fake = FakePTX()
  r = qmd_rig(monkeypatch, fake)
  assert fake.text == PTX_TEXT[:-1].decode()
  params = struct.pack("<QQI", 0x1111, 0x2222, 7)  # each 8-byte slot packed to the parameter's size and offset
  # the program is parsed at its first launch; the second finds it by address, its text unchanged in memory
  assert fake.launches == ["E_3", ((5, 1, 1), (8, 1, 1), params, 0), ((6, 1, 1), (8, 1, 1), params, 0)]
  assert r.u64(DATA + 0x3000) == 55 and r.u64(DATA + 0x3008) > 0  # the second QMD's four-word release, after both launches

def test_rewritten_program_is_parsed_again(monkeypatch):
  from mockgpu.emulators.nv_gpu import program_kernel
  fake = FakePTX()
  r = qmd_rig(monkeypatch, fake)
  program_kernel(r.gpu, VA + DATA, "test")
  assert fake.launches.count("E_3") == 1
  r.mem[DATA:DATA + len(PTX_TEXT)] = np.frombuffer(PTX_TEXT.replace(b"E_3", b"E_4"), np.uint8)
  program_kernel(r.gpu, VA + DATA, "test")
  assert fake.launches[-1] == "E_4" and fake.text.count("E_4") == 1

def test_fault_in_a_launch_is_a_channel_error(monkeypatch):
  r = qmd_rig(monkeypatch, FakePTX(fault=GPUPageFault(0x4242_0000, 4, True, "st.global")))
  assert [(f.address, f.access_type) for f in r.gpu.faults] == [(0x4242_0000, nv.NV_PFAULT_ACCESS_TYPE_VIRT_WRITE)]
  assert r.group.error is not None and r.u64(DATA + 0x3000) == 0

def test_kernel_the_executor_rejects_still_releases_its_semaphores(monkeypatch):
  fake = FakePTX(fault=UnsupportedInstruction("tex.2d at line 9"))
  with pytest.raises(UnsupportedInstruction, match="tex.2d"): qmd_rig(monkeypatch, fake)
  assert len(fake.launches) == 3  # the program parsed once, both QMDs of the chain tried
  r = fake.rig
  assert r.u64(DATA + 0x3000) == 55 and r.userd[GP_GET // 4] == 1 and r.group.error is None

def test_the_name_index_read_back_from_disk_is_the_one_built(tmp_path, monkeypatch):
  """nv_gpu.names() (class, control, escape, UVM names and the QMD layouts, one pass over nv_570) is kept on disk: what
  a second process reads back is what the pass builds, a torn or foreign value is built again, and a layout outside
  the index is a KeyError naming the ones it has."""
  from mockgpu.compiler import cache
  from mockgpu.emulators import nv_gpu
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path))
  monkeypatch.setattr(cache, "_values", {})
  built = nv_gpu._index()
  nv_gpu.names.cache_clear()
  assert nv_gpu.names() == built and list(tmp_path.rglob("*.marshal"))   # built, then stored
  monkeypatch.setattr(cache, "_values", {})
  nv_gpu.names.cache_clear()
  assert nv_gpu.names() == built   # read back
  assert built["class"][nv.AMPERE_COMPUTE_B] == "AMPERE_COMPUTE_B" and built["escape"][nv.NV_ESC_RM_ALLOC] == "NV_ESC_RM_ALLOC"
  for f in tmp_path.rglob("*.marshal"): f.write_bytes(b"\x00torn")
  monkeypatch.setattr(cache, "_values", {})
  nv_gpu.names.cache_clear()
  assert nv_gpu.names() == built
  with pytest.raises(KeyError, match="NVC6C0_QMDV03_00"): qmd_fields("NVC7C0_QMDV04_00")
  nv_gpu.names.cache_clear()
