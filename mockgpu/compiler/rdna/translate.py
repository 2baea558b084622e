"""Translate a kernel's basic blocks into Python source over numpy arrays.

Each block becomes a function `_blk<k>(w, n)` run for a group of n waves sitting at that block (`w`: a slice or index
array into the wave axis), and `_all<k>(n)`, the same code for the whole chunk of waves (`w` is then every wave, and the
register accesses skip the indexing); the names keep clear of the runtime helpers the code calls (block 16 was once
`b16`, shadowing runtime.b16, the 16-bit operand view, in every kernel of 17 blocks or more). It returns the next
block per wave (an int, or an array for a per-wave branch), or -1 at s_endpgm.
Registers: `S[i][w]` uint32 [n] (SCC is S[253]), `V[i][w]` uint32 [n, 32] where V is a list of per-register
arrays that are never modified in place (runtime.vw rebinds them), so a move or a load costs no copy; `m` is the
EXEC mask as lanes and `full` says whether all lanes are on. Instructions this translator does not know become a `raise` at their
place, so a kernel only fails if it actually executes one.
"""
from __future__ import annotations
import hashlib, os, re, struct
from tinygrad.renderer.amd.dsl import Inst, Reg
from mockgpu.compiler.rdna.decode import Block, Bad, op_name, branch_target, imm_offset, BRANCHES, BARRIERS, INVALID, describe, invalid_operand
from mockgpu.emulators.rdna import semantics as sem
from mockgpu.emulators.rdna.runtime import dpp16_lanes
from mockgpu.compiler.rdna import errata, rdna4

# the cache key of translated code: any change to the translator or to the helpers its output calls invalidates it
_PKG = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the mockgpu package
_SOURCES = ("compiler/rdna/decode.py", "compiler/rdna/translate.py", "compiler/rdna/rdna4.py", "compiler/native.py", "emulators/rdna/semantics.py",
            "emulators/rdna/runtime.py", "emulators/rdna/memops.py", "emulators/rdna/executor.py")
VERSION = hashlib.sha256(b"".join(open(os.path.join(_PKG, f), "rb").read() for f in _SOURCES)).hexdigest()[:16]
WIDTH = {"b32": 32, "u32": 32, "i32": 32, "f32": 32, "b16": 16, "u16": 16, "i16": 16, "f16": 16, "bf16": 16,
         "b64": 64, "u64": 64, "i64": 64, "f64": 64}
FCONST = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
FBITS = {"f32": "fbits32", "f16": "fbits16"}  # a float value's register bits
INV_2PI = {16: 0x3118, 32: 0x3e22f983, 64: 0x3fc45f306dc9c882}
SCC, VCC, EXEC, NULL = 253, 106, 126, 124
NOOPS = {"S_NOP", "S_WAITCNT", "S_WAITCNT_DEPCTR", "S_DELAY_ALU", "S_CLAUSE", "S_SET_INST_PREFETCH_DISTANCE",
         "S_SLEEP", "S_WAIT_IDLE", "S_SETPRIO", "S_ICACHE_INV", "S_TTRACEDATA", "S_TTRACEDATA_IMM", "S_WAKEUP",
         "S_INCPERFLEVEL", "S_DECPERFLEVEL", "S_WAITCNT_VSCNT", "S_WAITCNT_VMCNT", "S_WAITCNT_EXPCNT",
         "S_WAITCNT_LGKMCNT", "S_VERSION", "S_DCACHE_INV", "S_GL1_INV", "V_NOP", "V_PIPEFLUSH", "DS_NOP"} | rdna4.NOOPS
MSG_DEALLOC_VGPRS = 3
# a numpy scalar constant (optionally reinterpreted): hoisted out of the block functions, as building one costs ~1 us
CONST = re.compile(r"\b(?:u8|u16|u32|u64|i8|i16|i32|i64|f16|f32|f64)\((?:0x[0-9a-f]+|-?\d+(?:\.\d+)?)\)"
                   r"(?:\.view\((?:u16|u32|u64|i16|i32|i64|f16|f32|f64)\))?")

def plus64(off:int) -> str:
  """Code adding a constant byte offset to a uint64 address (wrapping), or nothing for 0."""
  return f" + u64({off & (2**64 - 1)})" if off else ""

class Unsupported(Exception):
  """Raised while translating one instruction; becomes a runtime raise of UnsupportedInstruction (InvalidInstruction
  when its message starts with decode.INVALID)."""

VREG = re.compile(r"\bV\[(-?\d+)\]|\bvw(?:16)?\(V, (-?\d+)|r64\(V\[-?\d+\]\[w\], V\[(-?\d+)\]")

def failure(inst:Inst, why:str) -> str:
  """The message of an instruction that cannot run: an invalid one names its bytes as well."""
  if why.startswith(INVALID): return f"{INVALID}{op_name(inst).lower()} (bytes {inst.to_bytes().hex()}): {why[len(INVALID):]}"
  return f"{op_name(inst).lower()}: {why}"

def bad_vgprs(regs) -> str|None:
  """Why VGPR indexes one instruction touches are not in the register file (v0..v255), or None. A negative index is
  an SGPR or constant encoded where the instruction needs a VGPR (v_readlane_b32's src0, say)."""
  if past := [i for i in regs if i > 255]: return f"{INVALID}v{min(past)} is past v255"
  if below := [i for i in regs if i < 0]: return f"{INVALID}operand encoding {min(below) + 256} where a VGPR is required"
  return None

SREG = re.compile(r"\bS\[(\d+)\]")

def bad_sgprs(regs) -> str|None:
  """An SGPR index past the 256 scalar slots is a VGPR encoded where an SGPR or a lane mask is required."""
  if past := [i for i in regs if i > 255]: return f"{INVALID}v{min(past) - 256} where the instruction needs an SGPR"
  return None

def past_v255(lines:list[str]) -> str|None:
  """bad_vgprs (and bad_sgprs) of the registers the translated lines of one instruction touch."""
  return bad_vgprs([int(next(g for g in m.groups() if g)) for ln in lines for m in VREG.finditer(ln)]) or \
         bad_sgprs([int(i) for ln in lines for i in SREG.findall(ln)])

def _const_bits(o:int, width:int) -> int|None:
  if 128 <= o <= 208: v = o - 128 if o <= 192 else -(o - 192)
  elif o in FCONST:
    fmt = {16: "e", 32: "f", 64: "d"}[width]
    return int.from_bytes(struct.pack("<" + fmt, FCONST[o]), "little")
  elif o == 248: return INV_2PI[width]
  else: return None
  return v & ((1 << width) - 1)

def typed(raw:str, t:str, hi:bool=False) -> str:
  """View raw register bits (uint32, or uint64 for 64-bit types) as type t."""
  if t in ("b32", "u32", "b64", "u64"): return raw
  if t in ("i32", "f32", "i64", "f64"): return f"{raw}.view({t})"
  if t == "f16": return f"h16({raw}, {hi})"
  if t == "bf16": return f"bf16({raw}, {hi})"
  if t in ("b16", "u16"): return f"b16({raw}, {hi})"
  if t == "i16": return f"b16({raw}, {hi}).view(i16)"
  raise Unsupported(f"operand type {t}")

def strip(name:str) -> str:
  """An op's row name: its RDNA3 name (see rdna4.ALIASES) without the V_/S_ prefix and the _E32/_E64 suffix."""
  name = rdna4.rdna3_name(name)
  name = name[2:] if name.startswith(("V_", "S_")) else name
  for suffix in ("_E32", "_E64"):
    if name.endswith(suffix): return name[:-len(suffix)]
  return name

def split_hi(t:str) -> tuple[str, bool]:
  """A source type with an "hi" suffix (f16hi) names the high half of its operand."""
  return (t[:-2], True) if t.endswith("hi") else (t, False)

class Translator:
  def __init__(self, blocks:list[Block], ftz32:bool, ftz16:bool, arch:str="rdna3"):
    self.blocks, self.ftz32, self.ftz16, self.arch = blocks, ftz32, ftz16, arch
    # the family's rows: RDNA4 adds to RDNA3's (rdna4.py)
    self.vop, self.sop, self.packed = (rdna4.NUMPY_VOP, rdna4.NUMPY_SOP, rdna4.NUMPY_PACKED) if arch == rdna4.FAMILY else \
                                      (sem.VOP, sem.SOP, sem.PACKED)
    self.index = {b.start: k for k, b in enumerate(blocks)}
    self.lines:list[str] = []
    self.dpp_mods:tuple[int, int]|None = None  # (neg, abs) bits of a DPP16 encoding being translated

  # *** output ***
  def out(self, line:str): self.lines.append("    " + line)

  def source(self) -> str:
    head = ["from mockgpu.emulators.rdna.runtime import *", "from mockgpu.emulators.rdna.memops import *",
            f"BLOCK_PC = {[b.start for b in self.blocks]}", f"BLOCK_LEN = {[len(b.insts) for b in self.blocks]}",
            f"BLOCK_BARRIER = {[self._ends_in_barrier(b) for b in self.blocks]}", "def build(st):",
            "  S, V = st.S, st.V"]
    body:list[str] = []
    for k, b in enumerate(self.blocks):
      self.lines = []
      self.block(b)
      body.append(f"  def _blk{k}(w, n):")
      body += self.lines
      body += [f"  def _all{k}(n):", "    w = EVERY"]  # the block for the whole chunk of waves: no indexing per access
      body += [ln.replace("[w]", "") for ln in self.lines]
    body.append(f"  return [{', '.join(f'_blk{k}' for k in range(len(self.blocks)))}], "
                f"[{', '.join(f'_all{k}' for k in range(len(self.blocks)))}]")
    consts:dict[str, str] = {}
    body = [CONST.sub(lambda mt: consts.setdefault(mt.group(0), f"_K{len(consts)}"), ln) for ln in body]
    return "\n".join(head[:2] + [f"{name} = {expr}" for expr, name in consts.items()] + head[2:] + body) + "\n"

  @staticmethod
  def _ends_in_barrier(b:Block) -> bool:
    last = b.insts[-1][1]
    return not isinstance(last, Bad) and op_name(last) in BARRIERS

  def block(self, b:Block):
    self.out("m, full = em(S[126][w])")
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
    """Emit one instruction; returns the block's return expression if it ends the block."""
    cls = type(inst).__name__
    name = op_name(inst)
    if "DPP" in cls: return self.dpp(inst, name, cls)
    if name in NOOPS: return None
    for prefix, fn in (("SOPP", self.sopp), ("SOPK", self.sopk), ("SOPC", self.sopc), ("SOP1", self.sop1),
                       ("SOP2", self.sop2), ("SMEM", self.smem), ("VOPD", self.vopd), ("VOP3P", self.vop3p),
                       ("VOPC", self.vopc_enc), ("VOP3SD", self.vop3sd), ("VOP3", self.vop3), ("VOP1", self.vop1),
                       ("VOP2", self.vop2), ("DS", self.ds), ("GLOBAL", self.glob), ("FLAT", self.flat),
                       ("SCRATCH", self.scratch)):
      if cls.startswith(prefix): return fn(inst, name)
    raise Unsupported(f"{cls} encoding is not implemented")

  def dpp(self, inst, name:str, cls:str):
    """A VOP with a DPP source: src0 becomes the lane-permuted vsrc0, and only lanes with a valid source write."""
    if cls.startswith(("VOPD", "VOP3P")): raise Unsupported("DPP on this encoding")
    v0 = inst.vsrc0.offset - 256
    if "DPP16" in cls:
      try: dpp16_lanes(inst.dpp)
      except ValueError as e: raise Unsupported(str(e)) from None
      self.out(f"_dpp, _ok = dpp16(V[{v0}][w], m, {inst.dpp}, {bool(inst.bc)}, {bool(inst.fi)}, {inst.row_mask}, {inst.bank_mask})")
    else:
      sels = [getattr(inst, f"lane_sel_{k}") for k in range(8)]
      self.out(f"_dpp, _ok = dpp8(V[{v0}][w], m, {sels}, {inst.src0.offset == 234})")
    self.out("m = m & _ok")
    self.out("full = False")
    base = cls.split("_DPP")[0]
    self.dpp_mods = (getattr(inst, "src0_neg", 0) | getattr(inst, "src1_neg", 0) << 1,
                     getattr(inst, "src0_abs", 0) | getattr(inst, "src1_abs", 0) << 1)
    try:
      ret = {"VOP1": self.vop1, "VOP2": self.vop2, "VOPC": self.vopc_enc, "VOP3": self.vop3, "VOP3SD": self.vop3sd}[base](inst, name)
    finally: self.dpp_mods = None
    self.out("m, full = em(S[126][w])")
    return ret

  # *** operands ***
  def raw(self, r:Reg, width:int, lit:int|None, vec:bool, t:str="b32") -> str:
    """Code for an operand's raw bits: uint32 (uint64 when width is 64); [n, 32] or [n, 1] in vector context."""
    o = r.offset
    col = "[:, None]" if vec else ""
    if o in (233, 234, 250):
      if self.dpp_mods is None or not vec: raise Unsupported("a DPP operand outside a DPP encoding")
      return "_dpp"
    if 256 <= o < 512:
      if not vec: raise Unsupported("a VGPR operand in a scalar instruction")
      v = o - 256
      return f"V[{v}][w]" if width <= 32 else f"r64(V[{v}][w], V[{v+1}][w])"
    if o == NULL: return "u32(0)" if width <= 32 else "u64(0)"
    if o < 128: return f"S[{o}][w]{col}" if width <= 32 else f"r64(S[{o}][w], S[{o+1}][w]){col}"
    if o == SCC: return f"S[253][w]{col}" if width <= 32 else f"S[253][w].astype(u64){col}"
    if o in (251, 252):
      z = f"(S[{VCC if o == 251 else EXEC}][w] == 0).astype({'u32' if width <= 32 else 'u64'}){col}"
      return z
    if o == 255:
      if lit is None: raise Unsupported("literal operand without a literal")
      if width <= 32: return f"u32(0x{lit:x})"
      if t == "f64": return f"u64(0x{lit << 32:x})"
      return f"u64(0x{(lit - (1 << 32) if t == 'i64' and lit >> 31 else lit) & (2**64 - 1):x})"
    bits = _const_bits(o, 16 if width == 16 else width)
    if bits is None: raise Unsupported(invalid_operand(r) or f"operand {describe(r)}")
    return f"u32(0x{bits:x})" if width <= 32 else f"u64(0x{bits:x})"

  def src(self, r:Reg, t:str, lit:int|None, vec:bool=True, hi:bool=False, neg:bool=False, abs_:bool=False) -> str:
    code = typed(self.raw(r, WIDTH[t], lit, vec, t), t, hi)
    if t[0] == "f":
      if (self.ftz32 if t == "f32" else self.ftz16): code = f"ftz{t[1:]}({code})"
      if abs_: code = f"np.abs({code})"
      if neg: code = f"(-{code})"
    elif neg or abs_: raise Unsupported(f"neg/abs modifier on a {t} operand")
    return code

  # *** vector writes ***
  def vwrite(self, d:int, t:str, expr:str, hi:bool=False):
    width = WIDTH[t]
    if width == 32:
      self.out(f"vw(V, {d}, w, {'fbits32' if t == 'f32' else 'bits32'}({expr}), m, full)")
    elif width == 16:
      self.out(f"vw16(V, {d}, w, {'fbits16' if t == 'f16' else 'bits32'}({expr}), m, full, {hi})")
    else:
      self.out(f"_t = {'f64bits' if t == 'f64' else 'as_u64'}({expr})")
      self.out(f"vw(V, {d}, w, lo32(_t), m, full)")
      self.out(f"vw(V, {d+1}, w, hi32(_t), m, full)")

  def float_out(self, t:str, expr:str, omod:int, clamp:bool) -> str:
    if omod: expr = f"({expr}) * {t}({[1, 2.0, 4.0, 0.5][omod]})"
    if clamp: expr = f"clamp01({expr})"
    if t == "f32" and self.ftz32: expr = f"ftz32({expr})"
    if t in ("f16", "f64") and self.ftz16: expr = f"ftz{t[1:]}({expr})"
    return expr

  def sgpr_mask_write(self, d:int, bool_expr:str):
    """A VALU writing one bit per lane into an SGPR (compares, carry-outs): inactive lanes write 0. The mask stays
    a local bool [n, 32] array, packed into the SGPR only when something other than a lane-mask read needs it
    (see lazy_masks), so a carry chain or compare-and-select never packs and unpacks."""
    if d == NULL: return
    # wave32: VCC_HI is an ordinary SGPR (LLVM allocates it, e.g. v_cmp_eq_f64_e64 vcc_hi, ...); EXEC_HI is not
    if d == EXEC + 1: raise Unsupported("a lane mask written to EXEC_HI (wave64 only)")
    if d == EXEC:
      self.out(f"S[{d}][w] = pack(({bool_expr}) & m, n)")
      return self.out("m, full = em(S[126][w])")
    self.out(f"_kb{d} = ({bool_expr}) if full else ({bool_expr}) & m")  # all lanes on: nothing to clear
    self.pending[d] = f"_kb{d}"

  def lazy_masks(self, lines:list[str]) -> list[str]:
    """One instruction's lines, given the masks pending before it: its lane-mask reads of a pending SGPR use the
    local bool array; any other mention of that SGPR first packs the mask into it."""
    flush = []
    for d, var in self.before.items():
      lines = [ln.replace(f"unpack(S[{d}][w])", var) for ln in lines]
      if any(re.search(rf"\bS\[{d}\]", ln) for ln in lines):
        flush.append(f"    S[{d}][w] = pack({var}, n)")
        if self.pending.get(d) == var and not any(re.search(rf"^\s*{var} = ", ln) for ln in lines): del self.pending[d]
    return flush + lines

  def flush_masks(self):
    for d, var in self.pending.items(): self.out(f"S[{d}][w] = pack({var}, n)")
    self.pending = {}

  # *** VALU ***
  def valu(self, name:str, dst:int, srcs:list[Reg], lit:int|None, neg:int=0, abs_:int=0, opsel:int=0, omod:int=0,
           clamp:bool=False, mask_reg:int=VCC, sdst:int|None=None):
    """Emit a vector ALU op by its stripped name; srcs are the encoded source operands in order."""
    if name in ("CNDMASK_B32", "CNDMASK_B16"):
      t = "f32" if (neg or abs_) and name == "CNDMASK_B32" else ("b32" if name == "CNDMASK_B32" else "b16")
      a, b = (self.src(s, t, lit, hi=bool(opsel >> i & 1), neg=bool(neg >> i & 1), abs_=bool(abs_ >> i & 1)) for i, s in enumerate(srcs[:2]))
      sel = f"unpack(S[{mask_reg}][w])" if mask_reg != NULL else "False"
      return self.vwrite(dst, t, f"np.where({sel}, {b}, {a})", hi=bool(opsel >> 3 & 1))
    if name in ("ADD_CO_U32", "SUB_CO_U32", "SUBREV_CO_U32", "ADD_CO_CI_U32", "SUB_CO_CI_U32", "SUBREV_CO_CI_U32"):
      return self.carry_op(name, dst, srcs, lit, sdst if sdst is not None else VCC, mask_reg, clamp)
    if name in ("MAD_U64_U32", "MAD_I64_I32"):
      a, b = (self.src(s, "u32", lit) for s in srcs[:2])
      self.out(f"_r, _c = {name.lower()}({a}, {b}, {self.src(srcs[2], 'u64', lit)})")
      self.vwrite(dst, "u64", "_r")
      return self.sgpr_mask_write(sdst, "_c")
    if name in ("DIV_SCALE_F32", "DIV_SCALE_F64"):
      t = name[-3:].lower()
      ops = [self.src(s, t, lit, neg=bool(neg >> i & 1)) for i, s in enumerate(srcs[:3])]
      self.out(f"_r, _c = div_scale({', '.join(ops)})")
      self.vwrite(dst, t, "_r")
      return self.sgpr_mask_write(sdst, "_c")
    if name in ("DIV_FMAS_F32", "DIV_FMAS_F64"):
      t = name[-3:].lower()
      a, b, c = (self.src(s, t, lit, neg=bool(neg >> i & 1), abs_=bool(abs_ >> i & 1)) for i, s in enumerate(srcs[:3]))
      fma = "fma32" if t == "f32" else "fma64"
      scale = "2.0**32" if t == "f32" else "2.0**64"
      expr = f"np.where(unpack(S[106][w]), {fma}({a}, {b}, {c}) * {t}({scale}), {fma}({a}, {b}, {c}))"
      return self.vwrite(dst, t, self.float_out(t, expr, omod, clamp))
    if name in ("MBCNT_LO_U32_B32", "MBCNT_HI_U32_B32"):
      a, b = self.src(srcs[0], "u32", lit), self.src(srcs[1], "u32", lit)
      expr = f"popcount({a} & ((u32(1) << LANE) - u32(1))) + {b}" if name.endswith("LO_U32_B32") else b
      return self.vwrite(dst, "u32", expr)
    if name in ("DOT2_F32_F16", "DOT2_F32_BF16", "DOT2ACC_F32_F16", "DOT2ACC_F32_BF16"):
      raise Unsupported("use the VOP3P path")
    if name == "MAD_U32_U16":
      a, b = (self.src(s, "u16", lit, hi=bool(opsel >> i & 1)) for i, s in enumerate(srcs[:2]))
      return self.vwrite(dst, "u32", f"{a}.astype(u32) * {b}.astype(u32) + {self.src(srcs[2], 'u32', lit)}")
    entry = self.vop.get(name)
    if entry is None: raise Unsupported("not implemented")
    t_d, t_s, expr = entry
    if name in sem.ACCUMULATE: srcs = srcs[:len(t_s) - 1] + [Reg(256 + dst)]
    if name in sem.LITERAL_K: srcs = srcs[:2] + [Reg(255)]
    if len(srcs) < len(t_s): raise Unsupported(f"needs {len(t_s)} sources")
    if clamp and t_d[0] != "f" and name not in ("ADD_NC_U32", "SUB_NC_U32", "ADD_NC_I32", "SUB_NC_I32"):
      raise Unsupported("integer clamp")
    if any(opsel >> i & 1 and WIDTH[t] != 16 for i, t in enumerate(t_s)) or (opsel & 8 and WIDTH[t_d] != 16):
      raise Unsupported("op_sel on a 32-bit operand")
    vals = {}
    for i, (s, t) in enumerate(zip(srcs, t_s)):
      vals["abc"[i]] = self.src(s, t, lit, hi=bool(opsel >> i & 1) and WIDTH[t] == 16, neg=bool(neg >> i & 1),
                                abs_=bool(abs_ >> i & 1))
    for k, code in vals.items(): self.out(f"{k} = {code}")
    if t_d[0] == "f": expr = self.float_out(t_d, expr, omod, clamp)
    elif omod: raise Unsupported("output modifier on an integer op")
    elif clamp: expr = self.int_clamp(name, expr)
    self.vwrite(dst, t_d, expr, hi=bool(opsel >> 3 & 1) and WIDTH[t_d] == 16)

  @staticmethod
  def int_clamp(name:str, expr:str) -> str:
    """Integer clamp: saturate instead of wrapping (computed in int64)."""
    op = "+" if "ADD" in name else "-"
    lo, hi = (0, 2**32 - 1) if name.endswith("U32") else (-2**31, 2**31 - 1)
    return f"np.clip(a.astype(np.int64) {op} b.astype(np.int64), {lo}, {hi})"

  def carry_op(self, name:str, dst:int, srcs:list[Reg], lit, sdst:int, cin_reg:int, clamp:bool):
    """32-bit add/sub with carry (borrow) out, and in for the _CI_ forms; wrapping uint32 math, carry from compares."""
    if clamp: raise Unsupported("clamp on a carry op")
    a, b = (self.src(s, "u32", lit) for s in srcs[:2])
    if name.startswith("SUBREV"): a, b = b, a
    self.out(f"a = {a}")
    self.out(f"b = {b}")
    add = name.startswith("ADD")
    if "_CI_" in name:
      self.out(f"_i = unpack(S[{cin_reg}][w])")
      self.out(f"_r = a {'+' if add else '-'} b {'+' if add else '-'} _i")
      carry = "(_r < a) | (_i & (_r == a))" if add else "(b > a) | (_i & (b == a))"
    else:
      self.out(f"_r = a {'+' if add else '-'} b")
      carry = "_r < a" if add else "b > a"
    self.out(f"_c = {carry}")
    self.vwrite(dst, "u32", "_r")
    self.sgpr_mask_write(sdst, "_c")

  def vop1(self, inst, name):
    n = strip(name)
    lit = getattr(inst, "literal", None)
    if n == "READFIRSTLANE_B32":
      d = inst.vdst.offset
      self.out("_l = np.where(m.any(axis=1), m.argmax(axis=1), 0)")
      return self.swrite(d, "u32", f"V[{inst.src0.offset - 256}][w][np.arange(n), _l]") if inst.src0.offset >= 256 else \
             self.swrite(d, "u32", self.raw(inst.src0, 32, lit, vec=False))
    if n == "SWAP_B32":
      s, d = inst.src0.offset - 256, inst.vdst.offset - 256
      self.out(f"_t = V[{s}][w]")
      self.out(f"vw(V, {s}, w, V[{d}][w], m, full)")
      return self.out(f"vw(V, {d}, w, _t, m, full)")
    d, srcs, opsel = self.e32_halves(n, inst.vdst.offset - 256, [inst.src0])
    self.valu(n, d, srcs, lit, *(self.dpp_mods or (0, 0)), opsel=opsel)

  def e32_halves(self, n:str, dst:int, srcs:list) -> tuple[int, list, int]:
    """16-bit e32 operands v[128+n] are high halves (errata true16-e32); not under DPP (its src0 is permuted
    separately) nor for ops whose destination is also a source or whose K literal is an operand."""
    entry = self.vop.get(n)
    if entry is None or self.dpp_mods is not None or n in sem.ACCUMULATE or n in sem.LITERAL_K: return dst, srcs, 0
    return errata.true16(entry, dst, srcs)

  def vop2(self, inst, name):
    n = strip(name)
    lit = getattr(inst, "literal", None)
    if n in ("DOT2ACC_F32_F16", "DOT2ACC_F32_BF16"):
      return self.dot2(n, inst.vdst.offset - 256, [inst.src0, inst.vsrc1, Reg(inst.vdst.offset)], lit, 0, 3, 0, 0)
    d, srcs, opsel = self.e32_halves(n, inst.vdst.offset - 256, [inst.src0, inst.vsrc1])
    self.valu(n, d, srcs, lit, *(self.dpp_mods or (0, 0)), opsel=opsel)

  def vop3(self, inst, name):
    n = strip(name)
    lit = getattr(inst, "literal", None)
    srcs = [inst.src0, inst.src1, inst.src2]
    if n.startswith("CMP"): return self.vcmp(n, srcs, lit, inst.vdst.offset, inst.neg, inst.abs)
    if n.startswith("S_"):  # RDNA4's v_s_exp_f32 etc.: a VALU op on one scalar, its result in an SGPR
      if inst.neg or inst.abs or inst.omod or inst.clmp or inst.opsel: raise Unsupported("modifiers on a scalar-result VALU op")
      return self.sop_common(n, inst.vdst.offset, [inst.src0], lit)
    if n == "READLANE_B32":
      return self.swrite(inst.vdst.offset, "u32",
                         f"V[{inst.src0.offset - 256}][w][np.arange(n), {self.raw(inst.src1, 32, lit, vec=False)} & 31]")
    if n == "WRITELANE_B32":
      d = inst.vdst.offset - 256
      self.out(f"_l = unpack(u32(1) << ({self.raw(inst.src1, 32, lit, vec=False)} & 31))")
      return self.out(f"vw(V, {d}, w, {self.raw(inst.src0, 32, lit, vec=True)}, _l, False)  # EXEC does not apply")
    mask = inst.src2.offset if n in ("CNDMASK_B32", "CNDMASK_B16", "ADD_CO_CI_U32", "SUB_CO_CI_U32", "SUBREV_CO_CI_U32") else VCC
    self.valu(n, inst.vdst.offset - 256, srcs, lit, inst.neg, inst.abs, inst.opsel, inst.omod, bool(inst.clmp), mask)

  def vop3sd(self, inst, name):
    n = strip(name)
    lit = getattr(inst, "literal", None)
    srcs = [inst.src0, inst.src1, inst.src2]
    mask = inst.src2.offset if "_CI_" in n else VCC
    self.valu(n, inst.vdst.offset - 256, srcs, lit, inst.neg, 0, 0, inst.omod, bool(inst.clmp), mask, sdst=inst.sdst.offset)

  def vopc_enc(self, inst, name):
    self.vcmp(strip(name), [inst.src0, inst.vsrc1], getattr(inst, "literal", None), VCC, *(self.dpp_mods or (0, 0)))

  def vcmp(self, n:str, srcs, lit, sdst:int, neg:int, abs_:int):
    x = n.startswith("CMPX_")
    parts = n.split("_")  # CMP[X], cond, type
    if len(parts) != 3 or parts[2] not in sem.CMP_TYPES: raise Unsupported("not implemented")
    cond, t = parts[1], sem.CMP_TYPES[parts[2]]
    if cond == "CLASS":
      a = self.src(srcs[0], t, lit, neg=bool(neg & 1), abs_=bool(abs_ & 1))
      expr = f"cmp_class({a}, {self.src(srcs[1], 'u32', lit)})"
    else:
      expr = sem.compare_expr(cond, t)
      if expr is None: raise Unsupported("not implemented")
      self.out(f"a = {self.src(srcs[0], t, lit, neg=bool(neg & 1), abs_=bool(abs_ & 1))}")
      self.out(f"b = {self.src(srcs[1], t, lit, neg=bool(neg & 2), abs_=bool(abs_ & 2))}")
    self.sgpr_mask_write(EXEC if x else sdst, expr)

  def dot2(self, n:str, dst:int, srcs, lit, opsel:int, opsel_hi:int, neg:int, neg_hi:int):
    t = "bf16" if n.endswith("BF16") else "f16"
    halves = []
    for i in range(2):
      lo = self.src(srcs[i], t, lit, hi=bool(opsel >> i & 1), neg=bool(neg >> i & 1))
      hi = self.src(srcs[i], t, lit, hi=bool(opsel_hi >> i & 1), neg=bool(neg_hi >> i & 1))
      halves.append((lo, hi))
    self.out(f"_p0 = {halves[0][0]}.astype(f32) * {halves[1][0]}.astype(f32)")
    self.out(f"_p1 = {halves[0][1]}.astype(f32) * {halves[1][1]}.astype(f32)")
    c = self.src(srcs[2], "f32", lit, neg=bool(neg >> 2 & 1))
    self.vwrite(dst, "f32", self.float_out("f32", f"({c} + _p0) + _p1", 0, False))

  def vop3p(self, inst, name):
    n = strip(name)
    lit = getattr(inst, "literal", None)
    srcs = [inst.src0, inst.src1, inst.src2]
    opsel, opsel_hi = inst.opsel, inst.opsel_hi | (inst.opsel_hi2 << 2)
    d = inst.vdst.offset - 256
    if n.startswith("WMMA_"): return self.wmma(n, d, srcs, inst)
    if n in ("DOT2_F32_F16", "DOT2_F32_BF16"):
      if inst.clmp: raise Unsupported("clamp")
      return self.dot2(n, d, srcs, lit, opsel, opsel_hi, inst.neg, inst.neg_hi)
    if n.startswith("FMA_MIX"): return self.fma_mix(n, d, srcs, lit, opsel, opsel_hi, inst.neg, inst.neg_hi, bool(inst.clmp))
    if n not in self.packed: raise Unsupported("not implemented")
    if inst.clmp: raise Unsupported("clamp on packed math")
    t, expr = self.packed[n]
    nsrc = 3 if "FMA" in n or "MAD" in n else 2
    for half, sel, ng in ((0, opsel, inst.neg), (1, opsel_hi, inst.neg_hi)):
      vals = {}
      for i in range(nsrc):
        raw = self.packed_raw(srcs[i], lit, t != "f16")
        code = typed(raw, t, bool(sel >> i & 1))
        if ng >> i & 1:
          if t != "f16": raise Unsupported("neg on integer packed math")
          code = f"(-{code})"
        vals["abc"[i]] = code
      for k, code in vals.items(): self.out(f"{k} = {code}")
      self.out(f"_h{half} = {'fbits16' if t == 'f16' else 'bits32'}({expr}) & 0xffff")
    self.vwrite(d, "b32", "_h0 | (_h1 << 16)")

  def packed_raw(self, r:Reg, lit, integer:bool=False) -> str:
    """Raw 32 bits of a packed operand; an inline constant as hardware reads it (errata vop3p-inline)."""
    bits = _const_bits(r.offset, 16)
    if bits is not None:
      return f"u32(0x{errata.packed_inline(bits, _const_bits(r.offset, 32), r.offset > 208, integer):x})"
    return self.raw(r, 32, lit, vec=True)

  def fma_mix(self, n, d, srcs, lit, opsel, opsel_hi, neg, absm, clamp):
    vals = []
    for i, s in enumerate(srcs):
      t = "f16" if opsel_hi >> i & 1 else "f32"
      code = self.src(s, t, lit, hi=bool(opsel >> i & 1) and t == "f16", neg=bool(neg >> i & 1), abs_=bool(absm >> i & 1))
      vals.append(f"{code}.astype(f32)" if t == "f16" else code)
    r = f"fma32({', '.join(vals)})"
    if n == "FMA_MIX_F32": return self.vwrite(d, "f32", self.float_out("f32", r, 0, clamp))
    self.vwrite(d, "f16", self.float_out("f16", f"{r}.astype(f16)", 0, clamp), hi=n == "FMA_MIXHI_F16")

  # name -> (A/B element kind, C/D kind, VGPRs of A and B, VGPRs of C and D); RDNA4's are rdna4.WMMA
  WMMA = {"WMMA_F32_16X16X16_F16": ("f16", "f32", 8, 8), "WMMA_F32_16X16X16_BF16": ("bf16", "f32", 8, 8),
          "WMMA_F16_16X16X16_F16": ("f16", "f16", 8, 8), "WMMA_I32_16X16X16_IU8": ("iu8", "i32", 4, 8)}

  def wmma(self, n, d, srcs, inst):
    """Matrix multiply-accumulate over the wave: A, B and C/D in the VGPR counts of the family's layout."""
    if n not in (table:=rdna4.WMMA if self.arch == rdna4.FAMILY else self.WMMA): raise Unsupported("not implemented")
    kind_in, kind_out, nab, ncd = table[n]
    if kind_in != "iu8" and (inst.neg or inst.neg_hi): raise Unsupported("neg modifiers on WMMA")
    if kind_in != "iu8" and inst.clmp: raise Unsupported("clamp on a float WMMA")
    if self.arch == rdna4.FAMILY and inst.opsel: raise Unsupported("op_sel on an RDNA4 WMMA")
    regs = []
    for s, cnt in zip(srcs, (nab, nab, ncd)):
      if not 256 <= s.offset < 512: raise Unsupported("WMMA operands must be VGPRs")
      regs.append("[" + ", ".join(f"V[{s.offset - 256 + j}][w]" for j in range(cnt)) + "]")
    signed = (bool(inst.neg & 1), bool(inst.neg & 2))  # iu8: NEG_LO bits mark A and B as signed
    self.out(f"_d = wmma({regs[0]}, {regs[1]}, {regs[2]}, {kind_in!r}, {kind_out!r}, {bool(inst.opsel & 4)}, {signed}, "
             f"{bool(inst.clmp)}, {self.arch!r})")
    for j in range(ncd): self.out(f"vw(V, {d + j}, w, _d[{j}], m, full)")

  def vopd(self, inst, name):
    lit = getattr(inst, "literal", None)
    dx, dy = inst.vdstx.offset - 256, inst.vdsty.offset - 256
    results = []
    for tag, op, s0, s1, d in (("x", inst.opx, inst.srcx0, inst.vsrcx1, dx), ("y", inst.opy, inst.srcy0, inst.vsrcy1, dy)):
      n = rdna4.rdna3_name(op.name)[len("V_DUAL_"):]
      srcs = [s0] if n == "MOV_B32" else [s0, s1]
      if n == "CNDMASK_B32":
        self.out(f"_{tag} = np.where(unpack(S[106][w]), {self.src(s1, 'b32', lit)}, {self.src(s0, 'b32', lit)}).astype(u32)")
        results.append((d, f"_{tag}"))
        continue
      if n in ("DOT2ACC_F32_F16", "DOT2ACC_F32_BF16"): raise Unsupported(f"{n.lower()} in VOPD")
      entry = self.vop.get(n)
      if entry is None: raise Unsupported(f"{n.lower()} in VOPD")
      t_d, t_s, expr = entry
      if n in sem.ACCUMULATE: srcs = srcs + [Reg(256 + d)]
      if n in sem.LITERAL_K: srcs = srcs + [Reg(255)]
      vals = {"abc"[i]: self.src(s, t, lit) for i, (s, t) in enumerate(zip(srcs, t_s))}
      for k, v in vals.items(): self.out(f"{k} = {v}")
      if t_d[0] == "f": expr = self.float_out(t_d, expr, 0, False)
      self.out(f"_{tag} = {'fbits32' if t_d == 'f32' else 'bits32'}({expr})")
      results.append((d, f"_{tag}"))
    for d, v in results: self.out(f"vw(V, {d}, w, {v}, m, full)")  # both ops read their sources before either writes

  # *** SALU ***
  def swrite(self, d:int, t:str, expr:str):
    if d == NULL: return
    if d >= 128 and d != SCC: raise Unsupported(invalid_operand(Reg(d, 1)) or f"scalar destination {describe(Reg(d))}")
    if WIDTH[t] == 64:
      self.out(f"_t = as_u64({expr})")
      self.out(f"S[{d}][w] = lo32(_t)")
      self.out(f"S[{d+1}][w] = hi32(_t)")
    else: self.out(f"S[{d}][w] = {FBITS.get(t, 'bits32')}({expr})")  # a 16-bit float: zero-extended
    if d == EXEC: self.out("m, full = em(S[126][w])")

  def scc(self, expr:str): self.out(f"S[253][w] = ({expr}).astype(u32)")

  def sop_common(self, n:str, dst:int, srcs:list[Reg], lit):
    if n in sem.SOP_SCC_IN:
      t_d, t_s, expr, scc = sem.SOP_SCC_IN[n]
      self.out("scc = S[253][w]")
      if re.search(r"\bd\b", expr): self.out(f"d = {typed(self.raw(Reg(dst), WIDTH[t_d], None, False), t_d)}")
    elif n in self.sop:
      t_d, t_s, expr, scc = self.sop[n]
      # s_bitset*, s_fmac (the destination's old value)
      if re.search(r"\bd\b", expr): self.out(f"d = {self.src(Reg(dst), t_d, None, vec=False)}")
    else: raise Unsupported("not implemented")
    for i, (s, t) in enumerate(zip(srcs, t_s)):
      t, hi = split_hi(t)
      self.out(f"{'abc'[i]} = {self.src(s, t, lit, vec=False, hi=hi)}")
    self.out(f"d = {self.float_out(t_d, expr, 0, False) if t_d[0] == 'f' else expr}")
    if scc: self.scc(scc)
    self.swrite(dst, t_d, "d")

  def sop1(self, inst, name):
    n = strip(name)
    lit = getattr(inst, "literal", None)
    d = inst.sdst.offset
    if n.endswith("_SAVEEXEC_B32"):
      op = n[:-len("_SAVEEXEC_B32")]
      if op not in sem.SAVEEXEC: raise Unsupported("not implemented")
      self.out(f"a = {self.raw(inst.ssrc0, 32, lit, vec=False)}")
      self.out("e = S[126][w].copy()")
      self.out(f"S[126][w] = bits32({sem.SAVEEXEC[op]})")
      self.scc("S[126][w] != 0")
      self.swrite(d, "u32", "e")
      return self.out("m, full = em(S[126][w])")
    if n == "GETPC_B64": return self.swrite(d, "u64", f"np.full(n, st.pgm + {self.pc + 4}, u64)")
    if name == rdna4.BARRIER_SIGNAL: return self.barrier(inst)
    if n in ("SETPC_B64", "SWAPPC_B64", "RFE_B64"): raise Unsupported("indirect branches are not implemented")
    self.sop_common(n, d, [inst.ssrc0], lit)

  def sop2(self, inst, name):
    n = strip(name)
    k = [Reg(255)] if n in sem.LITERAL_K else []  # s_fmaak/s_fmamk: the literal K is a third source
    self.sop_common(n, inst.sdst.offset, [inst.ssrc0, inst.ssrc1, *k], getattr(inst, "literal", None))

  def sopc(self, inst, name):
    n = strip(name)
    lit = getattr(inst, "literal", None)
    parts = n.split("_")
    if parts[0] == "BITCMP0" or parts[0] == "BITCMP1":
      w64 = parts[1] == "B64"
      a = self.raw(inst.ssrc0, 64 if w64 else 32, lit, vec=False)
      b = self.raw(inst.ssrc1, 32, lit, vec=False)
      bit = f"(({a} >> ({b} & {63 if w64 else 31}){'.astype(u64)' if w64 else ''}) & 1)"
      return self.scc(f"{bit} == {0 if parts[0] == 'BITCMP0' else 1}")
    if len(parts) != 3 or parts[0] != "CMP": raise Unsupported("not implemented")
    t = sem.CMP_TYPES.get(parts[2])
    expr = sem.compare_expr(parts[1], t) if t else None
    if expr is None: raise Unsupported("not implemented")
    self.out(f"a = {typed(self.raw(inst.ssrc0, WIDTH[t], lit, vec=False, t=t), t)}")
    self.out(f"b = {typed(self.raw(inst.ssrc1, WIDTH[t], lit, vec=False, t=t), t)}")
    self.scc(expr)

  def sopk(self, inst, name):
    n = strip(name)
    d = inst.sdst.offset
    k = inst.simm16
    sk = k - (1 << 16) if k & 0x8000 else k
    if n == "MOVK_I32": return self.swrite(d, "u32", f"np.full(n, {sk & 0xffffffff}, u32)")
    if n == "CMOVK_I32": return self.swrite(d, "u32", f"np.where(S[253][w] != 0, u32({sk & 0xffffffff}), S[{d}][w])")
    cur = self.raw(Reg(d), 32, None, vec=False)
    if n.startswith("CMPK_"):
      _, cond, typ = n.split("_")
      expr = sem.compare_expr(cond, sem.CMP_TYPES[typ])
      if expr is None: raise Unsupported("not implemented")
      self.out(f"a = {cur}{'.view(i32)' if typ == 'I32' else ''}")
      self.out(f"b = {'i32' if typ == 'I32' else 'u32'}({sk if typ == 'I32' else k})")
      return self.scc(expr)
    if n == "ADDK_I32":
      self.out(f"a = {cur}.view(i32)")
      self.out(f"b = i32({sk})")
      self.out("d = a + b")
      self.scc("((a < 0) == (b < 0)) & ((d < 0) != (a < 0))")
      return self.swrite(d, "i32", "d")
    if n == "MULK_I32": return self.swrite(d, "i32", f"{cur}.view(i32) * i32({sk})")
    raise Unsupported("not implemented")

  def barrier(self, inst):
    """A wave at a barrier waits (block_barrier) until its workgroup's live waves are all at one."""
    if op_name(inst) != "S_BARRIER" and (why:=rdna4.barrier_problem(inst)): raise Unsupported(why)
    return None

  def sopp(self, inst, name):
    if name == "S_ENDPGM": return "-1"
    if name in BARRIERS: return self.barrier(inst)
    if name == "S_SENDMSG":
      if inst.simm16 & 0xff == MSG_DEALLOC_VGPRS: return None
      raise Unsupported(f"message {inst.simm16:#x}")
    if name in BRANCHES:
      tgt = branch_target(self.pc, inst)
      if tgt not in self.index: raise Unsupported("branch target outside the decoded code")
      t = self.index[tgt]
      if name == "S_BRANCH": return str(t)
      f = self.index[self.pc + 4]
      cond = {"S_CBRANCH_SCC0": "S[253][w] == 0", "S_CBRANCH_SCC1": "S[253][w] != 0", "S_CBRANCH_VCCZ": "S[106][w] == 0",
              "S_CBRANCH_VCCNZ": "S[106][w] != 0", "S_CBRANCH_EXECZ": "S[126][w] == 0", "S_CBRANCH_EXECNZ": "S[126][w] != 0"}[name]
      self.out(f"_b = {cond}")
      return f"{t} if _b.all() else ({f} if not _b.any() else np.where(_b, {t}, {f}))"
    if name == "S_CODE_END": raise Unsupported("executed s_code_end (fell past s_endpgm)")
    raise Unsupported("not implemented")

  # *** memory ***
  def smem(self, inst, name):
    n = strip(name)
    kind = rdna4.SMEM_KINDS.get(n)  # RDNA4's sub-dword loads (RDNA3 has no such SMEM op)
    if not n.startswith("LOAD_B") and kind is None: raise Unsupported("not implemented")
    ndw = 1 if kind else int(n[len("LOAD_B"):]) // 32
    base = f"r64(S[{inst.sbase.offset}][w], S[{inst.sbase.offset + 1}][w])"
    soff = "" if inst.soffset.offset == NULL else f" + {self.raw(inst.soffset, 32, None, vec=False)}"
    self.out(f"_r = sload(st, {base}{plus64(imm_offset(inst))}{soff}, {ndw}, {self.pc}, {name.lower()!r}, {kind or 'u32'})")
    d = inst.sdata.offset
    for j in range(ndw):
      if d + j != NULL: self.out(f"S[{d + j}][w] = _r[{j}]")
    if d <= EXEC < d + ndw: self.out("m, full = em(S[126][w])")

  def mem_common(self, n:str):
    """(is_load, element kind, dword count, d16 half) from a memory op's stripped name (segment prefix removed)."""
    kinds = {"U8": "u8", "I8": "i8", "U16": "u16", "I16": "i16", "B8": "u8", "B16": "u16"}
    op, _, size = n.rpartition("_")
    d16 = "hi" if "D16_HI" in op else ("lo" if "D16" in op else None)
    if size in kinds: return op.startswith("LOAD"), kinds[size], 1, d16
    if size in ("B32", "B64", "B96", "B128"): return op.startswith("LOAD"), "u32", int(size[1:]) // 32, d16
    raise Unsupported("not implemented")

  def load_write(self, d:int, kind:str, ndw:int, d16:str|None):
    if d16:
      hi = d16 == "hi"
      return self.out(f"vw16(V, {d}, w, _r[0], m, full, {hi})")
    for j in range(ndw): self.out(f"vw(V, {d + j}, w, _r[{j}], m, full)")

  def store_data(self, data:int, kind:str, ndw:int, d16:str|None) -> str:
    if kind == "u32": return "[" + ", ".join(f"V[{data + j}][w]" for j in range(ndw)) + "]"
    shift = " >> 16" if d16 == "hi" else ""
    return f"[(V[{data}][w]{shift}).astype({kind})]"

  def vmem(self, inst, name, seg:str, addr:str):
    n = strip(name)[len(seg) + 1:]
    if "ATOMIC" in n or "LDS" in n or "ADDTID" in n: raise Unsupported("not implemented")
    load, kind, ndw, d16 = self.mem_common(n)
    fn = "scload" if seg == "SCRATCH" else "gload"
    if load:
      self.out(f"_r = {fn}(st, w, {addr}, m, full, {kind}, {ndw}, {self.pc}, {name.lower()!r})")
      return self.load_write(inst.vdst.offset - 256, kind, ndw, d16)
    data = self.store_data(inst.data.offset - 256, kind, ndw, d16)
    self.out(f"{'scstore' if seg == 'SCRATCH' else 'gstore'}(st, w, {addr}, m, full, {data}, {self.pc}, {name.lower()!r})")

  def glob(self, inst, name):
    off = imm_offset(inst)
    v = inst.addr.offset - 256
    if inst.saddr.offset == NULL:
      addr = f"r64(V[{v}][w], V[{v+1}][w]){plus64(off)}"
    else:
      s = inst.saddr.offset
      addr = f"r64(S[{s}][w], S[{s+1}][w])[:, None] + V[{v}][w].astype(u64){plus64(off)}"
    self.vmem(inst, name, "GLOBAL", addr)

  def flat(self, inst, name):
    """FLAT addresses are treated as global ones: the LDS and private apertures are not modelled."""
    if (off:=imm_offset(inst)) < 0: raise Unsupported("negative FLAT offset")
    if inst.saddr.offset != NULL: raise Unsupported("an SGPR base on a FLAT-segment access")
    v = inst.addr.offset - 256
    self.vmem(inst, name, "FLAT", f"r64(V[{v}][w], V[{v+1}][w]){plus64(off)}")

  def scratch(self, inst, name):
    off = imm_offset(inst)
    parts = [f"V[{inst.addr.offset - 256}][w]"] if inst.sve else []
    if inst.saddr.offset != NULL: parts.append(f"{self.raw(inst.saddr, 32, None, vec=False)}[:, None]")
    parts.append(f"u32({off & 0xffffffff})")
    self.vmem(inst, name, "SCRATCH", " + ".join(parts))

  def ds(self, inst, name):
    n = strip(name)[3:] if name.startswith("DS_") else strip(name)
    a = f"V[{inst.addr.offset - 256}][w]"
    off = inst.offset0 | (inst.offset1 << 8)
    pc, nm = self.pc, name.lower()
    if "2ADDR" in n:
      load = n.startswith("LOAD")
      if n.startswith("STOREXCHG"): raise Unsupported("not implemented")
      ndw = 2 if n.endswith("B64") else 1
      scale = (8 if ndw == 2 else 4) * (64 if "STRIDE64" in n else 1)
      a0, a1 = f"{a} + u32({inst.offset0 * scale})", f"{a} + u32({inst.offset1 * scale})"
      if load:
        self.out(f"_r0 = ldsload(st, w, {a0}, m, full, u32, {ndw}, {pc}, {nm!r})")
        self.out(f"_r1 = ldsload(st, w, {a1}, m, full, u32, {ndw}, {pc}, {nm!r})")
        self.out("_r = _r0 + _r1")
        return self.load_write(inst.vdst.offset - 256, "u32", 2 * ndw, None)
      d0, d1 = inst.data0.offset - 256, inst.data1.offset - 256
      self.out(f"ldsstore(st, w, {a0}, m, full, {self.store_data(d0, 'u32', ndw, None)}, {pc}, {nm!r})")
      return self.out(f"ldsstore(st, w, {a1}, m, full, {self.store_data(d1, 'u32', ndw, None)}, {pc}, {nm!r})")
    if n in ("BPERMUTE_B32", "PERMUTE_B32"):
      fn = "bpermute" if n == "BPERMUTE_B32" else "permute"
      self.out(f"_r = {fn}(({a} + u32({off})) >> 2, V[{inst.data0.offset - 256}][w], m)")
      return self.out(f"vw(V, {inst.vdst.offset - 256}, w, _r, m, full)")
    if n.startswith(("LOAD", "STORE")) and "ADDTID" not in n and "XCHG" not in n:
      if "_D16" in n:  # DS names put D16 last (LOAD_U8_D16_HI): reorder to the VMEM form (LOAD_D16_HI_U8)
        op, size, *d16 = n.split("_")
        n = "_".join([op, *d16, size])
      load, kind, ndw, d16 = self.mem_common(n)
      addr = f"{a} + u32({off})"
      if load:
        self.out(f"_r = ldsload(st, w, {addr}, m, full, {kind}, {ndw}, {pc}, {nm!r})")
        return self.load_write(inst.vdst.offset - 256, kind, ndw, d16)
      return self.out(f"ldsstore(st, w, {addr}, m, full, {self.store_data(inst.data0.offset - 256, kind, ndw, d16)}, {pc}, {nm!r})")
    atom = {"ADD_U32": "add", "SUB_U32": "sub", "MIN_I32": "min_i", "MAX_I32": "max_i", "MIN_U32": "min_u",
            "MAX_U32": "max_u", "AND_B32": "and", "OR_B32": "or", "XOR_B32": "xor", "ADD_F32": "add_f",
            "MIN_F32": "min_f", "MAX_F32": "max_f", "STOREXCHG_B32": "xchg"}
    rtn = "_RTN_" in n
    key = n.replace("_RTN", "")
    atom |= rdna4.DS_ATOMICS if self.arch == rdna4.FAMILY else {}
    if key in atom:
      self.out(f"_r = ldsatomic(st, w, {a} + u32({off}), m, full, V[{inst.data0.offset - 256}][w], {atom[key]!r}, {pc}, {nm!r})")
      if rtn: self.out(f"vw(V, {inst.vdst.offset - 256}, w, _r, m, full)")
      return None
    raise Unsupported("not implemented")
