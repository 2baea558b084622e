"""float64 math on the PTX executor.

NVRTC (DEV=MOCK+NV / MOCK+CUDA): tinygrad's CUDA C calls sin/exp2/log2/sqrt, which NVRTC compiles from libdevice;
__nv_sin's argument reduction for large |x| is a .func with a return value (__internal_trig_reduction_slowpathd,
called through the .param space). Compared with tinygrad's DEV=CPU, whose float64 transcendentals are tinygrad's own
polynomials (codegen/decomp/transcendental.py), and with numpy (glibc) for the functions NVRTC calls directly.

tinygrad's PTX renderer (DEV=MOCK+NV:PTX) writes sin/ex2/lg2/sqrt/rcp .approx for float64 too: not valid PTX,
rejected by ptxas, so InvalidPTX (see mockgpu/compiler/ptx/validity.py).
"""
import numpy as np
import pytest
from support.ptx_harness import run
from tinygrad import Tensor
from support.ptx_isa import HEAD, run as run_ptx
from mockgpu.compiler.ptx.syntax import InvalidPTX
from mockgpu.errors import UnsupportedInstruction

def ulps(got, want, scale=np.abs):
  """|got - want| in units of the float64 spacing at scale(want) (plain ulps: |want|); equal NaNs and infinities are 0."""
  got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
  same = (got == want) | (np.isnan(got) & np.isnan(want))
  with np.errstate(all="ignore"): err = np.abs(got - want) / np.spacing(scale(want))
  return np.where(same, 0.0, np.nan_to_num(err, nan=np.inf))

rng = np.random.default_rng(11)
X = np.concatenate([rng.uniform(-10, 10, 60), [0.0, -0.0, 1e-300, 0.5]])
POS = np.concatenate([rng.uniform(1e-3, 100, 60), [1.0, 2.0, 1e-300, 1e300]])
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0])

ONE = lambda y: np.maximum(np.abs(y), 1.0)   # ulps of max(|y|, 1): an absolute error where |y| < 1
TAN = lambda y: 1.0 + y * y                  # tan(x + d) = tan(x) + d*(1 + tan(x)^2): an error of the argument, scaled
U = np.abs

# (tinygrad function, inputs, bound in ulps vs DEV=CPU, the scale the ulps are of, reason). Measured maxima on these
# inputs in brackets (both paths measure the same); the bounds leave about one more ulp of either side.
CASES = {
  "exp2": (lambda t: t.exp2(), X, 2, U, "libdevice exp2 (1 ulp, CUDA guide) vs tinygrad's polynomial (1 ulp) [1]"),
  "log2": (lambda t: t.log2(), POS, 3, U, "libdevice log2 (1 ulp) vs tinygrad's polynomial (1 ulp) [2]"),
  "sqrt": (lambda t: t.sqrt(), POS, 0, U, "sqrt.rn.f64 on both: correctly rounded [0]"),
  "exp": (lambda t: t.exp(), X, 2, U, "exp = exp2(x*log2(e)) on both: the same rounded argument, 1 ulp each [1]"),
  "log": (lambda t: t.log(), POS, 3, U, "log = log2(x)*ln(2) on both [2]"),
  "sin": (lambda t: t.sin(), X, 3, ONE, "libdevice sin (2 ulp) vs tinygrad's polynomial; in ulps of max(|y|, 1): near "
                                       "the zeros of sin the CPU polynomial's relative error grows (1690 ulp of y) [1.7]"),
  "cos": (lambda t: t.cos(), X, 3, ONE, "cos(x) = sin(pi/2 - x) on both devices: ulps of max(|y|, 1) [1.8; 18 ulp of y]"),
  "tan": (lambda t: t.tan(), X, 5, TAN, "sin(x)/cos(x) on both; near the poles the 1-2 ulp (of 1) errors of sin and cos "
                                       "grow as tan's condition 1 + tan^2: ulps of 1 + y^2 [3.5; 34 ulp of y at y = -15.4]"),
  "sigmoid": (lambda t: t.sigmoid(), X, 3, U, "exp2 and a reciprocal through tinygrad's formula [2]"),
  "tanh": (lambda t: t.tanh(), X, 5, U, "2*sigmoid(2x)-1: the subtraction near x = 0 magnifies sigmoid's 1 ulp [4]"),
  "sinh": (lambda t: t.sinh(), X, 3, U, "(exp(x) - exp(-x))/2 [2]"),
  "cosh": (lambda t: t.cosh(), X, 3, U, "(exp(x) + exp(-x))/2 [1]"),
  "asinh": (lambda t: t.asinh(), X, 3, U, "log(x + sqrt(x^2+1)) [2]"),
  "acosh": (lambda t: t.acosh(), POS + 1, 3, U, "log(x + sqrt(x^2-1)) [2]"),
  "atanh": (lambda t: t.atanh(), X / 10.5, 40, U, "log((1+x)/(1-x))/2: near 0 the log's 1-2 ulp of ~1 become many "
                                                  "ulps of the small result (cancellation in tinygrad's formula) [6; 31 on 256 inputs]"),
  "softplus": (lambda t: t.softplus(), X, 3, U, "log(1 + exp(x)) [2]"),
}

@pytest.mark.parametrize("name", CASES)
def test_nvrtc_float64_vs_cpu(name, ptx_path):
  pytest.importorskip("nvidia.cuda_nvrtc")
  fn, x, bound, scale, why = CASES[name]
  want = fn(Tensor(x).realize()).numpy()
  got = run(fn(Tensor(x).realize()), "cuda")
  err = ulps(got, want, scale)
  assert err.max() <= bound, f"{name}: {err.max()} ulps > {bound} ({why}) at x={x[err.argmax()]!r}: {got[err.argmax()]!r} vs {want[err.argmax()]!r}"

# large arguments take __nv_sin's Payne-Hanek reduction: the call of __internal_trig_reduction_slowpathd
BIG = np.array([1e5, -3e6, 123456789.0, 1e15, 1e22, -1e200, 1e300, 2.0**1000, 1.7e308])

@pytest.mark.parametrize("name, fn, x",
                         [("sin", np.sin, np.concatenate([X, BIG])), ("exp2", np.exp2, np.concatenate([X, SPECIAL, [1100.0, -1100.0]])),
                                         ("log2", np.log2, np.concatenate([POS, SPECIAL, [-1.0, 5e-324]])),
                                         ("sqrt", np.sqrt, np.concatenate([POS, SPECIAL, [-1.0, 5e-324]]))])
def test_nvrtc_float64_vs_glibc(name, fn, x, ptx_path):
  """The functions NVRTC takes from libdevice against glibc (numpy, < 1 ulp): libdevice's documented bounds, 2 ulp
  for sin (any argument), 1 for exp2/log2, 0 for sqrt; special values exactly (log2(0) = -inf, log2(inf) = inf ...).
  tinygrad's DEV=CPU polynomial is no reference for sin(1e22) (it returns 0.8646, the true value is -0.8522)."""
  pytest.importorskip("nvidia.cuda_nvrtc")
  stats:list = []
  got = run(getattr(Tensor(x), name)(), "cuda", stats)
  # libdevice's kernels (the inlined slowpath call, fma.rn.f64, the carry chains) are covered by the C translation
  assert all(st.native == (ptx_path == "native") for st in stats)
  with np.errstate(all="ignore"): want = fn(x)
  err = ulps(got, want)
  assert err.max() <= {"sin": 2, "exp2": 1, "log2": 1, "sqrt": 0}[name], (x[err.argmax()], got[err.argmax()], want[err.argmax()])

def test_nvrtc_cos_end_to_end_on_mock_nv():
  """The differential suite's case cos[float64[13, 17]] through DEV=MOCK+NV (NVRTC, the NV driver model) vs DEV=CPU."""
  pytest.importorskip("nvidia.cuda_nvrtc")
  from conftest import run_tinygrad
  r = run_tinygrad("MOCK+NV", """
    import numpy as np
    from tinygrad import Tensor
    x = np.random.default_rng(0).uniform(-20, 20, (13, 17))
    got, want = Tensor(x, device="NV").cos().numpy(), Tensor(x, device="CPU").cos().numpy()
    print("ERR", float((np.abs(got - want) / np.spacing(np.maximum(np.abs(want), 1.0))).max()))
  """, timeout=300)
  # ulps of max(|y|, 1) as in CASES["cos"]; over [-20, 20] the two sin implementations differ by up to 3.5 (the
  # CPU polynomial's argument reduction error grows with |x|)
  assert float(r.stdout.split("ERR")[1]) <= 5

# *** invalid float64 forms (tinygrad's PTX renderer) ***

F64 = """
.visible .entry k(.param .u64 out)
{
  .reg .f64 %fd<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [out];
  ld.global.f64 %fd0, [%rd0];
  INSTR;
  st.global.f64 [%rd0], %fd1;
  ret;
}
"""

@pytest.mark.parametrize("instr, ptxas", [("sin.approx.f64", "Unexpected instruction types specified for 'sin'"),
                                          ("cos.approx.f64", "Unexpected instruction types specified for 'cos'"),
                                          ("ex2.approx.f64", "Unexpected instruction types specified for 'ex2'"),
                                          ("ex2.approx.ftz.f64", "Unexpected instruction types specified for 'ex2'"),
                                          ("lg2.approx.f64", "Unexpected instruction types specified for 'lg2'"),
                                          ("tanh.approx.f64", "Unexpected instruction types specified for 'tanh'"),
                                          ("sqrt.approx.f64", "Illegal modifier '.approx' for instruction 'sqrt'"),
                                          ("rcp.approx.f64", "'.ftz' modifier required for instruction 'rcp.approx.f64'")])
def test_invalid_float64_approx_is_invalid_ptx(instr, ptxas):
  """ptxas 13.0 rejects each of these with the message quoted (checked); the mock raises InvalidPTX naming the
  instruction and its line, not 'not supported'. It raises when the module loads, before a launch picks a path."""
  with pytest.raises(InvalidPTX) as e: run_ptx(HEAD + F64.replace("INSTR", f"{instr} %fd1, %fd0"), [np.ones(1)], block=(1, 1, 1))
  msg = str(e.value)
  assert msg.startswith(f"PTX line 11: {instr} %fd1, %fd0: not valid PTX, ptxas rejects it:") and ptxas in msg and "PTX ISA" in msg
  assert isinstance(e.value, UnsupportedInstruction)   # callers catching the mock's PTX errors still catch it

@pytest.mark.parametrize("instr, want", [("rcp.approx.ftz.f64", 0.25), ("rsqrt.approx.f64", 0.5), ("sqrt.rn.f64", 2.0)])
def test_valid_float64_forms_still_run(instr, want, ptx_path):
  out = np.array([4.0])
  run_ptx(HEAD + F64.replace("INSTR", f"{instr} %fd1, %fd0"), [out], block=(1, 1, 1))
  assert abs(out[0] - want) <= 2 ** -20 * want

@pytest.mark.parametrize("op, instrs", [("sin", {"sin.approx.f64"}), ("exp", {"ex2.approx.f64"}), ("log2", {"lg2.approx.f64"}),
                                        ("sqrt", {"sqrt.approx.f64"}), ("reciprocal", {"rcp.approx.f64"})])
def test_tinygrad_ptx_renderer_float64_is_invalid(op, instrs):
  """tinygrad's PTX renderer writes the .approx instructions for float64 (see the report in tests/diff/diffcases.py users)."""
  src = []
  with pytest.raises(InvalidPTX, match="not valid PTX, ptxas rejects it"): run(getattr(Tensor(X), op)(), "ptx", None, src)
  assert any(i in src[-1] for i in instrs)

# *** fma.rn.f64 at the edges libdevice reaches (log2(0): fma(-inf, c, -inf); the reductions of huge arguments) ***

FMA = """
.visible .entry k(.param .u64 out, .param .u64 in0, .param .u64 in1, .param .u64 in2)
{
  .reg .b32 %r<2>;
  .reg .f64 %fd<4>;
  .reg .b64 %rd<12>;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd0, %r0, 8;
  ld.param.u64 %rd1, [in0];
  ld.param.u64 %rd2, [in1];
  ld.param.u64 %rd3, [in2];
  ld.param.u64 %rd4, [out];
  add.s64 %rd5, %rd1, %rd0;
  add.s64 %rd6, %rd2, %rd0;
  add.s64 %rd7, %rd3, %rd0;
  add.s64 %rd8, %rd4, %rd0;
  ld.global.f64 %fd0, [%rd5];
  ld.global.f64 %fd1, [%rd6];
  ld.global.f64 %fd2, [%rd7];
  fma.rn.f64 %fd3, %fd0, %fd1, %fd2;
  st.global.f64 [%rd8], %fd3;
  ret;
}
"""

def test_fma_f64_infinities_and_huge_operands(ptx_path):
  """Both paths against an exact reference (Fraction, correctly rounded) and IEEE's special cases: infinities and
  NaN operands gave NaN on the numpy path (its error-free transformations compute inf - inf), and so did operands from
  |x| ~ 2^996 (Veltkamp's split overflowed)."""
  from fractions import Fraction
  inf, nan = np.inf, np.nan
  a = np.array([-inf, inf, 1.0, 0.0, nan, 1e300, 1.7e308, 2.0**1000, -1.7e308, 5e-324, 3.0, inf, 1.5, 2.0**1023] + [1.25] * 18)
  b = np.array([1.4427, 2.0, inf, inf, 1.0, 1e-10, 0.5, 3 * 2.0**-1000, 1e-300, 2.0**1020, 1e-320, -1.0, 1e308, 4.0] + [2.0] * 18)
  c = np.array([-inf, inf, inf, 1.0, 1.0, 0.0, 1.0, 1.0, 1e-10, 1.0, 0.0, inf, -1e308, -1.0] + [0.5] * 18)
  out = np.zeros(32)
  run_ptx(HEAD + FMA, [out, a, b, c])
  def exact(x, y, z):
    with np.errstate(all="ignore"):   # IEEE: inf*0 = NaN, inf - inf = NaN, inf + finite = inf, overflow = inf
      if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)) or abs(x * y) == inf: return x * y + z
    return float(Fraction(x) * Fraction(y) + Fraction(z))
  want = np.array([exact(x, y, z) for x, y, z in zip(a, b, c)])
  np.testing.assert_array_equal(out, want)

def test_fma_f64_below_the_normal_range(ptx_path):
  """Products below ~2^-969 (their two_prod error terms would underflow on the numpy path) and subnormal results,
  against the exact reference; an exact cancellation is +0."""
  from fractions import Fraction
  r = np.random.default_rng(7)
  a = r.uniform(1, 2, 32) * 2.0 ** r.integers(-560, -440, 32) * r.choice([-1, 1], 32)
  b = r.uniform(-2, 2, 32) * 2.0 ** r.integers(-560, -440, 32)
  c = r.uniform(-2, 2, 32) * 2.0 ** r.integers(-1074, -880, 32)
  a[0], b[0], c[0] = 2.0 ** -500, 2.0 ** -500, -(2.0 ** -1000)   # exact cancellation
  a[1], b[1], c[1] = 3.0, 5e-324, 0.0
  out = np.zeros(32)
  run_ptx(HEAD + FMA, [out, a, b, c])
  want = np.array([float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)])
  np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))

# *** the carry chains of __internal_trig_reduction_slowpathd (its 64x64 -> 128-bit products), on both paths ***

CARRY = """
.visible .entry k(.param .u64 out, .param .u64 in0, .param .u64 in1)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd0, %r0, 8;
  mul.wide.u32 %rd1, %r0, 32;
  ld.param.u64 %rd2, [in0];
  ld.param.u64 %rd3, [in1];
  ld.param.u64 %rd4, [out];
  add.s64 %rd5, %rd2, %rd0;
  add.s64 %rd6, %rd3, %rd0;
  add.s64 %rd7, %rd4, %rd1;
  ld.global.u64 %rd8, [%rd5];
  ld.global.u64 %rd9, [%rd6];
  mov.b64 {%r1, %r2}, %rd8;
  mov.b64 {%r3, %r4}, %rd9;
  // (r2:r1) * (r4:r3) as four 32-bit limbs r8..r11, as NVRTC's inline mul.wide.u64 emulation does
  mul.lo.u32 %r8, %r1, %r3;
  mul.hi.u32 %r9, %r1, %r3;
  mad.lo.cc.u32 %r9, %r1, %r4, %r9;
  madc.hi.u32 %r10, %r1, %r4, 0;
  mad.lo.cc.u32 %r9, %r2, %r3, %r9;
  madc.hi.cc.u32 %r10, %r2, %r3, %r10;
  madc.hi.u32 %r11, %r2, %r4, 0;
  mad.lo.cc.u32 %r10, %r2, %r4, %r10;
  addc.u32 %r11, %r11, 0;
  mov.b64 %rd10, {%r8, %r9};
  mov.b64 %rd11, {%r10, %r11};
  st.global.u64 [%rd7], %rd10;
  st.global.u64 [%rd7+8], %rd11;
  // 64-bit subtraction and addition out of 32-bit halves (borrow and carry), and 64-bit add.cc/addc
  sub.cc.u32 %r12, %r1, %r3;
  subc.u32 %r13, %r2, %r4;
  mov.b64 %rd12, {%r12, %r13};
  st.global.u64 [%rd7+16], %rd12;
  add.cc.u64 %rd13, %rd8, %rd9;
  addc.cc.u64 %rd14, %rd8, 0;
  addc.u64 %rd15, 0, 0;
  xor.b64 %rd13, %rd13, %rd14;
  xor.b64 %rd13, %rd13, %rd15;
  st.global.u64 [%rd7+24], %rd13;
  ret;
}
"""

def test_carry_chains(ptx_path):
  r = np.random.default_rng(9)
  x = r.integers(0, 2**64, 32, dtype=np.uint64)
  y = r.integers(0, 2**64, 32, dtype=np.uint64)
  x[:4] = [2**64 - 1, 0, 2**64 - 1, 2**32 - 1]
  y[:4] = [2**64 - 1, 1, 1, 2**32 + 1]
  out = np.zeros(128, np.uint64)
  st = run_ptx(HEAD + CARRY, [out, x, y])
  M = 2**64
  for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
    p = a * b
    s, c1 = (a + b) % M, (a + b) >= M
    s2, c2 = (a + c1) % M, (a + c1) >= M
    assert out[4 * i:4 * i + 4].tolist() == [p % M, p >> 64, (a - b) % M, s ^ s2 ^ int(c2)], i
  assert st.native == (ptx_path == "native")
