"""RDNA4 (gfx1201): each delta of mockgpu/compiler/rdna/semantics/rdna4.py on hand-assembled kernels (tinygrad's RDNA4 DSL),
against references written here from the RDNA4 ISA pseudocode (tinygrad.runtime.autogen.amd.rdna4.str_pcode), not
from the tables under test. A test with a `path` parameter runs on the numpy path and on the C path and asserts which
one ran; the ones without run on the numpy path only, where the C translation declines the instructions (VOP3P WMMA,
scratch, the f16 rounding ops and fma_f16 in C) or the kernel raises before C could run."""
from __future__ import annotations
from fractions import Fraction
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, ttmp
from tinygrad.runtime.autogen.amd.rdna4 import ins as I
from tinygrad.runtime.autogen.amd.rdna3 import ins as I3
from mockgpu.errors import InvalidInstruction, UnsupportedInstruction
from mockgpu.compiler.rdna.semantics import rdna4
from support.rdna_harness import aligned
from support.rdna_isa import run as run_isa, RSRC2
from support.rdna4 import bits_of, f16, f32, kernel, round_exact, run, scalar_cases, store_lane0

PATHS = ["numpy", "native"]

def ieee(fn, *xs):
  with np.errstate(all="ignore"): return fn(*xs)

def is_nan(x) -> bool: return bool(np.isnan(x))
def is_snan(x, quiet_bit:int) -> bool: return is_nan(x) and not bits_of(x) & quiet_bit
QUIET = {np.float32: 0x400000, np.float16: 0x200}

def arith(fn):
  """An IEEE arithmetic op of finite values computed exactly; inf/NaN cases from the host's IEEE arithmetic (which
  only the NaN payload could make differ: those results are compared as NaN only)."""
  def ref(t, *xs):
    if all(np.isfinite(x) for x in xs) and (exact:=fn(*map(Fraction, map(float, xs)))) != 0: return round_exact(exact, t)
    # an exact zero takes its sign from IEEE's rules, which the host's float64 arithmetic follows (exactly, here)
    with np.errstate(all="ignore"): return bits_of(t(fn(*(np.float64(x) for x in xs))))
  return ref

def minmax_num(t, a, b, is_max:bool) -> int:
  """S_MIN_NUM/S_MAX_NUM: a NaN operand gives the other one (both NaN: S0 quieted); +0 > -0."""
  if is_nan(a) and is_nan(b): return bits_of(a) | QUIET[t]
  if is_nan(a): return bits_of(b)
  if is_nan(b): return bits_of(a)
  pick_a = (a > b or (a == 0 and b == 0 and not np.signbit(a) and np.signbit(b))) if is_max else \
           (a < b or (a == 0 and b == 0 and np.signbit(a) and not np.signbit(b)))
  return bits_of(a if pick_a else b)

def minimum_maximum(t, a, b, is_max:bool) -> int:
  """S_MINIMUM/S_MAXIMUM (IEEE 754-2019): sNaN S0, sNaN S1, qNaN S0, qNaN S1 in that order (quieted), else the min/max."""
  q = QUIET[t]
  for x, cond in ((a, is_snan(a, q)), (b, is_snan(b, q)), (a, is_nan(a)), (b, is_nan(b))):
    if cond: return bits_of(x) | q
  return minmax_num(t, a, b, is_max)

def cvt_int(x, lo:int, hi:int) -> int:
  """f32_to_i32/f32_to_u32: NaN 0, truncation toward zero, saturated."""
  if is_nan(x): return 0
  if np.isinf(x): return (hi if x > 0 else lo) & 0xffffffff
  return max(lo, min(hi, int(Fraction(float(x))))) & 0xffffffff

def rtz_f16(x) -> int:
  """f32 -> f16 rounding toward zero (s_cvt_pk_rtz_f16_f32)."""
  if is_nan(x) or np.isinf(x): return bits_of(np.float16(x))
  with np.errstate(over="ignore"): h = np.float16(x)
  if not np.isfinite(h) or abs(Fraction(float(h))) > abs(Fraction(float(x))): h = np.nextafter(h, np.float16(0))
  return bits_of(h)

ARITH = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}

def float_row(op, t, ref, out:str, native:bool=True, exact_nan:bool=False, t1=None) -> dict:
  """A float SALU case: the instruction, its S0 (and S1) type, the reference of the result bits, the result kind
  (f32, f16, int, pk16: two f16), whether the C path covers it, and whether a NaN result's bits are specified (the
  min/max family's are; an arithmetic NaN's payload is not)."""
  return {"op": op, "t0": t, "t1": t1, "ref": ref, "out": out, "native": native, "exact_nan": exact_nan}

F32, F16 = np.float32, np.float16
FLOAT_SALU = {
  **{f"{n}_{w}": float_row(getattr(I, f"s_{n}_{w}"), t, (lambda fn, t: lambda a, b: arith(fn)(t, a, b))(fn, t), w, t1=t)
     for n, fn in ARITH.items() for w, t in (("f32", F32), ("f16", F16))},
  **{f"{n}_{w}": float_row(getattr(I, f"s_{n}_{w}"), t, (lambda t, mx, f: lambda a, b: f(t, a, b, mx))(t, n.startswith("max"), f),
                           w, exact_nan=True, t1=t)
     for n, f in (("min_num", minmax_num), ("max_num", minmax_num), ("minimum", minimum_maximum), ("maximum", minimum_maximum))
     for w, t in (("f32", F32), ("f16", F16))},
  **{f"{n}_{w}": float_row(getattr(I, f"s_{n}_{w}"), t, (lambda fn: lambda a, b: bits_of(ieee(fn, a)))(fn), w)
     for n, fn in (("ceil", np.ceil), ("floor", np.floor), ("trunc", np.trunc), ("rndne", np.rint)) for w, t in (("f32", F32), ("f16", F16))},
  "cvt_f32_i32": float_row(I.s_cvt_f32_i32, np.int32, lambda a, b: round_exact(Fraction(int(a)), F32), "f32"),
  "cvt_f32_u32": float_row(I.s_cvt_f32_u32, np.uint32, lambda a, b: round_exact(Fraction(int(a)), F32), "f32"),
  "cvt_i32_f32": float_row(I.s_cvt_i32_f32, F32, lambda a, b: cvt_int(a, -2**31, 2**31 - 1), "int"),
  "cvt_u32_f32": float_row(I.s_cvt_u32_f32, F32, lambda a, b: cvt_int(a, 0, 2**32 - 1), "int"),
  "cvt_f16_f32": float_row(I.s_cvt_f16_f32, F32, lambda a, b: round_exact(Fraction(float(a)), F16) if np.isfinite(a) and a != 0
                           else bits_of(np.float16(a)), "f16"),
  "cvt_f32_f16": float_row(I.s_cvt_f32_f16, F16, lambda a, b: bits_of(np.float32(a)), "f32"),
  "cvt_pk_rtz_f16_f32": float_row(I.s_cvt_pk_rtz_f16_f32, F32, lambda a, b: rtz_f16(a) | rtz_f16(b) << 16, "pk16", t1=F32),
}

SPECIAL32 = [0, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000, 0x1, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x7f800000,
             0xff800000, 0x7fc00000, 0xffc00000, 0x7fc12345, 0x7f800001, 0xff812345, 0x4b800001, 0x3dcccccd, 0x40400000,
             0x4effffff, 0x4f000000, 0xcf000001, 0x4f800000, 0xbf000000, 0x3f000000, 0x3fc00001, 0x40200000]
SPECIAL16 = [0, 0x8000, 0x3c00, 0xbc00, 0x3e00, 0x1, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7e55,
             0x7c01, 0xfd23, 0x2e66, 0x4200, 0x3800, 0x3c01, 0x4100]

def float_operands(t, n:int=160, seed:int=3) -> tuple[list[int], list[int]]:
  """S0, S1 bit patterns: every pair of a few special values, then random bits and random nearby values."""
  rng = np.random.default_rng(seed)
  if t is np.float16: special, width = SPECIAL16, 16
  elif t is np.float32: special, width = SPECIAL32, 32
  else:  # integer sources of the int -> float conversions
    fixed = [0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 0x1000001, 0xffffff7f, 16777217, 0x7fffffc0]
    return fixed + [int(x) for x in rng.integers(0, 2**32, n - len(fixed))], [0] * n
  pairs = [(a, b) for a in special[:12] for b in special[:12]] + [(a, b) for a in special for b in special[::3]]
  rand = [(int(x), int(y)) for x, y in rng.integers(0, 2**width, (n, 2))]
  near = [(int(x), int(x) ^ int(d)) for x, d in zip(rng.integers(0, 2**width, n), rng.integers(0, 16, n))]
  s0, s1 = zip(*(pairs + rand + near))
  return list(s0), list(s1)

CASES = [(name, path) for name, row in FLOAT_SALU.items() for path in (PATHS if row["native"] else ["numpy"])]

def operand(t, bits:int):
  if t is F16: return f16(bits & 0xffff)
  if t is F32: return f32(bits & 0xffffffff)
  return np.uint32(bits & 0xffffffff).view(t)

def result_ok(out:str, exact_nan:bool, got:int, want:int) -> bool:
  """got (the low SGPR) against the reference bits: a 16-bit result zero-extended (mockgpu's choice: the pseudocode
  writes D0.f16 and says nothing of bits 31:16); a NaN compared as a NaN unless its bits are specified."""
  if out == "pk16": return all(result_ok("f16", exact_nan, got >> sh & 0xffff, want >> sh & 0xffff) for sh in (0, 16))
  if out == "f16" and got >> 16: return False
  if out in ("f16", "f32") and not exact_nan and is_nan(operand(F16 if out == "f16" else F32, want)):
    return is_nan(operand(F16 if out == "f16" else F32, got))
  return got == want

@pytest.mark.parametrize("name,path", CASES)
def test_float_salu(name, path, monkeypatch):
  row = FLOAT_SALU[name]
  s0, s1 = float_operands(row["t0"])
  srcs = (s[12], s[14]) if row["t1"] is not None else (s[12],)
  d = scalar_cases([row["op"](s[20], *srcs)], s0, s1, path, monkeypatch)
  assert all(x >> 32 == 0x77777777 for x in d), "s[21] changed"
  bad = []
  for a, b, got in zip(s0, s1, d):
    want = row["ref"](operand(row["t0"], a), operand(row["t1"], b) if row["t1"] is not None else None)
    if not result_ok(row["out"], row["exact_nan"], got & 0xffffffff, want): bad.append((hex(a), hex(b), hex(got & 0xffffffff), hex(want)))
  assert not bad, f"{name}: {len(bad)} of {len(s0)} differ (S0, S1, got, want): {bad[:6]}"

def fma_operands(lo:int, hi:int, n:int=64, seed:int=5) -> list[int]:
  rng = np.random.default_rng(seed)
  return [int(x) for x in rng.integers(lo, hi, n)]

@pytest.mark.parametrize("path", PATHS)
def test_fmac_fmaak_fmamk_f32_round_once(path, monkeypatch):
  # s_fmac_f32 D = fma(S0, S1, D), s_fmaak_f32 D = fma(S0, S1, K), s_fmamk_f32 D = fma(S0, K, S1): one rounding
  a, b, c = fma_operands(0x3e000000, 0x41000000, seed=5), fma_operands(0x3e000000, 0x41000000, seed=6), fma_operands(0xbf000000, 0xc1000000, seed=7)
  k = 0x3fc00001
  fr = lambda x: Fraction(float(f32(x)))
  d = scalar_cases([I.s_mov_b32(s[20], s[13]), I.s_fmac_f32(s[20], s[12], s[14]), I.s_fmaak_f32(s[21], s[12], s[14], literal=k)],
                   [x | z << 32 for x, z in zip(a, c)], b, path, monkeypatch)
  assert [x & 0xffffffff for x in d] == [round_exact(fr(x) * fr(y) + fr(z), F32) for x, y, z in zip(a, b, c)]
  assert [x >> 32 for x in d] == [round_exact(fr(x) * fr(y) + fr(k), F32) for x, y in zip(a, b)]
  d = scalar_cases([I.s_fmamk_f32(s[20], s[12], s[14], literal=k)], a, b, path, monkeypatch)
  assert [x & 0xffffffff for x in d] == [round_exact(fr(x) * fr(k) + fr(y), F32) for x, y in zip(a, b)]

def test_fmac_f16_rounds_once(monkeypatch):
  # s_fmac_f16 D.f16 = fma(S0.f16, S1.f16, D.f16), numpy path (the C translation has no exact half fma)
  a, b, c = fma_operands(0x3000, 0x4800, seed=8), fma_operands(0x3000, 0x4800, seed=9), fma_operands(0xb000, 0xc800, seed=10)
  d = scalar_cases([I.s_mov_b32(s[20], s[13]), I.s_fmac_f16(s[20], s[12], s[14])], [x | z << 32 for x, z in zip(a, c)], b,
                   "numpy", monkeypatch)
  fr = lambda x: Fraction(float(f16(x)))
  assert [x & 0xffffffff for x in d] == [round_exact(fr(x) * fr(y) + fr(z), F16) for x, y, z in zip(a, b, c)]

VALU_MINMAX = {"v_min_num_f32": (lambda a, b: minmax_num(F32, a, b, False)), "v_max_num_f32": (lambda a, b: minmax_num(F32, a, b, True)),
               "v_minimum_f32": (lambda a, b: minimum_maximum(F32, a, b, False)), "v_maximum_f32": (lambda a, b: minimum_maximum(F32, a, b, True))}

@pytest.mark.parametrize("name", VALU_MINMAX)
@pytest.mark.parametrize("path", PATHS)
def test_valu_min_max_num_and_minimum_maximum(name, path, monkeypatch):
  # RDNA4's v_min_num/v_max_num (maximumNumber) and v_minimum/v_maximum (NaN-propagating) per lane, against the
  # pseudocode; v_max_num_f32 is a rename of no RDNA3 op (RDNA3's v_max_f32 quiets a signalling NaN operand)
  s0, s1 = float_operands(F32, n=64)
  n = -(-len(s0) // 32) * 32
  inp = aligned(8 * n, 256).view(np.uint32).reshape(n, 2)
  inp[:len(s0), 0], inp[:len(s0), 1] = s0, s1
  out = aligned(4 * n, 256).view(np.uint32)
  body = [I.s_lshl_b32(s[8], ttmp[9], 5), I.v_add_nc_u32_e32(v[1], s[8], v[0]), I.v_lshlrev_b32_e32(v[2], 3, v[1]),
          I.global_load_b64(vdst=v[4:5], vaddr=v[2:3], saddr=s[6:7], ioffset=0), I.s_wait_loadcnt(simm16=0),
          (getattr(I, name + "_e64", None) or getattr(I, name))(v[6], v[4], v[5]), I.v_lshlrev_b32_e32(v[2], 2, v[1]),
          I.global_store_b32(vaddr=v[2:3], vsrc=v[6], saddr=s[4:5], ioffset=0), I.s_endpgm()]
  run(kernel(*body), out, inp, path, monkeypatch, grid=(n // 32, 1, 1))
  bad = [(hex(a), hex(b), hex(int(g))) for a, b, g in zip(s0, s1, out) if int(g) != VALU_MINMAX[name](f32(a), f32(b))]
  assert not bad, f"{name}: {len(bad)} differ (S0, S1, got): {bad[:6]}"

@pytest.mark.parametrize("path", PATHS)
def test_float_salu_flushes_denormals_per_mode(path, monkeypatch):
  # FLOAT_DENORM_MODE_32 = flush (RSRC1 bits 17:16 = 0): denormal inputs and results are zero, as for the VALU
  s0, s1 = [0x00400000, 0x3f800000, 0x00800000], [0x3f800000, 0x00000001, 0x3f000000]
  d = scalar_cases([I.s_mul_f32(s[20], s[12], s[14])], s0, s1, path, monkeypatch, rsrc1=0x3 << 18)
  assert [x & 0xffffffff for x in d] == [0, 0, 0]  # 2^-127 * 1, 1 * 2^-149, 2^-126 * 0.5 = 2^-127

@pytest.mark.parametrize("path", PATHS)
def test_cvt_hi_f32_f16_reads_the_high_half(path, monkeypatch):
  s0 = [0x3c00abcd, 0xc500_0000, 0x7e00_3c00, 0x0001_ffff]
  d = scalar_cases([I.s_cvt_hi_f32_f16(s[20], s[12])], s0, [0] * 4, path, monkeypatch)
  want = [bits_of(np.float32(f16(x >> 16))) for x in s0]
  assert [x & 0xffffffff for x in d][:2] + [x & 0xffffffff for x in d][3:] == want[:2] + want[3:]
  assert is_nan(f32(d[2] & 0xffffffff))

def test_float_salu_is_not_rdna3():
  # gfx1100 has no float SALU (tinygrad's RDNA3 table lists RDNA3.5's): an RDNA3 kernel with s_add_f32 raises
  out = aligned(256, 256).view(np.uint32)
  code = [I3.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I3.s_waitcnt(simm16=0), I3.s_add_f32(s[8], s[9], 1.0), I3.s_endpgm()]
  with pytest.raises(InvalidInstruction, match=r"s_add_f32 .*RDNA3\.5 .* at PC 0x[0-9a-f]+"):
    run_isa(code, out)

# *** 64-bit SALU ***

@pytest.mark.parametrize("path", PATHS)
def test_add_sub_mul_u64(path, monkeypatch):
  rng = np.random.default_rng(9)
  M = (1 << 64) - 1
  s0 = [0, M, 1 << 63, 0xffffffff, 0x1_0000_0000] + [int(x) << 1 | 1 for x in rng.integers(0, 2**63, 59)]
  s1 = [0, 1, 1 << 63, 1, 0xffffffff] + [int(x) for x in rng.integers(0, 2**63, 59)]
  for op, ref in ((I.s_add_nc_u64, lambda a, b: (a + b) & M), (I.s_sub_nc_u64, lambda a, b: (a - b) & M),
                  (I.s_mul_u64, lambda a, b: (a * b) & M)):
    # SCC is set before and read after: the ops do not write it
    d = scalar_cases([I.s_cmp_eq_u32(s[12], s[12]), op(s[20:21], s[12:13], s[14:15]), I.s_cselect_b32(s[22], 1, 0),
                      I.s_add_co_u32(s[21], s[21], s[22]), I.s_add_co_ci_u32(s[20], s[20], 0)], s0, s1, path, monkeypatch)
    # s_add_co_u32 adds the SCC bit to the high word (its carry-out is 0 unless the high word is 0xffffffff, which
    # the s_add_co_ci_u32 then adds to the low word): a wrong SCC changes the result
    want = []
    for a, b in zip(s0, s1):
      r = ref(a, b)
      hi = (r >> 32) + 1
      want.append(((r & 0xffffffff) + (hi >> 32)) & 0xffffffff | (hi & 0xffffffff) << 32)
    assert d == want, op

# *** gfx12's architected workgroup IDs ***

@pytest.mark.parametrize("path", PATHS)
def test_workgroup_ids_in_ttmp9_and_ttmp7(path, monkeypatch):
  # grid 3 x 2 x 2, two waves a workgroup: each workgroup stores ttmp9 and ttmp7 at its own (x + 3 * (y + 2 * z))
  # computed from them, so a wrong ID moves or loses an entry
  out = aligned(8 * 12, 256).view(np.uint32).reshape(12, 2)
  out[:] = 0xdeadbeef
  body = [I.s_and_b32(s[8], ttmp[7], 0xffff), I.s_lshr_b32(s[9], ttmp[7], 16), I.s_lshl_b32(s[9], s[9], 1),
          I.s_add_co_u32(s[8], s[8], s[9]), I.s_mul_i32(s[8], s[8], 3), I.s_add_co_u32(s[8], s[8], ttmp[9]),
          I.s_lshl_b32(s[8], s[8], 3), I.s_mov_b32(s[9], 0), I.s_add_nc_u64(s[4:5], s[4:5], s[8:9]),
          I.v_mov_b32_e32(v[2], ttmp[9]), I.v_mov_b32_e32(v[3], ttmp[7]), *store_lane0((2, 3)), I.s_endpgm()]
  run(kernel(*body), out, None, path, monkeypatch, block=(40, 1, 1), grid=(3, 2, 2))
  want = [(x, y | z << 16) for z in range(2) for y in range(2) for x in range(3)]
  assert [tuple(map(int, r)) for r in out] == want

# *** SMEM ***

@pytest.mark.parametrize("path", PATHS)
def test_s_load_sub_dword_and_ioffset(path, monkeypatch):
  inp = aligned(64, 256).view(np.uint8)
  inp[:16] = [0x10, 0x81, 0x82, 0x83, 0x04, 0x05, 0xf6, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]
  out = aligned(4 * 32, 256).view(np.uint32)
  out[:] = 0xdeadbeef
  body = [I.s_load_u8(sdata=s[8], sbase=s[6:7], ioffset=1), I.s_load_i8(sdata=s[9], sbase=s[6:7], ioffset=1),
          I.s_load_u16(sdata=s[10], sbase=s[6:7], ioffset=2), I.s_load_i16(sdata=s[11], sbase=s[6:7], ioffset=2),
          I.s_load_i16(sdata=s[12], sbase=s[6:7], ioffset=7),  # odd: the low address bit is ignored (bytes 6, 7)
          I.s_mov_b32(s[16], 12), I.s_mov_b32(s[17], 0), I.s_add_nc_u64(s[18:19], s[6:7], s[16:17]),
          I.s_load_i8(sdata=s[13], sbase=s[18:19], ioffset=-6),  # a negative 24-bit offset: byte 6
          I.s_load_b96(sdata=s[20:22], sbase=s[18:19], ioffset=-12), I.s_wait_kmcnt(simm16=0),
          *(I.v_mov_b32_e32(v[2 + i], s[8 + i]) for i in range(6)), *(I.v_mov_b32_e32(v[8 + i], s[20 + i]) for i in range(3)),
          I.v_mov_b32_e32(v[1], 0), I.global_store_b128(vaddr=v[1:2], vsrc=v[2:5], saddr=s[4:5], ioffset=0),
          I.global_store_b64(vaddr=v[1:2], vsrc=v[6:7], saddr=s[4:5], ioffset=16),
          I.global_store_b96(vaddr=v[1:2], vsrc=v[8:10], saddr=s[4:5], ioffset=32), I.s_endpgm()]
  run(kernel(*body), out, inp.view(np.uint32), path, monkeypatch, block=(1, 1, 1))
  assert list(out[:6]) == [0x81, 0xffffff81, 0x8382, 0xffff8382, 0x07f6, 0xfffffff6]
  assert list(out[8:11]) == list(inp[:12].view(np.uint32))

# *** V_S_* scalar-result transcendentals ***

V_S = {"exp_f32": (I.v_s_exp_f32, np.exp2), "log_f32": (I.v_s_log_f32, np.log2), "rcp_f32": (I.v_s_rcp_f32, lambda x: 1 / x),
       "rsq_f32": (I.v_s_rsq_f32, lambda x: 1 / np.sqrt(x)), "sqrt_f32": (I.v_s_sqrt_f32, np.sqrt),
       "exp_f16": (I.v_s_exp_f16, np.exp2), "log_f16": (I.v_s_log_f16, np.log2), "rcp_f16": (I.v_s_rcp_f16, lambda x: 1 / x),
       "rsq_f16": (I.v_s_rsq_f16, lambda x: 1 / np.sqrt(x)), "sqrt_f16": (I.v_s_sqrt_f16, np.sqrt)}

@pytest.mark.parametrize("name,path", [(n, p) for n in V_S for p in (PATHS if n.endswith("f32") else ["numpy"])])
def test_v_s_transcendentals(name, path, monkeypatch):
  # within 0.5 ulp of the exact function (float64 here), the bound runtime.py documents (hardware: 1 ulp); specials exact
  op, fn = V_S[name]
  t = F16 if name.endswith("f16") else F32
  rng = np.random.default_rng(13)
  if t is F32:
    vals = [0x3f800000, 0x40490fdb, 0x3e800000, 0x42c80000, 0xc1200000, 0x00800000, 0x7f000000] + \
           [bits_of(F32(x)) for x in rng.uniform(-20, 20, 48)] + [bits_of(F32(x)) for x in rng.uniform(0, 5, 48)]
  else: vals = [0x3c00, 0x4248, 0x3400, 0x5640, 0xc900, 0x0400, 0x7800] + [bits_of(F16(x)) for x in rng.uniform(-8, 8, 60)]
  specials = [0, 0x8000 if t is F16 else 0x80000000, 0x7c00 if t is F16 else 0x7f800000, 0xfc00 if t is F16 else 0xff800000]
  d = scalar_cases([op(s[20], s[12])], vals + specials, [0] * (len(vals) + len(specials)), path, monkeypatch)
  mask = 0xffff if t is F16 else 0xffffffff
  conv = f16 if t is F16 else f32
  for a, got in zip(vals + specials, d):
    x = np.float64(conv(a))
    with np.errstate(all="ignore"): exact = fn(x)
    g = conv(got & mask)
    assert got >> 32 == 0x77777777 and (t is F32 or (got & 0xffffffff) >> 16 == 0)
    with np.errstate(over="ignore"): want = t(exact)
    if not np.isfinite(want) or exact == 0 or a in specials:
      assert (is_nan(g) and is_nan(want)) or bits_of(g) == bits_of(want), (name, hex(a), g, want)
      if is_nan(want): assert bits_of(g) == (0x7e00 if t is F16 else 0x7fc00000)  # the default NaN, +qNaN
      continue
    ulp = float(np.spacing(t(abs(exact))))
    assert abs(float(g) - exact) <= 0.5 * ulp * (1 + 2**-20), (name, hex(a), float(g), exact)

# *** barriers ***

@pytest.mark.parametrize("path", PATHS)
def test_split_barrier_reverses_workgroup(path, monkeypatch):
  # 64 threads (two waves) store their ID to LDS, s_barrier_signal -1 / s_barrier_wait -1, read LDS[63 - tid]
  out = aligned(4 * 128, 256).view(np.uint32)
  body = [I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.ds_store_b32(addr=v[1], data0=v[0]), I.s_wait_dscnt(simm16=0),
          I.s_barrier_signal(ssrc0=-1), I.s_barrier_wait(simm16=0xffff),
          I.v_sub_nc_u32_e32(v[3], 63, v[0]), I.v_lshlrev_b32_e32(v[3], 2, v[3]), I.ds_load_b32(vdst=v[2], addr=v[3]),
          I.s_wait_dscnt(simm16=0), I.s_lshl_b32(s[8], ttmp[9], 8), I.s_mov_b32(s[9], 0), I.s_add_nc_u64(s[4:5], s[4:5], s[8:9]),
          I.global_store_b32(vaddr=v[1:2], vsrc=v[2], saddr=s[4:5], ioffset=0), I.s_endpgm()]
  run(kernel(*body), out, None, path, monkeypatch, block=(64, 1, 1), grid=(2, 1, 1), lds=512)
  np.testing.assert_array_equal(out, np.tile(63 - np.arange(64), 2))

@pytest.mark.parametrize("inst,what", [(I.s_barrier_wait(simm16=1), "named barrier 1"),
                                       (I.s_barrier_signal(ssrc0=s[8]), "a barrier ID other than the workgroup barrier -1")])
def test_named_barriers_raise(inst, what):
  out = aligned(256, 256).view(np.uint32)
  with pytest.raises(UnsupportedInstruction, match=rf"s_barrier_\w+: {what}.* at PC 0x[0-9a-f]+"):
    run_isa(kernel(inst, I.s_endpgm()), out, arch=rdna4.FAMILY)

# *** VMEM encodings ***

@pytest.mark.parametrize("path", PATHS)
def test_global_24bit_ioffset(path, monkeypatch):
  # VGLOBAL's ioffset is 24 bits signed (RDNA3's offset: 13): stores 1 MiB up from the base, and 1 MiB down from a
  # base moved 1.5 MiB up
  out = aligned(2 << 20, 4096).view(np.uint32)
  body = [I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.v_add_nc_u32_e32(v[2], 100, v[0]),
          I.global_store_b32(vaddr=v[1:2], vsrc=v[2], saddr=s[4:5], ioffset=0x100000),
          I.s_mov_b32(s[8], 0x180000), I.s_mov_b32(s[9], 0), I.s_add_nc_u64(s[4:5], s[4:5], s[8:9]),
          I.v_add_nc_u32_e32(v[2], 200, v[0]), I.global_store_b32(vaddr=v[1:2], vsrc=v[2], saddr=s[4:5], ioffset=-0x100000),
          I.global_load_b32(vdst=v[3], vaddr=v[1:2], saddr=s[4:5], ioffset=-0x80000), I.s_wait_loadcnt(simm16=0),
          I.v_add_nc_u32_e32(v[3], 1, v[3]), I.global_store_b32(vaddr=v[1:2], vsrc=v[3], saddr=s[4:5], ioffset=0x4000),
          I.s_endpgm()]
  run(kernel(*body), out, None, path, monkeypatch)
  np.testing.assert_array_equal(out[0x40000:0x40020], np.arange(32) + 100)
  np.testing.assert_array_equal(out[0x20000:0x20020], np.arange(32) + 200)
  np.testing.assert_array_equal(out[0x61000:0x61020], np.arange(32) + 101)  # 0x180000 + 0x4000, loaded from 0x100000

@pytest.mark.parametrize("path", PATHS)
def test_scratch_vscratch_and_gfx12_tmpring_width(path, monkeypatch):
  # COMPUTE_TMPRING_SIZE.WAVESIZE is 18 bits on gfx12: a slot of 2^15 + 1 units (bit 27 set) gives each lane
  # 262152 bytes, so a store at offset 262144 is inside it (read as gfx11's 15 bits it would be one unit, 8 bytes)
  out = aligned(4 * 32, 256).view(np.uint32)
  tmpring = ((1 << 15) | 1) << 12
  body = [I.v_mov_b32_e32(v[3], 0x40000), I.v_add_nc_u32_e32(v[4], 7, v[0]),
          I.scratch_store_b32(vaddr=v[3], vsrc=v[4], ioffset=4, sve=1), I.scratch_load_b32(vdst=v[2], vaddr=v[3], ioffset=4, sve=1),
          I.s_wait_loadcnt(simm16=0), I.v_lshlrev_b32_e32(v[1], 2, v[0]),
          I.global_store_b32(vaddr=v[1:2], vsrc=v[2], saddr=s[4:5], ioffset=0), I.s_endpgm()]
  run(kernel(*body), out, None, path, monkeypatch, rsrc2=RSRC2 | 1, tmpring=tmpring)
  np.testing.assert_array_equal(out, np.arange(32) + 7)

# *** WMMA ***

def wmma_case(kind_out:str, seed:int=1):
  """A, B (16x16 f16) and C (f32, or f16) in RDNA4's wave32 layout, written here from the ISA's description: lane l
  holds A's row and B's column l % 16, K = 8 * (l // 16) + e for its element e (two a VGPR); C/D element j of lane l
  is (row j + 8 * (l // 16), column l % 16), one a VGPR for f32, two (low half first) for f16."""
  rng = np.random.default_rng(seed)
  A, B = (rng.integers(-8, 9, (16, 16)) / 4).astype(np.float16), (rng.integers(-8, 9, (16, 16)) / 4).astype(np.float16)
  C = (rng.integers(-64, 65, (16, 16)) / 8).astype(np.float16 if kind_out == "f16" else np.float32)
  lanes = np.arange(32)
  k = 8 * (lanes // 16)[:, None] + np.arange(8)                       # [lane, element]
  a = A[lanes[:, None] % 16, k].view(np.uint16).astype(np.uint32)      # [lane, 8]
  b = B.T[lanes[:, None] % 16, k].view(np.uint16).astype(np.uint32)
  pack = lambda h: h[:, 0::2] | h[:, 1::2] << 16                       # [lane, 4 VGPRs]
  rows = np.arange(8)[None, :] + 8 * (lanes // 16)[:, None]            # [lane, element]
  c = C[rows, lanes[:, None] % 16]
  c = pack(c.view(np.uint16).astype(np.uint32)) if kind_out == "f16" else c.view(np.uint32)
  D = A.astype(np.float64) @ B.astype(np.float64) + C.astype(np.float64)  # exact: small integers over 2^5
  d = D[rows, lanes[:, None] % 16].astype(np.float16 if kind_out == "f16" else np.float32)
  d = pack(d.view(np.uint16).astype(np.uint32)) if kind_out == "f16" else d.view(np.uint32)
  return np.concatenate([pack(a), pack(b), c], axis=1).astype(np.uint32), d

@pytest.mark.parametrize("kind_out", ["f32", "f16"])
def test_wmma_rdna4_layout(kind_out, monkeypatch):
  # v_wmma_*_16x16x16_f16 on RDNA4: A and B in 4 VGPRs, C/D in 8 (f32) or 4 (f16, packed); numpy path (the C
  # translation declines RDNA4's float WMMA, which numpy sums exactly)
  path = "numpy"
  regs, want = wmma_case(kind_out)
  ncd = regs.shape[1] - 8
  inp = aligned(4 * regs.size, 256).view(np.uint32)
  inp[:] = regs.reshape(-1)
  out = aligned(4 * want.size, 256).view(np.uint32)
  op = I.v_wmma_f32_16x16x16_f16 if kind_out == "f32" else I.v_wmma_f16_16x16x16_f16
  body = [I.v_mul_u32_u24_e32(v[1], 4 * regs.shape[1], v[0]),
          I.global_load_b128(vdst=v[8:11], vaddr=v[1:2], saddr=s[6:7], ioffset=0),
          I.global_load_b128(vdst=v[12:15], vaddr=v[1:2], saddr=s[6:7], ioffset=16),
          *(I.global_load_b128(vdst=v[16 + 4 * i:19 + 4 * i], vaddr=v[1:2], saddr=s[6:7], ioffset=32 + 16 * i) for i in range(ncd // 4)),
          I.s_wait_loadcnt(simm16=0), op(v[24:24 + ncd - 1], v[8:11], v[12:15], v[16:16 + ncd - 1]),
          I.v_mul_u32_u24_e32(v[1], 4 * ncd, v[0]),
          *(I.global_store_b128(vaddr=v[1:2], vsrc=v[24 + 4 * i:27 + 4 * i], saddr=s[4:5], ioffset=16 * i) for i in range(ncd // 4)),
          I.s_endpgm()]
  run(kernel(*body), out, inp, path, monkeypatch)
  np.testing.assert_array_equal(out.reshape(32, ncd), want)

# *** renames ***

def test_aliases_are_rdna4_names_onto_rdna3_rows():
  # every rename maps an RDNA4 name RDNA3 does not have onto one RDNA3 has, so an RDNA3 kernel's meaning cannot change,
  # and the two pseudocodes' statements agree (s_addk's: the same sum written two ways, wrapping to 32 bits either way)
  from tinygrad.runtime.autogen.amd.rdna3 import str_pcode as p3
  from tinygrad.runtime.autogen.amd.rdna4 import str_pcode as p4
  code3, code4 = ({op.name: [ln for ln in text.splitlines() if not ln.startswith("//")] for op, text in p.PCODE.items()} for p in (p3, p4))
  for new, old in rdna4.ALIASES.items():
    assert new in code4 and new not in code3 and old in code3, (new, old)
    if new == "S_ADDK_CO_I32": assert code4[new][-1].replace("S0.i16", "SIMM16.i16") == code3[old][-1]  # SCC
    else: assert code4[new] == code3[old], (new, old)
