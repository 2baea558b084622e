"""PTX text -> a module of kernels: parameters, registers, variables and a flat list of statements.

The parser only structures the text; it knows no instruction semantics. Every statement keeps its PTX line number so
the executor can name it in errors. Registers are resolved against their scope ({ } blocks may redeclare names), each
getting a unique Python-safe name.
"""
from __future__ import annotations
import re, struct
import numpy as np
from mockgpu.compiler.ptx.syntax import (PTXSyntaxError, InvalidPTX, Reg, Special, Imm, Sym, Addr, Vec, Not,
                                         PredPair, SINK, Call, Instr, Label, Var, Param, Function, Module)
from mockgpu.compiler.ptx.types import TYPE_BYTES, np_dtype
from mockgpu.compiler.ptx.inline import inline_calls
from mockgpu.compiler.ptx.validity import check_operands

# *** lexical helpers ***

def _strip_comments(text:str) -> str:
  """Remove // and /* */ comments, keeping newlines so line numbers stay right."""
  text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
  return re.sub(r"//[^\n]*", "", text)

_INT = re.compile(r"^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]+|\d+)[uU]?$")
_HEXF = re.compile(r"^([+-]?)0([fFdD])([0-9a-fA-F]+)$")
_DECF = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")

def parse_number(tok:str) -> Imm|None:
  if m := _HEXF.match(tok):
    neg, kind, digits = m.groups()
    nbits = 32 if kind in "fF" else 64
    v = struct.unpack("<f" if nbits == 32 else "<d", int(digits, 16).to_bytes(nbits // 8, "little"))[0]
    # an exact bit pattern; a negated literal is a value (its pattern differs only in the sign bit for non-NaNs)
    return Imm(v, True, nbits) if neg != "-" else Imm(-v, True, 0)
  if m := _INT.match(tok):
    neg, digits = m.groups()
    v = int(digits, 0) if not _OCTAL.match(digits) else int(digits, 8)
    return Imm(-v if neg == "-" else v, False)
  if _DECF.match(tok) and ("." in tok or "e" in tok.lower()): return Imm(float(tok), True)
  return None

def split_top(s:str, sep:str=",") -> list[str]:
  """Split on `sep` outside of {} and [] (the pieces between separators, joined again while a bracket is open: the
  depth at a separator is the brackets opened before it less those closed). A last piece that is empty is dropped."""
  out, cur, depth = [], [], 0
  for piece in s.split(sep):
    cur.append(piece)
    depth += piece.count("{") + piece.count("[") - piece.count("}") - piece.count("]")
    if depth == 0:
      out.append(sep.join(cur).strip())
      cur = []
  if cur: out.append(sep.join(cur).strip())
  if out and not out[-1]: out.pop()
  return out

# *** the parser ***

_NONWORD = re.compile(r"\W")
# the patterns read per statement and operand, compiled once (re's own cache costs a lookup at each call)
_OCTAL = re.compile(r"^0[0-7]+$")
_LABEL = re.compile(r"([$\w.]+)\s*:(?!:)")
_GUARD = re.compile(r"^@(!?)(\S+)\s+(.*)$")
_OPCODE = re.compile(r"^([a-z][a-zA-Z0-9_.:]*)\s*(.*)$")
_SYMBOL = re.compile(r"^([\w$.]+)\s*(?:\[(\d+)\])?\s*(?:\+\s*(-?\w+))?$")
_ADDRESS = re.compile(r"^([%\w$.]+)?\s*(?:\+\s*([+-]?\s*\w+))?$")

class _Scopes:
  def __init__(self, fn:Function):
    self.fn, self.stack, self.count = fn, [{}], 0
  def declare(self, ptx_name:str, typ:str, line:int):
    if ptx_name in self.stack[-1]:
      if self.stack[-1][ptx_name].type == typ: return
      raise PTXSyntaxError(f"PTX line {line}: register {ptx_name} redeclared with another type")
    base = "r_" + _NONWORD.sub("_", ptx_name.lstrip("%"))
    name = base
    while name in self.fn.regs:
      self.count += 1
      name = f"{base}_s{self.count}"
    self.fn.regs[name] = self.stack[-1][ptx_name] = Reg(name, typ, ptx_name)
  def lookup(self, ptx_name:str) -> Reg|None:
    for d in reversed(self.stack):
      if ptx_name in d: return d[ptx_name]
    return None

SPECIALS = {"tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid", "clock", "clock64",
            "globaltimer", "globaltimer_lo", "globaltimer_hi", "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge",
            "lanemask_gt", "dynamic_smem_size", "total_smem_size"}

def _parse_vars(decl:str, space:str, line:int) -> list[Var]:
  """`.shared .align 16 .b8 name[64]` (with optional `= {...}`, several names)."""
  if "=" in decl: decl, init_txt = decl.split("=", 1)
  else: init_txt = None
  toks = decl.split()
  extern = ".extern" in toks
  align, typ, names = 0, None, []
  i = 0
  while i < len(toks):
    t = toks[i]
    if t == ".align": align, i = int(toks[i + 1]), i + 2; continue
    if t.startswith(".") and t[1:] in TYPE_BYTES: typ = t[1:]
    elif t.startswith(".v") and t[2:].isdigit(): raise PTXSyntaxError(f"PTX line {line}: vector variables ({t}) are not supported")
    elif not t.startswith("."): names.append(t)
    i += 1
  if typ is None: raise PTXSyntaxError(f"PTX line {line}: variable declaration without a type: {decl.strip()}")
  out = []
  for n in " ".join(names).split(","):
    n = n.strip()
    if not n: continue
    m = re.match(r"^([\w$.]+)((?:\[\d*\])*)$", n)
    if not m: raise PTXSyntaxError(f"PTX line {line}: cannot read variable {n!r}")
    count = 1
    for d in re.findall(r"\[(\d*)\]", m.group(2)): count = count * int(d) if d else 0
    size = TYPE_BYTES[typ] * count
    data = None
    if init_txt is not None:
      vals = [parse_number(v.strip()) for v in init_txt.strip().strip("{}").split(",") if v.strip()]
      if any(v is None for v in vals): raise PTXSyntaxError(f"PTX line {line}: cannot read initializer of {n}")
      data = _pack_init(vals, typ, size, line)
    out.append(Var(m.group(1), space, typ, size, align or TYPE_BYTES[typ], data, extern))
  return out

def _pack_init(vals:list[Imm], typ:str, size:int, line:int) -> bytes:
  dt = np_dtype(typ)
  arr = np.array([v.value for v in vals], dtype=np.float64 if dt.kind == "f" else object)
  raw = arr.astype(dt).tobytes() if dt.kind == "f" else b"".join(int(v.value % (1 << 8*dt.itemsize)).to_bytes(dt.itemsize, "little") for v in vals)
  if len(raw) > size: raise PTXSyntaxError(f"PTX line {line}: initializer longer than its variable")
  return raw + bytes(size - len(raw))

def _parse_params(txt:str, line:int) -> list[Param]:
  params, off = [], 0
  for p in split_top(txt):
    toks = p.split()
    if not toks or toks[0] != ".param": raise PTXSyntaxError(f"PTX line {line}: cannot read parameter {p!r}")
    align, typ, name = 0, None, None
    i = 1
    while i < len(toks):
      t = toks[i]
      if t == ".align": align, i = int(toks[i + 1]), i + 2; continue
      if t == ".ptr" or t in (".global", ".shared", ".const", ".local"): pass
      elif t.startswith(".") and t[1:] in TYPE_BYTES: typ = t[1:]
      else: name = t
      i += 1
    m = re.match(r"^([\w$.]+)(?:\[(\d+)\])?$", name or "")
    if typ is None or not m: raise PTXSyntaxError(f"PTX line {line}: cannot read parameter {p!r}")
    size = TYPE_BYTES[typ] * (int(m.group(2)) if m.group(2) else 1)
    align = align or TYPE_BYTES[typ]
    off = (off + align - 1) // align * align
    params.append(Param(m.group(1), typ, size, align, off))
    off += size
  return params

class _BodyParser:
  def __init__(self, fn:Function, text:str, first_line:int, module_vars:dict[str, Var]):
    self.fn, self.text, self.line0, self.scopes = fn, text, first_line, _Scopes(fn)
    self.symbols = {**module_vars, **{p.name: p for p in fn.params}}

  def parse(self):
    pos, n, text = 0, len(self.text), self.text
    while pos < n:
      ch = text[pos]
      if ch.isspace(): pos += 1; continue
      line = self.line0 + text.count("\n", 0, pos)
      if ch == "{": self.scopes.stack.append({}); pos += 1; continue
      if ch == "}":
        if len(self.scopes.stack) == 1: raise PTXSyntaxError(f"PTX line {line}: unbalanced '}}'")
        self.scopes.stack.pop(); pos += 1; continue
      if m := _LABEL.match(text, pos):
        self.fn.body.append(Label(m.group(1), line))
        pos = m.end(); continue
      end = text.find(";", pos)
      if end < 0: raise PTXSyntaxError(f"PTX line {line}: statement without ';': {text[pos:pos+60].strip()}")
      self.statement(" ".join(text[pos:end].split()), line)
      pos = end + 1
    if len(self.scopes.stack) != 1: raise PTXSyntaxError(f"PTX line {self.fn.line}: unbalanced '{{' in {self.fn.name}")

  def statement(self, s:str, line:int):
    if s.startswith(".reg"): return self.reg_decl(s, line)
    if s.startswith(".extern "): s = s[len(".extern "):] + " .extern"
    for space in ("shared", "local", "global", "const"):
      if s.startswith(f".{space}"):
        for v in _parse_vars(s, space, line):
          self.fn.vars.append(v)
          self.symbols[v.name] = v
        return
    if s.startswith(".param"): return self.param_decl(s, line)
    if s.startswith(".pragma") or s.startswith(".loc") or s.startswith(".file"): return
    if s.startswith("."): raise PTXSyntaxError(f"PTX line {line}: unsupported directive {s.split()[0]}")
    guard = None
    if s.startswith("@"):
      m = _GUARD.match(s)
      if not m: raise PTXSyntaxError(f"PTX line {line}: cannot read guard in {s!r}")
      reg = self.reg(m.group(2), line)
      guard, s = (reg, m.group(1) == "!"), m.group(3)
    m = _OPCODE.match(s)
    if not m: raise PTXSyntaxError(f"PTX line {line}: cannot read instruction {s!r}")
    parts = m.group(1).split(".")
    if parts[0] == "call": return self.call(parts, m.group(2), guard, line, s)
    try: args, error = [self.operand(a, line) for a in split_top(m.group(2))] if m.group(2).strip() else [], None
    except PTXSyntaxError as e: args, error = [], str(e)
    self.fn.body.append(Instr(parts[0], tuple(parts[1:]), args, guard, line, s, error))

  def param_decl(self, s:str, line:int):
    """A .param variable of a call sequence (the arguments and return values of a call). Call sequences in sibling
    { } scopes reuse names (param0, retval0); their lifetimes do not overlap, so one variable per name (the largest)."""
    for v in _parse_vars(s, "param", line):
      old = self.symbols.get(v.name)
      if isinstance(old, Var) and old.space == "param":
        old.size, old.align = max(old.size, v.size), max(old.align, v.align)
        continue
      if isinstance(old, Param): raise PTXSyntaxError(f"PTX line {line}: .param variable {v.name} redeclares a parameter of {self.fn.name}")
      self.fn.vars.append(v)
      self.symbols[v.name] = v

  _CALL = re.compile(r"^(?:\(([^()]*)\)\s*,\s*)?([%\w$.]+)\s*(?:,\s*\(([^()]*)\))?\s*(?:,\s*([\w$.]+))?$")

  def call(self, parts:list[str], rest:str, guard, line:int, text:str):
    error, args = None, []
    try:
      m = self._CALL.match(rest.strip())
      if not m: raise PTXSyntaxError(f"PTX line {line}: cannot read call operands: {text}")
      ops = lambda t: tuple(self.operand(a, line) for a in split_top(t)) if t and t.strip() else ()
      tgt = m.group(2)
      target = self.reg(tgt, line) if tgt.startswith("%") else tgt
      args = [Call(target, ops(m.group(1)), ops(m.group(3)), m.group(4))]
    except PTXSyntaxError as e: error = str(e)
    self.fn.body.append(Instr("call", tuple(parts[1:]), args, guard, line, text, error))

  def reg_decl(self, s:str, line:int):
    toks = re.sub(r"^\.reg\.", ".reg .", s).replace(",", " , ").split()
    typ = next((t[1:] for t in toks[1:] if t.startswith(".") and t[1:] in TYPE_BYTES), None)
    if typ is None or any(t.startswith(".v") for t in toks): raise PTXSyntaxError(f"PTX line {line}: unsupported register declaration {s!r}")
    names = [t for t in toks[1:] if not t.startswith(".") and t != ","]
    for nm in names:
      if m := re.match(r"^(.*)<(\d+)>$", nm):
        for i in range(int(m.group(2))): self.scopes.declare(f"{m.group(1)}{i}", typ, line)
      else: self.scopes.declare(nm, typ, line)

  def reg(self, name:str, line:int) -> Reg:
    r = self.scopes.lookup(name)
    if r is None: raise PTXSyntaxError(f"PTX line {line}: undeclared register {name}")
    return r

  def operand(self, a:str, line:int):
    a = a.strip()
    if a == "_": return SINK
    if a.startswith("{"): return Vec(tuple(self.operand(x, line) for x in split_top(a[1:-1])))
    if a.startswith("["): return self.address(a[1:-1].strip(), line)
    if a.startswith("!"): return Not(self.reg(a[1:], line))
    if "|" in a:
      p, q = a.split("|")
      return PredPair(self.reg(p, line), None if q.strip() == "_" else self.reg(q.strip(), line))
    if (imm := parse_number(a)) is not None: return imm
    if (r := self.scopes.lookup(a)) is not None: return r
    if a.startswith("%"):
      base = a[1:].split(".")[0]
      if base in SPECIALS: return Special(a[1:])
      raise PTXSyntaxError(f"PTX line {line}: undeclared register {a}")
    if m := _SYMBOL.match(a):
      off = int(m.group(2) or 0) * self._elem_size(m.group(1)) + (int(m.group(3), 0) if m.group(3) else 0)
      return Sym(m.group(1), off)
    raise PTXSyntaxError(f"PTX line {line}: cannot read operand {a!r}")

  def _elem_size(self, name:str) -> int:
    v = self.symbols.get(name)
    return TYPE_BYTES[v.type] if isinstance(v, Var) else 1

  def address(self, a:str, line:int) -> Addr:
    m = _ADDRESS.match(a)
    if not m: raise PTXSyntaxError(f"PTX line {line}: cannot read address [{a}]")
    base_txt, off_txt = m.group(1), m.group(2)
    off = int(off_txt.replace(" ", ""), 0) if off_txt else 0
    if base_txt is None: return Addr(None, off)
    if (imm := parse_number(base_txt)) is not None and not imm.is_float: return Addr(None, int(imm.value) + off)
    if (r := self.scopes.lookup(base_txt)) is not None: return Addr(r, off)
    if base_txt.startswith("%"): raise PTXSyntaxError(f"PTX line {line}: undeclared register {base_txt}")
    return Addr(Sym(base_txt), off)

_BRACES = re.compile(r"[{}]")
_FUNC = re.compile(r"((?:\.visible|\.weak|\.extern)\s+)*\.(entry|func)\s+(\([^)]*\)\s*)?([\w$.]+)\s*(\(([^)]*)\))?")

def parse(text:str) -> Module:
  text = _strip_comments(text.replace("\x00", ""))
  version = target = ""
  address_size, module_vars, functions = 64, [], {}
  pos = 0
  while True:
    m = _FUNC.search(text, pos)
    head = text[pos: m.start() if m else len(text)]
    _parse_module_decls(head, text.count("\n", 0, pos) + 1, module_vars, locals_ := {})
    version, target, address_size = locals_.get("version", version), locals_.get("target", target), locals_.get("address_size", address_size)
    if not m: break
    line = text.count("\n", 0, m.start()) + 1
    rets = _parse_params(m.group(3).strip()[1:-1], line) if m.group(3) else []
    if rets and m.group(2) == "entry":
      raise InvalidPTX(f"PTX line {line}: .entry {m.group(4)} has return parameters (only a .func may return values)")
    brace = text.find("{", m.end())
    semi = text.find(";", m.end())
    if semi != -1 and (brace == -1 or semi < brace):  # a prototype
      if m.group(2) == "func" and m.group(4) not in functions:
        functions[m.group(4)] = Function(m.group(4), False, _parse_params(m.group(6) or "", line), line=line, rets=rets, defined=False)
      pos = semi + 1
      continue
    perf = text[m.end():brace].strip()
    depth, i = 0, -1
    for b in _BRACES.finditer(text, brace) if brace >= 0 else ():   # the body's closing brace (a scan per character cost ~1 ms a kernel)
      depth += 1 if b.group() == "{" else -1
      if depth == 0:
        i = b.start()
        break
    if i < 0: raise PTXSyntaxError(f"PTX line {line}: function {m.group(4)} has no closing '}}'")
    fn = Function(m.group(4), m.group(2) == "entry", _parse_params(m.group(6) or "", line), line=line, rets=rets)
    fn.maxntid = _check_perf_directives(perf, line)
    _BodyParser(fn, text[brace + 1:i], text.count("\n", 0, brace + 1) + 1, {v.name: v for v in module_vars}).parse()
    functions[fn.name] = fn
    pos = i + 1
  if address_size != 64: raise PTXSyntaxError(f".address_size {address_size} is not supported (only 64)")
  module = Module(version, target, address_size, module_vars, functions)
  for fn in functions.values():   # as ptxas does, before any backend sees the module (and in functions never called)
    for ins in fn.body:
      if isinstance(ins, Instr): check_operands(ins, fn.name)
  inline_calls(module)
  return module

def _check_perf_directives(perf:str, line:int) -> int:
  """Validates the directives between an entry's parameters and its body; returns the .maxntid/.reqntid thread count."""
  for d in re.findall(r"\.(\w+)", perf):
    if d not in ("maxntid", "reqntid", "minnctapersm", "maxnreg", "maxclusterrank", "noreturn", "pragma", "reqnctapercluster"):
      raise PTXSyntaxError(f"PTX line {line}: unsupported kernel directive .{d}")
  limit = 0
  for m in re.finditer(r"\.(?:maxntid|reqntid)\s+([\d\s,]+)", perf):
    n = 1
    for x in m.group(1).split(","):
      if x.strip(): n *= int(x)
    limit = n if not limit else min(limit, n)
  return limit

def _parse_module_decls(head:str, line0:int, out:list[Var], info:dict):
  pos = 0
  for m in re.finditer(r"\.(version|target|address_size)\s+([^\n;]+)", head):
    info[m.group(1)] = int(m.group(2)) if m.group(1) == "address_size" else m.group(2).strip()
  rest = re.sub(r"\.(version|target|address_size)\s+[^\n;]+", lambda m: " " * len(m.group(0)), head)
  for stmt in rest.split(";"):
    line = line0 + rest.count("\n", 0, pos)
    pos += len(stmt) + 1
    s = " ".join(stmt.split())
    if not s: continue
    space = next((sp for sp in ("shared", "global", "const", "local") if re.search(rf"(^|\s)\.{sp}(\s|$)", s)), None)
    if space is None:
      raise PTXSyntaxError(f"PTX line {line + stmt[:len(stmt)-len(stmt.lstrip())].count(chr(10))}: unsupported module directive {s[:60]!r}")
    out.extend(_parse_vars(s.replace(".visible", "").replace(".weak", ""), space, line))
