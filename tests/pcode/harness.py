"""Conformance runs: RDNA3 (or RDNA4) instructions assembled with tinygrad's DSL into batched kernels, run on the executor's
numpy and native (C) paths, and compared bit for bit with the pseudocode evaluator (interp.py).

A kernel loads every operand once: each lane's record (an image of v0..v255) fills the source registers (one per
value class and source position, v4..v34) and the destinations (v36..v255) with their old values; each wave's
record fills the scalar sources (one per class and position), VCC, EXEC and SCC (s12..s43). Then every case of the
batch is one instruction writing its own destination (plus, for an instruction that writes VCC, EXEC or SCC, the
few SALU moves that capture and restore them), under the wave's EXEC pattern (all lanes, some, none). At the end
EXEC is set to all lanes, the captured SGPRs are moved into VGPRs and the destinations stored. One kernel holds a
few hundred instructions, so the C path's compile is paid per batch, not per instruction.

Lanes are evaluated one by one with the instruction's pseudocode; cross-lane instructions (v_readlane, v_permlane16,
...) once per wave with the wave's registers. Results compare bit for bit, except: NaNs the manual leaves unspecified
(numbers.py: any quiet NaN matches) and the approximate instructions of readings.TOLERANCE (within their ulps).
"""
from __future__ import annotations
import contextlib, dataclasses, enum, importlib, os, re, struct, zlib
import numpy as np
from tinygrad.renderer.amd.dsl import s, v, ttmp, VCC_LO, VCC_HI, EXEC_LO, INV_2PI, Reg
from tinygrad.runtime.autogen.amd.common import OpType
from pcode import interp, numbers as N, operands as O, readings
from pcode.parse import PcodeSyntaxError

FAMILIES = ["SOP1", "SOP2", "SOPC", "SOPK", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P", "DS", "VINTERP"]
OPSEL = ("VOP3", "VINTERP")               # encodings whose op_sel field picks 16-bit halves (the others: true16 names)
SALU = ("SOP1", "SOP2", "SOPC", "SOPK")
ARCHS = ("rdna3", "rdna4")

def _tables(arch:str) -> tuple:
  """tinygrad's DSL, opcode enums, pseudocode and operand tables of an ISA family."""
  mod = lambda m: importlib.import_module(f"tinygrad.runtime.autogen.amd.{arch}.{m}")
  return mod("ins"), mod("enum"), mod("str_pcode").PCODE, mod("operands").OPERANDS

# the ISA family being run (run_family's arch; `using` switches them): its DSL I, enums E, pseudocode and operands
ARCH = "rdna3"
I, E, PCODE, OPERANDS = _tables(ARCH)
CALLS = interp.calls_for(PCODE)

@contextlib.contextmanager
def using(arch:str):
  """The module's tables set to another ISA family for the duration (the harness reads them as globals)."""
  global ARCH, I, E, PCODE, OPERANDS, CALLS
  saved = (ARCH, I, E, PCODE, OPERANDS, CALLS)
  if arch != ARCH:
    ARCH, (I, E, PCODE, OPERANDS) = arch, _tables(arch)
    CALLS = interp.calls_for(PCODE)
  try: yield
  finally: ARCH, I, E, PCODE, OPERANDS, CALLS = saved
WAVE = 32
SHOW = 3                                  # mismatching results a detail quotes
RSRC1 = 0x3 << 16 | 0x3 << 18 | 1 << 23   # f32 and f16/f64 denormals kept, round to nearest even, IEEE_MODE
RSRC2 = 2 << 1 | 1 << 7                    # two user SGPRs (the kernarg pointer), workgroup id x in s2

# *** register layout ***
CLASSES32 = ["f16", "bf16", "b16", "f32", "b32"]
SRC_VREG:dict[tuple[str, int], int] = {}
_r = 4
for _p in range(3):
  for _c in CLASSES32: SRC_VREG[(_c, _p)], _r = _r, _r + 1
for _p in range(3):
  for _c in ("f64", "b64"): SRC_VREG[(_c, _p)], _r = _r, _r + 2
SRC_VREG[("b128", 2)], _r = _r, _r + 4   # v_mqsad_u32_u8's S2
DEST_V0 = 36
assert _r <= DEST_V0
SREC = 12                                 # the wave record's first SGPR
SRC_SREG:dict[tuple[str, int], int] = {}
for _p in range(3):
  SRC_SREG[("f64", _p)], SRC_SREG[("b64", _p)] = SREC + 4 * _p, SREC + 4 * _p + 2
DOLD_S = SREC + 12                        # s24:25, the old value of scalar destinations
for _p in range(3):
  for _i, _c in enumerate(CLASSES32): SRC_SREG[(_c, _p)] = SREC + 14 + 5 * _p + _i
VCC_IN, EXEC_IN, SCC_IN = SREC + 29, SREC + 30, SREC + 31  # s41, s42, s43
CAPTURE_S0, CAPTURE_S1 = 44, 106          # s44..s105 hold captured scalar results
LANE16, LANE_WIDE = 2, 3                  # DS: v2 = lane * 16, v3 = lane * WIDE_SLOT (the lane's LDS slot offsets)
WIDE_SLOT = 528                           # a lane's slot for the STRIDE64 forms (offset1 * 256 or * 512, 16 bytes each)
LDS_GRANULE, LDS_SIZE_SHIFT, LDS_BYTES = 512, 15, 65536

class Untestable(Exception):
  """The harness cannot run or evaluate this instruction (the message says why)."""

# *** instructions ***

@dataclasses.dataclass
class Src:
  pos: int
  field: str
  cls: str
  bits: int
  kinds: tuple[str, ...]   # allowed operand kinds: v (VGPR), s (SGPR), c (inline constant), l (literal), m (lane mask)

@dataclasses.dataclass
class OpInfo:
  """What the harness needs to know of one opcode: its pseudocode and operands, and how its results are seen."""
  family: str
  op: enum.Enum
  name: str
  text: str
  prog: interp.Program|None
  why: str|None                     # untestable: the reason
  srcs: list[Src]
  dst: str|None                     # 'v' (VGPR), 's' (SGPR), 'exec' (v_cmpx e64), None
  dst_bits: int
  dst_cls: str
  writes: set[str]
  reads: set[str]
  wave_level: bool
  sdst: bool                        # VOP3SD's second (mask) destination
  literal_k: bool                   # FMAAK/FMAMK: the literal K is SIMM32
  scalar: bool = False              # RDNA4's V_S_* (pseudo-scalar): one SGPR value per wave, evaluated once per wave

def names_in(ast) -> tuple[set[str], set[str]]:
  """(names assigned, names read) of a pseudocode AST."""
  writes, reads = set(), set()
  def root(e):
    while e[0] in ("field", "index", "slice", "part"): e = e[1]
    return e[1] if e[0] == "name" else None
  def expr(e):
    if not isinstance(e, tuple): return
    if e[0] == "name": reads.add(e[1])
    for x in e[1:]:
      if isinstance(x, tuple): expr(x)
      elif isinstance(x, list):
        for y in x:
          if isinstance(y, tuple): expr(y)
  for st in interp.walk_statements(ast):
    if st[0] == "assign":
      targets = st[2][1] if st[2][0] == "concat" else [st[2]]
      for t in targets:
        if (r:=root(t)) is not None: writes.add(r)
        if st[1] != "=": expr(t)
        elif t[0] != "name": expr_sub(t, expr)
      expr(st[3])
    elif st[0] in ("expr", "return"): expr(st[1])
    elif st[0] == "if":
      for c, _ in st[1]: expr(c)
    elif st[0] == "for": expr(st[2]), expr(st[3])
  return writes, reads

def expr_sub(t, expr):
  """The index expressions inside an assignment target (D0.u64[laneId] reads laneId)."""
  while t[0] in ("field", "index", "slice", "part"):
    for x in t[2:]:
      if isinstance(x, tuple): expr(x)
    t = t[1]

def src_kinds(family:str, name:str, field:str, optype, bits:int) -> tuple[str, ...]:
  if optype in (OpType.OPR_SREG,) and bits == 64 and field.startswith("src"): return ("m",)
  if optype == OpType.OPR_SRC_VGPR or family == "VINTERP": return ("v",)  # VINTERP: quad sources are other lanes' VGPRs
  if optype in (OpType.OPR_SSRC, OpType.OPR_SSRC_LANESEL, OpType.OPR_SREG): return ("s", "c", "l")
  if field == "vsrc1" or field == "vsrc0": return ("v",)
  if family in SALU: return ("s", "c", "l")
  if name in ("V_READLANE_B32", "V_READFIRSTLANE_B32_E32") and field == "src0": return ("v",)
  return ("v", "s", "c", "l")

def op_info(family:str, op) -> OpInfo:
  name = op.name
  text, why = readings.pcode_for(family, name, PCODE.get(op), ARCH)
  prog = None
  if why is None:
    try: prog = interp.Program(text, CALLS)
    except PcodeSyntaxError as e: why = f"the pseudocode does not parse: {e}"
    except interp.EvalError as e: why = f"the evaluator cannot compile it: {e}"
  ops = OPERANDS.get(op, {})
  srcs = []
  for pos, fields in enumerate((("src0", "ssrc0", "vsrc0"), ("src1", "ssrc1", "vsrc1"), ("src2",))):
    for f in fields:
      if f in ops:
        fmt, bits, optype = ops[f]
        cls = O.operand_class(fmt, bits)
        if family in ("VOP3", "VOP3SD", "VOP3P") and f.startswith("vsrc"):  # VOP1/VOP2 operands in the VOP3 encoding
          f, optype = f[1:], OpType.OPR_SRC
        if family == "VOP3P" and "MIX" in name: cls = "f16"  # op_sel_hi (default 1) reads f16 halves
        srcs.append(Src(pos, f, cls, bits, src_kinds(family, name, f, optype, bits)))
  if family == "SOPK" and "sdst" in ops: srcs = []  # S0 is the destination register itself (readings)
  if family == "DS":  # DATA, DATA2: VGPRs only (the address register is the harness's)
    srcs = [Src(pos, f, "b128" if ops[f][1] > 64 else O.operand_class(*ops[f][:2]), ops[f][1], ("v",))
            for pos, f in enumerate(("data0", "data1")) if f in ops]
  dst, dst_bits, dst_cls = None, 0, "b32"
  for f in ("vdst", "sdst"):
    if f in ops and not (family == "VOP3SD" and f == "sdst"):
      fmt, bits, optype = ops[f]
      dst_bits, dst_cls = bits, O.operand_class(fmt, bits)
      dst = "exec" if optype == OpType.OPR_EXEC else "s" if (f == "sdst" or optype == OpType.OPR_SREG) else "v"
      break
  if dst == "s" and dst_cls == "b64" and ops.get("vdst", ops.get("sdst"))[0].name == "FMT_NUM_M64": dst_bits = 32
  writes, reads = names_in(prog.ast) if prog else (set(), set())
  wave_level = "VGPR" in reads or "VGPR" in writes
  for src in srcs:  # a source the pseudocode reads as VGPR[...][SRCn] (VINTERP, v_cvt_f32_fp8) must be a VGPR
    if f"SRC{src.pos}" in reads and family not in SALU: src.kinds = ("v",)
    if is_pseudo_scalar(family, name): src.kinds = tuple(k for k in src.kinds if k != "v")  # V_S_*: scalar sources
  return OpInfo(family, op, name, text or "", prog, why, srcs, dst, dst_bits, dst_cls, writes, reads, wave_level,
                family == "VOP3SD" and "sdst" in ops, "FMAAK" in name or "FMAMK" in name, is_pseudo_scalar(family, name))

def is_pseudo_scalar(family:str, name:str) -> bool:
  """RDNA4's V_S_EXP_F32 & co.: VOP3 ops on scalar sources whose result is one SGPR value (not a lane mask)."""
  return family == "VOP3" and name.startswith("V_S_")

def opcodes(family:str) -> list:
  return list(getattr(E, f"{family}Op"))

# *** cases: one instruction encoding with its operand kinds ***

@dataclasses.dataclass
class Case:
  info: OpInfo
  kinds: dict[int, str]
  consts: dict[int, object]
  simm: int = 0                       # SOPK's 16-bit immediate, FMAAK's K
  label: str = ""
  halves: int = 0                     # 16-bit operands in high halves: bit i source i, bit 3 the destination (VOP3
                                      # op_sel; in e32 encodings v[128 + n], the true16 name of v[n]'s high half)

def variants(info:OpInfo, rng, full:bool, index:int) -> list[Case]:
  """The operand-kind variants to run: all sources in registers, then the other kinds one source at a time (CI:
  one of them, rotating over the opcodes; full: every kind at every source)."""
  base = {s.pos: ("v" if "v" in s.kinds else s.kinds[0]) for s in info.srcs}
  out = [Case(info, dict(base), {}, label="regs")]
  others = [(s.pos, k) for s in info.srcs for k in s.kinds if k not in (base[s.pos], "m", "v")]
  if not full: others = [others[index % len(others)]] if others else []
  if full: others += [(pos, "c0") for pos, k in others if k == "c"]  # the full tier also gives every source the constant 0
  for pos, k in others:
    src = next(x for x in info.srcs if x.pos == pos)
    c = Case(info, {**base, pos: k[0]}, {}, label=f"src{pos}={'sgpr' if k == 's' else 'const' if k[0] == 'c' else 'literal'}")
    if k == "c0": c.consts[pos] = 0
    elif k == "c": c.consts[pos] = pick_constant(rng, src.cls, info.name if pos == 1 else "")
    if k == "l":
      if info.literal_k or (info.family == "VOP3P"): continue  # one literal slot (K); packed literals: readings
      c.consts[pos] = O.pick_literal(rng, src.cls)
    out.append(c)
  if (h:=high_halves(info)):  # the high halves of 16-bit operands: op_sel (VOP3), v[128 + n] (e32)
    out.append(Case(info, dict(base), {}, label="op_sel" if info.family in OPSEL else "true16", halves=h))
  return out

def high_halves(info:OpInfo) -> int:
  """The halves bits a 16-bit instruction can select: its 16-bit VGPR sources and a 16-bit VGPR destination."""
  if info.family not in ("VOP1", "VOP2", "VOPC", "VOP3", "VINTERP") or "S0" in info.writes: return 0
  if info.wave_level and not lane_vgprs(info): return 0
  if info.family == "VOP3" and "D0" in info.reads: return 0  # which op_sel bit selects an accumulator's half is open
  bits = sum(1 << s_.pos for s_ in info.srcs if s_.bits == 16 and "v" in s_.kinds)
  if info.dst == "v" and info.dst_bits == 16: bits |= 8
  return bits

def pick_constant(rng, cls:str, name:str=""):
  if "CLASS" in name: cls = "b32"  # the class mask is bits (readings.CHOICES class-mask)
  if cls in ("f16", "f32", "f64") and rng.random() < 0.7: return O.FLOAT_CONSTANTS[rng.integers(len(O.FLOAT_CONSTANTS))]
  return O.INT_CONSTANTS[rng.integers(len(O.INT_CONSTANTS))]

# *** kernels ***

class Alloc:
  """Registers of one kernel: destination VGPRs v36..v255 (16-bit e32 destinations below v128, where v[128+n] would
  name a high half), capture SGPRs s44..s105, and at the end one VGPR per capture SGPR (flush) to store it from."""
  def __init__(self): self.lo, self.hi, self.s, self.lds = DEST_V0, 128, CAPTURE_S0, 0
  def vgpr(self, n:int, low:bool=False) -> int|None:
    if low or self.hi + n + self.flush_regs() > 256:
      if self.lo + n > 128: return None
      r, self.lo = self.lo, self.lo + n
    else: r, self.hi = self.hi, self.hi + n
    return r if self.flush_base() is not None else None
  def sgpr(self, n:int=1) -> int|None:
    r = self.s + (self.s & 1 if n == 2 else 0)
    if r + n > CAPTURE_S1: return None
    self.s = r + n
    return r if self.flush_base() is not None else None
  def flush_regs(self) -> int: return (self.s - CAPTURE_S0 + 1) & ~1
  def flush_base(self) -> int|None:
    """Where the captured SGPRs are moved to before the stores: after the high destinations, or the low ones."""
    n = self.flush_regs()
    if self.hi + n <= 256: return self.hi
    if self.lo + n <= 128: return self.lo
    return None

@dataclasses.dataclass
class Placed:
  """A case placed in a kernel: its code and where its results are."""
  case: Case
  code: list
  inst_index: int                    # which of `code` is the instruction under test
  operands: dict                     # pos -> (kind, register or constant)
  outputs: dict                      # output name -> ('v', reg, nregs) or ('s', sgpr, nregs) (flushed to VGPRs)
  priv: int|None = None              # v_swap: the private copy of the source register
  flush: int = 0                     # the VGPR that holds s44 after the flush (assemble sets it)
  before: list = dataclasses.field(default_factory=list)  # run with every lane before the cases (LDS set-up)
  after: list = dataclasses.field(default_factory=list)   # and after them (LDS read-back)
  lds: tuple = ()                    # DS: (region base, lane slot bytes, chunk offsets, address offset, offset0, offset1)

class Kernel:
  def __init__(self): self.placed, self.alloc = [], Alloc()
  @staticmethod
  def copy(k:"Kernel") -> "Kernel":
    """A kernel to run (and drop failing cases from) without changing the packed one the other path runs."""
    out = Kernel()
    out.placed = list(k.placed)
    out.alloc.lo, out.alloc.hi, out.alloc.s, out.alloc.lds = k.alloc.lo, k.alloc.hi, k.alloc.s, k.alloc.lds
    return out

def operand(case:Case, src:Src):
  """The DSL operand for a source and what it holds: (dsl value, (kind, register or bits))."""
  k = case.kinds[src.pos]
  nregs = max(1, src.bits // 32)
  if k == "v":
    r = SRC_VREG.get((src.cls, src.pos)) or SRC_VREG[(src.cls, 2)]
    return (v[r] if nregs == 1 else v[r:r + nregs - 1]), ("v", r)
  if k == "s":
    r = SRC_SREG[(src.cls if src.cls != "b128" else "b64", src.pos)]
    return (s[r] if nregs == 1 else s[r:r + nregs - 1]), ("s", r)
  if k == "m": return s[VCC_IN], ("s", VCC_IN)
  c = case.consts[src.pos]
  if k == "c":
    dsl = Reg(INV_2PI.offset, nregs) if c == "INV_2PI" else c  # sized, so the DSL's register-count check passes
    return dsl, ("c", c)
  return c, ("l", c)

def place(kernel:Kernel, case:Case) -> bool:
  """Add a case to the kernel; False when its registers do not fit (the caller starts a new kernel)."""
  info, a = case.info, kernel.alloc
  saved = (a.lo, a.hi, a.s, a.lds)
  try: p = _place(info, case, a)
  except _Full:
    a.lo, a.hi, a.s, a.lds = saved
    return False
  kernel.placed.append(p)
  return True

class _Full(Exception): pass

def _need(r):
  if r is None: raise _Full()
  return r

def _place(info:OpInfo, case:Case, a:Alloc) -> Placed:
  fam = info.family
  if fam == "DS": return _place_ds(info, case, a)
  kw, operands, outputs, pre = {}, {}, {}, []
  e32_16 = fam in ("VOP1", "VOP2", "VOPC") and (info.dst_bits == 16 or any(x.bits == 16 for x in info.srcs))
  for src in info.srcs:
    dsl, what = operand(case, src)
    if case.halves >> src.pos & 1 and fam not in OPSEL: dsl = v[what[1] + 128]  # true16: v[128 + n] is v[n].h
    kw[src.field] = dsl
    operands[src.pos] = what
  if case.halves and fam in OPSEL: kw["opsel"] = case.halves
  priv = None
  if "S0" in info.writes and fam not in SALU:  # v_swap writes its source register: give it a private copy
    priv = _need(a.vgpr(1, low=e32_16))
    pre.append(I.v_mov_b32_e32(v[priv], kw["src0"]))
    kw["src0"] = v[priv]
    outputs["S0"] = ("v", priv, 1)
  (_salu_destination if fam in SALU else _valu_destination)(info, case, a, kw, outputs, pre, e32_16)
  if info.literal_k: kw["literal"] = case.simm
  post = _captures(info, a, outputs)
  try: inst = getattr(I, info.name.lower())(**kw)
  except Exception as e: raise Untestable(f"the DSL cannot build it: {e}") from e
  return Placed(case, pre + [inst] + post, len(pre), operands, outputs, priv)

def _build_ds(info:OpInfo, kw:dict):
  """The DS instruction. tinygrad's table gives ds_cmpstore_rtn_b64/f64 a one-register vdst, though they return 64
  bits (RETURN_DATA.b64): the encoding names the first register either way, so those are built with it alone."""
  try: return getattr(I, info.name.lower())(**kw)
  except TypeError as e:
    if "vdst expects 1 register" not in str(e) or info.dst_bits != 64: raise
    return getattr(I, info.name.lower())(**{**kw, "vdst": v[kw["vdst"].offset - 256]})

def _salu_destination(info:OpInfo, case:Case, a:Alloc, kw:dict, outputs:dict, pre:list, _):
  """SDST (initialised with the wave's old value, for the instructions that read or partly write it), SCC in."""
  if info.dst == "s":
    n = max(1, info.dst_bits // 32)
    d = _need(a.sgpr(n))
    kw["sdst"] = s[d] if n == 1 else s[d:d + 1]
    pre.append(I.s_mov_b32(s[d], s[DOLD_S]) if n == 1 else I.s_mov_b64(s[d:d + 1], s[DOLD_S:DOLD_S + 1]))
    outputs["D0"] = ("s", d, n)
  if "SCC" in info.reads: pre.append(I.s_cmp_lg_u32(s[SCC_IN], 0))
  if info.family == "SOPK": kw["simm16"] = case.simm

def _valu_destination(info:OpInfo, case:Case, a:Alloc, kw:dict, outputs:dict, pre:list, e32_16:bool):
  """VDST (a VGPR, an SGPR for compares/readlane, EXEC for v_cmpx e64) and VOP3SD's SDST."""
  if info.dst == "v":
    n = max(1, info.dst_bits // 32)
    d = _need(a.vgpr(n, low=e32_16))
    kw["vdst"] = v[d + 128] if case.halves & 8 and info.family not in OPSEL else v[d] if n == 1 else v[d:d + n - 1]
    outputs["D0"] = ("v", d, n)
  elif info.dst == "s":
    d = _need(a.sgpr(1))
    kw["vdst"] = s[d]
    outputs["D0"] = ("s", d, 1)
    if info.scalar: pre.append(I.s_mov_b32(s[d], s[DOLD_S]))  # the old value a 16-bit result may keep
  elif info.dst == "exec": kw["vdst"] = EXEC_LO
  if info.sdst:
    d = _need(a.sgpr(1))
    kw["sdst"] = s[d]
    outputs["SDST"] = ("s", d, 1)

def _captures(info:OpInfo, a:Alloc, outputs:dict) -> list:
  """The SALU moves after the instruction that capture the VCC, EXEC or SCC it writes (and restore VCC and EXEC)."""
  fam, post = info.family, []
  if (fam == "VOPC" and "D0" in info.writes) or ("VCC" in info.writes and not info.sdst):  # e32 compares write VCC
    outputs["VCC"] = ("s", _need(a.sgpr(1)), 1)
    post += [I.s_mov_b32(s[outputs["VCC"][1]], VCC_LO), I.s_mov_b32(VCC_LO, s[VCC_IN])]
  if "EXEC" in info.writes:
    outputs["EXEC"] = ("s", _need(a.sgpr(1)), 1)
    post += [I.s_mov_b32(s[outputs["EXEC"][1]], EXEC_LO), I.s_mov_b32(EXEC_LO, s[EXEC_IN])]
  if "SCC" in info.writes and fam in SALU:
    outputs["SCC"] = ("s", _need(a.sgpr(1)), 1)
    post.append(I.s_cselect_b32(s[outputs["SCC"][1]], 1, 0))
  return post

# *** DS: each lane owns a slot of the case's LDS region, set from its lane record before the cases and read back ***

def ds_shape(info:OpInfo) -> tuple[int, list[int], bool]:
  """(lane slot bytes, offsets of the 16-byte chunks the case may touch, whether offset0/offset1 address separately)."""
  n = info.name
  if "STRIDE64" in n: return WIDE_SLOT, [0, 512 if n.endswith("B64") else 256], True
  return 16, [0], "2ADDR" in n

def ds_offsets(info:OpInfo, simm:int) -> tuple[int, int]:
  """The case's offset0/offset1 (2ADDR: each scaled by the access size, staying inside the chunks), or the small
  byte offset of a single-address access (aligned to its size, inside the 16-byte slot)."""
  slot, chunks, two = ds_shape(info)
  if "STRIDE64" in info.name: return simm & 1, 1
  if two: return (simm & 1, (simm >> 1) & 1) if info.name.endswith("B64") else (simm & 3, (simm >> 2) & 3)
  size = max(1, max([s_.bits for s_ in info.srcs] + [info.dst_bits]) // 8)
  size = 16 if size > 8 else size
  return (simm % (16 // size)) * size, 0

def _place_ds(info:OpInfo, case:Case, a:Alloc) -> Placed:
  kw, operands, outputs, pre = {}, {}, {}, []
  slot, chunks, two = ds_shape(info)
  base = a.lds
  if base + WAVE * slot > LDS_BYTES: raise _Full()
  a.lds = base + WAVE * slot
  lane_reg = LANE_WIDE if slot != 16 else LANE16
  mem = _need(a.vgpr(4 * len(chunks)))
  outputs["MEM"] = ("v", mem, 4 * len(chunks))
  off = lambda x: {"offset0": x & 0xff, "offset1": x >> 8}
  before = [I.ds_store_b128(addr=v[lane_reg], data0=v[mem + 4 * i:mem + 4 * i + 3], **off(base + c)) for i, c in enumerate(chunks)]
  after = [I.ds_load_b128(vdst=v[mem + 4 * i:mem + 4 * i + 3], addr=v[lane_reg], **off(base + c)) for i, c in enumerate(chunks)]
  o0, o1 = ds_offsets(info, case.simm)
  if two:  # 8-bit offsets each: the region's base goes into the address
    addr = _need(a.vgpr(1))
    pre.append(I.v_add_nc_u32_e32(v[addr], base, v[lane_reg]))
    kw.update(addr=v[addr], offset0=o0, offset1=o1)
  else: kw.update(addr=v[lane_reg], **off(base + o0))
  for src in info.srcs:
    dsl, what = operand(case, src)
    kw[src.field] = dsl
    operands[src.pos] = what
  if info.dst == "v":
    n = max(1, info.dst_bits // 32)
    d = _need(a.vgpr(n))
    kw["vdst"] = v[d] if n == 1 else v[d:d + n - 1]
    outputs["D0"] = ("v", d, n)
  try: inst = _build_ds(info, kw)
  except Exception as e: raise Untestable(f"the DSL cannot build it: {e}") from e
  lds = (base, slot, chunks, base if two else base + o0, o0, o1)
  return Placed(case, pre + [inst], len(pre), operands, outputs, before=before, after=after, lds=lds)

class LaneMemory:
  """One lane's LDS bytes (its chunks), for MEM[...] in the pseudocode; anything else is outside the model. Stored
  unspecified NaNs are remembered by their byte range (addr -> (bytes, format))."""
  def __init__(self, chunks:dict[int, int]):
    self.bytes = {a + i: (v >> (8 * i)) & 0xff for a, v in chunks.items() for i in range(16)}
    self.loose:dict[int, tuple[int, str]] = {}
  def read(self, addr:int, n:int) -> int:
    try: bits = sum(self.bytes[addr + i] << (8 * i) for i in range(n))
    except KeyError: raise interp.EvalError(f"MEM[0x{addr:x}] outside this lane's LDS slot") from None
    fields = []
    for a, (m, fmt) in self.loose.items():
      if addr <= a and a + m <= addr + n: fields.append((8 * (a - addr), 8 * m, fmt))
      elif a < addr + n and a + m > addr: raise interp.EvalError("reads part of an unspecified NaN in memory")
    return interp.with_fields(bits, tuple(fields))
  def write(self, addr:int, n:int, bits:int, fields:tuple=()):
    for i in range(n):
      if addr + i not in self.bytes: raise interp.EvalError(f"MEM[0x{addr + i:x}] written outside this lane's LDS slot")
      self.bytes[addr + i] = (bits >> (8 * i)) & 0xff
    self.loose = {a: v for a, v in self.loose.items() if a + v[0] <= addr or a >= addr + n}
    for lo, w, fmt in fields: self.loose[addr + lo // 8] = (w // 8, fmt)

NAMES_OFFSET = re.compile(r"\bOFFSET[01]?\b")

def _expect_ds(p:Placed, inputs:Inputs, w:int, out:dict):
  """Each active lane runs the pseudocode on its own slot. ADDR is the address register when the pseudocode adds the
  offset itself (MEM[ADDR + OFFSET]), else the address the instruction accesses (readings.CHOICES ds-addr)."""
  info = p.case.info
  base, slot, chunks, addr_off, o0, o1 = p.lds
  exec_mask = inputs.W[w][EXEC_IN - SREC]
  names_offset = bool(NAMES_OFFSET.search(info.text))
  for l in range(WAVE):
    g = w * WAVE + l
    old = {k: lane_value(inputs, g, o[1], o[2]) for k, o in p.outputs.items()}
    if not exec_mask >> l & 1:
      for k in p.outputs: out[k].append((old[k], ()))
      continue
    lane_addr = l * slot
    vaddr = lane_addr + (base if "2ADDR" in info.name else 0)
    mem = LaneMemory({lane_addr + base + c: (old["MEM"] >> (128 * i)) & ((1 << 128) - 1) for i, c in enumerate(chunks)})
    offset = (o1 << 8 | o0) if "2ADDR" in info.name else addr_off
    # RDNA4's pseudocode: addr = CalcDsAddr(vgpr_a.b32, offset.b32), the address register and the instruction's offset
    vars = {"ADDR": vaddr if names_offset else lane_addr + addr_off, "ADDR_BASE": vaddr, "OFFSET": offset,
            "vgpr_a": vaddr, "offset": offset,
            "OFFSET0": o0, "OFFSET1": o1, "RETURN_DATA": old.get("D0", 0), "laneId": l, "M0": 0, "WAVE_MODE_IEEE": ieee_mode()}
    for src in info.srcs: vars["DATA" if src.pos == 0 else "DATA2"] = src_bits(p, src, inputs, g, w)
    env = interp.Env(vars, mem=mem)
    info.prog.run(env)
    if "D0" in out: out["D0"].append(_bits(env.vars["RETURN_DATA"], 32 * p.outputs["D0"][2]))
    got = [mem.read(lane_addr + base + c, 16) for c in chunks]
    loose = tuple((lo + 128 * i, w, fmt) for i, x in enumerate(got) for lo, w, fmt in interp.loose_fields(x))
    out["MEM"].append((sum(int(x) << (128 * i) for i, x in enumerate(got)), loose))

def assemble(kernel:Kernel, n_lanes:int) -> tuple[bytes, dict[int, int]]:
  """The kernel's code and a map from each case instruction's byte offset to its index in kernel.placed."""
  wg = s[2] if ARCH == "rdna3" else ttmp[9]  # the workgroup ID (gfx12: in a ttmp register)
  code = [smem_load(s[4:11], s[0:1], 0), *wait(), I.s_lshl_b32(s[3], wg, 7),
          smem_load(s[12:27], s[8:9], 0, s[3]), smem_load(s[28:43], s[8:9], 64, s[3]),
          I.v_mad_u32_u24(v[1], wg, WAVE, v[0]), I.v_lshlrev_b32_e32(v[1], 10, v[1])]
  regs = _ranges(kernel)
  for lo, hi in [(4, DEST_V0)] + regs:
    for r in range(lo, hi, 4): code.append(global_access(I.global_load_b128, v[r:r + 3], s[6:7], 4 * r))
  code += wait()
  if kernel.alloc.lds:  # v2, v3: this lane's LDS slot offset (16-byte and stride-64 slots)
    code += [I.v_lshlrev_b32_e32(v[LANE16], 4, v[0]), I.v_mul_u32_u24_e32(v[LANE_WIDE], WIDE_SLOT, v[0])]
  code += [x for p in kernel.placed for x in p.before] + wait()
  code += [I.s_mov_b32(VCC_LO, s[VCC_IN]), I.s_mov_b32(VCC_HI, 0), I.s_mov_b32(EXEC_LO, s[EXEC_IN])]
  where = {}
  size = sum(len(i.to_bytes()) for i in code)
  for idx, p in enumerate(kernel.placed):
    for j, inst in enumerate(p.code):
      if j == p.inst_index: where[size] = idx
      size += len(inst.to_bytes())
    code += p.code
  code.append(I.s_mov_b32(EXEC_LO, -1))
  code += [x for p in kernel.placed for x in p.after] + wait()
  base = kernel.alloc.flush_base()
  for k in range(kernel.alloc.flush_regs()): code.append(I.v_mov_b32_e32(v[base + k], s[CAPTURE_S0 + k]))
  for p in kernel.placed: p.flush = base
  for lo, hi in regs + ([(base, base + kernel.alloc.flush_regs())] if kernel.alloc.flush_regs() else []):
    r = lo
    while r < hi:
      n = 4 if hi - r >= 4 else 2 if hi - r >= 2 else 1
      store = {4: I.global_store_b128, 2: I.global_store_b64, 1: I.global_store_b32}[n]
      code.append(global_access(store, v[r] if n == 1 else v[r:r + n - 1], s[4:5], 4 * r))
      r += n
  code.append(I.s_endpgm())
  return b"".join(i.to_bytes() for i in code), where

def wait() -> list:
  """Waits for every outstanding scalar, vector memory and LDS access (gfx12 counts them separately)."""
  if ARCH == "rdna3": return [I.s_waitcnt(simm16=0)]
  return [I.s_wait_kmcnt(simm16=0), I.s_wait_loadcnt(simm16=0), I.s_wait_dscnt(simm16=0)]

def smem_load(sdata, sbase, offset:int, soffset=None):
  """s_load_b256/b512 by the size of sdata (gfx12 names the immediate offset ioffset)."""
  fn = {8: I.s_load_b256, 16: I.s_load_b512}[sdata.sz]
  kw = {"offset" if ARCH == "rdna3" else "ioffset": offset}
  return fn(sdata=sdata, sbase=sbase, **kw) if soffset is None else fn(sdata=sdata, sbase=sbase, soffset=soffset, **kw)

def global_access(fn, data, saddr, offset:int):
  """A global load (data is VDST) or store (data is the stored VGPRs) at saddr + v1 + offset (gfx12: VGLOBAL)."""
  load = "LOAD" in fn.args[0].name  # the DSL's instructions are partials of (encoding, opcode)
  if ARCH == "rdna3": return fn(addr=v[1], saddr=saddr, offset=offset, **{"vdst" if load else "data": data})
  # gfx12's DSL sizes VADDR as 64 bits even with SADDR, where the hardware reads only v1 (the 32-bit offset)
  return fn(vaddr=v[1:2], saddr=saddr, ioffset=offset, **{"vdst" if load else "vsrc": data})

def _ranges(kernel:Kernel) -> list[tuple[int, int]]:
  """The destination VGPR ranges in use (loaded with their old values, then stored); the flush VGPRs after them are
  written before the stores, not loaded. A range ends at its last register: the flush may follow right after."""
  a, out = kernel.alloc, []
  if a.lo > DEST_V0: out.append((DEST_V0, a.lo))
  if a.hi > 128: out.append((128, a.hi))
  return out

# *** inputs ***

@dataclasses.dataclass
class Inputs:
  lanes: np.ndarray    # uint32 [n_lanes, 256]: each lane's VGPR image
  waves: np.ndarray    # uint32 [n_waves, 32]: each wave's s12..s43
  def __post_init__(self): self.L, self.W = self.lanes.tolist(), self.waves.tolist()  # Python ints, fast to index

def special_rows(cls:str, pos:int, n:int) -> list[int]:
  """n register values of a class where every special value meets every other across the three source positions:
  position p takes special (i * (2p + 1) + p) mod k; 16-bit classes pair two specials per register."""
  spec = O.SPECIAL.get(cls, O.SPECIAL["b32"] if cls != "b128" else O.SPECIAL["b64"])
  k = len(spec)
  pick = lambda i, p: spec[(i * (2 * p + 1) + p) % k]
  if cls in ("f16", "bf16", "b16"): return [pick(i + 7, pos) << 16 | pick(i, pos) for i in range(n)]
  if cls == "b128": return [pick(i, pos) << 64 | pick(i + 3, pos) for i in range(n)]
  return [pick(i, pos) for i in range(n)]

def old_specials(lanes:np.ndarray):
  """The first wave's destination registers (the old values partial writes keep, and DS memory) get float32 and
  float64 special values in a fixed pattern; the other waves keep random bits."""
  f32, f64 = O.SPECIAL["f32"], O.SPECIAL["f64"]
  for l in range(WAVE):
    for r in range(DEST_V0, 256, 2):
      k = (r // 2 + l) % 3
      if k == 0: lanes[l, r], lanes[l, r + 1] = f64[(r + l) % len(f64)] & 0xffffffff, f64[(r + l) % len(f64)] >> 32
      elif k == 1: lanes[l, r], lanes[l, r + 1] = f32[(r + l) % len(f32)], f32[(r + 3 * l + 1) % len(f32)]

def make_inputs(seed:int, n_waves:int, salu:bool) -> Inputs:
  """The same inputs for every kernel of a run (so a case's operands do not depend on which kernel it landed in):
  the first wave of lanes (VALU) or the first waves (SALU) hold the special values in a fixed arrangement, the rest
  specials and random values mixed. EXEC: all lanes, then random, then none (VALU), random per wave (SALU)."""
  rng = np.random.default_rng([seed, n_waves, salu])
  n = n_waves * WAVE
  lanes = rng.integers(0, 2**32, (n, 256), dtype=np.uint64).astype(np.uint32)
  put = lambda arr, col, vals, words: [arr.__setitem__((slice(None), col + w), [(x >> (32 * w)) & 0xffffffff for x in vals]) for w in range(words)]
  for (cls, pos), r in SRC_VREG.items():
    vals = special_rows(cls, pos, WAVE) + O.values(rng, cls, n - WAVE)
    if pos > 0 and cls != "b128":  # some random lanes repeat S0, so equal operands meet
      first = lanes[:, SRC_VREG[(cls, 0)]].astype(object)
      if O.CLASS_BITS[cls] == 64: first = first | lanes[:, SRC_VREG[(cls, 0)] + 1].astype(object) << 32
      same = rng.random(n) < 0.12
      vals = [int(f) if sm and g >= WAVE else x for g, (x, f, sm) in enumerate(zip(vals, first, same))]
    put(lanes, r, vals, max(1, O.CLASS_BITS[cls] // 32))
  old_specials(lanes)
  waves = rng.integers(0, 2**32, (n_waves, 32), dtype=np.uint64).astype(np.uint32)
  n_spec = n_waves // 2 if salu else 0
  for (cls, pos), r in SRC_SREG.items():
    vals = special_rows(cls, pos, n_spec) + O.values(rng, cls, n_waves - n_spec)
    put(waves, r - SREC, vals, max(1, O.CLASS_BITS[cls] // 32))
  put(waves, DOLD_S - SREC, O.values(rng, "b64", n_waves), 2)
  for w in range(n_waves):
    m = None if salu else [0xffffffff, None, 0][w] if w < 3 else None
    waves[w, EXEC_IN - SREC] = int(rng.integers(1, 2**32 - 1)) if m is None else m
    waves[w, SCC_IN - SREC] = int(rng.integers(0, 2))
  return Inputs(lanes, waves)

# *** running ***

def aligned(nbytes:int, align:int=4096) -> np.ndarray:
  raw = np.zeros(nbytes + align, np.uint8)
  off = (-raw.ctypes.data) % align
  return raw[off:off + nbytes]

@dataclasses.dataclass
class Ran:
  out: np.ndarray|None       # uint32 [n_lanes, 256]
  native: bool
  error: Exception|None
  base: int                  # the code's address (error messages name absolute PCs)
  def __post_init__(self): self.rows = self.out.tolist() if self.out is not None else None

def dispatch(code:bytes, inputs:Inputs, path:str, lds:int=0) -> Ran:
  """One dispatch of the kernel on a path ('numpy' or 'native'), one workgroup of one wave per wave record."""
  from mockgpu import system
  from mockgpu.memory import AddressSpace
  from mockgpu.emulators.rdna import Dispatch, run_dispatch
  n_waves = len(inputs.waves)
  img = aligned(len(code) + 256)
  img[:len(code)] = np.frombuffer(code, np.uint8)
  lane_in = aligned(inputs.lanes.nbytes)
  lane_in.view(np.uint32)[:] = inputs.lanes.reshape(-1)
  wave_in = aligned(max(inputs.waves.nbytes, 4096))
  wave_in.view(np.uint32)[:inputs.waves.size] = inputs.waves.reshape(-1)
  out = aligned(inputs.lanes.nbytes)
  args = aligned(256, 256)
  struct.pack_into("<QQQ", args, 0, out.ctypes.data, lane_in.ctypes.data, wave_in.ctypes.data)
  mem = AddressSpace("conformance")
  for b in (img, lane_in, wave_in, out, args): mem.map(b.ctypes.data, b.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  rsrc2 = RSRC2 | -(-lds // LDS_GRANULE) << LDS_SIZE_SHIFT
  d = Dispatch(ARCH, img.ctypes.data, RSRC1, rsrc2, 0, user, 0, 0, (WAVE, 1, 1), (n_waves, 1, 1), True)
  old = os.environ.get("MOCKGPU_RDNA_NATIVE")
  os.environ["MOCKGPU_RDNA_NATIVE"] = "0" if path == "numpy" else "1"
  before = system.stats[f"{ARCH}.native_launches"]
  try: st = run_dispatch(mem, d)
  except Exception as e: return Ran(None, False, e, img.ctypes.data)
  finally:
    if old is None: os.environ.pop("MOCKGPU_RDNA_NATIVE", None)
    else: os.environ["MOCKGPU_RDNA_NATIVE"] = old
  ran_c = system.stats[f"{ARCH}.native_launches"] > before
  assert ran_c == bool(st.native)
  return Ran(out.view(np.uint32).reshape(inputs.lanes.shape).copy(), ran_c, None, img.ctypes.data)

# *** expected values ***

def src_bits(p:Placed, src:Src, inputs:Inputs, g:int, w:int) -> int:
  """The bits source `src` supplies to lane g of wave w."""
  kind, x = p.operands[src.pos]
  words = max(1, src.bits // 32)
  if kind in ("v", "s"):
    row = inputs.L[g] if kind == "v" else inputs.W[w]
    r = x if kind == "v" else x - SREC
    if words == 1: return row[r]
    return sum(row[r + i] << (32 * i) for i in range(words))
  width = 64 if src.bits == 64 else 32
  if kind == "c":
    if p.case.info.family == "VOP3P": return readings.packed_constant_bits(x, src.cls, p.case.info.name)
    return O.constant_bits(x, src.cls if src.cls in ("f16", "f32", "f64") else "b32", width)
  return O.literal_bits(x, src.cls)

class WaveRegs:
  """VGPR[lane][reg] for cross-lane instructions: the source and destination registers of one wave."""
  def __init__(self, regs:dict[int, list[int]]): self.regs = regs
  def read(self, lane, reg):
    if reg not in self.regs: raise interp.EvalError(f"VGPR[{lane}][{reg}] is not a register this case set up")
    if not 0 <= lane < WAVE: raise interp.EvalError(f"lane {lane} of a wave32")
    return self.regs[reg][lane]
  def write(self, lane, reg, value):
    if reg not in self.regs or not 0 <= lane < WAVE: raise interp.EvalError(f"VGPR[{lane}][{reg}] written")
    self.regs[reg][lane] = value

def ieee_mode() -> int:
  """MODE.IEEE of the harness's waves: RSRC1's IEEE_MODE bit on RDNA3; RDNA4 has no IEEE mode."""
  return int(ARCH == "rdna3")

def base_vars(p:Placed, inputs:Inputs, w:int) -> dict:
  info, wave = p.case.info, inputs.W[w]
  vars = {"VCC": wave[VCC_IN - SREC], "EXEC": wave[EXEC_IN - SREC], "SCC": wave[SCC_IN - SREC] & 1,
          "WAVE_MODE_IEEE": ieee_mode(), "ROUND_MODE": 0, "M0": 0, "OPSEL": 0, "OPSEL_HI": 7, "NEG": 0, "NEG_HI": 0,
          "SIMM16": p.case.simm & 0xffff, "SIMM32": p.case.simm & 0xffffffff, "D1": 0}
  if info.family in SALU or info.scalar:
    dold = wave[DOLD_S - SREC] | wave[DOLD_S - SREC + 1] << 32
    vars["D0"] = dold & ((1 << max(32, info.dst_bits)) - 1)
    if info.family == "SOPK": vars["S0"] = dold & 0xffffffff if ARCH == "rdna3" else p.case.simm & 0xffff  # sopk-s0
  return vars

def lane_value(inputs:Inputs, g:int, reg:int, n:int) -> int:
  row = inputs.L[g]
  return row[reg] if n == 1 else sum(row[reg + i] << (32 * i) for i in range(n))

def expect(p:Placed, inputs:Inputs) -> dict:
  """Expected outputs: name -> list per lane ('v' outputs) or per wave ('s' outputs) of (bits, loose fields)."""
  info = p.case.info
  n_waves = len(inputs.waves)
  out = {k: [] for k in p.outputs}
  for w in range(n_waves):
    if info.family in SALU or info.scalar: _expect_salu(p, inputs, w, out)
    elif info.family == "DS": _expect_ds(p, inputs, w, out)
    elif info.wave_level and not lane_vgprs(info): _expect_wave(p, inputs, w, out)
    else: _expect_lanes(p, inputs, w, out)
  return out

def _expect_salu(p:Placed, inputs:Inputs, w:int, out:dict):
  info = p.case.info
  vars = base_vars(p, inputs, w)
  for src in info.srcs: vars[f"S{src.pos}"] = src_bits(p, src, inputs, w * WAVE, w)
  env = interp.Env(vars)
  info.prog.run(env)
  for name, o in p.outputs.items():
    if name == "D0": out[name].append(_bits(env.vars["D0"], 32 * o[2]))
    elif name == "SCC": out[name].append((int(interp.truthy(env.vars["SCC"])), ()))
    elif name == "EXEC": out[name].append((int(env.vars["EXEC"]) & 0xffffffff, ()))

def _bits(v, width:int):
  bits = interp.as_bits(v)
  return int(bits) & ((1 << width) - 1), tuple(f for f in interp.loose_fields(bits) if f[0] + f[1] <= width)

def _expect_lanes(p:Placed, inputs:Inputs, w:int, out:dict):
  info = p.case.info
  vars0 = base_vars(p, inputs, w)
  exec_mask = vars0["EXEC"]
  masks = {k: 0 for k in ("D0", "VCC", "EXEC", "SDST") if k in p.outputs and p.outputs[k][0] == "s"}
  whole_vcc = ("name", "VCC") in _assigned_targets(info)
  for l in range(WAVE):
    g = w * WAVE + l
    old = {k: lane_value(inputs, g, o[1], o[2]) for k, o in p.outputs.items() if o[0] == "v"}
    if not exec_mask >> l & 1:
      for k, o in p.outputs.items():
        if o[0] == "v": out[k].append((old[k], ()))
      continue
    halves = readings.halves_read(info.name, info.family, p.case.halves)
    vars = dict(vars0, laneId=l, D0=swap16(old.get("D0", 0)) if halves & 8 else old.get("D0", 0))
    for src in info.srcs:
      x = src_bits(p, src, inputs, g, w)
      vars[f"S{src.pos}"] = swap16(x) if halves >> src.pos & 1 else x
    env = interp.Env(vars, vgpr=wave_regs(p, inputs, w, halves, vars) if lane_vgprs(info) else None)
    info.prog.run(env)
    for k, o in p.outputs.items():
      if o[0] != "v": continue
      bits, loose = _bits(env.vars["D0" if k == "D0" else k], 32 * o[2])
      if k == "D0" and halves & 8: bits, loose = swap16(bits), tuple(((lo + 16) % 32, w_, f) for lo, w_, f in loose)
      out[k].append((bits, loose))
    bit = lambda name: int(env.vars[name]) >> l & 1
    if "D0" in masks: masks["D0"] |= bit("D0") << l
    if "VCC" in masks:  # VOPC's e32 compare result (D0) is VCC
      masks["VCC"] |= (bit("D0") if info.family == "VOPC" else int(interp.truthy(env.vars["VCC"])) if whole_vcc else bit("VCC")) << l
    if "EXEC" in masks: masks["EXEC"] |= bit("EXEC") << l
    if "SDST" in masks:
      sd = int(env.vars["D1"]) & 1 if "D1" in info.writes else int(interp.truthy(env.vars["VCC"])) if whole_vcc else bit("VCC")
      masks["SDST"] |= sd << l
  for k, m in masks.items(): out[k].append((m, ()))

def lane_vgprs(info:OpInfo) -> bool:
  """A per-lane instruction whose pseudocode reads its sources as VGPR[lane][SRCn] (VINTERP's quad lanes, RDNA4's
  v_cvt_f32_fp8): evaluated lane by lane with the wave's registers."""
  return info.wave_level and "laneId" in info.reads and "VGPR" not in info.writes

def wave_regs(p:Placed, inputs:Inputs, w:int, halves:int, vars:dict) -> "WaveRegs":
  """The wave's source registers for the pseudocode's VGPR[lane][SRCn] (every lane's value, active or not: the
  pseudocode reads the register), their halves exchanged where op_sel picks the high one; SRCn name them."""
  regs = {}
  for src in p.case.info.srcs:
    kind, r = p.operands[src.pos]
    vars[f"SRC{src.pos}"] = r
    swap = swap16 if halves >> src.pos & 1 else (lambda x: x)
    regs[r] = [swap(inputs.L[w * WAVE + l][r]) for l in range(WAVE)]
  return WaveRegs(regs)

def swap16(x:int) -> int:
  """A 32-bit register with its halves exchanged: the pseudocode's S0.f16 (bits 15:0) then reads the high half."""
  return (x >> 16 & 0xffff) | (x & 0xffff) << 16 | (x & ~0xffffffff)

def _assigned_targets(info:OpInfo) -> list:
  return [st[2] for st in interp.walk_statements(info.prog.ast) if st[0] == "assign"]

def _expect_wave(p:Placed, inputs:Inputs, w:int, out:dict):
  info = p.case.info
  vars = base_vars(p, inputs, w)
  regs = {}
  for src in info.srcs:
    kind, x = p.operands[src.pos]
    if kind == "v": regs[x] = [int(inputs.lanes[w * WAVE + l, x]) for l in range(WAVE)]
    vars[f"S{src.pos}"] = src_bits(p, src, inputs, w * WAVE, w)
    if src.pos == 0: vars["SRC0"] = x if kind == "v" else 0
  if "D0" in p.outputs and p.outputs["D0"][0] == "v":
    d = p.outputs["D0"][1]
    regs[d] = [int(inputs.lanes[w * WAVE + l, d]) for l in range(WAVE)]
    vars["VDST"] = d
  vars["D0"] = 0
  env = interp.Env(vars, vgpr=WaveRegs(regs))
  info.prog.run(env)
  for k, o in p.outputs.items():
    if o[0] == "v": out[k].extend((regs[o[1]][l], ()) for l in range(WAVE))
    else: out[k].append(_bits(env.vars["D0"], 32))

# *** comparing ***

def got_value(p:Placed, name:str, ran:Ran, i:int) -> int:
  """The result `name` of lane i ('v' outputs) or wave i ('s' outputs, read from the wave's first lane)."""
  o = p.outputs[name]
  row, r = (ran.rows[i], o[1]) if o[0] == "v" else (ran.rows[i * WAVE], p.flush + o[1] - CAPTURE_S0)
  return row[r] if o[2] == 1 else sum(row[r + j] << (32 * j) for j in range(o[2]))

def matches(got:int, want:int, loose:tuple, width:int, tol) -> bool:
  """got equals want bit for bit, except: an unspecified NaN field matches any quiet NaN of its format; a toleranced
  float result matches within its ulps."""
  mask = (1 << width) - 1
  for lo, w, fmt in loose:
    field = (got >> lo) & ((1 << w) - 1)
    if not (N.decode(field, fmt).is_nan() and N.is_quiet(field, fmt)): return False
    mask &= ~(((1 << w) - 1) << lo)
  if (got & mask) == (want & mask): return True
  if tol is None: return False
  ulps, fmt, at = tol
  field = ((1 << N.WIDTH[fmt]) - 1) << at
  rest = mask & ~field
  if (got & rest) != (want & rest): return False
  return ulp_distance((got & field) >> at, (want & field) >> at, fmt) <= ulps

def ulp_distance(a:int, b:int, fmt:str) -> int|float:
  """The number of representable values between two bit patterns of a float format (inf for NaN vs number)."""
  x, y = N.decode(a, fmt), N.decode(b, fmt)
  if x.is_nan() or y.is_nan(): return 0 if x.is_nan() and y.is_nan() else float("inf")
  top = 1 << (N.WIDTH[fmt] - 1)
  order = lambda bits: -(bits & (top - 1)) if bits & top else bits
  return abs(order(a) - order(b))

@dataclasses.dataclass
class CaseResult:
  placed: Placed
  status: str            # pass, mismatch, untestable
  detail: str = ""

def describe(p:Placed, inputs:Inputs, name:str, i:int, got:int, want:int) -> str:
  info = p.case.info
  o = p.outputs[name]
  where = f"lane {i}" if o[0] == "v" else f"wave {i}"
  w = i // WAVE if o[0] == "v" else i
  g = i if o[0] == "v" else i * WAVE
  ins = ", ".join(f"S{s_.pos}=0x{src_bits(p, s_, inputs, g, w):x}" for s_ in info.srcs)
  return (f"{info.name} [{p.case.label}] {name} {where} (EXEC 0x{int(inputs.waves[w, EXEC_IN - SREC]):08x}): "
          f"got 0x{got:x}, pseudocode 0x{want:x} ({ins})")

def check(p:Placed, ran:Ran, inputs:Inputs, memo:dict) -> CaseResult:
  info = p.case.info
  key = (id(p.case), id(inputs), repr(p.outputs), repr(p.operands))
  try:
    if (want:=memo.get(key)) is None: want = memo[key] = expect(p, inputs)
  # the instruction ran: an evaluator that cannot follow its pseudocode is the suite's failure, not a reason to skip it
  except interp.EvalError as e: return CaseResult(p, "error", f"the evaluator cannot run it: {e}")
  tol = readings.tolerance(info.name)
  if tol is not None:  # the toleranced result: bits 15:0, or 31:16 where the case writes the high half
    tol = (*tol, 16 if readings.halves_read(info.name, info.family, p.case.halves) & 8 else 0)
  bad = []
  for name, vals in want.items():
    width = 32 * p.outputs[name][2]
    for i, (bits, loose) in enumerate(vals):
      got = got_value(p, name, ran, i)
      if not matches(got, bits, loose, width, tol if name == "D0" else None):
        bad.append(describe(p, inputs, name, i, got, bits))
  if bad: return CaseResult(p, "mismatch", f"{len(bad)} results differ; first: " + "; ".join(bad[:SHOW]))
  return CaseResult(p, "pass")

# *** a family's run on one path ***

@dataclasses.dataclass
class OpResult:
  family: str
  name: str
  status: str      # pass, mismatch, error, untestable, unimplemented, numpy-only
  detail: str = ""
  cases: int = 0

_infos:dict[tuple[str, str], list[OpInfo]] = {}

def infos(family:str, arch:str|None=None) -> list[OpInfo]:
  """The opcodes of a family of the ISA being run (or of `arch`)."""
  with using(arch or ARCH):
    if (ARCH, family) not in _infos: _infos[(ARCH, family)] = [op_info(family, op) for op in opcodes(family)]
    return _infos[(ARCH, family)]

_probe:dict[str, dict] = {}

def implemented(family:str, name:str) -> tuple[bool, bool]:
  """(numpy, C) implement the opcode, per tests/rdna_coverage.py's probe of the two translators (given this
  harness's own encoding of the opcode where the probe's placeholder operands do not build)."""
  import rdna_coverage
  if ARCH not in _probe: _probe[ARCH] = rdna_coverage.report((32,)) if ARCH == "rdna3" else {}  # wave32 kernels
  probe = _probe[ARCH]
  r = probe.get((family, name))
  if r is None:
    info = next(i for i in infos(family) if i.name == name)
    try: inst = _place(info, Case(info, {s_.pos: ("v" if "v" in s_.kinds else s_.kinds[0]) for s_ in info.srcs}, {}), Alloc())
    except (Untestable, _Full): return False, False
    r = probe[(family, name)] = probe_translators(rdna_coverage, inst.code[inst.inst_index])
  return r

def probe_translators(rdna_coverage, inst) -> tuple[bool, bool]:
  from mockgpu.compiler.rdna.backends import numpy as translate, c as cgen
  np_tr, c_tr = translate.Translator([], False, False, ARCH, 32), cgen.CTranslator([], False, False, ARCH, 32)
  c_tr.names, c_tr.vregs = {}, {0}
  return (rdna_coverage.implemented(np_tr, inst, translate.Unsupported), rdna_coverage.implemented(c_tr, inst, cgen.NoNative))

def cases_for(family:str, seed:int, full:bool, only:set[str]|None=None) -> tuple[list[tuple[Case, bool]], dict[str, OpResult]]:
  """The cases to run, each with whether it runs on the C path too, and the results already known (untestable,
  unimplemented: the same on both paths)."""
  out, known = [], {}
  for i, info in enumerate(infos(family)):
    if only is not None and info.name not in only: continue
    np_ok, c_ok = implemented(family, info.name)
    if info.why is not None: known[info.name] = OpResult(family, info.name, "untestable", info.why)
    elif not np_ok: known[info.name] = OpResult(family, info.name, "unimplemented", "the numpy backend does not implement it")
    else:
      rng = np.random.default_rng([seed, zlib.crc32(info.name.encode())])  # per opcode: stable as the tables grow
      vs = variants(info, rng, full, i)
      for c in vs: c.simm = pick_simm(rng, info)
      if family in ("SOPK", "DS") or info.literal_k:  # the immediate is the operand: a few of them
        vs += [dataclasses.replace(vs[0], simm=pick_simm(rng, info), label=f"imm{j}") for j in range(3 if full else 2)]
      try:
        for c in vs: _place(info, c, Alloc())
      except Untestable as e:
        known[info.name] = OpResult(family, info.name, "untestable", str(e))
        continue
      # C translation costs ~10 ms of compiler time per instruction: the CI tier runs the registers variant of every
      # instruction on C and the other operand kinds on every fourth; the full tier runs every variant on both
      out += [(c, c_ok and (full or j == 0 or i % 4 == 0)) for j, c in enumerate(vs)]
  return out, known

def pick_simm(rng, info:OpInfo) -> int:
  if info.family == "DS": return int(rng.integers(0, 256))  # the offsets (ds_offsets)
  if info.literal_k: return O.values(rng, "f16" if info.name.endswith(("F16", "F16_E32")) else "f32", 1)[0] & 0xffffffff
  return [0, 1, 0x7fff, 0x8000, 0xffff, int(rng.integers(0, 1 << 16))][int(rng.integers(0, 6))]

def pack(cases:list[Case]) -> list[Kernel]:
  kernels, k = [], Kernel()
  for c in cases:
    if not place(k, c):
      kernels.append(k)
      k = Kernel()
      if not place(k, c): raise Untestable(f"{c.info.name}: does not fit an empty kernel")
  if k.placed: kernels.append(k)
  return kernels

def spans(kernel:Kernel, code_start:int) -> list[tuple[int, int, int]]:
  out, off = [], code_start
  for i, p in enumerate(kernel.placed):
    n = sum(len(x.to_bytes()) for x in p.code)
    out.append((off, off + n, i))
    off += n
  return out

def culprit(err:Exception, base:int, kernel:Kernel, where:dict) -> int|None:
  """The index of the case whose instruction raised err (from the PC its message names)."""
  text = str(err)
  m = re.search(r"kernel offset 0x([0-9a-f]+)", text)
  off = int(m.group(1), 16) if m else None
  if off is None and (m:=re.search(r"PC 0x([0-9a-f]+)", text)): off = int(m.group(1), 16) - base
  if off is None: return None
  start = min(where) if where else 0
  first = start - sum(len(x.to_bytes()) for x in kernel.placed[where[start]].code[:kernel.placed[where[start]].inst_index]) if where else 0
  for lo, hi, i in spans(kernel, first):
    if lo <= off < hi: return i
  return None

def run_kernel(kernel:Kernel, path:str, inputs:Inputs, results:list[CaseResult], memo:dict, missing:list[str]) -> bool:
  """Run a kernel, dropping the cases that raise (or that the C backend declines) until it runs; check the rest.
  Returns whether C ran it. Where C did not run for a reason that names none of the kernel's instructions (no C
  build: MOCKGPU_NATIVE=0, no compiler, a failed or timed-out build), the reason goes to `missing`."""
  from mockgpu.emulators.rdna import native
  kernel = Kernel.copy(kernel)
  while kernel.placed:
    code, where = assemble(kernel, len(inputs.waves) * WAVE)
    declined = dict(native.declined)
    ran = dispatch(code, inputs, path, kernel.alloc.lds)
    if ran.error is not None:
      i = culprit(ran.error, ran.base, kernel, where)
      if i is None: raise ran.error
      p = kernel.placed.pop(i)
      results.append(CaseResult(p, "error", f"{type(ran.error).__name__}: {ran.error}"))
      _rebuild(kernel)
      continue
    if path == "native" and not ran.native:
      why = [k for k, n in native.declined.items() if n > declined.get(k, 0)]
      hit = [i for i, p in enumerate(kernel.placed) if any(p.case.info.name in w or readings.base_name(p.case.info.name) in w for w in why)]
      if not hit:
        missing.append(f"C did not run a kernel of {len(kernel.placed)} cases: {'; '.join(why) or 'no reason recorded'}")
        hit = list(range(len(kernel.placed)))
      for i in reversed(hit):
        results.append(CaseResult(kernel.placed.pop(i), "numpy-only", f"the C backend declines it: {'; '.join(why)}"))
      _rebuild(kernel)
      continue
    for p in kernel.placed: results.append(check(p, ran, inputs, memo))
    return ran.native
  return False

def _rebuild(kernel:Kernel):
  cases = [p.case for p in kernel.placed]
  kernel.placed, kernel.alloc = [], Alloc()
  for c in cases: assert place(kernel, c)

PATHS = ("numpy", "native")

@dataclasses.dataclass
class FamilyRun:
  results: dict[str, dict[str, OpResult]]   # {path: {name: OpResult}}
  native_kernels: int                       # kernels the C backend ran (each one <arch>.native_launches)
  c_missing: list[str] = dataclasses.field(default_factory=list)  # C-path kernels that ran on numpy, not for a named instruction

def run_family(family:str, full:bool=False, seed:int=0, paths=PATHS, only:set[str]|None=None, arch:str="rdna3") -> FamilyRun:
  """Every opcode of a family (or the `only` ones) of an ISA family's tables on each path. The kernels of
  C-translated cases run on both paths with the same inputs (evaluated once); the others run on numpy and are
  numpy-only on the native path."""
  with using(arch): return _run_family(family, full, seed, paths, only)

def _run_family(family:str, full:bool, seed:int, paths, only:set[str]|None) -> FamilyRun:
  cases, known = cases_for(family, seed, full, only)
  n_waves = (128 if full else 48) if family in SALU else (16 if full else 3)
  both, numpy_only = pack([c for c, c_ok in cases if c_ok]), pack([c for c, c_ok in cases if not c_ok])
  c_names = {c.info.name for c, c_ok in cases if c_ok}
  results:dict[str, list[CaseResult]] = {p: [] for p in paths}
  memo:dict = {}
  inputs = make_inputs(seed, n_waves, family in SALU)
  c_runs, missing = 0, []
  for i, k in enumerate(both + numpy_only):
    for path in paths:
      if path == "native" and i >= len(both):
        results[path] += [CaseResult(p, "numpy-only", "the C backend does not translate it") for p in k.placed
                          if p.case.info.name not in c_names]
      else: c_runs += run_kernel(k, path, inputs, results[path], memo, missing)
  return FamilyRun({path: summarize(family, known, rs) for path, rs in results.items()}, c_runs, missing)

def summarize(family:str, known:dict[str, OpResult], results:list[CaseResult]) -> dict[str, OpResult]:
  """One result per opcode: the worst of its cases (error, mismatch, untestable, numpy-only, pass)."""
  out = {k: dataclasses.replace(v) for k, v in known.items()}
  order = {"error": 0, "mismatch": 1, "untestable": 2, "numpy-only": 3, "pass": 4}
  for r in results:
    name = r.placed.case.info.name
    cur = out.get(name)
    if cur is None: out[name] = OpResult(family, name, r.status, r.detail, 1)
    else:
      cur.cases += 1
      if order[r.status] < order[cur.status]: cur.status, cur.detail = r.status, r.detail
  return out
