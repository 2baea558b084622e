#!/usr/bin/env python3
"""Benchmarks: each workload on every mock device and on DEV=CPU, in one invocation.

  python bench/run.py [--dev MOCK+AMD ...] [--only matmul_512 ...] [--json FILE]

Each (device, workload) runs in its own child interpreter, so peak RSS is the workload's own. A child runs the
workload once cold (compiles, translates, fills caches), then warms it up until it is steady (every kernel that pays its C
build built: `_warm_up`), then times three warm runs. Columns:
  wall s      warm wall seconds for one run of the workload
  ratio       mock wall / CPU wall (the CPU backend is the native side)
  Minst/s     million wave-instructions (RDNA) or thread-instructions (PTX) emulated per second of that run's wall time
  emu Mi/s    the same per second spent inside the executor (what the executor itself sustains)
  launch/s    kernel launches per second of that run
  RSS MiB     peak resident memory of the child; `budget` = 2 x device memory the workload allocates + 500 MiB
"""
from __future__ import annotations
import argparse, json, os, resource, statistics, subprocess, sys, time
from mockgpu.config import CONFIGURATIONS
from mockgpu.compiler.native import HOT_DISPATCHES


def _elementwise(T, n=4 << 20): x = T.rand(n).realize(); return lambda: (x.exp() * 2 + 1).realize()
def _sum(T, n=4 << 20): x = T.rand(n).realize(); return lambda: x.sum().realize()
def _softmax(T): x = T.rand(4096, 1024).realize(); return lambda: x.softmax(axis=1).realize()
def _matmul(n):
  def make(T):
    a, b = T.rand(n, n).realize(), T.rand(n, n).realize()
    return lambda: (a @ b).realize()
  return make
def _conv(T):
  x, w = T.rand(1, 64, 56, 56).realize(), T.rand(64, 64, 3, 3).realize()
  return lambda: x.conv2d(w, padding=1).realize()
def _mlp_step(T):
  from tinygrad import nn
  from tinygrad.helpers import Context
  l1, l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  opt = nn.optim.SGD(nn.state.get_parameters([l1, l2]), lr=0.01)
  x, y = T.rand(64, 784).realize(), T.randint(64, high=10).realize()
  def step():
    with Context(TRAINING=1):
      opt.zero_grad()
      loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
      loss.backward()
      opt.step()
      return loss.realize()
  return step
def _tiny_launches(T, n=2000):
  """2000 launches of a 16-element kernel through tinygrad's JIT, the path a training loop's steady state takes."""
  from tinygrad import TinyJit
  x = T.zeros(16).contiguous().realize()
  @TinyJit
  def bump(): return x.assign(x + 1).realize()
  def go():
    for _ in range(n): bump()
    return x
  return go

WORKLOADS = {"elementwise_4M": _elementwise, "sum_4M": _sum, "softmax_4096x1024": _softmax, "matmul_256": _matmul(256),
             "matmul_512": _matmul(512), "matmul_1024": _matmul(1024), "conv2d_64x56x56": _conv, "mlp_train_step": _mlp_step,
             "tiny_launches_2000": _tiny_launches}

def child(workload:str) -> dict:
  """Runs in the child: DEV is set, tinygrad is imported here."""
  from tinygrad import Tensor, Device, GlobalCounters
  Tensor.manual_seed(0)
  run = WORKLOADS[workload](Tensor)
  t0 = time.perf_counter(); run(); Device[Device.DEFAULT].synchronize(); cold = time.perf_counter() - t0
  _warm_up(run, Device[Device.DEFAULT].synchronize)
  stats0 = _mock_stats()
  times = []
  GlobalCounters.reset()
  for _ in range(3):
    t0 = time.perf_counter(); run(); Device[Device.DEFAULT].synchronize(); times.append(time.perf_counter() - t0)
  stats1 = _mock_stats()
  warm = statistics.median(times)
  d = {k: stats1.get(k, 0) - stats0.get(k, 0) for k in stats1}
  # RDNA counts wave-instructions, PTX thread-instructions (the units of the targets)
  insts = d.get("ptx.thread_instructions", 0) + sum(v for k, v in d.items() if k.endswith(".instructions") and not k.startswith("ptx"))
  launches = sum(v for k, v in d.items() if k.endswith(".launches")) or GlobalCounters.kernel_count
  return {"cold_s": cold, "wall_s": warm, "launches_per_s": launches / sum(times), "kernels": launches / len(times),
          "minst_per_s": insts / sum(times) / 1e6 if insts else None,
          "emu_minst_per_s": insts / emu_s / 1e6 if insts and (emu_s:=sum(v for k, v in d.items() if k.endswith(".seconds"))) else None,
          "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "mem_mib": GlobalCounters.mem_used / 2**20}

WARM_UP_SECONDS = 60.0

def _warm_up(run, sync):
  """Run the workload until it is steady: a kernel gets its C build once the numpy path has spent the build's estimated
  seconds on it (compiler/native.py Tier), in the background, so a hot loop reaches C after a number of runs that
  depends on the kernel (its build's estimated seconds over its numpy seconds per run). At least HOT_DISPATCHES runs,
  then until a run dispatches nothing on numpy, or for WARM_UP_SECONDS (kernels C declines stay on numpy)."""
  native = sys.modules.get("mockgpu.compiler.native")
  t0 = time.perf_counter()
  for i in range(1000):
    before = _mock_stats()
    run(); sync()
    if native is None: continue
    native.wait()
    d = {k: v - before.get(k, 0) for k, v in _mock_stats().items()}
    numpy = sum(v for k, v in d.items() if k.endswith(".launches") and not k.endswith("native_launches")) - \
            sum(v for k, v in d.items() if k.endswith(".native_launches"))
    if i + 1 >= HOT_DISPATCHES and (numpy <= 0 or time.perf_counter() - t0 > WARM_UP_SECONDS): break
  if native is not None:
    run(); sync()  # the kernels built during the last run switch to C here

def _mock_stats() -> dict:
  return dict(sys.modules["mockgpu.system"].stats) if "mockgpu.system" in sys.modules else {}

def run_child(dev:str, workload:str) -> dict:
  p = subprocess.run([sys.executable, __file__, "--child", workload], env={**os.environ, "DEV": dev}, capture_output=True, text=True, timeout=3600)
  if p.returncode != 0: return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
  return json.loads(p.stdout.strip().splitlines()[-1])

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--dev", action="append", help="mock device configurations (default: all)")
  ap.add_argument("--only", action="append", help="workloads (default: all)", choices=list(WORKLOADS))
  ap.add_argument("--json", help="write the results here")
  ap.add_argument("--child", help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.child:
    print(json.dumps(child(args.child)))
    return 0
  devs, loads = args.dev or list(CONFIGURATIONS), args.only or list(WORKLOADS)
  results = {}
  print(f"{'workload':20s} {'device':14s} {'cold s':>8s} {'wall s':>8s} {'ratio':>7s} {'Minst/s':>8s} {'emu Mi/s':>9s} {'launch/s':>9s} "
        f"{'RSS MiB':>8s} {'budget':>7s}")
  for w in loads:
    cpu = results.setdefault(w, {})["CPU"] = run_child("CPU", w)
    _row(w, "CPU", cpu, None)
    for dev in devs:
      r = results[w][dev] = run_child(dev, w)
      _row(w, dev, r, cpu)
  ratios = {dev: [results[w][dev]["ratio"] for w in loads if "ratio" in results[w][dev]] for dev in devs}
  for dev, rs in ratios.items():
    if rs: print(f"{dev}: median ratio {statistics.median(rs):.1f}x, max {max(rs):.1f}x over {len(rs)} workloads")
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=1)
  return 0

def _row(w:str, dev:str, r:dict, cpu:dict|None):
  if "error" in r:
    print(f"{w:20s} {dev:14s} error: {r['error']}")
    return
  if cpu is not None and "wall_s" in cpu: r["ratio"] = r["wall_s"] / cpu["wall_s"]
  budget = 2 * r["mem_mib"] + 500
  mi = f"{r['minst_per_s']:.1f}" if r.get("minst_per_s") else "-"
  emi = f"{r['emu_minst_per_s']:.1f}" if r.get("emu_minst_per_s") else "-"
  ratio = f"{r['ratio']:.1f}x" if "ratio" in r else "-"
  print(f"{w:20s} {dev:14s} {r['cold_s']:8.2f} {r['wall_s']:8.3f} {ratio:>7s} {mi:>8s} {emi:>9s} {r['launches_per_s']:9.0f} {r['rss_mib']:8.0f} "
        f"{budget:7.0f}", flush=True)

if __name__ == "__main__": sys.exit(main())
