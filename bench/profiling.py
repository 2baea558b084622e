#!/usr/bin/env python3
"""The cost of tinygrad's AMD profilers on the mock: a 256x256 matmul, unprofiled and with VIZ=-2 (SQTT + PMC).

  python bench/profiling.py [--size 256] [--runs 5]

Each mode runs in its own child interpreter (DEV=MOCK+AMD; the profilers are chosen when the device opens). The child
realizes the matmul once (translation, C build), then times `runs` warm realizes with a synchronize each, and prints the
least wall time. Profiled dispatches run on the numpy path (the recorder needs its block steps) and add the counters,
the timing model of the traced SIMDs and the trace encoding; the target is at most 5x the unprofiled time.
"""
from __future__ import annotations
import argparse, os, subprocess, sys, tempfile, textwrap

CHILD = textwrap.dedent("""
  import sys, time
  from tinygrad import Tensor, Device
  n, runs = int(sys.argv[1]), int(sys.argv[2])
  a = Tensor.ones(n, n).contiguous().realize()
  (a @ a).realize(); Device["AMD"].synchronize()
  best = float("inf")
  for _ in range(runs):
    t0 = time.perf_counter(); (a @ a).realize(); Device["AMD"].synchronize(); best = min(best, time.perf_counter() - t0)
  print("BEST", best)
""")

def run(env:dict, size:int, runs:int) -> float:
  with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run([sys.executable, "-c", CHILD, str(size), str(runs)], env={**os.environ, "DEV": "MOCK+AMD", "TMPDIR": tmp, **env},
                       capture_output=True, text=True, check=True)
  return float(next(line.split()[1] for line in p.stdout.splitlines() if line.startswith("BEST")))

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--size", type=int, default=256)
  ap.add_argument("--runs", type=int, default=5)
  args = ap.parse_args()
  plain, profiled = run({}, args.size, args.runs), run({"VIZ": "-2"}, args.size, args.runs)
  print(f"matmul {args.size}x{args.size}: unprofiled {plain * 1e3:.1f} ms, VIZ=-2 (SQTT+PMC) {profiled * 1e3:.1f} ms, "
        f"{profiled / plain:.2f}x (target <= 5x)")

if __name__ == "__main__": main()
