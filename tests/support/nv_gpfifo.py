"""A GPFIFO channel rig on one NVGPU: pushbuffer method encoders, QMD encoding, a stand-in PTX executor.
(Moved from tests/emulators/test_nv_gpfifo.py so that no test file imports another.)"""
import types
import numpy as np
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu import boards
from mockgpu.system import System
from mockgpu.emulators.nv_gpu import NVGPU, qmd_fields, engine_for
from mockgpu.emulators.gpfifo import Channel, ChannelGroup, GP_PUT
VA, SIZE, ENTRIES = 0x10_0000_0000, 0x10000, 16
PB, DATA = 0x1000, 0x8000  # pushbuffers and data inside the mapping
INC, NON_INC, IMMD, ONE_INC = 1, 3, 4, 5

def hdr(op, count, subch, mthd): return (op << 29) | (count << 16) | (subch << 13) | (mthd >> 2)
def nvm(subch, mthd, *args): return [hdr(INC, len(args), subch, mthd), *args]

class Rig:
  def __init__(self, model=boards.DEFAULT_NV_BOARD, executor=None):
    machine = System()
    self.gpu = NVGPU(0, boards.nv_board(model), machine, executor if executor is not None else machine.ptx)
    self.mem = np.zeros(SIZE, np.uint8)
    self.gpu.mem.map(VA, SIZE, host=self.mem.ctypes.data)
    self.userd, self.notifier = np.zeros(128, np.uint32), np.zeros(16, np.uint8)
    self.group = ChannelGroup()
    self.group.scheduled = True
    self.ch = Channel(self.gpu, nv.AMPERE_CHANNEL_GPFIFO_A, 3, self.group, VA, ENTRIES, self.userd.ctypes.data, self.notifier.ctypes.data)
    for cls in (self.gpu.board.compute, self.gpu.board.dma): self.ch.objects[cls] = engine_for(self.gpu, cls)
    self.put, self.pb = 0, PB
  def u32(self, off): return int(self.mem[off:off+4].view(np.uint32)[0])
  def u64(self, off): return int(self.mem[off:off+8].view(np.uint64)[0])
  def entry(self, words, slot=None):
    """Write a pushbuffer segment and its GPFIFO entry (tinygrad's encoding); returns the segment's GPU address."""
    addr = VA + self.pb
    self.mem[self.pb:self.pb + 4 * len(words)] = np.array(words, np.uint32).view(np.uint8)
    self.pb += 4 * len(words)
    slot = self.put if slot is None else slot
    self.mem[slot * 8:slot * 8 + 8] = np.array([(addr // 4 << 2) | (len(words) << 42) | (1 << 41)], np.uint64).view(np.uint8)
    return addr
  def submit(self, words):
    addr = self.entry(words)
    self.put += 1
    self.userd[GP_PUT // 4] = self.put
    self.ch.doorbell()
    self.progress = self.ch.step()
    if errors:=self.gpu.take_errors(): raise errors[0]  # as the doorbell write does after its scheduler pass
    return addr

def sem(addr, payload, op, wide=True, timestamp=False):
  flags = op | (int(wide) << 24) | (int(timestamp) << 25)
  return nvm(0, nv.NVC56F_SEM_ADDR_LO, addr & 0xffffffff, addr >> 32, payload & 0xffffffff, payload >> 32, flags)

def copy_methods(src, dst, n, flags):
  return nvm(4, nv.NVC6B5_OFFSET_IN_UPPER, src >> 32, src & 0xffffffff, dst >> 32, dst & 0xffffffff) + \
         nvm(4, nv.NVC6B5_LINE_LENGTH_IN, n) + nvm(4, nv.NVC6B5_LAUNCH_DMA, flags)

# *** QMD launches, with a stand-in executor that records what it was given ***

class FakeKernel:
  params = [("data0", 8, 8, 0), ("data1", 8, 8, 8), ("var0", 4, 4, 16)]

class FakePTX:
  def __init__(self, fault=None): self.launches, self.fault = [], fault
  def load_module(self, text):
    self.text = text
    return types.SimpleNamespace(kernel=lambda name: (self.launches.append(name), FakeKernel)[1])
  def launch(self, mem, kernel, grid, block, params, dynamic_shared=0, board=None):
    self.launches.append((grid, block, params, dynamic_shared))
    if self.fault: raise self.fault

def encode_qmd(vals:dict) -> bytes:
  fields, bits = qmd_fields("NVC6C0_QMDV03_00"), 0
  for k, v in {"qmd_major_version": 3, **vals}.items():
    hi, lo = fields[k.upper()]
    bits |= v << lo
  return bits.to_bytes(0x100, "little")

PTX_TEXT = b".version 8.0\n.target sm_89\n.visible .entry E_3(.param .u64 data0, .param .u64 data1, .param .u32 var0) { ret; }\n\0"
