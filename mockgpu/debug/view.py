"""What a stop shows, as text: the disassembly around the PC, scalar registers, a vector register as a lane table, the
masks, LDS and global memory. Reads only the DebugTarget protocol."""
from __future__ import annotations
import re
import numpy as np
from mockgpu.debug.target import DebugTarget

FORMATS = {"x": np.uint32, "u": np.uint32, "d": np.int32, "f": np.float32, "h": np.float16, "b": np.uint8}

def disassembly(t:DebugTarget, before:int=3, after:int=5) -> str:
  at = (lambda pc: f"{pc:5d}") if t.isa == "ptx" else (lambda pc: f"0x{pc:04x}")  # PTX: source lines; RDNA: byte offsets
  return "\n".join(f"{'=>' if here else '  '} {at(pc)}  {text}" for pc, text, here in t.disassembly(None, before, after))

def where(t:DebugTarget) -> str:
  g, w = t.selected
  group, unit = ("CTA", "warp") if t.isa == "ptx" else ("core_id", "thread") if t.isa == "arm64" else ("workgroup", "wave")
  return f"{t.kernel} [{t.isa}]: {group} {g} {unit} {w} of {len(t.units())} {unit}s; {t.location()}"

def masks(t:DebugTarget) -> str:
  r, n = t.registers(), t.lanes
  return (f"EXEC 0x{r['exec']:0{n // 4}x}  VCC 0x{r['vcc']:0{n // 4}x}  SCC {r['scc']}  M0 0x{r['m0']:08x}  "
          f"({bin(r['exec']).count('1')} of {n} lanes active)")

def sgprs(t:DebugTarget, count:int|None=None) -> str:
  """s0.. up to the last non-zero one below VCC (or count), eight to a line, then the masks (RDNA); the per-lane
  registers' values in lane 0 (other targets)."""
  if t.isa == "arm64":
    from mockgpu.debug.cpu_target import registers_text
    return registers_text(t)
  if "s" not in t.registers(): return lane_registers(t, 0)
  s = t.registers()["s"][:106]
  last = int(np.flatnonzero(s)[-1]) + 1 if count is None and s.any() else (count or 8)
  rows = [f"s{i:<3d} " + " ".join(f"{int(x):08x}" for x in s[i:min(i + 8, last)]) for i in range(0, last, 8)]
  return "\n".join(rows + [masks(t)])

def register_row(t:DebugTarget, name:str) -> np.ndarray:
  """A per-lane register by name: vN of an RDNA wave, or any per-lane entry of the target's registers() (PTX: %r3)."""
  regs = t.registers()
  if (m:=re.fullmatch(r"v(\d+)", name)) is not None and "v" in regs:
    if int(m.group(1)) >= len(regs["v"]): raise KeyError(f"{name}: the wave has v0..v{len(regs['v']) - 1}")
    return regs["v"][int(m.group(1))]
  if name in regs and np.ndim(regs[name]) == 1 and len(regs[name]) == t.lanes: return np.asarray(regs[name])
  raise KeyError(f"{t.kernel} has no per-lane register {name}")

def active_lanes(t:DebugTarget) -> np.ndarray:
  """A bool per lane: EXEC's bits (RDNA) or the threads at the warp's pc (PTX)."""
  regs = t.registers()
  if "exec" in regs: return (np.uint64(regs["exec"]) >> np.arange(t.lanes, dtype=np.uint64) & np.uint64(1)).astype(bool)
  return np.asarray(regs["active"], bool)

def lane_table(t:DebugTarget, name, fmt:str="x", lanes=None) -> str:
  """A register of every lane (or the given lanes): its bits and, for fmt f/d/h, the value; '*' marks active lanes.
  name: a register name, or an RDNA VGPR number."""
  name = f"v{name}" if isinstance(name, int) else name
  row, active = register_row(t, name), active_lanes(t)
  out = [f"{name}:"]
  for l in (range(t.lanes) if lanes is None else lanes):
    x = row[l]
    bits = int(x) if x.dtype.kind == "b" else int(np.asarray(x).view(f"u{x.dtype.itemsize}"))
    value = "" if fmt in ("x", "u") or x.dtype.itemsize != 4 and fmt != "h" else f"  {value_of(bits, fmt)}"
    out.append(f"  lane {l:2d}{'*' if active[l] else ' '} 0x{bits:0{2 * x.dtype.itemsize}x}{value}")
  return "\n".join(out)

def value_of(bits:int, fmt:str):
  x = np.array([bits], np.uint32)
  if fmt == "h": return x.astype(np.uint16).view(np.float16)[0]
  return x.view(FORMATS[fmt])[0]

def dump(data:bytes, base:int, fmt:str="x") -> str:
  """Memory as words (x u d f), halves (h) or bytes (b), eight to a line, each line led by its address."""
  dt = np.dtype(FORMATS[fmt] if fmt != "h" else np.float16)
  vals = np.frombuffer(data[:len(data) // dt.itemsize * dt.itemsize], dt)
  per = 16 if dt.itemsize == 1 else 8
  lines = []
  for i in range(0, len(vals), per):
    cells = vals[i:i + per]
    text = " ".join(f"{int(v):0{2 * dt.itemsize}x}" if fmt in ("x", "b") else str(v) for v in cells)
    lines.append(f"0x{base + i * dt.itemsize:x}: {text}")
  return "\n".join(lines)

def lane_registers(t:DebugTarget, lane:int) -> str:
  """Every per-lane register's bits in one lane."""
  regs = t.registers()
  rows = [(f"v{r}", row) for r, row in enumerate(regs["v"])] if "v" in regs else \
         [(n, np.asarray(x)) for n, x in regs.items() if np.ndim(x) == 1 and len(x) == t.lanes and n != "active"]
  bits = lambda x: int(np.asarray(x[lane]).view(f'u{x.dtype.itemsize}')) if x.dtype.kind != 'b' else int(x[lane])
  return f"lane {lane}:\n" + "\n".join(f"{n:<6s} 0x{bits(x):08x}" for n, x in rows)

def stop_text(t:DebugTarget, stop) -> str:
  return f"stopped: {stop.message}\n{where(t)}\n{disassembly(t)}"
