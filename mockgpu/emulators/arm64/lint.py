"""capstone over arm64 kernels: one instruction's text for fault reports, and the load-time lints.

The lints refuse a kernel (KernelLint) that
- reads or writes x18 (w18): the platform register, which macOS clobbers on a context switch and Windows holds the TEB
  pointer in; tinygrad compiles with -ffixed-x18 (clang) / +reserve-x18 (LLVM), so a use means that flag was lost;
- issues a system instruction (svc, hvc, smc, brk, hlt, eret, mrs/msr other than the FP control and status registers,
  sys, dc, ic, tlbi, wfi, wfe): a tinygrad kernel is pure computation on its buffers.
Only the ELF's executable sections (and jit_loader's CALL26 trampolines) are read: .rodata constants are not code.
"""
from __future__ import annotations
import functools
from mockgpu.errors import MockGPUError

class KernelLint(MockGPUError):
  """An arm64 kernel refused when it loads: names the kernel, the rule, and each offending instruction with its offset."""

SYSTEM = {"svc", "hvc", "smc", "brk", "hlt", "eret", "sys", "sysl", "dc", "ic", "tlbi", "at", "wfi", "wfe", "sev", "sevl"}
FP_SYSREGS = {"fpcr", "fpsr"}  # what mrs/msr may touch: rounding mode and exception flags are the kernel's own

@functools.cache
def _cs():
  import capstone
  cs = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
  cs.detail = True
  return cs

def disassemble_one(code:bytes, addr:int) -> str:
  ins = next(_cs().disasm_lite(code, addr, 1), None)
  return f"{ins[2]} {ins[3]}".strip() if ins else f".word {int.from_bytes(code[:4], 'little'):#010x} (not an instruction)"

def disassemble(code:bytes, addr:int) -> list[tuple[int, str]]:
  """(address, text) of each instruction; a word capstone cannot decode is shown as .word."""
  out, off = [], 0
  while off + 4 <= len(code):
    out.append((addr + off, disassemble_one(code[off:off+4], addr + off)))
    off += 4
  return out

def _uses_x18(ins) -> bool:
  regs = {ins.reg_name(r) for r in ins.regs_access()[0] + ins.regs_access()[1]}
  return bool(regs & {"x18", "w18"})

def problems(code:bytes, offset:int=0) -> list[str]:
  """Each instruction a lint rule refuses, as '+offset: text (rule)' (offset: where code lies in the kernel's image)."""
  out = []
  for ins in _cs().disasm(code, offset):
    rule = None
    if ins.mnemonic in SYSTEM: rule = "system instruction"
    elif ins.mnemonic in ("mrs", "msr") and not any(r in ins.op_str for r in FP_SYSREGS): rule = "system register access"
    elif _uses_x18(ins): rule = "uses x18, the platform register (lost -ffixed-x18 / +reserve-x18)"
    if rule: out.append(f"+{ins.address:#x}: {ins.mnemonic} {ins.op_str} ({rule})")
  return out

def check(name:str, code_ranges:list[tuple[int, bytes]]):
  """Raise KernelLint for the kernel when any instruction of its code ranges [(offset, bytes)] breaks a rule."""
  found = [p for off, code in code_ranges for p in problems(code, off)]
  if found:
    raise KernelLint(f"arm64 kernel {name} refused at load: {len(found)} instruction(s) break the lane's rules: " + "; ".join(found[:8]))
