"""One lowered ALU instruction (operands.Valu, Salu, Packed) as a typed program in the semantics language: its
operands read with their types and source modifiers (ftz, abs, neg), its row, its output modifiers (omod, clamp,
ftz) and the conversion of each result to the type it is stored as. The numpy and C backends render programs (the
stepper runs the numpy rendering), so neither a row's meaning nor a modifier's is written twice.

An `input` node's val is a Read: an operand (Src, read as its ISA type: the backend turns the register or constant
into a typed value) or a special value (vcc: this lane's bit of the mask the instruction reads; lane; scc; exec: the
wave's EXEC mask; pc: the instruction's address). A scalar row's `d`, its destination's old value, is an operand read.
`ieee`, the wave's IEEE mode, is a constant of the program (the executor reads it from the kernel's descriptor).
"""
from __future__ import annotations
from dataclasses import dataclass
from mockgpu.compiler.rdna.semantics.lang import E, Stmt, Row, value_type, binary, call, cast, instance, free_names, WIDTH, FLOATS
from mockgpu.compiler.rdna.operands import Src, Valu, Salu, Packed, Mode, Unsupported

@dataclass(frozen=True)
class Read:
  src:Src|None
  isa:str|None = None
  special:str|None = None

@dataclass
class Program:
  body:list[Stmt]
  out:dict[str, E]      # the final value of each output the instruction writes: d (in its stored type), vcc, scc, exec
  dst:str|None          # the ISA type D is stored as (b32, f16, ...)

OMOD = (1, 2.0, 4.0, 0.5)
# a row with a result wider than 64 bits (v_mqsad_u32_u8's 128) writes D's first dword as d, the next ones as these
# (each of D's type, to VGPRs D + 1, D + 2, D + 3)
D_MORE = ("d1", "d2", "d3")

def _var(name:str, t:str) -> E: return E("var", t, val=name)

def _bind(body:list[Stmt], env:dict[str, E], name:str, e:E):
  body.append(Stmt((name,), e))
  env[name] = _var(name, e.t)

def operand(src:Src, isa:str, ftz:bool) -> E:
  """A source read as ISA type isa, with its modifiers: flush, then abs, then neg (floats only)."""
  e = E("input", value_type(isa), val=Read(src, isa))
  if is_float_isa(isa):
    if ftz and isa[0] == "f": e = call("ftz", (e,))
    if src.abs: e = call("abs", (e,))
    if src.neg: e = E("neg", e.t, (e,))
  elif src.neg or src.abs: raise Unsupported(f"neg/abs modifier on a {isa} operand")
  return e

def is_float_isa(isa:str) -> bool: return isa[0] == "f" or isa == "bf16"

def _special(name:str, t:str) -> E: return E("input", t, val=Read(None, special=name))

def _outputs(row:Row, t_d:str|None, scope:dict[str, E], names:tuple[str, ...], body:list[Stmt]) -> dict[str, E]:
  """The row's results, D converted to t_d, the ISA type it is stored as."""
  out = {n: scope[n] for n in names if n in row.assigns()}
  if "d" in out and t_d is not None and out["d"].t != value_type(t_d):
    _bind(body, scope, "d", cast(out["d"], value_type(t_d)))
    out["d"] = scope["d"]
  return out

# rows gnan leaves alone: helpers whose own definition gives a NaN for non-NaN operands (the manual's pseudocode names
# it: v_div_fixup's 0/0 and inf/inf write 32'F(0xffc00000), the negative quiet NaN), and
# helpers that decode fp8/bf8 codes, whose NaN codes give NaNs no float source had (a NaN operand, not a generated NaN)
OWN_NAN = ("div_fixup", "fp8_f32", "bf8_f32", "fp8_pk_f32", "bf8_pk_f32", "fp8_fnuz_f32", "bf8_fnuz_f32")

def _uses(e:E, names:tuple[str, ...]) -> bool:
  return (e.op == "call" and e.val in names) or any(isinstance(a, E) and _uses(a, names) for a in e.args)

def _generated_nan(body:list[Stmt], stmts:list[Stmt], scope:dict[str, E], sources:list[E]):
  """d through gnan: a NaN result none of the float sources was is the hardware's default NaN (+qNaN), not the
  host's. Only for rows with a float source and a float d (a NaN decoded from integer bits, fp8's, is not generated)."""
  if not sources or "d" not in scope or scope["d"].t not in FLOATS: return
  if any(_uses(st.value, OWN_NAN) for st in stmts): return
  _bind(body, scope, "d", call("gnan", (scope["d"], *sources)))

def _mode(env:dict[str, E], row:Row, ieee:bool):
  """The IEEE mode as the constant it is for a whole dispatch, where the row reads it."""
  if "ieee" in free_names(row): env["ieee"] = E("const", "bool", val=ieee)

def valu(op:Valu, sem, ftz32:bool, ftz16:bool, ieee:bool=True) -> Program:
  """A vector op's program. ieee: MODE.IEEE, on in the default descriptor (v_min/v_max quiet a signalling NaN; omod
  is ignored: errata omod-ieee)."""
  row = sem.CLAMPED[op.row] if op.clamp and op.row in sem.CLAMPED else sem.VOP[op.row]
  t_d = row.dst
  float_d = t_d is not None and is_float_isa(t_d)
  if op.clamp and not float_d and op.row not in sem.CLAMPED: raise Unsupported("integer clamp")
  if op.omod and not float_d: raise Unsupported("output modifier on an integer op")
  types = [s.type or t for s, t in zip(op.srcs, row.source_types())]
  if op.row in sem.FLOAT_MODS and any(s.neg or s.abs for s in op.srcs): types, t_d = ["f32"] * len(types), "f32"
  if any(s.hi and WIDTH[t] != 16 for s, t in zip(op.srcs, types)) or (op.dst_hi and WIDTH[t_d] != 16):
    raise Unsupported("op_sel on a 32-bit operand")
  body:list[Stmt] = []
  env:dict[str, E] = {}
  for (name, _), s, t in zip(row.srcs, op.srcs, types):
    _bind(body, env, name, operand(s, t, ftz32 if t == "f32" else ftz16))
  free = free_names(row)
  if "vcc" in free: _bind(body, env, "vcc", _special("vcc", "bool"))
  if "lane" in free: _bind(body, env, "lane", _special("lane", "u32"))
  _mode(env, row, ieee)
  stmts, scope = instance(row, env)
  body += stmts
  if float_d: _generated_nan(body, stmts, scope, [env[name] for (name, _), t in zip(row.srcs, types) if is_float_isa(t)])
  omod = 0 if ieee else op.omod  # errata omod-ieee: hardware ignores omod in IEEE mode
  if float_d and "d" in scope: _float_out(body, scope, t_d, omod, op.clamp, {"f32": ftz32, "bf16": False}.get(t_d, ftz16))
  if op.row in sem.HIGH16_ZEROED and not op.dst_hi and "d" in scope:  # GFX9: the 16-bit result zeroes bits 31:16
    _bind(body, scope, "d", call("bits16", (scope["d"],)))
    t_d = "b32"
  return Program(body, _outputs(row, t_d, scope, ("d", *D_MORE, "vcc"), body), t_d)

def _float_out(body:list[Stmt], scope:dict[str, E], t_d:str, omod:int, clamp:bool, ftz:bool):
  """A float result's output modifiers, in the order the hardware applies them: omod, clamp, then the flush."""
  d, t = scope["d"], value_type(t_d)
  if omod: _bind(body, scope, "d", binary("*", d, E("const", t, val=OMOD[omod])))
  if clamp: _bind(body, scope, "d", call("clamp01", (scope["d"],)))
  if ftz: _bind(body, scope, "d", call("ftz", (scope["d"],)))

def salu(op:Salu, sem, wave:int, ftz32:bool=False, ftz16:bool=False, ieee:bool=True) -> Program:
  """A scalar op's program. The float operands and results of an op writing D (RDNA4's float SALU) are flushed as the
  VALU's are; s_cmp_*_f32/f16 read theirs unflushed, as mockgpu always has (open: the manual does not say)."""
  row = sem.SOP[op.row]
  free = free_names(row)
  if ("exec" in free or "exec" in row.assigns()) and row.dst != f"u{wave}":
    raise Unsupported(f"the {WIDTH[row.dst]}-bit EXEC form in a wave{wave} wave")
  ftz = {"f32": ftz32, "f16": ftz16} if "d" in row.assigns() else {}
  body:list[Stmt] = []
  env:dict[str, E] = {}
  for (name, t), s in zip(row.srcs, op.srcs): _bind(body, env, name, operand(s, t, ftz.get(t, False)))
  specials = {"d": (lambda: operand(Src(op.dst), row.dst, ftz.get(row.dst, False))),
              "scc": lambda: _special("scc", "u32"), "exec": lambda: _special("exec", f"u{wave}"),
              "pc": lambda: _special("pc", "u64")}
  for name in free:
    if name in specials: _bind(body, env, name, specials[name]())
  _mode(env, row, ieee)
  stmts, scope = instance(row, env)
  body += stmts
  if row.dst is not None and is_float_isa(row.dst):
    _generated_nan(body, stmts, scope, [env[name] for name, t in row.srcs if is_float_isa(t)])
  if (op.omod or op.clamp) and row.dst not in ftz: raise Unsupported("output modifier on an integer op")
  if row.dst in ftz and "d" in scope: _float_out(body, scope, row.dst, 0 if ieee else op.omod, op.clamp, ftz[row.dst])
  return Program(body, _outputs(row, row.dst, scope, ("d", "scc", "exec"), body), row.dst)

def packed(op:Packed, sem, ieee:bool=True) -> Program:
  """Both halves through the row, then packed: D = the low result in bits 15:0, the high one in 31:16."""
  row = sem.PACKED[op.row]
  if op.clamp and row.dst != "f16":
    if op.row not in sem.PACKED_CLAMPED: raise Unsupported("clamp on this packed op")
    row = sem.PACKED_CLAMPED[op.row]
  body:list[Stmt] = []
  halves = []
  for half, srcs in enumerate((op.lo, op.hi)):
    env:dict[str, E] = {}
    for (name, t), s in zip(row.srcs, srcs):
      e = E("input", value_type(t), val=Read(s, t))
      _bind(body, env, name, E("neg", e.t, (e,)) if s.neg else e)
    _mode(env, row, ieee)
    stmts, scope = instance(row, env)
    body += stmts
    if is_float_isa(row.dst): _generated_nan(body, stmts, scope, [env[name] for name, t in row.srcs if is_float_isa(t)])
    if op.clamp and row.dst == "f16": _bind(body, scope, "d", call("clamp01", (scope["d"],)))
    _bind(body, scope, f"d{half}", cast(scope["d"], value_type(row.dst)))
    halves.append(call("bits16", (scope[f"d{half}"],)))
  lo, hi = halves
  d = binary("|", lo, binary("<<", hi, E("const", "int", val=16)))
  body.append(Stmt(("d",), d))
  return Program(body, {"d": _var("d", d.t)}, "b32")

def atomic(row_name:str, sem) -> Program:
  """A read-modify-write row of sem.ATOMIC as a program: its inputs (the memory word `old`, the data a and b) are read
  by name (Read.special, as the row's ISA types); its output d is the word memory gets."""
  row = sem.ATOMIC[row_name]
  body:list[Stmt] = []
  env:dict[str, E] = {}
  for name, t in row.srcs: _bind(body, env, name, E("input", value_type(t), val=Read(None, t, special=name)))
  stmts, scope = instance(row, env)
  body += stmts
  return Program(body, _outputs(row, row.dst, scope, ("d",), body), row.dst)

# *** MODE's float fields ***

def mode_field(op:Mode, ftz32:bool, ftz16:bool) -> int:
  """The bits op reads or must write: a kernel runs with round to nearest even (0) in both rounding fields and its
  RSRC1 denormal modes, allow (3) or flush (0), f32 in bits 5:4 and f16/f64 in bits 7:6."""
  mode = (0 if ftz32 else 3) << 4 | (0 if ftz16 else 3) << 6
  return mode >> op.offset & ((1 << op.size) - 1)

def mode_change(op:Mode, value:int) -> str:
  """Why writing value to op's MODE bits is refused."""
  return f"a MODE change (bits {op.offset}..{op.offset + op.size - 1} to {value}) the executor does not model"

def check_mode_write(op:Mode, ftz32:bool, ftz16:bool, value:int):
  if value & ((1 << op.size) - 1) != mode_field(op, ftz32, ftz16): raise Unsupported(mode_change(op, value))
