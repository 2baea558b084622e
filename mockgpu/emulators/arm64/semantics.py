"""A numpy model of arm64 float-to-integer conversion, where C leaves the result undefined (NaN, infinities, values out
of the target's range) and arm64 and x86 legitimately differ. The reference the arm64 lane's tests compare with.

arm64's FCVTZS / FCVTZU round toward zero and saturate: a value below the range gives the minimum, above it the
maximum, NaN gives 0 (Arm ARM, FPToFixed). x86's CVTTSS2SI gives the "integer indefinite" value (INT_MIN) instead.
tinygrad's kernels (clang and LLVM alike, cortex-a72 and apple-m1, measured 2026-12-05) convert
- to int32 / int64 / uint32 / uint64 with one saturating instruction of that width;
- to int8, uint8, int16 with FCVTZS to 32 bits and keep the low bits;
- to uint16 with FCVTZU to 32 bits and keep the low bits.
"""
import numpy as np

def _saturate(x:np.ndarray, lo:int, hi:int) -> np.ndarray:
  """FPToFixed with round toward zero: NaN -> 0, else clamp to [lo, hi] (computed exactly in float64 and Python ints)."""
  x = np.asarray(x, dtype=np.float64)
  out = np.zeros(x.shape, dtype=object)
  for i, v in np.ndenumerate(x):
    out[i] = 0 if np.isnan(v) else lo if v <= lo else hi if v >= hi else int(np.trunc(v))
  return out

def fcvtzs(x, bits:int) -> np.ndarray: return _saturate(x, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
def fcvtzu(x, bits:int) -> np.ndarray: return _saturate(x, 0, (1 << bits) - 1)

# target dtype -> (the conversion instruction, its width in bits)
CONVERSION = {"int8": (fcvtzs, 32), "uint8": (fcvtzs, 32), "int16": (fcvtzs, 32), "uint16": (fcvtzu, 32),
              "int32": (fcvtzs, 32), "uint32": (fcvtzu, 32), "int64": (fcvtzs, 64), "uint64": (fcvtzu, 64)}

def float_to_int(x, dtype:str) -> np.ndarray:
  """What an arm64 tinygrad kernel's cast of float values x to dtype gives: the instruction's result, truncated to dtype."""
  insn, width = CONVERSION[dtype]
  bits = np.dtype(dtype).itemsize * 8
  wide = insn(x, width)
  low = np.array([int(v) & ((1 << bits) - 1) for v in wide.ravel()], dtype=np.uint64).astype(f"uint{bits}")
  return low.view(dtype).reshape(np.shape(x))
