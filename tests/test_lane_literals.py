"""Lane counts come from the dispatch (Dispatch.wave_size), the board record (AMDBoard.wave_front_size,
NVBoard.warp_size, boards.WAVE32/WAVE64) or a parameter without a default, never a literal: a scan of mockgpu's source
(outside boards.py) for a 32 or 64 given to a name about waves, lanes or warps, as a parameter's default, a constant, a
call's keyword or one side of a comparison, and for lane arithmetic derived from those counts (`lin & 31`, `t >> 5`,
`(n + 31) // 32`) on or into such a name. Board names are spelled only in boards.py too."""
import ast, os, re
import mockgpu

PKG = os.path.dirname(os.path.abspath(mockgpu.__file__))
ROOT = os.path.dirname(PKG)
LANEY = re.compile(r"wave|lane|warp", re.I)
LANE_COUNTS = (32, 64)
# (file, the flagged source) -> why it is not a lane count taken from a literal. Keep each reason true.
ALLOWED = {
  ("mockgpu/emulators/rdna/native.py", "MAX_WAVES_PER_GROUP = 32"):
    "a count of waves (the C scheduler's per-workgroup wave slots in c/prelude.c), not of lanes",
  ("mockgpu/compiler/rdna/operands.py", "lane >= 32"):
    "GFX9 DPP row_bcast:31 (0x143): the control's encoding names lane 31 and the lanes from 32, whatever the wave size",
}
# lane arithmetic that spells a lane count through a mask, shift or divisor: (operator, the constants it is spelled with)
DERIVED = {ast.BitAnd: (31, 63), ast.RShift: (5, 6), ast.Mod: (32, 64), ast.FloorDiv: (32, 64)}
# (file, the flagged source) -> why this mask, shift or divisor is not a lane count. Keep each reason true.
ARITHMETIC_ALLOWED = {
  ("mockgpu/compiler/rdna/gfx9.py", "self.k_per_lane * _BITS[kind] // 32"):
    "a lane's bits of an MFMA operand over a VGPR's 32 bits: the registers it takes, a register width, not a lane count",
}
# the gfx and SM targets of the boards (gfx1100, sm_89): only boards.py spells them in mockgpu's code
BOARD_NAME = re.compile(r"^(gfx\d{3,4}|sm_\d{2,3})$")
# (file, the literal) -> why this board name is not a board chosen in code
BOARD_NAMES_ALLOWED = {
  ("mockgpu/config.py", "sm_999"): "MOCKGPU_NV_MODEL's malformed value (no board has it), for the test that walks the settings",
  ("mockgpu/config.py", "gfx9999"): "MOCKGPU_AMD_BOARD's malformed value (no board has it), for the test that walks the settings",
}

def _name(node) -> str:
  return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""

def _count(node) -> bool: return isinstance(node, ast.Constant) and type(node.value) is int and node.value in LANE_COUNTS

def _defaults(node):
  a = node.args
  pos = a.posonlyargs + a.args
  yield from zip(pos[len(pos) - len(a.defaults):], a.defaults)
  yield from ((k, v) for k, v in zip(a.kwonlyargs, a.kw_defaults) if v is not None)

def lane_literals(tree:ast.AST) -> list[tuple[int, str]]:
  """(line, source) of each lane-count literal in a module's tree."""
  out = []
  for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
      out += [(node.lineno, f"{arg.arg}={d.value}") for arg, d in _defaults(node) if LANEY.search(arg.arg) and _count(d)]
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
      targets = node.targets if isinstance(node, ast.Assign) else [node.target]
      if _count(node.value) and any(LANEY.search(_name(t)) for t in targets): out.append((node.lineno, ast.unparse(node)))
    elif isinstance(node, ast.Call):
      out += [(node.lineno, f"{k.arg}={k.value.value}") for k in node.keywords if k.arg and LANEY.search(k.arg) and _count(k.value)]
    elif isinstance(node, ast.Compare):
      sides = [node.left, *node.comparators]
      if any(map(_count, sides)) and any(LANEY.search(_name(s)) for s in sides): out.append((node.lineno, ast.unparse(node)))
  return out

def _derived(node:ast.BinOp) -> bool:
  k = node.right.args[0] if isinstance(node.right, ast.Call) and len(node.right.args) == 1 else node.right   # np.uint32(31)
  return isinstance(k, ast.Constant) and type(k.value) is int and k.value in DERIVED.get(type(node.op), ())

def lane_arithmetic(tree:ast.AST) -> list[tuple[int, str]]:
  """(line, source) of each mask, shift or division by a lane count's derived constant whose operands name a lane, wave
  or warp, or whose statement assigns to such a name."""
  out = []
  for stmt in ast.walk(tree):
    if not isinstance(stmt, ast.stmt): continue
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
    into = any(LANEY.search(_name(n)) for t in targets for n in ast.walk(t))
    # the statement's own expressions, not those of the statements nested in it (they are walked on their own)
    exprs = [v for f, v in ast.iter_fields(stmt) if isinstance(v, ast.expr)] + \
      [x for f, v in ast.iter_fields(stmt) if isinstance(v, list) for x in v if isinstance(x, ast.expr)]
    for node in (n for e in exprs for n in ast.walk(e)):
      if isinstance(node, ast.BinOp) and _derived(node) and (into or any(LANEY.search(_name(n)) for n in ast.walk(node))):
        out.append((node.lineno, ast.unparse(node)))
  return sorted(out)

def board_names(tree:ast.AST) -> list[tuple[int, str]]:
  """(line, literal) of each string constant that is a board's target name, docstrings aside."""
  docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
          and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
  return sorted((n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
          and id(n) not in docs and BOARD_NAME.match(n.value))

def sources():
  """(path relative to the repository, parsed tree) of every module of mockgpu but boards.py."""
  for d, _, files in os.walk(PKG):
    for f in sorted(files):
      rel = os.path.relpath(os.path.join(d, f), ROOT).replace(os.sep, "/")
      if f.endswith(".py") and rel != "mockgpu/boards.py":
        with open(os.path.join(d, f)) as fh: yield rel, ast.parse(fh.read())

def test_scan_finds_each_form():
  # the scan itself: each form it looks for is found, and the forms that are not lane counts are not
  src = ("def f(x, wave:int=32, *, lanes=64): pass\nWARP = 32\nStepper(code, lanes=32)\nok = self.wave == 64\n"
         "LANE_BYTES = 4\ndef g(wave:int): return wave == WAVE32\nx >> 32\n")
  assert [s for _, s in lane_literals(ast.parse(src))] == ["wave=32", "lanes=64", "WARP = 32", "lanes=32", "self.wave == 64"]
  src = ("self.laneid = self.lin & np.uint32(31)\nwarp = t >> 5\nnwarps = (tpc + 31) // 32\nx = lane % 64\n"
         "if w:\n  y = lane_id & 63\nbits = a & 31\nwarp = n // 8\nlane = self.lin % np.uint32(warp)\n")
  assert [s for _, s in lane_arithmetic(ast.parse(src))] == \
    ["self.lin & np.uint32(31)", "t >> 5", "(tpc + 31) // 32", "lane % 64", "lane_id & 63"]
  assert board_names(ast.parse('"""gfx1100 in a docstring"""\nif arch == "gfx1100": pass\nx = "sm_89"\ny = "gfx"\n')) == \
    [(2, "gfx1100"), (3, "sm_89")]

def test_no_lane_count_literal_outside_boards():
  found = {(rel, src): line for rel, tree in sources() for line, src in lane_literals(tree)}
  new = [f"{rel}:{line}: {src}" for (rel, src), line in found.items() if (rel, src) not in ALLOWED]
  assert not new, "lane counts spelled as literals (take them from the dispatch, the board record or a parameter):\n" + "\n".join(new)
  assert not (stale:=set(ALLOWED) - set(found)), f"allow-list entries that no longer match anything: {stale}"

def test_no_derived_lane_arithmetic_outside_boards():
  found = {(rel, src): line for rel, tree in sources() for line, src in lane_arithmetic(tree)}
  new = [f"{rel}:{line}: {src}" for (rel, src), line in found.items() if (rel, src) not in ARITHMETIC_ALLOWED]
  assert not new, "lane arithmetic spelling a lane count (take the warp or wave size from the dispatch or the board record):\n" + \
    "\n".join(new)
  assert not (stale:=set(ARITHMETIC_ALLOWED) - set(found)), f"allow-list entries that no longer match anything: {stale}"

def test_no_board_name_outside_boards():
  found = {(rel, name): line for rel, tree in sources() for line, name in board_names(tree)}
  new = [f"{rel}:{line}: {name!r}" for (rel, name), line in found.items() if (rel, name) not in BOARD_NAMES_ALLOWED]
  assert not new, "board names spelled outside mockgpu/boards.py:\n" + "\n".join(new)
  assert not (stale:=set(BOARD_NAMES_ALLOWED) - set(found)), f"allow-list entries that no longer match anything: {stale}"
