"""What an RDNA instruction that cannot run, or an access outside its window, says: the same messages on every path
(the numpy and C backends, the stepper), naming the instruction and its PC."""
from __future__ import annotations
from mockgpu.errors import GPUPageFault, InvalidInstruction, KernelTrap, UnsupportedInstruction

# the start of the message of an instruction the ISA does not define: every path raises InvalidInstruction for it.
# Here, not in decode.py, so that running cached translations (which raise through this module) imports no decoder.
INVALID = "invalid instruction: "

def at_pc(what:str, pgm:int, pc:int) -> str: return f"{what} at PC 0x{pgm + pc:x}"

def instruction_error(what:str, pgm:int, pc:int) -> UnsupportedInstruction:
  """The error of an instruction that cannot run: InvalidInstruction when the ISA does not define it (its message
  starts with INVALID), else UnsupportedInstruction."""
  return (InvalidInstruction if what.startswith(INVALID) else UnsupportedInstruction)(at_pc(what, pgm, pc))

def outside(where:str, space:str, off:int, limit:int) -> str:
  return f"{where}: {space} offset 0x{off:x} is outside its {limit} byte allocation"

def misaligned(where:str, space:str, va:int, nbytes:int) -> str:
  """An atomic whose address is not a multiple of its word size (va: the address, an LDS offset for LDS)."""
  return f"{where}: {space} atomic at 0x{va:x} is not {nbytes}-byte aligned"

def relative_error(name:str, pgm:int, pc:int, index:int, limit:int) -> UnsupportedInstruction:
  """An M0-relative register index (or the pair from it) past the registers the wave may index. The pseudocode does
  not say what hardware does there, so it is not modelled: the dispatch stops, naming the index."""
  return UnsupportedInstruction(at_pc(f"{name}: M0-relative register index {index} is past the {limit} registers the "
                                      "wave may index (what hardware does there is not modelled)", pgm, pc))

def jump_error(mem, name:str, pgm:int, pc:int, target:int) -> Exception:
  """A computed jump (s_setpc_b64, s_swappc_b64) to target, an address that is not an instruction of the decoded
  program: outside every mapping it is the instruction-fetch fault a kernel entry outside memory is; inside one, a
  target the model did not decode (the middle of an instruction, data, code no path or sweep reaches)."""
  if not any(m.va <= target < m.end for m in mem.mappings()):
    return GPUPageFault(target, 4, False, f"instruction fetch at PC 0x{target:x}, the target of {at_pc(name, pgm, pc)}")
  return UnsupportedInstruction(at_pc(f"{name}: computed jump to 0x{target:x} (kernel offset {target - pgm:+#x}), which is "
                                      "not an instruction of the decoded program", pgm, pc))

def trap_error(pgm:int, pc:int, trap_id:int) -> KernelTrap:
  """s_trap with no debugger attached: KFD's trap handler reports the wave's trap to the runtime as a queue error."""
  return KernelTrap(at_pc(f"s_trap {trap_id}: the wave trapped (trap ID {trap_id}); with no debugger attached KFD's trap "
                          "handler reports it as a queue error", pgm, pc))
