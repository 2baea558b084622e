"""PTX types as numpy dtypes. bf16 (and the packed x2 forms) are carried as raw bits: numpy has no bfloat16."""
import numpy as np
from mockgpu.errors import UnsupportedInstruction

_NP = {"b8": np.uint8, "u8": np.uint8, "s8": np.int8, "b16": np.uint16, "u16": np.uint16, "s16": np.int16, "f16": np.float16,
       "bf16": np.uint16, "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32, "f16x2": np.uint32,
       "bf16x2": np.uint32, "tf32": np.uint32, "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
       "pred": np.bool_}
PTX_TYPES = frozenset(_NP) | {"b128", "e4m3", "e5m2", "e4m3x2", "e5m2x2"}

def np_dtype(t:str) -> np.dtype:
  if t not in _NP: raise UnsupportedInstruction(f"PTX type .{t} is not supported")
  return np.dtype(_NP[t])

def bits(t:str) -> int: return 1 if t == "pred" else np_dtype(t).itemsize * 8
def is_float(t:str) -> bool: return t in ("f16", "f32", "f64", "bf16", "f16x2", "bf16x2")
def is_signed(t:str) -> bool: return t[0] == "s"
