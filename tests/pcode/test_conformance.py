"""RDNA3 and RDNA4 conformance with the ISA manual's pseudocode (tests/pcode): every implemented instruction of
tinygrad's SOP1/SOP2/SOPC/SOPK/VOP1/VOP2/VOPC/VOP3/VOP3SD/VOP3P/DS tables of the family, on the numpy and the native
(C) path, against an independent evaluation of its pseudocode, over special and random operands, every operand kind
and three EXEC patterns. A family's test fails on a mismatch that its list (tests/pcode/expected_mismatches.txt,
expected_mismatches_rdna4.txt) does not list, on a listed one that now conforms, on an instruction the evaluator cannot
follow, and when its C kernels did not run for a reason other than a decline naming an instruction. MOCKGPU_CONFORMANCE=full runs
the larger tier (more waves, every operand kind at every source). `python tests/conformance_report.py` prints the
table."""
from __future__ import annotations
import os
import pytest
from mockgpu import system
from pcode import harness as H, expected, readings

FULL = os.environ.get("MOCKGPU_CONFORMANCE", "") == "full"

@pytest.fixture(scope="module")
def listed(): return {arch: expected.load(expected.PATHS[arch]) for arch in H.ARCHS}

@pytest.mark.parametrize("arch", H.ARCHS)
@pytest.mark.parametrize("family", H.FAMILIES)
def test_family_conforms_on_both_paths(family, arch, listed):
  before = system.stats[f"{arch}.native_launches"]
  run = H.run_family(family, full=FULL, arch=arch)
  names = {i.name for i in H.infos(family, arch)}
  # a C path that did not run for a reason naming no instruction (MOCKGPU_NATIVE=0, no compiler, a build that failed
  # or timed out) is a failure of this family's conformance on that path, not a numpy-only result
  assert not run.c_missing, f"{arch} {family}: the C path did not run:\n" + "\n".join(sorted(set(run.c_missing)))
  problems = expected.problems(run.results, listed[arch], names, FULL, expected.PATHS[arch])
  assert not problems, f"{arch} {family}: {len(problems)} differences from the expected list:\n" + "\n".join(problems)
  # the native results come from C launches: every kernel of C-translated cases was handed to C
  assert system.stats[f"{arch}.native_launches"] - before == run.native_kernels
  tested = [r for r in run.results["native"].values() if r.status in ("pass", "mismatch")]
  assert not run.native_kernels or tested, f"{arch} {family}: no instruction ran on the C path"

@pytest.mark.parametrize("arch", H.ARCHS)
def test_expected_list_names_real_instructions(arch, listed):
  """Every listed instruction exists in tinygrad's tables of the conformance families, with a reason."""
  known = {i.name for f in H.FAMILIES for i in H.infos(f, arch)}
  for (name, path), e in listed[arch].items():
    assert name in known, f"{name} is not an {arch} instruction of {H.FAMILIES}"
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
  """Every opcode the suite cannot compare names its reason, and none of the reasons is a parse failure of an
  instruction whose pseudocode is code (those must be fixed in the evaluator, not listed)."""
  for f, arch in ((f, a) for f in H.FAMILIES for a in H.ARCHS):
    for i in H.infos(f, arch):
      if i.why is not None:
        assert len(i.why) > 10, i.name
        assert "does not parse" not in i.why or i.name.startswith(("V_WMMA", "V_SWMMAC")), (i.name, i.why)

def test_ldexp_f64_by_an_exponent_beyond_the_range(monkeypatch):
  """v_ldexp_f64 with |S1| past 2**11: 2**52 * 2**-(2**31) is 0 and 2**-1000 * 2**2100 is inf (the exponent was
  clipped at +-1100, so a large negative one left a finite number). The C path does not translate it: numpy."""
  import math, numpy as np
  from tinygrad.renderer.amd.dsl import s, v
  from tinygrad.runtime.autogen.amd.rdna3 import ins as I
  from support.rdna_harness import aligned
  from support.rdna_isa import kernel, run as run_kernel
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  xs = [2.0**52 + 1, 1e300, -1e-300, 2.0**-1000, -3.0, 5e-324, 1.5, -2.0**1023]
  es = [-2**31, -1_500_000_000, 2**31 - 1, 2100, 1030, 2000, -1074, -2200]
  inp = aligned(32 * 8 + 32 * 4, 256)
  inp[:256].view(np.float64)[:] = np.resize(np.array(xs), 32)
  inp[256:].view(np.int32)[:] = np.resize(np.array(es, np.int32), 32)
  out = aligned(32 * 8, 256)
  body = [I.v_lshlrev_b32_e32(v[1], 3, v[0]), I.v_lshlrev_b32_e32(v[5], 2, v[0]),
          I.global_load_b64(vdst=v[2:3], addr=v[1], saddr=s[6:7], offset=0),
          I.global_load_b32(vdst=v[4], addr=v[5], saddr=s[6:7], offset=256), I.s_waitcnt(simm16=0),
          I.v_ldexp_f64(v[8:9], v[2:3], v[4]), I.global_store_b64(addr=v[1], data=v[8:9], saddr=s[4:5], offset=0), I.s_endpgm()]
  run_kernel(kernel(*body), out.view(np.uint32), inp.view(np.uint32))
  def ldexp(x, e):
    try: return math.ldexp(x, e)
    except OverflowError: return math.copysign(math.inf, x)
  want = np.array([ldexp(float(x), int(e)) for x, e in zip(np.resize(np.array(xs), 32), np.resize(np.array(es), 32))])
  np.testing.assert_array_equal(out.view(np.float64).view(np.uint64), want.view(np.uint64))
