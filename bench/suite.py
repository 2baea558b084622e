#!/usr/bin/env python3
"""A test suite's wall time on each mock configuration against DEV=CPU: cold (empty caches) and warm.

  python bench/suite.py [--dev MOCK+AMD ...] [--cases N] [--json FILE] [--repeat N]

The slice is fixed and made of small kernels dispatched once or twice, as a real suite's dtype and ALU tests are: the
first 40 cases of the op suite (tests/ops/opcases.py: binary ALU ops across dtypes) and every 8th cast and the first 4 cases
of each of a few elementwise ops of the differential suite (tests/diff/diffcases.py). Each case is one pytest test that builds
its computation on the DEV device and reads it back (no comparison: the suites themselves compare). The slice runs
with `pytest -n 2` on DEV=CPU and on each configuration, first with an empty mockgpu cache directory and tinygrad
compile cache (cold), then again with them filled (warm). Columns: wall seconds, CPU seconds of the whole process tree
(RUSAGE_CHILDREN: the machine is shared, CPU time is steadier), and each one's ratio to DEV=CPU's.
`--repeat N` runs the slice N times in a row per device with one cache directory (the first run cold), as a CI cache
kept between runs or a developer re-running pytest, and prints per run the wall and CPU seconds, the dispatches that
ran on numpy and on C, and the CPU seconds of the workers' children (the C builds, background ones included): the C
build history (MOCKGPU_CC_HISTORY) at work.
`--seams` adds, per mock configuration, mockgpu's own CPU seconds (thread CPU inside mockgpu where tinygrad calls it,
summed over the workers: bench/first_op.py's seams) and the ratio to DEV=CPU of the rest, which is tinygrad's work for
the device and pytest's: what the ratio would be if mockgpu's work cost nothing. The wrapping adds a little to each seam.
"""
from __future__ import annotations
import argparse, json, os, resource, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from first_op import WRAP

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

if os.environ.get("SUITE_COUNTS"):  # --repeat: each worker appends its dispatches per path and its children's CPU at exit
  import atexit, json, resource
  from mockgpu import events
  PATHS = {{"numpy": 0, "C": 0}}
  def ran(report):
    PATHS["C" if report["native"] else "numpy"] += 1
  events.listen("kernel_ran", ran)
  def tiers():  # each kernel's tiering: [key, its build's estimate, numpy seconds here, in earlier processes]
    rdna, ptx = sys.modules.get("mockgpu.emulators.rdna.executor"), sys.modules.get("mockgpu.emulators.ptx")
    ts = [p.tier for p in rdna._programs.values()] if rdna else []
    ts += [k.tier for m in ptx._modules.values() for k in m.kernels.values()] if ptx else []
    return [[t.key, t.cost, t.spent, t.earlier, t.result not in (False, None)] for t in ts if getattr(t, "earlier", None) is not None
            and t.key is not None]   # (a mockgpu without the history: none)
  def counts():  # registered before the C build thread's exit handler, so it runs after it: the builds are done
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    rec = {{**PATHS, "cc_s": ru.ru_utime + ru.ru_stime, "tiers": tiers()}}
    with open(os.environ["SUITE_COUNTS"], "a") as f: f.write(json.dumps(rec) + "\\n")
  atexit.register(counts)
'''

# --seams: each pytest process wraps mockgpu's seams (first_op.WRAP) and appends its thread CPU inside them at exit
CONFTEST = '''import atexit, os
if os.environ.get("SUITE_SEAMS"):  # (not on DEV=CPU)
  exec(compile({wrap!r}, "first_op.WRAP", "exec"))
  def _seams():
    with open(os.environ["SUITE_SEAMS"], "a") as f: f.write(f"{{sum(spent.values())}}\\n")
  atexit.register(_seams)
'''

def slice_cases(n_ops:int=40) -> tuple[list[str], list[str]]:
  sys.path[:0] = CASES
  import opcases, diffcases
  ops = list(opcases.CASES)[:n_ops]
  casts = [c["id"] for c in diffcases.CASES if c["op"] == "cast"][::8]
  others = [c["id"] for op in DIFF_OPS for c in [c for c in diffcases.CASES if c["op"] == op][:4]]
  return ops, casts + others

def run(dev:str, path:str, tmp:str, counts:str|None=None, seams:bool=False) -> dict:
  env = {**os.environ, "DEV": dev, "MOCKGPU_CACHE_DIR": os.path.join(tmp, "mockgpu"), "CACHEDB": os.path.join(tmp, "tinygrad.db")}
  if counts is not None: env["SUITE_COUNTS"] = counts
  env.pop("PYTHONDONTWRITEBYTECODE", None)  # Python writes the bytecode of what the workers import, as an installed package has it
  if seams: env["SUITE_SEAMS"] = own = os.path.join(tmp, f"seams-{time.monotonic_ns()}.txt")
  r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
  p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", path], env=env, cwd=tmp,
                     capture_output=True, text=True)
  wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
  summary = (p.stdout.strip().splitlines() or ["?"])[-1]
  out = {"wall_s": wall, "cpu_s": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, "ok": p.returncode == 0, "summary": summary}
  if seams and os.path.exists(own):
    with open(own) as f: out["mockgpu_s"] = sum(float(line) for line in f)
  return out

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--dev", action="append", help="mock configurations (default: every one in mockgpu.config.CONFIGURATIONS, "
                  f"then the other AMD boards: {', '.join(OTHER_BOARDS)})")
  ap.add_argument("--cases", type=int, default=40, help="op-suite cases in the slice")
  ap.add_argument("--json", help="write the results here")
  ap.add_argument("--rounds", type=int, default=1, help="run each device's cold and warm slice this many times, the devices in "
                  "turn, and print the least of each measure")
  ap.add_argument("--seams", action="store_true", help="add mockgpu's own CPU seconds and the ratio of the rest to DEV=CPU")
  ap.add_argument("--repeat", type=int, help="instead: run the slice this many times in a row with one cache directory "
                  "(the first cold) and print each run's wall and CPU seconds, dispatches on numpy and on C, and the CPU "
                  "seconds of the workers' children (the C builds)")
  args = ap.parse_args()
  if args.repeat and (args.seams or args.rounds > 1): ap.error("--repeat runs the slice in one cache directory: no --seams or --rounds")
  from mockgpu.config import CONFIGURATIONS
  ops, diff = slice_cases(args.cases)
  results:dict[str, dict] = {}
  with tempfile.TemporaryDirectory() as work:
    path = os.path.join(work, "test_slice.py")
    with open(path, "w") as f: f.write(SUITE.format(cases=CASES, ops=ops, diff=diff))
    if args.seams:
      with open(os.path.join(work, "conftest.py"), "w") as f: f.write(CONFTEST.format(wrap=WRAP))
    print(f"{len(ops) + len(diff)} tests ({len(ops)} op-suite cases, {len(diff)} differential cases), pytest -n 2")
    cols = "".join(f" {c:>9s} {'ratio':>6s}" for c in ("cold wall", "cold CPU", "warm wall", "warm CPU"))
    cols += f" {'mockgpu':>8s} {'rest':>6s}" * 2 if args.seams else ""
    devs = ["CPU", *(args.dev or (*CONFIGURATIONS, *OTHER_BOARDS))]
    width = max(len(d) for d in devs) + 1
    if args.repeat: return repeated(devs, path, args.repeat, width, args.json)
    print(f"{'device':{width}s}{cols}" + (f"   (the least of {args.rounds} rounds)" if args.rounds > 1 else ""))
    runs:dict[str, list[dict]] = {d: [] for d in devs}
    for i in range(args.rounds):   # round after round, the devices in turn (A/B: the machine's load drifts)
      for dev in devs:
        with tempfile.TemporaryDirectory() as tmp:
          seams = args.seams and dev != "CPU"
          runs[dev].append({"cold": run(dev, path, tmp, seams=seams), "warm": run(dev, path, tmp, seams=seams)})
        if i == args.rounds - 1: _row(dev, results.setdefault(dev, _least(runs[dev])), results["CPU"], width)
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=1)
  return 0

def repeated(devs:list[str], path:str, n:int, width:int, out:str|None) -> int:
  """The slice n times in a row per device, one cache directory kept between the runs (a CI cache, a developer
  re-running pytest): what the C build history (MOCKGPU_CC_HISTORY) changes from run to run."""
  results:dict[str, list] = {}
  print(f"{'device':{width}s} {'run':>3s} {'wall':>7s} {'CPU':>7s} {'numpy':>6s} {'C':>6s} {'cc CPU':>7s}   (s; dispatches)")
  for dev in devs:
    with tempfile.TemporaryDirectory() as tmp:
      for i in range(n):
        counts = os.path.join(tmp, f"counts-{i}.jsonl")
        r = run(dev, path, tmp, None if dev == "CPU" else counts)
        workers = [json.loads(line) for line in open(counts)] if os.path.exists(counts) else []
        r.update({k: sum(w[k] for w in workers) for k in ("numpy", "C", "cc_s")} if workers else {"numpy": 0, "C": 0, "cc_s": 0.0})
        r["paid"] = _paid([t for w in workers for t in w.get("tiers", [])])
        results.setdefault(dev, []).append(r)
        print(f"{dev:{width}s} {i + 1:3d} {r['wall_s']:7.1f} {r['cpu_s']:7.1f} {r['numpy']:6d} {r['C']:6d} {r['cc_s']:7.1f}  {r['paid']}"
              + ("" if r["ok"] else f"   FAILED {r['summary']}"), flush=True)
  if out:
    with open(out, "w") as f: json.dump(results, f, indent=1)
  return 0

def _paid(tiers:list) -> str:
  """How far the kernels' numpy seconds over all runs so far (this run's, both workers, and earlier runs') have come to
  their C builds' estimates: the ski rental's progress."""
  kernels:dict[str, list] = {}
  for key, cost, spent, earlier, built in tiers:
    k = kernels.setdefault(key, [cost, earlier, 0.0, False])
    k[1], k[2], k[3] = min(k[1], earlier), k[2] + spent, k[3] or built
  if not kernels: return ""
  ratios = sorted((earlier + spent) / cost for cost, earlier, spent, _ in kernels.values())
  return (f"{len(kernels)} kernels: numpy s / build estimate median {ratios[len(ratios) // 2]:.2f}, max {ratios[-1]:.2f}; "
          f"{sum(r >= 1 for r in ratios)} paid, {sum(k[3] for k in kernels.values())} on C; build estimates "
          f"{sum(k[0] for k in kernels.values()):.1f} s, numpy {sum(k[2] for k in kernels.values()):.2f} s this run")

def _least(rounds:list[dict]) -> dict:
  """Each measure's least over the rounds (the run that failed, if one did, for its summary)."""
  out = {}
  for state in ("cold", "warm"):
    rs = [r[state] for r in rounds]
    out[state] = {**min(rs, key=lambda r: (r["ok"], r["cpu_s"])), **{k: min(r[k] for r in rs) for k in ("wall_s", "cpu_s")}}
  return out

def _row(dev:str, r:dict, cpu:dict, width:int):
  cells = []
  for state in ("cold", "warm"):
    for k in ("wall_s", "cpu_s"):
      cells.append(f"{r[state][k]:9.1f} {r[state][k] / cpu[state][k]:5.2f}x")
  for state in ("cold", "warm") if "mockgpu_s" in r["cold"] else ():  # --seams: mockgpu's own, and the rest against DEV=CPU
    cells.append(f"{r[state]['mockgpu_s']:8.2f} {(r[state]['cpu_s'] - r[state]['mockgpu_s']) / cpu[state]['cpu_s']:5.2f}x")
  bad = [f"{s}: {r[s]['summary']}" for s in ("cold", "warm") if not r[s]["ok"]]
  print(f"{dev:{width}s}" + " ".join(cells) + (f"   FAILED {bad}" if bad else ""), flush=True)

if __name__ == "__main__": sys.exit(main())
