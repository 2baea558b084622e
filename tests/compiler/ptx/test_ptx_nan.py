"""Generated NaNs on every PTX path and every host: NVIDIA returns the canonical NaN (f32 0x7fffffff; f16 and bf16
0x7fff; f64 0x7fffffffffffffff, inferred) for a NaN result of float arithmetic, conversions and the .approx functions,
whatever the operands' payloads. One kernel runs every case over a grid of special operands on the stepper, the numpy
path and the C path; the bits must agree and every NaN be canonical. A child process runs it again with numpy's SIMD
dispatch limited to the baseline (NPY_DISABLE_CPU_FEATURES: every dispatched target, AVX-512 and AVX2 on x86), where
numpy's loops return other NaNs (np.log2 of a negative float64 flips the sign on an AVX-512 host), and must give the
same bits."""
import os
import numpy as np
import pytest
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, launch, Launch, run_stepped
from support.ptx_isa import HEAD
from support.numpy_simd import run_limited

F32_PRE = "mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nmov.b32 %f4, %r3;\n"
F32_POST = "\nmov.b32 %r4, %f3;\ncvt.u64.u32 %rd10, %r4;"
X2_POST = "\ncvt.u64.u32 %rd10, %r4;"
F64_PRE = "mov.b64 %fd1, {%r1, %r2};\nmov.b64 %fd2, {%r2, %r3};\nmov.b64 %fd4, {%r3, %r1};\n"
F64_POST = "\nmov.b64 %rd10, %fd3;"
# (kind of the result: f32, f16x2, bf16x2, f64; the instruction)
CASES = [("f32", op) for op in (
  "add.f32 %f3, %f1, %f2", "sub.rz.f32 %f3, %f1, %f2", "mul.rm.f32 %f3, %f1, %f2", "mul.ftz.f32 %f3, %f1, %f2",
  "fma.rn.f32 %f3, %f1, %f2, %f4", "fma.rp.f32 %f3, %f1, %f2, %f4", "div.rn.f32 %f3, %f1, %f2",
  "div.approx.f32 %f3, %f1, %f2", "div.rz.f32 %f3, %f1, %f2", "sqrt.rn.f32 %f3, %f1", "sqrt.approx.f32 %f3, %f1",
  "rcp.rn.f32 %f3, %f1", "rcp.approx.f32 %f3, %f1", "rsqrt.approx.f32 %f3, %f1", "lg2.approx.f32 %f3, %f1",
  "lg2.approx.ftz.f32 %f3, %f1", "ex2.approx.f32 %f3, %f1", "sin.approx.f32 %f3, %f1", "cos.approx.f32 %f3, %f1",
  "tanh.approx.f32 %f3, %f1", "min.f32 %f3, %f1, %f2", "max.f32 %f3, %f1, %f2", "max.NaN.f32 %f3, %f1, %f2",
  "cvt.rni.f32.f32 %f3, %f1", "cvt.rzi.f32.f32 %f3, %f1")] + [
  ("f32", "mov.b32 {%h1, %h2}, %r1;\ncvt.f32.f16 %f3, %h1"), ("f32", "cvt.rn.f32.f64 %f3, %fd1"),
  ("f16x2", "add.rn.f16x2 %r4, %r1, %r2"), ("f16x2", "mul.rn.f16x2 %r4, %r1, %r2"), ("f16x2", "fma.rn.f16x2 %r4, %r1, %r2, %r3"),
  ("f16x2", "ex2.approx.f16x2 %r4, %r1"), ("f16x2", "min.f16x2 %r4, %r1, %r2"), ("f16x2", "cvt.rn.f16x2.f32 %r4, %f1, %f2"),
  ("f16x2", "mov.b32 {%h1, %h2}, %r1;\nmov.b32 {%h3, %h4}, %r2;\nadd.f16 %h5, %h1, %h3;\nsub.f16 %h6, %h2, %h4;\nmov.b32 %r4, {%h5, %h6}"),
  ("bf16x2", "fma.rn.bf16x2 %r4, %r1, %r2, %r3"), ("bf16x2", "cvt.rn.bf16x2.f32 %r4, %f1, %f2"),
  ("f64", "add.f64 %fd3, %fd1, %fd2"), ("f64", "mul.rz.f64 %fd3, %fd1, %fd2"), ("f64", "fma.rn.f64 %fd3, %fd1, %fd2, %fd4"),
  ("f64", "div.rn.f64 %fd3, %fd1, %fd2"), ("f64", "sqrt.rn.f64 %fd3, %fd1"), ("f64", "cvt.f64.f32 %fd3, %f1"),
  ("f64", "rcp.approx.ftz.f64 %fd3, %fd1"), ("f64", "min.f64 %fd3, %fd1, %fd2")]
CANON = {"f32": 0x7fffffff, "f16x2": 0x7fff, "bf16x2": 0x7fff, "f64": 0x7fffffffffffffff}

# float32 words: both signs of 0, 1, a negative, inf, quiet and signalling NaNs with payloads, a subnormal, and words
# whose halves are float16/bfloat16 NaNs and infinities; as the high word of a float64 (a, b: {a, b}): its NaNs and infinities
WORDS = [0x00000000, 0x80000000, 0x3f800000, 0xc0200000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001,
         0x7fc12345, 0xffbfffff, 0x00000010, 0x7e01fc00, 0xfc007c00, 0x7f817f80, 0xbc00fe00, 0x7ff80001, 0xfff00000, 0x7ff00000]
N = len(WORDS) ** 2   # every pair of words (a, b); c is b of the lane a row further

def kernel_source() -> str:
  body = ["mov.u32 %r0, %tid.x;", "mul.wide.u32 %rd0, %r0, 4;", "mul.wide.u32 %rd8, %r0, 8;",
          "ld.param.u64 %rd1, [a];", "ld.param.u64 %rd2, [b];", "ld.param.u64 %rd3, [c];", "ld.param.u64 %rd4, [out];",
          "add.s64 %rd5, %rd1, %rd0;", "add.s64 %rd6, %rd2, %rd0;", "add.s64 %rd7, %rd3, %rd0;", "add.s64 %rd9, %rd4, %rd8;",
          "ld.global.b32 %r1, [%rd5];", "ld.global.b32 %r2, [%rd6];", "ld.global.b32 %r3, [%rd7];"]
  for i, (kind, op) in enumerate(CASES):
    pre, post = (F64_PRE, F64_POST) if kind == "f64" else (F32_PRE + F64_PRE, F32_POST if kind == "f32" else X2_POST)
    body += [pre + op + ";" + post, f"st.global.b64 [%rd9+{i * N * 8}], %rd10;"]
  regs = ".reg .b16 %h<8>;\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<12>;\n.reg .f64 %fd<8>;\n"
  return HEAD + ".visible .entry k(.param .u64 out, .param .u64 a, .param .u64 b, .param .u64 c)\n{\n" + regs + \
    "\n".join(body) + "\nret;\n}\n"

def inputs() -> list[np.ndarray]:
  w = np.array(WORDS, np.uint32)
  a, b = np.repeat(w, len(w)), np.tile(w, len(w))
  return [np.zeros(len(CASES) * N, np.uint64), a, b, np.roll(b, len(w))]

def run_paths() -> dict[str, list[int]]:
  """The output words of every case on the stepper, numpy and C (C asserted to run), by path."""
  src, outs, saved = kernel_source(), {}, os.environ.get("MOCKGPU_PTX_NATIVE")
  try:
    for path in ("stepper", "numpy", "C"):
      arrays = inputs()
      mem = AddressSpace("nan")
      for x in arrays: mem.map(x.ctypes.data, x.nbytes)
      k = load_module(src).kernel("k")
      params = b"".join(int(x.ctypes.data).to_bytes(8, "little") for x in arrays)
      os.environ["MOCKGPU_PTX_NATIVE"] = "1" if path == "C" else "0"
      if path == "stepper": run_stepped(Launch(mem, k, (1, 1, 1), (N, 1, 1), params))
      else: assert launch(mem, k, (1, 1, 1), (N, 1, 1), params).native == (path == "C"), path
      outs[path] = [int(v) for v in arrays[0]]
  finally:
    if saved is None: os.environ.pop("MOCKGPU_PTX_NATIVE", None)
    else: os.environ["MOCKGPU_PTX_NATIVE"] = saved
  return outs

def nan_fields(kind:str, v:int) -> list[int]:
  """The fields of result word v that are NaNs (as their bits)."""
  if kind == "f32": return [v] if (v & 0x7fffffff) > 0x7f800000 else []
  if kind == "f64": return [v] if (v & 0x7fffffffffffffff) > 0x7ff0000000000000 else []
  inf = 0x7c00 if kind == "f16x2" else 0x7f80
  return [h for h in (v & 0xffff, v >> 16 & 0xffff) if (h & 0x7fff) > inf]

def check_canonical(outs:list[int]):
  for i, (kind, op) in enumerate(CASES):
    nans = [h for v in outs[i * N:(i + 1) * N] for h in nan_fields(kind, v)]
    assert nans, f"{op}: no lane made a NaN (the case tests nothing)"
    assert set(nans) == {CANON[kind]}, f"{op}: NaNs {sorted({hex(h) for h in nans})}, want {CANON[kind]:#x}"

@pytest.fixture(scope="module")
def outs(): return run_paths()

def test_paths_agree_bit_for_bit(outs):
  for path in ("numpy", "C"):
    bad = [(CASES[i // N][1], hex(x), hex(y)) for i, (x, y) in enumerate(zip(outs[path], outs["stepper"])) if x != y]
    assert bad == [], f"{path} against the stepper: {bad[:8]}"

def test_every_nan_is_canonical(outs):
  for path in outs: check_canonical(outs[path])

def test_same_bits_with_numpy_simd_limited(outs):
  """The child disables every SIMD target numpy dispatches to (the baseline's loops run) and must give the same bits."""
  assert run_limited(__file__, "run_paths") == outs
