"""The numpy backend: a PTX module into Python source over numpy arrays (one element per thread of a batch of CTAs),
each instruction rendered from its row of the semantics table.

Control flow: the kernel is cut into basic blocks (blocks.py). While every thread is at the same block, it runs
unmasked ("full" variant) and branches whose predicate is uniform stay uniform. When a branch diverges, every thread
gets a block index (`_pc`) and the lowest block runs next for the threads that are in it ("masked" variant, writes
through np.where): min-PC scheduling, which reconverges structured code at its join point and makes bar.sync exact (a
barrier starts a block, so every thread reaches it before any passes it).

The generated code calls the executor's run-time names (compiler/ptx/backends/numpy_names.py: the launch environment `_E`, the
numerics and bit helpers) and is cached by mockgpu.compiler.cache.
"""
from __future__ import annotations
import functools, re
import numpy as np
from mockgpu.compiler.ptx import syntax as P, semantics
from mockgpu.compiler.ptx.types import np_dtype, bits, is_float, is_signed, wide
from mockgpu.compiler.ptx.blocks import Block, split_blocks, ENDS_BLOCK
from mockgpu.compiler.ptx.layout import Layout, entries
from mockgpu.compiler.ptx.backends import numpy_fuse

@functools.cache
def _dn(dt:np.dtype) -> str: return dt.name   # numpy computes a dtype's name in Python at each read (~1 us)

def npt(t:str) -> str: return f"np.{_dn(np_dtype(t))}"

_NUMPY_OP = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_CMP_INT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_CMP_FLOAT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_WINDOW_NAMES = {"shared": "SHARED_WINDOW", "local": "LOCAL_WINDOW", "const": "CONST_WINDOW"}   # kernel_ns names

def _call_args(expr:str, fn:str) -> str|None:
  """The argument text of expr when expr is one whole call of fn (`fn(...)`), else None."""
  if not (expr.startswith(fn + "(") and expr.endswith(")")): return None
  depth = 0
  for i, ch in enumerate(expr[len(fn):], len(fn)):
    depth += (ch == "(") - (ch == ")")
    if depth == 0: return expr[len(fn) + 1:-1] if i == len(expr) - 1 else None
  return None

class Ctx(semantics.Backend):
  """Emission state for one kernel (lines, constants, the current mask) and the numpy rendering of every primitive."""
  def __init__(self, fn:P.Function, layout:Layout, consts:dict):
    self.fn, self.layout, self.consts = fn, layout, consts
    self.const_exprs = {name: expr for expr, name in consts.items()}
    self.lines:list[str] = []
    self.indent = 0
    self.mask:str|None = None     # the active-lane mask expression (None: every thread of the batch)
    self.masked_block = False     # emitting the masked variant of a block
    self.ins:P.Instr|None = None
    self.ntmp = 0
    self.labels:dict[str, int] = {}
    self.block:Block|None = None
    self.exit_block = 0           # the block index meaning "every thread has exited"
    self.next_block = 0           # the block after the current one (a branch not taken)
    self.fused:dict = {}          # id(load) -> numpy_fuse.Fused, for the loads of the current block read by one prefetch
    self.defer_fma = False        # the fma being emitted runs raw, its NaN check left to the end of its run (flush_fma)
    self.fma_live:dict[str, int] = {}       # register -> the deferred fma whose value it holds
    self.fma_inputs:list[set[int]] = []     # deferred fma -> the deferred fmas whose values it read
    self.uses_fma = False         # the kernel binds _fma in its prologue

  # *** output ***
  def emit(self, s:str): self.lines.append("  " * self.indent + s)
  def tmp(self) -> str:
    self.ntmp += 1
    return f"_t{self.ntmp}"
  def named(self, expr:str) -> str:
    """A module-level constant (numpy scalars cannot live in marshalled code objects, so they are built by the source)."""
    if expr not in self.consts:
      self.consts[expr] = name = f"_k{len(self.consts)}"
      self.const_exprs[name] = expr
    return self.consts[expr]
  def fold(self, expr:str, conv:str) -> str:
    """conv (a format string over one value) applied to expr, at translation time when expr is a constant."""
    return self.named(conv.format(f"({self.const_exprs[expr]})")) if expr in self.const_exprs else conv.format(expr)
  def where(self) -> str:
    i = self.ins
    return self.named(repr(f"PTX line {i.line}: {i.text}"))

  # *** operands ***
  def src(self, a, t:str) -> str:
    """Expression for operand `a` read as PTX type t."""
    dt = np_dtype(t)
    if isinstance(a, P.Reg):
      rd = np_dtype(a.type)
      if rd == dt: return a.name
      if rd.itemsize == dt.itemsize and rd.kind != "b" and dt.kind != "b": return f"{a.name}.view(np.{_dn(dt)})"
      return f"resize({a.name}, np.dtype(np.{_dn(dt)}), {is_signed(t)})"
    if isinstance(a, P.Imm): return self.imm(a, t)
    if isinstance(a, P.Not):
      if t != "pred": self.unsupported(f"negated operand as .{t}")
      return f"(~{a.reg.name})"
    if isinstance(a, P.Special): return self.special(a, t)
    if isinstance(a, P.Sym): return self.sym_address(a, t)
    self.unsupported(f"operand {a!r}")

  def imm(self, a:P.Imm, t:str) -> str:
    dt = np_dtype(t)
    if dt.kind == "b": return self.named(f"np.bool_({bool(a.value)})")
    if dt.kind == "f" and a.is_float and a.bits == dt.itemsize * 8:
      u = {4: "uint32", 8: "uint64"}[dt.itemsize]
      raw = np.array([a.value], np.float64).astype(dt).view(u)[0]
      return self.named(f"np.{u}({int(raw)}).view(np.{_dn(dt)})")
    if dt.kind == "f": return self.named(f"np.{_dn(dt)}(float({str(float(a.value))!r}))")  # inf and nan have no literal
    if a.is_float:
      # a float literal in an integer/bit-typed operand stands for its bit pattern (0f: 32 bits, 0d: 64 bits)
      fdt, udt = (np.float64, np.uint64) if a.bits == 64 else (np.float32, np.uint32)
      raw = int(np.array([a.value], fdt).view(udt)[0]) % (1 << dt.itemsize * 8)
      return self.named(f"np.uint{dt.itemsize*8}({raw}).view(np.{_dn(dt)})")
    v = int(a.value) % (1 << dt.itemsize * 8)
    return self.named(f"np.uint{dt.itemsize*8}({v}).view(np.{_dn(dt)})")

  def special(self, a:P.Special, t:str) -> str:
    name = a.name
    base, _, comp = name.partition(".")
    simple = {"tid": "s_tid", "ntid": "s_ntid", "ctaid": "s_ctaid", "nctaid": "s_nctaid"}
    if base in simple and comp in ("x", "y", "z"): e = f"{simple[base]}_{comp}"
    elif name in ("laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid"): e = f"s_{name}"
    elif name == "clock": e = f"_E.clock(32, {self.block.instrs.index(self.ins)})"
    elif name in ("clock64", "globaltimer"): e = f"_E.clock(64, {self.block.instrs.index(self.ins)})"
    elif name in ("lanemask_eq", "lanemask_lt", "lanemask_le", "lanemask_gt", "lanemask_ge"): e = f"_E.lanemask({name[9:]!r})"
    elif name == "dynamic_smem_size": e = "s_dynamic_smem_size"
    elif name == "total_smem_size": e = "s_total_smem_size"
    else: self.unsupported(f"special register %{name}")
    dt = np_dtype(t)
    src_bits = 64 if name in ("clock64", "globaltimer") else 32
    if dt.itemsize * 8 == src_bits: return e if dt.kind == "u" else f"{e}.view(np.{_dn(dt)})"
    return f"resize({e}, np.dtype(np.{_dn(dt)}), False)"

  def sym_address(self, a:P.Sym, t:str) -> str:
    """The state-space address of a variable (mov/cvta of a symbol)."""
    space, off = self.symbol(a.name)
    if space == "param": self.unsupported("taking the address of a kernel parameter")
    dt = np_dtype(t)
    v = (off + a.offset) % (1 << dt.itemsize * 8)
    return self.named(f"np.uint{dt.itemsize*8}({v}).view(np.{_dn(dt)})")

  # *** results ***
  def dst(self, a, t:str, expr:str):
    """Write expr (a value of PTX type t, for every lane) to register a under the current mask."""
    if a is P.SINK: return
    if isinstance(a, P.PredPair): a = a.p
    if not isinstance(a, P.Reg): self.unsupported(f"destination {a!r}")
    v = self.conv_to_reg(a, t, expr)
    self.emit(f"{a.name} = {v}" if self.mask is None else f"{a.name} = np.where({self.mask}, {v}, {a.name})")

  def dst_lanes(self, a, t:str, expr:str):
    """Write expr holding values for the active lanes only (loads under a mask)."""
    if a is P.SINK: return
    if not isinstance(a, P.Reg): self.unsupported(f"destination {a!r}")
    v = self.conv_to_reg(a, t, expr)
    self.emit(f"{a.name} = {v}" if self.mask is None else f"{a.name} = put({a.name}, {self.mask}, {v}, _N)")

  def conv_to_reg(self, a:P.Reg, t:str, expr:str) -> str:
    dt, rd = np_dtype(t), np_dtype(a.type)
    if rd == dt: return expr
    if rd.itemsize == dt.itemsize and rd.kind != "b" and dt.kind != "b": return self.fold(expr, "{}.view(np." + _dn(rd) + ")")
    return self.fold(expr, "resize({}, np.dtype(np." + _dn(rd) + "), " + str(is_signed(t)) + ")")

  def guard_expr(self, ins:P.Instr) -> str:
    p, neg = ins.guard
    return f"(~{p.name})" if neg else p.name

  # *** statements ***
  def let(self, t:str, e:str) -> str:
    v = self.tmp()
    self.emit(f"{v} = {e}")
    return v
  def const(self, t:str, v) -> str:
    dt = np_dtype(t)
    if dt.kind == "f": return self.named(f"np.{_dn(dt)}(float({str(float(v))!r}))")  # inf and nan have no literal
    if dt.kind == "b": return self.named(f"np.bool_({bool(v)})")
    return self.named(f"np.uint{dt.itemsize*8}({int(v) % (1 << dt.itemsize*8)}).view(np.{_dn(dt)})")
  def nop(self): self.emit("pass")
  def join_fields(self, u:str, parts:list[str]) -> str:
    w = bits(u) // len(parts)
    ps = [f"({p}).astype({npt(u)})" + (f" << {self.const(u, i * w)}" if i else "") for i, p in enumerate(parts)]
    return "(" + " | ".join(f"({p})" for p in ps) + ")"
  def field(self, u:str, v:str, i:int, w:int) -> str:
    return f"(({v} >> {self.const(u, i * w)}) & {self.const(u, (1 << w) - 1)}).astype(np.uint{w})"
  def window(self, space:str, t:str) -> str: return self.named(f"np.{_dn(np_dtype(t))}({_WINDOW_NAMES[space]} % (1 << {bits(t)}))")

  # *** control flow ***
  def branch(self, tgt:int):
    ins, nxt = self.ins, self.next_block
    if ins.guard is None:
      self.emit(f"_pc[_m] = {tgt}" if self.masked_block else f"_b = {tgt}")
      return
    g = self.guard_expr(ins)
    if self.masked_block:
      self.emit(f"_pc = np.where(_m, np.where({g}, {tgt}, {nxt}), _pc)")
      return
    self.emit(f"_t = {g}")
    self.emit("_u = uniformity(_t)")
    self.emit(f"if _u == 1: _b = {tgt}")
    self.emit(f"elif _u == 0: _b = {nxt}")
    self.emit(f"else: _pc = np.where(_t, {tgt}, {nxt}).astype(np.int32)")
  def trap(self): self.emit(f"raise KernelTrap({self.where()})")
  def barrier(self, ident, with_count:bool, arrive:bool): self.emit("pass")
  def cta_reduce(self, p:str, op:str) -> str: return f"_E.cta_reduce({p}, {op!r}, {self.mask or 'None'})"

  # *** memory ***
  def load(self, space:str, t:str, n:int, addr:str, ordered:bool) -> list[str]:
    dt, mask = f"np.dtype({npt(t)})", self.mask or "None"
    v = self.tmp()
    if space in ("shared", "local"): self.emit(f"{v} = _E.ld_space({space!r}, {addr}, {dt}, {n}, {mask}, {self.where()})")
    elif space == "const": self.emit(f"{v} = _E.ld_const({addr}, {dt}, {n}, {mask}, {self.where()})")
    elif isinstance(fz := self.fused.get(id(self.ins)), numpy_fuse.Grouped):
      if fz.head:
        base = semantics.address(self, fz.base, "global")
        self.emit(f"{fz.name} = _E.ld_group({base}, {fz.offsets}, np.dtype({npt(fz.dtype)}), {fz.nvec}, {mask})")
      self.emit(f"{v} = _E.ld_global({addr}, {dt}, {n}, {mask}, {self.where()}) if {fz.name} is None else {fz.name}[{fz.index}]")
    elif fz is not None: self._ld_fused(fz, v, f"_E.ld_global({addr}, {dt}, {n}, {mask}, {self.where()})", t, n)
    else: self.emit(f"{v} = _E.ld_global({addr}, {dt}, {n}, {mask}, {self.where()})")
    return [f"{v}[{i}]" for i in range(n)]

  def _ld_fused(self, fz, v:str, single:str, t:str, n:int):
    """A load of a fused cluster (numpy_fuse.py): its rows of the cluster's prefetch, or the load alone without one."""
    if fz.head:
      self.emit(f"{fz.name} = _E.ld_rows({semantics.address(self, fz.base, 'global')}, {fz.count}, np.dtype({npt(fz.dtype)}), {self.mask or 'None'})")
    rows = f"{fz.name}[{fz.index}:{fz.index + n}]" + ("" if np_dtype(t) == np_dtype(fz.dtype) else f".view({npt(t)})")
    self.emit(f"{v} = {single} if {fz.name} is None else {rows}")

  def load_param(self, t:str, n:int, offset:int) -> list[str]:
    size = np_dtype(t).itemsize
    return [f"_E.param({offset + i * size}, np.dtype({npt(t)}), {self.where()})" for i in range(n)]

  def store(self, space:str, t:str, addr:str, vals:list[str], ordered:bool):
    vs, mask = "[" + ", ".join(vals) + "]", self.mask or "None"
    if space in ("shared", "local"): self.emit(f"_E.st_space({space!r}, {addr}, {vs}, np.dtype({npt(t)}), {mask}, {self.where()})")
    else: self.emit(f"_E.st_global({addr}, {vs}, np.dtype({npt(t)}), {mask}, {self.where()})")

  def atomic(self, space:str, op:str, t:str, addr:str, vals:list[str]) -> str:
    v = self.tmp()
    self.emit(f"{v} = _E.atomic({space!r}, {op!r}, {t!r}, {addr}, [{', '.join(vals)}], {self.mask or 'None'}, {self.where()})")
    return v

  # *** warp-wide ***
  def shfl(self, mode:str, a:str, b:str, c:str) -> tuple[str, str]:
    v = self.tmp()
    self.emit(f"{v} = _E.shfl({mode!r}, {a}, {b}, {c})")
    return f"{v}[0]", f"{v}[1]"
  def vote(self, mode:str, p:str) -> str: return f"_E.vote({mode!r}, {p}, {self.mask or 'None'})"
  def redux(self, op:str, t:str, a:str) -> str: return f"_E.redux({op!r}, {a}, {self.mask or 'None'})"
  def mma(self, shape:str, types:list[str], a:list[str], b:list[str], c:list[str], n:int) -> list[str]:
    r = self.tmp()
    regs = lambda v: "[" + ", ".join(v) + "]"
    self.emit(f"{r} = _E.mma({shape!r}, {', '.join(map(repr, types))}, {regs(a)}, {regs(b)}, {regs(c)}, {self.where()})")
    return [f"{r}[{i}]" for i in range(n)]

  # *** integers and bits ***
  def binop(self, op:str, t:str, x:str, y:str) -> str: return f"({x} {op} {y})"
  def bitnot(self, t:str, x:str) -> str: return f"(~{x})"
  def bitcast(self, x:str, t:str, to:str) -> str: return x if np_dtype(t) == np_dtype(to) else f"({x}).view({npt(to)})"
  def negate(self, t:str, x:str) -> str: return f"(-{x})"
  def absolute(self, t:str, x:str) -> str: return f"np.abs({x})"
  def add_sat(self, op:str, x:str, y:str) -> str: return f"np.clip({x}.astype(np.int64) {op} {y}, -2**31, 2**31 - 1).astype(np.int32)"
  def mul_wide(self, t:str, x:str, y:str) -> str:
    w = npt(wide(t))
    return f"({x}.astype({w}) * {y}.astype({w}))"
  def mul_hi(self, t:str, x:str, y:str) -> str:
    if bits(t) == 64: return f"mulhi64({x}, {y}, {is_signed(t)})"
    w = wide(t)
    return f"(({x}.astype({npt(w)}) * {y}.astype({npt(w)})) >> {self.const(w, bits(t))}).astype({npt(t)})"
  def mul24(self, hi:bool, t:str, x:str, y:str) -> str:
    ext = lambda v: f"sext24({v})" if t == "s32" else f"({v}.astype(np.int64) & 0xffffff)"
    p = f"({ext(x)} * {ext(y)})"
    v = f"({p} >> 16)" if hi else p
    return f"({v} & 0xffffffff).astype(np.uint32).view({npt(t)})"
  def idiv(self, t:str, x:str, y:str) -> str: return f"idiv({x}, {y})"
  def irem(self, t:str, x:str, y:str) -> str: return f"irem({x}, {y})"
  def minmax(self, op:str, t:str, x:str, y:str) -> str: return f"{'np.minimum' if op == 'min' else 'np.maximum'}({x}, {y})"
  def shift(self, op:str, t:str, x:str, s:str) -> str: return f"{op}({x}, {s}, {bits(t)})"
  def funnel_shift(self, left:bool, wrap:bool, signed:bool, lo:str, hi:str, n:str) -> str:
    k = self.tmp()
    self.emit(f"{k} = ({n} & {self.const('u32', 31)}).astype(np.uint64)" if wrap
              else f"{k} = np.minimum({n}, {self.const('u32', 32)}).astype(np.uint64)")
    x = f"(({hi}.astype(np.uint64) << {self.const('u64', 32)}) | {lo}.astype(np.uint64))"
    low = self.const("u64", 0xffffffff)
    if left: return f"((({x} << {k}) >> {self.const('u64', 32)}) & {low}).astype(np.uint32)"
    if signed: return f"((({x}).view(np.int64) >> {k}).view(np.uint64) & {low}).astype(np.uint32)"
    return f"(({x} >> {k}) & {low}).astype(np.uint32)"
  def carry_in(self, t:str) -> str: return f"_cc.astype({npt(t)})"
  def set_carry(self, flag:str):
    self.emit(f"_cc_new = {flag}.astype(np.uint32)")
    self.emit("_cc = _cc_new" if self.mask is None else f"_cc = np.where({self.mask}, _cc_new, _cc)")
  def popc(self, t:str, x:str) -> str: return f"np.bitwise_count({x}).astype(np.uint32)"
  def clz(self, t:str, x:str) -> str: return f"clz({x}, {bits(t)})"
  def bfind(self, t:str, x:str, shiftamt:bool) -> str: return f"bfind({x}, {bits(t)}, {is_signed(t)}, {shiftamt})"
  def brev(self, t:str, x:str) -> str: return f"brev({x}, {bits(t)})"
  def bfe(self, t:str, a:str, pos:str, length:str) -> str: return f"bfe({a}, {pos}, {length}, {bits(t)}, {is_signed(t)})"
  def bfi(self, t:str, f:str, b:str, pos:str, length:str) -> str: return f"bfi({f}, {b}, {pos}, {length}, {bits(t)})"
  def prmt(self, a:str, b:str, c:str) -> str: return f"prmt({a}, {b}, {c})"

  # *** comparisons ***
  def compare(self, cmp:str, t:str, x:str, y:str) -> str:
    if t == "bf16": x, y, t = f"to64({x}, 'bf16')", f"to64({y}, 'bf16')", "f64"
    if is_float(t):
      if cmp in _CMP_FLOAT:
        e = f"({x} {_CMP_FLOAT[cmp]} {y})"
        # ordered != is false when either side is NaN (numpy's != is true)
        return f"({e} & ~np.isnan({x}) & ~np.isnan({y}))" if cmp == "ne" else e
      if cmp == "num": return f"(~np.isnan({x}) & ~np.isnan({y}))"
      if cmp == "nan": return f"(np.isnan({x}) | np.isnan({y}))"
      e = f"({x} {_CMP_FLOAT[cmp[:2]]} {y})"   # the unordered forms
      return e if cmp == "neu" else f"({e} | np.isnan({x}) | np.isnan({y}))"
    if cmp in ("lo", "ls", "hi", "hs") or t[0] == "b":
      u = f"u{bits(t)}"
      x, y = f"({x}).view({npt(u)})", f"({y}).view({npt(u)})"
    return f"({x} {_CMP_INT[cmp]} {y})"
  def select(self, c:str, t:str, a:str, b:str) -> str: return f"np.where({c}, {a}, {b})"
  def testp(self, kind:str, t:str, x:str) -> str:
    tiny = {"f32": "1.1754943508222875e-38", "f64": "2.2250738585072014e-308"}[t]
    return {"finite": f"np.isfinite({x})", "infinite": f"np.isinf({x})", "number": f"~np.isnan({x})", "notanumber": f"np.isnan({x})",
            "normal": f"(np.isfinite({x}) & (np.abs({x}) >= {tiny}))", "subnormal": f"((np.abs({x}) < {tiny}) & ({x} != 0))"}[kind]
  def copysign(self, t:str, sign:str, mag:str) -> str: return f"np.copysign({mag}, {sign})"

  # *** floats ***
  def farith(self, op:str, t:str, rnd:str, args:list[str]) -> str:
    if t == "f32" and rnd == "rn" and op in ("add", "sub", "mul"): return f"({args[0]} {_NUMPY_OP[op]} {args[1]})"   # IEEE in numpy
    if t == "f32" and rnd == "rn" and op == "fma": return f"fma32({', '.join(args)})"
    if t == "f64" and rnd == "rn" and op in _NUMPY_OP: return f"({args[0]} {_NUMPY_OP[op]} {args[1]})"
    if t == "f64" and rnd == "rn" and op == "sqrt": return f"np.sqrt({args[0]})"
    if op == "rcp": return f"farith('div', {t!r}, {rnd!r}, {self.const(t, 1.0) if t != 'bf16' else self.const('b16', 0x3f80)}, {args[0]})"
    return f"farith({op!r}, {t!r}, {rnd!r}, {', '.join(args)})"
  def approx(self, fn:str, t:str, x:str) -> str: return f"approx({fn!r}, {t!r}, {x})"
  def canon(self, t:str, x:str) -> str:
    # fma.rn.f32, the hot row of matrix kernels: the fma and its canonical NaN with one NaN test (numerics.fma32_canon),
    # or none where its run of fmas is checked at its end (flush_fma), as an add/sub/mul.f32 there is
    if self.defer_fma and t == "f32":
      self.defer_fma = False
      if (args:=_call_args(x, "fma32")) is None: return x
      self.uses_fma = True
      return f"_fma({args})"
    if t == "f32" and (args:=_call_args(x, "fma32")) is not None: return f"fma32_canon({args})"
    return f"canon({x}, {t!r})"
  def ftz(self, x:str) -> str: return f"ftz({x})"
  def relu(self, t:str, x:str) -> str: return f"relu({x}, {t!r})"
  def sat(self, t:str, x:str) -> str: return f"sat({x})" if t != "bf16" else f"from64(sat(to64({x}, 'bf16')), 'bf16')"
  def satfinite(self, t:str, x:str) -> str: return f"satfinite({x}, {t!r})"
  def fminmax(self, op:str, t:str, x:str, y:str, nan:bool) -> str:
    f = "fmin" if op == "min" else "fmax"
    if t == "bf16": return f"from64({f}(to64({x}, 'bf16'), to64({y}, 'bf16'), {nan}), 'bf16')"
    return f"{f}({x}, {y}, {nan})"
  def half(self, x:str, i:int, h:str) -> str: return f"half_of({x}, {i}, {h!r})"
  def join_halves(self, lo:str, hi:str, h:str) -> str: return f"join_halves({lo}, {hi}, {h!r})"

  # *** conversions ***
  def float_to_float(self, x:str, st:str, dt:str, rnd:str) -> str: return f"float_to_float({x}, {st!r}, {dt!r}, {rnd!r})"
  def round_integral(self, x:str, t:str, rnd:str) -> str: return f"round_integral({x}, {t!r}, {rnd!r})"
  def int_to_float(self, x:str, st:str, dt:str, rnd:str) -> str: return f"int_to_float({x}, {dt!r}, {rnd!r})"
  def float_to_int(self, x:str, st:str, dt:str, rnd:str) -> str: return f"float_to_int(to64({x}, {st!r}), {dt!r}, {rnd!r}, np.dtype({npt(dt)}))"
  def int_to_int(self, x:str, st:str, dt:str, sat:bool) -> str: return f"int_to_int({x}, {dt!r}, True)" if sat else f"{x}.astype({npt(dt)})"
  def fp8x2_from_f32(self, hi:str, lo:str, fmt:str, relu:bool) -> str: return f"fp8x2_from_f32({hi}, {lo}, {fmt!r}, {relu})"
  def fp8x2_from_f16x2(self, x:str, fmt:str, relu:bool) -> str: return f"fp8x2_from_f16x2({x}, {fmt!r}, {relu})"
  def fp8x2_to_f16x2(self, x:str, fmt:str, relu:bool) -> str: return f"fp8x2_to_f16x2({x}, {fmt!r}, {relu})"

  # *** runs of fmas (and f32 adds, subs and muls) ***
  def deferrable(self, ins:P.Instr) -> bool:
    """An fma.rn.f32, or an add/sub/mul.f32 rounding to nearest, that may run raw: unmasked, unguarded, f32
    registers or immediates in and an f32 register out. Each makes a NaN in a lane where an operand is one."""
    if self.masked_block or ins.guard is not None: return False
    if ins.op == "fma": ok = ins.mods == ("rn", "f32") and len(ins.args) == 4
    else: ok = ins.op in ("add", "sub", "mul") and ins.mods in (("f32",), ("rn", "f32")) and len(ins.args) == 3
    if not ok: return False
    f32 = lambda a: isinstance(a, P.Reg) and a.type == "f32"
    return f32(ins.args[0]) and all(f32(a) or isinstance(a, P.Imm) for a in ins.args[1:])

  def record_fma(self, ins:P.Instr):
    """Note the deferred fma just emitted: the deferred values it read, the register it wrote."""
    self.fma_inputs.append({self.fma_live[a.name] for a in ins.args[1:] if isinstance(a, P.Reg) and a.name in self.fma_live})
    self.fma_live[ins.args[0].name] = len(self.fma_inputs) - 1

  def flush_fma(self):
    """End a run of raw float ops: the canonical NaN wherever one made a NaN. An op's result is NaN in a lane where an
    operand is, so a NaN in any value the run left in a register reaches every value computed from it: testing only
    the values no other live value was computed from finds them all, and then every register the run wrote is made
    canonical (canon keeps a NaN-free array). Lanes that are not NaN are fma32's (numpy's +, -, *), so the registers
    end as the eager canon of each op would leave them, bit for bit."""
    if not self.fma_live: return
    live = self.fma_live
    covered, todo = set(), [i for n in live.values() for i in self.fma_inputs[n]]
    while todo:
      if (i:=todo.pop()) not in covered:
        covered.add(i)
        todo += self.fma_inputs[i]
    sinks = [r for r, n in live.items() if n not in covered]
    regs = ", ".join(live)
    self.emit(f"if nan_in({', '.join(sinks)}): {regs}, = canon_each('f32', {regs})")
    self.fma_live, self.fma_inputs = {}, []

# *** instructions, guards and the kernel ***

def emit_instr(cx:Ctx, ins:P.Instr, nxt:int):
  """One instruction from its row: terminators decide the next block themselves; others run under their guard (all
  threads, some, or none)."""
  deferred = cx.deferrable(ins)
  if not deferred: cx.flush_fma()   # an instruction outside the run may read its registers
  cx.ins = ins
  r = semantics.row_of(cx, ins)
  if deferred:
    cx.mask, cx.defer_fma = None, True
    r.fn(cx, ins)
    if cx.defer_fma: raise AssertionError(f"{ins.op}.f32 at PTX line {ins.line} was not rendered through canon")
    cx.record_fma(ins)
    return
  if ins.op in ENDS_BLOCK:
    cx.next_block = nxt
    return r.fn(cx, ins)
  base = "_m" if cx.masked_block else None
  if ins.guard is None:
    cx.mask = base
    r.fn(cx, ins)
    return
  g = cx.guard_expr(ins)
  if cx.masked_block:
    cx.emit(f"_g = _m & {g}")
    cx.emit("if _g.any():")
    cx.indent += 1
    cx.mask = "_g"
    r.fn(cx, ins)
    cx.emit("pass")
    cx.indent -= 1
    return
  cx.emit(f"_g = {g}")
  cx.emit("_u = uniformity(_g)")
  for cond, mask in (("if _u == 1:", None), ("elif _u == -1:", "_g")):
    cx.emit(cond)
    cx.indent += 1
    cx.mask = mask
    r.fn(cx, ins)
    cx.emit("pass")
    cx.indent -= 1
  cx.mask = None

_REG_NAME = re.compile(r"\br_\w+")   # the parser names every register r_<name>

def special_prologue() -> list[str]:
  return ["s_tid_x, s_tid_y, s_tid_z = _E.tid", "s_ctaid_x, s_ctaid_y, s_ctaid_z = _E.ctaid",
          "s_ntid_x, s_ntid_y, s_ntid_z = _E.ntid", "s_nctaid_x, s_nctaid_y, s_nctaid_z = _E.nctaid",
          "s_laneid, s_warpid, s_nwarpid = _E.laneid, _E.warpid, _E.nwarpid", "s_smid, s_nsmid, s_gridid = _E.smid, _E.nsmid, _E.gridid",
          "s_dynamic_smem_size, s_total_smem_size = _E.dynamic_smem_size, _E.total_smem_size"]

# a kernel function's state when it hands over to the other variant: its locals over the names it was given and
# does not name itself (its keyword parameters catch all: `**_`), so no register is left behind
_STATE = "_.update(locals()); del _['_']; return _"
# the launch environment's names the kernel's functions set up from _E on each entry
SPECIAL_NAMES = tuple(n.strip() for line in special_prologue() for n in line.split("=")[0].split(","))

def translate_function(fn:P.Function, layout:Layout, consts:dict, pyname:str, ctx_type:type=Ctx, masked:bool=False) -> tuple[list[str], int]:
  """Python source for one kernel and its count of instructions (for the stats). ctx_type: a Ctx subclass that
  annotates the lines it emits (emulators/ptx's error reports map a traceback line back to its PTX line).

  A kernel is three functions. `pyname` runs the batch: `pyname_u`, the unmasked variant of every block, while every
  thread is at the same block; when a branch diverges it returns its state (its locals) and the masked variant
  `pyname_m` runs from it until the threads reconverge, returning its state for `pyname_u` to resume (both take the
  registers as keyword parameters whose defaults are their zeros). With masked, this gives `pyname_m` alone."""
  blocks = split_blocks(fn.body)
  cx = ctx_type(fn, layout, consts)
  for b in blocks:
    for lb in b.labels: cx.labels[lb] = b.index
  exit_ = cx.exit_block = len(blocks)
  cx.lines, cx.indent, cx.masked_block = [], 3, masked
  for b in blocks:
    cx.block, cx.fused = b, numpy_fuse.plan(b.instrs, cx.tmp)
    cx.ins = None
    cx.emit(f"case {b.index}:")
    cx.indent += 1
    if b.instrs: cx.emit(f"_E.tick({len(b.instrs)}, {'_m' if masked else 'None'}, {b.index})")  # the block: for a trace
    for ins in b.instrs: emit_instr(cx, ins, b.index + 1)
    cx.flush_fma()
    if not b.instrs or b.instrs[-1].op not in ENDS_BLOCK:
      cx.emit("_pc[_m] = " + str(b.index + 1) if masked else f"_b = {b.index + 1}")
    cx.indent -= 1
  # declared registers start at zero; those no line names (NVRTC declares %f<177> and names 130) are left out
  named = set(_REG_NAME.findall("\n".join(cx.lines)))
  regs = [f"{r.name}={cx.named(f'np.{_dn(np_dtype(r.type))}(0)')}" for r in fn.regs.values() if r.name in named]
  params = ", ".join([f"_cc={cx.named('np.uint32(0)')}"] + regs + ["**_"])
  head = ["  _N = _E.n"] + ["  " + s for s in special_prologue()] + (["  _fma = fma32_raw()"] if cx.uses_fma else [])
  cases = cx.lines + ["      case _: raise AssertionError(_b)"]
  ninstr = sum(len(b.instrs) for b in blocks)
  if masked:
    return [f"def {pyname}_m(_E, _pc, {params}):"] + head + [
      "  while True:", "    _b = int(_pc.min())", "    _m = _pc == _b",
      "    if _m.all():", "      del _m, _pc", f"      {_STATE}   # reconverged at block _b", "    match _b:"] + cases, ninstr
  return [f"def {pyname}(_E):", f"  s = {pyname}_u(_E)", "  while s is not None: s = _E.kernel.masked(s)", "",
          f"def {pyname}_u(_E, _b=0, {params}):"] + head + [
          "  _pc = None", "  while True:", f"    if _b == {exit_}: return None", "    match _b:"] + cases + [
          f"    if _pc is not None: {_STATE}   # diverged: the masked variant runs from here"], ninstr

def may_diverge(fn:P.Function) -> bool:
  """Whether a kernel has a branch that likely splits its threads: a guarded forward branch, ret or exit (an `if`, a
  bounds check; NVRTC's loops branch backward on a uniform counter) or an indirect one."""
  seen: set[str] = set()
  for st in fn.body:
    if isinstance(st, P.Label): seen.add(st.name)
    elif st.op == "brx": return True
    elif st.guard is not None and st.op in ENDS_BLOCK:
      if not (st.op == "bra" and len(st.args) == 1 and isinstance(st.args[0], P.Sym) and st.args[0].name in seen): return True
  return False

def translate_module(m:P.Module, ctx_type:type=Ctx, masked:bool=False) -> str:
  """Python source for a whole parsed module: constants, one function per entry, and _META describing them; with
  masked, the masked variants of the entries (`_kernel_<i>_m`: translate_function) alone.
  A kernel's masked variant is translated with its unmasked one where it may diverge (may_diverge), else at its
  first divergence (PTXKernel.masked), if ever: half the translation and of its compile (matmul_64: its loop
  branch is uniform), paid again (less the parse) by a kernel that diverges all the same."""
  funcs, ginit, cinit = entries(m)
  consts: dict[str, str] = {}
  body, kernels = [], []
  for i, (fn, layout) in enumerate(funcs):
    lines, ninstr = translate_function(fn, layout, consts, f"_kernel_{i}", ctx_type, masked)
    if not masked and may_diverge(fn): lines += [""] + translate_function(fn, layout, consts, f"_kernel_{i}", ctx_type, True)[0]
    body += lines + [""]
    psize = max((p.offset + p.size for p in fn.params), default=0)
    kernels.append(dict(name=fn.name, py=f"_kernel_{i}", params=[(p.name, p.size, p.align, p.offset) for p in fn.params], param_size=psize,
                        shared=layout.shared_size, dynamic_base=layout.dynamic_base, local=layout.local_size, instructions=ninstr,
                        maxntid=fn.maxntid))
  head = ["import numpy as np", "from mockgpu.compiler.ptx.backends.numpy_names import *"]
  head += [f"{name} = {expr}" for expr, name in consts.items()]
  meta = dict(version=m.version, target=m.target, kernels=kernels, globals=(len(ginit), ginit), consts=(len(cinit), cinit))
  return "\n".join(head + [f"_META = {meta!r}", ""] + body)
