"""The C backend: a whole RDNA kernel as one C function that runs a wave from a block until s_barrier or s_endpgm.

The numpy backend (backends/numpy.py) advances every wave of a dispatch together, so each instruction costs a few
numpy calls whatever the number of waves: cheap per lane on large dispatches, but about 10 us per instruction on a
one-wave dispatch. This translation runs one wave at a time with a C loop over its lanes, which costs about the same
per lane and nothing per instruction. Instructions come from the same operand model (operands.py) and their
programs from the same semantics rows (program.py) as the numpy backend's; c_expr renders a row in C with numpy's
types, wrap-around and NaN choices spelled out, so both compute the same bits (tests/compiler/rdna/test_rdna_native.py compares).
What C cannot express raises NoNative and the kernel keeps the numpy path: rows whose helpers have no C form
(c_rows() lists the rest), 16-bit float flushing, MUBUF, MFMA, kernels past MAX_INSTRUCTIONS. Cross-lane reads (DPP,
permlane, ds_swizzle/permute) gather their source lanes into a wave array first (cross_lane), from the operand model's
lane tables; WMMA is the prelude's wmma over the row's kinds and the family's layout.

Registers, per wave: `s` uint32 [256] (SCC is s[253]), `v` uint32 [nvgpr][WAVE] (32 or 64 lanes; wave64 lane masks are
SGPR pairs, read and written through the prelude's MASK/SET_MASK). A block is a label; a branch is a goto
(branches are scalar, so a wave never diverges across blocks: EXEC masks the lanes). The function returns the block
to resume at after s_barrier, or -1 at s_endpgm; the runtime (c/prelude.c) schedules the waves of a workgroup around
barriers and turns the status of a fault into the same GPUPageFault the numpy path raises.
"""
from __future__ import annotations
import os, re
import numpy as np
from mockgpu.boards import WAVE32, WAVE64
from mockgpu.compiler import native
from mockgpu.compiler.rdna.decode import Block, Bad, op_name
from mockgpu.compiler.rdna import operands as ops, program, semantics
from mockgpu.compiler.rdna.operands import Unsupported, Src, SCC, EXEC, NULL, M0, failure
from mockgpu.compiler.rdna.semantics.lang import E, WIDTH, BITS, FLOATS, promote, value_type, is_weak
from mockgpu.compiler.rdna.semantics import lang
from mockgpu.compiler.rdna.backends.numpy import bad_vgprs, bad_sgprs
from mockgpu.compiler.rdna.backends.reads import Reads
from mockgpu.compiler.rdna.gfx9 import sdwa_field

PRELUDE = native.prelude(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "c", "prelude.c"))
CTYPE = {"bool": "int", "u8": "uint8_t", "i8": "int8_t", "u16": "uint16_t", "i16": "int16_t", "u32": "uint32_t",
         "i32": "int32_t", "u64": "uint64_t", "i64": "int64_t", "f16": "float", "f32": "float", "f64": "double"}
for _t in ("b16", "b32", "b64", "bf16"): CTYPE[_t] = CTYPE[value_type(_t)]

CVREG = re.compile(r"\bV\((-?\d+)\)")  # a VGPR the C code of an instruction touches
CSREG = re.compile(r"\bs\[(\d+)\]|\bMASK\((\d+)\)")  # and an SGPR (a lane mask's first SGPR)

class NoNative(Exception):
  """The kernel uses something this translation does not cover: it runs on the numpy path."""

# *** the semantics language as C, one lane at a time ***

def c_lit(v, t:str) -> str:
  """Python constant v as a C literal of type t (numpy's conversion of a literal to t)."""
  if t == "bool": return "1" if v else "0"
  if t in FLOATS:
    x = float(np.float16(v) if t == "f16" else np.float32(v) if t == "f32" else np.float64(v))
    if not np.isfinite(x): raise NoNative(f"the constant {v!r}")
    return x.hex() + ("" if t == "f64" else "f")
  lo, hi = (-(1 << (BITS[t] - 1)), (1 << (BITS[t] - 1)) - 1) if t[0] == "i" else (0, (1 << BITS[t]) - 1)
  if not lo <= v <= hi: raise NoNative(f"the constant {v} as {t}")
  if t == "u64": return f"{v}ull"
  if t == "u32": return f"{v}u"
  if t in ("i64", "i32"):
    sfx = "ll" if t == "i64" else ""
    return f"({v + 1}{sfx} - 1)" if v == lo else (f"({v}{sfx})" if v < 0 else f"{v}{sfx}")
  return f"(({CTYPE[t]}){v})"

def c_cast(code:str, f:str, t:str) -> str:
  """A value of type f as type t, as numpy's astype converts it; what C cannot convert the same way raises NoNative."""
  if f == t: return code
  if t in FLOATS:
    if t == "f16":  # carried as a float holding a half: round once, from a value a float holds exactly
      if f == "f32" or f == "bool" or BITS.get(f, 64) <= 16: return f"f32_round_f16((float)({code}))"
      raise NoNative(f"{f} to f16 (C would round twice)")
    if f == "f16" and t == "f32": return code
    return f"(({CTYPE[t]})({code}))"
  if f in FLOATS: raise NoNative(f"{f} to {t}")
  return f"(({CTYPE[t]})({code}))"

def _minmax(name:str):
  def render(a, ts, t):
    fn = {"i64": "64", "u64": "64"}.get(t, "")
    return f"{'u' if t in ('u32', 'u64') else 'i'}{name}{fn}({a[0]}, {a[1]})"
  return render

def _by_width(prefix:str):
  """A two-operand float helper the prelude has per width (prefix32, prefix64; an f16 is carried as a float)."""
  return lambda a, ts, t: f"{prefix}{64 if t == 'f64' else 32}({a[0]}, {a[1]})"

def _ieee_minmax(prefix:str):
  """v_min/v_max: the IEEE-mode form (a signalling NaN operand quieted) where the row's third argument, the wave's
  IEEE mode, is the constant 1."""
  return lambda a, ts, t: f"{prefix}{'_ieee' if a[2:] == ['1'] else ''}{64 if t == 'f64' else 32}({a[0]}, {a[1]})"

def _in_double(fmt:str):
  """A helper numpy_runtime computes in float64 and rounds once to the result type (f16: once, by f64_round_f16)."""
  return lambda a, ts, t: ROUND_ONCE[t].format(fmt.format(x=f"(double){a[0]}")) if t in ROUND_ONCE else None

ROUND_ONCE = {"f64": "{}", "f32": "(float)({})", "f16": "f64_round_f16({})"}  # a double value as type t, rounded once
MANT_BITS = {"f16": 10, "f32": 23, "f64": 52}

def _by_width1(prefix:str):
  """A one-operand float helper the prelude has per width (a half's result is a half: its f32 form serves)."""
  return lambda a, ts, t: f"{prefix}{64 if t == 'f64' else 32}({a[0]})"

def _f32(fn):
  """A helper C has for f32 operands only."""
  return lambda a, ts, t: fn(a) if ts[0] == "f32" else None

# helper name -> its C form (lang.HELPERS holds it): (rendered args, their types, the result type) -> C code, or None
# where C has no form for those types; lang.HELPERS' no_c says why a helper missing here has none
lang.register("c", {
  "fma": lambda a, ts, t: f"fma{WIDTH[t]}({a[0]}, {a[1]}, {a[2]})" if len(set(ts)) == 1 else None,
  "fmax": _ieee_minmax("fmax"), "fmin": _ieee_minmax("fmin"),
  "fmed3": lambda a, ts, t: f"fmed3_32({a[0]}, {a[1]}, {a[2]}, {a[3]})" if t != "f64" else None,
  "quiet": lambda a, ts, t: f"qnan{64 if t == 'f64' else 32}({a[0]})",
  # OCP fp8/bf8 codes (RDNA4, gfx950)
  "fp8_f32": lambda a, ts, t: f"e4m3_to_f32((uint32_t)({a[0]}))", "bf8_f32": lambda a, ts, t: f"e5m2_to_f32((uint32_t)({a[0]}))",
  "f32_fp8": _f32(lambda a: f"((uint16_t)f32_to_e4m3_rne({a[0]}))"), "f32_bf8": _f32(lambda a: f"((uint16_t)f32_to_e5m2_rne({a[0]}))"),
  "fp8_pk_f32": lambda a, ts, t: f"ocp8_pk_f32((uint32_t)({a[0]}), 0)", "bf8_pk_f32": lambda a, ts, t: f"ocp8_pk_f32((uint32_t)({a[0]}), 1)",
  "fp8_fnuz_f32": lambda a, ts, t: f"fnuz8_to_f32((uint32_t)({a[0]}), 3, 8)",
  "bf8_fnuz_f32": lambda a, ts, t: f"fnuz8_to_f32((uint32_t)({a[0]}), 2, 16)",
  "f32_fp8_fnuz": _f32(lambda a: f"((uint16_t)f32_to_fnuz8_rne({a[0]}, 3, 8))"),
  "f32_bf8_fnuz": _f32(lambda a: f"((uint16_t)f32_to_fnuz8_rne({a[0]}, 2, 16))"),
  "gnan": lambda a, ts, t: f"gnan{64 if t == 'f64' else 32}({a[0]}, {' || '.join(f'isnan({x})' for x in a[1:]) or '0'})",
  "div_fmas": _f32(lambda a: f"div_fmas32({a[0]}, {a[1]}, {a[2]}, {a[3]})"),
  "ldexp": lambda a, ts, t: f"ldexp{WIDTH[t]}({a[0]}, {a[1]})",
  "exp2": _in_double("exp2({x})"), "log2": _in_double("dnan64({x}, log2({x}))"), "rcp": _in_double("1.0 / {x}"),
  "rsq": _in_double("dnan64({x}, 1.0 / sqrt({x}))"), "sqrt": _in_double("dnan64({x}, sqrt({x}))"),
  "sin_rev": _in_double("rev64({x}, 0)"), "cos_rev": _in_double("rev64({x}, 1)"),
  "floor": _by_width1("floor"), "ceil": _by_width1("ceil"), "trunc": _by_width1("trunc"), "rint": _by_width1("rint"),
  "fract": lambda a, ts, t: f"fract{WIDTH[t]}({a[0]})",
  "frexp_mant": _by_width1("frexp_mant"),
  "frexp_exp": lambda a, ts, t: f"frexp_exp64({a[0]})",
  "div_fixup": lambda a, ts, t: f"div_fixup{WIDTH[t]}({a[0]}, {a[1]}, {a[2]})",
  "div_scale": lambda a, ts, t: f"div_scale{WIDTH[ts[0]]}({a[0]}, {a[1]}, {a[2]})" if ts[0] in ("f32", "f64") else None,
  "med3_num": lambda a, ts, t: f"med3_num32({a[0]}, {a[1]}, {a[2]})" if t != "f64" else None,
  "cvt_rtz_f16": lambda a, ts, t: f"f32_round_f16_rtz({a[0]})", "rbf16": lambda a, ts, t: f"bf16_bits_to_f32(f32_to_bf16_bits_rne({a[0]}))",
  "perm": lambda a, ts, t: f"perm({a[0]}, {a[1]}, {a[2]})",
  "cvt_int": lambda a, ts, t: f"cvt_int((double){a[0]}, {a[1]}.0, {a[2]}.0)",
  "cmp_class": lambda a, ts, t: f"cmp_class_bits({vstore_bits(ts[0], a[0])}, {WIDTH[ts[0]]}, {MANT_BITS[ts[0]]}, {a[1]})",
  "clamp01": lambda a, ts, t: f"clamp01_{64 if t == 'f64' else 32}({a[0]})",
  "ftz": _f32(lambda a: f"ftz32({a[0]})"),
  "abs": lambda a, ts, t: {"f64": "fabs", "f32": "fabsf", "f16": "fabsf", "i32": "iabs32"}.get(t, "?") + f"({a[0]})"
                          if t in ("f64", "f32", "f16", "i32") else None,
  "isnan": lambda a, ts, t: f"isnan({a[0]})",
  "fbits16": lambda a, ts, t: f"(uint32_t)f32_to_f16_bits_rne({a[0]})",
  "brev32": lambda a, ts, t: f"brev32({a[0]})", "brev64": lambda a, ts, t: f"brev64({a[0]})",
  "clz": lambda a, ts, t: f"clz32({a[0]})", "ctz": lambda a, ts, t: f"ctz32({a[0]})", "cls32": lambda a, ts, t: f"cls32({a[0]})",
  "clz64": lambda a, ts, t: f"clz64({a[0]})", "ctz64": lambda a, ts, t: f"ctz64({a[0]})",
  "popcount": lambda a, ts, t: f"popcount{64 if ts[0] in ('u64', 'i64') else 32}({a[0]})",
  "sext": lambda a, ts, t: f"sext((uint32_t){a[0]}, {a[1]})",
  "bfe": lambda a, ts, t: f"bfe_w({a[0]}, {a[1]}, {a[2]}, {a[3]}, {(1 << int(a[4] if len(a) > 4 else 5)) - 1})",
  "bfe64": lambda a, ts, t: f"bfe64({a[0]}, {a[1]}, {a[2]})",
  "quadmask": lambda a, ts, t: f"(({CTYPE[t]})quadmask({a[0]}, {BITS[t]}))",
  "wqm": lambda a, ts, t: f"(({CTYPE[t]})wqm({a[0]}, {BITS[t]}))",
  "r64": lambda a, ts, t: f"R64({a[0]}, {a[1]})",
  "max": _minmax("max"), "min": _minmax("min"),
  # RDNA4's IEEE 754-2019 minimumNumber/maximumNumber and minimum/maximum
  "min_num": _by_width("min_num"), "max_num": _by_width("max_num"),
  "minimum754": _by_width("minimum754_"), "maximum754": _by_width("maximum754_"),
  "bits16": lambda a, ts, t: f"(uint32_t)f32_to_f16_bits_rne({a[0]})" if ts[0] == "f16" else f"(uint32_t)(uint16_t)({a[0]})",
  # CDNA's GFX9 IEEE-mode min/max and v_bitop3
  "fmax_gfx9": _by_width("fmax_gfx9_"), "fmin_gfx9": _by_width("fmin_gfx9_"),
  "bitop3": lambda a, ts, t: f"(({CTYPE[t]})bitop3({a[0]}, {a[1]}, {a[2]}, {a[3]}))",
})
C_CALLS = {name: helper.c for name, helper in lang.HELPERS.items() if helper.c is not None}
PROMOTED_ARGS = {"max", "min"}   # helpers whose arguments take the result's type, as numpy's maximum/minimum do
RAW_ARGS = {"cvt_int": (1, 2), "sext": (1,), "bfe": (3, 4), "bfe64": (2,)}  # constant arguments written as they are

class CBody:
  """Renders a program's statements as C declarations, one fresh variable per assignment (r_<name>_<k>)."""
  def __init__(self, read):
    self.read, self.names, self.count = read, {}, {}

  def var(self, name:str) -> str: return self.names[name]

  def fresh(self, name:str) -> str:
    k = self.count[name] = self.count.get(name, 0) + 1
    self.names[name] = f"r_{name}" if k == 1 else f"r_{name}_{k}"
    return self.names[name]

  def lines(self, prog:program.Program) -> list[str]:
    out = []
    last_d = max((i for i, s in enumerate(prog.body) if "d" in s.targets), default=-1)
    for i, s in enumerate(prog.body):
      if len(s.targets) != 1:
        out += self.results(s)
        continue
      # the value stored as D is rounded to f16 by its store: no rounding of its own
      code = self.expr(s.value, top=i == last_d)
      out.append(f"{CTYPE[s.value.t]} {self.fresh(s.targets[0])} = {code};")
    return out

  def results(self, s) -> list[str]:
    """A statement with several targets (d, vcc = div_scale(...)): its helper's C form returns the prelude's struct
    res_<t0>_<t1>..., whose fields r0, r1, ... are the values, in order."""
    ts = s.value.t
    if s.value.op != "call" or not isinstance(ts, tuple) or len(ts) != len(s.targets) or "f16" in ts:
      raise NoNative("a row with several results not from one helper")
    code = self.expr(s.value)
    pair = self.fresh("_res")
    out = [f"res_{'_'.join(ts)} {pair} = {code};"]
    for k, (name, t) in enumerate(zip(s.targets, ts)): out.append(f"{CTYPE[t]} {self.fresh(name)} = {pair}.r{k};")
    return out

  def as_type(self, e:E, t:str) -> str:
    """e rendered as type t: a literal takes t, a value is converted."""
    if e.op == "const" and (is_weak(e.t) or e.t == t): return c_lit(e.val, t)
    return c_cast(self.expr(e), e.t, t)

  def expr(self, e:E, top:bool=False) -> str:
    op, t = e.op, e.t
    if op == "const": return c_lit(e.val, t)
    if op == "var": return self.var(e.val)
    if op == "input": return self.read(e)
    if op == "bin": return self.binary(e, top)
    if op == "neg": return f"(-{self.expr(e.args[0])})" if t in FLOATS or BITS[t] >= 32 else f"(({CTYPE[t]})(-{self.expr(e.args[0])}))"
    if op == "inv":
      x = self.expr(e.args[0])
      return f"(!{x})" if t == "bool" else f"(~{x})" if BITS[t] >= 32 else f"(({CTYPE[t]})(~{x}))"
    if op == "not": return f"(!{self.expr(e.args[0])})"
    if op == "cmp":
      common = promote(e.args[0].t, e.args[1].t)
      return f"({self.as_type(e.args[0], common)} {e.val} {self.as_type(e.args[1], common)})"
    if op in ("and", "or"): return f"({self.expr(e.args[0])} {'&&' if op == 'and' else '||'} {self.expr(e.args[1])})"
    if op == "if": return f"({self.expr(e.args[0])} ? {self.as_type(e.args[1], t)} : {self.as_type(e.args[2], t)})"
    if op == "cast":
      code = c_cast(self.expr(e.args[0]), e.args[0].t, t)
      return code[len("f32_round_f16("):-1] if top and code.startswith("f32_round_f16(") else code
    if op == "call": return self.call(e)
    raise NoNative(f"node {op}")

  def binary(self, e:E, top:bool) -> str:
    t = e.t
    x, y = (self.as_type(a, t) for a in e.args)
    if t in FLOATS:
      fn = {"+": "add", "-": "sub", "*": "mul"}.get(e.val)
      if fn is None: raise NoNative(f"{e.val} on {t}")
      code = f"{fn}{64 if t == 'f64' else 32}({x}, {y})"
      return code if t != "f16" or top else f"f32_round_f16({code})"  # numpy rounds every f16 operation to f16
    code = f"({x} {e.val} {y})"
    return code if t == "bool" or BITS[t] >= 32 else f"(({CTYPE[t]}){code})"  # C promotes short integers to int

  def call(self, e:E) -> str:
    name, ts = e.val, [a.t for a in e.args]
    fn = C_CALLS.get(name)
    strong = next((a.t for a in e.args if not is_weak(a.t)), e.t)  # a literal argument takes its operands' type
    if name in PROMOTED_ARGS: args = [self.as_type(a, e.t) for a in e.args]
    else: args = [str(int(a.val)) if i in RAW_ARGS.get(name, ()) and a.op == "const" else
                  self.as_type(a, strong) if a.op == "const" and is_weak(a.t) else self.expr(a) for i, a in enumerate(e.args)]
    code = fn(args, ts, e.t) if fn is not None else None
    if code is None: raise NoNative(f"{name}({', '.join(ts)}) has no C form")
    return code

def c_rows(sem=None, scalar:bool=False) -> dict[str, bool]:
  """Which VOP rows (scalar: SOP rows) the C backend renders at their declared types (the rest run on numpy only):
  for reports and tests."""
  sem = sem or semantics.family("rdna3")
  out = {}
  for name, row in (sem.SOP if scalar else sem.VOP).items():
    try:
      if scalar: prog = program.salu(ops.Salu(name, 1, [Src(i) for i in range(len(row.srcs))]), sem, 32)
      else: prog = program.valu(ops.Valu(name, 0, [Src(256 + i) for i in range(len(row.srcs))]), sem, False, False)
      CBody(lambda e: "x").lines(prog)
      if row.dst is not None: vstore_bits(row.dst, "x")
      out[name] = True
    except (NoNative, Unsupported): out[name] = False
  return out

def typed(raw:str, t:str, hi:bool=False) -> str:
  """Raw register bits (uint32_t, or uint64_t for 64-bit types) as ISA type t; 16-bit types take the low or high half."""
  if t == "f16": return f"f16_bits_to_f32((uint16_t)({raw}{' >> 16' if hi else ''}))"
  if t == "bf16": return f"bf16_bits_to_f32((uint32_t)({raw}{' >> 16' if hi else ''}))"  # widened exactly to f32
  if WIDTH[t] == 16: return f"(({CTYPE[t]})({raw}{' >> 16' if hi else ''}))"
  if t in ("b32", "u32", "b64", "u64"): return raw
  if t in ("i32", "i64"): return f"(({CTYPE[t]})({raw}))"
  if t == "f32": return f"F32({raw})"
  if t == "f64": return f"F64({raw})"
  raise NoNative(f"operand type {t}")

def vstore_bits(t:str, expr:str) -> str:
  """A value of ISA type t as the raw bits it is stored as (uint32_t, or uint64_t for 64-bit types)."""
  if t == "f32": return f"U32F({expr})"
  if t == "f64": return f"U64F({expr})"
  if t == "f16": return f"f32_to_f16_bits_rne({expr})"
  if t == "bf16": return f"f32_to_bf16_bits_rne({expr})"
  return f"(uint64_t)({expr})" if WIDTH[t] == 64 else f"(uint32_t)({expr})"

MEM_KIND = {"u8": ("uint8_t", 1), "i8": ("int8_t", 1), "u16": ("uint16_t", 2), "i16": ("int16_t", 2), "u32": ("uint32_t", 4)}

def store_data(ctype:str, reg:int, count:int, d16:str|None=None) -> str:
  """A C array t_ holding a lane's store data, element j from VGPR reg + j (a d16 "hi" store: the high half)."""
  hi = " >> 16" if d16 == "hi" else ""
  return f"{ctype} t_[{count}] = {{{', '.join(f'({ctype})(V({reg + j})[l]{hi})' for j in range(count))}}};"

# Kernels past this many instructions stay on numpy: their C takes minutes to build (measured: tinygrad's bf16 matmul
# kernel, 3.4k instructions with private scratch, 45k lines of C, built in 7 minutes at -O2 on the 2-core CI machine,
# far past MOCKGPU_CC_TIMEOUT's 60 s), and a dispatch would wait for the build before falling back.
MAX_INSTRUCTIONS = 2000

class CTranslator(Reads):
  def __init__(self, blocks:list[Block], ftz32:bool, ftz16:bool, arch:str, wave:int, ieee:bool=True):
    if ftz16: raise NoNative("flushed f16/f64 denormals")
    if sum(len(b.insts) for b in blocks) > MAX_INSTRUCTIONS:
      raise NoNative(f"a kernel of more than {MAX_INSTRUCTIONS} instructions (its C build would take minutes)")
    self.blocks, self.ftz32, self.sem, self.wave, self.ieee = blocks, ftz32, semantics.family(arch), wave, ieee
    self.index = {b.start: k for k, b in enumerate(blocks)}
    self.lines:list[str] = []
    self.vregs:set[int] = {0}
    self.names:dict[int, str] = {}    # pc -> instruction name, for fault messages
    self.messages:list[str] = []      # runtime 'unsupported' messages, by index
    self.emitters = {ops.Valu: self.valu, ops.Dual: self.dual, ops.Salu: self.salu, ops.ReadLane: self.readlane,
                     ops.Branch: self.branch, ops.End: lambda op: "return -1;", ops.Barrier: self.barrier,
                     ops.Nop: lambda op: None, ops.Smem: self.smem, ops.Vmem: self.vmem, ops.DsLoad: self.ds_load,
                     ops.DsStore: self.ds_store, ops.DsPair: self.ds_pair, ops.DsAtomic: self.ds_atomic,
                     ops.VAtomic: self.vatomic, ops.Mode: self.mode, ops.Packed: self.packed, ops.WriteLane: self.writelane,
                     ops.Swap: self.swap, ops.Permlane: self.permlane, ops.DsPermute: self.ds_permute,
                     ops.DsSwizzle: self.ds_swizzle, ops.Wmma: self.wmma, ops.MovRel: self.movrel,
                     ops.Jump: self.jump, ops.Trap: lambda op: f"return trap(c, {self.pc}, {op.trap_id});"}
    self.exec_mask = "MASK(126)"  # the lanes an instruction writes (a DPP source narrows them)

  def out(self, line:str): self.lines.append("  " + line)

  def source(self) -> str:
    body:list[str] = []
    for k, b in enumerate(self.blocks):
      self.lines = []
      self.block(b)
      body.append(f" B{k}: if ((c->used += {len(b.insts)}) > c->budget) return over_budget(c, {b.start});")
      body += self.lines
    cases = " ".join(f"case {k}: goto B{k};" for k in range(len(self.blocks)))
    return "\n".join([f"#define WAVE {self.wave}", PRELUDE, "static int64_t wave(Ctx *c, uint32_t *s, uint32_t *v, uint8_t *lds, int64_t b) {",
                      f"  switch (b) {{ {cases} default: return -1; }}", *body, "}", ""])

  def block(self, b:Block):
    for pc, inst in b.insts:
      self.pc = pc
      if isinstance(inst, Bad): return self.fail(inst.reason)
      self.names[pc] = op_name(inst).lower()
      start, regs = len(self.lines), set(self.vregs)
      nxt = self.inst(inst)
      used = (self.vregs - regs) | {int(i) for ln in self.lines[start:] for i in CVREG.findall(ln)}
      sgprs = [int(a or b) for ln in self.lines[start:] for a, b in CSREG.findall(ln)]
      if (bad := bad_vgprs(used) or bad_sgprs(sgprs)) is not None:  # the numpy path raises the same InvalidInstruction
        del self.lines[start:]
        self.vregs = regs
        return self.fail(failure(inst, bad))
      if nxt is not None: return self.out(nxt)
    end = b.insts[-1][0] + b.insts[-1][1].size()
    if end in self.index: self.out(f"goto B{self.index[end]};")
    else: self.fail("execution runs past the end of the decoded code")

  def fail(self, what:str):
    self.messages.append(what)
    self.out(f"return unsupported(c, {self.pc}, {len(self.messages) - 1});")

  def inst(self, inst) -> str|None:
    """Emit one instruction; returns the C statement ending the block, if it ends one."""
    cls, name = type(inst).__name__, op_name(inst)
    try: op = ops.lower(inst, self.pc, self.sem)
    except Unsupported: raise NoNative(f"{cls} {name}") from None
    fn = self.emitters.get(type(op))
    if fn is None: raise NoNative(f"{cls} {name}")
    try: return fn(op)
    except Unsupported as e: raise NoNative(f"{cls} {name}: {e}") from None

  # *** operands (the dispatch on their kind is reads.Reads) ***
  typed = staticmethod(typed)
  def raw_dpp(self) -> str: return "g_[l]"  # the gathered source lane (cross_lane)
  def raw_vgpr(self, v:int, width:int) -> str:
    self.vregs |= {v, v + 1} if width > 32 else {v}
    return f"V({v})[l]" if width <= 32 else f"R64(V({v})[l], V({v + 1})[l])"
  def raw_quad(self, v:int, quad:int) -> str:  # VINTERP: the register of the quad's lane, whatever EXEC holds there
    self.vregs |= {v}
    return f"V({v})[(l & ~3) + {quad}]"
  def raw_sgpr(self, o:int, width:int, vec:bool) -> str: return f"s[{o}]" if width <= 32 else f"R64(s[{o}], s[{o + 1}])"
  def raw_scc(self, width:int, vec:bool) -> str: return "s[253]" if width <= 32 else "(uint64_t)s[253]"
  def raw_zero(self, mask:int, width:int, vec:bool) -> str: return f"(uint32_t)(MASK({mask}) == 0)"
  def raw_const(self, bits:int, width:int) -> str: return f"0x{bits:x}u" if width <= 32 else f"0x{bits:x}ull"
  def sdwa(self, code:str, sel:int, sext:bool) -> str: return f"sdwa32({code}, {', '.join(map(str, sdwa_field(sel)))}, {int(sext)})"
  def read_vcc(self) -> str: return f"(MASK({self.mask_in}) >> l & 1)" if self.mask_in != NULL else "0"
  def read_lane(self) -> str: return "(uint32_t)l"
  def read_scc(self) -> str: return "s[253]"
  def read_exec(self) -> str: return "MASK(126)"
  def read_pc(self) -> str: return f"(c->pgm + {self.pc}ull)"

  def lanes(self, body:list[str], masks:dict[int, str]|None=None):
    """A loop over the active lanes (the prelude's LANES: its loops are the C compiler's to vectorize); masks: SGPR ->
    bool expression gathered into it (inactive lanes write 0)."""
    masks = masks or {}
    self.out(f"{{ const lanes_t ex = {self.exec_mask};" + "".join(f" lanes_t mk{d} = 0;" for d in masks))
    inner = [*body, *(f"mk{d} |= (lanes_t)({cond} ? 1u : 0u) << l;" for d, cond in masks.items())]
    self.out("  LANES(" + " ".join(inner) + ")")
    for d in masks: self.out(f"  SET_MASK({d}, mk{d});")
    self.out("}")

  def vstore(self, d:int, t:str, val:str, hi:bool=False) -> list[str]:
    """Lines writing a typed lane value to VGPR d (and d+1 for 64-bit types); a 16-bit value to one half of d."""
    if WIDTH[t] == 16:
      if t in ("f16", "bf16"): val = vstore_bits(t, val)
      self.vregs.add(d)
      if hi: return [f"V({d})[l] = (V({d})[l] & 0xffffu) | ((uint32_t)(uint16_t)({val}) << 16);"]
      return [f"V({d})[l] = (V({d})[l] & 0xffff0000u) | (uint16_t)({val});"]
    if WIDTH[t] == 64:
      self.vregs |= {d, d + 1}
      return [f"{{ uint64_t t_ = {vstore_bits(t, val)}; V({d})[l] = (uint32_t)t_; V({d + 1})[l] = (uint32_t)(t_ >> 32); }}"]
    self.vregs.add(d)
    return [f"V({d})[l] = {vstore_bits(t, val)};"]

  def mask_dst(self, d:int|None) -> int|None:
    if d is None or d == NULL: return None
    if d == EXEC + 1: raise NoNative("a lane mask written to EXEC_HI")  # VCC_HI is an ordinary SGPR in wave32
    if d >= 128 and d != EXEC: raise NoNative(f"mask destination {d}")
    if self.wave == WAVE64 and d & 1: raise NoNative(f"a wave64 lane mask in the odd SGPR {d}")
    return d

  # *** VALU ***
  def valu_lines(self, op:ops.Valu) -> tuple[list[str], CBody, program.Program]:
    prog = program.valu(op, self.sem, self.ftz32, False, self.ieee)
    self.mask_in = op.mask_in
    body = CBody(lambda e: self.read(e, vec=True))
    return body.lines(prog), body, prog

  def valu(self, op:ops.Valu):
    if op.dpp is None: return self.valu_lanes(op)
    self.dpp = op.dpp
    try: self.cross_lane(op.dpp.vsrc, *self.dpp_lanes(op.dpp), lambda: self.valu_lanes(op))
    finally: self.dpp = None

  def dpp_lanes(self, dpp:ops.Dpp) -> tuple[str, str, str]:
    """A DPP source's lanes as C tables (operands.dpp16_lanes / dpp8_lanes / dpp16_enabled, the numpy path's tables),
    opening the scope cross_lane closes: each lane's source lane, whether its value is valid, whether it is written."""
    table = lambda name, xs: f"static const int8_t {name}[{self.wave}] = {{{', '.join(str(int(x)) for x in xs)}}};"
    fi = int(dpp.fetch_inactive)
    if dpp.ctrl is None:  # DPP8: every lane written; an inactive source reads 0 unless FI
      self.out("{ " + table("dsrc_", ops.dpp8_lanes(list(dpp.sels), self.wave)))
      return "dsrc_[l]", f"((e_ >> dsrc_[l] & 1) || {fi})", "1"
    src, exists = ops.dpp16_lanes(dpp.ctrl, self.wave)
    enabled = ops.dpp16_enabled(dpp.row_mask, dpp.bank_mask, self.wave)
    self.out("{ " + " ".join([table("dsrc_", src % self.wave), table("dex_", exists), table("den_", enabled)]))
    return "dsrc_[l]", f"(dex_[l] && ((e_ >> dsrc_[l] & 1) || {fi}))", f"((ok_ || {int(dpp.bound_ctrl)}) && den_[l])"

  def cross_lane(self, data:int, src:str, valid:str, write:str, body):
    """A value from another lane: g_[l] is VGPR data of lane src (read before any lane writes) where valid, else 0;
    body() then runs over the active lanes that write (EXEC & each lane's write condition). Closes the scope the
    caller's tables opened."""
    self.vregs.add(data)
    self.out("  uint32_t g_[WAVE]; lanes_t w_ = 0; const lanes_t e_ = MASK(126);")
    self.out(f"  for (int l = 0; l < WAVE; l++) {{ int ok_ = {valid}; g_[l] = ok_ ? V({data})[{src}] : 0; "
             f"if ({write}) w_ |= (lanes_t)1 << l; }}")
    saved, self.exec_mask = self.exec_mask, "MASK(126) & w_"
    try: body()
    finally: self.exec_mask = saved
    self.out("}")

  def valu_lanes(self, op:ops.Valu):
    lines, body, prog = self.valu_lines(op)
    if "d" in prog.out:
      if op.sdwa_dst is None: lines += self.vstore(op.dst, prog.dst, body.var("d"), op.dst_hi)
      else:  # GFX9 SDWA: the result's bits into the selected byte or word
        lines += self.vstore(op.dst, "b32", f"sdwa_put({vstore_bits(prog.dst, body.var('d'))}, V({op.dst})[l], "
                                            f"{', '.join(map(str, sdwa_field(op.sdwa_dst[0])))}, {op.sdwa_dst[1]})")
    for k, name in enumerate(program.D_MORE, 1):
      if name in prog.out: lines += self.vstore(op.dst + k, prog.dst, body.var(name))
    masks = {}
    for out in (op.mask_out, op.mask_copy):  # GFX9 v_cmpx writes EXEC and SDST
      if "vcc" in prog.out and (d := self.mask_dst(out)) is not None: masks[d] = body.var("vcc")
    self.lanes(lines, masks)

  def packed(self, op:ops.Packed):
    """VOP3P packed 16-bit math: both halves through the row (program.packed), D their 32 bits."""
    body = CBody(lambda e: self.read(e, vec=True))
    lines = body.lines(program.packed(op, self.sem, self.ieee))
    self.lanes(lines + self.vstore(op.dst, "b32", body.var("d")), {})

  WMMA_KINDS = {"f16": "WMMA_F16", "bf16": "WMMA_BF16", "iu8": "WMMA_IU8", "iu4": "WMMA_IU4"}  # prelude.c's enums
  WMMA_OUT = {"f32": "WMMA_OUT_F32", "f16": "WMMA_OUT_F16", "bf16": "WMMA_OUT_BF16", "i32": "WMMA_OUT_I32"}

  def wmma(self, op:ops.Wmma):
    """v_wmma_*: the prelude's wmma over the wave, given the row's kinds and the family's layout (semantics WMMA,
    WMMA_LAYOUT): D to the active lanes."""
    if self.wave != WAVE32: raise NoNative("WMMA in a wave64 wave")
    # RDNA4's forms are numpy_runtime.wmma_rdna4's: float ones summed exactly (the prelude sums in float64, in K order,
    # which is exact only while the products' exponents span 53 bits), iu4's K=32 layout and the sparse SWMMAC there
    if op.layout == "rdna4" and (op.kind_in != "iu8" or getattr(op, "index", None) is not None):
      raise NoNative(f"RDNA4 WMMA {op.kind_in} -> {op.kind_out} (summed exactly on the numpy path)")
    if op.kind_in not in self.WMMA_KINDS or op.kind_out not in self.WMMA_OUT or op.layout not in ("rdna3", "rdna4"):
      raise NoNative(f"WMMA {op.kind_in} -> {op.kind_out} ({op.layout})")
    per_reg = {"f16": 2, "bf16": 2, "iu8": 4, "iu4": 8}[op.kind_in]
    if len(op.a) * per_reg * (2 if op.layout == "rdna4" else 1) > 64: raise NoNative("a WMMA K past the prelude's WMMA_MAX_K")
    self.vregs |= {*op.a, *op.b, *op.c, *range(op.dst, op.dst + len(op.c))}
    arr = lambda name, regs: f"static const int {name}[] = {{{', '.join(map(str, regs))}}};"
    self.out(f"{{ {arr('wa_', op.a)} {arr('wb_', op.b)} {arr('wc_', op.c)} wmma(v, wa_, wb_, wc_, {len(op.a)}, {op.dst}, "
             f"{self.WMMA_KINDS[op.kind_in]}, {self.WMMA_OUT[op.kind_out]}, {int(op.hi)}, {int(op.signed[0])}, "
             f"{int(op.signed[1])}, {int(op.clamp)}, {int(op.layout == 'rdna4')}, MASK(126)); }}")

  def dual(self, op:ops.Dual):
    """VOPD: both ops read their sources before either writes."""
    lines, writes = [], []
    for tag, half in (("x", op.x), ("y", op.y)):
      body_lines, body, prog = self.valu_lines(half)
      lines.append(f"uint32_t r{tag}; {{ {' '.join(body_lines)} r{tag} = {vstore_bits(prog.dst, body.var('d'))}; }}")
      writes.append(f"V({half.dst})[l] = r{tag};")
      self.vregs.add(half.dst)
    self.lanes(lines + writes)

  def readlane(self, op:ops.ReadLane):
    d = op.dst
    if d >= 128 and d != SCC: raise NoNative("readlane destination")
    self.vregs.add(op.src)
    lane = "MASK(126) ? FIRST_LANE(MASK(126)) : 0" if op.lane is None else f"{self.raw(op.lane, 32, vec=False)} & (WAVE - 1)"
    return self.out(f"s[{d}] = V({op.src})[{lane}];") if d != NULL else None

  def writelane(self, op:ops.WriteLane):
    """v_writelane_b32: one lane of VGPR dst, whatever EXEC."""
    self.vregs.add(op.dst)
    self.out(f"V({op.dst})[{self.raw(op.lane, 32, vec=False)} & (WAVE - 1)] = {self.raw(op.value, 32, vec=False)};")

  def swap(self, op:ops.Swap):
    """v_swap_b32 / v_swap_b16 (the chosen 16-bit halves change places)."""
    if op.halves is None:
      lines = [f"uint32_t t_ = V({op.a})[l];", f"V({op.a})[l] = V({op.b})[l];", f"V({op.b})[l] = t_;"]
      self.vregs |= {op.a, op.b}
      return self.lanes(lines)
    half = lambda r, hi: f"(V({r})[l] >> 16)" if hi else f"(V({r})[l] & 0xffffu)"
    (ha, hb) = op.halves
    self.lanes([f"uint32_t t_ = {half(op.a, ha)}, u_ = {half(op.b, hb)};",
                *self.vstore(op.a, "u16", "u_", ha), *self.vstore(op.b, "u16", "t_", hb)])

  def permlane(self, op:ops.Permlane):
    """v_permlane16/x16 (a select nibble per lane from the SGPR pair; FI reads inactive lanes, BOUND_CTRL writes 0 for
    them) and v_permlane64 (lane ^ 32 of a wave64, active or not; nothing in wave32)."""
    copy = lambda: self.lanes([f"V({op.dst})[l] = g_[l];"])
    self.vregs.add(op.dst)
    ints = lambda xs: ", ".join(str(int(x)) for x in np.asarray(xs).reshape(-1))
    if op.width == 64:
      if (src64 := ops.permlane64_lanes(self.wave)) is None: return
      self.out(f"{{ static const int8_t psrc_[{self.wave}] = {{{ints(src64)}}};")
      return self.cross_lane(op.src, "psrc_[l]", "1", "1", copy)
    # operands.permlane16_table: the source lane for each select value and lane, indexed by the lane's select nibble
    table = f"static const int8_t ptab_[16][{self.wave}] = {{{ints(ops.permlane16_table(op.cross, self.wave))}}};"
    if op.sel_vgpr is not None:   # the _var forms: each lane's select from its own VGPR
      self.vregs.add(op.sel_vgpr)
      self.out(f"{{ {table}")
      src = f"ptab_[V({op.sel_vgpr})[l] & 15][l]"
    else:
      sel = f"R64({self.raw(op.sel_lo, 32, vec=False)}, {self.raw(op.sel_hi, 32, vec=False)})"
      nib = f"static const int8_t pnib_[{self.wave}] = {{{ints(ops.permlane16_nibble(self.wave))}}};"
      self.out(f"{{ {table} {nib} const uint64_t sel_ = {sel};")
      src = "ptab_[(sel_ >> (4 * pnib_[l])) & 15][l]"
    self.cross_lane(op.src, src, f"((e_ >> {src} & 1) || {int(op.fi)})", f"(ok_ || {int(op.bound_ctrl)})", copy)

  def ds_swizzle(self, op:ops.DsSwizzle):
    """ds_swizzle_b32: the source lanes of operands.swizzle_lanes; an inactive source reads 0."""
    src = ops.swizzle_lanes(op.offset, self.wave)
    self.vregs.add(op.dst)
    self.out(f"{{ static const int8_t ssrc_[{self.wave}] = {{{', '.join(map(str, src))}}};")
    self.cross_lane(op.data, "ssrc_[l]", "(e_ >> ssrc_[l] & 1)", "1", lambda: self.lanes([f"V({op.dst})[l] = g_[l];"]))

  def ds_permute(self, op:ops.DsPermute):
    """ds_bpermute_b32: each lane reads the lane its address names (an inactive one reads 0); ds_permute_b32: each
    active lane writes its data to that lane, the highest lane winning, the others read 0."""
    self.vregs |= {op.addr, op.data, op.dst}
    idx = f"(int)(((V({op.addr})[l] + {op.offset}u) >> 2) & (WAVE - 1))"
    self.out("{ uint32_t g_[WAVE]; const lanes_t e_ = MASK(126);")
    if op.back: self.out(f"  for (int l = 0; l < WAVE; l++) {{ int k_ = {idx}; g_[l] = (e_ >> k_ & 1) ? V({op.data})[k_] : 0; }}")
    else: self.out(f"  memset(g_, 0, sizeof g_); for (int l = 0; l < WAVE; l++) if (e_ >> l & 1) g_[{idx}] = V({op.data})[l];")
    self.lanes([f"V({op.dst})[l] = g_[l];"])
    self.out("}")

  # *** SALU ***
  def swrite(self, d:int, t:str, expr:str) -> list[str]:
    if d == NULL: return []
    if d >= 128 and d != SCC: raise NoNative(f"scalar destination {d}")
    if WIDTH[t] == 64:
      return [f"{{ uint64_t t_ = {vstore_bits(t, expr)}; s[{d}] = (uint32_t)t_; s[{d + 1}] = (uint32_t)(t_ >> 32); }}"]
    return [f"s[{d}] = {vstore_bits(t, expr)};"]

  def mode(self, op:ops.Mode):
    """MODE's float bits: C kernels never flush f16/f64 denormals (ftz16 raises NoNative); s_setreg_b32's value is only
    known at run time, and only the numpy path checks it."""
    if op.dst is not None: return self.out("{ " + " ".join(self.swrite(op.dst, "u32", f"{program.mode_field(op, self.ftz32, False)}u")) + " }")
    if op.value.reg != ops.LITERAL: raise NoNative("s_setreg_b32 from an SGPR")
    program.check_mode_write(op, self.ftz32, False, op.value.lit)

  def salu(self, op:ops.Salu):
    prog = program.salu(op, self.sem, self.wave, self.ftz32, False, self.ieee)
    body = CBody(lambda e: self.read(e, vec=False))
    lines = body.lines(prog)
    if "exec" in prog.out: lines.append(f"SET_MASK(126, {body.var('exec')});")
    if "scc" in prog.out: lines.append(f"s[253] = ({body.var('scc')}) ? 1u : 0u;")
    if "d" in prog.out: lines += self.swrite(op.dst, prog.dst, body.var("d"))
    self.out("{ " + " ".join(lines) + " }")

  def barrier(self, op) -> str|None:
    return f"return {self.index[self.pc + 4]};" if self.pc + 4 in self.index else None

  def branch(self, op:ops.Branch) -> str:
    if op.target not in self.index: raise NoNative("branch target outside the decoded code")
    if op.cond is None: return f"goto B{self.index[op.target]};"
    cond = {"scc0": "s[253] == 0", "scc1": "s[253] != 0", "vccz": "MASK(106) == 0", "vccnz": "MASK(106) != 0",
            "execz": "MASK(126) == 0", "execnz": "MASK(126) != 0"}[op.cond]
    return f"if ({cond}) goto B{self.index[op.target]}; goto B{self.index[op.fallthrough]};"

  # *** M0-relative moves, computed jumps ***
  def rel_index(self, var:str, op:ops.MovRel, base:int, field:tuple[int, int]|None) -> str:
    """A C declaration of var: base plus the M0 field (shift, bits), checked against the reachable registers."""
    shift, bits = field
    limit = "c->vgprs" if op.vgpr else op.limit
    return f"int64_t {var} = rel(c, {base}u, s[{M0}], {shift}, {bits}, {op.ndw}, {limit}, {self.pc}, {self.message(op.name)});"

  def message(self, text:str) -> int:
    self.messages.append(text)
    return len(self.messages) - 1

  def movrel(self, op:ops.MovRel):
    """Both indexes first (a bad one stops the wave before any write), then the move; VGPR moves per active lane."""
    t = "b64" if op.ndw == 2 else "b32"
    decl = ([self.rel_index("si", op, op.src_reg, op.src_rel)] if op.src is None else []) + \
           ([self.rel_index("di", op, op.dst, op.dst_rel)] if op.dst_rel is not None else [])
    if op.vgpr:
      self.vregs |= set(range(256))  # any VGPR may be reached: the wave holds them all (c->vgprs: those it has)
      x = self.raw(op.src, 32, True, t) if op.src is not None else "V(si)[l]"
      if op.dst_rel is None: body = self.vstore(op.dst, "b32", x)
      elif op.swap: body = ["{ uint32_t t_ = V(di)[l]; V(di)[l] = V(si)[l]; V(si)[l] = t_; }"]
      else: body = [f"V(di)[l] = {x};"]
      self.out("{ " + " ".join(decl))
      self.lanes(body)
      return self.out("}")
    x = self.raw(op.src, 32 * op.ndw, False, t) if op.src is not None else ("s[si]" if op.ndw == 1 else "R64(s[si], s[si + 1])")
    if op.dst_rel is None: body = self.swrite(op.dst, "u64" if op.ndw == 2 else "u32", x)
    elif op.ndw == 1: body = [f"s[di] = {x};"]
    else: body = [f"{{ uint64_t t_ = {x}; s[di] = (uint32_t)t_; s[di + 1] = (uint32_t)(t_ >> 32); }}"]
    self.out("{ " + " ".join(decl + body) + " }")

  def jump(self, op:ops.Jump) -> str:
    """s_call_b64: a goto; s_setpc/s_swappc: a switch from the target's offset to its block (every instruction is one
    in code with a computed jump); the return address is written after the target is read."""
    if op.target is None:
      if op.offset not in self.index: raise NoNative("call target outside the decoded code")
      target = None
    else: target = self.raw(op.target, 64, False, "b64")
    link = self.swrite(op.link, "u64", f"(c->pgm + {op.ret}ull)") if op.link is not None else []
    if target is None: return " ".join(link + [f"goto B{self.index[op.offset]};"])
    cases = " ".join(f"case {b.start}: goto B{k};" for k, b in enumerate(self.blocks))
    return (f"{{ uint64_t j_ = {target}; {' '.join(link)} switch (j_ - c->pgm) {{ {cases} "
            f"default: return bad_jump(c, {self.pc}, j_, {self.message(op.name)}); }} }}")

  # *** memory ***
  def smem(self, op:ops.Smem):
    """ndw dwords from a dword-aligned address; RDNA4's s_load_u8/i8/u16/i16: one element from its aligned address."""
    d, ndw = op.dst, op.ndw
    ctype, nbytes = MEM_KIND[op.kind]
    soff = "" if op.soffset is None else f" + {self.raw(op.soffset, 32, vec=False)}"
    if d + ndw > 128 and not (d <= EXEC < d + ndw): raise NoNative("s_load into special registers")
    b = op.base
    addr = f"(R64(s[{b}], s[{b + 1}]) + {op.offset & (2**64 - 1)}ull{soff}) & ~{nbytes - 1}ull"
    self.out("{ " + " ".join([f"{ctype} t_[{ndw}];", f"gload(c, t_, {addr}, {nbytes}, {ndw}, {self.pc});",
                              *(f"s[{d + j}] = (uint32_t)t_[{j}];" for j in range(ndw) if d + j != NULL)]) + " }")

  def address(self, a:ops.Addr) -> str:
    off = f"{a.offset & (2**64 - 1)}ull"
    if a.wide:
      self.vregs |= {a.vaddr, a.vaddr + 1}
      return f"R64(V({a.vaddr})[l], V({a.vaddr + 1})[l]) + {off}"
    if a.addtid: return f"R64(s[{a.sbase}], s[{a.sbase + 1}]) + (uint64_t)l * 4 + {off}"
    self.vregs.add(a.vaddr)
    return f"R64(s[{a.sbase}], s[{a.sbase + 1}]) + (uint64_t)V({a.vaddr})[l] + {off}"

  def vmem(self, op:ops.Vmem):
    if op.seg == "BUFFER": raise NoNative(op.name)
    if op.seg == "SCRATCH": return self.scratch(op)
    ctype, nbytes = MEM_KIND[op.kind]
    addr, ndw = self.address(op.addr), op.ndw
    if op.load:
      fetch = f"{ctype} t_[{ndw}]; gload(c, t_, a_, {nbytes}, {ndw}, {self.pc});"
      return self.lanes([f"uint64_t a_ = {addr};", fetch, *self.loaded(op.reg, ndw, op.d16)])
    self.vregs |= set(range(op.reg, op.reg + ndw))
    # every lane's address is checked before any lane writes, as the numpy path does
    self.lanes([f"uint64_t a_ = {addr}; gcheck(c, a_, {nbytes}, {ndw}, 1, {self.pc});"])
    self.lanes([f"uint64_t a_ = {addr}; {store_data(ctype, op.reg, ndw, op.d16)}", f"gstore(c, a_, t_, {nbytes}, {ndw});"])

  def scratch(self, op:ops.Vmem):
    """scratch_load/store: the lane's 32-bit offset (VGPR, SGPR and the instruction's offset) into its private segment
    (prelude scptr: checked, every lane before any writes)."""
    ctype, nbytes = MEM_KIND[op.kind]
    a, ndw = op.addr, op.ndw
    parts = ([self.raw_vgpr(a.vaddr, 32)] if a.vaddr is not None else []) + \
            ([self.raw(a.soff, 32, vec=False)] if a.soff is not None else []) + [f"{a.offset & 0xffffffff}u"]
    off = f"uint32_t o_ = (uint32_t)({' + '.join(parts)});"
    if op.load:
      return self.lanes([off, f"{ctype} t_[{ndw}]; memcpy(t_, scptr(c, l, o_, {nbytes * ndw}, 0, {self.pc}), {nbytes * ndw});",
                         *self.loaded(op.reg, ndw, op.d16)])
    self.vregs |= set(range(op.reg, op.reg + ndw))
    self.lanes([off, f"scptr(c, l, o_, {nbytes * ndw}, 1, {self.pc});"])
    self.lanes([off, store_data(ctype, op.reg, ndw, op.d16), f"memcpy(scptr(c, l, o_, {nbytes * ndw}, 1, {self.pc}), t_, {nbytes * ndw});"])

  def loaded(self, d:int, ndw:int, d16:str|None) -> list[str]:
    """Lines writing a lane's loaded elements t_ (extended to 32 bits) to VGPRs d..; a d16 load: to one 16-bit half of d."""
    if d16: return self.vstore(d, "u16", "(uint32_t)t_[0]", d16 == "hi")
    self.vregs |= set(range(d, d + ndw))
    return [f"V({d + j})[l] = (uint32_t)t_[{j}];" for j in range(ndw)]

  def ds_address(self, a:int|None, offset:int) -> str:
    """A DS load's or store's LDS address: its VGPR plus offset, or for the ADDTID forms M0[15:0] plus the lane's index * 4."""
    if a is None: return f"((s[{M0}] & 0xffffu) + (uint32_t)l * 4u + {offset}u)"
    self.vregs.add(a)
    return f"V({a})[l] + {offset}u"

  def ds_load(self, op:ops.DsLoad):
    ctype, nbytes = MEM_KIND[op.kind]
    d, ndw = op.dst, op.ndw
    addr = self.ds_address(op.addr, op.offset)
    # checked lane by lane as it loads: the first lane out of range is still the one reported
    self.lanes([f"ldscheck(c, {addr}, {nbytes}, {ndw}, 0, {self.pc});", f"{ctype} t_[{ndw}]; ldsload(lds, t_, {addr}, {nbytes}, {ndw});",
                *self.loaded(d, ndw, op.d16)])

  def ds_store(self, op:ops.DsStore):
    ctype, nbytes = MEM_KIND[op.kind]
    ndw = op.ndw
    self.vregs |= set(range(op.data, op.data + ndw))
    addr = self.ds_address(op.addr, op.offset)
    self.lanes([f"ldscheck(c, {addr}, {nbytes}, {ndw}, 1, {self.pc});"])  # every lane checked before any lane writes
    self.lanes([store_data(ctype, op.data, ndw, op.d16), f"ldsstore(lds, {addr}, t_, {nbytes}, {ndw});"])

  def ds_pair(self, op:ops.DsPair):
    a, ndw = op.addr, op.ndw
    self.vregs.add(a)
    if op.load:
      d = op.regs[0]
      self.vregs |= set(range(d, d + 2 * ndw))
      for o in op.offsets: self.lanes([f"ldscheck(c, V({a})[l] + {o}u, 4, {ndw}, 0, {self.pc});"])
      body = [f"uint32_t t_[{2 * ndw}];"] + [f"ldsload(lds, t_ + {i * ndw}, V({a})[l] + {o}u, 4, {ndw});" for i, o in enumerate(op.offsets)]
      return self.lanes(body + [f"V({d + j})[l] = t_[{j}];" for j in range(2 * ndw)])
    for o in op.offsets: self.lanes([f"ldscheck(c, V({a})[l] + {o}u, 4, {ndw}, 1, {self.pc});"])
    for o, dr in zip(op.offsets, op.regs):
      self.vregs |= set(range(dr, dr + ndw))
      self.lanes([store_data("uint32_t", dr, ndw), f"ldsstore(lds, V({a})[l] + {o}u, t_, 4, {ndw});"])

  # *** atomics: every lane's words checked (bounds, then alignment) before any is written; then lane after lane, each
  # reading all its words before it writes them ***
  def atomic_word(self, prog:program.Program, k:int, old:str, data:list[str]) -> list[str]:
    """C lines computing the row's new word n<k> (raw bits) from the raw old word and the lane's raw data."""
    raw = {"old": old, **dict(zip("ab", data))}
    body = CBody(lambda e: typed(raw[e.val.special], e.val.isa))
    lines = body.lines(prog)
    return ["{ " + " ".join(lines) + f" n{k} = {vstore_bits(prog.dst, body.var('d'))}; }}"]

  def lane_word(self, r:int, width:int) -> str:
    self.vregs |= {r, r + 1} if width == 64 else {r}
    return f"V({r})[l]" if width == 32 else f"R64(V({r})[l], V({r + 1})[l])"

  def returns(self, dst:int|None, olds:list[str], width:int) -> list[str]:
    """Lines writing the old words (raw C values) to VGPRs dst.. of the lane, dword after dword."""
    if dst is None: return []
    dwords = [f"(uint32_t)({o} >> {32 * j})" for o in olds for j in range(width // 32)]
    self.vregs |= set(range(dst, dst + len(dwords)))
    return [f"V({dst + j})[l] = {x};" for j, x in enumerate(dwords)]

  def ds_atomic(self, op:ops.DsAtomic):
    nbytes, ctype, prog = op.width // 8, f"uint{op.width}_t", program.atomic(op.row, self.sem)
    self.vregs.add(op.addr)
    base = f"(V({op.addr})[l] + {op.offset}u)" + (f" & {op.mask}u" if op.mask != 0xffffffff else "")
    addrs = [f"(uint32_t)(({base}) + {sl}u)" for sl in op.slots]
    for a in addrs: self.lanes([f"ldscheck(c, {a}, {nbytes}, 1, 1, {self.pc});"])
    for a in addrs: self.lanes([f"if ({a} & {nbytes - 1}u) misaligned(c, {a}, {nbytes}, {self.pc}, LDS_SPACE);"])
    body = [f"uint32_t a{k} = {a}; {ctype} o{k}, n{k}; memcpy(&o{k}, lds + a{k}, {nbytes});" for k, a in enumerate(addrs)]
    for k, regs in enumerate(op.data):
      body += [f"{{ {ctype} c_; memcpy(&c_, lds + a{k}, {nbytes});"]  # a second word equal to the first sees its new value
      body += self.atomic_word(prog, k, "c_", [self.lane_word(r, op.width) for r in regs])
      body += [f"memcpy(lds + a{k}, &n{k}, {nbytes}); }}"]
    self.lanes(body + self.returns(op.dst, [f"o{k}" for k in range(len(addrs))], op.width))

  def vatomic(self, op:ops.VAtomic):
    if op.seg == "BUFFER": raise NoNative(op.name)
    nbytes, ctype, prog = op.width // 8, f"uint{op.width}_t", program.atomic(op.row, self.sem)
    addr = self.address(op.addr)
    self.lanes([f"gcheck(c, {addr}, {nbytes}, 1, 1, {self.pc});"])
    self.lanes([f"uint64_t a_ = {addr}; if (a_ & {nbytes - 1}u) misaligned(c, a_, {nbytes}, {self.pc}, GLOBAL_SPACE);"])
    body = [f"uint64_t a_ = {addr}; {ctype} o0, n0; gload(c, &o0, a_, {nbytes}, 1, {self.pc});",
            *self.atomic_word(prog, 0, "o0", [self.lane_word(r, op.width) for r in op.data]),
            f"gstore(c, a_, &n0, {nbytes}, 1);"]
    self.lanes(body + self.returns(op.dst, ["o0"], op.width))
