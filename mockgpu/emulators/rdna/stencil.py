"""The stencil tier: RDNA kernels run by a C interpreter over per-instruction handlers compiled once per machine.

A kernel's stencil form (compiler/rdna/backends/stencil.py record: handler names, parameters, block table) is cached
on disk like a translation. Its handlers come from the handler library in the cache directory,
`<cache>/native/stencil-<version>/` (the version: a hash of the C prelude, the interpreter and the compiler flags):
  src/w<lanes>-<name>.c   templates some kernel needed and no library had yet (the queue of the next build)
  lib/w<lanes>-<batch>.so one batch of handlers, with <batch>.idx listing them (written after the .so: an index names a
                          library that is whole)
  core-w<lanes>.so        the interpreter loop and the C tier's run loop (c/prelude.c mockgpu_run), loaded first and
                          globally: the batches' handlers stop a dispatch through its jump buffer
A kernel whose handlers are all in the library runs on this tier from its first dispatch; one with a template not yet
built runs on the numpy path, and its templates are built in the background (compiler/native.py background: the C
tier's build thread) into a new batch, which every process sharing the cache directory then loads. Processes building
at once (pytest -n 2) take turns through a lock file made with O_EXCL; files are written under a temporary name and
renamed. The hot kernels still go to the C tier (compiler/native.py Tier: this tier's seconds count toward its build).
MOCKGPU_RDNA_STENCIL=auto (the default) builds the queue by ski rental (Library.paid), 1 at once, 0 turns the tier off
(it runs under MOCKGPU_RDNA_NATIVE=auto; MOCKGPU_NATIVE=0 keeps it off).
"""
from __future__ import annotations
import ctypes, hashlib, os, tempfile, threading, time
import numpy as np
from mockgpu import config, log
from mockgpu.compiler import history, native
from mockgpu.emulators.rdna import native as rnative

FLAGS = ("-O2", "-fwrapv", "-fno-strict-aliasing")
BATCH = 400   # handlers per library build (about 10 ms of compiler CPU each: a batch stays far inside MOCKGPU_CC_TIMEOUT)
MAX_BATCHES = 32  # batches of one wave size before the smaller half is merged
MERGED = 2000     # handlers per library of a merge
GATHER = 0.5      # seconds the build thread waits for more templates before it lists the queue
LOCK_STALE = 3600.0   # seconds after which a build lock left by a killed process is taken over

# the interpreter: each instruction is (handler address, parameter offset); a handler returns 0 (next instruction),
# 1 + k (block k) or -2 - b (leave the wave: -1 at s_endpgm, b the block after s_barrier)
CORE = r"""
__thread jmp_buf mockgpu_stencil_stop;
typedef int64_t (*Handler)(Ctx *, uint32_t *, uint32_t *, uint8_t *, const int64_t *);
static int64_t wave(Ctx *c, uint32_t *s, uint32_t *v, uint8_t *lds, int64_t b) {
  const int64_t *prog = c->prog, *P = c->params, *B = c->blocks;
  for (;;) {
    if ((c->used += B[3 * b + 1]) > c->budget) return over_budget(c, B[3 * b + 2]);
    const int64_t *i = prog + 2 * B[3 * b];
    int64_t r;
    while ((r = ((Handler)(intptr_t)i[0])(c, s, v, lds, P + i[1])) == 0) i += 2;
    if (r < 0) return -2 - r;
    b = r - 1;
  }
}
"""

_texts:dict[str, str] = {}

def _prelude() -> str:
  """The C backend's prelude (backends/c.py PRELUDE), read without importing the backend (and through it the decoder's
  tables: ~150 ms a process whose kernels are all cached would spend for nothing)."""
  if "prelude" not in _texts:
    pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    _texts["prelude"] = native.prelude(os.path.join(pkg, "compiler", "rdna", "c", "prelude.c"))
  return _texts["prelude"]

def mode() -> str: return config.setting("MOCKGPU_RDNA_STENCIL")

def enabled() -> bool:
  """MOCKGPU_RDNA_STENCIL=1 or auto, and C allowed (MOCKGPU_NATIVE); the executor asks only under
  MOCKGPU_RDNA_NATIVE=auto (0 is numpy only, 1 the kernel's own C build from the first dispatch)."""
  return mode() != "0" and config.native_enabled()

# CPU seconds of a library build under auto's estimate: each batch's prelude, and each handler (measured on the 2-core
# machine at -O2: tests/ops' 644 handlers in one build, 6.4 s)
BUILD_COST = (0.07, 0.010)

_version:list[str] = []

def version() -> str:
  """The handler library's version: what decides a handler's machine code besides its template."""
  if not _version:
    flags = (*FLAGS, *native._cpu_flags(), *native.EXACT_FLAGS)
    _version.append(hashlib.sha256(f"{_prelude()}|{CORE}|{flags}|{os.uname().machine}".encode()).hexdigest()[:16])
  return _version[0]

def directory() -> str:
  return os.path.join(config.cache_dir() or tempfile.gettempdir(), "native", f"stencil-{version()}")

def _write(path:str, text:str): config.publish(path, lambda f: f.write(text))

class Library:
  """This process's view of the handler library: handler name -> address, from the batches loaded so far."""
  def __init__(self):
    self.handlers:dict[str, int] = {}
    self.loaded:set[str] = set()
    self.libs:list[ctypes.CDLL] = []   # kept loaded
    self.cores:dict[int, ctypes.CDLL] = {}
    self.stamp:int|None = None
    self.dir:str|None = None
    self.build:native.Build|None = None
    self.again = False   # templates queued since the running build listed the queue
    self.running = False  # a build job is queued or running (its last pass decides, under lock, that it is done)
    self.lock = threading.Lock()
    self.waiting:set[tuple[int, str]] = set()   # (lanes, template) this process queued and no library has yet
    self.rent = 0.0       # seconds the numpy path spent on kernels waiting for them since the last build (auto)
    self.paid_key:str|None = None   # the rent key whose earlier seconds paid for a build already

  def wait_for(self, lanes:int, names:list[str]):
    """Kernels need these templates: built at once under MOCKGPU_RDNA_STENCIL=1, under auto once `paid` says so."""
    self.waiting.update((lanes, n) for n in names)
    if mode() == "1": self.request()

  def paid(self, seconds:float):
    """The numpy path spent seconds (record, translation and run) on a kernel the library would have served, had it
    its handlers. auto builds the queued templates once such seconds, in this process and in earlier ones sharing the
    cache directory (the C build history, until a build changes the library), reach the build's estimate: ski rental,
    as the C tier's (compiler/native.py Tier). The numpy seconds bound what the library saves from above, so it builds
    a little early; a machine whose cache is never kept spends at most about twice what it would have without it."""
    key = self.rent_key()
    history.add(key, seconds)
    self.rent += seconds
    rent = self.rent + (0.0 if key == self.paid_key else history.earlier(key)[0])
    fixed, per = BUILD_COST
    factor = config.setting("MOCKGPU_CC_COST")
    if rent < factor * (fixed + per): return   # not even one handler's build yet: no look at the queue
    if (n:=self.queued()) and rent >= factor * (fixed + per * n):
      self.rent, self.waiting, self.paid_key = 0.0, set(), key
      self.request()

  def rent_key(self) -> str:
    """The history's key for the rent paid toward the library's next build: its version and batches so far."""
    return f"stencil-{version()}-{len(self.loaded)}"

  def queued(self) -> int:
    """Templates queued by any process (src/) that this process's library lacks: what the next build builds."""
    try: names = os.listdir(os.path.join(directory(), "src"))
    except OSError: return len(self.waiting)
    return sum(1 for f in names if f.endswith(".c") and f[f.index("-") + 1:-2] not in self.handlers)

  def core(self, lanes:int) -> ctypes.CDLL|None:
    if (lib:=self.cores.get(lanes)) is None:
      path = os.path.join(directory(), f"core-w{lanes}.so")
      if not os.path.exists(path): return None
      try: lib = self.cores[lanes] = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
      except OSError as e:
        log.warning("stencil core %s: cannot load it (%s)", path, e)
        return None
    return lib

  def refresh(self):
    """Load the batches other builds have added since the last look (one stat of the directory when none has)."""
    if (top:=directory()) != self.dir:  # another cache directory (a setting changed): another library
      self.dir, self.handlers, self.loaded, self.cores, self.stamp = top, {}, set(), {}, None
    d = os.path.join(top, "lib")
    try: stamp = os.stat(d).st_mtime_ns
    except OSError: return
    if stamp == self.stamp: return
    self.stamp = stamp
    for f in sorted(os.listdir(d)):
      if not f.endswith(".idx") or f in self.loaded: continue
      lanes = int(f[1:f.index("-")])
      if self.core(lanes) is None: continue
      try:
        with open(os.path.join(d, f)) as fh: names = fh.read().split()
        lib = ctypes.CDLL(os.path.join(d, f[:-4] + ".so"))
        table = (ctypes.c_void_p * len(names)).in_dll(lib, "mockgpu_stencil_table")
      except (OSError, ValueError) as e:
        log.warning("stencil library %s: cannot load it (%s)", f, e)
        continue
      self.loaded.add(f)
      self.libs.append(lib)
      self.handlers.update(zip(names, table))

  def request(self):
    """Build the queued templates in the background (one build at a time per process; templates queued while it runs
    are built by another pass of it)."""
    with self.lock:
      self.again = True
      if not self.running:
        self.running = True
        self.build = native.background(_build_queued)

def _build_queued() -> int:
  """The build thread's job: a short wait first, so that the kernels a test dispatches together queue their templates
  for one batch (each batch compiles the prelude again: ~70 ms), then passes until nothing new was queued."""
  time.sleep(GATHER)
  built = 0
  while True:
    with library.lock:
      if not library.again:
        library.running = False
        return built
      library.again = False
    try: built += build_pending()
    except OSError as e:   # an unwritable cache directory, a file removed under us: the kernels stay on numpy
      log.warning("stencil library build in %s failed (%s); the kernels it lacks run on numpy", directory(), e)
      with library.lock: library.running = False
      return built
    except BaseException:
      with library.lock: library.running = False
      raise

library = Library()

def build_pending() -> int:
  """Build every queued template no batch has yet (and the interpreter core where missing); returns the handlers built.
  Another process building already: nothing (its batches are loaded at a later dispatch)."""
  d = directory()
  os.makedirs(os.path.join(d, "lib"), exist_ok=True)
  lock = os.path.join(d, "build.lock")
  try: fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
  except FileExistsError:
    if not _stale(lock): return 0
    try: os.remove(lock)
    except OSError: return 0
    return build_pending()
  try: os.write(fd, str(os.getpid()).encode())
  finally: os.close(fd)
  try: return _build_locked(d)
  finally: os.remove(lock)

def _stale(lock:str) -> bool:
  """Whether a build lock was left by a process that is gone (killed mid-build), or is older than LOCK_STALE."""
  try:
    with open(lock) as f: pid = int(f.read() or 0)
    if time.time() - os.stat(lock).st_mtime > LOCK_STALE: return True
  except (OSError, ValueError): return False   # just removed, or being written: not ours to take
  if pid <= 0: return False
  try: os.kill(pid, 0)
  except ProcessLookupError: return True
  except PermissionError: return False
  return False

def _build_locked(d:str) -> int:
  library.stamp = None
  library.refresh()
  queued:dict[int, list[str]] = {}
  src = os.path.join(d, "src")
  for f in sorted(os.listdir(src)) if os.path.isdir(src) else []:
    if f.endswith(".c"): queued.setdefault(int(f[1:f.index("-")]), []).append(f[f.index("-") + 1:-2])
  built = 0
  for lanes, names in queued.items():
    pending = [n for n in names if n not in library.handlers]
    if not pending: continue
    if library.core(lanes) is None:
      core = os.path.join(d, f"core-w{lanes}.so")
      if not native._build(core, f"#define WAVE {lanes}\n#define MOCKGPU_STENCIL_STOP\n{_prelude()}{CORE}", (*FLAGS, *native._cpu_flags())):
        return built
    old = _batches(d, lanes)
    # past MAX_BATCHES batches (a process loads each: ~0.2 ms a dlopen), the smaller half is built again with the new
    # templates as one: size-tiered, so that a template is built again a few times (log base MAX_BATCHES / 2 of the
    # library's size), not at every merge (merging all but the largest rebuilt tests/ops' library 4-6 times over)
    merge = old[len(old) - MAX_BATCHES // 2:] if len(old) + 1 > MAX_BATCHES else []
    todo = pending + sorted({n for _, names_, _ in merge for n in names_} - set(pending))
    made = [_batch(d, lanes, todo[k:k + (MERGED if merge else BATCH)]) for k in range(0, len(todo), MERGED if merge else BATCH)]
    built += sum(n for n, _ in made)
    if merge and all(n for n, _ in made):
      for f, _, _ in merge:
        if f not in {idx for _, idx in made}: _remove(os.path.join(d, "lib", f), os.path.join(d, "lib", f[:-4] + ".so"))
  library.stamp = None
  library.refresh()
  return built

def _batches(d:str, lanes:int) -> list[tuple[str, list[str], int]]:
  """The batches of a wave size: (index file, handler names, size), the largest first."""
  out = []
  for f in os.listdir(os.path.join(d, "lib")):
    if f.startswith(f"w{lanes}-") and f.endswith(".idx"):
      with open(os.path.join(d, "lib", f)) as fh: names = fh.read().split()
      out.append((f, names, len(names)))
  return sorted(out, key=lambda b: -b[2])

def _remove(*paths:str):
  """Remove a batch's index, then its library (a process that loaded it keeps it mapped)."""
  for p in paths:
    try: os.remove(p)
    except OSError: pass

def _batch(d:str, lanes:int, names:list[str]) -> tuple[int, str]:
  """Build one batch of handlers: (how many, its index file's name), (0, '') where the build failed."""
  texts = []
  for n in names:
    with open(os.path.join(d, "src", f"w{lanes}-{n}.c")) as f: texts.append(f.read())
  batch = hashlib.sha256(" ".join(names).encode()).hexdigest()[:16]
  table = f"const void *mockgpu_stencil_table[] = {{{', '.join(f'(const void *)h_{n}' for n in names)}}};\n"
  source = "".join([f"#define WAVE {lanes}\n#define MOCKGPU_STENCIL_STOP\n#define MOCKGPU_STENCIL_HANDLERS\n", _prelude(), *texts, table])
  so = os.path.join(d, "lib", f"w{lanes}-{batch}.so")
  if os.path.exists(so[:-3] + ".idx"): return len(names), os.path.basename(so[:-3] + ".idx")  # built already
  if not native._build(so, source, (*FLAGS, *native._cpu_flags())): return 0, ""
  _write(so[:-3] + ".idx", "\n".join(names) + "\n")
  return len(names), os.path.basename(so[:-3] + ".idx")

class StencilKernel(rnative.NativeKernel):
  """A kernel on the stencil tier: the core's run loop with the kernel's instruction and block arrays."""
  def __init__(self, core:ctypes.CDLL, rec:tuple, lanes:int):
    _, nvgpr, names, messages, table, handlers, offsets, params, _ = rec
    super().__init__(core, nvgpr, dict(names), list(messages), lanes)
    prog = np.empty(2 * len(handlers), np.int64)
    prog[0::2] = [library.handlers[n] for n in handlers]
    prog[1::2] = offsets
    self.arrays = (prog, np.asarray(params, np.int64), np.asarray(table, np.int64))
    self.pointers = tuple(a.ctypes.data for a in self.arrays)

class Entry:
  """A kernel's stencil record in this process, and its way to the tier (and on to the C tier: `tier`)."""
  def __init__(self, code:bytes, rec:tuple, lanes:int, ninsts:int):
    self.code, self.rec, self.lanes = code, rec, lanes
    self.k:StencilKernel|None = None
    self.queued = False
    self.tier = rnative.Tier(ninsts)
    if rec[0] == "declined": rnative.declined[rec[1]] += 1   # why kernels stay on numpy, as the C tier counts them

  def kernel(self) -> StencilKernel|None:
    """The kernel on the stencil tier, or None (declined, or a handler not built yet: then queued for the next build)."""
    if self.k is not None or self.rec[0] != "ok": return self.k
    library.refresh()
    names, texts = self.rec[5], self.rec[8]
    missing = [n for n in set(names) if n not in library.handlers]
    if not missing and (core:=library.core(self.lanes)) is not None:
      self.k = StencilKernel(core, self.rec, self.lanes)
      return self.k
    if not self.queued:
      self.queued = True
      try:
        for n in missing:
          if not os.path.exists(p:=os.path.join(directory(), "src", f"w{self.lanes}-{n}.c")):
            from mockgpu.compiler.rdna.backends.stencil import handler
            _write(p, handler(n, texts[n]))
      except OSError as e:
        log.warning("stencil: cannot queue templates (%s)", e)
        return None
      library.wait_for(self.lanes, missing)
    return None
