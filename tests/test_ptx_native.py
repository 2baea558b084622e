"""The PTX executor's two paths, numpy (every thread at once) and native (hot kernels translated to C, one thread at a
time), give the same bits: on real tinygrad kernels of both renderers, and on single instructions over special
values. The hand-written suites (test_ptx_isa/kernels/numerics/errors/approx) also run on both paths (conftest's
ptx_path fixture). Here: what only the native path has (its tiering, its declining, its scheduling around barriers)."""
from __future__ import annotations
import itertools
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded
from mockgpu.compiler.native import HOT_DISPATCHES
from mockgpu.emulators.ptx import native
from test_ptx_harness import run as run_tiny
from test_ptx_isa import HEAD, kernel, run, LOAD3

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
               "cvt.rzi.ftz.s32.f32 %r4, %f1;", "cvt.rni.s64.f32 %rd1, %f1;\ncvt.u32.u64 %r4, %rd1;", "cvt.rzi.u16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;",
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
  body = f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nsetp.{cmp}.f32 %p1|%p2, %f1, %f2;\nselp.u32 %r4, 1, 0, %p1;\nselp.u32 %r5, 2, 0, %p2;\nor.b32 %r4, %r4, %r5;"
  want, got = both_paths(monkeypatch, body, a, b, b)
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

def test_hot_kernels_only_in_auto_mode(monkeypatch):
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "auto")
  src = ADD_ONE.replace(".entry k(", ".entry k_hot(")   # a kernel no other test has launched
  x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
  paths = [run(src, [out, x, x, x], name="k_hot").native for _ in range(HOT_DISPATCHES + 1)]
  assert paths == [False] * (HOT_DISPATCHES - 1) + [True, True]
  np.testing.assert_array_equal(out, x + 1)

def test_mode_zero_never_translates(monkeypatch):
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
  x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
  assert not any(run(ADD_ONE, [out, x, x, x]).native for _ in range(4))

def test_uncovered_kernel_is_declined_and_runs_on_numpy(monkeypatch):
  _path(monkeypatch, "native")
  src = kernel(LOAD3 + "mov.b32 %f1, %r1;\ntestp.normal.f32 %p1, %f1;\nselp.u32 %r4, 1, 0, %p1;\nst.global.b32 [%rd9], %r4;")
  x, out = F32_SPECIALS[:32].copy(), np.zeros(32, np.uint32)
  x.resize(32)
  before = native.declined["instruction testp"]
  assert not run(src, [out, x, x, x]).native
  assert native.declined["instruction testp"] == before + 1
  f = x.view(np.float32)
  np.testing.assert_array_equal(out, (np.isfinite(f) & (np.abs(f) >= np.finfo(np.float32).tiny)).astype(np.uint32))

BARRIER = kernel("""
mov.u32 %r0, %tid.x;
ld.param.u64 %rd4, [out];
mul.wide.u32 %rd0, %r0, 4;
add.s64 %rd9, %rd4, %rd0;
mov.u32 %r1, buf;
shl.b32 %r2, %r0, 2;
add.u32 %r3, %r1, %r2;
setp.ge.u32 %p1, %r0, 48;
@%p1 bra DONE;
mul.lo.u32 %r5, %r0, %r0;
st.shared.u32 [%r3], %r5;
bar.sync 0;
sub.u32 %r6, 47, %r0;
shl.b32 %r6, %r6, 2;
add.u32 %r6, %r1, %r6;
ld.shared.u32 %r4, [%r6];
add.u32 %r4, %r4, %r5;
st.global.u32 [%rd9], %r4;
DONE:
""", regs=".shared .align 4 .b32 buf[64];\n")

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
