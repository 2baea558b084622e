"""The PTX instruction table: what each opcode computes, written once for both backends.

A row takes an instruction, validates its modifiers and operands (UnsupportedInstruction naming the instruction and its
line for what the mock does not model; validity.py's InvalidPTX for forms ptxas rejects) and states its meaning in the
vocabulary of `Backend`: operands read with src and written with dst, values combined by primitives (binop, compare,
farith, float_to_int, ...) whose meaning each method's docstring gives. The numpy backend (backends/numpy.py) renders a
primitive as an expression over arrays of every thread of a batch; the C backend (backends/c.py) as an expression over
one thread's scalars. Both compute the same bits (tests/compiler/ptx/test_ptx_native.py compares them).

The C backend covers less. A row that it does not translate at all says why in `no_c` (the rarer opcodes);
within a row, a primitive it does not render (a float64 fma in a directed mode, generic shared/local addresses, ...)
makes it decline. Either way the kernel stays on the numpy path and the
reason is counted in emulators/ptx/native.declined.
"""
from __future__ import annotations
from dataclasses import dataclass
import functools
from functools import reduce
from typing import Callable
from mockgpu.errors import UnsupportedInstruction
from mockgpu.compiler.ptx import syntax as P, validity
from mockgpu.compiler.ptx.types import PTX_TYPES, PACKED, FP8X2, bits, is_float, is_signed, bit_type, uint_type, wide
from mockgpu.compiler.ptx.layout import Layout, LOW_BITS

def primitive(f):
  """A method of the vocabulary: its docstring is what every backend's rendering computes. A backend that does not
  render it declines (the C backend: NoNative, so the kernel stays on numpy)."""
  @functools.wraps(f)
  def declined(self, *args): return self.decline(f"{f.__name__} in {self.ins.op}")
  declined.primitive = True
  return declined

class Backend:
  """The vocabulary rows speak. Values are expressions (strings) in the backend's language; a type argument is the PTX
  type of the values. A backend sets `ins` (the instruction being translated), `fn`, `layout`, `labels` (label ->
  block index) and `exit_block`. A primitive a backend does not render calls decline(what)."""
  ins: P.Instr
  fn: P.Function
  layout: Layout
  labels: dict[str, int]
  exit_block: int

  def decline(self, what:str): self.unsupported(what)
  def unsupported(self, what:str|None=None):
    i = self.ins
    raise UnsupportedInstruction(f"PTX line {i.line}: {what or 'instruction'} not supported: {i.text}")
  def symbol(self, name:str) -> tuple[str, int]:
    """(state space, address in it) of a variable or parameter."""
    if name not in self.layout.symbols: self.unsupported(f"unknown symbol {name}")
    return self.layout.symbols[name]

  # *** operands and statements ***
  @primitive
  def src(self, a, t:str) -> str: """Operand a (register, immediate, special register, symbol address) read as type t."""
  @primitive
  def dst(self, d, t:str, e:str):
    """Register d = e (a value of type t; resized as the register's type needs), for the active threads."""
  @primitive
  def dst_lanes(self, d, t:str, e:str): """dst of a value computed only for the active threads (a load's, an atomic's)."""
  @primitive
  def let(self, t:str, e:str) -> str: """e held in a temporary (for a value used more than once)."""
  @primitive
  def const(self, t:str, v) -> str: """The constant v of type t (an integer taken modulo the type's width)."""
  @primitive
  def nop(self): """Nothing to do (the instruction orders nothing in this model)."""
  @primitive
  def join_fields(self, u:str, parts:list[str]) -> str:
    """One value of bit type u from the equal fields parts (bit types), the first in the lowest bits."""
  @primitive
  def field(self, u:str, v:str, i:int, w:int) -> str: """Field i of v (bit type u) of w bits, as b{w}."""
  @primitive
  def window(self, space:str, t:str) -> str: """The window tag of .shared/.local/.const addresses (layout.WINDOWS), as t."""

  # *** control flow ***
  @primitive
  def branch(self, block:int): """Go to block (the exit block: the thread ends); a guard makes it conditional."""
  @primitive
  def trap(self): """The launch stops (KernelTrap naming the instruction)."""
  @primitive
  def barrier(self, ident, with_count:bool, arrive:bool): """bar.sync: the block boundary before it did the waiting."""
  @primitive
  def cta_reduce(self, p:str, op:str) -> str: """bar.red: popc (u32), and, or (.pred) of p over the CTA, to each thread."""

  # *** memory ***
  @primitive
  def load(self, space:str, t:str, n:int, addr:str, ordered:bool) -> list[str]:
    """n elements of type t at addr (u64) in space (global, shared, local, const, generic). ordered: an .acquire/.release
    or .mmio access, which orders this thread's accesses against other threads'."""
  @primitive
  def load_param(self, t:str, n:int, offset:int) -> list[str]: """n elements of type t at offset in the parameter block."""
  @primitive
  def store(self, space:str, t:str, addr:str, vals:list[str], ordered:bool): """The values at addr (see load)."""
  @primitive
  def atomic(self, space:str, op:str, t:str, addr:str, vals:list[str]) -> str:
    """op on the value at addr for each thread, in thread order where addresses collide; each thread's old value."""

  # *** warp-wide ***
  @primitive
  def shfl(self, mode:str, a:str, b:str, c:str) -> tuple[str, str]:
    """shfl.sync: (a from the lane that mode, b and c select, whether that lane was in range)."""
  @primitive
  def vote(self, mode:str, p:str) -> str: """all/any/uni (.pred) or ballot (b32) of p over the warp's active threads."""
  @primitive
  def redux(self, op:str, t:str, a:str) -> str: """op of a over the warp's active threads."""
  @primitive
  def mma(self, shape:str, types:list[str], a:list[str], b:list[str], c:list[str], n:int) -> list[str]:
    """mma.sync of the warp's fragments a, b, c (types: d, a, b, c): the n registers of d."""

  # *** integers and bits ***
  @primitive
  def binop(self, op:str, t:str, x:str, y:str) -> str: """x op y for op in + - * (wrapping) and & | ^ (also on .pred)."""
  @primitive
  def bitnot(self, t:str, x:str) -> str: """~x (.pred: logical not)."""
  @primitive
  def bitcast(self, x:str, t:str, to:str) -> str: """The bits of x (type t) as type `to` of the same width."""
  @primitive
  def negate(self, t:str, x:str) -> str: """-x: integers wrap, floats flip the sign bit (NaN included)."""
  @primitive
  def absolute(self, t:str, x:str) -> str: """|x|: integers wrap (|MIN| = MIN), floats clear the sign bit."""
  @primitive
  def add_sat(self, op:str, x:str, y:str) -> str: """x op y (+ or -) of s32, clamped to s32."""
  @primitive
  def mul_wide(self, t:str, x:str, y:str) -> str: """The whole product of two 16/32-bit integers, in wide(t)."""
  @primitive
  def mul_hi(self, t:str, x:str, y:str) -> str: """The high half of the whole product."""
  @primitive
  def mul24(self, hi:bool, t:str, x:str, y:str) -> str:
    """The product of the low 24 bits of x and y: its low 32 bits (hi: bits 16 to 47)."""
  @primitive
  def idiv(self, t:str, x:str, y:str) -> str: """Truncating x / y; x/0 is all ones, -MIN/-1 wraps."""
  @primitive
  def irem(self, t:str, x:str, y:str) -> str: """x - (x/y)*y, the dividend's sign; x%0 is x."""
  @primitive
  def minmax(self, op:str, t:str, x:str, y:str) -> str: """Integer min or max."""
  @primitive
  def shift(self, op:str, t:str, x:str, s:str) -> str:
    """shl/shr by s (u32): amounts >= the width give 0 (a signed shr: the sign)."""
  @primitive
  def funnel_shift(self, left:bool, wrap:bool, signed:bool, lo:str, hi:str, n:str) -> str:
    """shf: the 64 bits hi:lo shifted by n (wrap: n mod 32, else clamped to 32), the middle (left) or low 32 bits (u32)."""
  @primitive
  def carry_in(self, t:str) -> str: """The carry flag CC.CF as 0/1 of type t."""
  @primitive
  def set_carry(self, flag:str): """CC.CF = flag (a .pred)."""
  @primitive
  def popc(self, t:str, x:str) -> str: """Set bits of x (its unsigned type), as u32."""
  @primitive
  def clz(self, t:str, x:str) -> str: """Leading zero bits of x (its unsigned type), as u32."""
  @primitive
  def bfind(self, t:str, x:str, shiftamt:bool) -> str:
    """The position of x's most significant non-sign bit (shiftamt: as a left shift amount); 0xffffffff for none."""
  @primitive
  def brev(self, t:str, x:str) -> str: """x with its bits reversed."""
  @primitive
  def bfe(self, t:str, a:str, pos:str, length:str) -> str:
    """length bits of a from pos (both u32, taken mod 256 and clamped to the width), sign-extended for .s types."""
  @primitive
  def bfi(self, t:str, f:str, b:str, pos:str, length:str) -> str: """b with length bits at pos replaced by f's low bits."""
  @primitive
  def prmt(self, a:str, b:str, c:str) -> str:
    """The four bytes of {b, a} that selector c picks (b32): a nibble per result byte, bits 0-2 the byte (0: a's
    lowest), bit 3 to replicate its sign (prmt's default mode; the row turns the other modes into selectors)."""

  # *** comparisons ***
  @primitive
  def compare(self, cmp:str, t:str, x:str, y:str) -> str:
    """x cmp y as .pred: eq ne lt le gt ge (ordered: false with a NaN), the unordered equ neu ltu leu gtu geu (true with
    a NaN), num, nan; lo ls hi hs (and any comparison of .b types) unsigned."""
  @primitive
  def select(self, c:str, t:str, a:str, b:str) -> str: """c ? a : b."""
  @primitive
  def testp(self, kind:str, t:str, x:str) -> str: """Whether x is finite, infinite, number, notanumber, normal, subnormal."""
  @primitive
  def copysign(self, t:str, sign:str, mag:str) -> str: """mag with the sign of `sign`."""

  # *** floats ***
  @primitive
  def farith(self, op:str, t:str, rnd:str, args:list[str]) -> str:
    """add sub mul fma div sqrt rcp, exact in format t, rounded once in mode rnd (rn rz rm rp)."""
  @primitive
  def approx(self, fn:str, t:str, x:str) -> str:
    """The .approx functions (ex2 lg2 sin cos tanh rcp sqrt rsqrt): float64 evaluation rounded to t (numerics.py's table
    of bounds)."""
  @primitive
  def canon(self, t:str, x:str) -> str:
    """x with a NaN replaced by the canonical NaN of float type t (f32 0x7fffffff; f16, bf16 0x7fff; f64
    0x7fffffffffffffff): what NVIDIA hardware returns for every NaN that arithmetic, conversions and the .approx
    functions produce, whatever the operands' payloads (numerics.CANON_NAN)."""
  @primitive
  def ftz(self, x:str) -> str: """A float32 subnormal flushed to zero of its sign."""
  @primitive
  def relu(self, t:str, x:str) -> str: """Negative (and NaN) -> +0."""
  @primitive
  def sat(self, t:str, x:str) -> str: """Clamped to [0, 1], NaN -> 0."""
  @primitive
  def satfinite(self, t:str, x:str) -> str: """Infinities -> the largest finite value."""
  @primitive
  def fminmax(self, op:str, t:str, x:str, y:str, nan:bool) -> str:
    """min/max: a NaN operand gives the other (nan: any NaN gives the default NaN); -0 < +0."""
  @primitive
  def half(self, x:str, i:int, h:str) -> str: """Half i (0: bits 0-15) of b32 x as h (f16, or bf16 bits)."""
  @primitive
  def join_halves(self, lo:str, hi:str, h:str) -> str: """Two halves h into a b32, lo in bits 0-15."""

  # *** conversions ***
  @primitive
  def float_to_float(self, x:str, st:str, dt:str, rnd:str) -> str: """Widening is exact; narrowing rounds in rnd."""
  @primitive
  def round_integral(self, x:str, t:str, rnd:str) -> str: """x rounded to an integral value of its format (rni rzi rmi rpi)."""
  @primitive
  def int_to_float(self, x:str, st:str, dt:str, rnd:str) -> str: """An integer rounded to float format dt in rnd."""
  @primitive
  def float_to_int(self, x:str, st:str, dt:str, rnd:str) -> str:
    """x rounded to an integer (rni rzi rmi rpi), saturated to dt's range; NaN -> 0."""
  @primitive
  def int_to_int(self, x:str, st:str, dt:str, sat:bool) -> str: """Truncated or extended to dt (sat: clamped to its range)."""
  @primitive
  def fp8x2_from_f32(self, hi:str, lo:str, fmt:str, relu:bool) -> str:
    """Two f32 to fp8 codes (compiler/floats.py): hi to the upper byte of the b16, lo to the lower; round to nearest even,
    saturate to the largest finite value (infinities too), NaN -> 0x7f with its sign; relu: negatives (-0 too) -> +0."""
  @primitive
  def fp8x2_from_f16x2(self, x:str, fmt:str, relu:bool) -> str: """Each half of b32 x to the byte of the b16 in its place."""
  @primitive
  def fp8x2_to_f16x2(self, x:str, fmt:str, relu:bool) -> str:
    """The bytes of b16 x to the halves of a b32 (lower byte -> lower half), exactly; NaN -> 0x7fff; relu: negatives -> +0."""

# *** the table ***

# why the C backend declines a whole row
NUMPY_ONLY = "not translated to C (rare in compiled kernels)"

@dataclass(frozen=True)
class Row:
  fn: Callable                 # fn(backend, instruction)
  no_c: str|None = None        # why the C backend does not translate it (None: it does)

ROWS: dict[str, Row] = {}

def row(*ops:str, no_c:str|None=None):
  def deco(fn):
    for op in ops: ROWS[op] = Row(fn, no_c)
    return fn
  return deco

def row_of(b:Backend, ins:P.Instr) -> Row:
  """The instruction's row once it is known to be readable and valid (raises otherwise)."""
  r = ROWS.get(ins.op)
  if ins.op == "call" and ins.error is not None: raise (ins.error_type or P.PTXSyntaxError)(ins.error)  # a call left by inline.py
  if r is None: b.unsupported(f"instruction {ins.op}")
  if ins.error is not None: raise (ins.error_type or P.PTXSyntaxError)(ins.error)
  validity.check(ins)   # forms the ISA does not define raise InvalidPTX, as ptxas rejects them
  return r

class Mods:
  """The modifiers of an instruction, split into its types (in order) and the rest (each one must be allowed)."""
  def __init__(self, b:Backend, ins:P.Instr, allowed=frozenset()):
    self.types = [m for m in ins.mods if m in PTX_TYPES]
    self.flags = [m for m in ins.mods if m not in PTX_TYPES]
    for f in self.flags:
      if f not in allowed: b.unsupported(f"modifier .{f} of {ins.op}")
    self.set = set(self.flags)
  def has(self, f:str) -> bool: return f in self.set
  def rnd(self, default:str="rn") -> str:
    return next((f for f in self.flags if f in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), default)

def one_type(b:Backend, m:Mods) -> str:
  if len(m.types) != 1: b.unsupported("type modifiers")
  return m.types[0]

def _float_typed(ins:P.Instr) -> bool:
  """add, sub, mul, mad and div are float instructions when their (first) type is a float."""
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  return t is not None and is_float(t)

# *** control flow ***

@row("bra")
def _bra(b, ins):
  Mods(b, ins, {"uni"})
  if len(ins.args) != 1 or not isinstance(ins.args[0], P.Sym) or ins.args[0].name not in b.labels: b.unsupported("branch target")
  b.branch(b.labels[ins.args[0].name])

@row("ret", "exit")
def _ret(b, ins):
  Mods(b, ins, {"uni"})
  if not b.fn.entry and ins.op == "ret": b.unsupported("ret from a .func")
  b.branch(b.exit_block)

@row("trap")
def _trap(b, ins): b.trap()

@row("bar", "barrier")
def _bar(b, ins):
  # the barrier itself is the block boundary before it (blocks.py); what is left is its reduction, if any
  mods = [m for m in ins.mods if m not in ("sync", "aligned", "cta", "arrive")]
  if not mods:
    if len(ins.args) > 2: b.unsupported("barrier operands")
    return b.barrier(ins.args[0] if ins.args else None, len(ins.args) == 2, "arrive" in ins.mods)
  if mods[0] != "red" or len(mods) != 3: b.unsupported("barrier form")
  op, t = mods[1], mods[2]
  d, pred = ins.args[0], ins.args[-1]
  p = b.src(pred, "pred")
  if op == "popc" and t == "u32": b.dst(d, "u32", b.cta_reduce(p, "popc"))
  elif op in ("and", "or") and t == "pred": b.dst(d, "pred", b.cta_reduce(p, op))
  else: b.unsupported("barrier reduction")

@row("membar", "fence")
def _fence(b, ins): b.nop()   # emulated memory is sequentially consistent: fences have nothing to order

@row("nanosleep", "pmevent", "prefetch", "prefetchu", "discard", "applypriority", "createpolicy", no_c=NUMPY_ONLY)
def _hint(b, ins):
  if ins.op == "createpolicy": b.dst(ins.args[0], "b64", b.const("b64", 0))
  else: b.nop()

# *** moves ***

@row("mov")
def _mov(b, ins):
  t = one_type(b, Mods(b, ins))
  d, a = ins.args
  if isinstance(d, P.Vec): return _unpack(b, t, d.items, a)
  if isinstance(a, P.Vec): return b.dst(d, t, _pack(b, t, a.items))
  if isinstance(a, P.Sym) and a.name in b.labels: b.unsupported("mov of a label")
  b.dst(d, t, b.src(a, t))

def _pack(b, t:str, items) -> str:
  """{a, b, ...} -> one value, the first element in the lowest bits."""
  w, u = bits(t) // len(items), bit_type(t)
  return b.bitcast(b.join_fields(u, [b.src(x, f"b{w}") for x in items]), u, t)

def _unpack(b, t:str, items, a):
  w, u = bits(t) // len(items), bit_type(t)
  v = b.let(u, b.src(a, u))
  for i, x in enumerate(items):
    if x is not P.SINK: b.dst(x, f"b{w}", b.field(u, v, i, w))

@row("cvta")
def _cvta(b, ins):
  m = Mods(b, ins, {"to", "global", "shared", "local", "const", "param", "cta"})
  t = one_type(b, m)
  d, a = ins.args
  space = next((s for s in ("global", "shared", "local", "const", "param") if m.has(s)), None)
  if space is None: b.unsupported("cvta space")
  v = b.src(a, t)
  if space == "global": return b.dst(d, t, v)
  if space == "param": b.unsupported("cvta of the param space")
  if m.has("to"): b.dst(d, t, b.binop("&", t, v, b.const(t, LOW_BITS)))
  else: b.dst(d, t, b.binop("|", t, v, b.window(space, t)))

# *** memory ***

SPACES = ("global", "shared", "local", "const", "param")
# ordering qualifiers order a thread's accesses against other threads' (a flag another thread sets); the rest are cache
# policy and scope, of which the model has none
ORDERING = {"acquire", "release", "mmio"}
LD_FLAGS = {*SPACES, *ORDERING, "weak", "volatile", "relaxed", "gpu", "sys", "cta", "nc", "ca", "cg", "cs", "lu", "cv", "wb",
            "wt", "v2", "v4", "v8", "L1::evict_last", "L1::evict_first", "L1::evict_normal", "L1::no_allocate",
            "L1::evict_unchanged", "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint", "shared::cta", "unified"}

def _space(m:Mods) -> str:
  for s in SPACES:
    if m.has(s): return s
  if m.has("shared::cta"): return "shared"
  return "generic"

def _vec(m:Mods) -> int:
  return next((int(f[1:]) for f in m.flags if f in ("v2", "v4", "v8")), 1)

def address(b, a, space:str) -> str:
  """The (u64) address of a memory operand [reg+off], [symbol+off] or [imm] in its state space."""
  if not isinstance(a, P.Addr): b.unsupported("memory operand")
  if isinstance(a.base, P.Sym):
    sp, base = b.symbol(a.base.name)
    if sp == "param": b.unsupported("param symbol outside ld.param")
    return b.const("u64", base + a.base.offset + a.offset)
  if a.base is None: return b.const("u64", a.offset)
  e = b.src(a.base, "u64")
  return e if a.offset == 0 else b.binop("+", "u64", e, b.const("u64", a.offset))

# the operands after the first two are a cache policy (.L2::cache_hint): a hint
@row("ld", "ldu")
def _ld(b, ins):
  m = Mods(b, ins, LD_FLAGS)
  t = one_type(b, m)
  space, n = _space(m), _vec(m)
  d, a = ins.args[:2]
  dsts = list(d.items) if isinstance(d, P.Vec) else [d]
  if len(dsts) != n: b.unsupported("vector width")
  if space == "param":
    if not isinstance(a, P.Addr) or not isinstance(a.base, P.Sym) or b.symbol(a.base.name)[0] != "param": b.unsupported("ld.param address")
    vals = b.load_param(t, n, b.symbol(a.base.name)[1] + a.base.offset + a.offset)
    for x, v in zip(dsts, vals): b.dst(x, t, v)   # the same for every thread
    return
  vals = b.load(space, t, n, address(b, a, space), bool(m.set & ORDERING))
  for x, v in zip(dsts, vals): b.dst_lanes(x, t, v)

@row("st")
def _st(b, ins):
  m = Mods(b, ins, LD_FLAGS)
  t = one_type(b, m)
  space, n = _space(m), _vec(m)
  a, s = ins.args[:2]
  srcs = list(s.items) if isinstance(s, P.Vec) else [s]
  if len(srcs) != n: b.unsupported("vector width")
  if space in ("param", "const"): b.unsupported(f"st.{space}")
  vals = [b.src(x, t) for x in srcs]
  b.store(space, t, address(b, a, space), vals, bool(m.set & ORDERING))

ATOM_OPS = ("add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec")
ATOM_FLAGS = {"global", "shared", "relaxed", "acquire", "release", "acq_rel", "gpu", "sys", "cta", "shared::cta", "noftz", *ATOM_OPS}

@row("atom", "red")
def _atom(b, ins):
  m = Mods(b, ins, ATOM_FLAGS)
  t = one_type(b, m)
  op = next((f for f in m.flags if f in ATOM_OPS), None)
  if op is None: b.unsupported("atomic operation")
  if t in ("f16x2", "bf16x2", "bf16", "f16") or (is_float(t) and op not in ("add", "exch", "min", "max")): b.unsupported(f"atomic {op}.{t}")
  space = _space(m)
  args = ins.args if ins.op == "atom" else [P.SINK] + ins.args
  d, a = args[0], args[1]
  vals = [b.src(x, t) for x in args[2:]]
  if len(vals) != (2 if op == "cas" else 1): b.unsupported("atomic operands")
  v = b.atomic(space, op, t, address(b, a, space), vals)
  if d is not P.SINK: b.dst_lanes(d, t, v)

# *** warp-wide ***

@row("shfl")
def _shfl(b, ins):
  m = Mods(b, ins, {"sync", "up", "down", "bfly", "idx"})
  mode = next((f for f in m.flags if f in ("up", "down", "bfly", "idx")), None)
  if mode is None or one_type(b, m) != "b32": b.unsupported("shfl form")
  d, a, lane, c = ins.args[:4]
  v, p = b.shfl(mode, b.src(a, "b32"), b.src(lane, "u32"), b.src(c, "u32"))
  if isinstance(d, P.PredPair):
    b.dst(d.p, "b32", v)
    if d.q is not None: b.dst(d.q, "pred", p)
  else: b.dst(d, "b32", v)

@row("vote")
def _vote(b, ins):
  m = Mods(b, ins, {"sync", "all", "any", "uni", "ballot"})
  mode = next((f for f in m.flags if f in ("all", "any", "uni", "ballot")), None)
  if mode is None: b.unsupported("vote mode")
  b.dst(ins.args[0], "b32" if mode == "ballot" else "pred", b.vote(mode, b.src(ins.args[1], "pred")))

@row("activemask")
def _activemask(b, ins):
  Mods(b, ins)
  b.dst(ins.args[0], "b32", b.vote("ballot", b.const("pred", True)))

@row("redux")
def _redux(b, ins):
  m = Mods(b, ins, {"sync", "add", "min", "max", "and", "or", "xor"})
  t = one_type(b, m)
  op = next((f for f in m.flags if f != "sync"), None)
  if op is None: b.unsupported("redux operation")
  b.dst(ins.args[0], t, b.redux(op, t, b.src(ins.args[1], t)))

@row("mma")
def _mma(b, ins):
  m = Mods(b, ins, {"sync", "aligned", "m16n8k16", "m16n8k8", "m16n8k32", "row", "col"})
  shape = next((f for f in m.flags if f.startswith("m16")), None)
  if not (m.has("row") and m.has("col")) or shape is None or len(m.types) != 4: b.unsupported("mma shape/layout")
  d, x, y, c = ins.args
  regs = lambda v: [b.src(r, "b32") for r in v.items]
  for r, e in zip(d.items, b.mma(shape, m.types, regs(x), regs(y), regs(c), len(d.items))): b.dst(r, "b32", e)

# *** integer arithmetic ***

@row("add", "sub")
def _addsub(b, ins):
  if _float_typed(ins): return _float_op(b, ins, ins.op, 2)
  m = Mods(b, ins, {"sat", "cc"})
  t = one_type(b, m)
  d, x, y = ins.args[0], b.src(ins.args[1], t), b.src(ins.args[2], t)
  if m.has("sat"):
    if t != "s32": b.unsupported(".sat")
    return b.dst(d, t, b.add_sat("+" if ins.op == "add" else "-", x, y))
  if m.has("cc"): return _carry(b, ins.op, t, d, x, y, False, True)
  b.dst(d, t, b.binop("+" if ins.op == "add" else "-", t, x, y))

def _carry(b, op:str, t:str, d, x:str, y:str, carry_in:bool, write_cc:bool):
  """add.cc/addc/sub.cc/subc (and mad.cc/madc's sums): x op y (op carry-in); the carry out (for sub, the borrow) goes
  to CC.CF."""
  if bits(t) not in (32, 64): b.unsupported("carry width")
  u, sign = uint_type(t), "+" if op == "add" else "-"
  xu, yu = b.bitcast(x, t, u), b.bitcast(y, t, u)
  cin = b.carry_in(u) if carry_in else b.const(u, 0)
  r1 = b.let(u, b.binop(sign, u, xu, yu))
  r = b.let(u, b.binop(sign, u, r1, cin))
  if write_cc:
    lt = lambda p, q: b.compare("lt", u, p, q)
    b.set_carry(b.binop("|", "pred", lt(r1, xu), lt(r, r1)) if op == "add" else b.binop("|", "pred", lt(xu, yu), lt(r1, cin)))
  b.dst(d, t, b.bitcast(r, u, t))

@row("addc", "subc")
def _addc(b, ins):
  m = Mods(b, ins, {"cc"})
  t = one_type(b, m)
  d, x, y = ins.args[0], b.src(ins.args[1], t), b.src(ins.args[2], t)
  _carry(b, ins.op[:3], t, d, x, y, True, m.has("cc"))

def _product(b, m:Mods, t:str, x:str, y:str) -> tuple[str, str]:
  """mul.lo/hi/wide of x and y: (the product's type, its value)."""
  if m.has("wide"):
    if bits(t) > 32: b.unsupported("mul.wide of 64-bit")
    return wide(t), b.mul_wide(t, x, y)
  if m.has("hi"): return t, b.mul_hi(t, x, y)
  return t, b.binop("*", t, x, y)

@row("mul")
def _mul(b, ins):
  if _float_typed(ins): return _float_op(b, ins, "mul", 2)
  m = Mods(b, ins, {"lo", "hi", "wide"})
  t = one_type(b, m)
  pt, p = _product(b, m, t, b.src(ins.args[1], t), b.src(ins.args[2], t))
  b.dst(ins.args[0], pt, p)

@row("mad")
def _mad(b, ins):
  if _float_typed(ins): return _float_op(b, ins, "fma", 3)
  m = Mods(b, ins, {"lo", "hi", "wide", "sat", "cc"})
  t = one_type(b, m)
  d, x, y, c = ins.args
  pt, p = _product(b, m, t, b.src(x, t), b.src(y, t))
  z = b.src(c, pt)
  if m.has("cc"): return _carry(b, "add", pt, d, p, z, False, True)
  if m.has("sat"):
    if t != "s32" or not m.has("hi"): b.unsupported(".sat")
    return b.dst(d, t, b.add_sat("+", p, z))
  b.dst(d, pt, b.binop("+", pt, p, z))

@row("madc")
def _madc(b, ins):
  m = Mods(b, ins, {"lo", "hi", "cc"})
  t = one_type(b, m)
  d, x, y, c = ins.args
  pt, p = _product(b, m, t, b.src(x, t), b.src(y, t))
  _carry(b, "add", pt, d, p, b.src(c, pt), True, m.has("cc"))

@row("mul24", "mad24", no_c=NUMPY_ONLY)
def _mul24(b, ins):
  m = Mods(b, ins, {"lo", "hi", "sat"})
  t = one_type(b, m)
  if t not in ("u32", "s32") or m.has("sat"): b.unsupported()
  v = b.mul24(m.has("hi"), t, b.src(ins.args[1], t), b.src(ins.args[2], t))
  if ins.op == "mad24": v = b.binop("+", t, v, b.src(ins.args[3], t))
  b.dst(ins.args[0], t, v)

@row("div", "rem")
def _divrem(b, ins):
  if ins.op == "div" and _float_typed(ins): return _float_op(b, ins, "div", 2)
  t = one_type(b, Mods(b, ins))
  x, y = b.src(ins.args[1], t), b.src(ins.args[2], t)
  b.dst(ins.args[0], t, b.idiv(t, x, y) if ins.op == "div" else b.irem(t, x, y))

# *** float arithmetic ***

FLOAT_FLAGS = {"rn", "rz", "rm", "rp", "ftz", "sat", "approx", "full", "relu"}

def _float_op(b, ins, op:str, nargs:int):
  """add/sub/mul/fma/div/sqrt/rcp on f16/bf16/f32/f64 (and packed x2) with rounding, ftz and sat."""
  m = Mods(b, ins, FLOAT_FLAGS)
  t = one_type(b, m)
  d, srcs = ins.args[0], ins.args[1:1 + nargs]
  if len(ins.args) != nargs + 1: b.unsupported("operand count")
  if t in PACKED: return _each_half(b, t, d, srcs, lambda xs, h: _float_expr(b, m, h, op, xs))
  b.dst(d, t, _float_expr(b, m, t, op, [b.src(a, t) for a in srcs]))

def _float_expr(b, m:Mods, t:str, op:str, args:list[str]) -> str:
  args = _ftz_in(b, m, t, args)
  approx = m.has("approx") or m.has("full")
  if approx and op in ("sqrt", "rcp", "rsqrt"): e = b.approx(op, t, args[0])
  elif approx and op == "div": e = b.farith("div", t, "rn", args)   # div.approx/full: correctly rounded here
  else: e = b.farith(op, t, m.rnd("rn"), args)
  return b.canon(t, _post(b, m, t, e))

def _ftz_in(b, m:Mods, t:str, args:list[str]) -> list[str]:
  """.ftz flushes subnormal float32 inputs (and, in _post, results) to zero."""
  return [b.ftz(a) for a in args] if m.has("ftz") and t == "f32" else args

def _post(b, m:Mods, t:str, e:str) -> str:
  if m.has("ftz") and t == "f32": e = b.ftz(e)
  if m.has("relu"): e = b.relu(t, e)
  if m.has("sat"): e = b.sat(t, e)
  return e

def _each_half(b, t:str, d, srcs, fn):
  """f16x2/bf16x2: fn (values, half type) on each 16-bit half of the b32 operands."""
  h = t[:-2]
  parts = [fn([b.half(b.src(a, "b32"), i, h) for a in srcs], h) for i in (0, 1)]
  b.dst(d, "b32", b.join_halves(parts[0], parts[1], h))

@row("fma")
def _fma(b, ins): _float_op(b, ins, "fma", 3)

@row("sqrt", "rcp")
def _sqrt(b, ins): _float_op(b, ins, ins.op, 1)

@row("rsqrt")
def _rsqrt(b, ins):
  m = Mods(b, ins, {"approx", "ftz"})
  t = one_type(b, m)
  if not m.has("approx"): b.unsupported("rsqrt without .approx")
  a = _ftz_in(b, m, t, [b.src(ins.args[1], t)])[0]
  b.dst(ins.args[0], t, b.canon(t, _post(b, m, t, b.approx("rsqrt", t, a))))

@row("ex2", "lg2", "sin", "cos", "tanh")
def _transcendental(b, ins):
  m = Mods(b, ins, {"approx", "ftz"})
  t = one_type(b, m)
  if not m.has("approx"): b.unsupported(f"{ins.op} without .approx")
  if ins.op in ("sin", "cos", "lg2") and t != "f32": b.unsupported(f"{ins.op}.{t}")
  d, a = ins.args
  if t in PACKED: return _each_half(b, t, d, [a], lambda xs, h: b.canon(h, b.approx(ins.op, h, xs[0])))
  x = _ftz_in(b, m, t, [b.src(a, t)])[0]
  b.dst(d, t, b.canon(t, _post(b, m, t, b.approx(ins.op, t, x))))

@row("abs", "neg")
def _absneg(b, ins):
  m = Mods(b, ins, {"ftz", "relu"})
  t = one_type(b, m)
  d, a = ins.args
  if t in PACKED or t == "bf16":   # the sign bits of the halves (of the bf16)
    bt = "b32" if t in PACKED else "b16"
    mask = {"abs": 0x7fff7fff, "neg": 0x80008000}[ins.op] & ((1 << bits(bt)) - 1)
    return b.dst(d, bt, b.binop("&" if ins.op == "abs" else "^", bt, b.src(a, bt), b.const(bt, mask)))
  x = b.src(a, t)
  if m.has("ftz") and t == "f32": x = b.ftz(x)
  b.dst(d, t, b.absolute(t, x) if ins.op == "abs" else b.negate(t, x))

@row("min", "max")
def _minmax(b, ins):
  m = Mods(b, ins, {"ftz", "NaN", "relu", "xorsign", "abs"})
  t = one_type(b, m)
  if m.has("xorsign") or m.has("abs"): b.unsupported(".xorsign.abs")
  if len(ins.args) != 3: b.unsupported(f"{ins.op} of three operands")
  d, a, c = ins.args
  if is_float(t):
    fn = lambda xs, h: b.canon(h, b.fminmax(ins.op, h, xs[0], xs[1], m.has("NaN")))   # two NaNs, or .NaN: canonical
    if t in PACKED: return _each_half(b, t, d, [a, c], fn)
    return b.dst(d, t, fn(_ftz_in(b, m, t, [b.src(a, t), b.src(c, t)]), t))
  e = b.minmax(ins.op, t, b.src(a, t), b.src(c, t))
  if m.has("relu"): e = b.minmax("max", t, e, b.const(t, 0))
  b.dst(d, t, e)

@row("copysign")
def _copysign(b, ins):
  t = one_type(b, Mods(b, ins))
  d, a, c = ins.args
  mag = b.src(c, t)
  b.dst(d, t, b.copysign(t, b.src(a, t), mag))

@row("testp")
def _testp(b, ins):
  m = Mods(b, ins, {"finite", "infinite", "number", "notanumber", "normal", "subnormal"})
  t = one_type(b, m)
  if len(m.flags) != 1: b.unsupported("testp form")
  b.dst(ins.args[0], "pred", b.testp(m.flags[0], t, b.src(ins.args[1], t)))

# *** comparisons and selects ***

INT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}
FLOAT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}
BOOL_OPS = {"and": "&", "or": "|", "xor": "^"}
CMP_FLAGS = INT_CMPS | FLOAT_CMPS | {"ftz"} | set(BOOL_OPS)

def _compare(b, cmp:str, t:str, x:str, y:str) -> str:
  if cmp not in (FLOAT_CMPS if is_float(t) else INT_CMPS): b.unsupported(f"comparison .{cmp}")
  return b.compare(cmp, t, x, y)

def _cmp_flags(b, ins, m:Mods) -> tuple[str, str|None]:
  """The comparison and the boolean combining operation (or None) of setp/set."""
  cmp = next((f for f in m.flags if f not in BOOL_OPS and f != "ftz"), None)
  comb = next((f for f in m.flags if f in BOOL_OPS), None)
  if cmp is None: b.unsupported("comparison")
  if len(ins.args) != (4 if comb else 3): b.unsupported("operand count")   # the fourth: the predicate comb takes
  return cmp, comb

@row("setp")
def _setp(b, ins):
  m = Mods(b, ins, CMP_FLAGS)
  t = one_type(b, m)
  cmp, comb = _cmp_flags(b, ins, m)
  d, a, c = ins.args[:3]
  combine = lambda e: b.binop(BOOL_OPS[comb], "pred", e, b.src(ins.args[3], "pred")) if comb else e
  if t in PACKED:
    if not isinstance(d, P.PredPair): b.unsupported("setp.x2 destination")
    h = t[:-2]
    for i, r in ((0, d.p), (1, d.q)):
      if r is not None: b.dst(r, "pred", combine(_compare(b, cmp, h, b.half(b.src(a, "b32"), i, h), b.half(b.src(c, "b32"), i, h))))
    return
  x, y = _ftz_in(b, m, t, [b.src(a, t), b.src(c, t)])
  r = b.let("pred", _compare(b, cmp, t, x, y))
  p, q = (d.p, d.q) if isinstance(d, P.PredPair) else (d, None)
  b.dst(p, "pred", combine(r))
  if q is not None: b.dst(q, "pred", combine(b.bitnot("pred", r)))

@row("set")
def _set(b, ins):
  m = Mods(b, ins, CMP_FLAGS)
  if len(m.types) != 2: b.unsupported("set types")
  dt, st = m.types
  cmp, comb = _cmp_flags(b, ins, m)
  e = _compare(b, cmp, st, b.src(ins.args[1], st), b.src(ins.args[2], st))
  if comb: e = b.binop(BOOL_OPS[comb], "pred", e, b.src(ins.args[3], "pred"))
  b.dst(ins.args[0], dt, b.select(e, dt, b.const(dt, 1.0 if is_float(dt) else -1), b.const(dt, 0)))

@row("selp")
def _selp(b, ins):
  t = one_type(b, Mods(b, ins))
  d, x, y, c = ins.args
  p = b.src(c, "pred")
  b.dst(d, t, b.select(p, t, b.src(x, t), b.src(y, t)))

@row("slct", no_c=NUMPY_ONLY)
def _slct(b, ins):
  m = Mods(b, ins, {"ftz"})
  if len(m.types) != 2: b.unsupported("slct types")
  t, ct = m.types
  d, x, y, c = ins.args
  p = b.compare("ge", ct, b.src(c, ct), b.const(ct, 0))
  b.dst(d, t, b.select(p, t, b.src(x, t), b.src(y, t)))

# *** logic and bits ***

@row("and", "or", "xor")
def _logic(b, ins):
  t = one_type(b, Mods(b, ins))
  b.dst(ins.args[0], t, b.binop(BOOL_OPS[ins.op], t, b.src(ins.args[1], t), b.src(ins.args[2], t)))

@row("not")
def _not(b, ins):
  t = one_type(b, Mods(b, ins))
  b.dst(ins.args[0], t, b.bitnot(t, b.src(ins.args[1], t)))

@row("cnot", no_c=NUMPY_ONLY)
def _cnot(b, ins):
  t = one_type(b, Mods(b, ins))
  zero = b.compare("eq", t, b.src(ins.args[1], t), b.const(t, 0))
  b.dst(ins.args[0], t, b.select(zero, t, b.const(t, 1), b.const(t, 0)))

@row("shl", "shr")
def _shift(b, ins):
  t = one_type(b, Mods(b, ins))
  b.dst(ins.args[0], t, b.shift(ins.op, t, b.src(ins.args[1], t), b.src(ins.args[2], "u32")))

@row("shf")
def _shf(b, ins):
  m = Mods(b, ins, {"l", "r", "wrap", "clamp"})
  t = one_type(b, m)
  if bits(t) != 32 or not (m.has("l") or m.has("r")): b.unsupported("shf form")
  d, lo, hi, n = ins.args
  b.dst(d, "u32", b.funnel_shift(m.has("l"), m.has("wrap"), is_signed(t), b.src(lo, "u32"), b.src(hi, "u32"), b.src(n, "u32")))

# prmt's modes (PTX ISA, prmt): for each value of the selector's two low bits, the byte of {b, a} (0: a's lowest) that
# each result byte takes. A mode is the default mode with the selector these give (no sign replication).
PRMT_MODES = {"f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)), "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
              "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)), "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
              "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)), "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3))}

def prmt_selectors(mode:str) -> int:
  """The mode's four default-mode selectors (one nibble per result byte), 16 bits each, the one for low bits s at bit 16*s."""
  return sum(sum(k << 4 * i for i, k in enumerate(bytes_)) << 16 * s for s, bytes_ in enumerate(PRMT_MODES[mode]))

@row("prmt")
def _prmt(b, ins):
  m = Mods(b, ins, set(PRMT_MODES))
  d, x, y, c = ins.args
  sel = b.src(c, "b32")
  if m.flags:   # the selector of the mode for sel's two low bits
    s = b.binop("*", "u32", b.binop("&", "b32", sel, b.const("b32", 3)), b.const("u32", 16))
    word = b.int_to_int(b.shift("shr", "u64", b.const("u64", prmt_selectors(m.flags[0])), s), "u64", "b32", False)
    sel = b.binop("&", "b32", word, b.const("b32", 0xffff))
  b.dst(d, "b32", b.prmt(b.src(x, "b32"), b.src(y, "b32"), sel))

@row("bfe")
def _bfe(b, ins):
  t = one_type(b, Mods(b, ins))
  d, a, pos, n = ins.args
  b.dst(d, t, b.bfe(t, b.src(a, t), b.src(pos, "u32"), b.src(n, "u32")))

@row("bfi")
def _bfi(b, ins):
  t = one_type(b, Mods(b, ins))
  d, f, base, pos, n = ins.args
  b.dst(d, t, b.bfi(t, b.src(f, t), b.src(base, t), b.src(pos, "u32"), b.src(n, "u32")))

@row("brev")
def _brev(b, ins):
  t = one_type(b, Mods(b, ins))
  b.dst(ins.args[0], t, b.brev(t, b.src(ins.args[1], t)))

@row("popc", "clz")
def _popc(b, ins):
  t = one_type(b, Mods(b, ins))
  x = b.src(ins.args[1], uint_type(t))
  b.dst(ins.args[0], "u32", b.popc(t, x) if ins.op == "popc" else b.clz(t, x))

@row("bfind", no_c=NUMPY_ONLY)
def _bfind(b, ins):
  m = Mods(b, ins, {"shiftamt"})
  t = one_type(b, m)
  b.dst(ins.args[0], "u32", b.bfind(t, b.src(ins.args[1], t), m.has("shiftamt")))

@row("lop3")
def _lop3(b, ins):
  t = one_type(b, Mods(b, ins))
  d, x, y, z, lut = ins.args
  if not isinstance(lut, P.Imm): b.unsupported("lop3 with a register LUT")
  xs = [b.src(v, t) for v in (x, y, z)]
  # the sum of the minterms the LUT selects: bit k is the result for x, y, z = bits 2, 1, 0 of k
  lit = lambda k, i: xs[i] if k >> (2 - i) & 1 else b.bitnot(t, xs[i])
  terms = [b.binop("&", t, b.binop("&", t, lit(k, 0), lit(k, 1)), lit(k, 2)) for k in range(8) if int(lut.value) >> k & 1]
  b.dst(d, t, reduce(lambda p, q: b.binop("|", t, p, q), terms) if terms else b.const(t, 0))

# *** conversions ***

INT_ROUNDING = ("rni", "rzi", "rmi", "rpi")
CVT_FLAGS = {"rn", "rz", "rm", "rp", *INT_ROUNDING, "ftz", "sat", "satfinite", "relu", "rna", "rs"}

@row("cvt")
def _cvt(b, ins):
  m = Mods(b, ins, CVT_FLAGS)
  if len(m.types) != 2: b.unsupported("cvt types")
  dt, st = m.types
  if dt in FP8X2 or st in FP8X2: return _cvt_fp8(b, ins, m, dt, st)
  if dt in PACKED: return _cvt_pack(b, ins, m, dt, st)
  if len(ins.args) != 2: b.unsupported("cvt operands")
  d, a = ins.args
  x = b.src(a, st)
  if st == "f32" and m.has("ftz"): x = b.ftz(x)
  rnd = m.rnd("")
  if is_float(dt) and is_float(st):
    if dt == st or (bits(dt) >= bits(st) and rnd in INT_ROUNDING):
      # a float rounding (.rn) of a value already in the format changes nothing; only .rni etc. round it
      e = b.round_integral(x, st, rnd) if rnd in INT_ROUNDING else x
      if dt != st: e = b.float_to_float(e, st, dt, "rn")
    else:
      if (bits(dt) < bits(st) or {st, dt} == {"f16", "bf16"}) and not rnd: b.unsupported("narrowing cvt without a rounding modifier")
      e = b.float_to_float(x, st, dt, rnd or "rn")
  elif is_float(dt): e = b.int_to_float(x, st, dt, rnd or "rn")
  elif is_float(st):
    if rnd not in INT_ROUNDING: b.unsupported("float-to-int cvt without an integer rounding modifier")
    e = b.float_to_int(x, st, dt, rnd)
  else: e = b.int_to_int(x, st, dt, m.has("sat"))
  if m.has("ftz") and dt == "f32": e = b.ftz(e)
  if m.has("sat") and is_float(dt): e = b.sat(dt, e)
  if m.has("relu"): e = b.relu(dt, e)
  if is_float(dt) and is_float(st): e = b.canon(dt, e)   # a NaN converts to the canonical NaN
  b.dst(d, dt, e)

def _cvt_pack(b, ins, m:Mods, dt:str, st:str):
  """cvt.rn.f16x2.f32 d, a, b: d = {cvt(a) (upper half), cvt(b) (lower half)}."""
  if st != "f32" or len(ins.args) != 3: b.unsupported("cvt source for a packed type")
  h, rnd = dt[:-2], m.rnd("rn")
  d, hi, lo = ins.args
  parts = [b.canon(h, b.float_to_float(b.src(x, "f32"), "f32", h, rnd)) for x in (lo, hi)]
  if m.has("relu"): parts = [b.relu(h, p) for p in parts]
  if m.has("satfinite"): parts = [b.satfinite(h, p) for p in parts]
  b.dst(d, "b32", b.join_halves(parts[0], parts[1], h))

def _cvt_fp8(b, ins, m:Mods, dt:str, st:str):
  """The packed fp8 conversions: cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f32 d, a, b (a to the upper byte of the b16 d,
  b to the lower), cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f16x2 d, a, and cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2 d, a (the
  lower byte of the b16 a to the lower half of d). Other forms (.rs, fp8 to bf16x2, ...) are unsupported."""
  if m.set - {"rn", "satfinite", "relu"} or not m.has("rn"): b.unsupported(f"cvt.{'.'.join(m.flags)}.{dt}.{st}")
  relu = m.has("relu")
  if dt in FP8X2:
    if not m.has("satfinite"): b.unsupported(f"cvt to .{dt} without .satfinite")
    if st == "f32" and len(ins.args) == 3:
      return b.dst(ins.args[0], "b16", b.fp8x2_from_f32(b.src(ins.args[1], "f32"), b.src(ins.args[2], "f32"), FP8X2[dt], relu))
    if st == "f16x2" and len(ins.args) == 2: return b.dst(ins.args[0], "b16", b.fp8x2_from_f16x2(b.src(ins.args[1], "b32"), FP8X2[dt], relu))
  elif dt == "f16x2" and not m.has("satfinite") and len(ins.args) == 2:
    return b.dst(ins.args[0], "b32", b.fp8x2_to_f16x2(b.src(ins.args[1], "b16"), FP8X2[st], relu))
  b.unsupported(f"cvt.{'.'.join(m.flags)}.{dt}.{st}")
