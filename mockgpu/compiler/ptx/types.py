"""PTX types and number formats: the ground floor both backends and the executor's numerics read.

A type's storage is a numpy dtype (the numpy backend's arrays) and a C type (the C backend's locals). bf16 (and the
packed x2 forms) are carried as raw bits in both: numpy has no bfloat16, and the C prelude computes on their bits.
"""
import numpy as np
from mockgpu.errors import UnsupportedInstruction
from mockgpu.compiler.floats import F32, F16, BF16

TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4, "s32": 4,
              "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1}

_NP = {"b8": np.uint8, "u8": np.uint8, "s8": np.int8, "b16": np.uint16, "u16": np.uint16, "s16": np.int16, "f16": np.float16,
       "bf16": np.uint16, "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32, "f16x2": np.uint32,
       "bf16x2": np.uint32, "tf32": np.uint32, "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
       "pred": np.bool_}
PTX_TYPES = frozenset(_NP) | {"b128", "e4m3", "e5m2", "e4m3x2", "e5m2x2"}

# the C backend's storage: float16 and bfloat16 values are their bits (prelude.c converts them to compute)
CTYPE = {"b8": "uint8_t", "u8": "uint8_t", "s8": "int8_t", "b16": "uint16_t", "u16": "uint16_t", "s16": "int16_t", "f16": "uint16_t",
         "bf16": "uint16_t", "b32": "uint32_t", "u32": "uint32_t", "s32": "int32_t", "f32": "float", "f16x2": "uint32_t",
         "bf16x2": "uint32_t", "b64": "uint64_t", "u64": "uint64_t", "s64": "int64_t", "f64": "double", "pred": "uint8_t"}

INT_RANGE = {"u8": (0, 255), "s8": (-128, 127), "u16": (0, 65535), "s16": (-32768, 32767), "u32": (0, 2**32 - 1),
             "s32": (-2**31, 2**31 - 1), "u64": (0, 2**64 - 1), "s64": (-2**63, 2**63 - 1)}

PACKED = ("f16x2", "bf16x2")   # two 16-bit floats in a b32; an operation applies to each half

def np_dtype(t:str) -> np.dtype:
  if t not in _NP: raise UnsupportedInstruction(f"PTX type .{t} is not supported")
  return np.dtype(_NP[t])

def bits(t:str) -> int: return 1 if t == "pred" else np_dtype(t).itemsize * 8
def is_float(t:str) -> bool: return t in ("f16", "f32", "f64", "bf16", "f16x2", "bf16x2")
def is_signed(t:str) -> bool: return t[0] == "s"
def bit_type(t:str) -> str: return {8: "b8", 16: "b16", 32: "b32", 64: "b64"}[bits(t)]
def uint_type(t:str) -> str: return f"u{bits(t)}"
def wide(t:str) -> str:
  """The integer type twice as wide as t, of its signedness (mul.wide, mul.hi)."""
  return ("s" if is_signed(t) else "u") + str(bits(t) * 2)

# *** float formats ***

# PTX's float types narrower than f64, in compiler/floats.py's formats
FMTS = {"f32": F32, "f16": F16, "bf16": BF16}

# fp8 (cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f32/.f16x2, cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2): the OCP formats of
# compiler/floats.py, e4m3 (no infinity: S.1111.111 is its NaN) and e5m2 (IEEE-like: S.11111.00 infinity)
FP8X2 = {"e4m3x2": "e4m3", "e5m2x2": "e5m2"}   # the packed pair types and their element format
