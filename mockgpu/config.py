"""Settings, read from the environment each time they are asked for (tests change them per process). Every MOCKGPU_*
variable mockgpu reads is a Setting in SETTINGS, parsed by setting(): a malformed value raises SettingError naming the
variable, the value and what it accepts; an empty one is the same as unset."""
import os
from dataclasses import dataclass
from typing import Callable
from mockgpu.errors import MockGPUError

# the device configurations mockgpu serves: tinygrad's DEV values (interface+device:renderer)
CONFIGURATIONS = ("MOCK+AMD", "MOCK+NV", "MOCK+NV:PTX", "MOCK+CUDA", "MOCK+CUDA:PTX")
# the arm64 CPU lane (mockgpu/driver/cpu.py; extra `cpu`): its own list, since Device.DEFAULT there is CPU itself and its
# reference is native DEV=CPU in another process (cpu_lane_reference); the smoke test and the op and differential suites run it
CPU_LANES = ("MOCK+CPU", "MOCK+CPU:LLVM")

def cpu_lane_reference(dev:str) -> str|None:
  """The native DEV a CPU-lane configuration is compared with (its renderer, the host's arch), or None for other DEVs:
  MOCK+CPU -> CPU, MOCK+CPU:LLVM:arm64,apple-m1 -> CPU:LLVM."""
  if not dev.upper().startswith("MOCK+CPU"): return None
  renderer = dev.split("+", 1)[1].split(":")[1:2]
  return "CPU" + (f":{renderer[0].upper()}" if renderer and renderer[0] else "")

# os.environ encodes the name on every lookup (about a microsecond, twice per kernel launch); on POSIX CPython its
# bytes-keyed dict, which os.environ and pytest's monkeypatch keep current, answers in tens of nanoseconds
_RAW = getattr(os.environ, "_data", None) if os.name == "posix" else None
_KEYS:dict[str, bytes] = {}

def env(name:str, default):
  """The environment variable's value, or default when it is unset."""
  if _RAW is None: return os.environ.get(name, default)
  if (key:=_KEYS.get(name)) is None: key = _KEYS[name] = os.fsencode(name)
  return default if (v:=_RAW.get(key)) is None else os.fsdecode(v)

# *** the settings: every MOCKGPU_* variable mockgpu reads, parsed here ***

CPU_MODELS = ("cortex-a72", "apple-m1")   # the arm64 lane's -mcpu choices, checked against numpy under unicorn 2.1.4

class SettingError(MockGPUError, ValueError):
  """A MOCKGPU_* setting whose value it does not accept: names the variable, the value and what it accepts."""

@dataclass(frozen=True)
class Setting:
  name:str
  parse:Callable[[str], object]  # the value of a set, non-empty variable; raises ValueError when malformed
  default:object                 # the value when unset (or empty)
  accepts:str                    # what it accepts, in the error's words
  malformed:str|None             # a value it refuses, for the test that walks them all; None: it accepts every value
  checked_by:str = ""            # where a value is checked that parse cannot (a board name: mockgpu.boards, UnknownBoard)

def _count(v:str) -> int:
  if (n:=int(v)) < 0: raise ValueError(v)
  return n

def _positive(v:str) -> int:
  if (n:=int(v)) < 1: raise ValueError(v)
  return n

def _seconds(v:str) -> float:
  if not (t:=float(v)) > 0: raise ValueError(v)
  return t

def _factor(v:str) -> float:
  if not (t:=float(v)) >= 0: raise ValueError(v)
  return t

def _address(v:str) -> int:
  if (a:=int(v, 0)) < 0: raise ValueError(v)
  return a

def _one_of(*choices:str) -> Callable[[str], str]:
  def parse(v:str) -> str:
    if v not in choices: raise ValueError(v)
    return v
  return parse

def _list_of(*choices:str) -> Callable[[str], frozenset]:
  def parse(v:str) -> frozenset:
    items = frozenset(x.strip() for x in v.split(",") if x.strip())
    if not items <= set(choices): raise ValueError(v)
    return items
  return parse

def _path(v:str) -> str: return v

SETTINGS:dict[str, Setting] = {s.name: s for s in (
  Setting("MOCKGPU_COUNT", _count, 6, "a whole number of GPUs per vendor, 0 or more", "abc"),
  Setting("MOCKGPU_BUDGET", _positive, 2_000_000_000, "a whole number of instructions, 1 or more", "lots"),
  Setting("MOCKGPU_EMU_FAULTADDR", _address, None, "an address, decimal or 0x-prefixed hex", "0xZZ"),
  # board names are checked where a board is selected (UnknownBoard names the value, the variable and the boards)
  Setting("MOCKGPU_NV_MODEL", _path, "", "an NVIDIA board mockgpu models (mockgpu.boards.NV_BOARDS)", "sm_999",
          "mockgpu.boards.selected_nv_board"),
  Setting("MOCKGPU_AMD_BOARD", _path, "", "an AMD board mockgpu models (mockgpu.boards.AMD_BOARDS)", "gfx9999",
          "mockgpu.boards.selected_amd_board"),
  Setting("MOCKGPU_CACHE_DIR", _path, "", "a directory, or off", None),
  Setting("MOCKGPU_REPLAY_DIR", _path, "", "a directory, or off", None),
  Setting("MOCKGPU_REPLAY_SNAPSHOT", _one_of("fault", "start"), "fault", "fault or start", "end"),
  Setting("MOCKGPU_COVERAGE", _path, None, "a file", None),
  Setting("MOCKGPU_TRACE", lambda v: "" if v.strip() == "0" else v.strip(), "", "0, 1 or a file", None),
  Setting("MOCKGPU_TIMELINE", _path, None, "a file (%p: the process id)", None),
  Setting("MOCKGPU_RDNA_NATIVE", _one_of("0", "1", "auto"), "auto", "0, 1 or auto", "fast"),
  Setting("MOCKGPU_RDNA_STENCIL", _one_of("0", "1", "auto"), "auto", "0, 1 or auto", "yes"),
  Setting("MOCKGPU_PTX_NATIVE", _one_of("0", "1", "auto"), "auto", "0, 1 or auto", "fast"),
  Setting("MOCKGPU_NATIVE", _one_of("0", "1"), "1", "0 or 1", "yes"),
  Setting("MOCKGPU_SANITIZE", _list_of("memory"), frozenset(), "a comma-separated list of: memory", "memroy"),
  Setting("MOCKGPU_CC_TIMEOUT", _seconds, 60.0, "seconds, more than 0", "soon"),
  Setting("MOCKGPU_CC_COST", _factor, 1.0, "a factor of the estimated C build time, 0 or more", "cheap"),
  Setting("MOCKGPU_CC_HISTORY", _one_of("0", "1"), "1", "0 or 1", "yes"),
  Setting("MOCKGPU_CPU_MODEL", _one_of(*CPU_MODELS), CPU_MODELS[0], f"an arm64 core the CPU lane runs ({', '.join(CPU_MODELS)})",
          "apple-m2"),
  Setting("MOCKGPU_CPU_TIMEOUT", _seconds, 120.0, "seconds, more than 0", "forever"),
)}

_parsed:dict[tuple[str, str], object] = {}  # (name, value) -> parsed value: a setting is read on hot paths

def setting(name:str):
  """The parsed value of setting `name` (a key of SETTINGS) as the environment has it now; SettingError if malformed."""
  raw = env(name, None)
  if not raw: return SETTINGS[name].default
  if (v:=_parsed.get((name, raw), _parsed)) is not _parsed: return v
  s = SETTINGS[name]
  try: v = _parsed[(name, raw)] = s.parse(raw)
  except (ValueError, TypeError): raise SettingError(f"{name}={raw!r}: expected {s.accepts}") from None
  return v

# tinygrad's in-tree mock exposes 6 GPUs of each vendor, and its suites assume it (multi-device tests shard over 4)
DEFAULT_GPU_COUNT = SETTINGS["MOCKGPU_COUNT"].default

def gpu_count() -> int:
  """How many GPUs of each vendor the mock exposes (MOCKGPU_COUNT, default 6 as in tinygrad's in-tree mock)."""
  return setting("MOCKGPU_COUNT")

def emu_fault_addr() -> int|None:
  """MOCKGPU_EMU_FAULTADDR (tinygrad's in-tree mock contract): the address a fault report carries when set, and the
  report the KFD memory-exception event (NV: the MMU-fault report) gives when the runtime asks after a hang."""
  return setting("MOCKGPU_EMU_FAULTADDR")

def instruction_budget() -> int:
  """Wave- (or warp-) instructions one dispatch may execute before it is stopped as a hang (MOCKGPU_BUDGET)."""
  return setting("MOCKGPU_BUDGET")

def nv_model() -> str:
  """MOCKGPU_NV_MODEL: the NVIDIA board (an SM target from mockgpu.boards) when DEV has no arch field; empty: boards.DEFAULT_NV_BOARD."""
  return setting("MOCKGPU_NV_MODEL")

def amd_board() -> str:
  """MOCKGPU_AMD_BOARD: the AMD board (a gfx target from mockgpu.boards) when DEV has no arch field; empty = gfx1100."""
  return setting("MOCKGPU_AMD_BOARD")

def cache_dir() -> str|None:
  """Where translated kernels are cached on disk (MOCKGPU_CACHE_DIR; 'off' disables the disk cache)."""
  d = setting("MOCKGPU_CACHE_DIR") or os.path.join(env("XDG_CACHE_HOME", None) or os.path.expanduser("~/.cache"), "mockgpu")
  return None if d == "off" else d

def publish(path:str, write:Callable, mode:str="w", prefix:str|None=None, suffix:str|None=None):
  """Write a whole file: write(f) fills a temporary file in path's directory (made if missing; prefix and suffix name
  it, so readers listing the directory can skip it), which is then renamed to path. A reader (another process, an xdist
  worker) never sees the file torn; where write raises, the temporary file is removed and the error goes on."""
  import tempfile
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with tempfile.NamedTemporaryFile(mode, dir=os.path.dirname(path), prefix=prefix, suffix=suffix, delete=False) as f:
    try: write(f)
    except BaseException:
      f.close()
      os.unlink(f.name)
      raise
  os.replace(f.name, path)

def replay_dir() -> str|None:
  """Where an EmulatorBug writes its replay file (MOCKGPU_REPLAY_DIR; default <tmp>/mockgpu-replay, 'off' writes none)."""
  import tempfile
  d = setting("MOCKGPU_REPLAY_DIR") or os.path.join(tempfile.gettempdir(), "mockgpu-replay")
  return None if d == "off" else d

def replay_snapshot() -> str:
  """MOCKGPU_REPLAY_SNAPSHOT: `fault` (default) records memory as it is when an EmulatorBug is raised; `start` copies
  the device's memory at the start of every dispatch (slow), so the replay starts from exactly what the kernel saw."""
  return setting("MOCKGPU_REPLAY_SNAPSHOT")

def coverage_file() -> str|None:
  """MOCKGPU_COVERAGE=FILE: the file every process appends instruction-coverage records to (mockgpu/coverage.py)."""
  return setting("MOCKGPU_COVERAGE")

def trace() -> str:
  """MOCKGPU_TRACE: "" (unset or 0: off), "1" (every event of the bus to stderr, one line each) or a file that every
  process appends the events to as JSON lines (mockgpu/trace.py)."""
  return setting("MOCKGPU_TRACE")

def timeline() -> str|None:
  """MOCKGPU_TIMELINE=FILE: the Chrome/Perfetto trace-event file a process writes at exit (mockgpu/timeline.py); a
  `%p` in it is replaced by the process id."""
  return setting("MOCKGPU_TIMELINE")

def native_tier(var:str) -> str:
  """MOCKGPU_RDNA_NATIVE / MOCKGPU_PTX_NATIVE: 0 never uses C, 1 uses it from the first dispatch, auto from a hot one."""
  return setting(var)

def native_enabled() -> bool:
  """MOCKGPU_NATIVE: 0 builds no C at all (numpy paths only)."""
  return setting("MOCKGPU_NATIVE") != "0"

def sanitize(what:str) -> bool:
  """Whether MOCKGPU_SANITIZE (a comma-separated list) names `what` ("memory")."""
  return what in setting("MOCKGPU_SANITIZE")

def cc_timeout() -> float:
  """MOCKGPU_CC_TIMEOUT: the seconds one C build may take before it is stopped (the kernel keeps its numpy path)."""
  return setting("MOCKGPU_CC_TIMEOUT")
