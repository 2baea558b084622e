"""The pytest plugin: under pytest-xdist, a test that leaves a tinygrad device in a sticky error state ends its worker,
so it is the only red test of the run; the header; the `mockgpu` fixture."""
import os, re, subprocess, sys
import pytest

INNER = '''
import ctypes
import numpy as np
import pytest
from tinygrad import Tensor, Device

def op_ok():
  x = np.arange(64, dtype=np.float32)
  assert np.array_equal((Tensor(x) * 3 + 1).numpy(), x * 3 + 1)

def test_01_before(): op_ok()

def test_02_faults_the_device():
  from tinygrad.runtime.autogen import kfd
  from tinygrad.runtime.ops_amd import KFDIface
  dev = Device["AMD"]
  a = Tensor.ones(1024).contiguous().realize()
  buf = a.uop.buffer._buf
  ids = (ctypes.c_uint32 * 1)(dev.iface.gpu_id)
  kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU(KFDIface.kfd, handle=buf.meta.handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1)
  (a + 1).tolist()  # an MMU fault: AMD:0 is now in its sticky error state

@pytest.mark.parametrize("i", range(12))
def test_03_after(i): op_ok()

def test_06_fixture(mockgpu):
  op_ok()
  assert mockgpu.stats["rdna3.launches"] > 0 and mockgpu.sticky() == []
  assert len(mockgpu.system.devices["amd"]) == 6
'''

def run_inner(tmp_path, *args, workers=2):
  (tmp_path / "test_inner.py").write_text(INNER)
  env = {**os.environ, "DEV": "MOCK+AMD", "HCQDEV_WAIT_TIMEOUT_MS": "5000"}
  env.pop("MOCKGPU_COUNT", None)
  p = subprocess.run([sys.executable, "-m", "pytest", "-n", str(workers), "-p", "no:cacheprovider", "-rf", *args, "test_inner.py"],
                     cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
  red = sorted(set(re.findall(r"^(?:FAILED|ERROR) test_inner\.py::(\w+)", p.stdout, re.M)))
  return p, red

@pytest.mark.parametrize("workers", [1, 2])  # one worker: every later test would run where the device faulted
def test_a_faulting_test_is_the_only_red_one(tmp_path, workers):
  p, red = run_inner(tmp_path, workers=workers)
  assert red == ["test_02_faults_the_device"], p.stdout[-4000:]
  assert re.search(r"\b14 passed", p.stdout), p.stdout[-2000:]

def test_without_the_plugin_the_failure_spreads(tmp_path):
  # the control: with the worker kept, every later test of that worker inherits the sticky error
  p, red = run_inner(tmp_path, "--mockgpu-keep-worker", workers=1)
  assert "test_02_faults_the_device" in red and "test_03_after" in red, p.stdout[-4000:]

def test_header_names_dev_and_settings():
  from mockgpu.pytest_plugin import pytest_report_header
  old = dict(os.environ)
  try:
    os.environ.update(DEV="MOCK+NV", MOCKGPU_BUDGET="1234")
    h = pytest_report_header(None)
  finally:
    os.environ.clear(); os.environ.update(old)
  assert "DEV=MOCK+NV" in h and "MOCKGPU_BUDGET=1234" in h and "GPU(s) per vendor" in h
