"""How every backend reads an operand: which kind of register or constant an encoded operand is, and which inputs a
program reads besides its operands, is decided here once; the numpy and C backends only say how they spell each kind
(code over arrays, C for one lane; the stepper runs the numpy backend's)."""
from __future__ import annotations
from mockgpu.compiler.rdna.operands import Unsupported, Src, SCC, VCC, EXEC, VCCZ, EXECZ, DPP_SRC
from mockgpu.compiler.rdna.semantics.lang import E, WIDTH

class Reads:
  """A backend's operand reads. self.dpp is the DPP source of the instruction being translated (or None)."""
  dpp = None

  def raw(self, r:Src, width:int, vec:bool, t:str="b32"):
    """An operand's raw bits (32, or 64 for a 64-bit operand); vec: in a vector instruction, where VGPRs may be read. A
    GFX9 SDWA source is the byte or word it selects, extended (the backend's sdwa)."""
    code = self.raw_operand(r, width, vec, t)
    return code if r.sdwa is None else self.sdwa(code, *r.sdwa)

  def raw_operand(self, r:Src, width:int, vec:bool, t:str):
    o = r.reg
    if r.quad is not None:
      if r.vgpr is None or not vec or width > 32: raise Unsupported("a quad-lane read of a non-VGPR or 64-bit operand")
      return self.raw_quad(r.vgpr, r.quad)
    if o in DPP_SRC:
      if self.dpp is None or not vec: raise Unsupported("a DPP operand outside a DPP encoding")
      return self.raw_dpp()
    if r.vgpr is not None:
      if not vec: raise Unsupported("a VGPR operand in a scalar instruction")
      return self.raw_vgpr(r.vgpr, width)
    if r.sgpr is not None: return self.raw_sgpr(o, width, vec)
    if o == SCC: return self.raw_scc(width, vec)
    if o in (VCCZ, EXECZ): return self.raw_zero(VCC if o == VCCZ else EXEC, width, vec)
    return self.raw_const(r.bits(width, t), width)

  def read(self, e:E, vec:bool):
    """An input node of a program: an operand as its ISA type, or a special value (program.Read)."""
    r = e.val
    if r.special is not None:
      return {"vcc": self.read_vcc, "lane": self.read_lane, "scc": self.read_scc, "exec": self.read_exec,
              "pc": self.read_pc}[r.special]()
    return self.typed(self.raw(r.src, WIDTH[r.isa], vec, r.isa), r.isa, r.src.hi)
