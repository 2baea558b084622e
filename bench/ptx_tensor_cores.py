#!/usr/bin/env python3
"""A tinygrad half matmul with tensor cores (mma.sync) on MOCK+NV (tinygrad's PTX renderer), warm: the seconds of one
realize after the kernel is compiled and hot, on each PTX executor path (numpy; C).

  python bench/ptx_tensor_cores.py [N]
"""
import os, subprocess, sys, textwrap

CODE = """
import sys, time, numpy as np
from tinygrad import Tensor, dtypes
n = int(sys.argv[1])
rng = np.random.default_rng(0)
a, b = Tensor(rng.standard_normal((n, n)).astype(np.float16)).realize(), Tensor(rng.standard_normal((n, n)).astype(np.float16)).realize()
for _ in range(4): (a @ b).realize()   # compiled, translated (the C path: MOCKGPU_PTX_NATIVE=1)
best = 1e9
for _ in range(3):
  t = time.perf_counter(); (a @ b).realize().numpy(); best = min(best, time.perf_counter() - t)
print(f"{best:.3f}")
"""

if __name__ == "__main__":
  n = sys.argv[1] if len(sys.argv) > 1 else "256"
  for path, mode in (("numpy", "0"), ("C", "1")):
    env = {**os.environ, "DEV": "MOCK+NV:PTX", "MOCKGPU_PTX_NATIVE": mode}
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(CODE), n], env=env, capture_output=True, text=True, check=True)
    print(f"{path:>6}: {n}x{n} half matmul with tensor cores, warm: {p.stdout.strip()} s")
