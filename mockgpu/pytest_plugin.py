"""pytest plugin (entry point `mockgpu`) for suites that run tinygrad on mock devices.

- The header names DEV, the GPUs per vendor, the AMD and NV boards and the settings that are set.
- A test that leaves a tinygrad device in a sticky error state (an HCQ device's `error_state`, a CUDA context after
  error 700) would fail every later test of its process. Under pytest-xdist (`--dist load`, the default of `-n`, or
  `worksteal`) the plugin ends that worker once the test's reports are sent, so xdist starts a fresh one and reports
  the crash against that same test: it is the only red test. `--mockgpu-keep-worker` (or `-p no:mockgpu`) turns this
  off. Without xdist, or under a scope scheduler (which would rerun the crashed test), the plugin only warns.
- The `mockgpu` fixture hands a test the machine of its process (`.system`: devices and queues, `.stats`: launch
  counters, `.sticky()`: the devices now in a sticky error state) to assert on.
"""
import os, sys
import pytest

from mockgpu import log

def pytest_addoption(parser):
  parser.addoption("--mockgpu-keep-worker", action="store_true", default=False,
                   help="mockgpu: keep a pytest-xdist worker whose test left a tinygrad device in a sticky error state")

def pytest_report_header(config):
  from mockgpu import config as mcfg, boards, __version__
  settings = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("MOCKGPU_"))
  return (f"mockgpu {__version__}: DEV={os.environ.get('DEV', '(unset)')}, {mcfg.gpu_count()} GPU(s) per vendor, "
          f"boards {boards.selection_summary()}, cache {mcfg.cache_dir()}" + (f", {settings}" if settings else ""))

def sticky_errors() -> list[str]:
  """The tinygrad devices of this process that every later operation would fail on: HCQ devices with an error_state,
  and CUDA devices whose mock context has a sticky error. Looks only at modules already imported; imports nothing.
  A test that faults the mock CUDA driver directly, without a tinygrad device, leaves nothing for later tests."""
  out = []
  if (dev_mod:=sys.modules.get("tinygrad.device")) is None: return out
  cuda = sys.modules.get("mockgpu.driver.cuda")
  for name in sorted(getattr(dev_mod.Device, "_opened_devices", ())):
    dev = dev_mod.Device[name]  # already opened: a cache look-up
    if (err:=getattr(dev, "error_state", None)) is not None: out.append(f"{name}: {type(err).__name__}: {err}")
    if cuda is not None and (ctx:=getattr(dev, "context", None)) is not None:
      if isinstance(c:=cuda._handles.get(cuda._addr(ctx)), cuda.Context) and c.error: out.append(f"{name}: CUDA error {c.error} (sticky)")
  return out

class Machine:
  """What the `mockgpu` fixture gives a test: this process's mock machine and its counters."""
  @property
  def system(self):
    """The machine tinygrad's mock devices live on (bridge.machine()); the bridge is loaded once DEV names a MOCK interface."""
    from mockgpu import bridge
    return bridge.machine()
  @property
  def stats(self):
    from mockgpu import system
    return system.stats
  def sticky(self) -> list[str]: return sticky_errors()

@pytest.fixture
def mockgpu() -> Machine: return Machine()

def _end_worker(config, report, errors:list[str]):
  msg = f"mockgpu: {report.nodeid} left {'; '.join(errors)}: ending this pytest-xdist worker so later tests start clean"
  log.error(msg)
  sys.stderr.write(msg + "\n")
  sys.stderr.flush()
  os._exit(3)  # xdist reports the crash against this (already reported) test and starts a fresh worker

@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
  if report.when != "teardown" or not (errors:=sticky_errors()): return
  config = _CONFIG.get("config")
  # only the load and worksteal schedulers count a crashed worker's current test as done; the scope schedulers
  # (loadfile, loadscope, loadgroup) would hand it to the next worker, which would crash on it again
  dist = getattr(config, "workerinput", {}).get("mockgpu_dist") if config is not None else None
  if config is None or config.getoption("mockgpu_keep_worker") or not os.environ.get("PYTEST_XDIST_WORKER") or dist not in ("load", "worksteal"):
    log.warning("mockgpu: %s left %s; later tests of this process will fail on it", report.nodeid, "; ".join(errors))
    return
  _end_worker(config, report, errors)

@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
  """xdist's controller: tell each worker the scheduler in use (a worker's own option says "no")."""
  node.workerinput["mockgpu_dist"] = getattr(node.config.option, "dist", None)

_CONFIG:dict = {}
def pytest_configure(config):
  _CONFIG["config"] = config
  from mockgpu import system  # noqa: F401  the launch counters and coverage (MOCKGPU_COVERAGE) listen from its import on
