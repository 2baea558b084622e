"""A tinygrad reduction kernel with two of its instructions swapped (issue 28): its shared-memory reduction loop with
the address computation moved past the load, or its predicate/guard moved, runs the same on the numpy path, the C path
and the reference stepper (the same memory afterwards, or the same named error).

The numpy path raised EmulatorBug IndexError ("boolean index did not match indexed array along axis 0; size of axis is
1 but size of corresponding boolean axis is 16") at the guarded store: a swap leaves the loop's ld.shared at a uniform,
misaligned offset, whose byte-wise read returned a 1-element array instead of one value, which the store under the
`lidx0 == 0` guard could not index with the 16-lane mask (compiler/ptx/backends/numpy_runtime.py ld_space).
"""
import re
import numpy as np
import pytest
from support.ptx_harness import run
from tinygrad import Tensor
from mockgpu import system
from mockgpu.errors import MockGPUError, EmulatorBug
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, launch, Launch, run_stepped

ROWS = COLS = 16

def reduction_ptx() -> str:
  """tinygrad's PTX for x.sum(1) over a 16x16 float tensor (r_16_16: 16 CTAs of 16 threads, a shared-memory loop)."""
  x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
  sources:list = []
  got = run(Tensor(x).realize().sum(1), "ptx", sources=sources)
  np.testing.assert_array_equal(got, x.sum(1))
  (text,) = [s for s in sources if ".entry r_" in s]
  return text

def swapped(text:str, a:str, b:str) -> str:
  """text with the line starting with opcode a and the next line starting with opcode b swapped."""
  lines = text.split("\n")
  for i in range(len(lines) - 1):
    if lines[i].strip().startswith(a) and lines[i + 1].strip().startswith(b):
      lines[i], lines[i + 1] = lines[i + 1], lines[i]
      return "\n".join(lines)
  raise AssertionError(f"no {a} followed by {b} in the kernel")

# the swaps: the loop's address computation past its load (the class the fuzzer found), and the predicates and guards
SWAPS = [("cvt.s64.s32\t%bidx_u64_2", "mad.lo.s64\t%bidx_u64_2"), ("mad.lo.s64\t%bidx_u64_2", "ld.shared"),
         ("setp.lt.s32", "@%pred"), ("setp.eq.s32", "@!%alu_pred"), ("add.s32\t\t%ridx", "setp.lt.s32")]

def _run(text:str, path:str, ctas:int=ROWS):
  """(the output buffer, or the error's type) of the kernel over `ctas` CTAs on one path, from fresh memory. One CTA
  is what found the bug: the numpy path's batch of one CTA has uniform shared addresses (several CTAs: one per CTA)."""
  x = np.arange(ROWS * COLS, dtype=np.float32)
  out = np.full(ROWS, -1, np.float32)
  mem = AddressSpace("swapped")
  for arr in (x, out): mem.map(arr.ctypes.data, arr.nbytes)
  entry = re.search(r"\.entry\s+(\w+)", text).group(1)
  k = load_module(text).kernel(entry)
  params = int(out.ctypes.data).to_bytes(8, "little") + int(x.ctypes.data).to_bytes(8, "little")
  try:
    if path == "stepper": run_stepped(Launch(mem, k, (ctas, 1, 1), (COLS, 1, 1), params))
    else: launch(mem, k, (ctas, 1, 1), (COLS, 1, 1), params)
  except EmulatorBug: raise
  except MockGPUError as e: return type(e).__name__
  return out.tobytes()

@pytest.mark.parametrize("ctas", [1, ROWS])
@pytest.mark.parametrize("a, b", SWAPS)
def test_swapped_reduction_same_on_numpy_c_and_stepper(monkeypatch, a, b, ctas):
  monkeypatch.setenv("MOCKGPU_REPLAY_DIR", "off")
  monkeypatch.setenv("MOCKGPU_BUDGET", "200000")
  text = swapped(reduction_ptx(), a, b)
  got = {}
  for path in ("numpy", "C", "stepper"):
    monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "1" if path == "C" else "0")
    before = system.stats["ptx.native_launches"]
    got[path] = _run(text, path, ctas)
    assert (system.stats["ptx.native_launches"] > before) == (path == "C")  # each path ran where it says
  assert got["numpy"] == got["C"] == got["stepper"], {p: v if isinstance(v, str) else np.frombuffer(v, np.float32) for p, v in got.items()}
  # known-good op on the same executor: the unswapped kernel sums the rows
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
  np.testing.assert_array_equal(np.frombuffer(_run(reduction_ptx(), "numpy"), np.float32),
                                np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS).sum(1))

def test_uniform_misaligned_shared_load_is_one_value(monkeypatch):
  """The root cause alone: a uniform ld.shared at a misaligned offset, then a store under a lane guard."""
  from support.ptx_stepper import _launch
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
  src = """.version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<4>;
  .shared .align 16 .b8 buf[64];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0x3f8000ff;
  st.shared.u32 [buf+4], %r2;
  bar.sync 0;
  ld.shared.f32 %f1, [1];
  setp.eq.u32 %p1, %r1, 3;
  ld.param.u64 %rd1, [out];
  @!%p1 bra DONE;
  st.global.f32 [%rd1], %f1;
DONE:
  ret;
}"""
  out = np.zeros(4, np.float32)
  for path in ("numpy", "stepper"):
    out[:] = 0
    l = _launch(src, [out], block=(16, 1, 1))
    if path == "numpy": launch(l.mem, l.kernel, l.grid, l.block, l.params)
    else: run_stepped(l)
    assert out[0].tobytes() == bytes([0, 0, 0, 0xff]), path  # bytes 1..4 of the window: three zeros, then buf[4]
