"""Settings, read from the environment each time they are asked for (tests change them per process)."""
import os

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

def _int(name:str, default:int) -> int: return default if (v:=env(name, None)) is None else int(v)

# tinygrad's in-tree mock exposes 6 GPUs of each vendor, and its suites assume it (multi-device tests shard over 4)
DEFAULT_GPU_COUNT = 6

def gpu_count() -> int:
  """How many GPUs of each vendor the mock exposes (MOCKGPU_COUNT, default 6 as in tinygrad's in-tree mock)."""
  return _int("MOCKGPU_COUNT", DEFAULT_GPU_COUNT)

def emu_fault_addr() -> int|None:
  """MOCKGPU_EMU_FAULTADDR (tinygrad's in-tree mock contract): the address a fault report carries when set, and the
  report the KFD memory-exception event (NV: the MMU-fault report) gives when the runtime asks after a hang."""
  return None if (v:=env("MOCKGPU_EMU_FAULTADDR", None)) in (None, "") else int(v, 0)

def instruction_budget() -> int:
  """Wave- (or warp-) instructions one dispatch may execute before it is stopped as a hang (MOCKGPU_BUDGET)."""
  return _int("MOCKGPU_BUDGET", 2_000_000_000)

def nv_model() -> str:
  """MOCKGPU_NV_MODEL: the NVIDIA board (an SM target from mockgpu.boards) when DEV has no arch field; empty: boards.DEFAULT_NV_BOARD."""
  return env("MOCKGPU_NV_MODEL", "")

def amd_board() -> str:
  """MOCKGPU_AMD_BOARD: the AMD board (a gfx target from mockgpu.boards) when DEV has no arch field; empty = gfx1100."""
  return env("MOCKGPU_AMD_BOARD", "")

def cache_dir() -> str|None:
  """Where translated kernels are cached on disk (MOCKGPU_CACHE_DIR; 'off' disables the disk cache)."""
  d = env("MOCKGPU_CACHE_DIR", None) or os.path.join(env("XDG_CACHE_HOME", None) or os.path.expanduser("~/.cache"), "mockgpu")
  return None if d == "off" else d

def replay_dir() -> str|None:
  """Where an EmulatorBug writes its replay file (MOCKGPU_REPLAY_DIR; default <tmp>/mockgpu-replay, 'off' writes none)."""
  import tempfile
  d = env("MOCKGPU_REPLAY_DIR", None) or os.path.join(tempfile.gettempdir(), "mockgpu-replay")
  return None if d == "off" else d

def replay_snapshot() -> str:
  """MOCKGPU_REPLAY_SNAPSHOT: `fault` (default) records memory as it is when an EmulatorBug is raised; `start` copies
  the device's memory at the start of every dispatch (slow), so the replay starts from exactly what the kernel saw."""
  v = env("MOCKGPU_REPLAY_SNAPSHOT", "fault")
  if v not in ("fault", "start"): raise ValueError(f"MOCKGPU_REPLAY_SNAPSHOT={v!r}: expected fault or start")
  return v

def coverage_file() -> str|None:
  """MOCKGPU_COVERAGE=FILE: the file every process appends instruction-coverage records to (mockgpu/coverage.py)."""
  return env("MOCKGPU_COVERAGE", None) or None

def trace() -> str:
  """MOCKGPU_TRACE: "" (unset or 0: off), "1" (every event of the bus to stderr, one line each) or a file that every
  process appends the events to as JSON lines (mockgpu/trace.py)."""
  v = env("MOCKGPU_TRACE", "0").strip()
  return "" if v in ("", "0") else v

def timeline() -> str|None:
  """MOCKGPU_TIMELINE=FILE: the Chrome/Perfetto trace-event file a process writes at exit (mockgpu/timeline.py); a
  `%p` in it is replaced by the process id."""
  return env("MOCKGPU_TIMELINE", None) or None
