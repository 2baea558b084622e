"""The event bus (mockgpu/events.py), the tracer (MOCKGPU_TRACE) and the fault report.

Each event kind of the trace schema (README) is checked against what tinygrad sent: tinygrad runs on the mock in a
subprocess that records, beside the trace, what it asked for (its launches through HCQProgram.__call__, its buffers),
and the decoded fields must say the same.
"""
import ctypes, json, logging, os, re, subprocess, sys
import pytest
from conftest import HERE, run_tinygrad
from tinygrad.runtime.autogen import kfd
from mockgpu import events
from mockgpu.errors import GPUPageFault
from mockgpu.memory import AddressSpace
from support.trace_program import PROGRAM

def traced(dev:str, tmp_path, code:str=PROGRAM, env:dict|None=None) -> tuple[list[dict], dict]:
  path = tmp_path / "trace.jsonl"
  p = run_tinygrad(dev, code, env={"MOCKGPU_TRACE": str(path), **(env or {})})
  info = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("INFO ")).split(" ", 1)[1])
  return [json.loads(l) for l in path.read_text().splitlines()], info

@pytest.fixture(scope="module")
def amd(tmp_path_factory): return traced("MOCK+AMD", tmp_path_factory.mktemp("amd"))

@pytest.fixture(scope="module")
def nv(tmp_path_factory): return traced("MOCK+NV", tmp_path_factory.mktemp("nv"))

def of(evs:list[dict], kind:str, **match) -> list[dict]:
  return [e for e in evs if e["kind"] == kind and all(e.get(k) == v for k, v in match.items())]

# *** every event ***

@pytest.mark.parametrize("dev", ["amd", "nv"])
def test_every_event_has_the_common_fields(dev, request):
  evs, _ = request.getfixturevalue(dev)
  assert evs and all({"kind", "ts", "pid", "device", "queue"} <= e.keys() for e in evs)
  assert len({e["pid"] for e in evs}) == 1 and all(isinstance(e["ts"], int) for e in evs)
  assert all(e["dur"] >= 0 for e in evs if "dur" in e)

# *** AMD: KFD and DRM ioctls, mmaps, sysfs, doorbells, PM4 and SDMA packets, dispatches, copies, signals ***

def test_kfd_alloc_ioctl_decodes_the_buffer_tinygrad_asked_for(amd):
  evs, info = amd
  allocs = of(evs, "ioctl", interface="kfd", name="AMDKFD_IOC_ALLOC_MEMORY_OF_GPU")
  mine = [e for e in allocs if e["args_in"]["va_addr"] == info["va"]]
  assert len(mine) == 1 and mine[0]["args_in"]["size"] == info["size"] == 4 << 20 and mine[0]["result"] == 0
  assert mine[0]["args_out"]["handle"] != 0 and mine[0]["args_in"]["handle"] == 0  # the handle is an output
  mapped = of(evs, "ioctl", name="AMDKFD_IOC_MAP_MEMORY_TO_GPU")
  assert any(e["args_in"]["handle"] == mine[0]["args_out"]["handle"] and e["args_out"]["n_success"] == 1 for e in mapped)

def test_failed_ioctl_reports_its_errno(tmp_path):
  evs, _ = traced("MOCK+AMD", tmp_path, """
    import ctypes, json
    from tinygrad import Device
    from tinygrad.runtime.autogen import kfd
    from tinygrad.runtime.ops_amd import KFDIface
    Device["AMD"]
    try: kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU(KFDIface.kfd, handle=0xdead)
    except OSError as e: print("INFO " + json.dumps({"errno": e.errno}))
  """)
  bad = of(evs, "ioctl", name="AMDKFD_IOC_FREE_MEMORY_OF_GPU")
  assert len(bad) == 1 and bad[0]["result"] == "EINVAL" and bad[0]["args_in"] == {"handle": 0xdead} and bad[0]["args_out"] is None
  assert "no buffer object with handle 0xdead" in bad[0]["error"]

def test_mmap_of_the_render_node_and_munmap(amd):
  evs, info = amd
  maps = [e for e in of(evs, "mmap") if e["addr"] == info["va"]]
  assert len(maps) == 1 and maps[0]["size"] == info["size"] and maps[0]["path"].startswith("/dev/dri/renderD")
  kfd_maps = [e for e in of(evs, "mmap") if e["path"] == "/dev/kfd"]
  assert kfd_maps, "the doorbell page and the event page are mapped from /dev/kfd"
  assert all(e["size"] > 0 for e in of(evs, "munmap"))

def test_sysfs_reads_say_what_tinygrad_read(amd):
  evs, _ = amd
  reads = of(evs, "file_read")
  gpu_ids = [e for e in reads if e["path"].endswith("/topology/nodes/1/gpu_id")]
  assert gpu_ids and all(e["size"] == len(e["text"]) for e in reads if e["size"] <= 256)
  acquire = of(evs, "ioctl", name="AMDKFD_IOC_ACQUIRE_VM")[0]
  assert int(gpu_ids[0]["text"]) == acquire["args_in"]["gpu_id"]  # the id sysfs gave is the one the ioctls carry

def test_doorbells_ring_the_queues_created(amd):
  evs, _ = amd
  queues = {e["queue"] for e in of(evs, "doorbell")}
  created = of(evs, "ioctl", name="AMDKFD_IOC_CREATE_QUEUE")
  kinds = {kfd.KFD_IOC_QUEUE_TYPE_COMPUTE: "PM4", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: "AQL", kfd.KFD_IOC_QUEUE_TYPE_SDMA: "SDMA"}
  assert queues == {f"AMD:0 {kinds[e['args_in']['queue_type']]} queue {e['args_out']['queue_id']}" for e in created}
  offsets = {e["args_out"]["doorbell_offset"] & 0xfff for e in created}
  assert {e["offset"] & ~7 for e in of(evs, "doorbell")} <= offsets

def test_pm4_packets_decode_registers_and_dispatches(amd):
  evs, info = amd
  pm4 = of(evs, "packet", engine="PM4")
  regs = [e["registers"] for e in pm4 if e["op"] == "SET_SH_REG"]
  launches = [e for e in pm4 if e["op"] == "DISPATCH_DIRECT"]
  assert [[e["dim_x"], e["dim_y"], e["dim_z"]] for e in launches] == [l["global"] for l in info["launches"]]
  assert all(e["initiator"]["compute_shader_en"] == 1 and e["initiator"]["cs_w32_en"] == 1 for e in launches)
  threads = [r["COMPUTE_NUM_THREAD_X"] for r in regs if "COMPUTE_NUM_THREAD_X" in r]
  assert threads == [l["local"][0] for l in info["launches"]]
  pgm = [(r["COMPUTE_PGM_HI"] << 32 | r["COMPUTE_PGM_LO"]) << 8 for r in regs if "COMPUTE_PGM_LO" in r]
  assert pgm == [e["pgm_addr"] for e in of(evs, "dispatch")]

def test_release_and_wait_packets_name_their_fields(amd):
  evs, _ = amd
  rel = [e for e in of(evs, "packet", op="RELEASE_MEM")]
  assert rel and all(e["event"] in ("CACHE_FLUSH_AND_INV_TS_EVENT", "BOTTOM_OF_PIPE_TS") and e["data_sel"] in (1, 2, 3) for e in rel)
  written = {e["addr"] for e in of(evs, "signal")}
  assert {e["address"] for e in rel} & written  # RELEASE_MEM writes the signals tinygrad reads
  waits = of(evs, "packet", op="WAIT_REG_MEM")
  on_memory = [e for e in waits if e["mem_space"] == 1]
  assert on_memory and all(e["function"] == 5 and e["mask"] == 0xffffffff and e["operation"] == 0 for e in on_memory)  # signal >= value
  assert all(e["operation"] == 1 for e in waits if e["mem_space"] == 0)  # a register wait is the HDP flush's write-wait-write
  assert of(evs, "packet", op="ACQUIRE_MEM")[0]["coher_size"] == (1 << 64) - 1

def test_dispatch_names_the_kernel_and_its_resources(amd):
  evs, info = amd
  ds = of(evs, "dispatch")
  assert [(d["kernel"], d["grid"], d["block"]) for d in ds] == [(l["name"], l["global"], l["local"]) for l in info["launches"]]
  for d in ds:
    assert d["instructions"] > 0 and d["waves"] == d["grid"][0] * d["grid"][1] * d["grid"][2] * -(-d["block"][0] // 32)
    assert d["rsrc2"]["user_sgpr"] > 0 and d["rsrc2"]["tgid_x_en"] == 1 and d["wave_size"] == 32
    assert d["lds_bytes"] == d["rsrc2"]["lds_size"] * 512 and d["path"] in ("numpy", "C")
  assert max(d["lds_bytes"] for d in ds) > 0  # the reduction's partial sums live in LDS

def test_sdma_packets_and_copies(amd):
  evs, info = amd
  copies = of(evs, "packet", engine="SDMA", op="COPY_LINEAR")
  spans = [e for e in of(evs, "copy") if "SDMA" in e["queue"]]
  assert [(c["src_addr"], c["dst_addr"], c["count"] + 1) for c in copies] == [(s["src"], s["dst"], s["size"]) for s in spans]
  into = [s for s in spans if info["va"] <= s["dst"] < info["va"] + info["size"]]
  assert sum(s["size"] for s in into) == info["size"]  # the 4 MiB upload, in staging-buffer pieces
  fence = of(evs, "packet", engine="SDMA", op="FENCE")
  assert fence and all(e["addr"] % 4 == 0 for e in fence)

def test_signals_reads_and_writes(amd):
  evs, _ = amd
  sig = of(evs, "signal")
  assert {e["op"] for e in sig} == {"read", "write"} and all(isinstance(e["value"], int) for e in sig)

# *** NVIDIA: RM and UVM ioctls, GPFIFO entries, methods, QMD, launches ***

def test_rm_alloc_decodes_its_parameter_block(nv):
  evs, _ = nv
  channels = [e for e in of(evs, "ioctl", interface="rm", name="NV_ESC_RM_ALLOC") if "AMPERE_CHANNEL_GPFIFO_A" in (e.get("call") or "")]
  assert channels and all(e["status"] == "NV_OK" for e in channels)
  p = channels[0]["params"]["struct_NV_CHANNEL_ALLOC_PARAMS"]
  assert p["in"]["gpFifoEntries"] > 0 and p["in"]["gpFifoOffset"] != 0

def test_rm_control_shows_its_output(nv):
  evs, _ = nv
  token = [e for e in of(evs, "ioctl", name="NV_ESC_RM_CONTROL") if "GPFIFO_GET_WORK_SUBMIT_TOKEN" in (e.get("call") or "")]
  outs = [list(e["params"].values())[0]["out"]["workSubmitToken"] for e in token]
  rung = {e["value"] for e in of(evs, "doorbell") if e["device"] == "NV:0"}
  assert outs and rung <= set(outs)  # the doorbell writes carry the tokens RM handed out

def test_uvm_map_external_matches_the_buffer(nv):
  evs, info = nv
  maps = [e for e in of(evs, "ioctl", interface="uvm", name="UVM_MAP_EXTERNAL_ALLOCATION") if e["args_in"]["base"] == info["va"]]
  assert len(maps) == 1 and maps[0]["args_in"]["length"] >= info["size"] and maps[0]["status"] == "NV_OK"

def test_gpfifo_entries_and_methods(nv):
  evs, _ = nv
  entries = of(evs, "gpfifo")
  assert entries and all(e["length"] > 0 and e["address"] > 0 for e in entries)
  methods = of(evs, "method")
  assert {"NVC56F_SEM_EXECUTE", "NVC6C0_SEND_SIGNALING_PCAS2_B", "NVC6B5_LAUNCH_DMA"} <= {m["method"] for m in methods}
  assert {m["cls"] for m in methods} >= {"AMPERE_CHANNEL_GPFIFO_A", "AMPERE_DMA_COPY_B"}
  assert {e["queue"] for e in entries} == {m["queue"] for m in methods}

def test_qmd_and_launch_match_what_tinygrad_launched(nv):
  evs, info = nv
  qmds, ds = of(evs, "qmd"), of(evs, "dispatch")
  want = [(l["name"], l["global"], l["local"]) for l in info["launches"]]
  assert [(d["kernel"], d["grid"], d["block"]) for d in ds] == want
  assert [[q["fields"].get("CTA_RASTER_WIDTH"), q["fields"].get("CTA_THREAD_DIMENSION0")] for q in qmds] == [[g[0], l[0]] for _, g, l in want]
  assert all(d["threads"] == d["grid"][0] * d["block"][0] and d["instructions"] > 0 for d in ds)

def test_nv_copies(nv):
  evs, info = nv
  into = [e for e in of(evs, "copy") if info["va"] <= e["dst"] < info["va"] + info["size"]]
  assert sum(e["size"] for e in into) == info["size"]

# *** CUDA driver calls ***

def test_cuda_calls_show_output_values_and_launches(tmp_path):
  evs, info = traced("MOCK+CUDA", tmp_path, """
    import json, numpy as np
    from tinygrad import Tensor
    t = (Tensor(np.arange(64, dtype=np.float32)) * 2).realize()
    print("INFO " + json.dumps({"ptr": int(t.uop.base.buffer._buf.value), "sum": t.sum().item()}))
  """)
  calls = of(evs, "cuda")
  allocs = [c for c in calls if c["call"] == "cuMemAlloc_v2"]
  assert any(c["out"]["dptr"] == info["ptr"] and c["args"]["bytesize"] == "256" for c in allocs)
  assert all(c["result"] == "CUDA_SUCCESS" for c in calls)
  ds = of(evs, "dispatch")
  assert ds and all(d["device"] == "CUDA:0" and d["kernel"].startswith(("E_", "r_")) for d in ds)
  fn = [c for c in calls if c["call"] == "cuModuleGetFunction"]
  assert sorted(c["args"]["name"] for c in fn) == sorted({d["kernel"] for d in ds})  # the name tinygrad asked for, as text

# *** the stderr form, processes, the bus itself ***

def test_stderr_trace_leaves_the_root_logger_alone():
  p = run_tinygrad("MOCK+AMD", """
    import logging
    from tinygrad import Tensor
    (Tensor([1., 2.]) + 1).tolist()
    root = logging.getLogger()
    print("ROOT", root.level, len(root.handlers), logging.getLogger("mockgpu").propagate)
  """, env={"MOCKGPU_TRACE": "1"})
  assert "ROOT 30 0 True" in p.stdout
  lines = [l for l in p.stderr.splitlines() if l.startswith("mockgpu: ")]
  assert any(" dispatch " in l and "kernel=" in l for l in lines) and any(" ioctl " in l for l in lines)

def test_processes_append_to_one_file_with_their_pid(tmp_path):
  path = tmp_path / "t.jsonl"
  code = "from tinygrad import Tensor; (Tensor([1., 2.]) + 1).tolist()"
  procs = [subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "DEV": "MOCK+AMD", "MOCKGPU_TRACE": str(path)}, cwd=HERE)
           for _ in range(2)]
  assert [p.wait(300) for p in procs] == [0, 0]
  evs = [json.loads(l) for l in path.read_text().splitlines()]  # every line whole
  assert {e["pid"] for e in evs} == {p.pid for p in procs}
  assert all(len(of([e for e in evs if e["pid"] == p.pid], "dispatch")) == 1 for p in procs)

def test_bus_subscribe_unsubscribe_and_a_failing_listener(caplog):
  seen, others = [], list(events._subscribers)  # a run under MOCKGPU_TRACE has its tracer here
  def broken(ev): raise ValueError("listener bug")
  events.subscribe(seen.append)
  events.subscribe(broken)
  try:
    assert events.enabled
    with caplog.at_level(logging.ERROR, logger="mockgpu"): events.emit("x", "AMD:0", "q", a=1)
    events.emit("y")
  finally:
    events.unsubscribe(seen.append)
  assert [(e["kind"], e["device"], e["queue"], e.get("a")) for e in seen] == [("x", "AMD:0", "q", 1), ("y", None, None, None)]
  assert "listener bug" in caplog.text and events._subscribers == others and events.enabled == bool(others)  # the broken one was dropped
  events.emit("z")
  assert len(seen) == 2

# *** waits (a blocked packet's span) ***

def test_wait_span_covers_the_blocked_time(monkeypatch):
  import machines
  from support.pm4 import wait_mem, release_mem
  from support.kfd_client import Client
  monkeypatch.setattr(machines, "current", None)
  c = Client().events()
  c.buf = c.alloc(0x1000)
  q = c.queue()
  seen = []
  events.subscribe(seen.append)
  try:
    q.submit(wait_mem(c.buf.va, 5) + release_mem(c.buf.va + 8, 99, 1))
    blocked_at = events.now()
    c.buf.u32()[0] = 5
    machines.machine().kick()
  finally: events.unsubscribe(seen.append)
  w = of(seen, "wait")
  assert len(w) == 1 and w[0]["op"] == "WAIT_REG_MEM" and w[0]["address"] == c.buf.va and w[0]["reference"] == 5
  assert w[0]["ts"] < blocked_at < w[0]["ts"] + w[0]["dur"]
  assert [e["op"] for e in of(seen, "packet")] == ["WAIT_REG_MEM", "RELEASE_MEM"]

# *** the fault report ***

FAULT = """
import json, numpy as np
from tinygrad import Tensor, Device
from tinygrad.runtime.support.hcq import HCQProgram
state = {"armed": True}
_call = HCQProgram.__call__
def call(self, *bufs, **kw):
  if state["armed"] and self.name.startswith("E_"):
    state["armed"], out = False, bufs[0]
    shifted = out.offset(out.size - 16 * 35, 16 * 35)  # thread 35's float4 store lands at the buffer's end
    state.update(name=self.name, out=int(out.va_addr), size=int(out.size), base=int(shifted.va_addr), local=list(kw["local_size"]))
    bufs = (shifted,) + bufs[1:]
  return _call(self, *bufs, **kw)
HCQProgram.__call__ = call
x = Tensor(np.ones(4096, np.float32)).realize()
# Leave the GPU address space free above the output, whatever the host's mmap layout: allocate a 1 MiB spacer, then the
# output below it (AMD's addresses come from top-down host mmaps; NV's bump upwards), then unmap the spacer. Without it
# the output sat right under x on AMD and the 16 KiB overrun landed in x's pages, so nothing faulted.
spacer, out = Tensor.empty(1 << 18).realize(), Tensor.empty(4096).realize()
del spacer
Device[Device.DEFAULT].allocator.free_cache()
try: out.assign(x + 1).realize(); Device[Device.DEFAULT].synchronize(); state["error"] = None
except Exception as e: state["error"] = str(e)
from mockgpu import system
state["native_launches"] = sum(v for k, v in system.stats.items() if k.endswith("native_launches"))
print("INFO " + json.dumps(state))
import os; os._exit(0)  # the device is in its error state: skip tinygrad's teardown
"""

@pytest.mark.parametrize("dev,path", [("MOCK+AMD", "numpy"), ("MOCK+AMD", "C"), ("MOCK+NV", "numpy"), ("MOCK+NV", "C")])
def test_out_of_bounds_b128_store_report(dev, path, tmp_path):
  native = "1" if path == "C" else "0"
  evs, info = traced(dev, tmp_path, FAULT, env={"MOCKGPU_COUNT": "1", "MOCKGPU_RDNA_NATIVE": native, "MOCKGPU_PTX_NATIVE": native})
  assert (info["native_launches"] > 0) == (path == "C")  # the C variant ran C
  (f,) = of(evs, "fault")
  assert f["error"] == "GPUPageFault" and f["write"] and f["size"] == 16  # the whole float4 store, not one dword
  assert f["kernel"] == info["name"] and ("global_store_b128" if dev == "MOCK+AMD" else "st.global.v4.f32") in f["where"]
  t, rem = divmod(f["address"] - info["base"], 16)  # the faulting thread, from the address it stored to
  assert rem == 0 and t >= 35 and f["address"] >= info["out"] + info["size"]  # threads 0..34 store inside the buffer
  block = info["local"][0]
  if dev == "MOCK+AMD":  # the C path runs a wave at a time: it names the wave, not the lane
    assert (f["workgroup"], f["wave"], f.get("lane")) == ([t // block, 0, 0], (t % block) // 32, t % 32 if path == "numpy" else None)
    assert info["error"].startswith(f"MMU fault: 0x{f['address'] & ~0xfff:X} ")
  elif path == "numpy":
    assert (f["cta"], f["thread"]) == ([t // block, 0, 0], [t % block, 0, 0])
  else:
    assert "cta" not in f and "thread" not in f  # the C path runs a thread at a time and does not say which
  if dev == "MOCK+NV":
    assert info["error"].startswith(f"MMU fault: 0x{f['address']:X} ")
  if f["address"] == info["out"] + info["size"]:  # the page after the buffer is unmapped: the report names the buffer
    assert f["nearest"] == f"offset 0x{info['size']:x}: just past the end of the allocation at 0x{info['out']:x} (0x{info['size']:x} bytes)"
  else:  # another allocation follows the buffer: the store faults past that one, which the report names
    base, off = (int(x, 16) for x in re.search(r"offset 0x(\w+).* the allocation at 0x(\w+)", f["nearest"]).groups()[::-1])
    allocs = [e["args_in"].get("va_addr", e["args_in"].get("base")) for e in of(evs, "ioctl")
              if e["name"] in ("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", "UVM_MAP_EXTERNAL_ALLOCATION")]
    assert base in allocs and base + off == f["address"]
  assert f["message"].startswith(f"GPU page fault: write of 16 bytes at 0x{f['address']:x}")

def test_nearest_allocation_wording():
  mem = AddressSpace("t")
  buf = bytearray(0x3000)
  host = ctypes.addressof((ctypes.c_char * 0x3000).from_buffer(buf))
  mem.map(0x10000, 0x1000, host=host)
  mem.map(0x20000, 0x800, host=host + 0x1000, granularity=0x1000)
  assert mem.nearest(0x10010) == "offset 0x10 into the allocation at 0x10000 (0x1000 bytes)"
  assert mem.nearest(0x11000) == "offset 0x1000: just past the end of the allocation at 0x10000 (0x1000 bytes)"
  assert mem.nearest(0x11040) == "offset 0x1040: 0x40 bytes past the end of the allocation at 0x10000 (0x1000 bytes)"
  assert mem.nearest(0x1fff0) == "0x10 bytes before the allocation at 0x20000 (0x800 bytes)"
  assert mem.nearest(0x20900) == "offset 0x900: 0x100 bytes past the end of the allocation at 0x20000 (0x800 bytes)"

def test_fault_context_is_added_once_and_said():
  e = GPUPageFault(0x1000, 16, True, "global_store_b128 at PC 0x40", lane=3)
  e.add_context(kernel="E_4", workgroup=(1, 0, 0), wave=0, lane=7, nearest="offset 0x1000: just past the end of the allocation at 0x0 (0x1000 bytes)")
  assert str(e) == ("GPU page fault: write of 16 bytes at 0x1000 is outside every allocation (global_store_b128 at PC 0x40); "
                    "kernel E_4, workgroup (1, 0, 0), wave 0, lane 3; offset 0x1000: just past the end of the allocation at 0x0 (0x1000 bytes)")
  assert e.fields()["workgroup"] == [1, 0, 0] and e.fields()["lane"] == 3  # the raiser's lane stands

BUDGET = """
import json, os, numpy as np
from tinygrad import Tensor, Device
x = Tensor(np.ones(4096, np.float32)).realize()
try: (x + 1).realize(); Device[Device.DEFAULT].synchronize(); err = None
except Exception as e: err = str(e)
from mockgpu import system
print("INFO " + json.dumps({"error": err, "native_launches": sum(v for k, v in system.stats.items() if k.endswith("native_launches"))}))
os._exit(0)
"""

@pytest.mark.parametrize("path", ["numpy", "C"])
def test_budget_stop_names_the_kernel_and_who_ran(path, tmp_path):
  native = "1" if path == "C" else "0"
  evs, info = traced("MOCK+AMD", tmp_path, BUDGET, env={"MOCKGPU_BUDGET": "20", "MOCKGPU_RDNA_NATIVE": native, "MOCKGPU_COUNT": "1"})
  assert (info["native_launches"] > 0) == (path == "C") and info["error"]
  (f,) = of(evs, "fault")
  assert f["error"] == "InstructionBudgetExceeded" and f["queue"] == "AMD:0 PM4 queue 0"
  assert re.match(r"kernel E_\w+: dispatch of the kernel at PC 0x[0-9a-f]+ ran past MOCKGPU_BUDGET=20 wave-instructions", f["message"])
  # numpy runs the waves of a chunk of workgroups together; C one wave at a time, the one that ran out is named
  assert (re.search(r"running: workgroups \(0, 0, 0\) to \(\d+, 0, 0\)$", f["message"]) if path == "numpy" else
          re.search(r"the running wave: workgroup \(\d+, 0, 0\), wave 0$", f["message"])), f["message"]
