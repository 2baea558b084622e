"""The op suite (tests/ops/opcases.py) on every mock device configuration and every other AMD board mockgpu runs (gfx1201,
gfx942, gfx950; MOCKGPU_TEST_DEVICES=MOCKKFD+AMD:LLVM:gfx942 narrows it to one),
each result compared with DEV=CPU, and every instruction of its kernels (RDNA, PTX) implemented, executed or not
(instruction coverage, mockgpu/coverage.py)."""
import numpy as np
import pytest
from conftest import device_configs, cpu_lane_configs
from opcases import ARM64_LLVM_MODEL, CASES, arm64_llvm_dot, spec_for
from mockgpu import coverage
from mockgpu.config import cpu_lane_reference

def assert_same(got:np.ndarray, want:np.ndarray, spec:dict, what:str):
  assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
  assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
  if spec["exact"]:
    if got.dtype.kind == "f":
      nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
      gb, wb = got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}")
      bad = (gb != wb) & ~nan
    else: bad = got != want
    assert not bad.any(), f"{what}: {int(bad.sum())} of {got.size} elements differ bitwise, first at {np.argwhere(bad)[0].tolist()}: " \
                          f"{got[bad].ravel()[:4]} != {want[bad].ravel()[:4]}"
  else:
    w64 = want.astype(np.float64)
    atol = spec["atol"] * (1 + (float(np.nanmax(np.abs(w64), initial=0)) if spec["scaled"] else 0))
    np.testing.assert_allclose(got.astype(np.float64), w64, rtol=spec["rtol"], atol=atol, equal_nan=True,
                               err_msg=f"{what} ({spec['why']})")

@pytest.mark.parametrize("dev", device_configs(boards=True) + cpu_lane_configs())
@pytest.mark.parametrize("name", sorted(CASES))
def test_op(op_runners, dev, name):
  runner = op_runners(dev)
  status, *rest = runner.run(name)
  records = runner.new_coverage()  # of the kernels this case ran first in its worker
  assert status == "ok", rest[0]
  missing = coverage.unimplemented(records)
  assert not missing, f"{name} on {dev}: the compiler emitted instructions mockgpu does not implement: {missing}"
  got, want = rest
  if (native:=cpu_lane_reference(dev)) is not None:  # the arm64 lane: the reference is native DEV=CPU (same renderer), its own worker
    status, *ref = op_runners(native).run(name)
    assert status == "ok", ref[0]
    want = ref[0]
    if dev == "MOCK+CPU:LLVM" and name in ARM64_LLVM_MODEL:  # AArch64 LLVM fuses other multiply-adds than x86: its model
      assert not all(np.array_equal(w, arm64_llvm_dot(name)) for w in want), f"{name}: x86 now matches the arm64 model: drop it"
      want = [arm64_llvm_dot(name)]
  assert len(got) == len(want)
  for i, (g, w) in enumerate(zip(got, want)): assert_same(g, w, spec_for(name, dev), f"{name}[{i}] on {dev}")
