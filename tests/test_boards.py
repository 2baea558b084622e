"""The board registry (mockgpu.boards): selection by DEV's arch field and MOCKGPU_AMD_BOARD, the KFD properties each board
publishes as tinygrad reads them, and the named error of a CDNA (wave64) dispatch."""
import subprocess, sys, textwrap
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

def test_setting_then_default(monkeypatch):
  monkeypatch.setenv("DEV", "MOCKKFD+AMD")
  monkeypatch.setenv("MOCKGPU_AMD_BOARD", "gfx950")
  assert boards.selected_amd_board().name == "gfx950"
  monkeypatch.delenv("MOCKGPU_AMD_BOARD")
  assert boards.selected_amd_board().name == "gfx1100"

def test_unknown_arch_is_a_named_error(monkeypatch):
  monkeypatch.setenv("DEV", "MOCKKFD+AMD:LLVM:gfx9999")
  with pytest.raises(boards.UnknownBoard, match=r"unknown AMD board 'gfx9999': mockgpu models gfx1100, gfx1201, gfx942, gfx950"):
    boards.selected_amd_board()

@pytest.mark.parametrize("name,cus,xcc,wave", [("gfx1100", 96, 1, 32), ("gfx1201", 64, 1, 32), ("gfx942", 304, 8, 64), ("gfx950", 256, 8, 64)])
def test_kfd_properties_as_tinygrad_reads_them(name, cus, xcc, wave):
  p = amd_sysfs.gpu_properties(0, boards.amd_board(name))
  t = p["gfx_target_version"]
  assert "gfx%d%x%x" % (t // 10000, (t // 100) % 100, t % 100) == name  # ops_amd's AMDDevice.arch
  assert p["simd_count"] // p["simd_per_cu"] == cus and p["num_xcc"] == xcc and p["wave_front_size"] == wave

@pytest.mark.parametrize("arch,cus", [("gfx1100", 96), ("gfx1201", 64)])
def test_amd_device_reports_the_board(arch, cus):
  p = run_tinygrad(f"MOCKKFD+AMD:LLVM:{arch}", """
    from tinygrad import Device
    d = Device["AMD"]; print(d.arch, d.cu_cnt * d.xccs)""")
  assert p.stdout.split()[-2:] == [arch, str(cus)]

@pytest.mark.parametrize("arch,family", [("gfx942", "cdna3")])
def test_cdna_dispatch_is_unmodelled_wave64(arch, family):
  p = run_tinygrad(f"MOCKKFD+AMD:LLVM:{arch}", """
    from tinygrad import Tensor
    from mockgpu.errors import Unmodelled
    try: (Tensor([1.0, 2.0]) + 1).realize().numpy(); print("ran")
    except Exception as e: print(type(e).__name__, isinstance(e, Unmodelled) or isinstance(e.__cause__, Unmodelled), repr(str(e))[:300])""", check=False)
  out = p.stdout + p.stderr
  assert family in out and "wave64" in out, out[-3000:]

def test_doctor_lists_the_boards_llvm_compiles_for():
  import subprocess, sys
  p = subprocess.run([sys.executable, "-m", "mockgpu", "doctor"], capture_output=True, text=True, timeout=600)
  lines = {l.split()[1]: l for l in p.stdout.splitlines() if l.startswith("board ")}
  assert set(lines) == set(boards.AMD_BOARDS), p.stdout
  for arch in ("gfx1100", "gfx1201"): assert " ok " in lines[arch] and "compiles" in lines[arch]  # libllvm19 knows RDNA3/4
  from mockgpu.compiler import toolchain
  for arch, line in lines.items(): assert ("compiles" in line) == toolchain.llvm_compiles_for(arch)[0]

def test_rdna4_dispatch_runs_on_the_rdna4_executor():
  # gfx1201 boots (sysfs, queues, LLVM's gfx12 code object) and its kernels run as RDNA4 (compiler/rdna/rdna4.py)
  p = run_tinygrad("MOCKKFD+AMD:LLVM:gfx1201", """
    from tinygrad import Tensor
    from mockgpu import system
    print((Tensor([1.0, 2.0]) + 1).tolist(), system.stats["rdna4.launches"] > 0, system.stats["rdna3.launches"])""")
  assert p.stdout.split("\n")[-2] == "[2.0, 3.0] True 0", p.stdout[-2000:]
