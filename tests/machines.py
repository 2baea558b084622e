"""The mock machine of an in-process driver test: a system.System with the KFD and NVIDIA drivers installed, as the
bridge (mockgpu/bridge.py, the composition root) builds tinygrad's. A test's fixture resets it
(`monkeypatch.setattr(machines, "current", None)`); machine() builds a fresh one at its first use."""
from mockgpu.system import System

current:System|None = None

def build() -> System:
  """A new machine with every driver installed."""
  from mockgpu.driver import kfd, nvidia
  m = System()
  for driver in (kfd, nvidia): driver.install(m)
  return m

def machine() -> System:
  global current
  if current is None: current = build()
  return current

def stand_in(monkeypatch, rdna):
  """The AMD GPUs of the test's machine run their dispatches on `rdna` (an object with Dispatch and run_dispatch) for
  the rest of the test: each device holds the executor it was built with."""
  for gpu in machine().devices["amd"]: monkeypatch.setattr(gpu, "executor", rdna)
