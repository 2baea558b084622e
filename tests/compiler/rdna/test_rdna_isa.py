"""Hand-assembled RDNA3 kernels (tinygrad's instruction DSL) on the executor: semantics, errors and their messages."""
from __future__ import annotations
import struct
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC_LO, EXEC_LO, NULL, src as SRC
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from tinygrad.runtime.autogen.amd.rdna3.enum import VOP1Op
from mockgpu.errors import GPUPageFault, UnsupportedInstruction, InstructionBudgetExceeded
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch
from support.rdna_harness import aligned
from support.rdna_isa import RSRC1, RSRC2, _dpp_mov, kernel, run, store, tid_times4

pytestmark = pytest.mark.usefixtures("rdna_path")  # every test on the numpy and the native path

def test_workitem_ids_and_partial_wave():
  out = aligned(4 * 64, 256).view(np.uint32)
  out[:] = 0xdead
  stats, _ = run(kernel(tid_times4(), I.v_add_nc_u32_e32(v[2], 7, v[0]), store(v[2]), I.s_endpgm()), out, block=(40, 1, 1))
  np.testing.assert_array_equal(out[:40], np.arange(40) + 7)
  assert (out[40:] == 0xdead).all()  # lanes 40..63 of the second wave are not live
  assert stats.waves == 2 and stats.wave_instructions == 2 * 6

def test_workgroup_id_sgpr():
  out = aligned(4 * 32 * 3, 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[2], s[2]), I.s_lshl_b32(s[3], s[2], 7), I.v_add_nc_u32_e32(v[1], s[3], v[1]), store(v[2]), I.s_endpgm()]
  run(kernel(tid_times4(), *body), out, grid=(3, 1, 1))
  np.testing.assert_array_equal(out, np.repeat(np.arange(3), 32))

def test_exec_masking_and_branch():
  # lanes < 10 write 1, the others skip the store through s_and_saveexec + s_cbranch_execz
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_cmp_gt_u32_e32(10, v[0]), I.s_and_saveexec_b32(s[8], VCC_LO), I.s_cbranch_execz(simm16=3),
          I.v_mov_b32_e32(v[2], 1), store(v[2]), I.s_or_b32(EXEC_LO, EXEC_LO, s[8]), I.s_endpgm()]
  run(kernel(tid_times4(), *body), out)
  np.testing.assert_array_equal(out, (np.arange(32) < 10).astype(np.uint32))

def test_scalar_loop_counts():
  # s8 = 0; do { v2 += 3; s8 += 1 } while (s8 < 5)
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.s_mov_b32(s[8], 0), I.v_mov_b32_e32(v[2], 0), I.v_add_nc_u32_e32(v[2], 3, v[2]), I.s_add_u32(s[8], s[8], 1),
          I.s_cmp_lt_u32(s[8], 5), I.s_cbranch_scc1(simm16=(-4) & 0xffff), store(v[2]), I.s_endpgm()]
  stats, _ = run(kernel(tid_times4(), *body), out)
  np.testing.assert_array_equal(out, np.full(32, 15))
  assert stats.wave_instructions == 3 + 2 + 4 * 5 + 2

def test_carry_chain_64bit_add():
  out = aligned(8 * 32, 256).view(np.uint64)
  body = [I.v_mov_b32_e32(v[2], 0xffffffff), I.v_mov_b32_e32(v[3], v[0]), I.v_add_co_u32(v[2], VCC_LO, v[2], v[0]),
          I.v_add_co_ci_u32_e32(v[3], 0, v[3]), I.v_lshlrev_b32_e32(v[1], 3, v[0]),
          I.global_store_b64(addr=v[1], data=v[2:3], saddr=s[4:5], offset=0), I.s_endpgm()]
  run(kernel(*body), out)
  t = np.arange(32, dtype=np.uint64)
  np.testing.assert_array_equal(out, ((t << 32) + 0xffffffff + t) & 0xffffffffffffffff)

def test_lds_barrier_reverses_workgroup():
  # 64 threads (two waves): store tid to LDS, barrier, read LDS[63 - tid]
  out = aligned(4 * 64, 256).view(np.uint32)
  body = [tid_times4(), I.ds_store_b32(addr=v[1], data0=v[0]), I.s_waitcnt(simm16=0), I.s_barrier(),
          I.v_sub_nc_u32_e32(v[3], 63, v[0]), I.v_lshlrev_b32_e32(v[3], 2, v[3]), I.ds_load_b32(vdst=v[2], addr=v[3]),
          I.s_waitcnt(simm16=0), store(v[2]), I.s_endpgm()]
  run(kernel(*body), out, block=(64, 1, 1), grid=(2, 1, 1), lds=512)
  np.testing.assert_array_equal(out, 63 - np.arange(64))

def test_lds_out_of_range_faults():
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[1], 512), I.ds_store_b32(addr=v[1], data0=v[0]), I.s_endpgm()]
  with pytest.raises(GPUPageFault, match=r"ds_store_b32 at PC 0x[0-9a-f]+.*LDS offset 0x200 is outside its 512 byte"):
    run(kernel(*body), out, lds=512)

def test_lds_b128_fault_reports_the_whole_access_and_who(rdna_path):
  # 64 threads store 16 bytes each at 0x100 + 16 * tid into 512 bytes of LDS: thread 16 (wave 0, lane 16) is the first past it
  out = aligned(4 * 64, 256).view(np.uint32)
  body = [I.v_lshlrev_b32_e32(v[1], 4, v[0]), I.v_add_nc_u32_e32(v[1], 0x100, v[1]), I.ds_store_b128(addr=v[1], data0=v[4:7]), I.s_endpgm()]
  with pytest.raises(GPUPageFault, match=r"write of 16 bytes .*ds_store_b128 at PC 0x[0-9a-f]+.*LDS offset 0x200 is outside its 512 byte") as e:
    run(kernel(*body), out, block=(64, 1, 1), grid=(2, 1, 1), lds=512)
  assert (e.value.size, e.value.space, e.value.workgroup, e.value.wave, e.value.nearest) == (16, "LDS", (0, 0, 0), 0, None)
  assert e.value.lane == (16 if rdna_path == "numpy" else None)  # the C path runs a wave at a time and does not know the lane

def test_global_page_fault_names_instruction_and_pc():
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[1], 0x100000), I.global_store_b32(addr=v[1], data=v[0], saddr=s[4:5], offset=0), I.s_endpgm()]
  with pytest.raises(GPUPageFault) as e:
    _, pgm = run(kernel(*body), out)
  assert e.value.write and e.value.va == out.ctypes.data + 0x100000
  assert "global_store_b32 at PC 0x" in str(e.value)
  assert e.value.where.endswith(f"0x{int(e.value.where.split('0x')[-1], 16):x}")

def test_unsupported_instruction_names_mnemonic_and_pc():
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[1], 0), I.s_sethalt(simm16=0), I.s_endpgm()]
  with pytest.raises(UnsupportedInstruction, match=r"s_sethalt: debugger state .* at PC 0x[0-9a-f]+"):
    run(kernel(*body), out)

def test_dpp16_lane_patterns():
  lane = np.arange(32)
  np.testing.assert_array_equal(_dpp_mov(dpp=0x1b), (lane & ~3) | (3 - (lane & 3)))          # quad_perm [3,2,1,0]
  np.testing.assert_array_equal(_dpp_mov(dpp=0x140), (lane & ~15) | (15 - (lane & 15)))      # row_mirror
  shr = _dpp_mov(dpp=0x111)                                                                  # row_shr:1
  np.testing.assert_array_equal(shr, np.where(lane & 15, lane - 1, 1000 + lane))             # lane 0 of a row: unwritten
  np.testing.assert_array_equal(_dpp_mov(dpp=0x111, bc=1), np.where(lane & 15, lane - 1, 0))  # bound_ctrl: reads 0
  np.testing.assert_array_equal(_dpp_mov(dpp=0x1b, row_mask=1), np.where(lane < 16, (lane & ~3) | (3 - (lane & 3)), 1000 + lane))

def test_dpp8_and_bad_dpp_control():
  out = aligned(4 * 32, 256).view(np.uint32)
  sels = {f"lane_sel_{k}": 7 - k for k in range(8)}
  dpp8 = I.VOP1_DPP8(VOP1Op.V_MOV_B32_E32, v[2], src0=SRC[233], vsrc0=v[0], **sels)
  run(kernel(tid_times4(), dpp8, store(v[2]), I.s_endpgm()), out)
  lane = np.arange(32)
  np.testing.assert_array_equal(out, (lane & ~7) | (7 - (lane & 7)))
  with pytest.raises(UnsupportedInstruction, match="DPP16 control 0x130"):
    _dpp_mov(dpp=0x130)

def test_unsupported_only_when_executed():
  # an unknown instruction on a path no wave takes must not fail the dispatch
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [tid_times4(), I.s_branch(simm16=1), I.s_sethalt(simm16=0), store(v[0]), I.s_endpgm()]
  run(kernel(*body), out)
  np.testing.assert_array_equal(out, np.arange(32))

def test_budget_exceeded_names_kernel_pc(monkeypatch):
  monkeypatch.setenv("MOCKGPU_BUDGET", "1000")
  out = aligned(4 * 32, 256).view(np.uint32)
  with pytest.raises(InstructionBudgetExceeded, match=r"kernel at PC 0x[0-9a-f]+ ran past MOCKGPU_BUDGET=1000"):
    run(kernel(I.s_branch(simm16=0xffff)), out)

def test_code_fetch_outside_memory_faults():
  mem = AddressSpace("empty")
  d = Dispatch("rdna3", 0x10000, RSRC1, RSRC2, 0, [0] * 16, 0, 0, (32, 1, 1), (1, 1, 1), True)
  with pytest.raises(GPUPageFault, match="instruction fetch at PC 0x10000"):
    run_dispatch(mem, d)

def test_unmodelled_modes_raise():
  out = aligned(4 * 32, 256).view(np.uint32)
  with pytest.raises(NotImplementedError, match="FLOAT_ROUND_MODE"):
    run(kernel(I.s_endpgm()), out, rsrc1=RSRC1 | 1 << 12)
  with pytest.raises(NotImplementedError, match="architecture 'cdna'"):
    run_dispatch(AddressSpace("y"), Dispatch("cdna", 0, RSRC1, RSRC2, 0, [0] * 16, 0, 0, (64, 1, 1), (1, 1, 1), True))

def test_scratch_private_per_lane_and_bounds():
  out = aligned(4 * 64, 256).view(np.uint32)
  tmpring = 1 << 12  # one 256-byte slot per wave: 8 bytes per lane in wave32
  body = [tid_times4(), I.v_mov_b32_e32(v[3], 4), I.scratch_store_b32(addr=v[3], data=v[0], saddr=NULL, offset=0, sve=1),
          I.scratch_load_b32(vdst=v[2], addr=v[3], saddr=NULL, offset=0, sve=1), I.s_waitcnt(simm16=0), store(v[2]), I.s_endpgm()]
  run(kernel(*body), out, block=(64, 1, 1), rsrc2=RSRC2 | 1, tmpring=tmpring)
  np.testing.assert_array_equal(out, np.arange(64))  # every lane reads back its own value from the same offset
  bad = [I.v_mov_b32_e32(v[3], 8), I.scratch_store_b32(addr=v[3], data=v[0], saddr=NULL, offset=0, sve=1), I.s_endpgm()]
  with pytest.raises(GPUPageFault, match=r"scratch_store_b32 at PC 0x[0-9a-f]+: private \(scratch\) offset 0x8"):
    run(kernel(*bad), out, rsrc2=RSRC2 | 1, tmpring=tmpring)

def _unary(op, x:np.ndarray) -> np.ndarray:
  """Apply a VOP1 f32 op to 32 lanes of x (as bits) via a global load and store."""
  out = aligned(4 * 32, 256).view(np.uint32)
  inp = aligned(4 * 32, 256).view(np.uint32)
  inp[:] = x.view(np.uint32)
  body = [tid_times4(), I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[6:7], offset=0), I.s_waitcnt(simm16=0),
          op(v[2], v[2]), store(v[2]), I.s_endpgm()]
  run(kernel(*body), out, inp)
  return out.view(np.float32).copy()

def _ulp_error(got:np.ndarray, exact:np.ndarray) -> np.ndarray:
  ulp = np.spacing(np.abs(got.astype(np.float32))).astype(np.float64)
  return np.abs(got.astype(np.float64) - exact) / ulp

@pytest.mark.parametrize("op,fn,lo,hi", [
  (I.v_exp_f32_e32, np.exp2, -20, 20), (I.v_log_f32_e32, np.log2, 1e-3, 1e4), (I.v_rcp_f32_e32, lambda x: 1 / x, 1e-3, 1e3),
  (I.v_rsq_f32_e32, lambda x: 1 / np.sqrt(x), 1e-3, 1e3), (I.v_sqrt_f32_e32, np.sqrt, 0, 1e6),
  (I.v_sin_f32_e32, lambda x: np.sin(2 * np.pi * (x - np.rint(x))), -4, 4),
  (I.v_cos_f32_e32, lambda x: np.cos(2 * np.pi * (x - np.rint(x))), -4, 4)])
def test_transcendental_error_bound(op, fn, lo, hi):
  x = np.random.default_rng(1).uniform(lo, hi, 32).astype(np.float32)
  got = _unary(op, x)
  exact = fn(x.astype(np.float64))
  # documented bound: 0.5 ulp (sin/cos: 0.5 ulp + 2**-50 absolute, from the float64 evaluation)
  err = _ulp_error(got, exact)
  assert (err <= 0.5 + 2**-50 / np.spacing(np.abs(got)).min()).all(), err.max()

def test_transcendental_special_values():
  x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0] + [1.0] * 26, np.float32)
  with np.errstate(all="ignore"):
    np.testing.assert_array_equal(_unary(I.v_log_f32_e32, x)[:6], np.log2(x[:6]))
    np.testing.assert_array_equal(_unary(I.v_rcp_f32_e32, x)[:6], np.float32(1) / x[:6])
    np.testing.assert_array_equal(_unary(I.v_exp_f32_e32, x)[:6], np.exp2(x[:6]))

def test_fma_is_fused_single_rounding():
  # a*b+c where the unfused result rounds differently: (1+2^-12)^2 - 1 needs the exact 2^-24 term
  a = np.float32(1 + 2**-12)
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[2], float(a)), I.v_fma_f32(v[3], v[2], v[2], -1.0), tid_times4(), store(v[3]), I.s_endpgm()]
  run(kernel(*body), out)
  exact = np.float64(a) * np.float64(a) - 1
  assert out.view(np.float32)[0] == np.float32(exact) != a * a - np.float32(1)

@pytest.mark.parametrize("sign", [1, -1])
def test_fma_no_double_rounding(sign):
  # a*a is exactly an f32 midpoint; the tiny c decides the direction, though a*a+c rounds back to a*a in float64
  a = 1 + 2**-12
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[2], a), I.v_mov_b32_e32(v[4], sign * 2.0**-100), I.v_fma_f32(v[3], v[2], v[2], v[4]),
          tid_times4(), store(v[3]), I.s_endpgm()]
  run(kernel(*body), out)
  assert out.view(np.float32)[0] == np.float32(1 + 2**-11 + (2**-23 if sign > 0 else 0))

def test_denorm_flush_mode():
  tiny = np.float32(1e-40)  # an f32 denormal
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_mov_b32_e32(v[2], int(tiny.view(np.uint32))), I.v_add_f32_e32(v[3], 0, v[2]), tid_times4(), store(v[3]), I.s_endpgm()]
  run(kernel(*body), out)
  assert out.view(np.float32)[0] == tiny
  run(kernel(*body), out, rsrc1=RSRC1 & ~(0x3 << 16))
  assert out.view(np.float32)[0] == 0

def test_translation_cached_and_invalidated_by_new_code(monkeypatch, tmp_path):
  from mockgpu.compiler import cache
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path))
  out = aligned(4 * 32, 256).view(np.uint32)
  mem = AddressSpace("cache")
  code = kernel(tid_times4(), I.v_add_nc_u32_e32(v[2], 11, v[0]), store(v[2]), I.s_endpgm())
  before = dict(cache.stats)
  img = aligned(4096)
  args = aligned(256, 256)
  struct.pack_into("<QQ", args, 0, out.ctypes.data, 0)
  for a in (img, args, out): mem.map(a.ctypes.data, a.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  d = Dispatch("rdna3", img.ctypes.data, RSRC1, RSRC2, 0, user, 0, 0, (32, 1, 1), (1, 1, 1), True)
  def load(insts):
    b = b"".join(i.to_bytes() for i in insts)
    img[:len(b)] = np.frombuffer(b, np.uint8)
  load(code)
  run_dispatch(mem, d)
  run_dispatch(mem, d)
  np.testing.assert_array_equal(out, np.arange(32) + 11)
  assert cache.stats["translations"] - before["translations"] + cache.stats["disk_hits"] - before["disk_hits"] <= 1
  load(kernel(tid_times4(), I.v_add_nc_u32_e32(v[2], 12, v[0]), store(v[2]), I.s_endpgm()))  # same PC, new code
  run_dispatch(mem, d)
  np.testing.assert_array_equal(out, np.arange(32) + 12)

def test_divergent_waves_meet_at_barrier():
  # wave k of the workgroup loops k+2 times on a scalar counter (waves diverge), writes its count to LDS, then after
  # s_barrier every lane reads the count of the other wave: the barrier must hold the early wave until the late one.
  out = aligned(4 * 64, 256).view(np.uint32)
  body = [tid_times4(), I.v_lshrrev_b32_e32(v[5], 5, v[0]), I.v_readfirstlane_b32_e32(s[8], v[5]),  # s8 = wave index
          I.s_add_u32(s[9], s[8], 2), I.s_mov_b32(s[10], 0),
          I.s_add_u32(s[10], s[10], 1), I.s_cmp_lt_u32(s[10], s[9]), I.s_cbranch_scc1(simm16=(-3) & 0xffff),  # loop
          I.v_mov_b32_e32(v[3], s[10]), I.v_lshlrev_b32_e32(v[4], 2, v[5]), I.ds_store_b32(addr=v[4], data0=v[3]),
          I.s_waitcnt(simm16=0), I.s_barrier(),
          I.v_xor_b32_e32(v[4], 4, v[4]), I.ds_load_b32(vdst=v[2], addr=v[4]), I.s_waitcnt(simm16=0), store(v[2]), I.s_endpgm()]
  stats, _ = run(kernel(*body), out, block=(64, 1, 1), lds=512)
  np.testing.assert_array_equal(out, np.repeat([3, 2], 32))
  assert stats.wave_instructions == 2 * 17 + 3 * (2 + 3)  # both waves' 17 straight-line instructions, 2 + 3 loop trips

def test_lds_atomic_add_conflicts_in_lane_order():
  out = aligned(4 * 64, 256).view(np.uint32)
  body = [tid_times4(), I.v_mov_b32_e32(v[3], 0), I.v_mov_b32_e32(v[4], 1),
          I.ds_add_rtn_u32(vdst=v[2], addr=v[3], data0=v[4]), I.s_waitcnt(simm16=0), I.s_barrier(),
          I.ds_load_b32(vdst=v[5], addr=v[3]), I.s_waitcnt(simm16=0), I.v_add_nc_u32_e32(v[2], v[2], v[5]),
          store(v[2]), I.s_endpgm()]
  run(kernel(*body), out, block=(64, 1, 1), lds=512)
  np.testing.assert_array_equal(out, np.arange(64) + 64)  # value seen by each lane, plus the final total

def assemble(*items) -> list:
  """Instructions with labels: a str is a label; (factory, label) is a branch to it, its simm16 filled in."""
  pos, at = {}, 0
  for it in items:
    if isinstance(it, str): pos[it] = at
    else: at += 4 if isinstance(it, tuple) else it.size()
  out, at = [], 0
  for it in items:
    if isinstance(it, str): continue
    if isinstance(it, tuple): it = it[0](simm16=((pos[it[1]] - at - 4) // 4) & 0xffff)
    out.append(it)
    at += it.size()
  return out

def test_barrier_holds_waves_until_all_arrive():
  # wave 1 stores its LDS slot in a block placed after s_endpgm (the scheduler runs lower PCs first, so without the
  # barrier wave 0 would read that slot before wave 1 wrote it)
  out = aligned(4 * 64, 256).view(np.uint32)
  prog = assemble(I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0), tid_times4(),
                  I.v_lshrrev_b32_e32(v[5], 5, v[0]), I.v_readfirstlane_b32_e32(s[8], v[5]), I.v_lshlrev_b32_e32(v[4], 2, v[5]),
                  I.v_add_nc_u32_e32(v[3], 10, v[5]), I.s_cmp_eq_u32(s[8], 1), (I.s_cbranch_scc1, "far"),
                  I.ds_store_b32(addr=v[4], data0=v[3]), "bar", I.s_waitcnt(simm16=0), I.s_barrier(),
                  I.v_xor_b32_e32(v[4], 4, v[4]), I.ds_load_b32(vdst=v[2], addr=v[4]), I.s_waitcnt(simm16=0), store(v[2]),
                  I.s_endpgm(), "far", I.ds_store_b32(addr=v[4], data0=v[3]), (I.s_branch, "bar"))
  run(prog, out, block=(64, 1, 1), lds=512)
  np.testing.assert_array_equal(out, np.repeat([11, 10], 32))

def test_ds_d16_halves():
  # store tid as bytes/halves to LDS, read them back into the high and low halves of one VGPR
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [tid_times4(), I.v_mov_b32_e32(v[3], 0x1234abcd), I.v_lshlrev_b32_e32(v[4], 1, v[0]),
          I.ds_store_b16(addr=v[4], data0=v[0]), I.ds_store_b16_d16_hi(addr=v[4], data0=v[3], offset0=64), I.s_waitcnt(simm16=0),
          I.ds_load_u16_d16_hi(vdst=v[3], addr=v[4]), I.ds_load_u16_d16(vdst=v[3], addr=v[4], offset0=64),
          I.s_waitcnt(simm16=0), store(v[3]), I.s_endpgm()]
  run(kernel(*body), out, lds=512)
  lane = np.arange(32, dtype=np.uint32)
  np.testing.assert_array_equal(out, (lane << 16) | 0x1234)  # each lane's own tid (high) and the 0x1234 it stored (low)

def test_workgroups_split_into_chunks(monkeypatch):
  from mockgpu.emulators.rdna import executor
  monkeypatch.setattr(executor, "CACHE_CHUNK_BYTES", 1 << 14)  # a few workgroups per chunk
  monkeypatch.setattr(executor, "MIN_CHUNK_WAVES", 1)
  out = aligned(4 * 64 * 40, 256).view(np.uint32)
  body = [I.s_lshl_b32(s[3], s[2], 8), I.v_add_nc_u32_e32(v[1], s[3], v[1]), I.v_mov_b32_e32(v[2], s[2]), store(v[2]), I.s_endpgm()]
  stats, _ = run(kernel(tid_times4(), *body), out, block=(64, 1, 1), grid=(40, 1, 1), lds=512)
  np.testing.assert_array_equal(out, np.repeat(np.arange(40), 64))
  assert stats.waves == 80

@pytest.mark.parametrize("op,fn,lo,hi", [
  (I.v_exp_f16_e32, np.exp2, -8, 8), (I.v_log_f16_e32, np.log2, 1e-2, 1e3), (I.v_rcp_f16_e32, lambda x: 1 / x, 1e-2, 1e2),
  (I.v_rsq_f16_e32, lambda x: 1 / np.sqrt(x), 1e-2, 1e2), (I.v_sqrt_f16_e32, np.sqrt, 0, 1e4),
  (I.v_sin_f16_e32, lambda x: np.sin(2 * np.pi * (x - np.rint(x))), -4, 4),
  (I.v_cos_f16_e32, lambda x: np.cos(2 * np.pi * (x - np.rint(x))), -4, 4)])
def test_transcendental_f16_error_bound(op, fn, lo, hi):
  x = np.random.default_rng(2).uniform(lo, hi, 32).astype(np.float16)
  inp = aligned(4 * 32, 256).view(np.uint32)
  inp[:] = x.view(np.uint16)
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [tid_times4(), I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[6:7], offset=0), I.s_waitcnt(simm16=0),
          op(v[2], v[2]), store(v[2]), I.s_endpgm()]
  run(kernel(*body), out, inp)
  got = (out & 0xffff).astype(np.uint16).view(np.float16)
  exact = fn(x.astype(np.float64))
  err = np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(got)).astype(np.float64)
  assert (err <= 0.5 + 2**-50 / np.spacing(np.abs(got)).astype(np.float64).min()).all(), err.max()
