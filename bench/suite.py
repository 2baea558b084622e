#!/usr/bin/env python3
"""A test suite's wall time on each mock configuration against DEV=CPU: cold (empty caches) and warm.

  python bench/suite.py [--dev MOCK+AMD ...] [--cases N] [--json FILE]

The slice is fixed and made of small kernels dispatched once or twice, as a real suite's dtype and ALU tests are: the
first 40 cases of the op suite (tests/ops/opcases.py: binary ALU ops across dtypes) and every 8th cast and the first 4 cases
of each of a few elementwise ops of the differential suite (tests/diff/diffcases.py). Each case is one pytest test that builds
its computation on the DEV device and reads it back (no comparison: the suites themselves compare). The slice runs
with `pytest -n 2` on DEV=CPU and on each configuration, first with an empty mockgpu cache directory and tinygrad
compile cache (cold), then again with them filled (warm). Columns: wall seconds, CPU seconds of the whole process tree
(RUSAGE_CHILDREN: the machine is shared, CPU time is steadier), and each one's ratio to DEV=CPU's.
"""
from __future__ import annotations
import argparse, json, os, resource, subprocess, sys, tempfile, time

TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
CASES = [os.path.join(TESTS, "ops"), os.path.join(TESTS, "diff")]  # opcases and diffcases, by floor (tests/ops, tests/diff)
# the AMD boards besides MOCK+AMD's gfx1100 (the board is DEV's arch field, after the renderer)
OTHER_BOARDS = ("MOCK+AMD:LLVM:gfx1201", "MOCK+AMD:LLVM:gfx942", "MOCK+AMD:LLVM:gfx950")
DIFF_OPS = ("abs", "neg", "relu", "where", "square", "maximum", "add", "mul", "sub", "floordiv", "bitwise_and", "sqrt")

SUITE = '''
import os, sys, pytest
sys.path[:0] = {cases!r}
import numpy as np, opcases, diffcases, diffrunner
from tinygrad import Device
OPS = {ops!r}
DIFF = [c for c in diffcases.CASES if c["id"] in set({diff!r})]

@pytest.mark.parametrize("name", OPS)
def test_op(name):
  with opcases.on(Device.DEFAULT):
    out = opcases.CASES[name]["fn"](Device.DEFAULT)
  for t in (out if isinstance(out, tuple) else (out,)): t.numpy()

@pytest.mark.parametrize("case", DIFF, ids=[c["id"] for c in DIFF])
def test_diff(case):
  diffrunner.run_case(case, Device.DEFAULT)
'''

def slice_cases(n_ops:int=40) -> tuple[list[str], list[str]]:
  sys.path[:0] = CASES
  import opcases, diffcases
  ops = list(opcases.CASES)[:n_ops]
  casts = [c["id"] for c in diffcases.CASES if c["op"] == "cast"][::8]
  others = [c["id"] for op in DIFF_OPS for c in [c for c in diffcases.CASES if c["op"] == op][:4]]
  return ops, casts + others

def run(dev:str, path:str, tmp:str) -> dict:
  env = {**os.environ, "DEV": dev, "MOCKGPU_CACHE_DIR": os.path.join(tmp, "mockgpu"), "CACHEDB": os.path.join(tmp, "tinygrad.db")}
  r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
  p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", path], env=env, cwd=tmp,
                     capture_output=True, text=True)
  wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
  summary = (p.stdout.strip().splitlines() or ["?"])[-1]
  return {"wall_s": wall, "cpu_s": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, "ok": p.returncode == 0, "summary": summary}

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--dev", action="append", help="mock configurations (default: every one in mockgpu.config.CONFIGURATIONS, "
                  f"then the other AMD boards: {', '.join(OTHER_BOARDS)})")
  ap.add_argument("--cases", type=int, default=40, help="op-suite cases in the slice")
  ap.add_argument("--json", help="write the results here")
  args = ap.parse_args()
  from mockgpu.config import CONFIGURATIONS
  ops, diff = slice_cases(args.cases)
  results:dict[str, dict] = {}
  with tempfile.TemporaryDirectory() as work:
    path = os.path.join(work, "test_slice.py")
    with open(path, "w") as f: f.write(SUITE.format(cases=CASES, ops=ops, diff=diff))
    print(f"{len(ops) + len(diff)} tests ({len(ops)} op-suite cases, {len(diff)} differential cases), pytest -n 2")
    cols = "".join(f" {c:>9s} {'ratio':>6s}" for c in ("cold wall", "cold CPU", "warm wall", "warm CPU"))
    devs = ["CPU", *(args.dev or (*CONFIGURATIONS, *OTHER_BOARDS))]
    width = max(len(d) for d in devs) + 1
    print(f"{'device':{width}s}{cols}")
    for dev in devs:
      with tempfile.TemporaryDirectory() as tmp:
        r = results[dev] = {"cold": run(dev, path, tmp), "warm": run(dev, path, tmp)}
      _row(dev, r, results["CPU"], width)
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=1)
  return 0

def _row(dev:str, r:dict, cpu:dict, width:int):
  cells = []
  for state in ("cold", "warm"):
    for k in ("wall_s", "cpu_s"):
      cells.append(f"{r[state][k]:9.1f} {r[state][k] / cpu[state][k]:5.2f}x")
  bad = [f"{s}: {r[s]['summary']}" for s in ("cold", "warm") if not r[s]["ok"]]
  print(f"{dev:{width}s}" + " ".join(cells) + (f"   FAILED {bad}" if bad else ""), flush=True)

if __name__ == "__main__": sys.exit(main())
