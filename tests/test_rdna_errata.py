"""The hardware-vs-manual errata of mockgpu/compiler/rdna/errata.py, one test per entry that is modelled, on both
executor paths. The anchor values are results read on real RDNA3; the generated cases use a reference written here
(numpy float16 addition is correctly rounded, as the hardware's f16 add is: exact comparison)."""
from __future__ import annotations
import os
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.compiler.rdna.errata import ERRATA
from test_rdna_harness import aligned
from test_rdna_isa import kernel, run

PATHS = ["numpy", "native"]

def lanes(body, path:str, c_runs:bool) -> np.ndarray:
  """v2 of each of 32 lanes after body; asserts which path ran (c_runs: the C backend covers the kernel)."""
  os.environ["MOCKGPU_RDNA_NATIVE"] = "0" if path == "numpy" else "1"
  out = aligned(128, 256).view(np.uint32)
  out[:] = 0
  code = kernel(I.v_lshlrev_b32_e32(v[9], 2, v[0]), *body,
                I.global_store_b32(addr=v[9], data=v[2], saddr=s[4:5], offset=0), I.s_endpgm())
  stats, _ = run(code, out, lds=512)
  assert stats.native == (path == "native" and c_runs), f"{path}: ran on the other path"
  return out.copy()

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
  """The C backend has no VOP3P: the kernel runs on numpy on both settings (asserted)."""
  # anchor (hardware): v_pk_add_u16 v1, v0=0x00030005, 2.0, op_sel_hi=3 -> 0x40030005 (the f32 pattern 0x40000000)
  got = lanes([I.v_mov_b32_e32(v[5], 0x00030005), I.v_pk_add_u16(v[2], v[5], 2.0, opsel_hi=3, opsel_hi2=1)], path, False)
  assert (got == 0x40030005).all()
  # float packed op: the f16 constant in bits 15:0, high half 0 -> the high lane adds 0
  got = lanes([I.v_mov_b32_e32(v[5], 0x3c003c00), I.v_pk_add_f16(v[2], v[5], 2.0, opsel_hi=3, opsel_hi2=1)], path, False)
  assert (got == 0x3c004200).all()  # hi 1.0 + 0, lo 1.0 + 2.0 = 3.0 (0x4200)

@pytest.mark.parametrize("path", PATHS)
def test_writelane_constant_lane(path):
  """A constant lane index (a 0-d lane mask in the numpy backend); the C backend declines v_writelane."""
  got = lanes([I.v_mov_b32_e32(v[2], 7), I.s_mov_b32(s[8], 99), I.v_writelane_b32(v[2], s[8], 5)], path, False)
  assert got[5] == 99 and (np.delete(got, 5) == 7).all()

def test_table_names_its_tests():
  """Every erratum marked modelled names a test that exists (here or in the named file)."""
  here = globals()
  for e in ERRATA:
    assert e.status in ("fixed", "numpy", "open")
    if e.status != "open":
      assert e.test, e.id
      if "::" not in e.test: assert e.test in here, (e.id, e.test)

@pytest.mark.parametrize("path", PATHS)
def test_ds_storexchg_rtn_returns_old(path):
  """ds_storexchg_rtn_b32: each lane swaps v3 into LDS[4*lane] and gets the old word (here 1000+lane, written
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
