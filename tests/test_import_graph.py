"""mockgpu's imports point down. Every `import` of a mockgpu module in mockgpu's source counts, those inside functions
too (a late import is still a dependency), and no module is imported by a string (importlib), which the walk could
not see: no module may reach itself again through others (a circle), the compiler
(the instruction-set layers, C builds, caches) imports nothing of the emulators, drivers or machine above it, the
executors reach nothing of the machine or the listeners above them, and the PTX layer's ground floor imports none of
its backends."""
import ast, json, os, subprocess, sys
import mockgpu
from support.ptx_isa import kernel, LOAD3

PKG = os.path.dirname(os.path.abspath(mockgpu.__file__))

# edges that close a circle or point up, each with the change that will remove it; any other one fails the tests below.
# Empty: keep it so.
KNOWN:dict[tuple[str, str], str] = {}
# what the compiler may import outside itself: the ground under every part
COMPILER_MAY_IMPORT = ("mockgpu.errors", "mockgpu.config", "mockgpu",
                       "mockgpu.boards",  # the board records and the wave modes (boards.WAVE32/WAVE64): data over config and errors
                       "mockgpu.memory")  # the address space every ISA's code reads and writes; it imports only errors
# the compiler's own ground floor, which the PTX ground floor may read: the float formats (imports nothing of mockgpu)
COMPILER_GROUND = ("mockgpu.compiler.floats",)
# the executors (run what the backends produce, return their stats) and what they must never reach, directly or through
# others: the machine and its composition, the drivers, the listeners of their reports (coverage, the debugger, the
# tracer) and the replay runner. Executors report on the event bus (events.notify) and are handed to devices.
EXECUTORS = ("mockgpu.emulators.rdna", "mockgpu.emulators.ptx")
ABOVE_EXECUTORS = ("mockgpu.system", "mockgpu.bridge", "mockgpu.coverage", "mockgpu.replay_runner", "mockgpu.debug", "mockgpu.driver",
                   "mockgpu.trace", "mockgpu.timeline", "mockgpu.pytest_plugin", "mockgpu.cli", "mockgpu.demo")
PTX_GROUND = ("syntax", "types", "parser", "inline", "validity", "layout", "blocks", "semantics")

def modules() -> dict[str, str]:
  """Every module of the package: dotted name -> file."""
  out = {}
  for d, _, files in os.walk(PKG):
    for f in files:
      if not f.endswith(".py"): continue
      rel = os.path.relpath(os.path.join(d, f), os.path.dirname(PKG))[:-3].replace(os.sep, ".")
      out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(d, f)
  return out

def imports(path:str, known:set[str]) -> set[str]:
  """The mockgpu modules a file imports (`from pkg import name` counts the submodule when `name` is one)."""
  with open(path) as f: tree = ast.parse(f.read())
  out = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import): out |= {a.name for a in node.names if a.name.startswith("mockgpu")}
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("mockgpu"):
      out |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module for a in node.names}
  return out & known

# importlib's importers (and tinygrad's import_module helper); find_spec only as importlib.util's (a meta-path finder's
# find_spec method, as _finder.py calls it, looks a name up for the import system)
IMPORTERS = {"import_module", "__import__", "find_spec"}

def string_imports(path:str) -> list[str]:
  """The string imports in a file that may name a mockgpu module: a call of import_module, __import__ or find_spec
  whose module name is not a literal that starts outside mockgpu (tinygrad's autogen tables chosen by generation,
  f"tinygrad.runtime.autogen.am.pm4_{gen}", are outside; a name built from __name__ or held in a variable is not)."""
  with open(path) as f: tree = ast.parse(f.read())
  out = []
  for node in ast.walk(tree):
    if not isinstance(node, ast.Call) or not node.args: continue
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    if name not in IMPORTERS: continue
    if name == "find_spec" and isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) not in ("importlib.util", "util"): continue
    arg = node.args[0]
    lead = arg.values[0] if isinstance(arg, ast.JoinedStr) and arg.values else arg
    text = lead.value if isinstance(lead, ast.Constant) and isinstance(lead.value, str) else ""
    if not text or text.startswith((".", "mockgpu")) or text.split(".")[0] in ("", "mockgpu"): out.append(f"{path}:{node.lineno}")
  return out

def graph() -> dict[str, set[str]]:
  mods = modules()
  return {m: {t for t in imports(p, set(mods)) if t != m and (m, t) not in KNOWN} for m, p in mods.items()}

def circles(g:dict[str, set[str]]) -> list[list[str]]:
  """The strongly connected components of more than one module (Tarjan)."""
  index, low, stack, on, out = {}, {}, [], set(), []
  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in g[v]:
      if w not in index: visit(w); low[v] = min(low[v], low[w])
      elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      comp = []
      while (w := stack.pop()) != v: on.discard(w); comp.append(w)
      on.discard(v)
      if comp: out.append(sorted(comp + [v]))
  for v in sorted(g):
    if v not in index: visit(v)
  return out

def test_no_circles():
  assert circles(graph()) == []

def test_no_module_is_imported_by_a_string():
  assert [hit for p in modules().values() for hit in string_imports(p)] == []

def test_the_string_check_sees_a_string_import(tmp_path):
  (f:=tmp_path / "m.py").write_text("import importlib\ndef load(arch):\n  return importlib.import_module(f'{__name__}.{arch}')\n"
                                     "def bridge(): return importlib.import_module('mockgpu.bridge')\n"
                                     "def finder(f, name): return f.find_spec(name)\n"
                                     "def table(gen): return importlib.import_module(f'tinygrad.runtime.autogen.am.pm4_{gen}')\n")
  assert string_imports(str(f)) == [f"{f}:3", f"{f}:4"]  # not the finder's find_spec, nor tinygrad's tables

def test_no_known_exceptions():
  assert KNOWN == {}

def test_the_compiler_imports_nothing_above_it():
  up = {(m, t) for m, ts in graph().items() if m.startswith("mockgpu.compiler") for t in ts
        if not t.startswith("mockgpu.compiler") and t not in COMPILER_MAY_IMPORT}
  assert up == set()

def reached(g:dict[str, set[str]], starts) -> set[str]:
  """Every module the modules in `starts` import, directly or through others."""
  seen, todo = set(), list(starts)
  while todo:
    for t in g[todo.pop()] - seen: seen.add(t); todo.append(t)
  return seen

def executors_reach_up(g:dict[str, set[str]]) -> set[str]:
  starts = [m for m in g if m.startswith(EXECUTORS)]
  return {t for t in reached(g, starts) if t.startswith(ABOVE_EXECUTORS)}

def test_the_executors_reach_nothing_above_them():
  assert executors_reach_up(graph()) == set()

def test_the_executor_check_sees_an_upward_reach():
  g = graph()
  g["mockgpu.replay"] = g["mockgpu.replay"] | {"mockgpu.system"}  # a record that reported a launch to the machine
  assert "mockgpu.system" in executors_reach_up(g)

def test_the_ptx_ground_floor_imports_no_backend():
  g = graph()
  ground = [f"mockgpu.compiler.ptx.{m}" for m in PTX_GROUND]
  assert all(m in g for m in ground), "a ground-floor module moved: update PTX_GROUND"
  assert {(m, t) for m in ground for t in g[m] if not t.startswith("mockgpu.compiler.ptx") or ".backends" in t} - \
         {(m, t) for m in ground for t in g[m] if t in COMPILER_MAY_IMPORT + COMPILER_GROUND} == set()

def test_the_checks_see_a_circle_and_a_late_import():
  """The walk itself: a circle is found, and so is an import inside a function."""
  g = graph()
  g["mockgpu.compiler.ptx.types"] = g["mockgpu.compiler.ptx.types"] | {"mockgpu.compiler.ptx.semantics"}
  assert any("mockgpu.compiler.ptx.types" in c and "mockgpu.compiler.ptx.semantics" in c for c in circles(g))
  got = imports(os.path.join(PKG, "replay_runner.py"), set(modules()))   # `from mockgpu.emulators import ptx` inside _run
  assert "mockgpu.emulators.ptx" in got and "mockgpu.errors" in got

def test_the_ptx_translation_cache_key_covers_the_translator(tmp_path):
  """The disk cache keys a PTX translation by the text of the files that decide it (emulators.ptx.translator_files):
  every module of the PTX layer a translation loads, and the names the translated code runs with."""
  code = ("import sys, json\nfrom mockgpu.emulators import ptx\n"
          "ptx.translate_module(open(sys.argv[1]).read())\n"
          "print(json.dumps([sorted(m.__file__ for n, m in sys.modules.items() if n.startswith('mockgpu.compiler.ptx')),"
          " ptx.translator_files()]))")
  (tmp_path / "k.ptx").write_text(kernel(LOAD3 + "mov.b32 %f1, %r1;\nfma.rn.f32 %f2, %f1, %f1, %f1;\nst.global.f32 [%rd9], %f2;"))
  p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "k.ptx")], capture_output=True, text=True, timeout=120)
  assert p.returncode == 0, p.stderr
  loaded, keyed = json.loads(p.stdout)
  assert len(loaded) > 8 and set(loaded) <= set(keyed)
  assert {os.path.join(PKG, *f.split("/")) for f in ("compiler/ptx/semantics.py", "compiler/ptx/backends/numpy.py",
          "compiler/ptx/types.py", "compiler/ptx/backends/numpy_names.py")} <= set(keyed)

def test_the_rdna_translation_cache_key_covers_the_translator():
  """The disk cache keys an RDNA numpy translation by the text of the files that decide it
  (compiler/rdna/backends/numpy.translator_files, computed from compiler/rdna and its imports): every module of the
  compiler a run on the numpy path loads is among them."""
  code = ("import os, sys, json\nos.environ['MOCKGPU_RDNA_NATIVE'] = '0'\nsys.path.insert(0, sys.argv[1])\nimport numpy as np\n"
          "from tinygrad.renderer.amd.dsl import s, v\nfrom tinygrad.runtime.autogen.amd.rdna3 import ins as I\n"
          "from support.rdna_isa import kernel, run\nfrom support.rdna_harness import aligned\n"
          "from mockgpu.compiler.rdna.backends import numpy as backend\n"
          "out = aligned(128, 256).view(np.uint32)\n"
          "run(kernel(I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.v_add_f32_e32(v[2], 1.0, v[0]),"
          " I.global_store_b32(addr=v[1], data=v[2], saddr=s[4:5]), I.s_endpgm()), out)\n"
          "print(json.dumps([sorted(m.__file__ for n, m in sys.modules.items() if n.startswith('mockgpu.compiler.')"
          " and not n.startswith('mockgpu.compiler.ptx')), backend.translator_files()]))")
  p = subprocess.run([sys.executable, "-c", code, os.path.dirname(os.path.abspath(__file__))], capture_output=True, text=True, timeout=300)
  assert p.returncode == 0, p.stderr[-3000:]
  loaded, keyed = json.loads(p.stdout.strip().splitlines()[-1])
  # outside the key: the package marker, the disk cache itself (it stores translations; it decides none) and the C
  # build history (it decides when a kernel's C build runs, not what any translation is)
  assert len(loaded) > 10 and set(loaded) - set(keyed) <= {os.path.join(PKG, "compiler", f) for f in ("__init__.py", "cache.py", "history.py")}, \
    sorted(set(loaded) - set(keyed))
  assert {os.path.join(PKG, *f.split("/")) for f in ("compiler/rdna/errata.py", "compiler/rdna/semantics/rdna3.py",
          "compiler/rdna/backends/numpy_runtime.py", "compiler/exact.py")} <= set(keyed)
  # computed from the compiler's files alone: the module the cache stores is made whole there (backends/numpy.module)
  assert all(f.startswith(os.path.join(PKG, "compiler") + os.sep) for f in keyed), keyed
