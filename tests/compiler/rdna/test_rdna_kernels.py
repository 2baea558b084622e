"""tinygrad's own gfx1100 kernels (LLVM) on the RDNA executor, compared with the same expression on tinygrad's CPU device."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.runtime.support.elf import elf_loader
from tinygrad.renderer.amd import decode_inst
from support.rdna_harness import check, compile_calls, cpu, run_mock

pytestmark = pytest.mark.usefixtures("rdna_path")  # every test on the numpy and the native path

rng = np.random.default_rng(0)
F = rng.standard_normal((48, 40)).astype(np.float32)
G = rng.standard_normal((40, 24)).astype(np.float32)
I = rng.integers(-1000, 1000, (48, 40)).astype(np.int32)
U8 = rng.integers(0, 256, (48, 40)).astype(np.uint8)

@pytest.mark.parametrize("name,fn,inputs,tol", [
  ("add", lambda a: a + 1.5, (F,), 0),
  ("fma_chain", lambda a: a * 3 + a * a, (F,), 0),
  ("where", lambda a: (a > 0.25).where(a, -a), (F,), 0),
  ("int_arith", lambda a: a * 7 - a // 3 + a % 11, (I,), 0),
  ("uint8", lambda a: a + a * 3, (U8,), 0),
  ("int8", lambda a: a.cast(dtypes.int8) * 3, (I,), 0),
  ("bool", lambda a, b: (a > 0) & (b < 100), (F, I), 0),
  ("i2f_f2i", lambda a, b: (a * 100).cast(dtypes.int32) + b.float().cast(dtypes.int32), (F, I), 0),
  ("int64", lambda a: a.cast(dtypes.int64) * 123456789 + 7, (I,), 0),
  ("float64", lambda a: a.cast(dtypes.float64) * 3.25 + 1, (F,), 0),
  ("sum", lambda a: a.sum(), (F,), 1e-5),
  ("sum_axis", lambda a: a.sum(0), (F,), 1e-5),
  ("max_axis", lambda a: a.max(1), (F,), 0),
  ("argmax", lambda a: a.argmax(1), (F,), 0),
  ("matmul", lambda a, b: a @ b, (F, G), 1e-5),
  ("softmax", lambda a: a.softmax(1), (F,), 1e-6),
  ("cumsum", lambda a: a.cumsum(1), (F,), 1e-5),
  ("gather", lambda a, b: a[(b.abs() % 48)[:7, 0]], (F, I), 0),
  ("div", lambda a, b: a / (b.float() + 2000), (F, I), 1e-7),
  ("exp2_log2", lambda a: a.exp2() + a.abs().log2(), (F,), 1e-6),
  ("sqrt_rsqrt", lambda a: a.abs().sqrt() + (a.abs() + 1).rsqrt(), (F,), 1e-6),
  ("sin_cos", lambda a: a.sin() + a.cos(), (F,), 1e-6),
  ("conv2d", lambda a: a.reshape(1, 1, 48, 40).conv2d(Tensor.full((3, 1, 3, 3), 0.5, device="CPU").contiguous()), (F,), 1e-5),
])
def test_kernel_matches_cpu(name, fn, inputs, tol):
  stats = check(fn, *inputs, atol=tol, rtol=tol)
  assert sum(s.wave_instructions for s in stats) > 0

def test_half_fma_single_rounding():
  # LLVM fuses x*3+1 into v_fma_f16: one rounding of the exact value (exact here in float64)
  got, _ = run_mock(cpu(F).cast(dtypes.half) * 3 + 1)
  np.testing.assert_array_equal(got, (F.astype(np.float16).astype(np.float64) * 3 + 1).astype(np.float16))

def _bf16(x:np.ndarray) -> np.ndarray:
  """f32 -> bf16 (round to nearest even) -> f32."""
  b = x.view(np.uint32)
  return ((b + 0x7fff + ((b >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)

def test_bfloat16_roundtrip():
  got, _ = run_mock((cpu(F).cast(dtypes.bfloat16) * 2).float())
  np.testing.assert_array_equal(got, _bf16(F) * 2)

def _ops_of(lib:bytes) -> set[str]:
  image, sections, _ = elf_loader(lib)
  text = next(sh for sh in sections if sh.name == ".text")
  code = bytes(image[text.header.sh_addr:text.header.sh_addr + text.header.sh_size])
  names, pc = set(), 0
  while pc < len(code):
    inst = decode_inst(code[pc:pc + 16])
    names.add(inst.op_name if hasattr(inst, "op") else "VOPD")
    pc += inst.size()
  return names

def test_half_matmul_uses_wmma_and_matches():
  a = rng.standard_normal((64, 64)).astype(np.float16)
  b = rng.standard_normal((64, 64)).astype(np.float16)
  out = (cpu(a) @ cpu(b)).float()
  assert any("V_WMMA_F32_16X16X16_F16" in _ops_of(lib) for _, _, lib in compile_calls(out))
  got, _ = run_mock((cpu(a) @ cpu(b)).float())
  ref = a.astype(np.float32) @ b.astype(np.float32)
  np.testing.assert_allclose(got, ref.astype(np.float16).astype(np.float32), rtol=2e-3, atol=2e-2)

def test_random_threefry_matches_cpu():
  def rand(_): Tensor.manual_seed(7); return Tensor.rand(257, device="CPU")
  check(rand, F)

@pytest.mark.parametrize("kind", ["int8", "half_acc", "bf16"])
def test_wmma_variants(kind):
  a = rng.standard_normal((64, 64)).astype(np.float16)
  b = rng.standard_normal((64, 64)).astype(np.float16)
  ia = rng.integers(-128, 128, (64, 64)).astype(np.int8)
  ib = rng.integers(-128, 128, (64, 64)).astype(np.int8)
  fn, op = {"int8": (lambda: cpu(ia).matmul(cpu(ib), dtype=dtypes.int32), "V_WMMA_I32_16X16X16_IU8"),
            "half_acc": (lambda: cpu(a).matmul(cpu(b), dtype=dtypes.half), "V_WMMA_F16_16X16X16_F16"),
            "bf16": (lambda: (cpu(a).cast(dtypes.bfloat16) @ cpu(b).cast(dtypes.bfloat16)).float(), "V_WMMA_F32_16X16X16_BF16")}[kind]
  assert any(op in _ops_of(lib) for _, _, lib in compile_calls(fn()))
  got, _ = run_mock(fn())
  if kind == "int8": np.testing.assert_array_equal(got, ia.astype(np.int32) @ ib.astype(np.int32))
  else:
    ab = (a.astype(np.float32), b.astype(np.float32))
    if kind == "bf16": ab = tuple(_bf16(x) for x in ab)
    ref = ab[0].astype(np.float64) @ ab[1].astype(np.float64)
    # both outputs are 16-bit (the bf16 matmul's result dtype is bf16): within its rounding of the exact product
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2**-8 if kind == "bf16" else 2**-10, atol=0.02)
