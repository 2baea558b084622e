"""Internal errors, named and replayable.

An exception raised while a kernel runs that is not a modelled outcome is a bug in mockgpu. Modelled outcomes pass
through unchanged: every MockGPUError (GPUPageFault, UnsupportedInstruction, InstructionBudgetExceeded, PacketError,
...), NotImplementedError (a named unmodelled feature) and MemoryError. Anything else (an IndexError or TypeError out of
translated code, a numpy error, a failure in the C bridge) is turned by the executors' entry points
(emulators/rdna/executor.run_dispatch, emulators/ptx.launch) into one EmulatorBug whose message names the kernel, the
instruction (RDNA: PC and instruction; PTX: line and text), the grid and block and the path (numpy or C), and which
writes the dispatch to a replay file under MOCKGPU_REPLAY_DIR. `mockgpu replay FILE` rebuilds the address space from it
and runs the dispatch again, without tinygrad's runtime, on the same path (or another: --path).

The file (a pickled dict) holds the launch as the executor takes it (RDNA: the Dispatch registers, with the code in
memory at pgm_addr; PTX: the module text, the entry name, grid, block, parameter bytes, the module's .global
variables), the settings (MOCKGPU_*), the kernel's code object when the runtime's program is found (RDNA: the ELF), and
the memory: every mapping of the device's address space (base, size, and its non-zero pages).

Which memory: by default the mappings as they are when the error is raised (MOCKGPU_REPLAY_SNAPSHOT=fault). Copying
every mapping at every dispatch would cost the hot path far more than the dispatch itself (tinygrad's AMD device maps
about 190 MB), and there is no copy-on-write to take a cheap one. A bug that fires before the kernel's first store
(most translation bugs, and every one in a kernel's first block) therefore replays exactly; one that fires later
replays from memory the kernel has partly written, which the file and the message say ("memory as it was at the
error"). MOCKGPU_REPLAY_SNAPSHOT=start copies the mappings at the start of every dispatch (slow: for a bug that only
reproduces from the exact memory the kernel started from).

This module is the record, imported by the executors; replay_runner.py is the runner (`mockgpu replay FILE`), which
imports the executors.
"""
from __future__ import annotations
import itertools, os, pickle, re, time
import numpy as np
from mockgpu import config
from mockgpu.errors import EmulatorBug, MockGPUError
from mockgpu.memory import AddressSpace
from mockgpu.hostmem import PAGE  # the snapshot's granule: runs of non-zero host pages

from mockgpu import log
FORMAT = 1
SUFFIX = ".mgreplay"
MEMORY_STATE = {"fault": "as it was at the error; the kernel may have written to it before",
                "start": "as it was at the dispatch's start"}
_numbers = itertools.count(1)
_replaying:dict|None = None  # the record `mockgpu replay` re-runs (set by replay_runner.py): its errors name that file and write none

def modelled(e:BaseException) -> bool:
  """Whether e is an outcome mockgpu raises on purpose (passes through), not a bug in it."""
  return isinstance(e, (MockGPUError, NotImplementedError, MemoryError))

# *** memory ***

def snapshot(mem:AddressSpace) -> list[tuple[int, int, int, list[tuple[int, bytes]]]]:
  """Every mapping as (va, size, exact size, [(offset, bytes)] of its runs of non-zero pages)."""
  return [(m.va, m.size, m.exact, _runs(m.u8())) for m in mem.mappings()]

def start_snapshot(mem:AddressSpace):
  """The snapshot a dispatch takes at its start: only under MOCKGPU_REPLAY_SNAPSHOT=start (it copies all memory)."""
  return snapshot(mem) if config.replay_snapshot() == "start" else None

def _runs(u8:np.ndarray) -> list[tuple[int, bytes]]:
  n = len(u8) // PAGE
  nz = np.flatnonzero(u8[:n * PAGE].reshape(n, PAGE).any(axis=1))
  out = []
  if len(nz):
    breaks = np.flatnonzero(np.diff(nz) != 1)
    for a, b in zip(nz[np.r_[0, breaks + 1]], nz[np.r_[breaks, len(nz) - 1]] + 1):
      out.append((int(a) * PAGE, u8[a * PAGE:b * PAGE].tobytes()))
  if len(u8) % PAGE and u8[n * PAGE:].any(): out.append((n * PAGE, u8[n * PAGE:].tobytes()))
  return out

def restore(snap) -> AddressSpace:
  """An address space with the snapshot's mappings at their addresses, backed by fresh host memory."""
  mem = AddressSpace("replay")
  mem.buffers = []  # keeps the host memory alive as long as the address space
  for va, size, exact, runs in snap:
    buf = np.zeros(size, np.uint8)
    for off, data in runs: buf[off:off + len(data)] = np.frombuffer(data, np.uint8)
    mem.buffers.append(buf)
    mem.map(va, exact, buf.ctypes.data, granularity=size)  # exact rounded up to one granule: the mapped extent
  return mem

# *** the error ***

def origin(e:BaseException) -> str:
  """Where e was raised: the innermost frame, as file:line in function (paths inside mockgpu relative to it)."""
  import traceback  # here: a process whose kernels raise nothing spares its import
  tb = traceback.extract_tb(e.__traceback__)
  if not tb: return "?"
  f = tb[-1]
  name = f.filename
  here = os.path.dirname(os.path.abspath(__file__))
  if name.startswith(here): name = "mockgpu" + name[len(here):]
  return f"{name}:{f.lineno} in {f.name}"

def generated_frame(e:BaseException) -> tuple[str, int]|None:
  """(function name, line) of the innermost frame in translated code (code objects named '<mockgpu KIND KEY>')."""
  tb, found = e.__traceback__, None
  while tb is not None:
    if tb.tb_frame.f_code.co_filename.startswith("<mockgpu "): found = (tb.tb_frame.f_code.co_name, tb.tb_lineno)
    tb = tb.tb_next
  return found

def tagged_line(source:str, line:int, tag:str) -> int|None:
  """The value of the `# @tag N` comment an annotating translator put on line `line` of its source (1-based); an
  untagged line (a helper line the translator adds around an instruction) takes the next tagged one, else the last."""
  lines, pat = source.splitlines(), re.compile(rf"# @{tag} (\d+)$")
  def tag_of(i:int) -> int|None: return int(m.group(1)) if (m:=pat.search(lines[i])) else None
  for i in range(line - 1, len(lines)):
    if (v:=tag_of(i)) is not None: return v
    if i > line - 1 and lines[i].lstrip().startswith(("def ", "case ")): break  # the next function or block
  for i in range(min(line, len(lines)) - 2, -1, -1):
    if (v:=tag_of(i)) is not None: return v
    if lines[i].lstrip().startswith(("def ", "case ")): break
  return None

def bug(e:BaseException, *, vendor:str, symbol:str, path:str, where:str, grid, block, launch:dict, mem:AddressSpace,
        start=None, code_object:bytes|None=None) -> EmulatorBug:
  """The EmulatorBug for e, with its replay file written (under `mockgpu replay`: naming the file being replayed)."""
  rec = {"format": FORMAT, "vendor": vendor, "symbol": symbol, "path": path, "where": where, "grid": tuple(grid),
         "block": tuple(block), "launch": launch, "cause": (type(e).__name__, str(e)),
         "memory_state": "fault" if start is None else "start", "code_object": code_object,
         "settings": {k: v for k, v in os.environ.items() if k.startswith("MOCKGPU_")}, "pid": os.getpid(), "time": time.time()}
  if _replaying is not None:
    rec["symbol"], file, note = _replaying["symbol"], _replaying["file"], MEMORY_STATE[_replaying["memory_state"]]
  else:
    file, note = _write(rec, mem, start), MEMORY_STATE[rec["memory_state"]]
  msg = (f"mockgpu internal error (a bug in mockgpu, not a modelled GPU outcome): {type(e).__name__}: {e}\n"
         f"  kernel: {rec['symbol']} ({vendor}, {path} path)\n  at: {where}\n  launch: grid {tuple(grid)} x block {tuple(block)}\n"
         f"  raised at: {origin(e)}\n" +
         (f"  replay: mockgpu replay {file}\n  memory in the replay file: {note}" if not file.startswith("(") else f"  replay: {file}"))
  return EmulatorBug(msg, None if file.startswith("(") else file, rec["symbol"], path)

def _write(rec:dict, mem:AddressSpace, start) -> str:
  """Write the record with its memory; returns the file, or '(why none was written)'."""
  if (d:=config.replay_dir()) is None: return "(not written: MOCKGPU_REPLAY_DIR=off)"
  name = re.sub(r"[^\w.-]", "_", rec["symbol"])[:80] or "kernel"
  file = os.path.join(d, f"{name}-{os.getpid()}-{next(_numbers)}{SUFFIX}")
  try:
    rec["memory"] = start if start is not None else snapshot(mem)
    config.publish(file, lambda f: pickle.dump(rec, f, protocol=pickle.HIGHEST_PROTOCOL), "wb")
  except Exception as e:  # the bug must still be reported when its file cannot be written
    log.error("could not write the replay file %s: %s", file, e)
    return f"(not written: {type(e).__name__}: {e})"
  log.error("EmulatorBug in kernel %s: replay file %s", rec["symbol"], file)
  return file
