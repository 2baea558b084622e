"""The expression language of the semantics tables: what an instruction computes, written once, read by every backend.

A row's body is Python syntax: assignments separated by `;` (a bare expression means `d = <expression>`), over typed
operands (the sources a, b, c or names the row gives them, the destination's old value d, and per kind of instruction
the lane's mask bit `vcc`, its index `lane`, SCC `scc`, the wave's `exec` mask, the instruction's address `pc`, and
`ieee`, the wave's IEEE mode: a bool constant of the translation).
Statements run in order, so `vcc = (d < a) or (vcc and d == a)` reads the incoming `vcc` and writes the outgoing one.
Allowed: + - * & | ^ << >>, unary - and ~, `not`, one comparison at a time, `and`/`or` over bools, `x if cond else y`,
the casts u8..u64, i8..i64, f16, f32, f64 (value conversions), and the helpers of HELPERS. Constant subexpressions
(2**32, -2**31) are folded when a row is parsed.

Types follow numpy 2 (NEP 50): an operation on two typed values has numpy's promoted type, a Python literal takes the
type of the other operand, bool promotes to anything. The numpy backend renders a row almost as written and numpy
computes those types; the C backend renders the same row with every promotion, wrap-around and rounding spelled out,
so both compute the same bits. infer() gives each node its type; the backends walk the typed tree (E).
"""
from __future__ import annotations
import ast, functools, re
from dataclasses import dataclass
from typing import Callable
import numpy as np

INTS = ("u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64")
FLOATS = ("f16", "f32", "f64")
CASTS = INTS + FLOATS
INT, FLOAT = "int", "float"    # the weak types of Python literals
# the ISA's operand types and the value type a backend reads them as (b* are raw bits; bf16 is widened exactly to f32)
WIDTH = {"b16": 16, "u16": 16, "i16": 16, "f16": 16, "bf16": 16, "b32": 32, "u32": 32, "i32": 32, "f32": 32,
         "b64": 64, "u64": 64, "i64": 64, "f64": 64}
_VALUE = {"b16": "u16", "b32": "u32", "b64": "u64", "bf16": "f32"}
BITS = {"bool": 1, "u8": 8, "i8": 8, "u16": 16, "i16": 16, "f16": 16, "u32": 32, "i32": 32, "f32": 32, "u64": 64,
        "i64": 64, "f64": 64}

def value_type(isa:str) -> str:
  """The type an operand of ISA type isa (b32, bf16, ...) has as a value."""
  if isa not in WIDTH: raise TypeError(f"unknown operand type {isa}")
  return _VALUE.get(isa, isa)

def is_float(t:str) -> bool: return t in FLOATS or t == FLOAT
def is_int(t:str) -> bool: return t in INTS or t == INT
def is_weak(t:str) -> bool: return t in (INT, FLOAT)

def promote(a:str, b:str) -> str:
  """numpy 2's result type of an operation on values of types a and b."""
  if a == b: return a
  if is_weak(a) or is_weak(b):
    weak, strong = (a, b) if is_weak(a) else (b, a)
    if is_weak(strong): return FLOAT
    if strong == "bool": return "i64" if weak == INT else "f64"
    if weak == FLOAT and not is_float(strong): return "f64"
    return strong
  if a == "bool": return b
  if b == "bool": return a
  t = np.promote_types(np.dtype(_NP[a]), np.dtype(_NP[b]))
  return {v: k for k, v in _NP.items()}[t.name]

_NP = {"bool": "bool", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "i8": "int8", "i16": "int16",
       "i32": "int32", "i64": "int64", "f16": "float16", "f32": "float32", "f64": "float64"}

# *** helpers: the one registry of the row language's helpers ***

Form = Callable[[list[str], list[str], str], "str|None"]  # (rendered args, their types, the result type) -> code, or None

@dataclass
class Helper:
  """One helper of the row language. rule: its result type from the argument types (a callable) or a fixed type.
  numpy, c: its form in each backend (a Form; c gives None for argument types C has no form of), registered by the
  backend that renders it (backends/numpy.py, backends/c.py: the semantics import no backend). no_c: why the C
  backend has no form at all (its rows then run on numpy); a test checks every helper has both forms or this reason."""
  rule:object
  no_c:str|None = None
  numpy:Form|None = None
  c:Form|None = None

def _same(ts:list[str]) -> str: return ts[0]
def _promoted(ts:list[str]) -> str: return promote(ts[0], ts[1])

_RULES:dict[str, object] = {
  # float arithmetic that rounds once, and IEEE-mode min/max (a NaN operand yields the other)
  "fma": _same, "fma_rtz": _same, "fmax": _same,
  # RDNA4's OCP fp8 (E4M3) and bf8 (E5M2) bytes as f32 (exact)
  "fp8_f32": "f32", "bf8_f32": "f32", "fp8_pk_f32": "u64", "bf8_pk_f32": "u64", "f32_fp8": "u16", "f32_bf8": "u16",
  # gfx942's FNUZ fp8 (E4M3, bias 8) and bf8 (E5M2, bias 16)
  "fp8_fnuz_f32": "f32", "bf8_fnuz_f32": "f32", "f32_fp8_fnuz": "u16", "f32_bf8_fnuz": "u16",
  "fmin": _same, "fmed3": _same, "ldexp": _same, "quiet": _same,
  # a row's float result with a generated NaN made the hardware's default NaN (program.py adds it; backends/numpy_runtime)
  "gnan": _same,
  # RDNA4's IEEE 754-2019 minimumNumber/maximumNumber (a NaN operand yields the other, two NaNs the first quieted) and
  # minimum/maximum (a NaN operand yields a NaN), and v_med3_num
  "min_num": _same, "max_num": _same, "minimum754": _same, "maximum754": _same, "med3_num": _same,
  # transcendentals and rounding (computed exactly and rounded once, see backends/numpy_runtime.py)
  "exp2": _same, "log2": _same, "rcp": _same, "rsq": _same, "sqrt": _same, "sin_rev": _same, "cos_rev": _same,
  "floor": _same, "ceil": _same, "trunc": _same, "rint": _same, "fract": _same, "frexp_mant": _same,
  "frexp_exp": "i32", "div_fixup": _same, "div_scale": lambda ts: (ts[0], "bool"),
  "div_fmas": _same,
  # conversions: cvt_int(x, lo, hi) truncates toward zero, saturates to [lo, hi], NaN -> 0, as an i64
  "cvt_int": "i64", "trig_preop": "f64", "cvt_rtz_f16": "f16", "fbits16": "u32", "bits16": "u32", "rbf16": _same,
  "cmp_class": "bool", "clamp01": _same, "ftz": _same, "abs": _same, "isnan": "bool",
  # bits
  "brev32": "u32", "brev64": "u64", "clz": "u32", "ctz": "u32", "cls32": "u32", "clz64": "u32", "ctz64": "u32",
  "popcount": "u32", "sext": "i64", "bfe": "u32", "bfe64": "u64", "perm": "u32", "quadmask": _same, "wqm": _same,
  "r64": "u64", "max": _promoted, "min": _promoted,
  # CDNA's (semantics/cdna.py; their numpy forms are in backends/numpy_runtime.py and compiler/rdna/gfx9.py): GFX9's
  # IEEE-mode min/max, v_bitop3 over the instruction's truth table
  "fmax_gfx9": _same, "fmin_gfx9": _same, "bitop3": _same,
}
# why C has no form of a helper: its rows run on numpy only
_NO_C = {
  "fma_rtz": "rounding toward zero needs the exact sum's error (numpy_runtime.fma_rtz's TwoSum); the prelude has no such fma",
  "trig_preop": "the 1201 bits of 2/pi are a Python integer table (numpy_runtime.trig_preop); the prelude has no copy",
}
HELPERS:dict[str, Helper] = {name: Helper(rule, _NO_C.get(name)) for name, rule in _RULES.items()}

def register(backend:str, forms:dict[str, Form]):
  """A backend's forms of the helpers (backend: "numpy" or "c"), each name one of HELPERS; C gives no form of a helper
  whose no_c says why there is none."""
  for name, form in forms.items():
    helper = HELPERS.get(name)
    if helper is None: raise LangError(f"{backend} form of unknown helper {name}")
    if backend == "c" and helper.no_c is not None: raise LangError(f"C form of {name}, which has none: {helper.no_c}")
    setattr(helper, {"numpy": "numpy", "c": "c"}[backend], form)

# *** the typed tree ***

@dataclass(frozen=True, eq=False)
class E:
  """A typed expression. op: const (val: the value), var (val: name), input (val: what the backend reads: an
  operand or a special name), bin (val: + - * & | ^ << >>), neg, inv (~), not, cmp (val: < <= > >= == !=), and, or,
  if (args: cond, then, else), call (val: helper name), cast (to t)."""
  op:str
  t:str
  args:tuple = ()
  val:object = None

@dataclass(frozen=True)
class Stmt:
  targets:tuple[str, ...]
  value:E

class LangError(TypeError):
  """A row outside the language, or typed inconsistently."""

# *** parsing a row body ***

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
           ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

def parse(body:str) -> list[ast.stmt]:
  """A row body as Python statements, constants folded; a bare expression is `d = <expression>`."""
  try: tree = ast.parse(body.strip())
  except SyntaxError as e: raise LangError(f"{body!r}: {e}") from None
  stmts = tree.body
  if len(stmts) == 1 and isinstance(stmts[0], ast.Expr):
    stmts = [ast.Assign(targets=[ast.Name("d", ast.Store())], value=stmts[0].value, lineno=1)]
  for s in stmts:
    if not isinstance(s, ast.Assign) or len(s.targets) != 1: raise LangError(f"{body!r}: only assignments")
    s.value = _fold(s.value)
  return stmts

def _fold(node:ast.expr) -> ast.expr:
  """Evaluate subtrees of constants only (2**32, -2**31 + 1, 2.0**-24)."""
  for name, value in ast.iter_fields(node):
    if isinstance(value, ast.expr): setattr(node, name, _fold(value))
    elif isinstance(value, list): setattr(node, name, [_fold(v) if isinstance(v, ast.expr) else v for v in value])
  if isinstance(node, (ast.BinOp, ast.UnaryOp)) and all(isinstance(n, ast.Constant) for n in ast.iter_child_nodes(node)
                                                       if isinstance(n, ast.expr)):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not): return node
    return ast.Constant(eval(compile(ast.fix_missing_locations(ast.Expression(node)), "<row>", "eval"), {}))
  return node

def targets(stmt:ast.Assign) -> tuple[str, ...]:
  t = stmt.targets[0]
  if isinstance(t, ast.Name): return (t.id,)
  if isinstance(t, ast.Tuple) and all(isinstance(x, ast.Name) for x in t.elts): return tuple(x.id for x in t.elts)
  raise LangError("assignment to something other than names")

# *** typing ***

def infer(stmts:list[ast.stmt], env:dict[str, E]) -> tuple[list[Stmt], dict[str, E]]:
  """The statements as a typed tree, given each input name's typed expression; and the names' final values (a
  variable E of the type it was last assigned)."""
  scope = dict(env)
  out = []
  for s in stmts:
    value = _expr(s.value, scope)
    names = targets(s)
    types = value.t if isinstance(value.t, tuple) else (value.t,)
    if len(types) != len(names): raise LangError(f"{len(names)} names for {len(types)} values")
    out.append(Stmt(names, value))
    for n, t in zip(names, types): scope[n] = E("var", t, val=n)
  return out, scope

def _expr(node:ast.expr, scope:dict[str, E]) -> E:
  if isinstance(node, ast.Constant):
    v = node.value
    if isinstance(v, bool): return E("const", "bool", val=v)
    if isinstance(v, int): return E("const", INT, val=v)
    if isinstance(v, float): return E("const", FLOAT, val=v)
    raise LangError(f"constant {v!r}")
  if isinstance(node, ast.Name):
    if node.id not in scope: raise LangError(f"unknown name {node.id}")
    return scope[node.id]
  if isinstance(node, ast.BinOp):
    if type(node.op) not in _BINOPS: raise LangError(f"operator {type(node.op).__name__}")
    x, y = _expr(node.left, scope), _expr(node.right, scope)
    return binary(_BINOPS[type(node.op)], x, y)
  if isinstance(node, ast.UnaryOp):
    x = _expr(node.operand, scope)
    if isinstance(node.op, ast.Not): return E("not", _need(x, "bool"), (x,))
    if isinstance(node.op, ast.USub):
      if x.t == "bool": raise LangError("negating a bool")
      return E("neg", x.t, (x,))
    if isinstance(node.op, ast.Invert):
      if is_float(x.t): raise LangError("~ of a float")
      return E("inv", x.t, (x,))
    raise LangError(f"operator {type(node.op).__name__}")
  if isinstance(node, ast.Compare):
    if len(node.ops) != 1: raise LangError("chained comparison")
    x, y = _expr(node.left, scope), _expr(node.comparators[0], scope)
    promote(x.t, y.t)
    return E("cmp", "bool", (x, y), _CMPOPS[type(node.ops[0])])
  if isinstance(node, ast.BoolOp):
    vals = [_expr(v, scope) for v in node.values]
    for v in vals: _need(v, "bool")
    e = vals[0]
    for v in vals[1:]: e = E("and" if isinstance(node.op, ast.And) else "or", "bool", (e, v))
    return e
  if isinstance(node, ast.IfExp):
    c, x, y = _expr(node.test, scope), _expr(node.body, scope), _expr(node.orelse, scope)
    _need(c, "bool")
    return E("if", promote(x.t, y.t), (c, x, y))
  if isinstance(node, ast.Call):
    if not isinstance(node.func, ast.Name) or node.keywords: raise LangError("calls are by plain name")
    args = tuple(_expr(a, scope) for a in node.args)
    return call(node.func.id, args)
  raise LangError(f"{type(node).__name__} is not in the language")

def _need(e:E, t:str) -> str:
  if e.t != t: raise LangError(f"expected {t}, got {e.t}")
  return t

def binary(op:str, x:E, y:E) -> E:
  """A binary arithmetic or bitwise node, typed as numpy types it."""
  t = promote(x.t, y.t)
  if op in ("&", "|", "^", "<<", ">>") and is_float(t): raise LangError(f"{op} on {t}")
  if t == "bool" and op not in ("&", "|", "^"): raise LangError(f"{op} on bools")
  return E("bin", t, (x, y), op)

def call(name:str, args:tuple[E, ...]) -> E:
  """A cast or helper call node."""
  if name in CASTS:
    if len(args) != 1: raise LangError(f"{name}() takes one value")
    return cast(args[0], name)
  helper = HELPERS.get(name)
  if helper is None: raise LangError(f"unknown helper {name}")
  rule = helper.rule
  t = rule(list(a.t for a in args)) if callable(rule) else rule
  return E("call", t, args, name)

def cast(x:E, t:str) -> E:
  """x converted to type t (a no-op when it has that type; a constant becomes a typed constant)."""
  if x.t == t: return x
  if x.op == "const": return E("const", t, val=x.val)
  if t == "bool": raise LangError("cast to bool")
  return E("cast", t, (x,))

# *** rows ***

@dataclass(frozen=True)
class Row:
  """One instruction's meaning: dst is the ISA type of D (None: the row writes no D), srcs its sources' (name, ISA
  type), text the body as written and body its parsed statements. The body is parsed at its first use, not when the
  table is built: a family's tables hold some 800 rows and a kernel uses a few dozen (parsing them all took 50 ms of
  every process's import); tests/compiler/rdna/test_rdna_semantics.py parses every row."""
  name:str
  dst:str|None
  srcs:tuple[tuple[str, str], ...]
  text:str
  @functools.cached_property
  def body(self) -> tuple: return tuple(parse(self.text))
  @functools.cached_property
  def _assigns(self) -> frozenset[str]: return frozenset(n for s in self.body for n in targets(s))
  def assigns(self) -> frozenset[str]: return self._assigns
  @functools.cached_property
  def free(self) -> tuple[str, ...]: return tuple(_free_names(self))
  def source_types(self) -> tuple[str, ...]: return tuple(t for _, t in self.srcs)

def row(line:str) -> Row:
  """`NAME dst src... = body`: dst `-` when the row writes no D; a source `name:type` names it (default a, b, c)."""
  head, body = line.split("=", 1)
  name, dst, *srcs = head.split()
  named = []
  for i, s in enumerate(srcs):
    n, _, t = s.rpartition(":")
    value_type(t)
    named.append((n or "abc"[i], t))
  if dst != "-": value_type(dst)
  return Row(name, None if dst == "-" else dst, tuple(named), body.strip())

FAMILY = re.compile(r"\{([A-Z0-9_,]+)\}")

def table(text:str) -> dict[str, Row]:
  """Rows, one a line. A row written once for several types names them in braces, `MAX_{F16,F32} T T T = fmax(a, b)`:
  one row per suffix, each T its type (f16, f32)."""
  out = {}
  for line in text.strip().splitlines():
    if not line.strip() or line.lstrip().startswith("#"): continue
    head, body = line.split("=", 1)
    m = FAMILY.search(head)
    for suffix in (m.group(1).split(",") if m else [None]):
      h = head if suffix is None else FAMILY.sub(suffix, head).replace(" T", " " + suffix.lower()).replace(":T", ":" + suffix.lower())
      r = row(f"{h}={body}")
      out[r.name] = r
  return out

def free_names(r:Row) -> tuple[str, ...]:
  """The names a row reads before it assigns them: its inputs (walked once per row: every instruction's translation
  asks)."""
  return r.free

def _free_names(r:Row) -> list[str]:
  seen, out = set(), []
  for s in r.body:
    for node in ast.walk(s.value):
      if isinstance(node, ast.Name) and node.id not in seen | set(out) | set(HELPERS) | set(CASTS): out.append(node.id)
    seen |= set(targets(s))
  return out

def instance(r:Row, inputs:dict[str, E]) -> tuple[list[Stmt], dict[str, E]]:
  """The row's statements typed for these inputs (operand reads of the types this instruction has)."""
  return infer(list(r.body), inputs)
