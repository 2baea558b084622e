"""What an RDNA instruction that cannot run, or an access outside its window, says: the same messages on every path
(the numpy and C backends, the stepper), naming the instruction and its PC."""
from __future__ import annotations
from mockgpu.errors import InvalidInstruction, UnsupportedInstruction
from mockgpu.compiler.rdna.decode import INVALID

def at_pc(what:str, pgm:int, pc:int) -> str: return f"{what} at PC 0x{pgm + pc:x}"

def instruction_error(what:str, pgm:int, pc:int) -> UnsupportedInstruction:
  """The error of an instruction that cannot run: InvalidInstruction when the ISA does not define it (its message
  starts with decode.INVALID), else UnsupportedInstruction."""
  return (InvalidInstruction if what.startswith(INVALID) else UnsupportedInstruction)(at_pc(what, pgm, pc))

def outside(where:str, space:str, off:int, limit:int) -> str:
  return f"{where}: {space} offset 0x{off:x} is outside its {limit} byte allocation"

def misaligned(where:str, space:str, va:int, nbytes:int) -> str:
  """An atomic whose address is not a multiple of its word size (va: the address, an LDS offset for LDS)."""
  return f"{where}: {space} atomic at 0x{va:x} is not {nbytes}-byte aligned"
