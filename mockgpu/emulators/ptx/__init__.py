"""The PTX executor: PTX text -> Python over numpy (translated once, cached), run with every thread of a launch at once.

  mod = load_module(ptx_text); k = mod.kernel(name)
  stats = launch(mem, k, grid, block, params, dynamic_shared=0)

See mockgpu/compiler/ptx/semantics.py for what each instruction computes, compiler/ptx/backends/numpy.py for the
execution model and the translation, backends/numerics.py for floating-point exactness and the error bounds of the
approximate instructions, backends/numpy_runtime.py for the memory spaces (backends/numpy_names.py: what translated code sees).
"""
from __future__ import annotations
import functools, hashlib, os, time
from dataclasses import dataclass
from typing import TYPE_CHECKING
import numpy as np
from mockgpu import config, events, replay
from mockgpu.boards import NVBoard, selected_nv_board
from mockgpu.errors import GPUPageFault, UnsupportedInstruction, LaunchRefused
from mockgpu.compiler import cache
from mockgpu.compiler.cache import translated
# a kernel whose translation is cached (memory or disk) runs with the numpy runtime alone: the parser, the semantics
# table and the numpy backend (about half of this package's import) are imported by a translation, the stepper by a
# debugger, at their first use
from mockgpu.compiler.ptx.backends.numpy_runtime import Env, JournalEnv, TracedEnv, BatchShape, ModuleMemory, fault_context
from mockgpu.emulators.ptx import native
if TYPE_CHECKING: from mockgpu.compiler.ptx.backends import stepper as stepper_backend

__all__ = ["load_module", "launch", "PTXModule", "PTXKernel", "LaunchStats", "Launch", "stepper", "run_stepped"]

def translator_files() -> list[str]:
  """The files whose text decides a numpy translation: every Python file of the PTX layer (compiler/ptx: parsing, the
  table, both backends and the numpy runtime with the names the translated code runs with)."""
  pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the mockgpu package
  ptx = os.path.join(pkg, "compiler", "ptx")
  files = [os.path.join(d, f) for d, _, fs in os.walk(ptx) for f in fs if f.endswith(".py")]
  return sorted(files)

def _digest(files:list[str]) -> str:
  h = hashlib.sha256(b"ptx-2")
  for path in files:
    h.update(os.path.basename(path).encode())
    with open(path, "rb") as f: h.update(f.read())
  return h.hexdigest()[:16]

def _translator_version() -> str:
  """Changes whenever the translator's source does, so a disk cache never serves code from an older translator; kept
  per machine under the files' stamps (cache.source_version)."""
  files = translator_files()
  return cache.source_version("ptx", files, lambda: (_digest(files), files))

VERSION = _translator_version()
# threads run together per batch of CTAs: enough to amortise Python per instruction, few enough that a kernel's live
# registers (64 KiB each at 16K lanes) stay in a 4 MiB L2 (measured: matmul_1024 20% faster than at 128K, the rest even)
BATCH_THREADS = 1 << 14

@dataclass
class LaunchStats:
  threads: int
  warp_instructions: int
  thread_instructions: int
  seconds: float
  native: bool = False   # run by the kernel's C translation

class PTXKernel:
  """An entry function of a loaded module: its parameter layout, memory needs and translated code."""
  def __init__(self, module:"PTXModule", meta:dict, ns:dict):
    self.module, self.name, self.py = module, meta["name"], meta["py"]
    self.fn, self.unmasked = ns[self.py], ns[self.py + "_u"]
    self._masked = self.eager_masked = ns.get(self.py + "_m")   # translated with the module where it may diverge
    self.params: list[tuple[str, int, int, int]] = [tuple(p) for p in meta["params"]]
    self.param_size: int = meta["param_size"]
    self.shared_size: int = meta["shared"]
    self.dynamic_base: int = meta["dynamic_base"]
    self.local_size: int = meta["local"]
    self.instructions: int = meta["instructions"]
    self.max_threads: int|None = meta["maxntid"] or None  # .maxntid/.reqntid; None: the board's limit
    self.tier = native.Tier(self.instructions)   # its way to C: the seconds the numpy path has spent on it
  def __repr__(self): return f"<PTXKernel {self.name} params={self.params} shared={self.shared_size}>"

  def masked(self, state:dict) -> dict|None:
    """A batch whose threads diverged: its masked variant runs from the state the unmasked one left (its locals)
    until they reconverge, then the unmasked one resumes; the state of a further divergence, or None at the end.
    The masked variant is translated at the kernel's first divergence (backends/numpy.py: translate_function)."""
    if self._masked is None: self._masked = self.module.masked_namespace()[self.py + "_m"]
    return self.unmasked(**self._masked(**state))

class PTXModule:
  def __init__(self, ns:dict, text:str):
    meta, self.text = ns["_META"], text
    self.version, self.target = meta["version"], meta["target"]
    self.memory = ModuleMemory(*meta["globals"], *meta["consts"])
    self.kernels = {k["name"]: PTXKernel(self, k, ns) for k in meta["kernels"]}
    self._masked_ns: dict|None = None
  def masked_namespace(self) -> dict:
    """The module's masked variants (translated, or read from the translation cache, at the first divergence)."""
    if self._masked_ns is None:
      text = self.text
      code = translated("ptx-masked", VERSION, text.encode(), lambda: translate_module(text, masked=True))
      exec(code, ns := {})
      self._masked_ns = ns
    return self._masked_ns

  def kernel(self, name:str) -> PTXKernel:
    if name not in self.kernels: raise KeyError(f"PTX module has no entry {name!r} (entries: {', '.join(self.kernels) or 'none'})")
    return self.kernels[name]

_modules: dict[str, PTXModule] = {}

def load_module(ptx:str|bytes) -> PTXModule:
  """Parse and translate a PTX module once per text (memory) and once per machine (disk cache)."""
  text = _text(ptx)
  text = text.rstrip("\x00")
  if (mod := _modules.get(text)) is not None: return mod
  try: code = translated("ptx", VERSION, text.encode(), lambda: translate_module(text))
  except UnsupportedInstruction as e:
    events.notify("kernel_rejected", isa="ptx", text=text, error=e)  # coverage
    raise
  ns: dict = {}
  exec(code, ns)
  _modules[text] = mod = PTXModule(ns, text)
  return mod

def _text(ptx) -> str:
  """The module's text; bytes that are not UTF-8 are not PTX (ptxas rejects them): PTXSyntaxError naming where."""
  if not isinstance(ptx, (bytes, bytearray, memoryview)): return ptx
  try: return bytes(ptx).decode()
  except UnicodeDecodeError as e:
    line = bytes(ptx)[:e.start].count(b"\n") + 1
    from mockgpu.compiler.ptx.syntax import PTXSyntaxError
    raise PTXSyntaxError(f"PTX line {line}: byte 0x{bytes(ptx)[e.start]:02x} at offset {e.start} is not UTF-8 text") from None

def translate_module(text:str, ctx_type:type|None=None, masked:bool=False) -> str:
  """Python source for a whole module (the numpy backend's translation of the parsed text; ctx_type: its Ctx), or of
  its masked variants."""
  from mockgpu.compiler.ptx.backends import numpy as numpy_backend
  return numpy_backend.translate_module(_parsed(text), ctx_type or numpy_backend.Ctx, masked)

_parsed_modules: dict[str, object] = {}

def _parsed(text:str):
  """The parsed module, kept for the last few texts: a kernel that diverges at its first dispatch has its masked
  variants translated just after its unmasked ones (the translators read the parsed module, never change it)."""
  from mockgpu.compiler.ptx import parser as P
  if (m := _parsed_modules.get(text)) is None:
    if len(_parsed_modules) >= 4: del _parsed_modules[next(iter(_parsed_modules))]
    m = _parsed_modules[text] = P.parse(text)
  return m

_shapes: dict[tuple, BatchShape] = {}

def _batch_shape(block:tuple, nctas:int, warp:int) -> BatchShape:
  """Thread-index arrays are the same for every launch of a shape (kernels only read them): build each once."""
  if (shape := _shapes.get((block, nctas, warp))) is None:
    if len(_shapes) >= 16: del _shapes[next(iter(_shapes))]
    shape = _shapes[(block, nctas, warp)] = BatchShape(block, nctas, warp)
  return shape

def launch(mem, k:PTXKernel, grid:tuple[int, int, int], block:tuple[int, int, int], params:bytes, dynamic_shared:int=0,
           board:NVBoard|None=None, trace:list|None=None) -> LaunchStats:
  """Run kernel k over grid x block threads of `board` (default: the process's selected NV board), whose limits
  refuse a launch with LaunchRefused. With `trace` (a list), the launch runs on the numpy path and appends the blocks
  each batch of warps ran (runtime.TracedEnv): the PC sampler's input. Raises GPUPageFault, UnsupportedInstruction, InstructionBudgetExceeded;
  an exception that is not a modelled outcome becomes an EmulatorBug (see mockgpu/replay.py)."""
  board = board or selected_nv_board()
  grid, block, params = _checked(k, grid, block, params, dynamic_shared, board)
  # an entered debug session (mockgpu/debug/ptx_target.py) runs the launches it debugs on the stepper
  if (debugged:=events.intercepted("ptx_launch", mem, k, grid, block, params, dynamic_shared)) is not None: return debugged
  tpc = block[0] * block[1] * block[2]
  nctas = grid[0] * grid[1] * grid[2]
  per_batch = max(1, BATCH_THREADS // tpc)
  counters, budget = [0, 0], config.instruction_budget()
  mode, start = native.mode(), replay.start_snapshot(mem)  # bad settings raise here, not as a bug
  nk = None
  try:
    nk = None if mode == "0" or trace is not None else _native_kernel(k, mode)   # a first C build is not the launch's time
    # coverage and the C-launch counter: sent before the kernel runs, so a launch that faults in C counts too
    events.notify("kernel_ran", isa="ptx", kernel=k, native=nk is not None)
    st = time.perf_counter()
    if nk is not None:
      threads = native.launch(nk, mem, k, grid, block, params, dynamic_shared, budget, board.warp_size)
      counters = [-(-threads // board.warp_size), threads]   # the C path counts thread-instructions only
    else:
      t1 = time.thread_time()  # CPU seconds, as the build estimate's
      with np.errstate(all="ignore"):
        for first in range(0, nctas, per_batch):
          shape = _batch_shape(block, min(per_batch, nctas - first), board.warp_size)
          args = (mem, k, k.module.memory, grid, shape, first, params, dynamic_shared, budget, counters)
          k.fn(Env(*args) if trace is None else TracedEnv(*args, trace=trace))
      k.tier.ran(time.thread_time() - t1)
  except GPUPageFault as e: raise fault_context(e, mem, k)
  except Exception as e:
    if replay.modelled(e): raise
    raise _bug(e, mem, k, grid, block, params, dynamic_shared, nk, start) from e
  stats = LaunchStats(tpc * nctas, counters[0], counters[1], time.perf_counter() - st, nk is not None)
  events.notify("launch", isa="ptx", groups=stats.threads, instructions=stats.warp_instructions, seconds=stats.seconds,
                thread_instructions=stats.thread_instructions)
  return stats

def launch_fields(k:PTXKernel, grid, block, dynamic_shared:int, stats:LaunchStats) -> dict:
  """What the trace's `dispatch` event says of a PTX launch."""
  return {"kernel": k.name, "grid": list(grid), "block": list(block), "shared_bytes": k.shared_size + dynamic_shared,
          "local_bytes_per_thread": k.local_size, "threads": stats.threads, "instructions": stats.warp_instructions,
          "thread_instructions": stats.thread_instructions, "seconds": stats.seconds, "path": "C" if stats.native else "numpy"}

def _checked(k:PTXKernel, grid, block, params, dynamic_shared:int, board:NVBoard|None) -> tuple[tuple, tuple, bytes]:
  """The launch's dimensions and parameters, refused (ValueError, LaunchRefused) where the kernel or board cannot run them."""
  grid, block = tuple(int(x) for x in grid), tuple(int(x) for x in block)
  if len(grid) != 3 or len(block) != 3 or min(grid + block) < 1:
    raise LaunchRefused(f"kernel {k.name}: bad launch dimensions grid={grid} block={block}")
  if (bad:=(board or selected_nv_board()).launch_error(k, grid, block, dynamic_shared)) is not None: raise LaunchRefused(bad[1])
  params = bytes(params)
  if len(params) < k.param_size: raise ValueError(f"kernel {k.name} takes {k.param_size} bytes of parameters, got {len(params)}")
  return grid, block, params

# *** the reference stepper (compiler/ptx/backends/stepper.py) ***

@dataclass
class Launch:
  """What a launch is given: the device's memory, the kernel, its dimensions and parameter bytes."""
  mem: object
  kernel: PTXKernel
  grid: tuple
  block: tuple
  params: bytes
  dynamic_shared: int = 0

def step_program(k:PTXKernel) -> stepper_backend.Program:
  """The kernel's instructions compiled one by one for the stepper (once per kernel)."""
  from mockgpu.compiler.ptx import parser as P
  from mockgpu.compiler.ptx.layout import entries
  from mockgpu.compiler.ptx.backends import stepper as stepper_backend
  if getattr(k, "_step_program", None) is None:
    fn, layout = next((f, l) for f, l in entries(P.parse(k.module.text))[0] if f.name == k.name)
    k._step_program = stepper_backend.program_of(fn, layout)
  return k._step_program

def stepper(l:Launch, cta:tuple[int, int, int]=(0, 0, 0), board:NVBoard|None=None, history:bool=True) -> stepper_backend.Stepper:
  """The reference stepper of one CTA of launch l: special registers, parameters and memories as launch() gives
  them (the same checked AddressSpace: a miss is the same GPUPageFault), every write journaled so steps undo."""
  from mockgpu.compiler.ptx.backends import numpy_names, stepper as stepper_backend
  board = board or selected_nv_board()
  grid, block, params = _checked(l.kernel, l.grid, l.block, l.params, l.dynamic_shared, board)
  if not all(0 <= c < g for c, g in zip(cta, grid)): raise ValueError(f"CTA {cta} is outside the grid {grid}")
  linear = cta[0] + grid[0] * (cta[1] + grid[1] * cta[2])
  env = JournalEnv(l.mem, l.kernel, l.kernel.module.memory, grid, BatchShape(block, 1, board.warp_size), linear, params, l.dynamic_shared,
                   config.instruction_budget(), [0, 0])
  return stepper_backend.Stepper(step_program(l.kernel), env, vars(numpy_names), board.warp_size, history, tuple(cta))

def ctas(grid:tuple) -> list[tuple[int, int, int]]:
  """The CTAs of a grid in launch order (x fastest)."""
  return [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]

def run_stepped(l:Launch) -> int:
  """Run a whole launch on the stepper, CTA after CTA (the oracle of the fast paths); the steps taken."""
  return sum(stepper(l, c, history=False).run() for c in ctas(tuple(l.grid)))

# *** naming an internal error (mockgpu/replay.py) ***

def _bug(e:Exception, mem, k:PTXKernel, grid, block, params:bytes, dynamic_shared:int, nk, start):
  launch = {"ptx": k.module.text, "entry": k.name, "grid": grid, "block": block, "params": params,
            "dynamic_shared": dynamic_shared, "globals": k.module.memory.globals.data.tobytes()}
  where = ("PTX line not known: the C path runs whole threads and stops at an instruction only on a fault or a budget "
           "stop; the error came from its bridge") if nk is not None else _where_numpy(e, k)
  return replay.bug(e, vendor=f"NVIDIA PTX {k.module.target}", symbol=k.name, path="C" if nk is not None else "numpy",
                    where=where, grid=grid, block=block, launch=launch, mem=mem, start=start, code_object=k.module.text.encode())

def _where_numpy(e:Exception, k:PTXKernel) -> str:
  """The PTX line the numpy path was at: the translated code's line in the traceback, mapped back to the PTX."""
  if (frame:=replay.generated_frame(e)) is None: return "PTX line not known: raised outside the translated code"
  lazy = frame[0].endswith("_m") and k.eager_masked is None   # the masked variant of its own module
  try: line = replay.tagged_line(translate_module(k.module.text, _annotating(), lazy), frame[1], "ptx")
  except Exception: line = None  # naming the line must not hide the error itself
  if line is None: return f"PTX line not known: raised in the translated code's {frame[0]}"
  return f"PTX line {line}: {' '.join(k.module.text.splitlines()[line - 1].split())}"

@functools.cache
def _annotating() -> type:
  """The translator's context with every line it emits tagged with its instruction's PTX line (`# @ptx N`). The lines
  are the same as the cached translation's, so a traceback's line in it names the instruction. Made at the first
  error that needs it (the translator's import is a translation's)."""
  from mockgpu.compiler.ptx.backends import numpy as numpy_backend
  class _Annotating(numpy_backend.Ctx):
    def emit(self, s:str):
      if s.startswith("case "): self.ins = None  # a block's first lines (its budget tick) belong to no instruction
      super().emit(s if self.ins is None else f"{s}  # @ptx {self.ins.line}")
  return _Annotating

def _native_kernel(k:PTXKernel, mode:str):
  """The kernel's C translation once it pays (see native.py), else None; mode is the MOCKGPU_PTX_NATIVE setting."""
  return k.tier.native(mode, lambda: native.key(k), lambda key: native.translate(k, key), native.cached)
