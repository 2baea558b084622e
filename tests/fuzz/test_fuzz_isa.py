"""The ISA fuzz surfaces (surface_rdna, surface_ptx) through the harness: every case ends ok or in a named error.

CI runs 2,000 cases of each (about 60 s on 2 cores); MOCKGPU_FUZZ=N multiplies the counts (the long tier: 20)."""
import os, sys
import pytest
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, scale

@pytest.mark.parametrize("surface", ["surface_rdna", "surface_ptx"])
def test_isa_surface(surface):
  report = run(surface, n=2000 * scale(), seed=int(os.environ.get("MOCKGPU_FUZZ_SEED", "0")), jobs=2)
  print(report.line(), dict(report.named))
  assert report.clean(), report.summary()
  # the cases exercise the executors, not only their decoders: some run to the end, some fault
  assert report.counts["ok"] > report.total() // 10 and report.named["GPUPageFault"] > 0, report.line()
