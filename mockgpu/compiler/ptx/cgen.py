"""Translate a parsed PTX kernel to C: one function that runs one thread, compiled by the host C compiler.

Registers are C locals of their declared type (float16 and bfloat16 as their bits); each basic block (codegen.split_blocks)
is a label and each branch a goto. A barrier starts a block: with barriers, the thread saves its registers there and
returns the block to resume at, and the prelude's scheduler (prelude.c) runs every thread of the CTA up to it before
any goes on. Every value is computed as the numpy path computes it (numerics.py, bitops.py), so both give the same
bits; tests/test_ptx_native.py compares them. Module-scope .global and .const variables are two more mappings of
the address space at their window addresses (runtime.py), so global loads reach them as the numpy path's do. What the translation does not cover raises NoNative at translation time
and the kernel stays on the numpy path: warp-wide instructions (shfl, vote, redux, mma, bar.red), atomics, .local and
generic-space memory, module-scope variables, directed rounding, .sat, float16 fma and transcendentals, and the
rarer bit operations. The instruction budget counts thread-instructions (32 per warp-instruction of MOCKGPU_BUDGET).
"""
from __future__ import annotations
import os, struct
import numpy as np
from mockgpu.compiler import native
from mockgpu.compiler.ptx import parser as P
from mockgpu.compiler.ptx.codegen import Layout, split_blocks, _BARRIERS, _ENDS_BLOCK
from mockgpu.emulators.ptx.types import PTX_TYPES, np_dtype, bits, is_float, is_signed

PRELUDE = native.prelude(os.path.join(os.path.dirname(os.path.abspath(__file__)), "prelude.c"))

class NoNative(Exception):
  """The kernel uses something the C translation does not cover (the message says what)."""

CTYPE = {"b8": "uint8_t", "u8": "uint8_t", "s8": "int8_t", "b16": "uint16_t", "u16": "uint16_t", "s16": "int16_t", "f16": "uint16_t",
         "bf16": "uint16_t", "b32": "uint32_t", "u32": "uint32_t", "s32": "int32_t", "f32": "float", "f16x2": "uint32_t",
         "bf16x2": "uint32_t", "b64": "uint64_t", "u64": "uint64_t", "s64": "int64_t", "f64": "double", "pred": "uint8_t"}
SPECIAL = {"tid.x": 0, "tid.y": 1, "tid.z": 2, "ntid.x": 3, "ntid.y": 4, "ntid.z": 5, "ctaid.x": 6, "ctaid.y": 7, "ctaid.z": 8,
           "nctaid.x": 9, "nctaid.y": 10, "nctaid.z": 11, "laneid": 12, "warpid": 13, "nwarpid": 14}
_INT_RANGE = {"u8": (0, 255), "s8": (-128, 127), "u16": (0, 65535), "s16": (-32768, 32767), "u32": (0, 2**32 - 1),
              "s32": (-2**31, 2**31 - 1), "u64": (0, 2**64 - 1), "s64": (-2**63, 2**63 - 1)}
_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_BOOL = {"and": "&", "or": "|", "xor": "^"}
_LD_HINTS = {"weak", "relaxed", "gpu", "sys", "cta", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_last", "L1::evict_first",
             "L1::evict_normal", "L1::no_allocate", "L1::evict_unchanged", "L2::64B", "L2::128B", "L2::256B"}

def kind(t:str) -> str: return np_dtype(t).kind   # the numpy path's kind (float16 is "f", bfloat16 bits are "u")
def utype(n:int) -> str: return f"uint{max(n, 32) if n < 32 else n}_t"   # integer arithmetic at least 32 bits wide, unsigned

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

class Kernel:
  """The C translation of one entry of a PTX module (raises NoNative when it is outside what C covers)."""
  def __init__(self, fn:P.Function, layout:Layout):
    self.fn, self.layout = fn, layout
    self.blocks = split_blocks(fn.body)
    self.labels = {lb: b.index for b in self.blocks for lb in b.labels}
    self.barriers = [b.index for b in self.blocks if b.instrs and b.instrs[0].op in _BARRIERS]
    self.messages:list[str] = []   # "PTX line N: text" of each instruction that can stop the launch, by its id
    self.lines:list[str] = []
    self.ntmp = self.nhints = 0

  # *** output ***
  def emit(self, s:str): self.lines.append("  " + s)
  def tmp(self) -> str:
    self.ntmp += 1
    return f"t{self.ntmp}"
  def hint(self) -> int:
    """A mapping hint of its own for one more global access (prelude.c findh)."""
    self.nhints += 1
    return self.nhints - 1
  def where(self, ins:P.Instr) -> int:
    self.messages.append(ins.where())
    return len(self.messages) - 1

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
      if a.name not in SPECIAL: raise NoNative(f"special register %{a.name}")
      e = f"sp[{SPECIAL[a.name]}]"
      return bitcast(e, "u32", t) if bits(t) == 32 else resize(e, "u32", t, False)
    if isinstance(a, P.Sym):
      space, off = self.symbol(a.name)
      if space == "param": raise NoNative("the address of a kernel parameter")
      return self.const_int(off + a.offset, t)
    raise NoNative(f"operand {a!r}")

  def imm(self, a:P.Imm, t:str) -> str:
    if t == "pred": return "1" if a.value else "0"
    if t in ("f32", "f64"):
      fmt, n = ("<f", 32) if t == "f32" else ("<d", 64)
      if a.is_float and a.bits == n: raw = struct.unpack(f"<I" if n == 32 else "<Q", struct.pack(fmt, a.value))[0]
      else:  # rounded as the numpy path's np.float32(v) does (an integer past float32's range is inf: struct raises)
        with np.errstate(over="ignore"): raw = int(np.array([float(a.value)]).astype(f"f{n // 8}").view(f"u{n // 8}")[0])
      return f"F{n}(0x{raw:x}ull)" if n == 64 else f"F32(0x{raw:x}u)"
    if kind(t) == "f": raise NoNative(f"a .{t} immediate")
    if a.is_float:
      raw = struct.unpack("<Q", struct.pack("<d", a.value))[0] if a.bits == 64 else struct.unpack("<I", struct.pack("<f", a.value))[0]
      return self.const_int(raw, t)
    return self.const_int(int(a.value), t)

  def const_int(self, v:int, t:str) -> str:
    return f"(({CTYPE[t]})0x{v % (1 << bits(t)):x}ull)"

  def symbol(self, name:str) -> tuple[str, int]:
    if name not in self.layout.symbols: raise NoNative(f"unknown symbol {name}")
    return self.layout.symbols[name]

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

  # *** the function ***
  def source(self) -> str:
    from mockgpu.compiler.ptx import cops
    for v in self.fn.vars:
      if v.space not in ("shared", "local"): raise NoNative(f".{v.space} variable {v.name}")
    body = []
    for b in self.blocks:
      self.lines = []
      if b.index in self.barriers:   # save, return to the scheduler, resume here once the CTA has arrived
        self.emit("SAVE(); c->used += used; return %d;" % (b.index + 1))
        self.lines.append(f"R{b.index}:;")
      if b.instrs: self.emit(f"if ((used += {len(b.instrs)}) > left) over_budget(c, {self.where(b.instrs[0])});")
      for ins in b.instrs: cops.emit(self, ins)
      body += [f"B{b.index}:;"] + self.lines
    regs = list(self.fn.regs.values())
    out = [f"#define NSAVE {len(regs) if self.barriers else 1}", f"#define BARRIERS {int(bool(self.barriers))}", PRELUDE,
           f"int64_t mockgpu_hints = {max(self.nhints, 1)};",
           "static int64_t thread(Ctx *c, const uint32_t *sp, uint64_t *save, uint8_t *lm, int64_t resume) {",
           "  int64_t used = 0, left = c->budget - c->used, *hints = c->hints;"]
    out += [f"  {CTYPE[r.type]} {r.name} = 0;" for r in regs]
    out += ["  uint32_t cc_ = 0; (void)cc_;"]   # the carry flag of add.cc/addc/mad.cc/madc (cops._carry)
    save = " ".join(f"memcpy(save + {i}, &{r.name}, sizeof {r.name});" for i, r in enumerate(regs))
    load = " ".join(f"memcpy(&{r.name}, save + {i}, sizeof {r.name});" for i, r in enumerate(regs))
    out += [f"#define SAVE() do {{ {save} }} while (0)"]
    if self.barriers:
      out += [f"  if (resume) {{ {load}", "    switch (resume) {"]
      out += [f"      case {i + 1}: goto R{i};" for i in self.barriers]
      out += ["    }", "  }"]
    out += body + [f"B{len(self.blocks)}:;", "  c->used += used;", "  return -1;", "}"]
    return "\n".join(out) + "\n"

# registers are C locals: past this many declared ones (ptxas takes any number of virtual registers) cc's build time
# grows past what a hot kernel saves, so the kernel keeps its numpy path; native.library's timeout bounds the rest
MAX_REGS = 1 << 15

def kernel_source(fn:P.Function, layout:Layout) -> tuple[str, list[str]]:
  """C source of a kernel and the messages its stop statuses name (raises NoNative)."""
  if len(fn.regs) > MAX_REGS: raise NoNative(f"{len(fn.regs)} declared registers (the C translation takes at most {MAX_REGS})")
  k = Kernel(fn, layout)
  return k.source(), k.messages
