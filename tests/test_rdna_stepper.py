"""The reference stepper (compiler/rdna/backends/stepper.py): one wave, one instruction at a time, its whole state
visible between instructions; and the oracle of the fast backends. Seeded random straight-line programs over the
implemented VALU and SALU rows (every operand kind: VGPRs, SGPRs, inline constants, literals, 16-bit halves through
op_sel, 64-bit pairs, neg/abs/omod/clamp; EXEC and VCC patterns; special float and integer values) run on the stepper,
the numpy backend and the C backend, and must leave the same registers; RDNA4 programs (its table: renamed ops, the float
SALU, v_s_*, the IEEE 754-2019 min/max rows) and CDNA3 wave64 programs (its table, by the DSL's GFX9 names) as well.
MOCKGPU_FUZZ multiplies the programs."""
from __future__ import annotations
import os, struct
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC, VCC_LO, VCC_HI, EXEC_LO, EXEC_HI
from tinygrad.runtime.autogen.amd.rdna3 import ins as I, enum as E
from tinygrad.runtime.autogen.amd.rdna4 import ins as I4
from tinygrad.runtime.autogen.amd.cdna import ins as IC
from mockgpu import system
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch, executor
from mockgpu.compiler.rdna.backends.stepper import Stepper, WaveState
from mockgpu.compiler.rdna.backends.c import c_rows
from mockgpu.compiler.rdna.semantics.lang import free_names
from mockgpu.compiler.rdna.semantics import rdna3 as sem, rdna4 as sem4, cdna as semc
from mockgpu.compiler.rdna.operands import strip
from mockgpu.compiler.rdna.semantics.lang import WIDTH
from test_rdna_harness import aligned
from test_rdna_isa import RSRC1, RSRC2

# *** the API ***

def _words(*insts) -> bytes: return b"".join(i.to_bytes() for i in insts)

def test_state_is_visible_and_copyable_between_instructions():
  code = _words(I.v_add_nc_u32_e32(v[1], 5, v[0]), I.s_mov_b32(s[3], 7), I.s_cmp_eq_u32(s[3], 7), I.s_cbranch_scc1(simm16=1),
                I.v_mov_b32_e32(v[1], 0), I.v_cmp_gt_u32_e32(3, v[0]), I.s_endpgm())
  st = Stepper(code, arch="rdna3", lanes=32, state=WaveState.empty(32, vgprs={0: np.arange(32)}))
  st.step()
  assert st.pc == 4 and (st.state.vgpr[1] == np.arange(32) + 5).all()
  before = st.state.copy()
  st.step(); st.step()
  assert st.state.sgpr[3] == 7 and st.state.scc == 1 and before.sgpr[3] == 0 and before.pc == 4  # the copy kept its state
  st.step()
  assert st.pc == 20   # s_cbranch_scc1 skipped the v_mov_b32
  final = st.run()
  assert final.done and st.steps == 6 and (final.vgpr[1] == np.arange(32) + 5).all() and final.vcc == 0b111

def test_stepper_of_a_dispatch_wave_matches_the_executor():
  """executor.stepper sets a wave up as the SPI does: user SGPRs, workgroup id, work-item ids, EXEC of a partial wave.
  Each thread of workgroup g writes g * 40 + tid to out[g * 64 + tid]; 40 threads: two waves in wave32, one in wave64."""
  body = [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0), I.v_lshlrev_b32_e32(v[1], 2, v[0]),
          I.s_mul_i32(s[8], s[2], 40), I.v_add_nc_u32_e32(v[2], s[8], v[0]), I.s_lshl_b32(s[9], s[2], 8),
          I.v_add_nc_u32_e32(v[1], s[9], v[1]), I.global_store_b32(addr=v[1], data=v[2], saddr=s[4:5], offset=0), I.s_endpgm()]
  want = np.zeros((3, 64), np.uint32)
  want[:, :40] = np.arange(3)[:, None] * 40 + np.arange(40)
  for lanes in (32, 64):
    code = _words(*body)
    img, out, args = aligned(4096), aligned(4 * 64 * 3, 256).view(np.uint32), aligned(256, 256)
    img[:len(code)] = np.frombuffer(code, np.uint8)
    struct.pack_into("<QQ", args, 0, out.ctypes.data, out.ctypes.data)
    mem = AddressSpace("stepper")
    for a in (img, args, out): mem.map(a.ctypes.data, a.nbytes)
    user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
    d = Dispatch("rdna3", img.ctypes.data, RSRC1, RSRC2, 0, user, 0, 0, (40, 1, 1), (3, 1, 1), lanes == 32)
    run_dispatch(mem, d)
    np.testing.assert_array_equal(out.reshape(3, 64), want)
    out[:] = 0
    for g in range(3):
      for w in range(-(-40 // lanes)): executor.stepper(mem, d, g, w).run()
    np.testing.assert_array_equal(out.reshape(3, 64), want)

# *** random programs: stepper, numpy and C leave the same state ***

DATA_V, DATA_S = list(range(8, 16)), list(range(16, 24))
SPECIAL = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 1, 0x807fffff, 0x7f7fffff,
           0x3f800000, 0xbf800000, 0x4b000001, 0x7fffffff, 0xffffffff, 31, 32, 33, 63, 64, 0x8000, 0xffff, 0x7bff3c00,
           0x7e00fc00, 0x80018001, 0x00400000, 0x3effffff, 0xcf000000, 0x4f800000, 0x3c003c00]
INLINE = [0, 1, -1, 7, -16, 64, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0]
EXEC_PATTERNS = [None, 0x5a5a5a5a, 0x0000ffff, 0x80000001, 0x00000000]

class Isa:
  """A family's DSL and table, and the few encodings the kernel around a random program spells differently."""
  def __init__(self, family:str):
    self.family, self.I, self.sem = family, {"rdna3": I, "rdna4": I4, "cdna3": IC}[family], {"rdna3": sem, "rdna4": sem4, "cdna3": semc}[family]
    self.off = "ioffset" if family == "rdna4" else "offset"
    self.lanes = 64 if family == "cdna3" else 32
    # a row's DSL name: the GFX9 name of a row CDNA took from RDNA3 under another name (v_add_u32 is ADD_NC_U32)
    self.names = {strip(new): strip(old) for old, new in self.sem.ALIASES.items() if old.startswith("V_")} if family == "cdna3" else {}
  def s_load(self, sdata, sbase):
    if self.family == "cdna3": return [IC.s_load_dwordx4(sdata=sdata, sbase=sbase, offset=0, imm=1), self.wait()]
    return [self.I.s_load_b128(sdata=sdata, sbase=sbase, **{self.off: 0}), self.wait()]
  def wait(self): return I4.s_wait_kmcnt(simm16=0) if self.family == "rdna4" else self.I.s_waitcnt(simm16=0)
  def wait_loads(self): return I4.s_wait_loadcnt(simm16=0) if self.family == "rdna4" else self.I.s_waitcnt(simm16=0)
  def add_u32(self, *args): return (IC.v_add_u32_e32 if self.family == "cdna3" else self.I.v_add_nc_u32_e32)(*args)
  def gload(self, vdst, addr, saddr):
    if self.family == "rdna4":  # the DSL wants a pair
      return I4.global_load_b32(vdst=vdst, vaddr=v[addr.offset - 256:addr.offset - 255], saddr=saddr, ioffset=0)
    return (IC.global_load_dword if self.family == "cdna3" else I.global_load_b32)(vdst=vdst, addr=addr, saddr=saddr, offset=0)
  def gstore(self, addr, data, saddr):
    if self.family == "rdna4": return I4.global_store_b32(vaddr=v[addr.offset - 256:addr.offset - 255], vsrc=data, saddr=saddr, ioffset=0)
    return (IC.global_store_dword if self.family == "cdna3" else I.global_store_b32)(addr=addr, data=data, saddr=saddr, offset=0)

ISAS = {f: Isa(f) for f in ("rdna3", "rdna4", "cdna3")}

def _enc(row:str, isa:Isa=ISAS["rdna3"]):
  """The encodings tinygrad's DSL offers for a vector row: (e32 builder or None, e64 builder or None)."""
  name = isa.names.get(row, row).lower()
  e32 = getattr(isa.I, f"v_{name}_e32", None)
  e64 = getattr(isa.I, f"v_{name}_e64", None) or getattr(isa.I, f"v_{name}", None)
  return e32, e64

def _rows(c_only:bool, isa:Isa=ISAS["rdna3"]) -> list[str]:
  """Vector rows a random program can use: a single destination and sources a, b, c (or a compare into VCC/an SGPR,
  a carry, v_cndmask); with c_only, rows the C backend renders (not the f16 add/mul, whose two-NaN payload numpy and C
  pick differently, a documented difference)."""
  crows = c_rows(isa.sem)
  out = []
  for name, row in isa.sem.VOP.items():
    if name in sem.LITERAL_K or name in sem.ACCUMULATE or not all(n in "abc" for n, _ in row.srcs): continue
    if name.startswith(("FMA_MIX", "DOT2", "DIV_SCALE", "MAD_U64", "MAD_I64", "CMPX_", "ACCVGPR_", "INTERP_")) or "CLASS" in name: continue  # INTERP_: VINTERP reads quad lanes (tests/test_rdna_vinterp.py)
    if c_only and (not crows[name] or name in ("ADD_F16", "MUL_F16")): continue
    if _enc(name, isa) == (None, None): continue
    out.append(name)
  return out

SALU = ["MOV_B32", "NOT_B32", "BREV_B32", "CLZ_I32_U32", "CTZ_I32_B32", "CLS_I32", "SEXT_I32_I8", "SEXT_I32_I16", "ABS_I32",
        "BCNT1_I32_B32", "BCNT0_I32_B32", "QUADMASK_B32", "WQM_B32", "BITSET0_B32", "BITSET1_B32", "ADD_U32", "SUB_U32",
        "ADD_I32", "SUB_I32", "ADDC_U32", "SUBB_U32", "ABSDIFF_I32", "LSHL_B32", "LSHR_B32", "ASHR_I32", "LSHL1_ADD_U32",
        "LSHL4_ADD_U32", "MIN_I32", "MIN_U32", "MAX_I32", "MAX_U32", "AND_B32", "OR_B32", "XOR_B32", "NAND_B32", "NOR_B32",
        "XNOR_B32", "AND_NOT1_B32", "OR_NOT1_B32", "BFE_U32", "BFE_I32", "BFM_B32", "MUL_I32", "MUL_HI_U32", "MUL_HI_I32",
        "PACK_LL_B32_B16", "PACK_LH_B32_B16", "PACK_HH_B32_B16", "PACK_HL_B32_B16", "CSELECT_B32", "CMOV_B32",
        "CMP_EQ_I32", "CMP_LG_U32", "CMP_GT_I32", "CMP_LE_U32", "BITCMP0_B32", "BITCMP1_B32", "MOVK_I32", "CMOVK_I32",
        "ADDK_I32", "MULK_I32", "CMPK_LT_I32", "CMPK_GE_U32", "AND_SAVEEXEC_B32", "OR_SAVEEXEC_B32", "AND_NOT1_SAVEEXEC_B32"]
# RDNA4's scalar ops (op names: s_add_co_u32 is RDNA3's s_add_u32 renamed; S_EXP_F32 is v_s_exp_f32), and the f16 ones
# C renders with another two-NaN payload than numpy (as the VALU's, above)
SALU4 = ["ADDK_CO_I32", "ADD_CO_U32", "SUB_CO_U32", "ADD_CO_I32", "SUB_CO_I32", "ADD_CO_CI_U32", "SUB_CO_CI_U32", "ADD_F32", "SUB_F32",
         "MUL_F32", "FMAC_F32", "FMAAK_F32", "FMAMK_F32", "MIN_NUM_F32", "MAX_NUM_F32", "MINIMUM_F32", "MAXIMUM_F32",
         "CVT_F32_I32", "CVT_F32_U32", "CVT_I32_F32", "CVT_U32_F32", "CVT_F16_F32", "CVT_F32_F16", "CVT_HI_F32_F16",
         "CVT_PK_RTZ_F16_F32", "CEIL_F32", "FLOOR_F32", "TRUNC_F32", "RNDNE_F32", "ADD_F16", "SUB_F16", "MUL_F16",
         "FMAC_F16", "MIN_NUM_F16", "MAX_NUM_F16", "MINIMUM_F16", "MAXIMUM_F16", "CEIL_F16", "FLOOR_F16", "TRUNC_F16",
         "RNDNE_F16", "S_EXP_F32", "S_LOG_F32", "S_RCP_F32", "S_RSQ_F32", "S_SQRT_F32", "S_EXP_F16", "S_SQRT_F16"]
NUMPY_ONLY_SALU = {"ADD_F16", "SUB_F16", "MUL_F16", "FMAC_F16"}

class Gen:
  """One random program: register choices, operands and instructions, from a seeded generator."""
  def __init__(self, seed:int, lanes:int, c_only:bool, isa:Isa=ISAS["rdna3"]):
    self.r, self.lanes, self.isa, self.I, self.sem = np.random.default_rng(seed), lanes, isa, isa.I, isa.sem
    self.vrows = _rows(c_only, isa)
    salu, crows = SALU + (SALU4 if isa.family == "rdna4" else []), c_rows(isa.sem, scalar=True)
    self.srows = [n for n in salu if self.builder(n) is not None and
                  not (c_only and (n in NUMPY_ONLY_SALU or not crows[self.row_name(n)]))]

  def row_name(self, name:str) -> str:
    """The SOP row of a scalar op named as its DSL builder is (a renamed op: its RDNA3 row)."""
    return name if name.startswith("S_") else strip(self.sem.ALIASES.get(f"S_{name}", f"S_{name}"))

  def builder(self, name:str):
    """The DSL builder of a scalar op (v_s_* are VOP3, the others SOP)."""
    return getattr(self.I, f"{'v_' if name.startswith('S_') else 's_'}{name.lower()}", None)

  def pick(self, seq): return seq[int(self.r.integers(len(seq)))]

  def vreg(self, wide:bool):
    k = self.pick(DATA_V[:-1:2] if wide else DATA_V)
    return v[k:k + 1] if wide else v[k]

  def sreg(self, wide:bool):
    k = self.pick(DATA_S[:-1:2] if wide else DATA_S)
    return s[k:k + 1] if wide else s[k]

  def mask(self):
    """A lane-mask register: VCC, or an SGPR (an even-aligned pair in wave64)."""
    if self.r.random() < 0.5: return VCC_LO if self.lanes == 32 else VCC
    return self.sreg(self.lanes == 64)

  def literal(self) -> int: return int(self.pick(SPECIAL)) if self.r.random() < 0.6 else int(self.r.integers(0, 2**32))

  def operand(self, wide:bool, vgpr_only:bool=False, allow_lit:bool=True):
    x = self.r.random()
    if vgpr_only or x < 0.5: return self.vreg(wide)
    if x < 0.7: return self.sreg(wide)
    if x < 0.9 or not allow_lit or self.isa.family == "cdna3": return self.pick(INLINE)  # GFX9's VOP3 takes no literal
    return self.literal()

  def valu(self):
    name = self.pick(self.vrows)
    row = self.sem.VOP[name]
    e32, e64 = _enc(name, self.isa)
    wide = [WIDTH[t] == 64 for t in row.source_types()]
    dwide = row.dst is not None and WIDTH[row.dst] == 64
    nsrc = len(row.srcs)
    floats = [t[0] == "f" for t in row.source_types()]
    if name.startswith("CMP_"):
      if e64 is not None and self.r.random() < 0.5:
        return e64(self.mask(), *[self.operand(w) for w in wide[:2]])
      return e32(self.operand(wide[0]), self.vreg(wide[1]))
    if name in ("ADD_CO_U32", "SUB_CO_U32", "SUBREV_CO_U32", "ADD_CO_CI_U32", "SUB_CO_CI_U32", "SUBREV_CO_CI_U32"):
      if "_CI_" in name and e32 is not None and self.r.random() < 0.5: return e32(self.vreg(False), self.operand(False), self.vreg(False))
      srcs = [self.operand(False), self.operand(False, allow_lit=False)]
      return e64(self.vreg(False), self.mask(), *srcs, *([self.mask()] if "_CI_" in name else []))
    if name.startswith("CNDMASK"):
      if e32 is not None and name == "CNDMASK_B32" and self.r.random() < 0.5: return e32(self.vreg(False), self.operand(False), self.vreg(False))
      kw = {"neg": int(self.r.integers(4))} if name == "CNDMASK_B32" and self.r.random() < 0.3 else {}
      return e64(self.vreg(False), self.operand(False), self.operand(False, allow_lit=False), self.mask(), **kw)
    dst = self.vreg(dwide)
    if e32 is not None and self.r.random() < 0.5 and not any(WIDTH[t] == 16 for t in (row.dst, *row.source_types())):
      srcs = [self.operand(wide[0])] + [self.vreg(w) for w in wide[1:nsrc]]
      return e32(dst, *srcs)
    if e64 is None: return None
    lit = self.r.random() < 0.2
    srcs = [self.operand(w, allow_lit=lit and i == 0) for i, w in enumerate(wide[:nsrc])]
    kw = {}
    if any(floats) and self.r.random() < 0.4:
      kw["neg"] = int(self.r.integers(8)) & sum(1 << i for i, f in enumerate(floats) if f)
      kw["abs"] = int(self.r.integers(8)) & sum(1 << i for i, f in enumerate(floats) if f)
    if row.dst is not None and row.dst[0] == "f" and self.r.random() < 0.2: kw["omod"] = int(self.r.integers(4))
    if row.dst is not None and (row.dst[0] == "f" or name in sem.CLAMPED) and self.r.random() < 0.2: kw["clmp"] = 1
    sixteen = sum(1 << i for i, t in enumerate(row.source_types()) if WIDTH[t] == 16) | (8 if row.dst and WIDTH[row.dst] == 16 else 0)
    if sixteen and self.r.random() < 0.5: kw["opsel"] = int(self.r.integers(16)) & sixteen
    try: return e64(dst, *srcs, **kw)
    except Exception: return None

  def salu(self):
    name = self.pick(self.srows)
    fn = self.builder(name)
    if name.startswith(("MOVK", "CMOVK", "ADDK", "MULK", "CMPK")): return fn(self.sreg(False), int(self.r.integers(0, 0x10000)))
    if name.endswith("SAVEEXEC_B32"):  # the EXEC form of the wave's width: s_*_saveexec_b64 and SGPR pairs in wave64
      if self.lanes == 32: return fn(self.sreg(False), self.mask())
      return getattr(self.I, f"s_{name.lower()[:-3]}b64")(self.sreg(True), self.mask())
    row = self.sem.SOP[self.row_name(name)]
    srcs = [self.sreg(False) if self.r.random() < 0.6 else (self.pick(INLINE[:6]) if self.r.random() < 0.5 else self.literal())
            for _ in row.srcs]
    if name in sem.LITERAL_K: srcs = srcs[:2] + [self.literal()]  # s_fmaak/s_fmamk: the literal K
    if name in sem.LITERAL_K and any(isinstance(x, int) for x in srcs[:2]): srcs[:2] = [self.sreg(False), self.sreg(False)]
    if sum(isinstance(x, int) and not -16 <= x <= 64 for x in srcs) > 1: srcs[1] = self.sreg(False)  # one literal
    if row.dst is None: return fn(*srcs)
    return fn(self.sreg(False), *srcs)

  def program(self, n:int) -> list:
    body = []
    while len(body) < n:
      try: inst = self.valu() if self.r.random() < 0.7 else self.salu()
      except (TypeError, ValueError, RuntimeError, AssertionError): inst = None  # an operand the encoding does not take: draw again
      if inst is not None: body.append(inst)
    return body

def _row_offset(k:int, lanes:int, isa:Isa) -> list:
  """v3 = the byte address offset of row k of the dump (one dword per lane)."""
  return [isa.I.v_lshlrev_b32_e32(v[3], 2, v[0]), isa.add_u32(v[3], 4 * lanes * k, v[3])]

def _kernel(g:Gen, n:int) -> tuple[list, np.ndarray]:
  """Load the data VGPRs per lane, set the data SGPRs, VCC and EXEC, run n random instructions, then dump every data
  register, VCC, EXEC and SCC (one row per register) with EXEC all on."""
  r, lanes, isa = g.r, g.lanes, g.isa
  inputs = r.integers(0, 2**32, (len(DATA_V), lanes), dtype=np.uint64).astype(np.uint32)
  pick = r.random(inputs.shape) < 0.5
  inputs[pick] = np.array(SPECIAL, np.uint32)[r.integers(0, len(SPECIAL), int(pick.sum()))]
  body = isa.s_load(s[4:7], s[0:1])
  for k, reg in enumerate(DATA_V): body += [*_row_offset(k, lanes, isa), isa.gload(v[reg], v[3], s[6:7])]
  body += [isa.wait_loads()] + [isa.I.s_mov_b32(s[k], g.literal()) for k in DATA_S]
  body += [isa.I.s_mov_b32(VCC_LO, g.literal()), isa.I.s_mov_b32(VCC_HI, g.literal())]
  ex = g.pick(EXEC_PATTERNS)
  if ex is not None:
    body += [isa.I.s_mov_b32(EXEC_LO, ex)] + ([isa.I.s_mov_b32(EXEC_HI, ex ^ 0xffff0000)] if lanes == 64 else [])
  body += g.program(n)
  body += [isa.I.s_cselect_b32(s[24], 1, 0), isa.I.s_mov_b32(s[25], EXEC_LO), isa.I.s_mov_b32(s[26], EXEC_HI),
           isa.I.s_mov_b32(EXEC_LO, -1), isa.I.s_mov_b32(EXEC_HI, -1)]
  dump = [v[k] for k in DATA_V] + [s[k] for k in DATA_S] + [VCC_LO, VCC_HI, s[24], s[25], s[26]]
  for k, reg in enumerate(dump):
    if reg.offset < 256: body.append(isa.I.v_mov_b32_e32(v[2], reg))
    body += [*_row_offset(k, lanes, isa), isa.gstore(v[3], v[2] if reg.offset < 256 else reg, s[4:5])]
  return body + [isa.I.s_endpgm()], inputs

DUMP_ROWS = len(DATA_V) + len(DATA_S) + 5

def _run(body:list, inputs:np.ndarray, lanes:int, path:str, family:str="rdna3") -> np.ndarray:
  """The dump of one wave running body: on the numpy or C path (run_dispatch), or the stepper."""
  code = _words(*body)
  img = aligned(max(4096, len(code) + 256))
  img[:len(code)] = np.frombuffer(code, np.uint8)
  inp, out = aligned(inputs.nbytes, 256), aligned(4 * lanes * DUMP_ROWS, 256)
  inp[:] = inputs.reshape(-1).view(np.uint8)
  args = aligned(256, 256)
  struct.pack_into("<QQ", args, 0, out.ctypes.data, inp.ctypes.data)
  mem = AddressSpace(path)
  for a in (img, args, inp, out): mem.map(a.ctypes.data, a.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  d = Dispatch(family, img.ctypes.data, RSRC1, RSRC2, 0, user, 0, 0, (lanes, 1, 1), (1, 1, 1), lanes == 32)
  if path == "stepper": executor.stepper(mem, d).run()
  else:
    os.environ["MOCKGPU_RDNA_NATIVE"] = "1" if path == "native" else "0"
    before = system.stats[f"{family}.native_launches"]
    stats = run_dispatch(mem, d)
    assert stats.native == (path == "native") and system.stats[f"{family}.native_launches"] == before + (path == "native"), \
      "the C backend declined the program"
  return out.view(np.uint32).reshape(DUMP_ROWS, lanes).copy()

def _same(got:np.ndarray, want:np.ndarray, what:str, body:list):
  if np.array_equal(got, want): return
  row, lane = (int(x[0]) for x in np.nonzero(got != want))
  names = [f"v{k}" for k in DATA_V] + [f"s{k}" for k in DATA_S] + ["vcc_lo", "vcc_hi", "scc", "exec_lo", "exec_hi"]
  raise AssertionError(f"{what}: {names[row]} lane {lane}: {got[row, lane]:#x} != {want[row, lane]:#x}\n" +
                       "\n".join(repr(i) for i in body))

PROGRAMS = int(os.environ.get("MOCKGPU_FUZZ", "1")) * 3

@pytest.mark.parametrize("lanes", [32, 64])
@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_programs_same_on_stepper_numpy_and_c(seed, lanes, monkeypatch):
  """Rows C renders: the stepper, the numpy and the C backend agree bit for bit."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  g = Gen(1000 * lanes + seed, lanes, c_only=True)
  body, inputs = _kernel(g, 120)
  want = _run(body, inputs, lanes, "stepper")
  _same(_run(body, inputs, lanes, "numpy"), want, "numpy vs stepper", body)
  _same(_run(body, inputs, lanes, "native"), want, "C vs stepper", body)

@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_programs_same_on_stepper_and_numpy(seed, monkeypatch):
  """Every row: numpy-only rows too (transcendentals, f16 math, fmed3, div_fixup, perm, ...)."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  g = Gen(77 + seed, 32, c_only=False)
  body, inputs = _kernel(g, 120)
  _same(_run(body, inputs, 32, "numpy"), _run(body, inputs, 32, "stepper"), "numpy vs stepper", body)

@pytest.mark.parametrize("family,lanes,base", [("rdna4", 32, 4000), ("cdna3", 64, 6000)])
@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_family_programs_same_on_stepper_numpy_and_c(seed, family, lanes, base, monkeypatch):
  """RDNA4 programs over its table (RDNA3's rows by their RDNA4 names, the renamed scalar ops, the float SALU, v_s_*,
  v_min_num & co.) and CDNA3 wave64 ones over its table (GFX9 encodings: M0 at 124, e32 v[128+] as VGPRs, 16-bit
  results zeroing bits 31:16, GFX9 min/max): the stepper, numpy and C agree, and numpy-only rows too on the stepper and
  numpy."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  g = Gen(base + seed, lanes, c_only=True, isa=ISAS[family])
  body, inputs = _kernel(g, 120)
  want = _run(body, inputs, lanes, "stepper", family)
  _same(_run(body, inputs, lanes, "numpy", family), want, "numpy vs stepper", body)
  _same(_run(body, inputs, lanes, "native", family), want, "C vs stepper", body)
  g = Gen(base + 1000 + seed, lanes, c_only=False, isa=ISAS[family])
  body, inputs = _kernel(g, 120)
  _same(_run(body, inputs, lanes, "numpy", family), _run(body, inputs, lanes, "stepper", family), "numpy vs stepper", body)
