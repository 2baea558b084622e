"""The packed fp8 conversions NVRTC emits for __nv_fp8_e4m3/__nv_fp8_e5m2 (cuda_fp8.hpp on sm_89+):
cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b  (a -> the upper byte of the b16 d, b -> the lower byte)
cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a  (each half of a to the byte in its place)
cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a             (the lower byte of a to the lower half of d)
on both executor paths (numpy and native C, asserted), bit for bit against a reference written here from the formats'
definitions in exact rational arithmetic: every fp8 code (decode), every float16 (encode from .f16x2) and a dense set
of float32 inputs (ties, their neighbours, subnormals, overflow, NaN, +-inf, +-0). NaN encodes as 0x7f with the input's
sign (as tinygrad's float_to_fp8 and cuda_fp8.hpp's host path for e4m3) and decodes to the canonical 0x7fff; .satfinite
clamps infinities and overflow to the largest finite value; .relu makes negative inputs (-0 too) +0 and NaN 0x7f/0x7fff."""
from __future__ import annotations
import bisect, math
from fractions import Fraction
import numpy as np
import pytest
from tinygrad import dtypes
from tinygrad.dtype import float_to_fp8, fp8_to_float
from mockgpu.errors import UnsupportedInstruction
from mockgpu.emulators.ptx import load_module, native
from support.ptx_isa import kernel, run, LOAD3

# (exponent bits, mantissa bits, bias); e4m3: S.1111.111 is NaN, no infinity; e5m2: IEEE-like
FORMATS = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15)}

def ref_value(code:int, fmt:str) -> Fraction|float:
  """The value of an fp8 code from the format's definition (float nan/inf for the special codes)."""
  E, M, bias = FORMATS[fmt]
  s, e, m = code >> 7, (code >> M) & ((1 << E) - 1), code & ((1 << M) - 1)
  if fmt == "e4m3" and e == 15 and m == 7: return math.nan
  if fmt == "e5m2" and e == 31: return math.nan if m else (-math.inf if s else math.inf)
  v = Fraction(m, 1 << M) * Fraction(2) ** (1 - bias) if e == 0 else (1 + Fraction(m, 1 << M)) * Fraction(2) ** (e - bias)
  return -v if s else v

FINITE = {f: sorted((ref_value(c, f), c) for c in range(128) if not isinstance(ref_value(c, f), float)) for f in FORMATS}

def ref_encode(x:float, fmt:str, relu:bool=False) -> int:
  neg = math.copysign(1.0, x) < 0
  if math.isnan(x): return 0x7f if relu or not neg else 0xff
  if relu and neg: return 0
  vals = FINITE[fmt]
  ax = abs(x)
  if math.isinf(ax) or ax >= vals[-1][0]: code = vals[-1][1]   # .satfinite
  else:
    fx = Fraction(ax)
    i = bisect.bisect_left(vals, (fx, -1))
    if vals[i][0] == fx: code = vals[i][1]
    else:
      (lo, clo), (hi, chi) = vals[i - 1], vals[i]
      code = clo if fx - lo < hi - fx else chi if fx - lo > hi - fx else (clo if clo % 2 == 0 else chi)
  return code | (0x80 if neg else 0)

def ref_decode(code:int, fmt:str, relu:bool=False) -> int:
  """float16 bits."""
  v = ref_value(code, fmt)
  if isinstance(v, float) and math.isnan(v): return 0x7fff
  if relu and code & 0x80: return 0
  h = int(np.float16(float(abs(v))).view(np.uint16))
  assert not math.isfinite(v) or Fraction(float(np.float16(float(abs(v))))) == abs(v)   # exact in float16
  return h | (0x8000 if code & 0x80 else 0)

def test_reference_agrees_with_tinygrad():
  """The independent reference against tinygrad's own fp8 numerics (tinygrad/dtype.py), where both define the result:
  finite inputs (tinygrad does not saturate infinities) and every code."""
  xs = f32_inputs().view(np.float32)
  for fmt, dt in (("e4m3", dtypes.fp8e4m3), ("e5m2", dtypes.fp8e5m2)):
    for x in xs[np.isfinite(xs)][::7]: assert ref_encode(float(x), fmt) == float_to_fp8(float(x), dt), (fmt, x)
    for c in range(256):
      v, t = ref_value(c, fmt), fp8_to_float(c, dt)
      assert (math.isnan(v) and math.isnan(t)) or (v == t and (c >= 128) == (math.copysign(1, t) < 0)), (fmt, c)

# *** inputs ***

def f32_inputs() -> np.ndarray:
  """float32 bits: every fp8 value, the midpoints of neighbouring fp8 values (ties) and their float32 neighbours, values
  past the largest finite one, float32 subnormals, +-0, +-inf, NaNs of both signs (quiet, signalling, payloads), and
  random values over the whole exponent range; each with both signs."""
  vals = set()
  for fmt in FORMATS:
    fin = [float(v) for v, _ in FINITE[fmt]]
    ext = fin + [fin[-1] + (fin[-1] - fin[-2]) * k for k in (1, 2, 4)]
    for a, b in zip(ext, ext[1:]):
      for v in (a, (a + b) / 2):
        f = np.float32(v)
        vals.update({f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(0))})
    vals.update(np.float32(fin[1]) / np.float32(2) * np.float32(k) for k in (0.5, 0.999, 1.0, 1.001, 1.5, 3))
  rng = np.random.default_rng(8)
  vals.update(np.ldexp(rng.uniform(1, 2, 3000), rng.integers(-30, 30, 3000)).astype(np.float32))
  vals.update(np.ldexp(rng.uniform(1, 2, 300), rng.integers(-149, 128, 300)).astype(np.float32))
  bits = np.array(sorted(vals), np.float32).view(np.uint32)
  special = np.array([0, 1, 0x7fffff, 0x800000, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0x7f800001, 0x7fbfffff, 0x7fffffff,
                      0x7fc12345, 0x3f800000], np.uint32)
  bits = np.concatenate([bits, special])
  return np.concatenate([bits, bits | np.uint32(0x80000000)])

# *** running one instruction over many lanes on a path ***

def on_path(monkeypatch, path:str, body:str, a:np.ndarray, b:np.ndarray) -> np.ndarray:
  """`body` (inputs %r1, %r2 as raw bits, result from %r4) over every lane, on the numpy or native path."""
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0" if path == "numpy" else "1")
  n = -(-len(a) // 256) * 256
  pad = lambda x: np.resize(np.asarray(x, np.uint32), n)
  out = np.zeros(n, np.uint32)
  st = run(kernel(LOAD3 + body + "\nst.global.b32 [%rd9], %r4;"), [out, pad(a), pad(b), pad(b)], grid=(n // 256, 1, 1), block=(256, 1, 1))
  assert st.native == (path == "native"), f"{body}: the native path declined it: {dict(native.declined)}"
  return out[:len(a)]

PATHS = ["numpy", "native"]
FMTS = ["e4m3", "e5m2"]

@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("path", PATHS)
def test_encode_f32(path, fmt, relu, monkeypatch):
  a = f32_inputs()
  b = a[::-1].copy()
  op = f"cvt.rn.satfinite{'.relu' if relu else ''}.{fmt}x2.f32"
  got = on_path(monkeypatch, path, f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\n{op} %h1, %f1, %f2;\ncvt.u32.u16 %r4, %h1;", a, b)
  fa, fb = a.view(np.float32), b.view(np.float32)
  want = np.array([ref_encode(float(x), fmt, relu) << 8 | ref_encode(float(y), fmt, relu) for x, y in zip(fa, fb)], np.uint32)
  bad = np.nonzero(got != want)[0]
  assert not len(bad), [(hex(a[i]), hex(b[i]), hex(got[i]), hex(want[i])) for i in bad[:10]]

@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("path", PATHS)
def test_encode_f16x2_every_half(path, fmt, relu, monkeypatch):
  h = np.arange(65536, dtype=np.uint32)
  x = h | (np.roll(h, 12345) << np.uint32(16))   # every half in both places
  op = f"cvt.rn.satfinite{'.relu' if relu else ''}.{fmt}x2.f16x2"
  got = on_path(monkeypatch, path, f"{op} %h1, %r1;\ncvt.u32.u16 %r4, %h1;", x, x)
  table = np.array([ref_encode(float(v), fmt, relu) for v in h.astype(np.uint16).view(np.float16)], np.uint32)
  want = table[x & 0xffff] | (table[x >> 16] << np.uint32(8))
  bad = np.nonzero(got != want)[0]
  assert not len(bad), [(hex(x[i]), hex(got[i]), hex(want[i])) for i in bad[:10]]

@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("path", PATHS)
def test_decode_every_pair(path, fmt, relu, monkeypatch):
  x = np.arange(65536, dtype=np.uint32) | np.uint32(0xabcd0000)   # the upper half of the b32 source is dropped by cvt.u16
  op = f"cvt.rn{'.relu' if relu else ''}.f16x2.{fmt}x2"
  got = on_path(monkeypatch, path, f"cvt.u16.u32 %h1, %r1;\n{op} %r4, %h1;", x, x)
  table = np.array([ref_decode(c, fmt, relu) for c in range(256)], np.uint32)
  want = table[x & 0xff] | (table[(x >> 8) & 0xff] << np.uint32(16))
  bad = np.nonzero(got != want)[0]
  assert not len(bad), [(hex(x[i]), hex(got[i]), hex(want[i])) for i in bad[:10]]

@pytest.mark.parametrize("path", PATHS)
def test_round_trip_f32_f16_fp8(path, monkeypatch):
  """f32 -> e4m3x2 -> f16x2 -> f32: every fp8 value survives exactly (the NVRTC cast chain of tinygrad's fp8 kernels)."""
  codes = np.arange(256, dtype=np.uint32)
  vals = np.array([float(v) for v in (ref_value(int(c), "e4m3") for c in codes)], np.float32)
  body = "mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\ncvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;\ncvt.rn.f16x2.e4m3x2 %r5, %h1;\n" \
         "mov.b32 {%h2, %h3}, %r5;\ncvt.f32.f16 %f3, %h3;\nmov.b32 %r4, %f3;"
  got = on_path(monkeypatch, path, body, vals.view(np.uint32), vals.view(np.uint32)).view(np.float32)
  fin = ~np.isnan(vals)
  np.testing.assert_array_equal(got[fin].view(np.uint32), vals[fin].view(np.uint32))
  assert np.isnan(got[~fin]).all()

UNSUPPORTED = ["cvt.rn.e4m3x2.f32 %h1, %f1, %f2;",              # .satfinite is required
               "cvt.rz.satfinite.e4m3x2.f32 %h1, %f1, %f2;",    # only .rn
               "cvt.rs.satfinite.e5m2x2.f32 %h1, %f1, %f2;",
               "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1;",         # two sources
               "cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r1, %r2;",
               "cvt.rn.satfinite.e4m3x2.bf16x2 %h1, %r1;",
               "cvt.rn.bf16x2.e4m3x2 %r1, %h1;",
               "cvt.rn.f32.e4m3x2 %f1, %h1;",
               "cvt.rn.satfinite.f16x2.e5m2x2 %r1, %h1;",
               "cvt.rn.f16x2.e2m1x2 %r1, %h1;",
               "cvt.rn.satfinite.ue8m0x2.f32 %h1, %f1, %f2;",
               "cvt.rn.f16x2.f32 %r1, %f1;"]

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("ins", UNSUPPORTED)
def test_other_forms_unsupported(ins, path, monkeypatch):
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0" if path == "numpy" else "1")
  with pytest.raises(UnsupportedInstruction, match="not supported"):
    load_module(kernel(ins, ".param .u64 out"))
