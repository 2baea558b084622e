"""Makes tinygrad's `test.mockgpu.*` imports resolve to mockgpu, with nothing imported until tinygrad asks.

mockgpu.pth (installed into site-packages) calls install() at interpreter start-up. The finder answers only for the
names tinygrad's MOCK interfaces import; for the top-level `test` package it answers only when no other finder has
one (Python's own regression-test package, or a project's test/ directory, win), so nothing else changes.
Stdlib-only on purpose: it runs in every interpreter.
"""
import importlib, importlib.abc, importlib.machinery, os, sys

PACKAGES = {"test.mockgpu", "test.mockgpu.cuda"}

# tinygrad's name -> the import of the mockgpu module it gets (imports, not strings: the import graph sees them)
def _bridge():
  from mockgpu import bridge
  return bridge
def _cuda():
  from mockgpu.driver import cuda
  return cuda
def _usb():
  from mockgpu.driver import usb
  return usb
ALIASES = {"test.mockgpu.mockgpu": _bridge, "test.mockgpu.cuda.cuda": _cuda, "test.mockgpu.usb": _usb}

# tinygrad's NVRTC compiler module reads CUDA_PATH (the CUDA headers NVRTC compiles against) when it is imported; a MOCK
# interface needs headers that match the NVRTC in use (mockgpu.compiler.toolchain.bind_cuda_headers). The module is
# imported before the mock interface (MOCK+CUDA) or after it (MOCK+NV, from its renderer): rebound at once in the
# first case, right after tinygrad executes it in the second.
CUDA_COMPILER = "tinygrad.runtime.support.compiler_cuda"
_post_import:dict = {}   # module name -> a callback run on the module right after it is executed (armed by a MOCK import)

# DEV=MOCK+CPU (mockgpu.driver.cpu): tinygrad's CPU device has no MOCK interface; right after tinygrad executes ops_cpu,
# its CPUDevice attribute is rebound to the arm64 lane's subclass (the one change; ops_cpu is first imported on device use)
CPU_RUNTIME = "tinygrad.runtime.ops_cpu"

def _install_cpu_lane(module):
  from mockgpu.driver import cpu
  cpu.install(module)

def _cpu_lane_in_env() -> bool:
  """DEV names MOCK+CPU (MOCK+CPU:LLVM, MOCK+CPU:CLANG:arm64,apple-m1, ...), alone or among ';'-separated targets."""
  return any(t.split("+")[0].split(":")[0].upper().startswith("MOCK") and t.split("+")[1].split(":")[0].upper() == "CPU"
             for t in os.environ.get("DEV", "").split(";") if t.count("+") == 1)

def _bind_cuda_headers(module=None):
  from mockgpu.compiler import toolchain
  toolchain.bind_cuda_headers(module)

# tinygrad's AM driver (DEV=MOCKPCI+AMD, MOCKUSB+AMD) downloads pinned firmware blobs through the `fetch_fw` its amdev
# module imported from tinygrad.helpers; under a MOCK interface that name is rebound to mockgpu's synthetic firmware
# (mockgpu/emulators/am/firmware.py), at once if amdev is already imported, else right after tinygrad executes it.
AM_DEVICE = "tinygrad.runtime.support.am.amdev"

def _bind_am_firmware(module=None):
  from mockgpu.emulators.am import firmware
  (module or sys.modules[AM_DEVICE]).fetch_fw = firmware.fetch_fw

# toolchain.bind_llvm may name tinygrad's own libLLVM choice as LLVM_PATH to spare tinygrad's search for it; right after
# tinygrad executes its libLLVM bindings (the library loaded), that LLVM_PATH is removed again (toolchain.forget_own_llvm)
LLVM_MODULE = "tinygrad.runtime.autogen.llvm"

_armed = False

def _on_mock_interface():
  """Once per process, at the first MOCK interface import (tinygrad's AMD runtime imports two: the bridge and usb)."""
  global _armed
  if _armed: return
  _armed = True
  from mockgpu import trace
  trace.start()   # MOCKGPU_TRACE / MOCKGPU_TIMELINE: subscribe their listeners before the first event
  if "AMD" in os.environ.get("DEV", "").upper():  # a libLLVM that knows the AMD board (gfx950: LLVM 22), before tinygrad loads one
    from mockgpu.compiler import toolchain
    from mockgpu.boards import selected_amd_board
    toolchain.bind_llvm(selected_amd_board().name)
    if toolchain.named_own is not None: _post_import[LLVM_MODULE] = toolchain.forget_own_llvm
  if int(os.environ.get("DEBUG", "0") or 0) >= 7:  # disassembly: tinygrad finds llvm-objdump on PATH (toolchain: ~2 ms to import)
    from mockgpu.compiler import toolchain
    toolchain.bind_llvm_objdump()
  if AM_DEVICE in sys.modules: _bind_am_firmware(sys.modules[AM_DEVICE])
  else: _post_import[AM_DEVICE] = _bind_am_firmware
  if CUDA_COMPILER in sys.modules: _bind_cuda_headers(sys.modules[CUDA_COMPILER])
  else: _post_import[CUDA_COMPILER] = _bind_cuda_headers

class _PostImportLoader(importlib.abc.Loader):
  def __init__(self, real, hook): self.real, self.hook = real, hook
  def create_module(self, spec): return self.real.create_module(spec)
  def exec_module(self, module):
    self.real.exec_module(module)
    self.hook(module)
  def __getattr__(self, name):  # get_source, get_filename, ... for tracebacks
    if name == "real": raise AttributeError(name)
    return getattr(self.real, name)

class _AliasLoader(importlib.abc.Loader):
  def __init__(self, target): self.target = target  # a function that imports the module and returns it
  def create_module(self, spec):
    _on_mock_interface()
    module = self.target()
    self.spec = module.__spec__  # the import system overwrites __spec__ with the alias's; keep the real one
    return module
  def exec_module(self, module): module.__spec__ = self.spec

class _EmptyPackageLoader(importlib.abc.Loader):
  def create_module(self, spec): return None
  def exec_module(self, module): module.__path__ = []

class MockGPUFinder(importlib.abc.MetaPathFinder):
  def find_spec(self, name, path=None, target=None):
    if name in ALIASES: return importlib.machinery.ModuleSpec(name, _AliasLoader(ALIASES[name]))
    if name in _post_import: return self._with_post_import(name, path, target)
    if name in PACKAGES or (name == "test" and not self._found_elsewhere(name, path)):
      return importlib.machinery.ModuleSpec(name, _EmptyPackageLoader(), is_package=True)
    return None
  def _with_post_import(self, name, path, target):
    hook = _post_import.pop(name)
    for f in sys.meta_path:
      if f is self or not hasattr(f, "find_spec"): continue
      if (spec := f.find_spec(name, path, target)) is not None and spec.loader is not None:
        spec.loader = _PostImportLoader(spec.loader, hook)
        return spec
    return None
  def _found_elsewhere(self, name, path) -> bool:
    for f in sys.meta_path:
      if f is self or not hasattr(f, "find_spec"): continue
      if f.find_spec(name, path) is not None: return True
    return False

def _default_nvrtc():
  """tinygrad loads NVRTC when its CUDA compiler module is imported, before any mock module: point it at the
  nvidia-cuda-nvrtc-cu12 wheel beside us unless the user chose one (tinygrad honours NVRTC_PATH)."""
  if "NVRTC_PATH" in os.environ: return
  for entry in sys.path:
    if os.path.isfile(lib:=os.path.join(entry, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.12")):
      os.environ["NVRTC_PATH"] = lib
      return

def _mock_in_env() -> bool:
  """DEV names a MOCK interface (MOCK+NV, MOCKKFD+AMD, ...): tinygrad's compile workers (spawned processes, which
  import its compiler modules but never a MOCK interface) inherit DEV, and need the same headers as their parent."""
  return any(part.split(":")[0].split("+")[0].startswith("MOCK") for part in os.environ.get("DEV", "").split(","))

def install():
  _default_nvrtc()
  if _mock_in_env() and CUDA_COMPILER not in sys.modules: _post_import.setdefault(CUDA_COMPILER, _bind_cuda_headers)
  if _cpu_lane_in_env():
    if CPU_RUNTIME in sys.modules: _install_cpu_lane(sys.modules[CPU_RUNTIME])
    else: _post_import.setdefault(CPU_RUNTIME, _install_cpu_lane)
  if not any(isinstance(f, MockGPUFinder) for f in sys.meta_path): sys.meta_path.insert(0, MockGPUFinder())
