"""A mock never touches the host's hardware: under every MOCK interface tinygrad opens nothing under the host's PCI bus,
/proc/sys/vm, /sys/module/vfio, /dev/vfio or its pagemap, and starts no process (no `sudo`, no `modprobe`; the one
exceptions are tinygrad's own `ldconfig -p` library lookup and mockgpu's own C compiler and LLVM probe).

Each configuration runs a tinygrad op in a child whose Python audit hook (installed before tinygrad is imported)
records every file opened, every directory listed and every process started. The op's own outcome does not matter
here: an interface the mock cannot serve must still keep off the host. Every path under the claimed roots is
answered by mockgpu's virtual files, which open nothing, so any such path in the record reached the host.
"""
import json, os, subprocess, sys, textwrap
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FORBIDDEN = ("/sys/bus/pci", "/proc/sys/vm", "/sys/module/vfio", "/dev/vfio", "/proc/self/pagemap", "/sys/devices/pci")
# the one process tinygrad itself starts on every HCQ device: its memory barrier loads libatomic through
# ctypes.util.find_library, which lists the linker cache with `ldconfig -p` (read-only, no device, no privilege)
LIBRARY_LOOKUP = "('/sbin/ldconfig', ['/sbin/ldconfig', '-p'],"
# mockgpu's own translation toolchain, which touches no device and needs no privilege: the C compiler building a kernel
# into mockgpu's cache (native/), and the LLVM probe (compiler/toolchain.py) that checks which libLLVM tinygrad loads;
# whether they run depends on the cache's state, not on the interface
OWN_TOOLCHAIN = ("/native/", "from tinygrad.runtime.support.compiler_llvm import AMDLLVMCompiler")
PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn")

CHILD = textwrap.dedent("""
  import sys, json, os, atexit
  record = {"open": [], "listdir": [], "process": []}
  PROCESS_EVENTS = %r
  def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes)): record["open"].append(os.fsdecode(args[0]))
    elif event in ("os.listdir", "os.scandir") and args and not isinstance(args[0], int):  # an fd (rmtree's scandir) names no path
      record["listdir"].append(os.fsdecode(args[0]) if args[0] is not None else ".")
    elif event in PROCESS_EVENTS: record["process"].append([event, repr(args)[:300]])
  sys.addaudithook(hook)
  atexit.register(lambda: print("AUDIT " + json.dumps(record), flush=True))
  outcome = "ok"
  try:
    from tinygrad import Tensor
    assert (Tensor([1.0, 2.0, 3.0]) + 1).tolist() == [2.0, 3.0, 4.0]
  except Exception as e: outcome = f"{type(e).__name__}: {e}"
  print("OUTCOME " + outcome, flush=True)
""") % (PROCESS_EVENTS,)

CONFIGS = [
  ("MOCK+AMD", {}), ("MOCKKFD+AMD", {}), ("MOCKPCI+AMD", {}), ("MOCKPCI+AMD", {"VFIO": "1"}),
  ("MOCKUSB+AMD", {"GMMU": "0"}), ("MOCK+NV", {}), ("MOCK+CUDA", {}),
]

def _run(dev:str, env:dict) -> tuple[dict, str]:
  p = subprocess.run([sys.executable, "-c", CHILD], env={**os.environ, "DEV": dev, **env}, cwd=HERE, capture_output=True, text=True, timeout=600)
  lines = p.stdout.splitlines()
  audit = [l for l in lines if l.startswith("AUDIT ")]
  assert audit, f"DEV={dev}: the child printed no audit record ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
  outcome = next((l[8:] for l in lines if l.startswith("OUTCOME ")), "no outcome")
  return json.loads(audit[-1][6:]), outcome

@pytest.mark.parametrize("dev,env", CONFIGS, ids=[d + "".join(f"-{k}={v}" for k, v in e.items()) for d, e in CONFIGS])
def test_mock_interface_keeps_off_host_hardware(dev, env):
  record, outcome = _run(dev, env)
  # the hook saw tinygrad being imported: a record that cannot see opens would make the checks below vacuous
  assert any("/tinygrad/" in p for p in record["open"]), f"DEV={dev}: the audit hook recorded no open of tinygrad's files"
  touched = sorted({p for p in record["open"] + record["listdir"] if os.path.normpath(p).startswith(FORBIDDEN)})
  assert not touched, f"DEV={dev} ({outcome}) reached host paths: {touched}"
  started = [p for p in record["process"] if not (p[0] == "subprocess.Popen" and (p[1].startswith(LIBRARY_LOOKUP)
                                                                                 or any(t in p[1] for t in OWN_TOOLCHAIN)))]
  assert not started, f"DEV={dev} ({outcome}) started processes: {started}"

def test_audit_record_sees_a_host_open():
  """The recording itself: a child that does open the host's vm file is caught (the check above can fail)."""
  child = CHILD.replace("from tinygrad import Tensor", "open('/proc/sys/vm/compact_unevictable_allowed').read(); from tinygrad import Tensor")
  p = subprocess.run([sys.executable, "-c", child], env={**os.environ, "DEV": "MOCKPCI+AMD"}, cwd=HERE, capture_output=True, text=True, timeout=600)
  record = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("AUDIT "))[6:])
  assert "/proc/sys/vm/compact_unevictable_allowed" in record["open"]
