"""The hardware-vs-manual errata of mockgpu/compiler/rdna/errata.py, one test per entry that is modelled, on both
executor paths. The anchor values are results read on real RDNA3; the generated cases use a reference written here
(numpy float16 addition is correctly rounded, as the hardware's f16 add is: exact comparison)."""
from __future__ import annotations
import math, struct
from fractions import Fraction
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC_LO
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.compiler.rdna.errata import ERRATA, EVIDENCE_KINDS
from hypothesis import given, settings, strategies as st
from support.rdna_errata import UINT, div_scale, div_scale_lanes, edge_floats, f16, f32, lanes

PATHS = ["numpy", "native"]
rng = np.random.default_rng(0)  # reseeded from each test's node id (conftest)

@pytest.fixture(autouse=True)
def _restore_env(monkeypatch): monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "1")

@pytest.mark.parametrize("path", PATHS)
def test_true16_e32(path):
  # anchor (hardware): v_add_f16_e32 v2, v[128], v1 with v0=0x40003c00, v1=0x4500 -> 0x4700
  got = lanes([I.v_mov_b32_e32(v[0], 0x40003c00), I.v_mov_b32_e32(v[1], 0x4500), I.v_add_f16_e32(v[2], v[128], v[1])], path, True)
  assert (got == 0x4700).all()

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("seed", range(4))
def test_true16_e32_generated(path, seed):
  """Random halves: v2.hi = v3.hi + v4.lo via v_add_f16_e32 v[130], v[131], v4 (v2's low half kept)."""
  rng = np.random.default_rng(seed)
  x, y, keep = (int(b) for b in rng.integers(0, 0x7c00, 3))  # finite f16 bit patterns
  a, b = np.array([x], np.uint16).view(np.float16)[0], np.array([y], np.uint16).view(np.float16)[0]
  want = int(np.array([a + b], np.float16).view(np.uint16)[0]) << 16 | keep
  got = lanes([I.v_mov_b32_e32(v[3], x << 16 | 0x1234), I.v_mov_b32_e32(v[4], 0xabcd0000 | y), I.v_mov_b32_e32(v[2], keep),
               I.v_add_f16_e32(v[130], v[131], v[4])], path, True)
  assert (got == want).all(), (hex(int(got[0])), hex(want))

@pytest.mark.parametrize("path", PATHS)
def test_vop3p_inline_constant(path):
  """On both paths (the C backend runs VOP3P now, asserted)."""
  # anchor (hardware): v_pk_add_u16 v1, v0=0x00030005, 2.0, op_sel_hi=3 -> 0x40030005 (the f32 pattern 0x40000000)
  got = lanes([I.v_mov_b32_e32(v[5], 0x00030005), I.v_pk_add_u16(v[2], v[5], 2.0, opsel_hi=3, opsel_hi2=1)], path, True)
  assert (got == 0x40030005).all()
  # float packed op: the f16 constant in bits 15:0, high half 0 -> the high lane adds 0
  got = lanes([I.v_mov_b32_e32(v[5], 0x3c003c00), I.v_pk_add_f16(v[2], v[5], 2.0, opsel_hi=3, opsel_hi2=1)], path, True)
  assert (got == 0x3c004200).all()  # hi 1.0 + 0, lo 1.0 + 2.0 = 3.0 (0x4200)

@pytest.mark.parametrize("path", PATHS)
def test_writelane_constant_lane(path):
  """A constant lane index (a 0-d lane mask in the numpy backend; one lane's store in C): the manual's behaviour,
  a regression test (the 0-d lane mask crashed runtime.unpack once), not an erratum."""
  got = lanes([I.v_mov_b32_e32(v[2], 7), I.s_mov_b32(s[8], 99), I.v_writelane_b32(v[2], s[8], 5)], path, True)
  assert got[5] == 99 and (np.delete(got, 5) == 7).all()

def test_table_names_its_tests():
  """Every erratum marked modelled names a test that exists (here or in the named file)."""
  here = globals()
  for e in ERRATA:
    assert e.status in ("fixed", "numpy", "open")
    if e.status != "open":
      assert e.test, e.id
      if "::" not in e.test: assert e.test in here, (e.id, e.test)

def test_every_erratum_states_its_evidence():
  """Each record says what it rests on: a hardware reading with its source, LLVM's code, or nothing (unverified),
  with the reason in words; a departure from the manual, not the manual's own behaviour."""
  for e in ERRATA:
    kind, _, why = e.evidence.partition(": ")
    assert kind in EVIDENCE_KINDS and len(why) > 20, (e.id, e.evidence)
    assert e.manual != e.hardware, f"{e.id}: hardware as the manual says is not an erratum"
  assert not {"bitset-rmw", "ds-storexchg-rtn", "writelane-const-lane"} & {e.id for e in ERRATA}

@pytest.mark.parametrize("path", PATHS)
def test_ds_storexchg_rtn_returns_old(path):
  """The manual's behaviour (a regression test, not an erratum).
  ds_storexchg_rtn_b32: each lane swaps v3 into LDS[4*lane] and gets the old word (here 1000+lane, written
  first); both paths run it (asserted). Then v2 = the old value, and the reloaded LDS word is the new one (checked
  through v2 of a second kernel form below)."""
  pre = [I.v_lshlrev_b32_e32(v[6], 2, v[0]), I.v_add_nc_u32_e32(v[7], 1000, v[0]),
         I.ds_store_b32(addr=v[6], data0=v[7]), I.s_waitcnt(simm16=0),
         I.v_add_nc_u32_e32(v[3], 5000, v[0]), I.ds_storexchg_rtn_b32(vdst=v[2], addr=v[6], data0=v[3]), I.s_waitcnt(simm16=0)]
  old = lanes(pre, path, True)
  assert (old == 1000 + np.arange(32)).all()
  new = lanes(pre + [I.ds_load_b32(vdst=v[2], addr=v[6]), I.s_waitcnt(simm16=0)], path, True)
  assert (new == 5000 + np.arange(32)).all()

@pytest.mark.parametrize("path", PATHS)
def test_mov_not_b16_true16(path):
  """v_mov_b16 / v_not_b16 (VOP1; pseudocode D0.b16 = S0.b16, D0.u16 = ~S0.u16) with true16 halves: v2.hi = v3.lo,
  then v2.lo = ~v3.hi; the other half of v2 keeps its value."""
  got = lanes([I.v_mov_b32_e32(v[3], 0x1234abcd), I.v_mov_b32_e32(v[2], 0x55556666),
               I.v_mov_b16_e32(v[130], v[3]), I.v_not_b16_e32(v[2], v[131])], path, True)
  assert (got == (0xabcd << 16 | (~0x1234 & 0xffff))).all(), hex(int(got[0]))

# *** true16 compares, the division helpers, omod, IEEE mode ***


def f32v(b:int) -> float: return struct.unpack("<f", struct.pack("<I", b))[0]

def round_f32(q:Fraction) -> int:
  """An exact rational rounded to float32 (nearest even, subnormals included) as bits: numpy rounds the float64 of
  the exact quotient, exact where that float64 is not itself a float32 midpoint, which the inputs below avoid."""
  return int(np.float32(float(q)).view(np.uint32))

@pytest.mark.parametrize("path", PATHS)
def test_true16_vopc(path):
  """v_cmp_*_e32 with v[128+n]: the compare reads v[n]'s high half (errata true16-vopc). v0 = (lane << 16) | 7,
  v1 = 5: v_cmp_gt_u16_e32 vcc, v[128], v1 is lane > 5 (the low half 7 > 5 would set every lane); then
  v_cmp_lt_f16_e32 vcc, v1, v[131] with v3.hi = 2.0 and v1 = 1.0: true in every lane."""
  body = [I.v_lshlrev_b32_e32(v[0], 16, v[0]), I.v_or_b32_e32(v[0], 7, v[0]), I.v_mov_b32_e32(v[1], 5),
          I.v_cmp_gt_u16_e32(v[128], v[1]), I.v_cndmask_b32_e64(v[2], 0, 1, VCC_LO)]
  got = lanes(body, path, True)
  np.testing.assert_array_equal(got, (np.arange(32) > 5).astype(np.uint32))
  body = [I.v_mov_b32_e32(v[3], f16(2.0) << 16 | f16(0.5)), I.v_mov_b32_e32(v[1], f16(1.0)),
          I.v_cmp_lt_f16_e32(v[1], v[131]), I.v_cndmask_b32_e64(v[2], 0, 1, VCC_LO)]
  assert (lanes(body, path, True) == 1).all()  # 1.0 < v3.lo (0.5) would be false

def fmas_reference(a:float, b:float, c:float, vcc:bool) -> int:
  """v_div_fmas_f32 as hardware computes it (errata div-fmas-scale), written from the record: fma rounded once,
  times 2^64 when c's biased exponent is above 127 and VCC is set, 2^-64 when it is not above."""
  exact = Fraction(a) * Fraction(b) + Fraction(c)
  if vcc: exact *= Fraction(2) ** (64 if (f32(c) >> 23 & 0xff) > 127 else -64)
  return round_f32(exact)

# (S0, S1, S2): a quotient estimate c >= 2 (scaled up), a small one (scaled down, to a normal result), one whose
# scaled result is subnormal (rounded once: rounding the fma first and then scaling gives another last bit), and
# c = 2.0 exactly, the smallest biased exponent above 127
FMAS_CASES = [(1.5, 3.0, 5.0), (0.75, 0.5, 0.25), (float.fromhex("0x1.c079a8p-35"), float.fromhex("0x1.85ffd0p-35"), 0.0),
              (1.0, 1.0, 2.0)]

@pytest.mark.parametrize("path", PATHS)
def test_div_fmas_scale(path):
  """errata div-fmas-scale, f32 on both paths: VCC set in the even lanes."""
  for a, b, c in FMAS_CASES:
    body = [I.s_mov_b32(VCC_LO, 0x55555555), I.v_mov_b32_e32(v[3], f32(a)), I.v_mov_b32_e32(v[4], f32(b)),
            I.v_mov_b32_e32(v[5], f32(c)), I.v_div_fmas_f32(v[2], v[3], v[4], v[5])]
    got = lanes(body, path, True)
    assert got[0] == fmas_reference(a, b, c, True), (a, b, c, hex(int(got[0])))
    assert got[1] == fmas_reference(a, b, c, False), (a, b, c, hex(int(got[1])))
  # the subnormal case differs from the manual's order (round the fma, then scale): the test can tell them apart
  a, b, c = FMAS_CASES[2]
  twice = np.float32(np.float32(Fraction(a) * Fraction(b) + Fraction(c)) * np.float32(2.0 ** -64)).view(np.uint32)
  assert twice != fmas_reference(a, b, c, True)

def test_div_fmas_scale_f64():
  """errata div-fmas-scale, f64 (numpy only: the C backend has no f64 fma): 2^+-128 by S2's exponent above 1023."""
  for a, b, c, k in ((1.5, 3.0, 5.0, 128), (0.75, 0.5, 0.25, -128), (1.0 + 2.0 ** -52, 1.0 + 2.0 ** -51, 2.0 ** -900, -128)):
    regs = [I.s_mov_b32(VCC_LO, -1)]
    for r, x in zip((4, 6, 10), (a, b, c)):  # v9 holds the store address
      lo, hi = struct.unpack("<II", struct.pack("<d", x))
      regs += [I.v_mov_b32_e32(v[r], lo), I.v_mov_b32_e32(v[r + 1], hi)]
    got = lanes(regs + [I.v_div_fmas_f64(v[2:3], v[4:5], v[6:7], v[10:11])], "numpy", False, n=2)
    want = (Fraction(a) * Fraction(b) + Fraction(c)) * Fraction(2) ** k
    value = struct.unpack("<d", struct.pack("<II", int(got[0, 0]), int(got[0, 1])))[0]
    assert value == float(want), (a, b, c, value, float(want))


@pytest.mark.parametrize("path", PATHS)
def test_div_scale_vcc(path):
  """errata div-scale-vcc: VCC for a zero denominator (both calls), and for a denormal or tiny denominator in its own
  call (S0 = S1, not S2); the numerator's call keeps the pseudocode's VCC (LLVM reads that one)."""
  den = f32v(0x00000400)                                  # a denormal denominator (2^-139)
  assert div_scale(path, 1.0, 0.0, 1.0) == (0x7fc00000, 1)   # zero denominator: NaN, VCC (the pseudocode: 0)
  # exponent gap >= 96: the denominator's call scales it, VCC in both calls (the pseudocode's own branch)
  assert div_scale(path, den, den, 1.0) == (f32(f32v(0x400) * 2.0 ** 64), 1)
  assert div_scale(path, 1.0, den, 1.0) == (f32(1.0), 1)
  # a denormal denominator, small gap: both scaled by 2^64 (the quotient unchanged); VCC in the denominator's call
  num = 2.0 ** -120
  assert div_scale(path, den, den, num) == (f32(f32v(0x400) * 2.0 ** 64), 1)   # the pseudocode: VCC 0
  assert div_scale(path, num, den, num) == (f32(2.0 ** -56), 0)
  # a tiny normal denominator (biased exponent 17 <= 23): D = S0, VCC in its own call only
  tiny, num = 2.0 ** -110, 2.0 ** -50
  assert div_scale(path, tiny, tiny, num) == (f32(tiny), 1)                     # the pseudocode: VCC 0
  assert div_scale(path, num, tiny, num) == (f32(num), 0)
  assert div_scale(path, 0.5, 0.5, 3.0) == (f32(0.5), 0)    # an ordinary denominator: D = S0, no VCC

@pytest.mark.parametrize("path", PATHS)
def test_div_scale_f64_cases(path):
  """v_div_scale_f64 by numpy_runtime.div_scale's rules (f64 thresholds inferred, no hardware values) on both paths."""
  def ds(*x):
    d, vcc = div_scale_lanes(path, *(np.full(32, xi, np.float64) for xi in x))
    assert (d == d[0]).all() and (vcc == vcc[0]).all()
    return int(d[0]), int(vcc[0])
  f64 = lambda x: int(np.array([x], np.float64).view(np.uint64)[0])
  assert ds(1.0, 0.0, 1.0) == (0x7ff8000000000000, 1)                       # zero denominator: the default NaN, VCC
  assert ds(2.0 ** -1000, 3.0, 2.0 ** -1000) == (f64(2.0 ** -872), 0)       # tiny numerator (exponent 23 <= 53), its call
  assert ds(3.0, 3.0, 2.0 ** -1000) == (f64(3.0 * 2.0 ** 128), 1)           # ... and the denominator's call: VCC
  assert ds(2.0 ** 1023, 2.0 ** 1023, 1.0) == (f64(2.0 ** 895), 1)          # 1/S1 and S2/S1 denormal: scaled down
  assert ds(1.0, 2.0 ** 1023, 1.0) == (f64(1.0), 1)
  assert ds(2.0 ** 100, 2.0 ** 1023, 2.0 ** 100) == (f64(2.0 ** -28), 0)    # 1/S1 denormal only: S0 scaled down
  assert ds(1.5, 3.0, 1.5) == (f64(1.5), 0)                                  # an ordinary quotient

def _llvm_calls(t, den:np.ndarray, num:np.ndarray, other:np.ndarray, which:np.ndarray) -> tuple[np.ndarray, ...]:
  """(S0, S1, S2) per lane: S0 the denominator's bits (which 0), the numerator's (1, LLVM's two calls) or other's."""
  u = [x.view(UINT[t]) for x in (den, num, other)]
  return np.where(which == 0, u[0], np.where(which == 1, u[1], u[2])).view(t), den, num

def _same_div_scale(t, s0, s1, s2):
  """Both paths' D bits and VCC over the lanes: equal (NaNs bit for bit); returns the numpy path's."""
  want, got = div_scale_lanes("numpy", s0, s1, s2), div_scale_lanes("native", s0, s1, s2)
  differ = np.nonzero((want[0] != got[0]) | (want[1] != got[1]))[0]
  h = lambda x: hex(int(np.asarray(x).view(UINT[t])))
  assert not len(differ), [(h(s0[i]), h(s1[i]), h(s2[i]), hex(want[0][i]), int(want[1][i]), hex(got[0][i]), int(got[1][i]))
                           for i in differ[:5]]
  return want

# bits at the branches' edges: zeros, denormals, the smallest normal, biased exponents 23/24 (f32) and 53/54 (f64), 1,
# the largest finite and 2^1023 / 2^64, infinities, a quiet and two signalling NaNs
SPECIAL_BITS = {
  "f32": [0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x0b800000, 0x0c000000, 0x3f800000, 0xbfc00000, 0x7f7fffff, 0x5f800000,
          0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffa00005],
  "f64": [0, 1 << 63, 1, 0x800fffffffffffff, 0x0010000000000000, 53 << 52, 54 << 52, 0x3ff0000000000000, 0xbff8000000000000,
          0x7fefffffffffffff, 0x7fe0000000000000, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000,
          0x7ff0000000000001, 0xfff4000000000005]}

@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_div_scale_same_bits_numpy_and_c(ty):
  """prelude.c's div_scale32/64 against numpy_runtime.div_scale, bit for bit: every triple of SPECIAL_BITS (4096
  lanes), and 2048 edge-heavy lanes (denormals, zeros, infinities, NaNs, exponents at the tiny and huge thresholds),
  S0 as LLVM's two calls pass it or independent."""
  t, n = {"f32": np.float32, "f64": np.float64}[ty], 32 * 64
  s0, s1, s2 = _llvm_calls(t, edge_floats(rng, t, n), edge_floats(rng, t, n), edge_floats(rng, t, n), rng.integers(0, 3, n))
  grid = [g.ravel().astype(UINT[t]).view(t) for g in np.meshgrid(*[np.array(SPECIAL_BITS[ty], np.uint64)] * 3, indexing="ij")]
  s0, s1, s2 = (np.concatenate([g, x]) for g, x in zip(grid, (s0, s1, s2)))
  d, vcc = _same_div_scale(t, s0, s1, s2)
  # the operands reach the branches: VCC both ways, NaN results, scaled results
  assert vcc.sum() > 100 and (vcc == 0).sum() > 100, vcc.sum()
  assert np.isnan(d.view(t)).sum() > 50 and (d != s0.view(UINT[t])).sum() > 100

def _bits(t):
  """A float's bits, edge-heavy: biased exponents at both ends and at the thresholds, mantissas 0, 1, all ones or any."""
  mant, top = (23, 255) if t is np.float32 else (52, 2047)
  exps = st.one_of(st.just(0), st.integers(0, 60), st.integers(top // 2 - 40, top // 2 + 40), st.integers(top - 60, top))
  mants = st.one_of(st.sampled_from([0, 1, (1 << mant) - 1]), st.integers(0, (1 << mant) - 1))
  return st.builds(lambda sg, e, m: sg << (mant + (8 if t is np.float32 else 11)) | e << mant | m, st.integers(0, 1), exps, mants)

def _lanes32(t):
  return st.lists(st.tuples(_bits(t), _bits(t), _bits(t), st.integers(0, 2)), min_size=32, max_size=32)

@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_div_scale_same_bits_hypothesis(ty):
  """As above, one wave of lanes an example (derandomized by the suite's hypothesis profile)."""
  t = {"f32": np.float32, "f64": np.float64}[ty]
  @settings(max_examples=25, deadline=None)
  @given(_lanes32(t))
  def check(lanes_):
    den, num, other, which = (np.array([x[k] for x in lanes_], np.uint64) for k in range(4))
    s0, s1, s2 = _llvm_calls(t, *(x.astype(UINT[t]).view(t) for x in (den, num, other)), which)
    _same_div_scale(t, s0, s1, s2)
  check()

@pytest.mark.parametrize("path", PATHS)
def test_div_fixup_nan_estimate(path):
  """errata div-fixup-nan: v_div_fixup_f32 with a NaN estimate S0 gives infinity with the quotient's sign (both paths:
  numpy_runtime.div_fixup and prelude.c's div_fixup32)."""
  for den, want in ((3.0, 0x7f800000), (-3.0, 0xff800000)):
    body = [I.v_mov_b32_e32(v[3], 0x7fc00001), I.v_mov_b32_e32(v[4], f32(den)), I.v_mov_b32_e32(v[5], f32(1.0)),
            I.v_div_fixup_f32(v[2], v[3], v[4], v[5])]
    assert (lanes(body, path, True) == want).all()

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("ieee", [True, False])
def test_omod_ieee(path, ieee):
  """errata omod-ieee: v_add_f32_e64 with omod *2 (omod=1) and /2 (omod=3) ignores omod in IEEE mode."""
  for omod, scale in ((1, 2.0), (3, 0.5)):
    body = [I.v_mov_b32_e32(v[3], f32(1.5)), I.v_add_f32_e64(v[2], v[3], v[3], omod=omod)]
    want = f32(3.0 if ieee else 3.0 * scale)
    assert (lanes(body, path, True, ieee=ieee) == want).all()

SNAN, QNAN = 0x7f800005, 0x7fc00005

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("ieee", [True, False])
def test_min_max_signalling_nan(path, ieee):
  """v_max_f32/v_min_f32/v_max3_f32/v_med3_f32 with a signalling NaN (v3; v4 = 2.0): in IEEE mode the NaN quieted
  (the manual's pseudocode), else the other operand; a quiet NaN gives the other operand in both modes. The
  three-operand forms nest v_min/v_max: v_med3(2, sNaN, 2) is v_min3 = v_min(v_min(2, sNaN) = qNaN, 2) = 2 in
  either mode, while v_med3(2, 2, sNaN) = v_min(2, sNaN) is the quieted NaN in IEEE mode."""
  ops = [(lambda: I.v_max_f32_e32(v[2], v[3], v[4]), True), (lambda: I.v_min_f32_e32(v[2], v[4], v[3]), True),
         (lambda: I.v_max3_f32(v[2], v[4], v[4], v[3]), True), (lambda: I.v_med3_f32(v[2], v[4], v[4], v[3]), True),
         (lambda: I.v_med3_f32(v[2], v[4], v[3], v[4]), False)]
  for op, quieted in ops:
    for nan, want in ((SNAN, QNAN if ieee and quieted else f32(2.0)), (QNAN, f32(2.0))):
      body = [I.v_mov_b32_e32(v[3], nan), I.v_mov_b32_e32(v[4], f32(2.0)), op()]
      got = lanes(body, path, True, ieee=ieee)
      assert (got == want).all(), (hex(nan), hex(int(got[0])))

@pytest.mark.parametrize("path", PATHS)
def test_med3_signed_zeros(path):
  """v_med3_f32(+0, -0, +inf) is v_max_f32(+0, -0) = +0 by the manual's pseudocode; (-0, +0, -1): the largest (+0)
  equals S0 (-0 == +0), so it is v_max_f32(+0, -1) = +0."""
  for a, b, c, want in ((0.0, -0.0, math.inf, 0), (-0.0, 0.0, -1.0, 0)):
    body = [I.v_mov_b32_e32(v[3], f32(a)), I.v_mov_b32_e32(v[4], f32(b)), I.v_mov_b32_e32(v[5], f32(c)),
            I.v_med3_f32(v[2], v[3], v[4], v[5])]
    assert (lanes(body, path, True) == want).all()

@pytest.mark.parametrize("path", PATHS)
def test_conversions_quiet_a_signalling_nan(path):
  """v_cvt_f16_f32 and v_cvt_f32_f16 of a signalling NaN give the quiet NaN with its payload's top bits (numpy's and
  C's float16 conversions would keep it signalling)."""
  got = lanes([I.v_mov_b32_e32(v[3], 0x7f802000), I.v_cvt_f16_f32_e32(v[2], v[3])], path, True)
  assert (got & 0xffff == 0x7e01).all(), hex(int(got[0]))
  got = lanes([I.v_mov_b32_e32(v[3], 0x7c01), I.v_cvt_f32_f16_e32(v[2], v[3])], path, True)
  assert (got == 0x7fc02000).all(), hex(int(got[0]))
