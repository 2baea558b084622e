"""Instruction emitters: each turns one PTX instruction into Python lines over numpy values (see codegen.Ctx).

An emitter reads operands with cx.src(arg, type) and writes with cx.dst (all lanes, masked by cx.mask) or
cx.dst_lanes (values for the active lanes only, as loads return them). Anything it does not model raises
UnsupportedInstruction at translation time, naming the instruction and its PTX line.
"""
from __future__ import annotations
from mockgpu.compiler.ptx import parser as P, validity
from mockgpu.emulators.ptx.types import PTX_TYPES, np_dtype, bits, is_float

# *** modifier handling ***

class Mods:
  """The modifiers of an instruction, split into its types (in order) and the rest."""
  def __init__(self, cx, ins:P.Instr, allowed:set[str]=frozenset()):
    self.types = [m for m in ins.mods if m in PTX_TYPES]
    self.flags = [m for m in ins.mods if m not in PTX_TYPES]
    for f in self.flags:
      if f not in allowed: cx.unsupported(f"modifier .{f} of {ins.op}")
    self.set = set(self.flags)
  def has(self, f:str) -> bool: return f in self.set
  def rnd(self, default:str="rn") -> str:
    return next((f for f in self.flags if f in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), default)

def one_type(cx, m:Mods) -> str:
  if len(m.types) != 1: cx.unsupported("type modifiers")
  return m.types[0]

def npt(t:str) -> str: return f"np.{np_dtype(t).name}"

def K(cx, t:str, v) -> str:
  """A constant of PTX type t (integer value taken modulo its width)."""
  dt = np_dtype(t)
  if dt.kind == "f": return cx.const(f"np.{dt.name}(float({str(float(v))!r}))")  # inf and nan have no literal
  if dt.kind == "b": return cx.const(f"np.bool_({bool(v)})")
  return cx.const(f"np.uint{dt.itemsize*8}({int(v) % (1 << dt.itemsize*8)}).view(np.{dt.name})")

def utype(t:str) -> str: return {8: "b8", 16: "b16", 32: "b32", 64: "b64"}[bits(t)]

# *** the instruction table ***

def handler_table():
  """A table of instruction emitters by opcode, and the decorator that registers one under several opcodes."""
  table = {}
  def handler(*names):
    def deco(f):
      for n in names: table[n] = f
      return f
    return deco
  return table, handler

HANDLERS, handler = handler_table()

TERMINATORS = ("bra", "ret", "exit", "trap", "brx")

def emit_instr(cx, ins:P.Instr, nxt:int):
  cx.instr = ins
  h = HANDLERS.get(ins.op)
  if ins.op == "call" and ins.error is not None: raise (ins.error_type or P.PTXSyntaxError)(ins.error)  # a call left by inline.py
  if h is None: cx.unsupported(f"instruction {ins.op}")
  if ins.error is not None: raise (ins.error_type or P.PTXSyntaxError)(ins.error)
  validity.check(ins)   # forms the ISA does not define raise InvalidPTX, as ptxas rejects them
  if ins.op in TERMINATORS: return h(cx, ins, nxt)
  base = "_m" if cx.masked_block else None
  if ins.guard is None:
    cx.mask = base
    h(cx, ins)
    return
  g = cx.guard_expr(ins)
  if cx.masked_block:
    cx.emit(f"_g = _m & {g}")
    cx.emit("if _g.any():")
    cx.indent += 1
    cx.mask = "_g"
    h(cx, ins)
    cx.emit("pass")
    cx.indent -= 1
    return
  cx.emit(f"_g = {g}")
  cx.emit("_u = uniformity(_g)")
  for cond, mask in (("if _u == 1:", None), ("elif _u == -1:", "_g")):
    cx.emit(cond)
    cx.indent += 1
    cx.mask = mask
    h(cx, ins)
    cx.emit("pass")
    cx.indent -= 1
  cx.mask = None

# *** control flow ***

@handler("bra")
def _bra(cx, ins, nxt):
  Mods(cx, ins, {"uni"})
  if len(ins.args) != 1 or not isinstance(ins.args[0], P.Sym) or ins.args[0].name not in cx.labels:
    cx.unsupported("branch target")
  tgt = cx.labels[ins.args[0].name]
  _transfer(cx, ins, tgt, nxt)

@handler("ret", "exit")
def _ret(cx, ins, nxt):
  Mods(cx, ins, {"uni"})
  if not cx.fn.entry and ins.op == "ret": cx.unsupported("ret from a .func")
  _transfer(cx, ins, cx.exit, nxt)

def _transfer(cx, ins, tgt:int, nxt:int):
  if ins.guard is None:
    cx.emit(f"_pc[_m] = {tgt}" if cx.masked_block else f"_b = {tgt}")
    return
  g = cx.guard_expr(ins)
  if cx.masked_block:
    cx.emit(f"_pc = np.where(_m, np.where({g}, {tgt}, {nxt}), _pc)")
    return
  cx.emit(f"_t = {g}")
  cx.emit("_u = uniformity(_t)")
  cx.emit(f"if _u == 1: _b = {tgt}")
  cx.emit(f"elif _u == 0: _b = {nxt}")
  cx.emit(f"else: _pc = np.where(_t, {tgt}, {nxt}).astype(np.int32)")

@handler("trap")
def _trap(cx, ins, nxt):
  cx.emit(f"raise KernelTrap({cx.where()})")

@handler("bar", "barrier")
def _bar(cx, ins):
  # the barrier itself is the block boundary before it (see codegen); what is left is its reduction, if any
  mods = [m for m in ins.mods if m not in ("sync", "aligned", "cta", "arrive")]
  if not mods:
    if len(ins.args) > 2: cx.unsupported("barrier operands")
    cx.emit("pass")
    return
  if mods[0] != "red" or len(mods) != 3: cx.unsupported("barrier form")
  op, t = mods[1], mods[2]
  d, pred = ins.args[0], ins.args[-1]
  p = cx.src(pred, "pred")
  m = cx.mask or "None"
  if op == "popc" and t == "u32": cx.dst(d, "u32", f"_E.cta_reduce({p}, 'popc', {m})")
  elif op in ("and", "or") and t == "pred": cx.dst(d, "pred", f"_E.cta_reduce({p}, {op!r}, {m})")
  else: cx.unsupported("barrier reduction")

@handler("membar", "fence", "bar.warp")
def _fence(cx, ins):
  # emulated memory is sequentially consistent: fences have nothing to order
  cx.emit("pass")

@handler("nanosleep", "pmevent", "prefetch", "prefetchu", "discard", "applypriority", "createpolicy")
def _hint(cx, ins):
  if ins.op == "createpolicy": cx.dst(ins.args[0], "b64", K(cx, "b64", 0))
  else: cx.emit("pass")

# *** moves ***

@handler("mov")
def _mov(cx, ins):
  m = Mods(cx, ins)
  t = one_type(cx, m)
  d, a = ins.args
  if isinstance(d, P.Vec): return _unpack(cx, t, d.items, a)
  if isinstance(a, P.Vec): return cx.dst(d, t, _pack(cx, t, a.items))
  if isinstance(a, P.Sym) and a.name in cx.labels: cx.unsupported("mov of a label")
  cx.dst(d, t, cx.src(a, t))

def _pack(cx, t:str, items) -> str:
  """{a, b, ...} -> one value, the first element in the lowest bits."""
  w = bits(t) // len(items)
  U = npt(utype(t))
  parts = [f"({cx.src(x, f'b{w}')}).astype({U})" + (f" << {K(cx, utype(t), i * w)}" if i else "") for i, x in enumerate(items)]
  packed = "(" + " | ".join(f"({p})" for p in parts) + ")"
  return packed if t == utype(t) else f"{packed}.view({npt(t)})"

def _unpack(cx, t:str, items, a):
  w = bits(t) // len(items)
  v = cx.tmp()
  cx.emit(f"{v} = {cx.src(a, utype(t))}")
  for i, x in enumerate(items):
    if x is P.SINK: continue
    cx.dst(x, f"b{w}", f"(({v} >> {K(cx, utype(t), i * w)}) & {K(cx, utype(t), (1 << w) - 1)}).astype(np.uint{w})")

@handler("cvta")
def _cvta(cx, ins):
  m = Mods(cx, ins, {"to", "global", "shared", "local", "const", "param", "cta"})
  t = one_type(cx, m)
  d, a = ins.args
  space = next((s for s in ("global", "shared", "local", "const", "param") if m.has(s)), None)
  if space is None: cx.unsupported("cvta space")
  v = cx.src(a, t)
  if space == "global": return cx.dst(d, t, v)
  if space == "param": cx.unsupported("cvta of the param space")
  window = {"shared": "SHARED_WINDOW", "local": "LOCAL_WINDOW", "const": "CONST_WINDOW"}[space]
  if m.has("to"): cx.dst(d, t, f"({v} & {K(cx, t, 0x00FF_FFFF_FFFF_FFFF)})")
  else: cx.dst(d, t, f"({v} | {cx.const(f'np.{np_dtype(t).name}({window} % (1 << {bits(t)}))')})")

# *** memory ***

_LD_FLAGS = {"global", "shared", "local", "const", "param", "weak", "volatile", "relaxed", "acquire", "release", "gpu", "sys", "cta",
             "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "v2", "v4", "v8", "L1::evict_last", "L1::evict_first", "L1::evict_normal",
             "L1::no_allocate", "L1::evict_unchanged", "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint", "shared::cta", "unified",
             "mmio"}

def _space(m:Mods) -> str:
  for s in ("global", "shared", "local", "const", "param"):
    if m.has(s): return s
  if m.has("shared::cta"): return "shared"
  return "generic"

def _vec(m:Mods) -> int:
  return next((int(f[1:]) for f in m.flags if f in ("v2", "v4", "v8")), 1)

def _address(cx, a:P.Addr, space:str) -> str:
  """Expression of the (u64) address of a memory operand in its state space."""
  if not isinstance(a, P.Addr): cx.unsupported("memory operand")
  off = a.offset
  if isinstance(a.base, P.Sym):
    sp, base = cx.symbol(a.base.name)
    if sp == "param": cx.unsupported("param symbol outside ld.param")
    return K(cx, "u64", base + a.base.offset + off)
  if a.base is None: return K(cx, "u64", off)
  r = a.base
  e = r.name if np_dtype(r.type).name == "uint64" else f"resize({r.name}, np.dtype(np.uint64), False)"
  return e if off == 0 else f"({e} + {K(cx, 'u64', off)})"

@handler("ld", "ldu")
def _ld(cx, ins):
  m = Mods(cx, ins, _LD_FLAGS)
  t = one_type(cx, m)
  space, n = _space(m), _vec(m)
  d, a = ins.args
  dsts = list(d.items) if isinstance(d, P.Vec) else [d]
  if len(dsts) != n: cx.unsupported("vector width")
  dt = f"np.dtype({npt(t)})"
  if space == "param":
    if not isinstance(a, P.Addr) or not isinstance(a.base, P.Sym) or cx.symbol(a.base.name)[0] != "param": cx.unsupported("ld.param address")
    off = cx.symbol(a.base.name)[1] + a.base.offset + a.offset
    for i, x in enumerate(dsts): cx.dst(x, t, f"_E.param({off + i * np_dtype(t).itemsize}, {dt}, {cx.where()})")
    return
  addr = _address(cx, a, space)
  mask = cx.mask or "None"
  v = cx.tmp()
  if space in ("shared", "local"): cx.emit(f"{v} = _E.ld_space({space!r}, {addr}, {dt}, {n}, {mask}, {cx.where()})")
  elif space == "const": cx.emit(f"{v} = _E.ld_const({addr}, {dt}, {n}, {mask}, {cx.where()})")
  elif (fz := cx.fused.get(id(ins))) is not None: _ld_fused(cx, fz, v, f"_E.ld_global({addr}, {dt}, {n}, {mask}, {cx.where()})", t, n)
  else: cx.emit(f"{v} = _E.ld_global({addr}, {dt}, {n}, {mask}, {cx.where()})")
  for i, x in enumerate(dsts): cx.dst_lanes(x, t, f"{v}[{i}]")

def _ld_fused(cx, fz, v:str, single:str, t:str, n:int):
  """A load of a fused cluster (see fuse.py): its rows of the cluster's prefetch, or the load alone without one."""
  if fz.head: cx.emit(f"{fz.name} = _E.ld_rows({_address(cx, fz.base, 'global')}, {fz.count}, np.dtype({npt(fz.dtype)}), {cx.mask or 'None'})")
  rows = f"{fz.name}[{fz.index}:{fz.index + n}]" + ("" if np_dtype(t) == np_dtype(fz.dtype) else f".view({npt(t)})")
  cx.emit(f"{v} = {single} if {fz.name} is None else {rows}")

@handler("st")
def _st(cx, ins):
  m = Mods(cx, ins, _LD_FLAGS)
  t = one_type(cx, m)
  space, n = _space(m), _vec(m)
  a, s = ins.args
  srcs = list(s.items) if isinstance(s, P.Vec) else [s]
  if len(srcs) != n: cx.unsupported("vector width")
  if space in ("param", "const"): cx.unsupported(f"st.{space}")
  vals = "[" + ", ".join(cx.src(x, t) for x in srcs) + "]"
  addr = _address(cx, a, space)
  mask = cx.mask or "None"
  if space in ("shared", "local"): cx.emit(f"_E.st_space({space!r}, {addr}, {vals}, np.dtype({npt(t)}), {mask}, {cx.where()})")
  else: cx.emit(f"_E.st_global({addr}, {vals}, np.dtype({npt(t)}), {mask}, {cx.where()})")

_ATOM_FLAGS = {"global", "shared", "relaxed", "acquire", "release", "acq_rel", "gpu", "sys", "cta", "shared::cta", "noftz"}

@handler("atom", "red")
def _atom(cx, ins):
  allowed = _ATOM_FLAGS | {"add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec"}
  m = Mods(cx, ins, allowed)
  t = one_type(cx, m)
  op = next((f for f in m.flags if f in ("add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec")), None)
  if op is None: cx.unsupported("atomic operation")
  if t in ("f16x2", "bf16x2", "bf16", "f16") or (is_float(t) and op not in ("add", "exch", "min", "max")): cx.unsupported(f"atomic {op}.{t}")
  space = _space(m)
  args = ins.args if ins.op == "atom" else [P.SINK] + ins.args
  d, a = args[0], args[1]
  vals = [cx.src(x, t) for x in args[2:]]
  if len(vals) != (2 if op == "cas" else 1): cx.unsupported("atomic operands")
  addr = _address(cx, a, space)
  v = cx.tmp()
  cx.emit(f"{v} = _E.atomic({space!r}, {op!r}, {t!r}, {addr}, [{', '.join(vals)}], {cx.mask or 'None'}, {cx.where()})")
  if d is not P.SINK: cx.dst_lanes(d, t, v)

# *** warp-level ***

@handler("shfl")
def _shfl(cx, ins):
  m = Mods(cx, ins, {"sync", "up", "down", "bfly", "idx"})
  mode = next((f for f in m.flags if f in ("up", "down", "bfly", "idx")), None)
  if mode is None or one_type(cx, m) != "b32": cx.unsupported("shfl form")
  d, a, b, c = ins.args[:4]
  v = cx.tmp()
  cx.emit(f"{v} = _E.shfl({mode!r}, {cx.src(a, 'b32')}, {cx.src(b, 'u32')}, {cx.src(c, 'u32')})")
  if isinstance(d, P.PredPair):
    cx.dst(d.p, "b32", f"{v}[0]")
    if d.q is not None: cx.dst(d.q, "pred", f"{v}[1]")
  else: cx.dst(d, "b32", f"{v}[0]")

@handler("vote")
def _vote(cx, ins):
  m = Mods(cx, ins, {"sync", "all", "any", "uni", "ballot"})
  mode = next((f for f in m.flags if f in ("all", "any", "uni", "ballot")), None)
  d, p = ins.args[0], ins.args[1]
  t = "b32" if mode == "ballot" else "pred"
  if mode is None: cx.unsupported("vote mode")
  cx.dst(d, t, f"_E.vote({mode!r}, {cx.src(p, 'pred')}, {cx.mask or 'None'})")

@handler("activemask")
def _activemask(cx, ins):
  Mods(cx, ins)
  cx.dst(ins.args[0], "b32", f"_E.vote('ballot', np.True_, {cx.mask or 'None'})")

@handler("redux")
def _redux(cx, ins):
  m = Mods(cx, ins, {"sync", "add", "min", "max", "and", "or", "xor"})
  t = one_type(cx, m)
  op = next(f for f in m.flags if f != "sync")
  d, a = ins.args[0], ins.args[1]
  cx.dst(d, t, f"_E.redux({op!r}, {cx.src(a, t)}, {cx.mask or 'None'})")

@handler("mma")
def _mma(cx, ins):
  m = Mods(cx, ins, {"sync", "aligned", "m16n8k16", "m16n8k8", "m16n8k32", "row", "col"})
  shape = next((f for f in m.flags if f.startswith("m16")), None)
  if not (m.has("row") and m.has("col")) or shape is None or len(m.types) != 4: cx.unsupported("mma shape/layout")
  td, ta, tb, tc = m.types
  d, a, b, c = ins.args
  regs = lambda v: "[" + ", ".join(cx.src(x, "b32") for x in v.items) + "]"
  r = cx.tmp()
  cx.emit(f"{r} = _E.mma({shape!r}, {td!r}, {ta!r}, {tb!r}, {tc!r}, {regs(a)}, {regs(b)}, {regs(c)}, {cx.where()})")
  for i, x in enumerate(d.items): cx.dst(x, "b32", f"{r}[{i}]")

# the arithmetic, comparison, conversion and bit-manipulation emitters register themselves on import
from mockgpu.compiler.ptx import ops_alu  # noqa: E402,F401
