"""Makes tinygrad's `test.mockgpu.*` imports resolve to mockgpu, with nothing imported until tinygrad asks.

mockgpu.pth (installed into site-packages) calls install() at interpreter start-up. The finder answers only for the
names tinygrad's MOCK interfaces import; for the top-level `test` package it answers only when no other finder has
one (Python's own regression-test package, or a project's test/ directory, win), so nothing else changes.
Stdlib-only on purpose: it runs in every interpreter.
"""
import importlib, importlib.abc, importlib.machinery, os, sys

PACKAGES = {"test.mockgpu", "test.mockgpu.cuda"}
ALIASES = {
  "test.mockgpu.mockgpu": "mockgpu.bridge",
  "test.mockgpu.cuda.cuda": "mockgpu.driver.cuda",
  "test.mockgpu.usb": "mockgpu.driver.usb",
}

class _AliasLoader(importlib.abc.Loader):
  def __init__(self, target:str): self.target = target
  def create_module(self, spec):
    module = importlib.import_module(self.target)
    self.spec = module.__spec__  # the import system overwrites __spec__ with the alias's; keep the real one
    return module
  def exec_module(self, module): module.__spec__ = self.spec

class _EmptyPackageLoader(importlib.abc.Loader):
  def create_module(self, spec): return None
  def exec_module(self, module): module.__path__ = []

class MockGPUFinder(importlib.abc.MetaPathFinder):
  def find_spec(self, name, path=None, target=None):
    if name in ALIASES: return importlib.machinery.ModuleSpec(name, _AliasLoader(ALIASES[name]))
    if name in PACKAGES or (name == "test" and not self._found_elsewhere(name, path)):
      return importlib.machinery.ModuleSpec(name, _EmptyPackageLoader(), is_package=True)
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

def install():
  _default_nvrtc()
  if not any(isinstance(f, MockGPUFinder) for f in sys.meta_path): sys.meta_path.insert(0, MockGPUFinder())
