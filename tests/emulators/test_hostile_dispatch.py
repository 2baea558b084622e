"""Dispatch sizes beyond what the emulator can hold (issue 28): a 2^32-1-workgroup grid, a 65535x65535 workgroup.

The executors' entry (RDNA run_dispatch, PTX launch: what the debugger, the replay tool and tests call) refuses them
with a named error naming the dimensions, before allocating (they were a MemoryError after trying to allocate 32 GiB of
workgroup ids or 128 GiB of registers); PM4's DISPATCH_DIRECT (32-bit grid dimensions) reports it as the queue's
fault for an unmodelled dispatch. Each is followed by a known-good op on the same device.
"""
import struct
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
import machines
from mockgpu.errors import DispatchTooLarge, LaunchRefused, Unmodelled, InstructionBudgetExceeded
from mockgpu.emulators.amd_gpu import UnmodelledFeature
from mockgpu.memory import AddressSpace
from support.kfd_client import Client
from support.pm4 import dispatch_cmds, release_mem
from support.ptx_good import GOOD_PTX
from support.rdna_harness import aligned

HUGE = 2**32 - 1
RSRC1 = 0x3 << 16 | 0x3 << 18   # f32 and f16/f64 denormals allowed
RSRC2 = 2 << 1                  # two user SGPRs: the kernarg pointer

def _good_code() -> bytes:
  """out[i] = 3 * i + 7 over the wave's lanes (s[0:1]: a kernarg whose first word is out)."""
  body = [I.s_load_b64(sdata=s[4:5], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0), I.v_lshlrev_b32_e32(v[1], 2, v[0]),
          I.v_mul_u32_u24_e32(v[2], 3, v[0]), I.v_add_nc_u32_e32(v[2], 7, v[2]),
          I.global_store_b32(addr=v[1], data=v[2], saddr=s[4:5], offset=0), I.s_endpgm()]
  return b"".join(i.to_bytes() for i in body)

class Rig:
  """A code image, a kernarg and a 32-word output buffer in one AddressSpace."""
  def __init__(self):
    self.mem, self.img, self.args, self.out = AddressSpace("dispatch-size"), aligned(4096), aligned(256, 256), aligned(4096)
    code = _good_code()
    self.img[:len(code)] = np.frombuffer(code, np.uint8)
    struct.pack_into("<Q", self.args, 0, self.out.ctypes.data)
    for a in (self.img, self.args, self.out): self.mem.map(a.ctypes.data, a.nbytes)

  def dispatch(self, grid, block):
    from mockgpu.emulators.rdna import Dispatch, run_dispatch
    user = [self.args.ctypes.data & 0xffffffff, self.args.ctypes.data >> 32] + [0] * 14
    return run_dispatch(self.mem, Dispatch("rdna3", self.img.ctypes.data, RSRC1, RSRC2, 0, user, 0, 0, block, grid, True))

  def known_good(self):
    self.out[:] = 0
    self.dispatch((1, 1, 1), (32, 1, 1))
    np.testing.assert_array_equal(self.out[:128].view(np.uint32), np.arange(32) * 3 + 7)


@pytest.mark.parametrize("grid, block", [((HUGE, 1, 1), (32, 1, 1)), ((1, HUGE, 1), (1, 1, 1)), ((65536, 65536, 1), (1, 1, 1)),
                                         ((1, 1, 1), (65535, 65535, 1)), ((1, 1, 1), (2048, 1, 1))])
def test_rdna_executor_entry_refuses_what_it_cannot_hold(grid, block):
  rig = Rig()
  with pytest.raises(DispatchTooLarge, match=rf"grid of \({grid[0]}, {grid[1]}, {grid[2]}\) workgroups .* of \({block[0]}, {block[1]}, {block[2]}\)"):
    rig.dispatch(grid, block)
  assert isinstance(DispatchTooLarge("x"), Unmodelled)
  rig.known_good()

@pytest.fixture
def fresh_machine(monkeypatch): monkeypatch.setattr(machines, "current", None)

@pytest.mark.parametrize("grid", [(HUGE, 1, 1), (HUGE, HUGE, HUGE), (1 << 16, 1 << 16, 1)])
def test_pm4_dispatch_direct_of_2_32_workgroups(fresh_machine, grid):
  """DISPATCH_DIRECT takes 32-bit grid dimensions: 2^32-1 workgroups in x is the queue's unmodelled-dispatch fault
  (UnmodelledFeature, naming the packet, the grid and the limit); a fresh queue on the GPU then still runs."""
  c = Client().events()
  c.buf = c.alloc(0x1000)
  q = c.queue()
  with pytest.raises(UnmodelledFeature, match=rf"DISPATCH_DIRECT.*RDNA executor: a grid of \({grid[0]}, {grid[1]}, {grid[2]}\) workgroups"):
    q.submit(dispatch_cmds(c.gpu.gc, 0x1000, 0, [0], grid, (32, 1, 1)))
  q2 = c.queue()
  q2.submit(release_mem(c.buf.va, 0x5a5a, 1))
  assert c.buf.u32()[0] == 0x5a5a

@pytest.mark.parametrize("grid, block", [((HUGE, 1, 1), (32, 1, 1)), ((1, 1, 1), (65535, 65535, 1)), ((1, 1, HUGE), (1, 1, 1))])
def test_ptx_executor_entry_refuses_what_the_board_cannot_launch(monkeypatch, grid, block):
  """The PTX executor holds one batch of CTAs at a time, whatever the grid: its entry bound is the board's launch limits,
  checked before anything runs (LaunchRefused naming the dimensions)."""
  from mockgpu.emulators.ptx import load_module, launch
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
  k = load_module(GOOD_PTX).kernel("good")
  mem, out = AddressSpace("good"), np.zeros(32, np.uint32)
  mem.map(out.ctypes.data, out.nbytes)
  with pytest.raises(LaunchRefused, match=r"grid \(\d+, \d+, \d+\)|block \(\d+, \d+, \d+\)"):
    launch(mem, k, grid, block, out.ctypes.data.to_bytes(8, "little"))
  launch(mem, k, (1, 1, 1), (32, 1, 1), out.ctypes.data.to_bytes(8, "little"))
  np.testing.assert_array_equal(out, np.arange(32) * 3 + 7)

def test_ptx_largest_legal_grid_is_bounded_in_time_not_memory(monkeypatch):
  """The board's largest grid (2^31-1 x 65535 x 65535 CTAs) starts without allocating for it; MOCKGPU_BUDGET stops it."""
  from mockgpu.emulators.ptx import load_module, launch
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
  monkeypatch.setenv("MOCKGPU_BUDGET", "2000")
  k = load_module(GOOD_PTX).kernel("good")
  mem, out = AddressSpace("good"), np.zeros(32, np.uint32)
  mem.map(out.ctypes.data, out.nbytes)
  with pytest.raises(InstructionBudgetExceeded): launch(mem, k, (2**31 - 1, 65535, 65535), (1, 1, 1), out.ctypes.data.to_bytes(8, "little"))
