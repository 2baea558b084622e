"""The arm64 CPU lane (DEV=MOCK+CPU, mockgpu/driver/cpu.py, mockgpu/emulators/arm64): the seam's contract, named faults,
external-call stubs, stack-passed arguments, core_id, the lints, the refusals, DEBUG=7, and the arm64 conversions that
differ from x86 (checked against the numpy model in mockgpu/emulators/arm64/semantics.py).

Each negative case runs in a child process (tinygrad binds the lane when ops_cpu is imported) and is followed, in the
same process, by a known-good op, so a fault or a refusal leaves the lane usable."""
import json, types
import numpy as np
import pytest
from conftest import run_tinygrad
from mockgpu.emulators.arm64.semantics import float_to_int

GOOD_OP = """
from tinygrad import Tensor
assert (Tensor([1.0, 2.0, 3.0]) * 2 + 1).tolist() == [3.0, 5.0, 7.0], "the known-good op after the negative case failed"
print("GOOD_OP_OK")
"""

# a C kernel in tinygrad's own form, compiled by the device's compiler and loaded by its runtime (the lane's ArmProgram)
LOAD_C = """
from tinygrad import Device, dtypes
from tinygrad.device import TinyELF
dev = Device["CPU"]
def load(name, src, nargs=1):
  lib = dev.compiler.compile(src)
  sig = tuple((f"data{i}", i, dtypes.uint64, ()) for i in range(nargs))
  return dev.runtime(TinyELF(lib, name, dev.renderer.target, sig))
"""

def child(code:str, dev:str="MOCK+CPU", env:dict|None=None, good:bool=True):
  p = run_tinygrad(dev, code + (GOOD_OP if good else ""), env=env, timeout=300)
  if good: assert "GOOD_OP_OK" in p.stdout, p.stdout[-2000:]
  return p

def result(p) -> dict: return json.loads(next(l for l in p.stdout.splitlines() if l.startswith("{")))

def test_seam_contract():
  """The one rebound attribute: ops_cpu.CPUDevice is the lane's subclass of tinygrad's class, found by Device, with the
  arm64 arch and ArmProgram; Device.DEFAULT stays CPU; CPUProgram and the rest of ops_cpu are tinygrad's."""
  p = child("""
import json, inspect, tinygrad.runtime.ops_cpu as ops_cpu
from tinygrad import Device
from mockgpu.driver.cpu import ArmProgram, check_seam
d = Device["CPU"]
base = type(d).__mro__[1]
check_seam(ops_cpu)
print(json.dumps({"cls": type(d).__name__, "bound": ops_cpu.CPUDevice is type(d), "base": f"{base.__module__}.{base.__qualname__}",
  "default": Device.DEFAULT, "runtime": d.runtime_t is ArmProgram, "arch": d.renderer.target.arch,
  "program": ops_cpu.CPUProgram.__module__, "renderer": d.renderer.target.renderer}))
""")
  r = result(p)
  assert r == {"cls": "MockCPUDevice", "bound": True, "base": "tinygrad.runtime.ops_cpu.CPUDevice", "default": "CPU", "runtime": True,
               "arch": "arm64,cortex-a72", "program": "tinygrad.runtime.ops_cpu", "renderer": ""}

def test_seam_mismatch_is_named():
  """check_seam refuses an ops_cpu whose CPUProgram call signature is not the one the lane implements."""
  from mockgpu.driver.cpu import check_seam, SeamMismatch
  class CPUProgram:
    def __call__(self, *bufs, global_size=(1, 1, 1)): pass
  class CPUDevice: pass
  with pytest.raises(SeamMismatch, match=r"CPUProgram.__call__ is not"):
    check_seam(types.SimpleNamespace(CPUDevice=CPUDevice, CPUProgram=CPUProgram))

def test_cpu_model_setting_and_explicit_arch():
  code = "from tinygrad import Device\nprint('ARCH', Device['CPU'].renderer.target.arch)\n"
  assert "ARCH arm64,apple-m1" in child(code, env={"MOCKGPU_CPU_MODEL": "apple-m1"}).stdout
  assert "ARCH arm64,apple-m1" in child(code, dev="MOCK+CPU:LLVM:arm64,apple-m1").stdout

# the elementwise kernel tinygrad compiled for 4096-element buffers, called with n-float ones: the child's prologue up to
# the `except CPUKernelFault as e:` block that reports (arg: the buffer the fault names)
def small_buffer_call(n:int) -> str:
  return f"""
import json
from tinygrad import Tensor, dtypes
from tinygrad.device import Buffer
import tinygrad.engine.realize as R
from mockgpu.emulators.arm64.machine import CPUKernelFault
(Tensor.ones(4096).contiguous() + 1).realize()
prog = next(v for v in R.runtime_cache.values() if v.name.startswith("E_"))
small = [Buffer("CPU", {n}, dtypes.float32).ensure_allocated()._buf for _ in range(len(prog.signature))]
try: prog(*small, global_size=(1, 1, 1), vals=())
except CPUKernelFault as e:
  arg = small[int(e.argument[4:])]
"""

def test_oob_read_is_a_named_fault():
  """A kernel compiled for 4096-element buffers, called with 16-float ones: the read past data1's page stops it with the
  kernel and offset, the instruction, the argument and the distance past its end."""
  p = child(small_buffer_call(16) + """  print(json.dumps({"msg": str(e), "name": prog.name, "kernel": e.kernel, "arg": e.argument, "write": e.write,
                    "distance": e.distance, "expected": e.address - (arg.va_addr + arg.size), "page": e.address % 4096}))
""")
  r = result(p)
  assert r["kernel"] == r["name"] and r["msg"].startswith(f"arm64 kernel {r['name']}+0x"), r
  assert r["distance"] == r["expected"] > 0 and r["page"] == 0, r
  kind = "write" if r["write"] else "read"
  assert f": {kind} of " in r["msg"] and f"lies {r['distance']} bytes past the end of {r['arg']} (a 64-byte buffer" in r["msg"], r
  assert any(m in r["msg"] for m in ("ldr", "str", "ld1", "st1", "ldp", "stp")), r["msg"]  # capstone's text of the access

def test_sanitize_catches_a_read_inside_the_last_page():
  """MOCKGPU_SANITIZE=memory: the same kernel on 10-float buffers faults at data1's exact end, inside its page."""
  p = child(small_buffer_call(10) + """  print(json.dumps({"msg": str(e), "end": arg.va_addr + arg.size, "addr": e.address, "distance": e.distance}))
""", env={"MOCKGPU_SANITIZE": "memory"})
  r = result(p)
  # the first access to reach past the end (QEMU splits a 16- or 32-byte vector access into 8-byte ones): at most 8 bytes past it
  assert r["end"] - 16 < r["addr"] <= r["end"] and 0 <= r["distance"] <= 8, r
  assert "MOCKGPU_SANITIZE=memory" in r["msg"] and "a 40-byte buffer" in r["msg"], r

def test_memset_stub_and_unknown_symbol():
  """memset (a far call: jit_loader's CALL26 trampoline to the stub page) runs the stub; a call to an undefined function
  is refused when the kernel loads, naming the symbol."""
  p = child(LOAD_C + """
import ctypes
from tinygrad.device import Buffer
from mockgpu.emulators.arm64.machine import UnknownExternalSymbol
# the store after the call keeps it a call (bl: CALL26); a tail call (b: JUMP26) is a relocation jit_loader does not do
prog = load("fill", "void fill(unsigned char* restrict data0) { __builtin_memset(data0 + 3, 0x5a, 3000); data0[4000] = 9; }")
b = Buffer("CPU", 4096, dtypes.uint8).ensure_allocated()
prog(b._buf)
got = bytes(b.as_memoryview())
print("MEMSET", got[:3] == bytes(3), got[3:3003] == b"\\x5a" * 3000, got[3003:4000] == bytes(997), got[4000] == 9)
try: load("calls", "extern float mystery_helper(float); void calls(float* data0) { data0[0] = mystery_helper(data0[1]); }")
except UnknownExternalSymbol as e: print("UNKNOWN", e)
""")
  assert "MEMSET True True True True" in p.stdout, p.stdout[-2000:]
  assert "UNKNOWN arm64 kernel calls calls external symbol 'mystery_helper'" in p.stdout, p.stdout[-2000:]

@pytest.mark.parametrize("dev", ["MOCK+CPU", "MOCK+CPU:LLVM"])
def test_stack_arguments_and_core_id(dev):
  """A kernel of 11 buffers (x0-x7 and three on the stack, AAPCS64) and a threaded one (core_id), against numpy."""
  p = child("""
import json, numpy as np
from tinygrad import Tensor
import tinygrad.engine.realize as R
xs = [np.random.default_rng(i).random(37).astype(np.float32) for i in range(10)]
s = Tensor(xs[0])
for x in xs[1:]: s = s + Tensor(x) * 2
got = s.numpy()
want = xs[0] + sum(x * 2 for x in xs[1:])
big = np.random.default_rng(99).random((512, 1024)).astype(np.float32)
red = Tensor(big).sum(axis=1).numpy()
progs = list(R.runtime_cache.values())
print(json.dumps({"err": float(np.abs(got - want).max()), "nargs": max(len(p.signature) for p in progs),
                  "red": float(np.abs(red - big.sum(axis=1)).max()), "threaded": any(p.runtimevars for p in progs)}))
""", dev=dev, env={"NUM_CPU_THREADS": "4"})
  r = result(p)
  assert r["nargs"] >= 11 and r["err"] < 1e-5, r
  assert r["threaded"] and r["red"] < 1e-3, r

def test_x18_and_system_instruction_lints():
  p = child(LOAD_C + """
from mockgpu.emulators.arm64.lint import KernelLint
for name, body in [("x18", 'unsigned long v; __asm__ volatile("mov %0, x18" : "=r"(v)); data0[0] = (unsigned char)v;'),
                   ("svc", '__asm__ volatile("svc #0"); data0[0] = 1;')]:
  try: load(name, "void " + name + "(unsigned char* data0) { " + body + " }")
  except KernelLint as e: print("LINT", e)
""")
  assert "LINT arm64 kernel x18 refused at load" in p.stdout and "uses x18, the platform register" in p.stdout, p.stdout[-2000:]
  assert "LINT arm64 kernel svc refused at load" in p.stdout and "svc #0 (system instruction)" in p.stdout, p.stdout[-2000:]

@pytest.mark.parametrize("dev,why", [
  ("MOCK+CPU:X86", "the X86 renderer emits VEX-encoded AVX"),
  ("MOCK+CPU:LVP", "the LVP renderer is Mesa's lavapipe JIT"),
  ("MOCK+CPU:CLANG:x86_64,znver2", "arch x86_64: the lane runs arm64 kernels only"),
  ("MOCK+CPU:LLVM:arm64,native", "arch arm64,native would give LLVM the host's CPU name"),
])
def test_refusals(dev, why):
  """Each refused configuration names its reason; the lane then runs a known-good op (DEV switched in-process)."""
  p = child("""
from tinygrad import Device
from tinygrad.helpers import DEV
from mockgpu.driver.cpu import CPULaneRefused
try: Device["CPU"]
except CPULaneRefused as e: print("REFUSED", e)
DEV.value = "MOCK+CPU"
""", dev=dev)
  assert f"REFUSED DEV=MOCK+CPU refused: {why}" in p.stdout, p.stdout[-2000:]

def test_hcq2_refused():
  p = child("""
from tinygrad import Device
from mockgpu.driver.cpu import CPULaneRefused
try: Device["CPU"]
except CPULaneRefused as e: print("REFUSED", e)
""", env={"HCQ2": "1"}, good=False)
  assert "REFUSED DEV=MOCK+CPU refused: HCQ2=1: tinygrad's HCQ2 CPU queues run a native worker thread" in p.stdout, p.stdout[-2000:]
  child("")  # HCQ2 is read once per process (tinygrad's getenv caches it): the known-good op runs in a fresh one

def test_debug7_disassembles_arm64():
  """DEBUG=7: tinygrad's `objdump -d` is the multi-target llvm-objdump the lane puts first on PATH (GNU objdump cannot
  read aarch64)."""
  from mockgpu.compiler.toolchain import newest_llvm_objdump
  if newest_llvm_objdump() is None: pytest.fail("no llvm-objdump: scripts/install.sh installs llvm-22")
  p = child("", env={"DEBUG": "7"})
  assert "elf64-littleaarch64" in p.stdout and "can't disassemble" not in p.stdout, p.stdout[-3000:]
  assert any(f"\t{m}\t" in p.stdout or f" {m} " in p.stdout for m in ("fmadd", "fmul", "fadd", "fmov")) and "\tret" in p.stdout, p.stdout[-3000:]

X = [3e9, -3e9, float("nan"), 2.5, -2.5, float("inf"), -float("inf"), 300.0, -300.0, 70000.0, -1.0, 5e19, -5e19]

@pytest.mark.parametrize("dev", ["MOCK+CPU", "MOCK+CPU:LLVM"])
def test_float_to_int_follows_arm64(dev):
  """NaN and out-of-range float->int casts (undefined in C): the lane's results are arm64's (saturating, NaN -> 0,
  semantics.py), which native x86 DEV=CPU does not give (INT_MIN): the difference is real, so it has a model."""
  dts = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
  code = f"""
import json, numpy as np
from tinygrad import Tensor
x = np.array(json.loads({json.dumps(X)!r}), np.float32)
print(json.dumps({{dt: Tensor(x).cast(dt).tolist() for dt in {dts!r}}}))
"""
  got, native = result(child(code, dev=dev)), result(child(code, dev="CPU"))
  x = np.array(X, np.float32)
  for dt in dts: assert got[dt] == float_to_int(x, dt).tolist(), (dt, got[dt])
  assert native["int32"] != got["int32"], "x86 and arm64 agree on NaN/out-of-range casts: the model's premise changed"

def test_debugger_steps_and_reverse_steps_a_cpu_kernel():
  """mockgpu's debugger on the lane: a unit is a core_id; stop at the launch, step, read x0-x30 / v0-v31 and capstone's
  disassembly, reverse-step a store (the buffer's old bytes come back), then finish with the right result."""
  p = child("""
import json, numpy as np
import mockgpu.debug
from mockgpu.debug import view
from tinygrad import Tensor
seen = {}
def at_stop(dbg, stop):
  t = dbg.target
  seen["units"], seen["isa"], seen["disas"] = t.units(), t.isa, view.disassembly(t)
  n = 0
  while not t.done() and "st" not in t.location(): n += dbg.step()   # up to the store
  out = int(t.registers()["x"][0])
  before = t.read_memory(out, 32)
  dbg.step()
  after = t.read_memory(out, 32)
  dbg.reverse_step()
  seen.update(stepped=n, store=t.location(), restored=t.read_memory(out, 32) == before, changed=after != before,
              v=int(t.registers()["v"][5][0]), regs=view.sgprs(t).splitlines()[0])
  dbg.reverse_step(n)
  seen["back_at"] = t.pc()
a = Tensor(np.arange(8, dtype=np.float32)).realize(); b = Tensor(np.full(8, 2, np.float32)).realize()
with mockgpu.debug.session(break_kernel="E_*", on_stop=at_stop):
  got = (a * b + 1).tolist()
seen["got"] = got
print(json.dumps(seen))
""")
  r = result(p)
  assert r["got"] == [2.0 * i + 1 for i in range(8)], r
  assert r["isa"] == "arm64" and r["units"] == [[0, 0]] and "=> 0x0000" in r["disas"] and "ldp" in r["disas"], r
  assert r["stepped"] > 2 and " st" in r["store"] and r["changed"] and r["restored"] and r["back_at"] == 0, r
  assert r["regs"].startswith("x0   0x0000") and "x3" in r["regs"], r

def test_unknown_cpu_model_refused():
  p = child("""
import os
from tinygrad import Device
from mockgpu.driver.cpu import CPULaneRefused
try: Device["CPU"]
except CPULaneRefused as e: print("REFUSED", e)
os.environ["MOCKGPU_CPU_MODEL"] = "cortex-a72"   # read each time the device opens
""", env={"MOCKGPU_CPU_MODEL": "apple-m2"})
  assert "REFUSED MOCKGPU_CPU_MODEL=apple-m2: the arm64 lane runs cortex-a72, apple-m1" in p.stdout, p.stdout[-2000:]

def test_runaway_kernel_stops_at_the_budget():
  """A kernel that never returns (it spins until its buffer holds a value no one writes) stops after MOCKGPU_CPU_TIMEOUT
  seconds with CPUKernelHang naming the kernel, the core_id, the PC inside it and capstone's instruction there."""
  p = child(LOAD_C + """
import json, os, time
from tinygrad.device import Buffer
from mockgpu.emulators.arm64.machine import CPUKernelHang
from mockgpu.errors import InstructionBudgetExceeded
prog = load("spin", "void spin(volatile unsigned* data0) { while (data0[0] != 7u) data0[1]++; }")
b = Buffer("CPU", 1024, dtypes.uint32).ensure_allocated()
st = time.monotonic()
try: prog(b._buf)
except CPUKernelHang as e:
  print(json.dumps({"msg": str(e), "kernel": e.kernel, "offset": e.offset, "seconds": e.seconds, "size": prog.prog.size,
                    "named": isinstance(e, InstructionBudgetExceeded), "count": b.as_memoryview().cast("I")[1],
                    "took": time.monotonic() - st}))
del os.environ["MOCKGPU_CPU_TIMEOUT"]   # read at each call: the known-good op runs under the default
""", env={"MOCKGPU_CPU_TIMEOUT": "0.5"})
  r = result(p)
  assert r["kernel"] == "spin" and r["seconds"] == 0.5 and r["named"] and 0 <= r["offset"] < r["size"], r
  assert r["msg"].startswith("arm64 kernel spin (core_id 0) ran past MOCKGPU_CPU_TIMEOUT=0.5 s without returning"), r
  assert f"stopped at spin+{r['offset']:#x}: " in r["msg"] and ".word" not in r["msg"], r
  assert r["count"] > 1000 and 0.5 <= r["took"] < 30, r  # the loop ran, and was stopped soon after its time

def test_fp8_fnuz_triage_reason():
  """test_diff_api's LANE_TRIAGE entry for MOCK+CPU:LLVM add[fp8e5m2fnuz]: native x86 LLVM (DEV=CPU:LLVM) gives the lane's
  0x00 for 0.0 + 0.0, and x86 clang (DEV=CPU, fp8 emulated through half) gives 0x04 for 0.0 itself: a tinygrad
  difference between renderers, not between arm64 and x86."""
  code = """
import json
from tinygrad import Tensor, dtypes
z = Tensor([0.0, 0.0]).cast(dtypes.fp8e5m2fnuz)
print(json.dumps({"zero": z.bitcast(dtypes.uint8).tolist(), "sum": (z[0] + z[1]).bitcast(dtypes.uint8).item()}))
"""
  lane, x86_llvm, x86_clang = (result(child(code, dev=d, good=d.startswith("MOCK"))) for d in ("MOCK+CPU:LLVM", "CPU:LLVM", "CPU"))
  assert lane == x86_llvm == {"zero": [0, 0], "sum": 0}, (lane, x86_llvm)
  assert x86_clang == {"zero": [4, 4], "sum": 4}, x86_clang  # the clang renderer's half path: the triage entry's premise
