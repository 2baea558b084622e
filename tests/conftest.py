"""Shared fixtures: tinygrad on a mock device runs in a child process, because tinygrad binds its MOCK interface
(and its device list) when it is imported; each pytest-xdist worker has its own children and so its own mock state."""
import os, pickle, shutil, subprocess, sys, tempfile, textwrap, zlib
import numpy as np
import pytest
from hypothesis import settings as hypothesis_settings
from mockgpu.config import CONFIGURATIONS

# every hypothesis test draws the same examples in every run, in any order (no example database either)
hypothesis_settings.register_profile("mockgpu", derandomize=True, database=None)
hypothesis_settings.load_profile("mockgpu")

def node_seed(nodeid:str) -> int:
  """A test's seed: its node id's CRC (the same whichever tests ran before it, and in whatever order)."""
  return zlib.crc32(nodeid.encode())

@pytest.fixture(autouse=True)
def _seeded_module_rng(request, monkeypatch):
  """A module's generator (`rng` or `RNG`, numpy's), drawn from inside its tests, is the test's own while it runs:
  seeded from its node id, so its inputs do not depend on what ran before it in the worker. The tests/support modules'
  generators are the same object while it runs, so a helper moved there draws from the test's one stream, as it did
  when it lived in the test's module."""
  shared = [request.module, *(m for n, m in list(sys.modules.items()) if n.startswith("support."))]
  for name in ("rng", "RNG"):
    gen = np.random.default_rng(node_seed(request.node.nodeid))
    for module in shared:
      if isinstance(getattr(module, name, None), np.random.Generator): monkeypatch.setattr(module, name, gen)

HERE = os.path.dirname(os.path.abspath(__file__))
# the suites' helper modules (tests/ops, tests/diff) are imported by bare name from any folder
for _suite in ("ops", "diff"):
  if os.path.join(HERE, _suite) not in sys.path: sys.path.insert(0, os.path.join(HERE, _suite))
# the slow tier (tox -e slow): configurations that repeat what CI's tier already runs through another path to the same
# executor (tests/emulators/test_rdna_regressions.py's explicit renderer and interface names)
SLOW = os.environ.get("MOCKGPU_SLOW") == "1"

def board_configs() -> list[str]:
  """DEV for each AMD board other than the default one that mockgpu runs (mockgpu.boards): MOCKKFD+AMD:LLVM:gfx1151, gfx1201,
  gfx942 and gfx950."""
  from mockgpu.boards import AMD_BOARDS, DEFAULT_AMD_BOARD
  return [f"MOCKKFD+AMD:LLVM:{b.name}" for b in AMD_BOARDS.values() if b.name != DEFAULT_AMD_BOARD]

def device_configs(boards:bool=False) -> list[str]:
  """The configurations the suites run on (MOCKGPU_TEST_DEVICES=comma list to narrow it, or to add boards to any
  suite); with `boards`, also every other AMD board (board_configs) unless MOCKGPU_TEST_DEVICES names the list. The
  smoke test, the op suite and the differential suite (its programs, its JIT/multi-GPU part, and in the slow tier its
  generated API cases) run on every board."""
  if (chosen:=os.environ.get("MOCKGPU_TEST_DEVICES")) is not None: return [d for d in chosen.split(",") if d]
  return [*CONFIGURATIONS, *(board_configs() if boards else [])]

def cpu_lane_configs() -> list[str]:
  """The arm64 CPU lane's configurations (mockgpu.config.CPU_LANES) for the smoke test and the op suite; when
  MOCKGPU_TEST_DEVICES names the list, the lanes it names come through device_configs instead."""
  from mockgpu.config import CPU_LANES
  return [] if os.environ.get("MOCKGPU_TEST_DEVICES") is not None else list(CPU_LANES)

def _native_launches(isa:str, path:str="native") -> int:
  from mockgpu import system
  return sum(v for k, v in system.stats.items() if k.endswith(f".{path}_launches") and k.startswith(isa))

# Declines a [native] test may meet: a launch whose C translation declined for one of these reasons (a substring of
# the decline, naming the instruction) runs on numpy without failing the test. Every other [native] launch runs C.
NATIVE_DECLINES:dict[str, str] = {
  "VOP1_DPP16 V_MOV_B32_E32": "test_rdna_isa's DPP16 control 0x130, which no hardware defines: C declines the kernel and "
                              "numpy raises UnsupportedInstruction naming the control, as the test asserts",
}

def _declines(isa:str) -> dict[str, int]:
  from mockgpu.emulators.rdna import native as rdna_native
  from mockgpu.emulators.ptx import native as ptx_native
  return dict((rdna_native if isa == "rdna" else ptx_native).declined)

def _native_ran(param:str, isa:str):
  """Our standard: a [native] variant runs every launch on C. The executors count C and numpy launches in
  mockgpu.system.stats (rdna3.native_launches, ptx.numpy_launches, ...); a [native] case that ran no C launch, or a
  launch on numpy for a reason NATIVE_DECLINES does not list, fails here."""
  before, numpy_before, declined = _native_launches(isa), _native_launches(isa, "numpy"), _declines(isa)
  yield param
  # MOCKGPU_NATIVE_MEASURE=path: write each [native] case's C and numpy launch counts instead of asserting (how the drop list was measured)
  if param == "native" and (MEASURE := os.environ.get("MOCKGPU_NATIVE_MEASURE")):
    with open(MEASURE, "a") as f:
      test = os.environ.get('PYTEST_CURRENT_TEST', '').rsplit(' ', 1)[0]
      f.write(f"{test} \t{_native_launches(isa) - before}\t{_native_launches(isa, 'numpy') - numpy_before}\n")
  elif param == "native":
    assert _native_launches(isa) > before, f"[native] variant ran no C launch on {isa}: the kernel stayed on numpy or nothing was dispatched"
    if numpy := _native_launches(isa, "numpy") - numpy_before:
      why = sorted(k for k, n in _declines(isa).items() if n > declined.get(k, 0))
      unlisted = [w for w in why if not any(d in w for d in NATIVE_DECLINES)]
      assert why and not unlisted, \
        f"[native] variant ran {numpy} launch(es) on numpy on {isa}: {unlisted or 'no decline recorded (a kernel declined before this test)'}"

@pytest.fixture(params=["numpy", "native"])
def rdna_path(request, monkeypatch):
  """Runs a test on both RDNA executor paths: numpy (all waves at once) and native (the kernel's C translation from
  its first dispatch, where it covers the kernel). Modules opt in with pytestmark = pytest.mark.usefixtures("rdna_path")."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if request.param == "numpy" else "1")
  yield from _native_ran(request.param, "rdna")

@pytest.fixture(params=["numpy", "native"])
def ptx_path(request, monkeypatch):
  """The same for the PTX executor: numpy (every thread at once) and native (C, from the first launch, where it
  covers the kernel). Modules opt in with pytestmark = pytest.mark.usefixtures("ptx_path")."""
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0" if request.param == "numpy" else "1")
  yield from _native_ran(request.param, "ptx")

def run_tinygrad(dev:str, code:str, timeout:float=300, env:dict|None=None, check:bool=True) -> subprocess.CompletedProcess:
  """Run `code` in a fresh interpreter with DEV=dev, from a directory outside any tinygrad checkout."""
  full_env = {**os.environ, "DEV": dev, **(env or {})}
  p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env, cwd=HERE, capture_output=True, text=True, timeout=timeout)
  if check and p.returncode != 0: raise AssertionError(f"DEV={dev} failed ({p.returncode}):\n{p.stdout}\n{p.stderr[-6000:]}")
  return p

class OpRunner:
  """One long-lived tests/ops/oprunner.py process per device configuration. It records instruction coverage
  (mockgpu/coverage.py) to MOCKGPU_COVERAGE when the run sets it, else to a file of its own: new_coverage() gives the
  records its workers appended since the last call."""
  def __init__(self, dev:str):
    self.dev, self.proc, self.pids = dev, None, set()
    self.own_dir = None if os.environ.get("MOCKGPU_COVERAGE") else tempfile.mkdtemp(prefix="mockgpu-coverage-")
    self.coverage_file = os.environ.get("MOCKGPU_COVERAGE") or os.path.join(self.own_dir, "coverage.jsonl")
    self.coverage_offset = 0
  def _start(self):
    # stderr goes to a file: a pipe nobody drains would block a chatty worker
    self.log = tempfile.TemporaryFile()
    self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "ops", "oprunner.py")], cwd=HERE,
                                 env={**os.environ, "DEV": self.dev, "MOCKGPU_COVERAGE": self.coverage_file},
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
    self.pids.add(self.proc.pid)
  def new_coverage(self) -> list[dict]:
    from mockgpu import coverage
    if not os.path.exists(self.coverage_file): return []
    records, self.coverage_offset = coverage.read(self.coverage_file, self.coverage_offset)
    return [r for r in records if r.get("pid") in self.pids]  # a run-wide file holds every process's records
  def run(self, name:str):
    if self.proc is None or self.proc.poll() is not None: self._start()
    try:
      pickle.dump(name, self.proc.stdin)
      self.proc.stdin.flush()
      reply = pickle.load(self.proc.stdout)
      # a failed case may leave tinygrad's device in its sticky error state: later cases get a fresh process
      if reply[0] != "ok": self.close()
      return reply
    except (EOFError, BrokenPipeError, pickle.UnpicklingError):
      self.proc.kill()
      self.proc.wait()
      self.log.seek(0)
      err = self.log.read().decode(errors="replace")[-6000:]
      self.proc = None
      return ("error", f"the worker for DEV={self.dev} died running {name}:\n{err}")
  def close(self):
    from diffcompare import stop
    stop(self.proc)
    self.proc = None
  def remove(self):
    self.close()
    if self.own_dir is not None: shutil.rmtree(self.own_dir, ignore_errors=True)

@pytest.fixture(scope="session")
def op_runners():
  runners:dict[str, OpRunner] = {}
  def runner(dev:str) -> OpRunner:  # built once per device: each OpRunner makes a temporary directory
    if dev not in runners: runners[dev] = OpRunner(dev)
    return runners[dev]
  yield runner
  for r in runners.values(): r.remove()

@pytest.fixture(scope="session")
def diff_runners():
  """The differential suite's workers (tests/diff/diffcompare.py): DEV=CPU, the reference, each configuration and the arm64 lane."""
  from diffcompare import Runner, reference_env
  from mockgpu.config import cpu_lane_reference
  runners = {"CPU": Runner("CPU", reference_env()),
             **{dev: Runner(dev, reference_env() if cpu_lane_reference(dev) else None) for dev in device_configs(boards=True)},
             # the arm64 lane compiles with the reference's clang: clang 14 has no __bf16 arithmetic for arm64 either
             **{dev: Runner(dev, reference_env()) for dev in cpu_lane_configs()}}
  yield runners
  for r in runners.values(): r.close()

def _dropped_native() -> set[str]:
  with open(os.path.join(HERE, "native_dropped.txt")) as f: return {l.strip() for l in f if l.strip() and not l.startswith("#")}

def pytest_collection_modifyitems(config, items):
  """Drops the [native] variants listed in native_dropped.txt: they run no C, so a [native] label would claim what
  the case does not test (the rdna_path/ptx_path fixtures fail any other [native] case that runs no C)."""
  dropped = _dropped_native()
  gone = [it for it in items if it.nodeid in dropped or f"tests/{it.nodeid}" in dropped]
  if gone:
    config.hook.pytest_deselected(items=gone)
    items[:] = [it for it in items if it not in gone]
