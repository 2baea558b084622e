#!/usr/bin/env python3
"""Markdown tables (as in the README) from one or more `bench/run.py --json` files: python bench/table.py A.json [B.json ...]"""
import json, sys
from mockgpu.config import CONFIGURATIONS

def main(paths:list[str]):
  rows:dict[str, dict] = {}
  for p in paths:
    for w, devs in json.load(open(p)).items():
      for d, r in devs.items(): rows.setdefault(w, {})[d] = r
  devs = sorted({d for r in rows.values() for d in r if d != "CPU"}, key=CONFIGURATIONS.index)
  print("wall seconds of a warm run (ratio to DEV=CPU):\n")
  print("| workload | CPU s | " + " | ".join(devs) + " |\n| --- | ---: | " + " | ".join("---:" for _ in devs) + " |")
  for w, r in rows.items():
    cells = [f"{r[d]['wall_s']:.3f} ({r[d]['ratio']:.1f}x)" if "ratio" in r.get(d, {}) else "error" for d in devs]
    print(f"| {w} | {r['CPU']['wall_s']:.3f} | " + " | ".join(cells) + " |")
  print("\nmillion wave-instructions (RDNA) or thread-instructions (PTX) per second of executor time; launches/s for the tiny kernel:\n")
  print("| workload | " + " | ".join(devs) + " |\n| --- | " + " | ".join("---:" for _ in devs) + " |")
  for w, r in rows.items():
    cells = [f"{r.get(d, {}).get('launches_per_s', 0):.0f}/s" if w.startswith("tiny") else
             (f"{r[d]['emu_minst_per_s']:.0f}" if r.get(d, {}).get("emu_minst_per_s") else "-") for d in devs]
    print(f"| {w} | " + " | ".join(cells) + " |")
  print("\npeak RSS MiB (budget: 2 x device memory + 500 MiB):\n")
  print("| workload | " + " | ".join(devs) + " |\n| --- | " + " | ".join("---:" for _ in devs) + " |")
  for w, r in rows.items():
    cell = lambda d: f"{r[d]['rss_mib']:.0f} / {2 * r[d]['mem_mib'] + 500:.0f}" if "rss_mib" in r.get(d, {}) else "-"
    print(f"| {w} | " + " | ".join(cell(d) for d in devs) + " |")

if __name__ == "__main__": main(sys.argv[1:])
