"""compiler/native_floats.c, the C conversion library both preludes include: each conversion is defined once across
mockgpu's C sources, and each computes what compiler/floats.py (and numpy's float16 casts) compute, bit for bit, over
every f16 and bf16 pattern, every code of each fp8 format, and the rounding edge cases of f32 and f64 inputs."""
import ctypes, os, re
import numpy as np
import pytest
import mockgpu
from mockgpu.compiler import floats, native

rng = np.random.default_rng(0)   # each test's own (tests/conftest.py seeds it from the node id)
PKG = os.path.dirname(os.path.abspath(mockgpu.__file__))
COMPILER = os.path.join(PKG, "compiler")
DEFINITION = re.compile(r"^static (?:inline )?[\w ]+?\**\b(\w+)\(", re.M)
# a conversion's name: it speaks of a narrow float format
CONVERSION = re.compile(r"f16|bf16|fp8|e4m3|e5m2|ocp8|fnuz8")

def c_sources() -> dict[str, str]:
  out = {}
  for d, _, files in os.walk(PKG):
    for f in sorted(files):
      if f.endswith(".c"):
        with open(os.path.join(d, f)) as fh: out[os.path.relpath(os.path.join(d, f), PKG)] = fh.read()
  return out

def test_each_c_function_is_defined_once_and_conversions_only_in_the_library():
  where: dict[str, list[str]] = {}
  for rel, text in c_sources().items():
    for name in DEFINITION.findall(text): where.setdefault(name, []).append(rel)
  assert len(where) > 100, "the definition pattern finds the C sources' functions"
  assert not (twice:={n: w for n, w in where.items() if len(w) > 1}), f"C functions defined more than once: {twice}"
  lib = os.path.join("compiler", "native_floats.c")
  defined = {n for n, w in where.items() if w == [lib]}
  assert {"f32_to_f16_bits_rne", "f64_to_f16_bits_rne", "f32_to_bf16_bits_rne", "f64_to_fp8_satfinite"} <= defined
  # instruction forms that call the library's conversions: the packed pairs (cvt's fp8x2, v_cvt_pk_f32_fp8), PTX's
  # canonical NaN (canon_*) and its f16 -> f32 cvt, whose NaN is quieted as numpy's float64 round trip quiets it (h2f_q)
  packing = {"fp8x2_f32", "fp8x2_h2", "h2_fp8x2", "ocp8_pk_f32", "canon_f16", "canon_bf16", "h2f_q"}
  elsewhere = sorted(n for n, w in where.items() if w != [lib] and CONVERSION.search(n) and n not in packing)
  assert not elsewhere, f"float conversions outside native_floats.c: {elsewhere}"

def test_both_preludes_include_the_library_and_its_text_keys_their_builds():
  text = open(os.path.join(COMPILER, "native_floats.c")).read()
  for prelude in ("ptx/backends/prelude.c", "rdna/c/prelude.c"):
    assert '#include "native_floats.c"' in open(os.path.join(COMPILER, prelude)).read()
    assert text in native.prelude(os.path.join(COMPILER, prelude))   # inlined: the library's hash covers it

# *** the library, built with thin loops over arrays ***

MAPS = [  # (name, input C type, output C type, the expression of x)
  ("f16_bits_to_f32", "uint16_t", "float", "f16_bits_to_f32(x)"), ("f16_bits_to_f64", "uint16_t", "double", "f16_bits_to_f64(x)"),
  ("f32_to_f16_bits_rne", "float", "uint16_t", "f32_to_f16_bits_rne(x)"), ("f32_round_f16", "float", "float", "f32_round_f16(x)"),
  ("f64_to_f16_bits_rne", "double", "uint16_t", "f64_to_f16_bits_rne(x)"), ("f64_round_f16", "double", "float", "f64_round_f16(x)"),
  ("f32_round_f16_rtz", "float", "float", "f32_round_f16_rtz(x)"),
  ("bf16_bits_to_f32", "uint16_t", "float", "bf16_bits_to_f32(x)"), ("bf16_bits_to_f64", "uint16_t", "double", "bf16_bits_to_f64(x)"),
  ("f32_to_bf16_bits_rne", "float", "uint16_t", "f32_to_bf16_bits_rne(x)"), ("f64_to_bf16_bits_rne", "double", "uint16_t", "f64_to_bf16_bits_rne(x)"),
  ("f64_to_bf16_bits_exact", "double", "uint16_t", "f64_to_bf16_bits_exact(x)"),
  ("e4m3_to_f32", "uint8_t", "float", "e4m3_to_f32(x)"), ("e5m2_to_f32", "uint8_t", "float", "e5m2_to_f32(x)"),
  ("e4m3fnuz_to_f32", "uint8_t", "float", "fnuz8_to_f32(x, 3, 8)"), ("e5m2fnuz_to_f32", "uint8_t", "float", "fnuz8_to_f32(x, 2, 16)"),
  ("f32_to_e4m3_rne", "float", "uint16_t", "f32_to_e4m3_rne(x)"), ("f32_to_e5m2_rne", "float", "uint16_t", "f32_to_e5m2_rne(x)"),
  ("f32_to_e4m3fnuz_rne", "float", "uint16_t", "f32_to_fnuz8_rne(x, 3, 8)"),
  ("f32_to_e5m2fnuz_rne", "float", "uint16_t", "f32_to_fnuz8_rne(x, 2, 16)"),
]
NP = {"uint8_t": np.uint8, "uint16_t": np.uint16, "float": np.float32, "double": np.float64, "uint32_t": np.uint32}
# PTX's parameterized forms: the format as native_floats.c takes it (ptx/backends/c.py's FP8), relu 0 or 1
PTX_MAPS = [(f"{fmt}_{relu}", fmt, relu) for fmt in ("e4m3", "e5m2") for relu in (0, 1)]

def _source() -> str:
  def read(f):
    with open(os.path.join(COMPILER, f)) as fh: return fh.read()
  loops = [f"void t_{n}(const {i} *in, {o} *out, int64_t n) {{ for (int64_t k = 0; k < n; k++) {{ {i} x = in[k]; out[k] = {e}; }} }}"
           for n, i, o, e in MAPS]
  for name, fmt, relu in PTX_MAPS:
    p, emin, mx = floats.precision(fmt)
    loops.append(f"void to_{name}(const double *in, uint8_t *out, int64_t n) {{ for (int64_t k = 0; k < n; k++) "
                 f"out[k] = (uint8_t)f64_to_fp8_satfinite(in[k], {p}, {emin}, {mx!r}, {relu}); }}")
    loops.append(f"void from_{name}(const uint8_t *in, uint16_t *out, int64_t n) {{ for (int64_t k = 0; k < n; k++) "
                 f"out[k] = (uint16_t)fp8_to_f16_bits(in[k], {p}, {emin}, {int(fmt == 'e4m3')}, {relu}); }}")
  return "\n".join([read("native_common.c"), read("native_floats.c"), *loops]) + "\n"

@pytest.fixture(autouse=True)
def _quiet_casts():
  # the inputs include signalling NaNs and values past the narrow formats' range: their casts are the point, not a fault
  with np.errstate(invalid="ignore", over="ignore"): yield

@pytest.fixture(scope="module")
def lib():
  built = native.library(_source(), "floats-test")
  if built is None: pytest.skip("no C compiler here (or MOCKGPU_NATIVE=0)")
  return built

def run(lib, fn:str, x:np.ndarray, out_t) -> np.ndarray:
  x = np.ascontiguousarray(x)
  out = np.empty(x.shape, out_t)
  getattr(lib, fn)(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_int64(x.size))
  return out

def c(lib, name:str, x) -> np.ndarray:
  _, i, o, _ = next(m for m in MAPS if m[0] == name)
  return run(lib, f"t_{name}", np.asarray(x, NP[i]), NP[o])

def same_bits(a:np.ndarray, b:np.ndarray) -> bool:
  a, b = np.asarray(a), np.asarray(b)
  u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
  return a.dtype.itemsize == b.dtype.itemsize and np.array_equal(a.view(u[a.dtype.itemsize]), b.view(u[b.dtype.itemsize]))

ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)

def edges32(grid:np.ndarray) -> np.ndarray:
  """f32 values around a format's grid (its values, as f32): each value, its f32 neighbours, the midpoints between
  consecutive values and their neighbours (the ties and the values just past them), past the largest, infinities and
  NaNs of both signs (quiet and signalling), and a sample of f32 bit patterns."""
  g = np.unique(np.abs(grid[np.isfinite(grid)].astype(np.float64)))
  mids = (g[:-1] + g[1:]) / 2
  pts = np.concatenate([g, mids, g[-1:] * 2, g[-1:] + (g[-1] - g[-2]) / 2]).astype(np.float32)
  pts = np.concatenate([pts, np.nextafter(pts, np.float32(np.inf)), np.nextafter(pts, np.float32(0))])
  pts = np.concatenate([pts, -pts, np.array([np.inf, -np.inf, 3e38, -3e38], np.float32)])
  nans = np.array([0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fa00000, 0x7fffffff], np.uint32).view(np.float32)
  return np.concatenate([pts, nans, rng.integers(0, 1 << 32, 1 << 15, dtype=np.uint64).astype(np.uint32).view(np.float32)])

def edges64(grid:np.ndarray) -> np.ndarray:
  """f64 values around a grid: edges32's, and the f64 neighbours of each midpoint (a tie in f64 that f32 would not see)."""
  g = np.unique(np.abs(grid[np.isfinite(grid)].astype(np.float64)))
  mids = (g[:-1] + g[1:]) / 2
  near = np.concatenate([np.nextafter(mids, np.inf), np.nextafter(mids, 0), mids + mids * 2.0**-30, mids - mids * 2.0**-30])
  nans = np.array([0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001, 0x7ff4000000000000], np.uint64).view(np.float64)
  return np.concatenate([edges32(grid).astype(np.float64), near, -near, nans, np.array([1e300, -1e300, 2.0**-1074])])

F16_VALUES = ALL16.view(np.float16).astype(np.float32)
BF16_VALUES = floats.bf16_to_f32(ALL16)

# *** f16 ***

def test_f16_decodes_every_pattern_as_numpy(lib):
  assert same_bits(c(lib, "f16_bits_to_f32", ALL16), ALL16.view(np.float16).astype(np.float32))
  assert same_bits(c(lib, "f16_bits_to_f64", ALL16), ALL16.view(np.float16).astype(np.float64))

def test_f16_encodes_as_numpy_from_f32_and_f64(lib):
  x32, x64 = edges32(F16_VALUES), edges64(F16_VALUES)
  with np.errstate(all="ignore"):
    assert same_bits(c(lib, "f32_to_f16_bits_rne", x32), x32.astype(np.float16))
    assert same_bits(c(lib, "f64_to_f16_bits_rne", x64), x64.astype(np.float16))
    fin32, fin64 = x32[~np.isnan(x32)], x64[~np.isnan(x64)]   # carried as a float: a NaN stays a NaN (quieted)
    assert same_bits(c(lib, "f32_round_f16", fin32), fin32.astype(np.float16).astype(np.float32))
    assert same_bits(c(lib, "f64_round_f16", fin64), fin64.astype(np.float16).astype(np.float32))
  assert np.isnan(c(lib, "f64_round_f16", x64[np.isnan(x64)])).all() and np.isnan(c(lib, "f32_round_f16", x32[np.isnan(x32)])).all()

def test_f16_toward_zero_as_floats(lib):
  x = edges32(F16_VALUES)
  x = x[~np.isnan(x)]
  assert same_bits(c(lib, "f32_round_f16_rtz", x), floats.f32_to_f16_rtz(x).astype(np.float32))

# *** bf16 ***

def test_bf16_decodes_every_pattern_as_floats(lib):
  assert same_bits(c(lib, "bf16_bits_to_f32", ALL16), BF16_VALUES)
  assert same_bits(c(lib, "bf16_bits_to_f64", ALL16), BF16_VALUES.astype(np.float64))

def test_bf16_encodes_as_floats_from_f32_and_f64(lib):
  x32, x64 = edges32(BF16_VALUES), edges64(BF16_VALUES)
  assert same_bits(c(lib, "f32_to_bf16_bits_rne", x32), floats.bf16bits(x32).astype(np.uint16))
  assert same_bits(c(lib, "f64_to_bf16_bits_rne", x64), floats.bf16bits_f64(x64).astype(np.uint16))
  assert same_bits(c(lib, "f64_to_bf16_bits_exact", BF16_VALUES.astype(np.float64)), floats.bf16bits_exact(BF16_VALUES))

# *** fp8 ***

ALL8 = np.arange(256, dtype=np.uint8)
DECODE = {"e4m3": "e4m3_to_f32", "e5m2": "e5m2_to_f32", "e4m3fnuz": "e4m3fnuz_to_f32", "e5m2fnuz": "e5m2fnuz_to_f32"}

@pytest.mark.parametrize("fmt", sorted(DECODE))
def test_fp8_decodes_every_code_as_floats(lib, fmt):
  want = floats.fp8_table(fmt).astype(np.float32)   # a NaN code: the quiet NaN of its sign
  assert same_bits(c(lib, DECODE[fmt], ALL8), want)

@pytest.mark.parametrize("fmt", sorted(DECODE))
def test_fp8_encodes_as_floats(lib, fmt):
  x = edges32(floats.fp8_table(fmt))
  want = floats.f32_to_fnuz8(x, fmt) if fmt.endswith("fnuz") else floats.f32_to_ocp8(x, fmt)
  assert same_bits(c(lib, f"f32_to_{fmt}_rne", x), want)

@pytest.mark.parametrize("name,fmt,relu", PTX_MAPS)
def test_ptx_fp8_conversions_as_floats(lib, name, fmt, relu):
  # cvt's inputs are f32 or f16 values (exact in f64): every f16 pattern, and the f32 edges of the format's grid
  x = np.concatenate([ALL16.view(np.float16).astype(np.float64), edges32(floats.fp8_table(fmt)).astype(np.float64)])
  assert same_bits(run(lib, f"to_{name}", x, np.uint8), floats.to_fp8(x, fmt, bool(relu)))
  assert same_bits(run(lib, f"from_{name}", ALL8, np.uint16), floats.fp8_to_f16(ALL8, fmt, bool(relu)))
