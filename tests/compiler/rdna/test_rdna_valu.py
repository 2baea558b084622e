"""Single RDNA3 ALU instructions on 32 lanes of random operands, checked against numpy references written here."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC_LO, EXEC_LO
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_valu import A, B, C, SH, U, _scalar, rng, run_op

pytestmark = pytest.mark.usefixtures("rdna_path")  # every test on the numpy and the native path
def f32s(): return (rng.standard_normal(32) * 10).astype(np.float32)
def i16(x): return (x & 0xffff).astype(np.uint16).view(np.int16).astype(np.int64)
def lo16(x): return (np.asarray(x).astype(np.int64) & 0xffff).astype(U)

INT_CASES = [
  (I.v_add_nc_u32_e32(v[4], v[2], v[3]), lambda a, b, c: a + b),
  (I.v_sub_nc_u32_e32(v[4], v[2], v[3]), lambda a, b, c: a - b),
  (I.v_subrev_nc_u32_e32(v[4], v[2], v[3]), lambda a, b, c: b - a),
  (I.v_mul_lo_u32(v[4], v[2], v[3]), lambda a, b, c: a * b),
  (I.v_mul_hi_u32(v[4], v[2], v[3]), lambda a, b, c: ((a.astype(np.uint64) * b) >> 32).astype(U)),
  (I.v_mul_hi_i32(v[4], v[2], v[3]), lambda a, b, c: ((a.view(np.int32).astype(np.int64) * b.view(np.int32)) >> 32).astype(U)),
  (I.v_lshlrev_b32_e32(v[4], v[2], v[3]), lambda a, b, c: b << (a & 31)),
  (I.v_lshrrev_b32_e32(v[4], v[2], v[3]), lambda a, b, c: b >> (a & 31)),
  (I.v_ashrrev_i32_e32(v[4], v[2], v[3]), lambda a, b, c: (b.view(np.int32) >> (a & 31).astype(np.int32)).view(U)),
  (I.v_xor_b32_e32(v[4], v[2], v[3]), lambda a, b, c: a ^ b),
  (I.v_bfe_u32(v[4], v[2], v[3], v[5]), lambda a, b, c: (a >> (b & 31)) & ((U(1) << (c & 31)) - U(1))),
  (I.v_bfi_b32(v[4], v[2], v[3], v[5]), lambda a, b, c: (a & b) | (~a & c)),
  (I.v_alignbit_b32(v[4], v[2], v[3], v[5]), lambda a, b, c: (((a.astype(np.uint64) << 32) | b) >> (c & 31).astype(np.uint64)).astype(U)),
  (I.v_lshl_or_b32(v[4], v[2], v[3], v[5]), lambda a, b, c: (a << (b & 31)) | c),
  (I.v_add3_u32(v[4], v[2], v[3], v[5]), lambda a, b, c: a + b + c),
  (I.v_max_i32_e32(v[4], v[2], v[3]), lambda a, b, c: np.maximum(a.view(np.int32), b.view(np.int32)).view(U)),
  (I.v_min_u32_e32(v[4], v[2], v[3]), lambda a, b, c: np.minimum(a, b)),
  (I.v_med3_i32(v[4], v[2], v[3], v[5]), lambda a, b, c: np.sort(np.stack([x.view(np.int32) for x in (a, b, c)]), 0)[1].view(U)),
  (I.v_perm_b32(v[4], v[2], v[3], v[5]), None),
  (I.v_clz_i32_u32_e32(v[4], v[2]), lambda a, b, c: np.array([32 - int(x).bit_length() if x else 0xffffffff for x in a], U)),
  (I.v_ctz_i32_b32_e32(v[4], v[2]), lambda a, b, c: np.array([(int(x) & -int(x)).bit_length() - 1 if x else 0xffffffff for x in a], U)),
  (I.v_bfrev_b32_e32(v[4], v[2]), lambda a, b, c: np.array([int(f"{int(x):032b}"[::-1], 2) for x in a], U)),
  (I.v_bcnt_u32_b32(v[4], v[2], v[3]), lambda a, b, c: np.array([bin(int(x)).count("1") for x in a], U) + b),
  (I.v_cndmask_b32_e64(v[4], v[2], v[3], s[10]), lambda a, b, c: np.where((0x5a5a5a5a >> np.arange(32)) & 1, b, a)),
  (I.v_max3_u16(v[4], v[2], v[3], v[5]), lambda a, b, c: np.maximum(np.maximum(a & 0xffff, b & 0xffff), c & 0xffff)),
  (I.v_min3_i16(v[4], v[2], v[3], v[5]), lambda a, b, c: lo16(np.minimum(np.minimum(i16(a), i16(b)), i16(c)))),
  (I.v_med3_i16(v[4], v[2], v[3], v[5]), lambda a, b, c: lo16(np.sort(np.stack([i16(a), i16(b), i16(c)]), 0)[1])),
  (I.v_med3_u16(v[4], v[2], v[3], v[5]), lambda a, b, c: np.sort(np.stack([a & 0xffff, b & 0xffff, c & 0xffff]), 0)[1]),
  (I.v_mad_u16(v[4], v[2], v[3], v[5]), lambda a, b, c: (a * b + c) & 0xffff),
]

@pytest.mark.parametrize("k", range(len(INT_CASES)))
def test_integer_op(k):
  op, ref = INT_CASES[k]
  a, b, c = A, B, C
  if op.op_name in ("V_LSHLREV_B32_E32", "V_LSHRREV_B32_E32", "V_ASHRREV_I32_E32"): a = SH
  if op.op_name == "V_BFE_U32": b, c = SH, SH
  if op.op_name == "V_PERM_B32":  # byte selectors 0-12 and 0xff, one per result byte
    sel = rng.integers(0, 14, (32, 4)).astype(U)
    sel[sel == 13] = 0xff
    c = (sel[:, 0] | sel[:, 1] << 8 | sel[:, 2] << 16 | sel[:, 3] << 24).astype(U)
    def ref(a, b, c):
      data = [(int(x) << 32 | int(y)).to_bytes(8, "little") for x, y in zip(a, b)]
      def byte(d, sel):
        if sel >= 13: return 0xff
        if sel == 12: return 0
        if sel >= 8: return 0xff * (d[(sel - 8) * 2 + 1] >> 7)
        return d[sel]
      return np.array([sum(byte(d, (int(cc) >> 8 * k) & 0xff) << 8 * k for k in range(4)) for d, cc in zip(data, c)], U)
  extra = [I.s_mov_b32(s[10], 0x5a5a5a5a)]
  np.testing.assert_array_equal(run_op(op, a, b, c, extra), ref(a, b, c))

def test_carry_out_and_mad_u64():
  op = I.v_mad_u64_u32(v[6:7], s[10], v[2], v[3], v[8:9])
  body = [I.v_mov_b32_e32(v[8], v[5]), I.v_mov_b32_e32(v[9], v[5]), op, I.v_mov_b32_e32(v[4], v[7])]
  got = run_op(body[-1], A, B, C, body[:-1])
  exact = A.astype(object) * B.astype(object) + ((C.astype(object) << 32) | C.astype(object))
  np.testing.assert_array_equal(got, np.array([(x >> 32) & 0xffffffff for x in exact], U))

def _zeros(a, b, r, neg):
  """IEEE max/min with +0 > -0: when both operands are zeros the sign comes from `neg`."""
  return np.where((a == 0) & (b == 0), np.where(neg, -0.0, 0.0), r)

def _default_nan(r, *srcs):
  """A NaN no source had is the ISA's default NaN, +qNaN 0x7fc00000 (the README's NaN table); a source's NaN propagates."""
  r = np.asarray(r, np.float32)
  made = np.isnan(r) & ~np.any([np.isnan(x) for x in srcs], axis=0)
  return np.where(made, np.uint32(0x7fc00000).view(np.float32), r)

def _to_i32(a):
  """Truncate toward zero, saturate, NaN -> 0."""
  return np.where(np.isnan(a), 0, np.clip(np.trunc(np.nan_to_num(a.astype(np.float64))), -2**31, 2**31 - 1)).astype(np.int32)

F1, F2, F3 = f32s(), f32s(), f32s()
F1[:4] = [np.nan, 0.0, -0.0, np.inf]
F2[:4] = [1.0, -0.0, 0.0, -np.inf]

FLOAT_CASES = [
  (I.v_add_f32_e32(v[4], v[2], v[3]), lambda a, b, c: a + b),
  (I.v_subrev_f32_e32(v[4], v[2], v[3]), lambda a, b, c: b - a),
  (I.v_mul_f32_e32(v[4], v[2], v[3]), lambda a, b, c: a * b),
  (I.v_max_f32_e32(v[4], v[2], v[3]), lambda a, b, c: _zeros(a, b, np.fmax(a, b), np.signbit(a) & np.signbit(b))),
  (I.v_min_f32_e32(v[4], v[2], v[3]), lambda a, b, c: _zeros(a, b, np.fmin(a, b), np.signbit(a) | np.signbit(b))),
  (I.v_floor_f32_e32(v[4], v[2]), lambda a, b, c: np.floor(a)),
  (I.v_rndne_f32_e32(v[4], v[2]), lambda a, b, c: np.rint(a)),
  (I.v_fract_f32_e32(v[4], v[2]), lambda a, b, c: np.where(np.isinf(a), np.nan, np.minimum(a - np.floor(a), np.float32(1 - 2**-24)))),
  (I.v_ldexp_f32(v[4], v[2], 5), lambda a, b, c: a * np.float32(32)),
  (I.v_cvt_i32_f32_e32(v[4], v[2]), lambda a, b, c: _to_i32(a).view(np.float32)),
  (I.v_cvt_f16_f32_e32(v[4], v[2]), lambda a, b, c: a.astype(np.float16).view(np.uint16).astype(U).view(np.float32)),
  (I.v_cvt_pk_rtz_f16_f32_e32(v[4], v[2], v[3]), None),
  (I.v_cmp_lt_f32_e64(s[10], v[2], v[3]), None),
]

@pytest.mark.parametrize("k", range(len(FLOAT_CASES)))
def test_float_op(k):
  op, ref = FLOAT_CASES[k]
  if op.op_name == "V_CMP_LT_F32_E64":
    got = run_op(I.v_mov_b32_e32(v[4], s[10]), F1, F2, F3, [op])
    assert got[0] == sum(1 << i for i in range(32) if F1[i] < F2[i])
    return
  got = run_op(op, F1, F2, F3).view(np.float32)
  if op.op_name == "V_CVT_PK_RTZ_F16_F32_E32":
    lo, hi = (got.view(U) & 0xffff).astype(np.uint16).view(np.float16), (got.view(U) >> 16).astype(np.uint16).view(np.float16)
    for x, h in ((F1, lo), (F2, hi)):
      fin = np.isfinite(x)
      assert (np.abs(h[fin].astype(np.float64)) <= np.abs(x[fin].astype(np.float64))).all()  # toward zero
      assert (np.abs(x[fin] - h[fin]) < np.spacing(np.abs(h[fin]).astype(np.float16)).astype(np.float32) + 1e-30).all()
    return
  with np.errstate(all="ignore"):
    want = np.asarray(ref(F1, F2, F3), np.float32)
    if op.op_name not in ("V_CVT_I32_F32_E32", "V_CVT_F16_F32_E32"): want = _default_nan(want, F1, F2, F3)  # f32 results only
    np.testing.assert_array_equal(got.view(U), want.view(U))

def test_signed_zero_max():
  got = run_op(I.v_max_f32_e32(v[4], v[2], v[3]), F1, F2, F3).view(np.float32)
  assert not np.signbit(got[1]) and not np.signbit(got[2])  # max(+0, -0) = +0 either way round
  got = run_op(I.v_min_f32_e32(v[4], v[2], v[3]), F1, F2, F3).view(np.float32)
  assert np.signbit(got[1]) and np.signbit(got[2])

H1 = (rng.standard_normal(64) * 4).astype(np.float16).view(np.uint32)
H2 = (rng.standard_normal(64) * 4).astype(np.float16).view(np.uint32)
H3 = (rng.standard_normal(64) * 4).astype(np.float16).view(np.uint32)

def _halves(x): return x.view(np.float16).reshape(32, 2).astype(np.float64)

def test_packed_f16():
  got = run_op(I.v_pk_fma_f16(v[4], v[2], v[3], v[5]), H1, H2, H3)
  ref = (_halves(H1) * _halves(H2) + _halves(H3)).astype(np.float16)  # exact in float64, one rounding
  np.testing.assert_array_equal(got.view(np.float16).reshape(32, 2), ref)
  got = run_op(I.v_pk_add_f16(v[4], v[2], v[3]), H1, H2, H3)
  np.testing.assert_array_equal(got.view(np.float16).reshape(32, 2), (_halves(H1) + _halves(H2)).astype(np.float16))

def test_dot2_f32_f16_follows_pseudocode():
  got = run_op(I.v_dot2_f32_f16(v[4], v[2], v[3], v[5]), H1, H2, F3).view(np.float32)
  p = (_halves(H1) * _halves(H2)).astype(np.float32)  # f16 products are exact in f32
  np.testing.assert_array_equal(got, (F3 + p[:, 0]) + p[:, 1])

def test_fma_mix_f32_from_f16_halves():
  op = I.v_fma_mix_f32(v[4], v[2], v[3], v[5], opsel=0b010, opsel_hi=0b11, opsel_hi2=0)  # a.lo * b.hi + c (f32)
  got = run_op(op, H1, H2, F3).view(np.float32)
  exact = _halves(H1)[:, 0] * _halves(H2)[:, 1] + F3.astype(np.float64)
  np.testing.assert_array_equal(got, exact.astype(np.float32))

def test_readfirstlane_and_saveexec_scc():
  # v4 = readfirstlane(v2) broadcast, after EXEC is cut to lanes >= 5
  body = [I.v_cmp_le_u32_e32(5, v[0]), I.s_and_saveexec_b32(s[10], VCC_LO), I.v_readfirstlane_b32_e32(s[11], v[2]),
          I.s_mov_b32(EXEC_LO, s[10])]
  got = run_op(I.v_mov_b32_e32(v[4], s[11]), A, B, C, body)
  np.testing.assert_array_equal(got, np.full(32, A[5]))

def test_scalar_ops_and_scc():
  assert _scalar(I.s_mov_b32(s[8], 0xabcd1234), I.s_bfe_u32(s[12], s[8], (8 << 16) | 4)) == (0xabcd1234 >> 4) & 0xff
  # 64-bit shift across the halves, then select on SCC (set: result non-zero)
  assert _scalar(I.s_mov_b32(s[8], 0x80000001), I.s_mov_b32(s[9], 0), I.s_lshl_b64(s[8:9], s[8:9], 1),
                 I.s_cselect_b32(s[12], s[9], 77)) == 1
  # s_min_i32 sets SCC when S0 < S1 (signed)
  assert _scalar(I.s_mov_b32(s[8], 0xffffffff), I.s_min_i32(s[12], s[8], 3), I.s_cselect_b32(s[12], s[12], 99)) == 0xffffffff
  # add with carry chain: 0xffffffff + 1 carries into the high word
  assert _scalar(I.s_mov_b32(s[8], 0xffffffff), I.s_add_u32(s[10], s[8], 1), I.s_addc_u32(s[12], 5, 0)) == 6
  assert _scalar(I.s_mov_b32(s[8], 0x89abcdef), I.s_mul_hi_u32(s[12], s[8], s[8])) == (0x89abcdef ** 2) >> 32
  assert _scalar(I.s_movk_i32(s[12], 0xfff0), I.s_cmpk_lt_i32(s[12], 0), I.s_cselect_b32(s[12], 1, 2)) == 1
