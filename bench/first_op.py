#!/usr/bin/env python3
"""A fresh process's first op on each device against DEV=CPU: the interpreter's start, tinygrad's import, the device
open and one small kernel (`(Tensor([1., 2, 3]) + 1).tolist()`), in CPU milliseconds of the process, twice: to the op's
end (what the child has spent when `tolist()` returns, read by the child itself) and to its exit (the interpreter's
exit included: tearing down the modules, mostly tinygrad's ctypes tables, which is not mockgpu's work), and in wall
milliseconds from the child's spawn to the op's end (what a user waits; CPU time also counts threads that spin on cores
that would idle, as OpenBLAS's do for ~0.1 s after numpy's import, and wall time counts the other sessions' load).

  python bench/first_op.py [--dev MOCK+AMD ...] [--rounds N] [--cold] [--json FILE] [--seams]

Warm (the default) is the state of a test run's second process: mockgpu's translation cache and tinygrad's compile
cache (CACHEDB) hold the kernel, filled by one unmeasured run per device in a temporary directory. --cold empties
both before each run. Python writes the bytecode of what the children import (PYTHONDONTWRITEBYTECODE is dropped from
their environment), as an installed package has it: without it every process compiles mockgpu's source again (about
150 ms of a MOCK+NV process). The devices run in turn, round after round (A/B alternation, as the machine may be loaded);
each child's CPU time is its user + system time (RUSAGE_CHILDREN: its own children, a C compiler, included). The
table gives, for each measure, the least and the median of the rounds and the least's excess over DEV=CPU's (issue 22:
at most 100 ms).

--seams prints, instead, mockgpu's own share of each mock device's process: the thread CPU spent inside mockgpu at the
seams where tinygrad calls it (the import of the MOCK interface modules, the bridge's file opens, ioctls, mmaps and reads,
its doorbell/MMIO writes and signal accesses, the CUDA driver's calls; work mockgpu does inside them, imports and a
kernel's execution included, counts once), with numpy imported beforehand (its cost, ~100 ms of CPU with OpenBLAS's
threads, is the executors' and shows in the first table), and the objects left for the collection after realize.
"""
from __future__ import annotations
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

# the child writes its CPU seconds at the op's end (its own and its waited-for children's: a C compiler) and the time
# of day then to a pipe
CHILD = ("import os, resource, time\nfrom tinygrad import Tensor\nassert (Tensor([1., 2, 3]) + 1).tolist() == [2., 3., 4.]\n"
         "s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
         "os.write(int(os.environ['FIRST_OP_FD']), f'{s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime} {time.time()}'.encode())\n")
DEVICES = ("CPU", "MOCK+AMD", "MOCK+NV", "MOCK+CUDA")

# --seams: the child wraps the bridge's (and the CUDA driver's) entry points as the MOCK interface modules are imported
# (bench/suite.py --seams runs WRAP in each pytest worker)
WRAP = """import collections, gc, json, os, time
import numpy
import mockgpu._finder as finder
CHECK = "toolchain check (loads the libLLVM and comgr bindings that tinygrad's AMD renderers load next)"
spent, objects, stack = collections.Counter(), collections.Counter(), []
def timed(name, fn, nested=False):
  # a seam inside another counts in the outer one; a nested one (the toolchain check) counts apart, out of its caller's
  def inner(*a, **k):
    if stack and not nested: return fn(*a, **k)
    t, g = time.thread_time(), gc.get_count()[0]
    stack.append([0.0, 0])
    try: return fn(*a, **k)
    finally:
      (inner_t, inner_g), dt, dg = stack.pop(), time.thread_time() - t, gc.get_count()[0] - g
      spent[name] += dt - inner_t
      objects[name] += dg - inner_g
      if stack: stack[-1][0] += dt; stack[-1][1] += dg
  return inner
real_create = finder._AliasLoader.create_module
def create(self, spec):
  m = timed("import " + spec.name, real_create)(self, spec)
  if spec.name == "test.mockgpu.mockgpu":
    for cls, names in ((m.MockFileIOInterface, ("__init__", "ioctl", "mmap", "read", "write", "listdir", "seek")),
                       (m.WatchedMMIOInterface, ("__setitem__",)), (m.SignalMMIOInterface, ("__getitem__", "__setitem__"))):
      for n in names: setattr(cls, n, timed(f"{cls.__name__}.{n}", cls.__dict__[n]))
    from mockgpu.compiler import toolchain
    toolchain.amd_problem = timed(CHECK, toolchain.amd_problem, nested=True)
  if spec.name == "test.mockgpu.cuda.cuda":
    for n in [n for n in dir(m) if n.startswith("cu") and callable(getattr(m, n))]: setattr(m, n, timed("cuda." + n, getattr(m, n)))
  return m
finder._AliasLoader.create_module = create
"""
SEAMS = WRAP + """from tinygrad import Tensor
assert (Tensor([1., 2, 3]) + 1).tolist() == [2., 3., 4.]
os.write(int(os.environ["FIRST_OP_FD"]), json.dumps({k: [1e3 * v, objects[k]] for k, v in spent.items()}).encode())
"""

def run(dev:str, tmp:str, cold:bool, child:str=CHILD):
  """One child's CPU milliseconds to its op's end and to its exit, and its wall milliseconds to the op's end (child=SEAMS:
  what it writes, and the exit's CPU ms)."""
  cache, db = os.path.join(tmp, dev, "mockgpu"), os.path.join(tmp, dev, "tinygrad.db")
  if cold:
    shutil.rmtree(os.path.join(tmp, dev), ignore_errors=True)
  os.makedirs(os.path.join(tmp, dev), exist_ok=True)
  rd, wr = os.pipe()
  env = {**os.environ, "DEV": dev, "MOCKGPU_CACHE_DIR": cache, "CACHEDB": db, "FIRST_OP_FD": str(wr)}
  env.pop("PYTHONDONTWRITEBYTECODE", None)
  r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
  try: p = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=600, pass_fds=(wr,))
  finally: os.close(wr)
  r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
  with os.fdopen(rd, "rb") as f: at_op = f.read()
  if p.returncode != 0: raise RuntimeError(f"DEV={dev}: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
  at_exit = 1e3 * (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
  if child is SEAMS: return json.loads(at_op), at_exit
  cpu, end = map(float, at_op.split())
  return 1e3 * cpu, at_exit, 1e3 * (end - t0)

def seams(devs:list[str], rounds:int, cold:bool):
  """--seams: mockgpu's own thread CPU ms per seam (the least of the rounds) and its total, per mock device."""
  with tempfile.TemporaryDirectory() as tmp:
    if not cold:
      for d in devs: run(d, tmp, False, SEAMS)
    got = {d: [run(d, tmp, cold, SEAMS)[0] for _ in range(rounds)] for d in devs}
  print(f"mockgpu's own thread CPU ms at its seams (numpy imported beforehand), {rounds} rounds, {'cold' if cold else 'warm'}: "
        "the least per seam; total: the least round's sum; objects: left for the collection after realize")
  for d, rs in got.items():
    totals = [sum(v[0] for v in r.values()) for r in rs]
    own = [sum(v[0] for n, v in r.items() if not n.startswith("toolchain check")) for r in rs]
    print(f"{d}: total {min(totals):.1f} (median {statistics.median(totals):.1f}), without the toolchain check {min(own):.1f} "
          f"(median {statistics.median(own):.1f}), objects {sum(v[1] for v in rs[0].values())}")
    for name in sorted(rs[0], key=lambda n: -min(r.get(n, [0])[0] for r in rs)):
      if (least:=min(r.get(name, [0])[0] for r in rs)) >= 0.05: print(f"  {least:7.1f}  {name}")

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--dev", action="append", help=f"devices besides CPU (default: {', '.join(DEVICES[1:])})")
  ap.add_argument("--rounds", type=int, default=5)
  ap.add_argument("--cold", action="store_true", help="empty the caches before each run")
  ap.add_argument("--json", help="write the results here")
  ap.add_argument("--seams", action="store_true", help="mockgpu's own CPU at its seams, per mock device")
  args = ap.parse_args()
  if args.seams: return seams(args.dev or list(DEVICES[1:]), args.rounds, args.cold) or 0
  devs = ["CPU", *(args.dev or DEVICES[1:])]
  times:dict[str, list[tuple[float, float, float]]] = {d: [] for d in devs}
  with tempfile.TemporaryDirectory() as tmp:
    if not args.cold:
      for d in devs: run(d, tmp, False)  # fills the caches: the runs below are a warm process's
    for _ in range(args.rounds):
      for d in devs: times[d].append(run(d, tmp, args.cold))
  print(f"A fresh process's first op, {args.rounds} rounds, {'cold' if args.cold else 'warm'}, ms: the least, the median and "
        "the least's excess over DEV=CPU")
  print(f"{'':12s} {'CPU to the op end':^26s}  {'CPU to exit':^26s}  {'wall to the op end':^26s}")
  print(f"{'device':12s} " + f"{'least':>7s} {'median':>7s} {'over CPU':>9s}  " * 3)
  cpu = [min(t[i] for t in times["CPU"]) for i in (0, 1, 2)]
  for d in devs:
    cols = [(min(v), statistics.median(v), min(v) - cpu[i]) for i in (0, 1, 2) for v in [[t[i] for t in times[d]]]]
    print(f"{d:12s} " + "".join(f"{a:7.0f} {m:7.0f} {o:+9.0f}  " for a, m, o in cols))
  if args.json:
    with open(args.json, "w") as f: json.dump({d: {"op_end": [t[0] for t in v], "exit": [t[1] for t in v], "wall_op_end": [t[2] for t in v]}
                                        for d, v in times.items()}, f, indent=1)
  return 0

if __name__ == "__main__": sys.exit(main())
