"""The test suite's layout: no test file imports another test file (what two need lives in tests/support/)."""
import ast, os, re

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

