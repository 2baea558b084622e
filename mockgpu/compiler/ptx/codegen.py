"""Translate a parsed PTX kernel into Python source over numpy arrays (one element per thread of a batch of CTAs).

Control flow: the kernel is cut into basic blocks (at labels, after branches, before barriers). While every thread is
at the same block, it runs unmasked ("full" variant) and branches whose predicate is uniform stay uniform. When a
branch diverges, every thread gets a block index (`_pc`) and the lowest block runs next for the threads that are in it
("masked" variant, writes through np.where): min-PC scheduling, which reconverges structured code at its join point
and makes bar.sync exact (a barrier starts a block, so every thread reaches it before any passes it).
"""
from __future__ import annotations
import numpy as np
from mockgpu.errors import UnsupportedInstruction
from mockgpu.compiler.ptx import parser as P
from mockgpu.emulators.ptx.types import np_dtype, is_signed

_BARRIERS = ("bar", "barrier")
_ENDS_BLOCK = ("bra", "ret", "exit", "trap", "brx")

class Layout:
  """Where a kernel's variables live: offsets in the shared/local windows and in the module windows."""
  def __init__(self, fn:P.Function, module_offsets:dict[str, tuple[str, int]]):
    self.symbols = dict(module_offsets)  # name -> (space, state-space address)
    self.shared_size = self.local_size = 0
    self.dynamic_shared = None
    for v in fn.vars:
      if v.space == "shared":
        self.shared_size = _align(self.shared_size, v.align)
        if v.extern and v.size == 0: self.dynamic_shared = v; continue
        self.symbols[v.name] = ("shared", self.shared_size)
        self.shared_size += v.size
      elif v.space == "local":
        self.local_size = _align(self.local_size, v.align)
        self.symbols[v.name] = ("local", self.local_size)
        self.local_size += v.size
      else: raise UnsupportedInstruction(f"PTX: .{v.space} variable {v.name} inside a function is not supported")
    if self.dynamic_shared is not None:
      # dynamic shared memory starts after the static variables, at the extern array's alignment (at least 16)
      self.dynamic_base = _align(self.shared_size, max(16, self.dynamic_shared.align))
      self.symbols[self.dynamic_shared.name] = ("shared", self.dynamic_base)
    else: self.dynamic_base = self.shared_size
    for p in fn.params: self.symbols[p.name] = ("param", p.offset)

def _align(x:int, a:int) -> int: return (x + a - 1) // a * a

class Block:
  def __init__(self, index:int):
    self.index, self.instrs, self.labels = index, [], []

def split_blocks(body:list) -> list[Block]:
  blocks = [Block(0)]
  for st in body:
    cur = blocks[-1]
    if isinstance(st, P.Label):
      if cur.instrs: blocks.append(cur := Block(len(blocks)))
      cur.labels.append(st.name)
      continue
    if st.op in _BARRIERS and cur.instrs: blocks.append(cur := Block(len(blocks)))
    cur.instrs.append(st)
    if st.op in _ENDS_BLOCK: blocks.append(Block(len(blocks)))
  return blocks

class Ctx:
  """Emission state for one kernel: lines, constants, the current mask."""
  def __init__(self, fn:P.Function, layout:Layout, consts:dict):
    self.fn, self.layout, self.consts = fn, layout, consts
    self.const_exprs = {name: expr for expr, name in consts.items()}
    self.lines:list[str] = []
    self.indent = 0
    self.mask:str|None = None     # the active-lane mask expression (None: every thread of the batch)
    self.masked_block = False     # emitting the masked variant of a block
    self.instr:P.Instr|None = None
    self.ntmp = 0
    self.labels:dict[str, int] = {}
    self.block:Block|None = None
    self.exit = 0                 # the block index meaning "every thread has exited"
    self.fused:dict = {}          # id(load) -> fuse.Fused, for the loads of the current block read by one prefetch

  # *** output ***
  def emit(self, s:str): self.lines.append("  " * self.indent + s)
  def tmp(self) -> str:
    self.ntmp += 1
    return f"_t{self.ntmp}"
  def const(self, expr:str) -> str:
    """A module-level constant (numpy scalars cannot live in marshalled code objects, so they are built by the source)."""
    if expr not in self.consts:
      self.consts[expr] = name = f"_k{len(self.consts)}"
      self.const_exprs[name] = expr
    return self.consts[expr]
  def fold(self, expr:str, conv:str) -> str:
    """conv (a format string over one value) applied to expr, at translation time when expr is a constant."""
    return self.const(conv.format(f"({self.const_exprs[expr]})")) if expr in self.const_exprs else conv.format(expr)
  def where(self) -> str:
    i = self.instr
    text = f"PTX line {i.line}: {i.text}"
    return self.const(repr(text))
  def unsupported(self, what:str|None=None):
    i = self.instr
    raise UnsupportedInstruction(f"PTX line {i.line}: {what or 'instruction'} not supported: {i.text}")

  # *** operands ***
  def src(self, a, t:str) -> str:
    """Expression for operand `a` read as PTX type t."""
    dt = np_dtype(t)
    if isinstance(a, P.Reg):
      rd = np_dtype(a.type)
      if rd == dt: return a.name
      if rd.itemsize == dt.itemsize and rd.kind != "b" and dt.kind != "b": return f"{a.name}.view(np.{dt.name})"
      return f"resize({a.name}, np.dtype(np.{dt.name}), {is_signed(t)})"
    if isinstance(a, P.Imm): return self.imm(a, t)
    if isinstance(a, P.Not):
      if t != "pred": self.unsupported(f"negated operand as .{t}")
      return f"(~{a.reg.name})"
    if isinstance(a, P.Special): return self.special(a, t)
    if isinstance(a, P.Sym): return self.sym_address(a, t)
    self.unsupported(f"operand {a!r}")

  def imm(self, a:P.Imm, t:str) -> str:
    dt = np_dtype(t)
    if dt.kind == "b": return self.const(f"np.bool_({bool(a.value)})")
    if dt.kind == "f" and a.is_float and a.bits == dt.itemsize * 8:
      u = {4: "uint32", 8: "uint64"}[dt.itemsize]
      raw = np.array([a.value], np.float64).astype(dt).view(u)[0]
      return self.const(f"np.{u}({int(raw)}).view(np.{dt.name})")
    if dt.kind == "f": return self.const(f"np.{dt.name}(float({str(float(a.value))!r}))")  # inf and nan have no literal
    if a.is_float:
      # a float literal in an integer/bit-typed operand stands for its bit pattern (0f: 32 bits, 0d: 64 bits)
      fdt, udt = (np.float64, np.uint64) if a.bits == 64 else (np.float32, np.uint32)
      raw = int(np.array([a.value], fdt).view(udt)[0]) % (1 << dt.itemsize * 8)
      return self.const(f"np.uint{dt.itemsize*8}({raw}).view(np.{dt.name})")
    v = int(a.value) % (1 << dt.itemsize * 8)
    return self.const(f"np.uint{dt.itemsize*8}({v}).view(np.{dt.name})")

  def special(self, a:P.Special, t:str) -> str:
    name = a.name
    base, _, comp = name.partition(".")
    simple = {"tid": "s_tid", "ntid": "s_ntid", "ctaid": "s_ctaid", "nctaid": "s_nctaid"}
    if base in simple and comp in ("x", "y", "z"): e = f"{simple[base]}_{comp}"
    elif name in ("laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid"): e = f"s_{name}"
    elif name == "clock": e = f"_E.clock(32, {self.block.instrs.index(self.instr)})"
    elif name in ("clock64", "globaltimer"): e = f"_E.clock(64, {self.block.instrs.index(self.instr)})"
    elif name in ("lanemask_eq", "lanemask_lt", "lanemask_le", "lanemask_gt", "lanemask_ge"): e = f"_E.lanemask({name[9:]!r})"
    elif name == "dynamic_smem_size": e = "s_dynamic_smem_size"
    elif name == "total_smem_size": e = "s_total_smem_size"
    else: self.unsupported(f"special register %{name}")
    dt = np_dtype(t)
    src_bits = 64 if name in ("clock64", "globaltimer") else 32
    if dt.itemsize * 8 == src_bits: return e if dt.kind == "u" else f"{e}.view(np.{dt.name})"
    return f"resize({e}, np.dtype(np.{dt.name}), False)"

  def sym_address(self, a:P.Sym, t:str) -> str:
    """The state-space address of a variable (mov/cvta of a symbol)."""
    space, off = self.symbol(a.name)
    if space == "param": self.unsupported("taking the address of a kernel parameter")
    dt = np_dtype(t)
    v = (off + a.offset) % (1 << dt.itemsize * 8)
    return self.const(f"np.uint{dt.itemsize*8}({v}).view(np.{dt.name})")

  def symbol(self, name:str) -> tuple[str, int]:
    if name not in self.layout.symbols: self.unsupported(f"unknown symbol {name}")
    return self.layout.symbols[name]

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
    if rd.itemsize == dt.itemsize and rd.kind != "b" and dt.kind != "b": return self.fold(expr, "{}.view(np." + rd.name + ")")
    return self.fold(expr, "resize({}, np.dtype(np." + rd.name + "), " + str(is_signed(t)) + ")")

  # *** guards ***
  def guard_expr(self, ins:P.Instr) -> str:
    p, neg = ins.guard
    return f"(~{p.name})" if neg else p.name

def _special_prologue() -> list[str]:
  return ["s_tid_x, s_tid_y, s_tid_z = _E.tid", "s_ctaid_x, s_ctaid_y, s_ctaid_z = _E.ctaid",
          "s_ntid_x, s_ntid_y, s_ntid_z = _E.ntid", "s_nctaid_x, s_nctaid_y, s_nctaid_z = _E.nctaid",
          "s_laneid, s_warpid, s_nwarpid = _E.laneid, _E.warpid, _E.nwarpid", "s_smid, s_nsmid, s_gridid = _E.smid, _E.nsmid, _E.gridid",
          "s_dynamic_smem_size, s_total_smem_size = _E.dynamic_smem_size, _E.total_smem_size"]

def translate_function(fn:P.Function, layout:Layout, consts:dict, pyname:str, ctx_type:type=Ctx) -> tuple[list[str], int]:
  """Python source for one kernel and its count of instructions (for the stats). ctx_type: a Ctx subclass that
  annotates the lines it emits (emulators/ptx's error reports map a traceback line back to its PTX line)."""
  from mockgpu.compiler.ptx import ops, fuse
  blocks = split_blocks(fn.body)
  cx = ctx_type(fn, layout, consts)
  for b in blocks:
    for lb in b.labels: cx.labels[lb] = b.index
  exit_ = cx.exit = len(blocks)
  variants = {}
  for masked in (False, True):
    cx.lines, cx.indent, cx.masked_block = [], 4, masked
    for b in blocks:
      cx.block, cx.fused = b, fuse.plan(b.instrs, cx.tmp)
      cx.emit(f"case {b.index}:")
      cx.indent += 1
      if b.instrs: cx.emit(f"_E.tick({len(b.instrs)}{', _m' if masked else ''})")
      for ins in b.instrs: ops.emit_instr(cx, ins, b.index + 1)
      if not b.instrs or b.instrs[-1].op not in _ENDS_BLOCK:
        cx.emit("_pc[_m] = " + str(b.index + 1) if masked else f"_b = {b.index + 1}")
      cx.indent -= 1
    variants[masked] = cx.lines
  lines = [f"def {pyname}(_E):", "  _N = _E.n"] + ["  " + s for s in _special_prologue()]
  for r in fn.regs.values(): lines.append(f"  {r.name} = {cx.const(f'np.{np_dtype(r.type).name}(0)')}")
  lines += ["  _cc = np.uint32(0)", "  _b, _pc, _m = 0, None, None", "  while True:",
            "    if _pc is not None:", "      _b = int(_pc.min())", "      _m = _pc == _b", "      if _m.all(): _pc = _m = None",
            f"    if _b == {exit_}: return", "    if _m is None:", "      match _b:"]
  lines += variants[False] + ["        case _: raise AssertionError(_b)", "    else:", "      match _b:"]
  lines += variants[True] + ["        case _: raise AssertionError(_b)"]
  return lines, sum(len(b.instrs) for b in blocks)
