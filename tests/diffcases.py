"""The differential suite's cases: tinygrad's public Tensor API, enumerated, each method with generated inputs.

A case is plain data (it crosses a pipe to tests/diffrunner.py): `{"id", "op", "x": [input specs], "kw", "grad", "ctx"}`.
An input spec is `(shape, dtype, domain, seed, view)`:
  - dtype is a tinygrad dtype name; bfloat16 and fp8 inputs travel as float32 values they hold exactly, so the cast in
    is no rounding on any backend;
  - domain is `(lo, hi)` (`(lo, hi, "float16")`: values of that narrower type), "special" (IEEE specials mixed in: ±0, ±inf, NaN, subnormals, the largest finite) or "full"
    (an integer type's whole range);
  - view is applied on the device before the op, so the kernel reads through it: "T" (axes reversed), "pad" (one
    zero each side), "stride" (every other row), "expand" (a size-1 axis broadcast to 4), "flip".
`OPS[op](device, *tensors, **kw)` builds the computation; `COVERS` maps each public Tensor name to the op ids that
exercise it, and `EXCLUDED` names the rest with the reason, so tests/test_diff_api.py fails when a public method is
neither (tinygrad's next additions show up there).

How results compare (tests/test_diff_api.py): bit for bit with DEV=CPU (NaN equals NaN whatever its payload) unless the
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
def ulps(n:float, why:str, scale:str="elem") -> dict:
  """|got - ref64| <= |cpu - ref64| + n ulps of the case's dtype: at each element's own magnitude ("elem"), at the
  larger of it and 1 ("unit": formulas whose intermediates have unit scale, so their rounding is absolute below 1), or
  at the largest magnitude in the output ("max": reassociated sums, whose rounding follows the partial sums)."""
  return {"ulps": n, "why": why, "scale": scale}
# tinygrad lowers transcendentals to the same polynomials on every backend, but GPU kernels take exp2, log2, sin, rcp
# and sqrt from the hardware's approximate instructions where the CPU computes them in software or correctly rounded
# (RDNA v_exp_f32/v_log_f32/v_rcp_f32/v_sqrt_f32: 1 ulp; PTX ex2/lg2/rcp/sqrt .approx.ftz.f32: 2 ulp), and contract
# a*b+c into fma. Each approximate step can compound through tinygrad's formula (a sigmoid is an exp2 and a rcp).
TRANS = ulps(8, "hardware exp2/log2/rcp/sqrt approximations (1-2 ulp each) compounded through tinygrad's formula")
# sin, cos, tan, the inverse and hyperbolic functions, erf: tinygrad reduces the argument and evaluates a polynomial,
# divides, or takes log(1 + ...) of unit-scale intermediates, so a result near 0 carries their absolute rounding
TRIG = ulps(8, "argument reduction, polynomial, rcp and log of unit-scale intermediates: a few ulp of 1, absolute", "unit")
# a sum (or matmul, mean, softmax denominator) whose GPU kernel groups, upcasts and splits differently from the CPU
# kernel rounds its partial sums differently: a bound of n ulps of the largest output magnitude per reassociation
REDUCE = ulps(64, "reduction order differs from the CPU kernel (grouped, upcast, split partial sums)", "max")
REDUCE_TRANS = ulps(64, "a reassociated reduction feeding hardware-approximate transcendentals", "max")

OPS:dict[str, callable] = {}
CMP:dict[str, dict|None] = {}
COVERS:dict[str, set[str]] = {}
CASES:list[dict] = []
_IDS:dict[str, int] = {}

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
  cid = f"{opid}[{desc}{';' + kws if kws else ''}{';' + tag if tag else ''}{';grad' if grad else ''}{';' + ','.join(f'{k}={v}' for k, v in ctx.items()) if ctx else ''}]"
  if cid in _IDS: cid = f"{cid}#{_IDS[cid]}"
  _IDS[cid] = _IDS.get(cid, 0) + 1
  CASES.append({"id": cid, "op": opid, "x": x, "kw": kw or {}, "grad": grad, "ctx": ctx or {}})

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
SPECIALS = {"float16": [0., -0., np.inf, -np.inf, np.nan, 6e-8, -3e-5, 65504.], "float32": [0., -0., np.inf, -np.inf, np.nan, 1e-45, -1e-39, 3.4028235e38],
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

def make_leaf(spec, device, upcast:bool=False):
  """The input before its view. `upcast`: the same values as float64 (the reference run of an approximate case)."""
  from tinygrad import Tensor, dtypes
  shape, dtype, domain, seed, view = spec
  arr = make_array(shape, dtype, domain, seed)
  if upcast and dtype in FLOATS + FP8: return Tensor(arr.astype(np.float64), device=device)
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
