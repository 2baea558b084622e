"""Instruction-level tests of the PTX executor: small hand-written kernels over numpy buffers, compared with numpy."""
import numpy as np
import pytest
from mockgpu.emulators.ptx import load_module
from support.ptx_isa import LOAD3, kernel, run
pytestmark = pytest.mark.usefixtures("ptx_path")  # every test on the numpy and the native path

def binop(body:str, a:np.ndarray, b:np.ndarray, c:np.ndarray|None=None, out_dtype=None) -> np.ndarray:
  """Run `body` (inputs in %r1, %r2, %r3 as raw bits, result stored from %r4) over 32 lanes."""
  out = np.zeros(32, out_dtype or a.dtype)
  c = np.zeros(32, np.uint32) if c is None else c
  run(kernel(LOAD3 + body + "\nst.global.b32 [%rd9], %r4;"), [out, a, b, c])
  return out

rng = np.random.default_rng(1)
def u32(n=32): return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
def f32(n=32): return rng.standard_normal(n).astype(np.float32) * 10

class TestIntegerOps:
  def test_add_sub_mul(self):
    a, b = u32(), u32()
    np.testing.assert_array_equal(binop("add.s32 %r4, %r1, %r2;", a, b), a + b)
    np.testing.assert_array_equal(binop("sub.u32 %r4, %r1, %r2;", a, b), a - b)
    np.testing.assert_array_equal(binop("mul.lo.u32 %r4, %r1, %r2;", a, b), a * b)
    np.testing.assert_array_equal(binop("mul.hi.u32 %r4, %r1, %r2;", a, b), ((a.astype(np.uint64) * b) >> 32).astype(np.uint32))
    s, t = a.view(np.int32), b.view(np.int32)
    np.testing.assert_array_equal(binop("mul.hi.s32 %r4, %r1, %r2;", a, b).view(np.int32), ((s.astype(np.int64) * t) >> 32).astype(np.int32))
    np.testing.assert_array_equal(binop("mad.lo.s32 %r4, %r1, %r2, %r3;", a, b, a), a * b + a)

  def test_saturate_and_carry(self):
    a = np.array([2**31 - 5] * 16 + [2**31] * 16, np.uint32)
    b = np.array([10] * 16 + [2**32 - 10] * 16, np.uint32)
    sat = binop("add.sat.s32 %r4, %r1, %r2;", a, b).view(np.int32)
    np.testing.assert_array_equal(sat, np.clip(a.view(np.int32).astype(np.int64) + b.view(np.int32), -2**31, 2**31 - 1))
    # 64-bit add out of 32-bit halves: add.cc / addc
    x, y = rng.integers(0, 2**63, 32, dtype=np.uint64), rng.integers(0, 2**63, 32, dtype=np.uint64)
    out = np.zeros(64, np.uint32)
    body = LOAD3.replace("mul.wide.u32 %rd0, %r0, 4;", "mul.wide.u32 %rd0, %r0, 8;") + """
ld.global.v2.u32 {%r1, %r5}, [%rd5];
ld.global.v2.u32 {%r2, %r6}, [%rd6];
mul.wide.u32 %rd0, %r0, 8;
add.s64 %rd9, %rd4, %rd0;
add.cc.u32 %r7, %r1, %r2;
addc.u32 %r8, %r5, %r6;
st.global.v2.u32 [%rd9], {%r7, %r8};"""
    run(kernel(body), [out, x, y, np.zeros(64, np.uint32)])
    np.testing.assert_array_equal(out.view(np.uint64), x + y)

  def test_div_rem_signed(self):
    a = rng.integers(-10**6, 10**6, 32).astype(np.int32)
    b = rng.integers(1, 1000, 32).astype(np.int32) * rng.choice([-1, 1], 32).astype(np.int32)
    q = binop("div.s32 %r4, %r1, %r2;", a.view(np.uint32), b.view(np.uint32)).view(np.int32)
    np.testing.assert_array_equal(q, np.trunc(a / b).astype(np.int32))
    r = binop("rem.s32 %r4, %r1, %r2;", a.view(np.uint32), b.view(np.uint32)).view(np.int32)
    np.testing.assert_array_equal(r, np.fmod(a, b))
    z = binop("div.u32 %r4, %r1, %r2;", a.view(np.uint32), np.zeros(32, np.uint32))
    assert (z == 0xffffffff).all()

  def test_shifts(self):
    a, n = u32(), rng.integers(0, 40, 32).astype(np.uint32)
    np.testing.assert_array_equal(binop("shl.b32 %r4, %r1, %r2;", a, n), np.where(n >= 32, 0, a << np.minimum(n, 31)).astype(np.uint32))
    np.testing.assert_array_equal(binop("shr.u32 %r4, %r1, %r2;", a, n), np.where(n >= 32, 0, a >> np.minimum(n, 31)).astype(np.uint32))
    np.testing.assert_array_equal(binop("shr.s32 %r4, %r1, %r2;", a, n).view(np.int32), a.view(np.int32) >> np.minimum(n, 31))
    rot = (a << (n % 32)) | (a >> ((32 - n % 32) % 32))
    np.testing.assert_array_equal(binop("shf.l.wrap.b32 %r4, %r1, %r1, %r2;", a, n), np.where(n % 32 == 0, a, rot))
    b = u32()
    cl = np.minimum(n, 32).astype(np.uint64)
    both = (b.astype(np.uint64) << 32) | a
    np.testing.assert_array_equal(binop("shf.r.clamp.b32 %r4, %r1, %r3, %r2;", a, n, b), ((both >> cl) & 0xffffffff).astype(np.uint32))

  def test_bit_ops(self):
    a, b, c = u32(), u32(), u32()
    pyc = lambda f: np.array([f(int(x)) for x in a], np.uint32)
    np.testing.assert_array_equal(binop("popc.b32 %r4, %r1;", a, b), pyc(lambda x: bin(x).count("1")))
    x = a >> (a & 31)
    np.testing.assert_array_equal(binop("clz.b32 %r4, %r1;", x, b), np.array([32 - int(v).bit_length() for v in x], np.uint32))
    np.testing.assert_array_equal(binop("brev.b32 %r4, %r1;", a, b), pyc(lambda x: int(f"{x:032b}"[::-1], 2)))
    np.testing.assert_array_equal(binop("lop3.b32 %r4, %r1, %r2, %r3, 0x96;", a, b, c), a ^ b ^ c)
    np.testing.assert_array_equal(binop("lop3.b32 %r4, %r1, %r2, %r3, 0xe8;", a, b, c), (a & b) | (a & c) | (b & c))
    np.testing.assert_array_equal(binop("not.b32 %r4, %r1;", a, b), ~a)
    pos, ln = (b & 31), (c & 31)
    def pybfe(x, p, l, signed):
      v = (x >> p) & ((1 << l) - 1) if p < 32 else 0
      l = min(l, 32 - p)
      if signed and l and (v >> (l - 1)) & 1: v |= (0xffffffff << l) & 0xffffffff
      return v
    want = np.array([pybfe(int(x), int(p), int(l), False) for x, p, l in zip(a, pos, ln)], np.uint32)
    np.testing.assert_array_equal(binop("bfe.u32 %r4, %r1, %r2, %r3;", a, pos, ln), want)
    want = np.array([pybfe(int(x), int(p), int(l), True) for x, p, l in zip(a, pos, ln)], np.uint32)
    np.testing.assert_array_equal(binop("bfe.s32 %r4, %r1, %r2, %r3;", a, pos, ln), want)
    def pybfi(f, bb, p, l):
      l = min(l, 32 - p)
      m = ((1 << l) - 1) << p
      return (bb & ~m | (f << p) & m) & 0xffffffff
    want = np.array([pybfi(int(x), int(y), int(p), int(l)) for x, y, p, l in zip(a, b, pos, ln)], np.uint32)
    np.testing.assert_array_equal(_bfi(a, b, pos, ln), want)

  def test_prmt(self):
    a, b = u32(), u32()
    sel = np.array([0x3210, 0x7654, 0x0123, 0x4545, 0x8888, 0xba98] * 6, np.uint32)[:32]
    def py(x, y, s):
      by = list(int(x).to_bytes(4, "little") + int(y).to_bytes(4, "little"))
      out = 0
      for i in range(4):
        nib = (int(s) >> (4 * i)) & 0xf
        v = by[nib & 7]
        if nib & 8: v = 0xff if v & 0x80 else 0
        out |= v << (8 * i)
      return out
    np.testing.assert_array_equal(binop("prmt.b32 %r4, %r1, %r2, %r3;", a, b, sel), np.array([py(*z) for z in zip(a, b, sel)], np.uint32))
    np.testing.assert_array_equal(binop("prmt.b32.f4e %r4, %r1, %r2, 1;", a, b), ((a >> 8) | (b << 24)).astype(np.uint32))

def _bfi(a, b, pos, ln):
  out = np.zeros(32, np.uint32)
  body = LOAD3 + "ld.global.b32 %r5, [%rd7];\nbfi.b32 %r4, %r1, %r2, %r3, %r5;\nst.global.b32 [%rd9], %r4;"
  body = body.replace("ld.global.b32 %r3, [%rd7];", "ld.global.b32 %r3, [%rd7+128];")
  run(kernel(body), [out, a, b, np.concatenate([ln, pos]).astype(np.uint32)])
  return out

class TestFloat:
  def test_rounding_modes_against_fractions(self):
    """add/mul/fma/div in every rounding mode vs exact rationals (float32)."""
    from fractions import Fraction
    a, b, c = f32(), f32(), f32() * 1e-3
    def ref(op, mode):
      out = []
      for x, y, z in zip(a, b, c):
        v = {"add": lambda: Fraction(float(x)) + Fraction(float(y)), "mul": lambda: Fraction(float(x)) * Fraction(float(y)),
             "div": lambda: Fraction(float(x)) / Fraction(float(y)),
             "fma": lambda: Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))}[op]()
        f = np.float32(float(v))
        cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
        if mode == "rn": out.append(min(cands, key=lambda q: (abs(Fraction(float(q)) - v), int(np.array(q).view(np.uint32)) & 1)))
        elif mode == "rz": out.append(max((q for q in cands if abs(Fraction(float(q))) <= abs(v)), key=lambda q: abs(Fraction(float(q)))))
        elif mode == "rm": out.append(max(q for q in cands if Fraction(float(q)) <= v))
        else: out.append(min(q for q in cands if Fraction(float(q)) >= v))
      return np.array(out, np.float32)
    for op in ("add", "mul", "div", "fma"):
      for mode in ("rn", "rz", "rm", "rp"):
        body = f"{op}.{mode}.f32 %f4, %f1, %f2{', %f3' if op == 'fma' else ''};"
        got = binop("mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nmov.b32 %f3, %r3;\n" + body + "\nmov.b32 %r4, %f4;", a.view(np.uint32),
                    b.view(np.uint32), c.view(np.uint32)).view(np.float32)
        np.testing.assert_array_equal(got.view(np.uint32), ref(op, mode).view(np.uint32), err_msg=f"{op}.{mode}")

  def test_min_max_nan_and_signed_zero(self):
    a = np.array([1, np.nan, np.nan, -0.0, 0.0, 3] * 6, np.float32)[:32]
    b = np.array([np.nan, 2, np.nan, 0.0, -0.0, -3] * 6, np.float32)[:32]
    pre = "mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\n"
    mx = binop(pre + "max.f32 %f4, %f1, %f2;\nmov.b32 %r4, %f4;", a.view(np.uint32), b.view(np.uint32)).view(np.float32)
    np.testing.assert_array_equal(mx[:6], np.array([1, 2, np.nan, 0.0, 0.0, 3], np.float32))
    assert not np.signbit(mx[3]) and not np.signbit(mx[4])
    mn = binop(pre + "min.f32 %f4, %f1, %f2;\nmov.b32 %r4, %f4;", a.view(np.uint32), b.view(np.uint32)).view(np.float32)
    assert np.signbit(mn[3]) and np.signbit(mn[4])
    mxn = binop(pre + "max.NaN.f32 %f4, %f1, %f2;\nmov.b32 %r4, %f4;", a.view(np.uint32), b.view(np.uint32)).view(np.float32)
    assert np.isnan(mxn[:3]).all() and mxn[5] == 3

  def test_setp_unordered_and_combiners(self):
    a = np.array([1, np.nan, 2, 3] * 8, np.float32)
    b = np.array([1, 1, np.nan, 4] * 8, np.float32)
    for cmp, ref in (("eq", lambda x, y: x == y), ("ne", lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y)), ("neu", lambda x, y: x != y),
                     ("ltu", lambda x, y: ~(x >= y)), ("geu", lambda x, y: ~(x < y)), ("num", lambda x, y: ~np.isnan(x) & ~np.isnan(y)),
                     ("nan", lambda x, y: np.isnan(x) | np.isnan(y)), ("lt", lambda x, y: x < y)):
      body = f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nsetp.{cmp}.f32 %p1, %f1, %f2;\nselp.u32 %r4, 1, 0, %p1;"
      np.testing.assert_array_equal(binop(body, a.view(np.uint32), b.view(np.uint32)), ref(a, b).astype(np.uint32), err_msg=cmp)
    x, y = u32(), u32()
    body = ("setp.lo.u32 %p1|%p2, %r1, %r2;\nsetp.ne.s32.and %p3|%p4, %r1, 0, %p2;\nselp.u32 %r5, 2, 0, %p3;\nselp.u32 %r6, 1, 0, %p1;\n"
            "or.b32 %r4, %r5, %r6;")
    np.testing.assert_array_equal(binop(body, x, y), ((x < y).astype(np.uint32) | (((x != 0) & (x >= y)).astype(np.uint32) << 1)))

  def test_cvt_rounding_and_saturation(self):
    a = np.array([1.5, 2.5, -1.5, -2.5, 1e10, -1e10, np.nan, 0.49999997] * 4, np.float32)
    for mode, fn in (("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil)):
      got = binop(f"mov.b32 %f1, %r1;\ncvt.{mode}.s32.f32 %r4, %f1;", a.view(np.uint32), a.view(np.uint32)).view(np.int32)
      want = np.nan_to_num(np.clip(fn(a.astype(np.float64)), -2**31, 2**31 - 1), nan=0).astype(np.int32)
      np.testing.assert_array_equal(got, want, err_msg=mode)
    got = binop("mov.b32 %f1, %r1;\ncvt.rni.u8.f32 %r4, %f1;", a.view(np.uint32), a.view(np.uint32))
    np.testing.assert_array_equal(got, np.nan_to_num(np.clip(np.rint(a.astype(np.float64)), 0, 255), nan=0).astype(np.uint32))
    got = binop("mov.b32 %f1, %r1;\ncvt.sat.f32.f32 %f4, %f1;\nmov.b32 %r4, %f4;", a.view(np.uint32), a.view(np.uint32)).view(np.float32)
    np.testing.assert_array_equal(got, np.nan_to_num(np.clip(a, 0, 1), nan=0))
    big = np.array([2**24 + 1, 2**24 + 3, -(2**24 + 1), 7] * 8, np.int32)
    for mode, want in (("rn", big.astype(np.float32)), ("rz", np.array([2**24, 2**24 + 2, -2**24, 7] * 8, np.float32)),
                       ("rp", np.array([2**24 + 2, 2**24 + 4, -2**24, 7] * 8, np.float32))):
      got = binop(f"cvt.{mode}.f32.s32 %f4, %r1;\nmov.b32 %r4, %f4;", big.view(np.uint32), big.view(np.uint32)).view(np.float32)
      np.testing.assert_array_equal(got, want, err_msg=mode)
    sat8 = np.array([300, -5, 100, 255] * 8, np.int32)
    np.testing.assert_array_equal(binop("cvt.sat.u8.s32 %r4, %r1;", sat8.view(np.uint32), sat8.view(np.uint32)), np.clip(sat8, 0, 255))

  def test_half_and_bf16_conversions(self):
    a = f32()
    got = binop("mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\ncvt.rn.f16x2.f32 %r4, %f1, %f2;", a.view(np.uint32), (a * 3).view(np.uint32))
    np.testing.assert_array_equal(got & 0xffff, (a * 3).astype(np.float16).view(np.uint16))
    np.testing.assert_array_equal(got >> 16, a.astype(np.float16).view(np.uint16))
    got = binop("mov.b32 %f1, %r1;\ncvt.rn.bf16.f32 %h1, %f1;\ncvt.u32.u16 %r4, %h1;", a.view(np.uint32), a.view(np.uint32))
    u = a.view(np.uint32)
    np.testing.assert_array_equal(got, (u + 0x7fff + ((u >> 16) & 1)) >> 16)
    # f16x2 arithmetic works on each half
    x, y = rng.standard_normal(64).astype(np.float16), rng.standard_normal(64).astype(np.float16)
    got = binop("add.rn.f16x2 %r4, %r1, %r2;", x.view(np.uint32), y.view(np.uint32))
    np.testing.assert_array_equal(got.view(np.float16), x + y)
    got = binop("fma.rn.f16x2 %r4, %r1, %r2, %r3;", x.view(np.uint32), y.view(np.uint32), x.view(np.uint32))
    np.testing.assert_array_equal(got.view(np.float16), (x.astype(np.float64) * y + x).astype(np.float16))

  def test_f64(self):
    a, b = rng.standard_normal(32), rng.standard_normal(32)
    out = np.zeros(32)
    body = LOAD3.replace("mul.wide.u32 %rd0, %r0, 4;", "mul.wide.u32 %rd0, %r0, 8;") + """
ld.global.f64 %fd1, [%rd5];
ld.global.f64 %fd2, [%rd6];
mul.rn.f64 %fd3, %fd1, %fd2;
abs.f64 %fd3, %fd3;
sqrt.rn.f64 %fd4, %fd3;
abs.f64 %fd5, %fd1;
div.rn.f64 %fd6, %fd5, %fd2;
add.f64 %fd7, %fd6, %fd4;
st.global.f64 [%rd9], %fd7;"""
    run(kernel(body), [out, a, b, np.zeros(32)])
    np.testing.assert_array_equal(out, np.abs(a) / b + np.sqrt(np.abs(a * b)))

class TestControlFlow:
  def test_divergent_loop(self):
    """Each thread loops tid times (data-dependent trip counts): divergence and reconvergence."""
    out = np.zeros(64, np.uint32)
    body = """
mov.u32 %r0, %tid.x;
mov.u32 %r1, 0;
mov.u32 %r2, 0;
$L_loop:
setp.ge.u32 %p1, %r2, %r0;
@%p1 bra $L_done;
add.u32 %r1, %r1, %r2;
add.u32 %r2, %r2, 1;
bra.uni $L_loop;
$L_done:
setp.eq.u32 %p2, %r0, 7;
@%p2 add.u32 %r1, %r1, 1000;
@!%p2 bra $L_skip;
add.u32 %r1, %r1, 1;
$L_skip:
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r1;"""
    st = run(kernel(body), [out], block=(64, 1, 1))
    t = np.arange(64)
    np.testing.assert_array_equal(out, t * (t - 1) // 2 + np.where(t == 7, 1001, 0))
    assert st.threads == 64 and st.thread_instructions > 64 * 10

  def test_shared_reduction_with_barriers(self):
    """Tree reduction in shared memory across 4 CTAs with bar.sync between the levels."""
    x = rng.integers(0, 1000, 4 * 128).astype(np.uint32)
    out = np.zeros(4, np.uint32)
    body = """
.shared .align 4 .b32 sm[128];
mov.u32 %r0, %tid.x;
mov.u32 %r1, %ctaid.x;
ld.param.u64 %rd1, [in0];
mad.lo.u32 %r2, %r1, 128, %r0;
mul.wide.u32 %rd2, %r2, 4;
add.s64 %rd3, %rd1, %rd2;
ld.global.u32 %r3, [%rd3];
mov.u64 %rd4, sm;
mul.wide.u32 %rd5, %r0, 4;
add.s64 %rd6, %rd4, %rd5;
st.shared.u32 [%rd6], %r3;
mov.u32 %r4, 64;
$L_top:
bar.sync 0;
setp.ge.u32 %p1, %r0, %r4;
@%p1 bra $L_next;
mul.wide.u32 %rd7, %r4, 4;
add.s64 %rd8, %rd6, %rd7;
ld.shared.u32 %r5, [%rd8];
ld.shared.u32 %r6, [%rd6];
add.u32 %r6, %r6, %r5;
st.shared.u32 [%rd6], %r6;
$L_next:
shr.u32 %r4, %r4, 1;
setp.ne.u32 %p2, %r4, 0;
@%p2 bra $L_top;
bar.sync 0;
setp.ne.u32 %p3, %r0, 0;
@%p3 bra $L_end;
ld.shared.u32 %r7, [sm];
ld.param.u64 %rd9, [out];
mul.wide.u32 %rd10, %r1, 4;
add.s64 %rd11, %rd9, %rd10;
st.global.u32 [%rd11], %r7;
$L_end:"""
    run(kernel(body, ".param .u64 out, .param .u64 in0"), [out, x], grid=(4, 1, 1), block=(128, 1, 1))
    np.testing.assert_array_equal(out, x.reshape(4, 128).sum(1))

  def test_2d_ids_and_dynamic_shared(self):
    out = np.zeros(2 * 3 * 4 * 8, np.uint32)
    body = """
.extern .shared .align 16 .b8 dyn[];
mov.u32 %r0, %tid.x;
mov.u32 %r1, %tid.y;
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %ctaid.y;
mov.u32 %r4, %ntid.x;
mov.u32 %r5, %nctaid.x;
mad.lo.u32 %r6, %r1, %r4, %r0;
mov.u32 %r19, %dynamic_smem_size;
mul.lo.u32 %r7, %r6, 4;
st.shared.u32 [%r7], %r19;
bar.sync 0;
ld.shared.u32 %r8, [%r7];
mad.lo.u32 %r9, %r3, %r5, %r2;
mad.lo.u32 %r10, %r9, 32, %r6;
mul.lo.u32 %r11, %r3, 1000;
mad.lo.u32 %r11, %r2, 100, %r11;
mad.lo.u32 %r11, %r1, 10, %r11;
add.u32 %r11, %r11, %r0;
add.u32 %r11, %r11, %r8;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r10, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r11;"""
    run(kernel(body, ".param .u64 out"), [out], grid=(2, 3, 1), block=(8, 4, 1), dynamic_shared=128)
    cy, cx, ty, tx = np.meshgrid(np.arange(3), np.arange(2), np.arange(4), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(out, (cy * 1000 + cx * 100 + ty * 10 + tx + 128).ravel())

  def test_local_memory_and_generic_addressing(self):
    out = np.zeros(32, np.uint32)
    body = """
.local .align 4 .b8 depot[16];
mov.u32 %r0, %tid.x;
mov.u64 %rd1, depot;
cvta.local.u64 %rd2, %rd1;
st.u32 [%rd2], %r0;
mul.lo.u32 %r1, %r0, 3;
st.local.u32 [%rd1+4], %r1;
ld.local.u32 %r2, [depot];
ld.u32 %r3, [%rd2+4];
add.u32 %r4, %r2, %r3;
ld.param.u64 %rd3, [out];
cvta.to.global.u64 %rd3, %rd3;
mul.wide.u32 %rd4, %r0, 4;
add.s64 %rd5, %rd3, %rd4;
st.global.u32 [%rd5], %r4;"""
    run(kernel(body, ".param .u64 out"), [out])
    np.testing.assert_array_equal(out, np.arange(32) * 4)

  def test_const_and_global_module_variables(self):
    out = np.zeros(32, np.uint32)
    pre = ".const .align 4 .u32 ctab[4] = {10, 20, 30, 40};\n.global .align 4 .u32 gtab[4] = {1, 2, 3, 4};\n"
    body = """
mov.u32 %r0, %tid.x;
and.b32 %r1, %r0, 3;
mul.wide.u32 %rd1, %r1, 4;
mov.u64 %rd2, ctab;
add.s64 %rd3, %rd2, %rd1;
ld.const.u32 %r2, [%rd3];
mov.u64 %rd4, gtab;
add.s64 %rd5, %rd4, %rd1;
ld.global.u32 %r3, [%rd5];
add.u32 %r4, %r2, %r3;
ld.param.u64 %rd6, [out];
mul.wide.u32 %rd7, %r0, 4;
add.s64 %rd8, %rd6, %rd7;
st.global.u32 [%rd8], %r4;"""
    run(kernel(body, ".param .u64 out", prelude=pre), [out])
    np.testing.assert_array_equal(out, (np.arange(32) % 4 + 1) * 11)

  def test_scalar_params(self):
    out = np.zeros(32, np.uint32)
    body = """
ld.param.u32 %r1, [n];
ld.param.u16 %h1, [h];
cvt.u32.u16 %r2, %h1;
mov.u32 %r0, %tid.x;
mad.lo.u32 %r3, %r0, %r1, %r2;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r3;"""
    src = kernel(body, ".param .u64 out, .param .u32 n, .param .u16 h")
    k = load_module(src).kernel("k")
    assert [p[1:] for p in k.params] == [(8, 8, 0), (4, 4, 8), (2, 2, 12)] and k.param_size == 14
    run(src, [out], scalars=(7).to_bytes(4, "little") + (5).to_bytes(2, "little"))
    np.testing.assert_array_equal(out, np.arange(32) * 7 + 5)

class TestAtomicsAndWarps:
  def test_atomics_with_colliding_lanes(self):
    counters = np.zeros(4, np.uint32)
    olds = np.zeros(128, np.uint32)
    fsum = np.zeros(1, np.float32)
    body = """
mov.u32 %r0, %tid.x;
and.b32 %r1, %r0, 3;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
atom.global.add.u32 %r2, [%rd3], 1;
ld.param.u64 %rd4, [in0];
mul.wide.u32 %rd5, %r0, 4;
add.s64 %rd6, %rd4, %rd5;
st.global.u32 [%rd6], %r2;
ld.param.u64 %rd7, [in1];
cvt.rn.f32.u32 %f1, %r0;
red.global.add.f32 [%rd7], %f1;"""
    run(kernel(body), [counters, olds, fsum, np.zeros(1, np.uint32)], block=(128, 1, 1))
    np.testing.assert_array_equal(counters, [32] * 4)
    for g in range(4):   # each address hands out 0..31, one per lane
      np.testing.assert_array_equal(np.sort(olds[g::4]), np.arange(32))
    assert fsum[0] == np.float32(np.arange(128).sum())

  def test_atomic_cas_exch_minmax_shared(self):
    out = np.zeros(8, np.uint32)
    body = """
.shared .align 4 .u32 s[4];
mov.u32 %r0, %tid.x;
setp.ne.u32 %p1, %r0, 0;
@%p1 bra $L_init_done;
st.shared.u32 [s], 0;
st.shared.u32 [s+4], 1000;
st.shared.u32 [s+8], 0;
st.shared.u32 [s+12], 0;
$L_init_done:
bar.sync 0;
atom.shared.cas.b32 %r1, [s], %r0, 99;
atom.shared.min.u32 %r2, [s+4], %r0;
atom.shared.max.u32 %r3, [s+8], %r0;
atom.shared.exch.b32 %r4, [s+12], %r0;
bar.sync 0;
@%p1 bra $L_end;
ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [s];
ld.param.u64 %rd1, [out];
st.global.v4.u32 [%rd1], {%r5, %r6, %r7, %r8};
$L_end:"""
    run(kernel(body, ".param .u64 out"), [out], block=(64, 1, 1))
    # cas: lane 0 finds 0 and swaps in 99; no other lane's compare value equals 99
    np.testing.assert_array_equal(out[:4], [99, 0, 63, 63])

  def test_shfl_vote(self):
    out = np.zeros(64 * 4, np.uint32)
    body = """
mov.u32 %r0, %tid.x;
mul.lo.u32 %r1, %r0, 10;
shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
shfl.sync.down.b32 %r3|%p1, %r1, 3, 31, -1;
shfl.sync.idx.b32 %r4, %r1, 5, 31, -1;
and.b32 %r5, %r0, 1;
setp.eq.u32 %p2, %r5, 1;
vote.sync.ballot.b32 %r6, %p2, -1;
selp.u32 %r7, 1, 0, %p1;
add.u32 %r3, %r3, %r7;
add.u32 %r2, %r2, %r6;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 16;
add.s64 %rd3, %rd1, %rd2;
st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r6};"""
    run(kernel(body, ".param .u64 out"), [out], block=(64, 1, 1))
    o = out.reshape(64, 4)
    lane, t = np.arange(64) % 32, np.arange(64)
    np.testing.assert_array_equal(o[:, 3], [0xaaaaaaaa] * 64)
    np.testing.assert_array_equal(o[:, 0], (t ^ 1) * 10 + 0xaaaaaaaa)
    np.testing.assert_array_equal(o[:, 1], np.where(lane + 3 <= 31, (t + 3) * 10 + 1, t * 10))
    np.testing.assert_array_equal(o[:, 2], (t - lane + 5) * 10)

  def test_mma_m16n8k16_f16(self):
    """One warp computes a 16x8 tile with mma.sync; fragments are loaded per the PTX ISA layout."""
    A = rng.standard_normal((16, 16)).astype(np.float16)
    Bm = rng.standard_normal((16, 8)).astype(np.float16)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    afrag = np.stack([A[g + 8 * ((i // 2) % 2), t * 2 + i % 2 + 8 * (i // 4)] for i in range(8)], 1)   # (32, 8)
    bfrag = np.stack([Bm[t * 2 + j % 2 + 8 * (j // 2), g] for j in range(4)], 1)
    cfrag = np.stack([C[g + 8 * (c // 2), t * 2 + c % 2] for c in range(4)], 1)
    out = np.zeros((32, 4), np.float32)
    body = """
.reg .b32 %a<4>;
.reg .b32 %b<2>;
.reg .f32 %c<4>;
.reg .f32 %d<4>;
mov.u32 %r0, %tid.x;
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd2, [in1];
ld.param.u64 %rd3, [in2];
ld.param.u64 %rd4, [out];
mul.wide.u32 %rd5, %r0, 16;
add.s64 %rd6, %rd1, %rd5;
ld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%rd6];
mul.wide.u32 %rd7, %r0, 8;
add.s64 %rd8, %rd2, %rd7;
ld.global.v2.b32 {%b0, %b1}, [%rd8];
add.s64 %rd9, %rd3, %rd5;
ld.global.v4.f32 {%c0, %c1, %c2, %c3}, [%rd9];
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};
add.s64 %rd10, %rd4, %rd5;
st.global.v4.f32 [%rd10], {%d0, %d1, %d2, %d3};"""
    run(kernel(body), [out, np.ascontiguousarray(afrag), np.ascontiguousarray(bfrag), np.ascontiguousarray(cfrag)])
    D = A.astype(np.float64) @ Bm.astype(np.float64) + C
    want = np.stack([D[g + 8 * (c // 2), t * 2 + c % 2] for c in range(4)], 1).astype(np.float32)
    np.testing.assert_array_equal(out, want)

class TestMoreOps:
  def test_predicated_memory_under_divergence(self):
    """Guarded loads/stores inside a divergent block touch only their lanes (others may hold wild addresses)."""
    x = np.arange(32, dtype=np.uint32) * 3
    out = np.full(32, 7, np.uint32)
    body = """
mov.u32 %r0, %tid.x;
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd2, [out];
mul.wide.u32 %rd3, %r0, 4;
setp.lt.u32 %p1, %r0, 20;
@%p1 bra $L_low;
bra.uni $L_end;
$L_low:
and.b32 %r1, %r0, 1;
setp.eq.u32 %p2, %r1, 0;
add.s64 %rd4, %rd1, %rd3;
selp.b64 %rd5, %rd4, 0, %p2;
mov.u32 %r2, 99;
@%p2 ld.global.u32 %r2, [%rd5];
add.s64 %rd6, %rd2, %rd3;
selp.b64 %rd7, %rd6, 8, %p2;
@%p2 st.global.u32 [%rd7], %r2;
@!%p2 st.global.u32 [%rd6+0], %r2;
$L_end:"""
    run(kernel(body), [out, x, np.zeros(1, np.uint32), np.zeros(1, np.uint32)])
    t = np.arange(32)
    np.testing.assert_array_equal(out, np.where(t >= 20, 7, np.where(t % 2 == 0, t * 3, 99)))

  def test_vote_redux_and_barrier_reduction_under_divergence(self):
    out = np.zeros((64, 4), np.uint32)
    body = """
mov.u32 %r0, %tid.x;
and.b32 %r1, %r0, 31;
setp.lt.u32 %p1, %r1, 24;
mov.u32 %r2, 0;
mov.u32 %r3, 0;
mov.u32 %r4, 0;
@!%p1 bra $L_join;
setp.lt.u32 %p2, %r1, 8;
vote.sync.any.pred %p3, %p2, -1;
vote.sync.all.pred %p4, %p2, -1;
selp.u32 %r2, 1, 0, %p3;
selp.u32 %r5, 2, 0, %p4;
or.b32 %r2, %r2, %r5;
vote.sync.ballot.b32 %r3, %p2, -1;
redux.sync.add.u32 %r4, %r1, -1;
$L_join:
setp.eq.u32 %p5, %r1, 3;
bar.red.popc.u32 %r6, 0, %p5;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 16;
add.s64 %rd3, %rd1, %rd2;
st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r6};"""
    run(kernel(body, ".param .u64 out"), [out], block=(64, 1, 1))
    lane = np.arange(64) % 32
    active = lane < 24
    np.testing.assert_array_equal(out[:, 0], np.where(active, 1, 0))          # some active lanes vote true, not all
    np.testing.assert_array_equal(out[:, 1], np.where(active, 0xff, 0))       # lanes 0..7
    np.testing.assert_array_equal(out[:, 2], np.where(active, sum(range(24)), 0))
    np.testing.assert_array_equal(out[:, 3], [2] * 64)                        # lane 3 of both warps

  def test_64bit_integer_ops(self):
    x = rng.integers(0, 2**64, 32, dtype=np.uint64)
    y = rng.integers(0, 2**64, 32, dtype=np.uint64)
    out = np.zeros((32, 4), np.uint64)
    body = """
mov.u32 %r0, %tid.x;
mul.wide.u32 %rd0, %r0, 8;
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd2, [in1];
add.s64 %rd3, %rd1, %rd0;
add.s64 %rd4, %rd2, %rd0;
ld.global.u64 %rd5, [%rd3];
ld.global.u64 %rd6, [%rd4];
mul.hi.u64 %rd7, %rd5, %rd6;
mul.hi.s64 %rd8, %rd5, %rd6;
shr.u64 %rd10, %rd6, 58;
shl.b64 %rd11, %rd5, %r0;
xor.b64 %rd12, %rd10, %rd11;
min.s64 %rd13, %rd5, %rd6;
ld.param.u64 %rd14, [out];
mul.wide.u32 %rd0, %r0, 32;
add.s64 %rd15, %rd14, %rd0;
st.global.v2.u64 [%rd15], {%rd7, %rd8};
st.global.v2.u64 [%rd15+16], {%rd12, %rd13};"""
    run(kernel(body), [out, x, y, np.zeros(1, np.uint32)])
    hi_u = [(int(a) * int(b)) >> 64 for a, b in zip(x, y)]
    sx, sy = x.view(np.int64), y.view(np.int64)
    hi_s = [((int(a) * int(b)) >> 64) % 2**64 for a, b in zip(sx, sy)]
    np.testing.assert_array_equal(out[:, 0], np.array(hi_u, np.uint64))
    np.testing.assert_array_equal(out[:, 1], np.array(hi_s, np.uint64))
    np.testing.assert_array_equal(out[:, 2], (y >> np.uint64(58)) ^ (x << np.arange(32, dtype=np.uint64)))
    np.testing.assert_array_equal(out[:, 3].view(np.int64), np.minimum(sx, sy))

  def test_bf16_arithmetic(self):
    """NVRTC's bf16 code: fma.rn.bf16, max.bf16, cvt between bf16 and f32."""
    a, b = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    tob = lambda v: ((v.view(np.uint32) + 0x7fff + ((v.view(np.uint32) >> 16) & 1)) >> 16).astype(np.uint16)
    fromb = lambda h: (h.astype(np.uint32) << 16).view(np.float32)
    ab, bb = tob(a), tob(b)
    body = """
cvt.u16.u32 %h1, %r1;
cvt.u16.u32 %h2, %r2;
fma.rn.bf16 %h3, %h1, %h2, %h1;
max.bf16 %h4, %h3, %h2;
cvt.f32.bf16 %f1, %h4;
mov.b32 %r4, %f1;"""
    got = binop(body, ab.astype(np.uint32), bb.astype(np.uint32)).view(np.float32)
    fm = tob((fromb(ab).astype(np.float64) * fromb(bb) + fromb(ab)).astype(np.float32))   # exact in float64 for bf16 inputs
    np.testing.assert_array_equal(got, np.maximum(fromb(fm), fromb(bb)))

  def test_misc_float(self):
    a = np.array([1.0, -2.0, np.inf, np.nan, 1e-40, 0.0, -0.0, 3.5] * 4, np.float32)
    pre = "mov.b32 %f1, %r1;\n"
    t = binop(pre + "testp.finite.f32 %p1, %f1;\ntestp.subnormal.f32 %p2, %f1;\nselp.u32 %r5, 1, 0, %p1;\nselp.u32 %r6, 2, 0, %p2;\n"
                    "or.b32 %r4, %r5, %r6;",
              a.view(np.uint32), a.view(np.uint32))
    np.testing.assert_array_equal(t, np.isfinite(a).astype(np.uint32) | (((np.abs(a) < 1.1754944e-38) & (a != 0)).astype(np.uint32) << 1))
    c = binop(pre + "mov.b32 %f2, %r2;\ncopysign.f32 %f3, %f2, %f1;\nmov.b32 %r4, %f3;", a.view(np.uint32), (-a).view(np.uint32)).view(np.float32)
    np.testing.assert_array_equal(c.view(np.uint32), np.copysign(a, -a).view(np.uint32))
    z = binop(pre + "add.ftz.f32 %f3, %f1, 0f00000000;\nmov.b32 %r4, %f3;", a.view(np.uint32), a.view(np.uint32)).view(np.float32)
    assert z[4] == 0 and z[7] == 3.5
    s = binop(pre + "mul.sat.f32 %f3, %f1, 0f3F000000;\nmov.b32 %r4, %f3;", a.view(np.uint32), a.view(np.uint32)).view(np.float32)
    np.testing.assert_array_equal(s[:8], np.array([0.5, 0, 1, 0, np.float32(1e-40) * np.float32(0.5), 0, 0, 1], np.float32))

  def test_clock_and_lanemask(self):
    out = np.zeros((64, 2), np.uint32)
    body = """
mov.u32 %r0, %tid.x;
mov.u32 %r1, %clock;
mov.u32 %r2, %lanemask_lt;
add.u32 %r3, %r0, %r0;
mov.u32 %r4, %clock;
sub.u32 %r5, %r4, %r1;
setp.gt.u32 %p1, %r5, 0;
selp.u32 %r6, 1, 0, %p1;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 8;
add.s64 %rd3, %rd1, %rd2;
st.global.v2.u32 [%rd3], {%r2, %r6};"""
    run(kernel(body, ".param .u64 out"), [out], block=(64, 1, 1))
    lane = np.arange(64) % 32
    np.testing.assert_array_equal(out[:, 0], ((1 << lane) - 1).astype(np.uint32))
    assert (out[:, 1] == 1).all()   # the clock advances

def _py_prmt(x:int, y:int, s:int, mode:str|None) -> int:
  """prmt per the PTX ISA table: bytes {y, x} numbered 0..7 from x's low byte."""
  by = list(x.to_bytes(4, "little") + y.to_bytes(4, "little"))
  if mode is None:
    out = 0
    for i in range(4):
      nib = (s >> 4 * i) & 0xf
      v = by[nib & 7]
      out |= ((0xff if v & 0x80 else 0) if nib & 8 else v) << 8 * i
    return out
  c = s & 3
  sel = {"f4e": [c, c + 1, c + 2, c + 3], "b4e": [c, c - 1, c - 2, c - 3], "rc8": [c] * 4, "ecl": [c, max(c, 1), max(c, 2), 3],
         "ecr": [0, min(c, 1), min(c, 2), c], "rc16": [2 * (c & 1), 2 * (c & 1) + 1] * 2}[mode]
  return sum(by[k % 8] << 8 * i for i, k in enumerate(sel))

@pytest.mark.parametrize("mode", ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
def test_prmt_modes(mode):
  a, b = u32(), u32()
  s = np.arange(32, dtype=np.uint32) % 4
  got = binop(f"prmt.b32.{mode} %r4, %r1, %r2, %r3;", a, b, s)
  np.testing.assert_array_equal(got, np.array([_py_prmt(int(x), int(y), int(z), mode) for x, y, z in zip(a, b, s)], np.uint32))

def test_global_atomics_bitwise_inc_and_64bit():
  cells = np.array([0, 0xffffffff, 0, 0, 5, 0], np.uint32)
  wide = np.zeros(1, np.uint64)
  body = """
mov.u32 %r0, %tid.x;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in0];
mov.u32 %r1, 1;
shl.b32 %r2, %r1, %r0;
atom.global.or.b32 %r3, [%rd1], %r2;
not.b32 %r4, %r2;
atom.global.and.b32 %r3, [%rd1+4], %r4;
atom.global.xor.b32 %r3, [%rd1+8], %r0;
atom.global.inc.u32 %r3, [%rd1+12], 9;
atom.global.max.s32 %r3, [%rd1+16], %r0;
red.global.add.u32 [%rd1+20], %r0;
cvt.u64.u32 %rd3, %r0;
shl.b64 %rd3, %rd3, 32;
atom.global.add.u64 %rd4, [%rd2], %rd3;"""
  run(kernel(body, ".param .u64 out, .param .u64 in0"), [cells, wide])
  x = 0
  for t in range(32): x ^= t
  np.testing.assert_array_equal(cells, [0xffffffff, 0, x, 32 % 10, 31, sum(range(32))])
  assert int(wide[0]) == (sum(range(32)) << 32) % 2**64

def test_generic_shared_pointers_across_ctas():
  """cvta.shared makes generic pointers into each CTA's own shared memory; generic ld/st (also under a guard) use them."""
  out = np.zeros(4 * 32, np.uint32)
  body = """
.shared .align 4 .b32 buf[32];
mov.u32 %r0, %tid.x;
mov.u32 %r1, %ctaid.x;
mov.u64 %rd1, buf;
cvta.shared.u64 %rd2, %rd1;
mul.wide.u32 %rd3, %r0, 4;
add.s64 %rd4, %rd2, %rd3;
mad.lo.u32 %r2, %r1, 100, %r0;
st.u32 [%rd4], %r2;
bar.sync 0;
xor.b32 %r3, %r0, 31;
mul.wide.u32 %rd5, %r3, 4;
add.s64 %rd6, %rd2, %rd5;
and.b32 %r4, %r0, 1;
setp.eq.u32 %p1, %r4, 1;
mov.u32 %r5, 7;
@%p1 ld.u32 %r5, [%rd6];
ld.param.u64 %rd7, [out];
mad.lo.u32 %r6, %r1, 32, %r0;
mul.wide.u32 %rd8, %r6, 4;
add.s64 %rd9, %rd7, %rd8;
st.u32 [%rd9], %r5;"""
  run(kernel(body, ".param .u64 out"), [out], grid=(4, 1, 1))
  c, t = np.arange(128) // 32, np.arange(128) % 32
  np.testing.assert_array_equal(out, np.where(t % 2 == 1, c * 100 + (t ^ 31), 7))

# *** fused loads (compiler/ptx/backends/numpy_fuse.py): runs of loads off one base register read by one prefetch ***

LANE = "mov.u32 %r0, %tid.x;\nmov.u32 %r20, %ctaid.x;\nmov.u32 %r21, %ntid.x;\nmad.lo.s32 %r0, %r20, %r21, %r0;\n"
# eight float32 loads at [%rd5+0..28] (scalar, v2 and a b32 of the same size, out of order, an add between), stored to out[lane]
EIGHT = """
ld.global.f32 %f1, [%rd5+4];
ld.global.f32 %f0, [%rd5];
add.f32 %f8, %f0, %f1;
ld.global.v2.f32 {%f2, %f3}, [%rd5+8];
ld.global.b32 %r5, [%rd5+16];
ld.global.f32 %f5, [%rd5+20];
ld.global.v2.f32 {%f6, %f7}, [%rd5+24];
mul.wide.u32 %rd8, %r0, 36;
add.s64 %rd9, %rd4, %rd8;
st.global.f32 [%rd9], %f8;
st.global.v4.f32 [%rd9+4], {%f0, %f1, %f2, %f3};
st.global.b32 [%rd9+20], %r5;
st.global.v2.f32 [%rd9+24], {%f5, %f6};
st.global.f32 [%rd9+32], %f7;"""

def _eight_want(rows:np.ndarray) -> np.ndarray:
  return np.concatenate([(rows[:, 0] + rows[:, 1])[:, None], rows], axis=1)

class TestFusedLoads:
  def test_regular_stride(self):
    x = f32(512 * 8)
    out = np.zeros(512 * 9, np.float32)
    body = LANE + "mul.wide.u32 %rd0, %r0, 32;\nld.param.u64 %rd1, [in0];\nld.param.u64 %rd4, [out];\nadd.s64 %rd5, %rd1, %rd0;" + EIGHT
    src = kernel(body, ".param .u64 out, .param .u64 in0")
    from mockgpu.emulators.ptx import translate_module
    assert [translate_module(src, masked=m).count("ld_rows") for m in (False, True)] == [1, 1]   # one cluster, in each variant
    run(src, [out, x], grid=(4, 1, 1), block=(128, 1, 1))
    np.testing.assert_array_equal(out.view(np.uint32), _eight_want(x.reshape(512, 8)).view(np.uint32).ravel())

  def test_gathered_rows_and_masked_block(self):
    """Lane i reads row perm[i] (no regular stride: a take of rows); lanes below 100 branch away (the masked variant)."""
    x, perm = f32(512 * 8), rng.permutation(512).astype(np.uint32)
    out = np.zeros(512 * 9, np.float32)
    body = LANE + """mul.wide.u32 %rd0, %r0, 4;
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd2, [in1];
ld.param.u64 %rd4, [out];
add.s64 %rd6, %rd2, %rd0;
ld.global.u32 %r6, [%rd6];
mul.wide.u32 %rd7, %r6, 32;
add.s64 %rd5, %rd1, %rd7;
setp.lt.u32 %p1, %r0, 100;
@%p1 bra $L_end;""" + EIGHT + "\n$L_end:"
    run(kernel(body, ".param .u64 out, .param .u64 in0, .param .u64 in1"), [out, x, perm], grid=(4, 1, 1), block=(128, 1, 1))
    want = _eight_want(x.reshape(512, 8)[perm])
    want[:100] = 0
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32).ravel())

  def test_store_or_base_write_between_loads_ends_the_cluster(self):
    """A load after a store to its address sees the stored value; after the base register moves, the new address."""
    x = np.arange(512 * 4, dtype=np.uint32)
    out = np.zeros(512 * 4, np.uint32)
    body = LANE + """mul.wide.u32 %rd0, %r0, 16;
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd4, [out];
add.s64 %rd5, %rd1, %rd0;
add.s64 %rd9, %rd4, %rd0;
ld.global.u32 %r1, [%rd5];
ld.global.u32 %r2, [%rd5+4];
st.global.u32 [%rd5+8], %r1;
ld.global.u32 %r3, [%rd5+8];
ld.global.u32 %r4, [%rd5+12];
add.s64 %rd5, %rd5, 4;
ld.global.u32 %r5, [%rd5+8];
st.global.v4.u32 [%rd9], {%r2, %r3, %r4, %r5};"""
    run(kernel(body, ".param .u64 out, .param .u64 in0"), [out, x], grid=(4, 1, 1), block=(128, 1, 1))
    want = np.arange(512 * 4, dtype=np.uint32).reshape(512, 4)
    np.testing.assert_array_equal(out.reshape(512, 4), np.stack([want[:, 1], want[:, 0], want[:, 3], want[:, 3]], axis=1))

  def test_far_offsets_are_read_as_a_group(self):
    """Loads off one base too far apart for a cluster (a matmul's rows), one type and width each, are read by one
    ld_group: v4 loads at -1024, 0 and +1024 bytes, b32 loads at +2048 and +3072; lanes below 100 branch away."""
    x = f32(4096)
    out = np.zeros(512 * 14, np.float32)
    body = LANE + """mul.wide.u32 %rd0, %r0, 16;
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd4, [out];
add.s64 %rd5, %rd1, %rd0;
add.s64 %rd5, %rd5, 4096;
setp.lt.u32 %p1, %r0, 100;
@%p1 bra $L_end;
ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd5];
ld.global.b32 %r5, [%rd5+2048];
ld.global.v4.f32 {%f4, %f5, %f6, %f7}, [%rd5+1024];
ld.global.v4.f32 {%f8, %f9, %f10, %f11}, [%rd5+-1024];
ld.global.b32 %r6, [%rd5+3072];
mul.wide.u32 %rd8, %r0, 56;
add.s64 %rd9, %rd4, %rd8;
st.global.v4.f32 [%rd9], {%f0, %f1, %f2, %f3};
st.global.v4.f32 [%rd9+16], {%f4, %f5, %f6, %f7};
st.global.v4.f32 [%rd9+32], {%f8, %f9, %f10, %f11};
st.global.v2.b32 [%rd9+48], {%r5, %r6};
$L_end:"""
    src = kernel(body, ".param .u64 out, .param .u64 in0")
    from mockgpu.emulators.ptx import translate_module
    # two groups in each variant: the kernel may diverge (a forward branch), so its module has both, and the masked one alone
    assert [translate_module(src, masked=m).count("ld_group(") for m in (False, True)] == [4, 2]
    run(src, [out, x], grid=(4, 1, 1), block=(128, 1, 1))
    w = x.view(np.uint32)
    base = 1024 + 4 * np.arange(512)[:, None]
    want = np.concatenate([w[base + np.arange(4)], w[base + 256 + np.arange(4)], w[base - 256 + np.arange(4)], w[base + 512], w[base + 768]], axis=1)
    want[:100] = 0
    np.testing.assert_array_equal(out.view(np.uint32).reshape(512, 14), want)

  def test_generic_shared_pointer_falls_back(self):
    """A cluster through a generic pointer into shared memory is not prefetched: the loads run one by one."""
    out = np.zeros(256 * 2, np.uint32)
    body = """
.shared .align 8 .b32 buf[512];
mov.u32 %r0, %tid.x;
mov.u64 %rd1, buf;
cvta.shared.u64 %rd2, %rd1;
mul.wide.u32 %rd3, %r0, 8;
add.s64 %rd4, %rd2, %rd3;
add.u32 %r1, %r0, 1000;
st.u32 [%rd4], %r0;
st.u32 [%rd4+4], %r1;
bar.sync 0;
ld.u32 %r2, [%rd4+4];
ld.u32 %r3, [%rd4];
ld.param.u64 %rd7, [out];
add.s64 %rd9, %rd7, %rd3;
st.global.v2.u32 [%rd9], {%r2, %r3};"""
    run(kernel(body, ".param .u64 out"), [out], block=(256, 1, 1))
    t = np.arange(256, dtype=np.uint32)
    np.testing.assert_array_equal(out.reshape(256, 2), np.stack([t + 1000, t], axis=1))
