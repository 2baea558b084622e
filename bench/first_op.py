#!/usr/bin/env python3
"""A fresh process's first op on each device against DEV=CPU: the interpreter's start, tinygrad's import, the device
open and one small kernel (`(Tensor([1., 2, 3]) + 1).tolist()`), in CPU milliseconds of the whole process.

  python bench/first_op.py [--dev MOCK+AMD ...] [--rounds N] [--cold] [--json FILE]

Warm (the default) is the state of a test run's second process: mockgpu's translation cache and tinygrad's compile
cache (CACHEDB) hold the kernel, filled by one unmeasured run per device in a temporary directory. --cold empties
both before each run. The devices run in turn, round after round (A/B alternation, as the machine may be loaded);
each child's CPU time is its user + system time (RUSAGE_CHILDREN: its own children, a C compiler, included). The
table gives the least and the median of the rounds and the least's excess over DEV=CPU's (issue 22: at most 100 ms).
"""
from __future__ import annotations
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile

CHILD = "from tinygrad import Tensor\nassert (Tensor([1., 2, 3]) + 1).tolist() == [2., 3., 4.]\n"
DEVICES = ("CPU", "MOCK+AMD", "MOCK+NV", "MOCK+CUDA")

def run(dev:str, tmp:str, cold:bool) -> float:
  """One child's CPU milliseconds."""
  cache, db = os.path.join(tmp, dev, "mockgpu"), os.path.join(tmp, dev, "tinygrad.db")
  if cold:
    shutil.rmtree(os.path.join(tmp, dev), ignore_errors=True)
  os.makedirs(os.path.join(tmp, dev), exist_ok=True)
  env = {**os.environ, "DEV": dev, "MOCKGPU_CACHE_DIR": cache, "CACHEDB": db}
  r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
  p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
  r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
  if p.returncode != 0: raise RuntimeError(f"DEV={dev}: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
  return 1e3 * (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--dev", action="append", help=f"devices besides CPU (default: {', '.join(DEVICES[1:])})")
  ap.add_argument("--rounds", type=int, default=5)
  ap.add_argument("--cold", action="store_true", help="empty the caches before each run")
  ap.add_argument("--json", help="write the results here")
  args = ap.parse_args()
  devs = ["CPU", *(args.dev or DEVICES[1:])]
  times:dict[str, list[float]] = {d: [] for d in devs}
  with tempfile.TemporaryDirectory() as tmp:
    if not args.cold:
      for d in devs: run(d, tmp, False)  # fills the caches: the runs below are a warm process's
    for _ in range(args.rounds):
      for d in devs: times[d].append(run(d, tmp, args.cold))
  cpu = min(times["CPU"])
  print(f"{'device':10s} {'least':>7s} {'median':>7s} {'over CPU':>8s}   (CPU ms of a fresh process's first op, {args.rounds} rounds, "
        f"{'cold' if args.cold else 'warm'})")
  for d in devs:
    print(f"{d:10s} {min(times[d]):7.0f} {statistics.median(times[d]):7.0f} {min(times[d]) - cpu:+8.0f}")
  if args.json:
    with open(args.json, "w") as f: json.dump(times, f, indent=1)
  return 0

if __name__ == "__main__": sys.exit(main())
