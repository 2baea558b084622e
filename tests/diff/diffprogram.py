"""Random multi-op programs for the differential suite: a program is plain data (it crosses the pipe to the runner),
a list of steps over a list of values that all have one square shape (n, n) or broadcast against it.

A step is (kind, name, sources...) and appends its result to the values:
  ("unary", name, i), ("binary", name, i, j), ("cast", dtype, i), ("reduce", name, i, axis) (keepdim: it broadcasts),
  ("move", name, i) (shape-preserving: transpose, flip, a pad-and-shrink shift), ("where", i, j, k).
Only ops whose result is exactly defined on every backend are drawn (no transcendentals, no float reductions but max
and min, no integer division), so every program compares bit for bit; casts from float to integer first replace NaN
and clamp into the target's range, since C and GPUs leave an out-of-range conversion undefined.

Every step is live: the program's outputs are all the step values no later step reads (`outputs`), so each step's
value is compared or feeds one that is.
"""
from __future__ import annotations

UNARY = ("neg", "abs", "relu", "square", "logical_not", "floor", "sign")
BINARY = ("add", "sub", "mul", "maximum", "minimum", "eq", "lt", "ne", "xor")
REDUCE = ("max", "min", "sum_int")
MOVE = ("T", "flip0", "flip1", "shift")
DTYPES = ("bool", "int8", "int16", "int32", "uint8", "uint32", "int64", "float16", "bfloat16", "float32")

def unary(name, x):
  from tinygrad import dtypes
  if name in ("floor",) and not dtypes.is_float(x.dtype): return x
  if name == "square" and x.dtype == dtypes.bool: return x
  if name == "neg" and x.dtype == dtypes.bool: return x.logical_not()
  return getattr(x, name)()

def binary(name, a, b):
  from tinygrad import dtypes
  if name == "lt": return a < b
  if name == "xor":
    if dtypes.is_float(a.dtype) or dtypes.is_float(b.dtype): return a.maximum(b)
    return a ^ b
  if name in ("sub",) and a.dtype == dtypes.bool and b.dtype == dtypes.bool: return a ^ b
  return getattr(a, name)(b)

def cast(dtype, x):
  from tinygrad import dtypes
  to = getattr(dtypes, dtype)
  if dtypes.is_float(x.dtype) and not dtypes.is_float(to) and to != dtypes.bool:
    lo, hi = (0, 100) if dtypes.is_unsigned(to) else (-100, 100)
    x = x.isnan().where(0, x).clip(lo, hi)
  return x.cast(to)

def reduce(name, x, axis):
  from tinygrad import dtypes
  if name == "sum_int": return x.sum(axis=axis, keepdim=True) if dtypes.is_int(x.dtype) else x.max(axis=axis, keepdim=True)
  return getattr(x, name)(axis=axis, keepdim=True)

def move(name, x):
  if name == "T": return x.T
  if name.startswith("flip"): return x.flip(int(name[-1]))
  n = x.shape[1]
  return x.pad(((0, 0), (1, 0)))[:, :n]

def sources(step:tuple) -> list[int]:
  """The value indexes a step reads."""
  kind, *args = step
  if kind == "where": return list(args)
  if kind == "binary": return [args[1], args[2]]
  return [args[1]]

def outputs(steps:list, n_inputs:int) -> list[int]:
  """The values the program returns: every step's value that no later step reads."""
  read = {i for st in steps for i in sources(st)}
  return [n_inputs + k for k in range(len(steps)) if n_inputs + k not in read]

def live_steps(steps:list, n_inputs:int) -> int:
  """How many steps reach an output (are one, or feed one through later steps)."""
  live, todo = set(), list(outputs(steps, n_inputs))
  while todo:
    if (i := todo.pop()) < n_inputs or i in live: continue
    live.add(i)
    todo += sources(steps[i - n_inputs])
  return len(live)

def run(device, *xs, steps):
  from tinygrad import dtypes
  vals = list(xs)
  for kind, *args in steps:
    if kind == "unary": vals.append(unary(args[0], vals[args[1]]))
    elif kind == "binary": vals.append(binary(args[0], vals[args[1]], vals[args[2]]))
    elif kind == "cast": vals.append(cast(args[0], vals[args[1]]))
    elif kind == "reduce": vals.append(reduce(args[0], vals[args[1]], args[2]))
    elif kind == "move": vals.append(move(args[0], vals[args[1]]))
    elif kind == "where": vals.append(vals[args[0]].cast(dtypes.bool).where(vals[args[1]], vals[args[2]]))
    else: raise ValueError(kind)
  return [vals[i].contiguous() for i in outputs(steps, len(xs))]
