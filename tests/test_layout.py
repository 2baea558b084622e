"""The test suite's layout: no test file imports another test file (what two need lives in tests/support/), and every
mockgpu module has a test that imports it or a reason it is covered only end to end."""
import ast, os, re, textwrap

TESTS = os.path.dirname(os.path.abspath(__file__))

def python_files() -> list[str]:
  """Every .py file under tests/, relative to it."""
  out = []
  for d, dirs, files in os.walk(TESTS):
    dirs[:] = sorted(x for x in dirs if x != "__pycache__" and not x.startswith("."))
    out += [os.path.relpath(os.path.join(d, f), TESTS) for f in sorted(files) if f.endswith(".py")]
  return out

def is_test_module(name:str) -> bool:
  """A module name (dotted or not) whose last part names a test file (pytest's test_*.py)."""
  return name.split(".")[-1].startswith("test_")

# a test file's name inside code that a child interpreter runs (`python -c "from test_x import ..."`)
IN_STRING = re.compile(r"\b(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))")

def imported_test_modules(source:str) -> list[str]:
  """The test modules a file's source imports: import statements (those inside functions too), importlib calls with a
  literal name, and import statements inside string literals (code run by a child interpreter)."""
  out = []
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Import): out += [a.name for a in node.names if is_test_module(a.name)]
    elif isinstance(node, ast.ImportFrom):
      if node.module and is_test_module(node.module): out.append(node.module)
      elif node.module is None or node.level: out += [a.name for a in node.names if is_test_module(a.name)]  # from . import test_x
    elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module", "__import__") and node.args \
         and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and is_test_module(node.args[0].value):
      out.append(node.args[0].value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ("import" in node.value):
      out += [m for pair in IN_STRING.findall(node.value) for m in pair if m and is_test_module(m)]
  return out

def test_no_test_file_imports_another_test_file():
  found = {}
  for rel in python_files():
    with open(os.path.join(TESTS, rel)) as f: names = imported_test_modules(f.read())
    # this file's own examples below are strings handed to the check, not imports
    if names and rel != os.path.basename(__file__): found[rel] = names
  assert not found, f"test files imported as libraries (move what they share to tests/support/): {found}"

def test_the_import_check_sees_each_form():
  assert imported_test_modules("from test_rdna_isa import kernel") == ["test_rdna_isa"]
  assert imported_test_modules("def f():\n  import test_kfd as k\n") == ["test_kfd"]
  assert imported_test_modules("from fuzz.test_fuzz_isa import x") == ["fuzz.test_fuzz_isa"]
  assert imported_test_modules("from . import test_pm4") == ["test_pm4"]
  assert imported_test_modules("import importlib\nimportlib.import_module('test_sdma')") == ["test_sdma"]
  assert imported_test_modules("code = 'import sys\\nfrom test_ptx_isa import run\\n'") == ["test_ptx_isa"]
  assert imported_test_modules("from support.rdna_isa import kernel\nimport machines\nfrom mockgpu import test_mode") == []
  assert imported_test_modules("from support.rdna_isa import kernel\nimport machines\nx = 'import numpy'") == []

# *** every mockgpu module has a test that imports it, or a reason here ***

# modules no test imports, each with the tests that cover it end to end (through tinygrad, a child process or the
# module that builds it). A module named here that no longer exists fails the check below.
END_TO_END:dict[str, str] = {
  "mockgpu.__main__": "`python -m mockgpu`: test_coverage, test_replay and test_debug run its subcommands in child processes",
  "mockgpu._finder": "runs at interpreter start (mockgpu.pth): every DEV=MOCK* child imports test.mockgpu.* through it (test_bridge, "
                     "test_tinygrad_smoke, the op and differential suites)",
  "mockgpu.demo": "scripts/demo.sh (`python -m mockgpu demo`), every result checked against DEV=CPU",
  "mockgpu.compiler.exact": "the float64 fma and directed roundings both numpy runtimes call: test_ptx_float64_math, test_ptx_numerics, "
                            "the RDNA conformance suite's v_fma_f64",
  "mockgpu.compiler.ptx.backends.numpy_fuse": "the numpy backend's load fusion, in every PTX translation with runs of loads (test_ptx_kernels, "
                                              "test_ptx_harness)",
  "mockgpu.compiler.ptx.backends.stepper": "built by emulators.ptx.stepper: test_ptx_stepper, test_debug_ptx",
  "mockgpu.compiler.ptx.blocks": "the basic blocks of every PTX translation: test_ptx_isa, test_ptx_native (barriers, divergence)",
  "mockgpu.compiler.ptx.inline": ".func and call expansion at load: test_ptx_func",
  "mockgpu.compiler.ptx.types": "the types and formats every PTX translation reads: test_ptx_isa, test_ptx_fp8, test_ptx_numerics",
  "mockgpu.compiler.ptx.validity": "what ptxas rejects, raised as InvalidPTX at load: test_ptx_errors, test_hostile_isa",
  "mockgpu.compiler.rdna.backends.numpy_control": "M0-relative indexes and computed jumps on the numpy path: test_rdna_control",
  "mockgpu.compiler.rdna.backends.reads": "operand reads of the numpy and C backends and the stepper: test_rdna_isa, test_rdna_stepper",
  "mockgpu.compiler.rdna.buffer": "the V# of MUBUF/VBUFFER through the executor: test_rdna_buffer, test_rdna4_buffer",
  "mockgpu.compiler.rdna.faults": "the messages of an instruction that cannot run, asserted by test_rdna_control and test_hostile_isa",
  "mockgpu.debug.cpu_target": "the arm64 lane's debugger adapter: test_cpu_lane's debugger session",
  "mockgpu.debug.repl": "`mockgpu debug -ex/--commands` in child processes: test_debug",
  "mockgpu.debug.target": "the protocol the adapters implement: test_debug, test_debug_ptx, test_cpu_lane step through it",
  "mockgpu.driver.nv_uvm": "/dev/nvidia-uvm through tinygrad's NV runtime: test_nv_tinygrad, test_hostile_driver",
  "mockgpu.driver.uaccess": "every user pointer a driver reads: test_hostile_driver, test_hostile_cuda (bad pointers are EFAULT)",
  "mockgpu.emulators.am.asm2464": "DEV=MOCKUSB+AMD: test_am's USB bridge tests",
  "mockgpu.emulators.am.device": "DEV=MOCKPCI+AMD booted by tinygrad's AM driver: test_am",
  "mockgpu.emulators.am.discovery": "read by AM at boot: test_am",
  "mockgpu.emulators.am.gfx": "RLC/MEC/HQDs AM programs at boot, then its compute: test_am",
  "mockgpu.emulators.am.gmc": "AM's page tables and faults: test_am (page fault through IH, recovery)",
  "mockgpu.emulators.am.ih": "the interrupt ring AM reads a fault from: test_am",
  "mockgpu.emulators.am.nbio": "the host interface registers AM reads first: test_am",
  "mockgpu.emulators.am.psp": "firmware loading at boot: test_am (a wrong payload is a PSP failure)",
  "mockgpu.emulators.am.sdma": "AM's SDMA queue: test_am's copies",
  "mockgpu.emulators.am.smu": "the SMU mailbox AM uses at boot: test_am",
  "mockgpu.emulators.arm64": "DEV=MOCK+CPU in child processes: test_cpu_lane and the smoke/op suites' CPU lanes",
  "mockgpu.emulators.pm4": "KFD compute queues: test_pm4, test_kfd and test_cdna_device drive it through /dev/kfd",
  "mockgpu.compiler.ptx.backends.bitops": "run-time helpers of translated PTX kernels: test_ptx_isa's bit ops",
  "mockgpu.compiler.ptx.backends.collective": "shuffles, votes, atomics and mma.sync: test_ptx_kernels, test_ptx_tensor_cores, test_ptx_native",
  "mockgpu.compiler.ptx.backends.numpy_names": "the namespace translated kernels import: every PTX numpy-path test",
  "mockgpu.compiler.ptx.backends.numpy_runtime": "the launch environment of every PTX numpy-path launch: test_ptx_isa, test_ptx_errors",
  "mockgpu.driver.nv_profiler": "the RM profiler object: tests/driver/test_nv_pma.py opens it through tinygrad's PMA=1 path",
  "mockgpu.emulators.am.vm": "AM's translation checks: tests/emulators/test_am_vm.py faults through tinygrad on MOCKPCI+AMD",
  "mockgpu.emulators.amd.perf": "SQTT/PMC registers: tests/emulators/test_profiling_amd.py (VIZ=-2 through tinygrad), test_pm4",
  "mockgpu.emulators.amd.pmc": "PMC samples: tests/emulators/test_profiling_amd.py's counter checks through tinygrad",
  "mockgpu.emulators.rdna.dispatch": "re-exported by mockgpu.emulators.rdna (Dispatch): every hand-assembled RDNA test",
  "mockgpu.emulators.sdma": "KFD SDMA queues: test_sdma, test_cdna_device",
  "mockgpu.vfs": "the virtual files every driver registers: test_bridge, test_kfd, test_host_safety through the bridge",
}

def package_modules() -> set[str]:
  import mockgpu
  pkg = os.path.dirname(os.path.abspath(mockgpu.__file__))
  out = set()
  for d, _, files in os.walk(pkg):
    for f in files:
      if not f.endswith(".py"): continue
      rel = os.path.relpath(os.path.join(d, f), os.path.dirname(pkg))[:-3].replace(os.sep, ".")
      out.add(rel[:-len(".__init__")] if rel.endswith(".__init__") else rel)
  return out

def mockgpu_imports(source:str, known:set[str]) -> set[str]:
  """The mockgpu modules a test file imports, in its code or in code it hands a child interpreter (a string that
  parses as Python): `from mockgpu.x import y` counts mockgpu.x, and mockgpu.x.y where y is a module."""
  out = set()
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Import): out |= {a.name for a in node.names if a.name.startswith("mockgpu")}
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("mockgpu"):
      out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "mockgpu" in node.value and "import" in node.value:
      try: out |= mockgpu_imports(textwrap.dedent(node.value), known)
      except SyntaxError: pass
  return out & known

def test_every_module_has_a_test_that_imports_it():
  known = package_modules()
  imported = set()
  for rel in python_files():
    with open(os.path.join(TESTS, rel)) as f: imported |= mockgpu_imports(f.read(), known)
  untested = sorted(known - imported - set(END_TO_END))
  assert not untested, f"mockgpu modules no test imports and END_TO_END does not list (with a reason): {untested}"
  stale = sorted(set(END_TO_END) - known)
  assert not stale, f"END_TO_END lists modules that no longer exist: {stale}"

def test_the_module_check_reads_imports_and_child_code():
  known = {"mockgpu", "mockgpu.vfs", "mockgpu.driver", "mockgpu.driver.kfd", "mockgpu.memory"}
  assert mockgpu_imports("from mockgpu.driver import kfd\nimport mockgpu.memory", known) == {"mockgpu.driver", "mockgpu.driver.kfd",
                                                                                              "mockgpu.memory"}
  assert mockgpu_imports("code = '''\nimport os\nfrom mockgpu import vfs\n'''", known) == {"mockgpu", "mockgpu.vfs"}
  assert mockgpu_imports("x = 'mockgpu: import it'\nimport numpy", known) == set()
