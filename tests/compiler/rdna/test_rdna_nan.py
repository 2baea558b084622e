"""Generated NaNs on RDNA and CDNA as hardware makes them, on every path and every host. A NaN result none of an
instruction's float sources was (inf - inf, 0 * inf, sqrt(-1), sin(inf), ...) is the default NaN, +qNaN: f16 0x7e00, f32
0x7fc00000, f64 0x7ff8000000000000 (the value LLVM's AMDGPU constant folding gives such results; the host's, 0xffc00000
on x86, never shows). v_div_fixup's 0/0 and inf/inf keep the pseudocode's own 32'F(0xffc00000). A NaN source is
propagated (quieted) as before. Each instruction runs over special operand pairs on the stepper, the numpy path and
the C path, which must agree bit for bit; a child process runs them again with numpy's SIMD dispatch limited
(NPY_DISABLE_CPU_FEATURES naming every dispatched target) and must give the same bits."""
import os
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import v, s
from support.rdna_stepper import ISAS, DATA_V, _run, _row_offset
from support.numpy_simd import run_limited

F32_NAN, F16_NAN, F64_NAN = 0x7fc00000, 0x7e00, 0x7ff8000000000000
INF, NINF, QNAN, NQNAN, SNAN = 0x7f800000, 0xff800000, 0x7fc12345, 0xffc00000, 0x7f800001
ONE, NONE, TWO, BIG = 0x3f800000, 0xbf800000, 0x40000000, 0x7f7fffff
# (a, b, c) per lane: pairs that generate a NaN (inf - inf, 0 * inf, fma's inf * 0), numbers, and one NaN operand at a time
PAIRS = [(INF, NINF, ONE), (NINF, INF, 0), (INF, 0, ONE), (0, NINF, ONE), (0x80000000, INF, 0), (INF, INF, NINF),
         (NONE, ONE, 0), (ONE, TWO, ONE), (BIG, BIG, NINF), (QNAN, ONE, ONE), (ONE, NQNAN, ONE), (SNAN, ONE, 0),
         (ONE, 0xff812345, ONE), (0, 0, 0), (0x80000000, 0x80000000, QNAN), (TWO, NONE, INF)]
# f16 halves in the low 16 bits: inf, -inf, 0, 1, a quiet NaN with payload, a signalling one
H_INF, H_NINF, H_ONE, H_QNAN, H_SNAN = 0x7c00, 0xfc00, 0x3c00, 0x7e12, 0x7c01
PAIRS16 = [(H_INF, H_NINF, H_ONE), (H_NINF, H_INF, 0), (H_INF, 0, H_ONE), (0, H_NINF, 0), (H_ONE, H_ONE, 0), (H_QNAN, H_ONE, 0),
           (H_ONE, H_SNAN, 0), (H_INF, H_INF, H_NINF)]
# f64 (hi words; lo 0): inf, -inf, 0, 1, a quiet NaN with payload
D_INF, D_NINF, D_ONE, D_QNAN = 0x7ff00000, 0xfff00000, 0x3ff00000, 0x7ff80123
PAIRS64 = [(D_INF, D_NINF, D_ONE), (D_NINF, D_INF, 0), (D_INF, 0, D_ONE), (0, D_NINF, 0), (D_ONE, D_ONE, 0), (D_QNAN, D_ONE, 0)]

def cases(family:str) -> list:
  """(name, kind, the instructions writing v12 (f64: v[12:13]) from a = v8, b = v9, c = v10 (f64: v[8:9], v[10:11]),
  the canonical NaN). kind picks the inputs: f32, f16 (low halves) or f64."""
  I = ISAS[family].I
  v8, v9, v10, v12 = v[8], v[9], v[10], v[12]
  both = [("v_add_f32", "f32", [I.v_add_f32_e32(v12, v8, v9)], F32_NAN), ("v_sub_f32", "f32", [I.v_sub_f32_e32(v12, v8, v9)], F32_NAN),
          ("v_mul_f32", "f32", [I.v_mul_f32_e32(v12, v8, v9)], F32_NAN),
          ("v_fma_f32", "f32", [(I.v_fma_f32_e64 if family == "cdna3" else I.v_fma_f32)(v12, v8, v9, v10)], F32_NAN),
          ("v_sqrt_f32", "f32", [I.v_sqrt_f32_e32(v12, v9)], F32_NAN), ("v_sin_f32", "f32", [I.v_sin_f32_e32(v12, v8)], F32_NAN),
          ("v_add_f64", "f64", [(I.v_add_f64_e64 if family == "rdna4" else I.v_add_f64)(v[12:13], v[8:9], v[10:11])], F64_NAN)]
  if family == "rdna3":
    both += [("v_add_f16", "f16", [I.v_add_f16_e32(v12, v8, v9)], F16_NAN), ("v_mul_f16", "f16", [I.v_mul_f16_e32(v12, v8, v9)], F16_NAN),
             ("v_pk_add_f16", "f16", [I.v_pk_add_f16(v12, v8, v9)], F16_NAN),
             ("v_fma_f64", "f64", [I.v_fma_f64(v[12:13], v[8:9], v[10:11], v[8:9])], F64_NAN),
             ("v_div_fixup_f32", "f32", [I.v_div_fixup_f32(v12, v10, v9, v8)], 0xffc00000)]  # the pseudocode's 0/0, inf/inf
  if family == "rdna4":
    both += [("s_add_f32", "f32", [I.v_readfirstlane_b32_e32(s[30], v8), I.v_readfirstlane_b32_e32(s[31], v9),
                                   I.s_add_f32(s[32], s[30], s[31]), I.v_mov_b32_e32(v12, s[32])], F32_NAN)]
  return both

def inputs(kind:str, lanes:int) -> np.ndarray:
  """The DATA_V rows: v8 = a, v9 = b, v10 = c (f64: v8:9 = a, v10:11 = b), the pairs repeated over the lanes."""
  data = np.zeros((len(DATA_V), lanes), np.uint32)
  pairs = {"f32": PAIRS, "f16": PAIRS16, "f64": PAIRS64}[kind]
  for lane in range(lanes):
    a, b, c = pairs[lane % len(pairs)]
    if kind == "f64": data[1, lane], data[3, lane] = a, b   # hi words of v[8:9] and v[10:11]
    else: data[0, lane], data[1, lane], data[2, lane] = a, b, c
  return data

def kernel(family:str, ops:list, lanes:int) -> list:
  isa = ISAS[family]
  body = isa.s_load(s[4:7], s[0:1])
  for k, reg in enumerate(DATA_V): body += [*_row_offset(k, lanes, isa), isa.gload(v[reg], v[3], s[6:7])]
  body += [isa.wait_loads(), *ops]
  for k, reg in enumerate(DATA_V):
    body += [isa.I.v_mov_b32_e32(v[2], v[reg]), *_row_offset(k, lanes, isa), isa.gstore(v[3], v[2], s[4:5])]
  return body + [isa.I.s_endpgm()]

FAMILIES = [("rdna3", 32), ("rdna4", 32), ("cdna3", 64)]

def run_all() -> dict:
  """{family/case: {path: the dumped v12 (and v13) rows as ints}}."""
  out = {}
  saved = os.environ.get("MOCKGPU_RDNA_NATIVE")
  try:
    for family, lanes in FAMILIES:
      for name, kind, ops, _ in cases(family):
        body, data = kernel(family, ops, lanes), inputs(kind, lanes)
        out[f"{family}/{name}"] = {p: _run(body, data, lanes, p, family)[4:6].tolist() for p in ("stepper", "numpy", "native")}
  finally:
    if saved is None: os.environ.pop("MOCKGPU_RDNA_NATIVE", None)
    else: os.environ["MOCKGPU_RDNA_NATIVE"] = saved
  return out

@pytest.fixture(scope="module")
def outs(): return run_all()

def test_paths_agree_bit_for_bit(outs):
  for key, paths in outs.items():
    for p in ("numpy", "native"): assert paths[p] == paths["stepper"], f"{key}: {p} differs from the stepper"

def _nan(kind:str, a:int) -> bool:
  return {"f32": (a & 0x7fffffff) > 0x7f800000, "f16": (a & 0x7fff) > 0x7c00, "f64": (a & 0x7fffffff) > 0x7ff00000 or
          ((a & 0x7fffffff) == 0x7ff00000 and False)}[kind]

@pytest.mark.parametrize("family,lanes", FAMILIES)
def test_generated_nans_are_the_default_nan(outs, family, lanes):
  """Every lane whose operands are numbers and whose result is a NaN holds the default NaN (each case makes at least
  one); a lane with a NaN operand holds a quiet NaN (propagated, its payload kept)."""
  for name, kind, _, want in cases(family):
    d = np.array(outs[f"{family}/{name}"]["stepper"], np.uint64)
    data = inputs(kind, lanes)
    made = 0
    for lane in range(lanes):
      if kind == "f64":
        r, srcs = int(d[0, lane] | d[1, lane] << 32), [int(data[1, lane]), int(data[3, lane])]
        is_nan, any_in = (r >> 32 & 0x7fffffff) >= 0x7ff00000 and r & 0xfffffffffffff, any(_nan("f64", x) for x in srcs)
      else:
        r = int(d[0, lane]) & (0xffff if kind == "f16" else 0xffffffff)
        srcs = [int(data[k, lane]) for k in range(3)]
        is_nan, any_in = _nan(kind, r), any(_nan(kind, x) for x in srcs)
      if is_nan and not any_in:
        made += 1
        assert r == want, f"{family} {name} lane {lane}: a generated NaN {r:#x}, want {want:#x}"
      if name.startswith("v_pk") and not any_in and _nan("f16", int(d[0, lane]) >> 16): assert int(d[0, lane]) >> 16 == want
    assert made, f"{family} {name}: no lane generated a NaN (the case tests nothing)"

def test_same_bits_with_numpy_simd_limited(outs):
  assert run_limited(__file__, "run_all") == outs

# *** WMMA and MFMA: the same rule per output element ***
# A's rows from v8's halves, B's columns from v9's: A row 0 = (inf, 1) over K, B column 0 = 0 (row 0 x column 0 has
# inf * 0: generated), B column 1 holds a quiet NaN (column 1 propagates it); every other element is 1.
H_ONES = 0x3c003c00
def _matrix_inputs(lanes:int) -> np.ndarray:
  data = np.zeros((len(DATA_V), lanes), np.uint32)
  data[0], data[1] = H_ONES, H_ONES
  data[0, 0], data[1, 0], data[1, 1] = 0x3c00 << 16 | H_INF, 0, 0x3c00 << 16 | H_QNAN
  return data

def _spread(I, src:int, first:int, n:int) -> list: return [I.v_mov_b32_e32(v[first + k], v[src]) for k in range(n)]

MATRIX = [  # (family, lanes, form, the generated NaN, the propagated one (H_QNAN quieted, payload kept), paths)
  ("rdna3", 32, "v_wmma_f32_16x16x16_f16", F32_NAN, 0x7fc24000, ("stepper", "numpy", "native")),
  ("rdna3", 32, "v_wmma_f16_16x16x16_f16", F16_NAN, H_QNAN, ("stepper", "numpy", "native")),
  ("rdna4", 32, "v_wmma_f32_16x16x16_f16", F32_NAN, 0x7fc24000, ("stepper", "numpy")),  # C declines RDNA4's float forms
  ("cdna3", 64, "v_mfma_f32_16x16x16_f16", F32_NAN, 0x7fc24000, ("stepper", "numpy"))]   # C declines MFMA
# D register 0 lane 16: RDNA3's D[1][0] (B's column 0 is lane 0's zeros: 0), RDNA4's D[8][0] (column 0: lane 0's 8 zeros
# for K 0-7, lane 16's 8 ones: 8.0), the MFMA's D[4][0] (lane 0's 4 zeros and 12 ones: 12.0)
LANE16 = {"rdna3": 0, "rdna4": 0x41000000, "cdna3": 0x41400000}

@pytest.mark.parametrize("family,lanes,form,generated,propagated,paths", MATRIX)
def test_matrix_generated_nan_is_the_default_nan(family, lanes, form, generated, propagated, paths):
  """D[0][0] (inputs all numbers, inf * 0 inside) is the default NaN; D[0][1] and lane 17's (a NaN in B's column 1) keep
  the propagated NaN; D[0][2] is inf. D register 0 lane l is D[0][l] for l < 16 on every layout (lane 16: LANE16)."""
  isa = ISAS[family]
  I = isa.I
  if family == "cdna3":
    op = I.VOP3P_MFMA(I.VOP3POp.V_MFMA_F32_16X16X16_F16, vdst=v[40:43], src0=v[16:17], src1=v[24:25], src2=0)
    ops = [*_spread(I, 8, 16, 2), *_spread(I, 9, 24, 2), op]
  elif family == "rdna4":   # A and B: 4 VGPRs (lanes 0-15 K 0-7, lanes 16-31 K 8-15), C and D 8
    ops = [*_spread(I, 8, 16, 4), *_spread(I, 9, 24, 4), *(I.v_mov_b32_e32(v[32 + k], 0) for k in range(8)),
           getattr(I, form)(v[40:47], v[16:19], v[24:27], v[32:39])]
  else:
    ops = [*_spread(I, 8, 16, 8), *_spread(I, 9, 24, 8), *(I.v_mov_b32_e32(v[32 + k], 0) for k in range(8)),
           getattr(I, form)(v[40:47], v[16:23], v[24:31], v[32:39])]
  body = kernel(family, [*ops, I.v_mov_b32_e32(v[12], v[40])], lanes)
  outs = {p: _run(body, _matrix_inputs(lanes), lanes, p, family)[4] for p in paths}
  for p in paths: assert np.array_equal(outs[p], outs[paths[0]]), f"{form}: {p} differs from {paths[0]}"
  d = outs[paths[0]].astype(np.int64)
  assert d[0] == generated, f"{form}: generated NaN {d[0]:#x}, want {generated:#x}"
  assert d[1] == propagated and d[17] == propagated, f"{form}: {d[1]:#x} {d[17]:#x}"
  assert d[16] == LANE16[family], f"{form}: lane 16 {d[16]:#x}, want {LANE16[family]:#x}"
  assert d[2] == (0x7f800000 if generated == F32_NAN else 0x7c00), f"{form}: D[0][2] {d[2]:#x}, want inf"
