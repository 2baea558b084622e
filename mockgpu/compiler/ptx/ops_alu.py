"""Arithmetic, comparison, conversion and bit-manipulation emitters (see ops.py for the emitter contract)."""
from __future__ import annotations
from mockgpu.compiler.ptx import parser as P
from mockgpu.compiler.ptx.ops import handler, Mods, one_type, npt, K
from mockgpu.emulators.ptx.types import PTX_TYPES, bits, is_float, is_signed

_FLOAT_FLAGS = {"rn", "rz", "rm", "rp", "ftz", "sat", "approx", "full", "relu"}
_PACKED = ("f16x2", "bf16x2")

_NUMPY_OP = {"add": "+", "sub": "-", "mul": "*", "div": "/"}

def _wide(t:str) -> str: return ("s" if is_signed(t) else "u") + str(bits(t) * 2)

# *** float arithmetic ***

def _float_op(cx, ins, op:str, nargs:int):
  """add/sub/mul/fma/div/sqrt/rcp on f16/bf16/f32/f64 (and packed x2) with rounding, ftz and sat."""
  m = Mods(cx, ins, _FLOAT_FLAGS)
  t = one_type(cx, m)
  d, srcs = ins.args[0], ins.args[1:1 + nargs]
  if len(ins.args) != nargs + 1: cx.unsupported("operand count")
  if t in _PACKED: return _packed(cx, ins, m, t, op, d, srcs)
  args = [cx.src(a, t) for a in srcs]
  cx.dst(d, t, _float_expr(cx, m, t, op, args))

def _float_expr(cx, m:Mods, t:str, op:str, args:list[str]) -> str:
  rnd = m.rnd("rn")
  args = _ftz_in(m, t, args)
  approx = m.has("approx") or m.has("full")
  if approx and op in ("sqrt", "rcp", "rsqrt"): e = f"approx({op!r}, {t!r}, {args[0]})"
  elif approx and op == "div": e = f"farith('div', {t!r}, 'rn', {args[0]}, {args[1]})"
  elif t == "f32" and rnd == "rn" and op in ("add", "sub", "mul"): e = f"({args[0]} {_NUMPY_OP[op]} {args[1]})"   # IEEE in numpy
  elif t == "f32" and rnd == "rn" and op == "fma": e = f"fma32({', '.join(args)})"
  elif t == "f64" and rnd == "rn" and op in _NUMPY_OP: e = f"({args[0]} {_NUMPY_OP[op]} {args[1]})"
  elif t == "f64" and rnd == "rn" and op == "sqrt": e = f"np.sqrt({args[0]})"
  elif op == "rcp": e = f"farith('div', {t!r}, {rnd!r}, {K(cx, t, 1.0) if t != 'bf16' else K(cx, 'b16', 0x3f80)}, {args[0]})"
  else: e = f"farith({op!r}, {t!r}, {rnd!r}, {', '.join(args)})"
  return _post(m, t, e)

def _ftz_in(m:Mods, t:str, args:list[str]) -> list[str]:
  """.ftz flushes subnormal float32 inputs (and, in _post, results) to zero."""
  return [f"ftz({a})" for a in args] if m.has("ftz") and t == "f32" else args

def _post(m:Mods, t:str, e:str) -> str:
  if m.has("ftz") and t == "f32": e = f"ftz({e})"
  if m.has("relu"): e = f"relu({e}, {t!r})"
  if m.has("sat"): e = f"sat({e})" if t != "bf16" else f"from64(sat(to64({e}, 'bf16')), 'bf16')"
  return e

def _packed(cx, ins, m:Mods, t:str, op:str, d, srcs):
  """f16x2/bf16x2: the operation on each 16-bit half."""
  h = t[:-2]
  parts = []
  for half in (0, 1):
    args = [f"half_of({cx.src(a, 'b32')}, {half}, {h!r})" for a in srcs]
    parts.append(_float_expr(cx, m, h, op, args))
  cx.dst(d, "b32", f"join_halves({parts[0]}, {parts[1]}, {h!r})")

def _each_half(cx, ins, t:str, d, srcs, fn):
  h = t[:-2]
  parts = [fn([f"half_of({cx.src(a, 'b32')}, {half}, {h!r})" for a in srcs], h) for half in (0, 1)]
  cx.dst(d, "b32", f"join_halves({parts[0]}, {parts[1]}, {h!r})")

@handler("add", "sub")
def _addsub(cx, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t is not None and is_float(t): return _float_op(cx, ins, ins.op, 2)
  m = Mods(cx, ins, {"sat", "cc"})
  t = one_type(cx, m)
  d, a, b = ins.args
  x, y = cx.src(a, t), cx.src(b, t)
  if m.has("sat"):
    if t != "s32": cx.unsupported(".sat")
    return cx.dst(d, t, f"np.clip({x}.astype(np.int64) {'+' if ins.op == 'add' else '-'} {y}, -2**31, 2**31 - 1).astype(np.int32)")
  if m.has("cc"): return _carry(cx, ins.op, t, d, x, y, False)
  cx.dst(d, t, f"({x} {'+' if ins.op == 'add' else '-'} {y})")

def _carry(cx, op:str, t:str, d, x:str, y:str, carry_in:bool):
  """add.cc/addc/sub.cc/subc: the carry (borrow for sub) flag lives in _cc."""
  if bits(t) not in (32, 64): cx.unsupported("carry width")
  U = npt(f"u{bits(t)}")
  xu, yu = f"({x}).view({U})", f"({y}).view({U})"
  cin = f"_cc.astype({U})" if carry_in else K(cx, f"u{bits(t)}", 0)
  r, r1 = cx.tmp(), cx.tmp()
  if op == "add":
    cx.emit(f"{r1} = {xu} + {yu}")
    cx.emit(f"{r} = {r1} + {cin}")
    cx.emit(f"_cc_new = (({r1} < {xu}) | ({r} < {r1})).astype(np.uint32)")
  else:
    cx.emit(f"{r1} = {xu} - {yu}")
    cx.emit(f"{r} = {r1} - {cin}")
    cx.emit(f"_cc_new = (({xu} < {yu}) | ({r1} < {cin})).astype(np.uint32)")
  cx.emit("_cc = _cc_new" if cx.mask is None else f"_cc = np.where({cx.mask}, _cc_new, _cc)")
  cx.dst(d, t, f"{r}.view({npt(t)})")

@handler("addc", "subc")
def _addc(cx, ins):
  m = Mods(cx, ins, {"cc"})
  t = one_type(cx, m)
  d, a, b = ins.args
  x, y = cx.src(a, t), cx.src(b, t)
  if m.has("cc"): return _carry(cx, ins.op[:3], t, d, x, y, True)
  U = npt(f"u{bits(t)}")
  sign = "+" if ins.op == "addc" else "-"
  cx.dst(d, t, f"(({x}).view({U}) {sign} ({y}).view({U}) {sign} _cc.astype({U})).view({npt(t)})")

@handler("mul")
def _mul(cx, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t is not None and is_float(t): return _float_op(cx, ins, "mul", 2)
  m = Mods(cx, ins, {"lo", "hi", "wide"})
  t = one_type(cx, m)
  d, a, b = ins.args
  x, y = cx.src(a, t), cx.src(b, t)
  cx.dst(*_int_mul(cx, m, t, d, x, y))

def _int_mul(cx, m:Mods, t:str, d, x:str, y:str):
  if m.has("wide"):
    if bits(t) > 32: cx.unsupported("mul.wide of 64-bit")
    w = _wide(t)
    return d, w, f"({x}.astype({npt(w)}) * {y}.astype({npt(w)}))"
  if m.has("hi"):
    if bits(t) == 64: return d, t, f"mulhi64({x}, {y}, {is_signed(t)})"
    w = _wide(t)
    return d, t, f"(({x}.astype({npt(w)}) * {y}.astype({npt(w)})) >> {K(cx, w, bits(t))}).astype({npt(t)})"
  return d, t, f"({x} * {y})"

@handler("mul24", "mad24")
def _mul24(cx, ins):
  m = Mods(cx, ins, {"lo", "hi", "sat"})
  t = one_type(cx, m)
  if t not in ("u32", "s32") or m.has("sat"): cx.unsupported()
  d, a, b = ins.args[:3]
  ext = lambda v: f"sext24({v})" if t == "s32" else f"({v}.astype(np.int64) & 0xffffff)"
  p = f"({ext(cx.src(a, t))} * {ext(cx.src(b, t))})"
  v = f"({p} >> 16)" if m.has("hi") else p
  v = f"({v} & 0xffffffff).astype(np.uint32).view({npt(t)})"
  if ins.op == "mad24": v = f"({v} + {cx.src(ins.args[3], t)})"
  cx.dst(d, t, v)

@handler("mad")
def _mad(cx, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t is not None and is_float(t): return _float_op(cx, ins, "fma", 3)
  m = Mods(cx, ins, {"lo", "hi", "wide", "sat", "cc"})
  t = one_type(cx, m)
  d, a, b, c = ins.args
  _, pt, p = _int_mul(cx, m, t, d, cx.src(a, t), cx.src(b, t))
  z = cx.src(c, pt)
  if m.has("cc"): return _carry(cx, "add", pt, d, p, z, False)
  if m.has("sat"):
    if t != "s32" or not m.has("hi"): cx.unsupported(".sat")
    return cx.dst(d, t, f"np.clip({p}.astype(np.int64) + {z}, -2**31, 2**31 - 1).astype(np.int32)")
  cx.dst(d, pt, f"({p} + {z})")

@handler("madc")
def _madc(cx, ins):
  m = Mods(cx, ins, {"lo", "hi", "cc"})
  t = one_type(cx, m)
  d, a, b, c = ins.args
  _, pt, p = _int_mul(cx, m, t, d, cx.src(a, t), cx.src(b, t))
  if m.has("cc"): return _carry(cx, "add", pt, d, p, cx.src(c, pt), True)
  U = npt(f"u{bits(pt)}")
  cx.dst(d, pt, f"(({p}).view({U}) + ({cx.src(c, pt)}).view({U}) + _cc.astype({U})).view({npt(pt)})")

@handler("fma")
def _fma(cx, ins): _float_op(cx, ins, "fma", 3)

@handler("div")
def _div(cx, ins):
  t = next((x for x in ins.mods if x in PTX_TYPES), None)
  if t is not None and is_float(t): return _float_op(cx, ins, "div", 2)
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b = ins.args
  cx.dst(d, t, f"idiv({cx.src(a, t)}, {cx.src(b, t)})")

@handler("rem")
def _rem(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b = ins.args
  cx.dst(d, t, f"irem({cx.src(a, t)}, {cx.src(b, t)})")

@handler("sqrt", "rcp")
def _sqrt(cx, ins): _float_op(cx, ins, ins.op, 1)

@handler("rsqrt")
def _rsqrt(cx, ins):
  m = Mods(cx, ins, {"approx", "ftz"})
  t = one_type(cx, m)
  if not m.has("approx"): cx.unsupported("rsqrt without .approx")
  a = _ftz_in(m, t, [cx.src(ins.args[1], t)])[0]
  cx.dst(ins.args[0], t, _post(m, t, f"approx('rsqrt', {t!r}, {a})"))

@handler("ex2", "lg2", "sin", "cos", "tanh")
def _transcendental(cx, ins):
  m = Mods(cx, ins, {"approx", "ftz"})
  t = one_type(cx, m)
  if not m.has("approx"): cx.unsupported(f"{ins.op} without .approx")
  if ins.op in ("sin", "cos", "lg2") and t != "f32": cx.unsupported(f"{ins.op}.{t}")
  d, a = ins.args
  if t in ("f16x2", "bf16x2"): return _each_half(cx, ins, t, d, [a], lambda xs, h: f"approx({ins.op!r}, {h!r}, {xs[0]})")
  x = _ftz_in(m, t, [cx.src(a, t)])[0]
  cx.dst(d, t, _post(m, t, f"approx({ins.op!r}, {t!r}, {x})"))

@handler("abs", "neg")
def _absneg(cx, ins):
  m = Mods(cx, ins, {"ftz", "relu"})
  t = one_type(cx, m)
  d, a = ins.args
  if t in ("f16x2", "bf16x2"):
    mask = 0x7fff7fff if ins.op == "abs" else 0x80008000
    return cx.dst(d, "b32", f"({cx.src(a, 'b32')} {'&' if ins.op == 'abs' else '^'} {K(cx, 'b32', mask)})")
  if t == "bf16":
    x = cx.src(a, "b16")
    return cx.dst(d, "b16", f"({x} & {K(cx, 'b16', 0x7fff)})" if ins.op == "abs" else f"({x} ^ {K(cx, 'b16', 0x8000)})")
  x = cx.src(a, t)
  if is_float(t): x = f"ftz({x})" if m.has("ftz") and t == "f32" else x
  cx.dst(d, t, f"np.abs({x})" if ins.op == "abs" else f"(-{x})")

@handler("min", "max")
def _minmax(cx, ins):
  m = Mods(cx, ins, {"ftz", "NaN", "relu", "xorsign", "abs"})
  t = one_type(cx, m)
  d, a, b = ins.args[:3]
  if m.has("xorsign") or m.has("abs"): cx.unsupported(".xorsign.abs")
  if is_float(t):
    nan = m.has("NaN")
    f = "fmin" if ins.op == "min" else "fmax"
    def one(xs, h):
      if h == "bf16": return f"from64({f}(to64({xs[0]}, 'bf16'), to64({xs[1]}, 'bf16'), {nan}), 'bf16')"
      return f"{f}({xs[0]}, {xs[1]}, {nan})"
    if t in ("f16x2", "bf16x2"): return _each_half(cx, ins, t, d, [a, b], one)
    x, y = cx.src(a, t), cx.src(b, t)
    if m.has("ftz") and t == "f32": x, y = f"ftz({x})", f"ftz({y})"
    return cx.dst(d, t, one([x, y], t))
  f = "np.minimum" if ins.op == "min" else "np.maximum"
  e = f"{f}({cx.src(a, t)}, {cx.src(b, t)})"
  if m.has("relu"): e = f"np.maximum({e}, {K(cx, t, 0)})"
  cx.dst(d, t, e)

@handler("copysign")
def _copysign(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b = ins.args
  cx.dst(d, t, f"np.copysign({cx.src(b, t)}, {cx.src(a, t)})")

@handler("testp")
def _testp(cx, ins):
  m = Mods(cx, ins, {"finite", "infinite", "number", "notanumber", "normal", "subnormal"})
  t = one_type(cx, m)
  d, a = ins.args
  x = cx.src(a, t)
  tiny = {"f32": "1.1754943508222875e-38", "f64": "2.2250738585072014e-308"}[t]
  e = {"finite": f"np.isfinite({x})", "infinite": f"np.isinf({x})", "number": f"~np.isnan({x})", "notanumber": f"np.isnan({x})",
       "normal": f"(np.isfinite({x}) & (np.abs({x}) >= {tiny}))", "subnormal": f"((np.abs({x}) < {tiny}) & ({x} != 0))"}[m.flags[0]]
  cx.dst(d, "pred", e)

# *** comparisons and selects ***

_CMP_INT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_CMP_FLOAT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

def _compare(cx, cmp:str, t:str, x:str, y:str) -> str:
  if t == "bf16": x, y, t = f"to64({x}, 'bf16')", f"to64({y}, 'bf16')", "f64"
  if is_float(t):
    if cmp in _CMP_FLOAT:
      e = f"({x} {_CMP_FLOAT[cmp]} {y})"
      # ordered != is false when either side is NaN (numpy's != is true)
      return f"({e} & ~np.isnan({x}) & ~np.isnan({y}))" if cmp == "ne" else e
    if cmp in ("equ", "neu", "ltu", "leu", "gtu", "geu"):
      e = f"({x} {_CMP_FLOAT[cmp[:2]]} {y})"
      return e if cmp == "neu" else f"({e} | np.isnan({x}) | np.isnan({y}))"
    if cmp == "num": return f"(~np.isnan({x}) & ~np.isnan({y}))"
    if cmp == "nan": return f"(np.isnan({x}) | np.isnan({y}))"
    cx.unsupported(f"comparison .{cmp}")
  if cmp not in _CMP_INT: cx.unsupported(f"comparison .{cmp}")
  if cmp in ("lo", "ls", "hi", "hs") or t[0] == "b":
    u = f"u{bits(t)}"
    x, y = f"({x}).view({npt(u)})", f"({y}).view({npt(u)})"
  return f"({x} {_CMP_INT[cmp]} {y})"

_BOOL = {"and": "&", "or": "|", "xor": "^"}

@handler("setp")
def _setp(cx, ins):
  m = Mods(cx, ins, set(_CMP_INT) | {"equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan", "ftz"} | set(_BOOL))
  t = one_type(cx, m)
  cmp = next(f for f in m.flags if f not in _BOOL and f != "ftz")
  comb = next((f for f in m.flags if f in _BOOL), None)
  d, a, b = ins.args[:3]
  if t in ("f16x2", "bf16x2"):
    if not isinstance(d, P.PredPair): cx.unsupported("setp.x2 destination")
    h = t[:-2]
    for half, dst in ((0, d.p), (1, d.q)):
      if dst is None: continue
      e = _compare(cx, cmp, h, f"half_of({cx.src(a, 'b32')}, {half}, {h!r})", f"half_of({cx.src(b, 'b32')}, {half}, {h!r})")
      if comb: e = f"({e} {_BOOL[comb]} {cx.src(ins.args[3], 'pred')})"
      cx.dst(dst, "pred", e)
    return
  x, y = cx.src(a, t), cx.src(b, t)
  if m.has("ftz") and t == "f32": x, y = f"ftz({x})", f"ftz({y})"
  r = cx.tmp()
  cx.emit(f"{r} = {_compare(cx, cmp, t, x, y)}")
  c = cx.src(ins.args[3], "pred") if comb else None
  p, q = (d.p, d.q) if isinstance(d, P.PredPair) else (d, None)
  cx.dst(p, "pred", f"({r} {_BOOL[comb]} {c})" if comb else r)
  if q is not None: cx.dst(q, "pred", f"(~{r} {_BOOL[comb]} {c})" if comb else f"(~{r})")

@handler("set")
def _set(cx, ins):
  m = Mods(cx, ins, set(_CMP_INT) | {"equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan", "ftz"} | set(_BOOL))
  if len(m.types) != 2: cx.unsupported("set types")
  dt_, st = m.types
  cmp = next(f for f in m.flags if f not in _BOOL and f != "ftz")
  comb = next((f for f in m.flags if f in _BOOL), None)
  d, a, b = ins.args[:3]
  e = _compare(cx, cmp, st, cx.src(a, st), cx.src(b, st))
  if comb: e = f"({e} {_BOOL[comb]} {cx.src(ins.args[3], 'pred')})"
  one = K(cx, dt_, 1.0 if is_float(dt_) else -1)
  cx.dst(d, dt_, f"np.where({e}, {one}, {K(cx, dt_, 0)})")

@handler("selp")
def _selp(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b, c = ins.args
  cx.dst(d, t, f"np.where({cx.src(c, 'pred')}, {cx.src(a, t)}, {cx.src(b, t)})")

@handler("slct")
def _slct(cx, ins):
  m = Mods(cx, ins, {"ftz"})
  if len(m.types) != 2: cx.unsupported("slct types")
  t, ct = m.types
  d, a, b, c = ins.args
  cx.dst(d, t, f"np.where({cx.src(c, ct)} >= 0, {cx.src(a, t)}, {cx.src(b, t)})")

# *** logic and bits ***

@handler("and", "or", "xor")
def _logic(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b = ins.args
  op = {"and": "&", "or": "|", "xor": "^"}[ins.op]
  cx.dst(d, t, f"({cx.src(a, t)} {op} {cx.src(b, t)})")

@handler("not")
def _not(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  cx.dst(ins.args[0], t, f"(~{cx.src(ins.args[1], t)})")

@handler("cnot")
def _cnot(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  cx.dst(ins.args[0], t, f"({cx.src(ins.args[1], t)} == 0).astype({npt(t)})")

@handler("shl", "shr")
def _shift(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b = ins.args
  cx.dst(d, t, f"{ins.op}({cx.src(a, t)}, {cx.src(b, 'u32')}, {bits(t)})")

@handler("shf")
def _shf(cx, ins):
  m = Mods(cx, ins, {"l", "r", "wrap", "clamp"})
  t = one_type(cx, m)
  if bits(t) != 32 or not (m.has("l") or m.has("r")): cx.unsupported("shf form")
  d, a, b, c = ins.args
  n = cx.tmp()
  cv = cx.src(c, "u32")
  cx.emit(f"{n} = ({cv} & {K(cx, 'u32', 31)}).astype(np.uint64)" if m.has("wrap") else f"{n} = np.minimum({cv}, {K(cx, 'u32', 32)}).astype(np.uint64)")
  x = f"(({cx.src(b, 'u32')}.astype(np.uint64) << {K(cx, 'u64', 32)}) | {cx.src(a, 'u32')}.astype(np.uint64))"
  if m.has("l"): e = f"((({x} << {n}) >> {K(cx, 'u64', 32)}) & {K(cx, 'u64', 0xffffffff)}).astype(np.uint32)"
  elif is_signed(t): e = f"((({x}).view(np.int64) >> {n}).view(np.uint64) & {K(cx, 'u64', 0xffffffff)}).astype(np.uint32)"
  else: e = f"(({x} >> {n}) & {K(cx, 'u64', 0xffffffff)}).astype(np.uint32)"
  cx.dst(d, "u32", e)

@handler("prmt")
def _prmt(cx, ins):
  m = Mods(cx, ins, {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"})
  mode = next((f for f in m.flags), None)
  d, a, b, c = ins.args
  cx.dst(d, "b32", f"prmt({cx.src(a, 'b32')}, {cx.src(b, 'b32')}, {cx.src(c, 'b32')}, {mode!r})")

@handler("bfe")
def _bfe(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b, c = ins.args
  cx.dst(d, t, f"bfe({cx.src(a, t)}, {cx.src(b, 'u32')}, {cx.src(c, 'u32')}, {bits(t)}, {is_signed(t)})")

@handler("bfi")
def _bfi(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, f, b, c, e = ins.args
  cx.dst(d, t, f"bfi({cx.src(f, t)}, {cx.src(b, t)}, {cx.src(c, 'u32')}, {cx.src(e, 'u32')}, {bits(t)})")

@handler("brev")
def _brev(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  cx.dst(ins.args[0], t, f"brev({cx.src(ins.args[1], t)}, {bits(t)})")

@handler("popc", "clz")
def _popc(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  x = cx.src(ins.args[1], f"u{bits(t)}")
  e = f"np.bitwise_count({x}).astype(np.uint32)" if ins.op == "popc" else f"clz({x}, {bits(t)})"
  cx.dst(ins.args[0], "u32", e)

@handler("bfind")
def _bfind(cx, ins):
  m = Mods(cx, ins, {"shiftamt"})
  t = one_type(cx, m)
  cx.dst(ins.args[0], "u32", f"bfind({cx.src(ins.args[1], t)}, {bits(t)}, {is_signed(t)}, {m.has('shiftamt')})")

@handler("lop3")
def _lop3(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a, b, c, lut = ins.args
  if not isinstance(lut, P.Imm): cx.unsupported("lop3 with a register LUT")
  x, y, z = cx.src(a, t), cx.src(b, t), cx.src(c, t)
  terms = []
  for k in range(8):
    if int(lut.value) >> k & 1:
      terms.append(f"({x if k & 4 else '~' + x} & {y if k & 2 else '~' + y} & {z if k & 1 else '~' + z})")
  cx.dst(d, t, "(" + " | ".join(terms) + ")" if terms else K(cx, t, 0))

# *** conversions ***

@handler("cvt")
def _cvt(cx, ins):
  m = Mods(cx, ins, {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "satfinite", "relu", "rna", "rs"})
  if len(m.types) != 2: cx.unsupported("cvt types")
  dt_, st = m.types
  if dt_ in FP8X2 or st in FP8X2: return _cvt_fp8(cx, ins, m, dt_, st)
  if dt_ in ("f16x2", "bf16x2"): return _cvt_pack(cx, ins, m, dt_, st)
  if len(ins.args) != 2: cx.unsupported("cvt operands")
  d, a = ins.args
  x = cx.src(a, st)
  if st == "f32" and m.has("ftz"): x = f"ftz({x})"
  rnd = m.rnd("")
  if is_float(dt_) and is_float(st):
    if dt_ == st or (bits(dt_) >= bits(st) and rnd in ("rni", "rzi", "rmi", "rpi")):
      # a float rounding (.rn) of a value already in the format changes nothing; only .rni etc. round it
      e = f"round_integral({x}, {st!r}, {rnd!r})" if rnd in ("rni", "rzi", "rmi", "rpi") else x
      if dt_ != st: e = f"float_to_float({e}, {st!r}, {dt_!r}, 'rn')"
    else:
      if bits(dt_) < bits(st) or (st, dt_) == ("f16", "bf16") or (st, dt_) == ("bf16", "f16"):
        if not rnd: cx.unsupported("narrowing cvt without a rounding modifier")
      e = f"float_to_float({x}, {st!r}, {dt_!r}, {(rnd or 'rn')!r})"
  elif is_float(dt_):
    e = f"int_to_float({x}, {dt_!r}, {(rnd or 'rn')!r})"
  elif is_float(st):
    if rnd not in ("rni", "rzi", "rmi", "rpi"): cx.unsupported("float-to-int cvt without an integer rounding modifier")
    e = f"float_to_int(to64({x}, {st!r}), {dt_!r}, {rnd!r}, np.dtype({npt(dt_)}))"
  else:
    e = f"int_to_int({x}, {dt_!r}, True)" if m.has("sat") else f"{x}.astype({npt(dt_)})"
  if m.has("ftz") and dt_ == "f32": e = f"ftz({e})"
  if m.has("sat") and is_float(dt_): e = f"sat({e})" if dt_ != "bf16" else f"from64(sat(to64({e}, 'bf16')), 'bf16')"
  if m.has("relu"): e = f"relu({e}, {dt_!r})"
  cx.dst(d, dt_, e)

def _cvt_pack(cx, ins, m:Mods, dt_:str, st:str):
  """cvt.rn.f16x2.f32 d, a, b: d = {cvt(a) (upper half), cvt(b) (lower half)}."""
  if st != "f32" or len(ins.args) != 3: cx.unsupported("cvt source for a packed type")
  h, rnd = dt_[:-2], m.rnd("rn")
  d, a, b = ins.args
  parts = [f"float_to_float({cx.src(x, 'f32')}, 'f32', {h!r}, {rnd!r})" for x in (b, a)]
  if m.has("relu"): parts = [f"relu({p}, {h!r})" for p in parts]
  if m.has("satfinite"): parts = [f"satfinite({p}, {h!r})" for p in parts]
  cx.dst(d, "b32", f"join_halves({parts[0]}, {parts[1]}, {h!r})")

FP8X2 = {"e4m3x2": "e4m3", "e5m2x2": "e5m2"}

def _cvt_fp8(cx, ins, m:Mods, dt_:str, st:str):
  """The packed fp8 conversions (numerics.fp8x2_*): cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f32 d, a, b (a to the upper
  byte of the b16 d, b to the lower), cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f16x2 d, a, and cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2
  d, a (the lower byte of the b16 a to the lower half of d). Other forms (.rs, fp8 to bf16x2, ...) are unsupported."""
  extra = m.set - {"rn", "satfinite", "relu"}
  if extra or not m.has("rn"): cx.unsupported(f"cvt.{'.'.join(m.flags)}.{dt_}.{st}")
  relu = m.has("relu")
  if dt_ in FP8X2:
    if not m.has("satfinite"): cx.unsupported(f"cvt to .{dt_} without .satfinite")
    if st == "f32" and len(ins.args) == 3:
      d, a, b = ins.args
      return cx.dst(d, "b16", f"fp8x2_from_f32({cx.src(a, 'f32')}, {cx.src(b, 'f32')}, {FP8X2[dt_]!r}, {relu})")
    if st == "f16x2" and len(ins.args) == 2:
      d, a = ins.args
      return cx.dst(d, "b16", f"fp8x2_from_f16x2({cx.src(a, 'b32')}, {FP8X2[dt_]!r}, {relu})")
  elif dt_ == "f16x2" and not m.has("satfinite") and len(ins.args) == 2:
    d, a = ins.args
    return cx.dst(d, "b32", f"fp8x2_to_f16x2({cx.src(a, 'b16')}, {FP8X2[st]!r}, {relu})")
  cx.unsupported(f"cvt.{'.'.join(m.flags)}.{dt_}.{st}")
