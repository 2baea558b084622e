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
from mockgpu.compiler.ptx.parser import InvalidPTX, Instr

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
