"""The driver/device-model fuzz tier: every surface's cases in child workers; no crash, hang, generic exception,
internal error (EmulatorBug) or broken known-good op (run after every case that did not end ok). The CUDA surface's
calls include mistyped pointers (out-parameters pointing to objects of another type or size, small ctypes buffers).
CI runs CASES per surface (about 7,000 in all); MOCKGPU_FUZZ=N runs N times as many
(`tox -e fuzz` runs MOCKGPU_FUZZ=20), with a seed of its own per run (MOCKGPU_FUZZ_SEED, default 0)."""
import os, sys
import pytest
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, scale

CASES = {"surface_kfd": 1200, "surface_rm": 1200, "surface_cuda": 1200, "surface_pm4": 1000, "surface_sdma": 800, "surface_aql": 600,
         "surface_gpfifo": 1000}

@pytest.mark.parametrize("surface", sorted(CASES))
def test_fuzz_surface(surface):
  n = CASES[surface] * scale()
  report = run(surface, n, seed=int(os.environ.get("MOCKGPU_FUZZ_SEED", "0")), jobs=int(os.environ.get("MOCKGPU_FUZZ_JOBS", "1")))
  print(report.line(), dict(report.named.most_common(8)))
  assert report.total() == n
  assert report.clean(), report.summary()
  assert report.counts["ok"] > 0 and report.counts["named"] > 0  # both valid and hostile cases reached the model

def test_emulator_bug_is_a_bug_on_every_surface():
  """An EmulatorBug is a MockGPUError, but mockgpu naming a bug of its own: outcome internal, which a clean run has none of."""
  from harness import classify, Report
  from mockgpu.errors import EmulatorBug, GPUPageFault
  assert classify(EmulatorBug("IndexError in the executor")) == "internal"
  assert classify(GPUPageFault(0x1000, 4, False)) == "named" and classify(IndexError("x")) == "generic"
  r = Report("x")
  r.counts["internal"] += 1
  assert not r.clean() and "internal 1" in r.line()

def test_kfd_surface_user_arrays_end_at_an_inaccessible_page(monkeypatch):
  """The kfd surface's user pointers that cases copy past the end of (buf_end, 8 bytes before the end of a buffer; the
  guarded events and ids arrays) end at an inaccessible page, so such a copy is EFAULT, never a write into the worker's
  own memory. buf_end used to end at whatever the host's mmap had put above the buffer: in some layouts a live heap
  arena, which a DRM_IOCTL_AMDGPU_INFO of 0x100 bytes at buf_end overwrote (as the kernel's copy_to_user would), and
  the worker died of SIGSEGV a few cases later, on whichever case then ran (an events mmap, in the run that found it)."""
  import ctypes, errno
  import machines, surface_kfd
  from tinygrad.runtime.autogen import amdgpu_drm, kfd
  from mockgpu.driver.uaccess import copy_from_user
  monkeypatch.setattr(machines, "current", None)
  monkeypatch.setenv("MOCKGPU_COUNT", "2")
  surface_kfd.setup()
  for name, length in (("buf_end", 8), ("events", ctypes.sizeof(kfd.struct_kfd_event_data)), ("ids", 4)):
    with pytest.raises(OSError) as e: copy_from_user(surface_kfd._resolve(name, 8) + length, 1, f"past {name}")
    assert e.value.errno == errno.EFAULT
  with pytest.raises(OSError, match="AMDGPU_INFO return_pointer") as e:
    surface_kfd.execute({"kind": "drm", "query": amdgpu_drm.AMDGPU_INFO_DEV_INFO, "return_pointer": "buf_end", "return_size": 0x100})
  assert e.value.errno == errno.EFAULT
  assert surface_kfd.known_good()
