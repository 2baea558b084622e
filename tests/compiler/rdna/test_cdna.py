"""The CDNA tables (semantics/cdna.py, cdna4.py) and helpers (compiler/rdna/gfx9.py): aliases checked against both
ISAs' pseudocode, CDNA's own rows against independent references, SDWA selection, GFX9 DPP lane maps, buffer
addressing, MFMA against float64 matmuls and exact rational sums, and every instruction LLVM emits for the op suite on
gfx942/gfx950 classified. tests/compiler/rdna/test_cdna_exec.py runs the deltas in hand-assembled kernels."""
import fractions, os, re
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from tinygrad.runtime.autogen.amd.cdna import ins, str_pcode as cdna_pcode
from tinygrad.runtime.autogen.amd.rdna3 import str_pcode as rdna3_pcode
from mockgpu.compiler import exact
from mockgpu.compiler.rdna import gfx9, operands
from mockgpu.compiler.rdna.semantics import rdna3 as semantics, cdna as table, cdna4
from mockgpu.compiler.rdna.backends.numpy import eval_row
from support.cdna import dpp_reference

from conftest import HERE
u32s, u64s = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)

# *** aliases: CDNA's pseudocode is RDNA3's ***

FAMILIES = {"vop": ("VOP1Op", "VOP2Op", "VOP3Op", "VOP3SDOp"), "sop": ("SOP1Op", "SOP2Op", "SOPKOp"), "sopc": ("SOPCOp",),
            "vop3p": ("VOP3POp",), "sopp": ("SOPPOp",)}

def pcode(source, family:str) -> dict[str, str]:
  out:dict[str, str] = {}
  for op, text in source.PCODE.items():
    if type(op).__name__ in FAMILIES[family]: out.setdefault(table.strip(op.name), text)
  return out

def norm(text:str) -> str: return re.sub(r"\s+", " ", re.sub(r"//[^\n]*", "", text)).strip()
def statements(text:str) -> list[str]: return sorted(s.strip().replace(".b32", "") for s in norm(text).split(";") if s.strip() and "declare" not in s)

# alias pairs whose wording differs, each with why the meaning does not
REVIEWED = {
  "ALIGNBIT_B32": "RDNA3 writes S2.u32[4:0].u32, CDNA S2.u32[4:0]: the same 5-bit shift",
  "ALIGNBYTE_B32": "the same .u32 cast on S2.u32[1:0]",
  "READFIRSTLANE_B32": "CDNA's text is RDNA3's WAVE64 branch", "READLANE_B32": "CDNA's text is RDNA3's WAVE64 branch",
  "WRITELANE_B32": "CDNA's text is RDNA3's WAVE64 branch",
}

def test_same_vop_and_sop_rows_repeat_rdna3_pseudocode():
  for family, names, rows in (("vop", table.SAME_VOP, semantics.VOP), ("sop", table.SAME_SOP, semantics.SOP)):
    c, r = pcode(cdna_pcode, family), pcode(rdna3_pcode, family)
    for n in names:
      assert n in rows, f"{n}: no RDNA3 row to alias"
      assert norm(c[n]) == norm(r[n]), f"{n}: CDNA's pseudocode is not RDNA3's:\n{c[n]}\n--\n{r[n]}"

def test_renamed_and_special_forms_repeat_rdna3_pseudocode():
  c, r = pcode(cdna_pcode, "vop"), pcode(rdna3_pcode, "vop")
  for cdna_name, rdna3_name in {**table.RENAMED_VOP, **{n: n for n in table.SPECIAL}}.items():
    if cdna_name in REVIEWED: assert cdna_name in c and rdna3_name in r
    else: assert norm(c[cdna_name]) == norm(r[rdna3_name]), f"{cdna_name} vs RDNA3 {rdna3_name}"
  c, r = pcode(cdna_pcode, "sop"), pcode(rdna3_pcode, "sop")
  for cdna_name, rdna3_name in table.RENAMED_SOP.items(): assert statements(c[cdna_name]) == statements(r[rdna3_name]), cdna_name
  assert all(n in semantics.VOP for n in table.RENAMED_VOP.values()) and all(n in semantics.SOP for n in table.RENAMED_SOP.values())
  # the renamed rows are RDNA3's own objects, reached through the CDNA name (operands.lower applies ALIASES)
  assert table.ALIASES["V_FFBH_U32_E32"] == "V_CLZ_I32_U32_E32" and table.VOP["CLZ_I32_U32"] is semantics.VOP["CLZ_I32_U32"]
  assert table.ALIASES["S_ANDN2_SAVEEXEC_B64"] == "S_AND_NOT1_SAVEEXEC_B64" and table.ALIASES["V_ADDC_CO_U32_E32"] == "V_ADD_CO_CI_U32_E32"

def test_packed_sopc_and_control_repeat_rdna3_pseudocode():
  c, r = pcode(cdna_pcode, "vop3p"), pcode(rdna3_pcode, "vop3p")
  for n in table.SAME_PACKED: assert statements(c[n]) == statements(r[n]) and n in semantics.PACKED, n  # the halves in the other order
  c, r = pcode(cdna_pcode, "sopc"), pcode(rdna3_pcode, "sopc")
  assert all(norm(c[n]) == norm(r[n]) for n in table.SAME_SOPC)
  c, r = pcode(cdna_pcode, "sopp"), pcode(rdna3_pcode, "sopp")
  assert all(norm(c[n]) == norm(r[n]) for n in table.CONTROL if n in c and n != "WAITCNT")

def test_cdna_rows_are_where_the_pseudocode_differs():
  c, r = pcode(cdna_pcode, "vop"), pcode(rdna3_pcode, "vop")
  for n in ("MAX_F32", "MIN_F32", "MAX_F16", "MIN_F16", "MAX_F64", "MIN_F64"): assert norm(c[n]) != norm(r[n]) and n in table.OWN
  for n in ("MOV_B64", "LSHL_ADD_U64", "FMAC_F64"): assert n in c and n not in r and n in table.VOP
  assert "BITOP3_B32" in c and "BITOP3_B32" in cdna4.VOP and "BITOP3_B32" not in table.VOP  # gfx950 only
  assert table.VOP["ADD_F32"] is semantics.VOP["ADD_F32"] and table.VOP["MAX_F32"] is not semantics.VOP["MAX_F32"]
  # an RDNA3 row CDNA does not define is not in its table (executing it raises), nor a GFX9 op mockgpu does not model
  for n in ("CVT_PKACCUM_U8_F32", "DOT2_F32_F16", "FMAC_DX9_ZERO_F32"): assert n not in table.VOP, n
  assert "FMAC_DX9_ZERO_F32" in semantics.VOP and "DOT2_F32_F16" in semantics.VOP
  assert "CBRANCH_G_FORK" not in table.SOP and "ADD_NC_U64" not in table.SOP

def test_cmpx_writes_its_destination_too():
  text = norm(cdna_pcode.PCODE[next(k for k in cdna_pcode.PCODE if k.name == "V_CMPX_LT_F32_E32")])
  assert text.startswith("EXEC.u64[laneId] = D0.u64[laneId] =")  # test_cdna_exec runs it
  assert table.compare("CMPX_LT_F32") == ("LT", "f32") and table.compare("CMP_TRU_F16") == ("T", "f16") and table.compare("CMP_CLASS_F32") is None
  assert all(f"CMP_{table.compare(f'CMP_{c}_F32')[0]}_F32" in table.VOP for c in ("F", "LT", "EQ", "LE", "GT", "LG", "GE", "O", "U",
                                                                                        "NGE", "NLG", "NGT", "NLE", "NEQ", "NLT", "TRU"))

# *** CDNA's own rows, against independent references ***

def evaluate(row, *args, out:str="d", **extra):
  """Run a row as the numpy backend would (its helpers are the numpy runtime's): its sources from args (a, b, c),
  other inputs by name; the final value of `out`."""
  values = dict(zip((n for n, _ in row.srcs), args), **extra)
  return eval_row(row, values)[out]

@given(u64s, u32s, u64s)
def test_lshl_add_u64_and_mov_b64(a, b, c):
  assert int(evaluate(table.VOP["LSHL_ADD_U64"], np.uint64(a), np.uint32(b), np.uint64(c))) == ((a << (b & 7)) + c) % 2**64
  assert int(evaluate(table.VOP["MOV_B64"], np.uint64(a))) == a

F32_SPECIALS = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, 1e-45]
QNAN_A, QNAN_B, SNAN = 0x7fc00001, 0x7fc00002, 0x7f800005

def f32(bits): return np.array([bits], np.uint32).view(np.float32)

def test_gfx9_min_max_nan_and_zero_choices():
  mx, mn = table.VOP["MAX_F32"], table.VOP["MIN_F32"]
  bits = lambda x: int(np.asarray(x).view(np.uint32)[0])
  assert bits(evaluate(mx, f32(QNAN_A), f32(QNAN_B))) == QNAN_B  # two quiet NaNs: S1 (RDNA3's pseudocode: S0)
  assert bits(evaluate(mx, f32(SNAN), f32(QNAN_B))) == SNAN | 0x400000  # a signaling S0: quieted S0
  assert bits(evaluate(mx, f32(QNAN_A), f32(SNAN))) == SNAN | 0x400000
  assert evaluate(mx, f32(QNAN_A), np.float32([3.0]))[0] == 3.0 and evaluate(mn, np.float32([3.0]), f32(QNAN_A))[0] == 3.0
  for a in F32_SPECIALS:
    for b in F32_SPECIALS:
      x, y = np.float32([a]), np.float32([b])
      want_max = a if (a > b or (a == b and not np.signbit(a))) else b
      want_min = a if (a < b or (a == b and np.signbit(a))) else b
      assert bits(evaluate(mx, x, y)) == bits(np.float32([want_max])) and bits(evaluate(mn, x, y)) == bits(np.float32([want_min]))

@given(u32s, u32s, st.integers(0, 1))
def test_carry_rows_against_integers(a, b, ci):
  for name, (value, carry) in {"ADD_CO_U32": (a + b, a + b >= 2**32), "SUB_CO_U32": (a - b, b > a), "SUBREV_CO_U32": (b - a, a > b),
                               "ADDC_CO_U32": (a + b + ci, a + b + ci >= 2**32), "SUBB_CO_U32": (a - b - ci, b + ci > a),
                               "SUBBREV_CO_U32": (b - a - ci, a + ci > b)}.items():
    row = table.VOP[table.CARRY_IN.get(name, name)]
    ns = dict(vcc=np.bool_(ci)) if name in table.CARRY_IN else {}
    assert int(evaluate(row, np.uint32(a), np.uint32(b), **ns)) % 2**32 == value % 2**32, name
    assert bool(evaluate(row, np.uint32(a), np.uint32(b), out="vcc", **ns)) == carry, name

@given(st.integers(-2**31, 2**31 - 1), st.integers(0, 2**16 - 1), st.integers(0, 1), st.integers(-2**31, 2**31 - 1))
def test_sopk_rows(s0, k, scc, d):
  """The SOPK rows (RDNA3's) with the immediate as the operand model gives it: sign-extended (I32), zero-extended (U32)."""
  sk, uk = np.int32(k - 2**16 if k >> 15 else k), np.uint32(k)
  for cond, op in (("EQ", "__eq__"), ("LG", "__ne__"), ("GT", "__gt__"), ("GE", "__ge__"), ("LT", "__lt__"), ("LE", "__le__")):
    assert bool(evaluate(table.SOP[f"CMPK_{cond}_I32"], np.int32(s0), sk, out="scc")) == getattr(s0, op)(int(sk))
    assert bool(evaluate(table.SOP[f"CMPK_{cond}_U32"], np.uint32(s0 % 2**32), uk, out="scc")) == getattr(s0 % 2**32, op)(k)
  r = int(evaluate(table.SOP["ADDK_I32"], sk, d=np.int32(d)))
  assert r == (d + int(sk) + 2**31) % 2**32 - 2**31
  overflow = not -2**31 <= d + int(sk) < 2**31
  assert bool(evaluate(table.SOP["ADDK_I32"], sk, d=np.int32(d), out="scc")) == overflow
  assert int(evaluate(table.SOP["CMOVK_I32"], sk.view(np.uint32), d=np.uint32(d % 2**32), scc=np.uint32(scc))) == (int(sk) if scc else d) % 2**32

@given(u32s, u32s, u32s, st.integers(0, 255))
def test_bitop3_truth_table(a, b, c, table):
  got = int(evaluate(cdna4.VOP["BITOP3_B32"], np.uint32(a), np.uint32(b), np.uint32(c), ttbl=table))
  want = sum(((table >> ((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1))) & 1) << i for i in range(32))
  assert got == want
  inst = ins.VOP3(ins.VOP3Op.V_BITOP3_B32, vdst=ins.v[0], src0=ins.v[1], src1=ins.v[2], src2=ins.v[3], omod=table >> 6, abs=table >> 3 & 7,
                  neg=table & 7)
  assert gfx9.bitop3_table(inst) == table

def test_cvt_pk_f16_f32_rounds_to_nearest_even_and_other_rows():
  a = np.float32([1 + 2**-11, 1 + 3 * 2**-11, 65520.0, -1e-8])  # ties go to even; 65520 rounds to inf in f16
  got = np.asarray(evaluate(cdna4.VOP["CVT_PK_F16_F32"], a, a[::-1]), np.uint32)
  assert list((got & 0xffff).astype(np.uint16).view(np.float16)) == [1.0, np.float16(1 + 2 * 2**-10), np.inf, np.float16(-0.0)]
  assert list(np.asarray(evaluate(table.VOP["MUL_LEGACY_F32"], np.float32([0, np.inf, 2]), np.float32([np.inf, 0, 3])))) == [0, 0, 6]
  assert list(evaluate(table.VOP["CVT_RPI_I32_F32"], np.float32([2.5, -2.5, 1e10]))) == [3, -2, 2**31 - 1]
  assert list(evaluate(table.VOP["CVT_FLR_I32_F32"], np.float32([2.5, -2.5, np.nan]))) == [2, -3, 0]

# *** operands and register files ***

def test_operand_encodings():
  assert gfx9.operand(124) == ("special", 124) and gfx9.OPERANDS[124] == "M0"  # RDNA3: NULL at 124, M0 at 125
  assert gfx9.operand(101) == ("sgpr", 101) and gfx9.operand(102) == ("special", 102) and gfx9.operand(300) == ("vgpr", 44)
  assert gfx9.operand(200) == ("int", -8) and gfx9.operand(192) == ("int", 64) and gfx9.operand(255) == ("literal", 0)
  for reserved in (125, 209, 232):
    with pytest.raises(ValueError, match=f"operand encoding {reserved} is reserved"): gfx9.operand(reserved)

def test_agprs_are_named_by_the_acc_bits():
  m = ins.VOP3P_MFMA(ins.VOP3POp.V_MFMA_F32_16X16X16_F16, vdst=ins.v[0:3], src0=ins.v[4:5], src1=ins.v[6:7], src2=ins.v[0:3], acc_cd=1)
  assert gfx9.acc_registers(m) == {"src0": "vgpr", "src1": "vgpr", "src2": "agpr", "vdst": "agpr"}
  assert gfx9.acc_registers(ins.DS(ins.DSOp.DS_READ_B32, vdst=ins.v[1], addr=ins.v[2], acc=1))["vdst"] == "agpr"
  assert gfx9.acc_registers(ins.VOP3P(ins.VOP3POp.V_ACCVGPR_WRITE, vdst=ins.v[1], src0=ins.v[2], src1=ins.v[0], src2=ins.v[0])) == \
         {"src0": "vgpr", "vdst": "agpr"}

def test_program_resources():
  r = gfx9.ProgramResources.decode(rsrc1=0x00af_0045, rsrc3=0x1_0007)
  assert (r.vgprs, r.sgprs, r.accum_offset, r.agprs, r.tg_split, r.ieee_mode) == (48, 32, 32, 16, True, True)
  with pytest.raises(ValueError, match="reserved bits 0x20000000"): gfx9.ProgramResources.decode(0x2000_0000, 0)
  with pytest.raises(ValueError, match="AGPRs start at 256, past the kernel's 8"): gfx9.ProgramResources.decode(0, 63)
  with pytest.raises(ValueError, match="wave64 only"): gfx9.ProgramResources.decode(0, 0, 32)

def test_program_resources_of_an_llvm_mfma_kernel():
  from mockgpu.compiler import toolchain
  if not toolchain.llvm_compiles_for("gfx942")[0]: pytest.skip("no LLVM here compiles for gfx942")
  from tinygrad.runtime.support.compiler_llvm import AMDLLVMCompiler
  from tinygrad.runtime.support.elf import elf_loader
  from tinygrad.runtime.autogen import amdgpu_kd
  from mockgpu.compiler.rdna import decode
  src = """define amdgpu_kernel void @k(ptr addrspace(1) %p) #0 {
  %a = load <4 x half>, ptr addrspace(1) %p
  %c = load <4 x float>, ptr addrspace(1) %p
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %a, <4 x half> %a, <4 x float> %c, i32 0, i32 0, i32 0)
  %e = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %a, <4 x half> %a, <4 x float> %d, i32 0, i32 0, i32 0)
  store <4 x float> %e, ptr addrspace(1) %p
  ret void
}
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32, i32, i32)
attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }"""
  lib = AMDLLVMCompiler("gfx942").compile(src)
  image, sections, relocs = elf_loader(lib)
  for at, target, typ, addend in relocs:  # R_AMDGPU_REL64 (the descriptor's code offset), as tinygrad's AMDProgram applies it
    assert typ == 5
    image[at:at + 8] = (target - at + addend).to_bytes(8, "little", signed=True)
  rodata = next(s for s in sections if s.name == ".rodata").header.sh_addr
  kd = amdgpu_kd.llvm_amdhsa_kernel_descriptor_t.from_buffer_copy(bytes(image[rodata:rodata + 64]))
  r = gfx9.ProgramResources.decode(kd.compute_pgm_rsrc1, kd.compute_pgm_rsrc3)
  insts = decode.walk(bytes(image[rodata + kd.kernel_code_entry_byte_offset:]), "cdna")
  assert any(decode.op_name(i).startswith("V_MFMA") for i in insts.values())
  # the descriptor covers every register the code names: VGPRs below accum_offset, AGPRs (acc bits) after it
  vgprs = agprs = 0
  for i in insts.values():
    files = gfx9.acc_registers(i)
    for name, _ in type(i)._fields:
      reg = getattr(i, name)
      if hasattr(reg, "offset") and 256 <= reg.offset < 512:
        top = reg.offset - 256 + reg.sz
        if files.get(name) == "agpr": agprs = max(agprs, top)
        else: vgprs = max(vgprs, top)
  assert vgprs <= r.accum_offset and agprs <= r.agprs and r.accum_offset % 4 == 0

# *** SDWA ***

@given(u32s, st.integers(0, 6), st.booleans())
def test_sdwa_source_selection(x, sel, sext):
  shift, width = {0: (0, 8), 1: (8, 8), 2: (16, 8), 3: (24, 8), 4: (0, 16), 5: (16, 16), 6: (0, 32)}[sel]
  field = (x >> shift) & ((1 << width) - 1)
  if sext and width < 32 and field >> (width - 1): field -= 1 << width
  assert int(gfx9.sdwa_src(np.uint32([x]), sel, sext)[0]) == field % 2**32

@given(u32s, u32s, st.integers(0, 6), st.integers(0, 2))
def test_sdwa_destination(result, old, sel, unused):
  shift, width = {0: (0, 8), 1: (8, 8), 2: (16, 8), 3: (24, 8), 4: (0, 16), 5: (16, 16), 6: (0, 32)}[sel]
  got = int(gfx9.sdwa_dst(np.uint32([result]), np.uint32([old]), sel, unused)[0])
  mask = ((1 << width) - 1) << shift
  assert got & mask == (result << shift) & mask
  if width == 32: return
  rest = got & ~mask & 0xffffffff
  if unused == 0: assert rest == 0
  elif unused == 2: assert rest == old & ~mask & 0xffffffff
  else:  # SEXT: the bits above the field copy its top bit; those below are zero
    top = (result >> (width - 1)) & 1
    assert rest == (((0xffffffff << (shift + width)) & 0xffffffff) if top else 0)

def test_sdwa_reserved_selects():
  with pytest.raises(ValueError, match="SDWA select 7 is reserved"): gfx9.sdwa_src(np.uint32([1]), 7, False)
  with pytest.raises(ValueError, match="dst_unused 3 is reserved"): gfx9.sdwa_dst(np.uint32([1]), np.uint32([1]), 0, 3)

@pytest.mark.parametrize("ctrl", [0x1b, 0xe4, 0x39, 0x101, 0x108, 0x10f, 0x111, 0x11f, 0x121, 0x12f, 0x130, 0x134, 0x138, 0x13c, 0x140,
                                  0x141, 0x142, 0x143, 0x150, 0x15f])
def test_dpp_lane_maps(ctrl):
  assert operands.gfx9_dpp_valid(ctrl)
  src, ok = operands.dpp16_lanes(ctrl, 64)
  for lane in range(64):
    want = dpp_reference(ctrl, lane)
    assert (bool(ok[lane]), int(src[lane]) if ok[lane] else None) == (want is not None, want), (hex(ctrl), lane)

def test_dpp_reserved_controls():
  for ctrl in (0x100, 0x110, 0x120, 0x131, 0x144, 0x160, 0x1ff): assert not operands.gfx9_dpp_valid(ctrl), hex(ctrl)

# *** memory addressing ***

def test_mubuf_linear_structured_and_range():
  rsrc = gfx9.BufferResource.decode([0x1000, 0x7f | (16 << 16), 40, 0])  # base 0x7f_0000_1000, stride 16, 40 records
  assert (rsrc.base, rsrc.stride, rsrc.num_records, rsrc.swizzle) == (0x7f_0000_1000, 16, 40, False)
  addr, ok = gfx9.mubuf_address(rsrc, np.arange(64), np.zeros(64, np.int64), soffset=8, inst_offset=4, idxen=True, offen=False, size=4)
  assert list(addr[:3]) == [rsrc.base + 8 + 4 + 16 * i for i in range(3)] and ok[:40].all() and not ok[40:].any()
  raw = gfx9.BufferResource.decode([0x2000, 0, 100, 0])  # stride 0: a raw buffer of 100 bytes
  addr, ok = gfx9.mubuf_address(raw, 0, np.arange(64) * 4, soffset=1 << 20, inst_offset=0, idxen=False, offen=True, size=4)
  assert list(addr[:2]) == [0x2000 + (1 << 20), 0x2000 + (1 << 20) + 4] and ok[:25].all() and not ok[25:].any()  # soffset is not checked

def test_mubuf_swizzled_scratch_as_tinygrad_describes_it():
  # tinygrad's scratch SRD: SWIZZLE_ENABLE, ADD_TID_ENABLE, INDEX_STRIDE 3 (64 lanes), ELEMENT_SIZE 1 (4 bytes)
  from tinygrad.runtime.autogen import hsa
  w1 = int.from_bytes(hsa.union_SQ_BUF_RSRC_WORD1_bitfields(BASE_ADDRESS_HI=0x7f, SWIZZLE_ENABLE=1), "little")
  w3 = int.from_bytes(bytes(hsa.union_SQ_BUF_RSRC_WORD3_bitfields(DST_SEL_X=4, ADD_TID_ENABLE=1, ELEMENT_SIZE=1, INDEX_STRIDE=3, TYPE=0)), "little")
  rsrc = gfx9.BufferResource.decode([0x1000_0000, w1, 1 << 20, w3])
  assert (rsrc.swizzle, rsrc.add_tid, rsrc.index_stride, rsrc.element_size) == (True, True, 64, 4)
  addr, ok = gfx9.mubuf_address(rsrc, 0, np.zeros(64, np.int64), soffset=0, inst_offset=8, idxen=False, offen=True, size=4)
  # dword 2 of every lane's private memory: the lanes' dwords interleave, 64 lanes x 4 bytes per element row
  assert list(addr[:3]) == [0x7f_1000_0000 + 2 * 4 * 64 + lane * 4 for lane in range(3)] and ok.all()

def test_flat_offsets_and_memory_names():
  assert gfx9.flat_offset("GLOBAL", 0x1fff) == -1 and gfx9.flat_offset("FLAT", 0xfff) == 0xfff and gfx9.flat_offset("SCRATCH", 0x1000) == -4096
  for cdna_name, rdna3_name in [("GLOBAL_LOAD_DWORDX4", "GLOBAL_LOAD_B128"), ("GLOBAL_STORE_SHORT", "GLOBAL_STORE_B16"),
                                ("GLOBAL_LOAD_SBYTE", "GLOBAL_LOAD_I8"), ("DS_READ2ST64_B64", "DS_LOAD_2ADDR_STRIDE64_B64"),
                                ("DS_WRXCHG_RTN_B32", "DS_STOREXCHG_RTN_B32"), ("S_LOAD_DWORDX16", "S_LOAD_B512"),
                                ("GLOBAL_ATOMIC_UMAX_X2", "GLOBAL_ATOMIC_MAX_U64"), ("FLAT_LOAD_SHORT_D16_HI", "FLAT_LOAD_D16_HI_B16"),
                                ("SCRATCH_STORE_BYTE_D16_HI", "SCRATCH_STORE_D16_HI_B8"), ("DS_CMPST_RTN_F32", "DS_CMPSTORE_RTN_F32")]:
    assert table.memory_alias(cdna_name) == rdna3_name and table.ALIASES[cdna_name] == rdna3_name
  with pytest.raises(ValueError, match="DS_READ_B64_TR_B8 has no RDNA3 counterpart"): table.memory_alias("DS_READ_B64_TR_B8")

# *** exact sums and MFMA ***

def exact_round(values, dtype):
  """The exact rational sum rounded to nearest even in dtype, by comparing neighbours (an independent reference)."""
  total = sum(fractions.Fraction(float(v)) for v in values)
  with np.errstate(over="ignore"): guess = dtype(float(total))  # inf past the largest finite value
  cands = [np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf))]
  u = np.uint32 if dtype == np.float32 else np.uint64
  big = fractions.Fraction(2) ** (128 if dtype == np.float32 else 1024)  # IEEE rounds to inf as if it were this value
  value = lambda c: fractions.Fraction(float(c)) if np.isfinite(c) else (big if c > 0 else -big)
  key = lambda c: (abs(value(c) - total), int(np.asarray(c).view(u)) & 1)
  best = min(cands, key=key)
  return -dtype(0) if total == 0 and all(v == 0 and np.signbit(v) for v in values) else (dtype(0) if total == 0 else best)

finite = st.floats(allow_nan=False, allow_infinity=False, width=32)

@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(finite, st.integers(-40, 40)), min_size=1, max_size=20), st.sampled_from([np.float32, np.float64]))
def test_exact_sum_rounds_once(items, dtype):
  terms = np.array([np.ldexp(np.float64(m), e) for m, e in items])
  got = exact.exact_sum(terms[:, None], dtype)[0]
  want = exact_round(terms, dtype)
  u = np.uint32 if dtype == np.float32 else np.uint64
  assert np.asarray(got).view(u) == np.asarray(dtype(want)).view(u), (terms.tolist(), got, want)

def test_exact_sum_midpoints_and_specials():
  t = np.array([[1.0, 1.0, 1.0, 1e300], [2.0**-24, 2.0**-24, 3 * 2.0**-24, -1e300], [0.0, 2.0**-80, 0.0, 1.0]])
  got = exact.exact_sum(t, np.float32)
  assert got[0] == 1.0 and got[1] == np.float32(1 + 2.0**-23) and got[2] == np.float32(1 + 2.0**-22) and got[3] == 1.0  # ties to even
  assert np.isnan(exact.exact_sum(np.array([[np.inf], [-np.inf]]), np.float32)[0])
  assert np.signbit(exact.exact_sum(np.array([[-0.0], [-0.0]]), np.float32)[0])
  assert not np.signbit(exact.exact_sum(np.array([[1.0], [-1.0]]), np.float32)[0])

def encode(shape, kind, values, arch="cdna3"):
  """A/B registers of an MFMA from values [waves, blocks, m|n, k] (already representable in kind)."""
  lane, e = shape.operand_index()
  if kind in ("FP8", "BF8"):
    table = gfx9.fp8_table(arch, kind)
    bits = np.vectorize(lambda v: int(np.nonzero(table == v)[0][0]))(values).astype(np.uint8)
  else:
    bits = {"F16": lambda v: v.astype(np.float16).view(np.uint16), "BF16": lambda v: (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16),
                "F32": lambda v: v.astype(np.float32).view(np.uint32), "F64": lambda v: v.astype(np.float64).view(np.uint64),
                "I8": lambda v: v.astype(np.int8).view(np.uint8)}[kind](values)
  per_lane = np.zeros((values.shape[0], 64, shape.k_per_lane), bits.dtype)
  per_lane[:, lane, e] = bits
  words = np.ascontiguousarray(per_lane).view(np.uint8).reshape(values.shape[0], 64, -1)
  words = np.pad(words, ((0, 0), (0, 0), (0, -words.shape[-1] % 4))).view(np.uint32)
  return [words[..., r] for r in range(words.shape[-1])]

def encode_c(shape, values):
  lane, elem = shape.output_index()
  t = {"F32": np.float32, "I32": np.int32, "F64": np.float64}[shape.out]
  out = np.zeros((values.shape[0], 64, shape.out_regs // (2 if shape.out == "F64" else 1)), t)
  out[:, lane, elem] = values
  words = out.view(np.uint32)
  return [words[..., r] for r in range(shape.out_regs)], t

def decode_d(shape, regs, t):
  lane, elem = shape.output_index()
  return np.stack(regs, -1).view(t)[:, lane, elem]

MFMAS = ["V_MFMA_F32_16X16X16_F16", "V_MFMA_F32_32X32X8_F16", "V_MFMA_F32_16X16X4_4B_F16", "V_MFMA_F32_32X32X4_2B_F16",
         "V_MFMA_F32_4X4X4_16B_F16", "V_MFMA_F32_16X16X32_F16", "V_MFMA_F32_32X32X16_BF16", "V_MFMA_F32_16X16X16_BF16",
         "V_MFMA_F32_16X16X4_F32", "V_MFMA_F32_32X32X2_F32", "V_MFMA_F32_32X32X1_2B_F32", "V_MFMA_F32_4X4X1_16B_F32",
         "V_MFMA_I32_16X16X32_I8", "V_MFMA_I32_32X32X16_I8", "V_MFMA_I32_4X4X4_16B_I8", "V_MFMA_F64_16X16X4_F64",
         "V_MFMA_F32_16X16X32_FP8_FP8", "V_MFMA_F32_32X32X16_BF8_FP8"]

@pytest.mark.parametrize("name", MFMAS)
def test_mfma_against_a_float64_matmul(name):
  """Small integers: every product and sum is exact, so D must equal the float64 (or int64) matmul bit for bit."""
  shape = gfx9.MFMAShape.parse(name)
  assert name in {op.name for op in ins.VOP3POp}
  rng = np.random.default_rng(len(name))
  lo, hi = (-128, 128) if shape.a == "I8" else (-7, 8)
  A = rng.integers(lo, hi, (2, shape.blocks, shape.m, shape.k)).astype(np.float64)
  B = rng.integers(lo, hi, (2, shape.blocks, shape.n, shape.k)).astype(np.float64)
  if shape.a in ("FP8", "BF8"): A, B = A / 2, B / 4  # halves and quarters: fp8 represents them exactly
  C = rng.integers(-1000, 1000, (2, shape.blocks, shape.m, shape.n))
  c_regs, t = encode_c(shape, C.astype({"F32": np.float32, "I32": np.int32, "F64": np.float64}[shape.out]))
  d = gfx9.mfma(shape, encode(shape, shape.a, A), encode(shape, shape.b, B), c_regs)
  assert len(d) == shape.out_regs and len(encode(shape, shape.a, A)) == shape.in_regs(shape.a)
  want = np.einsum("wbik,wbjk->wbij", A, B) + C
  assert np.array_equal(decode_d(shape, d, t).astype(np.float64), want)

@pytest.mark.parametrize("name", ["V_MFMA_F32_16X16X16_F16", "V_MFMA_F32_16X16X4_F32", "V_MFMA_F64_16X16X4_F64"])
def test_mfma_rounds_the_exact_sum_once(name):
  shape = gfx9.MFMAShape.parse(name)
  rng = np.random.default_rng(7)
  ftype = {"F16": np.float16, "F32": np.float32, "F64": np.float64}[shape.a]
  A = (rng.standard_normal((1, 1, shape.m, shape.k)) * 2.0 ** rng.integers(-8, 8, (1, 1, shape.m, shape.k))).astype(ftype).astype(np.float64)
  B = (rng.standard_normal((1, 1, shape.n, shape.k)) * 2.0 ** rng.integers(-8, 8, (1, 1, shape.n, shape.k))).astype(ftype).astype(np.float64)
  ctype = np.float64 if shape.out == "F64" else np.float32
  C = rng.standard_normal((1, 1, shape.m, shape.n)).astype(ctype)
  c_regs, t = encode_c(shape, C)
  D = decode_d(shape, gfx9.mfma(shape, encode(shape, shape.a, A), encode(shape, shape.b, B), c_regs), t)
  for i in range(shape.m):
    for j in range(shape.n):
      terms = [fractions.Fraction(float(A[0, 0, i, k])) * fractions.Fraction(float(B[0, 0, j, k])) for k in range(shape.k)]
      total = sum(terms) + fractions.Fraction(float(C[0, 0, i, j]))
      got = D[0, 0, i, j]
      err = abs(fractions.Fraction(float(got)) - total)
      for nb in (np.nextafter(got, ctype(np.inf)), np.nextafter(got, ctype(-np.inf))):  # no neighbour is nearer
        assert err <= abs(fractions.Fraction(float(nb)) - total), (i, j)

def test_mfma_layout_is_tinygrads_emulator_layout():
  """tinygrad's ops_python WMMA for AMD with 64 threads (CDNA 16x16xK): A element (row, k) sits in lane
  (k // (K/4)) * 16 + row at index k % (K/4); C/D lane holds (row (lane // 16) * 4 + elem, column lane % 16)."""
  for name in ("V_MFMA_F32_16X16X16_F16", "V_MFMA_F32_16X16X32_BF16", "V_MFMA_F32_16X16X32_FP8_FP8"):
    shape = gfx9.MFMAShape.parse(name)
    lane, e = shape.operand_index()
    K = shape.k
    for row in range(16):
      for k in range(K): assert (lane[0, row, k], e[0, row, k]) == ((k // (K // 4)) * 16 + row, k % (K // 4))
    olane, oelem = shape.output_index()
    for ln in range(64):
      for el in range(4): assert (olane[0, (ln // 16) * 4 + el, ln % 16], oelem[0, (ln // 16) * 4 + el, ln % 16]) == (ln, el)

def test_fp8_formats_per_arch():
  fnuz, ocp = gfx9.fp8_table("cdna3", "FP8"), gfx9.fp8_table("cdna4", "FP8")
  assert np.isnan(fnuz[0x80]) and fnuz[0x00] == 0 and fnuz[0x7f] == 240.0 and fnuz[0x08] == 2.0**-7  # e4m3fnuz: bias 8
  assert ocp[0x80] == 0 and np.signbit(ocp[0x80]) and np.isnan(ocp[0x7f]) and ocp[0x7e] == 448.0 and ocp[0x08] == 2.0**-6  # e4m3fn
  bf8 = gfx9.fp8_table("cdna4", "BF8")
  assert bf8[0x7b] == 57344.0 and np.isinf(bf8[0x7c]) and np.isnan(bf8[0x7d]) and gfx9.fp8_table("cdna3", "BF8")[0x7f] == 57344.0

def test_mfma_integer_wraps_and_unmodelled_forms():
  shape = gfx9.MFMAShape.parse("V_MFMA_I32_16X16X32_I8")
  A = np.full((1, 1, 16, 32), -128.0)
  c_regs, t = encode_c(shape, np.full((1, 1, 16, 16), 2**31 - 1, np.int32))
  D = decode_d(shape, gfx9.mfma(shape, encode(shape, "I8", A), encode(shape, "I8", A), c_regs), t)
  assert (D == np.int32((2**31 - 1 + 32 * 128 * 128) % 2**32 - 2**32)).all()  # wraps (no clamp)
  with pytest.raises(ValueError, match="CBSZ/ABID/BLGP"): gfx9.mfma(shape, [], [], [], cbsz=1)
  for name in ("V_SMFMAC_F32_16X16X32_F16", "V_MFMA_F32_16X16X8_XF32", "V_MFMA_F64_4X4X4_4B_F64", "V_MFMA_F32_16X16X128_F8F6F4"):
    with pytest.raises(ValueError, match="not modelled"): gfx9.MFMAShape.parse(name)

# *** every instruction LLVM emits for the op suite ***

def test_every_surveyed_instruction_is_classified():
  lines = [l.split() for l in open(os.path.join(HERE, "cdna_instructions.txt")) if l.strip() and not l.startswith("#")]
  assert {arch for arch, *_ in lines} == {"gfx942", "gfx950"} and len(lines) > 400
  family = {"gfx942": "cdna3", "gfx950": "cdna4"}
  for arch, encoding, name, _ in lines: gfx9.classify(family[arch], encoding, name)
  assert gfx9.classify("cdna3", "VOP3P_MFMA", "V_MFMA_F32_16X16X16_F16").startswith("mfma")
  assert gfx9.classify("cdna3", "VOP2", "V_ADDC_CO_U32_E32") == "row: RDNA3 ADD_CO_CI_U32"
  assert gfx9.classify("cdna3", "VOP2", "V_MAX_F32_E32") == "row: CDNA" and gfx9.classify("cdna4", "VOP3", "V_BITOP3_B32") == "row: CDNA"
  with pytest.raises(KeyError, match="CDNA VOP3 V_BITOP3_B32 is not described"): gfx9.classify("cdna3", "VOP3", "V_BITOP3_B32")
  with pytest.raises(KeyError, match="CDNA SOP1 S_CBRANCH_JOIN is not described"): gfx9.classify("cdna3", "SOP1", "S_CBRANCH_JOIN")
  with pytest.raises(KeyError, match="CDNA SOPP S_SETHALT is not described"): gfx9.classify("cdna3", "SOPP", "S_SETHALT")

def test_mad_mix_is_llvms_fma_mix():
  """Erratum cdna-mad-mix-fused: LLVM disassembles GFX9's v_mad_mix opcodes as v_fma_mix, so the table aliases them to
  RDNA3's FMA_MIX rows (one rounding; test_cdna_exec runs a case where a separate multiply would differ)."""
  assert table.ALIASES["V_MAD_MIX_F32"] == "V_FMA_MIX_F32" and table.ALIASES["V_MAD_MIXLO_F16"] == "V_FMA_MIXLO_F16"
  mc = "/usr/lib/llvm-19/bin/llvm-mc"
  if os.path.exists(mc):
    import subprocess
    word = ins.VOP3P(ins.VOP3POp.V_MAD_MIX_F32, vdst=ins.v[0], src0=ins.v[1], src1=ins.v[2], src2=ins.v[3]).to_bytes()
    out = subprocess.run([mc, "--disassemble", "-arch=amdgcn", "-mcpu=gfx942"], input=" ".join(f"0x{b:02x}" for b in word),
                         capture_output=True, text=True).stdout
    assert "v_fma_mix_f32 v0, v1, v2, v3" in out, out
