#!/usr/bin/env python3
"""A kernel's first, second and third dispatch, split into tinygrad's compile and mockgpu's own time, beside its warm time.

  python bench/first_dispatch.py [--dev MOCK+AMD ...] [--only matmul_64 ...] [--cache cold|warm|both] [--keep DIR] [--json FILE]

Each (device, workload, cache state) runs in its own child interpreter. `cold` empties mockgpu's cache directory and
tinygrad's compile cache (CACHEDB) first; `warm` runs the child once to fill them and measures a second child. The
child realizes the workload three times (dispatches 1-3 of each kernel), waits for background C builds, and runs it
three more times: `warm` is the least execution time of those. Times are CPU milliseconds of the main thread
(time.thread_time), so other engineers' load on the machine does not count, and:
  compile     tinygrad's codegen and compile of the kernel (lower_and_compile; attributed to the next dispatch; the
              CPU of tinygrad's compile worker pool, where it uses one, is not counted)
  translate   mockgpu loading the kernel: decode and numpy translation, or the translation caches
  C           mockgpu's C path set-up on the dispatching thread: C source and build when synchronous, loading a build
  exec        running the dispatch (numpy or C)
  path        the path that ran it (numpy, stencil: the stencil tier, C: the kernel's own C build)
Kernels of one name (softmax's two reductions) count their dispatches together. DEV=CPU gets no per-kernel rows (its
HCQ queue runs programs without the call this wraps): compare its `process` line.
Below each child's rows: `cc` is the CPU seconds of C builds (the compiler's child processes, built in the background),
`process` the child's whole CPU seconds from the first realize to the last, children included.
With MOCKGPU_RDNA_STENCIL=1 every child sees one stencil-tier handler library (a per-machine artifact, as an install step
would make it), filled first by an unmeasured child: `cold` empties the translation caches, not the library.
`--keep DIR` uses DIR/<device> as the cache directories instead of a temporary one and keeps them (`cold` does not empty
it), so invocations in a row see the C build history of the earlier ones: a kernel run in enough earlier processes is
built, and a later process takes the build at its first dispatch.
"""
from __future__ import annotations
import argparse, json, os, resource, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import WORKLOADS as RUN_WORKLOADS, _matmul  # noqa: E402

WORKLOADS = {"matmul_64": _matmul(64), "matmul_256": RUN_WORKLOADS["matmul_256"],
             "add_64k": lambda T: (lambda x, y: lambda: (x + y).realize())(T.rand(1 << 16).realize(), T.rand(1 << 16).realize()),
             "softmax_64x64": lambda T: (lambda x: lambda: x.softmax(axis=1).realize())(T.rand(64, 64).realize()),
             **{k: v for k, v in RUN_WORKLOADS.items() if k in ("mlp_train_step", "sum_4M", "elementwise_4M")}}
DEFAULT = ("matmul_64", "add_64k", "softmax_64x64", "matmul_256", "mlp_train_step")

class Recorder:
  """Wraps mockgpu's entry points (this child only) to time each dispatch's parts."""
  def __init__(self):
    self.rows:list[dict] = []
    self.counts:dict[str, int] = {}
    self.pending_compile = 0.0
    self.cur:dict|None = None
    self.pending:dict[str, float] = {}

  def timed(self, part:str, fn):
    """A part of mockgpu's work: inside a dispatch, that dispatch's; before it (a PTX module is loaded with its
    program), the next dispatch's."""
    def wrapper(*a, **kw):
      t0 = time.thread_time()
      try: return fn(*a, **kw)
      finally:
        if self.cur is not None: self.cur[part] += time.thread_time() - t0
        else: self.pending[part] = self.pending.get(part, 0.0) + time.thread_time() - t0
    return wrapper

  def dispatch(self, fn, name_of, clock=time.thread_time, share_of=lambda *a: 0):
    """One dispatch: an executor's entry on a mock (its time less the translation and C set-up inside it is the
    execution), tinygrad's program call on CPU (process time: the CPU device runs kernels on its own thread). A
    multi-XCC board (CDNA) enters the executor once per XCC, one after another: share_of gives the XCC, and the
    shares after the first add to the dispatch's row."""
    def wrapper(*a, **kw):
      self.cur = {"kernel": "?", "n": 0, "compile": self.pending_compile, "translate": 0.0, "C": 0.0, "exec": 0.0, "path": "cpu"}
      self.pending_compile = 0.0
      t0 = clock()
      done = {part: self.pending.pop(part, 0.0) for part in ("translate", "C")}  # parts done before the dispatch
      try:
        stats = fn(*a, **kw)
        if hasattr(stats, "native"): self.cur["path"] = "stencil" if getattr(stats, "stencil", False) else "C" if stats.native else "numpy"
        return stats
      finally:
        self.cur["exec"] = clock() - t0 - self.cur["translate"] - self.cur["C"]
        for part, x in done.items(): self.cur[part] += x
        self.cur["kernel"] = name = name_of(*a)
        if share_of(*a) > 0 and self.rows and self.rows[-1]["kernel"] == name: self._add_share(self.cur)
        else:
          self.counts[name] = self.cur["n"] = self.counts.get(name, 0) + 1
          self.rows.append(self.cur)
        self.cur = None
    return wrapper

  def _add_share(self, share:dict):
    last = self.rows[-1]
    for part in ("compile", "translate", "C", "exec"): last[part] += share[part]
    if share["path"] != last["path"]: last["path"] = "mixed"

  def compile(self, fn):
    def wrapper(*a, **kw):
      t0 = time.thread_time()
      try: return fn(*a, **kw)
      finally: self.pending_compile += time.thread_time() - t0
    return wrapper

def install(rec:Recorder):
  """Wraps tinygrad's compile and kernel call, and mockgpu's executor entry points (module attributes: pm4, nv_gpu and
  the CUDA model call them through their modules)."""
  import tinygrad.engine.realize as realize
  realize.lower_and_compile = rec.compile(realize.lower_and_compile)
  if not os.environ["DEV"].startswith("MOCK"):
    import tinygrad.device as device
    device.Program.__call__ = rec.dispatch(device.Program.__call__, lambda prg, *a: prg.name, time.process_time)
    return
  from mockgpu.emulators.rdna import executor
  import mockgpu.emulators.ptx as ptx
  import mockgpu.emulators.rdna as rdna  # pm4 calls the package's run_dispatch
  rdna.run_dispatch = rec.dispatch(executor.run_dispatch, lambda mem, d, *a: executor.kernel_name(d.pgm_addr),
                                   share_of=lambda mem, d, *a: d.xcc[0])
  ptx.launch = rec.dispatch(ptx.launch, lambda mem, k, *a, **kw: k.name)
  executor.load_program, ptx.load_module = rec.timed("translate", executor.load_program), rec.timed("translate", ptx.load_module)
  executor._native_kernel, ptx._native_kernel = rec.timed("C", executor._native_kernel), rec.timed("C", ptx._native_kernel)
  executor.load_stencil = rec.timed("translate", executor.load_stencil)

def child(workload:str) -> dict:
  rec = Recorder()
  install(rec)
  from tinygrad import Tensor, Device
  Tensor.manual_seed(0)
  run = WORKLOADS[workload](Tensor)
  Device[Device.DEFAULT].synchronize()
  rec.rows.clear(); rec.counts.clear(); rec.pending_compile = 0.0; rec.pending.clear()
  c0, p0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.process_time()
  for _ in range(3):
    run(); Device[Device.DEFAULT].synchronize()
  cold_rows = list(rec.rows)
  if (wait:=getattr(sys.modules.get("mockgpu.compiler.native"), "wait", None)) is not None: wait()  # background builds
  rec.rows.clear()
  for _ in range(3):
    run(); Device[Device.DEFAULT].synchronize()
  c1, p1 = resource.getrusage(resource.RUSAGE_CHILDREN), time.process_time()
  warm = {}
  for r in rec.rows: warm[r["kernel"]] = min(warm.get(r["kernel"], 1e9), r["exec"])
  rows = [{**r, "warm": warm.get(r["kernel"])} for r in cold_rows if r["n"] <= 3]
  cc = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
  return {"rows": rows, "cc_s": cc, "process_s": p1 - p0 + cc}

STENCIL_LIB = tempfile.mkdtemp(prefix="mockgpu-stencil-")  # the stencil tier's library, shared by every child of this run

def _stencil_library(cache_dir:str):
  """Every child sees one stencil-tier handler library (emulators/rdna/stencil.py: built once per machine, as an install
  step would): `cold` empties the translation caches, not it."""
  from mockgpu.emulators.rdna import stencil
  os.makedirs(os.path.join(cache_dir, "native"), exist_ok=True)
  link = os.path.join(cache_dir, "native", f"stencil-{stencil.version()}")
  if not os.path.lexists(link): os.symlink(STENCIL_LIB, link)

def run_child(dev:str, workload:str, cache:str, tmp:str) -> dict:
  env = {**os.environ, "DEV": dev, "MOCKGPU_CACHE_DIR": os.path.join(tmp, "mockgpu"), "CACHEDB": os.path.join(tmp, "tinygrad.db")}
  cmd = [sys.executable, __file__, "--child", workload]
  if os.environ.get("MOCKGPU_RDNA_STENCIL") == "1":
    _stencil_library(env["MOCKGPU_CACHE_DIR"])
    with tempfile.TemporaryDirectory() as t:  # the library's templates built once, by an unmeasured child
      _stencil_library(os.path.join(t, "mockgpu"))
      subprocess.run(cmd, env={**env, "MOCKGPU_CACHE_DIR": os.path.join(t, "mockgpu"), "CACHEDB": os.path.join(t, "tg.db")},
                     capture_output=True, timeout=3600)
  if cache == "warm": subprocess.run(cmd, env=env, capture_output=True, timeout=3600)
  p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
  if p.returncode != 0: return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:300]}
  return json.loads(p.stdout.strip().splitlines()[-1])

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--dev", action="append", help="devices (default: MOCK+AMD, MOCK+NV, CPU)")
  ap.add_argument("--only", action="append", choices=list(WORKLOADS), help=f"workloads (default: {', '.join(DEFAULT)})")
  ap.add_argument("--cache", choices=("cold", "warm", "both"), default="both")
  ap.add_argument("--json", help="write the results here")
  ap.add_argument("--keep", help="cache directories under this folder, kept between invocations (see above)")
  ap.add_argument("--child", help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.child:
    print(json.dumps(child(args.child)))
    return 0
  results = {}
  caches = ("cold", "warm") if args.cache == "both" else (args.cache,)
  print(f"{'workload':15s} {'device':12s} {'cache':5s} {'kernel':28s} {'#':>2s} {'compile':>8s} {'translate':>9s} {'C':>7s} "
        f"{'exec':>7s} {'path':5s} {'warm':>7s}   (ms, CPU of the dispatching thread)")
  for w in args.only or DEFAULT:
    for dev in args.dev or ("MOCK+AMD", "MOCK+NV", "CPU"):
      for cache in caches:
        if args.keep:
          os.makedirs(tmp:=os.path.join(args.keep, dev.replace(":", "_")), exist_ok=True)
          r = results[f"{w}|{dev}|{cache}"] = run_child(dev, w, cache, tmp)
        else:
          with tempfile.TemporaryDirectory() as tmp: r = results[f"{w}|{dev}|{cache}"] = run_child(dev, w, cache, tmp)
        _print(w, dev, cache, r)
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=1)
  return 0

def _print(w:str, dev:str, cache:str, r:dict):
  if "error" in r:
    print(f"{w:15s} {dev:12s} {cache:5s} error: {r['error']}")
    return
  ms = lambda x: f"{1e3 * x:.1f}" if x is not None else "-"
  for x in r["rows"]:
    print(f"{w:15s} {dev:12s} {cache:5s} {x['kernel'][:28]:28s} {x['n']:2d} {ms(x['compile']):>8s} {ms(x['translate']):>9s} "
          f"{ms(x['C']):>7s} {ms(x['exec']):>7s} {x.get('path', '?'):7s} {ms(x['warm']):>7s}")
  print(f"{w:15s} {dev:12s} {cache:5s} cc {r['cc_s']:.2f} s, process {r['process_s']:.2f} s", flush=True)

if __name__ == "__main__": sys.exit(main())
