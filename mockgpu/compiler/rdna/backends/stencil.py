"""The stencil tier's translation: a kernel as a list of per-instruction C handlers, each from a library built once per
machine, so that a kernel needs no C build of its own.

Each instruction's C is the C backend's (backends/c.py CTranslator: the same text, so the same bits as the C tier and
the numpy path); then its register numbers, operand constants, PC, branch targets and message indexes are taken out
as parameters (`V(P[k])`, `s[P[k]]`, `(uint32_t)P[k]`; P[0] is the PC). What is left is the instruction's *template*,
named by its hash: a handler `int64_t h_<hash>(Ctx *c, uint32_t *s, uint32_t *v, uint8_t *lds, const int64_t *P)`
compiled into the handler library (emulators/rdna/stencil.py) the first time any kernel uses it. A kernel is then an
array of (handler, parameters) and a block table, run by the library's interpreter loop (STENCIL_CORE) under the C
tier's wave scheduler (c/prelude.c mockgpu_run: faults, barriers, traps and the budget behave as on the C tier).

A handler returns 0 to go on with the next instruction, 1 + k to go to block k, or -2 - b to leave the wave (-1 at
s_endpgm, b the block to resume at after s_barrier). What the C backend declines (NoNative), and computed jumps
(s_setpc: their C is a switch over the kernel's own offsets), keep the kernel on the numpy path.
"""
from __future__ import annotations
import hashlib, re
from mockgpu.compiler.rdna.decode import Block, Bad, op_name
from mockgpu.compiler.rdna.operands import failure
from mockgpu.compiler.rdna.backends import c as cb
from mockgpu.compiler.rdna.backends.numpy import bad_vgprs, bad_sgprs
from mockgpu.compiler.rdna import operands as ops

NoNative = cb.NoNative

class Pc(int):
  """An instruction's PC, which its C text names as the parameter P[0] (the PC is the one thing every instruction has)."""
  def __format__(self, spec:str) -> str: return "PCV" if not spec else int.__format__(self, spec)
  def __str__(self) -> str: return "PCV"

# what a template takes out of an instruction's C text: each match becomes one parameter (the lookahead lets the
# search skip most characters at once: 10x faster than the same alternatives each behind \b)
# (not inside a name or a number; 0 and 1 as unsigned literals stay: flags and counts, not operands)
TOKENS = re.compile(r"(?=[VsMSPgB0-9])(?<![\w.])(?:V\((\d+)\)|s\[(\d+)\]|MASK\((\d+)\)|SET_MASK\((\d+),"
                    r"|(?![01](?:ull|u)\b)(0x[0-9a-fA-F]+|\d+)(ull|u)\b|PCV\b|goto B(\d+);|BLK_\((\d+)\)|MSG_\((\d+)\))")
FORMS = {0: "V(P[{}])", 1: "s[P[{}]]", 2: "MASK(P[{}])", 3: "SET_MASK(P[{}],", 6: "return 1 + P[{}];", 7: "P[{}]", 8: "P[{}]"}
INT64 = 1 << 64

def template(text:str) -> tuple[str, list[int], list[int], list[int]]:
  """An instruction's C text as (template, parameters after the PC, its VGPR numbers, its SGPR numbers)."""
  params:list[int] = []
  vregs:list[int] = []
  sregs:list[int] = []
  def sub(m) -> str:
    k = m.lastindex
    if k is None: return "P[0]"   # PCV
    if k == 6:  # an unsigned literal
      val = int(m.group(5), 0)
      params.append(val - INT64 if val >= 1 << 63 else val)
      return f"(({'uint64_t' if m.group(6) == 'ull' else 'uint32_t'})P[{len(params)}])"
    params.append(x:=int(m.group(k)))
    if k == 1: vregs.append(x)
    elif k < 5: sregs.append(x)
    return FORMS[k - 1].format(len(params))
  return TOKENS.sub(sub, text), params, vregs, sregs

def name_of(wave:int, text:str) -> str:
  return hashlib.sha256(f"w{wave}\n{text}".encode()).hexdigest()[:20]

def handler(name:str, text:str) -> str:
  return f"int64_t h_{name}(Ctx *c, uint32_t *s, uint32_t *v, uint8_t *lds, const int64_t *P) {{\n{text}\n  return 0;\n}}\n"

# an instruction's lines and template by (family, wave size, float modes, its bits), per process: the kinds whose C text
# depends on nothing but these and the PC (P[0]): not branches, barriers and jumps (block indexes), nor the kinds that
# name messages
MEMO_OPS = (ops.Valu, ops.Dual, ops.Packed, ops.Salu, ops.Smem, ops.Vmem, ops.DsLoad, ops.DsStore, ops.DsPair, ops.Nop, ops.End)
MEMO:dict[tuple, tuple] = {}
MEMO_LIMIT = 1 << 14

class STranslator(cb.CTranslator):
  """The C backend, one instruction's text at a time (chunks: (pc, lines) in block order; blocks: their first chunk,
  instruction count and start)."""
  def __init__(self, blocks:list[Block], ftz32:bool, ftz16:bool, arch:str, wave:int, ieee:bool=True):
    super().__init__(blocks, ftz32, ftz16, arch, wave, ieee)
    self.chunks:list[tuple[int, list[str]]] = []
    self.table:list[tuple[int, int, int]] = []
    self.templates:list[tuple|None] = []   # per chunk: template() of its text, once made

  def translate(self):
    for b in self.blocks:
      self.table.append((len(self.chunks), len(b.insts), b.start))
      self.block(b)

  def block(self, b:Block):
    """backends/c.py's block, with each instruction's lines kept apart (the block's end goes with its last one)."""
    for pc, inst in b.insts:
      self.pc = Pc(pc)
      self.lines = []
      self.chunks.append((pc, self.lines))
      self.templates.append(None)
      if isinstance(inst, Bad): return self.fail(inst.reason)
      self.names[pc] = op_name(inst).lower()
      key = (self.sem, self.wave, self.ftz32, self.ieee, type(inst), inst._raw)
      if (hit:=MEMO.get(key)) is not None:   # an instruction an earlier kernel of this process had: its template
        self.lines += hit[0]
        self.templates[-1], self.vregs = hit[1], self.vregs | hit[2]
        continue
      regs = set(self.vregs)
      nxt = self.inst(inst)
      if nxt is not None: self.out(nxt)
      text = "\n".join(self.lines)
      tmpl = self.templates[-1] = template(text)
      used = (self.vregs - regs) | set(tmpl[2])
      if "V(-" in text: used |= {int(i) for i in cb.CVREG.findall(text)}  # an encoding that is no VGPR: named below
      if (bad := bad_vgprs(used) or bad_sgprs(tmpl[3])) is not None:  # the numpy path raises the same InvalidInstruction
        del self.lines[:]
        self.vregs = regs
        return self.fail(failure(inst, bad))
      if nxt is not None: return
      if type(ops.lower(inst, self.pc, self.sem)) in MEMO_OPS and len(MEMO) < MEMO_LIMIT:
        MEMO[key] = (list(self.lines), tmpl, frozenset(self.vregs - regs) | frozenset(tmpl[2]))
    end = b.insts[-1][0] + b.insts[-1][1].size()
    if end in self.index: self.out(f"goto B{self.index[end]};")
    else: self.fail("execution runs past the end of the decoded code")

  def out(self, line:str):
    self.lines.append("  " + line)
    if self.templates: self.templates[-1] = None   # the chunk's text changed: its template is made again

  def message(self, text:str) -> str:  # type: ignore[override]
    self.messages.append(text)
    return f"MSG_({len(self.messages) - 1})"

  def fail(self, what:str):
    self.out(f"return unsupported(c, {self.pc}, {self.message(what)});")

  def read_pc(self) -> str: return "(c->pgm + (uint64_t)PCV)"

  def barrier(self, op) -> str|None:
    return f"return -2 - BLK_({self.index[self.pc + 4]});" if self.pc + 4 in self.index else None

  def jump(self, op:ops.Jump) -> str:
    if op.target is not None: raise NoNative("a computed jump (the stencil tier has no switch over the kernel's offsets)")
    return super().jump(op)

def record(blocks:list[Block], ftz32:bool, ftz16:bool, arch:str, wave:int, ieee:bool=True) -> tuple:
  """A kernel's stencil form, as marshal keeps it: ("declined", why) or ("ok", nvgpr, names, messages, block table
  (first, count, start)*, handler names, parameter offsets, parameters, {name: template})."""
  try:
    t = STranslator(blocks, ftz32, ftz16, arch, wave, ieee)
    t.translate()
    names, offsets, params, texts = [], [], [], {}
    for (pc, lines), tmpl in zip(t.chunks, t.templates):
      text, ps, _, _ = template("\n".join(lines)) if tmpl is None else tmpl
      name = name_of(wave, text)
      texts[name] = text
      names.append(name)
      offsets.append(len(params))
      params += [pc, *ps]
  except NoNative as e: return ("declined", str(e))
  table = tuple(x for row in t.table for x in row)
  return ("ok", max(t.vregs) + 1, tuple((int(pc), n) for pc, n in t.names.items()), tuple(t.messages), table, tuple(names),
          tuple(offsets), tuple(params), texts)
