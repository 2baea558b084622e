"""CDNA3/CDNA4 (gfx942 MI300X, gfx950 MI350X): the GFX9-family knowledge that is not a semantics row. The rows and the
CDNA names of RDNA3's are semantics/cdna.py (CDNA3) and semantics/cdna4.py; the encodings are lowered by the GFX9
section of operands.py. This module holds what those and the backends use beside them:

  operands    OPERANDS: the GFX9 operand encodings (M0 is 124 here, 125 reserved; SDWA 249, DPP 250, VCCZ 251 ...).
              AGPRs (accumulation VGPRs, v_accvgpr_*, MFMA C/D with acc_cd) are a second file of AGPRS registers
              (acc_registers names which fields are AGPRs).
  helpers     the numpy forms of CDNA's row helpers (bitop3; the numpy runtime and the stepper
              call them), v_bitop3's truth table (bitop3_table), SDWA operand selection (sdwa_src, sdwa_dst), buffer
              (MUBUF, not lowered: LLVM emits none for tinygrad's kernels) addressing and FLAT offsets.
  MFMA        MFMAShape: the shapes and register layouts of v_mfma_*; mfma() computes D = A*B + C as the pseudocode
              says, the products summed exactly and rounded once (the project's rule for WMMA), via compiler/exact.exact_sum().
  descriptor  ProgramResources: COMPUTE_PGM_RSRC1/RSRC3 of a gfx90a+ kernel (accum_offset, tg_split; wave64 only).
  survey      classify(family, encoding, name): where a CDNA instruction's meaning comes from (tests/cdna_instructions.txt).

Sources: the CDNA3 ISA manual (its pseudocode is tinygrad's cdna.str_pcode), LLVM's AMDGPUUsage (kernel descriptor),
AMD's matrix instruction calculator layouts (the same as tinygrad's ops_python MFMA emulation).
"""
from __future__ import annotations
from dataclasses import dataclass
import numpy as np
from mockgpu.boards import WAVE64
from mockgpu.compiler.rdna.semantics import family as semantics_family
from mockgpu.compiler.exact import exact_sum, two_product, generated_nan
from mockgpu.compiler import floats

WAVE = WAVE64      # CDNA runs wave64 only
SGPRS = 102        # s0..s101 are addressable; 102..107 are FLAT_SCRATCH, XNACK_MASK, VCC
AGPRS = 256        # accumulation registers a0..a255 (gfx90a+: the unified 512-register file's second half)
VGPR_GRANULE = 8   # RSRC1.GRANULATED_WORKITEM_VGPR_COUNT unit on gfx90a+ wave64 (VGPRs and AGPRs together)

# *** the kernel descriptor's program resources (LLVM AMDGPUUsage, "Kernel Descriptor", GFX90A/GFX942) ***

def _bits(value:int, lo:int, hi:int) -> int: return (value >> lo) & ((1 << (hi - lo + 1)) - 1)

# bits a gfx90a+ kernel descriptor reserves (must be zero): RSRC1 27:28 and 29:31 (gfx10+ WGP_MODE, MEM_ORDERED,
# FWD_PROGRESS), RSRC3 6:15 and 17:31
RSRC1_RESERVED = 0xf8000000
RSRC3_RESERVED = 0xfffeffc0

@dataclass(frozen=True)
class ProgramResources:
  """COMPUTE_PGM_RSRC1/RSRC3 of a CDNA kernel. vgprs counts ArchVGPRs and AGPRs together (the unified file);
  the AGPRs start at accum_offset, so a kernel has accum_offset VGPRs and vgprs - accum_offset AGPRs."""
  vgprs:int            # (GRANULATED_WORKITEM_VGPR_COUNT + 1) * 8
  sgprs:int            # (GRANULATED_WAVEFRONT_SGPR_COUNT + 1) * 16 (used by gfx9 hardware, unlike gfx10+)
  accum_offset:int     # (ACCUM_OFFSET + 1) * 4: the first AGPR's index in the unified file
  tg_split:bool        # TG_SPLIT: a workgroup's waves may run on different CUs (the same results here: memory is coherent)
  ieee_mode:bool
  dx10_clamp:bool
  fp16_overflow:bool   # FP16_OVFL: f16 results that overflow clamp to max finite instead of inf

  @property
  def agprs(self) -> int: return self.vgprs - self.accum_offset

  @staticmethod
  def decode(rsrc1:int, rsrc3:int, wave_size:int=WAVE) -> "ProgramResources":
    """Decode, raising ValueError naming the field for what a gfx90a+ descriptor cannot hold."""
    if wave_size != WAVE: raise ValueError(f"CDNA runs wave64 only, not wave{wave_size}")
    if rsrc1 & RSRC1_RESERVED: raise ValueError(f"COMPUTE_PGM_RSRC1 0x{rsrc1:08x}: reserved bits 0x{rsrc1 & RSRC1_RESERVED:08x} are set "
                                                "(bits 29-31 are WGP_MODE/MEM_ORDERED/FWD_PROGRESS on gfx10+ only)")
    if rsrc3 & RSRC3_RESERVED: raise ValueError(f"COMPUTE_PGM_RSRC3 0x{rsrc3:08x}: reserved bits 0x{rsrc3 & RSRC3_RESERVED:08x} are set")
    r = ProgramResources(vgprs=(_bits(rsrc1, 0, 5) + 1) * VGPR_GRANULE, sgprs=(_bits(rsrc1, 6, 9) + 1) * 16,
                         accum_offset=(_bits(rsrc3, 0, 5) + 1) * 4, tg_split=bool(rsrc3 >> 16 & 1), ieee_mode=bool(rsrc1 >> 23 & 1),
                         dx10_clamp=bool(rsrc1 >> 21 & 1), fp16_overflow=bool(rsrc1 >> 26 & 1))
    if r.accum_offset > r.vgprs:
      raise ValueError(f"COMPUTE_PGM_RSRC3.ACCUM_OFFSET: AGPRs start at {r.accum_offset}, past the kernel's {r.vgprs} registers")
    return r

# *** operands: the GFX9 source-operand encodings (CDNA3 ISA, "Scalar/Vector operand encodings") ***

OPERANDS:dict[int, str] = {102: "FLAT_SCRATCH_LO", 103: "FLAT_SCRATCH_HI", 104: "XNACK_MASK_LO", 105: "XNACK_MASK_HI",
  106: "VCC_LO", 107: "VCC_HI", **{108 + i: f"TTMP{i}" for i in range(16)}, 124: "M0", 126: "EXEC_LO", 127: "EXEC_HI",
  **{128 + i: f"INT {i}" for i in range(65)}, **{193 + i: f"INT {-1 - i}" for i in range(16)},
  235: "SRC_SHARED_BASE", 236: "SRC_SHARED_LIMIT", 237: "SRC_PRIVATE_BASE", 238: "SRC_PRIVATE_LIMIT", 239: "SRC_POPS_EXITING_WAVE_ID",
  240: "0.5", 241: "-0.5", 242: "1.0", 243: "-1.0", 244: "2.0", 245: "-2.0", 246: "4.0", 247: "-4.0", 248: "INV_2PI",
  249: "SDWA", 250: "DPP", 251: "VCCZ", 252: "EXECZ", 253: "SCC", 254: "LDS_DIRECT", 255: "LITERAL"}
# the RDNA3 meaning of the encodings that differ, for a backend that starts from the RDNA3 operand model
RDNA3_DIFFERENCES = {124: ("NULL", "M0"), 125: ("M0", "reserved"), 249: ("DPP8 marker on gfx10+ (gfx11: 233)", "SDWA"),
                     250: ("DPP16", "DPP"), 251: ("reserved", "VCCZ"), 252: ("reserved", "EXECZ"), 102: ("s102", "FLAT_SCRATCH_LO"),
                     103: ("s103", "FLAT_SCRATCH_HI"), 104: ("s104", "XNACK_MASK_LO"), 105: ("s105", "XNACK_MASK_HI")}

def operand(off:int) -> tuple[str, int]:
  """(kind, index) of a 9-bit source encoding: ("sgpr", n), ("vgpr", n), ("special", off), ("int", value),
  ("float", off) or ("literal", 0). Reserved encodings raise ValueError naming them."""
  if off < SGPRS: return ("sgpr", off)
  if 256 <= off < 512: return ("vgpr", off - 256)
  if off not in OPERANDS: raise ValueError(f"operand encoding {off} is reserved on CDNA")
  if 128 <= off <= 208: return ("int", off - 128 if off <= 192 else 192 - off)
  if 240 <= off <= 248: return ("float", off)
  return ("literal", 0) if off == 255 else ("special", off)

def acc_registers(inst) -> dict[str, str]:
  """Which register file ("vgpr" or "agpr") each vector-register field of a CDNA instruction names. DS, FLAT/GLOBAL/
  SCRATCH and MUBUF data and destination registers are AGPRs when the ACC bit is set; MFMA's C and D when ACC_CD is set
  and A, B when the two ACC bits are; v_accvgpr_write writes an AGPR, v_accvgpr_read reads one, v_accvgpr_mov both."""
  name, cls = inst.op_name, type(inst).__name__
  if name.startswith("V_ACCVGPR_"):
    return {"READ": {"src0": "agpr", "vdst": "vgpr"}, "WRITE": {"src0": "vgpr", "vdst": "agpr"},
            "MOV_B32": {"src0": "agpr", "vdst": "agpr"}}[name.removeprefix("V_ACCVGPR_").removesuffix("_E32").removesuffix("_E64")]
  if "MFMA" in name:
    acc = getattr(inst, "acc", 0)
    cd = "agpr" if inst.acc_cd else "vgpr"
    return {"src0": "agpr" if acc & 1 else "vgpr", "src1": "agpr" if acc & 2 else "vgpr", "src2": cd, "vdst": cd}
  if cls in ("DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF"):
    f = "agpr" if inst.acc else "vgpr"
    return {k: f for k in ("vdst", "vdata", "data", "data0", "data1") if k in dict(type(inst)._fields)}
  return {}

# *** numeric helpers of the CDNA rows ***

def bitop3(a, b, c, ttbl):
  """v_bitop3: each result bit is bit (a<<2 | b<<1 | c) of the 8-bit truth table ttbl."""
  a, b, c, t = np.asarray(a), np.asarray(b), np.asarray(c), np.asarray(ttbl)
  out = np.zeros(np.broadcast(a, b, c).shape, a.dtype)
  for k in range(8):
    term = (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
    out = out | np.where((t >> k) & 1 != 0, term, a.dtype.type(0)).astype(a.dtype)
  return out

def bitop3_table(inst) -> int:
  """v_bitop3's truth table, spread over the VOP3 modifier fields: { OMOD[1:0], ABS[2:0], NEG[2:0] }."""
  return (inst.omod << 6) | (inst.abs << 3) | inst.neg

# *** SDWA: sub-dword operand selection (VOP1/VOP2/VOPC with src0 = 249) ***

SDWA_SEL = {0: "BYTE_0", 1: "BYTE_1", 2: "BYTE_2", 3: "BYTE_3", 4: "WORD_0", 5: "WORD_1", 6: "DWORD"}
SDWA_UNUSED = {0: "UNUSED_PAD", 1: "UNUSED_SEXT", 2: "UNUSED_PRESERVE"}

def sdwa_field(sel:int) -> tuple[int, int]:
  """(shift, width) of an SDWA SRC_SEL/DST_SEL."""
  if sel not in SDWA_SEL: raise ValueError(f"SDWA select {sel} is reserved")
  return ((sel * 8, 8) if sel < 4 else ((sel - 4) * 16, 16) if sel < 6 else (0, 32))

def sdwa_src(x:np.ndarray, sel:int, sext:bool) -> np.ndarray:
  """An SDWA source: the selected byte or word of the 32-bit register moved to bit 0, zero- or sign-extended."""
  shift, width = sdwa_field(sel)
  x = np.asarray(x, np.uint32)
  if width == 32: return x
  v = (x >> np.uint32(shift)) & np.uint32((1 << width) - 1)
  if not sext: return v
  sign = np.uint32(1 << (width - 1))
  return np.where(v & sign, v | np.uint32((0xffffffff << width) & 0xffffffff), v).astype(np.uint32)

def sdwa_dst(result:np.ndarray, old:np.ndarray, sel:int, unused:int) -> np.ndarray:
  """An SDWA destination: the result's low bits go to the selected byte or word; the other bits are zero (PAD),
  copies of the written field's top bit (SEXT) or the old register's bits (PRESERVE)."""
  shift, width = sdwa_field(sel)
  if unused not in SDWA_UNUSED: raise ValueError(f"SDWA dst_unused {unused} is reserved")
  result = np.asarray(result, np.uint32)
  if width == 32: return result
  field = np.uint32(((1 << width) - 1) << shift)
  placed = (result << np.uint32(shift)) & field
  if unused == 0: return placed
  if unused == 2: return placed | (np.asarray(old, np.uint32) & ~field)
  above = np.uint32((0xffffffff << (shift + width)) & 0xffffffff)  # SEXT: bits above the field copy its top bit
  return np.where(placed >> np.uint32(shift + width - 1) & 1, placed | above, placed).astype(np.uint32)

# *** memory addressing ***

@dataclass(frozen=True)
class BufferResource:
  """A GFX9 buffer resource (V#, four SGPRs)."""
  base:int; stride:int; swizzle:bool; num_records:int; index_stride:int; element_size:int; add_tid:bool  # noqa: E702

  @staticmethod
  def decode(words) -> "BufferResource":
    w0, w1, w2, w3 = (int(w) & 0xffffffff for w in words)
    return BufferResource(base=w0 | (w1 & 0xffff) << 32, stride=(w1 >> 16) & 0x3fff, swizzle=bool(w1 >> 31 & 1), num_records=w2,
                          index_stride=8 << ((w3 >> 21) & 3), element_size=2 << ((w3 >> 19) & 3), add_tid=bool(w3 >> 23 & 1))

def mubuf_address(r:BufferResource, vindex, voffset, soffset:int, inst_offset:int, idxen:bool, offen:bool, size:int):
  """Byte addresses [waves, 64] and in-range masks of a MUBUF access of `size` bytes per lane.
  offset = VGPR offset (OFFEN) + the instruction's 12-bit offset; index = VGPR index (IDXEN) + the lane id (V#.ADD_TID).
  Linear: base + soffset + offset + stride * index. Swizzled (V#.SWIZZLE): elements of ELEMENT_SIZE bytes are
  interleaved over INDEX_STRIDE consecutive indices. Range check (the soffset is not part of it): raw buffers (stride 0)
  need offset + size <= num_records; structured ones index < num_records (and offset + size <= stride when swizzled).
  An access out of range loads 0 and stores nothing."""
  lane = np.arange(WAVE, dtype=np.int64)
  index = (np.asarray(vindex, np.int64) if idxen else 0) + (lane if r.add_tid else 0)
  offset = (np.asarray(voffset, np.int64) & 0xffffffff if offen else 0) + inst_offset
  index, offset = np.broadcast_arrays(np.asarray(index, np.int64), np.asarray(offset, np.int64))
  if r.swizzle:
    addr = ((index // r.index_stride) * r.stride + (offset // r.element_size) * r.element_size) * r.index_stride \
           + (index % r.index_stride) * r.element_size + offset % r.element_size
  else: addr = offset + r.stride * index
  if r.stride == 0: ok = offset + size <= r.num_records
  else: ok = (index < r.num_records) & ((offset + size <= r.stride) if r.swizzle else True)
  return (r.base + soffset + addr) & 0xffffffffffff, np.asarray(ok, bool)

FLAT_OFFSET_BITS = {"FLAT": (12, False), "GLOBAL": (13, True), "SCRATCH": (13, True)}  # gfx940: width, signed
SADDR_OFF = 0x7f  # GLOBAL/SCRATCH saddr that means "no SGPR base"

def flat_offset(kind:str, field:int) -> int:
  """The immediate offset of a FLAT (12-bit unsigned), GLOBAL or SCRATCH (13-bit signed) instruction on gfx940+."""
  bits, signed = FLAT_OFFSET_BITS[kind]
  field &= (1 << bits) - 1
  return field - (1 << bits) if signed and field >> (bits - 1) else field

# *** MFMA: shapes, register layouts, D = A * B + C ***

# fp8 formats (compiler/floats.py holds every one): gfx942's v_mfma_*_fp8/bf8 take the FNUZ formats (no inf, no -0:
# 0x80 is the only NaN); gfx950 the OCP formats (e4m3fn: 0x7f/0xff NaN, no inf; e5m2: IEEE-like with inf and NaNs)
FP8 = {("cdna3", "FP8"): "e4m3fnuz", ("cdna3", "BF8"): "e5m2fnuz", ("cdna4", "FP8"): "e4m3", ("cdna4", "BF8"): "e5m2"}

def fp8_table(arch:str, kind:str) -> np.ndarray:
  """The float64 value of each of the 256 codes of a family's fp8 (kind FP8) or bf8 (BF8) format."""
  return floats.fp8_table(FP8[(arch, kind)])

_BITS = {"F32": 32, "F16": 16, "BF16": 16, "I8": 8, "FP8": 8, "BF8": 8, "F64": 64}

@dataclass(frozen=True)
class MFMAShape:
  name:str
  out:str                # F32, I32, F64
  m:int; n:int; k:int    # noqa: E702 (per block)
  blocks:int
  a:str; b:str           # noqa: E702 input kinds (F32 F16 BF16 I8 FP8 BF8 F64)

  @property
  def k_per_lane(self) -> int: return self.m * self.blocks * self.k // WAVE
  def in_regs(self, kind:str) -> int: return max(1, self.k_per_lane * _BITS[kind] // 32)
  @property
  def out_regs(self) -> int: return self.m * self.n * self.blocks * (2 if self.out == "F64" else 1) // WAVE

  @staticmethod
  def parse(name:str) -> "MFMAShape":
    """The shape of v_mfma_<out>_<M>x<N>x<K>[_<B>b]_<in>; ValueError for the forms not modelled (sparse SMFMAC, xf32,
    the f8f6f4 family, whose formats live in CBSZ/BLGP, and 4x4 f64 blocks)."""
    import re
    m = re.fullmatch(r"V_MFMA_(F32|I32|F64)_(\d+)X(\d+)X(\d+)(?:_(\d+)B)?_(F32|F16|BF16|I8|F64|(?:FP8|BF8)_(?:FP8|BF8))", name)
    if m is None or (m.group(1) == "F64" and m.group(5)): raise ValueError(f"{name}: this MFMA form is not modelled")
    out, M, N, K, B, ins = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5) or 1), m.group(6)
    a, b = ins.split("_") if "_" in ins else (ins, ins)
    return MFMAShape(name, out, M, N, K, B, a, b)

  def operand_index(self) -> tuple[np.ndarray, np.ndarray]:
    """For A (and B): each (block, row-or-column, k) element's lane and its index among the lane's K-elements."""
    b, i, k = np.meshgrid(np.arange(self.blocks), np.arange(self.m), np.arange(self.k), indexing="ij")
    kpl = self.k_per_lane
    return i + self.m * (b + self.blocks * (k // kpl)), k % kpl

  def output_index(self) -> tuple[np.ndarray, np.ndarray]:
    """For C and D: each (block, row, column) element's lane and its element index (a register, or a register pair
    for f64). 4x4 blocks sit in groups of 4 lanes, one row per register; 16 and 32-wide blocks put 4 consecutive rows
    in 4 registers of one lane group, the next 4 rows in the next group of n lanes."""
    b, i, j = np.meshgrid(np.arange(self.blocks), np.arange(self.m), np.arange(self.n), indexing="ij")
    if self.m == 4: return j + 4 * b, i
    groups = WAVE // self.n
    per_block = self.m * self.n // WAVE
    return j + self.n * ((i // 4) % groups), (i % 4) + 4 * (i // (4 * groups)) + per_block * b

def _unpack(regs, kind:str, count:int, arch:str) -> np.ndarray:
  """count elements of `kind` packed low to high in consecutive 32-bit registers [waves, 64] -> [waves, 64, count]."""
  words = np.stack([np.asarray(r, np.uint32) for r in regs], axis=-1)       # [waves, 64, regs]
  raw = words.view(np.uint8).reshape(words.shape[:-1] + (-1,))            # little-endian bytes
  nbytes = _BITS[kind] // 8
  raw = raw[..., :count * nbytes]
  if kind == "F32": return raw.view(np.float32).astype(np.float64)
  if kind == "F64": return raw.view(np.float64)
  if kind == "F16": return raw.view(np.float16).astype(np.float64)
  if kind == "BF16": return floats.bf16_to_f32(raw.view(np.uint16)).astype(np.float64)
  if kind == "I8": return raw.view(np.int8).astype(np.int64)
  return fp8_table(arch, kind)[raw]

def mfma(shape:MFMAShape, a_regs, b_regs, c_regs, arch:str="cdna3", cbsz:int=0, abid:int=0, blgp:int=0, neg:int=0):
  """D = A * B + C of v_mfma_* for registers [waves, 64] uint32 (A, B from VGPRs or AGPRs, C/D per ACC_CD): the list of
  D registers. Float results are the products summed exactly and rounded once (f32 products of f16/bf16/fp8/f32
  inputs are exact in float64; f64 products are split with an exact fma); integer results wrap to 32 bits.
  The broadcast controls CBSZ/ABID/BLGP and f64's NEG are not modelled: nonzero values raise ValueError."""
  if cbsz or abid or blgp or neg: raise ValueError(f"{shape.name}: CBSZ/ABID/BLGP/NEG {cbsz}/{abid}/{blgp}/{neg} are not modelled")
  kpl = shape.k_per_lane
  lane, e = shape.operand_index()                                           # [blocks, m, k]
  A = _unpack(a_regs, shape.a, kpl, arch)[:, lane, e]                       # [waves, blocks, m, k]
  B = _unpack(b_regs, shape.b, kpl, arch)[:, lane, e]                       # [waves, blocks, n, k]
  olane, oelem = shape.output_index()                                       # [blocks, m, n]
  words = np.stack([np.asarray(r, np.uint32) for r in c_regs], axis=-1)     # C: [waves, 64, registers]
  if shape.out == "I32":
    acc = np.einsum("wbik,wbjk->wbij", A, B) + words.view(np.int32)[:, olane, oelem].astype(np.int64)
    return _pack(shape, (acc & 0xffffffff).astype(np.uint32), words)
  a4, b4 = A[:, :, :, None, :], B[:, :, None, :, :]                         # [waves, blocks, m, n, k] by broadcasting
  # an element none of whose inputs (row of A, column of B, C) is a NaN gets the default NaN where it is one (generated_nan)
  nan_in = np.isnan(A).any(-1)[:, :, :, None] | np.isnan(B).any(-1)[:, :, None, :]
  if shape.out == "F32":
    cval = words.view(np.float32)[:, olane, oelem].astype(np.float64)
    d = exact_sum([*np.moveaxis(a4 * b4, -1, 0), cval], np.float32).view(np.uint32)
    return _pack(shape, generated_nan(d, "f32", nan_in | np.isnan(cval)), words)
  p, err = two_product(a4, b4)
  cval = words.view(np.float64)[:, olane, oelem]
  d = exact_sum([*np.moveaxis(p, -1, 0), *np.moveaxis(err, -1, 0), cval], np.float64).view(np.uint64)
  return _pack(shape, generated_nan(d, "f64", nan_in | np.isnan(cval)), words)

def _pack(shape:MFMAShape, d:np.ndarray, words:np.ndarray) -> list:
  """D elements [waves, blocks, m, n] into the output registers' layout -> list of [waves, 64] uint32."""
  lane, elem = shape.output_index()
  if shape.out == "F64":
    out = np.zeros(words.shape[:2] + (shape.out_regs // 2,), np.uint64)
    out[:, lane, elem] = d
    out = out.view(np.uint32).reshape(words.shape[:2] + (shape.out_regs,))
  else:
    out = np.zeros(words.shape[:2] + (shape.out_regs,), np.uint32)
    out[:, lane, elem] = d
  return [out[..., r] for r in range(shape.out_regs)]

# *** where an instruction's meaning comes from (tests/cdna_instructions.txt: what LLVM emits for the op suite) ***

def classify(family:str, encoding:str, name:str) -> str:
  """Where the meaning of CDNA instruction `name` (tinygrad's op name) in `encoding` (its tinygrad class) comes from on
  `family` (cdna3, cdna4); KeyError when its table does not describe it."""
  # imported here: the operand model imports this module on every family, and only CDNA's classification reads CDNA's table
  from mockgpu.compiler.rdna.semantics import cdna as cdna3_table
  sem = semantics_family(family)
  n = cdna3_table.strip(sem.ALIASES.get(name, name))
  own = "CDNA" if n in cdna3_table.OWN or sem.VOP.get(n) is not cdna3_table.VOP.get(n) else f"RDNA3 {n}"
  if encoding.startswith(("GLOBAL", "FLAT", "SCRATCH", "DS", "SMEM")): return f"memory: RDNA3 {cdna3_table.memory_alias(name)}"
  if encoding == "VOP3P_MFMA" and name in sem.MFMA: return f"mfma: {MFMAShape.parse(name).name}"
  if encoding.startswith("VOP3P"):
    if n in sem.PACKED_F32 or n == "PK_MOV_B32": return "packed f32"
    if n in sem.PACKED: return f"packed16: RDNA3 {n}"
    if n in sem.VOP: return f"row: {own}"
  elif encoding.startswith("VOP"):
    if n in sem.VOP: return f"row: {own}"
    if n in cdna3_table.SPECIAL: return f"special: RDNA3 {n}"
  elif encoding.startswith(("SOPP")):
    if n in cdna3_table.CONTROL: return f"control: RDNA3 {n}"
  elif encoding.startswith("SOP") and n in sem.SOP: return f"row: RDNA3 {n}"
  raise KeyError(f"CDNA {encoding} {name} is not described")

