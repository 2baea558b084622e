"""The executor's fast paths give the same results as the general ones: the native FMA, masks kept as lane arrays
across instructions (lazy VCC), the gathered wide loads and the interleaving dense store."""
from __future__ import annotations
import os, shutil
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC_LO
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.errors import GPUPageFault
from mockgpu.compiler import native
from mockgpu.compiler.rdna.backends import numpy_runtime as rt
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run, tid_times4, store

pytestmark = pytest.mark.usefixtures("rdna_path")  # every test on the numpy and the native path

U = np.uint32
rng = np.random.default_rng(7)
SPECIAL = np.array([0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0xff812345, 1, 0x807fffff,
                    0x00800000, 0x3f800000, 0x7f7fffff, 0xff7fffff], U)

def f32_bits(n:int) -> np.ndarray:
  """Random float32 bit patterns, a tenth of them special values (NaNs with payloads, infinities, denormals, zeros)."""
  bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(U)
  k = n // 10
  bits[:k] = SPECIAL[rng.integers(0, len(SPECIAL), k)]
  rng.shuffle(bits)
  return bits.view(np.float32)

def native_fma():
  if shutil.which(os.environ.get("CC", "cc")) is None: pytest.skip("no C compiler: the numpy path is the only one")
  if os.environ.get("MOCKGPU_NATIVE") == "0": pytest.skip("MOCKGPU_NATIVE=0: the native helpers are off")
  fma = native.fma_f32()
  assert fma is not None, "a C compiler is installed, so the native helpers must build"
  return fma

def test_native_fma_same_bits_as_float64_emulation():
  fma = native_fma()
  a, b, c = f32_bits(1 << 16), f32_bits(1 << 16), f32_bits(1 << 16)
  # products of short mantissas plus sums landing exactly on float32 rounding midpoints
  x = rng.integers(1, 1 << 12, 1 << 16).astype(np.float32) * np.float32(2.0**-6)
  y = rng.integers(1, 1 << 12, 1 << 16).astype(np.float32) * np.float32(2.0**-20)
  z = rng.integers(-1 << 20, 1 << 20, 1 << 16).astype(np.float32) * np.float32(2.0**-3)
  with np.errstate(all="ignore"):
    for p, q, r in ((a, b, c), (x, y, z), (a, y, c), (x * np.float32(2.0**-120), y, z * np.float32(2.0**-130))):
      np.testing.assert_array_equal(fma(p, q, r).view(U), rt._fma_odd(p, q, r, np.float32).view(U))

def test_native_fma_broadcasts_and_strides():
  native_fma()
  a = f32_bits(64 * 64).reshape(64, 64)[:, ::2]     # [64, 32], strided
  b = f32_bits(64).reshape(64, 1)                    # one value per wave
  c = np.asarray(f32_bits(1)[0])                      # a scalar
  with np.errstate(all="ignore"):
    got, ref = rt.fma32(a, b, c), rt._fma_odd(a, b, c, np.float32)
  assert got.shape == ref.shape == (64, 32)
  np.testing.assert_array_equal(got.view(U), ref.view(U))

def test_vcc_lane_mask_read_by_salu_branch_and_next_block():
  # VCC is kept as lane bits between VALU ops; a scalar read, a VCCZ branch and the next block must all see it packed
  out = aligned(4 * 32, 256).view(U)
  body = [tid_times4(), I.v_mov_b32_e32(v[3], 1),
          I.v_cmp_gt_u32_e32(10, v[0]), I.s_mov_b32(s[9], VCC_LO),         # s9 = lanes < 10 = 0x3ff
          I.v_cmp_gt_u32_e32(20, v[0]), I.s_branch(simm16=0),               # VCC = lanes < 20, live into the next block
          I.v_cndmask_b32_e32(v[2], 0, v[3]), I.v_add_nc_u32_e32(v[2], s[9], v[2]),
          I.v_cmp_gt_u32_e32(0, v[0]), I.s_cbranch_vccz(simm16=1),          # VCC = 0: skip the add of 7
          I.v_add_nc_u32_e32(v[2], 7, v[2]),
          store(v[2]), I.s_endpgm()]
  run(kernel(*body), out)
  np.testing.assert_array_equal(out, 0x3ff + (np.arange(32) < 20))

def test_carry_chain_across_compare_uses_the_right_vcc():
  # a compare between the add and the add-with-carry overwrites VCC: the carry-in is the compare's result
  out = aligned(4 * 32, 256).view(U)
  body = [tid_times4(), I.v_mov_b32_e32(v[2], 0xffffffff), I.v_add_co_u32(v[2], VCC_LO, v[2], v[0]),  # carry for lanes > 0
          I.v_cmp_gt_u32_e32(5, v[0]), I.v_add_co_ci_u32_e32(v[3], 100, v[0]), store(v[3]), I.s_endpgm()]
  run(kernel(*body), out)
  t = np.arange(32)
  np.testing.assert_array_equal(out, 100 + t + (t < 5))

# 64: whole-row gathers; 68: rows at dword (not access-size) alignment; 66: not even dword-aligned (the general path)
@pytest.mark.parametrize("stride", [64, 68, 66])
def test_strided_wide_loads_and_dense_wide_store(stride):
  inp = aligned(32 * stride + 64, 256).view(U)
  inp[:] = rng.integers(0, 2**32, len(inp), dtype=np.uint64).astype(U)
  out = aligned(4096, 256).view(U)
  body = [tid_times4(), I.v_mul_u32_u24_e32(v[6], stride, v[0]), I.v_lshlrev_b32_e32(v[7], 4, v[0]),
          I.global_load_b128(vdst=v[10:13], addr=v[6], saddr=s[6:7], offset=0),
          I.global_load_b64(vdst=v[14:15], addr=v[6], saddr=s[6:7], offset=4),
          I.global_load_b96(vdst=v[16:18], addr=v[6], saddr=s[6:7], offset=8), I.s_waitcnt(simm16=0),
          *[I.global_store_b32(addr=v[1], data=v[14 + j], saddr=s[4:5], offset=128 * j) for j in range(5)],
          I.global_store_b128(addr=v[7], data=v[10:13], saddr=s[4:5], offset=1024), I.s_endpgm()]
  run(kernel(*body), out, inp)
  words = lambda off, n: np.stack([inp.view(np.uint8)[t * stride + off:t * stride + off + 4 * n].view(U) for t in range(32)])
  np.testing.assert_array_equal(out[256:384].reshape(32, 4), words(0, 4))
  np.testing.assert_array_equal(out[:64].reshape(2, 32).T, words(4, 2))
  np.testing.assert_array_equal(out[64:160].reshape(3, 32).T, words(8, 3))

def test_strided_wide_load_past_the_buffer_faults():
  inp = aligned(4096, 256).view(U)
  out = aligned(4096, 256).view(U)
  body = [tid_times4(), I.v_lshlrev_b32_e32(v[6], 7, v[0]),  # lane 31 reads at 3968 + 128: past the 4096-byte buffer
          I.global_load_b128(vdst=v[10:13], addr=v[6], saddr=s[6:7], offset=128), I.s_waitcnt(simm16=0), I.s_endpgm()]
  with pytest.raises(GPUPageFault, match="global_load_b128 at PC"):
    run(kernel(*body), out, inp)

def test_scalar_load_per_workgroup_addresses():
  # waves of different workgroups read different dwords through one s_load: the per-wave path, not the shared one
  inp = aligned(4096, 256).view(U)
  inp[:8] = np.arange(8, dtype=U) * 11 + 5
  out = aligned(4 * 32 * 3, 256).view(U)
  body = [tid_times4(), I.s_lshl_b32(s[11], s[2], 2), I.s_load_b32(sdata=s[10], sbase=s[6:7], offset=0, soffset=s[11]),
          I.s_lshl_b32(s[3], s[2], 7), I.s_waitcnt(simm16=0), I.v_mov_b32_e32(v[2], s[10]),
          I.v_add_nc_u32_e32(v[1], s[3], v[1]), store(v[2]), I.s_endpgm()]
  run(kernel(*body), out, inp, grid=(3, 1, 1))
  np.testing.assert_array_equal(out, np.repeat(inp[:3], 32))
