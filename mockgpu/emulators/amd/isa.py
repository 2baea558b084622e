"""What the profilers need to know of each RDNA instruction: its counter class (PMC), its thread-trace token (SQTT,
as tinygrad's renderer/amd/sqtt.py decodes it per layout), its timing class and its memory counter.

Token choices follow the rules tinygrad's map_insts and sqtt_timeline impose (one token per dispatched instruction; none
for s_delay_alu / s_wait_alu / s_barrier_wait; JUMP/JUMP_NO for every branch; exec tokens for the VALU, SALU, VMEM and
LDS kinds). The op is looked up by name in the layout's enum (InstOp for RDNA3, InstOpRDNA4 for RDNA4), never by number.
"""
from __future__ import annotations
import functools, re
from dataclasses import dataclass
from mockgpu.compiler.rdna import decode

NO_TOKEN = {"S_DELAY_ALU", "S_WAIT_ALU", "S_BARRIER_WAIT"}
IMMEDIATES = re.compile(r"S_(NOP|CLAUSE|SLEEP|WAITCNT.*|WAIT_.*|SET_INST_PREFETCH_DISTANCE|SETPRIO|ICACHE_INV|TTRACEDATA.*|"
                        r"ROUND_MODE|DENORM_MODE|INCPERFLEVEL|DECPERFLEVEL|WAKEUP)$")
TRANS = re.compile(r"V_(EXP|LOG|RCP|RSQ|SQRT|SIN|COS)_")
F64 = re.compile(r"V_.*_F64")
SHIFT64 = re.compile(r"V_(LSHLREV|LSHRREV|ASHRREV)_[BIU]64")
MAD64 = re.compile(r"V_MAD_[IU]64_[IU]32")
SALU_TYPES = ("SOP1", "SOP2", "SOPC", "SOPK")

@dataclass(frozen=True)
class InstInfo:
  name:str
  size:int
  pmc:str            # VALU, SALU, SMEM, LDS, FLAT, TEX_LOAD, TEX_STORE, GDS, or "" (branches, waits, barriers, end)
  token:str          # VALUINST, IMMEDIATE, INST:<op name>, BRANCH, END, or "" (no token)
  timing:str         # the timing class of the model: valu trans salu smem vmem_ld vmem_st lds branch wait imm barrier msg end
  counter:str        # the memory counter it increments ("vm", "vs", "lgkm" on RDNA3; "load", "store", "ds", "km" on RDNA4), or ""
  exec_kind:str      # the exec token that follows its dispatch: VALU, SALU, VMEM, LDS or ""

def _mem_token(name:str, kind:str, inst, rdna4:bool) -> tuple[str, str, str, str]:
  """(pmc class, token, timing class, counter) of a memory instruction."""
  load = "LOAD" in name or "READ" in name or ("ATOMIC" in name and "RTN" in name)
  if kind == "DS":
    return "LDS", "INST:LDS_RD" if load else "INST:LDS_WR_2", "lds", "ds" if rdna4 else "lgkm"
  if kind == "SMEM": return "SMEM", "INST:SMEM" if rdna4 else "INST:SMEM_RD", "smem", "km" if rdna4 else "lgkm"
  counter = ("load" if load else "store") if rdna4 else ("vm" if load else "vs")
  if kind in ("FLAT", "VFLAT"): return "FLAT", "INST:FLAT_RD_2" if load else "INST:FLAT_WR_3", "vmem_ld" if load else "vmem_st", counter
  if rdna4: token = "INST:VMEM_RD_1" if load else "INST:VMEM_WR_2"
  else: token = "INST:SGMEM_RD_1" if load else "INST:SGMEM_WR_2"
  return "TEX_LOAD" if load else "TEX_STORE", token, "vmem_ld" if load else "vmem_st", counter

def classify(inst, arch:str) -> InstInfo:
  name, kind, size = decode.op_name(inst), type(inst).__name__.split("_")[0], inst.size()
  rdna4 = arch == "rdna4"
  if kind in ("DS", "SMEM", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF", "VFLAT", "VGLOBAL", "VSCRATCH", "VBUFFER"):
    pmc, token, timing, counter = _mem_token(name, kind, inst, rdna4)
    exec_kind = {"lds": "LDS", "smem": "SALU"}.get(timing, "VMEM")
    return InstInfo(name, size, pmc, token, timing, counter, exec_kind)
  if name in NO_TOKEN: return InstInfo(name, size, "", "", "wait" if name != "S_DELAY_ALU" else "hint", "", "")
  if name.startswith("S_ENDPGM"): return InstInfo(name, size, "", "END", "end", "", "")
  if name in decode.BRANCHES: return InstInfo(name, size, "", "BRANCH", "branch", "", "")
  if name == "S_BARRIER": return InstInfo(name, size, "", "INST:BARRIER", "barrier", "", "")
  if name == "S_BARRIER_SIGNAL": return InstInfo(name, size, "SALU", "INST:BARRIER_SIGNAL", "barrier", "", "")
  if name.startswith("S_SENDMSG"): return InstInfo(name, size, "", "INST:MESSAGE", "msg", "", "")
  if IMMEDIATES.match(name): return InstInfo(name, size, "", "IMMEDIATE", "wait" if "WAIT" in name else "imm", "", "")
  if kind in SALU_TYPES:
    return InstInfo(name, size, "SALU", "INST:SALU_WR_EXEC" if "SAVEEXEC" in name else "INST:SALU", "salu", "", "SALU")
  if kind == "SOPP": return InstInfo(name, size, "SALU", "INST:SALU", "salu", "", "SALU")
  if name.startswith("V_") or name == "VOPD":
    if name.startswith("V_CMPX"): token = "INST:VALU1_WR_EXEC"
    elif TRANS.match(name): token = "INST:VALUT_4"
    elif F64.match(name): token = "INST:VALUB_16"
    elif SHIFT64.match(name): token = "INST:VALUB_2"
    elif MAD64.match(name): token = "INST:VALUB_4"
    else: token = "VALUINST"
    return InstInfo(name, size, "VALU", token, "trans" if token == "INST:VALUT_4" else "valu", "", "VALU")
  return InstInfo(name, size, "", "", "imm", "", "")  # never reached by what tinygrad emits: no token, counted in no class

@functools.lru_cache(maxsize=256)
def program_info(code:bytes, arch:str) -> tuple[dict[int, InstInfo], list[list[int]]]:
  """Per instruction offset its InstInfo, and per basic block (decode.blocks' order) its instruction offsets."""
  insts = decode.walk(code, arch)
  blocks = decode.blocks(insts)
  info = {pc: classify(inst, arch) for pc, inst in insts.items() if not isinstance(inst, decode.Bad)}
  return info, [[pc for pc, _ in b.insts] for b in blocks]

# *** CDNA (gfx9) thread-trace tokens ***
# What the MI350X captures (tinygrad's extra/sqtt/examples, gfx950 gemm) show per instruction: an INST token whose op is
# the unit and the encoding width (VALU_32 for VOP1/VOP2/VOPC, VALU_64 for VOP3/VOP3P; SALU_32 for a 4-byte SOP*), JUMP or
# NEXT for a branch taken or not, OTHER_MSG for s_endpgm (then WAVEEND), and no INST token for s_waitcnt and s_nop (an
# ISSUE token alone). MFMA (VALU_MAI), SMEM stores, MUBUF (VMEM_RD/WR) and 8-byte SALU (SALU_64) follow the op names of
# tinygrad's InstOpCDNA; the captures have none of them.
CDNA_VMEM = {"FLAT": "FLAT", "GLOBAL": "FLAT", "SCRATCH": "FLAT", "MUBUF": "VMEM", "MTBUF": "VMEM"}

def cdna_op(inst, info:InstInfo) -> str:
  """The InstOpCDNA name of an instruction's INST token, or BRANCH (JUMP/NEXT by outcome), END (OTHER_MSG and WAVEEND)
  or ISSUE (no INST token: issued only)."""
  kind, store = type(inst).__name__.split("_")[0], "STORE" in info.name or "WRITE" in info.name
  if info.token == "END": return "END"
  if info.token == "BRANCH": return "BRANCH"
  if info.timing == "smem": return "SMEM_WR" if store else "SMEM_RD"
  if info.timing == "lds": return "LDS"
  if info.timing in ("vmem_ld", "vmem_st"): return CDNA_VMEM.get(kind, "VMEM") + ("_RD" if info.timing == "vmem_ld" else "_WR")
  if info.timing in ("valu", "trans"):
    return "VALU_MAI" if info.name.startswith(("V_MFMA", "V_SMFMAC")) else "VALU_64" if info.size >= 8 else "VALU_32"
  if info.timing == "salu": return "SALU_64" if info.size >= 8 else "SALU_32"
  if info.timing == "msg": return "OTHER_MSG"
  return "ISSUE"

@functools.lru_cache(maxsize=256)
def cdna_ops(code:bytes, arch:str) -> dict[int, str]:
  """Per instruction offset, its cdna_op."""
  info, _ = program_info(code, arch)
  insts = decode.walk(code, arch)
  return {pc: cdna_op(insts[pc], i) for pc, i in info.items()}
