"""An exception in mockgpu's own code while a kernel runs is one named EmulatorBug with a replay file, and `mockgpu
replay FILE` re-runs the dispatch to the same error. Each tinygrad case breaks a translation (or the C bridge) on
purpose in a child process; the replay runs in another child with the same break applied (and completes without it)."""
import os, re, subprocess, sys, textwrap
import numpy as np
import pytest
from mockgpu import replay, replay_runner
from mockgpu.errors import EmulatorBug, GPUPageFault

# each break is applied by the child script before tinygrad (or `mockgpu replay`) runs
BREAK_RDNA_TRANSLATION = """
from mockgpu.compiler.rdna.backends import numpy as translate
_inst = translate.Translator.inst
def inst(self, i):
  if translate.op_name(i).startswith("V_ADD_F32"): self.out("_bug = V[len(V)]")  # an IndexError out of generated code
  return _inst(self, i)
translate.Translator.inst = inst
"""
BREAK_PTX_TRANSLATION = """
from mockgpu.compiler.ptx import semantics
_add = semantics.ROWS["add"]
def add(b, ins):
  b.emit("_bug = [][1]")  # an IndexError out of generated code (the numpy backend's)
  return _add.fn(b, ins)
semantics.ROWS["add"] = semantics.Row(add, _add.no_c)
"""
BREAK_C_BRIDGE = """
from mockgpu.emulators.{vendor} import native
_init = native.NativeKernel.__init__
def init(self, *args):
  _init(self, *args)
  run = self.run
  self.run = lambda ctx: (run(ctx), 7)[1]  # the C kernel runs, then the bridge sees a status it does not know
native.NativeKernel.__init__ = init
"""
SCRIPT = """
import sys
{patch}
if sys.argv[1] == "replay":
  from mockgpu.cli import main
  sys.exit(main(sys.argv[1:]))
from tinygrad import Tensor
print((Tensor([1., 2, 3, 4]) + 1).tolist())
"""

CASES = {  # name: (DEV, settings, break, the `at:` line, the cause)
  "rdna-numpy": ("MOCK+AMD", {"MOCKGPU_RDNA_NATIVE": "0"}, BREAK_RDNA_TRANSLATION,
                 r"PC 0x[0-9a-f]+ \(kernel offset 0x[0-9a-f]+\): v_add_f32", r"IndexError: list index out of range"),
  "ptx-numpy": ("MOCK+NV:PTX", {"MOCKGPU_PTX_NATIVE": "0"}, BREAK_PTX_TRANSLATION, r"PTX line \d+: add\.f32 %",
                r"IndexError: list index out of range"),
  "rdna-C": ("MOCK+AMD", {"MOCKGPU_RDNA_NATIVE": "1"}, BREAK_C_BRIDGE.format(vendor="rdna"), r"PC not known: the C path",
             r"RuntimeError: RDNA native kernel at PC 0x[0-9a-f]+: unknown status 7"),
  "ptx-C": ("MOCK+NV:PTX", {"MOCKGPU_PTX_NATIVE": "1"}, BREAK_C_BRIDGE.format(vendor="ptx"), r"PTX line not known: the C path",
            r"RuntimeError: PTX native kernel E_4: unknown status 7"),
}

def _child(script:str, args:list[str], env:dict, cwd) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, script, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)

@pytest.mark.parametrize("case", list(CASES))
def test_broken_kernel_is_a_named_replayable_bug(case, tmp_path):
  dev, settings, patch, at, cause = CASES[case]
  path = "C" if case.endswith("-C") else "numpy"
  script = tmp_path / "broken.py"
  script.write_text(SCRIPT.format(patch=textwrap.dedent(patch)))
  # no translation cache: a cached (unbroken) translation would hide the break
  env = {**os.environ, "DEV": dev, "MOCKGPU_CACHE_DIR": "off", "MOCKGPU_REPLAY_DIR": str(tmp_path / "replay"), **settings}
  p = _child(str(script), ["run"], env, tmp_path)
  out = p.stdout + p.stderr
  assert p.returncode != 0, out
  assert "mockgpu.errors.EmulatorBug: mockgpu internal error" in out, out[-4000:]
  vendor = "AMD rdna3" if dev == "MOCK+AMD" else "NVIDIA PTX sm_89"
  assert re.search(rf"kernel: E_4 \({vendor}, {path} path\)", out), out[-4000:]
  assert re.search(rf"at: {at}", out) and re.search(cause, out), out[-4000:]
  assert "launch: grid (1, 1, 1) x block (1, 1, 1)" in out, out[-4000:]
  files = list((tmp_path / "replay").glob("E_4-*.mgreplay"))
  assert len(files) == 1 and f"replay: mockgpu replay {files[0]}" in out, out[-4000:]
  message = re.search(r"EmulatorBug: (mockgpu internal error.*?\n  memory in the replay file: [^\n]*)", out, re.S).group(1)

  # the same break, replayed without tinygrad: the same message and cause
  renv = {k: v for k, v in env.items() if k != "DEV" and not k.startswith("MOCKGPU_") or k == "MOCKGPU_CACHE_DIR"}
  r = _child(str(script), ["replay", str(files[0])], renv, tmp_path)
  assert r.returncode == 1, r.stdout + r.stderr
  assert message in r.stdout and "reproduced: the same cause as recorded" in r.stdout, r.stdout
  # and without it the dispatch completes
  ok = subprocess.run([sys.executable, "-m", "mockgpu", "replay", str(files[0])], env=renv, cwd=tmp_path, capture_output=True,
                      text=True, timeout=300)
  assert ok.returncode == 0 and "completed without error" in ok.stdout, ok.stdout + ok.stderr
  if path == "C":  # --path overrides the recorded path: the bridge's break is then not on the way
    r = _child(str(script), ["replay", str(files[0]), "--path", "numpy"], renv, tmp_path)
    assert r.returncode == 0 and "numpy path" in r.stdout and "completed without error" in r.stdout, r.stdout + r.stderr

# *** in process, on the PTX executor alone ***

PTX = """// test_replay: {tag}
.version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
mov.u32 %r0, %tid.x;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], 7;
xor.b32 %r1, %r0, 1;
st.global.u32 [%rd3], %r1;
ret;
}}
"""

@pytest.fixture
def broken_xor(monkeypatch, tmp_path):
  """PTX `xor` translated into an IndexError, after the kernel's first store; replay files under tmp_path."""
  from mockgpu.compiler.ptx import semantics
  xor = semantics.ROWS["xor"]
  def broken(b, ins):
    b.emit("_bug = [][1]")
    return xor.fn(b, ins)
  monkeypatch.setitem(semantics.ROWS, "xor", semantics.Row(broken, xor.no_c))
  for k, v in {"MOCKGPU_CACHE_DIR": "off", "MOCKGPU_PTX_NATIVE": "0", "MOCKGPU_REPLAY_DIR": str(tmp_path)}.items(): monkeypatch.setenv(k, v)
  return tmp_path

def _launch(tag:str):
  from mockgpu.emulators import ptx
  from mockgpu.memory import AddressSpace
  out = np.zeros(32, np.uint32)
  mem = AddressSpace("test")
  mem.map(out.ctypes.data, out.nbytes)
  k = ptx.load_module(PTX.format(tag=tag)).kernel("k")
  with pytest.raises(EmulatorBug) as e:
    ptx.launch(mem, k, (1, 1, 1), (32, 1, 1), int(out.ctypes.data).to_bytes(8, "little"))
  return out, e.value

@pytest.mark.parametrize("snapshot", ["fault", "start"])
def test_memory_snapshot(broken_xor, monkeypatch, snapshot, capsys):
  monkeypatch.setenv("MOCKGPU_REPLAY_SNAPSHOT", snapshot)
  out, bug = _launch(f"snapshot {snapshot}")
  assert isinstance(bug.__cause__, IndexError) and bug.path == "numpy" and bug.symbol == "k"
  assert re.search(r"at: PTX line 14: xor\.b32 %r1, %r0, 1;", str(bug)) and (out == 7).all()
  rec = replay_runner.load(bug.replay_file)
  assert rec["memory_state"] == snapshot and rec["cause"] == ("IndexError", "list index out of range")
  mem = replay.restore(rec["memory"])
  seen = mem.read(out.ctypes.data, out.nbytes)
  assert seen == (bytes(out.nbytes) if snapshot == "start" else out.tobytes())  # start: before the kernel's store
  for k, v in rec["settings"].items(): monkeypatch.setenv(k, v)  # replay sets them: undone after the test
  assert replay_runner.replay(bug.replay_file) == 1
  printed = capsys.readouterr().out
  assert str(bug) in printed and "reproduced: the same cause as recorded" in printed

def test_modelled_outcomes_pass_through(broken_xor):
  from mockgpu.emulators import ptx
  from mockgpu.memory import AddressSpace
  k = ptx.load_module(PTX.format(tag="fault")).kernel("k")
  with pytest.raises(GPUPageFault):  # nothing is mapped: the store faults before the broken xor
    ptx.launch(AddressSpace("empty"), k, (1, 1, 1), (32, 1, 1), (1 << 20).to_bytes(8, "little"))
  assert not list(broken_xor.glob("*.mgreplay"))
  assert replay.modelled(NotImplementedError()) and not replay.modelled(IndexError()) and not replay.modelled(RuntimeError())

# a kernel that diverges at a forward branch (its masked variant translated with it) and one whose loop's back edge
# diverges (its masked variant translated at the divergence); the xor runs masked in both
MASKED = {"forward": ("setp.lt.u32 %p1, %r0, 16;\n@%p1 bra $L_end;\nxor.b32 %r1, %r0, 1;\nst.global.u32 [%rd3], %r1;\n$L_end:"),
          "loop": ("mov.u32 %r2, 0;\n$L_loop:\n" + "add.u32 %r3, %r3, 1;\n" * 8 +
                   "xor.b32 %r1, %r0, 1;\nst.global.u32 [%rd3], %r1;\nadd.u32 %r2, %r2, 1;\n"
                   "setp.lt.u32 %p1, %r2, %r0;\n@%p1 bra $L_loop;")}

@pytest.mark.parametrize("shape", sorted(MASKED))
def test_bug_in_the_masked_variant_names_its_line(monkeypatch, tmp_path, shape):
  """An error raised in a kernel's masked variant (compiler/ptx/backends/numpy.py) names the instruction's line,
  whichever module the variant was translated in (the xor breaks in the masked variant only)."""
  from mockgpu.compiler.ptx import semantics
  from mockgpu.emulators import ptx
  from mockgpu.memory import AddressSpace
  xor = semantics.ROWS["xor"]
  def broken(b, ins):
    if b.masked_block: b.emit("_bug = [][1]")
    return xor.fn(b, ins)
  monkeypatch.setitem(semantics.ROWS, "xor", semantics.Row(broken, xor.no_c))
  for k, v in {"MOCKGPU_CACHE_DIR": "off", "MOCKGPU_PTX_NATIVE": "0", "MOCKGPU_REPLAY_DIR": str(tmp_path)}.items(): monkeypatch.setenv(k, v)
  body = "mov.u32 %r0, %tid.x;\nld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r0, 4;\nadd.s64 %rd3, %rd1, %rd2;\n" + MASKED[shape]
  src = PTX.format(tag=shape).split("{\n")[0] + "{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n" + body + "\nret;\n}\n"
  line = src.splitlines().index("xor.b32 %r1, %r0, 1;") + 1
  out = np.zeros(32, np.uint32)
  mem = AddressSpace("test")
  mem.map(out.ctypes.data, out.nbytes)
  k = ptx.load_module(src).kernel("k")
  assert (k.eager_masked is not None) == (shape == "forward")
  with pytest.raises(EmulatorBug) as e:
    ptx.launch(mem, k, (1, 1, 1), (32, 1, 1), int(out.ctypes.data).to_bytes(8, "little"))
  assert isinstance(e.value.__cause__, IndexError) and "in _kernel_0_m" in str(e.value), str(e.value)
  assert re.search(rf"at: PTX line {line}: xor\.b32 %r1, %r0, 1;", str(e.value)), str(e.value)

def test_replay_dir_off(broken_xor, monkeypatch):
  monkeypatch.setenv("MOCKGPU_REPLAY_DIR", "off")
  _, bug = _launch("off")
  assert bug.replay_file is None and "replay: (not written: MOCKGPU_REPLAY_DIR=off)" in str(bug)

def test_snapshot_keeps_only_nonzero_pages():
  from mockgpu.memory import AddressSpace
  buf = np.zeros(5 * replay.PAGE + 100, np.uint8)
  buf[replay.PAGE + 3], buf[2 * replay.PAGE], buf[-1] = 1, 2, 3
  mem = AddressSpace("t")
  mem.map(buf.ctypes.data, buf.nbytes)
  (va, size, exact, runs), = replay.snapshot(mem)
  assert [(off, len(b)) for off, b in runs] == [(replay.PAGE, 2 * replay.PAGE), (5 * replay.PAGE, 100)]
  again = replay.restore(replay.snapshot(mem))
  assert again.read(va, size) == buf.tobytes() and again.mappings()[0].exact == exact
