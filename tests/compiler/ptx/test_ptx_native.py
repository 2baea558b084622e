"""The PTX executor's two paths, numpy (every thread at once) and native (hot kernels translated to C, one thread at a
time), give the same bits: on real tinygrad kernels of both renderers, and on single instructions over special
values. The hand-written suites (test_ptx_isa/kernels/numerics/errors/approx) also run on both paths (conftest's
ptx_path fixture). Here: what only the native path has (its tiering, its declining, its scheduling around barriers)."""
from __future__ import annotations
import itertools
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded, UnsupportedInstruction
from mockgpu.compiler.native import HOT_DISPATCHES
from mockgpu.emulators.ptx import native, load_module
from support.ptx_harness import run as run_tiny
from support.ptx_isa import kernel, run, LOAD3
from mockgpu.compiler.ptx import semantics
from support.ptx_native import BARRIER

def _path(monkeypatch, name:str): monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0" if name == "numpy" else "1")

rng = np.random.default_rng(5)
def F(*shape): return Tensor(rng.standard_normal(shape).astype(np.float32) * 4)
def N(lo, hi, *shape, dt=np.int32): return Tensor(rng.integers(lo, hi, shape).astype(dt))

KERNELS = {
  "elementwise": lambda: (F(1000) * F(1000) + 1).exp2(),
  "exp_log_sqrt": lambda: (F(300).abs() + 0.5).sqrt().reciprocal().log2() + F(300).exp(),
  "trig": lambda: F(256).sin() + F(256).cos(),
  "sum_rows": lambda: F(64, 200).sum(axis=1),
  "sum_all": lambda: F(5000).sum(),
  "max_reduce": lambda: F(37, 29).max(axis=0),
  "softmax": lambda: F(16, 100).softmax(axis=-1),
  "matmul": lambda: F(48, 40) @ F(40, 24),
  "conv2d": lambda: F(1, 3, 12, 12).conv2d(F(4, 3, 3, 3), padding=1),
  "int_math": lambda: (N(-1000, 1000, 500) * 7 // 3 + N(-50, 50, 500) % 5) << 2,
  "uint8_where": lambda: (N(0, 255, 400, dt=np.uint8).cast(dtypes.int32) > 100).where(F(400), F(400) * 2),
  "casts": lambda: (F(300) * 100).cast(dtypes.int32).cast(dtypes.float32) + N(0, 9, 300, dt=np.int8).cast(dtypes.float32),
  "int64": lambda: N(-2**40, 2**40, 200, dt=np.int64) * 3 + 1,
  "gather": lambda: F(100)[N(0, 100, 64)],
  "cumsum": lambda: F(200).cumsum(),
  "argmax": lambda: F(30, 50).argmax(axis=1),
  "half_casts": lambda: (F(500).cast(dtypes.half) * 3).cast(dtypes.float32).maximum(0),
  "float64": lambda: (F(100).cast(dtypes.float64) * F(100).cast(dtypes.float64)).maximum(F(100).cast(dtypes.float64)),
}

def build(name:str):
  global rng
  rng = np.random.default_rng(5)
  return KERNELS[name]()

@pytest.mark.parametrize("kind", ["ptx", "cuda"])
@pytest.mark.parametrize("name", KERNELS)
def test_kernel_same_bits_on_both_paths(name, kind, monkeypatch):
  if kind == "cuda": pytest.importorskip("nvidia.cuda_nvrtc")
  runs = {}
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    stats:list = []
    runs[path] = (run_tiny(build(name), kind, stats), stats)
  (want, want_stats), (got, got_stats) = runs["numpy"], runs["native"]
  assert want_stats and not any(st.native for st in want_stats)
  assert all(st.native for st in got_stats), f"{name}: a kernel stayed on the numpy path: {dict(native.declined)}"
  assert [st.thread_instructions for st in got_stats] == [st.thread_instructions for st in want_stats]
  np.testing.assert_array_equal(np.atleast_1d(got).view(np.uint8), np.atleast_1d(want).view(np.uint8))

# *** single instructions over special values ***

F32_SPECIALS = np.array([0, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x40400000, 1, 0x007fffff, 0x807fffff, 0x00800000,
                         0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fc12345, 0x7f812345, 0xffc00001,
                         0x7149f2ca, 0x8ee7e6f0, 0x4b800001, 0x42c90000, 0xc0200000, 0x501502f9, 0x3fb8aa3b, 0xc2fe0000], np.uint32)
I32_SPECIALS = np.array([0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0x12345678, 0x80000001,
                         0xfff0, 0x7f, 0x80, 0xff, 100, 0xffffff9c], np.uint32)

def _pairs(values:np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  a, b = zip(*itertools.product(values, repeat=2))
  return np.array(a, np.uint32), np.array(b, np.uint32)

def both_paths(monkeypatch, body:str, a, b, c) -> tuple[np.ndarray, np.ndarray]:
  """`body` (inputs %r1, %r2, %r3 as raw bits, result from %r4) over every lane, on each path."""
  n = -(-len(a) // 32) * 32
  pad = lambda x: np.resize(np.asarray(x, np.uint32), n)
  outs = []
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    out = np.zeros(n, np.uint32)
    st = run(kernel(LOAD3 + body + "\nst.global.b32 [%rd9], %r4;"), [out, pad(a), pad(b), pad(c)], grid=(n // 32, 1, 1))
    assert st.native == (path == "native"), f"{body}: the native path declined it: {dict(native.declined)}"
    outs.append(out[:len(a)])
  return outs[0], outs[1]

FLOAT_BINARY = ["add.f32", "sub.f32", "mul.f32", "add.ftz.f32", "mul.rn.ftz.f32", "div.rn.f32", "div.approx.f32", "div.full.ftz.f32",
                "min.f32", "max.f32", "min.NaN.f32", "max.ftz.f32"]

def _nan_pair(a:np.ndarray, b:np.ndarray) -> np.ndarray:
  isnan = lambda x: (x & 0x7fffffff) > 0x7f800000
  return isnan(a) & isnan(b)

@pytest.mark.parametrize("op", FLOAT_BINARY)
def test_float_binary_specials(op, monkeypatch):
  a, b = _pairs(F32_SPECIALS)
  want, got = both_paths(monkeypatch, f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\n{op} %f3, %f1, %f2;\nmov.b32 %r4, %f3;", a, b, b)
  # where both operands are NaN, which payload survives is numpy's operand order (its loops may swap operands); both
  # paths give a quiet NaN of one of them
  same = ~_nan_pair(a, b)
  np.testing.assert_array_equal(got[same], want[same])
  assert ((got[~same] & 0x7fffffff) > 0x7f800000).all() and ((want[~same] & 0x7fffffff) > 0x7f800000).all()

def test_fma_specials(monkeypatch):
  a, b = _pairs(F32_SPECIALS)
  c = np.resize(F32_SPECIALS[::-1], len(a))
  want, got = both_paths(monkeypatch, "mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nmov.b32 %f4, %r3;\nfma.rn.f32 %f3, %f1, %f2, %f4;\nmov.b32 %r4, %f3;",
                         a, b, c)
  isnan = lambda x: (x & 0x7fffffff) > 0x7f800000
  same = (isnan(a).astype(int) + isnan(b) + isnan(c)) < 2
  np.testing.assert_array_equal(got[same], want[same])

FLOAT_UNARY = ["rcp.rn.f32", "rcp.approx.f32", "rcp.approx.ftz.f32", "sqrt.rn.f32", "sqrt.approx.f32", "rsqrt.approx.f32", "ex2.approx.f32",
               "ex2.approx.ftz.f32", "lg2.approx.f32", "sin.approx.f32", "cos.approx.f32", "tanh.approx.f32", "neg.f32", "abs.f32",
               "abs.ftz.f32", "cvt.rni.f32.f32", "cvt.rzi.f32.f32", "cvt.rmi.f32.f32", "cvt.rpi.ftz.f32.f32"]

@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_float_unary_specials(op, monkeypatch):
  x = np.concatenate([F32_SPECIALS, rng.standard_normal(38).astype(np.float32).view(np.uint32)])
  want, got = both_paths(monkeypatch, f"mov.b32 %f1, %r1;\n{op} %f3, %f1;\nmov.b32 %r4, %f3;", x, x, x)
  if op.split(".")[0] in ("ex2", "lg2", "sin", "cos", "tanh"):
    # both paths call a float64 function, numpy's own loops and libm's; which NaN they return for a NaN argument
    # depends on the loop numpy picks for the CPU (its SIMD tanh returns the default NaN); a NaN it is on both
    isnan = lambda v: (v & 0x7fffffff) > 0x7f800000
    np.testing.assert_array_equal(isnan(got), isnan(want))
    got, want = got[~isnan(want)], want[~isnan(want)]
  np.testing.assert_array_equal(got, want)

CONVERSIONS = ["cvt.rzi.s32.f32 %r4, %f1;", "cvt.rni.s32.f32 %r4, %f1;", "cvt.rmi.u32.f32 %r4, %f1;", "cvt.rpi.s32.f32 %r4, %f1;",
               "cvt.rzi.ftz.s32.f32 %r4, %f1;", "cvt.rni.s64.f32 %rd1, %f1;\ncvt.u32.u64 %r4, %rd1;",
               "cvt.rzi.u16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;",
               "cvt.rn.f16.f32 %h1, %f1;\nmov.b32 %r4, {%h1, %h1};", "cvt.f32.f16 %f3, %h0;\nmov.b32 %r4, %f3;",
               "cvt.rn.f32.s32 %f3, %r1;\nmov.b32 %r4, %f3;", "cvt.rn.f32.u32 %f3, %r1;\nmov.b32 %r4, %f3;",
               "cvt.f64.f32 %fd1, %f1;\nmul.f64 %fd1, %fd1, %fd1;\ncvt.rn.f32.f64 %f3, %fd1;\nmov.b32 %r4, %f3;"]

@pytest.mark.parametrize("op", CONVERSIONS)
def test_conversion_specials(op, monkeypatch):
  x = np.concatenate([F32_SPECIALS, I32_SPECIALS, np.array([0x7e00, 0x7c01, 0xfc00, 0x03ff, 0x8001, 0x3c00], np.uint32)])
  want, got = both_paths(monkeypatch, f"mov.b32 %f1, %r1;\nmov.b32 {{%h0, %h7}}, %r1;\n{op}", x, x, x)
  np.testing.assert_array_equal(got, want)

INT_OPS = ["div.s32", "rem.s32", "div.u32", "rem.u32", "shl.b32", "shr.u32", "shr.s32", "mul.hi.s32", "mul.hi.u32", "mul.lo.s32",
           "min.s32", "max.u32", "add.s32", "sub.s32", "and.b32", "xor.b32"]

@pytest.mark.parametrize("op", INT_OPS)
def test_integer_binary_specials(op, monkeypatch):
  a, b = _pairs(I32_SPECIALS)
  want, got = both_paths(monkeypatch, f"{op} %r4, %r1, %r2;", a, b, b)
  np.testing.assert_array_equal(got, want)

INT_MORE = ["shf.l.wrap.b32 %r4, %r1, %r2, %r3;", "shf.r.clamp.b32 %r4, %r1, %r2, %r3;", "shf.r.wrap.b32 %r4, %r2, %r1, %r3;",
            "mad.lo.s32 %r4, %r1, %r2, %r3;", "mul.wide.s32 %rd1, %r1, %r2;\nshr.u64 %rd1, %rd1, 16;\ncvt.u32.u64 %r4, %rd1;",
            "mad.wide.u32 %rd11, %r1, %r2, %rd11;\ncvt.u32.u64 %r4, %rd11;", "popc.b32 %r4, %r1;", "clz.b32 %r4, %r2;", "abs.s32 %r4, %r1;",
            "neg.s32 %r4, %r2;", "not.b32 %r4, %r1;", "lop3.b32 %r4, %r1, %r2, %r3, 0x96;", "cvt.s8.s32 %r5, %r1;\ncvt.s32.s8 %r4, %r5;",
            "cvt.u16.u32 %h1, %r1;\ncvt.s32.s16 %r4, %h1;", "setp.lt.s32 %p1, %r1, %r2;\nselp.b32 %r4, %r1, %r2, %p1;",
            "setp.hi.u32 %p1, %r1, %r2;\nsetp.ne.and.b32 %p2, %r1, %r3, %p1;\nselp.u32 %r4, 5, 9, %p2;",
            "mul.wide.u32 %rd1, %r1, %r2;\nmul.hi.u64 %rd2, %rd1, %rd1;\ncvt.u32.u64 %r4, %rd2;",
            "bfe.s32 %r4, %r1, %r2, %r3;", "bfe.u32 %r4, %r3, %r1, %r2;", "bfi.b32 %r4, %r1, %r2, %r3, %r1;",
            "cvt.u64.u32 %rd11, %r1;\nbfe.s64 %rd12, %rd11, %r2, %r3;\ncvt.u32.u64 %r4, %rd12;", "brev.b32 %r4, %r1;",
            "prmt.b32 %r4, %r1, %r2, %r3;", "cvt.u64.u32 %rd11, %r2;\nshl.b64 %rd11, %rd11, 7;\nbrev.b64 %rd12, %rd11;\ncvt.u32.u64 %r4, %rd12;",
            "cvt.u64.u32 %rd1, %r1;\ndiv.s64 %rd2, %rd1, -3;\nrem.u64 %rd3, %rd1, 7;\nadd.s64 %rd2, %rd2, %rd3;\ncvt.u32.u64 %r4, %rd2;"]

@pytest.mark.parametrize("op", INT_MORE)
def test_integer_forms_specials(op, monkeypatch):
  a, b = _pairs(I32_SPECIALS)
  c = np.resize(I32_SPECIALS[::-1], len(a))
  want, got = both_paths(monkeypatch, op, a, b, c)
  np.testing.assert_array_equal(got, want)

COMPARES = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]

@pytest.mark.parametrize("cmp", COMPARES)
def test_float_compare_specials(cmp, monkeypatch):
  a, b = _pairs(F32_SPECIALS)
  body = (f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nsetp.{cmp}.f32 %p1|%p2, %f1, %f2;\nselp.u32 %r4, 1, 0, %p1;\nselp.u32 %r5, 2, 0, %p2;\n"
          "or.b32 %r4, %r4, %r5;")
  want, got = both_paths(monkeypatch, body, a, b, b)
  np.testing.assert_array_equal(got, want)

# the forms the C backend declined before (tinygrad's PTX uses them in its isnan/isinf, copysign and saturating
# integer casts): now translated, the same bits as numpy over special values
CLOSED_GAPS = ["mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\ncopysign.f32 %f3, %f2, %f1;\nmov.b32 %r4, %f3;",
               "cvt.f64.f32 %fd1, %f1;\ncvt.f64.f32 %fd2, %f2;\ncopysign.f64 %fd3, %fd2, %fd1;\ncvt.rn.f32.f64 %f3, %fd3;\nmov.b32 %r4, %f3;",
               *[f"mov.b32 %f1, %r1;\ntestp.{k}.f32 %p1, %f1;\nselp.u32 %r4, 1, 0, %p1;"
                 for k in ("finite", "infinite", "number", "notanumber", "normal", "subnormal")],
               "mov.b32 %f1, %r1;\ncvt.f64.f32 %fd1, %f1;\ntestp.subnormal.f64 %p1, %fd1;\nselp.u32 %r4, 1, 0, %p1;",
               "add.sat.s32 %r4, %r1, %r2;", "sub.sat.s32 %r4, %r1, %r2;", "mad.hi.sat.s32 %r4, %r1, %r2, %r3;",
               "cvt.sat.s8.s32 %r5, %r1;\ncvt.s32.s8 %r4, %r5;", "cvt.sat.u16.s32 %h1, %r1;\ncvt.u32.u16 %r4, %h1;",
               "cvt.sat.s32.u32 %r4, %r1;", "cvt.sat.u32.s32 %r4, %r2;",
               "cvt.u64.u32 %rd1, %r1;\nshl.b64 %rd1, %rd1, 24;\ncvt.sat.s32.s64 %r4, %rd1;",
               "cvt.u64.u32 %rd1, %r1;\nshl.b64 %rd1, %rd1, 32;\ncvt.sat.u32.u64 %r4, %rd1;",
               "set.lt.u32.s32 %r4, %r1, %r2;", "mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nset.gtu.f32.f32 %f3, %f1, %f2;\nmov.b32 %r4, %f3;",
               "setp.ne.s32 %p1, %r3, 0;\nset.eq.or.s32.u32 %r4, %r1, %r2, %p1;"]

@pytest.mark.parametrize("op", CLOSED_GAPS)
def test_closed_c_gaps_same_bits(op, monkeypatch):
  a, b = _pairs(np.concatenate([I32_SPECIALS[:12], F32_SPECIALS[::2]]))
  c = np.resize(I32_SPECIALS[::-1], len(a))
  want, got = both_paths(monkeypatch, op, a, b, c)
  np.testing.assert_array_equal(got, want)

def test_float64_ops(monkeypatch):
  """float64 arithmetic on the float32 specials widened (the result's high half is stored)."""
  a, b = _pairs(F32_SPECIALS[::2])
  for op in ("add.f64", "mul.f64", "div.rn.f64", "sub.f64", "min.f64", "max.f64"):
    body = f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\ncvt.f64.f32 %fd1, %f1;\ncvt.f64.f32 %fd2, %f2;\n{op} %fd3, %fd1, %fd2;\nmov.b64 %rd1, %fd3;\n" \
           "shr.u64 %rd1, %rd1, 32;\ncvt.u32.u64 %r4, %rd1;"
    want, got = both_paths(monkeypatch, body, a, b, b)
    same = ~_nan_pair(a, b)
    np.testing.assert_array_equal(got[same], want[same], err_msg=op)

# *** tiering, declining, barriers, stops ***

ADD_ONE = kernel(LOAD3 + "add.s32 %r4, %r1, 1;\nst.global.b32 [%rd9], %r4;")

def test_auto_mode_builds_once_it_pays(monkeypatch):
  """auto: numpy until the seconds spent there reach the estimated build (MOCKGPU_CC_COST=0: at once), built in the
  background while numpy runs; a fresh load of the module takes the recorded build at its first launch."""
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "auto")
  monkeypatch.setenv("MOCKGPU_CC_COST", "0")
  import mockgpu.emulators.ptx as ptx
  from mockgpu.compiler import native as cnative
  monkeypatch.setattr(ptx, "_modules", {})   # no tier state from another test's launches
  monkeypatch.setattr(cnative, "find", lambda tag, key: None)  # as if no process had built it (an earlier run did)
  src = ADD_ONE.replace(".entry k(", ".entry k_hot(")
  x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
  first = run(src, [out, x, x, x], name="k_hot").native
  cnative.wait()
  paths = [first] + [run(src, [out, x, x, x], name="k_hot").native for _ in range(2)]
  assert paths == [False, True, True]
  monkeypatch.undo()  # the index back, as a fresh process sees it (undo drops the settings too: set again)
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "auto")
  monkeypatch.setenv("MOCKGPU_CC_COST", "1e6")  # a build now would not pay: only the index can give C
  monkeypatch.setattr(ptx, "_modules", {})
  assert run(src, [out, x, x, x], name="k_hot").native
  np.testing.assert_array_equal(out, x + 1)

def test_auto_mode_counts_the_seconds_of_earlier_processes(monkeypatch, tmp_path):
  """The history (compiler/history.py): a kernel's numpy seconds in an earlier process count toward its build, so a
  process after it that finds them past the build's estimate starts the build at the kernel's first launch."""
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "auto")
  monkeypatch.setenv("MOCKGPU_CC_COST", "1e6")   # the first process: a build never pays within it
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path))
  monkeypatch.setenv("MOCKGPU_CC_HISTORY", "1")
  import mockgpu.emulators.ptx as ptx
  from mockgpu.compiler import history, native as cnative
  monkeypatch.setattr(ptx, "_modules", {})
  monkeypatch.setattr(history, "_spent", {})
  monkeypatch.setattr(history, "_earlier", (None, {}))
  src = ADD_ONE.replace(".entry k(", ".entry k_again(")
  x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
  assert not any(run(src, [out, x, x, x], name="k_again").native for _ in range(2))
  (key, seconds), = history._spent.items()
  history.flush()   # the first process exits
  monkeypatch.setattr(ptx, "_modules", {})   # a second process: its own kernel state, the history read again
  monkeypatch.setattr(history, "_earlier", (None, {}))
  estimate = cnative.build_estimate("ptx", ptx.load_module(src).kernel("k_again").instructions) / 1e6
  monkeypatch.setattr(ptx, "_modules", {})   # the kernel's tier made under the new estimate
  monkeypatch.setenv("MOCKGPU_CC_COST", repr(seconds / 2 / estimate))   # the first process's seconds paid for it twice
  assert history.earlier(key) == (round(seconds, 6), 1)   # kept to the microsecond
  assert not run(src, [out, x, x, x], name="k_again").native   # numpy serves it while the build runs
  cnative.wait()
  assert run(src, [out, x, x, x], name="k_again").native
  np.testing.assert_array_equal(out, x + 1)

def test_auto_mode_keeps_cheap_kernels_on_numpy(monkeypatch):
  """A kernel whose numpy runs cost far less than its build stays there, however many times it is launched."""
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "auto")
  monkeypatch.setenv("MOCKGPU_CC_COST", "1e6")
  import mockgpu.emulators.ptx as ptx
  monkeypatch.setattr(ptx, "_modules", {})
  src = ADD_ONE.replace(".entry k(", ".entry k_cold(")
  x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
  assert not any(run(src, [out, x, x, x], name="k_cold").native for _ in range(HOT_DISPATCHES + 2))
  np.testing.assert_array_equal(out, x + 1)

def test_mode_zero_never_translates(monkeypatch):
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
  x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
  assert not any(run(ADD_ONE, [out, x, x, x]).native for _ in range(4))

def test_uncovered_kernel_is_declined_and_runs_on_numpy(monkeypatch):
  _path(monkeypatch, "native")
  src = kernel(LOAD3 + "cnot.b32 %r4, %r1;\nst.global.b32 [%rd9], %r4;")
  x, out = F32_SPECIALS[:32].copy(), np.zeros(32, np.uint32)
  x.resize(32)
  before = native.declined["instruction cnot"]
  assert not run(src, [out, x, x, x]).native
  assert native.declined["instruction cnot"] == before + 1
  np.testing.assert_array_equal(out, (x.view(np.uint32) == 0).astype(np.uint32))   # cnot: 1 where the bits are 0

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_barrier_orders_shared_memory_across_threads(path, monkeypatch):
  """Each thread reads what the mirrored thread wrote before the barrier; threads 48.. exit before it, and the
  barrier waits for the live ones only. The register of each thread survives the barrier."""
  _path(monkeypatch, path)
  out = np.zeros(64, np.uint32)
  assert run(BARRIER, [out], block=(64, 1, 1), grid=(2, 1, 1)).native == (path == "native")
  t = np.arange(48, dtype=np.uint32)
  np.testing.assert_array_equal(out[:48], t * t + (47 - t) ** 2)
  assert not out[48:].any()

def test_page_fault_names_the_instruction_on_both_paths(monkeypatch):
  src = kernel(LOAD3 + "add.s64 %rd9, %rd9, 4096;\nst.global.b32 [%rd9], %r1;")
  errors, threads = [], []
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
    with pytest.raises(GPUPageFault) as e: run(src, [out, x, x, x])
    f = e.value
    errors.append((f.va - out.ctypes.data, f.size, f.write, f.where, f.kernel, f.nearest.replace(hex(out.ctypes.data), "BUF")))
    threads.append((f.cta, f.thread))
  assert errors[0] == errors[1] == (4096, 4, True, errors[0][3], "k", "offset 0x1000: 0xf80 bytes past the end of the allocation at BUF (0x80 bytes)")
  assert "st.global.b32 [%rd9], %r1" in errors[0][3]
  assert threads == [((0, 0, 0), (0, 0, 0)), (None, None)]  # the C path runs a thread at a time: it does not say which

def test_shared_fault_names_the_window(monkeypatch):
  _path(monkeypatch, "native")
  src = kernel("mov.u32 %r1, 4096;\nld.shared.u32 %r2, [%r1];", regs=".shared .align 4 .b32 buf[16];\n")
  with pytest.raises(GPUPageFault, match=r"ld.shared.u32 %r2, \[%r1\] \(shared window of 64 bytes\)"): run(src, [])

def test_budget_stops_an_endless_loop(monkeypatch):
  _path(monkeypatch, "native")
  monkeypatch.setenv("MOCKGPU_BUDGET", "100000")
  src = kernel("LOOP:\nadd.u32 %r1, %r1, 1;\nbra LOOP;")
  with pytest.raises(InstructionBudgetExceeded, match="ran past 100000 warp-instructions"): run(src, [])

# *** directed rounding, float16/bfloat16 and the conversions in every mode: C computes the numpy path's bits ***

def _isnan(x:np.ndarray, bits:int=32) -> np.ndarray:
  return (x & 0x7fffffff) > 0x7f800000 if bits == 32 else (x & 0x7fff) > 0x7c00

MODED_F32 = [f"{op}.{m}{ftz}.f32" for op in ("add", "sub", "mul", "div") for m in ("rz", "rm", "rp") for ftz in ("", ".ftz")] + \
  ["add.sat.f32", "mul.rm.sat.f32", "sub.rp.ftz.sat.f32", "div.rn.ftz.sat.f32"]

@pytest.mark.parametrize("op", MODED_F32)
def test_float_binary_in_every_mode(op, monkeypatch):
  a, b = _pairs(F32_SPECIALS)
  want, got = both_paths(monkeypatch, f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\n{op} %f3, %f1, %f2;\nmov.b32 %r4, %f3;", a, b, b)
  same = ~_nan_pair(a, b)   # two NaN operands: numpy's loops pick either payload (see test_float_binary_specials)
  np.testing.assert_array_equal(got[same], want[same])

MODED_UNARY_FMA = ["fma.rz.f32 %f3, %f1, %f2, %f4;", "fma.rm.ftz.f32 %f3, %f1, %f2, %f4;", "fma.rp.sat.f32 %f3, %f1, %f2, %f4;",
                   "sqrt.rz.f32 %f3, %f1;", "sqrt.rp.ftz.f32 %f3, %f1;", "rcp.rm.f32 %f3, %f1;", "rcp.rz.ftz.f32 %f3, %f1;"]

@pytest.mark.parametrize("op", MODED_UNARY_FMA)
def test_float_fma_sqrt_rcp_in_every_mode(op, monkeypatch):
  a, b = _pairs(F32_SPECIALS)
  c = np.resize(F32_SPECIALS[::-1], len(a))
  want, got = both_paths(monkeypatch, f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nmov.b32 %f4, %r3;\n{op}\nmov.b32 %r4, %f3;", a, b, c)
  same = (_isnan(a).astype(int) + _isnan(b) + _isnan(c)) < 2
  np.testing.assert_array_equal(got[same], want[same])

@pytest.mark.parametrize("op", ["add.rz.f64", "sub.rm.f64", "mul.rp.f64", "div.rz.f64", "div.rp.f64", "sqrt.rm.f64", "rcp.rp.f64",
                                "fma.rz.f64", "fma.rm.f64", "fma.rp.f64"])
def test_float64_in_every_mode(op, monkeypatch):
  """The operands are float64s made of two specials (high and low word): every exponent, NaN payloads, subnormals."""
  a, b = _pairs(F32_SPECIALS)
  c = np.resize(F32_SPECIALS[::-1], len(a))
  srcs = {"sqrt": "%fd1", "rcp": "%fd1", "fma": "%fd1, %fd2, %fd4"}.get(op.split(".")[0], "%fd1, %fd2")
  body = (f"mov.b64 %fd1, {{%r3, %r1}};\nmov.b64 %fd2, {{%r1, %r2}};\nmov.b64 %fd4, {{%r2, %r3}};\n{op} %fd3, {srcs};\n"
          "mov.b64 {%r5, %r4}, %fd3;\nxor.b32 %r4, %r4, %r5;")
  want, got = both_paths(monkeypatch, body, a, b, c)
  same = (_isnan(a).astype(int) + _isnan(b) + _isnan(c)) < 2   # two NaN operands: either payload (numpy's loops)
  np.testing.assert_array_equal(got[same], want[same])

HALVES = ["add.rn.f16 %h5, %h1, %h3;", "fma.rn.f16 %h5, %h1, %h3, %h2;", "fma.rn.bf16 %h5, %h1, %h3, %h2;", "mul.rn.bf16 %h5, %h1, %h3;",
          "add.rn.bf16 %h5, %h1, %h3;", "fma.rn.sat.f16 %h5, %h1, %h3, %h2;", "fma.rn.relu.bf16 %h5, %h1, %h3, %h2;",
          "fma.rn.relu.f16 %h5, %h1, %h3, %h2;",
          "min.bf16 %h5, %h1, %h3;", "max.f16 %h5, %h1, %h3;", "ex2.approx.f16 %h5, %h1;", "tanh.approx.f16 %h5, %h1;",
          "ex2.approx.ftz.bf16 %h5, %h1;", "tanh.approx.bf16 %h5, %h1;", "cvt.rn.bf16.f16 %h5, %h1;",
          "cvt.f32.bf16 %f1, %h1;\ncvt.rz.f16.f32 %h5, %f1;",
          "setp.lt.bf16 %p1, %h1, %h3;\nselp.b16 %h5, %h1, %h3, %p1;", "cvt.rni.s32.f16 %r6, %h1;\ncvt.u16.u32 %h5, %r6;",
          "cvt.rzi.u16.bf16 %h5, %h1;"]

@pytest.mark.parametrize("op", HALVES)
def test_half_and_bfloat16_forms(op, monkeypatch):
  """Each 32-bit input is two halves; the result half is in the low bits."""
  halves = np.array([0, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe12, 0x3f80, 0xbf80,
                     0x7f80, 0x7fc1, 0x0080, 0x4049, 0x3555, 0x4d00, 0xc8ff], np.uint32)
  x = (halves[:, None] | halves[None, ::-1] << 16).reshape(-1)
  a, b = _pairs(x[::7])
  want, got = both_paths(monkeypatch, f"mov.b32 {{%h1, %h2}}, %r1;\nmov.b32 {{%h3, %h4}}, %r2;\n{op}\nmov.b32 %r4, {{%h5, %h5}};", a, b, b)
  # two NaN operands: which payload survives follows numpy's operand order (both give a NaN)
  nan_pair = lambda v, w: ((v & 0x7fff) > 0x7c00) & ((w & 0x7fff) > 0x7c00) | ((v & 0x7fff) > 0x7f80) & ((w & 0x7fff) > 0x7f80)
  same = ~(nan_pair(a, b) | nan_pair(a, b >> 16) | nan_pair(a >> 16, b) | nan_pair(a, a >> 16))
  np.testing.assert_array_equal(got[same], want[same])

MODED_CVT = ["cvt.rz.f16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;", "cvt.rm.f16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;",
             "cvt.rp.bf16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;", "cvt.rn.bf16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;",
             "cvt.rn.relu.f16x2.f32 %r4, %f1, %f2;", "cvt.rn.bf16x2.f32 %r4, %f1, %f2;",
             "cvt.rm.f32.f64 %f3, %fd1;\nmov.b32 %r4, %f3;", "cvt.rp.f32.f64 %f3, %fd1;\nmov.b32 %r4, %f3;",
             "cvt.rz.f16.f64 %h1, %fd1;\ncvt.u32.u16 %r4, %h1;", "cvt.rn.f16.f64 %h1, %fd1;\ncvt.u32.u16 %r4, %h1;",
             "cvt.rz.f32.s64 %f3, %rd1;\nmov.b32 %r4, %f3;", "cvt.rm.f32.u64 %f3, %rd1;\nmov.b32 %r4, %f3;",
             "cvt.rn.f32.s64 %f3, %rd1;\nmov.b32 %r4, %f3;",
             "cvt.rp.f64.s64 %fd3, %rd1;\nmov.b64 {%r5, %r4}, %fd3;\nxor.b32 %r4, %r4, %r5;",
             "cvt.rz.f64.u64 %fd3, %rd1;\nmov.b64 {%r5, %r4}, %fd3;\nxor.b32 %r4, %r4, %r5;",
             "cvt.rm.f32.s32 %f3, %r1;\nmov.b32 %r4, %f3;", "cvt.rp.f16.u32 %h1, %r1;\ncvt.u32.u16 %r4, %h1;",
             "cvt.rn.bf16.s32 %h1, %r1;\ncvt.u32.u16 %r4, %h1;",
             "cvt.rzi.s32.f64 %r4, %fd1;", "cvt.rpi.u64.f64 %rd3, %fd1;\ncvt.u32.u64 %r4, %rd3;", "cvt.sat.f32.f32 %f3, %f1;\nmov.b32 %r4, %f3;",
             "cvt.rz.sat.f16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;"]

@pytest.mark.parametrize("op", MODED_CVT)
def test_conversions_in_every_mode(op, monkeypatch):
  x = np.concatenate([F32_SPECIALS, I32_SPECIALS, rng.standard_normal(20).astype(np.float32).view(np.uint32)])
  a, b = _pairs(x[::3])
  body = f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nmov.b64 %fd1, {{%r2, %r1}};\nmov.b64 %rd1, {{%r2, %r1}};\n{op}"
  want, got = both_paths(monkeypatch, body, a, b, b)
  np.testing.assert_array_equal(got, want)

@pytest.mark.parametrize("mode", sorted(semantics.PRMT_MODES))
def test_prmt_modes_same_bits(mode, monkeypatch):
  a, b = _pairs(I32_SPECIALS)
  c = np.resize(I32_SPECIALS[::-1], len(a))
  want, got = both_paths(monkeypatch, f"prmt.b32.{mode} %r4, %r1, %r2, %r3;", a, b, c)
  np.testing.assert_array_equal(got, want)

ATOMICS = ["add.u32", "add.s32", "add.u64", "add.f32", "add.f64", "inc.u32", "dec.u32", "cas.b32", "cas.b64", "exch.b32", "min.s32",
           "max.u32", "min.s64", "and.b32", "or.b64", "xor.b32"]

@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("op", ATOMICS)
def test_atomics_colliding_lanes_same_bits(op, space, monkeypatch):
  """64 threads, seven cells: each thread's old value and the cells, on both paths (lane order per address)."""
  w = 64 if op.endswith("64") else 32
  r, f = ("%rd", "%fd") if w == 64 else ("%r", "%f")
  src = f"{f}1" if op.startswith("add.f") else f"{r}1"
  vals = rng.integers(0, 2**w, 64, dtype=np.uint64).astype(np.uint64 if w == 64 else np.uint32)
  if op.startswith("add.f"): vals = rng.standard_normal(64).astype(np.float64 if w == 64 else np.float32).view(vals.dtype)
  init = vals[:7][::-1].copy()
  cas = f", {r}2" if op.startswith("cas") else ""
  body = f"""
.shared .align 8 .b8 s[56];
mov.u32 %r0, %tid.x;
ld.param.u64 %rd5, [in0];
mul.wide.u32 %rd6, %r0, {w // 8};
add.s64 %rd5, %rd5, %rd6;
ld.global.b{w} {src}, [%rd5];
ld.global.b{w} {r}2, [%rd5+{w // 8 * 64}];
rem.u32 %r3, %r0, 7;
mul.wide.u32 %rd7, %r3, {w // 8};
ld.param.u64 %rd8, [out];
add.s64 %rd8, %rd8, %rd7;
mov.u64 %rd9, s;
add.s64 %rd9, %rd9, %rd7;
"""
  if space == "shared":   # the cells start as `out`'s, and end there
    body += f"setp.lt.u32 %p1, %r0, 7;\n@%p1 ld.global.b{w} {r}3, [%rd8];\n@%p1 st.shared.b{w} [%rd9], {r}3;\nbar.sync 0;\n"
    cell = "[%rd9]"
  else: cell = "[%rd8]"
  reg = f if op.startswith('add.f') else r
  body += f"atom.{space}.{op} {reg}4, {cell}, {src}{cas};\nst.global.b{w} [%rd5+{w // 8 * 128}], {reg}4;\n"
  if space == "shared": body += f"bar.sync 0;\n@%p1 ld.shared.b{w} {r}3, [%rd9];\n@%p1 st.global.b{w} [%rd8], {r}3;"
  if op.startswith("cas"): vals[48:] = init[np.arange(48, 64) % 7]   # the compares of the first lanes of a cell there succeed
  outs = []
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    cells, data = init.copy(), np.concatenate([vals, np.roll(vals, 5), np.zeros(64, vals.dtype)])
    st = run(kernel(body, ".param .u64 out, .param .u64 in0"), [cells, data], block=(64, 1, 1))
    assert st.native == (path == "native"), dict(native.declined)
    outs.append((cells, data[128:]))
  for got, want in zip(outs[1], outs[0]): np.testing.assert_array_equal(got, want)
  assert len(np.unique(outs[0][1])) > 7   # old values differ: the lanes saw each other's updates

def test_misaligned_atomic_faults_on_both_paths(monkeypatch):
  out = np.zeros(4, np.uint32)
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    with pytest.raises(GPUPageFault, match=r"misaligned atomic") as e:
      run(kernel("ld.param.u64 %rd1, [out];\natom.global.add.u32 %r1, [%rd1+2], 1;", ".param .u64 out"), [out])
    assert e.value.va == out.ctypes.data + 2

GENERIC = """
.shared .align 8 .b8 sm[256];
.local .align 8 .b8 depot[64];
mov.u32 %r0, %tid.x;
mul.wide.u32 %rd1, %r0, 8;
mov.u64 %rd2, sm;
cvta.shared.u64 %rd2, %rd2;
add.s64 %rd3, %rd2, %rd1;
mov.u64 %rd4, depot;
cvta.local.u64 %rd4, %rd4;
mov.u64 %rd5, gtab;
cvta.global.u64 %rd5, %rd5;
cvt.u64.u32 %rd6, %r0;
st.u64 [%rd3], %rd6;
st.v2.u32 [%rd4+8], {%r0, %r0};
bar.sync 0;
xor.b32 %r1, %r0, 7;
mul.wide.u32 %rd7, %r1, 8;
add.s64 %rd8, %rd2, %rd7;
ld.u64 %rd9, [%rd8];
ld.v2.u32 {%r2, %r3}, [%rd4+8];
and.b32 %r4, %r0, 3;
mul.wide.u32 %rd10, %r4, 4;
add.s64 %rd10, %rd5, %rd10;
ld.u32 %r5, [%rd10];
cvt.u32.u64 %r6, %rd9;
add.u32 %r6, %r6, %r2;
add.u32 %r6, %r6, %r3;
add.u32 %r6, %r6, %r5;
ld.param.u64 %rd11, [out];
mul.wide.u32 %rd12, %r0, 4;
add.s64 %rd11, %rd11, %rd12;
st.u32 [%rd11], %r6;
EXTRA"""

@pytest.mark.parametrize("extra, error", [("", None), ("st.u32 [%rd2+256], %r0;", "shared window of 256 bytes"),
                                          ("ld.u32 %r7, [%rd4+64];\nst.u32 [%rd11], %r7;", "local window of 64 bytes"),
                                          ("st.u32 [%rd5+16], %r0;", "module .global variables, 16 bytes")])
def test_generic_addresses_same_bits_and_faults(extra, error, monkeypatch):
  """Generic loads and stores through the shared, local and module-variable windows and global memory, on both paths;
  an access past a window faults naming it on both."""
  src = kernel(GENERIC.replace("EXTRA", extra), ".param .u64 out", prelude=".global .align 4 .u32 gtab[4] = {1, 2, 3, 4};\n")
  outs = []
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    out = np.zeros(32, np.uint32)
    if error is None:
      assert run(src, [out]).native == (path == "native")
      outs.append(out)
    else:
      with pytest.raises(GPUPageFault, match=error) as e: run(src, [out])
      assert native.refusal(load_module(src).kernel("k")) is None   # the C path ran it (and faulted)
      outs.append(str(e.value))
  if error is not None: assert outs[0] == outs[1]
  else:
    np.testing.assert_array_equal(outs[1], outs[0])
    t = np.arange(32)
    np.testing.assert_array_equal(outs[0], (t ^ 7) + 2 * t + (t % 4) + 1)

# *** instructions that combine threads: the C backend's warp mode ***

# (shape, d, a/b, c types): every mma.sync form both paths model
MMA_FORMS = [("m16n8k16", "f32", "f16", "f32"), ("m16n8k16", "f32", "bf16", "f32"), ("m16n8k16", "f16", "f16", "f16"),
             ("m16n8k16", "f16", "f16", "f32"), ("m16n8k16", "f32", "f16", "f16"), ("m16n8k8", "f32", "f16", "f32"),
             ("m16n8k8", "f32", "bf16", "f32"), ("m16n8k8", "f32", "tf32", "f32"), ("m16n8k8", "f16", "f16", "f16")]

def _mma_kernel(shape:str, td:str, tab:str, tc:str) -> tuple[str, int, int, int, int]:
  """A warp loads its fragment registers (raw b32 words, lane-major) from in0, runs the mma and stores D's registers."""
  k = int(shape[6:])
  per = 1 if tab == "tf32" else 2
  na, nb, nc, nd = k // 2 // per, k // 4 // per, 4 if tc == "f32" else 2, 4 if td == "f32" else 2
  n = na + nb + nc
  regs = lambda base, m: "{" + ", ".join(f"%r{base + i}" for i in range(m)) + "}"
  body = ["mov.u32 %r0, %tid.x;", "ld.param.u64 %rd1, [in0];", "ld.param.u64 %rd2, [out];", f"mul.wide.u32 %rd3, %r0, {4 * n};",
          "add.s64 %rd1, %rd1, %rd3;", f"mul.wide.u32 %rd3, %r0, {4 * nd};", "add.s64 %rd2, %rd2, %rd3;"]
  body += [f"ld.global.b32 %r{1 + i}, [%rd1+{4 * i}];" for i in range(n)]
  body += [f"mma.sync.aligned.{shape}.row.col.{td}.{tab}.{tab}.{tc} {regs(12, nd)}, {regs(1, na)}, {regs(1 + na, nb)}, {regs(1 + na + nb, nc)};"]
  body += [f"st.global.b32 [%rd2+{4 * i}], %r{12 + i};" for i in range(nd)]
  return kernel("\n".join(body), ".param .u64 out, .param .u64 in0"), n, nd, na, nb

def _mma_words(tab:str, tc:str, n:int, na:int, nb:int, seed:int) -> np.ndarray:
  """Fragment words of normal values with specials mixed in: signed zeros, subnormals, the largest finite values (f16
  results overflow), infinities in A (inf * 0 and inf - inf make NaNs). No NaN operand: which of two NaN payloads a
  sum keeps is numpy's loop's choice (see test_float_binary_specials)."""
  r = np.random.default_rng(seed)
  def elems(t:str, shape) -> np.ndarray:
    if t == "f16": v, sp = r.standard_normal(shape).astype(np.float16).view(np.uint16), [0, 0x8000, 1, 0x83ff, 0x7bff, 0xfbff]
    elif t == "bf16": v, sp = (r.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16), [0, 0x8000, 1, 0x807f, 0x7f7f]
    else: v, sp = (r.standard_normal(shape).astype(np.float32) * 8).view(np.uint32), [0, 0x80000000, 1, 0x807fffff, 0x7f7fffff, 0x3f801fff]
    v = v.copy()
    pick = r.random(shape) < 0.15
    v[pick] = r.choice(np.array(sp, v.dtype), int(pick.sum()))
    return v
  def words(t:str, m:int, inf:bool=False) -> np.ndarray:
    per = 2 if t in ("f16", "bf16") else 1
    e = elems(t, (32, m * per))
    if inf: e[r.random(e.shape) < 0.03] = {"f16": 0x7c00, "bf16": 0x7f80}.get(t, 0xff800000)
    return e.view(np.uint32) if per == 2 else e
  return np.concatenate([words(tab, na, True), words(tab, nb), words(tc, n - na - nb)], axis=1)

@pytest.mark.parametrize("form", MMA_FORMS, ids=lambda f: ".".join(f))
def test_mma_same_bits_on_both_paths(form, monkeypatch):
  """mma.sync in C (prelude.c warp_mma) and numpy (collective.mma): the same fragment layouts and the same float64 sum
  order (fragments.multiply), so every bit of D agrees, NaNs made by inf*0 and overflowing f16 results included."""
  src, n, nd, na, nb = _mma_kernel(*form)
  outs = {}
  for seed in range(3):
    x = _mma_words(form[2], form[3], n, na, nb, seed)
    for path in ("numpy", "native"):
      _path(monkeypatch, path)
      out = np.zeros((32, nd), np.uint32)
      assert run(src, [out, x], block=(32, 1, 1)).native == (path == "native"), dict(native.declined)
      outs[path] = out
    np.testing.assert_array_equal(outs["native"], outs["numpy"], err_msg=f"seed {seed}")   # EXACT
    assert outs["numpy"].any()

def test_mma_in_a_partial_warp_is_refused_alike(monkeypatch):
  src = _mma_kernel("m16n8k8", "f32", "tf32", "f32")[0]
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    out, x = np.zeros(48 * 4, np.uint32), np.zeros(48 * 10, np.uint32)   # 4 D and 10 fragment registers a thread
    before = native_launches()
    with pytest.raises(UnsupportedInstruction, match=r"^PTX line \d+: mma\.sync\.aligned\.m16n8k8.*: mma\.sync in a partial warp$"):
      run(src, [out, x], block=(48, 1, 1))
    assert (native_launches() > before) == (path == "native")

def native_launches() -> int:
  from mockgpu import system
  return system.stats["ptx.native_launches"]

NAMED_BARRIERS = kernel("""
mov.u32 %r0, %tid.x;
ld.param.u64 %rd4, [out];
mul.wide.u32 %rd0, %r0, 4;
add.s64 %rd9, %rd4, %rd0;
shl.b32 %r2, %r0, 2;
mov.u32 %r1, buf;
add.u32 %r3, %r1, %r2;
st.shared.u32 [%r3], %r0;
setp.lt.u32 %p1, %r0, 32;
@%p1 bra ARRIVE;
bar.sync 1, 64;
xor.b32 %r6, %r0, 1;
shl.b32 %r6, %r6, 2;
add.u32 %r6, %r1, %r6;
ld.shared.u32 %r4, [%r6];
bra DONE;
ARRIVE:
bar.arrive 1, 64;
mov.u32 %r4, 7;
DONE:
add.cc.u32 %r7, %r4, -1;
addc.u32 %r4, %r4, 0;
st.global.u32 [%rd9], %r4;
""", regs=".shared .align 4 .b32 buf[64];\n")

def test_named_barriers_and_a_carry_run_in_warp_mode_as_on_numpy(monkeypatch):
  """bar.sync/bar.arrive with a barrier name and count, and a carry flag in a kernel with barriers: forms the
  thread-at-a-time translation declines; warp mode orders them as the numpy path's min-PC scheduling does."""
  outs = {}
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    out = np.zeros(64, np.uint32)
    assert run(NAMED_BARRIERS, [out], block=(64, 1, 1)).native == (path == "native"), dict(native.declined)
    outs[path] = out
  np.testing.assert_array_equal(outs["native"], outs["numpy"])
  t = np.arange(64)
  np.testing.assert_array_equal(outs["numpy"], np.where(t < 32, 8, (t ^ 1) + ((t ^ 1) != 0)))

def test_budget_stops_an_endless_loop_in_warp_mode(monkeypatch):
  _path(monkeypatch, "native")
  monkeypatch.setenv("MOCKGPU_BUDGET", "100000")
  src = kernel("LOOP:\nshfl.sync.bfly.b32 %r1, %r1, 1, 31, -1;\nadd.u32 %r1, %r1, 1;\nbra LOOP;")
  before = native_launches()
  with pytest.raises(InstructionBudgetExceeded, match="ran past 100000 warp-instructions"): run(src, [])
  assert native_launches() > before

def test_mma_sums_in_k_order_on_both_paths(monkeypatch):
  """D[0,0] = 65504*65504 + 65504*-65504 + 2^-24*1 + C: in float64 the big products cancel before the small one is
  added (k order, then C), so D[0,0] is 2^-24 + 2^-24; any other order loses a 2^-24 against 2^32 (fragments.multiply)."""
  from mockgpu.compiler.ptx import fragments
  src, n, nd, na, nb = _mma_kernel("m16n8k16", "f32", "f16", "f32")
  lay = fragments.layout("m16n8k16", "f16")
  A, B, C = np.zeros(16 * 16, np.float16), np.zeros(16 * 8, np.float16), np.zeros(16 * 8, np.float32)
  A[[0, 1, 2]], B[[0, 8, 16]], C[0] = [65504, 65504, 2.0 ** -24], [65504, -65504, 1], 2.0 ** -24   # A[0, 0:3], B[0:3, 0]
  x = np.concatenate([A[lay["a"]].reshape(32, 8).view(np.uint32), B[lay["b"]].reshape(32, 4).view(np.uint32),
                      C[lay["c"]].reshape(32, 4).view(np.uint32)], axis=1)
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    out = np.zeros((32, nd), np.uint32)
    assert run(src, [out, np.ascontiguousarray(x)], block=(32, 1, 1)).native == (path == "native")
    D = np.zeros(16 * 8, np.float32)
    D[lay["c"]] = out.view(np.float32).reshape(-1)
    assert D[0] == np.float32(2.0 ** -23) and not D[1:].any(), path

def test_shfl_of_a_special_register_reads_the_source_lanes(monkeypatch):
  """shfl's value operand is gathered in each lane's own context: %tid.x of the lane shfl.idx selects."""
  lanes = I32_SPECIALS[:32]
  want, got = both_paths(monkeypatch, "shfl.sync.idx.b32 %r4, %tid.x, %r1, 31, -1;\nadd.u32 %r4, %r4, 100;", lanes, lanes, lanes)
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(want, (lanes & 31) + 100)
