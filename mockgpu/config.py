"""Settings, read from the environment each time they are asked for (tests change them per process)."""
import os

# the device configurations mockgpu serves: tinygrad's DEV values (interface+device:renderer)
CONFIGURATIONS = ("MOCK+AMD", "MOCK+NV", "MOCK+NV:PTX", "MOCK+CUDA", "MOCK+CUDA:PTX")

def _int(name:str, default:int) -> int: return int(os.environ.get(name, default))

def gpu_count() -> int:
  """How many GPUs of each vendor the mock exposes (MOCKGPU_COUNT, default 1)."""
  return _int("MOCKGPU_COUNT", 1)

def instruction_budget() -> int:
  """Wave- (or warp-) instructions one dispatch may execute before it is stopped as a hang (MOCKGPU_BUDGET)."""
  return _int("MOCKGPU_BUDGET", 2_000_000_000)

def nv_model() -> str:
  """The NVIDIA board the mock models (MOCKGPU_NV_MODEL: sm_89 default, sm_86, sm_120)."""
  return os.environ.get("MOCKGPU_NV_MODEL", "sm_89")

def cache_dir() -> str|None:
  """Where translated kernels are cached on disk (MOCKGPU_CACHE_DIR; 'off' disables the disk cache)."""
  d = os.environ.get("MOCKGPU_CACHE_DIR", os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mockgpu"))
  return None if d == "off" else d

def trace() -> bool:
  """MOCKGPU_TRACE=1 logs every ioctl, packet and launch to stderr."""
  return bool(_int("MOCKGPU_TRACE", 0))
