#!/usr/bin/env python3
"""The AM boot on the mock (DEV=MOCKPCI+AMD): how long tinygrad's own driver takes to bring up one mock GPU, and how
much of that is mockgpu's own time.

  python bench/am_boot.py [gfx1100|gfx1201] [devices]

Each board boots in a child interpreter (the mock machine lives in one process). Columns per device:
  wall s      Device["AMD:i"] from the first call to a usable device (PCI probe, AM boot, queues)
  sleep s     of which tinygrad's own time.sleep calls (AM waits 20-50 ms after some handshakes, as on hardware)
  mockgpu s   time spent inside mockgpu's code (cProfile tottime of its functions; the profiler inflates it a little)
"""
import json, os, subprocess, sys

CHILD = r"""
import cProfile, json, pstats, sys, time
slept = [0.0]
_sleep = time.sleep
def counting_sleep(s): slept[0] += s; _sleep(s)
time.sleep = counting_sleep
from tinygrad import Device
import tinygrad.runtime.ops_amd
rows = []
for i in range(int(sys.argv[1])):
  slept[0] = 0.0
  pr = cProfile.Profile()
  t = time.perf_counter(); pr.enable(); Device[f"AMD:{i}"]; pr.disable(); wall = time.perf_counter() - t
  own = sum(st[2] for (fn, _, _), st in pstats.Stats(pr).stats.items() if "/mockgpu/" in fn)
  rows.append({"device": i, "wall": wall, "sleep": slept[0], "mockgpu": own})
print("ROWS " + json.dumps(rows))
"""

def main():
  board = sys.argv[1] if len(sys.argv) > 1 else "gfx1100"
  n = int(sys.argv[2]) if len(sys.argv) > 2 else 2
  env = {**os.environ, "DEV": f"MOCKPCI+AMD:LLVM:{board}", "MOCKGPU_COUNT": str(n)}
  p = subprocess.run([sys.executable, "-c", CHILD, str(n)], env=env, capture_output=True, text=True, timeout=600)
  line = next((l for l in p.stdout.splitlines() if l.startswith("ROWS ")), None)
  if line is None: sys.exit(f"boot failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
  print(f"AM boot on DEV=MOCKPCI+AMD:LLVM:{board}")
  print(f"{'device':>6} {'wall s':>8} {'sleep s':>8} {'mockgpu s':>10}")
  for r in json.loads(line[5:]): print(f"{r['device']:>6} {r['wall']:>8.3f} {r['sleep']:>8.3f} {r['mockgpu']:>10.3f}")

if __name__ == "__main__": main()
