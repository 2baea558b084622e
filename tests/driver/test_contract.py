"""tinygrad's in-tree mock contract, which its suites assume: 6 GPUs per vendor when nothing is set (4-device sharding
runs with no MOCKGPU_COUNT), MOCKGPU_COUNT overriding it, and MOCKGPU_EMU_FAULTADDR carried by the fault report."""
import os
import pytest
from conftest import run_tinygrad
from mockgpu import config

SHARD = """
import numpy as np
from tinygrad import Tensor, Device
ds = tuple(f"{Device.DEFAULT}:{i}" for i in range(4))
x = np.arange(64, dtype=np.float32).reshape(16, 4)
t = Tensor(x).shard(ds, axis=0)
y = (t * 2 + 1).sum(axis=1)
assert len(y.device) == 4, y.device
got = y.numpy()
assert got.tobytes() == (x * 2 + 1).sum(axis=1).tobytes(), (got, (x * 2 + 1).sum(axis=1))
print("OK", len(ds))
"""

def test_default_count_is_six(monkeypatch):
  monkeypatch.delenv("MOCKGPU_COUNT", raising=False)
  assert config.gpu_count() == 6
  monkeypatch.setenv("MOCKGPU_COUNT", "2")
  assert config.gpu_count() == 2

@pytest.mark.parametrize("dev", ["MOCK+AMD", "MOCKKFD+AMD", "MOCK+NV", "MOCK+CUDA"])
def test_four_device_shard_without_count(dev):
  env = {k: v for k, v in os.environ.items() if k != "MOCKGPU_COUNT"}
  p = run_tinygrad(dev, f"import os\nos.environ.pop('MOCKGPU_COUNT', None)\n{SHARD}", env=env)
  assert "OK 4" in p.stdout

def test_six_amd_devices_open_and_seventh_does_not():
  p = run_tinygrad("MOCK+AMD", """
  import os; os.environ.pop("MOCKGPU_COUNT", None)
  from tinygrad import Device, Tensor
  for i in range(6): assert Tensor([i], device=f"AMD:{i}").add(1).tolist() == [i + 1]
  try: Device["AMD:6"]
  except RuntimeError as e: print("NO7", e)
  """)
  assert "NO7 No device found for 6" in p.stdout, p.stdout

def test_count_override():
  p = run_tinygrad("MOCK+AMD", """
  from tinygrad import Device
  try: Device["AMD:2"]
  except RuntimeError as e: print("NO3")
  """, env={"MOCKGPU_COUNT": "2"})
  assert "NO3" in p.stdout

def test_emu_faultaddr_in_on_device_hang():
  p = run_tinygrad("MOCKKFD+AMD", """
  from tinygrad import Device, Tensor
  assert Tensor([1., 2.]).add(1).tolist() == [2., 3.]
  try: Device["AMD"].on_device_hang()
  except RuntimeError as e: print("ERR", e)
  """, env={"MOCKGPU_EMU_FAULTADDR": "0xDEADBEE1"})
  assert "ERR" in p.stdout and "0xDEADBEE1" in p.stdout, p.stdout

def test_emu_faultaddr_on_a_real_fault():
  # a kernel reading a buffer the GPU no longer maps: the report carries the configured address, not the faulting page
  p = run_tinygrad("MOCK+AMD", """
  import ctypes
  from tinygrad import Device, Tensor
  from tinygrad.runtime.autogen import kfd
  from tinygrad.runtime.ops_amd import KFDIface
  dev = Device["AMD:0"]
  a = Tensor.ones(1024).contiguous().realize()
  buf = a.uop.buffer._buf
  ids = (ctypes.c_uint32 * 1)(dev.iface.gpu_id)
  kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU(KFDIface.kfd, handle=buf.meta.handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1)
  print("VA", f"0x{buf.va_addr:X}")
  try: (a + 1).tolist()
  except RuntimeError as e: print("ERR", e)
  """, env={"MOCKGPU_EMU_FAULTADDR": "0x1234567", "HCQDEV_WAIT_TIMEOUT_MS": "5000"})
  err = next(l for l in p.stdout.splitlines() if l.startswith("ERR "))
  assert "MMU fault: 0x1234567 " in err, p.stdout

def test_emu_faultaddr_unset_reports_nothing():
  p = run_tinygrad("MOCKKFD+AMD", """
  from tinygrad import Device, Tensor
  assert Tensor([1., 2.]).add(1).tolist() == [2., 3.]
  try: Device["AMD"].on_device_hang()
  except RuntimeError as e: print("ERR", e)
  """, env={"MOCKGPU_EMU_FAULTADDR": ""})
  assert "ERR" in p.stdout and "MMU fault" not in p.stdout, p.stdout

def test_emu_faultaddr_is_reported_while_set_and_never_latched():
  """Set, used (on_device_hang), unset: later waits on the same device see no fault, and the KFD memory event is not
  left signalled (tinygrad's HCQ tests test_wait_late_set/test_wait_update failed after such a test). Set again: reported again."""
  p = run_tinygrad("MOCKKFD+AMD", """
  import os
  from tinygrad import Device, Tensor
  dev = Device["AMD"]
  assert Tensor([1., 2.]).add(1).tolist() == [2., 3.]
  os.environ["MOCKGPU_EMU_FAULTADDR"] = "0xDEADBEE1"
  try: dev.on_device_hang()
  except RuntimeError as e: print("ERR1", str(e).splitlines()[0])
  del os.environ["MOCKGPU_EMU_FAULTADDR"]
  dev.iface.sleep(1)   # a wait: raises (on_device_hang) if it reports a fault
  print("GPUID", dev.iface.queue_event_arr[1].memory_exception_data.gpu_id)
  import gc
  drv = next(o for o in gc.get_objects() if type(o).__name__ == "KFD" and type(o).__module__ == "mockgpu.driver.kfd")
  print("SIGNALLED", [e.type for e in drv.events.values() if e.signaled and not e.is_signal])
  sig = dev.new_signal(value=0)
  try: sig.wait(1, timeout=200)
  except RuntimeError as e: print("WAIT", e)
  assert Tensor([3., 4.]).add(1).tolist() == [4., 5.]
  os.environ["MOCKGPU_EMU_FAULTADDR"] = "0x1234"
  try: dev.on_device_hang()
  except RuntimeError as e: print("ERR2", str(e).splitlines()[0])
  """, env={"MOCKGPU_EMU_FAULTADDR": ""})
  out = p.stdout
  assert "ERR1 MMU fault: 0xDEADBEE1 " in out and "GPUID 0" in out and "SIGNALLED []" in out, out
  assert "WAIT Wait timeout" in out and "ERR2 MMU fault: 0x1234 " in out, out
