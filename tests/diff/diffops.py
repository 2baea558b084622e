"""The differential suite's op families (see tests/diff/diffcases.py for the case format). Each family registers its ops
(`op`) and generates its cases (`add`) over dtypes and the rotating shapes and views."""
from __future__ import annotations
import diffcases as D
from diffcases import (op, add, X, rotation, viewed_shape, INTS, FLOATS, FP8, NUMERIC, ALL, TRANS, TRIG, TRIG_UNIT, TRIG_ARG, REDUCE, REDUCE_TRANS,
                       SOFTMAX, ulps)

def dt(name):
  from tinygrad import dtypes
  return getattr(dtypes, name)

# *** unary elementwise ***
# name: (domain, dtypes, grad, cmp)
UNARY = {
  "exp": ((-4, 4), FLOATS, True, TRANS), "exp2": ((-4, 4), FLOATS, True, TRANS), "log": ((0.01, 10), FLOATS, True, TRANS),
  "log2": ((0.01, 10), FLOATS, True, TRANS), "log10": ((0.01, 10), FLOATS, False, TRANS), "sqrt": ((0, 10), FLOATS, True, TRANS),
  "rsqrt": ((0.01, 10), FLOATS, True, TRANS), "reciprocal": ((0.1, 10), FLOATS, True, TRANS), "sin": ((-6, 6), FLOATS, True, TRIG),
  "cos": ((-6, 6), FLOATS, True, TRIG), "tan": ((-1.4, 1.4), FLOATS, False, TRIG), "asin": ((-0.99, 0.99), FLOATS, True, TRIG_UNIT),
  "acos": ((-0.99, 0.99), FLOATS, False, TRIG_UNIT), "atan": ((-6, 6), FLOATS, True, TRIG_UNIT), "sinh": ((-4, 4), FLOATS, False, TRIG_UNIT),
  "cosh": ((-4, 4), FLOATS, False, TRIG), "tanh": ((-4, 4), FLOATS, True, TRIG_UNIT),
  "asinh": ((-6, 6), FLOATS, False, ulps(32, "log(x + sqrt(x*x+1)) cancels for x < 0: GPU kernels keep half intermediates, CPU's are float",
                                         ("slope",), "arg")),
  "acosh": ((1, 10), FLOATS, False, TRIG_ARG), "atanh": ((-0.95, 0.95), FLOATS, False, TRIG_UNIT), "erf": ((-3, 3), FLOATS, True, TRIG_UNIT),
  "sigmoid": ((-6, 6), FLOATS, True, TRIG), "logsigmoid": ((-6, 6), FLOATS, False, TRIG_ARG), "relu": (None, NUMERIC, True, None),
  "relu6": ((-8, 8), NUMERIC, False, None), "leaky_relu": (None, FLOATS, True, None), "elu": (None, FLOATS, True, TRIG_UNIT),
  "celu": (None, FLOATS, False, TRIG_UNIT), "selu": (None, FLOATS, False, TRIG_UNIT), "gelu": (None, FLOATS, True, TRIG_ARG),
  "quick_gelu": (None, FLOATS, False, TRIG), "silu": (None, FLOATS, True, TRIG), "swish": (None, FLOATS, False, TRIG),
  "mish": (None, FLOATS, False, TRIG_ARG), "softplus": (None, FLOATS, True, TRIG_ARG), "softsign": (None, FLOATS, False, TRIG),
  "hardsigmoid": (None, FLOATS, False, ulps(2, "relu6(x+3)/6: GPUs contract (x+3)*(1/6) into an fma, the CPU rounds twice", (), 1)),
  "hardswish": (None, FLOATS, True, ulps(2, "x*(x+3)/6: GPUs contract the product into an fma, the CPU rounds it")),
  "hardtanh": (None, FLOATS, False, None),
  "square": (None, NUMERIC, True, None), "sign": ("special", NUMERIC, False, None), "ceil": ((-9, 9), FLOATS, False, None),
  "floor": ((-9, 9), FLOATS, False, None), "round": ((-9, 9), FLOATS, False, None), "trunc": ((-9, 9), FLOATS, False, None),
  "abs": ("special", NUMERIC + FP8, True, None), "neg": ("special", NUMERIC + FP8, True, None), "isnan": ("special", FLOATS, False, None),
  "isinf": ("special", FLOATS, False, None), "isfinite": ("special", FLOATS, False, None), "logical_not": (None, ("bool",) + NUMERIC, False, None),
  "bitwise_not": ("full", ("bool",) + INTS, False, None), "contiguous": (None, ALL, True, None), "clone": (None, ALL, False, None),
  "detach": (None, FLOATS, False, None), "contiguous_backward": (None, FLOATS, True, None),
}
def unary_family():
  for name, (domain, dtypes, grad, cmp) in UNARY.items():
    op(name, cmp=cmp)(lambda d, x, name=name: getattr(x, name)())
    for dtype in dtypes:
      k = 5 if dtype in ("float32", "int32") else 2 if dtype in FP8 or dtype == "bool" else 3
      dom = domain if dtype not in INTS or domain == "full" else None
      for sh, v in rotation(k):
        # padding inserts zeros: outside the domain of an op that divides by its input, where tinygrad's afn code
        # leaves 1/0 undefined (MOCK+AMD's float64 v_rcp/v_rsq plus Newton steps give NaN, as hardware does)
        if v == "pad" and name in ("rsqrt", "reciprocal"): v = None
        add(name, [X(sh, dtype, dom, v)])
    if grad:
      for sh, v in [((13, 17), None), ((5, 6), "pad")]: add(name, [X(sh, "float32", domain if domain != "special" else None, v)], grad=True)
  op("clip")(lambda d, x, lo, hi: x.clip(lo, hi))
  op("clamp")(lambda d, x, lo, hi: x.clamp(lo, hi))
  for name in ("clip", "clamp"):
    for dtype in NUMERIC:
      lo, hi = (-2.5, 3.5) if dtype in FLOATS else (2, 50)
      for sh, v in rotation(2): add(name, [X(sh, dtype, None, v)], {"lo": lo, "hi": hi})
    add(name, [X((13, 17), "float32")], {"lo": -1.5, "hi": 2.0}, grad=True)
  for name, kw in (("leaky_relu", {"neg_slope": 0.2}), ("elu", {"alpha": 0.5}), ("celu", {"alpha": 2.0})):
    op(f"{name}.kw", name, D.CMP[name])(lambda d, x, name=name, **kw: getattr(x, name)(**kw))
    add(f"{name}.kw", [X((13, 17), "float32")], kw)

# *** casts and bitcasts: every pair ***
def cast_domain(src, dst):
  """Values both types hold (a float to integer conversion out of range is undefined in C and on GPUs)."""
  if "bool" in (src, dst): return None
  lo, hi = -100, 100
  if src in INTS or dst in INTS:
    unsigned = (src.startswith("uint") if src in INTS else False) or (dst.startswith("uint") if dst in INTS else False)
    if unsigned: lo = 0
    if "int8" in (src, dst): hi = 100
  if src in FP8 or dst in FP8: lo, hi = max(lo, -50), 50
  return (lo, hi)
def cast_family():
  op("cast")(lambda d, x, to: x.cast(dt(to)))
  for src in ALL:
    for dst in ALL:
      if src == dst: continue
      sh, v = rotation(1)[0]
      dom = cast_domain(src, dst)
      # DEV=CPU lowers float64 -> fp8 through a narrower float (two roundings: 8.5002 became 8.5, then 8) where CUDA
      # rounds once (9): inputs that float16 holds, so the reference rounds once too
      if src == "float64" and dst in FP8: dom = (*dom, "float16")
      add("cast", [X((29,) if sh == () else sh, src, dom, v)], {"to": dst})
  # the named conversions
  for name in ("float", "half", "double", "int", "long", "short", "bool", "bfloat16"):
    op(name)(lambda d, x, name=name: getattr(x, name)())
    for src in ("float32", "int32", "float16", "uint8"): add(name, [X((13, 17), src, cast_domain(src, "int8"))])
  op("bitcast")(lambda d, x, to: x.bitcast(dt(to)))
  sizes = {}
  for t in ALL[1:]: sizes.setdefault(int(np_size(t)), []).append(t)
  for group in sizes.values():
    for src in group:
      for dst in group:
        if src != dst and src not in FP8: add("bitcast", [X((7, 9), src, "full" if src in INTS else None)], {"to": dst})
  add("bitcast", [X((6, 8), "float32")], {"to": "uint16"}, tag="narrow")
  add("bitcast", [X((6, 8), "uint8", "full")], {"to": "int32"}, tag="widen")
def np_size(t):
  if t in FP8: return 1
  if t == "bfloat16": return 2
  import numpy as np
  return np.dtype(t).itemsize

# *** binary and ternary elementwise ***
PAIRS = [((13, 17), (13, 17)), ((13, 17), (1, 17)), ((7,), ()), ((4, 1, 6), (5, 1)), ((), ()), ((2053,), (2053,)), ((0, 3), (1, 3))]
def pair_rotation(k):
  start = next(D._rot)
  return [PAIRS[(start * 3 + i) % len(PAIRS)] for i in range(k)]
# name: (fn, dtypes, domain a, domain b, grad, cmp)
def _floor_div(a, b): return a // b
BINARY = {
  "add": (lambda a, b: a + b, NUMERIC + FP8, "special", "special", True, None),
  "sub": (lambda a, b: a - b, NUMERIC, "special", "special", True, None),
  "mul": (lambda a, b: a * b, NUMERIC + FP8, "special", "special", True, None),
  "div": (lambda a, b: a / b, FLOATS, (-9, 9), (0.5, 9), True,
          ulps(2, "tinygrad lowers a/b to a*rcp(b): GPUs take rcp from an approximate instruction")),
  "div.trunc": (lambda a, b: a.div(b, rounding_mode="trunc"), INTS + ("float32",), (-99, 99), (1, 9), False, None),
  "div.floor": (lambda a, b: a.div(b, rounding_mode="floor"), INTS + ("float32",), (-99, 99), (1, 9), False, None),
  "__floordiv__": (_floor_div, INTS, (-99, 99), (1, 9), False, None),
  "mod": (lambda a, b: a.mod(b), INTS + ("float32",), (-99, 99), (1, 9), False,
          ulps(32, "fma contraction in x - floor(x/y)*y, whose product has x's magnitude", (), "arg")),
  # x - trunc(x/y)*y: CUDA C contracts the last product into an fma where the CPU rounds it; the cancellation leaves
  # that rounding of |x| (up to 99, against results below 9: 2^4 of the result's ulps)
  "fmod": (lambda a, b: a.fmod(b), INTS + ("float32", "float64"), (-99, 99), (1, 9), False,
           ulps(32, "fma contraction in x - trunc(x/y)*y, whose product has x's magnitude", (), "arg")),
  "pow": (lambda a, b: a.pow(b), ("float16", "float32", "float64"), (0.1, 4), (-3, 3), True,
          ulps(16, "exp2(y*log2(x)) on hardware exp2/log2 (libdevice pow on NVRTC float64); the gradient multiplies by log(x)", ("slope",), 1)),
  # no integer pow: tinygrad 0.14 computes it in float and stores the float into the integer buffer without a cast
  # (clang rejects the C; LLVM stores the float's bits, on hardware as here), a tinygrad bug, not a device behaviour
  "maximum": (lambda a, b: a.maximum(b), ("bool",) + NUMERIC, None, None, True, None),
  "minimum": (lambda a, b: a.minimum(b), ("bool",) + NUMERIC, None, None, True, None),
  "eq": (lambda a, b: a.eq(b), ALL, (-3, 3), (-3, 3), False, None), "ne": (lambda a, b: a.ne(b), ALL, (-3, 3), (-3, 3), False, None),
  "__lt__": (lambda a, b: a < b, ALL, "special", "special", False, None), "__le__": (lambda a, b: a <= b, NUMERIC, (-3, 3), (-3, 3), False, None),
  "__gt__": (lambda a, b: a > b, NUMERIC, (-3, 3), (-3, 3), False, None), "__ge__": (lambda a, b: a >= b, NUMERIC, "special", "special", False, None),
  "bitwise_and": (lambda a, b: a.bitwise_and(b), ("bool",) + INTS, "full", "full", False, None),
  "bitwise_or": (lambda a, b: a.bitwise_or(b), ("bool",) + INTS, "full", "full", False, None),
  "bitwise_xor": (lambda a, b: a.bitwise_xor(b), ("bool",) + INTS, "full", "full", False, None),
  # the sign source has no zeros: tinygrad's copysign reads the sign of y through 1/y, and with LLVM's afn (MOCK+AMD)
  # that is v_rcp_f64 plus Newton steps, which turn 1/-0 into NaN: copysign(x, -0) is undefined there, on hardware too
  "copysign": (lambda a, b: a.copysign(b), FLOATS, "special", (-4, 4), False, None),
  "logaddexp": (lambda a, b: a.logaddexp(b), FLOATS, (-5, 5), (-5, 5), False, TRIG_ARG),
  "isclose": (lambda a, b: a.isclose(b, rtol=0.1, atol=0.1), FLOATS, (-2, 2), (-2, 2), False, None),
}
def binary_family():
  for name, (fn, dtypes, da, db, grad, cmp) in BINARY.items():
    op(name, name.split(".")[0], cmp)(lambda d, a, b, fn=fn: fn(a, b))
    for dtype in dtypes:
      k = 4 if dtype in ("float32", "int32") else 2
      for sa, sb in pair_rotation(k):
        dom_a, dom_b = (None if dtype in INTS and x == "special" else x for x in (da, db))
        add(name, [X(sa, dtype, dom_a), X(sb, dtype, dom_b, salt=1)])
    if grad:
      add(name, [X((13, 17), "float32", da if da != "special" else None), X((1, 17), "float32", db if db != "special" else None, salt=1)], grad=True)
  # a Python scalar on either side
  op("add.scalar", "add")(lambda d, a, s: a + s)
  op("__radd__")(lambda d, a, s: s + a)
  op("__rsub__")(lambda d, a, s: s - a)
  op("__rmul__")(lambda d, a, s: s * a)
  op("__rtruediv__", cmp=BINARY["div"][5])(lambda d, a, s: s / a)
  op("__rpow__", cmp=TRANS)(lambda d, a, s: s ** a)
  for name, dtypes, s, dom in (("add.scalar", NUMERIC, 3, None), ("__radd__", ("float32", "int8"), 2.5, None),
                               ("__rsub__", ("float32", "int32", "uint8"), 7, None),
                               ("__rmul__", ("float32", "int16"), 3, None), ("__rtruediv__", ("float32", "float16"), 3.0, (0.5, 9)),
                               ("__rpow__", ("float32",), 2.0, (-4, 4))):
    for dtype in dtypes: add(name, [X((13, 17), dtype, dom)], {"s": s})
  # shifts by a constant and by a tensor
  op("lshift")(lambda d, a, n: a.lshift(n))
  op("rshift")(lambda d, a, n: a.rshift(n))
  for dtype in INTS:
    for n in (1, 3): add("lshift", [X((13, 17), dtype, "full")], {"n": n}); add("rshift", [X((13, 17), dtype, "full")], {"n": n})
  # mixed dtypes: tinygrad's promotion lattice decides the result type on both sides
  op("add.mixed", "add")(lambda d, a, b: a + b)
  op("mul.mixed", "mul")(lambda d, a, b: a * b)
  for i, (ta, tb) in enumerate(p for p in ((a, b) for a in ALL[:13] for b in ALL[:13]) if p[0] < p[1]):
    add("mul.mixed" if i % 2 else "add.mixed",
        [X((9, 7), ta, (-9, 9) if ta not in INTS else (0, 9)), X((9, 7), tb, (-9, 9) if tb not in INTS else (0, 9), salt=1)])
  ternary_family()

def ternary_family():
  op("where")(lambda d, c, a, b: c.where(a, b))
  for dtype in ALL:
    for sh, v in rotation(2 if dtype not in ("float32", "int32") else 4):
      add("where", [X(sh, "bool", None, v), X(viewed_shape(sh, v), dtype, None, None, 1), X((), dtype, None, None, 2)])
  add("where", [X((13, 17), "bool"), X((13, 17), "float32", salt=1), X((13, 17), "float32", salt=2)], grad=True)
  op("lerp", cmp=ulps(2, "GPUs contract a + w*(b-a) into one fma; the CPU rounds the product (of up to the inputs' magnitude)", (), "arg"))(
    lambda d, a, b, w: a.lerp(b, w))
  for dtype in ("float16", "bfloat16", "float32", "float64"):
    add("lerp", [X((13, 17), dtype), X((13, 17), dtype, salt=1), X((1, 17), dtype, (0, 1), salt=2)])
  add("lerp", [X((13, 17), "float32"), X((13, 17), "float32", salt=1), X((1, 17), "float32", (0, 1), salt=2)], grad=True)
  op("masked_fill")(lambda d, x, m, v: x.masked_fill(m, v))
  for dtype in ("float32", "int8", "uint16", "float16", "bool"): add("masked_fill", [X((13, 17), dtype), X((1, 17), "bool", salt=1)], {"v": 1})

# *** reductions and scans ***
AXES = [None, 0, -1, (0, 2)]
REDUCTIONS = {  # name: (dtypes, cmp for floats, grad, takes keepdim)
  "sum": (NUMERIC, REDUCE, True, True), "prod": (NUMERIC, REDUCE, True, True), "max": (("bool",) + NUMERIC, None, True, True),
  "min": (("bool",) + NUMERIC, None, True, True), "mean": (NUMERIC, REDUCE, True, True), "std": (FLOATS, REDUCE, True, True),
  "var": (FLOATS, REDUCE, True, True), "any": (("bool",) + NUMERIC, None, False, True), "all": (("bool",) + NUMERIC, None, False, True),
  "argmax": (NUMERIC, None, False, True), "argmin": (NUMERIC, None, False, True), "logsumexp": (FLOATS, REDUCE_TRANS, True, True),
  "std_mean": (FLOATS, REDUCE, False, True), "var_mean": (FLOATS, REDUCE, False, True),
  "softmax": (FLOATS, SOFTMAX, True, False), "log_softmax": (FLOATS, REDUCE_TRANS, True, False), "softmin": (FLOATS, SOFTMAX, False, False),
}
SCANS = {"cumsum": (NUMERIC, REDUCE, True), "cumprod": (FLOATS + ("int32", "int64"), REDUCE, False), "cummax": (NUMERIC, None, False),
         "cummin": (NUMERIC, None, False), "logcumsumexp": (FLOATS, REDUCE_TRANS, False)}
REDUCE_SHAPES = [((13, 17, 3), None), ((4, 6, 5), "T"), ((11, 9, 2), "stride"), ((1, 1, 1), None), ((257, 3, 263), None), ((5, 6, 2), "pad")]
def axis_ok(axis, ndim): return axis is None or all(-ndim <= a < ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
def reduce_family():
  for name, (dtypes, fcmp, grad, keep) in REDUCTIONS.items():
    op(name, cmp=fcmp)(lambda d, x, name=name, **kw: getattr(x, name)(**kw))
    for dtype in dtypes:
      n = next(D._rot)
      for i in range(4 if dtype in ("float32", "int32") else 2):
        sh, v = REDUCE_SHAPES[(n + i) % len(REDUCE_SHAPES)]
        if name in ("prod", "cumprod") and sh[0] > 100: sh = (3, 4, 5)
        axis = AXES[(n + i) % len(AXES)]
        # softmax and friends take one axis; tinygrad 0.14's logsumexp too (a tuple raises TypeError in it, on CPU too)
        if name in ("softmax", "log_softmax", "softmin", "logsumexp"):
          axis = axis if isinstance(axis, int) or axis is None and name == "logsumexp" else -1
        kw = {"axis": axis, **({"keepdim": i % 2 == 1} if keep else {})}
        if name in ("argmax", "argmin") and isinstance(axis, tuple): kw["axis"] = 1
        add(name, [X(sh, dtype, (0.5, 1.5) if name == "prod" and dtype in FLOATS else (-3, 3) if name == "prod" else None, v)], kw)
    if grad: add(name, [X((13, 17, 3), "float32", (0.5, 1.5) if name == "prod" else None)], {"axis": 1}, grad=True)
  add("sum", [X((1 << 16,), "float32")], {"axis": None}, tag="large")
  add("sum", [X((1 << 16,), "int32")], {"axis": None}, tag="large")
  add("max", [X((3, 1 << 14), "float16")], {"axis": 1}, tag="large")
  op("sum.acc", "sum", REDUCE)(lambda d, x, to: x.sum(dtype=dt(to)))
  for src, to in (("int8", "int32"), ("float16", "float32"), ("bool", "int32"), ("uint8", "uint64")): add("sum.acc", [X((31, 37), src)], {"to": to})
  for name, (dtypes, fcmp, grad) in SCANS.items():
    op(name, cmp=fcmp)(lambda d, x, name=name, axis=0: getattr(x, name)(axis))
    for dtype in dtypes:
      for sh, axis in (((13, 17), 1), ((300,), 0)) if dtype in ("float32", "int32") else (((9, 7), 0),):
        add(name, [X(sh, dtype, (0.8, 1.2) if name == "cumprod" and dtype in FLOATS else (-2, 2) if name == "cumprod" else None)], {"axis": axis})
    if grad: add(name, [X((13, 17), "float32")], {"axis": 1}, grad=True)

def register_all():
  for fn in (unary_family, cast_family, binary_family, reduce_family):
    D.FAMILY[0] = fn.__name__.removesuffix("_family")
    fn()
  import diffops_tensor
  diffops_tensor.register()
