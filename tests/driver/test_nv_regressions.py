"""Regressions of DEV=MOCK+NV: HCQ graphs (a TinyJit's batch) that wait on a kick signal the CPU writes after submitting,
and MMU faults that must reach the user at once rather than after tinygrad's 30 s wait timeout.

Each test runs tinygrad in a subprocess with HCQDEV_WAIT_TIMEOUT_MS at 60 s and a subprocess timeout well below it
(SLOW, room for a loaded 2-core machine), so a hang or a fault reported only by the wait timeout fails the test; the
child also times the graph replays and the faulting launch itself.
"""
import json, subprocess
import pytest
from conftest import run_tinygrad

SLOW, WAIT = 25, {"HCQDEV_WAIT_TIMEOUT_MS": "60000"}

def result(r:subprocess.CompletedProcess): return json.loads(next(l for l in r.stdout.splitlines() if l.startswith("{")))

JIT = """
  import json, time, numpy as np
  from tinygrad import Tensor, TinyJit
  @TinyJit
  def f(x): return ((x+1).contiguous()*2).contiguous().sum()
  out, graphed = [], 0.0
  for i in range(4):
    x = (Tensor.rand(16)*100).floor().realize()  # whole numbers: every sum order gives the same float32
    xn = x.numpy()
    st = time.perf_counter()
    r = f(x).numpy()
    if i >= 2: graphed += time.perf_counter() - st  # calls 3 and 4 replay the graph (call 2 builds it)
    out.append([float(r), float(((xn + 1) * 2).sum(dtype=np.float32))])
  print(json.dumps({"out": out, "graphed_seconds": graphed}))
"""

@pytest.mark.parametrize("dev", ["MOCK+NV", "MOCK+NV:PTX"])
def test_jit_graph_runs(dev):
  r = run_tinygrad(dev, JIT, timeout=SLOW, env={**WAIT, "DEBUG": "2", "MOCKGPU_COUNT": "1"})
  assert "JIT GRAPHing batch with 3 kernels" in r.stdout  # the batch went into an HCQ graph
  got = result(r)
  assert len(got["out"]) == 4 and all(a == b for a, b in got["out"]), got["out"]
  assert got["graphed_seconds"] < 5  # a replay that waits for the wait timeout takes 30 s

FAULT = """
  import json, time
  from tinygrad import Tensor, Device
  from tinygrad.device import TinyELF
  d = Device["NV"]
  src = 'extern "C" __global__ void oob(float* out) { out[threadIdx.x] = out[threadIdx.x + 0x4000000]; }'
  prg = d.runtime(TinyELF(d.compiler.compile(src), "oob", None, ()))
  buf = d.allocator.alloc(64)
  st = time.perf_counter()
  try: prg(buf, global_size=(1, 1, 1), local_size=(4, 1, 1), wait=True)
  except RuntimeError as e: err = str(e)
  t = time.perf_counter() - st
  print(json.dumps({"err": err, "seconds": t, "addr": f"0x{buf.va_addr + 0x10000000:X}", "after": (Tensor([1., 2.], device="NV:1") + 1).tolist()}))
"""

def test_unmapped_read_faults_fast():
  r = run_tinygrad("MOCK+NV", FAULT, timeout=SLOW, env={**WAIT, "MOCKGPU_COUNT": "2"})
  got = result(r)
  assert got["seconds"] < 5
  assert got["err"] == f"MMU fault: {got['addr']} | NV_PFAULT_FAULT_TYPE_PTE | READ"
  assert got["after"] == [2.0, 3.0]  # the other GPU is untouched

def test_emu_fault_addr_is_in_the_report():
  r = run_tinygrad("MOCK+NV", FAULT, timeout=SLOW, env={**WAIT, "MOCKGPU_COUNT": "2", "MOCKGPU_EMU_FAULTADDR": "0xdeadbeef000"})
  got = result(r)
  assert got["seconds"] < 5
  assert got["err"] == "MMU fault: 0xDEADBEEF000 | NV_PFAULT_FAULT_TYPE_PTE | READ"

def test_hang_reports_emu_fault_addr():
  # no fault at all: a wait that never completes; with MOCKGPU_EMU_FAULTADDR the hang report names that address
  r = run_tinygrad("MOCK+NV", """
    import json
    from tinygrad import Device
    from tinygrad.runtime.ops_nv import NVComputeQueue
    d = Device["NV"]
    sig = d.new_signal(value=0)
    NVComputeQueue().wait(sig, 1).signal(d.timeline_signal, d.next_timeline()).submit(d)
    try: d.synchronize()
    except RuntimeError as e: err = str(e)
    print(json.dumps({"err": err}))
  """, timeout=SLOW, env={"MOCKGPU_COUNT": "1", "MOCKGPU_EMU_FAULTADDR": "0x1234000", "HCQDEV_WAIT_TIMEOUT_MS": "300"})
  assert result(r)["err"] == "MMU fault: 0x1234000 | NV_PFAULT_FAULT_TYPE_PTE | READ"
