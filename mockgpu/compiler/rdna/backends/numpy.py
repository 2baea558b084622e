"""The numpy backend: a kernel's basic blocks as Python source over numpy arrays, all waves of a chunk at once.

Each block becomes a function `_blk<k>(w, n)` run for a group of n waves sitting at that block (`w`: a slice or index
array into the wave axis), and `_all<k>(n)`, the same code for the whole chunk of waves (`w` is then every wave, and the
register accesses skip the indexing); the names keep clear of the runtime helpers the code calls (block 16 was once
`b16`, shadowing numpy_runtime.b16, the 16-bit operand view, in every kernel of 17 blocks or more). It returns the next
block per wave (an int, or an array for a per-wave branch), or -1 at s_endpgm.
Registers: `S[i][w]` uint32 [n] (SCC is S[253]), `V[i][w]` uint32 [n, lanes] (32, or 64 in wave64) where V is a list
of per-register arrays that are never modified in place (numpy_runtime.vw rebinds them), so a move or a load costs no
copy; `m` is the EXEC mask as lanes and `full` says whether all lanes are on. Lane masks are one SGPR in wave32 and an
SGPR pair (read as uint64) in wave64. Each instruction is lowered by the operand model
(operands.py); an ALU op's typed program (program.py: its semantics row with its modifiers) is rendered by np_expr.
Instructions that cannot be lowered become a `raise` at their place, so a kernel only fails if it executes one.
"""
from __future__ import annotations
import re
from tinygrad.renderer.amd.dsl import Inst, Reg
from mockgpu.compiler.rdna.decode import Block, Bad, op_name, BARRIERS, INVALID, describe, invalid_operand
from mockgpu.compiler.rdna import operands as ops, program, semantics
from mockgpu.compiler.rdna.operands import Unsupported, SCC, VCC, EXEC, NULL, M0, failure
import numpy as np
from mockgpu.boards import WAVE32, WAVE64
from mockgpu.compiler.rdna.semantics import lang
from mockgpu.compiler.rdna.semantics.lang import E, WIDTH, BITS
from mockgpu.compiler.rdna.backends.reads import Reads

# the cache key of translated code (numpy_version.py: read there by the executor, which needs no translator for a cached kernel)
from mockgpu.compiler.rdna.backends.numpy_version import VERSION, translator_files  # noqa: F401
# a numpy scalar constant (optionally reinterpreted): hoisted out of the block functions, as building one costs ~1 us
CONST = re.compile(r"\b(?:u8|u16|u32|u64|i8|i16|i32|i64|f16|f32|f64)\((?:0x[0-9a-f]+|-?\d+(?:\.\d+)?)\)"
                   r"(?:\.view\((?:dt_)?(?:u16|u32|u64|i16|i32|i64|f16|f32|f64)\))?")

def plus64(off:int) -> str:
  """Code adding a constant byte offset to a uint64 address (wrapping), or nothing for 0."""
  return f" + u64({off & (2**64 - 1)})" if off else ""

VREG = re.compile(r"\bV\[(-?\d+)\]|\bvw(?:16|v)?\(V, (-?\d+)|r64\(V\[-?\d+\]\[w\], V\[(-?\d+)\]")

def bad_vgprs(regs) -> str|None:
  """Why VGPR indexes one instruction touches are not in the register file (v0..v255, and CDNA's AGPRs a0..a255 at
  operands.AGPR), or None. A negative index is an SGPR or constant encoded where the instruction needs a VGPR
  (v_readlane_b32's src0, say)."""
  if past := [i for i in regs if 255 < i < ops.AGPR]: return f"{INVALID}v{min(past)} is past v255"
  if past := [i for i in regs if i >= ops.AGPR + 256]: return f"{INVALID}a{min(past) - ops.AGPR} is past a255"
  if below := [i for i in regs if i < 0]: return f"{INVALID}operand encoding {min(below) + 256} where a VGPR is required"
  return None

SREG = re.compile(r"\bS\[(\d+)\]")

def bad_sgprs(regs) -> str|None:
  """An SGPR index past the 256 scalar slots is a VGPR encoded where an SGPR or a lane mask is required."""
  if past := [i for i in regs if i > 255]: return f"{INVALID}v{min(past) - 256} where the instruction needs an SGPR"
  return None

# a register index that may be out of range (negative, or 256 and up: an AGPR or past the file), written where VREG or
# SREG match: most instructions have none, and this one search spares their full scan (2 of a 64x64 matmul's 14 ms)
SUSPECT = re.compile(r"(?:\bV\[|\bvw(?:16)?\(V, |\bS\[)(?:-|25[6-9]|2[6-9]\d|[3-9]\d\d|[1-9]\d{3})")

def past_v255(lines:list[str]) -> str|None:
  """bad_vgprs (and bad_sgprs) of the registers the translated lines of one instruction touch."""
  text = "\n".join(lines)  # one scan (each alternative of VREG has one group: lastindex is the one that matched)
  if SUSPECT.search(text) is None: return None
  return bad_vgprs([int(m.group(m.lastindex)) for m in VREG.finditer(text)]) or bad_sgprs([int(i) for i in SREG.findall(text)])

def typed(raw:str, t:str, hi:bool=False) -> str:
  """View raw register bits (uint32, or uint64 for 64-bit types) as ISA type t."""
  if t in ("b32", "u32", "b64", "u64"): return raw
  if t in ("i32", "f32", "i64", "f64"): return f"{raw}.view(dt_{t})"  # a dtype object: numpy_runtime.dt_f32
  if t == "f16": return f"h16({raw}, {hi})"
  if t == "bf16": return f"bf16({raw}, {hi})"
  if t in ("b16", "u16"): return f"b16({raw}, {hi})"
  if t == "i16": return f"b16({raw}, {hi}).view(i16)"
  raise Unsupported(f"operand type {t}")

# *** the semantics language as numpy code ***

def _named(fn:str) -> lang.Form:
  """A helper as a call of fn (a numpy_runtime function of the helper's name, or numpy's own)."""
  return lambda a, ts, t: f"{fn}({', '.join(a)})"

def _with_dtype(fn:str) -> lang.Form:
  """A numpy_runtime helper given the result type."""
  return lambda a, ts, t: f"{fn}({a[0]}, {t})"

def _by_bits(fn:str) -> lang.Form:
  """A numpy_runtime helper that has one function per operand width (fma32, ftz16, ...)."""
  return lambda a, ts, t: f"{fn}{BITS[ts[0]]}({', '.join(a)})"

# helper name -> its numpy form (lang.HELPERS holds it): a numpy_runtime function of its name unless written here
NP_FORMS:dict[str, lang.Form] = {name: _named(name) for name in lang.HELPERS} | {
  "floor": _named("np.floor"), "ceil": _named("np.ceil"), "trunc": _named("np.trunc"), "rint": _named("np.rint"),
  "abs": _named("np.abs"), "isnan": _named("np.isnan"), "max": _named("np.maximum"), "min": _named("np.minimum"),
  **{name: _with_dtype(name) for name in ("exp2", "log2", "rcp", "rsq", "sqrt", "sin_rev", "cos_rev")},
  "ftz": _by_bits("ftz"), "fma": _by_bits("fma"),
  "quadmask": lambda a, ts, t: f"quadmask({a[0]}, {BITS[ts[0]]})", "wqm": lambda a, ts, t: f"wqm({a[0]}, {BITS[ts[0]]})",
  "bits16": lambda a, ts, t: f"fbits16({a[0]})" if ts[0] == "f16" else f"(bits32({a[0]}) & 0xffff)",
}
lang.register("numpy", NP_FORMS)

def np_const(e:E) -> str:
  v = e.val
  if e.t == "bool": return f"np.{bool(v)}_"
  if e.t == "int": return str(v) if v >= 0 else f"({v})"
  if e.t == "float": return repr(v)
  if e.t[0] == "f": return f"{e.t}({float(v):.1f})" if float(v).is_integer() and abs(v) < 2**70 else f"{e.t}({float(v)!r})"
  return f"{e.t}(0x{v:x})" if v >= 0 else f"{e.t}({v})"

def np_expr(e:E, read) -> str:
  """numpy code computing e; read(e) renders an input node (a register or constant read)."""
  op = e.op
  if op == "const": return np_const(e)
  if op == "var": return e.val
  if op == "input": return read(e)
  a = [np_expr(x, read) for x in e.args]
  if op in ("bin", "cmp"): return f"({a[0]} {e.val} {a[1]})"
  if op == "neg": return f"(-{a[0]})"
  if op in ("inv", "not"): return f"(~{a[0]})"
  if op == "and": return f"({a[0]} & {a[1]})"
  if op == "or": return f"({a[0]} | {a[1]})"
  if op == "if": return f"np.where({a[0]}, {a[1]}, {a[2]})"
  if op == "cast": return f"{a[0]}.astype({e.t})"
  if op == "call": return _np_call(e, a)
  raise ValueError(f"node {op}")

def _np_call(e:E, a:list[str]) -> str:
  a = [("True" if x.val else "False") if x.op == "const" and x.t == "bool" else s for x, s in zip(e.args, a)]
  return lang.HELPERS[e.val].numpy(a, [x.t for x in e.args], e.t)

NP_TYPES = {"bool": "bool", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "int8": "i8", "int16": "i16",
            "int32": "i32", "int64": "i64", "float16": "f16", "float32": "f32", "float64": "f64"}

def eval_row(row, values:dict, namespace:dict|None=None) -> dict:
  """A row run over numpy values given by name (a, b, c, d, vcc, scc, ...; a Python int is a weak literal): the
  final value of every name it assigns. For tests of a table's rows outside any kernel."""
  from mockgpu.compiler.rdna.backends import numpy_runtime
  env = {n: E("var", "int" if type(x) is int else NP_TYPES[np.asarray(x).dtype.name], val=n) for n, x in values.items()}
  stmts, _ = lang.instance(row, env)
  ns = {**vars(numpy_runtime), **(namespace or {}), **values}
  with np.errstate(all="ignore"):
    for s in stmts: exec(f"{', '.join(s.targets)} = {np_expr(s.value, None)}", ns)
  return {n: ns[n] for n in row.assigns()}

def np_body(prog:program.Program, read) -> list[str]:
  """A program's statements as numpy lines."""
  return [f"{', '.join(s.targets)} = {np_expr(s.value, read)}" for s in prog.body]

STORED_BITS = {"f32": "fbits32", "f64": "f64bits"}  # a row's result as the raw bits memory gets

def np_atomic(prog:program.Program, fn:str) -> list[str]:
  """An ATOMIC row's program as a module-level numpy function fn(_old, _a, _b) over raw bits (uint32 or uint64 arrays,
  one element per lane) returning the bits of the new memory word."""
  lines = [f"def {fn}(_old, _a=None, _b=None):"]
  lines += ["  " + ln for ln in np_body(prog, lambda e: typed(f"_{e.val.special}", e.val.isa))]
  wide = WIDTH[prog.dst] == 64
  return lines + [f"  return {STORED_BITS.get(prog.dst, 'as_u64' if wide else 'bits32')}(d)"]

# helpers that keep numpy's error state (none enters its own np.errstate, which would hide an invalid operation from
# numpy_runtime.watching): a row calling only these tests its result for a generated NaN only after an invalid operation
WATCHED = {"gnan", "ftz", "abs", "isnan", "max", "min", "floor", "ceil", "trunc", "rint"}
GNAN = re.compile(r"^(d) = gnan\(d, (.*)\)$")  # the statement program._generated_nan adds

def _calls(e:E):
  if e.op == "call": yield e
  for x in e.args:
    if isinstance(x, E): yield from _calls(x)

def watched(prog:program.Program) -> bool:
  """Whether every helper the program calls is WATCHED (an fma of f32 or f16: the native ufunc or plain numpy; f64's
  enters an errstate)."""
  calls = [c for s in prog.body for c in _calls(s.value)]
  return all(c.val in WATCHED or (c.val == "fma" and c.args[0].t in ("f32", "f16")) for c in calls)

COL = {True: "[:, None]", False: ""}  # a scalar operand in vector context is a column: one value per wave
FBITS = {"f32": "fbits32", "f16": "fbits16"}  # a float value's register bits
FBITS16 = {"f16": "fbits16", "bf16": "bf16bits"}  # a 16-bit float value's register bits (bf16: rounded from f32)

TYPED_READ = re.compile(r"(\s*)(\w+) = V\[(\d+)\]\[w\]\.view\((dt_\w+)\)(\s*#.*)?")
VWRITE = re.compile(r"\s*vw(?:16|v)?\(V, (\d+),")  # a line writing one VGPR (every emitter's write is a line of its own)
# a global load's or store's 64-bit VGPR address, its first argument (evaluated whenever the line runs)
ADDRESS = re.compile(r"(\s*(?:_r = gload|gstore)\(st, w, )r64\(V\[(\d+)\]\[w\], V\[(\d+)\]\[w\]\)")

def typed_views(lines:list[str]) -> list[str]:
  """A block's lines with each typed register view made once until the register is written: a matmul step reads each
  loaded f32 register four times, and each `.view` costs ~0.15 us. Only whole-line reads (`a = V[3][w].view(dt_f32)`,
  run unconditionally) are shared; a write of the register (vw, vw16), or V passed to any other helper, drops them.
  So is a global load's or store's 64-bit address pair (r64: ~1.6 us; a matmul step loads four times from each base).
  Substring tests come before the regular expressions: this runs at every translation."""
  views:dict[int, dict[str, str]] = {}  # register -> dtype name -> the local holding its view
  pairs:dict[tuple[int, int], str] = {}  # (low, high register) -> the local holding their r64
  out = []
  for ln in lines:
    if ".view(dt_" in ln and (m:=TYPED_READ.fullmatch(ln)) is not None:
      indent, name, r, dt, comment = m.groups()
      var, known = f"_{dt[3:]}v{r}", views.setdefault(int(r), {})
      out.append(f"{indent}{name} = {var}{comment or ''}" if dt in known else f"{indent}{name} = {var} = V[{r}][w].view({dt}){comment or ''}")
      known[dt] = var
      continue
    if "r64(V[" in ln and (m:=ADDRESS.match(ln)) is not None:
      head, lo, hi = m.groups()
      key, var = (int(lo), int(hi)), f"_a{lo}_{hi}"
      ln = head + (var if key in pairs else f"({var} := r64(V[{lo}][w], V[{hi}][w]))") + ln[m.end():]
      pairs[key] = var
    out.append(ln)
    if "(V," not in ln: continue
    if (w:=VWRITE.match(ln)) is not None and ln.count("(V,") == 1:
      r = int(w.group(1))
      views.pop(r, None)
      if pairs: pairs = {k: v for k, v in pairs.items() if r not in k}
    else: views, pairs = {}, {}
  return out

VWV = re.compile(r"(\s*)vwv\(V, (\d+), w, (.*), m, full\)(\s*#.*)?")

def full_writes(lines:list[str]) -> list[str]:
  """A whole-chunk block's writes of a register-shaped value (vwv) inline: with every lane on, the register becomes the
  value itself, without vw's call and tests (~0.25 us of a ~1.5 us f32 op); else the active lanes are merged (vwm)."""
  def inline(m:re.Match) -> str:
    indent, d, val, comment = m.groups()
    return f"{indent}V[{d}] = {val} if full else vwm(V[{d}], {val}, m){comment or ''}"
  return [VWV.sub(inline, ln) if "vwv(" in ln else ln for ln in lines]

SUBSET_BUILD = "def build_subset(st):"

def split_subset(src:str) -> str:
  """The module to compile from a translation's source: its subset blocks (run only once waves diverge, in few kernels)
  as a string that numpy_control.LazyBlocks compiles at its first use, on the same lines as in src, so that a
  traceback's line names the same instruction in both (executor._where_numpy). Compiling them too doubled the compile,
  half of a cold first dispatch's translation (64x64 matmul: 18 of 40 ms)."""
  head, sep, tail = src.partition(SUBSET_BUILD)
  if not sep: return src
  return head + f"SUBSET_LINE = {head.count(chr(10))}\nSUBSET_SOURCE = {sep + tail!r}\n"

def module(blocks:list[Block], ftz32:bool, ftz16:bool, arch:str, lanes:int, ieee:bool) -> str:
  """The module the disk cache stores for a kernel: its translation (split_subset) and NVGPR, the VGPRs its waves hold
  (all 256 once an M0-relative move may reach any of them)."""
  t = Translator(blocks, ftz32, ftz16, arch, lanes, ieee)
  src = t.source()
  used = [int(a or b) for a, b in re.findall(r"V\[(\d+)\]|vw(?:16|v)?\(V, (\d+)", src)]
  return split_subset(src) + f"NVGPR = {256 if t.relative else max(used, default=0) + 1}\n"

# the translated lines of an op by (translator class, family, wave size, float modes, instruction): the kernels of a
# process share most of their instructions (operands._lowered). Only the kinds whose emitter reads nothing but the op,
# those modes and the PC, and changes nothing but its lines and the lane masks it leaves pending (not branches and
# jumps: block indexes; not atomics: helpers; not M0-relative moves: flushes).
MEMO_OPS = (ops.Valu, ops.Dual, ops.Packed, ops.Salu, ops.Smem, ops.Vmem, ops.DsLoad, ops.DsStore, ops.DsPair, ops.Nop,
            ops.Barrier, ops.End)
EMITTED:dict[tuple, tuple] = {}
EMITTED_LIMIT = 1 << 14  # ~6 MB of lines
PC_MARK = "\x00pc\x00"

class _PcMark:
  """The PC while a remembered op is emitted: written as PC_MARK; any other use (arithmetic, a comparison, a format
  spec) raises TypeError, and the op is emitted again with the real PC, unremembered."""
  __slots__ = ()
  def __format__(self, spec:str) -> str:
    if spec: raise TypeError(f"the PC formatted as {spec!r}")
    return PC_MARK
  def __str__(self) -> str: return PC_MARK
  __repr__ = __str__
  def __eq__(self, other): raise TypeError("the PC compared")
  __hash__ = None  # type: ignore[assignment]

class Translator(Reads):
  def __init__(self, blocks:list[Block], ftz32:bool, ftz16:bool, arch:str, wave:int, ieee:bool=True):
    self.blocks, self.ftz32, self.ftz16, self.sem, self.wave = blocks, ftz32, ftz16, semantics.family(arch), wave
    self.ieee = ieee  # MODE.IEEE (program.valu)
    self.index = {b.start: k for k, b in enumerate(blocks)}
    self.lines:list[str] = []
    self.dpp:ops.Dpp|None = None   # the DPP source of the instruction being translated
    self.helpers:dict[str, list[str]] = {}  # module-level functions the blocks call (atomic rows), by name
    self.emitters = {ops.Valu: self.valu, ops.Dual: self.dual, ops.Packed: self.packed, ops.Wmma: self.wmma,
                     ops.Salu: self.salu, ops.ReadLane: self.readlane, ops.WriteLane: self.writelane, ops.Swap: self.swap,
                     ops.Branch: self.branch, ops.End: lambda op: "-1", ops.Barrier: lambda op: None,
                     ops.Nop: lambda op: None, ops.Smem: self.smem, ops.Vmem: self.vmem, ops.DsLoad: self.ds_load,
                     ops.DsStore: self.ds_store, ops.DsPair: self.ds_pair, ops.DsPermute: self.ds_permute, ops.DsSwizzle: self.ds_swizzle,
                     ops.DsAtomic: self.ds_atomic, ops.VAtomic: self.vatomic, ops.Mfma: self.mfma, ops.Permlane: self.permlane,
                     ops.Mode: self.mode, ops.MovRel: self.movrel, ops.Jump: self.jump, ops.Trap: self.trap}
    self.shaped = False  # the instruction being translated reads a VGPR-shaped source
    self.relative = False  # an M0-relative VGPR move: the waves then hold every VGPR (NVGPR 256)

  # *** output ***
  def out(self, line:str): self.lines.append("    " + line)

  def source(self) -> str:
    head = ["from mockgpu.compiler.rdna.backends.numpy_runtime import *", "from mockgpu.compiler.rdna.backends.numpy_memory import *",
            "from mockgpu.compiler.rdna.backends.numpy_control import *",
            f"BLOCK_PC = {[b.start for b in self.blocks]}", "BLOCK_STARTS = np.array(BLOCK_PC, np.int64)",
            f"BLOCK_LEN = {[len(b.insts) for b in self.blocks]}",
            f"BLOCK_BARRIER = {[self._ends_in_barrier(b) for b in self.blocks]}", "def build(st):",
            "  S, V = st.S, st.V"]
    body:list[str] = []
    subset = [SUBSET_BUILD, "  S, V = st.S, st.V"]
    consts:dict[str, str] = {}
    named = lambda mt: consts.setdefault(mt.group(0), f"_K{len(consts)}")
    for k, b in enumerate(self.blocks):
      self.lines = []
      self.block(b)
      # once per block, for both its forms (each line a call: 2 ms a kernel)
      text = CONST.sub(named, "\n".join(typed_views(self.lines)))
      subset += [f"  def _blk{k}(w, n):", text]
      # the block for the whole chunk of waves: no indexing per access
      body += [f"  def _all{k}(n):", "    w = EVERY", "\n".join(full_writes(text.replace("[w]", "").split("\n")))]
    body.append(f"  return LazyBlocks(st, globals()), [{', '.join(f'_all{k}' for k in range(len(self.blocks)))}]")
    # the blocks for a subset of the waves (after a branch diverged) last: split_subset compiles them at first use
    body += subset + [f"  return [{', '.join(f'_blk{k}' for k in range(len(self.blocks)))}]"]
    helpers = [ln for lines in self.helpers.values() for ln in lines]
    return "\n".join(head[:3] + [f"{name} = {expr}" for expr, name in consts.items()] + helpers + head[3:] + body) + "\n"

  @staticmethod
  def _ends_in_barrier(b:Block) -> bool:
    last = b.insts[-1][1]
    return not isinstance(last, Bad) and op_name(last) in BARRIERS

  def block(self, b:Block):
    self.out(f"m, full = em({self.mask(EXEC)})")
    self.pending:dict[int, str] = {}  # SGPR -> local bool lane array not yet packed into it
    for pc, inst in b.insts:
      self.pc = pc
      if isinstance(inst, Bad):
        self.out(f"raise unsupported(st, {pc}, {inst.reason!r})")
        return
      start, self.before = len(self.lines), dict(self.pending)
      try:
        nxt = self.inst(inst)
        if (bad := past_v255(self.lines[start:])) is not None: raise Unsupported(bad)
      except Unsupported as e:
        del self.lines[start:]
        self.pending = self.before
        self.out(f"raise unsupported(st, {pc}, {failure(inst, str(e))!r})")
        return
      self.lines[start:] = self.lazy_masks(self.lines[start:])
      if nxt is not None:
        if nxt != "-1": self.flush_masks()  # s_endpgm: the wave's registers are dead
        self.out(f"return {nxt}")
        return
    self.flush_masks()
    end = b.insts[-1][0] + b.insts[-1][1].size()
    self.out(f"return {self.index[end]}" if end in self.index else
             f"raise unsupported(st, {end}, 'execution runs past the end of the decoded code')")

  def inst(self, inst:Inst) -> str|None:
    """Emit one instruction; returns the block's return expression if it ends the block. The lines of the op kinds in
    MEMO_OPS are remembered per process (EMITTED) with the PC as a mark, and reused with the PC written in."""
    op = ops.lower(inst, self.pc, self.sem)
    if type(op) not in MEMO_OPS: return self.emit(op)
    key = (type(self), self.sem, self.wave, self.ftz32, self.ftz16, self.ieee, type(inst), inst._raw)
    if (hit:=EMITTED.get(key)) is None:
      if (hit:=self._emit_marked(op)) is None: return self.emit(op)
      if len(EMITTED) < EMITTED_LIMIT: EMITTED[key] = hit
    lines, nxt, masks = hit
    pc = str(self.pc)
    self.lines += [ln.replace(PC_MARK, pc) for ln in lines]
    self.pending.update(masks)
    return None if nxt is None else nxt.replace(PC_MARK, pc)

  def _emit_marked(self, op) -> tuple|None:
    """op's lines, return expression and the lane masks it writes (left pending), emitted with the PC as PC_MARK; None
    where that emission fails (an Unsupported op, or a use of the PC other than writing it) or flushes the masks."""
    start, pending, pc = len(self.lines), self.pending, self.pc
    written:dict[int, str] = {}  # emitted over no pending masks: what it holds after is what the op wrote
    try:
      self.pc, self.pending = _PcMark(), written
      nxt, failed = self.emit(op), False
    except Exception: nxt, failed = None, True  # emitted again with the real PC: that raises what it raises
    finally: self.pc = pc
    lines, ok = tuple(self.lines[start:]), not failed and self.pending is written  # not flushed (a new dict)
    del self.lines[start:]
    self.pending = pending
    return (lines, nxt, dict(written)) if ok else None

  def emit(self, op) -> str|None:
    return self.emitters[type(op)](op)

  # *** operands (the dispatch on their kind is reads.Reads) ***
  typed = staticmethod(typed)
  # a VGPR-shaped source ([waves, lanes]): an elementwise result then has the register's shape (see vwrite)
  def raw_dpp(self) -> str:
    self.shaped = True
    return "_dpp"
  def raw_vgpr(self, v:int, width:int) -> str:
    self.shaped = True
    return f"V[{v}][w]" if width <= 32 else f"r64(V[{v}][w], V[{v+1}][w])"
  def raw_quad(self, v:int, quad:int) -> str:
    self.shaped = True
    return f"V[{v}][w][:, quad_lanes({self.wave}, {quad})]"
  def raw_sgpr(self, o:int, width:int, vec:bool) -> str:
    return f"S[{o}][w]{COL[vec]}" if width <= 32 else f"r64(S[{o}][w], S[{o+1}][w]){COL[vec]}"
  def raw_scc(self, width:int, vec:bool) -> str: return f"S[253][w]{COL[vec]}" if width <= 32 else f"S[253][w].astype(u64){COL[vec]}"
  def raw_zero(self, mask:int, width:int, vec:bool) -> str:
    return f"({self.mask(mask)} == 0).astype({'u32' if width <= 32 else 'u64'}){COL[vec]}"
  def raw_const(self, bits:int, width:int) -> str: return f"u32(0x{bits:x})" if width <= 32 else f"u64(0x{bits:x})"
  def sdwa(self, code:str, sel:int, sext:bool) -> str: return f"sdwa_src({code}, {sel}, {sext})"
  def read_vcc(self) -> str: return f"unpack({self.mask(self.mask_in)})" if self.mask_in != NULL else "np.False_"
  def read_lane(self) -> str: return "LANE" if self.wave == WAVE32 else "LANE64"
  def read_scc(self) -> str: return "S[253][w]"
  def read_exec(self) -> str: return f"{self.mask(EXEC)}.copy()"  # copied: the instruction writes EXEC before D
  def read_pc(self) -> str: return f"u64(st.pgm + {self.pc})"

  def body(self, prog:program.Program, vec:bool):
    lines = np_body(prog, lambda e: self.read(e, vec))
    if watched(prog): lines = [GNAN.sub(r"\1 = gnan(\1, \2) if WATCH.seen else \1", ln) for ln in lines]
    for ln in lines: self.out(ln)

  # *** lane masks: an SGPR in wave32, a pair in wave64 ***
  def mask(self, d:int) -> str:
    """Code reading the lane mask in SGPR d (d and d + 1 in wave64)."""
    return f"S[{d}][w]" if self.wave == WAVE32 else f"r64(S[{d}][w], S[{d + 1}][w])"

  def set_mask(self, d:int, code:str, indent:str="") -> list[str]:
    """Lines writing the lane mask code (uint32, or uint64 in wave64) to SGPR d (and d + 1)."""
    if self.wave == WAVE32: return [f"{indent}S[{d}][w] = {code}"]
    return [f"{indent}_t = {code}", f"{indent}S[{d}][w] = lo32(_t)", f"{indent}S[{d + 1}][w] = hi32(_t)"]

  def pack(self, bools:str) -> str:
    return f"pack({bools}, n, {self.wave})"

  def refresh_exec(self, d:int, n:int):
    """After a write of SGPRs d .. d+n-1: EXEC as lanes again if they hold (part of) it."""
    if d <= EXEC + (self.wave == WAVE64) and d + n > EXEC: self.out(f"m, full = em({self.mask(EXEC)})")

  def mention(self, d:int) -> re.Pattern:
    """Any use of lane-mask SGPR d (and d + 1 in wave64) in a line."""
    return re.compile(rf"\bS\[{d}\]" if self.wave == WAVE32 else rf"\bS\[(?:{d}|{d + 1})\]")

  # *** vector writes ***
  def vwrite(self, d:int, t:str, expr:str, hi:bool=False, sdwa:tuple[int, int]|None=None):
    width = WIDTH[t]
    if sdwa is not None:  # GFX9 SDWA: the result's low bits into the selected byte or word
      self.out(f"vw(V, {d}, w, sdwa_dst({'fbits32' if t == 'f32' else 'bits32'}({expr}), V[{d}][w], {sdwa[0]}, {sdwa[1]}), m, full)")
    elif width == 32:  # vwv: a VALU row over a VGPR source, so the result has the register's shape (full_writes)
      self.out(f"{'vwv' if self.shaped else 'vw'}(V, {d}, w, {'fbits32' if t == 'f32' else 'bits32'}({expr}), m, full)")
    elif width == 16:
      self.out(f"vw16(V, {d}, w, {FBITS16.get(t, 'bits32')}({expr}), m, full, {hi})")
    else:
      self.out(f"_t = {'f64bits' if t == 'f64' else 'as_u64'}({expr})")
      self.out(f"vw(V, {d}, w, lo32(_t), m, full)")
      self.out(f"vw(V, {d+1}, w, hi32(_t), m, full)")

  def sgpr_mask_write(self, d:int|None, bool_expr:str):
    """A VALU writing one bit per lane into an SGPR (compares, carry-outs): inactive lanes write 0. The mask stays
    a local bool [n, 32] array, packed into the SGPR only when something other than a lane-mask read needs it
    (see lazy_masks), so a carry chain or compare-and-select never packs and unpacks."""
    if d is None or d == NULL: return
    # wave32: VCC_HI is an ordinary SGPR (LLVM allocates it, e.g. v_cmp_eq_f64_e64 vcc_hi, ...); EXEC_HI is not
    if d == EXEC + 1: raise Unsupported("a lane mask written to EXEC_HI (wave64 only)")
    if self.wave == WAVE64 and d & 1: raise Unsupported(f"a wave64 lane mask written to the odd SGPR {d}")
    if d == EXEC:
      for ln in self.set_mask(d, self.pack(f"({bool_expr}) & m")): self.out(ln)
      return self.refresh_exec(d, 1)
    self.out(f"_kb{d} = ({bool_expr}) if full else ({bool_expr}) & m")  # all lanes on: nothing to clear
    self.pending[d] = f"_kb{d}"

  def lazy_masks(self, lines:list[str]) -> list[str]:
    """One instruction's lines, given the masks pending before it: its lane-mask reads of a pending SGPR use the
    local bool array; any other mention of that SGPR first packs the mask into it."""
    flush = []
    for d, var in self.before.items():
      lines = [ln.replace(f"unpack({self.mask(d)})", var) for ln in lines]
      if self.mention(d).search("\n".join(lines)):  # one search: a mention never spans lines
        flush += self.set_mask(d, self.pack(var), "    ")
        if self.pending.get(d) == var and not any(re.search(rf"^\s*{var} = ", ln) for ln in lines): del self.pending[d]
    return flush + lines

  def flush_masks(self):
    for d, var in self.pending.items():
      for ln in self.set_mask(d, self.pack(var)): self.out(ln)
    self.pending = {}

  # *** VALU ***
  def valu(self, op:ops.Valu):
    """A vector op: its program over the lanes, then D and the lane mask it writes. With a DPP source, src0 is the
    lane-permuted vsrc0 and only lanes with a valid source write."""
    prog = program.valu(op, self.sem, self.ftz32, self.ftz16, self.ieee)
    self.shaped = False
    if op.dpp is not None: self.dpp_source(op.dpp)
    self.mask_in, self.dpp = op.mask_in, op.dpp
    try: self.body(prog, vec=True)
    finally: self.dpp = None
    if "d" in prog.out: self.vwrite(op.dst, prog.dst, "d", op.dst_hi, op.sdwa_dst)
    for k, name in enumerate(program.D_MORE, 1):
      if name in prog.out: self.vwrite(op.dst + k, prog.dst, name)
    if "vcc" in prog.out:
      self.sgpr_mask_write(op.mask_out, "vcc")
      self.sgpr_mask_write(op.mask_copy, "vcc")  # GFX9 v_cmpx: EXEC and SDST
    if op.dpp is not None: self.out(f"m, full = em({self.mask(EXEC)})")

  def dpp_source(self, dpp:ops.Dpp):
    if dpp.ctrl is not None:
      self.out(f"_dpp, _ok = dpp16(V[{dpp.vsrc}][w], m, {dpp.ctrl}, {dpp.bound_ctrl}, {dpp.fetch_inactive}, {dpp.row_mask}, {dpp.bank_mask})")
    else: self.out(f"_dpp, _ok = dpp8(V[{dpp.vsrc}][w], m, {list(dpp.sels)}, {dpp.fetch_inactive})")
    self.out("m = m & _ok")
    self.out("full = False")

  def dual(self, op:ops.Dual):
    """VOPD: both ops read their sources before either writes."""
    results = []
    for tag, half in (("x", op.x), ("y", op.y)):
      prog = program.valu(half, self.sem, self.ftz32, self.ftz16, self.ieee)
      self.mask_in, self.shaped = half.mask_in, False
      self.body(prog, vec=True)
      self.out(f"_{tag} = {'fbits32' if prog.dst == 'f32' else 'bits32'}(d)")
      results.append((half.dst, f"_{tag}", "vwv" if self.shaped else "vw"))
    for d, v, fn in results: self.out(f"{fn}(V, {d}, w, {v}, m, full)")

  def packed(self, op:ops.Packed):
    self.body(program.packed(op, self.sem, self.ieee), vec=True)
    self.vwrite(op.dst, "b32", "d")

  def wmma(self, op:ops.Wmma):
    if self.wave != WAVE32: raise Unsupported("WMMA in a wave64 wave (its wave64 register layout is not modelled)")
    regs = ["[" + ", ".join(f"V[{r}][w]" for r in block) + "]" for block in (op.a, op.b, op.c)]
    index = "None" if op.index is None else f"V[{op.index}][w]"
    self.out(f"_d = wmma({regs[0]}, {regs[1]}, {regs[2]}, {op.kind_in!r}, {op.kind_out!r}, {op.hi}, {op.signed}, {op.clamp}, "
             f"{op.layout!r}, {op.fp8!r}, {index}, {op.index_key})")
    for j in range(len(op.c)): self.out(f"vw(V, {op.dst + j}, w, _d[{j}], m, full)")

  def mfma(self, op:ops.Mfma):
    """CDNA v_mfma_*: the D registers of the form's layout from A, B and C (registers, or a constant in every element)."""
    regs = lambda block: "[" + ", ".join(f"V[{r}][w]" for r in block) + "]"
    c = regs(op.c) if op.c is not None else str(op.c_bits)
    self.out(f"_d = mfma_regs({op.name!r}, {regs(op.a)}, {regs(op.b)}, {c}, {op.fp8!r})")
    for j, d in enumerate(op.dst): self.out(f"vw(V, {d}, w, _d[{j}], m, full)")

  def readlane(self, op:ops.ReadLane):
    if op.lane is None:
      self.out("_l = np.where(m.any(axis=1), m.argmax(axis=1), 0)")
      return self.swrite(op.dst, "u32", f"V[{op.src}][w][np.arange(n), _l]")
    self.swrite(op.dst, "u32", f"V[{op.src}][w][np.arange(n), {self.raw(op.lane, 32, vec=False)} & {self.wave - 1}]")

  def writelane(self, op:ops.WriteLane):
    lane = self.raw(op.lane, 32, vec=False)
    bit = f"u32(1) << ({lane} & {self.wave - 1})" if self.wave == WAVE32 else f"u64(1) << ({lane} & {self.wave - 1}).astype(u64)"
    self.out(f"_l = unpack({bit})")
    self.out(f"vw(V, {op.dst}, w, {self.raw(op.value, 32, vec=True)}, _l, False)  # EXEC does not apply")

  def mode(self, op:ops.Mode):
    want = program.mode_field(op, self.ftz32, self.ftz16)
    if op.dst is not None: return self.swrite(op.dst, "u32", f"u32({want})")
    if op.value.reg == ops.LITERAL: return program.check_mode_write(op, self.ftz32, self.ftz16, op.value.lit)
    value = f"({self.raw(op.value, 32, vec=False)} & {(1 << op.size) - 1})"
    why = f"s_setreg_b32: {program.mode_change(op, 'another value')}"
    self.out(f"if np.any({value} != {want}): raise unsupported(st, {self.pc}, {why!r})")

  def permlane(self, op:ops.Permlane):
    if op.width == 64:
      if ops.permlane64_lanes(self.wave) is not None: self.out(f"vw(V, {op.dst}, w, permlane64(V[{op.src}][w], m)[0], m, full)")
      return
    if op.sel_vgpr is not None:
      self.out(f"_v, _ok = permlane16(V[{op.src}][w], m, None, None, {op.cross}, {op.fi}, {op.bound_ctrl}, V[{op.sel_vgpr}][w])")
    else:
      lo, hi = self.raw(op.sel_lo, 32, vec=False), self.raw(op.sel_hi, 32, vec=False)
      self.out(f"_v, _ok = permlane16(V[{op.src}][w], m, {lo}, {hi}, {op.cross}, {op.fi}, {op.bound_ctrl})")
    self.out(f"vw(V, {op.dst}, w, _v, m & _ok, False)")

  def swap(self, op:ops.Swap):
    if op.halves is not None:  # v_swap_b16: the chosen 16-bit halves change places, the other halves stay
      half = lambda r, hi: f"(V[{r}][w] >> 16)" if hi else f"(V[{r}][w] & 0xffff)"
      (ha, hb) = op.halves
      self.out(f"_t, _u = {half(op.a, ha)}, {half(op.b, hb)}")
      self.out(f"vw16(V, {op.a}, w, _u, m, full, {ha})")
      self.out(f"vw16(V, {op.b}, w, _t, m, full, {hb})")
      return
    self.out(f"_t = V[{op.a}][w]")
    self.out(f"vw(V, {op.a}, w, V[{op.b}][w], m, full)")
    self.out(f"vw(V, {op.b}, w, _t, m, full)")

  # *** SALU ***
  def swrite(self, d:int, t:str, expr:str):
    if d == NULL: return
    if d >= 128 and d != SCC: raise Unsupported(invalid_operand(Reg(d, 1)) or f"scalar destination {describe(Reg(d))}")
    if WIDTH[t] == 64:
      self.out(f"_t = {'f64bits' if t == 'f64' else 'as_u64'}({expr})")
      self.out(f"S[{d}][w] = lo32(_t)")
      self.out(f"S[{d+1}][w] = hi32(_t)")
    else: self.out(f"S[{d}][w] = {FBITS.get(t, 'bits32')}({expr})")  # a 16-bit float: zero-extended
    self.refresh_exec(d, WIDTH[t] // 32)

  def salu(self, op:ops.Salu):
    prog = program.salu(op, self.sem, self.wave, self.ftz32, self.ftz16, self.ieee)
    self.body(prog, vec=False)
    if "exec" in prog.out:
      for ln in self.set_mask(EXEC, "bits32(exec)" if self.wave == WAVE32 else "as_u64(exec)"): self.out(ln)
      self.refresh_exec(EXEC, 1)
    if "scc" in prog.out: self.out("S[253][w] = (scc).astype(u32)")
    if "d" in prog.out: self.swrite(op.dst, prog.dst, "d")

  def branch(self, op:ops.Branch) -> str:
    if op.target not in self.index: raise Unsupported("branch target outside the decoded code")
    t = self.index[op.target]
    if op.cond is None: return str(t)
    f = self.index[op.fallthrough]
    vcc, exec_ = self.mask(VCC), self.mask(EXEC)
    cond = {"scc0": "S[253][w] == 0", "scc1": "S[253][w] != 0", "vccz": f"{vcc} == 0", "vccnz": f"{vcc} != 0",
            "execz": f"{exec_} == 0", "execnz": f"{exec_} != 0"}[op.cond]
    self.out(f"_b = {cond}")
    return f"{t} if _b.all() else ({f} if not _b.any() else np.where(_b, {t}, {f}))"

  # *** M0-relative moves, computed jumps, traps ***
  def movrel(self, op:ops.MovRel):
    """Each wave's indexes (checked before any write), then a gather and a scatter per distinct index."""
    if not op.vgpr: self.flush_masks()  # the register file must hold every lane mask before it is indexed
    else: self.relative = True
    limit = "st.vgprs" if op.vgpr else op.limit
    index = lambda base, field: f"relative(st, {base}, S[{M0}][w], {field}, {op.ndw}, {limit}, {self.pc}, {op.name!r})"
    if op.src is None: self.out(f"_si = {index(op.src_reg, op.src_rel)}")
    if op.dst_rel is not None: self.out(f"_di = {index(op.dst, op.dst_rel)}")
    gather = "vgather(V, w, _si)" if op.vgpr else f"sgather(S, w, _si, {op.ndw})"
    self.out(f"_x = {self.raw(op.src, 32 * op.ndw, op.vgpr, 'b64' if op.ndw == 2 else 'b32') if op.src is not None else gather}")
    if op.swap: self.out("_y = vgather(V, w, _di)")
    if op.dst_rel is None: return self.vwrite(op.dst, "b32", "_x") if op.vgpr else self.swrite(op.dst, f"u{32 * op.ndw}", "_x")
    self.out("vscatter(V, w, _di, _x, m, full)" if op.vgpr else f"sscatter(S, w, _di, _x, {op.ndw})")
    if op.swap: self.out("vscatter(V, w, _si, _y, m, full)")

  def jump(self, op:ops.Jump) -> str:
    """s_setpc/s_swappc: each wave's target address to its block at run time; s_call_b64: a static target. The return
    address is written after the target is read (s_swappc_b64 may name one pair twice)."""
    if op.target is None:
      if op.offset not in self.index: raise Unsupported("call target outside the decoded code")
      nxt = str(self.index[op.offset])
    else:
      self.out(f"_j = {self.raw(op.target, 64, False, 'b64')}")
      nxt = f"jump(st, np.broadcast_to(_j, n), BLOCK_STARTS, {self.pc}, {op.name!r})"
    if op.link is not None: self.swrite(op.link, "u64", f"u64(st.pgm + {op.ret})")
    return nxt

  def trap(self, op:ops.Trap) -> str:
    self.out(f"raise trap_error(st.pgm, {self.pc}, {op.trap_id})")
    return "-1"

  # *** memory ***
  def smem(self, op:ops.Smem):
    base = f"r64(S[{op.base}][w], S[{op.base + 1}][w])"
    soff = "" if op.soffset is None else f" + {self.raw(op.soffset, 32, vec=False)}"
    self.out(f"_r = sload(st, {base}{plus64(op.offset)}{soff}, {op.ndw}, {self.pc}, {op.name!r}, {op.kind})")
    for j in range(op.ndw):
      if op.dst + j != NULL: self.out(f"S[{op.dst + j}][w] = _r[{j}]")
    self.refresh_exec(op.dst, op.ndw)

  def load_write(self, d:int, ndw:int, d16:str|None):
    if d16: return self.out(f"vw16(V, {d}, w, _r[0], m, full, {d16 == 'hi'})")
    for j in range(ndw): self.out(f"vwv(V, {d + j}, w, _r[{j}], m, full)")  # a load's registers: [waves, lanes] each

  def store_data(self, data:int, kind:str, ndw:int, d16:str|None) -> str:
    if kind == "u32": return "[" + ", ".join(f"V[{data + j}][w]" for j in range(ndw)) + "]"
    shift = " >> 16" if d16 == "hi" else ""
    return f"[(V[{data}][w]{shift}).astype({kind})]"

  def address(self, a:ops.Addr, seg:str) -> str:
    if seg == "SCRATCH":  # a 32-bit offset into the lane's private segment
      parts = [f"V[{a.vaddr}][w]"] if a.vaddr is not None else []
      if a.soff is not None: parts.append(f"{self.raw(a.soff, 32, vec=False)}[:, None]")
      return " + ".join(parts + [f"u32({a.offset & 0xffffffff})"])
    if a.wide: return f"r64(V[{a.vaddr}][w], V[{a.vaddr + 1}][w]){plus64(a.offset)}"
    if a.addtid: return f"r64(S[{a.sbase}][w], S[{a.sbase + 1}][w])[:, None] + ({self.read_lane()} * u32(4)).astype(u64){plus64(a.offset)}"
    return f"r64(S[{a.sbase}][w], S[{a.sbase + 1}][w])[:, None] + V[{a.vaddr}][w].astype(u64){plus64(a.offset)}"

  def buffer_address(self, a:ops.BufAddr, nbytes:int, ndw:int, name:str):
    """_ba (each lane's first byte address) and _bok (per element, the lanes in range) of a MUBUF access (buffer.py)."""
    words = ", ".join(f"S[{a.srsrc + k}][w]" for k in range(4))
    idx = f"V[{a.vaddr}][w]" if a.idxen else "None"
    off = f"V[{a.vaddr + a.idxen}][w]" if a.offen else "None"
    self.out(f"_ba, _bok = buffer_lanes(st, [{words}], {idx}, {off}, {self.raw(a.soffset, 32, vec=False)}, {a.offset}, "
             f"{a.idxen}, {a.offen}, {nbytes}, {ndw}, m, {self.pc}, {name!r})")

  def buffer(self, op:ops.Vmem):
    """A MUBUF load or store: each element only in the lanes where it is in range (a load out of range gives 0)."""
    size = int(op.kind[1:]) // 8  # u8 .. u32: the element's bytes
    self.buffer_address(op.addr, size, op.ndw, op.name)
    if op.load:
      for j in range(op.ndw):
        self.out(f"_r{j} = gload(st, w, _ba + u64({4 * j}), m & _bok[{j}], False, {op.kind}, 1, {self.pc}, {op.name!r})")
      self.out("_r = [" + ", ".join(f"_r{j}[0]" for j in range(op.ndw)) + "]")
      return self.load_write(op.reg, op.ndw, op.d16)
    self.out(f"bstore(st, _ba, _bok, m, {self.store_data(op.reg, op.kind, op.ndw, op.d16)}, {self.pc}, {op.name!r})")

  def vmem(self, op:ops.Vmem):
    if op.seg == "BUFFER": return self.buffer(op)
    addr, scratch = self.address(op.addr, op.seg), op.seg == "SCRATCH"
    if op.load:
      self.out(f"_r = {'scload' if scratch else 'gload'}(st, w, {addr}, m, full, {op.kind}, {op.ndw}, {self.pc}, {op.name!r})")
      return self.load_write(op.reg, op.ndw, op.d16)
    data = self.store_data(op.reg, op.kind, op.ndw, op.d16)
    self.out(f"{'scstore' if scratch else 'gstore'}(st, w, {addr}, m, full, {data}, {self.pc}, {op.name!r})")

  def ds_address(self, addr:int|None, offset:int) -> str:
    """A DS load's or store's LDS address: its VGPR plus offset, or for the ADDTID forms M0[15:0] plus the lane's index * 4."""
    if addr is None: return f"(S[{M0}][w][:, None] & u32(0xffff)) + {self.read_lane()} * u32(4) + u32({offset})"
    return f"V[{addr}][w] + u32({offset})"

  def ds_load(self, op:ops.DsLoad):
    self.out(f"_r = ldsload(st, w, {self.ds_address(op.addr, op.offset)}, m, full, {op.kind}, {op.ndw}, {self.pc}, {op.name!r})")
    self.load_write(op.dst, op.ndw, op.d16)

  def ds_store(self, op:ops.DsStore):
    data = self.store_data(op.data, op.kind, op.ndw, op.d16)
    self.out(f"ldsstore(st, w, {self.ds_address(op.addr, op.offset)}, m, full, {data}, {self.pc}, {op.name!r})")

  def ds_pair(self, op:ops.DsPair):
    a0, a1 = (f"V[{op.addr}][w] + u32({o})" for o in op.offsets)
    if op.load:
      self.out(f"_r0 = ldsload(st, w, {a0}, m, full, u32, {op.ndw}, {self.pc}, {op.name!r})")
      self.out(f"_r1 = ldsload(st, w, {a1}, m, full, u32, {op.ndw}, {self.pc}, {op.name!r})")
      self.out("_r = _r0 + _r1")
      return self.load_write(op.regs[0], 2 * op.ndw, None)
    for a, d in zip((a0, a1), op.regs):
      self.out(f"ldsstore(st, w, {a}, m, full, {self.store_data(d, 'u32', op.ndw, None)}, {self.pc}, {op.name!r})")

  def ds_permute(self, op:ops.DsPermute):
    fn = "bpermute" if op.back else "permute"
    self.out(f"_r = {fn}((V[{op.addr}][w] + u32({op.offset})) >> 2, V[{op.data}][w], m)")
    self.out(f"vw(V, {op.dst}, w, _r, m, full)")

  def ds_swizzle(self, op:ops.DsSwizzle):
    self.out(f"_r = swizzle(V[{op.data}][w], m, {op.offset})")
    self.out(f"vw(V, {op.dst}, w, _r, m, full)")

  def atomic_fn(self, row:str) -> str:
    """The module-level function computing an ATOMIC row (np_atomic), emitted once per kernel."""
    fn = f"_at_{row}"
    if fn not in self.helpers: self.helpers[fn] = np_atomic(program.atomic(row, self.sem), fn)
    return fn

  def word(self, r:int, width:int) -> str:
    return f"V[{r}][w]" if width == 32 else f"r64(V[{r}][w], V[{r + 1}][w])"

  def returned(self, dst:int|None, ndw:int):
    """The old words an atomic returns (_r: ndw dwords), written to VGPRs dst.. of the active lanes."""
    if dst is not None:
      for j in range(ndw): self.out(f"vw(V, {dst + j}, w, _r[{j}], m, full)")

  def ds_atomic(self, op:ops.DsAtomic):
    base = f"V[{op.addr}][w] + u32({op.offset})"
    if op.mask != 0xffffffff: base = f"(({base}) & u32({op.mask}))"
    addrs = ", ".join(f"{base} + u32({s})" if s else base for s in op.slots)
    data = ", ".join("[" + ", ".join(self.word(r, op.width) for r in regs) + "]" for regs in op.data)
    self.out(f"_r = ldsatomic(st, w, [{addrs}], m, full, [{data}], {self.atomic_fn(op.row)}, {op.width // 8}, "
             f"{op.row in self.sem.ASSOCIATIVE}, {self.pc}, {op.name!r})")
    self.returned(op.dst, len(op.slots) * op.width // 32)

  def vatomic(self, op:ops.VAtomic):
    data = ", ".join(self.word(r, op.width) for r in op.data)
    if op.seg == "BUFFER":  # out of range: no update, 0 returned
      self.buffer_address(op.addr, op.width // 8, 1, op.name)
      self.out(f"_r = gatomic(st, w, _ba, m & _bok[0], False, [{data}], {self.atomic_fn(op.row)}, "
               f"{op.width // 8}, {op.row in self.sem.ASSOCIATIVE}, {self.pc}, {op.name!r})")
      return self.returned(op.dst, op.width // 32)
    self.out(f"_r = gatomic(st, w, {self.address(op.addr, op.seg)}, m, full, [{data}], {self.atomic_fn(op.row)}, "
             f"{op.width // 8}, {op.row in self.sem.ASSOCIATIVE}, {self.pc}, {op.name!r})")
    self.returned(op.dst, op.width // 32)
