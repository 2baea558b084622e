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

# *** the libLLVM each board compiles with (toolchain.llvm_for / bind_llvm) ***
import logging, sys, types
import pytest

AMD_IR = "define amdgpu_kernel void @k(ptr addrspace(1) %p) {\n store i32 1, ptr addrspace(1) %p\n ret void\n}"
EF_AMDGPU_MACH = {"gfx1100": 0x041, "gfx950": 0x04f}  # EF_AMDGPU_MACH_AMDGCN_* of LLVM's BinaryFormat/ELF.h

def test_llvm_release_from_the_file_name():
  assert toolchain.llvm_major("/usr/lib/x86_64-linux-gnu/libLLVM-22.so") == 22
  assert toolchain.llvm_major("libLLVM.so.19.1") == 19 and toolchain.llvm_major("libLLVM.so.18") == 18
  assert toolchain.llvm_major("libLLVMAMDGPUCodeGen.a") is None and toolchain.llvm_major("libLLVM-19.so.1.bak") is None

def _fake_llvms(monkeypatch, installed:dict, knows:dict, own:int):
  """installed: release -> path; knows: release -> processors it compiles for; own: the release tinygrad picks."""
  calls = []
  def run_probe(arch, lib):
    calls.append((arch, lib))
    major = toolchain.llvm_major(lib) if lib else own
    return toolchain.Probe(arch in knows[major], "compiles" if arch in knows[major] else f"'{arch}' is not a recognized processor", installed[major])
  monkeypatch.setattr(toolchain, "_run_probe", run_probe)
  monkeypatch.setattr(toolchain, "installed_llvms", lambda: installed)
  monkeypatch.setattr(toolchain, "_probes", {})
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", "off")
  monkeypatch.setenv("LLVM_PATH", "")  # recorded, so that the LLVM_PATH bind_llvm sets is removed after the test
  monkeypatch.delenv("LLVM_PATH")
  return calls

def test_llvm_for_keeps_tinygrads_choice_and_rebinds_only_what_it_cannot_compile(monkeypatch):
  libs = {15: "/l/libLLVM-15.so", 19: "/l/libLLVM-19.so", 21: "/l/libLLVM-21.so", 22: "/l/libLLVM-22.so"}
  _fake_llvms(monkeypatch, libs, {15: {"gfx1100"}, 19: {"gfx1100"}, 21: {"gfx1100", "gfx950"}, 22: {"gfx1100", "gfx950"}}, own=19)
  c = toolchain.llvm_for("gfx1100")
  assert (c.lib, c.rebound) == (libs[19], False) and "tinygrad's own choice" in c.detail
  c = toolchain.llvm_for("gfx950")  # the oldest newer release that knows it, not the newest
  assert (c.lib, c.rebound) == (libs[21], True) and "LLVM 21" in c.detail and "not a recognized processor" in c.detail
  c = toolchain.llvm_for("gfx9999")
  assert c.lib is None and f"apt-get install libllvm{toolchain.LLVM_TESTED}" in c.detail

def test_bind_llvm_sets_llvm_path_only_before_tinygrad_loads_libllvm(monkeypatch, caplog):
  libs = {19: "/l/libLLVM-19.so", 22: "/l/libLLVM-22.so"}
  _fake_llvms(monkeypatch, libs, {19: {"gfx1100"}, 22: {"gfx1100", "gfx950"}}, own=19)
  monkeypatch.delitem(sys.modules, "tinygrad.runtime.autogen.llvm", raising=False)
  assert toolchain.bind_llvm("gfx1100") is None and "LLVM_PATH" not in os.environ
  assert toolchain.bind_llvm("gfx950") == libs[22] == os.environ["LLVM_PATH"]
  monkeypatch.setenv("LLVM_PATH", "/mine/libLLVM.so")  # the user's choice (or the parent's) stays
  assert toolchain.bind_llvm("gfx950") == "/mine/libLLVM.so"
  monkeypatch.delenv("LLVM_PATH")
  loaded = types.SimpleNamespace(dll=types.SimpleNamespace(_name=libs[19]))
  monkeypatch.setitem(sys.modules, "tinygrad.runtime.autogen.llvm", loaded)  # loaded already: too late to choose
  with caplog.at_level(logging.WARNING, logger="mockgpu"):
    assert toolchain.bind_llvm("gfx1100") is None and not caplog.records
    assert toolchain.bind_llvm("gfx950") is None and "LLVM_PATH" not in os.environ
  assert f"tinygrad loaded {libs[19]} before the MOCK interface was imported, and it cannot compile for gfx950" in caplog.text
  assert f"LLVM 22 ({libs[22]}), which mockgpu sets as LLVM_PATH" in caplog.text

def test_bind_llvm_names_tinygrads_own_choice_until_tinygrad_loads_it(monkeypatch, tmp_path):
  """tinygrad's own libLLVM, when the probe saw it load one that is a file, is set as LLVM_PATH (the same library,
  found without tinygrad's scan of the library directories) and removed once loaded; a lib no longer a file is not."""
  own = tmp_path / "libLLVM-19.so"
  own.write_bytes(b"\x7fELF")
  _fake_llvms(monkeypatch, {19: str(own), 22: "/l/libLLVM-22.so"}, {19: {"gfx1100"}, 22: {"gfx1100", "gfx950"}}, own=19)
  monkeypatch.delitem(sys.modules, "tinygrad.runtime.autogen.llvm", raising=False)
  monkeypatch.setattr(toolchain, "named_own", None)
  assert toolchain.bind_llvm("gfx1100") == str(own) == os.environ["LLVM_PATH"] == toolchain.named_own
  toolchain.forget_own_llvm()
  assert "LLVM_PATH" not in os.environ and toolchain.named_own is None
  monkeypatch.setenv("LLVM_PATH", "/mine/libLLVM.so")  # set by someone else since: kept
  monkeypatch.setattr(toolchain, "named_own", str(own))
  toolchain.forget_own_llvm()
  assert os.environ["LLVM_PATH"] == "/mine/libLLVM.so"
  monkeypatch.delenv("LLVM_PATH")
  own.unlink()
  assert toolchain.bind_llvm("gfx1100") is None and "LLVM_PATH" not in os.environ

def test_probe_answers_are_kept_on_disk(monkeypatch, tmp_path):
  calls = _fake_llvms(monkeypatch, {19: "/l/libLLVM-19.so"}, {19: {"gfx1100"}}, own=19)
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path))
  assert toolchain.probe("gfx1100").ok and not toolchain.probe("gfx950").ok
  monkeypatch.setattr(toolchain, "_probes", {})  # a new process: answers come from the cache directory
  assert toolchain.probe("gfx1100").ok and not toolchain.probe("gfx950").ok
  assert calls == [("gfx1100", None), ("gfx950", None)]

def _needs_llvm_for(arch:str) -> toolchain.LLVMChoice:
  c = toolchain.llvm_for(arch)
  if c.lib is None: pytest.skip(f"no installed LLVM compiles for {arch} (scripts/install.sh installs libllvm{toolchain.LLVM_TESTED}): {c.detail}")
  return c

@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_each_board_compiles_for_its_processor(arch):
  """A MOCK+AMD process loads a libLLVM that knows its board (gfx950: LLVM 20 or newer, which tinygrad does not look
  for), and the code object is for that processor (the ELF header's EF_AMDGPU_MACH)."""
  choice = _needs_llvm_for(arch)
  p = run_tinygrad(f"MOCKKFD+AMD:LLVM:{arch}", f"""
    import os, struct
    from tinygrad import Device
    lib = Device["AMD"].compiler.compile({AMD_IR!r})
    from tinygrad.runtime.autogen import llvm
    from tinygrad.helpers import getenv
    print("mach", hex(struct.unpack_from("<I", lib, 0x30)[0] & 0xff), "loaded", llvm.dll._name, "LLVM_PATH", os.environ.get("LLVM_PATH"),
          "searched", getenv("LLVM_PATH", "") or "None")""")
  out = p.stdout.split()
  assert out[out.index("mach") + 1] == hex(EF_AMDGPU_MACH[arch]) and "not a recognized processor" not in p.stderr, p.stdout + p.stderr
  assert out[out.index("loaded") + 1] == choice.lib
  assert out[out.index("LLVM_PATH") + 1] == (choice.lib if choice.rebound else "None")
  # tinygrad's DLL.findlib read LLVM_PATH (cached by its getenv) naming the library: it searched no directory. tinygrad's
  # own choice is named only until it is loaded, so that children for other boards choose afresh
  assert out[out.index("searched") + 1] == choice.lib
  if arch == "gfx950": assert toolchain.llvm_major(choice.lib) >= 20

def test_debug7_disassembles_gfx950_kernels():
  """DEBUG=7 on a CDNA4 board: the llvm-objdump mockgpu puts on PATH must know gfx950 (LLVM 20 or newer), and prints
  GFX9 mnemonics (global_store_dword, not RDNA's global_store_b32). The dispatch itself may be unmodelled."""
  _needs_llvm_for("gfx950")
  real = toolchain.newest_llvm_objdump()
  if real is None or int(real.split("llvm-")[1].split("/")[0]) < 20:
    pytest.skip(f"no llvm-objdump >= 20 (apt-get install llvm-{toolchain.LLVM_TESTED})")
  p = run_tinygrad("MOCKKFD+AMD:LLVM:gfx950", "from tinygrad import Tensor; print((Tensor([1.,2.])+1).tolist())", env={"DEBUG": "7"}, check=False)
  assert "global_store_dword" in p.stdout and "s_endpgm" in p.stdout and "v_add_f32" in p.stdout, p.stdout[-3000:] + p.stderr[-3000:]

def test_stale_objdump_link_is_repointed(monkeypatch, tmp_path):
  """The shim directory is shared by the user's processes: a link made before a newer LLVM was installed is re-pointed."""
  import tempfile
  real = toolchain.newest_llvm_objdump()
  if real is None: pytest.skip("no llvm-objdump >= 15 installed")
  monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
  monkeypatch.setenv("DEBUG", "7")
  monkeypatch.setenv("PATH", "/usr/bin:/bin")
  shim = toolchain.objdump_shim_dir()
  os.makedirs(shim)
  os.symlink("/bin/true", os.path.join(shim, "llvm-objdump-20"))
  assert toolchain.bind_llvm_objdump() == real
  assert os.path.realpath(os.path.join(shim, "llvm-objdump-20")) == os.path.realpath(real)
  assert os.environ["PATH"].split(os.pathsep)[0] == shim
  toolchain.bind_llvm_objdump()
  assert os.environ["PATH"].split(os.pathsep).count(shim) == 1  # bound once, however often a MOCK interface is imported
