"""The differential suite's multi-kernel and multi-device part, on every configuration against DEV=CPU in the same
process: TinyJit bodies of several kernels (asserting that tinygrad put them into a graph: HCQGraph, CUDAGraph or a
MultiGraphRunner), 4-device sharding (elementwise, cross-device reductions, sharded matmul), cross-device copies
(`to`, `to_`, a chain over four GPUs), `shard_`/`shard_like`, and a TinyJit over sharded inputs.

tinygrad's CUDA device passes no graph class under its MOCK interface (ops_cuda.py: `None if MOCKGPU else CUDAGraph`),
so on MOCK+CUDA a TinyJit runs its kernels one by one on purpose; there the test asserts that and the results.

Inputs are whole numbers in float32, so every summation order gives the same float: results compare bit for bit.
"""
import json
import pytest
from conftest import run_tinygrad, board_configs
from mockgpu.config import CONFIGURATIONS

PROGRAM = r'''
import json, numpy as np
from tinygrad import Tensor, TinyJit, Device
from tinygrad.uop.ops import Ops
from tinygrad.engine.jit import graph_cache
D = Device.DEFAULT
DS = tuple(f"{D}:{i}" for i in range(4))
def whole(shape, seed): return np.random.default_rng(seed).integers(-8, 9, shape).astype(np.float32)
res = {}
def same(name, got, want):
  got, want = np.asarray(got), np.asarray(want)
  res[name] = bool(got.shape == want.shape and got.tobytes() == want.tobytes()) or f"{got.ravel()[:6]} != {want.ravel()[:6]}"

def body(a, b): return (((a @ b).relu().contiguous() + a.sum()).contiguous() * 2 - b.max()).contiguous().sum(axis=0)
f = TinyJit(body)
for i in range(4):
  a, b = whole((16, 24), i), whole((24, 8), i + 9)
  same(f"jit call {i}", f(Tensor(a), Tensor(b)).numpy(), body(Tensor(a, device="CPU"), Tensor(b, device="CPU")).numpy())
graphs = [c.src[0] for c in f.captured.linear.src if c.src[0].op is Ops.CUSTOM_FUNCTION and c.src[0].arg == "graph"]
res["graphs"] = [type(graph_cache[g]).__name__ for g in graphs if g in graph_cache]

x, w = whole((16, 12), 1), whole((12, 5), 2)
xs = Tensor(x).shard(DS, axis=0)
cx, cw = Tensor(x, device="CPU"), Tensor(w, device="CPU")
same("shard elementwise", (xs * 3 + 1).numpy(), (cx * 3 + 1).numpy())
same("shard reduce across devices", xs.sum(axis=0).numpy(), cx.sum(axis=0).numpy())
same("shard max across devices", xs.max().numpy(), cx.max().numpy())
same("shard matmul, replicated weight", (xs @ Tensor(w).shard(DS)).numpy(), (cx @ cw).numpy())
same("shard matmul, split inner axis", (Tensor(x).shard(DS, axis=1) @ Tensor(w).shard(DS, axis=0)).numpy(), (cx @ cw).numpy())
same("shard_like", (Tensor(x).shard_like(xs) + xs).numpy(), (cx + cx).numpy())
t = Tensor(x).realize()
t.shard_(DS, axis=1)
same("shard_", (t - 1).numpy(), (cx - 1).numpy())

c = Tensor(x, device=DS[0]).realize()
for d in DS[1:]: c = c.to(d).realize()
same("copy chain over four GPUs", c.numpy(), x)
same("copy to CPU", Tensor(x, device=DS[2]).to("CPU").numpy(), x)
m = Tensor(x, device=DS[1]).realize()
m.to_(DS[3])
same("to_", (m + 0).numpy(), x)
same("copy from CPU", Tensor(x, device="CPU").to(DS[2]).add(1).numpy(), x + 1)

def sbody(a): return ((a * 2).contiguous() + a.sum(axis=0)).contiguous().sum(axis=1)
sf = TinyJit(sbody)
for i in range(4):
  a = whole((16, 12), 20 + i)
  same(f"sharded jit call {i}", sf(Tensor(a).shard(DS, axis=0)).numpy(), sbody(Tensor(a, device="CPU")).numpy())
graphs = [c.src[0] for c in sf.captured.linear.src if c.src[0].op is Ops.CUSTOM_FUNCTION and c.src[0].arg == "graph"]
res["sharded graphs"] = [type(graph_cache[g]).__name__ for g in graphs if g in graph_cache]
res["device graph"] = Device[D].graph is not None
print("RESULT " + json.dumps(res))
'''

@pytest.mark.parametrize("dev", [*CONFIGURATIONS, "MOCKKFD+AMD", *board_configs(), "MOCKPCI+AMD"])  # MOCKPCI: tinygrad's own driver AM
def test_jit_graphs_sharding_and_copies(dev):
  p = run_tinygrad(dev, PROGRAM, timeout=600)
  res = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("RESULT "))[7:])
  graphs, sharded, has_graph = res.pop("graphs"), res.pop("sharded graphs"), res.pop("device graph")
  bad = {k: v for k, v in res.items() if v is not True}
  assert not bad, bad
  if dev.startswith("MOCK+CUDA"):
    assert not has_graph and not graphs and not sharded  # tinygrad's choice under MOCK, see the module docstring
    return
  assert graphs, f"the 4-kernel TinyJit body was not put into a graph on {dev}"
  assert sharded, f"the sharded TinyJit body was not put into a graph on {dev}"
