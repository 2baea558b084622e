"""A parsed PTX module: its functions, their parameters, registers, variables and a flat list of statements
(instructions with their operands, and labels). Every statement keeps its PTX line so errors can name it.

The ground floor of the PTX layer: the parser builds these, inline.py and validity.py check and rewrite them, and the
semantics table and the backends read them.
"""
from __future__ import annotations
from dataclasses import dataclass, field
from mockgpu.errors import UnsupportedInstruction

class PTXSyntaxError(UnsupportedInstruction):
  """PTX the parser cannot read: names the line."""

class InvalidPTX(PTXSyntaxError):
  """PTX that is not valid by the PTX ISA, which ptxas (and the driver's JIT) rejects: not a gap of the mock. Names the
  instruction, its line and the ISA rule it breaks."""

# *** operands ***

@dataclass(frozen=True)
class Reg:
  name: str          # python name
  type: str          # declared PTX type (b32, f32, pred, ...)
  ptx: str           # name in the PTX text
@dataclass(frozen=True)
class Special:
  name: str          # tid.x, laneid, clock64, ...
@dataclass(frozen=True)
class Imm:
  value: int|float
  is_float: bool
  bits: int = 0      # 32 or 64 for 0f/0d literals (exact bit patterns), 0 otherwise
@dataclass(frozen=True)
class Sym:
  name: str          # a variable (its address) or a label
  offset: int = 0
@dataclass(frozen=True)
class Addr:
  base: Reg|Sym|None
  offset: int
@dataclass(frozen=True)
class Vec:
  items: tuple
@dataclass(frozen=True)
class Not:
  reg: Reg
@dataclass(frozen=True)
class PredPair:
  p: Reg
  q: Reg|None
class Sink: pass
SINK = Sink()
@dataclass(frozen=True)
class Call:
  """The operands of `call{.uni} (rets), target, (params){, prototype}`: .param variables (Sym), or registers/constants."""
  target: str|Reg
  rets: tuple
  params: tuple
  prototype: str|None = None

@dataclass
class Instr:
  op: str                # opcode without modifiers (add, ld, setp, ...)
  mods: tuple[str, ...]  # modifiers in order (".rn", ".f32" -> "rn", "f32")
  args: list
  guard: tuple[Reg, bool]|None   # (predicate, negated)
  line: int
  text: str
  error: str|None = None   # operands the parser could not read (reported if the instruction is one we model)
  error_type: type|None = None   # the class to raise error as (default PTXSyntaxError)
  def where(self) -> str: return f"PTX line {self.line}: {self.text}"

@dataclass
class Label:
  name: str
  line: int

@dataclass
class Var:
  """A .shared/.local/.global/.const variable (module or kernel scope)."""
  name: str
  space: str
  type: str
  size: int              # bytes; 0 for an unsized extern .shared array
  align: int
  init: bytes|None = None
  extern: bool = False

@dataclass
class Param:
  name: str
  type: str
  size: int
  align: int
  offset: int

@dataclass
class Function:
  name: str
  entry: bool
  params: list[Param]
  regs: dict[str, Reg] = field(default_factory=dict)   # python name -> Reg
  vars: list[Var] = field(default_factory=list)
  body: list = field(default_factory=list)             # Instr and Label
  line: int = 0
  maxntid: int = 0      # .maxntid/.reqntid: the most threads a CTA may have (0: no limit given)
  rets: list[Param] = field(default_factory=list)      # a .func's return parameters
  defined: bool = True  # False: only a prototype (an .extern function or a forward declaration) was seen

@dataclass
class Module:
  version: str
  target: str
  address_size: int
  vars: list[Var]
  functions: dict[str, Function]
