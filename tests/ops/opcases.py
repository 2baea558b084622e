"""The op suite: each case builds the same computation on a mock device and on DEV=CPU.

A case is `fn(device) -> Tensor | tuple[Tensor, ...]` plus how to compare. `EXACT` cases must be bit-identical (NaNs
compare equal to NaNs whatever their payload: IEEE leaves the payload of a generated NaN open, and x86 and GPUs differ).
Approximate cases carry their tolerance and the reason for it:
  - transcendentals (exp, log, sin, ...): tinygrad lowers them to polynomial code of its own on every backend, but the
    hardware's fast reciprocal/exp2/log2/sqrt instructions it uses in places are approximations
    (RDNA v_exp_f32/v_log_f32/v_rcp_f32/v_sqrt_f32: 1 ulp; PTX ex2/lg2/rcp/sqrt .approx: 2 ulp), so allow a few ulp.
  - float reductions and matmuls (but those in BIT_IDENTICAL, at the end): the GPU kernel sums in a different order
    (grouped, upcast, tensor-core tiles) than the CPU kernel, so results differ by reassociation rounding. That error
    grows with the magnitudes summed, not with the result (a sum that cancels to near zero keeps the rounding of its
    large partial sums), so `scaled` tolerances multiply atol by 1 + the largest magnitude in the reference result.
Inputs are seeded numpy arrays, so every run computes the same thing.
"""
from __future__ import annotations
import numpy as np

CASES:dict[str, dict] = {}
EXACT = {"exact": True}
def approx(rtol, atol, why, scaled=False): return {"exact": False, "rtol": rtol, "atol": atol, "why": why, "scaled": scaled}
TRANSCENDENTAL = approx(2e-6, 2e-6, "hardware approximate exp2/log2/rcp/sqrt: a few ulp")
HALF_TRANSCENDENTAL = approx(2e-3, 2e-3, "float16 transcendental: a few float16 ulp")
REDUCE = approx(1e-5, 1e-5, "float reduction order differs from the CPU kernel", scaled=True)
HALF_REDUCE = approx(2e-2, 2e-2, "half-precision accumulation order differs", scaled=True)

# tinygrad's PTX renderer has no bfloat16: it warns "emulating dtypes.bfloat16 as dtypes.float" and computes in
# float32, so on :PTX configurations (as on real GPUs with that renderer) results are not rounded to bfloat16 the way
# the CPU's are; the difference is bounded by one bfloat16 rounding (2^-8 relative).
BF16_ON_PTX = approx(2 ** -8, 1e-30, "tinygrad's PTX renderer emulates bfloat16 as float32: one bfloat16 rounding apart")

def case(name, cmp=EXACT, ptx=None):
  """Register a case. `ptx` overrides the comparison on :PTX renderer configurations."""
  def deco(fn):
    assert name not in CASES, name
    CASES[name] = {"fn": fn, **cmp, "ptx": ptx}
    return fn
  return deco

def spec_for(name:str, dev:str) -> dict:
  c = CASES[name]
  if dev.endswith(":gfx950") and name in GFX950_UNFUSED: return GFX950_REDUCE
  return c["ptx"] if c["ptx"] is not None and dev.upper().endswith(":PTX") else c

def rng(seed=0): return np.random.default_rng(seed)
def data(dtype, shape=(37, 29), seed=0, lo=-10, hi=10) -> np.ndarray:
  r = rng(seed)
  if dtype == "bool": return r.integers(0, 2, shape).astype(bool)
  if dtype in ("float32", "float16"): return r.uniform(lo, hi, shape).astype(dtype)
  info = np.iinfo(dtype)
  return r.integers(max(info.min, lo * 10), min(info.max, hi * 10) + 1, shape).astype(dtype)

def on(dev):
  """Makes `dev` tinygrad's default device for creation ops that take no device (arange, eye). The mock device is
  already the default (DEV names it, with its MOCK interface), so only the CPU side switches."""
  import contextlib
  from tinygrad import Device
  from tinygrad.helpers import Context
  return contextlib.nullcontext() if dev == Device.DEFAULT else Context(DEV=dev)

def training():
  from tinygrad.helpers import Context
  return Context(TRAINING=1)

def bf16_exact(shape=(37, 29), seed=0, lo=-10, hi=10, step=1/8) -> np.ndarray:
  """float32 inputs that bfloat16 holds exactly (few significant bits), so casting them in is no rounding on any backend."""
  return (np.round(data("float32", shape, seed, lo, hi) / step) * step).astype(np.float32)

def T(arr, dev, dtype=None):
  from tinygrad import Tensor, dtypes
  t = Tensor(arr, device=dev)
  return t.cast(getattr(dtypes, dtype)) if dtype else t

# *** elementwise binary ops over every dtype ***
BIN_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "max": lambda a, b: a.maximum(b), "min": lambda a, b: a.minimum(b), "lt": lambda a, b: a < b,
           "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
for _dt in ("float32", "int32", "int8", "uint8"):
  for _op, _f in BIN_OPS.items():
    case(f"{_op}_{_dt}")(lambda dev, f=_f, dt=_dt: f(T(data(dt, seed=1), dev), T(data(dt, seed=2), dev)))
for _op in ("add", "mul", "max", "lt"):
  case(f"{_op}_float16")(lambda dev, f=BIN_OPS[_op]: f(T(data("float32", seed=1), dev, "float16"), T(data("float32", seed=2), dev, "float16")))
  case(f"{_op}_bfloat16", ptx=None if _op in ("max", "lt") else BF16_ON_PTX)(
    lambda dev, f=BIN_OPS[_op]: f(T(bf16_exact(seed=1), dev, "bfloat16"), T(bf16_exact(seed=2), dev, "bfloat16")).cast("float32"))
# tinygrad lowers a/b to a * reciprocal(b); GPUs take the reciprocal from an approximate instruction (rcp.approx, v_rcp_f32)
case("div_float32", TRANSCENDENTAL)(lambda dev: T(data("float32", seed=1), dev) / T(data("float32", seed=2, lo=1, hi=9), dev))
case("div_float16", HALF_TRANSCENDENTAL)(
  lambda dev: T(data("float32", seed=1), dev, "float16") / T(data("float32", seed=2, lo=1, hi=9), dev, "float16"))
case("idiv_int32")(lambda dev: T(data("int32", seed=1), dev) // T(data("int32", seed=2, lo=1, hi=9), dev))
case("mod_int32")(lambda dev: T(data("int32", seed=1), dev) % T(data("int32", seed=2, lo=1, hi=9), dev))
case("idiv_uint8")(lambda dev: T(data("uint8", seed=1, lo=0), dev) // T(data("uint8", seed=2, lo=1, hi=9), dev))
case("shl_int32")(lambda dev: T(data("int32", seed=1), dev) << 3)
case("shr_int32")(lambda dev: T(data("int32", seed=1), dev) >> 2)
case("xor_int32")(lambda dev: T(data("int32", seed=1), dev) ^ T(data("int32", seed=2), dev))
case("and_uint8")(lambda dev: T(data("uint8", seed=1), dev) & T(data("uint8", seed=2), dev))
case("or_int8")(lambda dev: T(data("int8", seed=1), dev) | T(data("int8", seed=2), dev))
case("int32_overflow_mul")(lambda dev: T(np.array([2**30, -2**30, 123456789, 2**31-1], np.int32), dev) * 7)
case("uint8_wraparound")(lambda dev: T(np.array([250, 3, 128, 255], np.uint8), dev) + T(np.array([10, 254, 128, 1], np.uint8), dev))
case("bool_and")(lambda dev: T(data("bool", seed=1), dev) & T(data("bool", seed=2), dev))
case("bool_or")(lambda dev: T(data("bool", seed=1), dev) | T(data("bool", seed=2), dev))
case("bool_xor")(lambda dev: T(data("bool", seed=1), dev) ^ T(data("bool", seed=2), dev))
case("bool_not")(lambda dev: T(data("bool", seed=1), dev).logical_not())
case("scalar_broadcast")(lambda dev: T(data("float32"), dev) * 3.5 + 1.25)
case("broadcast_rows")(lambda dev: T(data("float32", (37, 29)), dev) + T(data("float32", (1, 29), seed=3), dev))
case("broadcast_cols")(lambda dev: T(data("float32", (37, 29)), dev) - T(data("float32", (37, 1), seed=3), dev))
case("fma_like")(lambda dev: T(data("float32", seed=1), dev) * T(data("float32", seed=2), dev) + T(data("float32", seed=3), dev))
case("float_specials")(lambda dev: T(np.array([0., -0., np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38], np.float32), dev) * 2)
case("inf_minus_inf")(lambda dev: T(np.array([np.inf, -np.inf, 0.], np.float32), dev) - T(np.array([np.inf, -np.inf, 0.], np.float32), dev))

# *** unary ops ***
UNARY_EXACT = {"neg": lambda x: -x, "abs": lambda x: x.abs(), "relu": lambda x: x.relu(), "floor": lambda x: x.floor(),
               "ceil": lambda x: x.ceil(), "round": lambda x: x.round(), "trunc": lambda x: x.trunc(), "square": lambda x: x.square(),
               "sign": lambda x: x.sign(), "clip": lambda x: x.clip(-2.5, 3.5)}
for _op, _f in UNARY_EXACT.items():
  case(f"{_op}_float32")(lambda dev, f=_f: f(T(data("float32"), dev)))
for _op in ("neg", "abs", "relu"):
  case(f"{_op}_float16")(lambda dev, f=UNARY_EXACT[_op]: f(T(data("float32"), dev, "float16")))
  case(f"{_op}_int32")(lambda dev, f=UNARY_EXACT[_op]: f(T(data("int32"), dev)))
UNARY_APPROX = {"exp": lambda x: (x * 0.5).exp(), "log": lambda x: x.abs().add(0.1).log(), "sin": lambda x: x.sin(), "cos": lambda x: x.cos(),
                "tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(), "sqrt": lambda x: x.abs().sqrt(),
                "rsqrt": lambda x: x.abs().add(0.1).rsqrt(),
                "reciprocal": lambda x: x.add(20.5).reciprocal(), "exp2": lambda x: x.exp2(), "log2": lambda x: x.abs().add(0.1).log2(),
                "gelu": lambda x: x.gelu(), "softplus": lambda x: x.softplus(), "erf": lambda x: x.erf()}
for _op, _f in UNARY_APPROX.items():
  case(f"{_op}_float32", TRANSCENDENTAL)(lambda dev, f=_f: f(T(data("float32", lo=-5, hi=5), dev)))
for _op in ("exp", "log", "sin", "sqrt"):
  case(f"{_op}_float16", HALF_TRANSCENDENTAL)(lambda dev, f=UNARY_APPROX[_op]: f(T(data("float32", lo=-5, hi=5), dev, "float16")))

# *** casts and bitcasts ***
CASTS = [("float32", "int32"), ("int32", "float32"), ("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"),
         ("int8", "float32"), ("uint8", "int32"), ("int32", "int8"), ("int32", "uint8"), ("bool", "float32"), ("float32", "bool"),
         ("float32", "uint8"), ("int8", "int32"), ("uint8", "float16"), ("float16", "int32"), ("int32", "bool"), ("float32", "int64"),
         ("int64", "float32"), ("uint32", "float32"), ("float32", "uint32")]
for _src, _dst in CASTS:
  lo = 0 if _src.startswith("uint") or _dst.startswith("uint") else -100
  case(f"cast_{_src}_{_dst}", ptx=BF16_ON_PTX if "bfloat16" in (_src, _dst) else None)(
    lambda dev, s=_src, d=_dst, lo=lo: T(data("float32", lo=lo, hi=100), dev, s).cast(d).cast("float32" if d == "bfloat16" else d))
case("bitcast_f32_i32")(lambda dev: T(data("float32"), dev).bitcast("int32"))
case("bitcast_i32_f32")(lambda dev: T(data("int32"), dev).bitcast("float32"))
case("bitcast_f16_i16")(lambda dev: T(data("float32"), dev, "float16").bitcast("int16"))
case("bitcast_u32_f32_specials")(
  lambda dev: T(np.array([0x7f800000, 0xff800000, 0x7fc00001, 1, 0x80000000], np.uint32), dev).bitcast("float32").bitcast("uint32"))
case("cast_f32_f16_rounding")(lambda dev: T(np.array([65504., 65520., 1e-8, 2049., 2051., -0.0, 1/3], np.float32), dev).cast("float16"))
case("cast_f32_bf16_rounding", ptx=BF16_ON_PTX)(
  lambda dev: T(np.array([1.00390625, 1.01171875, 3.14159, -2.5e-20, 1e30], np.float32), dev).cast("bfloat16").cast("float32"))

# *** fp8 (OCP e4m3 and e5m2): casts both ways and arithmetic, the results as their codes ***
# gfx950 runs them on its conversions (v_cvt_pk_fp8/bf8_f32 after tinygrad's clamp to the largest finite value,
# v_cvt_f32_fp8/bf8), MOCK+CUDA on NVIDIA's cvt (NVRTC), MOCK+NV on the PTX renderer's emulation, the other AMD boards
# on the LLVM renderer's integer emulation, which DEV=CPU shares. The exact cases stay where all of them agree: normal
# values, sums and products f16 holds exactly. DEV=CPU's emulation departs from the ISA's rule (round to nearest even,
# subnormals exact) in two places, each a case of its own with the reason: it flushes subnormal codes to zero both
# ways, and rounds f32 through f16 (a double rounding at some f32 ties).
FP8 = {"fp8e4m3": (3, 0x7e, 2.0 ** -6), "fp8e5m2": (2, 0x7b, 2.0 ** -14)}   # mantissa bits, largest finite code, min normal
def fp8_codes(fmt:str, seed:int, lo:int, hi:int, n:int=512) -> np.ndarray:
  """Random codes of both signs whose exponent field is in [lo, hi] (normal: no NaN, no infinity, no subnormal)."""
  m = FP8[fmt][0]
  c = rng(seed).integers(lo << m, min((hi + 1) << m, FP8[fmt][1] + 1), n).astype(np.uint8)
  return c | (rng(seed + 7).integers(0, 2, n).astype(np.uint8) << 7)
def fp8_in(fmt:str, dev, seed:int, lo:int, hi:int):
  return T(fp8_codes(fmt, seed, lo, hi), dev).bitcast(fmt)
# exponent fields of the operands: e4m3 [4, 10] is [2^-3, 2^4) (bias 7), e5m2 [12, 19] is [2^-3, 2^5) (bias 15): sums are
# multiples of the smallest normal and need at most 11 bits, products stay normal and finite
FP8_WINDOW = {"fp8e4m3": (4, 10), "fp8e5m2": (12, 19)}
FP8_OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "max": lambda a, b: a.maximum(b)}
for _fmt, (_m, _top, _tiny) in FP8.items():
  # float32 inputs f16 holds exactly, over the normal range and past the largest finite value (clamped to it)
  case(f"cast_float32_{_fmt}")(lambda dev, f=_fmt, tiny=_tiny: T(np.where(np.abs(x:=data("float32", (512,), 4, -600, 600).astype(np.float16)
                                                                                   .astype(np.float32)) < tiny, np.float32(1), x), dev)
                                                                 .cast(f).bitcast("uint8"))
  normal = np.array([c for c in range(256) if (c & 0x7f) >> _m], np.uint8)   # every code but the subnormals and zeros
  case(f"cast_{_fmt}_float32")(lambda dev, f=_fmt, c=normal: T(c, dev).bitcast(f).cast("float32"))
  for _op, _f in FP8_OPS.items():
    case(f"{_op}_{_fmt}")(lambda dev, f=_fmt, g=_f: g(fp8_in(f, dev, 1, *FP8_WINDOW[f]), fp8_in(f, dev, 2, *FP8_WINDOW[f])).bitcast("uint8"))
  # the subnormal codes (zeros included): DEV=CPU decodes them as zero, the ISA exactly
  sub = np.array([c for c in range(256) if not (c & 0x7f) >> _m], np.uint8)
  case(f"cast_{_fmt}_float32_subnormal", approx(0, _tiny, "DEV=CPU's fp8 emulation decodes subnormal codes as zero, the ISA "
                                                "(gfx950 v_cvt_f32_fp8/bf8, NVIDIA cvt) exactly: below the smallest normal apart"))(
    lambda dev, f=_fmt, c=sub: T(c, dev).bitcast(f).cast("float32"))
  case(f"cast_float32_{_fmt}_subnormal", approx(0, 1 << _m, "DEV=CPU's fp8 emulation flushes results below the smallest "
                                                "normal to zero, the ISA rounds to the nearest subnormal (or the smallest "
                                                "normal): up to 2^mantissa codes apart"))(
    lambda dev, f=_fmt, tiny=_tiny: T(data("float32", (256,), 3, -tiny, tiny), dev).cast(f).bitcast("uint8"))
# f32 ties of e5m2 that f16 does not hold: DEV=CPU rounds through f16 (twice), the ISA once (one code apart)
case("cast_float32_fp8e5m2_ties", approx(0, 1, "DEV=CPU's fp8 emulation rounds f32 to f16, then to e5m2 (double rounding); "
                                         "the ISA rounds once to nearest even: one code apart"))(
  lambda dev: T(data("float32", (512,), 4, -600, 600), dev).cast("fp8e5m2").bitcast("uint8"))

# *** comparisons and where ***
case("where_float32")(lambda dev: (T(data("float32", seed=1), dev) > 0).where(T(data("float32", seed=2), dev), T(data("float32", seed=3), dev)))
case("where_int32")(lambda dev: (T(data("int32", seed=1), dev) < 5).where(T(data("int32", seed=2), dev), -1))
case("where_scalar_float16")(lambda dev: (T(data("float32", seed=1), dev, "float16") >= 0).where(1.5, -2.5))
case("cmp_ge_float32")(lambda dev: T(data("float32", seed=1), dev) >= T(data("float32", seed=2), dev))
case("cmp_gt_int8")(lambda dev: T(data("int8", seed=1), dev) > T(data("int8", seed=2), dev))
case("cmp_nan")(lambda dev: T(np.array([np.nan, 1., np.nan, -np.inf], np.float32), dev) < T(np.array([1., np.nan, np.nan, 0.], np.float32), dev))
case("isnan")(lambda dev: T(np.array([np.nan, 1., np.inf, -np.nan], np.float32), dev).isnan())

# *** reductions ***
case("sum_float32_all", REDUCE)(lambda dev: T(data("float32", (64, 300)), dev).sum())
case("sum_float32_axis0", REDUCE)(lambda dev: T(data("float32", (67, 45)), dev).sum(axis=0))
case("sum_float32_axis1", REDUCE)(lambda dev: T(data("float32", (67, 45)), dev).sum(axis=1))
case("sum_int32")(lambda dev: T(data("int32", (50, 70)), dev).sum(axis=1))
case("sum_int8_to_int")(lambda dev: T(data("int8", (33, 40)), dev).sum())
case("sum_uint8")(lambda dev: T(data("uint8", (33, 40), lo=0), dev).sum(axis=0))
case("sum_float16", HALF_REDUCE)(lambda dev: T(data("float32", (40, 64), lo=-1, hi=1), dev, "float16").sum(axis=1))
case("sum_bool")(lambda dev: T(data("bool", (31, 33)), dev).sum())
case("max_axis_float32")(lambda dev: T(data("float32", (67, 45)), dev).max(axis=1))
case("max_all_float32")(lambda dev: T(data("float32", (128, 130)), dev).max())
case("min_axis_int32")(lambda dev: T(data("int32", (67, 45)), dev).min(axis=0))
case("max_axis_uint8")(lambda dev: T(data("uint8", (20, 77), lo=0), dev).max(axis=1))
case("argmax_float32")(lambda dev: T(data("float32", (67, 45)), dev).argmax(axis=1))
case("argmax_all")(lambda dev: T(data("float32", (40, 41)), dev).argmax())
case("argmin_int32")(lambda dev: T(data("int32", (30, 45)), dev).argmin(axis=0))
case("cumsum_float32", REDUCE)(lambda dev: T(data("float32", (7, 300)), dev).cumsum(axis=1))
case("cumsum_int32")(lambda dev: T(data("int32", (300,)), dev).cumsum())
case("mean_float32", REDUCE)(lambda dev: T(data("float32", (50, 60)), dev).mean(axis=0))
case("var_float32", REDUCE)(lambda dev: T(data("float32", (50, 60)), dev).var(axis=1))
case("softmax", approx(1e-5, 1e-6, "exp approximation and reduction order"))(lambda dev: T(data("float32", (33, 100)), dev).softmax(axis=1))
case("logsumexp", approx(1e-5, 1e-5, "exp/log approximation and reduction order"))(lambda dev: T(data("float32", (33, 100)), dev).logsumexp(axis=1))
case("any_all")(lambda dev: (lambda x: (x.any(axis=1), x.all(axis=0)))(T(data("float32", (20, 30)), dev) > 8))
# 70000 terms in [-1, 1]: each order's rounding error is bounded by eps * sum|x| = 6e-8 * 35000 ~ 2e-3
case("sum_big_reduce", approx(0, 2e-3, "70000-term float32 sum: rounding of partial sums, bounded by eps * sum|x|"))(
  lambda dev: T(data("float32", (1, 70000), lo=-1, hi=1), dev).sum())

# *** matmul and conv2d ***
MATMUL_SHAPES = [(16, 16, 16), (33, 17, 29), (64, 64, 64), (128, 96, 64), (1, 200, 1), (65, 130, 7), (256, 256, 256)]
for _m, _k, _n in MATMUL_SHAPES:
  case(f"matmul_{_m}x{_k}x{_n}", REDUCE)(
    lambda dev, m=_m, k=_k, n=_n: T(data("float32", (m, k), seed=1, lo=-1, hi=1), dev) @ T(data("float32", (k, n), seed=2, lo=-1, hi=1), dev))
case("matmul_int32")(lambda dev: T(data("int32", (24, 31), seed=1), dev) @ T(data("int32", (31, 18), seed=2), dev))
case("matmul_half_acc_float", approx(1e-3, 1e-3, "half inputs, float accumulation in tensor-core tile order"))(
  lambda dev: (T(data("float32", (64, 64), seed=1, lo=-1, hi=1), dev, "float16")
               @ T(data("float32", (64, 64), seed=2, lo=-1, hi=1), dev, "float16")).cast("float32"))
case("matmul_half_acc_float_dtype", approx(1e-3, 1e-3, "half inputs, float accumulation in tensor-core tile order"))(
  lambda dev: T(data("float32", (128, 64), seed=1, lo=-1, hi=1), dev, "float16")
              .matmul(T(data("float32", (64, 96), seed=2, lo=-1, hi=1), dev, "float16"), dtype="float32"))
# the CPU kernel and the GPU kernels keep the bfloat16 partial sums at different precisions and orders (and :PTX keeps
# float32 throughout), so results agree to a few bfloat16 ulps of the result's scale
case("matmul_bf16", approx(0, 2 ** -6, "bfloat16 accumulation precision and order differ: a few bf16 ulps of the scale", scaled=True))(
  lambda dev: (T(bf16_exact((32, 48), seed=1, lo=-1, hi=1, step=1/64), dev, "bfloat16")
               @ T(bf16_exact((48, 40), seed=2, lo=-1, hi=1, step=1/64), dev, "bfloat16")).cast("float32"))
case("batched_matmul", REDUCE)(
  lambda dev: T(data("float32", (3, 20, 30), seed=1, lo=-1, hi=1), dev) @ T(data("float32", (3, 30, 10), seed=2, lo=-1, hi=1), dev))
case("matvec", REDUCE)(lambda dev: T(data("float32", (300, 77), seed=1, lo=-1, hi=1), dev) @ T(data("float32", (77,), seed=2, lo=-1, hi=1), dev))
CONV_SHAPES = [((1, 3, 16, 16), (8, 3, 3, 3), {}), ((2, 4, 13, 11), (6, 4, 3, 3), {"padding": 1}), ((1, 8, 20, 20), (8, 8, 5, 5), {"stride": 2}),
               ((1, 6, 9, 9), (6, 1, 3, 3), {"groups": 6}), ((1, 16, 14, 14), (32, 16, 1, 1), {}),
               ((1, 3, 17, 23), (5, 3, 3, 3), {"dilation": 2, "padding": 2})]
for _i, (_xs, _ws, _kw) in enumerate(CONV_SHAPES):
  case(f"conv2d_{_i}", REDUCE)(lambda dev, xs=_xs, ws=_ws, kw=_kw: T(data("float32", xs, seed=1, lo=-1, hi=1), dev)
                                                                   .conv2d(T(data("float32", ws, seed=2, lo=-1, hi=1), dev), **kw))
case("conv2d_bias_relu", REDUCE)(lambda dev: T(data("float32", (1, 4, 12, 12), seed=1, lo=-1, hi=1), dev).conv2d(
  T(data("float32", (8, 4, 3, 3), seed=2, lo=-1, hi=1), dev), T(data("float32", (8,), seed=3, lo=-1, hi=1), dev)).relu())
case("avg_pool", REDUCE)(lambda dev: T(data("float32", (1, 3, 16, 16)), dev).avg_pool2d(kernel_size=(2, 2)))
case("max_pool")(lambda dev: T(data("float32", (1, 3, 16, 16)), dev).max_pool2d(kernel_size=(3, 3), stride=2))

# *** movement, indexing, gather, scatter, setitem ***
case("permute")(lambda dev: T(data("float32", (5, 6, 7)), dev).permute(2, 0, 1).contiguous())
case("transpose_big")(lambda dev: T(data("float32", (257, 129)), dev).T.contiguous())
case("reshape_expand")(lambda dev: T(data("float32", (5, 1, 7)), dev).expand(5, 4, 7).reshape(20, 7).contiguous())
case("pad")(lambda dev: T(data("float32", (5, 7)), dev).pad(((1, 2), (3, 0)), value=-1.5))
case("shrink_slice")(lambda dev: T(data("float32", (20, 30)), dev)[3:17:2, 5:29:3].contiguous())
case("flip")(lambda dev: T(data("int32", (9, 10)), dev).flip(0, 1).contiguous())
case("cat")(lambda dev: T(data("float32", (4, 5), seed=1), dev).cat(T(data("float32", (6, 5), seed=2), dev), dim=0))
case("stack")(lambda dev: T(data("int32", (4, 5), seed=1), dev).stack(T(data("int32", (4, 5), seed=2), dev), dim=1))
case("repeat")(lambda dev: T(data("uint8", (3, 4), lo=0), dev).repeat(2, 3))
case("index_int_tensor")(lambda dev: T(data("float32", (50, 8)), dev)[T(np.array([0, 49, 7, 7, 13], np.int32), dev)])
case("gather")(lambda dev: T(data("float32", (20, 30)), dev).gather(1, T(rng(5).integers(0, 30, (20, 6)).astype(np.int32), dev)))
case("scatter")(lambda dev: T(np.zeros((10, 12), np.float32), dev)
                            .scatter(1, T(np.tile(rng(6).permutation(12)[:5], (10, 1)).astype(np.int32), dev), 7.0))
case("scatter_reduce_sum")(lambda dev: T(np.zeros((6, 9), np.float32), dev).scatter_reduce(
  1, T(rng(7).integers(0, 9, (6, 9)).astype(np.int32), dev), T(data("float32", (6, 9), lo=0, hi=5).round(), dev), reduce="sum"))
def _setitem(dev):
  t = T(data("float32", (8, 9)), dev).contiguous()
  t[2:5, 1:4] = T(np.full((3, 3), 42.0, np.float32), dev)
  return t
case("setitem_slice")(_setitem)
def _setitem_scalar(dev):
  t = T(data("int32", (10,)), dev).contiguous()
  t[3] = 99
  return t
case("setitem_scalar")(_setitem_scalar)
case("one_hot")(lambda dev: T(np.array([0, 3, 1, 4], np.int32), dev).one_hot(5))
def _arange(dev):
  from tinygrad import Tensor
  with on(dev): return Tensor.arange(3, 1000, 7).realize()
def _eye(dev):
  from tinygrad import Tensor
  with on(dev): return Tensor.eye(17).realize()
case("arange")(_arange)
case("eye")(_eye)
case("triu")(lambda dev: T(data("float32", (9, 11)), dev).triu(1))
case("embedding_lookup")(lambda dev: T(data("float32", (100, 16)), dev)[T(rng(8).integers(0, 100, (4, 7)).astype(np.int32), dev)])
case("masked_select_like")(lambda dev: (lambda x: (x > 0).where(x, 0).sum(axis=1))(T(data("int32", (12, 13)), dev)))

# *** random numbers (threefry: 64-bit integer arithmetic, exact) ***
def _rand(fn):
  def go(dev):
    from tinygrad import Tensor
    Tensor.manual_seed(1234)
    return fn(Tensor, dev)
  return go
case("rand")(_rand(lambda Tensor, dev: Tensor.rand(33, 47, device=dev)))
case("randint")(_rand(lambda Tensor, dev: Tensor.randint(100, low=-5, high=17, device=dev)))
case("randn", TRANSCENDENTAL)(_rand(lambda Tensor, dev: Tensor.randn(64, 10, device=dev)))
def _dropout(Tensor, dev):
  with training(): return Tensor.ones(40, 40, device=dev).dropout(0.3)
case("dropout")(_rand(_dropout))
case("rand_sort")(_rand(lambda Tensor, dev: Tensor.rand(257, device=dev).sort()[1]))

# *** JIT ***
def _jit(dev):
  from tinygrad import Tensor, TinyJit
  @TinyJit
  def f(a:Tensor, b:Tensor) -> Tensor: return (a @ b).relu().realize()
  outs = [f(T(data("float32", (16, 24), seed=i, lo=-1, hi=1), dev), T(data("float32", (24, 8), seed=i+10, lo=-1, hi=1), dev)) for i in range(4)]
  return tuple(o.numpy() for o in outs)
case("jit_matmul_relu", REDUCE)(_jit)
def _jit_elementwise(dev):
  from tinygrad import TinyJit
  @TinyJit
  def f(a): return (a * 2 + 1).realize()
  return tuple(f(T(data("float32", (64,), seed=i), dev)).numpy() for i in range(5))
case("jit_elementwise")(_jit_elementwise)

# *** autograd of a small MLP ***
def _mlp(dev):
  x = T(data("float32", (8, 12), seed=1, lo=-1, hi=1), dev)
  w1 = T(data("float32", (12, 16), seed=2, lo=-0.5, hi=0.5), dev)
  w2 = T(data("float32", (16, 3), seed=3, lo=-0.5, hi=0.5), dev)
  y = T(np.array([0, 2, 1, 1, 0, 2, 2, 1], np.int32), dev)
  loss = (x @ w1).relu().matmul(w2).sparse_categorical_crossentropy(y)
  return (loss, *loss.gradient(w1, w2))
case("mlp_backward", approx(1e-5, 1e-5, "reduction order and exp/log approximation in the loss"))(_mlp)
def _sgd_steps(dev):
  from tinygrad import Tensor, nn
  Tensor.manual_seed(3)
  w = T(data("float32", (6, 4), seed=4, lo=-1, hi=1), dev).contiguous()
  opt = nn.optim.SGD([w], lr=0.1)
  with training():
    for i in range(3):
      opt.zero_grad()
      loss = (T(data("float32", (5, 6), seed=i, lo=-1, hi=1), dev) @ w).square().mean()
      loss.backward()
      opt.step()
  return w
case("sgd_steps", REDUCE)(_sgd_steps)

# *** copies ***
case("copy_roundtrip_float32")(lambda dev: T(data("float32", (1000,)), dev))
case("copy_roundtrip_uint8")(lambda dev: T(data("uint8", (4097,), lo=0), dev))
case("copy_device_to_device")(lambda dev: T(data("float32", (300,)), dev).to(dev).contiguous() + 1)
case("copy_odd_sizes")(lambda dev: tuple(T(data("int8", (n,)), dev) for n in (1, 3, 255, 4099)))
def _big(dev):
  from tinygrad import Tensor
  n = 17 * 1024 * 1024 + 5  # 68 MiB of float32: above 64 MiB
  with on(dev): t = Tensor.arange(n, dtype="int32").cast("float32").contiguous().realize()
  return t[-4:], t[::2_000_003].contiguous()
case("buffer_over_64mib")(_big)
case("big_elementwise")(lambda dev: T(data("float32", (512, 1024)), dev).mul(3).add(-1))

# Measured bit-identical with DEV=CPU on every configuration (2026-12-03, all five): these kernels sum in the CPU
# kernel's order (a single accumulator per output), and mockgpu rounds its approximate instructions (v_sqrt/v_rcp,
# sqrt/rcp.approx) exactly, so the general bounds above would hide a one-bit regression. EXACT here; a change of
# tinygrad's kernels that reorders a sum shows up as a failure to look at, not as noise inside a tolerance.
BIT_IDENTICAL = ("add_bfloat16", "sqrt_float32", "reciprocal_float32", "exp_float16", "sqrt_float16", "sum_float32_axis0",
                 "sum_float32_axis1", "sum_float16", "mean_float32", "matmul_33x17x29", "matmul_65x130x7", "batched_matmul",
                 "matvec", "conv2d_4", "avg_pool", "jit_matmul_relu")
for _name in BIT_IDENTICAL: CASES[_name].update(EXACT, ptx=None)

# gfx950 compiles with LLVM 22 (toolchain.bind_llvm), which pairs some of these matmuls' multiplies into v_pk_mul_f32 and
# adds the products with v_add_f32, where the CPU kernel (and LLVM 19's gfx942/gfx1100 code, bit-identical) fuses each
# multiply-add into one fma: the sums are one rounding per term apart, so gfx950 takes the reduction bound (measured
# 2026-12-04: 1-ulp differences in about half the elements of these three, the others bit-identical).
GFX950_UNFUSED = ("matmul_33x17x29", "batched_matmul", "jit_matmul_relu")
GFX950_REDUCE = approx(1e-5, 1e-5, "LLVM 22's gfx950 code rounds some products before adding them (v_pk_mul_f32 + v_add_f32), "
                                   "the CPU kernel fuses them", scaled=True)

# The arm64 lane's LLVM renderer (DEV=MOCK+CPU:LLVM) differs from native x86 DEV=CPU:LLVM in these two: tinygrad's LLVM
# IR carries `contract` (llvmir.py's flags), so each backend decides which multiply-adds to fuse. AArch64 LLVM (cortex-a72,
# read from the kernels' disassembly, 2026-12-06) vectorizes the reduction's multiplies (fmul v.4s / v.2s), adds the
# rounded products to one scalar accumulator in k order (fadd s), and fuses only the k the vector loop leaves
# (fmla / fmadd): matvec (K=77, 8 per iteration) fuses k=72..76, matmul_65x130x7 (K=130, 4 per iteration) k=128..129. x86
# LLVM differs by 1-2 ulp in most elements. These compare bit for bit with that model (arm64_llvm_dot), not with x86.
ARM64_LLVM_MODEL = {"matvec": ((300, 77), (77,), 72), "matmul_65x130x7": ((65, 130), (130, 7), 128)}

def arm64_llvm_dot(name:str) -> np.ndarray:
  """The case's a @ b as the arm64 kernel computes it: acc = 0; for k < unfused: acc += round(a[:, k] * b[k]); then
  acc = fma(a[:, k], b[k], acc); in float32, one output per accumulator."""
  from mockgpu.compiler.ptx.backends.numerics import fma32
  ashape, bshape, unfused = ARM64_LLVM_MODEL[name]
  a, b = data("float32", ashape, seed=1, lo=-1, hi=1), data("float32", bshape, seed=2, lo=-1, hi=1)
  b2 = b.reshape(b.shape[0], -1)
  acc = np.zeros((a.shape[0], b2.shape[1]), np.float32)
  for k in range(a.shape[1]):
    x, y = np.broadcast_arrays(a[:, k:k + 1], b2[k:k + 1, :])
    acc = acc + x * y if k < unfused else np.asarray(fma32(x, y, acc), np.float32)
  return acc.reshape(a.shape[:1] + b.shape[1:])
