"""Find a kernel's code in memory and split it into basic blocks.

The dispatch registers hold only the entry PC, so the extent is found as hardware would meet it: decode from the entry,
follow every branch, stop each path at s_endpgm. Words that do not decode end their path; executing them raises.
"""
from __future__ import annotations
import functools, sys
from dataclasses import dataclass, field
import importlib
from tinygrad.renderer.amd import decode_inst, detect_format, _matches, _load_formats
from tinygrad.renderer.amd.dsl import Inst, Reg, FixedBitField, EnumBitField
from mockgpu.compiler.rdna.faults import INVALID

BRANCHES = {"S_BRANCH", "S_CBRANCH_SCC0", "S_CBRANCH_SCC1", "S_CBRANCH_VCCZ", "S_CBRANCH_VCCNZ", "S_CBRANCH_EXECZ",
            "S_CBRANCH_EXECNZ"}
ENDS = {"S_ENDPGM", "S_ENDPGM_SAVED", "S_SETPC_B64", "S_RFE_B64", "S_CODE_END", "S_TRAP", "S_SETHALT"}
CALLS = {"S_CALL_B64"}                       # a static target; the next instruction is where the callee returns
COMPUTED = {"S_SETPC_B64", "S_SWAPPC_B64"}   # a target known only at run time (s_swappc returns to the next instruction)
BARRIERS = {"S_BARRIER", "S_BARRIER_WAIT"}  # where a wave waits for its workgroup (RDNA4 splits s_barrier in two)

# source-operand encodings gfx11 reserves (the aperture registers 235-238 and LDS_DIRECT 254 exist, unmodelled)
RESERVED_OPERANDS = frozenset(range(209, 233)) | {239, 249}

@dataclass
class Bad:
  """An undecodable word: executing it raises UnsupportedInstruction (InvalidInstruction when reason starts INVALID)."""
  word:int
  reason:str

@dataclass
class Block:
  start:int                                   # byte offset from the entry
  insts:list[tuple[int, Inst|Bad]] = field(default_factory=list)

def op_name(inst:Inst) -> str:
  return inst.op_name if hasattr(inst, "op") else "VOPD"

def describe(x) -> str:
  """repr of an instruction or register that never raises (tinygrad's raises for reserved operand encodings)."""
  try: return repr(x)
  except Exception: return f"{type(x).__name__} 0x{bytes(x.to_bytes()).hex()}" if isinstance(x, Inst) else f"operand encoding {x.offset}"

def invalid_operand(r:Reg) -> str|None:
  """Why operand r is not a valid register or constant, or None."""
  if r.offset in RESERVED_OPERANDS: return f"{INVALID}reserved operand encoding {r.offset}"
  if r.offset + r.sz > 512: return f"{INVALID}v[{r.offset - 256}:{r.offset - 256 + r.sz - 1}] is past v255"
  return None

def imm_offset(inst) -> int:
  """The signed immediate byte offset of a memory instruction, sign-extended from its field's width (RDNA3: FLAT/
  GLOBAL/SCRATCH offset 13 bits, SMEM offset 21 bits; RDNA4: ioffset 24 bits)."""
  name, field = next((n, f) for n, f in type(inst)._fields if n in ("offset", "ioffset"))
  width, value = field.hi - field.lo + 1, getattr(inst, name)
  return value - (1 << width) if value >> (width - 1) & 1 else value

def branch_target(pc:int, inst:Inst) -> int:
  simm = inst.simm16 - (1 << 16) if inst.simm16 & 0x8000 else inst.simm16
  return pc + 4 + 4 * simm

# tinygrad decodes both CDNA generations with its "cdna" tables (the gfx950 additions are opcodes of the same formats),
# RDNA3.5 with its rdna3 tables (which hold the scalar float ops gfx115x adds)
TABLES = {"cdna3": "cdna", "cdna4": "cdna", "rdna35": "rdna3"}

# encodings tinygrad's decoder does not try for gfx11 (it lists those its renderer emits), tried after it finds none:
# the buffer instructions run; image, export and LDS-direct ones decode so that they are named as not modelled
EXTRA_FORMATS = {"rdna3": ("MUBUF", "MTBUF", "MIMG", "EXP", "LDSDIR"), "rdna4": ("VBUFFER", "VIMAGE", "VSAMPLE", "VEXPORT", "VDSDIR")}
EXTRA_FORMATS["rdna35"] = EXTRA_FORMATS["rdna3"]

_formats:dict[tuple[str, bytes], type] = {}

@functools.cache
def _first_word_decides(table:str) -> bool:
  """Whether tinygrad's format search for `table` reads only an instruction's first dword (every encoding and opcode
  field of every format in it lies there; CDNA's VOP3PX2 has them in its third), so its answer can be kept by that word."""
  return all(f.lo < 32 for cls in _load_formats()[table] for _, f in cls._fields if isinstance(f, (FixedBitField, EnumBitField)))

def _decode_word(data:bytes, arch:str) -> Inst:
  table = TABLES.get(arch, arch)
  try:
    if not _first_word_decides(table): return decode_inst(data, table)
    if (cls:=_formats.get(key:=(table, data[:4]))) is None: cls = _formats[key] = detect_format(data, table)
    return cls.from_bytes(data)  # what decode_inst does, less the search over formats (60% of a decode)
  except ValueError:
    ins = importlib.import_module(f"tinygrad.runtime.autogen.amd.{TABLES.get(arch, arch)}.ins")
    for name in EXTRA_FORMATS.get(arch, ()):
      if _matches(data, cls := getattr(ins, name)): return cls.from_bytes(data)
    raise

# decoded instructions by (arch, first word): [(their bytes, the Inst)]. Kernels of one process share most of their
# instructions (loads of the kernel arguments, address arithmetic, waits, s_endpgm), and decoding one through tinygrad's
# format search costs ~50 us. An Inst is read, never changed, and depends only on its own size() bytes.
_decoded:dict[tuple[str, bytes], list[tuple[bytes, Inst]]] = {}
MEMO_LIMIT = 1 << 16

def _decode(code:bytes, pc:int, arch:str) -> Inst|Bad:
  if pc + 4 > len(code): return Bad(0, "instruction fetch runs past the end of the code's memory")
  for data, inst in _decoded.get((arch, code[pc:pc+4]), ()):
    if code.startswith(data, pc): return inst
  out = _decode_new(code, pc, arch)
  if not isinstance(out, Bad) and len(_decoded) < MEMO_LIMIT:
    _decoded.setdefault((arch, code[pc:pc+4]), []).append((code[pc:pc+out.size()], out))
  return out

def _decode_new(code:bytes, pc:int, arch:str) -> Inst|Bad:
  word = int.from_bytes(code[pc:pc+4], "little")
  try: inst = _dpp8(_decode_word(code[pc:pc+16], arch), code[pc:pc+16])
  except (ValueError, AssertionError) as e: return Bad(word, f"{INVALID}undecodable instruction word 0x{word:08x} ({e})")
  if pc + inst.size() > len(code): return Bad(word, "instruction runs past the end of the code's memory")
  return _fields_valid(inst, word)

def _fields_valid(inst:Inst, word:int) -> Inst|Bad:
  """inst, or Bad when one of its fields holds a value the ISA reserves (tinygrad decodes fields lazily: a VOPD opy
  of 14 decodes, and reading it raises ValueError)."""
  for name, _ in type(inst)._fields:
    try: getattr(inst, name)
    except (ValueError, KeyError, IndexError, AssertionError, RuntimeError, TypeError) as e:
      return Bad(word, f"{INVALID}word 0x{word:08x}: reserved {name} value ({e})")
  return inst

DPP8_MARKERS = (233, 234)  # src0 values selecting DPP8 (and DPP8 with fetch-inactive) on gfx11

def _dpp8(inst:Inst, data:bytes) -> Inst:
  """tinygrad's decoder looks for DPP8 at src0 = 249 (the gfx9 SDWA marker); gfx11 marks it with 233/234, so re-decode
  those as the _DPP8 variant, which also gives the instruction its true 8- or 12-byte size."""
  cls = type(inst)
  if "src0" not in dict(cls._fields) or inst.src0.offset not in DPP8_MARKERS: return inst
  variant = getattr(sys.modules[cls.__module__], cls.__name__ + "_DPP8", None)
  return inst if variant is None else variant.from_bytes(data)

def walk(code:bytes, arch:str) -> dict[int, Inst|Bad]:
  """Every instruction reachable from offset 0, by offset. A kernel with a computed jump (s_setpc_b64, s_swappc_b64)
  may reach code no static path does (a subroutine after s_endpgm): its code is also swept linearly past each path's
  end, up to s_code_end (the padding the assembler puts after the last function) or a word that does not decode."""
  insts:dict[int, Inst|Bad] = {}
  ends = _paths(code, arch, insts, [0], sweep=False)
  if computed(insts): _paths(code, arch, insts, ends, sweep=True)
  return insts

def _paths(code:bytes, arch:str, insts:dict, todo:list[int], sweep:bool) -> list[int]:
  """Decode every path from the offsets todo into insts; returns the offsets after the instructions that end a path.
  Sweeping, a path goes on past its end and stops before s_code_end or a word that does not decode."""
  ends:list[int] = []
  while todo:
    pc = todo.pop()
    while pc not in insts:
      inst = _decode(code, pc, arch)
      if sweep and (isinstance(inst, Bad) or op_name(inst) == "S_CODE_END"): break
      insts[pc] = inst
      if isinstance(inst, Bad): break
      name = op_name(inst)
      if name in BRANCHES or name in CALLS: todo.append(branch_target(pc, inst))
      if not sweep and (name in ENDS or name == "S_BRANCH"):
        ends.append(pc + inst.size())
        break
      pc += inst.size()
  return ends

def extent(insts:dict[int, Inst|Bad]) -> int:
  return max(pc + (4 if isinstance(i, Bad) else i.size()) for pc, i in insts.items())

def computed(insts:dict[int, Inst|Bad]) -> bool:
  """Whether the code has a computed jump: the translators then make every instruction a block (a jump target)."""
  return any(not isinstance(i, Bad) and op_name(i) in COMPUTED for i in insts.values())

def blocks(insts:dict[int, Inst|Bad]) -> list[Block]:
  """Basic blocks in address order. A block ends at a branch, a call, s_endpgm, s_barrier, a bad word or before a
  target; in code with a computed jump every instruction is a block."""
  leaders = {0}
  if computed(insts): leaders |= set(insts)  # a computed target may be any instruction: each is a block of its own
  for pc, inst in insts.items():
    if isinstance(inst, Bad): continue
    name = op_name(inst)
    if name in BRANCHES or name in CALLS: leaders |= {branch_target(pc, inst), pc + inst.size()}
    elif name in ENDS or name in BARRIERS: leaders.add(pc + inst.size())
  out:list[Block] = []
  expected = -1
  for pc in sorted(insts):
    if pc in leaders or pc != expected: out.append(Block(pc))
    out[-1].insts.append((pc, inst:=insts[pc]))
    expected = pc + (4 if isinstance(inst, Bad) else inst.size())
  return out
