"""RDNA3 conformance with the ISA manual's pseudocode (tests/pcode): every implemented instruction of tinygrad's
SOP1/SOP2/SOPC/SOPK/VOP1/VOP2/VOPC/VOP3/VOP3SD/VOP3P tables, on the numpy and the native (C) path, against an
independent evaluation of its pseudocode, over special and random operands, every operand kind and three EXEC
patterns. A family's test fails on a mismatch that tests/pcode/expected_mismatches.txt does not list, and on a listed
one that now conforms. MOCKGPU_CONFORMANCE=full runs the larger tier (more waves, every operand kind at every
source). `python tests/conformance_report.py` prints the table."""
from __future__ import annotations
import os
import pytest
from mockgpu import system
from pcode import harness as H, expected, readings, interp

FULL = os.environ.get("MOCKGPU_CONFORMANCE", "") == "full"

@pytest.fixture(scope="module")
def listed(): return expected.load()

@pytest.mark.parametrize("family", H.FAMILIES)
def test_family_conforms_on_both_paths(family, listed):
  before = system.stats["rdna3.native_launches"]
  run = H.run_family(family, full=FULL)
  names = {i.name for i in H.infos(family)}
  problems = expected.problems(run.results, listed, names)
  assert not problems, f"{family}: {len(problems)} differences from the expected list:\n" + "\n".join(problems)
  # the native results come from C launches: every kernel of C-translated cases was handed to C
  assert system.stats["rdna3.native_launches"] - before == run.native_kernels
  tested = [r for r in run.results["native"].values() if r.status in ("pass", "mismatch")]
  assert not run.native_kernels or tested, f"{family}: no instruction ran on the C path"

def test_expected_list_names_real_instructions(listed):
  """Every listed instruction exists in tinygrad's RDNA3 tables of the conformance families, with a reason."""
  known = {i.name for f in H.FAMILIES for i in H.infos(f)}
  for (name, path), e in listed.items():
    assert name in known, f"{name} is not an instruction of {H.FAMILIES}"
    assert e.reason.strip(), name

def test_the_harness_reports_a_wrong_result(monkeypatch):
  """A reference that is off by one must be reported as a mismatch on both paths (the suite can fail)."""
  monkeypatch.setitem(readings.OVERRIDES, "S_ADD_U32", ("D0.u32 = S0.u32 + S1.u32 + 1U;\nSCC = 0", "c", "wrong on purpose"))
  monkeypatch.setattr(H, "_infos", {})
  run = H.run_family("SOP2", only={"S_ADD_U32", "S_SUB_U32"})
  for path in H.PATHS:
    r = run.results[path]["S_ADD_U32"]
    assert r.status == "mismatch", (path, r)
    assert "got 0x" in r.detail and "pseudocode 0x" in r.detail
  assert run.results["numpy"]["S_SUB_U32"].status == "pass"

def test_untestable_instructions_say_why():
  for f in H.FAMILIES:
    for i in H.infos(f):
      if i.why is not None: assert len(i.why) > 10, i.name
  assert isinstance(interp.EvalError("x"), Exception)
