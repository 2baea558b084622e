"""The PTX executor's errors name their culprit: unsupported instructions and modifiers (with the PTX line), page
faults (with the instruction), runaway kernels, malformed PTX and bad launches."""
import numpy as np
import pytest
from mockgpu.errors import GPUPageFault, UnsupportedInstruction, InstructionBudgetExceeded
from mockgpu.emulators.ptx import load_module, launch
from support.ptx_isa import kernel, run
# the tests that launch run on the numpy and the native path (the ptx_path fixture); malformed PTX raises in load_module
# and a bad launch in launch() before either path is chosen, so those are not run per path
per_path = pytest.mark.usefixtures("ptx_path")

def test_unsupported_instruction_named_with_its_line():
  src = kernel("mov.u32 %r0, %tid.x;\nsuld.b.1d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r0}];", ".param .u64 out")
  line = src.splitlines().index(next(l for l in src.splitlines() if l.startswith("suld"))) + 1
  with pytest.raises(UnsupportedInstruction, match=rf"PTX line {line}: instruction suld not supported: suld\.b\.1d"):
    load_module(src)

def test_unsupported_modifier_named():
  with pytest.raises(UnsupportedInstruction, match=r"modifier \.xorsign|\.xorsign\.abs"):
    load_module(kernel("max.xorsign.abs.f32 %f1, %f2, %f3;", ".param .u64 out"))
  with pytest.raises(UnsupportedInstruction, match=r"modifier \.bogus of add"):
    load_module(kernel("add.bogus.u32 %r1, %r2, %r3;", ".param .u64 out"))

def test_undeclared_register_and_bad_syntax():
  with pytest.raises(UnsupportedInstruction, match=r"undeclared register %nope"):
    load_module(kernel("mov.u32 %nope, 1;", ".param .u64 out"))
  with pytest.raises(UnsupportedInstruction, match=r"statement without ';'"):
    load_module(kernel("mov.u32 %r1, 1", ".param .u64 out").replace("\nret;", ""))

@per_path
def test_out_of_bounds_store_is_a_page_fault():
  out = np.zeros(32, np.uint32)
  body = """
mov.u32 %r0, %tid.x;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 8;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r0;"""
  with pytest.raises(GPUPageFault, match=r"write of 4 bytes at 0x[0-9a-f]+ .*PTX line \d+: st\.global\.u32 \[%rd3\], %r0") as e:
    run(kernel(body, ".param .u64 out"), [out])
  assert e.value.write and e.value.va >= out.ctypes.data + out.nbytes

@per_path
def test_out_of_bounds_load_and_shared_fault():
  out = np.zeros(4, np.uint32)
  body = "ld.param.u64 %rd1, [out];\nld.global.u32 %r1, [%rd1+4096];\nst.global.u32 [%rd1], %r1;"
  with pytest.raises(GPUPageFault, match=r"read of 4 bytes .*ld\.global\.u32"):
    run(kernel(body, ".param .u64 out"), [out])
  body = ".shared .align 4 .b8 sm[16];\nmov.u32 %r0, %tid.x;\nmul.lo.u32 %r1, %r0, 4;\nst.shared.u32 [%r1], %r0;"
  with pytest.raises(GPUPageFault, match=r"shared window of 16 bytes"):
    run(kernel(body, ".param .u64 out"), [out])

@per_path
def test_budget_stops_an_endless_loop(monkeypatch):
  monkeypatch.setenv("MOCKGPU_BUDGET", "5000")
  src = kernel("$L_spin:\nadd.u32 %r1, %r1, 1;\nbra.uni $L_spin;", ".param .u64 out")
  with pytest.raises(InstructionBudgetExceeded, match=r"ran past 5000 warp-instructions"):
    run(src, [np.zeros(1, np.uint32)])

def test_bad_launches(monkeypatch):
  from mockgpu.errors import LaunchRefused
  monkeypatch.setenv("MOCKGPU_NV_MODEL", "sm_89")
  monkeypatch.delenv("DEV", raising=False)
  src = kernel("mov.u32 %r0, %tid.x;", ".param .u64 out, .param .u32 n")
  k = load_module(src).kernel("k")
  with pytest.raises(ValueError, match=r"takes 12 bytes of parameters, got 4"):
    launch(None, k, (1, 1, 1), (1, 1, 1), b"\0" * 4)
  with pytest.raises(ValueError, match=r"bad launch dimensions"):
    launch(None, k, (0, 1, 1), (1, 1, 1), b"\0" * 12)
  with pytest.raises(KeyError, match=r"no entry 'nope' \(entries: k\)"):
    load_module(src).kernel("nope")
  with pytest.raises(LaunchRefused, match=r"\(1056 threads\) exceeds the hardware's \(1024, 1024, 64\) and 1024 threads \(sm_89\)"):
    launch(None, k, (1, 1, 1), (32, 33, 1), b"\0" * 12)
  limited = load_module(src.replace(".visible .entry k(.param .u64 out, .param .u32 n)\n",
                                    ".visible .entry k(.param .u64 out, .param .u32 n)\n.maxntid 64, 1, 1\n")).kernel("k")
  with pytest.raises(LaunchRefused, match=r"\(128 threads\) exceeds its .maxntid/.reqntid of 64"):
    launch(None, limited, (1, 1, 1), (128, 1, 1), b"\0" * 12)
  with pytest.raises(LaunchRefused, match=r"shared memory exceed the \d+ bytes of a CTA \(sm_89\)"):
    launch(None, k, (1, 1, 1), (32, 1, 1), b"\0" * 12, dynamic_shared=200000)

@per_path
def test_trap():
  from mockgpu.errors import MockGPUError
  with pytest.raises(MockGPUError, match=r"PTX line \d+: trap"):
    run(kernel("trap;", ".param .u64 out"), [np.zeros(1, np.uint32)])

@per_path
def test_fused_loads_fault_as_the_load_that_misses():
  """Loads read by one prefetch (compiler/ptx/backends/numpy_fuse.py) still fault one by one: the first that leaves the allocation."""
  x = np.zeros(256 * 4 - 1, np.float32)   # the last lane's [%rd5+12] is one element past the end
  body = """
mov.u32 %r0, %tid.x;
mul.wide.u32 %rd0, %r0, 16;
ld.param.u64 %rd1, [in0];
add.s64 %rd5, %rd1, %rd0;
ld.global.f32 %f0, [%rd5];
ld.global.v2.f32 {%f1, %f2}, [%rd5+4];
ld.global.f32 %f3, [%rd5+12];
add.f32 %f4, %f0, %f3;
st.global.f32 [%rd5], %f4;"""
  src = kernel(body, ".param .u64 in0")
  with pytest.raises(GPUPageFault, match=r"read of 4 bytes .*ld\.global\.f32 %f3, \[%rd5\+12\]") as e:
    run(src, [x], block=(256, 1, 1))
  assert e.value.va == x.ctypes.data + x.nbytes
  with pytest.raises(GPUPageFault, match=r"read of 4 bytes .*ld\.global\.f32 %f0, \[%rd5\]"):
    run(src.replace("add.s64 %rd5, %rd1, %rd0;", "add.s64 %rd5, %rd1, %rd0;\nadd.s64 %rd5, %rd5, 65536;"), [x], block=(256, 1, 1))
  assert not x.any()

@per_path
def test_grouped_loads_fault_as_the_load_that_misses():
  """Loads read by one ld_group (far offsets off one base) still fault one by one: the first in program order that misses."""
  x = np.zeros(1024 + 256 - 1, np.float32)   # the last lane's [%rd5+4096] is one element past the end
  body = """
mov.u32 %r0, %tid.x;
mul.wide.u32 %rd0, %r0, 4;
ld.param.u64 %rd1, [in0];
add.s64 %rd5, %rd1, %rd0;
ld.global.f32 %f0, [%rd5];
ld.global.f32 %f1, [%rd5+4096];
ld.global.f32 %f2, [%rd5+2048];
add.f32 %f3, %f0, %f1;
add.f32 %f3, %f3, %f2;
st.global.f32 [%rd5], %f3;"""
  src = kernel(body, ".param .u64 in0")
  with pytest.raises(GPUPageFault, match=r"read of 4 bytes .*ld\.global\.f32 %f1, \[%rd5\+4096\]") as e:
    run(src, [x], block=(256, 1, 1))
  assert e.value.va == x.ctypes.data + x.nbytes
  assert not x.any()

def test_an_operand_check_that_passed_does_not_pass_another_register_type():
  """validity.check_operands keeps the shapes that passed (opcode, modifiers, operand classes and register types): the
  same instruction with a .b64 register where .f32 is needed is still rejected, naming the register."""
  from mockgpu.compiler.ptx.syntax import InvalidPTX
  load_module(kernel("add.f32 %f1, %f2, %f3;\nadd.f32 %f4, %f1, 0f3F800000;", ".param .u64 out"))
  with pytest.raises(InvalidPTX, match=r"%rd2 is a \.b64 register where the instruction needs \.f32"):
    load_module(kernel("add.f32 %f1, %rd2, %f3;", ".param .u64 out"))
  load_module(kernel("add.f32 %f1, %f2, %f3;", ".param .u64 in0"))   # the passing shape again
