"""Float division as LLVM lowers it for gfx1100, run on the RDNA executor.

LLVM's precise fdiv (no fast-math flags) is v_div_scale (denominator and numerator), v_rcp, a Newton-Raphson chain of
fmas, v_div_fmas (reading the numerator call's VCC) and v_div_fixup. It returns the correctly rounded quotient only
with the hardware's division helpers (errata div-scale-vcc, div-fmas-scale, div-fixup-nan): the manual's 2^32 in
v_div_fmas would leave huge and tiny quotients scaled, and its v_div_fixup would return NaN for an overflowing one.
So the quotient must equal numpy's (IEEE division, correctly rounded) bit for bit, denormals, overflow and
underflow included. tinygrad's own division is fast (`fdiv afn arcp`: v_rcp times the numerator), within 2 ulps.
"""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad.runtime.support.compiler_llvm import AMDLLVMCompiler
from support.rdna_harness import aligned, cpu, launch, run_mock

IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @fdiv(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %a, ptr addrspace(1) noalias %b) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %g32 = shl i32 %g, 5
  %i = add i32 %g32, %l
  %pa = getelementptr inbounds T, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr inbounds T, ptr addrspace(1) %b, i32 %i
  %po = getelementptr inbounds T, ptr addrspace(1) %out, i32 %i
  %x = load T, ptr addrspace(1) %pa
  %y = load T, ptr addrspace(1) %pb
  %q = fdiv T %x, %y
  store T %q, ptr addrspace(1) %po
  ret void
}
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,32" }
"""
TYPES = {"float": (np.float32, np.uint32), "double": (np.float64, np.uint64)}

def operands(t, ut, n:int) -> tuple[np.ndarray, np.ndarray]:
  """n pairs: random bit patterns (every exponent: overflowing, underflowing and denormal quotients, NaNs, infs),
  magnitudes spread over the format's range, and the special values against each other."""
  rng = np.random.default_rng(11)
  info = np.finfo(t)
  a = rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True).view(t)
  b = rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True).view(t)
  k = n // 4
  lo, hi = int(np.log2(info.smallest_subnormal)), int(info.maxexp)
  for x in (a, b): x[:k] = (rng.uniform(1, 2, k) * 2.0 ** rng.integers(lo, hi, k) * rng.choice([-1, 1], k)).astype(t)
  special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 3.0, info.max, info.tiny, info.smallest_subnormal,
                      -info.smallest_subnormal * 3], t)
  sa, sb = np.meshgrid(special, special)
  a[k:k + sa.size], b[k:k + sa.size] = sa.ravel(), sb.ravel()
  return a, b

@pytest.mark.parametrize("path", ["numpy", "native"])
@pytest.mark.parametrize("ty", TYPES)
def test_llvm_precise_division_is_correctly_rounded(ty, path, monkeypatch):
  """On both paths: the C backend runs the f32 sequence (prelude div_scale32, div_fmas32, div_fixup32); the f64 one
  keeps the numpy path (v_div_fmas_f64 has no C form), asserted."""
  t, ut = TYPES[ty]
  lib = AMDLLVMCompiler("gfx1100").compile(IR.replace("T", ty))
  n = 32 * 96
  a, b = operands(t, ut, n)
  A, B, out = (aligned(n * np.dtype(t).itemsize, 256).view(t) for _ in range(3))
  A[:], B[:] = a, b
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  stats = launch(lib, [out, A, B], (n // 32, 1, 1), (32, 1, 1))
  assert stats.native == (path == "native" and ty == "float")
  with np.errstate(all="ignore"): want = a / b
  differ = (out.view(ut) != want.view(ut)) & ~(np.isnan(out) & np.isnan(want))  # which NaN: the manual leaves it open
  assert not differ.any(), [(a[i], b[i], want[i], out[i]) for i in np.nonzero(differ)[0][:5]]
  # the operands reach the cases the hardware behaviour decides: overflowing, denormal and zero quotients
  finite = np.isfinite(a) & np.isfinite(b) & (b != 0)
  assert (np.isinf(want) & finite).sum() > 10 and ((want != 0) & (np.abs(want) < np.finfo(t).tiny)).sum() > 10
  assert ((want == 0) & (a != 0) & finite).sum() > 10

def ulps32(x:np.ndarray, ref:np.ndarray) -> np.ndarray:
  """|x - ref| in units of the last place of float32 at ref (ref exact, float64)."""
  e = np.frexp(np.abs(ref).astype(np.float32))[1].astype(np.int64)
  ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
  return np.abs(x.astype(np.float64) - ref) / ulp

@pytest.mark.usefixtures("rdna_path")
def test_tinygrad_division_within_two_ulps(rdna_path):
  """tinygrad's a / b (fast: the reciprocal, 1 ulp, then the product, half an ulp) against the exact quotient; the
  operands keep the quotient and the reciprocal normal, where LLVM's fast lowering is documented."""
  rng = np.random.default_rng(3)
  a = (rng.uniform(1, 2, 4096) * 2.0 ** rng.integers(-60, 60, 4096) * rng.choice([-1, 1], 4096)).astype(np.float32)
  b = (rng.uniform(1, 2, 4096) * 2.0 ** rng.integers(-60, 60, 4096) * rng.choice([-1, 1], 4096)).astype(np.float32)
  got, stats = run_mock(cpu(a) / cpu(b))
  assert all(s.native == (rdna_path == "native") for s in stats)
  exact = a.astype(np.float64) / b.astype(np.float64)
  assert ulps32(got, exact).max() <= 2
