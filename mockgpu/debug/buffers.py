"""Device addresses from tinygrad's objects, and back: a Tensor or Buffer to its (address, size), an address to the
allocation (and tinygrad Buffer) it lies in or nearest to."""
from __future__ import annotations
import gc, sys
from mockgpu.memory import AddressSpace

def tinygrad_buffers() -> list[tuple[int, int, object]]:
  """(device address, bytes, Buffer) of every allocated tinygrad Buffer whose memory has a device address (HCQ
  buffers: `_buf.va_addr`), by address. Walks the garbage collector's objects: only for the debugger's views."""
  dev = sys.modules.get("tinygrad.device")
  if dev is None: return []
  out = []
  for o in gc.get_objects():
    if isinstance(o, dev.Buffer) and o.is_allocated() and (va:=getattr(getattr(o, "_buf", None), "va_addr", None)) is not None:
      out.append((int(va), int(o.nbytes), o))
  return sorted(out, key=lambda x: x[0])

def resolve(what, size:int|None=None) -> tuple[int, int, str]:
  """(address, bytes, label) of an address range: an int address (with size), a tinygrad Buffer, or a realized Tensor."""
  if isinstance(what, int):
    if size is None: raise ValueError("an address range needs a size")
    return what, size, f"0x{what:x}+{size}"
  if hasattr(what, "uop"):  # a Tensor: its buffer must exist
    buf = what.uop.base.buffer
    if not buf.is_allocated(): raise ValueError("the Tensor is not realized: it has no device memory yet (call .realize())")
    what = buf
  if (va:=getattr(getattr(what, "_buf", None), "va_addr", None)) is None:
    raise ValueError(f"{what!r} has no device address (not an allocated buffer of an HCQ device)")
  return int(va), int(size or what.nbytes), f"buffer {what.dtype}[{what.size}] at 0x{int(va):x}"

def nearest(mem:AddressSpace, va:int) -> str:
  """Where va lies against the closest allocation (AddressSpace.nearest) and the tinygrad Buffer nearest to it there."""
  text = mem.nearest(va) or "no memory is mapped"
  m = min(mem.mappings(), key=lambda m: 0 if m.va <= va < m.end else min(abs(va - m.va), abs(va - (m.end - 1))), default=None)
  bufs = [(b, s, o) for b, s, o in tinygrad_buffers() if m is not None and m.va <= b < m.end]
  if bufs:
    b, s, o = min(bufs, key=lambda x: abs(va - x[0]))
    text += f"; nearest tinygrad buffer: {o.dtype}[{o.size}] at 0x{b:x} ({s} bytes, offset {va - b:+#x})"
  return text
