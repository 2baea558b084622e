"""Instruction coverage (mockgpu/coverage.py, MOCKGPU_COVERAGE=FILE, `mockgpu coverage FILE`): what the executors record
per kernel and path, the marks (unimplemented, numpy only), many processes appending to one file, and the report.
tests/ops/test_ops.py holds the op suite to it: a case fails when its kernels contain an unimplemented instruction."""
import json, os, subprocess, sys
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu import coverage
from mockgpu.cli import main
from mockgpu.errors import UnsupportedInstruction
from conftest import run_tinygrad
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run, store, tid_times4
import rdna_coverage

@pytest.fixture
def cov(monkeypatch, tmp_path):
  """A fresh process state and a coverage file; the classifications go to a cache directory of the test's own."""
  monkeypatch.setattr(coverage, "_seen", set())
  monkeypatch.setattr(coverage, "_classified", {})
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path / "cache"))
  monkeypatch.setenv("MOCKGPU_COVERAGE", path := str(tmp_path / "coverage.jsonl"))
  return path

def records(path:str) -> list[dict]: return coverage.read(path)[0]

def c_refuses(inst) -> bool:
  """The C translator refuses this instruction alone (tests/rdna_coverage.py's probe, independent of coverage.py)."""
  from mockgpu.compiler.rdna.backends import c as cgen
  tr = cgen.CTranslator([], False, False, "rdna3", 32)
  tr.names, tr.vregs = {}, {0}
  return not rdna_coverage.implemented(tr, inst, cgen.NoNative)

def unimplemented(n:int) -> list:
  """n scalar instructions the numpy translator does not implement today (tests/rdna_coverage.py's probe, independent
  of coverage.py), or a skip once the ISA is implemented that far."""
  from mockgpu.compiler.rdna.backends import numpy as translate
  tr = translate.Translator([], False, False, "rdna3", 32)
  found = [i for i in (I.s_buffer_load_b32(sdata=s[9], sbase=s[0:3], offset=0), I.s_buffer_load_b64(sdata=s[8:9], sbase=s[0:3], offset=0),
                       I.s_atc_probe(sdata=s[0], sbase=s[0:1], offset=0))
           if not rdna_coverage.implemented(tr, i, translate.Unsupported)]
  if len(found) < n: pytest.skip(f"fewer than {n} of the candidate instructions are unimplemented now: pick others")
  return found[:n]

def test_rdna_kernel_marks_unimplemented_and_numpy_only(cov, monkeypatch, capsys):
  """An unimplemented instruction on a path no wave takes (the dispatch completes) and one only the numpy path runs."""
  [missing] = unimplemented(1)
  name = missing.op_name
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "1")  # C from the first dispatch, where it covers the kernel
  readlane = I.v_readlane_b32(s[8], v[0], 5)
  body = [tid_times4(), readlane, I.v_mov_b32_e32(v[2], s[8]), I.s_cmp_eq_u32(s[0], s[0]), I.s_cbranch_scc1(simm16=missing.size() // 4), missing,
          store(v[2]), I.s_endpgm()]
  out = aligned(4 * 32, 256).view(np.uint32)
  for _ in range(2): run(kernel(*body), out)  # one record per (kernel, path) and process
  np.testing.assert_array_equal(out, np.full(32, 5))
  [rec] = records(cov)
  assert rec["isa"] == "rdna3" and rec["pid"] == os.getpid()
  assert {"S_LOAD_B128", "V_READLANE_B32", name, "GLOBAL_STORE_B32", "S_ENDPGM"} <= set(rec["ops"])
  assert list(rec["unsupported"]) == [name] and f"{name.lower()}: not implemented" in rec["unsupported"][name]
  assert rec["invalid"] == {} and rec["declined"] is None
  want_c = {"V_READLANE_B32"} if c_refuses(readlane) else set()
  # the C translation declines a kernel holding an instruction it cannot lower, executed or not
  assert set(rec["numpy_only"]) == want_c and rec["path"] == ("numpy" if want_c or c_refuses(missing) else "C")
  assert main(["coverage", cov]) == 1  # an unimplemented instruction
  text = capsys.readouterr().out
  assert "rdna3: " in text and "1 unimplemented" in text
  assert f"UNIMPLEMENTED: {name.lower()}: not implemented" in next(l for l in text.splitlines() if l.split()[0] == name)
  if want_c: assert "numpy only: READLANE_B32" in next(l for l in text.splitlines() if l.split()[0] == "V_READLANE_B32")

def test_every_unimplemented_instruction_of_a_block_is_named(cov, monkeypatch):
  """The translators stop a basic block at its first unimplemented instruction; coverage names each one."""
  first, second = unimplemented(2)
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  out = aligned(4 * 32, 256).view(np.uint32)
  with pytest.raises(UnsupportedInstruction, match=first.op_name.lower()):
    run(kernel(tid_times4(), first, second, store(v[0]), I.s_endpgm()), out)
  [rec] = records(cov)
  assert set(rec["unsupported"]) == {first.op_name, second.op_name} and rec["path"] == "numpy"

def test_c_path_and_numpy_path_are_separate_records(cov, monkeypatch):
  out = aligned(4 * 32, 256).view(np.uint32)
  body = kernel(tid_times4(), I.v_add_nc_u32_e32(v[2], 7, v[0]), store(v[2]), I.s_endpgm())
  for mode in ("0", "1", "1"):
    monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", mode)
    run(body, out)
  np.testing.assert_array_equal(out, np.arange(32) + 7)
  recs = records(cov)
  assert [r["path"] for r in recs] == ["numpy", "C"] and recs[0]["kernel"] == recs[1]["kernel"]
  assert all(r["unsupported"] == {} and r["numpy_only"] == {} for r in recs)
  rows = coverage.summarize(recs)["rdna3"]
  assert rows["V_ADD_NC_U32_E32"].paths == {"numpy": 1, "C": 1} and len(rows["V_ADD_NC_U32_E32"].kernels) == 1

def test_nothing_is_recorded_without_the_setting(cov, monkeypatch):
  monkeypatch.delenv("MOCKGPU_COVERAGE")
  out = aligned(4 * 32, 256).view(np.uint32)
  run(kernel(tid_times4(), store(v[0]), I.s_endpgm()), out)
  assert not os.path.exists(cov) and coverage._seen == set()

def test_ptx_rejected_module_names_the_instruction(cov):
  from mockgpu.emulators.ptx import load_module
  from support.ptx_isa import kernel as ptx_kernel
  src = ptx_kernel("mov.u32 %r0, %tid.x;\n@%p1 suld.b.1d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r0}];", ".param .u64 out")
  with pytest.raises(UnsupportedInstruction, match="suld"): load_module(src)
  [rec] = records(cov)
  assert rec["isa"] == "ptx" and rec["path"] == "rejected" and list(rec["unsupported"]) == ["suld.b.1d.v4.b32.trap"]
  assert coverage.unimplemented([rec]) == {"ptx": {"suld.b.1d.v4.b32.trap": rec["unsupported"]["suld.b.1d.v4.b32.trap"]}}

def test_ptx_launch_records_opcodes_and_path(cov, monkeypatch):
  from support.ptx_isa import kernel as ptx_kernel, run as ptx_run, LOAD3
  out, a = np.zeros(32, np.uint32), np.arange(32, dtype=np.uint32)
  src = ptx_kernel(LOAD3 + "\nadd.u32 %r4, %r1, 3;\nst.global.b32 [%rd9], %r4;")
  for mode in ("0", "1"):
    monkeypatch.setenv("MOCKGPU_PTX_NATIVE", mode)
    ptx_run(src, [out, a, a, a])
  np.testing.assert_array_equal(out, a + 3)
  recs = records(cov)
  assert [r["path"] for r in recs] == ["numpy", "C"] and all(r["isa"] == "ptx" for r in recs)
  assert {"add.u32", "st.global.b32", "ld.param.u64", "mad.lo.s32", "ret"} <= set(recs[0]["ops"])

def test_processes_append_to_one_file_and_the_report_lists_each_family(tmp_path):
  """Two tinygrad processes (an AMD and an NVIDIA configuration) append to one file; the command reports both ISAs."""
  path = str(tmp_path / "run.jsonl")
  program = "from tinygrad import Tensor; print(((Tensor([1., 2., 3.]) * 2).exp2() + 1).tolist())"
  for dev in ("MOCK+AMD", "MOCK+NV:PTX"): run_tinygrad(dev, program, env={"MOCKGPU_COVERAGE": path})
  recs = records(path)
  assert {r["isa"] for r in recs} == {"rdna3", "ptx"} and len({r["pid"] for r in recs}) == 2
  p = subprocess.run([sys.executable, "-m", "mockgpu", "coverage", path], capture_output=True, text=True, timeout=120)
  assert p.returncode == 0, p.stdout + p.stderr  # no unimplemented instruction in tinygrad's kernels
  heads = [l for l in p.stdout.splitlines() if not l.startswith(" ")]
  assert [h.split(":")[0] for h in heads] == ["ptx", "rdna3"] and all("0 unimplemented" in h for h in heads)
  assert any(l.split()[0] == "V_EXP_F32_E32" for l in p.stdout.splitlines() if l.startswith("  ")), p.stdout
  assert any(l.split()[0] == "ex2.approx.f32" for l in p.stdout.splitlines() if l.startswith("  ")), p.stdout

def test_read_leaves_a_torn_line_and_rejects_garbage(tmp_path):
  path = tmp_path / "c.jsonl"
  rec = {"isa": "rdna3", "kernel": "k", "path": "numpy", "ops": ["S_ENDPGM"]}
  path.write_text(json.dumps(rec) + "\n" + '{"isa": "rd')  # another process is still writing its line
  got, offset = coverage.read(str(path))
  assert got == [rec] and offset == len(json.dumps(rec)) + 1
  with open(path, "a") as f: f.write('na3", "kernel": "j", "path": "C", "ops": []}\n')
  assert coverage.read(str(path), offset)[0] == [{"isa": "rdna3", "kernel": "j", "path": "C", "ops": []}]
  path.write_text("not json\n")
  with pytest.raises(ValueError, match="not a coverage record"): coverage.read(str(path))

def test_ptx_kernel_c_refuses_is_named_before_it_is_hot(cov, monkeypatch, capsys):
  """cnot (a numpy-only row) has no C translation: the record says so from the first launch, while the kernel is not hot yet."""
  from support.ptx_isa import kernel as ptx_kernel, run as ptx_run, LOAD3
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "auto")
  out, a = np.zeros(32, np.uint32), np.arange(32, dtype=np.uint32)
  ptx_run(ptx_kernel(LOAD3 + "\ncnot.b32 %r4, %r1;\nst.global.b32 [%rd9], %r4;"), [out, a, a, a])
  [rec] = records(cov)
  assert rec["path"] == "numpy" and rec["declined"] == "instruction cnot" and "cnot.b32" in rec["ops"]
  assert main(["coverage", cov]) == 0
  assert "  C refused 1 kernel as a whole: instruction cnot" in capsys.readouterr().out.splitlines()
