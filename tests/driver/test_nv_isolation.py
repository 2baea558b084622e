"""Fault isolation between NVIDIA channel groups, as RM's robust-channel recovery defines it: an MMU fault stops the
faulting channel group (its channels, its error notifiers), not the GPU. Other groups keep running, and the runtime's
fast-fail (NVGPU.poll_check: "the signal ... will not be written") names only signals the stopped group released, never
one a live group releases (it named tinygrad's own signal after a fault in another group, in 78 of 687 fuzz cases)."""
import numpy as np
import pytest
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu import boards
from mockgpu.system import System
from mockgpu.emulators.nv_gpu import NVGPU, engine_for
from mockgpu.emulators.gpfifo import Channel, ChannelGroup, GP_GET, GP_PUT
from support.nv_gpfifo import sem

VA, SIZE, ENTRIES = 0x10_0000_0000, 0x20000, 16
REL, ACQ = nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE, nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ
UNMAPPED = 0x80_0000_0000  # inside the semaphore address's 40 bits, outside the mapping
SIG_A, SIG_B, SIG_SHARED, HOST_SIG = 0x10000, 0x10010, 0x10020, 0x10030  # offsets of signals in the mapping

class Lane:
  """A channel in a channel group of its own, with its own ring and pushbuffer area of the GPU's mapping."""
  def __init__(self, gpu:NVGPU, mem:np.ndarray, chid:int, base:int):
    self.gpu, self.mem, self.base, self.put, self.pb = gpu, mem, base, 0, base + 0x400
    self.userd, self.notifier = np.zeros(128, np.uint32), np.zeros(16, np.uint8)
    self.group = ChannelGroup()
    self.group.scheduled = True
    self.ch = Channel(gpu, nv.AMPERE_CHANNEL_GPFIFO_A, chid, self.group, VA + base, ENTRIES, self.userd.ctypes.data, self.notifier.ctypes.data)
    for cls in (gpu.board.compute, gpu.board.dma): self.ch.objects[cls] = engine_for(gpu, cls)

  def submit(self, words:list[int]):
    addr = VA + self.pb
    self.mem[self.pb:self.pb + 4 * len(words)] = np.array(words, np.uint32).view(np.uint8)
    self.pb += 4 * len(words)
    slot = self.base + self.put * 8
    self.mem[slot:slot + 8] = np.array([(addr // 4 << 2) | (len(words) << 42) | (1 << 41)], np.uint64).view(np.uint8)
    self.put += 1
    self.userd[GP_PUT // 4] = self.put
    self.ch.doorbell()
    self.ch.step()

class TwoGroups:
  def __init__(self):
    self.machine = System()
    self.gpu = NVGPU(0, boards.nv_board(boards.DEFAULT_NV_BOARD), self.machine, self.machine.ptx)
    self.mem = np.zeros(SIZE, np.uint8)
    self.gpu.mem.map(VA, SIZE, host=self.mem.ctypes.data)
    self.a, self.b = Lane(self.gpu, self.mem, 1, 0x0000), Lane(self.gpu, self.mem, 2, 0x4000)
  def u64(self, off): return int(self.mem[off:off + 8].view(np.uint64)[0])
  def host_write(self, off, value): self.mem[off:off + 8] = np.array([value], np.uint64).view(np.uint8)

def test_fault_stops_only_the_faulting_group():
  r = TwoGroups()
  r.a.submit(sem(VA + SIG_A, 1, REL) + sem(VA + SIG_SHARED, 1, REL))
  r.b.submit(sem(VA + SIG_B, 1, REL) + sem(VA + SIG_SHARED, 2, REL))
  # group A faults: a semaphore release into unmapped memory
  r.a.submit(sem(UNMAPPED, 5, REL) + sem(VA + SIG_A, 2, REL))
  assert r.a.group.error is not None and r.b.group.error is None
  assert [f.address for f in r.gpu.faults] == [UNMAPPED] and "channel 1" in r.gpu.faults[0].where
  assert r.u64(SIG_A) == 1  # the stopped group ran nothing after the fault
  assert int(r.a.notifier[8:12].view(np.uint32)[0]) == 31 and not r.b.notifier.any()  # only A's error notifier
  # the faulting group's waits report the fault, naming its channel
  with pytest.raises(RuntimeError, match=r"signal at 0x%x will not be written: the channel group that releases it stopped on an MMU fault "
                                         r"\(NV:0 channel 1: " % (VA + SIG_A)):
    r.gpu.poll_check(VA + SIG_A)
  # the other group's signals, and one both groups release, are not failed fast
  r.gpu.poll_check(VA + SIG_B)
  r.gpu.poll_check(VA + SIG_SHARED)
  # a wait on the other group's semaphore still completes: B acquires a value the host writes, then releases its signal
  r.b.submit(sem(VA + HOST_SIG, 7, ACQ) + sem(VA + SIG_B, 2, REL))
  assert r.u64(SIG_B) == 1 and r.b.ch.blocked
  r.host_write(HOST_SIG, 7)
  assert r.b.ch.step() and r.u64(SIG_B) == 2 and r.b.userd[GP_GET // 4] == 2
  r.gpu.poll_check(VA + SIG_B)
  # known-good op on the same GPU: the live group releases a new value
  r.b.submit(sem(VA + SIG_B, 3, REL))
  assert r.u64(SIG_B) == 3 and r.b.group.error is None
  # the stopped group stays stopped: its new work does not run, its signal still fails fast
  r.a.submit(sem(VA + SIG_A, 9, REL))
  assert r.u64(SIG_A) == 1
  with pytest.raises(RuntimeError, match="will not be written"): r.gpu.poll_check(VA + SIG_A)

def test_signal_reused_by_a_live_group_on_another_gpu():
  """A signal address the faulted group released once and a live group (here on another GPU) releases now is not
  failed fast: the live group may still write it."""
  r = TwoGroups()
  other = NVGPU(1, r.gpu.board, r.machine, r.machine.ptx)
  other.mem.map(VA, SIZE, host=r.mem.ctypes.data)
  live = Lane(other, r.mem, 3, 0x8000)
  r.a.submit(sem(VA + SIG_A, 1, REL))
  r.a.submit(sem(UNMAPPED, 5, REL))
  with pytest.raises(RuntimeError, match="will not be written"): r.gpu.poll_check(VA + SIG_A)
  live.submit(sem(VA + SIG_A, 2, REL))
  r.gpu.poll_check(VA + SIG_A)
  other.poll_check(VA + SIG_A)
  assert r.u64(SIG_A) == 2

def test_a_live_group_on_another_machine_does_not_hold_a_signal_open():
  """Who released a signal is the machine's record (System.releasers), not the process's: a live group on a GPU of
  another machine that releases the same address does not keep this machine's fast-fail from naming it."""
  r = TwoGroups()
  elsewhere = System()
  other = NVGPU(0, r.gpu.board, elsewhere, elsewhere.ptx)
  other_mem = np.zeros(SIZE, np.uint8)
  other.mem.map(VA, SIZE, host=other_mem.ctypes.data)
  live = Lane(other, other_mem, 3, 0x8000)
  r.a.submit(sem(VA + SIG_A, 1, REL))
  live.submit(sem(VA + SIG_A, 2, REL))
  r.a.submit(sem(UNMAPPED, 5, REL))
  assert int(other_mem[SIG_A:SIG_A + 8].view(np.uint64)[0]) == 2 and r.u64(SIG_A) == 1
  assert set(elsewhere.releasers) == {VA + SIG_A} and r.machine.releasers is not elsewhere.releasers
  with pytest.raises(RuntimeError, match="will not be written"): r.gpu.poll_check(VA + SIG_A)
  other.poll_check(VA + SIG_A)
