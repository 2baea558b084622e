"""The RDNA3 instruction coverage report (tests/rdna_coverage.py) and its regression guard: every (backend, opcode)
recorded in rdna_coverage_baseline.txt must still be implemented. Regenerate the baseline after implementing more:
python tests/rdna_coverage.py --baseline"""
from __future__ import annotations
import rdna_coverage

def test_coverage_report_and_no_regression(capsys):
  rows = rdna_coverage.report()
  got = {k: r for k, r in rows.items() if r is not None}
  n_np, n_c = sum(a for a, _ in got.values()), sum(b for _, b in got.values())
  with capsys.disabled():
    print(f"\nRDNA3: {len(rows)} opcodes, {len(got)} probed, implemented numpy {n_np}, C {n_c}, "
          f"unimplemented on numpy {len(got) - n_np}")
  now = {f"{p} {enc} {name}" for (enc, name), r in got.items() for p, ok in zip(("numpy", "C"), r) if ok}
  with open(rdna_coverage.BASELINE) as f: base = {ln.strip() for ln in f if ln.strip()}
  lost = sorted(base - now)
  assert not lost, f"implemented before, unimplemented now: {lost}"

def test_probe_tells_apart():
  """The probe itself: a known implemented op counts as such, a known missing one does not."""
  rows = rdna_coverage.report()
  assert rows[("VOP2", "V_ADD_F32_E32")] == (True, True)
  assert rows[("SOP1", "S_QUADMASK_B32")] == (True, True)
  assert rows[("MIMG", "IMAGE_LOAD")] == (False, False)
