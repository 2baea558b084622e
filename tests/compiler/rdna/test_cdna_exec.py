"""CDNA execution (gfx942 cdna3, gfx950 cdna4): each GFX9 delta on hand-assembled wave64 kernels (tinygrad's cdna DSL),
against references written here from the CDNA3 ISA pseudocode (tinygrad.runtime.autogen.amd.cdna.str_pcode) and AMD's
matrix-instruction layouts, not from the tables under test. A test with a `path` parameter runs on the numpy path and on
the C path and asserts which one ran. The others run on numpy only: the C backend declines their kernel (MFMA,
MUBUF), or it raises before C could run, or (GFX9 DPP, v_readlane with a lane operand, fma_f16, which C now renders)
they have not been given a path parameter yet."""
from __future__ import annotations
from fractions import Fraction
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC, VCC_LO, VCC_HI, EXEC
from tinygrad.runtime.autogen.amd.cdna import ins as I
from mockgpu.errors import UnsupportedInstruction, GPUPageFault
from support.rdna_harness import aligned
from support.rdna_isa import run as run_isa, RSRC1, RSRC2
from support.rdna4 import round_exact
from support.cdna import dpp_reference
from support.cdna_exec import M32, inputs, kernel, load, marked, rows, run, store
from support.rdna_errata import UINT, edge_floats
rng = np.random.default_rng(0)  # reseeded from each test's node id (conftest)

PATHS = ["numpy", "native"]

RNG = np.random.default_rng(1)
def random_u32(n:int=64) -> np.ndarray: return RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)

# *** the wave64 ABI and the XCC share ***

@pytest.mark.parametrize("path", PATHS)
def test_wave64_workitems_and_partial_wave(path, monkeypatch):
  out = rows(2)
  body = [I.v_add_u32_e32(v[2], 7, v[0]), *store(v[2]), I.v_mov_b32_e32(v[3], s[2]), *store(v[3], 1), I.s_endpgm()]
  stats = run(kernel(*body), out, path=path, monkeypatch=monkeypatch, block=(40, 1, 1))
  assert list(out[0, :40]) == list(range(7, 47)) and (out[0, 40:] == 0xdeadbeef).all()  # lanes 40..63 are not live
  assert (out[1, :40] == 0).all() and stats.waves == 1

@pytest.mark.parametrize("path", PATHS)
def test_an_xcc_runs_its_chunks_of_workgroups(path, monkeypatch):
  """AQL over 8 XCCs: chunk k of TG_CHUNK_SIZE consecutive workgroups runs on XCC k mod 8; each XCC's dispatch writes
  exactly its workgroups (workgroup ID in s2, as the SPI sets it)."""
  n = 37
  out = aligned(4 * 64 * n, 256).view(np.uint32).reshape(n, 64)
  body = [I.s_lshl_b32(s[3], s[2], 8), I.v_add_u32_e32(v[1], s[3], v[1]), I.v_mov_b32_e32(v[2], s[2]), *store(v[2]), I.s_endpgm()]
  for xcc in range(8):
    out[:] = 0xdeadbeef
    run(kernel(*body), out, path=path, monkeypatch=monkeypatch, grid=(n, 1, 1), xcc=(xcc, 8, 2))
    mine = [g for g in range(n) if (g // 2) % 8 == xcc]
    assert all((out[g] == g).all() for g in mine) and all((out[g] == 0xdeadbeef).all() for g in range(n) if g not in mine)

# *** SDWA ***

def sdwa_sel(x:int, sel:int, sext:bool) -> int:
  shift, width = (sel * 8, 8) if sel < 4 else ((sel - 4) * 16, 16) if sel < 6 else (0, 32)
  f = (x >> shift) & ((1 << width) - 1)
  return (f - (1 << width) if sext and width < 32 and f >> (width - 1) else f) & M32

def sdwa_put(r:int, old:int, sel:int, unused:int) -> int:
  shift, width = (sel * 8, 8) if sel < 4 else ((sel - 4) * 16, 16) if sel < 6 else (0, 32)
  mask = ((1 << width) - 1) << shift
  placed = (r << shift) & mask
  if width == 32 or unused == 0: return placed if width < 32 else r & M32
  if unused == 2: return placed | (old & ~mask & M32)
  return placed | ((M32 << (shift + width)) & M32 if placed >> (shift + width - 1) & 1 else 0)  # UNUSED_SEXT

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("sel0,sext0,sel1,sext1,dst_sel,unused", [(1, 1, 5, 0, 2, 2), (0, 0, 4, 1, 5, 1), (3, 1, 2, 1, 4, 0),
                                                                   (6, 0, 1, 0, 0, 1), (5, 1, 6, 0, 6, 0)])
def test_sdwa_sources_and_destination(path, monkeypatch, sel0, sext0, sel1, sext1, dst_sel, unused):
  """v_add_u32 (D = S0 + S1) with SDWA: each source the byte or word it selects, extended; the sum into DST_SEL."""
  a, b, old = random_u32(), random_u32(), random_u32()
  add = marked(I.VOP2_SDWA(I.VOP2Op.V_ADD_U32, vdst=v[4], vsrc1=v[3], vsrc0=v[2], src0_sel=sel0, src0_sext=sext0,
                           src1_sel=sel1, src1_sext=sext1, dst_sel=dst_sel, dst_unused=unused), 249)
  out = rows(1)
  run(kernel(*load(v[2], 0), *load(v[3], 1), *load(v[4], 2), add, *store(v[4]), I.s_endpgm()), out, inputs(a, b, old),
      path, monkeypatch)
  want = [sdwa_put((sdwa_sel(int(x), sel0, sext0) + sdwa_sel(int(y), sel1, sext1)) & M32, int(o), dst_sel, unused)
          for x, y, o in zip(a, b, old)]
  assert [int(x) for x in out[0]] == want

def test_sdwa_reserved_select_is_invalid():
  add = marked(I.VOP2_SDWA(I.VOP2Op.V_ADD_U32, vdst=v[4], vsrc1=v[3], vsrc0=v[2], src0_sel=7), 249)
  with pytest.raises(UnsupportedInstruction, match="invalid instruction.*SDWA select 7 is reserved"):
    run(kernel(add, I.s_endpgm()), rows(1))

# *** DPP ***

@pytest.mark.parametrize("ctrl,bc,row_mask,bank_mask", [(0x138, 0, 0xf, 0xf), (0x138, 1, 0xf, 0xf), (0x130, 0, 0xf, 0xf),
                                                        (0x134, 0, 0xf, 0xf), (0x13c, 1, 0xa, 0x5), (0x142, 0, 0xa, 0xf),
                                                        (0x143, 0, 0xc, 0xf), (0x1b, 0, 0xf, 0xf), (0x111, 0, 0xf, 0xf),
                                                        (0x12f, 1, 0xf, 0xf), (0x141, 0, 0xf, 0xf), (0x153, 0, 0xf, 0xf)])
def test_dpp_mov_lane_maps(ctrl, bc, row_mask, bank_mask):
  """v_mov_b32 with GFX9 DPP over 60 live lanes: a lane reads its DPP_CTRL source; a missing or inactive source reads 0
  with BOUND_CTRL, else the lane keeps its value; rows/banks outside ROW_MASK/BANK_MASK are not written."""
  live = 60
  mov = marked(I.VOP1_DPP16(I.VOP1Op.V_MOV_B32, vdst=v[3], vsrc0=v[2], dpp=ctrl, bc=bc, row_mask=row_mask, bank_mask=bank_mask), 250)
  out = rows(1)
  run(kernel(I.v_add_u32_e32(v[2], 100, v[0]), I.v_mov_b32_e32(v[3], 7), mov, *store(v[3]), I.s_endpgm()), out, block=(live, 1, 1))
  for lane in range(live):
    src = dpp_reference(ctrl, lane)
    enabled = row_mask >> (lane // 16) & 1 and bank_mask >> (lane // 4 % 4) & 1
    ok = src is not None and src < live
    want = (100 + src if ok else 0 if bc else 7) if enabled else 7
    assert out[0, lane] == want, (hex(ctrl), lane)

def test_dpp_reserved_control_is_invalid():
  mov = marked(I.VOP1_DPP16(I.VOP1Op.V_MOV_B32, vdst=v[3], vsrc0=v[2], dpp=0x131, row_mask=15, bank_mask=15), 250)
  with pytest.raises(UnsupportedInstruction, match="DPP_CTRL 0x131 is reserved on CDNA"): run(kernel(mov, I.s_endpgm()), rows(1))

# *** compares, lane reads, scalar loads ***

@pytest.mark.parametrize("path", PATHS)
def test_cmpx_writes_exec_and_its_destination(path, monkeypatch):
  """V_CMPX (CDNA pseudocode: EXEC.u64[laneId] = D0.u64[laneId] = ...): e64 writes EXEC and its SDST, e32 EXEC and VCC."""
  out = rows(4)
  body = [I.v_cmpx_gt_u32_e64(s[10:11], 50, v[0]), I.v_cmpx_lt_u32_e32(5, v[0]),
          I.v_mov_b32_e32(v[2], s[10]), I.v_mov_b32_e32(v[3], s[11]), *store(v[2]), *store(v[3], 1),
          I.v_mov_b32_e32(v[2], VCC_LO), I.v_mov_b32_e32(v[3], VCC_HI), *store(v[2], 2), *store(v[3], 3), I.s_endpgm()]
  run(kernel(*body), out, path=path, monkeypatch=monkeypatch)
  lanes = np.arange(64)
  live = (lanes > 5) & (lanes < 50)
  first, second = (1 << 50) - 1, sum(1 << i for i in range(64) if live[i])
  for k, word in enumerate((first & M32, first >> 32, second & M32, second >> 32)):
    assert (out[k][live] == word).all() and (out[k][~live] == 0xdeadbeef).all(), k

def test_readlane_and_readfirstlane_into_sgprs():
  """tinygrad's cdna DSL types these SGPR destinations as VGPRs: v[12] below encodes s12."""
  out = rows(1)
  body = [I.v_mul_u32_u24_e32(v[2], 3, v[0]), I.v_readlane_b32(v[12], v[2], 45), I.v_cmpx_le_u32_e32(7, v[0]),
          I.v_readfirstlane_b32_e32(v[13], v[2]), I.s_mov_b64(EXEC, -1), I.v_mov_b32_e32(v[3], s[12]),
          I.v_add_u32_e32(v[3], s[13], v[3]), *store(v[3]), I.s_endpgm()]
  run(kernel(*body), out)
  assert (out[0] == 3 * 45 + 3 * 7).all()

@pytest.mark.parametrize("path", PATHS)
def test_smem_offset_forms(path, monkeypatch):
  """s_load_dword: the base plus the 21-bit signed immediate (IMM), plus the SGPR SOFFSET names (SOFFSET_EN), both, or
  the SGPR OFFSET[6:0] names (neither)."""
  inp = inputs(np.arange(64) * 11)
  out = rows(4)
  body = [I.s_add_u32(s[8], s[6], 64), I.s_addc_u32(s[9], s[7], 0), I.s_mov_b32(s[14], 12), I.s_mov_b32(s[15], 20),
          I.s_load_dword(sdata=s[16], sbase=s[8:9], offset=(1 << 21) - 8, imm=1),                    # base - 8: word 14
          I.s_load_dword(sdata=s[17], sbase=s[8:9], offset=0, imm=0, soffset_en=1, soffset=s[14]),   # + 12: word 19
          I.s_load_dword(sdata=s[18], sbase=s[8:9], offset=4, imm=1, soffset_en=1, soffset=s[15]),   # + 24: word 22
          I.s_load_dword(sdata=s[19], sbase=s[8:9], offset=15, imm=0),                               # + s15 = 20: word 21
          I.s_waitcnt(simm16=0), *(x for k in range(4) for x in (I.v_mov_b32_e32(v[2], s[16 + k]), *store(v[2], k))), I.s_endpgm()]
  run(kernel(*body), out, inp, path, monkeypatch)
  assert [int(out[k, 0]) for k in range(4)] == [14 * 11, 19 * 11, 22 * 11, 21 * 11] and (out == out[:, :1]).all()

@pytest.mark.parametrize("path", PATHS)
def test_vcc_as_smem_base_and_global_saddr(path, monkeypatch):
  """On GFX9 VCC is addressable as an SGPR pair: LLVM emits s_load_dwordx16 with VCC (s[106:107]) as the base and
  global_store_dword with SADDR = VCC_LO. Here VCC holds the input's address for a load of 16 dwords, then the
  output's for a store whose VGPR offset is each lane's."""
  inp = inputs(np.arange(64) * 7 + 3)
  out = rows(1)
  body = [I.s_mov_b32(VCC_LO, s[6]), I.s_mov_b32(VCC_HI, s[7]), I.s_load_dwordx16(sdata=s[16:31], sbase=VCC, offset=0, imm=1),
          I.s_waitcnt(simm16=0), I.s_add_u32(s[8], s[16], s[31]), I.s_mov_b32(VCC_LO, s[4]), I.s_mov_b32(VCC_HI, s[5]),
          I.v_mov_b32_e32(v[2], s[8]), I.global_store_dword(addr=v[1], data=v[2], saddr=VCC), I.s_endpgm()]
  run(kernel(*body), out, inp, path, monkeypatch)
  assert (out[0] == 3 + 15 * 7 + 3).all()   # dword 0 + dword 15 of the input, in every lane

def test_m0_as_global_saddr_is_invalid():
  """GFX9 encodes "no SGPR base" as SADDR 0x7f; 124 (the DSL's NULL) is M0 there, which no address may use."""
  bad = I.global_store_dword(addr=v[1:2], data=v[2])
  with pytest.raises(UnsupportedInstruction, match="SADDR M0 is not an SGPR pair or off"): run(kernel(bad, I.s_endpgm()), rows(1))

# *** CDNA's own rows and results ***

QNAN_A, QNAN_B, SNAN = 0x7fc00001, 0x7fc00002, 0x7f800005
F32_CASES = [(QNAN_A, QNAN_B), (SNAN, QNAN_B), (QNAN_A, SNAN), (QNAN_A, 0x40400000), (0x40400000, QNAN_A), (0, 0x80000000),
             (0x80000000, 0), (0x3f800000, 0xbf800000), (0x7f800000, 0xff800000), (0x1, 0x80000001)]

def f32(bits:int) -> float: return float(np.uint32(bits).view(np.float32))

def gfx9_max_min(a:int, b:int, is_max:bool) -> int:
  """CDNA's v_max_f32/v_min_f32 pseudocode (IEEE mode): a signalling NaN operand quieted (S0 first); else a NaN yields
  the other operand, two NaNs S1; +0 > -0."""
  nan = lambda x: (x >> 23) & 0xff == 0xff and x & 0x7fffff
  snan = lambda x: nan(x) and not x & 0x400000
  if snan(a): return a | 0x400000
  if snan(b): return b | 0x400000
  if nan(a): return b
  if nan(b): return a
  x, y = f32(a), f32(b)
  pick_a = (x > y or (x == y and not a >> 31)) if is_max else (x < y or (x == y and a >> 31))
  return a if pick_a else b

@pytest.mark.parametrize("path", PATHS)
def test_max_min_f32_nan_and_signed_zero(path, monkeypatch):
  a = [c[0] for c in F32_CASES] * 7
  b = [c[1] for c in F32_CASES] * 7
  out = rows(2)
  body = [*load(v[2], 0), *load(v[3], 1), I.v_max_f32_e32(v[4], v[2], v[3]), I.v_min_f32_e64(v[5], v[2], v[3]),
          *store(v[4]), *store(v[5], 1), I.s_endpgm()]
  run(kernel(*body), out, inputs(a[:64], b[:64]), path, monkeypatch)
  assert [int(x) for x in out[0]] == [gfx9_max_min(x, y, True) for x, y in zip(a[:64], b[:64])]
  assert [int(x) for x in out[1]] == [gfx9_max_min(x, y, False) for x, y in zip(a[:64], b[:64])]

ONE, TWO = 0x3c00, 0x4000  # f16 1.0, 2.0

@pytest.mark.parametrize("path", PATHS)
def test_16bit_results_zero_the_high_half(path, monkeypatch):
  """GFX9 (LLVM's zeroesHigh16BitsOfDest): v_add_f16 and v_mul_lo_u16 write 0 to bits 31:16 of their VGPR."""
  out = rows(2)
  body = [I.v_mov_b32_e32(v[2], 0xabcd0000 | ONE), I.v_mov_b32_e32(v[3], 0x12340000 | TWO), I.v_mov_b32_e32(v[4], 0x5a5a5a5a),
          I.v_mov_b32_e32(v[5], 0x5a5a5a5a), I.v_add_f16_e32(v[4], v[2], v[3]), I.v_mul_lo_u16_e32(v[5], v[3], v[3]),
          *store(v[4]), *store(v[5], 1), I.s_endpgm()]
  run(kernel(*body), out, path=path, monkeypatch=monkeypatch)
  assert (out[0] == 0x4200).all() and (out[1] == (TWO * TWO) & 0xffff).all()  # 1 + 2 = 3

def test_fma_f16_keeps_the_high_half():
  """gfx9 changed v_fma_f16 (and mad/div_fixup f16, the mix forms) to keep bits 31:16."""
  out = rows(1)
  body = [I.v_mov_b32_e32(v[2], 0xabcd0000 | ONE), I.v_mov_b32_e32(v[3], 0x12340000 | TWO), I.v_mov_b32_e32(v[5], 0x5a5a5a5a),
          I.v_fma_f16(v[5], v[2], v[3], v[3]), *store(v[5]), I.s_endpgm()]
  run(kernel(*body), out)
  assert (out[0] == 0x5a5a0000 | 0x4400).all()  # 1 * 2 + 2 = 4

@pytest.mark.parametrize("path", PATHS)
def test_lshl_add_u64_and_mov_b64(path, monkeypatch):
  a, b, c = random_u32(), random_u32(), random_u32()
  out = rows(4)
  body = [*load(v[2], 0), *load(v[3], 1), *load(v[4], 2), *load(v[5], 0),
          I.v_lshl_add_u64(v[6:7], v[2:3], 3, v[4:5]), I.v_mov_b64_e32(v[8:9], v[2:3]),
          *store(v[6]), *store(v[7], 1), *store(v[8], 2), *store(v[9], 3), I.s_endpgm()]
  run(kernel(*body), out, inputs(a, b, c), path, monkeypatch)
  x, y = a.astype(np.uint64) | b.astype(np.uint64) << 32, c.astype(np.uint64) | a.astype(np.uint64) << 32
  want = [(int(p) << 3) + int(q) & 2**64 - 1 for p, q in zip(x, y)]
  assert [int(l) | int(h) << 32 for l, h in zip(out[0], out[1])] == want
  assert (out[2] == a).all() and (out[3] == b).all()

@pytest.mark.parametrize("path", PATHS)
def test_mad_mix_is_one_fused_rounding(path, monkeypatch):
  """Erratum cdna-mad-mix-fused: a = b = 1 + 2^-12, c = -(1 + 2^-11) (f32 sources): a*b + c = 2^-24 exactly; a multiply
  rounded first (a tie, to even) would give 0."""
  a, c = np.float32(1 + 2.0**-12).view(np.uint32), np.float32(-(1 + 2.0**-11)).view(np.uint32)
  out = rows(1)
  mix = I.v_mad_mix_f32(v[4], v[2], v[2], v[3], opsel_hi=0, opsel_hi2=0)
  run(kernel(I.v_mov_b32_e32(v[2], int(a)), I.v_mov_b32_e32(v[3], int(c)), mix, *store(v[4]), I.s_endpgm()), out,
      path=path, monkeypatch=monkeypatch)
  assert (out[0] == np.float32(2.0**-24).view(np.uint32)).all()

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("opsel,opsel_hi", [(0b000, 0b111), (0b101, 0b010), (0b111, 0b000)])
def test_pk_fma_f32_and_pk_mov_b32_halves(path, monkeypatch, opsel, opsel_hi):
  """v_pk_fma_f32: the low result from the halves OP_SEL picks per source, the high one from OP_SEL_HI's, each an f32
  fma rounded once; v_pk_mov_b32: the low dword S0's half OP_SEL[0], the high dword S1's half OP_SEL[1]."""
  vals = [RNG.standard_normal(64).astype(np.float32).view(np.uint32) for _ in range(6)]
  out = rows(4)
  fma = I.v_pk_fma_f32(v[10:11], v[2:3], v[4:5], v[6:7], opsel=opsel, opsel_hi=opsel_hi & 3, opsel_hi2=opsel_hi >> 2)
  mov = I.v_pk_mov_b32(v[12:13], v[2:3], v[4:5], opsel=opsel & 3)
  body = [*(x for k in range(6) for x in load(v[2 + k], k)), fma, mov, *store(v[10]), *store(v[11], 1), *store(v[12], 2),
          *store(v[13], 3), I.s_endpgm()]
  run(kernel(*body), out, inputs(*vals), path, monkeypatch)
  half = lambda i, hi, lane: int(vals[2 * i + hi][lane])
  for lane in range(64):
    for k, sel in enumerate((opsel, opsel_hi)):
      x, y, z = (Fraction(f32(half(i, sel >> i & 1, lane))) for i in range(3))
      assert out[k, lane] == round_exact(x * y + z, np.float32), (lane, k)
    assert out[2, lane] == half(0, opsel & 1, lane) and out[3, lane] == half(1, opsel >> 1 & 1, lane)

def test_bitop3_is_gfx950s():
  """v_bitop3_b32 (gfx950): bit i of D is bit (S0[i] << 2 | S1[i] << 1 | S2[i]) of the truth table in OMOD:ABS:NEG."""
  a, b, c = random_u32(), random_u32(), random_u32()
  out = rows(1)
  table = 0b10010110 ^ 0x21
  op = I.VOP3(I.VOP3Op.V_BITOP3_B32, vdst=v[5], src0=v[2], src1=v[3], src2=v[4], omod=table >> 6, abs=table >> 3 & 7, neg=table & 7)
  body = kernel(*load(v[2], 0), *load(v[3], 1), *load(v[4], 2), op, *store(v[5]), I.s_endpgm())
  run(body, out, inputs(a, b, c), family="cdna4")
  want = [sum((table >> ((int(x) >> i & 1) << 2 | (int(y) >> i & 1) << 1 | (int(z) >> i & 1)) & 1) << i for i in range(32))
          for x, y, z in zip(a, b, c)]
  assert [int(x) for x in out[0]] == want
  with pytest.raises(UnsupportedInstruction, match="v_bitop3_b32"): run(body, rows(1), inputs(a, b, c), family="cdna3")

@pytest.mark.parametrize("path", PATHS)
def test_lds_by_gfx9_names_into_agprs_and_pairs(path, monkeypatch):
  """ds_write_b32 / ds_read_b32 (RDNA3's ds_store_b32 / ds_load_b32) with ACC: the read lands in an AGPR; ds_read2_b32
  reads two dwords at OFFSET0 and OFFSET1 (in dwords) from the lane's address."""
  out = rows(3)
  body = [I.v_add_u32_e32(v[2], 1000, v[0]), I.ds_write_b32(addr=v[1], data0=v[2]), I.s_waitcnt(simm16=0),
          I.v_sub_u32_e32(v[3], 63, v[0]), I.v_lshlrev_b32_e32(v[3], 2, v[3]), I.ds_read_b32(vdst=v[4], addr=v[3], acc=1),
          I.ds_read2_b32(vdst=v[6:7], addr=v[1], offset0=0, offset1=1), I.s_waitcnt(simm16=0), I.v_accvgpr_read(v[5], v[4]),
          *store(v[5]), *store(v[6], 1), *store(v[7], 2), I.s_endpgm()]
  run(kernel(*body), out, path=path, monkeypatch=monkeypatch, lds=512)
  lane = np.arange(64)
  assert (out[0] == 1063 - lane).all() and (out[1] == 1000 + lane).all() and (out[2, :63] == 1001 + lane[:63]).all()

# *** AGPRs and MFMA ***

@pytest.mark.parametrize("path", PATHS)
def test_agprs_are_a_second_register_file(path, monkeypatch):
  """v_accvgpr_write/mov/read move between the files; a memory op with ACC loads into or stores from AGPRs; a[n] and
  v[n] are different registers."""
  a, b = random_u32(), random_u32()
  out = rows(3)
  body = [*load(v[2], 0), I.v_accvgpr_write(v[2], v[2]), I.v_mov_b32_e32(v[2], 5), I.v_accvgpr_mov_b32_e32(v[7], v[2]),
          I.v_accvgpr_read(v[3], v[7]), *load(v[9], 1, acc=1), I.v_accvgpr_read(v[4], v[9]), *store(v[3]), *store(v[4], 1),
          *store(v[7], 2, acc=1), I.s_endpgm()]
  run(kernel(*body), out, inputs(a, b), path, monkeypatch)
  assert (out[0] == a).all() and (out[1] == b).all() and (out[2] == a).all()

def mfma_16x16x16_f16_regs(A:np.ndarray, B:np.ndarray) -> tuple[list, list]:
  """AMD's layout of v_mfma_f32_16x16x16_f16's A (16x16, row i, column k) and B (k, j): lane i + 16 * (k // 4) holds
  A[i][k] as half k % 4 of its two VGPRs; lane j + 16 * (k // 4) holds B[k][j] likewise."""
  a = np.zeros((64, 4), np.float16)
  b = np.zeros((64, 4), np.float16)
  for k in range(16):
    a[np.arange(16) + 16 * (k // 4), k % 4] = A[:, k]
    b[np.arange(16) + 16 * (k // 4), k % 4] = B[k, :]
  words = lambda x: [x.view(np.uint32)[:, r] for r in range(2)]
  return words(a), words(b)

def mfma_d_layout(regs) -> np.ndarray:
  """D (16x16 f32): lane j + 16 * (i // 4) holds D[i][j] in VGPR i % 4."""
  D = np.zeros((16, 16), np.uint32)
  for i in range(16): D[i, :] = regs[i % 4][np.arange(16) + 16 * (i // 4)]
  return D

def test_mfma_f32_16x16x16_f16_from_agprs_rounded_once():
  """D = A * B + C with C and D in AGPRs (ACC_CD): each element the exact sum of 16 f16 products and C, rounded once."""
  A = (RNG.standard_normal((16, 16)) * 4).astype(np.float16)
  B = (RNG.standard_normal((16, 16)) * 4).astype(np.float16)
  C = RNG.standard_normal((16, 16)).astype(np.float32)
  (a0, a1), (b0, b1) = mfma_16x16x16_f16_regs(A, B)
  c = [np.zeros(64, np.uint32) for _ in range(4)]
  for i in range(16): c[i % 4][np.arange(16) + 16 * (i // 4)] = C[i].view(np.uint32)
  mfma = I.VOP3P_MFMA(I.VOP3POp.V_MFMA_F32_16X16X16_F16, vdst=v[0:3], src0=v[4:5], src1=v[6:7], src2=v[0:3], acc_cd=1)
  body = [*load(v[4], 0), *load(v[5], 1), *load(v[6], 2), *load(v[7], 3), *(x for r in range(4) for x in load(v[r], 4 + r, acc=1)),
          mfma, *(x for r in range(4) for x in store(v[r], r, acc=1)), I.s_endpgm()]
  out = rows(4)
  run(kernel(*body), out, inputs(a0, a1, b0, b1, *c))
  D = mfma_d_layout(list(out))
  for i in range(16):
    for j in range(16):
      exact = sum(Fraction(float(A[i, k])) * Fraction(float(B[k, j])) for k in range(16)) + Fraction(float(C[i, j]))
      assert D[i, j] == round_exact(exact, np.float32), (i, j)

def test_mfma_with_an_inline_constant_c_and_vgpr_d():
  """Small integers: every product and sum is exact, so D = A * B + 1.0 equals the float64 matmul."""
  A = RNG.integers(-8, 8, (16, 16)).astype(np.float16)
  B = RNG.integers(-8, 8, (16, 16)).astype(np.float16)
  (a0, a1), (b0, b1) = mfma_16x16x16_f16_regs(A, B)
  mfma = I.VOP3P_MFMA(I.VOP3POp.V_MFMA_F32_16X16X16_F16, vdst=v[8:11], src0=v[4:5], src1=v[6:7], src2=1.0)
  body = [*load(v[4], 0), *load(v[5], 1), *load(v[6], 2), *load(v[7], 3), mfma, *(x for r in range(4) for x in store(v[8 + r], r)),
          I.s_endpgm()]
  out = rows(4)
  run(kernel(*body), out, inputs(a0, a1, b0, b1))
  assert np.array_equal(mfma_d_layout(list(out)).view(np.float32), (A.astype(np.float64) @ B.astype(np.float64) + 1).astype(np.float32))

def test_mfma_broadcast_controls_are_not_modelled():
  mfma = I.VOP3P_MFMA(I.VOP3POp.V_MFMA_F32_16X16X16_F16, vdst=v[0:3], src0=v[4:5], src1=v[6:7], src2=v[0:3], acc_cd=1, cbsz=1)
  with pytest.raises(UnsupportedInstruction, match="v_mfma_f32_16x16x16_f16: CBSZ/ABID/BLGP"): run(kernel(mfma, I.s_endpgm()), rows(1))

# *** operand encodings ***

def test_reserved_and_unmodelled_scalar_operands():
  """GFX9's M0 is 124; 125 is reserved; FLAT_SCRATCH and XNACK_MASK (102..105) are not modelled."""
  out = rows(1)
  mov = lambda d, src: I.SOP1.from_bytes((0xbe800000 | d << 16 | 0 << 8 | src).to_bytes(4, "little"))  # s_mov_b32 (raw numbers)
  assert type(mov(9, 8)).__name__ == "SOP1" and str(mov(9, 8)) == str(I.s_mov_b32(s[9], s[8]))
  run(kernel(I.s_mov_b32(s[8], 77), mov(124, 8), mov(9, 124), I.v_mov_b32_e32(v[2], s[9]), *store(v[2]), I.s_endpgm()), out)
  assert (out[0] == 77).all()  # through M0 (124)
  with pytest.raises(UnsupportedInstruction, match="operand encoding 125 is reserved on CDNA"): run(kernel(mov(9, 125), I.s_endpgm()), rows(1))
  with pytest.raises(UnsupportedInstruction, match="FLAT_SCRATCH_LO is not modelled"): run(kernel(mov(9, 102), I.s_endpgm()), rows(1))

@pytest.mark.parametrize("path", PATHS)
def test_pk_add_f32_with_an_inline_constant(path, monkeypatch):
  """LLVM folds a constant into v_pk_add_f32 where both results read its low half (op_sel_hi clear for it): each half
  of the pair plus 1.0. Reading the constant's high half is not modelled (a named error)."""
  x = [RNG.standard_normal(64).astype(np.float32).view(np.uint32) for _ in range(2)]
  out = rows(2)
  add = I.v_pk_add_f32(v[6:7], v[2:3], 1.0, opsel_hi=1)  # OP_SEL_HI: source 0's high half, the constant's low one
  run(kernel(*load(v[2], 0), *load(v[3], 1), add, *store(v[6]), *store(v[7], 1), I.s_endpgm()), out, inputs(*x), path, monkeypatch)
  for k in range(2): assert [int(b) for b in out[k]] == [round_exact(Fraction(f32(int(b))) + 1, np.float32) for b in x[k]]
  with pytest.raises(UnsupportedInstruction, match="the high half of constant operand"):
    run(kernel(I.v_pk_add_f32(v[6:7], v[2:3], 1.0), I.s_endpgm()), rows(1))
  # the constant 0 reads 0 in both halves whichever way hardware forms the high one (LLVM's bfloat16 negation uses it)
  zero = I.v_pk_add_f32(v[6:7], 0, v[2:3], neg=2, neg_hi=2)  # each half: 0 + -x
  run(kernel(*load(v[2], 0), *load(v[3], 1), zero, *store(v[6]), *store(v[7], 1), I.s_endpgm()), out, inputs(*x), path, monkeypatch)
  for k in range(2): assert [int(b) for b in out[k]] == [round_exact(0 - Fraction(f32(int(b))), np.float32) for b in x[k]]

# *** scratch ***

def saddr_off(inst):
  """inst with SADDR 0x7f, GFX9's "no SGPR base" (the DSL's default NULL is 124, M0 on GFX9)."""
  raw = int.from_bytes(inst.to_bytes(), "little")
  return type(inst).from_bytes(((raw & ~(0x7f << 48)) | 0x7f << 48).to_bytes(inst.size(), "little"))

def test_scratch_is_private_per_lane_in_1kib_units():
  """COMPUTE_TMPRING_SIZE.WAVESIZE counts 1 KiB on GFX9: one unit is 16 bytes per lane of a wave64 wave. Each lane reads
  back its own dword at offset 12; offset 16 is past its slot (a fault naming the scratch offset). Numpy only: the C
  path declines kernels with a private segment."""
  out = rows(1)
  put = saddr_off(I.scratch_store_dword(addr=v[3], data=v[0], offset=0, sve=1))
  get = saddr_off(I.scratch_load_dword(vdst=v[2], addr=v[3], offset=0, sve=1))
  body = [I.v_mov_b32_e32(v[3], 12), put, get, I.s_waitcnt(simm16=0), *store(v[2]), I.s_endpgm()]
  run_isa(kernel(*body), out, None, (64, 1, 1), (1, 1, 1), RSRC1, RSRC2 | 1, tmpring=1 << 12, arch="cdna3", wave32=False)
  assert list(out[0]) == list(range(64))
  bad = [I.v_mov_b32_e32(v[3], 16), put, I.s_endpgm()]
  with pytest.raises(GPUPageFault, match=r"scratch_store_dword at PC 0x[0-9a-f]+: private \(scratch\) offset 0x10"):
    run_isa(kernel(*bad), out, None, (64, 1, 1), (1, 1, 1), RSRC1, RSRC2 | 1, tmpring=1 << 12, arch="cdna3", wave32=False)

@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_div_scale_wave64_same_bits(ty, monkeypatch):
  """v_div_scale_f32/f64 in a CDNA wave64 (VOP3b: D and the VCC pair): the C backend's div_scale32/64 gives the numpy
  path's D, VCC bits over edge-heavy lanes, S0 as S1 (the denominator's call), S2 (the numerator's) or neither."""
  t = {"f32": np.float32, "f64": np.float64}[ty]
  s1, s2, other = (edge_floats(rng, t, 64).view(UINT[t]) for _ in range(3))
  which = rng.integers(0, 3, 64)
  s0 = np.where(which == 0, s1, np.where(which == 1, s2, other))
  wide = t is np.float64
  cols = [half for x in (s0, s1, s2) for half in ((x & M32, x >> np.uint64(32)) if wide else (x,))]
  regs = [v[2 + k:3 + k] for k in (0, 2, 4)] if wide else [v[2], v[3], v[4]]
  op = (I.v_div_scale_f64 if wide else I.v_div_scale_f32)(v[10:11] if wide else v[10], VCC, *regs)
  body = [*(i for k in range(len(cols)) for i in load(v[2 + k], k)), I.v_mov_b32_e32(v[11], 0) if not wide else I.s_nop(0), op,
          I.v_cndmask_b32_e64(v[12], 0, 1, VCC), I.v_mov_b32_e32(v[13], VCC_LO), I.v_mov_b32_e32(v[14], VCC_HI),
          *(i for k in range(5) for i in store(v[10 + k], k)), I.s_endpgm()]
  outs = []
  for path in ("numpy", "native"):
    out = rows(5)
    run(kernel(*body), out, inputs(*cols), path, monkeypatch)
    outs.append(out)
  np.testing.assert_array_equal(outs[1], outs[0])
  vcc = outs[0][2]
  assert (vcc == 1).sum() > 3 and (vcc == 0).sum() > 3
  mask = sum(int(b) << lane for lane, b in enumerate(vcc))   # the pair holds every lane's bit (wave64)
  assert (outs[0][3] == mask & M32).all() and (outs[0][4] == mask >> 32).all()
