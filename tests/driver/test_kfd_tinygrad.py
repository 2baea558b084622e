"""tinygrad's whole AMD stack (KFDIface, AMDDevice, its compute and copy queues) on the mock KFD, in child processes."""
import pytest
from conftest import run_tinygrad

def last_line(p) -> str: return p.stdout.strip().splitlines()[-1]

@pytest.mark.parametrize("dev,env", [("MOCK+AMD", {}), ("MOCKKFD+AMD", {}), ("MOCK+AMD:LLVM", {}), ("MOCK+AMD", {"AMD_AQL": "1"}),
                                     ("MOCK+AMD", {"AMD_DISABLE_SDMA": "1"})])  # AQL queues; no SDMA: the CPU copies through mappings
def test_plus_one(dev, env):
  p = run_tinygrad(dev, """
    import numpy as np
    from tinygrad import Tensor, Device
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    out = (Tensor(x) + 1).numpy()
    d = Device["AMD"]
    print(type(d.iface).__name__, d.arch, d.is_aql, d.has_sdma_queue, np.array_equal(out, x + np.float32(1)))
  """, env=env)
  iface, arch, is_aql, has_sdma, ok = last_line(p).split()
  assert iface == ("MOCKKFDIface" if dev.startswith("MOCKKFD") else "MOCKIface") and arch == "gfx1100" and ok == "True"
  assert (int(is_aql), has_sdma) == (int(env.get("AMD_AQL", 0)), str("AMD_DISABLE_SDMA" not in env))

def test_large_copies_roundtrip():
  # 5 MiB: more than one 2 MiB staging buffer each way, so several SDMA copies, waits and signals per transfer
  p = run_tinygrad("MOCK+AMD", """
    import numpy as np
    from tinygrad import Tensor
    x = np.random.default_rng(1).integers(0, 2**32, 5 << 18, dtype=np.uint32)
    print(np.array_equal(Tensor(x).realize().numpy(), x))
  """)
  assert last_line(p) == "True"

def test_two_gpus_and_a_cross_device_copy():
  p = run_tinygrad("MOCK+AMD", """
    import numpy as np
    from tinygrad import Tensor, Device
    x = np.arange(4096, dtype=np.float32)
    a = Tensor(x, device="AMD:0").realize()
    b = (a.to("AMD:1") * 2).realize()
    print(Device["AMD:1"].iface.gpu_id != Device["AMD:0"].iface.gpu_id, b.device, np.array_equal(b.numpy(), x * 2))
  """, env={"MOCKGPU_COUNT": "2"})
  assert last_line(p) == "True AMD:1 True"

def test_timestamps_of_copies_and_kernels():
  p = run_tinygrad("MOCK+AMD", """
    from tinygrad import Tensor, Device
    from tinygrad.device import Compiled
    from tinygrad.helpers import ProfileRangeEvent
    (Tensor([1., 2, 3]) + 1).realize()
    Device["AMD"].synchronize()
    evs = [e for e in Compiled.profile_events if isinstance(e, ProfileRangeEvent)]
    print(sorted({e.device for e in evs}), all(0 < e.st <= e.en for e in evs))
  """, env={"PROFILE": "1"})
  assert last_line(p) == "['AMD', 'AMD:SDMA:0'] True"

def test_trace_logs_ioctls_packets_and_dispatches():
  p = run_tinygrad("MOCK+AMD", "from tinygrad import Tensor; print((Tensor([1., 2]) + 1).tolist())", env={"MOCKGPU_TRACE": "1"})
  assert last_line(p) == "[2.0, 3.0]"
  for needle in ("interface=kfd name=AMDKFD_IOC_CREATE_QUEUE", "name=AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", "AMD:0 PM4 queue 0: ", "op=RELEASE_MEM",
                 "AMD:0 SDMA queue 1: ", "op=COPY_LINEAR", "kernel=E_2 "):
    assert needle in p.stderr, needle

@pytest.mark.parametrize("tool", ["PMC", "SQTT"])
def test_profiling_counters_and_traces_run(tool, tmp_path):
  # once refused (UnmodelledFeature at device open / at the first kernel): now PMC=1 gives one counter event per kernel
  # and SQTT=1 one trace event per shader engine (6 on gfx1100), and the kernel's result is unchanged
  p = run_tinygrad("MOCK+AMD", """
    from tinygrad import Tensor, Device
    from tinygrad.device import Compiled
    out = (Tensor([1., 2]) + 1).tolist()
    Device["AMD"].synchronize()
    names = [type(e).__name__ for e in Compiled.profile_events if type(e).__name__ in ("ProfilePMCEvent", "ProfileSQTTEvent")]
    print(out, names.count("ProfilePMCEvent"), names.count("ProfileSQTTEvent"))
  """, env={"PROFILE": "1", tool: "1", "TMPDIR": str(tmp_path)})
  assert last_line(p) == ("[2.0, 3.0] 1 0" if tool == "PMC" else "[2.0, 3.0] 0 6")

def test_jit_graph_replays_bound_queues():
  # TinyJit turns the kernels into an HCQGraph: bound indirect buffers patched between replays, and a cross-GPU copy
  p = run_tinygrad("MOCK+AMD", """
    import numpy as np
    from tinygrad import Tensor, TinyJit
    @TinyJit
    def f(a, b): return ((a * b + 1).to("AMD:1") - 2).realize()
    rng, ok = np.random.default_rng(2), True
    for _ in range(5):
      x, y = rng.random(256, dtype=np.float32), rng.random(256, dtype=np.float32)
      ok &= np.allclose(f(Tensor(x), Tensor(y)).numpy(), x * y - 1, rtol=1e-6, atol=1e-6)  # the kernel may fuse into an fma
    print(ok)
  """, env={"MOCKGPU_COUNT": "2"})
  assert last_line(p) == "True"
