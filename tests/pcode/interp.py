"""The pseudocode AST (parse.py) compiled to Python closures and evaluated for one lane (or once per wave).

State is an `Env`: variables by name (the registers S0 S1 S2 D0 D1 SCC VCC EXEC M0 ..., temporaries), the rounding
mode, and hooks for what a lane cannot hold by itself (other lanes' VGPRs, LDS memory). Registers are bit containers
(Python ints); a typed access (D0.f32, S0[31 : 16].f16, VCC.u64[laneId]) is a view of some of their bits, and a typed
write replaces only those bits, so a 16-bit result keeps the other half of its register, as the manual's
D0[15 : 0].f16 = ... reads. Integers are unbounded; typed reads and writes truncate (and sign-interpret for .iN), so
C's wrapping arithmetic falls out of the truncation at the typed write.

Anything this evaluator cannot give a meaning to raises `EvalError` naming it: the suite lists that instruction as
untestable with the message as the reason.
"""
from __future__ import annotations
import math, re
from fractions import Fraction
from pcode import numbers as N
from pcode.numbers import Float
from pcode.parse import parse

class EvalError(Exception):
  """The pseudocode uses something this evaluator does not model (the message says what)."""

class Loose(int):
  """Register bits some of which are an unspecified NaN: `fields` lists (lo, width, fmt) of those NaNs."""
  fields: tuple = ()
  def __new__(cls, v:int, fields:tuple):
    x = super().__new__(cls, v)
    x.fields = fields
    return x

def loose_fields(x) -> tuple: return x.fields if type(x) is Loose else ()

def with_fields(v:int, fields:tuple): return Loose(v, tuple(fields)) if fields else v

class Break(Exception): pass
class Return(Exception):
  def __init__(self, value): self.value = value

ROUND_MODES = {"ROUND_NEAREST_EVEN": 0, "ROUND_TOWARD_ZERO": 3}  # the MODE register's FP_ROUND encoding

class Env:
  """One evaluation's state. vars: name -> int (bits), Float, list (declared arrays) or a lambda."""
  __slots__ = ("vars", "vgpr", "mem", "sgpr")
  def __init__(self, vars:dict, vgpr=None, mem=None, sgpr=None):
    self.vars, self.vgpr, self.mem, self.sgpr = vars, vgpr, mem, sgpr
  @property
  def rtz(self) -> bool:
    m = self.vars.get("ROUND_MODE", 0)
    if m not in (0, 3): raise EvalError(f"rounding mode {m} (only nearest-even and toward-zero are modelled)")
    return m == 3

# *** types ***

TYPE = re.compile(r"(u|i|b|f|bf|fp)(\d+)$")

def type_width(t:str) -> int|None:
  m = TYPE.match(t)
  return int(m.group(2)) if m else None

def float_fmt(t:str|None) -> str|None:
  return t if t in N.FORMATS else None

def as_bits(v) -> int:
  """The bits of a value held in a container: an int as is, a Float as its encoding in its own format."""
  if isinstance(v, bool): return int(v)
  if isinstance(v, int): return v
  if isinstance(v, Float):
    if v.fmt is None: raise EvalError(f"the bits of an exact value {v} (no format)")
    bits, loose = N.encode(v, v.fmt)
    return Loose(bits, ((0, N.WIDTH[v.fmt], v.fmt),)) if loose else bits
  raise EvalError(f"the bits of {type(v).__name__} {v!r}")

def extract(v, lo:int, width:int):
  """Bits [lo, lo + width) of a container value, keeping unspecified-NaN fields that lie inside."""
  bits = as_bits(v)
  out = (bits >> lo) & ((1 << width) - 1)
  fields = []
  for flo, fw, fmt in loose_fields(bits):
    if flo >= lo and flo + fw <= lo + width: fields.append((flo - lo, fw, fmt))
    elif flo < lo + width and flo + fw > lo: raise EvalError("reads part of an unspecified NaN's bits")
  return with_fields(out, fields)

def view(bits, width:int, typ:str|None):
  """The typed value of `width` bits: an int (iN sign-interpreted) or a Float."""
  fmt = float_fmt(typ)
  if fmt is None and (typ is None or typ[0] in "ub"): return bits
  if fmt is None and typ[0] == "i":
    if type(bits) is Loose: raise EvalError("an unspecified NaN's bits read as an integer")
    return bits - (1 << width) if width and bits >> (width - 1) & 1 else bits
  if fmt is None: raise EvalError(f"unknown type .{typ}")
  if width != N.WIDTH[fmt]: raise EvalError(f".{typ} view of {width} bits")
  if (0, width, fmt) in loose_fields(bits): return Float(fmt, N.NAN, None)
  return N.decode(int(bits), fmt)

def to_bits(value, width:int, typ:str|None, env:Env):
  """`value` written into a place of `width` bits typed `typ`: (bits, unspecified-NaN fields)."""
  fmt = float_fmt(typ)
  if fmt is not None:
    if width != N.WIDTH[fmt]: raise EvalError(f".{typ} write of {width} bits")
    x = value if isinstance(value, Float) else Float(None, value)
    if isinstance(value, list): raise EvalError("an array written to a float place")
    bits, loose = N.encode(x, fmt, env.rtz)
    return bits, (((0, width, fmt),) if loose else ())
  if isinstance(value, Float):
    if value.fmt is not None and N.WIDTH[value.fmt] == width:  # a float moved into a bit place: its encoding
      bits = as_bits(value)
      return int(bits), loose_fields(bits)
    raise EvalError(f"a {value.fmt} value written to an integer place of {width} bits")
  if isinstance(value, bool): value = int(value)
  if not isinstance(value, int): raise EvalError(f"{type(value).__name__} written to a bit place")
  fields = tuple(f for f in loose_fields(value) if f[0] + f[1] <= width)
  return int(value) & ((1 << width) - 1), fields

# *** places (lvalues and typed rvalues) ***

class VarPlace:
  __slots__ = ("name",)
  def __init__(self, name): self.name = name
  def get(self, env):
    try: return env.vars[self.name]
    except KeyError: raise EvalError(f"{self.name} is read before it is set") from None
  def get_or_zero(self, env): return env.vars.get(self.name, 0)
  def put(self, env, v): env.vars[self.name] = v
  def read(self, env): return self.get(env)
  def write(self, env, v): self.put(env, v)

class ElemPlace:
  """An element of a declared array."""
  __slots__ = ("arr", "i")
  def __init__(self, arr, i): self.arr, self.i = arr, i
  def get(self, env):
    a = self.arr.get(env)
    if not 0 <= self.i < len(a): raise EvalError(f"array index {self.i} outside [0, {len(a)})")
    return a[self.i]
  get_or_zero = get
  def put(self, env, v):
    a = self.arr.get(env)
    if not 0 <= self.i < len(a): raise EvalError(f"array index {self.i} outside [0, {len(a)})")
    a[self.i] = v
  def read(self, env): return self.get(env)
  def write(self, env, v): self.put(env, v)

class BitsPlace:
  """Bits [lo, lo + width) of a container (a variable or array element), typed typ (None: plain bits)."""
  __slots__ = ("root", "lo", "width", "typ")
  def __init__(self, root, lo, width, typ): self.root, self.lo, self.width, self.typ = root, lo, width, typ
  def read(self, env):
    v = self.root.get(env)
    t = self.typ
    if self.lo == 0 and isinstance(v, Float) and t is not None and t == v.fmt: return v  # a float var read as itself
    if isinstance(v, list): raise EvalError("an array read as bits")
    return view(extract(v, self.lo, self.width), self.width, t)
  def write(self, env, value):
    bits, fields = to_bits(value, self.width, self.typ, env)
    old = self.root.get_or_zero(env)
    if isinstance(old, list): raise EvalError("bits written into an array")
    old = as_bits(old)
    mask = ((1 << self.width) - 1) << self.lo
    keep = [f for f in loose_fields(old) if f[0] + f[1] <= self.lo or f[0] >= self.lo + self.width]
    new = (int(old) & ~mask) | (bits << self.lo)
    self.root.put(env, with_fields(new, (*keep, *((lo + self.lo, w, fmt) for lo, w, fmt in fields))))

class ReversedPlace:
  """x[lo : hi] with lo < hi: the bits in reversed order (S_BREV: D0[31 : 0] = S0[0 : 31])."""
  __slots__ = ("inner",)
  def __init__(self, inner): self.inner = inner
  def read(self, env):
    bits, w = int(self.inner.read(env)), self.inner.width
    return int(f"{bits:0{w}b}"[::-1], 2)
  def write(self, env, value): raise EvalError("assignment to a bit-reversed slice")

class ValuePlace:
  """A computed value viewed as a place (for typed reads of expressions: (a + b).u32)."""
  __slots__ = ("value",)
  def __init__(self, value): self.value = value
  def get(self, env): return self.value
  get_or_zero = get
  def read(self, env): return self.value
  def put(self, env, v): raise EvalError("assignment to a computed value")
  write = put

class LanePlace:
  """VGPR[lane]: a lane's register file (other lanes' VGPRs, for cross-lane instructions)."""
  __slots__ = ("lane",)
  def __init__(self, lane): self.lane = lane

class RegPlace:
  """VGPR[lane][reg] / SGPR[reg]: one 32-bit register through the Env's hooks."""
  __slots__ = ("file", "lane", "reg")
  def __init__(self, file, lane, reg): self.file, self.lane, self.reg = file, lane, reg
  def hook(self, env):
    h = env.vgpr if self.file == "v" else env.sgpr
    if h is None: raise EvalError(f"{'VGPR' if self.file == 'v' else 'SGPR'}[...] (register-file access is not modelled here)")
    return h
  def get(self, env): return self.hook(env).read(self.lane, self.reg)
  get_or_zero = get
  def put(self, env, v): self.hook(env).write(self.lane, self.reg, int(as_bits(v)) & 0xffffffff)
  def read(self, env): return self.get(env)
  def write(self, env, v): self.put(env, v)

class MemPlace:
  """MEM[addr]: bytes of the Env's memory, typed by the field that follows."""
  __slots__ = ("addr",)
  def __init__(self, addr): self.addr = addr

class MemTyped:
  __slots__ = ("addr", "typ", "width")
  def __init__(self, addr, typ, width): self.addr, self.typ, self.width = addr, typ, width
  def read(self, env):
    if env.mem is None: raise EvalError("MEM[...] (no memory model here)")
    return view(env.mem.read(self.addr, self.width // 8), self.width, self.typ)
  def write(self, env, value):
    if env.mem is None: raise EvalError("MEM[...] (no memory model here)")
    bits, fields = to_bits(value, self.width, self.typ, env)
    env.mem.write(self.addr, self.width // 8, bits, fields)

def retype(p, typ:str):
  """place.typ: a typed view of a place."""
  w = type_width(typ)
  if w is None: raise EvalError(f"unknown type .{typ}")
  if isinstance(p, MemPlace): return MemTyped(p.addr, typ, w)
  if isinstance(p, (VarPlace, ElemPlace, ValuePlace, RegPlace)): return BitsPlace(p, 0, w, typ)
  if isinstance(p, BitsPlace):
    if p.typ is None: return BitsPlace(p.root, p.lo, p.width if p.width < w else w, typ) if p.width <= w else BitsPlace(p.root, p.lo, w, typ)
    return BitsPlace(p.root, p.lo, min(p.width, w), typ)
  if isinstance(p, ReversedPlace): return _typed_value(p, typ)
  raise EvalError(f"a .{typ} view of {type(p).__name__}")

class _typed_value:
  __slots__ = ("inner", "typ")
  def __init__(self, inner, typ): self.inner, self.typ = inner, typ
  def read(self, env): return view(self.inner.read(env), type_width(self.typ), self.typ)
  def write(self, env, v): raise EvalError("assignment to a computed value")

def fast_typed_read(name:str, lo:int, width:int, typ:str, slow):
  """NAME.type / NAME[hi : lo].type when NAME holds plain bits: a shift and a mask (the general place otherwise)."""
  mask, fmt, signed = (1 << width) - 1, float_fmt(typ), typ[0] == "i"
  if fmt is not None and N.WIDTH[fmt] != width: return slow
  def read(env):
    v = env.vars.get(name)
    if type(v) is not int: return slow(env)
    b = (v >> lo) & mask
    if fmt is not None: return N.decode(b, fmt)
    return b - (1 << width) if signed and b >> (width - 1) else b
  return read

def fast_typed_write(name:str, width:int, typ:str, fv, fp):
  """NAME.type = value when NAME holds plain bits and the value is a number without unspecified-NaN bits."""
  mask = (1 << width) - 1
  def write(env):
    value, old = fv(env), env.vars.get(name, 0)
    if type(old) is not int: return fp(env).write(env, value)
    bits, fields = to_bits(value, width, typ, env)
    if fields: return fp(env).write(env, value)
    env.vars[name] = (old & ~mask) | bits
  return write

def index_place(p, i:int, env:Env):
  """p[i]: an array element, a lane's register file, or one bit."""
  if isinstance(p, (VarPlace, ElemPlace)):
    cur = p.get_or_zero(env)
    if isinstance(cur, list): return ElemPlace(p, i)
    return BitsPlace(p, i, 1, None)
  if isinstance(p, BitsPlace):
    if i < 0 or i >= p.width: raise EvalError(f"bit {i} of a {p.width}-bit value")
    return BitsPlace(p.root, p.lo + i, 1, None)
  if isinstance(p, ValuePlace): return BitsPlace(p, i, 1, None)
  if isinstance(p, LanePlace): return RegPlace("v", p.lane, i)
  raise EvalError(f"indexing {type(p).__name__}")

def slice_place(p, hi:int, lo:int):
  if hi < lo: return ReversedPlace(slice_place(p, lo, hi))
  if isinstance(p, (VarPlace, ElemPlace, ValuePlace, RegPlace)): return BitsPlace(p, lo, hi - lo + 1, None)
  if isinstance(p, BitsPlace): return BitsPlace(p.root, p.lo + lo, hi - lo + 1, None)
  raise EvalError(f"slicing {type(p).__name__}")

# *** values: arithmetic ***

def truthy(v) -> bool:
  if isinstance(v, Float): return not (v.v == 0)
  if type(v) is Loose: raise EvalError("an unspecified NaN's bits used as a condition")
  return bool(v)

def to_float(v) -> Float:
  if isinstance(v, Float): return v
  if isinstance(v, (int, bool)): return Float(None, Fraction(int(v)))
  raise EvalError(f"{type(v).__name__} in float arithmetic")

def check_int(v):
  if type(v) is Loose: raise EvalError("an unspecified NaN's bits used in integer arithmetic")
  if isinstance(v, bool): return int(v)
  if not isinstance(v, int): raise EvalError(f"{type(v).__name__} {v!r} in integer arithmetic")
  return v

def fop(op:str, a:Float, b:Float, env:Env) -> Float:
  """a op b for + - * /: IEEE special cases, then the exact result rounded once to the operation's format."""
  fmt = N.wider(a.fmt, b.fmt)
  x, y = a.v, b.v
  if a.is_nan() or b.is_nan(): return Float(fmt, N.NAN)
  rtz = env.rtz
  if fmt is not None and not rtz and isinstance(x, float) and isinstance(y, float) and not (op == "/" and y == 0):
    r = x + y if op == "+" else x - y if op == "-" else x * y if op == "*" else x / y
    if fmt == "f64" or r != r: return Float(fmt, r if r == r else N.NAN)
    return N.rounded(fmt, r)  # f64 then fmt: innocuous double rounding (numbers.py)
  ex, ey = N.exact(a), N.exact(b)
  if isinstance(ex, float) or isinstance(ey, float) or (op == "/" and ey == 0):  # infinities, division by zero
    fx, fy = token(a), token(b)
    if op == "/" and fy == 0:
      if fx == 0: return Float(fmt, N.NAN)
      return Float(fmt, math.copysign(N.INF, fx * math.copysign(1.0, fy)))
    r = fx + fy if op == "+" else fx - fy if op == "-" else fx * fy if op == "*" else fx / fy
    return Float(fmt, N.NAN) if r != r else Float(fmt, r) if math.isinf(r) else Float(fmt, 0.0 * r)
  r = ex + ey if op == "+" else ex - ey if op == "-" else ex * ey if op == "*" else ex / ey
  if r == 0:  # the sign of an exact zero result, as IEEE gives it
    neg = (N.signbit(a) and N.signbit(b)) if op == "+" else (N.signbit(a) and not N.signbit(b)) if op == "-" else N.signbit(a) != N.signbit(b)
    if op in "+-" and rtz is False and (float(ex) != 0 or float(ey) != 0): neg = False
    return Float(fmt, -0.0 if neg else 0.0) if fmt else Float(None, -0.0 if neg else 0.0)
  return N.rounded(fmt, r, rtz) if fmt else Float(None, r)

def token(x:Float) -> float:
  """A stand-in for x with its sign, zeroness and infiniteness (1.0 for a finite nonzero number): with an infinite
  operand, that is all an IEEE result depends on, and a float() of an exact tiny value would underflow to zero."""
  v = x.v
  if isinstance(v, float) and (math.isinf(v) or v == 0): return v
  return 1.0 if v > 0 else -1.0

def fcmp(op:str, a:Float, b:Float) -> int:
  if a.is_nan() or b.is_nan(): return int(op == "!=")
  x, y = a.v, b.v
  if op == "<": return int(x < y)
  if op == "<=": return int(x <= y)
  if op == ">": return int(x > y)
  if op == ">=": return int(x >= y)
  if op == "==": return int(x == y)
  if op == "!=": return int(x != y)
  if op == "<>": return int(x < y or x > y)
  raise EvalError(f"float comparison {op}")

INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "&": lambda a, b: a & b,
           "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
           "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
           ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
           "<>": lambda a, b: int(a != b), "%": lambda a, b: a % b,
           "/": lambda a, b: abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)}

class Denorm:
  """DENORM.fN: `x == DENORM.f32` asks whether x is a subnormal number of that format."""
  def __init__(self, fmt): self.fmt = fmt

def is_denorm(x, fmt:str) -> bool:
  if not isinstance(x, Float) or x.is_nan() or math.isinf(x.v) or x.v == 0: return False
  _, m, bias = N.fields(fmt)
  return abs(x.v) < Fraction(2) ** (1 - bias)

def binop(op:str, a, b, env:Env):
  if isinstance(b, Denorm) or isinstance(a, Denorm):
    x, d = (a, b) if isinstance(b, Denorm) else (b, a)
    r = is_denorm(x, d.fmt)
    if op == "==": return int(r)
    if op in ("!=", "<>"): return int(not r)
    raise EvalError(f"DENORM with {op}")
  if op == "**": return power(a, b)
  if isinstance(a, Float) or isinstance(b, Float):
    a, b = to_float(a), to_float(b)
    if op in "+-*/": return fop(op, a, b, env)
    return fcmp(op, a, b)
  a, b = check_int(a), check_int(b)
  if op in ("<<", ">>") and b < 0: raise EvalError(f"shift by a negative count {b}")
  if op in ("/", "%") and b == 0: raise EvalError("integer division by zero")
  try: return INT_OPS[op](a, b)
  except KeyError: raise EvalError(f"operator {op}") from None

def power(a, b):
  """x ** n: exact (2.0F ** 32 and S0.f32 * 2.0F ** S1.i32 mean a scale by a power of two, so the power is not rounded
  to the base's format, where 2 ** 200 would be infinite: readings.py, 'power of two')."""
  if isinstance(b, Float):
    if not (isinstance(b.v, (int, Fraction)) or float(b.v).is_integer()): raise EvalError("a non-integer power")
    b = int(b.v)
  b = check_int(b)
  base = to_float(a)
  if base.is_nan() or isinstance(base.v, float) and math.isinf(base.v): raise EvalError("a power of inf or NaN")
  x = Fraction(N.exact(base))
  if abs(x) == 2 and abs(b) > POWER_LIMIT: b = POWER_LIMIT if b > 0 else -POWER_LIMIT
  return Float(None, x ** b)

# 2**n for |n| beyond this scales any finite float64 (2**-1074 .. 2**1024) past every format's range, so the rounded
# product is the same as with n = +-POWER_LIMIT (and 2**(2**31) as an exact integer would not fit in memory)
POWER_LIMIT = 2400

def negate(v):
  if isinstance(v, Float):
    if v.is_nan(): return Float(v.fmt, N.NAN, None if v.nan is None else v.nan ^ (1 << (N.WIDTH[v.fmt] - 1)))
    return Float(v.fmt, -v.v)
  return -check_int(v)

# *** compiling ***

_compiled:dict[str, "Program"] = {}

class Program:
  """A compiled pseudocode text: run(env) executes it."""
  def __init__(self, text:str, calls:dict|None=None):
    self.text, self.calls = text, calls or {}
    self.ast = parse(text)
    self.body = Compiler(self).block(self.ast)
    self.d0_type = first_typed_write(self.ast, "D0")
  def run(self, env:Env):
    try: self.body(env)
    except Return: raise EvalError("return outside a lambda") from None
    except Break: raise EvalError("break outside a loop") from None

def first_typed_write(stmts, name:str) -> str|None:
  for s in walk_statements(stmts):
    if s[0] == "assign":
      t = s[2]
      if t[0] == "field" and t[1] == ("name", name): return t[2]
      if t[0] == "field" and t[1][0] == "slice" and t[1][1] == ("name", name): return t[2]
  return None

def walk_statements(stmts):
  for s in stmts:
    yield s
    if s[0] == "if":
      for _, b in s[1]: yield from walk_statements(b)
      if s[2]: yield from walk_statements(s[2])
    elif s[0] == "for": yield from walk_statements(s[4])
    elif s[0] == "block": yield from walk_statements(s[1])

def calls_for(pcode:dict) -> dict[str, str]:
  """The instruction functions a family's pseudocode may call (v_min_f32(a, b), v_sad_u8(...)): lower-case names
  without the encoding suffix -> pseudocode."""
  out = {}
  for op, text in pcode.items():
    out.setdefault(re.sub(r"_e(32|64)$", "", op.name.lower()), text)
  return out

def program(text:str, calls:dict|None=None) -> Program:
  key = text if calls is None else (text, id(calls))
  if (p:=_compiled.get(key)) is None: p = _compiled[key] = Program(text, calls)
  return p

class Compiler:
  def __init__(self, prog:Program): self.prog = prog

  def block(self, stmts):
    fns = [self.stmt(s) for s in stmts]
    if len(fns) == 1: return fns[0]
    def run(env):
      for f in fns: f(env)
    return run

  def stmt(self, s):
    kind = s[0]
    if kind == "assign": return self.assign(s[1], s[2], s[3])
    if kind == "expr":
      e = self.expr(s[1])
      return lambda env: (e(env), None)[1]
    if kind == "block": return self.block(s[1])
    if kind == "if":
      arms = [(self.cond(c), self.block(b)) for c, b in s[1]]
      other = self.block(s[2]) if s[2] is not None else None
      def run_if(env):
        for c, b in arms:
          if c(env): return b(env)
        if other is not None: other(env)
      return run_if
    if kind == "for": return self.for_loop(*s[1:])
    if kind == "declare": return self.declare(*s[1:])
    if kind == "break":
      def brk(env): raise Break()
      return brk
    if kind == "return":
      e = self.expr(s[1])
      def ret(env): raise Return(e(env))
      return ret
    raise EvalError(f"statement {kind}")

  def cond(self, e):
    f = self.expr(e)
    return lambda env: truthy(f(env))

  def for_loop(self, var, lo, hi, body):
    flo, fhi, fb = self.expr(lo), self.expr(hi), self.block(body)
    def run(env):
      a, b = check_int(flo(env)), check_int(fhi(env))
      for i in range(a, b + 1):
        env.vars[var] = i
        try: fb(env)
        except Break: break
    return run

  def declare(self, name, width, letter, count):
    fcount = self.expr(count) if count is not None else None
    def zero():
      if letter == "F": return N.decode(0, {16: "f16", 32: "f32", 64: "f64"}[width])
      return 0
    def run(env):
      if name == "S" and count is not None: env.vars[name] = [env.vars[f"S{i}"] for i in range(3)]  # S[i]: source i
      elif name == "CVT_OFF_TABLE": env.vars[name] = [N.rounded("f32", Fraction(i - 16 if i >= 8 else i, 16)) for i in range(16)]
      elif fcount is not None: env.vars[name] = [zero() for _ in range(check_int(fcount(env)))]
      elif name not in env.vars: env.vars[name] = zero()
    return run

  def assign(self, op, target, value):
    fv = self.expr(value)
    if target[0] == "concat": return self.assign_concat(target[1], fv)
    if target[0] == "name" and op == "=":
      name = target[1]
      if name == "ROUND_MODE" or name in ("SCC",):
        def set_special(env):
          v = fv(env)
          env.vars[name] = int(truthy(v)) if name == "SCC" else check_int(v)
        return set_special
      if value[0] == "lambda":
        lam = fv
        return lambda env: env.vars.__setitem__(name, lam(env))
    if target[0] == "field" and target[1][0] == "name" and target[1][1] in STATUS_REGISTERS and op == "=":
      key = f"{target[1][1]}.{target[2]}"  # a status flag (TRAPSTS.INVALID): kept in the state, not a compared result
      return lambda env: env.vars.__setitem__(key, check_int(fv(env)))
    fp = self.place(target)
    if op == "=" and target[0] == "field" and target[1][0] == "name" and type_width(target[2]) \
       and target[1][1] not in ("EXEC_LO", "VCC_LO", "VGPR", "SGPR", "MEM"):
      return fast_typed_write(target[1][1], type_width(target[2]), target[2], fv, fp)
    if op == "=": return lambda env: fp(env).write(env, fv(env))
    bop = op[:-1]
    def update(env):
      p = fp(env)
      p.write(env, binop(bop, p.read(env), fv(env), env))
    return update

  def assign_concat(self, parts, fv):
    """{ a, b, ... } = v: the last part gets the low bits (its width from its type)."""
    places = [self.place(p) for p in parts]
    widths = []
    for p in parts:
      if p[0] != "field" or type_width(p[2]) is None: raise EvalError("a concatenation target without a width")
      widths.append(type_width(p[2]))
    def run(env):
      v = check_int(fv(env))
      for p, w in zip(reversed(places), reversed(widths)):
        p(env).write(env, v & ((1 << w) - 1))
        v >>= w
    return run

  # places
  def place(self, e):
    kind = e[0]
    if kind == "name":
      name = e[1]
      if name == "VGPR": return lambda env: "VGPR"
      if name == "SGPR": return lambda env: "SGPR"
      if name == "MEM": return lambda env: "MEM"
      if name == "EXEC_LO":
        p = VarPlace("EXEC")
        return lambda env: BitsPlace(p, 0, 32, None)
      if name == "VCC_LO":
        p = VarPlace("VCC")
        return lambda env: BitsPlace(p, 0, 32, None)
      p = VarPlace(name)
      return lambda env: p
    if kind == "field":
      base, t = e[1], e[2]
      if type_width(t) is None: return self.value_place(e)
      fb = self.place(base) if self.is_place(base) else self.value_place(base)
      return lambda env: retype(fb(env), t)
    if kind == "index":
      fb, fi = self.place(e[1]) if self.is_place(e[1]) else self.value_place(e[1]), self.expr(e[2])
      def idx(env):
        b, i = fb(env), check_int(fi(env))
        if b == "VGPR": return LanePlace(i)
        if b == "SGPR": return RegPlace("s", None, i)
        if b == "MEM": return MemPlace(i)
        return index_place(b, i, env)
      return idx
    if kind == "slice":
      fb, fh, fl = self.place(e[1]) if self.is_place(e[1]) else self.value_place(e[1]), self.expr(e[2]), self.expr(e[3])
      return lambda env: slice_place(fb(env), check_int(fh(env)), check_int(fl(env)))
    if kind == "part":
      fb, fs, fw = self.place(e[1]) if self.is_place(e[1]) else self.value_place(e[1]), self.expr(e[2]), self.expr(e[3])
      def part(env):
        s, w = check_int(fs(env)), check_int(fw(env))
        return slice_place(fb(env), s + w - 1, s)
      return part
    return self.value_place(e)

  def is_place(self, e) -> bool:
    if e[0] == "name": return True
    if e[0] in ("field", "index", "slice", "part"): return self.is_place(e[1]) if e[0] != "field" or type_width(e[2]) else False
    return False

  def value_place(self, e):
    f = self.expr(e)
    return lambda env: ValuePlace(f(env))

  # expressions
  def expr(self, e):
    kind = e[0]
    if kind == "num":
      v = e[1]
      return lambda env: v
    if kind == "float":
      x = N.rounded(e[2], e[1])
      return lambda env: x
    if kind == "name": return self.name(e[1])
    if kind in ("index", "slice", "part"):
      fp = self.place(e)
      return lambda env: fp(env).read(env)
    if kind == "field": return self.field(e)
    if kind == "un": return self.unary(e[1], self.expr(e[2]))
    if kind == "bin":
      op = e[1]
      fa, fb = self.expr(e[2]), self.expr(e[3])
      if op == "&&": return lambda env: int(truthy(fa(env)) and truthy(fb(env)))
      if op == "||": return lambda env: int(truthy(fa(env)) or truthy(fb(env)))
      return lambda env: binop(op, fa(env), fb(env), env)
    if kind == "cond":
      fc, fa, fb = self.cond(e[1]), self.expr(e[2]), self.expr(e[3])
      return lambda env: fa(env) if fc(env) else fb(env)
    if kind == "cast": return self.cast(e[1], e[2], self.expr(e[3]))
    if kind == "concat": return self.concat(e[1])
    if kind == "call": return self.call(e[1], [self.expr(a) for a in e[2]])
    if kind == "lambda": return self.lambda_(e[1], e[2])
    raise EvalError(f"expression {kind}")

  def name(self, name:str):
    if name in CONSTANTS:
      c = CONSTANTS[name]
      return lambda env: c
    if name in ROUND_MODES:
      m = ROUND_MODES[name]
      return lambda env: m
    if name == "ROUND_MODE": return lambda env: env.vars.get("ROUND_MODE", 0)
    if name in ("EXEC_LO", "VCC_LO"):
      full = name[:-3]
      return lambda env: env.vars[full] & 0xffffffff
    def get(env):
      try: return env.vars[name]
      except KeyError: raise EvalError(f"{name} (not an input this evaluator provides)") from None
    return get

  def field(self, e):
    base, t = e[1], e[2]
    if base[0] == "name" and base[1] in ("DENORM",):
      fmt = float_fmt(t)
      d = Denorm(fmt)
      return lambda env: d
    if base[0] == "name" and base[1] in ("NAN", "INF") and float_fmt(t):
      fmt = float_fmt(t)
      x = Float(fmt, N.NAN) if base[1] == "NAN" else Float(fmt, N.INF)
      return lambda env: x
    if base[0] == "name" and base[1] == "WAVE_MODE":
      if t != "IEEE": raise EvalError(f"WAVE_MODE.{t}")
      return lambda env: env.vars.get("WAVE_MODE_IEEE", 1)
    if base[0] == "un" and base[1] in "+-" and base[2][0] == "name" and base[2][1] == "INF":
      x = Float(float_fmt(t), -N.INF if base[1] == "-" else N.INF)
      return lambda env: x
    if type_width(t) is None: raise EvalError(f"field .{t}")
    fp = self.place(e)
    slow = lambda env: fp(env).read(env)
    if base[0] == "name" and base[1] not in ("EXEC_LO", "VCC_LO", "VGPR", "SGPR", "MEM"):
      return fast_typed_read(base[1], 0, type_width(t), t, slow)
    if base[0] == "slice" and base[1][0] == "name" and base[2][0] == base[3][0] == "num" and base[2][1] >= base[3][1] \
       and base[1][1] not in ("EXEC_LO", "VCC_LO"):
      return fast_typed_read(base[1][1], base[3][1], min(base[2][1] - base[3][1] + 1, type_width(t)), t, slow)
    return slow

  def unary(self, op, f):
    if op == "-": return lambda env: negate(f(env))
    if op == "+": return f
    if op == "!": return lambda env: int(not truthy(f(env)))
    if op == "~": return lambda env: ~check_int(f(env))
    raise EvalError(f"unary {op}")

  def cast(self, width, letter, f):
    if letter in ("F", "BF"):
      fmt = "bf16" if letter == "BF" else {16: "f16", 32: "f32", 64: "f64"}.get(width)
      if fmt is None: raise EvalError(f"{width}'F")
      def fcast(env):
        v = f(env)
        if isinstance(v, Float): return recode(v, fmt, env)
        return view(check_int(v) & ((1 << width) - 1), width, fmt)  # an integer literal's bits: 32'F(0xffc00000)
      return fcast
    def icast(env):
      v = f(env)
      if isinstance(v, Float): raise EvalError(f"a float cast to {width}'{letter}")
      v = check_int(v) & ((1 << width) - 1)
      return v - (1 << width) if letter == "I" and v >> (width - 1) & 1 else v
    return icast

  def concat(self, parts):
    """{ a, b }: a in the high bits; each part's width from its type or slice."""
    fs = [(self.expr(p), self.width_of(p)) for p in parts]
    def run(env):
      out = 0
      for f, w in fs:
        v = f(env)
        if isinstance(v, Float): v = as_bits(v)
        out = (out << w) | (check_int(v) & ((1 << w) - 1))
      return out
    return run

  def width_of(self, e) -> int:
    if e[0] == "field" and type_width(e[2]): return type_width(e[2])
    if e[0] == "slice" and e[2][0] == "num" and e[3][0] == "num": return abs(e[2][1] - e[3][1]) + 1
    if e[0] == "un": return self.width_of(e[2])
    if e[0] == "num": return e[3]
    if e[0] == "cast": return e[1]
    if e[0] == "index": return 1
    if e[0] == "call" and e[1] in ("SAT8", "f32_to_fp8", "f32_to_bf8"): return 8
    raise EvalError("a concatenation part without a width")

  def lambda_(self, params, body):
    fb = self.block(body[1]) if body[0] == "block" else self.expr(body)
    is_block = body[0] == "block"
    def make(env):
      def call(env2, args):
        saved = {p: env2.vars.get(p, _MISSING) for p in params}
        for p, a in zip(params, args): env2.vars[p] = a
        try:
          if not is_block: return fb(env2)
          try: fb(env2)
          except Return as r: return r.value
          raise EvalError("a lambda block without return")
        finally:
          for p, v in saved.items():
            if v is _MISSING: env2.vars.pop(p, None)
            else: env2.vars[p] = v
      return Lambda(call)
    return make

  def call(self, name, fargs):
    if name in BUILTINS:
      fn = BUILTINS[name]
      return lambda env: fn(env, *[a(env) for a in fargs])
    if re.match(r"[vs]_[a-z0-9_]+$", name):
      calls = self.prog.calls
      callee = calls.get(name)
      return lambda env: call_instruction(name, callee, calls, env, [a(env) for a in fargs])
    def dyn(env):
      f = env.vars.get(name)
      if not isinstance(f, Lambda): raise EvalError(f"function {name}")
      return f.fn(env, [a(env) for a in fargs])
    return dyn

_MISSING = object()

class Lambda:
  def __init__(self, fn): self.fn = fn

def recode(v:Float, fmt:str, env:Env) -> Float:
  """N'F(x) of a float: the same number in another format (rounded once when narrowing); a NaN keeps its sign and
  payload, so the manual's isSignalNAN(64'F(S0.f32)) classifies the operand itself."""
  if v.is_nan():
    if v.nan is None or v.fmt is None: return Float(fmt, N.NAN)
    return Float(fmt, N.NAN, v.nan if v.fmt == fmt else N.nan_convert(v.nan, v.fmt, fmt))
  return N.rounded(fmt, v.v, env.rtz)

def call_instruction(name:str, text:str|None, calls:dict, env:Env, args:list):
  """v_min_f32(a, b) and friends: another instruction's pseudocode with S0, S1, S2 bound to the arguments; the value
  is its D0 as that pseudocode types it."""
  if name in INSTRUCTION_FUNCTIONS: return INSTRUCTION_FUNCTIONS[name](env, *args)
  if text is None: raise EvalError(f"{name} (no pseudocode for it in this family)")
  prog = program(text, calls)
  vars = {"WAVE_MODE_IEEE": env.vars.get("WAVE_MODE_IEEE", 1), "ROUND_MODE": env.vars.get("ROUND_MODE", 0),
          "D0": 0, "laneId": env.vars.get("laneId", 0)}
  for i, a in enumerate(args): vars[f"S{i}"] = as_bits(a)
  sub = Env(vars, env.vgpr, env.mem, env.sgpr)
  prog.run(sub)
  t = prog.d0_type
  d0 = sub.vars["D0"]
  if t is None: return d0
  return BitsPlace(VarPlace("D0"), 0, type_width(t), t).read(sub)

# *** functions ***

def fl(x) -> Float:
  if not isinstance(x, Float): raise EvalError(f"{x!r} where a float is expected")
  return x

def is_nan(env, x): return int(fl(x).is_nan())
def is_signal(env, x):
  x = fl(x)
  return int(x.is_nan() and x.nan is not None and not N.is_quiet(x.nan, x.fmt))
def is_quiet_nan(env, x):
  x = fl(x)
  return int(x.is_nan() and (x.nan is None or N.is_quiet(x.nan, x.fmt)))

def quieted(env, x):
  x = fl(x)
  if not x.is_nan() or x.nan is None: return x
  _, m, _ = N.fields(x.fmt)
  return Float(x.fmt, N.NAN, x.nan | 1 << (m - 1))

def fabs(env, x):
  if isinstance(x, Float):
    if x.is_nan(): return Float(x.fmt, N.NAN, None if x.nan is None else x.nan & ~(1 << (N.WIDTH[x.fmt] - 1)))
    return Float(x.fmt, abs(x.v))
  return abs(check_int(x))

def sign(env, x):
  if isinstance(x, Float): return N.signbit(x)
  return int(check_int(x) < 0)

def exponent(env, x):
  """The biased exponent field of x in its format (0 for zero and subnormals, all ones for inf and NaN)."""
  x = fl(x)
  e, m, _ = N.fields(x.fmt)
  return (int(as_bits(x)) >> m) & ((1 << e) - 1)

def mantissa(env, x):
  """frexp's significand: x / 2**e with 0.5 <= |result| < 1 (x itself for zero)."""
  x = fl(x)
  if x.is_nan() or math.isinf(x.v) or x.v == 0: return x
  m, _ = math.frexp(float(x.v))
  return N.rounded(x.fmt, m)

def unary_float(fn):
  def run(env, x):
    x = fl(x)
    if x.is_nan(): return Float(x.fmt, N.NAN)
    if math.isinf(x.v): return Float(x.fmt, fn(x.v))
    return Float(x.fmt, fn(x.v)) if isinstance(x.v, float) else N.rounded(x.fmt, fn(x.v))
  return run

def f_trunc(v):
  if isinstance(v, float) and math.isinf(v): return v
  t = float(math.trunc(v))
  return math.copysign(t, float(v)) if t == 0 else t

def f_floor(v):
  if isinstance(v, float) and math.isinf(v): return v
  t = float(math.floor(v))
  return math.copysign(t, float(v)) if t == 0 and float(v) == 0 else t

def fract(env, x):
  x = fl(x)
  return fop("-", x, Float(x.fmt, f_floor(x.v)), env)

def is_even(env, x):
  x = fl(x)
  if x.is_nan() or math.isinf(x.v): return 0
  v = Fraction(x.v)
  return int(v.denominator == 1 and v.numerator % 2 == 0)

def fma(env, a, b, c, scale:int=0):
  """a * b + c rounded once (exact through Fractions), with IEEE's special cases."""
  a, b, c = fl(a), fl(b), fl(c)
  fmt = N.wider(N.wider(a.fmt, b.fmt), c.fmt)
  if a.is_nan() or b.is_nan() or c.is_nan(): return Float(fmt, N.NAN)
  ea, eb, ec = N.exact(a), N.exact(b), N.exact(c)
  if any(isinstance(v, float) for v in (ea, eb, ec)):  # infinities
    p = float(ea) * float(eb) if not ((ea == 0 and isinstance(eb, float)) or (eb == 0 and isinstance(ea, float))) else N.NAN
    r = p + float(ec) if p == p else p
    return Float(fmt, N.NAN) if r != r else N.rounded(fmt, r)
  r = ea * eb + ec
  if r == 0:
    prod_neg = N.signbit(a) != N.signbit(b)
    if ea * eb == 0 and ec == 0: neg = prod_neg and N.signbit(c)  # +-0 * x + +-0: IEEE's sign of an exact zero sum
    else: neg = False
    return Float(fmt, -0.0 if neg else 0.0)
  return N.rounded(fmt, r * Fraction(2) ** scale, env.rtz)

def fma_scaled(env, a, b, c, n):
  """fmaScaled(a, b, c, n), a reading's function: 2**n * (a * b + c) rounded once (readings.OVERRIDES
  V_DIV_FMAS_*: hardware scales the fused result before its one rounding)."""
  return fma(env, a, b, c, check_int(n))

def fsqrt(env, x):
  x = fl(x)
  if x.is_nan() or (x.v < 0): return Float(x.fmt, N.NAN)
  if x.v == 0 or math.isinf(x.v): return x
  return N.rounded(x.fmt, math.sqrt(float(x.v)))  # float64 sqrt is correctly rounded; then innocuous to f32/f16

def ldexp(env, x, n):
  x, n = fl(x), check_int(n)
  if x.is_nan(): return Float(x.fmt, N.NAN)  # an arithmetic result: any quiet NaN
  if math.isinf(x.v) or x.v == 0: return x
  if abs(n) > POWER_LIMIT: n = POWER_LIMIT if n > 0 else -POWER_LIMIT
  return N.rounded(x.fmt, Fraction(N.exact(x)) * Fraction(2) ** n, env.rtz)

def fpow(env, a, b):
  a, b = fl(a), fl(b)
  fmt = N.wider(a.fmt, b.fmt)
  if a.is_nan() or b.is_nan(): return Float(fmt, N.NAN)
  try: r = math.pow(float(a.v), float(b.v))
  except OverflowError: r = N.INF
  except ValueError: return Float(fmt, N.NAN)
  return N.rounded(fmt, r)

def flog2(env, x):
  x = fl(x)
  if x.is_nan() or x.v < 0: return Float(x.fmt, N.NAN)
  if x.v == 0: return Float(x.fmt, -N.INF)
  if math.isinf(x.v): return x
  return N.rounded(x.fmt, math.log2(float(x.v)))

def ftrig(fn):
  def run(env, x):
    x = fl(x)
    if x.is_nan() or math.isinf(x.v): return Float(x.fmt, N.NAN)
    return N.rounded(x.fmt, fn(float(x.v)))
  return run

def to_int(lo:int, hi:int):
  """Float to integer conversion: toward zero, saturating at the type's range, NaN -> 0 (the manual's conversion
  rules for the V_CVT_*_F* instructions)."""
  def run(env, x):
    x = fl(x)
    if x.is_nan(): return 0
    if math.isinf(x.v): return hi if x.v > 0 else lo
    return max(lo, min(hi, math.trunc(x.v)))
  return run

def to_float_fn(fmt:str):
  def run(env, x):
    if isinstance(x, Float):
      if x.is_nan(): return Float(fmt, N.NAN)  # a conversion's NaN: any quiet NaN (numbers.py)
      return N.rounded(fmt, x.v, env.rtz)
    return N.rounded(fmt, Fraction(check_int(x)), env.rtz)
  return run

def to_norm(bits:int, signed:bool):
  """f16/f32 to snorm/unorm: clamped to [-1, 1] ([0, 1]), scaled by 2**(bits-1)-1 (2**bits - 1), rounded to nearest
  even; NaN -> 0 (readings.py: the manual names these functions without defining them)."""
  scale = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
  def run(env, x):
    x = fl(x)
    if x.is_nan(): return 0
    v = max(-1.0 if signed else 0.0, min(1.0, float(x.v)))
    return round(Fraction(v) * scale)  # Python's round of a Fraction: to nearest, ties to even
  return run

def saturate(lo:int, hi:int):
  return lambda env, x: max(lo, min(hi, check_int(x)))

def f32_to_u8(env, x):
  x = fl(x)
  if x.is_nan(): return 0
  return int(max(0, min(255, round(Fraction(x.v))))) if not math.isinf(x.v) else (255 if x.v > 0 else 0)

def signext_from_bit(env, x, n):
  x, n = check_int(x), check_int(n)
  if n == 0: return 0
  x &= (1 << n) - 1
  return x - (1 << n) if x >> (n - 1) & 1 else x

def ff1(width:int):
  def run(env, x):
    x = check_int(x) & ((1 << width) - 1)
    return (x & -x).bit_length() - 1 if x else -1
  return run

def bits_identity(env, x): return x

def calc_ds_addr(env, addr, offset):
  """RDNA4's CalcDsAddr(vgpr_a, offset): the LDS byte address, the address VGPR plus the instruction's offset (as
  RDNA3's ADDR + OFFSET; the RDNA4 manual uses the function without defining it further)."""
  return (check_int(addr) + check_int(offset)) & 0xffffffff

def small_float_to_f32(fmt:str):
  """fp8_to_f32 / bf8_to_f32: exact (every OCP 8-bit float is an f32); a NaN gives a conversion's NaN."""
  def run(env, x):
    x = x if isinstance(x, Float) else N.decode(check_int(x), fmt)
    if x.is_nan(): return Float("f32", N.NAN)
    return N.rounded("f32", x.v)
  return run

# reading helpers: functions the manual does not have, used only by readings.OVERRIDES (each says why there)

def two_over_pi_fraction(n:int) -> int:
  """floor(2/pi * 2**n): the first n bits of 2/pi's fraction (2/pi < 1), from Euler's pi/4 = atan(1/2) + atan(1/3)
  in integers (mockgpu's own table uses Machin's formula; the two agree with the published table's first bits)."""
  guard = n + 64
  def atan_inv(k:int) -> int:  # atan(1/k) * 2**guard, by its Taylor series
    total, term, j = 0, (1 << guard) // k, 0
    while term:
      total += (-1) ** j * (term // (2 * j + 1))
      term, j = term // (k * k), j + 1
    return total
  pi = 4 * (atan_inv(2) + atan_inv(3))
  bits = (2 << (guard + n)) // pi
  assert n < 224 or bits >> (n - 224) == 0xA2F9836E4E441529FC2757D1F534DDC0DB6295993C439041FE5163AB  # Payne and Hanek's table
  return bits

def two_over_pi_segment(env, shift):
  """The 53 bits of 2/pi's 1201-bit fraction that a left shift by `shift` brings into the whole part (zeros past b_0),
  as the float64 integer they make (exact: 53 bits)."""
  shift, bits = check_int(shift), two_over_pi_fraction(1201)
  return Float("f64", float(((bits >> (1148 - shift)) if shift <= 1148 else bits << (shift - 1148)) & ((1 << 53) - 1)))

def rint(env, x):
  """IEEE roundToIntegralTiesToEven: the nearest integer, ties to even, keeping the sign of a zero result."""
  x = fl(x)
  if x.is_nan(): return Float(x.fmt, N.NAN)
  if math.isinf(x.v) or x.v == 0: return x
  r = round(Fraction(x.v))  # Python rounds a Fraction's ties to even
  return Float(x.fmt, math.copysign(float(r), float(x.v)) if r == 0 else float(r))

def frexp_exp(env, x):
  """The exponent e of x = m * 2**e with 0.5 <= |m| < 1 (0 for zero), subnormals included."""
  x = fl(x)
  return 0 if x.v == 0 else math.frexp(float(x.v))[1]

def trig_rev(fn):
  """sin/cos of x revolutions: x's integer part removed exactly, then 2*pi*r in float64."""
  def run(env, x):
    x = fl(x)
    if x.is_nan() or math.isinf(x.v): return Float(x.fmt, N.NAN)
    r = float(Fraction(x.v) - round(Fraction(x.v)))
    return N.rounded(x.fmt, fn(2 * math.pi * r))
  return run

BUILTINS = {
  "isNAN": is_nan, "isSignalNAN": is_signal, "isQuietNAN": is_quiet_nan, "cvtToQuietNAN": quieted,
  "abs": fabs, "sign": sign, "exponent": exponent, "mantissa": mantissa, "fma": fma, "sqrt": fsqrt, "ldexp": ldexp,
  "trunc": unary_float(f_trunc), "floor": unary_float(f_floor), "fract": fract, "isEven": is_even,
  "pow": fpow, "log2": flog2, "sin": ftrig(math.sin), "cos": ftrig(math.cos),
  "signext": bits_identity, "signext_from_bit": signext_from_bit,
  "f32_to_i32": to_int(-2**31, 2**31 - 1), "f32_to_u32": to_int(0, 2**32 - 1), "f64_to_i32": to_int(-2**31, 2**31 - 1),
  "f64_to_u32": to_int(0, 2**32 - 1), "f16_to_i16": to_int(-2**15, 2**15 - 1), "f16_to_u16": to_int(0, 2**16 - 1),
  "v_cvt_i16_f32": to_int(-2**15, 2**15 - 1), "v_cvt_u16_f32": to_int(0, 2**16 - 1),
  "i32_to_f32": to_float_fn("f32"), "u32_to_f32": to_float_fn("f32"), "i32_to_f64": to_float_fn("f64"),
  "u32_to_f64": to_float_fn("f64"), "f32_to_f64": to_float_fn("f64"), "f64_to_f32": to_float_fn("f32"),
  "f32_to_f16": to_float_fn("f16"), "f16_to_f32": to_float_fn("f32"), "bf16_to_f32": to_float_fn("f32"),
  "u16_to_f16": to_float_fn("f16"), "i16_to_f16": to_float_fn("f16"),
  "f16_to_snorm": to_norm(16, True), "f16_to_unorm": to_norm(16, False), "f32_to_snorm": to_norm(16, True),
  "f32_to_unorm": to_norm(16, False), "u32_to_u16": saturate(0, 0xffff), "i32_to_i16": saturate(-2**15, 2**15 - 1),
  "f32_to_u8": f32_to_u8, "fp8_to_f32": small_float_to_f32("fp8"), "bf8_to_f32": small_float_to_f32("bf8"),
  "f32_to_fp8": to_float_fn("fp8"), "f32_to_bf8": to_float_fn("bf8"), "CalcDsAddr": calc_ds_addr, "u8_to_u32": bits_identity,
  "u4_to_u32": bits_identity,
  "s_ff1_i32_b32": ff1(32), "s_ff1_i32_b64": ff1(64),
  "nop": lambda env: None, "s_nop": lambda env, *a: None,
  "twoOverPiSegment": two_over_pi_segment,
  "rint": rint, "frexpExponent": frexp_exp, "fmaScaled": fma_scaled, "sinRevolutions": trig_rev(math.sin), "cosRevolutions": trig_rev(math.cos),
}
INSTRUCTION_FUNCTIONS = {k: v for k, v in BUILTINS.items() if k.startswith(("v_", "s_"))}

# hardware status registers whose flags the pseudocode sets (TRAPSTS.INVALID: IEEE's invalid-operation exception, raised
# for a signalling NaN operand of RDNA4's min/max): the evaluator records the write; nothing compares it (mockgpu does
# not model the trap status, and a float exception only traps when MODE enables it)
STATUS_REGISTERS = ("TRAPSTS",)

CONSTANTS = {
  "PI": Float("f64", math.pi), "INF": Float(None, N.INF), "NAN": Float(None, N.NAN),
  "MAX_FLOAT_F32": N.decode(0x7f7fffff, "f32"), "MAX_FLOAT_F64": N.decode(0x7fefffffffffffff, "f64"),
  "WAVE32": 1, "WAVE64": 0,
  # div_fixup's results for a quotient past the format's range (readings.CHOICES "div-fixup-limits")
  "UNDERFLOW_F32": Float("f32", 0.0), "OVERFLOW_F32": Float("f32", N.INF),
  "UNDERFLOW_F64": Float("f64", 0.0), "OVERFLOW_F64": Float("f64", N.INF),
}
