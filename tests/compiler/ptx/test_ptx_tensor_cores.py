"""tinygrad's tensor-core matmuls (mma.sync) on MOCK+NV (tinygrad's PTX renderer) and MOCK+CUDA (CUDA C through NVRTC),
on both PTX executor paths, against the same matmuls on DEV=CPU."""
from __future__ import annotations
import json
import numpy as np
import pytest
from conftest import run_tinygrad

CODE = """
import sys, json, numpy as np
from tinygrad import Tensor, dtypes, Device
from tinygrad.helpers import Context
launches = []
if Device.DEFAULT != "CPU":
  from mockgpu import events
  from mockgpu.emulators import ptx
  def hook(mem, k, grid, block, params, dynamic_shared):
    events.unintercept("ptx_launch", hook)
    try: st = ptx.launch(mem, k, grid, block, params, dynamic_shared)
    finally: events.intercept("ptx_launch", hook)
    launches.append({"mma": "mma.sync" in k.module.text, "C": st.native})
    return st
  events.intercept("ptx_launch", hook)
rng = np.random.default_rng(0)
a16, b16 = rng.standard_normal((64, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
a32, b32 = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
if Device.DEFAULT == "CPU":   # the CPU has no tf32: it multiplies the operands the tensor cores read
  a32, b32 = [(x.view(np.uint32) & 0xffffe000).view(np.float32) for x in (a32, b32)]
out = {"half": (Tensor(a16) @ Tensor(b16)).numpy(), "half_acc_float": Tensor(a16).matmul(Tensor(b16), dtype=dtypes.float32).numpy()}
with Context(ALLOW_TF32=1): out["tf32"] = (Tensor(a32) @ Tensor(b32)).numpy()
print("OUT", json.dumps({k: [v.dtype.str, v.view(np.uint8).tobytes().hex()] for k, v in out.items()}))
print("LAUNCHES", json.dumps(launches))
"""

def _run(dev:str, native:str) -> tuple[dict, list]:
  p = run_tinygrad(dev, CODE, timeout=600, env={"MOCKGPU_PTX_NATIVE": native})
  line = lambda tag: json.loads(next(l[len(tag) + 1:] for l in p.stdout.splitlines() if l.startswith(tag + " ")))
  out = {k: np.frombuffer(bytes.fromhex(h), np.dtype(dt)).reshape(64, 64) for k, (dt, h) in line("OUT").items()}
  return out, line("LAUNCHES")

@pytest.fixture(scope="module")
def cpu() -> dict: return _run("CPU", "0")[0]

def _operands():
  rng = np.random.default_rng(0)
  a16, b16 = rng.standard_normal((64, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
  a32, b32 = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
  tf32 = lambda x: (x.view(np.uint32) & 0xffffe000).view(np.float32).astype(np.float64)
  return {"half": (a16, b16), "half_acc_float": (a16, b16), "tf32": (tf32(a32), tf32(b32))}

@pytest.mark.parametrize("dev", ["MOCK+NV:PTX", "MOCK+CUDA"])
def test_tensor_core_matmuls_match_the_cpu(dev, cpu):
  if dev == "MOCK+CUDA": pytest.importorskip("nvidia.cuda_nvrtc")
  (c_out, c_runs), (np_out, np_runs) = _run(dev, "1"), _run(dev, "0")
  assert len(c_runs) == 3 and all(r["mma"] and r["C"] for r in c_runs), c_runs   # tensor cores, on the C path
  assert not any(r["C"] for r in np_runs)
  for k in cpu:
    np.testing.assert_array_equal(c_out[k], np_out[k], err_msg=k)   # EXACT: the two paths compute the same bits
  # half: both accumulate in float32 (tinygrad's mma is .f32.f16.f16.f32) and round to half once, each within half a
  # half-ulp of the exact product plus float32 rounding, so at most 1 half-ulp apart
  got, want = c_out["half"].astype(np.float64), cpu["half"].astype(np.float64)
  assert (np.abs(got - want) <= np.spacing(np.maximum(np.abs(got), np.abs(want)).astype(np.float16)).astype(np.float64)).all()
  # float32 results: the CPU's float32 sums are within gamma_64 = 64 * 2^-24 of sum |a||b| of the exact product (the
  # products of half and tf32 operands are exact in float32); the tensor cores' (exact per mma, float32 between) within
  # less: 2 * gamma_64 * |a| @ |b| bounds their distance, where a ulp count means nothing near cancellation
  for k in ("half_acc_float", "tf32"):
    a, b = (x.astype(np.float64) for x in _operands()[k])
    exact = a @ b
    bound = 2 * 64 * 2.0 ** -24 * (np.abs(a) @ np.abs(b))
    assert (np.abs(c_out[k] - cpu[k]) <= bound).all(), k
    assert np.abs(c_out[k] - exact).max() < np.abs(cpu[k] - exact).max() * 4, k   # and close to the exact product
