#!/usr/bin/env python3
"""The cost of tinygrad's AMD profilers on the mock: a 256x256 matmul, unprofiled and with VIZ=-2 (SQTT + PMC).

  python bench/profiling.py [--size 256] [--runs 5] [--dev MOCK+AMD:LLVM:gfx942]

Each mode runs in its own child interpreter (DEV=MOCK+AMD or --dev; the profilers are chosen when the device opens). The child
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

def run(env:dict, size:int, runs:int, dev:str) -> float:
  with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run([sys.executable, "-c", CHILD, str(size), str(runs)], env={**os.environ, "DEV": dev, "TMPDIR": tmp, **env},
                       capture_output=True, text=True, check=True)
  return float(next(line.split()[1] for line in p.stdout.splitlines() if line.startswith("BEST")))

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--size", type=int, default=256)
  ap.add_argument("--runs", type=int, default=5)
  ap.add_argument("--dev", default="MOCK+AMD", help="the device and board, e.g. MOCK+AMD:LLVM:gfx942 (CDNA: 32 traced SEs)")
  args = ap.parse_args()
  plain, profiled = run({}, args.size, args.runs, args.dev), run({"VIZ": "-2"}, args.size, args.runs, args.dev)
  print(f"{args.dev} matmul {args.size}x{args.size}: unprofiled {plain * 1e3:.1f} ms, VIZ=-2 (SQTT+PMC) {profiled * 1e3:.1f} ms, "
        f"{profiled / plain:.2f}x (target <= 5x)")

if __name__ == "__main__": main()
