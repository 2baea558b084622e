"""Instruction forms that the PTX ISA does not define, so ptxas (and the driver's JIT) rejects the module: the mock
raises InvalidPTX for them, naming the instruction and its line, instead of UnsupportedInstruction (which means a gap
of the mock). Checked with ptxas 13.0 (its messages are quoted in ours).

The floating-point transcendentals and approximations (PTX ISA, "Floating Point Instructions" and "Half Precision
Floating Point Instructions"):
  sin.approx{.ftz}.f32, cos.approx{.ftz}.f32, lg2.approx{.ftz}.f32      only .f32
  ex2.approx{.ftz}.f32, ex2.approx.{f16,f16x2}, ex2.approx.ftz.{bf16,bf16x2}
  tanh.approx.{f32,f16,f16x2,bf16,bf16x2}
  sqrt.approx{.ftz}.f32; sqrt.rnd{.ftz}.f32, sqrt.rnd.f64               .approx only for .f32
  rcp.approx{.ftz}.f32, rcp.approx.ftz.f64; rcp.rnd{.ftz}.f32, rcp.rnd.f64   .approx.f64 needs .ftz
  rsqrt.approx{.ftz}.f32, rsqrt.approx{.ftz}.f64
"""
from __future__ import annotations
from mockgpu.compiler.ptx import syntax as P
from mockgpu.compiler.ptx.syntax import InvalidPTX, Instr
from mockgpu.compiler.ptx.types import TYPE_BYTES

_TYPES = {"sin": ("f32",), "cos": ("f32",), "lg2": ("f32",), "ex2": ("f32", "f16", "f16x2", "bf16", "bf16x2"),
          "tanh": ("f32", "f16", "f16x2", "bf16", "bf16x2")}
_FLOAT_TYPES = ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64")

def check(ins:Instr):
  """Raise InvalidPTX if ins is one of the invalid forms above."""
  if ins.op not in _TYPES and ins.op not in ("sqrt", "rcp"): return
  t = next((m for m in ins.mods if m in _FLOAT_TYPES), None)
  if t is None: return
  if ins.op in _TYPES and t not in _TYPES[ins.op]:
    _invalid(ins, f"{ins.op} is defined only for .{', .'.join(_TYPES[ins.op])} (PTX ISA: {ins.op}), "
                  f"ptxas: \"Unexpected instruction types specified for '{ins.op}'\"")
  if "approx" not in ins.mods: return
  if ins.op == "sqrt" and t != "f32":
    _invalid(ins, "sqrt.approx is defined only for .f32; .f64 takes a rounding mode, sqrt.rn.f64 (PTX ISA: sqrt), "
                  "ptxas: " + ("\"Illegal modifier '.approx' for instruction 'sqrt'\"" if t == "f64" else
                                 "\"Unexpected instruction types specified for 'sqrt'\""))
  if ins.op == "rcp" and t == "f64" and "ftz" not in ins.mods:
    _invalid(ins, "the only approximate .f64 reciprocal is rcp.approx.ftz.f64 (PTX ISA: rcp.approx.ftz.f64), "
                  "ptxas: \"'.ftz' modifier required for instruction 'rcp.approx.f64'\"")
  if ins.op == "rcp" and t not in ("f32", "f64"):
    _invalid(ins, "rcp.approx is defined only for .f32 and .ftz.f64 (PTX ISA: rcp), "
                  "ptxas: \"Unexpected instruction types specified for 'rcp'\"")

def _invalid(ins:Instr, rule:str):
  raise InvalidPTX(f"PTX line {ins.line}: {ins.text}: not valid PTX, ptxas rejects it: {rule}")

# *** operands: counts, kinds and sizes against the instruction's type (PTX ISA "Type Checking Rules") ***
#
# A register agrees with an instruction type of the same size when either is a bit-size type (.bN), when both are
# integers (.uN/.sN), or when both are the same float type; a predicate only with .pred. ld, st and cvt relax this
# (PTX ISA "Operand Size Exceeding Instruction-Type Size"): their data registers may be wider than the type. For the
# opcodes below, ptxas rejects any other operand count ("Arguments mismatch for instruction"), any other type kind
# ("Unexpected instruction types specified"), an address where no address goes and a constant as the destination;
# other opcodes are left to their emitters.

_COUNTS = {**{op: (3,) for op in ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "copysign", "addc",
                                  "subc", "mul24")},
           **{op: (2,) for op in ("not", "neg", "abs", "cnot", "popc", "clz", "brev", "bfind", "sqrt", "rcp", "rsqrt", "ex2",
                                  "lg2", "sin", "cos", "tanh", "mov", "cvta", "testp")},
           **{op: (4,) for op in ("mad", "fma", "madc", "mad24", "selp", "slct", "bfe", "prmt", "shf")},
           "min": (3, 4), "max": (3, 4), "setp": (3, 4), "set": (3, 4), "bfi": (5,), "lop3": (5,), "cvt": (2, 3),
           "ld": (2,), "ldu": (2,), "st": (2,), "atom": (3, 4), "red": (2,)}   # one more with .L2::cache_hint (a policy)
# the type kinds each opcode takes: b bit-size, u/s integers, f floats, p .pred (8- and 128-bit types: none of them)
_KINDS = {**{op: "usf" for op in ("add", "sub", "mul", "mad", "min", "max", "div")},
          **{op: "f" for op in ("fma", "sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "testp", "copysign")},
          **{op: "bp" for op in ("and", "or", "xor", "not")}, **{op: "us" for op in ("rem", "bfind", "bfe", "addc", "subc", "madc",
                                                                                    "mul24", "mad24")},
          **{op: "b" for op in ("cnot", "shl", "popc", "clz", "brev", "bfi", "prmt", "lop3", "shf")},
          "shr": "bus", "abs": "sf", "neg": "sf", "setp": "busf", "selp": "busf"}
_ADDRESS_AT = {"ld": 1, "ldu": 1, "atom": 1, "st": 0, "red": 0}   # the operand that is [an address]
_TYPE_NAMES = frozenset(["b8", "u8", "s8", "b16", "u16", "s16", "f16", "bf16", "b32", "u32", "s32", "f32", "f16x2", "bf16x2",
                         "b64", "u64", "s64", "f64", "b128", "pred", "tf32"])

_OTHER_TYPES = frozenset(["e4m3", "e5m2", "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2"])

def _kind(t:str) -> str: return "p" if t == "pred" else "f" if t in _FLOAT_TYPES else t[0] if t[0] in "bus" else "?"

def _size(t:str) -> int: return TYPE_BYTES.get(t, 0)

def agrees(reg:str, t:str, relaxed:bool=False) -> bool:
  """Whether a register declared .reg may be an operand of instruction type t (relaxed: ld/st/cvt data, which may be
  wider than t)."""
  rk, tk = _kind(reg), _kind(t)
  if "p" in (rk, tk): return rk == tk
  if _size(reg) != _size(t) and not (relaxed and _size(reg) > _size(t)): return False
  if "b" in (rk, tk) or (rk in "us" and tk in "us"): return True
  return rk == tk == "f" and (reg == t or relaxed)

_PASSED: set[tuple] = set()   # the shapes (check_operands: _shape) of instructions that passed, for this process

def _shape(a):
  """What check_operands reads of an operand: its class and, for a register, its type (of each item of a vector)."""
  if isinstance(a, P.Reg): return a.type
  if isinstance(a, P.Vec): return tuple(_shape(x) for x in a.items)
  return type(a)

def check_operands(ins, fn_name:str):
  """Raise InvalidPTX when ins has an operand count, an operand kind or a register ptxas rejects. It reads the
  opcode, the modifiers and each operand's class and register type only: a shape that passed passes again (a
  kernel's instructions repeat a few shapes; the check was ~5 us each)."""
  if ins.error is not None or ins.op not in _COUNTS: return
  key = (ins.op, ins.mods, tuple(_shape(a) for a in ins.args))
  if key in _PASSED: return
  _check_operands(ins, fn_name)
  _PASSED.add(key)

def _check_operands(ins, fn_name:str):
  where = f" (in {fn_name})"
  counts = tuple(n + ("L2::cache_hint" in ins.mods) for n in _COUNTS[ins.op])
  if len(ins.args) not in counts:
    _invalid(ins, f"{ins.op} takes {' or '.join(map(str, counts))} operands, not {len(ins.args)}{where}, "
                  f"ptxas: \"Arguments mismatch for instruction '{ins.op}'\"")
  types = [m for m in ins.mods if m in _TYPE_NAMES or m in _OTHER_TYPES]
  if any(m in _OTHER_TYPES for m in types): return   # fp8 and tf32 forms: their emitters check them
  if ins.op in _KINDS and types and (_kind(types[-1]) not in _KINDS[ins.op] or _kind(types[-1]) != "p" and _size(types[-1]) in (1, 16)):
    _invalid(ins, f"{ins.op} does not take .{types[-1]}{where}, ptxas: \"Unexpected instruction types specified for '{ins.op}'\"")
  if ins.op == "cvt" and any(_kind(t) not in "usf" for t in types):   # conversions are between value types only
    _invalid(ins, f"cvt does not take .{next(t for t in types if _kind(t) not in 'usf')}{where}, "
                  "ptxas: \"Unexpected instruction types specified for 'cvt'\"")
  if ins.op == "cvt" and types and types[-1] in ("f16x2", "bf16x2"):   # packed sources convert only to fp8 pairs
    _invalid(ins, f"cvt from .{types[-1]} is defined only to .e4m3x2/.e5m2x2{where}, "
                  "ptxas: \"Unexpected instruction types specified for 'cvt'\"")
  for i, a in enumerate(ins.args):
    if isinstance(a, P.Addr) != (_ADDRESS_AT.get(ins.op) == i):
      _invalid(ins, f"operand {i + 1} {'is' if isinstance(a, P.Addr) else 'is not'} an address [...]{where}")
  d = ins.args[0]
  if ins.op not in ("st", "red") and isinstance(d, (P.Imm, P.Special, P.Sym, P.Not)):
    _invalid(ins, f"the destination of {ins.op} must be a register{where}")
  for i, (a, want, relaxed) in enumerate(_typed_operands(ins, types)):
    if isinstance(a, P.Reg) and not agrees(a.type, want, relaxed):
      _invalid(ins, f"{a.ptx} is a .{a.type} register where the instruction needs .{want}{where}, "
                    f"ptxas: \"Arguments mismatch for instruction '{ins.op}'\"")

def _wide(t:str) -> str: return {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}.get(t, t)

_SAME_TYPE = frozenset(["add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "not", "neg", "abs", "cnot", "brev",
                        "copysign", "addc", "subc", "mad", "madc", "fma", "sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos",
                        "tanh", "prmt", "shf", "mul24", "mad24", "cvta"])

def _typed_operands(ins, types:list[str]) -> list[tuple]:
  """(operand, the type it must agree with, relaxed) for the operands whose type the instruction fixes."""
  op, a = ins.op, ins.args
  if not types: return []
  t = types[-1]
  if op == "cvt": return [(a[0], types[0], True), (a[1], types[-1], True)] if len(types) == 2 and len(a) == 2 else []
  if op in ("ld", "ldu"): return [(x, t, True) for x in _items(a[0])]
  if op == "st": return [(x, t, True) for x in _items(a[1])]
  if op == "atom": return [(a[0], t, False), (a[2], t, False)]
  if op in ("setp", "set"):
    out = [(a[1], t, False), (a[2], t, False), (a[3] if len(a) == 4 else None, "pred", False)]
    return out + [(a[0], "pred" if op == "setp" else types[0], False)]
  if op == "selp": return [(a[0], t, False), (a[1], t, False), (a[2], t, False), (a[3], "pred", False)]
  if op == "slct": return [(x, types[0], False) for x in a[:3]] + [(a[3], t, False)]
  if op in ("shl", "shr"): return [(a[0], t, False), (a[1], t, False), (a[2], "u32", False)]
  if op in ("popc", "clz", "bfind"): return [(a[0], "u32", False), (a[1], t, False)]
  if op == "testp": return [(a[0], "pred", False), (a[1], t, False)]
  if op == "bfe": return [(a[0], t, False), (a[1], t, False), (a[2], "u32", False), (a[3], "u32", False)]
  if op == "bfi": return [(x, t, False) for x in a[:3]] + [(a[3], "u32", False), (a[4], "u32", False)]
  if op == "lop3": return [(x, t, False) for x in a[:4]]
  if op in ("mul", "mad") and "wide" in ins.mods:
    return [(a[0], _wide(t), False), (a[1], t, False), (a[2], t, False)] + ([(a[3], _wide(t), False)] if op == "mad" else [])
  if op in _SAME_TYPE or (op == "mov" and not any(isinstance(x, P.Vec) for x in a)): return [(x, t, False) for x in a]
  return []

def _items(a) -> list: return list(a.items) if isinstance(a, P.Vec) else [a]
