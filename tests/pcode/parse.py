"""The ISA manual's pseudocode language, parsed into a small AST of tuples.

The language (as tinygrad's str_pcode tables carry it): statements separated by ';' or by the grammar alone (a line
break ends nothing), `if c then .. elsif c then .. else .. endif`, `for i in a : b do .. endfor`, `declare x : 32'U[4]`,
`break`, `return e` (in lambdas), assignments `=`, `+=`, `-=`, ... to typed slices (D0.f32, D0.u64[laneId],
tmp[31 : 16].f16, S0[i * 4 +: 4], { D1.u1, D0.u64 }), C expressions with `<>`, `**`, `? :`, sized literals and casts
(1'1U, 16'1.0, 32'I(x), 64'F(x)), concatenation { hi, lo } and `NAME = lambda(a, b) (expression or statements)`.

Nodes: ('num', value, kind, width) ('float', value, fmt) ('name', id) ('field', e, name) ('index', e, i)
('slice', e, hi, lo) ('part', e, start, width) ('call', f, args) ('cast', width, letter, e) ('concat', parts)
('un', op, e) ('bin', op, a, b) ('cond', c, a, b) ('lambda', params, body: expression node or ('block', stmts)).
Statements: ('assign', op, target, value) ('expr', e) ('if', [(cond, block)], else_block) ('for', var, lo, hi, block)
('declare', name, width, letter, count) ('break',) ('return', e) ('block', stmts).
"""
from __future__ import annotations
import re
from fractions import Fraction

class PcodeSyntaxError(Exception):
  """The text is not in the pseudocode language as this parser knows it (the message names the token)."""

TOKEN = re.compile(r"""
  (?P<space>\s+)
| (?P<comment>//[^\n]*)
| (?P<sizedtype>\d+'(?:BF|[IUFB])(?![0-9a-fA-FxX.]))
| (?P<sizednum>\d+'(?:0[xX][0-9a-fA-F]+|\d+\.\d+|\d+)[A-Za-z]*)
| (?P<num>0[xX][0-9a-fA-F]+[A-Za-z]*|\d+\.\d+(?:[eE][-+]?\d+)?[A-Za-z]*|\d+[A-Za-z0-9]*)
| (?P<ident>[A-Za-z_][A-Za-z_0-9]*)
| (?P<op>\+:|<<=|>>=|<<|>>|<=|>=|==|!=|<>|&&|\|\||\+=|-=|\*=|/=|\|=|&=|\^=|\*\*|[-+*/%<>=!~&|^?:;,.()\[\]{}'"])
""", re.X)

def tokens(text:str) -> list[tuple[str, str]]:
  out, pos = [], 0
  while pos < len(text):
    m = TOKEN.match(text, pos)
    if m is None: raise PcodeSyntaxError(f"unexpected character {text[pos]!r} at offset {pos}")
    pos = m.end()
    kind = m.lastgroup
    if kind not in ("space", "comment"): out.append((kind, m.group()))
  out.append(("end", ""))
  return out

def number(text:str, width:int|None=None):
  """A literal: ('num', int, kind, width) with kind 'U'/'I'/'B', or ('float', value, fmt)."""
  m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+\.\d+(?:[eE][-+]?\d+)?|\d+)([A-Za-z0-9]*)", text)
  if m is None: raise PcodeSyntaxError(f"bad number {text!r}")
  body, suffix = m.groups()
  if "." in body:
    fmt = {16: "f16", 32: "f32", 64: "f64"}.get(width) if width else ("f32" if suffix.upper() == "F" else "f64")
    if fmt is None or suffix.upper() not in ("", "F"): raise PcodeSyntaxError(f"bad float literal {text!r}")
    return ("float", Fraction(body), fmt)
  value = int(body, 0)
  s = suffix.upper()
  if s not in ("", "U", "L", "LL", "UL", "ULL"): raise PcodeSyntaxError(f"bad integer literal {text!r}")
  if width is None: width = 64 if "L" in s else 32
  return ("num", value, "U" if "U" in s else "I", width)

BINARY = [  # lowest precedence first
  ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!=", "<>"), ("<", "<=", ">", ">="), ("<<", ">>"), ("+", "-"),
  ("*", "/", "%"), ("**",)]
ASSIGN = ("=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", "<<=", ">>=")
BLOCK_WORDS = ("if", "for", "declare", "return", "break")

class Parser:
  def __init__(self, text:str):
    self.toks, self.i = tokens(text), 0
  def peek(self, k:int=0) -> tuple[str, str]: return self.toks[min(self.i + k, len(self.toks) - 1)]
  def at(self, *values:str) -> bool: return self.peek()[1] in values and self.peek()[0] in ("op", "ident")
  def take(self) -> tuple[str, str]:
    t = self.toks[self.i]
    self.i += 1
    return t
  def expect(self, value:str):
    t = self.take()
    if t[1] != value: raise PcodeSyntaxError(f"expected {value!r}, got {t[1] or 'the end'!r} (token {self.i - 1})")

  # *** statements ***
  def program(self) -> list:
    body = self.block(())
    if self.peek()[0] != "end": raise PcodeSyntaxError(f"unexpected {self.peek()[1]!r} (token {self.i})")
    return body

  def block(self, until:tuple[str, ...]) -> list:
    out = []
    while True:
      while self.at(";"): self.take()
      if self.peek()[0] == "end" or self.at(*until): return out
      out.append(self.statement())

  def statement(self):
    if self.at("if"): return self.if_stmt()
    if self.at("for"): return self.for_stmt()
    if self.at("declare"): return self.declare()
    if self.at("break"):
      self.take()
      return ("break",)
    if self.at("return"):
      self.take()
      return ("return", self.expr())
    target = self.expr()
    if self.peek()[0] == "op" and self.peek()[1] in ASSIGN:
      op = self.take()[1]
      value = self.expr()
      if op == "=" and self.at("="):  # a = b = value: b is assigned first, then a gets b's value
        self.take()
        return ("block", [("assign", "=", value, self.expr()), ("assign", "=", target, value)])
      return ("assign", op, target, value)
    return ("expr", target)

  def if_stmt(self):
    arms, other = [], None
    self.expect("if")
    cond = self.expr()
    self.expect("then")
    arms.append((cond, self.block(("elsif", "else", "endif"))))
    while self.at("elsif"):
      self.take()
      cond = self.expr()
      self.expect("then")
      arms.append((cond, self.block(("elsif", "else", "endif"))))
    if self.at("else"):
      self.take()
      other = self.block(("endif",))
    self.expect("endif")
    return ("if", arms, other)

  def for_stmt(self):
    self.expect("for")
    var = self.take()
    if var[0] != "ident": raise PcodeSyntaxError(f"for: expected a variable, got {var[1]!r}")
    self.expect("in")
    lo = self.expr()
    self.expect(":")
    hi = self.expr()
    self.expect("do")
    body = self.block(("endfor",))
    self.expect("endfor")
    return ("for", var[1], lo, hi, body)

  def declare(self):
    self.expect("declare")
    name = self.take()
    self.expect(":")
    t = self.take()
    if t[0] != "sizedtype": raise PcodeSyntaxError(f"declare {name[1]}: expected a sized type, got {t[1]!r}")
    width, letter = t[1].split("'")
    count = None
    if self.at("["):
      self.take()
      count = self.expr()
      self.expect("]")
    return ("declare", name[1], int(width), letter, count)

  # *** expressions ***
  def expr(self):
    cond = self.binary(0)
    if self.at("?"):
      self.take()
      a = self.expr()
      self.expect(":")
      return ("cond", cond, a, self.expr())
    return cond

  def binary(self, level:int):
    if level == len(BINARY): return self.unary()
    left = self.binary(level + 1)
    while self.peek()[0] == "op" and self.peek()[1] in BINARY[level]:
      op = self.take()[1]
      left = ("bin", op, left, self.binary(level + 1))
    return left

  def unary(self):
    if self.peek()[0] == "op" and self.peek()[1] in ("-", "+", "!", "~"):
      op = self.take()[1]
      return ("un", op, self.unary())
    return self.postfix(self.primary())

  def postfix(self, e):
    while True:
      if self.at("."):
        self.take()
        name = self.take()
        if name[0] not in ("ident", "num"): raise PcodeSyntaxError(f"expected a field after '.', got {name[1]!r}")
        e = ("field", e, name[1])
      elif self.at("["):
        self.take()
        first = self.expr()
        if self.at(":"):
          self.take()
          e = ("slice", e, first, self.expr())
        elif self.at("+:"):
          self.take()
          e = ("part", e, first, self.expr())
        else: e = ("index", e, first)
        self.expect("]")
      elif self.at("(") and e[0] == "name":
        e = ("call", e[1], self.args())
      else: return e

  def args(self) -> list:
    self.expect("(")
    out = []
    while not self.at(")"):
      out.append(self.expr())
      if not self.at(")"): self.expect(",")
    self.expect(")")
    return out

  def primary(self):
    kind, text = self.take()
    if kind == "num": return number(text)
    if kind == "sizednum":
      width, body = text.split("'")
      return number(body, int(width))
    if kind == "sizedtype":
      width, letter = text.split("'")
      self.expect("(")
      e = self.expr()
      self.expect(")")
      return ("cast", int(width), letter, e)
    if kind == "ident":
      if text == "lambda": return self.lambda_expr()
      return ("name", text)
    if text == "(":
      e = self.expr()
      self.expect(")")
      return e
    if text == "{":
      parts = [self.expr()]
      while self.at(","):
        self.take()
        parts.append(self.expr())
      self.expect("}")
      return ("concat", parts)
    raise PcodeSyntaxError(f"unexpected {text or 'end of text'!r} (token {self.i - 1})")

  def lambda_expr(self):
    params = []
    self.expect("(")
    while not self.at(")"):
      params.append(self.take()[1])
      if not self.at(")"): self.expect(",")
    self.expect(")")
    self.expect("(")
    if self.peek()[0] == "ident" and self.peek()[1] in BLOCK_WORDS: body = ("block", self.block((")",)))
    else: body = self.expr()
    self.expect(")")
    return ("lambda", params, body)

def parse(text:str) -> list:
  """The statements of a pseudocode text; PcodeSyntaxError if it is not in the language."""
  return Parser(text).program()
