"""The board registry (mockgpu.boards): selection by DEV's arch field, MOCKGPU_AMD_BOARD and MOCKGPU_NV_MODEL, the KFD
properties, RM answers and CUDA attributes each board publishes as tinygrad reads them, the launch limits each NVIDIA
record sets, the named error of an unknown board, and each board's dispatches on its ISA family (CDNA: wave64 over the XCCs)."""
import ctypes, dataclasses, importlib, json, textwrap
import numpy as np
import pytest
from mockgpu import boards
from mockgpu.driver import amd_sysfs
from conftest import run_tinygrad

def test_dev_arch_field_selects_the_board(monkeypatch):
  monkeypatch.setenv("DEV", "MOCKKFD+AMD:LLVM:gfx1201")
  monkeypatch.setenv("MOCKGPU_AMD_BOARD", "gfx942")  # DEV's arch wins over the setting
  assert boards.selected_amd_board().name == "gfx1201"

def test_dev_arch_field_among_several_targets(monkeypatch):
  monkeypatch.setenv("DEV", "CPU;MOCKKFD+AMD:LLVM:gfx1201")  # tinygrad's DEV lists targets separated by ';'
  assert boards.selected_amd_board().name == "gfx1201"

@pytest.mark.parametrize("dev,setting,board,select,default", [
  ("MOCKKFD+AMD", "MOCKGPU_AMD_BOARD", "gfx950", boards.selected_amd_board, "gfx1100"),
  ("MOCK+CUDA", "MOCKGPU_NV_MODEL", "sm_120", boards.selected_nv_board, "sm_89")])
def test_setting_then_default(monkeypatch, dev, setting, board, select, default):
  monkeypatch.setenv("DEV", dev)  # no arch field
  monkeypatch.setenv(setting, board)
  assert select().name == board
  monkeypatch.delenv(setting)
  assert select().name == default

def test_unknown_arch_is_a_named_error(monkeypatch):
  monkeypatch.setenv("DEV", "MOCKKFD+AMD:LLVM:gfx9999")
  with pytest.raises(boards.UnknownBoard, match=r"unknown AMD board 'gfx9999': mockgpu models gfx1100, gfx1151, gfx1201, gfx942, gfx950"):
    boards.selected_amd_board()

@pytest.mark.parametrize("name,cus,xcc,wave", [("gfx1100", 96, 1, 32), ("gfx1151", 40, 1, 32), ("gfx1201", 64, 1, 32), ("gfx942", 304, 8, 64),
                                               ("gfx950", 256, 8, 64)])
def test_kfd_properties_as_tinygrad_reads_them(name, cus, xcc, wave):
  p = amd_sysfs.gpu_properties(0, boards.amd_board(name))
  t = p["gfx_target_version"]
  assert "gfx%d%x%x" % (t // 10000, (t // 100) % 100, t % 100) == name  # ops_amd's AMDDevice.arch
  assert p["simd_count"] // p["simd_per_cu"] == cus and p["num_xcc"] == xcc and p["wave_front_size"] == wave

@pytest.mark.parametrize("arch,cus", [("gfx1100", 96), ("gfx1151", 40), ("gfx1201", 64), ("gfx942", 304), ("gfx950", 256)])
def test_amd_device_reports_the_board(arch, cus):
  p = run_tinygrad(f"MOCKKFD+AMD:LLVM:{arch}", """
    from tinygrad import Device
    d = Device["AMD"]; print(d.arch, d.cu_cnt * d.xccs)""")
  assert p.stdout.split()[-2:] == [arch, str(cus)]

@pytest.mark.parametrize("arch,family", [("gfx942", "cdna3"), ("gfx950", "cdna4")])
def test_cdna_dispatch_runs_wave64_on_its_family_over_the_xccs(arch, family):
  # soc15 PM4, AQL over 8 XCCs and SDMA 4.4 (tests/emulators/test_cdna_device.py) hand the executor a wave64 Dispatch per XCC;
  # each runs its XCC's share of the workgroups on the family's table (semantics/cdna.py, cdna4.py)
  p = run_tinygrad(f"MOCKKFD+AMD:LLVM:{arch}", f"""
    from tinygrad import Tensor
    from mockgpu import system
    x = Tensor(list(range(5000))) * 3 + 1  # int32: the sum is exact
    print(x.sum().item(), x[4999].item(), system.stats["{family}.launches"] > 0, system.stats["rdna3.launches"])""")
  assert p.stdout.split("\n")[-2] == f"{sum(3 * i + 1 for i in range(5000))} 14998 True 0", p.stdout[-2000:]

def test_doctor_lists_the_boards_llvm_compiles_for():
  import subprocess, sys
  p = subprocess.run([sys.executable, "-m", "mockgpu", "doctor"], capture_output=True, text=True, timeout=600)
  lines = {l.split()[1]: l for l in p.stdout.splitlines() if l.startswith("board ")}
  assert set(lines) == set(boards.AMD_BOARDS), p.stdout
  for arch in ("gfx1100", "gfx1151", "gfx1201"): assert " ok " in lines[arch] and "own choice" in lines[arch]  # libllvm19 knows RDNA3/3.5/4
  from mockgpu.compiler import toolchain
  for arch, line in lines.items():
    choice = toolchain.llvm_for(arch)
    assert (" ok " in line) == (choice.lib is not None) and choice.detail in line, line
    if choice.rebound: assert f"LLVM {toolchain.llvm_major(choice.lib)} ({choice.lib}), which mockgpu sets as LLVM_PATH" in line
    if choice.lib is None: assert f"apt-get install libllvm{toolchain.LLVM_TESTED}" in line

def test_rdna4_dispatch_runs_on_the_rdna4_executor():
  # gfx1201 boots (sysfs, queues, LLVM's gfx12 code object) and its kernels run as RDNA4 (compiler/rdna/semantics/rdna4.py)
  p = run_tinygrad("MOCKKFD+AMD:LLVM:gfx1201", """
    from tinygrad import Tensor
    from mockgpu import system
    print((Tensor([1.0, 2.0]) + 1).tolist(), system.stats["rdna4.launches"] > 0, system.stats["rdna3.launches"])""")
  assert p.stdout.split("\n")[-2] == "[2.0, 3.0] True 0", p.stdout[-2000:]

# *** NVIDIA ***

def test_nv_dev_arch_field_selects_the_board(monkeypatch):
  monkeypatch.setenv("MOCKGPU_NV_MODEL", "sm_120")  # DEV's arch wins over the setting
  for dev in ("MOCK+NV:PTX:sm_86", "MOCK+CUDA:CUDA:sm_86", "MOCKKFD+AMD:LLVM:gfx1201;MOCK+NV:PTX:sm_86", "CPU;MOCK+CUDA:PTX:SM_86"):
    monkeypatch.setenv("DEV", dev)
    assert boards.selected_nv_board().name == "sm_86", dev
  monkeypatch.setenv("DEV", "MOCKKFD+AMD:LLVM:gfx1201;MOCK+NV")  # an AMD target's arch is not an NV board
  assert (boards.selected_nv_board().name, boards.selected_amd_board().name) == ("sm_120", "gfx1201")

@pytest.mark.parametrize("dev,setting", [("MOCK+NV:PTX:sm_90", ""), ("MOCK+CUDA", "gfx1100")])
def test_unknown_nv_board_is_a_named_error(monkeypatch, dev, setting):
  monkeypatch.setenv("DEV", dev)
  monkeypatch.setenv("MOCKGPU_NV_MODEL", setting)
  name = dev.split(":")[-1] if dev.count(":") == 2 else setting
  with pytest.raises(boards.UnknownBoard, match=rf"unknown NVIDIA board '{name}': mockgpu models sm_86, sm_89, sm_120"):
    boards.selected_nv_board()

def test_nv_records_name_the_classes_of_nvidia_headers():
  from tinygrad.runtime.autogen import nv_570 as nv
  for b in boards.NV_BOARDS.values():
    for cls in (*b.gpfifo_classes, b.compute_class, b.dma_class, *b.usermode_classes): assert isinstance(getattr(nv, cls), int), cls
    assert b.qmd_version == (5 if b.compute >= nv.BLACKWELL_COMPUTE_A else 3)  # the QMD the compute class reads
    assert b.name == "sm_%d%d" % b.compute_capability and b.sm_count <= b.gpcs * b.tpc_per_gpc * b.sm_per_tpc
    assert b.max_warps_per_sm * b.warp_size == b.max_threads_per_sm
    assert b.shared_per_block <= b.shared_per_block_optin == b.shared_per_sm - b.reserved_shared_per_block

# what tinygrad's NV (RM, NVRTC) and CUDA (driver API) devices read of the board, and a kernel on each
NV_PROBE = r"""
  import ctypes, json, re
  from tinygrad import Device, Tensor
  from tinygrad.runtime.ops_cuda import cuda
  from tinygrad.runtime.support.hcq import FileIOInterface
  n, c = Device["NV"], Device["CUDA"]
  def attr(name):
    v = ctypes.c_int()
    assert cuda.cuDeviceGetAttribute(ctypes.byref(v), getattr(cuda, "CU_DEVICE_ATTRIBUTE_" + name), 0) == 0
    return v.value
  names, total = ctypes.create_string_buffer(64), ctypes.c_size_t()
  assert cuda.cuDeviceGetName(names, 64, 0) == 0 and cuda.cuDeviceTotalMem_v2(ctypes.byref(total), 0) == 0
  info = n.iface.gpus_info[0]
  ptx = n.compiler.compile('extern "C" __global__ void k(float* o) { o[threadIdx.x] = 1.0f; }').decode()  # NVRTC's PTX
  print(json.dumps({"nv_arch": n.arch, "cuda_arch": c.arch, "nvrtc_target": re.search(r"\.target\s+(\w+)", ptx)[1],
    "sm_version": n.sm_version, "gr": [n.num_gpcs, n.num_tpc_per_gpc, n.num_sm_per_tpc, n.max_warps_per_sm],
    "classes": [n.iface.compute_class, n.iface.dma_class, n.iface.gpfifo_class, n.iface.usermode_class],
    "pci": info.pci_info.device_id, "fb": info.fb_size, "proc": FileIOInterface(f"/proc/driver/nvidia/gpus/0000:01:00.0/information").read(),
    "name": names.value.decode(), "total": total.value, "attrs": {a: attr(a) for a in ATTRS},
    "ran": [(Tensor([1.0, 2.0, 3.0], device=d) * 2 + 0.5).tolist() for d in ("NV", "CUDA")]}))
"""
ATTRS = {"MULTIPROCESSOR_COUNT": "sm_count", "L2_CACHE_SIZE": "l2_size", "CLOCK_RATE": "clock_khz", "MEMORY_CLOCK_RATE": "memory_clock_khz",
         "GLOBAL_MEMORY_BUS_WIDTH": "memory_bus_width", "MAX_THREADS_PER_MULTIPROCESSOR": "max_threads_per_sm",
         "MAX_BLOCKS_PER_MULTIPROCESSOR": "max_blocks_per_sm", "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": "shared_per_sm",
         "MAX_SHARED_MEMORY_PER_BLOCK": "shared_per_block", "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": "shared_per_block_optin",
         "MAX_THREADS_PER_BLOCK": "max_threads_per_block", "MAX_REGISTERS_PER_MULTIPROCESSOR": "regs_per_sm", "WARP_SIZE": "warp_size",
         "MAX_REGISTERS_PER_BLOCK": "regs_per_block", "TOTAL_CONSTANT_MEMORY": "constant_memory"}

def nv_probe(dev:str, **env) -> dict:
  p = run_tinygrad(dev, f"ATTRS = {list(ATTRS)!r}\n" + textwrap.dedent(NV_PROBE), 300, env)
  return json.loads(next(l for l in p.stdout.splitlines() if l.startswith("{")))

@pytest.mark.parametrize("name", list(boards.NV_BOARDS))
def test_nv_and_cuda_devices_report_the_board(name):
  b, got = boards.nv_board(name), nv_probe("MOCK+NV;MOCK+CUDA", MOCKGPU_NV_MODEL=name)
  assert got["nv_arch"] == got["cuda_arch"] == got["nvrtc_target"] == name and got["sm_version"] == b.sm_version
  assert got["gr"] == [b.gpcs, b.tpc_per_gpc, b.sm_per_tpc, b.max_warps_per_sm]
  assert got["classes"] == [b.compute, b.dma, b.gpfifo[0], b.usermode[0]]  # the host and usermode classes tinygrad prefers come first
  assert (got["pci"], got["fb"], got["total"]) == (b.pci_device_id, b.memory_size, b.memory_size)
  assert got["name"] == b.marketing_name and f"Model: \t\t {b.marketing_name}\n" in got["proc"]
  assert got["attrs"] == {a: getattr(b, field) for a, field in ATTRS.items()}
  assert got["ran"] == [[2.5, 4.5, 6.5]] * 2

def test_dev_arch_field_selects_the_nv_board_end_to_end():
  got = nv_probe("MOCK+NV:CUDA:sm_120;MOCK+CUDA", MOCKGPU_NV_MODEL="sm_86")  # DEV's arch wins, for both devices
  assert got["nv_arch"] == got["cuda_arch"] == got["nvrtc_target"] == "sm_120" and got["attrs"]["MULTIPROCESSOR_COUNT"] == 170
  assert got["ran"] == [[2.5, 4.5, 6.5]] * 2

def test_unknown_nv_board_fails_the_open_with_its_name():
  p = run_tinygrad("MOCK+CUDA:PTX:sm_90", "from tinygrad import Device; Device['CUDA']", 120, check=False)
  assert p.returncode != 0 and "UnknownBoard: unknown NVIDIA board 'sm_90': mockgpu models sm_86, sm_89, sm_120" in p.stderr, p.stderr[-3000:]

# *** the launch limits each record sets ***

TID_PTX = """.version 7.8
.target sm_80
.address_size 64
.visible .entry tid(.param .u64 out)
{
  .shared .align 4 .b8 s[16384];
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""
STATIC = 16384

class TidArgs(ctypes.Structure): _fields_ = [("out", ctypes.c_uint64)]

@pytest.fixture
def cuda_on(monkeypatch):
  """The CUDA driver model with one GPU of a given record (registered under its name for the test) and a context."""
  def make(board:boards.NVBoard):
    monkeypatch.setitem(boards.NV_BOARDS, board.name, board)
    monkeypatch.setenv("MOCKGPU_NV_MODEL", board.name)
    monkeypatch.setenv("MOCKGPU_COUNT", "1")
    monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
    monkeypatch.delenv("DEV", raising=False)
    import mockgpu.driver.cuda as cu
    cu = importlib.reload(cu)
    ctx, mod, fn, out = cu.CUcontext(), cu.CUmodule(), cu.CUfunction(), cu.CUdeviceptr()
    assert cu.cuInit(0) == 0 and cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0) == 0
    assert cu.cuModuleLoadData(ctypes.byref(mod), TID_PTX.encode()) == 0 and cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"tid") == 0
    assert cu.cuMemAlloc_v2(ctypes.byref(out), 4 * 1024) == 0
    return cu, fn, out.value
  return make

def launch(cu, fn, out:int, threads:int, dynamic:int) -> int:
  return cu.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, dynamic, None, None, TidArgs(out))

@pytest.mark.parametrize("name", list(boards.NV_BOARDS))
def test_launch_at_the_records_limits_runs_and_past_them_fails(cuda_on, name):
  b = boards.nv_board(name)
  cu, fn, out = cuda_on(b)
  most = b.shared_per_block_optin - STATIC  # a 1024-thread block with all the opt-in shared memory: runs
  assert launch(cu, fn, out, b.max_threads_per_block, b.shared_per_block - STATIC) == 0  # the default window, no opt-in
  assert launch(cu, fn, out, b.max_threads_per_block, b.shared_per_block - STATIC + 1) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuFuncSetAttribute(fn, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, most + 1) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuFuncSetAttribute(fn, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, most) == 0
  assert launch(cu, fn, out, b.max_threads_per_block, most) == 0 and cu.cuCtxSynchronize() == 0
  got = np.empty(b.max_threads_per_block, np.uint32)
  assert cu.cuMemcpyDtoH_v2(got.ctypes.data, out, got.nbytes) == 0
  np.testing.assert_array_equal(got, np.arange(b.max_threads_per_block, dtype=np.uint32))
  assert launch(cu, fn, out, b.max_threads_per_block + 1, 0) == cu.CUDA_ERROR_INVALID_VALUE

def test_launch_limits_follow_the_record(cuda_on):
  """A record with a smaller opt-in window and thread limit (a variant of sm_89 made here: the modelled boards share
  the CUDA guide's per-block limits) refuses the 1024-thread, 80 KiB block that sm_89 runs, with the CUresults of
  real hardware (the QMD path: test_hostile_driver.py's test_qmd_launch_limits_are_the_boards)."""
  small = dataclasses.replace(boards.nv_board("sm_89"), name="sm_89_small", shared_per_block_optin=64 << 10, max_threads_per_block=512)
  dynamic = (80 << 10) - STATIC
  cu, fn, out = cuda_on(boards.nv_board("sm_89"))
  assert cu.cuFuncSetAttribute(fn, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic) == 0
  assert launch(cu, fn, out, 1024, dynamic) == 0 and cu.cuCtxSynchronize() == 0
  cu, fn, out = cuda_on(small)
  assert cu.cuFuncSetAttribute(fn, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic) == cu.CUDA_ERROR_INVALID_VALUE
  assert launch(cu, fn, out, 1024, 0) == cu.CUDA_ERROR_INVALID_VALUE
  attr = ctypes.c_int()
  assert cu.cuDeviceGetAttribute(ctypes.byref(attr), cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0) == 0 and attr.value == 64 << 10
  k = cu._handles[cu._addr(fn)].kernel
  assert boards.nv_board("sm_89").launch_error(k, (1, 1, 1), (1024, 1, 1), dynamic) is None
  kind, why = small.launch_error(k, (1, 1, 1), (256, 1, 1), dynamic)
  assert kind == "resources" and why == f"kernel tid: {k.dynamic_base + dynamic} bytes of shared memory exceed the 65536 bytes of a CTA (sm_89_small)"

def test_version_flag_prints_the_version():
  import subprocess, sys
  from mockgpu import __version__
  p = subprocess.run([sys.executable, "-m", "mockgpu", "--version"], capture_output=True, text=True, timeout=600)
  assert p.returncode == 0 and p.stdout.strip() == f"mockgpu {__version__}", (p.returncode, p.stdout, p.stderr)
