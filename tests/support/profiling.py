"""What the AMD profiler tests (tests/emulators/test_profiling_amd.py, test_profiling_cdna.py) share: reading a child's
result line, and the workload whose traced waves their stream tests compare with the reference stepper."""

def result(p) -> str:
  """The child's RESULT line (VIZ prints its own lines after the script's)."""
  return next(line.removeprefix("RESULT ") for line in reversed(p.stdout.splitlines()) if line.startswith("RESULT "))

# child-program text: a 64x64 matmul (a loop) and a 5000-element sum (LDS), each checked against numpy into `ok`, while
# the child's `hook` intercepts every RDNA dispatch (it steps each traced wave on the reference stepper)
STREAM_WORKLOAD = """
from mockgpu import events
events.intercept("rdna_dispatch", hook)
rng = np.random.default_rng(7)
a, b = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal(5000).astype(np.float32)
ok = np.allclose((Tensor(a) @ Tensor(a)).numpy(), a @ a, atol=1e-3)
ok &= np.allclose(Tensor(b).sum().numpy(), b.sum(), atol=1e-2)
"""
