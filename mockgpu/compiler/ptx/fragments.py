"""mma.sync's fragments: which element of the A, B and C/D matrices each lane's registers hold (the PTX ISA's fragment
layouts for .row.col), and how elements pack into b32 registers. Read by the numpy path (compiler/ptx/backends/collective.py)
and the C backend (backends/c.py), so both place every element alike."""
from __future__ import annotations
import functools
import numpy as np
from mockgpu.boards import NV_WARP

M, N = 16, 8   # the shapes modelled are m16n8k8 and m16n8k16
PER_REG = {"f16": 2, "bf16": 2, "tf32": 1, "f32": 1}   # elements of each operand type in one b32 register

class Unmodelled(ValueError):
  """A shape or operand type without a layout here (the caller names the instruction)."""

@functools.lru_cache(maxsize=None)
def layout(shape:str, ta:str) -> dict:
  """k and the flat (row*cols + col) positions of each lane's fragment elements of a, b and c (lane-major: lane l's
  element i at l*elements + i)."""
  lane = np.arange(NV_WARP)   # the ISA's tables are a warp's
  gid, tig = lane >> 2, lane % 4
  if shape == "m16n8k16" and ta in ("f16", "bf16"):
    i, j, k = np.arange(8), np.arange(4), 16
    a_row, a_col = gid[:, None] + 8 * ((i // 2) % 2), tig[:, None] * 2 + (i % 2) + 8 * (i // 4)
    b_row = tig[:, None] * 2 + (j % 2) + 8 * (j // 2)
  elif shape == "m16n8k8" and ta in ("f16", "bf16"):
    i, j, k = np.arange(4), np.arange(2), 8
    a_row, a_col = gid[:, None] + 8 * (i // 2), tig[:, None] * 2 + (i % 2)
    b_row = tig[:, None] * 2 + j
  elif shape == "m16n8k8" and ta == "tf32":
    i, j, k = np.arange(4), np.arange(2), 8
    a_row, a_col = gid[:, None] + 8 * (i % 2), tig[:, None] + 4 * (i // 2)
    b_row = tig[:, None] + 4 * j
  else: raise Unmodelled(f"mma shape {shape} with .{ta} operands")
  b_col = np.broadcast_to(gid[:, None], b_row.shape)
  c = np.arange(4)
  c_row, c_col = gid[:, None] + 8 * (c // 2), tig[:, None] * 2 + (c % 2)
  return dict(k=k, a=(a_row * k + a_col).reshape(-1), b=(b_row * N + b_col).reshape(-1), c=(c_row * N + c_col).reshape(-1))

def multiply(a:np.ndarray, b:np.ndarray, c:np.ndarray) -> np.ndarray:
  """D = A*B + C over a stack of (M, K) and (K, N) float64 matrices: products exact (the operand formats have at most 24
  significand bits), summed in k order from the first product, then C added: an order both backends keep, so a sum
  that rounds rounds alike."""
  s = a[..., :, 0, None] * b[..., None, 0, :]
  for k in range(1, a.shape[-1]): s = s + a[..., :, k, None] * b[..., None, k, :]   # not matmul: BLAS picks its own order
  return s + c
