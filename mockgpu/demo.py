"""The demo: a small real tinygrad program on each mock GPU, every result checked against DEV=CPU.

`python -m mockgpu demo [--dev MOCK+AMD ...]` runs one child interpreter per device configuration (tinygrad binds
its MOCK interface at import), and each child runs the program twice in-process: on the mock device and on CPU.
"""
from __future__ import annotations
import os, subprocess, sys, time
from mockgpu import config


def program(dev:str) -> dict:
  """A matmul, a softmax and a two-layer MLP forward and backward, from seeded inputs."""
  import numpy as np
  from tinygrad import Tensor
  r = np.random.default_rng(0)
  a, b = Tensor(r.uniform(-1, 1, (96, 64)).astype(np.float32), device=dev), Tensor(r.uniform(-1, 1, (64, 80)).astype(np.float32), device=dev)
  x = Tensor(r.uniform(-1, 1, (16, 32)).astype(np.float32), device=dev)
  w1, w2 = Tensor(r.uniform(-.3, .3, (32, 48)).astype(np.float32), device=dev), Tensor(r.uniform(-.3, .3, (48, 10)).astype(np.float32), device=dev)
  labels = Tensor(r.integers(0, 10, 16).astype(np.int32), device=dev)
  loss = (x @ w1).relu().matmul(w2).sparse_categorical_crossentropy(labels)
  g1, g2 = loss.gradient(w1, w2)
  return {"matmul": (a @ b).numpy(), "softmax": (a * 4).softmax(axis=1).numpy(), "mlp loss": loss.numpy(),
          "mlp grad w1": g1.numpy(), "mlp grad w2": g2.numpy()}

def child() -> int:
  import numpy as np
  from tinygrad import Device
  from mockgpu import system
  dev = Device.DEFAULT
  t0 = time.perf_counter()
  got = program(dev)
  mock_s = time.perf_counter() - t0
  want = program("CPU")
  ok = True
  for name, g in got.items():
    # error relative to the result's scale: GPU and CPU kernels sum in different orders, so elements that cancel to
    # near zero keep the rounding of their larger partial sums
    err = float(np.max(np.abs(g - want[name])) / (np.max(np.abs(want[name])) + 1e-12))
    good = g.shape == want[name].shape and err < 1e-5
    ok &= good
    print(f"  {name:12s} {str(g.shape):10s} max err vs CPU {err:.1e} of its scale  {'ok' if good else 'MISMATCH'}")
  st = system.stats
  for isa in sorted({k.split('.')[0] for k in st}):
    unit = "waves" if isa.startswith("rdna") else "threads"
    print(f"  {isa}: {st[isa+'.launches']} kernels, {st[isa+'.groups']} {unit}, {st[isa+'.instructions']} "
          f"{'wave' if unit == 'waves' else 'warp'}-instructions, {st[isa+'.seconds']:.2f}s emulating")
  print(f"  wall time on {os.environ['DEV']}: {mock_s:.2f}s")
  return 0 if ok else 1

def main(devices:list[str]|None=None) -> int:
  failed = []
  for dev in devices or config.CONFIGURATIONS:
    print(f"DEV={dev}", flush=True)
    p = subprocess.run([sys.executable, "-m", "mockgpu.demo", "--child"], env={**os.environ, "DEV": dev})
    if p.returncode != 0: failed.append(dev)
  print("demo: all results match DEV=CPU" if not failed else f"demo: FAILED on {', '.join(failed)}")
  return 1 if failed else 0

if __name__ == "__main__": sys.exit(child() if sys.argv[1:] == ["--child"] else main(sys.argv[1:] or None))
