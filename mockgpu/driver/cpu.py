"""DEV=MOCK+CPU: tinygrad's CPU device with its kernels compiled for arm64 and run under unicorn (mockgpu.emulators.arm64).

The seam. tinygrad 0.14.0's CPU device has no MOCK interface (Target.interface is parsed, CPUDevice ignores it). When DEV
names MOCK+CPU, mockgpu._finder runs install() right after tinygrad executes tinygrad.runtime.ops_cpu (first imported
when a CPU device opens, never by `import tinygrad`), and install() rebinds exactly one module attribute:
`ops_cpu.CPUDevice`, to a subclass (MockCPUDevice) that Device.get_class finds by name. The subclass
- takes the arch `arm64,<cpu>` (MOCKGPU_CPU_MODEL, default cortex-a72) in place of the host's `x86_64,native`; DEV's own
  arch field still wins (Target.replacedefault), so DEV=MOCK+CPU:LLVM:arm64,apple-m1 is explicit;
- sets runtime_t, the Program class Compiled.runtime() instantiates, to ArmProgram, which loads the object with
  tinygrad's own jit_loader and runs it under unicorn once per core_id, as CPUProgram does;
- refuses, each with its reason: an x86 arch, HCQ2=1, and the X86 and LVP renderers.
Device.DEFAULT stays "CPU". The seam is checked against tinygrad's version and the names it relies on (check_seam;
tests/emulators/test_cpu_lane.py has the contract test).
"""
from __future__ import annotations
import inspect, os, time
from mockgpu import config, events
from mockgpu.errors import MockGPUError, Unmodelled

from mockgpu import log

TINYGRAD_VERSION = "0.14.0"
CPU_MODELS = config.CPU_MODELS
DEFAULT_CPU_MODEL = CPU_MODELS[0]

class CPULaneRefused(Unmodelled):
  """A DEV=MOCK+CPU configuration the arm64 lane does not run: names it and says why."""

class SeamMismatch(MockGPUError):
  """tinygrad's ops_cpu is not the one the MOCK+CPU seam was written for (another version, a renamed class or method)."""

def cpu_model() -> str:
  try: return config.setting("MOCKGPU_CPU_MODEL")
  except config.SettingError:
    model = config.env("MOCKGPU_CPU_MODEL", "")
    raise CPULaneRefused(f"MOCKGPU_CPU_MODEL={model}: the arm64 lane runs {', '.join(CPU_MODELS)} (the cores checked under unicorn)") from None

def refusal(target, hcq2:bool) -> str|None:
  """Why the lane does not run this target (tinygrad's Target for CPU), or None."""
  if hcq2: return ("HCQ2=1: tinygrad's HCQ2 CPU queues run a native worker thread that calls the host's sem_wait and jumps "
                   "to kernel addresses as host code; the arm64 lane runs kernels only through Program calls")
  if target.renderer == "X86": return ("the X86 renderer emits VEX-encoded AVX, which unicorn 2.1.4 (QEMU 5.0) runs as two-operand "
                                       "SSE or refuses: x86 kernels would be silently wrong, so the lane runs arm64 only")
  if target.renderer == "LVP": return "the LVP renderer is Mesa's lavapipe JIT on the host: it emits no arm64 code to emulate"
  if target.arch and not target.arch.startswith("arm64"):
    return (f"arch {target.arch.split(',')[0]}: the lane runs arm64 kernels only (unicorn's x86 cannot run AVX, AVX2, FMA or F16C, "
            "so x86 kernels would be silently wrong); use DEV=CPU for native x86")
  if target.arch and len(parts:=target.arch.split(",")) >= 2 and parts[1] == "native":
    return "arch arm64,native would give LLVM the host's CPU name and features; name an arm64 CPU (arm64,cortex-a72)"
  return None

# *** the program ***

class ArmProgram:
  """tinygrad's Program contract (CPUProgram's signature): load the arm64 object, run it once per core_id."""
  def __init__(self, dev, obj):
    from tinygrad.runtime.support.elf import jit_loader, elf_loader
    from mockgpu.emulators.arm64 import machine as mm, lint
    self.dev, self.name, self.signature = dev, obj.name, obj.signature
    self.runtimevars = {name:slot for name, slot, *_ in obj.signature if name == 'core_id'}
    if obj.lib[:4] != b"\x7fELF": raise CPULaneRefused(f"kernel {obj.name}: not an ELF object (a flat binary is the X86 renderer's)")
    _, sections, _ = elf_loader(obj.lib, link_libs=[_NoLink()])
    lint.check(obj.name, [(s.header.sh_addr, bytes(s.content)) for s in sections if s.header.sh_flags & 0x4 and len(s.content)])  # SHF_EXECINSTR
    self.machine = mm.machine(dev.cpu)
    self.prog = self.machine.load(obj.name, lambda base: jit_loader(obj.lib, base=base, link_libs=[mm.StubTable(self.machine, obj.name)]))
    self.addr = self.prog.base

  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False, timeout=None):
    from mockgpu.emulators.arm64.machine import Arg
    st = time.perf_counter()
    args = [*[int(b.va_addr) for b in bufs], *vals]
    if len(args) > 63: raise Unmodelled(f"kernel {self.name}: {len(args)} arguments; tinygrad's CPU programs take at most 63")
    spans = [Arg(f"data{i}", int(b.va_addr), int(b.size)) for i, b in enumerate(bufs)]
    # an entered debug session (mockgpu/debug/cpu_target.py) runs the calls it debugs
    if events.intercepted("cpu_call", self, args, spans, global_size[0]): return time.perf_counter() - st if wait else None
    for tid in range(global_size[0]):
      if 'core_id' in self.runtimevars: args[self.runtimevars['core_id']] = tid
      self.machine.call(self.prog, args, spans, tid)
    return time.perf_counter() - st if wait else None

class _NoLink:
  """link_libs while reading the sections for the lints: every symbol resolves to 0 (relocation is jit_loader's job)."""
  def __getattr__(self, sym):
    import ctypes
    return ctypes.c_void_p(1)

# *** the seam ***

def check_seam(ops_cpu):
  """What install() relies on in tinygrad: its version, CPUDevice (a Compiled whose arch and runtime_t are attributes
  set in __init__), CPUProgram's call signature."""
  import tinygrad
  from importlib.metadata import version
  problems = []
  if (v:=version("tinygrad")) != TINYGRAD_VERSION: problems.append(f"tinygrad is {v}, the seam was written for {TINYGRAD_VERSION}")
  dev = getattr(ops_cpu, "CPUDevice", None)
  if getattr(dev, "_mockgpu_lane", False): dev = dev.__mro__[1]  # already installed: check tinygrad's own class
  if not inspect.isclass(dev): problems.append("tinygrad.runtime.ops_cpu has no class CPUDevice")
  elif "arch" in vars(dev) or "runtime_t" in vars(dev):
    problems.append("CPUDevice defines arch or runtime_t itself (the seam overrides the instance attributes Compiled.__init__ sets)")
  want = ["self", "bufs", "global_size", "local_size", "vals", "wait", "timeout"]
  if (prog:=getattr(ops_cpu, "CPUProgram", None)) is None or list(inspect.signature(prog.__call__).parameters) != want:
    problems.append(f"CPUProgram.__call__ is not ({', '.join(want)})")
  if problems: raise SeamMismatch(f"DEV=MOCK+CPU cannot hook {tinygrad.__file__}: " + "; ".join(problems))

def make_device_class(ops_cpu):
  base = ops_cpu.CPUDevice

  class MockCPUDevice(base):
    """tinygrad's CPUDevice with arm64 kernels run under unicorn (see the module docstring)."""
    _mockgpu_lane = True
    @property
    def arch(self): return self._mock_arch
    @arch.setter
    def arch(self, host_arch):  # Compiled.__init__ sets the host's "x86_64,native": the lane's arm64 core replaces it
      self._mock_arch = f"arm64,{cpu_model()}"

    def __init__(self, device:str=""):
      from tinygrad.helpers import DEV, getenv
      if (why:=refusal(DEV.target("CPU"), bool(getenv("HCQ2")))) is not None: raise CPULaneRefused(f"DEV=MOCK+CPU refused: {why}")
      _require_extra()
      super().__init__(device)
      self.cpu = self.renderer.target.arch.split(",")[1]
      self.runtime_t = ArmProgram
      log.info("DEV=MOCK+CPU: %s kernels for %s run under unicorn", self.renderer.target.renderer, self.renderer.target.arch)

  MockCPUDevice.__qualname__ = MockCPUDevice.__name__ = "MockCPUDevice"
  return MockCPUDevice

def _require_extra():
  try:
    import unicorn, capstone  # noqa: F401
  except ImportError as e:
    raise CPULaneRefused(f"DEV=MOCK+CPU needs mockgpu's optional extra `cpu` (pip install 'mockgpu[cpu]': unicorn, capstone): {e}") from None

def install(ops_cpu):
  """The post-import hook on tinygrad.runtime.ops_cpu: rebind ops_cpu.CPUDevice (the only change to tinygrad)."""
  check_seam(ops_cpu)
  ops_cpu.CPUDevice = make_device_class(ops_cpu)
  bind_objdump()

def bind_objdump() -> str|None:
  """DEBUG>=7: tinygrad disassembles CLANG and LLVM objects with `objdump -d` from PATH (helpers.cpu_objdump); Debian's
  GNU objdump cannot read aarch64 ('can't disassemble for architecture UNKNOWN!'). A directory holding `objdump`, a link
  to the newest multi-target llvm-objdump, goes first on PATH."""
  if int(os.environ.get("DEBUG", "0") or 0) < 7: return None
  import tempfile
  from mockgpu.compiler.toolchain import newest_llvm_objdump
  if (real:=newest_llvm_objdump()) is None:
    log.warning("DEBUG=7 on DEV=MOCK+CPU: no llvm-objdump found, and GNU objdump cannot disassemble arm64: install llvm-22")
    return None
  shim = os.path.join(tempfile.gettempdir(), f"mockgpu-cpu-objdump-{os.getuid()}")
  os.makedirs(shim, exist_ok=True)
  link = os.path.join(shim, "objdump")
  if os.path.realpath(link) != os.path.realpath(real):
    os.symlink(real, tmp:=f"{link}.{os.getpid()}")
    os.replace(tmp, link)
  if shim not in os.environ.get("PATH", "").split(os.pathsep): os.environ["PATH"] = shim + os.pathsep + os.environ.get("PATH", "")
  return real
