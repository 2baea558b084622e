"""The differential suite's cases: tinygrad's public Tensor API, enumerated, each method with generated inputs.

A case is plain data (it crosses a pipe to tests/diff/diffrunner.py): `{"id", "op", "x": [input specs], "kw", "grad", "ctx"}`.
An input spec is `(shape, dtype, domain, seed, view)`:
  - dtype is a tinygrad dtype name; bfloat16 and fp8 inputs travel as float32 values they hold exactly, so the cast in
    is no rounding on any backend;
  - domain is `(lo, hi)` (`(lo, hi, "float16")`: values of that narrower type), "special" (IEEE specials mixed in: ±0,
    ±inf, NaN, subnormals, the largest finite) or "full" (an integer type's whole range);
  - view is applied on the device before the op, so the kernel reads through it: "T" (axes reversed), "pad" (one
    zero each side), "stride" (every other row), "expand" (a size-1 axis broadcast to 4), "flip".
`OPS[op](device, *tensors, **kw)` builds the computation; `COVERS` maps each public Tensor name to the op ids that
exercise it, and `EXCLUDED` names the rest with the reason, so tests/diff/test_diff_api.py fails when a public method is
neither (tinygrad's next additions show up there).

How results compare (tests/diff/test_diff_api.py): bit for bit with DEV=CPU (NaN equals NaN whatever its payload) unless the
op's `CMP` entry states a bound in ulps against a float64 reference, with the reason for it.
"""
from __future__ import annotations
import itertools, zlib
import numpy as np

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
FP8 = ("fp8e4m3", "fp8e5m2", "fp8e4m3fnuz", "fp8e5m2fnuz")
NUMERIC = INTS + FLOATS
ALL = ("bool",) + NUMERIC + FP8
CARRIER = {"bfloat16": "float32", **{f: "float32" for f in FP8}}

# *** comparisons ***
EXACT = None
def ulps(n:float, why:str, cond:tuple=(), floor:float|str|None=None) -> dict:
  """A bound per element: |got - ref64| <= |cpu - ref64| + n ulps (of the case's dtype) of that element's own scale,
  c = max(|ref64|, the conditions `cond` names, `floor`), every one computed per element in float64:
    - "abs": the op on the magnitudes of its float inputs (and of its upstream gradients): for a sum, mean, matmul or
      scan, the sum of the magnitudes of the element's own inputs, the condition of a reassociated sum;
    - "slope": |sum_j x_j df/dx_j|, the element's change under a relative perturbation of every input (for sin(x),
      |x cos x|): the condition of the function at that element;
  `floor` names an intermediate the formula rounds at: 1 (a unit-scale term that cancels, as in exp(x) - 1), "arg"
  (max(1, the magnitude of the element's own inputs)), "norm" (the Frobenius norm of the input matrix: factorisations,
  whose every element's rounding is relative to it). No bound is relative to the largest output."""
  assert set(cond) <= {"abs", "slope"} and floor in (None, 1, "arg", "norm"), (cond, floor)
  return {"ulps": n, "why": why, "cond": tuple(cond), "floor": floor}
# tinygrad lowers transcendentals to the same polynomials on every backend, but GPU kernels take exp2, log2, sin, rcp
# and sqrt from the hardware's approximate instructions where the CPU computes them in software or correctly rounded
# (RDNA v_exp_f32/v_log_f32/v_rcp_f32/v_sqrt_f32: 1 ulp; PTX ex2/lg2/rcp/sqrt .approx.ftz.f32: 2 ulp), and contract
# a*b+c into fma. Each approximate step can compound through tinygrad's formula (a sigmoid is an exp2 and a rcp).
TRANS = ulps(8, "hardware exp2/log2/rcp/sqrt approximations (1-2 ulp each) compounded through tinygrad's formula")
# sin, cos (sin(pi/2 - x)), tan, sigmoid: tinygrad reduces the argument, whose rounding is at the argument's scale:
# a bound in ulps of the element's own condition |x f'(x)| (cos near pi/2 is absolute, sin near 0 relative)
TRIG = ulps(8, "argument reduction and hardware-approximate steps: ulps of the element's condition |x f'(x)|", ("slope",))
# tanh (2 sigmoid(2x) - 1), sinh, elu (exp(x) - 1), asin/acos/atan (pi/2 - ...), erf (1 - ...), atanh (log near 1):
# a unit-scale intermediate cancels, so near 0 the rounding is absolute at 1
TRIG_UNIT = ulps(8, "tinygrad's formula cancels a unit-scale intermediate (exp(x) - 1, 1 - erfc, pi/2 - asin, log near 1)", ("slope",), 1)
# softplus, logsigmoid, logaddexp (log(...) + max), gelu and mish (x * (1 + tanh ...)): the cancelling term is scaled by x
TRIG_ARG = ulps(8, "tinygrad's formula cancels a term of the input's magnitude (log(...) + max(x, y), x * (1 + tanh))", ("slope",), "arg")
# a sum (or matmul, mean, scan) whose GPU kernel groups, upcasts and splits differently from the CPU kernel rounds its
# partial sums differently: a bound of n ulps of the element's own sum of magnitudes
REDUCE = ulps(64, "reduction order differs from the CPU kernel (grouped, upcast, split partial sums)", ("abs", "slope"))
# log-sum-exp and what is built on it (log_softmax, losses, layernorm's rsqrt of a variance): the log of a sum rounded
# relative to itself is absolute, so beside the sum's own condition the floor is 1
REDUCE_TRANS = ulps(64, "a reassociated reduction feeding hardware-approximate transcendentals (log of a sum: absolute)", ("abs", "slope"), 1)
# softmax: exp(x_i - max) / sum: relative to the element, and to its slope in the inputs (the argument x_i - max rounds)
SOFTMAX = ulps(64, "a reassociated sum of hardware-approximate exponentials divides each element: ulps of its own condition", ("slope",))

OPS:dict[str, callable] = {}
CMP:dict[str, dict|None] = {}
COVERS:dict[str, set[str]] = {}
CASES:list[dict] = []
_IDS:dict[str, int] = {}
FAMILY = ["unary"]  # the op family (tests/diff/diffops.py, diffops_tensor.py) whose cases add() is generating: CI's sample strata

def op(opid:str, covers:str|tuple=(), cmp:dict|None=EXACT):
  def deco(fn):
    assert opid not in OPS, opid
    OPS[opid], CMP[opid] = fn, cmp
    for name in ((covers,) if isinstance(covers, str) else covers) or (opid.split(".")[0],): COVERS.setdefault(name, set()).add(opid)
    return fn
  return deco

def add(opid:str, x:list, kw:dict|None=None, grad:bool=False, ctx:dict|None=None, tag:str=""):
  assert opid in OPS, opid
  desc = ",".join(f"{dt}{list(sh)}{'/' + v if v else ''}" for sh, dt, _, _, v in x)
  kws = ",".join(f"{k}={v}" for k, v in (kw or {}).items())
  ctxs = ",".join(f"{k}={v}" for k, v in ctx.items()) if ctx else ""
  cid = f"{opid}[{desc}{';' + kws if kws else ''}{';' + tag if tag else ''}{';grad' if grad else ''}{';' + ctxs if ctx else ''}]"
  if cid in _IDS: cid = f"{cid}#{_IDS[cid]}"
  _IDS[cid] = _IDS.get(cid, 0) + 1
  CASES.append({"id": cid, "op": opid, "x": x, "kw": kw or {}, "grad": grad, "ctx": ctx or {}, "family": FAMILY[0]})

def seed_of(*parts) -> int: return zlib.crc32(repr(parts).encode())

def X(shape, dtype, domain=None, view=None, salt=0): return (tuple(shape), dtype, domain, seed_of(shape, dtype, domain, view, salt), view)

# shapes and views, taken in rotation so that across the suite every one meets every family: 0-d, one element,
# odd and prime sizes, a large reduction, an empty tensor, and permuted, padded, strided, broadcast and flipped reads
SHAPE_VIEWS = [((), None), ((1,), None), ((7,), None), ((13, 17), None), ((17, 13), "T"), ((5, 6), "pad"), ((11, 9), "stride"),
               ((3, 1, 5), "expand"), ((4, 6, 5), "flip"), ((0, 5), None), ((2053,), None), ((2, 3, 4, 5), "T")]
_rot = itertools.count()
def rotation(k:int) -> list:
  start = next(_rot)
  return [SHAPE_VIEWS[(start * 5 + i) % len(SHAPE_VIEWS)] for i in range(k)]

# *** building inputs (the runner uses these on both sides) ***
SPECIALS = {"float16": [0., -0., np.inf, -np.inf, np.nan, 6e-8, -3e-5, 65504.],
            "float32": [0., -0., np.inf, -np.inf, np.nan, 1e-45, -1e-39, 3.4028235e38],
            "float64": [0., -0., np.inf, -np.inf, np.nan, 5e-324, -1e-310, 1.7976931348623157e308],
            "bfloat16": [0., -0., np.inf, -np.inf, np.nan, 9.2e-41, -1e-39, 3.3895314e38]}

def make_array(shape, dtype, domain, seed) -> np.ndarray:
  return np.asarray(_make_array(shape, dtype, domain, seed))  # a 0-d draw is a numpy scalar, which Tensor() refuses

def _make_array(shape, dtype, domain, seed):
  r = np.random.default_rng(seed)
  if dtype == "bool": return r.integers(0, 2, shape).astype(bool)
  if dtype in INTS:
    info = np.iinfo(dtype)
    lo, hi = (info.min, info.max) if domain == "full" else (domain or (-100, 100))
    return r.integers(max(lo, info.min), min(hi, info.max), shape, endpoint=True, dtype=dtype)
  lo, hi = (-4, 4) if domain in (None, "special") else domain[:2]
  v = r.uniform(lo, hi, shape)
  if len(domain or ()) == 3: v = v.astype(domain[2]).astype(np.float64)  # values of a narrower float type
  if domain == "special" and v.size:
    sp = np.array(SPECIALS["float32" if dtype in FP8 else dtype])
    idx = r.integers(0, v.size, max(1, v.size // 3))
    v.reshape(-1)[idx] = sp[r.integers(0, len(sp), idx.size)]
  if dtype in ("float16", "float64"): return v.astype(dtype)
  v = v.astype(np.float32)
  if dtype == "bfloat16": return (v.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
  if dtype in FP8:
    from tinygrad import dtypes
    from tinygrad.dtype import fp8_to_float, float_to_fp8
    dt = getattr(dtypes, dtype)
    return np.array([fp8_to_float(float_to_fp8(float(e), dt), dt) for e in v.reshape(-1)], np.float32).reshape(v.shape)
  return v

SLOPE_STEP = 2.0 ** -20  # the relative perturbation of a "slope" run (float64: its truncation error is far below an ulp)
def transformed(arr:np.ndarray, transform:str|None) -> np.ndarray:
  """A float input (or upstream gradient) for a condition run of the float64 reference (see `ulps`)."""
  # np.asarray: numpy turns a 0-d array into a scalar, which Tensor() refuses
  if transform == "abs": return np.asarray(np.abs(arr))
  if transform == "slope": return np.asarray(arr * (1 + SLOPE_STEP))
  assert transform is None, transform
  return arr

def make_leaf(spec, device, upcast:bool=False, transform:str|None=None):
  """The input before its view. `upcast`: the same values as float64 (the reference run of an approximate case),
  `transform`d for a condition run."""
  from tinygrad import Tensor, dtypes
  shape, dtype, domain, seed, view = spec
  arr = make_array(shape, dtype, domain, seed)
  if upcast and dtype in FLOATS + FP8: return Tensor(transformed(arr.astype(np.float64), transform), device=device)
  t = Tensor(arr, device=device)
  return t.cast(getattr(dtypes, dtype)) if dtype in CARRIER else t

def apply_view(t, view):
  if view is None: return t
  if view == "T": return t.permute(*reversed(range(t.ndim)))
  if view == "pad": return t.pad(((1, 1),) * t.ndim)
  if view == "stride": return t[::2]
  if view == "flip": return t.flip(0)
  if view == "expand": return t.expand(*[4 if s == 1 else s for s in t.shape])
  raise ValueError(view)

def viewed_shape(shape, view) -> tuple:
  if view == "T": return tuple(reversed(shape))
  if view == "pad": return tuple(s + 2 for s in shape)
  if view == "stride": return ((shape[0] + 1) // 2,) + tuple(shape[1:])
  if view == "expand": return tuple(4 if s == 1 else s for s in shape)
  return tuple(shape)

from diffops import register_all  # noqa: E402  (the op families live in their own module; they need the helpers above)
register_all()
