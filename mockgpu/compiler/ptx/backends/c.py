"""The C backend: a parsed PTX kernel into one C function that runs one thread, compiled by the host C compiler, each
instruction rendered from its row of the semantics table.

Registers are C locals of their declared type (float16 and bfloat16 as their bits); each basic block (blocks.py) is a
label and each branch a goto. A barrier starts a block: with barriers, the thread saves its registers there and returns
the block to resume at, and the prelude's scheduler (prelude.c) runs every thread of the CTA up to it before any goes
on. Every primitive computes what the numpy backend's does (the executor's numerics.py and bitops.py), so both give the
same bits; tests/compiler/ptx/test_ptx_native.py compares them. Module-scope .global and .const variables are two more mappings of
the address space at their window addresses (layout.py), so global loads reach them as the numpy path's do.

Rounding: float32/64 round-to-nearest is C's own arithmetic; the directed modes, float16 and bfloat16 evaluate in
double with the sign of the exact error and round explicitly (prelude.c exact_op, round_to: numerics.py's algorithms
in the same double operations, no fesetround), so the bits, NaN payloads included, are the numpy path's.

Atomics read, combine and write one thread at a time, in thread order: for one instruction's colliding lanes the
numpy path's lane order. Two atomics of one thread on an address apply before the next thread's (the numpy path
interleaves per instruction); both are orders hardware may take. %clock counts thread-instructions so far.

Warp mode (Kernel.warp_source, prelude.c run_cta): a kernel whose threads combine (shfl, vote, activemask, redux,
mma.sync, bar.red; also barrier forms and a carry across barriers that the thread-at-a-time mode cannot keep) keeps
each thread's registers in a struct, returns to the scheduler at every block boundary and pauses at each instruction
that combines threads; the scheduler runs the CTA's lowest block next (the numpy path's min-PC scheduling) and
computes each such instruction once over the threads that arrived (Kernel.collective).

What the translation does not cover raises NoNative at translation time and the kernel stays on the numpy path: the
rows the table marks (semantics.Row.no_c: the rarer opcodes), function variables outside
.shared and .local, generic-space and ordered (.acquire/.release) memory, and the primitives this backend declines or
leaves to semantics.Backend (a float64 fma in a directed mode, float min/max atomics, the rarer float16 forms). The
instruction budget counts thread-instructions (the board's warp size per warp-instruction of MOCKGPU_BUDGET).
"""
from __future__ import annotations
import os, re, struct
import numpy as np
from mockgpu.errors import UnsupportedInstruction
from mockgpu.compiler import native
from mockgpu.compiler.ptx import syntax as P, semantics, fragments
from mockgpu.compiler.ptx.types import CTYPE, INT_RANGE, FMTS, np_dtype, bits, is_signed, wide
from mockgpu.compiler import floats
from mockgpu.compiler.ptx.blocks import split_blocks, BARRIERS
from mockgpu.compiler.ptx.layout import Layout, WINDOWS

PRELUDE = native.prelude(os.path.join(os.path.dirname(os.path.abspath(__file__)), "prelude.c"))

class NoNative(Exception):
  """The kernel uses something the C translation does not cover (the message says what)."""

class NeedsWarps(NoNative):
  """The kernel has an instruction that combines threads (a warp's shfl/vote/redux/activemask/mma.sync, bar.red over
  the CTA) or a barrier form the thread-at-a-time translation declines: translate it again in warp mode."""

SPECIAL = {"tid.x": 0, "tid.y": 1, "tid.z": 2, "ntid.x": 3, "ntid.y": 4, "ntid.z": 5, "ctaid.x": 6, "ctaid.y": 7, "ctaid.z": 8,
           "nctaid.x": 9, "nctaid.y": 10, "nctaid.z": 11, "laneid": 12, "warpid": 13, "nwarpid": 14, "dynamic_smem_size": 15,
           "total_smem_size": 16, "smid": 17, "nsmid": 18}
# %lanemask_*: the lanes below, at or above this one (runtime.Env.lanemask), from %laneid
LANEMASK = {"eq": "(1u << sp[12])", "lt": "((1u << sp[12]) - 1u)", "le": "(uint32_t)((2ull << sp[12]) - 1u)",
            "gt": "(uint32_t)~((2ull << sp[12]) - 1u)", "ge": "(uint32_t)~((1u << sp[12]) - 1u)"}
INTS = ("b8", "u8", "s8", "b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64")
F32_64 = ("f32", "f64")
_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_ROUND = {"rni": "rint", "rzi": "trunc", "rmi": "floor", "rpi": "ceil"}
_APPROX = {"ex2": "(float)exp2((double){})", "lg2": "log2_32({})", "sin": "(float)sin((double){})", "cos": "(float)cos((double){})",
           "tanh": "tanh_32({})", "rcp": "(float)(1.0 / (double){})", "sqrt": "(float)sqrt((double){})",
           "rsqrt": "(float)(1.0 / sqrt((double){}))"}
# C's own operators round once to nearest (built without contraction or fast-math); float32 division and square root
# go through double, which is innocuous for them (53 >= 2*24+2), as numpy's float64 evaluation is
_F64 = {"add": "({} + {})", "sub": "({} - {})", "mul": "({} * {})", "div": "({} / {})", "sqrt": "sqrt({})", "rcp": "(1.0 / {})",
        "fma": "fma({}, {}, {})"}   # C's fma rounds once, as numerics.fma64 does
_F32 = {"add": "({} + {})", "sub": "({} - {})", "mul": "({} * {})", "fma": "fma32({}, {}, {})", "div": "(float)((double){} / (double){})",
        "sqrt": "(float)sqrt((double){})", "rcp": "(float)(1.0 / (double){})"}

_MODE = {"rn": "RN", "rz": "RZ", "rm": "RM", "rp": "RP"}   # prelude.c's rounding modes
_OP = {"add": "OP_ADD", "sub": "OP_SUB", "mul": "OP_MUL", "fma": "OP_FMA", "div": "OP_DIV", "sqrt": "OP_SQRT"}
# one double rounding is innocuous for these in round-to-nearest (53 >= 2p+2), as the numpy path's plain casts are
_D = {"add": "({} + {})", "sub": "({} - {})", "mul": "({} * {})", "div": "({} / {})", "sqrt": "sqrt({})"}
_APPROX64 = {"ex2": "exp2({})", "tanh": "tanh_64({})", "rcp": "(1.0 / {})", "sqrt": "sqrt({})", "rsqrt": "(1.0 / sqrt({}))"}

def to64(e:str, t:str) -> str:
  """A float value of type t (float16 and bfloat16 as bits) as a double, exactly (numerics.to64)."""
  return {"f32": f"((double){e})", "f64": e, "f16": f"f16_bits_to_f64({e})", "bf16": f"bf16_bits_to_f64({e})"}[t]
def from64(e:str, t:str) -> str:
  """A double on t's grid (or inf/NaN) in t's storage (numerics.from64; float16: numpy's cast)."""
  return {"f32": f"((float){e})", "f64": e, "f16": f"f64_to_f16_bits_rne({e})", "bf16": f"f64_to_bf16_bits_exact({e})"}[t]
def round_to(e:str, t:str, mode:str, es:str="0.0") -> str:
  """numerics.round_to: the double e (exact value e + tiny of sign es) rounded to t's grid in mode."""
  f = FMTS[t]
  return f"round_to({e}, {es}, {f.p}, {f.emin}, {f.max!r}, {_MODE[mode]})"

def kind(t:str) -> str: return np_dtype(t).kind   # the numpy path's kind (float16 is "f", bfloat16 bits are "u")
def utype(n:int) -> str: return f"uint{max(n, 32) if n < 32 else n}_t"   # integer arithmetic at least 32 bits wide, unsigned
def wrap(t:str, e:str) -> str:
  """An integer expression computed in unsigned arithmetic of at least 32 bits, back to t."""
  return f"(({CTYPE[t]})({e}))"
def U(t:str, e:str) -> str: return f"(({utype(bits(t))})({e}))"
def _bits64(t:str, e:str) -> str: return f"(uint64_t)(uint{bits(t)}_t)({e})"

def bitcast(e:str, src:str, dst:str) -> str:
  """e (a C value of PTX type src) as dst of the same size."""
  if CTYPE[src] == CTYPE[dst]: return e
  if dst == "f32": return f"F32((uint32_t)({e}))"
  if dst == "f64": return f"F64((uint64_t)({e}))"
  if src == "f32": return f"(({CTYPE[dst]})U32F({e}))"
  if src == "f64": return f"(({CTYPE[dst]})U64F({e}))"
  return f"(({CTYPE[dst]})({e}))"

def resize(e:str, src:str, dst:str, signed:bool) -> str:
  """runtime.resize: a relaxed-type register access truncates, or zero/sign-extends (by the instruction's type)."""
  if "b" in (kind(src), kind(dst)) or kind(src) == "f": raise NoNative(f"a .{src} value used as .{dst}")
  n, m = bits(src), bits(dst)
  if m < n: return bitcast(f"(uint{m}_t)({e})", f"u{m}", dst)
  ext = f"(int{m}_t)(int{n}_t)({e})" if signed else f"(uint{m}_t)(uint{n}_t)({e})"
  return bitcast(ext, f"s{m}" if signed else f"u{m}", dst)

def _float_bits(v:float, n:int, exact:bool) -> int:
  """The bits of float v as float32/64 (exact: v is already of that format), rounded as numpy's cast rounds (an integer
  past float32's range is inf: struct raises)."""
  if exact: return struct.unpack("<I" if n == 32 else "<Q", struct.pack("<f" if n == 32 else "<d", v))[0]
  with np.errstate(over="ignore"): return int(np.array([float(v)]).astype(f"f{n // 8}").view(f"u{n // 8}")[0])

class Kernel(semantics.Backend):
  """The C translation of one entry of a PTX module (raises NoNative when it is outside what C covers)."""
  def __init__(self, fn:P.Function, layout:Layout, warps:bool=False):
    self.fn, self.layout, self.warps = fn, layout, warps
    self.collectives:list[str] = []   # warp mode: the C function of each instruction that combines threads
    self.cta_wide:list[bool] = []      # and whether it combines the CTA's threads (bar.red) rather than a warp's
    self.blocks = split_blocks(fn.body)
    self.labels = {lb: b.index for b in self.blocks for lb in b.labels}
    self.exit_block = len(self.blocks)
    self.barriers = [b.index for b in self.blocks if b.instrs and b.instrs[0].op in BARRIERS]
    self.messages:list[str] = []   # "PTX line N: text" of each instruction that can stop the launch, by its id
    self.lines:list[str] = []
    self.ntmp = self.nhints = 0
    self.pos = 0   # the instruction's index in its block (%clock)

  # *** output ***
  def emit(self, s:str): self.lines.append("  " + s)
  def tmp(self) -> str:
    self.ntmp += 1
    return f"t{self.ntmp}"
  def hint(self) -> int:
    """A mapping hint of its own for one more global access (prelude.c findh)."""
    self.nhints += 1
    return self.nhints - 1
  def where(self) -> int:
    self.messages.append(self.ins.where())
    return len(self.messages) - 1
  def unsupported(self, what:str|None=None): raise NoNative(what or f"instruction {self.ins.op}")
  def decline(self, what:str): raise NoNative(what)

  # *** operands ***
  def src(self, a, t:str) -> str:
    if isinstance(a, P.Reg):
      if a.type == "pred" or t == "pred":
        if a.type != t: raise NoNative(f"a .{a.type} register read as .{t}")
        return a.name
      if np_dtype(a.type) == np_dtype(t): return a.name
      if bits(a.type) == bits(t) and "b" not in (kind(a.type), kind(t)): return bitcast(a.name, a.type, t)
      return resize(a.name, a.type, t, is_signed(t))
    if isinstance(a, P.Imm): return self.imm(a, t)
    if isinstance(a, P.Not) and t == "pred": return f"(!{a.reg.name})"
    if isinstance(a, P.Special):
      e, st = self.special(a.name)
      return bitcast(e, st, t) if bits(t) == bits(st) else resize(e, st, t, False)
    if isinstance(a, P.Sym):
      space, off = self.symbol(a.name)
      if space == "param": raise NoNative("the address of a kernel parameter")
      return self.const(t, off + a.offset)
    raise NoNative(f"operand {a!r}")

  def special(self, name:str) -> tuple[str, str]:
    """A special register's value and type. %clock counts the launch's thread-instructions so far (the numpy path
    counts warp-instructions): both advance within a thread, as a cycle counter does; neither is hardware's value."""
    if name in SPECIAL: return f"sp[{SPECIAL[name]}]", "u32"
    if name.startswith("lanemask_") and name[9:] in LANEMASK: return LANEMASK[name[9:]], "u32"
    if name in ("clock", "clock64", "globaltimer"): return f"(uint64_t)(c->used + used + {self.pos})", "u32" if name == "clock" else "u64"
    if name == "gridid": return "(uint64_t)0", "u64"
    raise NoNative(f"special register %{name}")

  def imm(self, a:P.Imm, t:str) -> str:
    if t == "pred": return "1" if a.value else "0"
    if t in F32_64 or kind(t) == "f": return self._float_const(t, a.value, a.is_float and a.bits == bits(t))
    if a.is_float:   # a float literal in an integer/bit-typed operand stands for its bit pattern (0f: 32 bits, 0d: 64 bits)
      return self.const(t, _float_bits(a.value, 64 if a.bits == 64 else 32, True))
    return self.const(t, a.value)

  def _float_const(self, t:str, v, exact:bool=False) -> str:
    if t == "f16":   # as the numpy path's np.float16(value): the literal rounded once to half, held as its bits
      return f"((uint16_t)0x{int(np.array([float(v)], np.float64).astype(np.float16).view(np.uint16)[0]):x}u)"
    if t not in F32_64: raise NoNative(f"a .{t} immediate")
    n = bits(t)
    raw = _float_bits(v, n, exact)
    return f"F{n}(0x{raw:x}ull)" if n == 64 else f"F32(0x{raw:x}u)"

  def dst(self, a, t:str, e:str):
    """Assign e (a value of PTX type t) to register a, converted as the numpy path's conv_to_reg does."""
    if a is P.SINK: return
    if isinstance(a, P.PredPair): a = a.p
    if not isinstance(a, P.Reg): raise NoNative(f"destination {a!r}")
    if a.type == "pred" or t == "pred":
      if a.type != t: raise NoNative(f"a .{t} value written to a .{a.type} register")
      return self.emit(f"{a.name} = {e};")
    if np_dtype(a.type) == np_dtype(t): v = e
    elif bits(a.type) == bits(t) and "b" not in (kind(a.type), kind(t)): v = bitcast(e, t, a.type)
    else: v = resize(e, t, a.type, is_signed(t))
    self.emit(f"{a.name} = {v};")
  def dst_lanes(self, a, t:str, e:str): self.dst(a, t, e)

  # *** statements ***
  def let(self, t:str, e:str) -> str:
    v = self.tmp()
    self.emit(f"{CTYPE[t]} {v} = {e};")
    return v
  def const(self, t:str, v) -> str:
    if t == "pred": return "1" if v else "0"
    if kind(t) == "f": return self._float_const(t, v)
    return f"(({CTYPE[t]})0x{int(v) % (1 << bits(t)):x}ull)"
  def nop(self): pass
  def join_fields(self, u:str, parts:list[str]) -> str:
    w, n = bits(u) // len(parts), bits(u)
    return f"(({CTYPE[u]})({' | '.join(f'((uint{n}_t){p} << {i * w})' for i, p in enumerate(parts))}))"
  def field(self, u:str, v:str, i:int, w:int) -> str: return f"((uint{w}_t)({v} >> {i * w}))"
  def window(self, space:str, t:str) -> str: return self.const(t, WINDOWS[space])

  # *** control flow ***
  def branch(self, block:int): self.emit(f"NEXT({block});" if self.warps else f"goto B{block};")
  def trap(self): self.emit(f"trap_stop(c, {self.where()});")
  def barrier(self, ident, with_count:bool, arrive:bool):
    # the barrier is the block boundary before it (Kernel.source); in warp mode the scheduler runs the CTA's lowest
    # block first, as the numpy path does, which orders every barrier form as it does there
    if self.warps: return
    if arrive or with_count: raise NeedsWarps("barrier form")
    if ident is not None and not (isinstance(ident, P.Imm) and ident.value == 0): raise NeedsWarps("named barriers")

  # *** memory ***
  def _memory(self, space:str, t:str, ordered:bool) -> tuple[int, str, int]:
    """An access's element size, a temporary and its stop id (declines what C does not cover)."""
    if ordered: self.decline(f"{self.ins.op} ordered against other threads (.acquire/.release/.mmio)")
    if t in ("pred", "b128"): self.decline(f"{self.ins.op}.{t}")
    return bits(t) // 8, self.tmp(), self.where()

  def load(self, space:str, t:str, n:int, addr:str, ordered:bool) -> list[str]:
    size, v, pc = self._memory(space, t, ordered)
    self.emit(f"{CTYPE[t]} {v}[{n}];")
    if space in ("shared", "local"): self.emit(f"memcpy({v}, {space[0].upper()}PTR({addr}, {size * n}, 0, {pc}), {size * n});")
    elif space == "generic": self.emit(f"genget(c, lm, {v}, {addr}, {size}, {n}, {pc}, hints + {self.hint()});")
    elif space == "const": self.emit(f"gget(c, {v}, CONST_WINDOW | ({addr} & LOW_BITS), {size}, {n}, {pc}, hints + {self.hint()});")
    else: self.emit(f"gget(c, {v}, {addr}, {size}, {n}, {pc}, hints + {self.hint()});")
    return [f"{v}[{i}]" for i in range(n)]

  def load_param(self, t:str, n:int, offset:int) -> list[str]:
    size, v, pc = self._memory("param", t, False)
    self.emit(f"{CTYPE[t]} {v}[{n}];")
    for i in range(n): self.emit(f"pload(c, {v} + {i}, {offset + i * size}, {size}, {pc});")
    return [f"{v}[{i}]" for i in range(n)]

  def store(self, space:str, t:str, addr:str, vals:list[str], ordered:bool):
    size, v, pc = self._memory(space, t, ordered)
    n = len(vals)
    self.emit(f"{CTYPE[t]} {v}[{n}] = {{{', '.join(vals)}}}; uint64_t a_ = {addr};")
    if space in ("shared", "local"): self.emit(f"memcpy({space[0].upper()}PTR(a_, {size * n}, 1, {pc}), {v}, {size * n});")
    elif space == "generic": self.emit(f"genput(c, lm, a_, {v}, {size}, {n}, {pc}, hints + {self.hint()});")
    else: self.emit(f"gput(c, a_, {v}, {size}, {n}, {pc}, hints + {self.hint()});")

  def atomic(self, space:str, op:str, t:str, addr:str, vals:list[str]) -> str:
    """The old value read, op applied and written back, thread by thread (collective.atomic's lane order per address
    and instruction; see the module docstring for a thread's several atomics)."""
    if space not in ("global", "shared"): self.decline(f"atom.{space}")
    if op in ("min", "max") and kind(t) == "f": self.decline(f"atom.{op}.{t}")   # numpy's scan order decides -0/+0 and NaN
    size, v, pc = self._memory(space, t, False)
    T, a, p = CTYPE[t], self.tmp(), self.tmp()
    cell = f"SPTR({a}, {size}, 1, {pc})" if space == "shared" else f"gptr(c, {a}, {size}, 1, {pc})"
    self.emit(f"uint64_t {a} = {addr}; if ({a} % {size}) fault(c, {a}, {size}, 1, {pc}, MISALIGNED_ATOMIC);")
    self.emit(f"uint8_t *{p} = {cell}; {T} {v}; memcpy(&{v}, {p}, {size});")
    b = vals[0]
    new = {"add": {"f32": f"add32({v}, {b})", "f64": f"add64({v}, {b})"}.get(t, wrap(t, f"{U(t, v)} + {U(t, b)}")),
           "inc": f"({v} >= {b} ? ({T})0 : ({T})({v} + 1))", "dec": f"(({v} == 0 || {v} > {b}) ? {b} : ({T})({v} - 1))",
           "cas": f"({v} == {b} ? {vals[-1]} : {v})", "exch": b, "min": f"({v} < {b} ? {v} : {b})", "max": f"({v} > {b} ? {v} : {b})",
           "and": f"(({T})({v} & {b}))", "or": f"(({T})({v} | {b}))", "xor": f"(({T})({v} ^ {b}))"}[op]
    self.emit(f"{{ {T} n_ = {new}; memcpy({p}, &n_, {size}); }}")
    return v

  # *** combining threads (warp mode) ***
  def collective(self, call:str, srcs:list[str], nres:int=1, cta:bool=False, decls:str="") -> list[str]:
    """The thread pauses at this instruction (PAUSE: its registers live in the CTA's save area). Once the threads of
    the block have run up to it, the scheduler (prelude.c run_cta) gathers srcs in the context of every thread of each
    warp (cta: of the CTA) with an arrived thread, those that did not arrive too (shfl and mma.sync read them, as the
    numpy path's do), makes `call` over them, and resumes the arrived threads, which read their results (XR)."""
    if not self.warps: raise NeedsWarps(f"{self.ins.op} combines threads")
    for e in srcs:   # gathered outside the thread's own code: a temporary or %clock is not there
      if re.search(r"\bt\d+\b|\bused\b", e): self.decline(f"{self.ins.op} operand {e}")
    k = len(self.collectives)
    gather = " ".join(f"v[{i}] = (uint64_t)({e});" for i, e in enumerate(srcs))
    regs = "regs(c, sp, t0 + l)" if "sp[" in gather else "(Regs *)(c->save + (t0 + l) * NSAVE)"   # special registers: the lane's
    self.collectives.append(f"{decls}static void coll{k}(Ctx *c, int64_t t0, int64_t n, uint32_t *sp) {{ /* {self.ins.where()} */\n"
                            f"  for (int64_t l = 0; l < n; l++) {{ uint64_t *v = c->xsrc + (t0 + l) * NSRC; Regs *R = {regs}; {gather} }}\n"
                            f"  (void)sp; {call};\n}}\n")
    self.cta_wide.append(cta)
    self.emit(f"PAUSE({k});")
    return [f"XR[{i}]" for i in range(nres)]

  def shfl(self, mode:str, a:str, b:str, c:str) -> tuple[str, str]:
    v, p = self.collective(f"warp_shfl(c, t0, n, SHFL_{mode.upper()})", [a, b, c], nres=2)
    return f"((uint32_t){v})", f"((uint8_t){p})"
  def vote(self, mode:str, p:str) -> str:
    r = self.collective(f"warp_vote(c, t0, n, VOTE_{mode.upper()})", [p])[0]
    return f"((uint32_t){r})" if mode == "ballot" else f"((uint8_t){r})"
  def redux(self, op:str, t:str, a:str) -> str:
    if t not in ("b32", "u32", "s32"): self.decline(f"redux.{op}.{t}")
    return f"(({CTYPE[t]}){self.collective(f'warp_redux(c, t0, n, RED_{op.upper()}, {int(is_signed(t))})', [a])[0]})"
  def cta_reduce(self, p:str, op:str) -> str:
    r = self.collective(f"cta_reduce(c, t0, n, RED_{op.upper()})", [p], cta=True)[0]
    return f"((uint32_t){r})" if op == "popc" else f"((uint8_t){r})"
  def mma(self, shape:str, types:list[str], a:list[str], b:list[str], c:list[str], n:int) -> list[str]:
    """mma.sync over the warp's fragments (prelude.c warp_mma), placed by fragments.layout as the numpy path's."""
    td, ta, tb, tc = types
    if ta != tb or td not in ("f32", "f16") or tc not in ("f32", "f16") or ta not in fragments.PER_REG: self.decline(f"mma.{'.'.join(types)}")
    try: lay = fragments.layout(shape, ta)
    except fragments.Unmodelled as e: self.decline(str(e))   # the numpy path raises it when the instruction runs
    nd = 4 if td == "f32" else 2
    if (len(a) * fragments.PER_REG[ta], len(b) * fragments.PER_REG[tb], len(c), n) != (lay["k"] // 2, lay["k"] // 4, 4 if tc == "f32" else 2, nd):
      self.decline("mma fragment registers")
    k = len(self.collectives)
    tables = "".join(f"static const int16_t l{x}{k}[] = {{{', '.join(map(str, lay[x]))}}};\n" for x in "abc")
    self.messages.append(f"{self.ins.where()}: mma.sync in a partial warp")
    call = (f"warp_mma(c, t0, {lay['k']}, T_{ta.upper()}, T_{tc.upper()}, T_{td.upper()}, {len(a)}, {len(b)}, la{k}, lb{k}, lc{k}, "
            f"{len(self.messages) - 1})")
    return [f"((uint32_t){r})" for r in self.collective(call, a + b + c, nres=n, decls=tables)]

  # *** integers and bits ***
  def _int(self, t:str):
    if t not in INTS: self.decline(f"{self.ins.op}.{t}")
  def binop(self, op:str, t:str, x:str, y:str) -> str:
    if t != "pred" or op in "+-*": self._int(t)
    if op in "+-*": return wrap(t, f"{U(t, x)} {op} {U(t, y)}")
    return f"(({CTYPE[t]})({x} {op} {y}))"
  def bitnot(self, t:str, x:str) -> str: return f"(!{x})" if t == "pred" else f"(({CTYPE[t]})~{x})"
  def bitcast(self, x:str, t:str, to:str) -> str: return bitcast(x, t, to)
  def negate(self, t:str, x:str) -> str:
    if t == "f16": return f"((uint16_t)({x} ^ 0x8000u))"
    if t in F32_64: return f"(-{x})"
    self._int(t)
    return wrap(t, f"0u - {U(t, x)}")
  def absolute(self, t:str, x:str) -> str:
    if t == "f16": return f"((uint16_t)({x} & 0x7fffu))"
    if t in F32_64: return f"fabs{'f' if t == 'f32' else ''}({x})"
    return f"(({x}) < 0 ? {self.negate(t, x)} : ({x}))"
  def mul_wide(self, t:str, x:str, y:str) -> str:
    w = CTYPE[wide(t)]
    return f"(({w}){x} * ({w}){y})"
  def mul_hi(self, t:str, x:str, y:str) -> str:
    self._int(t)
    n = bits(t)
    m = ("__int128" if is_signed(t) else "unsigned __int128") if n == 64 else ("int64_t" if is_signed(t) else "uint64_t")
    return f"(({CTYPE[t]})((({m}){x} * ({m}){y}) >> {n}))"
  def _operands(self, t:str, x:str, y:str) -> tuple[str, str]:
    self._int(t)
    return self.let(t, x), self.let(t, y)
  def idiv(self, t:str, x:str, y:str) -> str:   # x/0: all ones; the signed overflow -MIN/-1 wraps
    a, b = self._operands(t, x, y)
    T = CTYPE[t]
    if is_signed(t): return f"({b} == 0 ? ({T})-1 : {b} == -1 ? {self.negate(t, a)} : ({T})({a} / {b}))"
    return f"({b} == 0 ? ({T})0x{(1 << bits(t)) - 1:x}ull : ({T})({a} / {b}))"
  def irem(self, t:str, x:str, y:str) -> str:   # x%0: x
    a, b = self._operands(t, x, y)
    T = CTYPE[t]
    if is_signed(t): return f"({b} == 0 ? {a} : {b} == -1 ? ({T})0 : ({T})({a} % {b}))"
    return f"({b} == 0 ? {a} : ({T})({a} % {b}))"
  def minmax(self, op:str, t:str, x:str, y:str) -> str:
    self._int(t)
    return f"(({x}) {'<' if op == 'min' else '>'} ({y}) ? ({x}) : ({y}))"
  def shift(self, op:str, t:str, x:str, s:str) -> str:
    self._int(t)
    n, T, v = bits(t), CTYPE[t], self.let("u32", s)
    if op == "shl": return f"({v} >= {n} ? ({T})0 : {wrap(t, f'{U(t, x)} << {v}')})"
    if is_signed(t): return f"(({T})(({x}) >> ({v} >= {n} ? {n - 1} : {v})))"
    return f"({v} >= {n} ? ({T})0 : ({T})(({x}) >> {v}))"
  def funnel_shift(self, left:bool, wrap:bool, signed:bool, lo:str, hi:str, n:str) -> str:
    k = self.let("u64", f"{n} & 31u" if wrap else f"{n} < 32u ? {n} : 32u")
    x = self.let("u64", f"((uint64_t){hi} << 32) | (uint64_t){lo}")
    if left: return f"((uint32_t)(({x} << {k}) >> 32))"
    return f"((uint32_t)((int64_t){x} >> {k}))" if signed else f"((uint32_t)({x} >> {k}))"
  def _no_barriers(self):   # cc_ is among the saved registers in warp mode only
    if self.barriers and not self.warps: raise NeedsWarps("a carry flag in a kernel with barriers")
  def carry_in(self, t:str) -> str:
    self._no_barriers()
    return f"(({CTYPE[t]})cc_)"
  def set_carry(self, flag:str):
    self._no_barriers()
    self.emit(f"cc_ = {flag};")
  def _wide_only(self, t:str):
    if bits(t) not in (32, 64): self.decline(f"{self.ins.op}.{t}")
  def popc(self, t:str, x:str) -> str:
    self._wide_only(t)
    return f"((uint32_t)__builtin_popcount{'ll' if bits(t) == 64 else ''}({x}))"
  def clz(self, t:str, x:str) -> str:
    self._wide_only(t)
    return f"clz{bits(t)}p({x})"
  def brev(self, t:str, x:str) -> str:
    self._wide_only(t)
    return f"brev{bits(t)}({x})"
  def bfe(self, t:str, a:str, pos:str, length:str) -> str:
    self._wide_only(t)
    return f"(({CTYPE[t]})bfe_p({_bits64(t, a)}, {pos}, {length}, {bits(t)}, {int(is_signed(t))}))"
  def bfi(self, t:str, f:str, b:str, pos:str, length:str) -> str:
    self._wide_only(t)
    return f"(({CTYPE[t]})bfi_p({_bits64(t, f)}, {_bits64(t, b)}, {pos}, {length}, {bits(t)}))"
  def prmt(self, a:str, b:str, c:str) -> str: return f"prmt_p({a}, {b}, {c})"

  # *** comparisons ***
  def compare(self, cmp:str, t:str, x:str, y:str) -> str:
    if t in ("f16", "bf16"): t, x, y = "f64", to64(x, t), to64(y, t)   # exact
    if t in F32_64:
      if cmp in ("eq", "lt", "le", "gt", "ge"): return f"({x} {_CMP[cmp]} {y})"
      if cmp == "ne": return f"({x} != {y} && {x} == {x} && {y} == {y})"
      if cmp == "neu": return f"({x} != {y})"
      if cmp == "num": return f"({x} == {x} && {y} == {y})"
      if cmp == "nan": return f"({x} != {x} || {y} != {y})"
      return f"({x} {_CMP[cmp[:2]]} {y} || {x} != {x} || {y} != {y})"   # equ ltu leu gtu geu
    self._int(t)
    if cmp in ("lo", "ls", "hi", "hs") or t[0] == "b": x, y = f"(uint{bits(t)}_t){x}", f"(uint{bits(t)}_t){y}"
    return f"({x} {_CMP[cmp]} {y})"
  def select(self, c:str, t:str, a:str, b:str) -> str: return f"({c} ? {a} : {b})"

  # *** floats ***
  def farith(self, op:str, t:str, rnd:str, args:list[str]) -> str:
    """numerics.farith: float32/64 round-to-nearest in C's own arithmetic; the rest evaluated in double with the sign
    of its exact error and rounded in the mode (prelude.c exact_op, round_to, nudge64)."""
    if rnd == "rn" and t in F32_64: return (_F64 if t == "f64" else _F32)[op].format(*args)
    if rnd == "rn" and t == "f16" and op in ("add", "sub", "mul"): return f"h_{op}({args[0]}, {args[1]})"   # exact in float, rounded once
    if t not in FMTS and t != "f64": self.decline(f"{op}.{t}")
    xs = [to64(a, t) for a in args]
    if op == "rcp": op, xs = "div", ["1.0", *xs]   # as numerics.farith: 1 / x
    if rnd == "rn" and t == "f16" and op in _D: return from64(_D[op].format(*xs), t)
    xs += ["0.0"] * (3 - len(xs))
    if t == "f64":
      if op == "fma": return f"fma64_m({', '.join(xs)}, {_MODE[rnd]})"
      return f"round_f64({_OP[op]}, {_MODE[rnd]}, {', '.join(xs)})"
    f = FMTS[t]
    return from64(f"round_fmt({_OP[op]}, {f.p}, {f.emin}, {f.max!r}, {_MODE[rnd]}, {', '.join(xs)})", t)
  def approx(self, fn:str, t:str, x:str) -> str:
    if t == "f32": return _APPROX[fn].format(x)
    if fn not in _APPROX64: self.decline(f"{fn}.approx.{t}")
    y = _APPROX64[fn].format(to64(x, t))   # numerics.approx: the float64 function rounded to t
    return y if t == "f64" else from64(round_to(y, t, "rn"), t) if t == "bf16" else from64(y, t)
  def relu(self, t:str, x:str) -> str:
    if t in F32_64: return f"relu{t[1:]}({x})"
    if t == "f16": return f"((uint16_t)(((({x}) & 0x7fffu) > 0x7c00u || (({x}) & 0x8000u)) && (({x}) & 0x7fffu) ? 0 : ({x})))"
    if t == "bf16": return f"((uint16_t)((({x}) & 0x8000u) || ((({x}) & 0x7f80u) == 0x7f80u && (({x}) & 0x7fu)) ? 0 : ({x})))"  # -0 too, as numpy's
    self.decline(f"relu.{t}")
  def sat(self, t:str, x:str) -> str:
    if t in F32_64: return f"sat{t[1:]}({x})"
    if t in ("f16", "bf16"): return from64(f"sat64({to64(x, t)})", t)   # exact: 0, 1 and x are on the grid
    self.decline(f"sat.{t}")
  def half(self, x:str, i:int, h:str) -> str: return f"((uint16_t)({x} >> {16 * i}))"
  def join_halves(self, lo:str, hi:str, h:str) -> str: return f"((uint32_t)({lo}) | ((uint32_t)({hi}) << 16))"
  def ftz(self, x:str) -> str: return f"ftz_f32({x})"
  def canon(self, t:str, x:str) -> str: return f"canon_{t}({x})"   # prelude.c: numerics.canon
  def fminmax(self, op:str, t:str, x:str, y:str, nan:bool) -> str:
    if nan and t != "f32": self.decline(f"{op}.NaN.{t}")
    if t == "f16": return f"h_{op}({x}, {y})"
    if t == "bf16": return from64(f"p{op}64({to64(x, t)}, {to64(y, t)})", t)   # as numpy: through float64
    if t not in F32_64: self.decline(f"{op}.{t}")
    return f"p{op}{t[1:]}{'n' if nan else ''}({x}, {y})"

  # *** conversions ***
  def float_to_float(self, x:str, st:str, dt:str, rnd:str) -> str:
    """numerics.float_to_float: widening exact, narrowing rounded in rnd."""
    if dt == st: return x
    pairs = {("f32", "f64"): "((double){})", ("f64", "f32"): "((float){})", ("f16", "f32"): "h2f_q({})", ("f32", "f16"): "f32_to_f16_bits_rne({})",
             ("f64", "f16"): "f64_to_f16_bits_rne({})"}
    if rnd == "rn" and (st, dt) in pairs: return pairs[(st, dt)].format(x)
    x64 = to64(x, st)
    if dt == "f64": return x64
    if st == "f64" or FMTS[dt].p < FMTS[st].p or (st, dt) == ("f16", "bf16"): return from64(round_to(x64, dt, rnd), dt)
    return from64(x64, dt)
  def round_integral(self, x:str, t:str, rnd:str) -> str:
    if t not in F32_64: self.decline(f"cvt.{rnd}.{t}.{t}")
    return f"(({CTYPE[t]})copysign({_ROUND[rnd]}((double){x}), (double){x}))"
  def int_to_float(self, x:str, st:str, dt:str, rnd:str) -> str:
    """numerics.int_to_float: a 64-bit integer converts to double with the sign of the error (prelude.c i2d), then rounds."""
    if rnd == "rn" and dt in F32_64 and bits(st) <= 32: return f"(({CTYPE[dt]}){x})"
    es, v = self.tmp(), self.tmp()
    self.emit(f"double {es}; double {v} = i2d((int64_t)({x}), {int(bits(st) == 64)}, {int(is_signed(st))}, &{es});")
    if dt == "f64": return f"nudge64({v}, {es}, {_MODE[rnd]})"
    return from64(round_to(v, dt, rnd, es), dt)
  def float_to_int(self, x:str, st:str, dt:str, rnd:str) -> str:
    """Rounded in double, then saturated (prelude.c f2s/f2u: NaN -> 0)."""
    if st not in FMTS and st != "f64": self.decline(f"cvt.{rnd}.{dt}.{st}")
    self._int(dt)
    lo, hi = INT_RANGE[dt]
    r = f"{_ROUND[rnd]}({to64(x, st)})"
    if is_signed(dt): return f"(({CTYPE[dt]})f2s({r}, {float(lo)!r}, {float(hi)!r}, {lo}ll, {hi}ll))"
    return f"(({CTYPE[dt]})f2u({r}, {float(hi)!r}, {hi}ull))"
  def int_to_int(self, x:str, st:str, dt:str, sat:bool) -> str:
    if not sat: return f"(({CTYPE[dt]}){x})"
    self._int(st), self._int(dt)
    lo, hi = INT_RANGE[dt]
    v = self.tmp()
    if is_signed(st):   # clamped in int64 (every signed source fits); a bound past int64's is no bound
      self.emit(f"int64_t {v} = (int64_t)({x});")
      low, high = (f"{v} < {lo}ll" if lo > -2**63 else "0"), (f"{v} > {hi}ll" if hi < 2**63 - 1 else "0")
      return f"(({CTYPE[dt]})({low} ? {lo}ll : {high} ? {hi}ll : {v}))" if hi < 2**63 else f"(({CTYPE[dt]})({v} < 0 ? 0 : {v}))"
    self.emit(f"uint64_t {v} = (uint64_t)({x});")
    return f"(({CTYPE[dt]})({v} > {hi}ull ? {hi}ull : {v}))" if hi < min(2**64 - 1, 2**bits(st) - 1) else f"(({CTYPE[dt]}){v})"
  def add_sat(self, op:str, x:str, y:str) -> str:
    """s32 x op y in int64, clamped to s32."""
    v = self.tmp()
    self.emit(f"int64_t {v} = (int64_t)(int32_t)({x}) {op} (int64_t)(int32_t)({y});")
    return f"((int32_t)({v} < -2147483648ll ? -2147483648ll : {v} > 2147483647ll ? 2147483647ll : {v}))"
  def copysign(self, t:str, sign:str, mag:str) -> str:
    if t not in F32_64: self.decline(f"copysign.{t}")
    return f"copysign{'f' if t == 'f32' else ''}({mag}, {sign})"
  def testp(self, kind:str, t:str, x:str) -> str:
    if t not in F32_64: self.decline(f"testp.{t}")
    tiny, fabs = ("1.1754943508222875e-38f", "fabsf") if t == "f32" else ("2.2250738585072014e-308", "fabs")
    return {"finite": f"isfinite({x})", "infinite": f"isinf({x})", "number": f"(!isnan({x}))", "notanumber": f"isnan({x})",
            "normal": f"(isfinite({x}) && {fabs}({x}) >= {tiny})", "subnormal": f"({fabs}({x}) < {tiny} && {x} != 0)"}[kind]
  def fp8x2_from_f32(self, hi:str, lo:str, fmt:str, relu:bool) -> str:
    return f"fp8x2_f32({hi}, {lo}, {_fp8(fmt)}, {int(relu)})"
  def fp8x2_from_f16x2(self, x:str, fmt:str, relu:bool) -> str: return f"fp8x2_h2({x}, {_fp8(fmt)}, {int(relu)})"
  def fp8x2_to_f16x2(self, x:str, fmt:str, relu:bool) -> str:
    p, emin, _ = FP8[fmt]
    return f"h2_fp8x2({x}, {p}, {emin}, {int(fmt == 'e4m3')}, {int(relu)})"

  # *** the function ***
  def source(self) -> str:
    for v in self.fn.vars:
      if v.space not in ("shared", "local"): raise NoNative(f".{v.space} variable {v.name}")
    if self.warps: return self.warp_source()
    body = []
    for b in self.blocks:
      self.lines = []
      if b.index in self.barriers:   # save, return to the scheduler, resume here once the CTA has arrived
        self.emit("SAVE(); c->used += used; return %d;" % (b.index + 1))
        self.lines.append(f"R{b.index}:;")
      if b.instrs:
        self.ins = b.instrs[0]
        self.emit(f"if ((used += {len(b.instrs)}) > left) over_budget(c, {self.where()});")
      for self.pos, ins in enumerate(b.instrs): emit_instr(self, ins)
      body += [f"B{b.index}:;"] + self.lines
    regs = list(self.fn.regs.values())
    out = [f"#define NSAVE {len(regs) if self.barriers else 1}", f"#define BARRIERS {int(bool(self.barriers))}",
           *(f"#define {s.upper()}_WINDOW 0x{w:x}ull" for s, w in WINDOWS.items()), PRELUDE,
           f"int64_t mockgpu_hints = {max(self.nhints, 1)};",
           "static int64_t thread(Ctx *c, const uint32_t *sp, uint64_t *save, uint8_t *lm, int64_t resume) {",
           "  int64_t used = 0, left = c->budget - c->used, *hints = c->hints;"]
    out += [f"  {CTYPE[r.type]} {r.name} = 0;" for r in regs]
    out += ["  uint32_t cc_ = 0; (void)cc_;"]   # the carry flag of add.cc/addc/mad.cc/madc (semantics._carry)
    save = " ".join(f"memcpy(save + {i}, &{r.name}, sizeof {r.name});" for i, r in enumerate(regs))
    load = " ".join(f"memcpy(&{r.name}, save + {i}, sizeof {r.name});" for i, r in enumerate(regs))
    out += [f"#define SAVE() do {{ {save} }} while (0)"]
    if self.barriers:
      out += [f"  if (resume) {{ {load}", "    switch (resume) {"]
      out += [f"      case {i + 1}: goto R{i};" for i in self.barriers]
      out += ["    }", "  }"]
    out += body + [f"B{len(self.blocks)}:;", "  c->used += used;", "  return -1;", "}"]
    return "\n".join(out) + "\n"

  def warp_source(self) -> str:
    """Warp mode: the scheduler (prelude.c run_cta) runs the CTA's lowest block for the threads at it, as the numpy
    path's min-PC scheduling does, so the threads that meet at an instruction combining them are the numpy path's. A
    thread returns the block it goes to (NEXT) or the instruction it pauses at (PAUSE); its registers are a Regs
    struct in the CTA's save area, which the collectives read for every thread."""
    body = []
    for b in self.blocks:
      self.lines = []
      if b.instrs:
        self.ins = b.instrs[0]
        self.emit(f"if ((used += {len(b.instrs)}) > left) over_budget(c, {self.where()});")
      for self.pos, ins in enumerate(b.instrs): emit_instr(self, ins)
      self.emit(f"NEXT({b.index + 1});")
      body += [f"B{b.index}:;"] + self.lines
    regs, nb = list(self.fn.regs.values()), len(self.blocks)
    out = [f"#define NSAVE {len(regs) + 1}", "#define BARRIERS 1", "#define WARPS 1", f"#define NBLOCKS {nb}",
           *(f"#define {s.upper()}_WINDOW 0x{w:x}ull" for s, w in WINDOWS.items()), PRELUDE,
           f"int64_t mockgpu_hints = {max(self.nhints, 1)};",
           "typedef struct {", *(f"  {CTYPE[r.type]} {r.name};" for r in regs), "  uint32_t cc_;", "} Regs;",
           '_Static_assert(sizeof(Regs) <= NSAVE * 8, "the save area holds a Regs");',
           "static inline Regs *regs(Ctx *c, uint32_t *sp, int64_t t) { thread_sp(c, sp, t); return (Regs *)(c->save + t * NSAVE); }",
           *(f"#define {r.name} (R->{r.name})" for r in regs), "#define cc_ (R->cc_)", *self.collectives,
           "static void coll_run(Ctx *c, int64_t k, int64_t t0, int64_t n, uint32_t *sp) {", "  switch (k) {",
           *(f"    case {k}: coll{k}(c, t0, n, sp); break;" for k in range(len(self.collectives))), "  }", "}",
           "static int coll_cta_wide(int64_t k) {",
           f"  static const uint8_t wide[] = {{{', '.join(str(int(x)) for x in self.cta_wide) or '0'}}};", "  return wide[k];", "}",
           "static int64_t thread(Ctx *c, const uint32_t *sp, uint64_t *save, uint8_t *lm, int64_t resume) {",
           "  int64_t used = 0, left = c->budget - c->used, *hints = c->hints;",
           "  Regs *R = (Regs *)save;", "  switch (resume) {",
           *(f"    case {i}: goto B{i};" for i in range(nb)),
           *(f"    case PAUSED + {k}: goto P{k};" for k in range(len(self.collectives))), "  }"]
    out += body + [f"B{nb}:;", "  c->used += used;", "  return NBLOCKS;", "}"]
    return "\n".join(out) + "\n"


# the fp8 formats as native_floats.c's f64_to_fp8_satfinite/fp8_to_f16_bits take them: significand bits with the implicit one, minimum normal
# exponent, largest finite value ((4, -6, 448.0), (3, -14, 57344.0))
FP8 = {t: floats.precision(t) for t in ("e4m3", "e5m2")}

def _fp8(fmt:str) -> str:
  p, emin, mx = FP8[fmt]
  return f"{p}, {emin}, {mx!r}"

def emit_instr(k:Kernel, ins:P.Instr):
  """One instruction from its row, inside braces (its temporaries) and under its guard."""
  k.ins = ins
  r = semantics.ROWS.get(ins.op)
  if r is None or r.no_c: raise NoNative(f"instruction {ins.op}")
  if ins.error is not None: raise NoNative(ins.error)
  try: semantics.row_of(k, ins)
  except UnsupportedInstruction as e: raise NoNative(str(e)) from None   # InvalidPTX: the numpy path rejected it at load
  p = ins.guard
  k.emit(f"if ({'!' if p[1] else ''}{p[0].name}) {{" if p is not None else "{")
  r.fn(k, ins)
  k.emit("}")

# registers are C locals: past this many declared ones (ptxas takes any number of virtual registers) cc's build time
# grows past what a hot kernel saves, so the kernel keeps its numpy path; native.library's timeout bounds the rest
MAX_REGS = 1 << 15

def kernel_source(fn:P.Function, layout:Layout) -> tuple[str, list[str]]:
  """C source of a kernel and the messages its stop statuses name (raises NoNative)."""
  if len(fn.regs) > MAX_REGS: raise NoNative(f"{len(fn.regs)} declared registers (the C translation takes at most {MAX_REGS})")
  try:
    k = Kernel(fn, layout)
    return k.source(), k.messages
  except NeedsWarps:
    k = Kernel(fn, layout, warps=True)
    return k.source(), k.messages
