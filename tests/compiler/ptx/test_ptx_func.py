"""PTX device functions: `.func` with return values and parameters, `call` through the .param space (as NVRTC emits
them for libdevice's helpers, e.g. __internal_trig_reduction_slowpathd), on the numpy and the native path; and the
calls the mock does not model (recursion, indirect, .extern) or that are invalid PTX."""
import numpy as np
import pytest
from mockgpu.errors import UnsupportedInstruction
from support.ptx_isa import HEAD, run
# the tests that launch take the ptx_path fixture (numpy and native); the rejected calls raise in load_module, before
# either path is chosen, so they are not run per path

# f(a, b) = a < 0 ? -1 (an early ret, diverging inside the callee) : g(a) * 3 + b, with g(x) = x ^ 0x55 via a .local
# array (per-thread scratch of the callee); two return values (a 16-byte .b8 array, as NVRTC declares them)
FUNCS = """
.func (.param .b32 g_ret) g(.param .b32 g_x)
{
  .local .align 4 .b8 depot[8];
  .reg .b32 %t<4>;
  .reg .b64 %sp;
  mov.u64 %sp, depot;
  ld.param.b32 %t0, [g_x];
  st.local.u32 [%sp+4], %t0;
  ld.local.u32 %t1, [%sp+4];
  xor.b32 %t2, %t1, 85;
  st.param.b32 [g_ret], %t2;
  ret;
}
.func (.param .align 8 .b8 f_ret[16]) f(.param .b32 f_a, .param .b64 f_b)
{
  .reg .pred %q;
  .reg .b32 %a<4>;
  .reg .b64 %b<3>;
  ld.param.b32 %a0, [f_a];
  ld.param.b64 %b0, [f_b];
  setp.lt.s32 %q, %a0, 0;
  @%q bra NEG;
  {
  .param .b32 param0;
  st.param.b32 [param0+0], %a0;
  .param .b32 retval0;
  call.uni (retval0), g, (param0);
  ld.param.b32 %a1, [retval0+0];
  }
  mul.lo.s32 %a2, %a1, 3;
  cvt.s64.s32 %b1, %a2;
  add.s64 %b2, %b1, %b0;
  st.param.b64 [f_ret+0], %b2;
  st.param.b32 [f_ret+8], %a1;
  ret;
NEG:
  st.param.b64 [f_ret+0], -1;
  st.param.b32 [f_ret+8], 7;
  ret;
}
"""

ENTRY = """
.visible .entry k(.param .u64 out, .param .u64 in0, .param .u64 in1)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd0, %r0, 4;
  mul.wide.u32 %rd10, %r0, 8;
  ld.param.u64 %rd1, [in0];
  ld.param.u64 %rd2, [in1];
  ld.param.u64 %rd3, [out];
  add.s64 %rd4, %rd1, %rd0;
  add.s64 %rd5, %rd2, %rd10;
  add.s64 %rd6, %rd3, %rd10;
  ld.global.b32 %r1, [%rd4];
  ld.global.b64 %rd7, [%rd5];
  { // callseq 0, 0
  .reg .b32 temp_param_reg;
  .param .b32 param0;
  st.param.b32 [param0+0], %r1;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd7;
  .param .align 8 .b8 retval0[16];
  call.uni (retval0),
  f,
  (
  param0,
  param1
  );
  ld.param.b64 %rd8, [retval0+0];
  ld.param.b32 %r2, [retval0+8];
  } // callseq 0
  // a second, guarded call of the same function (only odd lanes): its own registers and scratch
  and.b32 %r3, %r0, 1;
  setp.eq.u32 %p0, %r3, 1;
  mov.u32 %r4, 0;
  {
  .param .b32 param0;
  st.param.b32 [param0+0], %r0;
  .param .b64 param1;
  st.param.b64 [param1+0], 1000;
  .param .align 8 .b8 retval0[16];
  @%p0 call.uni (retval0), f, (param0, param1);
  @%p0 ld.param.b32 %r4, [retval0+8];
  }
  add.s64 %rd9, %rd8, 0;
  st.global.b64 [%rd6], %rd9;
  add.s64 %rd11, %rd6, 256;
  cvt.u64.u32 %rd12, %r2;
  cvt.u64.u32 %rd13, %r4;
  shl.b64 %rd13, %rd13, 32;
  or.b64 %rd12, %rd12, %rd13;
  st.global.b64 [%rd11], %rd12;
  ret;
}
"""

def reference(a:np.ndarray, b:np.ndarray):
  g = a ^ 0x55
  first = np.where(a < 0, -1, (g.astype(np.int64) * 3).astype(np.int32).astype(np.int64) + b)
  lo = np.where(a < 0, 7, g).astype(np.uint32)
  lane = np.arange(32, dtype=np.int32)
  hi = np.where(lane & 1, lane ^ 0x55, 0).astype(np.uint32)
  return first, lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))

def test_func_with_return_values_and_params(ptx_path):
  rng = np.random.default_rng(3)
  a = rng.integers(-1000, 1000, 32).astype(np.int32)
  b = rng.integers(-2**40, 2**40, 32).astype(np.int64)
  out = np.zeros(64, np.int64)
  st = run(HEAD + FUNCS + ENTRY, [out, a, b])
  first, packed = reference(a, b)
  np.testing.assert_array_equal(out[:32], first)
  np.testing.assert_array_equal(out[32:].view(np.uint64), packed)
  assert st.native == (ptx_path == "native")

def test_register_arguments(ptx_path):
  """The older form: registers and constants as arguments and a register for the return value."""
  src = HEAD + """
.func (.param .b32 r) add3(.param .b32 x, .param .b32 y)
{
  .reg .b32 %v<3>;
  ld.param.b32 %v0, [x];
  ld.param.b32 %v1, [y];
  add.s32 %v2, %v0, %v1;
  add.s32 %v2, %v2, 3;
  st.param.b32 [r], %v2;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  call (%r1), add3, (%r0, 100);
  ld.param.u64 %rd0, [out];
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.b32 [%rd2], %r1;
  ret;
}
"""
  out = np.zeros(32, np.int32)
  run(src, [out])
  np.testing.assert_array_equal(out, np.arange(32) + 103)

CALLER = """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  {
  .param .b32 param0;
  st.param.b32 [param0], 1;
  .param .b32 retval0;
  call.uni (retval0), CALLEE, (param0);
  ld.param.b32 %r1, [retval0];
  }
  ret;
}
"""

def test_recursion_is_a_gap_of_the_mock():
  src = HEAD + """
.func (.param .b32 r) rec(.param .b32 x)
{
  .reg .b32 %v<2>;
  ld.param.b32 %v0, [x];
  {
  .param .b32 param0;
  st.param.b32 [param0], %v0;
  .param .b32 retval0;
  call.uni (retval0), rec, (param0);
  ld.param.b32 %v1, [retval0];
  }
  st.param.b32 [r], %v1;
  ret;
}
""" + CALLER.replace("CALLEE", "rec")
  with pytest.raises(UnsupportedInstruction, match=r"PTX line \d+: recursion \(rec -> rec\) is not supported"):
    run(src, [np.zeros(1, np.int32)], block=(1, 1, 1))

def test_extern_function_is_a_gap_of_the_mock():
  src = HEAD + ".extern .func (.param .b32 r) ext(.param .b32 x);\n" + CALLER.replace("CALLEE", "ext")
  with pytest.raises(UnsupportedInstruction, match=r"a call of ext, which has no body in this module"):
    run(src, [np.zeros(1, np.int32)], block=(1, 1, 1))

def test_wrong_argument_count_is_rejected():
  src = HEAD + ".func (.param .b32 r) two(.param .b32 x, .param .b32 y)\n{\nst.param.b32 [r], 0;\nret;\n}\n" + CALLER.replace("CALLEE", "two")
  with pytest.raises(UnsupportedInstruction, match=r"call of two with 1 return and 1 argument operands, which is declared with 1 and 2"):
    run(src, [np.zeros(1, np.int32)], block=(1, 1, 1))
