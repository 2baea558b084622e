"""Compiler discovery: what tinygrad's AMD and NVIDIA compilers will find, and the advice when something is missing."""
import os
from conftest import run_tinygrad
from mockgpu.compiler import toolchain

def test_llvm_with_amdgpu_is_found():
  f = toolchain.llvm()
  assert f.usable and f.path and "AMDGPU" in f.detail
  assert toolchain.amd_problem() is None

def test_missing_llvm_names_the_package(monkeypatch):
  from tinygrad.runtime.support import c
  import tinygrad.runtime.autogen.llvm, tinygrad.runtime.autogen.comgr  # noqa: F401  load them before hiding them
  monkeypatch.setattr(c.DLL, "_loaded_", set())  # as if tinygrad had found neither libLLVM nor comgr
  f = toolchain.llvm()
  assert not f.usable and "apt-get install libllvm19" in f.detail and "LLVM_PATH" in f.detail
  assert "no AMD compiler" in toolchain.amd_problem()

def test_nvrtc_comes_from_the_wheel():
  f = toolchain.nvrtc()
  assert f.usable and os.environ.get("NVRTC_PATH", "").endswith("libnvrtc.so.12")

def test_both_amd_renderers_run():
  for dev in ("MOCK+AMD", "MOCK+AMD:LLVM", "MOCKKFD+AMD"):
    p = run_tinygrad(dev, "from tinygrad import Tensor; print((Tensor([1.,2,3])+1).tolist())")
    assert p.stdout.strip().splitlines()[-1] == "[2.0, 3.0, 4.0]", (dev, p.stdout, p.stderr[-2000:])

def test_doctor_reports_ready():
  p = run_tinygrad("CPU", "from mockgpu.cli import main; raise SystemExit(main(['doctor']))", check=False)
  assert p.returncode == 0 and "DEV=MOCK+AMD: ready" in p.stdout, p.stdout + p.stderr

def test_debug7_disassembles_amd_kernels():
  """DEBUG=7 makes tinygrad run llvm-objdump on each AMD kernel; Debian's default one (LLVM 14) crashed on them.
  mockgpu puts a newer one where tinygrad looks (toolchain.bind_llvm_objdump)."""
  import pytest
  from mockgpu.compiler import toolchain
  if toolchain.newest_llvm_objdump() is None: pytest.skip("no llvm-objdump >= 15 installed (apt-get install llvm-19)")
  from conftest import run_tinygrad
  p = run_tinygrad("MOCK+AMD:LLVM", "from tinygrad import Tensor; print((Tensor([1.,2.])+1).tolist())", env={"DEBUG": "7"})
  assert "v_add_f32" in p.stdout and "s_endpgm" in p.stdout and "[2.0, 3.0]" in p.stdout
