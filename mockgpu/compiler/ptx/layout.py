"""Where a PTX kernel's variables live: the state-space windows of the generic address space, each kernel's .shared and
.local offsets, and the module's .global/.const images. Both backends and the executor read it.

State-space addresses: .shared and .local addresses are offsets in the CTA's (thread's) window; a generic address of
one of those windows (cvta) carries the window's tag in its top byte; module-scope .global/.const variables live in a
window of their own; every other generic address is a global one (the device's AddressSpace).
"""
from __future__ import annotations
from typing import TYPE_CHECKING
from mockgpu.errors import UnsupportedInstruction
if TYPE_CHECKING: from mockgpu.compiler.ptx import syntax as P   # annotations only: the numpy runtime reads the windows

SHARED_WINDOW = 0xFE00_0000_0000_0000
LOCAL_WINDOW = 0xFD00_0000_0000_0000
MODULE_WINDOW = 0xFC00_0000_0000_0000   # module-scope .global variables
CONST_WINDOW = 0xFB00_0000_0000_0000    # module-scope .const variables
WINDOW_MASK = 0xFF00_0000_0000_0000
LOW_BITS = 0x00FF_FFFF_FFFF_FFFF        # a window address without its tag
LOWEST_WINDOW = CONST_WINDOW            # any address below it is a global one
WINDOWS = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "const": CONST_WINDOW}   # cvta's tag of each space

class Layout:
  """Where a kernel's variables live: offsets in the shared/local windows and in the module windows."""
  def __init__(self, fn:P.Function, module_offsets:dict[str, tuple[str, int]]):
    self.symbols = dict(module_offsets)  # name -> (space, state-space address)
    self.shared_size = self.local_size = 0
    self.dynamic_shared = None
    for v in fn.vars:
      if v.space == "shared":
        self.shared_size = _align(self.shared_size, v.align)
        if v.extern and v.size == 0: self.dynamic_shared = v; continue
        self.symbols[v.name] = ("shared", self.shared_size)
        self.shared_size += v.size
      elif v.space == "local":
        self.local_size = _align(self.local_size, v.align)
        self.symbols[v.name] = ("local", self.local_size)
        self.local_size += v.size
      else: raise UnsupportedInstruction(f"PTX: .{v.space} variable {v.name} inside a function is not supported")
    if self.dynamic_shared is not None:
      # dynamic shared memory starts after the static variables, at the extern array's alignment (at least 16)
      self.dynamic_base = _align(self.shared_size, max(16, self.dynamic_shared.align))
      self.symbols[self.dynamic_shared.name] = ("shared", self.dynamic_base)
    else: self.dynamic_base = self.shared_size
    for p in fn.params: self.symbols[p.name] = ("param", p.offset)

def _align(x:int, a:int) -> int: return (x + a - 1) // a * a

def entries(m:P.Module) -> tuple[list[tuple[P.Function, Layout]], bytes, bytes]:
  """The entry functions of a parsed module with their layouts, and the images of its .global and .const variables."""
  offsets, ginit, cinit = {}, bytearray(), bytearray()
  for v in m.vars:
    if v.space == "shared": continue
    buf = ginit if v.space == "global" else cinit
    off = (len(buf) + v.align - 1) // v.align * v.align
    buf.extend(bytes(off - len(buf)) + (v.init or bytes(v.size)))
    offsets[v.name] = ("global", MODULE_WINDOW + off) if v.space == "global" else ("const", off)
  shared_vars = [v for v in m.vars if v.space == "shared"]
  out = []
  for fn in (f for f in m.functions.values() if f.entry):
    fn.vars = shared_vars + fn.vars
    out.append((fn, Layout(fn, offsets)))
  return out, bytes(ginit), bytes(cinit)
