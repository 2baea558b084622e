"""Operand values for the conformance suite and the ISA's operand encodings (from the ISA manual's operand chapter,
written here independently of mockgpu's decoder).

Value classes (an operand's format in tinygrad's OPERANDS table): f16, bf16, f32, f64 (floats), b16, b32, b64, b128
(integers and bits). A 16-bit class fills both halves of its 32-bit register. Each class has special values (signed
zeros, subnormals, infinities, quiet and signalling NaNs with payloads, integer minima and maxima, shift counts at and
past the width, rounding ties) mixed with random ones. Each list fits one wave (32 lanes): the harness gives every
special value to every source in a fixed arrangement (harness.special_rows).
"""
from __future__ import annotations
import struct
import numpy as np
from tinygrad.runtime.autogen.amd.common import Fmt

def f32b(x:float) -> int: return struct.unpack("<I", struct.pack("<f", x))[0]
def f64b(x:float) -> int: return struct.unpack("<Q", struct.pack("<d", x))[0]
def f16b(x:float) -> int: return int(np.array([x], np.float16).view(np.uint16)[0])

SPECIAL = {
  "f32": [0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc12345, 0x7f800001, 0xff812345,
          0x7fbfffff, 0x00000001, 0x807fffff, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, f32b(1.0), f32b(-1.0),
          f32b(0.5), f32b(2.0), 0x3effffff, f32b(2.5), f32b(-2.5), f32b(3.5), 0x4b000001, f32b(65504.0), f32b(65520.0),
          f32b(2.0**31), f32b(2.0**32), f32b(-2.0**31), f32b(4294967040.0), f32b(-0.5)],
  "f16": [0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7e15, 0x7c01, 0xfd45, 0x0001, 0x83ff, 0x03ff, 0x0400,
          0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3800, 0x4000, 0x3bff, 0x3e00, 0x4100, 0xc100, 0x4300, 0x6400, 0x5bf8],
  "bf16": [0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001, 0x807f, 0x0080, 0x7f7f, 0x3f80, 0xbf80, 0x4000,
           0x3f00, 0x4040],
  "f64": [0, 1 << 63, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000012345678,
          0x7ff0000000000001, 0xfff4000000000000, 1, 0x800fffffffffffff, 0x0010000000000000, 0x7fefffffffffffff,
          f64b(1.0), f64b(-1.0), f64b(0.5), f64b(2.0), f64b(2.5), f64b(-3.5), f64b(0.49999999999999994),
          f64b(2.0**52 + 1), f64b(2.0**31), f64b(-2.0**31 - 0.5), f64b(4294967295.5), f64b(3.141592653589793), f64b(1e-300),
          f64b(1e300), f64b(1 / 3)],
  "b32": [0, 1, 2, 3, 15, 16, 31, 32, 33, 63, 64, 65, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0xffff, 0x8000,
          0x7fff, 0x10000, 0xff, 0x80, 0x7fffff, 0x800000, 0xffffff, 0x1000000, 0xff00ff00, 0x0f0f0f0f],
  "b16": [0, 1, 2, 15, 16, 17, 0x7fff, 0x8000, 0xffff, 0xfffe, 0xff, 0x80, 0x100, 0x3c00],
  "b64": [0, 1, 2, 31, 32, 63, 64, 65, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 0xffffffff, 1 << 32, 0x8000000000000001],
}
CLASS_BITS = {"f16": 16, "bf16": 16, "b16": 16, "f32": 32, "b32": 32, "f64": 64, "b64": 64, "b128": 128}

def random_float(rng, cls:str, n:int) -> np.ndarray:
  """Random finite values of a float class: exponents mostly near 1, some across the whole range."""
  e_bits, m_bits = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}[cls]
  bias = (1 << (e_bits - 1)) - 1
  near = rng.integers(bias - min(bias - 1, 24), bias + min(bias, 24), n)
  wide = rng.integers(0, (1 << e_bits) - 1, n)
  exp = np.where(rng.random(n) < 0.8, near, wide).astype(object)
  frac = [int(x) for x in rng.integers(0, 1 << min(m_bits, 62), n, dtype=np.uint64)]
  if m_bits > 62: frac = [f << (m_bits - 62) | int(rng.integers(0, 1 << (m_bits - 62))) for f in frac]
  sign = rng.integers(0, 2, n)
  return [int(s) << (e_bits + m_bits) | int(e) << m_bits | f for s, e, f in zip(sign, exp, frac)]

def random_int(rng, bits:int, n:int) -> list[int]:
  """Random integers: full-width bits, small values (shift counts and field widths) and bit-field descriptors."""
  full = [int(x) for x in rng.integers(0, 1 << min(bits, 63), n, dtype=np.uint64)]
  if bits > 63: full = [x | int(rng.integers(0, 2)) << 63 for x in full]
  if bits > 64: full = [x | int(rng.integers(0, 1 << 63, dtype=np.uint64)) << 64 | int(rng.integers(0, 1 << 63, dtype=np.uint64)) << 1 for x in full]
  small = [int(x) for x in rng.integers(0, 2 * min(bits, 64) + 4, n)]
  field = [int(w) << 16 | int(o) for w, o in zip(rng.integers(0, 40, n), rng.integers(0, 40, n))]  # s_bfe's S1
  pick = rng.random(n)
  return [f if p < 0.6 else s if p < 0.85 else d for f, s, d, p in zip(full, small, field, pick)]

def element(rng, cls:str, n:int) -> list[int]:
  """n values of one element of a class: specials (a third) and random."""
  if cls in ("f16", "bf16", "f32", "f64"): rand = random_float(rng, cls, n)
  else: rand = random_int(rng, CLASS_BITS[cls] if cls != "b128" else 128, n)
  spec = SPECIAL.get(cls, SPECIAL["b32"])
  pick = rng.integers(0, len(spec), n)
  return [spec[p] if r < 0.35 else x for x, p, r in zip(rand, pick, rng.random(n))]

def values(rng, cls:str, n:int) -> list[int]:
  """n register values of a class (16-bit classes: both halves; b128: four random words)."""
  if cls in ("f16", "bf16", "b16"):
    lo, hi = element(rng, cls, n), element(rng, cls, n)
    return [h << 16 | l for l, h in zip(lo, hi)]
  if cls == "b128": return [element(rng, "b64", 1)[0] | element(rng, "b64", 1)[0] << 64 for _ in range(n)]
  return element(rng, cls, n)

def operand_class(fmt:Fmt, bits:int) -> str:
  """The value class of an operand from tinygrad's OPERANDS entry (format, size in bits)."""
  name = fmt.name
  if bits == 128: return "b128"
  if "BF16" in name: return "bf16"
  if "F16" in name and "PK" not in name.replace("PK2_F16", ""): return "f16"
  if name.endswith("F32"): return "f32"
  if name.endswith("F64"): return "f64"
  if bits == 64: return "b64"
  if bits == 16 or name.endswith(("16", "B16")): return "b16"
  return "b32"

# *** inline constants (ISA: SRC encodings 128-208 integers, 240-248 floats) ***

INT_CONSTANTS = [0, 1, 2, 7, 31, 32, 63, 64, -1, -2, -16]
FLOAT_CONSTANTS = [0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, "INV_2PI"]
INV_2PI = {"f16": 0x3118, "f32": 0x3e22f983, "f64": 0x3fc45f306dc9c882}

def float_constant_bits(c, cls:str) -> int:
  """A float inline constant as an operand of class cls sees it: encoded in the operand's own float format."""
  if c == "INV_2PI": return INV_2PI[cls]
  return {"f16": f16b, "f32": f32b, "f64": f64b}[cls](c)

def constant_bits(c, cls:str, width:int) -> int:
  """The register bits an inline constant supplies to an operand of class cls and width bits (32 or 64): integers
  sign-extended to the operand's width; floats in the operand's format (16-bit ones in bits 15:0, the rest 0)."""
  if isinstance(c, int): return c & ((1 << width) - 1)
  return float_constant_bits(c, cls)

def literal_bits(lit:int, cls:str) -> int:
  """The bits a 32-bit literal supplies: a 64-bit float operand takes it as its high half; other operands as is
  (the suite only uses literals below 2**31 on 64-bit integer operands, where zero and sign extension agree)."""
  if cls == "f64": return lit << 32
  return lit

def pick_literal(rng, cls:str) -> int:
  """A literal that the DSL cannot encode as an inline constant, suited to the operand class."""
  while True:
    if cls == "f64": lit = element(rng, "f64", 1)[0] >> 32
    elif cls == "b64": lit = int(rng.integers(65, 1 << 31))
    else: lit = values(rng, cls if cls != "b128" else "b32", 1)[0] & 0xffffffff
    if not (0 <= lit <= 64 or lit >= 0xfffffff0): return lit
