"""RDNA3 ALU behaviour the pseudocode conformance suite (tests/pcode) does not exercise: the clamp bit on integer,
carry, SAD and dot-product ops (saturation), the NEG bits that choose the signedness of v_dot4/v_dot8_i32_iu*, packed
clamp, and the operand forms of v_swap_b16 and VOPD's dot2acc. References are written here in Python integers."""
from __future__ import annotations
import math
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run, tid_times4
from support.rdna_valu import run_op

both = pytest.mark.usefixtures("rdna_path")  # the numpy and the native (C) path
rng = np.random.default_rng(11)
U = np.uint32

def u32s() -> np.ndarray:
  x = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(U)
  x[:6] = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe]  # the saturation edges
  return x

A, B, C = u32s(), np.roll(u32s(), 3), np.roll(u32s(), 7)
def sat(x:int, lo:int, hi:int) -> int: return min(max(x, lo), hi)
def s32(x) -> int: return int(np.asarray(x, U).view(np.int32))
def per_lane(fn, *xs) -> np.ndarray: return np.array([fn(*(int(x[i]) for x in xs)) & 0xffffffff for i in range(32)], U)

CLAMPED = [
  (I.v_add_nc_u32_e64(v[4], v[2], v[3], clmp=1), lambda a, b, c: sat(a + b, 0, 2**32 - 1)),
  (I.v_sub_nc_u32_e64(v[4], v[2], v[3], clmp=1), lambda a, b, c: sat(a - b, 0, 2**32 - 1)),
  (I.v_add_nc_i32(v[4], v[2], v[3], clmp=1), lambda a, b, c: sat(s32(a) + s32(b), -2**31, 2**31 - 1)),
  (I.v_sub_nc_i32(v[4], v[2], v[3], clmp=1), lambda a, b, c: sat(s32(a) - s32(b), -2**31, 2**31 - 1)),
  (I.v_add_nc_u16(v[4], v[2], v[3], clmp=1), lambda a, b, c: sat((a & 0xffff) + (b & 0xffff), 0, 0xffff) | (c & 0xffff0000)),
  (I.v_mul_u32_u24_e64(v[4], v[2], v[3], clmp=1), lambda a, b, c: sat((a & 0xffffff) * (b & 0xffffff), 0, 2**32 - 1)),
  (I.v_sad_u32(v[4], v[2], v[3], v[5], clmp=1), lambda a, b, c: sat(abs(a - b) + c, 0, 2**32 - 1)),
  (I.v_sad_u8(v[4], v[2], v[3], v[5], clmp=1),
   lambda a, b, c: sat(sum(abs((a >> 8 * i & 255) - (b >> 8 * i & 255)) for i in range(4)) + c, 0, 2**32 - 1)),
  (I.v_dot4_u32_u8(v[4], v[2], v[3], v[5], clmp=1),
   lambda a, b, c: sat(sum((a >> 8 * i & 255) * (b >> 8 * i & 255) for i in range(4)) + c, 0, 2**32 - 1)),
]

@both
@pytest.mark.parametrize("k", range(len(CLAMPED)))
def test_clamp_saturates_integer_results(k):
  op, ref = CLAMPED[k]
  c = C if "u16" not in repr(op) else np.full(32, 0xabcd0000, U)  # a 16-bit result keeps D's high half
  got = run_op(op, A, B, c, [I.v_mov_b32_e32(v[4], v[5])])
  np.testing.assert_array_equal(got, per_lane(ref, A, B, c), err_msg=repr(op))

def _el(x:int, i:int, bits:int, signed:bool) -> int:
  e = x >> bits * i & ((1 << bits) - 1)
  return e - (1 << bits) if signed and e >> (bits - 1) else e

@both
@pytest.mark.parametrize("clamp", [0, 1])
@pytest.mark.parametrize("neg", [0, 1, 2, 3])
@pytest.mark.parametrize("bits", [8, 4])
def test_dot_iu_signedness_follows_neg(bits, neg, clamp):
  """v_dot4_i32_iu8 / v_dot8_i32_iu4: NEG bit i makes source i's elements signed; the accumulator is signed."""
  fn = I.v_dot4_i32_iu8 if bits == 8 else I.v_dot8_i32_iu4
  def ref(a, b, c):
    total = s32(c) + sum(_el(a, i, bits, bool(neg & 1)) * _el(b, i, bits, bool(neg & 2)) for i in range(32 // bits))
    return sat(total, -2**31, 2**31 - 1) if clamp else total
  c = C.copy()
  c[6:12] = [0x7fffffff, 0x80000000, 0x7fff0000, 0x80000100, 5, 0xfffffffb]  # sums past the i32 range
  got = run_op(fn(v[4], v[2], v[3], v[5], neg=neg, clmp=clamp), A, B, c)
  np.testing.assert_array_equal(got, per_lane(ref, A, B, c))

def test_dot_neg_on_the_accumulator_is_refused():
  from mockgpu.errors import UnsupportedInstruction
  with pytest.raises(UnsupportedInstruction, match="neg on the accumulator"):
    run_op(I.v_dot4_i32_iu8(v[4], v[2], v[3], v[5], neg=4), A, B, C)

@both
def test_carry_out_with_clamp_is_the_unsaturated_carry():
  """v_add_co_u32 clamp: D saturates at 2**32 - 1 and VCC still says the sum carried."""
  got_d = run_op(I.v_add_co_u32(v[4], s[10], v[2], v[3], clmp=1), A, B, C)
  got_c = run_op(I.v_cndmask_b32_e64(v[4], 0, 1, s[10]), A, B, C, [I.v_add_co_u32(v[6], s[10], v[2], v[3], clmp=1)])
  want = [int(a) + int(b) for a, b in zip(A, B)]
  np.testing.assert_array_equal(got_d, np.array([min(x, 2**32 - 1) for x in want], U))
  np.testing.assert_array_equal(got_c, np.array([x >> 32 for x in want], U))

@both
def test_packed_clamp_saturates_each_half():
  half = lambda x, i: int(x) >> 16 * i & 0xffff
  sh = lambda x, i: half(x, i) - 0x10000 * (half(x, i) >> 15)
  cases = [(I.v_pk_add_u16, lambda a, b, i: sat(half(a, i) + half(b, i), 0, 0xffff)),
           (I.v_pk_sub_i16, lambda a, b, i: sat(sh(a, i) - sh(b, i), -2**15, 2**15 - 1)),
           (I.v_pk_mul_lo_u16, lambda a, b, i: sat(half(a, i) * half(b, i), 0, 0xffff))]
  for fn, ref in cases:
    got = run_op(fn(v[4], v[2], v[3], clmp=1), A, B, C)
    want = np.array([(ref(a, b, 0) & 0xffff) | (ref(a, b, 1) & 0xffff) << 16 for a, b in zip(A, B)], U)
    np.testing.assert_array_equal(got, want, err_msg=repr(fn))

def test_swap_b16_exchanges_the_chosen_halves(monkeypatch):
  """v_swap_b16 v4.h, v2.l (true16: v[128 + n] is v[n]'s high half): the other halves stay."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  got4 = run_op(I.v_swap_b16_e32(v[128 + 4], v[2]), A, B, C, [I.v_mov_b32_e32(v[4], v[5])])
  got2 = run_op(I.v_mov_b32_e32(v[4], v[2]), A, B, C, [I.v_mov_b32_e32(v[6], v[5]), I.v_swap_b16_e32(v[128 + 6], v[2])])
  np.testing.assert_array_equal(got4, (C & 0xffff) | (A << 16))
  np.testing.assert_array_equal(got2, (A & 0xffff0000) | (C >> 16))

def test_not_executed_names_are_instructions_with_a_reason():
  """semantics/rdna3.py NOT_EXECUTED names opcodes of tinygrad's RDNA3 tables (without _E32/_E64), each with a reason."""
  from tinygrad.runtime.autogen.amd.rdna3 import enum as E
  from mockgpu.compiler.rdna.semantics import rdna3
  known = {op.name.removesuffix("_E32").removesuffix("_E64") for enc in dir(E) if enc.endswith("Op") for op in getattr(E, enc)}
  for name, why in rdna3.NOT_EXECUTED.items():
    assert name in known, name
    assert len(why) > 20, name

@pytest.mark.parametrize("inst, err, words", [
  (I.s_add_f32(s[12], s[12], s[12]), "InvalidInstruction", "RDNA3.5"),
  (I.s_rfe_b64(ssrc0=s[12:13]), "UnsupportedInstruction", "no trap handler runs here"),
  (I.s_sethalt(simm16=1), "UnsupportedInstruction", "debugger state")])
def test_a_not_executed_instruction_raises_its_reason(inst, err, words, monkeypatch):
  from mockgpu import errors
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  with pytest.raises(getattr(errors, err), match=words) as e:
    run_op(I.v_mov_b32_e32(v[4], v[2]), A, B, C, [inst])
  assert inst.op.name.lower() in str(e.value).lower()

# *** cross-lane: v_permlane16/x16_b32 (wave32 and wave64), v_permlane64_b32 ***

def permlane_ref(x:list[int], old:list[int], active:list[bool], sel:int, cross:bool, fi:bool, bound_ctrl:bool) -> list[int]:
  """The manual's loop (V_PERMLANE16_B32 / V_PERMLANEX16_B32) with the op_sel FI/BOUND_CTRL rule for inactive sources."""
  out = list(old)
  for lane in range(len(x)):
    if not active[lane]: continue
    src = ((lane // 16) ^ int(cross)) * 16 + (sel >> 4 * (lane % 16) & 15)
    if active[src] or fi: out[lane] = x[src]
    elif bound_ctrl: out[lane] = 0
  return out

SEL = 0x0123456789abcdef_fedcba9876543210
EXEC_PATTERN = 0x5f5f_ff00  # lanes 8-15, 16-20, 22 and 24-28, 30 active: some sources inactive

@both
def test_permlane16_over_rows_with_inactive_sources():
  from tinygrad.renderer.amd.dsl import EXEC_LO
  active = [bool(EXEC_PATTERN >> i & 1) for i in range(32)]
  for fn, cross in ((I.v_permlane16_b32, False), (I.v_permlanex16_b32, True)):
    for opsel in range(4):
      pre = [I.s_mov_b32(s[20], SEL & 0xffffffff), I.s_mov_b32(s[21], SEL >> 32), I.v_mov_b32_e32(v[4], v[5]),
             I.s_mov_b32(EXEC_LO, EXEC_PATTERN), fn(v[4], v[2], s[20], s[21], opsel=opsel), I.s_mov_b32(EXEC_LO, -1)]
      got = run_op(I.v_mov_b32_e32(v[4], v[4]), A, B, C, pre)
      want = permlane_ref([int(x) for x in A], [int(x) for x in C], active, SEL, cross, bool(opsel & 1), bool(opsel & 2))
      np.testing.assert_array_equal(got, np.array(want, U), err_msg=f"{fn} op_sel {opsel}")

@both
def test_permlane_in_wave64():
  """wave64: four rows of 16 (x16 pairs rows 0-1 and 2-3); v_permlane64_b32 swaps the wave's halves."""
  permlane_in_wave64(stepper=False)

def test_permlane_in_wave64_on_the_stepper(monkeypatch):
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  permlane_in_wave64(stepper=True)

def permlane_in_wave64(stepper:bool):
  from support.rdna_wave64 import run64, store
  sel = 0x02468ace13579bdf_fdb97531eca86420
  body = [I.v_mul_lo_u32(v[2], v[0], 3), I.s_mov_b32(s[20], sel & 0xffffffff), I.s_mov_b32(s[21], sel >> 32),
          I.v_permlane16_b32(v[3], v[2], s[20], s[21]), *store(0, v[3]), I.v_permlanex16_b32(v[3], v[2], s[20], s[21]),
          *store(1, v[3]), I.v_permlane64_b32_e32(v[3], v[2]), *store(2, v[3]), I.s_endpgm()]
  out = run64(body, 3, stepper=stepper)
  x, on = [3 * i for i in range(64)], [True] * 64
  np.testing.assert_array_equal(out[0], permlane_ref(x, x, on, sel, False, False, False))
  np.testing.assert_array_equal(out[1], permlane_ref(x, x, on, sel, True, False, False))
  np.testing.assert_array_equal(out[2], [x[i ^ 32] for i in range(64)])

@both
def test_permlane64_is_a_nop_in_wave32():
  got = run_op(I.v_mov_b32_e32(v[4], v[4]), A, B, C, [I.v_mov_b32_e32(v[4], v[5]), I.v_permlane64_b32_e32(v[4], v[2])])
  np.testing.assert_array_equal(got, C)

# *** MODE's float fields: s_getreg_b32, s_setreg_b32, s_setreg_imm32_b32, s_round_mode, s_denorm_mode ***

def hwreg(reg:int, offset:int, size:int) -> int: return reg | offset << 6 | (size - 1) << 11
MODE_BITS = 0xf0  # test_rdna_isa.RSRC1: f32 and f16/f64 denormals allowed (3), round to nearest even (0)

@both
def test_getreg_reads_the_kernel_float_mode():
  from support.rdna_valu import _scalar
  assert _scalar(I.s_getreg_b32(s[12], hwreg(1, 0, 8))) == MODE_BITS
  assert _scalar(I.s_getreg_b32(s[12], hwreg(1, 4, 2))) == 3

@both
def test_mode_writes_that_keep_the_mode_run():
  from tinygrad.runtime.autogen.amd.rdna3.enum import SOPKOp
  from support.rdna_valu import _scalar
  keep = [I.s_round_mode(0), I.s_denorm_mode(0xf), I.SOPK_LIT(op=SOPKOp.S_SETREG_IMM32_B32, simm16=hwreg(1, 4, 4), literal=0xf)]
  assert _scalar(*keep, I.s_getreg_b32(s[12], hwreg(1, 0, 8))) == MODE_BITS

def test_setreg_from_an_sgpr_that_keeps_the_mode_runs(monkeypatch):
  """The value is checked when the wave runs (numpy path: the C translation declines s_setreg_b32 from an SGPR)."""
  from support.rdna_valu import _scalar
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  assert _scalar(I.s_mov_b32(s[12], 0xf0), I.s_setreg_b32(s[12], hwreg(1, 0, 8)), I.s_getreg_b32(s[12], hwreg(1, 0, 8))) == MODE_BITS

@pytest.mark.parametrize("insts, words", [
  ([I.s_denorm_mode(0)], "MODE change"), ([I.s_round_mode(1)], "MODE change"),
  ([I.s_mov_b32(s[12], 0), I.s_setreg_b32(s[12], hwreg(1, 4, 4))], "s_setreg_b32: a MODE change"),
  ([I.s_getreg_b32(s[12], hwreg(4, 0, 32))], "hardware register 4"),
  ([I.s_getreg_b32(s[12], hwreg(1, 8, 1))], "hardware register 1 bits 8..8")])
def test_mode_changes_and_unmodelled_registers_raise(insts, words, monkeypatch):
  from mockgpu.errors import UnsupportedInstruction
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  with pytest.raises(UnsupportedInstruction, match=words):
    run_op(I.v_mov_b32_e32(v[4], v[2]), A, B, C, insts)

def test_stepper_reads_and_checks_the_mode(monkeypatch):
  from support.rdna_wave64 import run64, store
  from mockgpu.errors import UnsupportedInstruction
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  body = [I.s_denorm_mode(0xf), I.s_getreg_b32(s[12], hwreg(1, 0, 8)), I.v_mov_b32_e32(v[3], s[12]), *store(0, v[3]), I.s_endpgm()]
  np.testing.assert_array_equal(run64(body, 1, stepper=True), MODE_BITS)
  with pytest.raises(UnsupportedInstruction, match="MODE change"): run64([I.s_round_mode(3), I.s_endpgm()], 1, stepper=True)

# *** v_trig_preop_f64 ***

def test_trig_preop_segments_of_two_over_pi(monkeypatch):
  """Segment k (S1 = k) is the 53 bits of 2/pi after its first 53k, scaled by 2**(-53(k+1)); a large S0 (exponent past
  1077) moves the window on by exponent - 1077 bits; exponent >= 1968 scales by 2**128 more. The reference takes 2/pi
  to 1300 bits from mpmath (the pseudocode's 1201'B(2.0 / PI) cast is not something the conformance evaluator runs)."""
  import math, mpmath
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")  # the C backend does not translate it
  mpmath.mp.prec = 1300
  frac = int(mpmath.floor(2 / mpmath.pi * mpmath.mpf(2) ** 1201))  # 2/pi's 1201 fraction bits
  xs = np.array([1.0, -3.5, 2.0**60, 2.0**900, 2.0**1000, math.inf, 0.0, 5e-324] * 4, np.float64)
  sel = np.repeat(np.array([0, 1, 2, 31], U), 8)
  inp = aligned(32 * 8 + 32 * 4, 256)
  inp[:256].view(np.float64)[:] = xs
  inp[256:].view(U)[:] = sel
  out = aligned(32 * 8, 256)
  from support.rdna_isa import kernel as kern, run as run_kernel
  body = [I.v_lshlrev_b32_e32(v[1], 3, v[0]), I.v_lshlrev_b32_e32(v[5], 2, v[0]),
          I.global_load_b64(vdst=v[2:3], addr=v[1], saddr=s[6:7], offset=0),
          I.global_load_b32(vdst=v[4], addr=v[5], saddr=s[6:7], offset=256), I.s_waitcnt(simm16=0),
          I.v_trig_preop_f64(v[8:9], v[2:3], v[4]), I.global_store_b64(addr=v[1], data=v[8:9], saddr=s[4:5], offset=0), I.s_endpgm()]
  run_kernel(kern(*body), out.view(U), inp.view(U))
  got = out.view(np.float64)
  for x, k, g in zip(xs, sel, got):
    exp = int(np.float64(x).view(np.uint64)) >> 52 & 0x7ff
    shift = int(k) * 53 + max(exp - 1077, 0)
    seg = (frac >> (1148 - shift) if shift <= 1148 else frac << (shift - 1148)) & ((1 << 53) - 1)
    want = math.ldexp(seg, -53 - shift + (128 if exp >= 1968 else 0))
    assert g == want, (x, k, g, want)

# *** v_wmma_bf16_16x16x16_bf16, v_wmma_i32_16x16x16_iu4 (RDNA3 layout) ***

def _wmma_run(inst, a_regs:np.ndarray, b_regs:np.ndarray, c_regs:np.ndarray) -> np.ndarray:
  """Run inst (A = v[8:], B = v[16:], C and D = v[40:47]) on per-lane register values [VGPR, lane]; D as [8, 32]."""
  regs = np.zeros((24, 32), U)
  regs[0:8], regs[8:8 + len(a_regs)], regs[16:16 + len(b_regs)] = c_regs, a_regs, b_regs
  inp = aligned(4 * 32 * 24, 256).view(U)
  inp[:] = regs.reshape(-1)
  out = aligned(4 * 32 * 8, 256).view(U)
  target = lambda r: v[40 + r] if r < 8 else v[r]
  body = [tid_times4()] + [I.global_load_b32(vdst=target(r), addr=v[1], saddr=s[6:7], offset=128 * r) for r in range(24)]
  body += [I.s_waitcnt(simm16=0), inst]
  body += [I.global_store_b32(addr=v[1], data=v[40 + r], saddr=s[4:5], offset=128 * r) for r in range(8)] + [I.s_endpgm()]
  run(kernel(*body), out, inp)
  return out.reshape(8, 32).copy()

def _cd_element(j:int, lane:int) -> tuple[int, int]: return 2 * j + lane // 16, lane % 16  # RDNA3: (row, column)

@both
def test_wmma_i32_iu4_with_signs():
  """A (rows) and B (columns) as 16 nibbles in 2 VGPRs of lanes 0-15 (lanes 16-31 replicate them); NEG bit 0/1 make
  A/B signed; clamp saturates D = A x B + C."""
  ra, rb = rng.integers(0, 16, (16, 16)), rng.integers(0, 16, (16, 16))  # [row, k], [column, k] as raw nibbles
  pack = lambda m: np.tile(np.array([[sum(int(m[l, 8 * r + k]) << 4 * k for k in range(8)) for l in range(16)] for r in range(2)], U), (1, 2))
  c = u32s()[None].repeat(8, 0)
  c[:, :4] = [0x7fffff00, 0x80000010, 0, 5]
  for neg in range(4):
    for clamp in (0, 1):
      got = _wmma_run(I.v_wmma_i32_16x16x16_iu4(v[40:47], v[8:9], v[16:17], v[40:47], neg=neg, clmp=clamp), pack(ra), pack(rb), c)
      a = np.where((ra >= 8) & bool(neg & 1), ra - 16, ra)
      b = np.where((rb >= 8) & bool(neg & 2), rb - 16, rb)
      for j in range(8):
        for lane in range(32):
          row, col = _cd_element(j, lane)
          total = int(a[row] @ b[col]) + s32(c[j, lane])
          want = sat(total, -2**31, 2**31 - 1) if clamp else total & 0xffffffff
          assert int(got[j, lane]) == want & 0xffffffff, (neg, clamp, j, lane)

def test_wmma_bf16_rounds_once_into_the_chosen_half(monkeypatch):
  """D's element is A x B + C rounded once to bf16 (to nearest even), in the low or, with op_sel[2], the high half of
  its VGPR; the other half is C's."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  bf = lambda x: (np.asarray(x, np.float32).view(U) >> 16).astype(U)  # truncated: exact bf16 inputs
  fa, fb = bf(rng.standard_normal((16, 16))), bf(rng.standard_normal((16, 16)))
  val = lambda h: (h.astype(U) << 16).view(np.float32).astype(np.float64)
  pack = lambda m: np.tile(np.array([[int(m[l, 2 * r]) | int(m[l, 2 * r + 1]) << 16 for l in range(16)] for r in range(8)], U), (1, 2))
  c = u32s()[None].repeat(8, 0) & U(0x3fff3fff)  # finite bf16 halves
  for hi in (False, True):
    got = _wmma_run(I.v_wmma_bf16_16x16x16_bf16(v[40:47], v[8:15], v[16:23], v[40:47], opsel=4 * hi), pack(fa), pack(fb), c)
    for j in range(8):
      for lane in range(32):
        row, col = _cd_element(j, lane)
        old = int(c[j, lane])
        exact = float(val(fa[row]) @ val(fb[col])) + float(val(np.array((old >> 16) if hi else old & 0xffff)))
        # the float64 sum is exact here (8-bit mantissas, normal-sized values); rounded once to 8 significant bits
        mant, exp = math.frexp(exact)
        want_h = int(np.float32(math.ldexp(round(mant * 256), exp - 8)).view(U)) >> 16 if exact else 0
        want = (old & 0xffff) | want_h << 16 if hi else (old & 0xffff0000) | want_h
        assert int(got[j, lane]) == want, (hi, j, lane, hex(int(got[j, lane])), hex(want))

# *** DPP16 controls of gfx11 not covered elsewhere: row_share, row_xmask, row_ror, row_half_mirror, row_shl ***

@pytest.mark.parametrize("ctrl, src", [
  (0x153, lambda i: 3), (0x15f, lambda i: 15), (0x165, lambda i: i ^ 5), (0x16f, lambda i: i ^ 15),
  (0x123, lambda i: (i - 3) % 16), (0x141, lambda i: (i & 8) | (7 - (i & 7))), (0x10f, lambda i: i + 15 if i == 0 else None)])
@both
def test_dpp16_controls(ctrl, src):
  """Lane i of each row of 16 reads lane src(i) of its row (None: off the row, the lane is not written)."""
  from support.rdna_isa import _dpp_mov
  got = _dpp_mov(dpp=ctrl)
  want = [1000 + lane if src(lane % 16) is None else lane // 16 * 16 + src(lane % 16) for lane in range(32)]
  np.testing.assert_array_equal(got, want)

def test_gcn_dpp_controls_are_invalid_on_rdna(monkeypatch):
  from support.rdna_isa import _dpp_mov
  from mockgpu.errors import InvalidInstruction
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  for ctrl in (0x130, 0x134, 0x138, 0x13c):  # the wave shifts (row_bcast15/31 execute: tests/compiler/rdna/test_rdna_hw_classes.py)
    with pytest.raises(InvalidInstruction, match=f"DPP16 control {ctrl:#x} is reserved"): _dpp_mov(dpp=ctrl)
