"""Find a kernel's code in memory and split it into basic blocks.

The dispatch registers hold only the entry PC, so the extent is found as hardware would meet it: decode from the entry,
follow every branch, stop each path at s_endpgm. Words that do not decode end their path; executing them raises.
"""
from __future__ import annotations
import functools, sys
from dataclasses import dataclass, field
import importlib
from tinygrad.renderer.amd import detect_format, _matches, _load_formats, _VARIANT_SRC0
from tinygrad.renderer.amd.dsl import Inst, Reg, BitField, FixedBitField, EnumBitField, SrcField, VGPRField, SGPRField, SSrcField, _get_variant
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

# op names by (class, bits): tinygrad decodes the opcode enum at each read (~9 us), and decoding, blocking and
# lowering a kernel read each instruction's name five times
_names:dict[tuple[type, int], str] = {}

def op_name(inst:Inst) -> str:
  if (name:=_names.get(key:=(type(inst), inst._raw))) is None:
    name = inst.op_name if hasattr(inst, "op") else "VOPD"
    if len(_names) < MEMO_LIMIT: _names[key] = name
  return name

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
    if (cls:=_formats.get(key:=(table, data[:4]))) is None:
      cls = _detect(data, table)
      if _first_word_decides(table): _formats[key] = cls
    return _from_bytes(cls, data)  # what decode_inst does, in integer tests (tests/compiler/rdna/test_rdna_translate_fast.py)
  except ValueError:
    ins = importlib.import_module(f"tinygrad.runtime.autogen.amd.{TABLES.get(arch, arch)}.ins")
    for name in EXTRA_FORMATS.get(arch, ()):
      if _matches(data, cls := getattr(ins, name)): return cls.from_bytes(data)
    raise

# tinygrad's format search and variant check read every field through its descriptors (a register operand's
# descriptor looks the opcode's operand table up): ~40 us an instruction, most of a cold kernel's decode. The same
# tests on the integer words, from tables built once per format from its fields, cost ~3 us.

@dataclass(frozen=True)
class _Format:
  cls:type
  need:int                                    # bytes tinygrad's _matches wants (a field in a later dword: its dword)
  fixed_mask:int                              # the fixed (encoding) bits of the (up to 4) words, and their values
  fixed:int
  enums:tuple[tuple[int, int, frozenset], ...]  # (lo, mask, raw values whose opcode the encoding allows)
  src0:int|None                               # an SDWA/DPP variant class: the src0 value (bits 0-8) it needs

def _valid(f:EnumBitField, allowed:bool) -> frozenset:
  """The raw values of f that decode (to an opcode its encoding allows, when `allowed`): tinygrad's decode is
  the enum's lookup by value (no _missing_ hook; test_rdna_translate_fast.py checks every raw value against it)."""
  return frozenset(m.value for m in (f.allowed if allowed else f._enum) if 0 <= m.value <= f.mask)

def _format(cls:type) -> _Format|None:
  """cls's _matches as integer tests on the instruction's words; None where no word matches (a fixed value past its
  field)."""
  mask = fixed = 0
  for _, f in cls._fields:
    if isinstance(f, FixedBitField): mask, fixed = mask | f.mask << f.lo, fixed | (f.default & f.mask) << f.lo
  if any(isinstance(f, FixedBitField) and (fixed >> f.lo) & f.mask != f.default for _, f in cls._fields): return None
  enums = tuple((f.lo, f.mask, _valid(f, True)) for _, f in cls._fields if isinstance(f, EnumBitField) and f.allowed is not None)
  src0 = next((v for suffix, v in _VARIANT_SRC0.items() if cls.__name__.endswith(suffix)), None)
  return _Format(cls, max((f.lo // 32 + 1) * 4 for _, f in cls._fields), mask, fixed, enums, src0)

@functools.cache
def _format_tests(table:str) -> tuple[_Format, ...]|None:
  """None where a format's encoding or opcode field spans two words (tinygrad reads it from one word: its own search)."""
  fields = [f for cls in _load_formats()[table] for _, f in cls._fields if isinstance(f, (FixedBitField, EnumBitField))]
  if any(f.lo // 32 != f.hi // 32 for f in fields): return None
  return tuple(t for cls in _load_formats()[table] if (t:=_format(cls)) is not None)

def _detect(data:bytes, table:str) -> type:
  """tinygrad's detect_format(data, table)."""
  if (tests:=_format_tests(table)) is None: return detect_format(data, table)
  bits = int.from_bytes(data[:16], "little")
  for t in tests:
    if len(data) < t.need or bits & t.fixed_mask != t.fixed: continue
    if any((bits >> lo) & mask not in ok for lo, mask, ok in t.enums): continue
    if t.src0 is None or bits & 0x1ff == t.src0: return t.cls
  raise ValueError(f"unknown {table} format word={bits & 0xffffffff:#010x}")

VARIANTS = ("_LIT", "_DPP8", "_DPP16", "_SDWA")

@functools.cache
def _variant_fields(cls:type) -> tuple[tuple[int, int, int], ...]|None:
  """The (lo, mask, first offset) of cls's source fields, whose values 255/249/250 make tinygrad pick a variant class;
  () for a variant class; None where tinygrad's own from_bytes must decide (VOPD: its opcodes' names)."""
  if any(s in cls.__name__ for s in VARIANTS): return ()
  if hasattr(cls, "opx") or hasattr(cls, "opy"): return None
  return tuple((f.lo, f.mask, f._valid_range[0]) for _, f in cls._fields if isinstance(f, SrcField))

@functools.cache
def _ops(cls:type) -> tuple[int, int, frozenset]|None:
  """The lo, mask and valid raw values of cls's opcode field (tinygrad's variant check raises on another value)."""
  f = dict(cls._fields).get("op")
  if not isinstance(f, EnumBitField): return None
  return f.lo, f.mask, _valid(f, False)

def _from_bytes(cls:type, data:bytes) -> Inst:
  """tinygrad's cls.from_bytes(data): the instruction, or its _LIT/_DPP8/_DPP16/_SDWA variant."""
  if (fields:=_variant_fields(cls)) is None: return cls.from_bytes(data)
  raw = int.from_bytes(data[:cls._base_size], "little")
  if (op:=_ops(cls)) is not None and (raw >> op[0]) & op[1] not in op[2]: return cls.from_bytes(data)  # raises as tinygrad does
  for lo, mask, first in fields:
    off = ((raw >> lo) & mask) + first
    if off not in (249, 250, 255): continue
    suffix = "_LIT" if off == 255 else "_DPP16" if off == 250 else "_SDWA" if "cdna" in cls.__module__ else "_DPP8"
    if (variant:=_get_variant(cls, suffix)) is not None: return variant.from_bytes(data)
    break
  inst = object.__new__(cls)
  inst._raw = raw
  return inst

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
  of 14 decodes, and reading it raises ValueError). Reading every field costs ~15 us: the fields that may raise are
  tested on the raw bits first (_field_checks), and read one by one only when one fails."""
  raw = inst._raw
  for name, lo, mask, ok in _field_checks(type(inst)):
    if ok is None:
      try: getattr(inst, name)
      except READ_ERRORS: return _field_read_error(inst, word)
    elif (raw >> lo) & mask not in ok: return _field_read_error(inst, word)
  return inst

READ_ERRORS = (ValueError, KeyError, IndexError, AssertionError, RuntimeError, TypeError)
# field kinds whose read cannot raise once every enum field holds a value of its enum: a source field's decode stays
# in the register table, and its read raises only where the opcode does not decode (to size the register)
NEVER_RAISE = (BitField, FixedBitField, SrcField, VGPRField, SGPRField, SSrcField)

@functools.cache
def _field_checks(cls:type) -> tuple[tuple[str, int, int, frozenset|None], ...]:
  """(name, lo, mask, valid raw values) of cls's fields that may raise when read; valid None: read the field."""
  out = []
  for name, f in cls._fields:
    if type(f) in NEVER_RAISE: continue
    out.append((name, f.lo, f.mask, _valid(f, False)) if type(f) is EnumBitField else (name, 0, 0, None))
  return tuple(out)

def _field_read_error(inst:Inst, word:int) -> Inst|Bad:
  """The first field in order whose read raises, as Bad."""
  for name, _ in type(inst)._fields:
    try: getattr(inst, name)
    except READ_ERRORS as e: return Bad(word, f"{INVALID}word 0x{word:08x}: reserved {name} value ({e})")
  return inst

DPP8_MARKERS = (233, 234)  # src0 values selecting DPP8 (and DPP8 with fetch-inactive) on gfx11

def _dpp8(inst:Inst, data:bytes) -> Inst:
  """tinygrad's decoder looks for DPP8 at src0 = 249 (the gfx9 SDWA marker); gfx11 marks it with 233/234, so re-decode
  those as the _DPP8 variant, which also gives the instruction its true 8- or 12-byte size."""
  cls = type(inst)
  if (src0:=_src0_bits(cls)) is False: return inst
  if src0 is not None and ((op:=_ops(cls)) is None or (inst._raw >> op[0]) & op[1] in op[2]):
    if ((inst._raw >> src0[0]) & src0[1]) + src0[2] not in DPP8_MARKERS: return inst  # tinygrad's read, on the bits
  elif inst.src0.offset not in DPP8_MARKERS: return inst  # reading it raises where the opcode does not decode
  variant = getattr(sys.modules[cls.__module__], cls.__name__ + "_DPP8", None)
  return inst if variant is None else variant.from_bytes(data)

@functools.cache
def _src0_bits(cls:type) -> tuple[int, int, int]|None|bool:
  """(lo, mask, first offset) of cls's src0 source field; False without src0; None where it is another kind of field."""
  f = dict(cls._fields).get("src0")
  return False if f is None else (f.lo, f.mask, f._valid_range[0]) if isinstance(f, SrcField) else None

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
