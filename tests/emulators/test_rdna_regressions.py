"""Regressions of the RDNA3 paths (DEV=MOCK+AMD; MOCK+AMD:LLVM and MOCKKFD+AMD in the slow tier) on tinygrad programs
that once failed, each result compared with DEV=CPU, on both executor paths (MOCKGPU_RDNA_NATIVE=0: numpy translation; =1: C from the first dispatch).

Causes covered:
  - a SALU result computed from constants only (literal, inline constant, a constant lane index of v_writelane_b32)
    was a 0-d numpy scalar, and runtime.unpack indexed it as a per-wave array (IndexError, 0-dimensional): tan,
    ceil-mode/padded pools, grouped and small convolutions forward and backward, sparse_categorical_crossentropy.
  - emulated 16-bit float dtypes (EMULATED_DTYPES=half / bfloat16: 16-bit integer code), and s_bfe_* int upcasts.
  - s_bitset0/1_b32 dropped the destination's other bits (it wrote ~(1 << n) / 1 << n): tinygrad's fabs in SALU
    (s_bitset0_b32 sN, 31) zeroed the value, so EMULATED_DTYPES abs, casts to/from float16/bfloat16 and copies through
    a float32 -> bfloat16 rounding came out wrong (diff:* cases below, by their tests/diff/diffcases.py id).
  - the numpy translation named block 16's function b16, shadowing runtime.b16 (the 16-bit operand view) in kernels
    of 17 blocks or more: IndexError/TypeError in cummax/cummin of 8/16-bit ints, padded any, avg_pool2d and
    conv_transpose2d backward; a compare into VCC_HI (an ordinary SGPR in wave32) raised UnsupportedInstruction (all).
Integer, max-pool and 16-bit cases are exact (bitwise, NaNs equal); float sums allow reassociation rounding (REDUCE).
tan allows |got - want| <= 4 * 2**-23 * (1 + want**2): tinygrad's tan is sin/cos, polynomials on both backends, but
the GPU kernel uses v_rcp_f32 (1 ulp on hardware) and fma where the CPU divides and rounds each step, so the two
differ by a few float32 ulp in intermediates of unit scale; tan's derivative 1 + tan**2 amplifies that near the
poles (an 18-ulp difference at tan = -13.9 is 1.7e-5, the bound there 1.4e-4).
"""
import os, pickle, sys, tempfile, subprocess
import numpy as np
import pytest
from conftest import HERE, SLOW

PROGRAM = r'''
import pickle, sys, traceback, numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
def f32(shape, seed, lo=-1.0, hi=1.0): return Tensor(np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32))
def conv_fb(b, c, img, k, seed):
  x, w = f32((b, c, *img), seed), f32((2, c, *k), seed + 1)
  x.requires_grad, w.requires_grad = True, True
  out = x.conv2d(w)
  out.sum().backward()
  return out, x.grad, w.grad
def emulated(dt, name):
  # compared as float32: the reference is float32 math with the same (exactly representable) values, since tinygrad's
  # CPU backend does not build bfloat16 arithmetic with this clang
  if Tensor([0]).device == "CPU": return Tensor([1, 2, 3, 4], dtype=dtypes.float32) * 2
  with Context(EMULATED_DTYPES=name): return (Tensor([1, 2, 3, 4], dtype=dt) + Tensor([1, 2, 3, 4], dtype=dt)).float()
CASES = {
  "tan_2d": lambda: f32((45, 65), 0, -1.5, 1.5).tan(),
  "tan_0d": lambda: Tensor(0.7).tan(),
  "max_pool_ceil_k33": lambda: Tensor.max_pool2d(f32((1, 1, 6, 6), 2), kernel_size=(3, 3), padding=1, stride=3, ceil_mode=True),
  "max_pool_ceil_k32": lambda: Tensor.max_pool2d(f32((1, 1, 6, 6), 3), kernel_size=(3, 2), padding=1, stride=3, ceil_mode=True),
  "max_pool_ceil_k4": lambda: Tensor.max_pool2d(f32((1, 1, 6, 6), 4), kernel_size=4, padding=1, stride=3, ceil_mode=True),
  "conv2d_groups5": lambda: Tensor.conv2d(f32((4, 15, 5, 5), 5), f32((35, 3, 3, 3), 6), groups=5),
  "avg_pool3d_no_pad_count": lambda: Tensor.avg_pool2d(f32((1, 1, 16, 16, 16), 7), kernel_size=(8, 8, 8), stride=5, padding=1,
                                                       count_include_pad=False),
  "sparse_ce_smoothing": lambda: f32((12, 10), 8).sparse_categorical_crossentropy(
      Tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]), reduction="mean", ignore_index=3, label_smoothing=0.3),
  "emulated_half_add": lambda: emulated(dtypes.half, "half"),
  "emulated_bfloat16_add": lambda: emulated(dtypes.bfloat16, "bfloat16"),
  "int8_to_int32": lambda: Tensor([-1, 2, -3, 127, -128], dtype=dtypes.int8).cast(dtypes.int32),
  "int16_to_int32": lambda: Tensor([-1, 2, -3, 32767, -32768], dtype=dtypes.int16).cast(dtypes.int32),
  "uint32_to_int64": lambda: Tensor([0, 1, 2**31, 2**32 - 1], dtype=dtypes.uint32).cast(dtypes.int64),
  "int8_to_int64": lambda: Tensor([-1, 2, -3, 127, -128], dtype=dtypes.int8).cast(dtypes.int64),
}
for c in (1, 3):
  for kh in (1, 2, 3):
    for kw in (1, 2, 3):
      CASES[f"conv2d_c{c}_k{kh}x{kw}_fwd_bwd"] = (lambda c=c, kh=kh, kw=kw: conv_fb(1, c, (3, 5), (kh, kw), 10 * c + kh * 3 + kw))
# tests/diff/diffcases.py cases by id, run as the differential suite runs them (outputs as arrays of their raw bits' dtype)
DIFF = {
  "diff:abs_half_emulated": "abs[float16[7];EMULATED_DTYPES=half]",
  "diff:abs_bf16_emulated": "abs[bfloat16[13, 17];EMULATED_DTYPES=bfloat16]",
  "diff:contiguous_bf16_emulated": "contiguous[bfloat16[7];EMULATED_DTYPES=bfloat16]",
  "diff:cast_int8_half_emulated": "cast[int8[29];to=float16;EMULATED_DTYPES=half]",
  "diff:cast_f32_bf16_emulated": "cast[float32[29];to=bfloat16;EMULATED_DTYPES=bfloat16]",
  "diff:cast_fp8_half_emulated": "cast[fp8e4m3[29];to=float16;EMULATED_DTYPES=half]",
  "diff:cummax_int8": "cummax[int8[9, 7];axis=0]",
  "diff:cummin_uint16": "cummin[uint16[9, 7];axis=0]",
  "diff:any_uint8_pad": ("any", (5, 6, 2), "uint8", "pad", {"axis": (0, 2), "keepdim": False}),
  "diff:all_float64_stride": ("all", (11, 9, 2), "float64", "stride", {"axis": None, "keepdim": True}),
  "diff:avg_pool_k33_grad": "avg_pool2d[float32[2, 3, 9, 10];kernel_size=(3, 3),stride=2,padding=1;grad]",
  "diff:avg_pool_k32_ceil_grad": "avg_pool2d[float32[2, 3, 9, 10];kernel_size=(3, 2),stride=3,padding=1,ceil_mode=True;grad]",
  "diff:conv_transpose_grad": "conv_transpose2d[float32[1, 4, 5, 5],float32[4, 2, 3, 3];stride=2;grad]",
}
def diff_case(case_id):
  sys.path[:0] = [".", "diff"]  # the tests directory (the cwd) and tests/diff: diffcases, diffrunner
  import diffcases as D
  from diffrunner import run_case
  # a case by id, or (op, shape, dtype, view, kwargs): generated ids move when the suite's rotation does
  if isinstance(case_id, tuple):
    op, shape, dt, view, kw = case_id
    case = {"id": str(case_id), "op": op, "x": [D.X(shape, dt, None, view)], "kw": kw, "grad": False, "ctx": {}}
  else: case = next(c for c in D.CASES if c["id"] == case_id)
  return [np.frombuffer(o[4], np.dtype(o[2]) if o[2] else np.uint16).reshape(o[3]).copy() if o[0] == "tensor" else np.array(o[1])
          for o in run_case(case, Tensor([0]).device)]
out = {}
for name in sys.argv[2:]:
  try:
    if name in DIFF:
      out[name] = ("ok", diff_case(DIFF[name]))
      continue
    r = CASES[name]()
    out[name] = ("ok", [t.numpy() for t in (r if isinstance(r, tuple) else (r,))])
  except Exception: out[name] = ("error", traceback.format_exc()[-4000:])
pickle.dump(out, open(sys.argv[1], "wb"))
'''

CONV = [f"conv2d_c{c}_k{kh}x{kw}_fwd_bwd" for c in (1, 3) for kh in (1, 2, 3) for kw in (1, 2, 3)]
NAMES = ["tan_2d", "tan_0d", "max_pool_ceil_k33", "max_pool_ceil_k32", "max_pool_ceil_k4", "conv2d_groups5",
         "avg_pool3d_no_pad_count", "sparse_ce_smoothing", "emulated_half_add", "emulated_bfloat16_add", "int8_to_int32",
         "int16_to_int32", "uint32_to_int64", "int8_to_int64"] + CONV + [
         "diff:abs_half_emulated", "diff:abs_bf16_emulated", "diff:contiguous_bf16_emulated", "diff:cast_int8_half_emulated",
         "diff:cast_f32_bf16_emulated", "diff:cast_fp8_half_emulated", "diff:cummax_int8", "diff:cummin_uint16",
         "diff:any_uint8_pad", "diff:all_float64_stride", "diff:avg_pool_k33_grad", "diff:avg_pool_k32_ceil_grad",
         "diff:conv_transpose_grad"]
ULPS = {"tan_2d": 4, "tan_0d": 4}
# float sums (convolutions, average pools, the loss): the GPU kernel sums in another order (and with fma) than the
# CPU kernel, so results differ by reassociation rounding, which grows with the magnitudes summed (as tests/ops/opcases.py's
# REDUCE: rtol 1e-5, atol 1e-5 * (1 + the largest magnitude of the reference))
REDUCE = {"conv2d_groups5", "avg_pool3d_no_pad_count", "sparse_ce_smoothing", *CONV, "diff:avg_pool_k33_grad",
          "diff:avg_pool_k32_ceil_grad", "diff:conv_transpose_grad"}

_results:dict = {}
def results(dev:str, native:str) -> dict:
  """Every case, run once per (device, path) in one fresh process."""
  if (dev, native) not in _results:
    with tempfile.TemporaryDirectory() as d:
      prog, out = os.path.join(d, "prog.py"), os.path.join(d, "out.pkl")
      with open(prog, "w") as f: f.write(PROGRAM)
      env = {**os.environ, "DEV": dev, "MOCKGPU_RDNA_NATIVE": native}
      p = subprocess.run([sys.executable, prog, out, *NAMES], env=env, cwd=HERE, capture_output=True, text=True, timeout=900)
      assert p.returncode == 0 and os.path.exists(out), f"DEV={dev} died ({p.returncode}):\n{p.stderr[-6000:]}"
      with open(out, "rb") as f: _results[(dev, native)] = pickle.load(f)
  return _results[(dev, native)]

# the programs on MOCK+AMD on both paths; in the slow tier (MOCKGPU_SLOW=1) also with the LLVM renderer named
# explicitly and the KFD interface named explicitly, on the numpy path: the same kernels reach the same executor
# there (MOCK+AMD's renderer is LLVM, its interface KFD), so CI runs the two that differ
RUNS = [("MOCK+AMD", "0"), ("MOCK+AMD", "1"), *([("MOCK+AMD:LLVM", "0"), ("MOCKKFD+AMD", "0")] if SLOW else [])]
@pytest.mark.parametrize("dev,path", RUNS, ids=[f"{d}-{'native' if p == '1' else 'numpy'}" for d, p in RUNS])
@pytest.mark.parametrize("name", NAMES)
def test_regression(name, dev, path):
  status, got = results(dev, path)[name]
  assert status == "ok", got
  wstatus, want = results("CPU", "0")[name]
  assert wstatus == "ok", want
  assert len(got) == len(want)
  for g, w in zip(got, want):
    assert g.shape == w.shape and g.dtype == w.dtype, f"{g.shape} {g.dtype} != {w.shape} {w.dtype}"
    if name in ULPS:
      w64 = w.astype(np.float64)
      err, bound = np.abs(g.astype(np.float64) - w64), ULPS[name] * 2.0**-23 * (1 + w64 * w64)
      assert (err <= bound).all(), f"{name}: {g[err > bound][:4]} != {w[err > bound][:4]}"
    elif name in REDUCE:
      atol = 1e-5 * (1 + float(np.nanmax(np.abs(w.astype(np.float64)), initial=0)))
      np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=atol, err_msg=name)
    elif g.dtype.kind == "f":
      nan = np.isnan(g.astype(np.float32)) & np.isnan(w.astype(np.float32))
      bad = (g.view(f"u{g.dtype.itemsize}") != w.view(f"u{w.dtype.itemsize}")) & ~nan
      assert not bad.any(), f"{name}: {int(bad.sum())} of {g.size} differ: {g[bad][:4]} != {w[bad][:4]}"
    else: np.testing.assert_array_equal(g, w)
