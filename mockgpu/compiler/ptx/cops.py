"""C emitters for the PTX instructions the native translation covers (see cgen.py). Each computes what the numpy
path's emitter (ops.py, ops_alu.py) computes, over one thread's scalars; anything else raises NoNative."""
from __future__ import annotations
from mockgpu.compiler.ptx import parser as P
from mockgpu.compiler.ptx.ops import handler_table
from mockgpu.compiler.ptx.cgen import NoNative, CTYPE, PTX_TYPES, _INT_RANGE, _CMP, _BOOL, _LD_HINTS, kind, utype
from mockgpu.emulators.ptx.types import bits, is_float, is_signed

HANDLERS, handler = handler_table()

def emit(k, ins:P.Instr):
  h = HANDLERS.get(ins.op)
  if h is None: raise NoNative(f"instruction {ins.op}")
  if ins.error is not None: raise NoNative(ins.error)
  if ins.guard is not None:
    p, neg = ins.guard
    k.emit(f"if ({'!' if neg else ''}{p.name}) {{")
  # an operand list of another shape than the emitter's (a packed or vector form it does not take) is the numpy
  # path's to run, or to reject with its own error
  try: h(k, ins)
  except ValueError as e: raise NoNative(f"the operands of {ins.op}: {e}") from None
  if ins.guard is not None: k.emit("}")

def mods(ins:P.Instr, allowed:set=frozenset()) -> tuple[list[str], set[str]]:
  """The instruction's types and its other modifiers (NoNative for one outside allowed)."""
  types = [m for m in ins.mods if m in PTX_TYPES]
  flags = {m for m in ins.mods if m not in PTX_TYPES}
  if extra := flags - set(allowed): raise NoNative(f"modifier .{sorted(extra)[0]} of {ins.op}")
  return types, flags

def one(ins:P.Instr, allowed:set=frozenset(), ok:tuple|None=None) -> tuple[str, set[str]]:
  types, flags = mods(ins, allowed)
  if len(types) != 1: raise NoNative(f"{ins.op} with {len(types)} types")
  if ok is not None and types[0] not in ok: raise NoNative(f"{ins.op}.{types[0]}")
  return types[0], flags

INTS = ("b8", "u8", "s8", "b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64")
F32_64 = ("f32", "f64")
FLOATS = F32_64 + ("f16",)   # float16 values are their bits; arithmetic goes through float (prelude.c h_add, ...)

def wrap(t:str, e:str) -> str:
  """An integer expression computed in unsigned arithmetic of at least 32 bits, back to t."""
  return f"(({CTYPE[t]})({e}))"
def U(t:str, e:str) -> str: return f"(({utype(bits(t))})({e}))"

# *** control flow ***

@handler("bra")
def _bra(k, ins):
  mods(ins, {"uni"})
  if len(ins.args) != 1 or not isinstance(ins.args[0], P.Sym) or ins.args[0].name not in k.labels: raise NoNative("branch target")
  k.emit(f"goto B{k.labels[ins.args[0].name]};")

@handler("ret", "exit")
def _ret(k, ins):
  mods(ins, {"uni"})
  if not k.fn.entry: raise NoNative("ret from a .func")
  k.emit(f"goto B{len(k.blocks)};")

@handler("bar", "barrier")
def _bar(k, ins):
  # the barrier is the block boundary before it (cgen.Kernel.source); the reduction forms are warp-wide
  _, flags = mods(ins, {"sync", "aligned", "cta"})
  if len(ins.args) > 1 or not flags & {"sync"} and ins.op == "bar": raise NoNative("barrier form")
  if ins.args and not (isinstance(ins.args[0], P.Imm) and ins.args[0].value == 0): raise NoNative("named barriers")

@handler("membar", "fence")
def _fence(k, ins): pass   # the emulated memory is sequentially consistent

# *** moves and memory ***

@handler("mov")
def _mov(k, ins):
  t, _ = one(ins)
  d, a = ins.args
  if isinstance(d, P.Vec): return _unpack(k, t, d.items, a)
  if isinstance(a, P.Vec): return k.dst(d, t, _pack(k, t, a.items))
  if isinstance(a, P.Sym) and a.name in k.labels: raise NoNative("mov of a label")
  k.dst(d, t, k.src(a, t))

def _pack(k, t:str, items) -> str:
  """{a, b, ...} -> one value, the first element in the lowest bits."""
  if kind(t) == "f": raise NoNative(f"mov.{t} of a vector")
  w, n = bits(t) // len(items), bits(t)
  parts = [f"((uint{n}_t){k.src(x, f'b{w}')} << {i * w})" for i, x in enumerate(items)]
  return f"(({CTYPE[t]})({' | '.join(parts)}))"

def _unpack(k, t:str, items, a):
  if kind(t) == "f": raise NoNative(f"mov.{t} to a vector")
  w, n = bits(t) // len(items), bits(t)
  v = k.tmp()
  k.emit(f"{{ uint{n}_t {v} = (uint{n}_t){k.src(a, f'b{n}')};")
  for i, x in enumerate(items):
    if x is not P.SINK: k.dst(x, f"b{w}", f"((uint{w}_t)({v} >> {i * w}))")
  k.emit("}")

@handler("cvta")
def _cvta(k, ins):
  t, flags = one(ins, {"to", "global", "shared", "local", "const"}, ("u64", "b64", "s64"))
  d, a = ins.args
  if "global" in flags: return k.dst(d, t, k.src(a, t))
  if "to" in flags: return k.dst(d, t, f"({k.src(a, t)} & LOW_BITS)")
  if "const" not in flags: raise NoNative("cvta to a generic shared/local address")
  k.dst(d, t, f"({k.src(a, t)} | CONST_WINDOW)")

def _space(flags:set[str]) -> str:
  for s in ("global", "shared", "param", "local", "const"):
    if s in flags: return s
  return "shared" if "shared::cta" in flags else "generic"

def _address(k, a) -> str:
  if not isinstance(a, P.Addr): raise NoNative("memory operand")
  if isinstance(a.base, P.Sym):
    sp, off = k.symbol(a.base.name)
    if sp == "param": raise NoNative("a .param symbol outside ld.param")
    return f"{(off + a.base.offset + a.offset) % 2**64}ull"
  if a.base is None: return f"{a.offset % 2**64}ull"
  base = k.src(a.base, "u64")
  return base if a.offset == 0 else f"({base} + {a.offset % 2**64}ull)"

def _memop(k, ins, vec) -> tuple:
  """An ld/st's type, space, the registers of its (vector) operand vec, element size, a temporary and its stop id."""
  types, flags = mods(ins, _LD_HINTS | {"global", "shared", "param", "local", "const", "shared::cta", "v2", "v4", "volatile"})
  if len(types) != 1 or types[0] in ("pred", "b128"): raise NoNative(f"{ins.op} types")
  n = next((int(f[1:]) for f in flags if f in ("v2", "v4")), 1)
  space = _space(flags)
  if space == "generic" or (space in ("param", "const") and ins.op == "st"): raise NoNative(f"{ins.op}.{space}")
  items = list(vec.items) if isinstance(vec, P.Vec) else [vec]
  if len(items) != n: raise NoNative("vector width")
  return types[0], n, space, items, bits(types[0]) // 8, k.tmp(), k.where(ins)

@handler("ld", "ldu")
def _ld(k, ins):
  d, a = ins.args
  t, n, space, dsts, size, v, pc = _memop(k, ins, d)
  k.emit(f"{{ {CTYPE[t]} {v}[{n}];")
  if space == "param":
    if not isinstance(a, P.Addr) or not isinstance(a.base, P.Sym) or k.symbol(a.base.name)[0] != "param": raise NoNative("ld.param address")
    off = k.symbol(a.base.name)[1] + a.base.offset + a.offset
    for i in range(n): k.emit(f"pload(c, {v} + {i}, {off + i * size}, {size}, {pc});")
  elif space in ("shared", "local"): k.emit(f"memcpy({v}, {space[0].upper()}PTR({_address(k, a)}, {size * n}, 0, {pc}), {size * n});")
  elif space == "const": k.emit(f"gget(c, {v}, CONST_WINDOW | ({_address(k, a)} & LOW_BITS), {size}, {n}, {pc}, hints + {k.hint()});")
  else: k.emit(f"gget(c, {v}, {_address(k, a)}, {size}, {n}, {pc}, hints + {k.hint()});")
  for i, x in enumerate(dsts):
    if x is not P.SINK: k.dst(x, t, f"{v}[{i}]")
  k.emit("}")

@handler("st")
def _st(k, ins):
  a, s = ins.args
  t, n, space, srcs, size, v, pc = _memop(k, ins, s)
  k.emit(f"{{ {CTYPE[t]} {v}[{n}] = {{{', '.join(k.src(x, t) for x in srcs)}}}; uint64_t a_ = {_address(k, a)};")
  if space in ("shared", "local"): k.emit(f"memcpy({space[0].upper()}PTR(a_, {size * n}, 1, {pc}), {v}, {size * n});")
  else: k.emit(f"gput(c, a_, {v}, {size}, {n}, {pc}, hints + {k.hint()});")
  k.emit("}")

# *** integer arithmetic ***

def _int3(k, ins, allowed=frozenset()):
  t, flags = one(ins, allowed, INTS)
  return t, flags, ins.args[0], [k.src(x, t) for x in ins.args[1:]]

@handler("add", "sub")
def _addsub(k, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t in FLOATS: return _farith(k, ins, ins.op)
  t, flags, d, (x, y) = _int3(k, ins, {"cc"})
  if "cc" in flags: return _carry(k, ins.op, t, d, x, y, False)
  k.dst(d, t, wrap(t, f"{U(t, x)} {'+' if ins.op == 'add' else '-'} {U(t, y)}"))

def _carry(k, op:str, t:str, d, x:str, y:str, carry_in:bool, write_cc:bool=True):
  """add.cc/addc/sub.cc/subc (and mad.cc/madc's sums): the carry (for sub, the borrow) flag is the C local cc_, as
  the numpy path's _cc (ops_alu._carry) computes it."""
  if bits(t) not in (32, 64): raise NoNative("carry width")
  if k.barriers: raise NoNative("a carry flag in a kernel with barriers")   # cc_ is not among the saved registers
  UT = utype(bits(t))
  xs, ys, r1, r = k.tmp(), k.tmp(), k.tmp(), k.tmp()
  cin = f"({UT})cc_" if carry_in else f"({UT})0"
  k.emit(f"{{ {UT} {xs} = {U(t, x)}, {ys} = {U(t, y)};")
  if op == "add":
    k.emit(f"  {UT} {r1} = {xs} + {ys}, {r} = {r1} + {cin};")
    if write_cc: k.emit(f"  cc_ = ({r1} < {xs}) | ({r} < {r1});")
  else:
    k.emit(f"  {UT} {r1} = {xs} - {ys}, {r} = {r1} - {cin};")
    if write_cc: k.emit(f"  cc_ = ({xs} < {ys}) | ({r1} < {cin});")
  k.dst(d, t, f"(({CTYPE[t]}){r})")
  k.emit("}")

@handler("addc", "subc")
def _addc(k, ins):
  t, flags, d, (x, y) = _int3(k, ins, {"cc"})
  _carry(k, ins.op[:3], t, d, x, y, True, "cc" in flags)

def _product(k, ins, t:str, flags:set, x:str, y:str) -> tuple[str, str]:
  """mul.lo/hi/wide of x and y: (the result's type, its expression)."""
  n = bits(t)
  if "wide" in flags:
    if n > 32: raise NoNative("mul.wide of 64 bits")
    w = ("s" if is_signed(t) else "u") + str(2 * n)
    return w, f"(({CTYPE[w]}){x} * ({CTYPE[w]}){y})"
  if "hi" in flags:
    if n == 64: m = "__int128" if is_signed(t) else "unsigned __int128"
    else: m = "int64_t" if is_signed(t) else "uint64_t"
    return t, f"(({CTYPE[t]})((({m}){x} * ({m}){y}) >> {n}))"
  return t, wrap(t, f"{U(t, x)} * {U(t, y)}")

@handler("mul")
def _mul(k, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t in FLOATS: return _farith(k, ins, "mul")
  t, flags, d, (x, y) = _int3(k, ins, {"lo", "hi", "wide"})
  k.dst(d, *_product(k, ins, t, flags, x, y))

@handler("mad")
def _mad(k, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t in F32_64: return _farith(k, ins, "fma")
  t, flags = one(ins, {"lo", "hi", "wide", "cc"}, INTS)
  d, a, b, c = ins.args
  pt, p = _product(k, ins, t, flags, k.src(a, t), k.src(b, t))
  if "cc" in flags: return _carry(k, "add", pt, d, p, k.src(c, pt), False)
  k.dst(d, pt, wrap(pt, f"{U(pt, p)} + {U(pt, k.src(c, pt))}"))

@handler("madc")
def _madc(k, ins):
  t, flags = one(ins, {"lo", "hi", "cc"}, INTS)
  d, a, b, c = ins.args
  pt, p = _product(k, ins, t, flags, k.src(a, t), k.src(b, t))
  _carry(k, "add", pt, d, p, k.src(c, pt), True, "cc" in flags)

@handler("div", "rem")
def _divrem(k, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t in F32_64 and ins.op == "div": return _farith(k, ins, "div")
  t, _, d, (x, y) = _int3(k, ins)
  T, n = CTYPE[t], bits(t)
  a, b = k.tmp(), k.tmp()
  k.emit(f"{{ {T} {a} = {x}, {b} = {y};")
  if ins.op == "div":   # x/0: all ones; the signed overflow -MIN/-1 wraps
    if is_signed(t): e = f"{b} == 0 ? ({T})-1 : {b} == -1 ? {wrap(t, f'0u - {U(t, a)}')} : ({T})({a} / {b})"
    else: e = f"{b} == 0 ? ({T})0x{(1 << n) - 1:x}ull : ({T})({a} / {b})"
  else:                 # x%0: x
    e = f"{b} == 0 ? {a} : {b} == -1 ? ({T})0 : ({T})({a} % {b})" if is_signed(t) else f"{b} == 0 ? {a} : ({T})({a} % {b})"
  k.dst(d, t, f"({e})")
  k.emit("}")

@handler("min", "max")
def _minmax(k, ins):
  t, flags = one(ins, {"NaN", "ftz"}, INTS + FLOATS)
  d, a, b = ins.args
  x, y = k.src(a, t), k.src(b, t)
  if t == "f16":
    if flags: raise NoNative(f"{ins.op} flags of .f16")
    return k.dst(d, t, f"h_{ins.op}({x}, {y})")
  if t in F32_64:
    x, y = _ftz(t, flags, x), _ftz(t, flags, y)
    if "NaN" in flags and t == "f64": raise NoNative("min/max.NaN.f64")
    f = f"p{ins.op}{t[1:]}{'n' if 'NaN' in flags else ''}"
    return k.dst(d, t, f"{f}({x}, {y})")
  if "NaN" in flags or "ftz" in flags: raise NoNative(f"{ins.op} flags")
  k.dst(d, t, f"(({x}) {'<' if ins.op == 'min' else '>'} ({y}) ? ({x}) : ({y}))")

@handler("neg", "abs")
def _negabs(k, ins):
  t, flags = one(ins, {"ftz"}, INTS + FLOATS)
  d, a = ins.args
  x = k.src(a, t)
  if t == "f16": return k.dst(d, t, f"((uint16_t)({x} ^ 0x8000u))" if ins.op == "neg" else f"((uint16_t)({x} & 0x7fffu))")
  if t in F32_64:
    x = _ftz(t, flags, x)
    return k.dst(d, t, f"(-{x})" if ins.op == "neg" else f"fabs{'f' if t == 'f32' else ''}({x})")
  if flags: raise NoNative(f"{ins.op} flags")
  neg = wrap(t, f"0u - {U(t, x)}")
  k.dst(d, t, neg if ins.op == "neg" else f"(({x}) < 0 ? {neg} : ({x}))")

# *** logic and bits ***

@handler("and", "or", "xor")
def _logic(k, ins):
  t, _ = one(ins, ok=INTS + ("pred",))
  d, a, b = ins.args
  k.dst(d, t, f"(({CTYPE[t]})({k.src(a, t)} {_BOOL[ins.op]} {k.src(b, t)}))")

@handler("not")
def _not(k, ins):
  t, _ = one(ins, ok=INTS + ("pred",))
  x = k.src(ins.args[1], t)
  k.dst(ins.args[0], t, f"(!{x})" if t == "pred" else f"(({CTYPE[t]})~{x})")

@handler("shl", "shr")
def _shift(k, ins):
  t, _ = one(ins, ok=INTS)
  d, a, b = ins.args
  x, s, n, v = k.src(a, t), k.src(b, "u32"), bits(t), k.tmp()
  k.emit(f"{{ uint32_t {v} = {s};")
  if ins.op == "shl": e = f"({v} >= {n} ? ({CTYPE[t]})0 : {wrap(t, f'{U(t, x)} << {v}')})"
  elif is_signed(t): e = f"(({CTYPE[t]})(({x}) >> ({v} >= {n} ? {n - 1} : {v})))"
  else: e = f"({v} >= {n} ? ({CTYPE[t]})0 : ({CTYPE[t]})(({x}) >> {v}))"
  k.dst(d, t, e)
  k.emit("}")

@handler("shf")
def _shf(k, ins):
  t, flags = one(ins, {"l", "r", "wrap", "clamp"}, ("b32", "u32", "s32"))
  if not flags & {"l", "r"} or not flags & {"wrap", "clamp"}: raise NoNative("shf form")
  d, a, b, c = ins.args
  n, x = k.tmp(), k.tmp()
  cv = k.src(c, "u32")
  k.emit(f"{{ uint64_t {n} = " + (f"{cv} & 31u;" if "wrap" in flags else f"{cv} < 32u ? {cv} : 32u;"))
  k.emit(f"uint64_t {x} = ((uint64_t){k.src(b, 'u32')} << 32) | (uint64_t){k.src(a, 'u32')};")
  if "l" in flags: e = f"((uint32_t)(({x} << {n}) >> 32))"
  elif is_signed(t): e = f"((uint32_t)((int64_t){x} >> {n}))"
  else: e = f"((uint32_t)({x} >> {n}))"
  k.dst(d, "u32", e)
  k.emit("}")

@handler("lop3")
def _lop3(k, ins):
  t, _ = one(ins, ok=("b32", "b64"))
  d, a, b, c, lut = ins.args
  if not isinstance(lut, P.Imm): raise NoNative("lop3 with a register LUT")
  x, y, z = (k.src(v, t) for v in (a, b, c))
  terms = [f"({x if i & 4 else '~' + x} & {y if i & 2 else '~' + y} & {z if i & 1 else '~' + z})" for i in range(8) if int(lut.value) >> i & 1]
  k.dst(d, t, f"(({CTYPE[t]})({' | '.join(terms) or '0'}))")

@handler("popc", "clz")
def _popc(k, ins):
  t, _ = one(ins, ok=("b32", "b64"))
  x, n = k.src(ins.args[1], f"u{bits(t)}"), bits(t)
  if ins.op == "popc": e = f"((uint32_t)__builtin_popcount{'ll' if n == 64 else ''}({x}))"
  else: e = f"clz{n}p({x})"
  k.dst(ins.args[0], "u32", e)

def _bits64(t:str, e:str) -> str: return f"(uint64_t)(uint{bits(t)}_t)({e})"

@handler("bfe")
def _bfe(k, ins):
  t, _ = one(ins, ok=("b32", "u32", "s32", "b64", "u64", "s64"))
  d, a, b, c = ins.args
  e = f"bfe_p({_bits64(t, k.src(a, t))}, {k.src(b, 'u32')}, {k.src(c, 'u32')}, {bits(t)}, {int(is_signed(t))})"
  k.dst(d, t, f"(({CTYPE[t]}){e})")

@handler("bfi")
def _bfi(k, ins):
  t, _ = one(ins, ok=("b32", "b64"))
  d, f, b, c, e = ins.args
  v = f"bfi_p({_bits64(t, k.src(f, t))}, {_bits64(t, k.src(b, t))}, {k.src(c, 'u32')}, {k.src(e, 'u32')}, {bits(t)})"
  k.dst(d, t, f"(({CTYPE[t]}){v})")

@handler("brev")
def _brev(k, ins):
  t, _ = one(ins, ok=("b32", "b64"))
  k.dst(ins.args[0], t, f"brev{bits(t)}({k.src(ins.args[1], t)})")

@handler("prmt")
def _prmt(k, ins):
  t, flags = one(ins, ok=("b32",))
  if flags: raise NoNative(f"prmt mode .{sorted(flags)[0]}")
  d, a, b, c = ins.args
  k.dst(d, t, f"prmt_p({k.src(a, 'b32')}, {k.src(b, 'b32')}, {k.src(c, 'b32')})")

# *** comparisons and selects ***

def _compare(cmp:str, t:str, x:str, y:str) -> str:
  if t in F32_64:
    if cmp in ("eq", "lt", "le", "gt", "ge"): return f"({x} {_CMP[cmp]} {y})"
    if cmp == "ne": return f"({x} != {y} && {x} == {x} && {y} == {y})"
    if cmp == "neu": return f"({x} != {y})"
    if cmp in ("equ", "ltu", "leu", "gtu", "geu"): return f"({x} {_CMP[cmp[:2]]} {y} || {x} != {x} || {y} != {y})"
    if cmp == "num": return f"({x} == {x} && {y} == {y})"
    if cmp == "nan": return f"({x} != {x} || {y} != {y})"
    raise NoNative(f"comparison .{cmp}")
  if cmp not in _CMP: raise NoNative(f"comparison .{cmp}")
  if cmp in ("lo", "ls", "hi", "hs") or t[0] == "b": x, y = f"(uint{bits(t)}_t){x}", f"(uint{bits(t)}_t){y}"
  return f"({x} {_CMP[cmp]} {y})"

@handler("setp")
def _setp(k, ins):
  types, flags = mods(ins, set(_CMP) | {"equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan", "ftz"} | set(_BOOL))
  if len(types) != 1 or types[0] not in INTS + FLOATS: raise NoNative(f"setp types {types}")
  t = types[0]
  cmp = next(f for f in flags if f not in _BOOL and f != "ftz")
  comb = next((f for f in flags if f in _BOOL), None)
  d, a, b = ins.args[:3]
  x, y = _ftz(t, flags, k.src(a, t)), _ftz(t, flags, k.src(b, t))
  if t == "f16": t, x, y = "f32", f"h2f({x})", f"h2f({y})"   # exact
  r = k.tmp()
  k.emit(f"{{ uint8_t {r} = {_compare(cmp, t, x, y)};")
  c = k.src(ins.args[3], "pred") if comb else None
  p, q = (d.p, d.q) if isinstance(d, P.PredPair) else (d, None)
  k.dst(p, "pred", f"({r} {_BOOL[comb]} {c})" if comb else r)
  if q is not None: k.dst(q, "pred", f"(!{r} {_BOOL[comb]} {c})" if comb else f"!{r}")
  k.emit("}")

@handler("selp")
def _selp(k, ins):
  t, _ = one(ins)
  if t == "pred": raise NoNative("selp.pred")
  d, a, b, c = ins.args
  k.dst(d, t, f"({k.src(c, 'pred')} ? {k.src(a, t)} : {k.src(b, t)})")

# *** float arithmetic ***

def _ftz(t:str, flags:set, x:str) -> str: return f"ftz_f32({x})" if "ftz" in flags and t == "f32" else x

_APPROX = {"ex2": "(float)exp2((double){})", "lg2": "log2_32({})", "sin": "(float)sin((double){})", "cos": "(float)cos((double){})",
           "tanh": "tanh_32({})", "rcp": "(float)(1.0 / (double){})", "sqrt": "(float)sqrt((double){})",
           "rsqrt": "(float)(1.0 / sqrt((double){}))"}

def _farith(k, ins, op:str):
  """add/sub/mul/fma/div/sqrt/rcp on f32/f64 in round-to-nearest, with .ftz (numerics.farith and approx)."""
  t, flags = one(ins, {"rn", "ftz", "approx", "full"}, FLOATS)
  nargs = {"sqrt": 1, "rcp": 1, "fma": 3}.get(op, 2)
  if len(ins.args) != nargs + 1: raise NoNative("operand count")
  xs = [_ftz(t, flags, k.src(a, t)) for a in ins.args[1:]]
  if t == "f16":
    if flags - {"rn"} or op not in ("add", "sub", "mul"): raise NoNative(f"{op}.f16")
    return k.dst(ins.args[0], t, f"h_{op}({xs[0]}, {xs[1]})")
  approx = bool(flags & {"approx", "full"})
  if t == "f64":
    if approx and "ftz" not in flags: raise NoNative(f"{op}.approx.f64")
    e = {"add": "({} + {})", "sub": "({} - {})", "mul": "({} * {})", "div": "({} / {})", "sqrt": "sqrt({})", "rcp": "(1.0 / {})",
         "fma": "fma({}, {}, {})"}.get(op)   # C's fma rounds once, as numerics.fma64 does
    if e is None: raise NoNative(f"{op}.f64")
    if approx and op == "sqrt": raise NoNative("sqrt.approx.f64")
  elif approx and op in ("sqrt", "rcp"): e = _APPROX[op]
  else:
    e = {"add": "({} + {})", "sub": "({} - {})", "mul": "({} * {})", "fma": "fma32({}, {}, {})", "div": "(float)((double){} / (double){})",
         "sqrt": "(float)sqrt((double){})", "rcp": "(float)(1.0 / (double){})"}[op]
  k.dst(ins.args[0], t, _ftz(t, flags, e.format(*xs)))

@handler("fma")
def _fma(k, ins): _farith(k, ins, "fma")

@handler("sqrt", "rcp")
def _sqrt(k, ins): _farith(k, ins, ins.op)

@handler("rsqrt", "ex2", "lg2", "sin", "cos", "tanh")
def _approx(k, ins):
  t, flags = one(ins, {"approx", "ftz"}, ("f32",))
  if "approx" not in flags: raise NoNative(f"{ins.op} without .approx")
  d, a = ins.args
  k.dst(d, t, _ftz(t, flags, _APPROX[ins.op].format(_ftz(t, flags, k.src(a, t)))))

# *** conversions ***

_ROUND = {"rni": "rint", "rzi": "trunc", "rmi": "floor", "rpi": "ceil"}

@handler("cvt")
def _cvt(k, ins):
  if any(m in _FP8X2 for m in ins.mods): return _cvt_fp8(k, ins)
  types, flags = mods(ins, {"rn", "rni", "rzi", "rmi", "rpi", "ftz"})
  if len(types) != 2: raise NoNative("cvt types")
  dt, st = types
  d, a = ins.args
  rnd = next(iter(flags - {"ftz"}), "")
  if "ftz" in flags and "f32" not in (dt, st): raise NoNative("cvt.ftz")
  x = _ftz(st, flags, k.src(a, st))
  if dt in INTS and st in INTS: e = f"(({CTYPE[dt]}){x})"
  elif dt in INTS and st in F32_64: e = _float_to_int(dt, rnd, f"(double){x}")
  elif dt in F32_64 and st in INTS:
    if rnd not in ("", "rn"): raise NoNative(f"cvt.{rnd} of an integer")
    e = f"(({CTYPE[dt]}){x})"
  else: e = _float_to_float(dt, st, rnd, x)
  k.dst(d, dt, _ftz(dt, flags, e))

def _float_to_int(dt:str, rnd:str, x:str) -> str:
  if rnd not in _ROUND: raise NoNative("cvt to an integer without an integer rounding")
  lo, hi = _INT_RANGE[dt]
  r = f"{_ROUND[rnd]}({x})"
  if is_signed(dt): return f"(({CTYPE[dt]})f2s({r}, {float(lo)!r}, {float(hi)!r}, {lo}ll, {hi}ll))"
  return f"(({CTYPE[dt]})f2u({r}, {float(hi)!r}, {hi}ull))"

def _float_to_float(dt:str, st:str, rnd:str, x:str) -> str:
  if dt == st and st in F32_64:
    if rnd not in _ROUND: raise NoNative(f"cvt.{rnd or 'plain'}.{dt}.{st}")
    return f"(({CTYPE[dt]})copysign({_ROUND[rnd]}((double){x}), (double){x}))"
  if rnd not in ("", "rn"): raise NoNative(f"cvt.{rnd}.{dt}.{st}")
  if (st, dt) == ("f32", "f64"): return f"((double){x})"
  if (st, dt) == ("f64", "f32") and rnd == "rn": return f"((float){x})"
  if (st, dt) == ("f16", "f32"): return f"h2f_q({x})"
  if (st, dt) == ("f32", "f16") and rnd == "rn": return f"f2h({x})"
  raise NoNative(f"cvt.{rnd}.{dt}.{st}")

# the packed fp8 conversions (ops_alu._cvt_fp8, prelude.c to_fp8/fp8_to_h): significand bits, emin, largest finite value
_FP8X2 = {"e4m3x2": (4, -6, 448.0), "e5m2x2": (3, -14, 57344.0)}

def _cvt_fp8(k, ins):
  types, flags = mods(ins, {"rn", "satfinite", "relu"})
  if len(types) != 2 or "rn" not in flags: raise NoNative("cvt fp8 form")
  dt, st = types
  relu = int("relu" in flags)
  if dt in _FP8X2 and "satfinite" in flags:
    p, emin, mx = _FP8X2[dt]
    if st == "f32" and len(ins.args) == 3:
      d, a, b = ins.args
      return k.dst(d, "b16", f"fp8x2_f32({k.src(a, 'f32')}, {k.src(b, 'f32')}, {p}, {emin}, {mx!r}, {relu})")
    if st == "f16x2" and len(ins.args) == 2:
      d, a = ins.args
      return k.dst(d, "b16", f"fp8x2_h2({k.src(a, 'b32')}, {p}, {emin}, {mx!r}, {relu})")
  elif dt == "f16x2" and st in _FP8X2 and "satfinite" not in flags and len(ins.args) == 2:
    p, emin, _ = _FP8X2[st]
    d, a = ins.args
    return k.dst(d, "b32", f"h2_fp8x2({k.src(a, 'b16')}, {p}, {emin}, {int(st == 'e4m3x2')}, {relu})")
  raise NoNative(f"cvt.{'.'.join(sorted(flags))}.{dt}.{st}")
