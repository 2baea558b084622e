"""DEV=MOCK+NV end to end: tinygrad's NV runtime over the RM/UVM driver model and the GPFIFO command processor.

Each test runs tinygrad in a subprocess, so DEV is set before tinygrad is imported and a fault cannot touch this process.
"""
import json, subprocess
import pytest
from conftest import run_tinygrad
from mockgpu import config

def run(code:str, dev="MOCK+NV", timeout=180, **env) -> subprocess.CompletedProcess:
  # faults are reported when tinygrad's wait times out: keep that short (work runs inside the doorbell write, not the wait)
  return run_tinygrad(dev, code, timeout, {"HCQDEV_WAIT_TIMEOUT_MS": "300", **env})

def result(r:subprocess.CompletedProcess): return json.loads(next(l for l in r.stdout.splitlines() if l.startswith("{")))

def test_device_topology():
  """The cards, UUIDs and driver version tinygrad's NV interface reads (what each board reports: test_boards.py)."""
  r = run("""
    import json
    from tinygrad import Device
    from tinygrad.runtime.support.hcq import FileIOInterface
    i = Device["NV"].iface
    print(json.dumps({"uuid": bytes(i.gpu_uuid.uuid).hex(), "cards": len(i.gpus_info),
                      "version": FileIOInterface("/proc/driver/nvidia/version").read()}))
  """)
  got = result(r)
  assert got["cards"] == config.DEFAULT_GPU_COUNT and len(got["uuid"]) == 32
  assert "NVRM version" in got["version"] and "570." in got["version"]

def test_copy_roundtrip():
  r = run("""
    import json, numpy as np
    from tinygrad import Tensor
    x = np.random.default_rng(1).standard_normal(1_500_000).astype(np.float32)  # 6 MB: several 2 MB staging batches
    y = Tensor(x).numpy()
    print(json.dumps({"equal": bool((x == y).all()), "n": len(y)}))
  """)
  assert result(r) == {"equal": True, "n": 1_500_000}

def test_rm_errors_then_device_still_works():
  r = run("""
    import json
    from tinygrad import Tensor, Device
    from tinygrad.runtime.autogen import nv_570 as nv
    d = Device["NV"]
    out = {}
    def err(name, fn):
      try: fn()
      except Exception as e: out[name] = f"{type(e).__name__}: {e}"
    err("bad_class", lambda: d.iface.rm_alloc(d.nvdevice, 0xbeef))
    err("unmodelled_class", lambda: d.iface.rm_alloc(d.subdevice, nv.NVC9B0_VIDEO_DECODER))
    err("bad_handle", lambda: d.iface.rm_control(0xdead, nv.NV2080_CTRL_CMD_GR_GET_INFO, nv.NV2080_CTRL_GR_GET_INFO_PARAMS()))
    err("unmodelled_ctrl",
        lambda: d.iface.rm_control(d.subdevice, nv.NV2080_CTRL_CMD_GPU_GET_NAME_STRING, nv.NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS()))
    err("no_memory", lambda: d.allocator.alloc(40 << 30))
    err("uvm_free", lambda: d.iface.uvm(nv.UVM_FREE, nv.UVM_FREE_PARAMS(base=0x7000_0000_0000, length=0x1000)))
    err("uvm_map", lambda: d.iface._gpu_uvm_map(0x7000_0000_0000, 0x1000, d.cmdq_page.meta.hMemory, create_range=False))
    err("doorbell", lambda: d.gpu_mmio.__setitem__(0x90 // 4, 999))
    out["after"] = Tensor([1., 2., 3.]).tolist()
    print(json.dumps(out))
  """)
  got = result(r)
  assert got["bad_class"] == "RuntimeError: rm_alloc returned 34: NV_ERR_INVALID_CLASS"
  assert got["unmodelled_class"] == "RuntimeError: rm_alloc returned 86: NV_ERR_NOT_SUPPORTED"
  assert got["bad_handle"] == "RuntimeError: rm_control returned 51: NV_ERR_INVALID_OBJECT_HANDLE"
  assert got["unmodelled_ctrl"] == "RuntimeError: rm_control returned 86: NV_ERR_NOT_SUPPORTED"
  assert got["no_memory"].startswith("MemoryError")
  assert got["uvm_free"] == got["uvm_map"] == "RuntimeError: uvm returned 30: NV_ERR_INVALID_ADDRESS"
  assert got["doorbell"] == "PacketError: NV:0: doorbell rung with token 999, which no channel has"
  assert got["after"] == [1.0, 2.0, 3.0]
  assert "RM class NVC9B0_VIDEO_DECODER (0xc9b0) is not modelled" in r.stderr
  assert "RM control NV2080_CTRL_CMD_GPU_GET_NAME_STRING (0x20800110) on NV20_SUBDEVICE_0 is not modelled" in r.stderr

def test_unknown_method_raises_packet_error_then_device_still_works():
  r = run("""
    import json
    from tinygrad import Tensor, Device
    from tinygrad.runtime.ops_nv import NVComputeQueue
    d = Device["NV"]
    q = NVComputeQueue()
    q.nvm(1, 0x1234, 0)
    try: q.submit(d)
    except Exception as e: err = f"{type(e).__name__}: {e}"
    NVComputeQueue().signal(d.timeline_signal, d.next_timeline()).submit(d)
    d.synchronize()
    print(json.dumps({"err": err, "after": Tensor([4., 5.]).tolist()}))
  """)
  got = result(r)
  assert got["err"].startswith("PacketError: NV:0 channel 1: pushbuffer 0x")
  assert got["err"].endswith(": unknown method 0x1234 for class ADA_COMPUTE_A (0xc9c0)")
  assert got["after"] == [4.0, 5.0]

def test_copy_fault_is_reported_and_other_gpu_still_works():
  r = run("""
    import json
    from tinygrad import Tensor, Device
    from tinygrad.runtime.ops_nv import NVCopyQueue
    from tinygrad.runtime.support.hcq import HCQBuffer
    d = Device["NV"]
    good = d.allocator.alloc(64)
    NVCopyQueue().wait(d.timeline_signal, d.timeline_value - 1).copy(HCQBuffer(0xdead0000, 64), good, 64) \\
                 .signal(d.timeline_signal, d.next_timeline()).submit(d)
    try: d.synchronize()
    except RuntimeError as e: err = str(e)
    print(json.dumps({"err": err, "after": Tensor([1., 2.], device="NV:1").tolist()}))
  """, MOCKGPU_COUNT="2")
  got = result(r)
  assert got["err"] == "MMU fault: 0xDEAD0000 | NV_PFAULT_FAULT_TYPE_PTE | WRITE"
  assert got["after"] == [1.0, 2.0]
  assert "MMU fault at 0xdead0000" in r.stderr

def test_two_gpus_cross_device_copy():
  r = run("""
    import json, numpy as np
    from tinygrad import Tensor, Device
    x = np.arange(100_000, dtype=np.float32)
    a = Tensor(x, device="NV:0").realize()
    b = a.to("NV:1").realize()
    c = b.to("NV:0").realize()
    print(json.dumps({"b": bool((b.numpy() == x).all()), "c": bool((c.numpy() == x).all()),
                      "uuids": len({bytes(Device[f"NV:{i}"].iface.gpu_uuid.uuid) for i in range(2)})}))
  """, MOCKGPU_COUNT="2")
  assert result(r) == {"b": True, "c": True, "uuids": 2}

def test_trace_logs_ioctls_and_methods():
  r = run("""
    from tinygrad import Tensor
    print(Tensor([1., 2.]).tolist())
  """, MOCKGPU_TRACE="1")
  for needle in ("name=NV_ESC_CARD_INFO", "RM_ALLOC AMPERE_CHANNEL_GPFIFO_A", "RM_CONTROL NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN",
                 "name=UVM_MAP_EXTERNAL_ALLOCATION", "status=NV_OK", "doorbell", "method=NVC56F_SEM_EXECUTE",
                 "cls=AMPERE_DMA_COPY_B method=NVC6B5_LAUNCH_DMA"):
    assert needle in r.stderr, needle

@pytest.mark.parametrize("dev,model", [("MOCK+NV", "sm_89"), ("MOCK+NV:PTX", "sm_89"), ("MOCK+NV", "sm_120")])  # sm_120: QMD V05
def test_elementwise_and_reduce(dev, model):
  r = run("""
    import json, numpy as np
    from tinygrad import Tensor
    a = np.random.default_rng(2).standard_normal((16, 24)).astype(np.float32)
    b = np.random.default_rng(3).standard_normal((24, 8)).astype(np.float32)
    print(json.dumps({"mul": (Tensor([1., 2, 3]) * 2).tolist(), "sum": float(np.abs((Tensor(a).sum(axis=1).numpy() - a.sum(axis=1))).max()),
                      "matmul": float(np.abs((Tensor(a) @ Tensor(b)).numpy() - a @ b).max())}))
  """, dev=dev, MOCKGPU_NV_MODEL=model)
  got = result(r)
  assert got["mul"] == [2.0, 4.0, 6.0]
  assert got["sum"] < 1e-5 and got["matmul"] < 1e-4

def test_kernel_writing_outside_its_buffer_faults():
  r = run("""
    import json
    from tinygrad import Tensor, Device
    from tinygrad.device import TinyELF
    d = Device["NV"]
    src = 'extern "C" __global__ void oob(float* out) { out[threadIdx.x + 0x4000000] = 1.0f; }'
    prg = d.runtime(TinyELF(d.compiler.compile(src), "oob", None, ()))
    buf = d.allocator.alloc(64)
    try: prg(buf, global_size=(1, 1, 1), local_size=(4, 1, 1), wait=True)
    except RuntimeError as e: err = str(e)
    print(json.dumps({"err": err, "addr": f"0x{buf.va_addr + 0x10000000:X}", "after": (Tensor([1., 2.], device="NV:1") + 1).tolist()}))
  """, MOCKGPU_COUNT="2")
  got = result(r)
  assert got["err"] == f"MMU fault: {got['addr']} | NV_PFAULT_FAULT_TYPE_PTE | WRITE"
  assert got["after"] == [2.0, 3.0]

def test_unknown_model_is_a_clear_error():
  r = run_tinygrad("MOCK+NV", "from tinygrad import Tensor; Tensor([1.]).tolist()", 120, {"MOCKGPU_NV_MODEL": "sm_99"}, check=False)
  assert r.returncode != 0 and "UnknownBoard: unknown NVIDIA board 'sm_99': mockgpu models sm_86, sm_89, sm_120" in r.stderr, r.stderr[-3000:]

def test_jit_with_symbolic_shapes():
  r = run("""
    import json, numpy as np
    from tinygrad import Tensor, TinyJit, Variable
    @TinyJit
    def f(a, n): return (a[:n] * 2 + 1).sum().realize()
    x = np.arange(10, dtype=np.float32)
    got = [f(Tensor(x), Variable("n", 1, 10).bind(n)).item() for n in (3, 5, 7, 4)]
    print(json.dumps({"got": got, "want": [float((x[:n] * 2 + 1).sum()) for n in (3, 5, 7, 4)]}))
  """)
  got = result(r)
  assert got["got"] == got["want"]

def test_kernel_past_the_budget_raises_then_device_still_works():
  r = run("""
    import json
    from tinygrad import Tensor, Device
    from tinygrad.device import TinyELF
    d = Device["NV"]
    src = 'extern "C" __global__ void spin(int* o) { int a = 0; for (int i = 0; i < 1000000; i++) a = a * 3 + ((volatile int*)o)[i & 7]; o[0] = a; }'
    prg = d.runtime(TinyELF(d.compiler.compile(src), "spin", None, ()))
    try: prg(d.allocator.alloc(64), global_size=(1, 1, 1), local_size=(1, 1, 1), wait=True)
    except Exception as e: err = f"{type(e).__name__}: {e}"
    print(json.dumps({"err": err, "after": (Tensor([1., 2.]) * 3).tolist()}))
  """, MOCKGPU_BUDGET="20000")
  got = result(r)
  assert got["err"].startswith("InstructionBudgetExceeded: ") and "spin" in got["err"]
  assert got["after"] == [3.0, 6.0]
