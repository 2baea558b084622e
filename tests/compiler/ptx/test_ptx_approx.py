"""The approximate PTX instructions stay within the error bounds documented in mockgpu/compiler/ptx/backends/numerics.py
(each within 1 ulp of the exact function, inside the hardware's own bound), measured against float64 numpy."""
import numpy as np
import pytest
from support.ptx_isa import kernel, run
pytestmark = pytest.mark.usefixtures("ptx_path")  # every test on the numpy and the native path

def ulp_error(got:np.ndarray, exact:np.ndarray, dtype) -> np.ndarray:
  """|got - exact| in units of the target format's ulp at the exact value."""
  ulp = np.spacing(np.abs(exact).astype(dtype)).astype(np.float64)
  return np.abs(got.astype(np.float64) - exact) / ulp

def run_unary(instr:str, x:np.ndarray, width:int=32) -> np.ndarray:
  n = len(x)
  out = np.zeros(n, x.dtype)
  reg, ld = ("%f", "f32") if width == 32 else ("%h", "b16")
  body = f"""
mov.u32 %r0, %tid.x;
mov.u32 %r1, %ctaid.x;
mad.lo.u32 %r0, %r1, 256, %r0;
mul.wide.u32 %rd0, %r0, {width // 8};
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd2, [out];
add.s64 %rd3, %rd1, %rd0;
add.s64 %rd4, %rd2, %rd0;
ld.global.{ld} {reg}1, [%rd3];
{instr} {reg}2, {reg}1;
st.global.{ld} [%rd4], {reg}2;"""
  run(kernel(body, ".param .u64 out, .param .u64 in0"), [out, x], grid=(n // 256, 1, 1), block=(256, 1, 1))
  return out

X = np.linspace(-20, 20, 8192).astype(np.float32)
CASES = [("ex2.approx.f32", np.exp2, X), ("ex2.approx.ftz.f32", np.exp2, X), ("lg2.approx.f32", np.log2, np.abs(X) + 1e-3),
         ("sin.approx.f32", np.sin, X), ("cos.approx.f32", np.cos, X), ("tanh.approx.f32", np.tanh, X / 4),
         ("rcp.approx.f32", lambda v: 1 / v, X + 0.001), ("sqrt.approx.f32", np.sqrt, np.abs(X)),
         ("rsqrt.approx.f32", lambda v: 1 / np.sqrt(v), np.abs(X) + 1e-3)]

@pytest.mark.parametrize("instr,fn,x", CASES, ids=[c[0] for c in CASES])
def test_f32_within_one_ulp(instr, fn, x):
  got = run_unary(instr, x)
  err = ulp_error(got, fn(x.astype(np.float64)), np.float32)
  assert err.max() <= 1.0, f"{instr}: max error {err.max():.3f} ulp"

@pytest.mark.parametrize("instr,fn", [("ex2.approx.f16", np.exp2), ("tanh.approx.f16", np.tanh)])
def test_f16_within_one_ulp(instr, fn):
  x = np.linspace(-8, 8, 4096).astype(np.float16)
  got = run_unary(instr, x, width=16)
  err = ulp_error(got, fn(x.astype(np.float64)), np.float16)
  assert err.max() <= 1.0, f"{instr}: max error {err.max():.3f} ulp"

def test_sin_hardware_bound_in_range():
  """The PTX ISA bounds sin.approx.f32's absolute error by 2^-20.9 on [-pi, pi]; ours is far inside it."""
  x = np.linspace(-np.pi, np.pi, 4096).astype(np.float32)
  got = run_unary("sin.approx.f32", x)
  assert np.abs(got.astype(np.float64) - np.sin(x.astype(np.float64))).max() < 2 ** -20.9
