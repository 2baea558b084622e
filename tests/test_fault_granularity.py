"""Faults come where hardware's come: at the granularity the driver maps memory, not at a buffer's exact end.

A read a little past a buffer but inside its last mapped page is allowed on hardware (CUDA, KFD and NVIDIA all map
whole pages), so the mock must not fault on it; one outside every mapped page still faults. MOCKGPU_SANITIZE=memory
reports the in-page overrun without faulting."""
import ctypes, logging, math
import numpy as np
import pytest
from conftest import run_tinygrad
from mockgpu.errors import GPUPageFault
from mockgpu.memory import AddressSpace

SHRINK = """
  from tinygrad import Tensor, Variable
  print("RESULT", Tensor.ones(3).contiguous()[:Variable("a", 1, 10).bind(5)].sum().item())
"""
DEVS = ["MOCK+AMD", "MOCK+NV", "MOCK+NV:PTX", "MOCK+CUDA", "MOCK+CUDA:PTX"]

def _result(p): return float(next(l for l in p.stdout.splitlines() if l.startswith("RESULT")).split()[1])

@pytest.fixture(scope="module")
def cpu_value(): return _result(run_tinygrad("CPU", SHRINK))

@pytest.mark.parametrize("path", ["numpy", "native"])
@pytest.mark.parametrize("dev", DEVS)
def test_symbolic_shrink_past_buffer_reads_its_page(dev, path, cpu_value):
  """Two elements past a 3-element buffer: in its page, so no fault. The page's slack is zero in a fresh process (as
  the CPU's is here), so the sum matches DEV=CPU's."""
  flag = "0" if path == "numpy" else "1"
  p = run_tinygrad(dev, SHRINK, env={"MOCKGPU_PTX_NATIVE": flag, "MOCKGPU_RDNA_NATIVE": flag})
  v = _result(p)
  assert math.isfinite(v) and v == cpu_value == 3.0

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_read_past_every_page_still_faults(path):
  p = run_tinygrad("MOCK+CUDA", """
    from tinygrad import Tensor, Device
    from tinygrad.device import TinyELF
    from tinygrad.runtime.ops_cuda import CUDAProgram
    dev = Device["CUDA"]
    buf = Tensor.zeros(16, dtype="int32").contiguous().realize()
    near = dev.compiler.compile('extern "C" __global__ void near(int* a) { a[0] = a[20] + 1; }')   # past 64 bytes, in the page
    CUDAProgram(dev, TinyELF(near, "near", None, ()))(buf.uop.buffer._buf)
    dev.synchronize()
    print("near ok", buf.tolist()[0])
    far = dev.compiler.compile('extern "C" __global__ void far(int* a) { a[0] = a[1 << 28]; }')
    CUDAProgram(dev, TinyELF(far, "far", None, ()))(buf.uop.buffer._buf)
    try: dev.synchronize()
    except RuntimeError as e: print(e)
  """, env={"MOCKGPU_PTX_NATIVE": "0" if path == "numpy" else "1"})
  assert p.stdout.splitlines() == ["near ok 1", "CUDA Error 700, an illegal memory access was encountered"], p.stdout
  assert "GPU page fault: read of 4 bytes" in p.stderr

def test_sanitizer_reports_the_overrun():
  p = run_tinygrad("MOCK+CUDA:PTX", SHRINK + """
  from test.mockgpu.cuda import cuda as mc
  reps = mc._drv.devices[0].mem.sanitizer_reports
  print("REPORTS", len(reps), reps[0].size, reps[0].offset, reps[0].base == reps[0].va - reps[0].offset, reps[0].write)
  """, env={"MOCKGPU_SANITIZE": "memory", "MOCKGPU_PTX_NATIVE": "0"})
  assert _result(p) == 3.0
  rep = next(l for l in p.stdout.splitlines() if l.startswith("REPORTS")).split()
  assert int(rep[1]) >= 1 and rep[2:] == ["12", "12", "True", "False"], rep   # the first element past the 12-byte buffer
  assert "MOCKGPU_SANITIZE=memory" in p.stderr and "of the buffer at 0x" in p.stderr and "of 0xc bytes" in p.stderr

def test_no_reports_without_the_sanitizer():
  p = run_tinygrad("MOCK+CUDA:PTX", SHRINK + """
  from test.mockgpu.cuda import cuda as mc
  print("REPORTS", len(mc._drv.devices[0].mem.sanitizer_reports))
  """, env={"MOCKGPU_PTX_NATIVE": "0", "MOCKGPU_SANITIZE": ""})
  assert "REPORTS 0" in p.stdout and "MOCKGPU_SANITIZE" not in p.stderr

# *** AddressSpace itself ***

@pytest.fixture
def paged():
  host = (ctypes.c_uint8 * 8192)()
  s = AddressSpace("paged")
  s.map(0x10000, 12, host=ctypes.addressof(host), granularity=4096)
  return s, host

def test_extent_is_rounded_to_the_granularity(paged):
  s, _ = paged
  m = s.mappings()[0]
  assert (m.size, m.exact) == (4096, 12) and s.table()[0, 1] == 4096   # the C paths read the extent from the table
  assert s.load(np.array([0x10000 + 12, 0x10000 + 4092], np.uint64), np.uint32).tolist() == [0, 0]
  s.store(np.array([0x10000 + 16], np.uint64), np.array([7], np.uint32))
  assert s.read_u32(0x10000 + 16) == 7
  for va in (0x10000 + 4093, 0x10000 + 4096, 0xffff):
    with pytest.raises(GPUPageFault): s.load(np.array([0x10000, va], np.uint64), np.uint32)
  with pytest.raises(GPUPageFault): s.read(0x10000 + 4090, 8)

def test_exact_mapping_without_granularity_faults_at_its_end():
  b = np.zeros(12, np.uint8)
  s = AddressSpace()
  s.map(b.ctypes.data, 12)
  with pytest.raises(GPUPageFault): s.load(np.array([b.ctypes.data + 12], np.uint64), np.uint8)

@pytest.mark.parametrize("va", [2**64 - 4, 2**64 - 1, 2**64 - 2])
def test_address_near_2_64_faults_instead_of_wrapping(paged, va):
  s, _ = paged
  with pytest.raises(GPUPageFault):
    s.load(np.array([0x10000, va], np.uint64), np.uint32)
  with pytest.raises(GPUPageFault):
    s.store(np.array([va], np.uint64), np.array([1], np.uint32))
  big = AddressSpace()  # a mapping whose wrapped end (va + n mod 2**64) would look in range
  big.map(0, 2**20, host=ctypes.addressof(paged[1]), granularity=1)
  with pytest.raises(GPUPageFault): big.load(np.array([va], np.uint64), np.uint32)

def test_empty_space_faults():
  with pytest.raises(GPUPageFault): AddressSpace().load(np.array([0x1000], np.uint64), np.uint32)

def test_sanitizer_records_and_warns(paged, monkeypatch, caplog):
  s, _ = paged
  s.load(np.array([0x10000 + 12], np.uint64), np.uint32)
  assert s.sanitizer_reports == []   # off by default
  monkeypatch.setenv("MOCKGPU_SANITIZE", "memory")
  with caplog.at_level(logging.WARNING, logger="mockgpu"):
    s.load(np.array([0x10000, 0x10000 + 8], np.uint64), np.uint32)   # in bounds: nothing
    s.load(np.array([0x10000, 0x10000 + 10, 0x10000 + 40], np.uint64), np.uint16)   # the first lane past it is reported
    s.write_u32(0x10000 + 100, 5)
  r, w = s.sanitizer_reports
  assert (r.base, r.size, r.offset, r.nbytes, r.write) == (0x10000, 12, 40, 2, False)
  assert (w.base, w.size, w.offset, w.nbytes, w.write) == (0x10000, 12, 100, 4, True)
  assert len([x for x in caplog.records if "MOCKGPU_SANITIZE=memory" in x.getMessage()]) == 2
  assert "offset 0x28 of the buffer at 0x10000 of 0xc bytes" in caplog.records[0].getMessage()
