"""Native helpers for the translated code: numpy ufuncs in C, compiled once per machine by the host C compiler.

numpy has no fused multiply-add, so runtime.fma32 would emulate it in float64 with about ten array passes; the `fma_f32`
ufunc calls fmaf (one correctly rounded operation, as the hardware's FMA) in one pass, and as a ufunc it gets numpy's
broadcasting and strides at numpy's own call cost. NaN results are recomputed as the float64 emulation produces them
(x86 rules for p = a*b, then p + c: a NaN of a or b, quieted; else the default NaN of inf*0; else a NaN c, quieted; else
the default NaN of inf-inf), so both paths give the same bits for every input; the tests compare them.
The module is built into the translation cache directory (write, then rename, so parallel workers never load a torn
file). Without a compiler or Python headers, or with MOCKGPU_NATIVE=0, `module()` is None and callers use their numpy
path.
"""
from __future__ import annotations
import atexit, ctypes, functools, hashlib, importlib.machinery, importlib.util, json, os, queue, re, shutil
import signal, subprocess, sys, sysconfig, tempfile, threading, time
import numpy as np
from mockgpu import config
from mockgpu.compiler import history

from mockgpu import log
DEFAULT_BUILD_TIMEOUT = config.SETTINGS["MOCKGPU_CC_TIMEOUT"].default  # 60 s: a kernel with 100000 declared registers kept cc busy for longer
_failed:set[str] = set()       # sources whose build failed or timed out in this process: not tried again

def build_timeout() -> float:
  """MOCKGPU_CC_TIMEOUT: the seconds one C build may take before it is stopped (the kernel keeps its numpy path)."""
  return config.cc_timeout()

def _compile(cmd:list[str], what:str) -> bool:
  """Run the compiler in its own process group, so a timeout stops cc1 too, not only the driver; says why in the
  mockgpu logger when it fails. The compiler's CPU seconds (its own and its children's: cc1, as, ld) are kept for
  the thread that ran it (`build_cpu`): the Tier's estimates learn from them."""
  timeout = build_timeout()
  with tempfile.TemporaryFile() as err:  # a file, not a pipe: the compiler never blocks on a full pipe while we poll
    try: p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    except OSError as e:
      log.warning("C build of %s: no C compiler (%s); the numpy path runs it", what, e)
      return False
    if threading.current_thread().name == "mockgpu-cc": _running["proc"] = p
    if (status:=_reap(p, timeout)) is None:
      log.warning("C build of %s: timed out after %gs (MOCKGPU_CC_TIMEOUT); the numpy path runs it", what, timeout)
      return False
    if status != 0:
      err.seek(0)
      log.warning("C build of %s: %s exited %d; the numpy path runs it: %s", what, cmd[0], status,
                  err.read().decode(errors="replace")[-2000:])
  return status == 0

_thread = threading.local()   # build_cpu: the CPU seconds of the last compiler run on this thread
POLL_S = 0.002

def _reap(p:subprocess.Popen, timeout:float) -> int|None:
  """Wait for the compiler (os.wait4, which reports the CPU of the process and of the children it waited for); its exit
  status, or None once it ran past timeout (its process group killed)."""
  deadline = time.monotonic() + timeout
  while True:
    pid, status, usage = os.wait4(p.pid, os.WNOHANG)
    if pid != 0: break
    if time.monotonic() > deadline:
      os.killpg(p.pid, signal.SIGKILL)
      p.wait()
      return None
    time.sleep(POLL_S)
  p.returncode = os.waitstatus_to_exitcode(status)   # reaped here: Popen must not wait for it again
  _thread.build_cpu = usage.ru_utime + usage.ru_stime
  return p.returncode

def build_cpu() -> float|None:
  """The CPU seconds of the last compiler run on this thread, taken (None where none ran since the last call)."""
  cpu, _thread.build_cpu = getattr(_thread, "build_cpu", None), None
  return cpu

NAME = "_mockgpu_rdna_native"
SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>
#include <string.h>

static float quiet_f32(float x) { unsigned u; memcpy(&u, &x, 4); u |= 0x400000u; memcpy(&x, &u, 4); return x; }
static float nan_f32(float x, float y, float z) {
  if (x != x) return quiet_f32(x);
  if (y != y) return quiet_f32(y);
  volatile double p = (double)x * (double)y;  /* inf * 0: the default NaN, which then wins over a NaN z */
  if (p != p) return (float)p;
  if (z != z) return quiet_f32(z);
  volatile double s = p + (double)z;          /* inf - inf: the default NaN */
  return (float)s;
}
#define AT(p, i, s) (*(const float *)((p) + (i) * (s)))
/* The fma pass has no branch, so it vectorises; the rare NaN results are redone in a second pass. */
#define FMA_LOOP(ATTR, NAME)                                                                                  \
ATTR static void NAME(char **args, npy_intp const *dims, npy_intp const *steps, void *data) {                 \
  npy_intp n = dims[0], sa = steps[0], sb = steps[1], sc = steps[2], so = steps[3];                           \
  char *a = args[0], *b = args[1], *c = args[2], *o = args[3];                                                \
  int nan = 0;                                                                                                \
  if (sa == 4 && sb == 4 && sc == 4 && so == 4) {                                                             \
    const float *pa = (const float *)a, *pb = (const float *)b, *pc = (const float *)c;                       \
    float *po = (float *)o;                                                                                   \
    for (npy_intp i = 0; i < n; i++) { float r = __builtin_fmaf(pa[i], pb[i], pc[i]); nan |= r != r; po[i] = r; } \
  } else                                                                                                      \
    for (npy_intp i = 0; i < n; i++) {                                                                        \
      float r = __builtin_fmaf(AT(a, i, sa), AT(b, i, sb), AT(c, i, sc));                                     \
      nan |= r != r;                                                                                          \
      *(float *)(o + i * so) = r;                                                                             \
    }                                                                                                         \
  if (nan)                                                                                                    \
    for (npy_intp i = 0; i < n; i++) {                                                                        \
      float *r = (float *)(o + i * so);                                                                       \
      if (*r != *r) *r = nan_f32(AT(a, i, sa), AT(b, i, sb), AT(c, i, sc));                                   \
    }                                                                                                         \
}
FMA_LOOP(, fma_generic)
#if defined(__x86_64__)
FMA_LOOP(__attribute__((target("fma"))), fma_x86)  /* one vfmadd per element instead of a libm call */
#endif

static PyUFuncGenericFunction fma_funcs[1];
static void *fma_data[1] = {NULL};
static char fma_types[4] = {NPY_FLOAT, NPY_FLOAT, NPY_FLOAT, NPY_FLOAT};
static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_mockgpu_rdna_native", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__mockgpu_rdna_native(void) {
  PyObject *m = PyModule_Create(&moddef);
  if (m == NULL) return NULL;
  import_array();
  import_umath();
  fma_funcs[0] = fma_generic;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("fma")) fma_funcs[0] = fma_x86;
#endif
  PyObject *f = PyUFunc_FromFuncAndData(fma_funcs, fma_data, fma_types, 1, 3, 1, PyUFunc_None, "fma_f32",
                                        "fma_f32(a, b, c): a*b+c on float32, rounded once", 0);
  if (f == NULL || PyModule_AddObject(m, "fma_f32", f) < 0) { Py_XDECREF(f); Py_DECREF(m); return NULL; }
  return m;
}
"""

_module = False  # False: not tried yet; None: not available

# no -ffast-math and no contraction: every operation must round exactly as written
EXACT_FLAGS = ["-ffp-contract=off", "-fno-fast-math", "-shared", "-fPIC"]

def _build(path:str, source:str=SOURCE, flags:tuple=("-O3", f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}")) -> bool:
  """Compile source into the shared object at path (written to a temporary name, then renamed)."""
  cc = os.environ.get("CC", "cc")
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with tempfile.TemporaryDirectory(dir=os.path.dirname(path)) as tmp:
    if threading.current_thread().name == "mockgpu-cc": _running["tmp"] = tmp
    src, out = os.path.join(tmp, "native.c"), os.path.join(tmp, "native.so")
    with open(src, "w") as f: f.write(source)
    ok = _compile([cc, *flags, *EXACT_FLAGS, src, "-o", out, "-lm"], os.path.basename(path))
    if ok: os.replace(out, path)
  return ok

@functools.lru_cache(maxsize=None)
def _cpu_flags() -> tuple[str, ...]:
  """-mfma where the CPU has it, so fmaf is one instruction rather than a libm call (the flags are part of the cache
  key, so a library is never loaded on a machine it was not built for)."""
  if os.uname().machine != "x86_64": return ()
  try:
    with open("/proc/cpuinfo") as f: return ("-mfma",) if " fma " in f.read(1 << 16) else ()
  except OSError: return ()

def library(source:str, tag:str, flags:tuple=("-O2", "-fwrapv", "-fno-strict-aliasing")) -> ctypes.CDLL|None:
  """A C source built into a shared library once per machine (kept in the cache directory under its hash) and loaded,
  or None without a C compiler or with MOCKGPU_NATIVE=0."""
  if not config.native_enabled(): return None
  flags = (*flags, *_cpu_flags())
  key = hashlib.sha256(f"{source}|{flags}|{os.uname().machine}".encode()).hexdigest()[:24]
  path = os.path.join(config.cache_dir() or tempfile.gettempdir(), "native", f"{tag}-{key}.so")
  if key in _failed: return None
  if not os.path.exists(path) and not _build(path, source, flags):
    _failed.add(key)
    return None
  return load(path)

HOT_DISPATCHES = 3   # bench/rdna_micro.py's warm-up count; the choice of a kernel's path is `Tier`'s

def tier(var:str) -> str:
  """The setting var (MOCKGPU_RDNA_NATIVE, MOCKGPU_PTX_NATIVE): 0 never uses C, 1 uses it from the first dispatch,
  auto (the default) once it pays (`Tier`)."""
  return config.native_tier(var)

# *** tiering: a kernel's C build only where it pays ***
# CPU seconds of one cc -O2 build, fixed + per instruction (measured on the 2-core machine, gcc 12: the RDNA prelude
# alone 70 ms, tinygrad's 143-instruction 64x64 matmul kernel 1.2 s; the PTX prelude 60 ms, its 64x64 matmul 0.2 s).
# -O1 halves the build and runs 1.5x slower, -O0 quarters it and runs 10x slower (as slow as numpy on small kernels).
BUILD_COST = {"rdna": (0.07, 0.008), "ptx": (0.06, 0.0015)}

def build_estimate(isa:str, instructions:int) -> float:
  """The estimated seconds of a kernel's C build: BUILD_COST's, scaled by what this machine's recent builds took against
  it (history.build_ratio) and by MOCKGPU_CC_COST (0 builds a kernel at its second dispatch)."""
  return config.setting("MOCKGPU_CC_COST") * base_estimate(isa, instructions) * history.build_ratio(isa)

def base_estimate(isa:str, instructions:int) -> float:
  """The seconds BUILD_COST gives a kernel's build (what the recorded builds are measured against)."""
  fixed, per = BUILD_COST[isa]
  return fixed + per * instructions

NOT_CACHED = object()

class Tier:
  """One kernel's way to its C translation under `auto`, as a JIT's tiers: the numpy path runs it until the seconds
  spent there, in this process and in earlier ones (history.py: the cache directory's persistent profile), reach the
  estimated seconds of its C build; then the C build runs in the background while numpy keeps serving dispatches, and
  the kernel switches when it is ready. A kernel whose C build another process already made (the artifact index, `find`)
  takes it at its first dispatch: loading it costs about a millisecond. Most kernels of a test suite run once or twice
  per process and pay a build only once their numpy seconds over many runs do (a test_dtype profile spent 17 of
  mockgpu's 26 s in builds at the third dispatch).

  This is ski rental over the kernel's life on this machine (every process sharing the cache directory): with B the
  build's cost and T all the numpy seconds the kernel will ever take, the best choice knowing T costs min(T, B) (C runs
  for about nothing beside numpy); renting until the numpy seconds reach B, then building, costs T where T < B and at
  most B + B + d otherwise, so never more than twice the best choice, plus d: the dispatch that crosses B and those
  numpy serves while the build runs. Building earlier on a forecast (a kernel seen in N processes is expected in more:
  build once its seconds reach a fraction f of B) costs at most 1 + 1/f times the best choice when the forecast is wrong
  and 1 + f when right; MOCKGPU_CC_COST scales B, so MOCKGPU_CC_COST=0.5 is that rule with f = 1/2 (3x at worst,
  1.5x when the kernel keeps coming back). The default keeps the 2x guarantee."""
  def __init__(self, isa:str, instructions:int):
    self.isa, self.instructions = isa, instructions
    self.cost, self.spent, self.earlier = build_estimate(isa, instructions), 0.0, 0.0
    self.result, self.pending, self.looked = False, None, False  # result: False until decided, then the kernel or None
    self.key:str|None = None       # the artifact index's key, once looked up
    self.profiled = False          # whether this process's numpy seconds go to the history

  def ran(self, seconds:float):
    self.spent += seconds
    if self.profiled and self.result is False: history.add(self.key, seconds)

  def native(self, mode:str, key, translate, cached):
    """The kernel's C translation for this dispatch, or None (the numpy path runs it). key() is its key in the artifact
    index and the history (asked once); translate(key) builds it (the translation or None); cached(key) gives it from
    the artifact index, None where it is known to decline, or NOT_CACHED."""
    if self.result is not False: return self.result
    if self.pending is not None:
      if mode != "1" and not self.pending.done(): return None
      self.result = self.pending.result()
    elif mode == "1":
      self.key = self.key or key()
      self.result = self._build(translate)
    else:
      if not self.looked: self._look(key(), cached)  # once per process: another process may have built it
      if self.result is False and self.spent + self.earlier >= self.cost: self.pending = background(lambda: self._build(translate))
    return None if self.result is False else self.result

  def _build(self, translate):
    """translate(key) on the build thread; the compiler's CPU, where it ran, recorded against the estimate."""
    build_cpu()   # a compiler run of an earlier job is not this one's
    out = translate(self.key)
    if (cpu:=build_cpu()) is not None: history.record_build(self.isa, base_estimate(self.isa, self.instructions), cpu)
    return out

  def _look(self, key:str, cached):
    """At the kernel's first dispatch under auto: its build from the artifact index, else its numpy seconds in earlier
    processes (the history, read once per process)."""
    self.looked, self.key = True, key
    if (k:=cached(key)) is not NOT_CACHED: self.result = k
    elif history.directory() is not None:
      self.profiled, self.earlier = True, history.earlier(key)[0]

_jobs:queue.Queue|None = None
started = 0   # background builds started in this process (bench/run.py's warm-up)
_running:dict = {}   # the background build running: its job, compiler process and temporary directory
_exiting = False     # at exit: builds not started yet are dropped
EXIT_GRACE = 5.0     # seconds past MOCKGPU_CC_TIMEOUT that exit waits for the running build (its Python part included)

class Build:
  """A background build: its result once done (an exception it raised is raised by result())."""
  def __init__(self, fn):
    self.fn, self.event, self.value, self.error = fn, threading.Event(), None, None
  def done(self) -> bool: return self.event.is_set()
  def result(self):
    self.event.wait()
    if self.error is not None: raise self.error
    return self.value
  def run(self):
    try: self.value = self.fn()
    except BaseException as e: self.error = e  # raised in the dispatch that takes the result
    finally: self.event.set()

def background(fn) -> Build:
  """fn() on the one background build thread (a daemon: at exit the build running finishes, the rest are dropped, see _stop)."""
  global _jobs, started
  if _jobs is None:
    _jobs = queue.Queue()
    threading.Thread(target=_worker, name="mockgpu-cc", daemon=True).start()
    atexit.register(_stop)
  started += 1
  _jobs.put(job:=Build(fn))
  return job

def _worker():
  while True:
    job = _jobs.get()
    try:
      if _exiting: job.event.set()   # dropped: a later process starts it again (the history keeps why it pays)
      else:
        _running["job"] = job
        job.run()
    finally:
      _running.pop("job", None)
      _jobs.task_done()

def wait():
  """Wait for every background build started so far (bench warm-ups, tests)."""
  if _jobs is not None: _jobs.join()

def _stop():
  """At exit: the running background build finishes (its CPU is spent already, and later processes take it from the
  artifact index at their first dispatch: stopping it wasted it, and a short process that started the same build every
  run never finished it); builds not started are dropped. A build past MOCKGPU_CC_TIMEOUT is stopped: its compiler killed
  and its temporary directory removed."""
  global _exiting
  _exiting = True
  history.flush()   # first: a parent that kills this process while the build finishes loses the build only
  if (job:=_running.get("job")) is not None and not job.event.wait(build_timeout() + EXIT_GRACE):
    log.warning("C build still running at exit after %gs; stopped", build_timeout() + EXIT_GRACE)
  if (p:=_running.get("proc")) is not None and p.poll() is None:
    try: os.killpg(p.pid, signal.SIGKILL)
    except OSError: pass
  if (d:=_running.get("tmp")) is not None: shutil.rmtree(d, ignore_errors=True)

# *** the artifact index: a kernel's C build found without translating it again ***

@functools.lru_cache(maxsize=None)
def files_version(*dirs:str) -> str:
  """A hash of every .py and .c file under dirs (and of files named there; relative to the mockgpu package) and of this module and the shared C
  parts: what decides a C translation."""
  pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  here = os.path.dirname(os.path.abspath(__file__))
  files = [os.path.join(here, f) for f in ("native.py", *sorted(f for f in os.listdir(here) if _INCLUDE_NAME.match(f)))]
  for d in dirs:
    if os.path.isfile(os.path.join(pkg, d)): files.append(os.path.join(pkg, d))
    files += sorted(os.path.join(r, f) for r, _, fs in os.walk(os.path.join(pkg, d)) for f in fs if f.endswith((".py", ".c")))
  h = hashlib.sha256()
  for path in files:
    h.update(os.path.relpath(path, pkg).encode())
    with open(path, "rb") as f: h.update(f.read())
  return h.hexdigest()[:16]

def artifact_key(tag:str, version:str, data:bytes) -> str:
  h = hashlib.sha256(f"{tag}|{version}|{_cpu_flags()}|{os.uname().machine}".encode())
  h.update(data)
  return h.hexdigest()[:32]

def _index_path(tag:str, key:str) -> str|None:
  d = config.cache_dir()
  return None if d is None else os.path.join(d, "native", "index", f"{tag}-{key}.json")

def find(tag:str, key:str) -> dict|None:
  """What a process recorded for the kernel of this key: {"so": path, ...its translation's data} or {"declined": why};
  None when nothing is recorded (or MOCKGPU_NATIVE=0), or its library is gone."""
  if os.environ.get("MOCKGPU_NATIVE", "1") == "0" or (p:=_index_path(tag, key)) is None: return None
  try:
    with open(p) as f: rec = json.load(f)
  except (OSError, ValueError): return None   # none yet, or a foreign file: translate again
  return rec if "declined" in rec or os.path.exists(rec.get("so", "")) else None

def remember(tag:str, key:str, rec:dict):
  """Record what the kernel of this key translated to (write, then rename: parallel workers never read a torn file)."""
  if (p:=_index_path(tag, key)) is None: return
  try:
    config.publish(p, lambda f: json.dump(rec, f))
  except OSError: pass  # a read-only cache is only slower

def cached(tag:str, key:str, declined, make):
  """A kernel's C translation as another process recorded it (`remember`): make(library, record), None where C
  declines it (counted in `declined` by its reason), or NOT_CACHED."""
  if (rec:=find(tag, key)) is None: return NOT_CACHED
  if "declined" in rec:
    declined[rec["declined"]] += 1
    return None
  if (lib:=load(rec["so"])) is None: return NOT_CACHED
  return make(lib, rec)

def load(path:str) -> ctypes.CDLL|None:
  try: return ctypes.CDLL(path)
  except OSError as e:
    log.warning("C build %s: cannot load it (%s); the numpy path runs it", os.path.basename(path), e)
    return None

_INCLUDE_NAME = re.compile(r"native_\w+\.c$")   # the shared C parts beside this module, which preludes include
_INCLUDE = re.compile(rf'^#include "({_INCLUDE_NAME.pattern[:-1]})"$', re.M)

def prelude(path:str) -> str:
  """The text of a C prelude with the shared parts it includes (`#include "native_*.c"`, files beside this module)
  inlined, so the hash of the source that keys the built library covers them too."""
  here = os.path.dirname(os.path.abspath(__file__))
  with open(path) as f: text = f.read()
  def inline(m):
    with open(os.path.join(here, m.group(1))) as f: return f.read()
  return _INCLUDE.sub(inline, text)

def _load(path:str):
  loader = importlib.machinery.ExtensionFileLoader(NAME, path)
  spec = importlib.util.spec_from_file_location(NAME, path, loader=loader)
  mod = importlib.util.module_from_spec(spec)
  loader.exec_module(mod)
  return mod

def module():
  """The compiled helper module, or None when it cannot be built here (or MOCKGPU_NATIVE=0)."""
  global _module
  if _module is False:
    _module = None
    if config.native_enabled():
      key = hashlib.sha256(f"{SOURCE}|{sys.version}|{np.__version__}|{os.uname().machine}".encode()).hexdigest()[:16]
      path = os.path.join(config.cache_dir() or tempfile.gettempdir(), "native", f"rdna-{key}{sysconfig.get_config_var('EXT_SUFFIX')}")
      try:
        if os.path.exists(path) or _build(path): _module = _load(path)
      except (OSError, ImportError, subprocess.SubprocessError): _module = None
  return _module

def fma_f32():
  """The fma_f32 ufunc (float32 operands only: callers check, since a ufunc would cast other types), or None."""
  return None if (m:=module()) is None else m.fma_f32
