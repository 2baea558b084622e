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
