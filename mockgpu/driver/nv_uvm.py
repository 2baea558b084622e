"""The NVIDIA UVM driver model (/dev/nvidia-uvm): GPU registration, external VA ranges and their GPU mappings.

tinygrad picks every GPU virtual address itself: it creates an external range there (UVM_CREATE_EXTERNAL_RANGE) and
maps an RM memory object into it for one or more GPUs (UVM_MAP_EXTERNAL_ALLOCATION). Here that mapping is an entry
in each listed GPU's AddressSpace, backed by the memory object's host pages; UVM_FREE removes the range on every GPU.
"""
from __future__ import annotations
import ctypes
from dataclasses import dataclass, field
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu import events
from mockgpu.errors import UnsupportedIoctl
from mockgpu.hostmem import PAGE
from mockgpu.emulators.nv_gpu import NVGPU, names as nv_names
from mockgpu.driver.nv_rm import RM, RMError, Memory, Plain, ChannelObject, status_name

from mockgpu import log
UVM_NAMES = nv_names()["uvm"]  # ioctl -> the UVM_* name that has a _PARAMS struct

@dataclass
class Range:
  base:int
  length:int
  maps:list[tuple[NVGPU, int, int, Memory]] = field(default_factory=list)  # (gpu, va, length, memory)
  @property
  def end(self) -> int: return self.base + self.length

class UVM:
  def __init__(self, rm:RM, handle_of):
    self.rm, self.handle_of = rm, handle_of  # handle_of(fd): the open mock file with that fd, or None
    self.ranges:dict[int, Range] = {}
    self.registered:set[NVGPU] = set()
    self.vaspaces:dict[NVGPU, Plain] = {}
    self.handlers = {
      nv.UVM_INITIALIZE: (nv.UVM_INITIALIZE_PARAMS, self._initialize), nv.UVM_MM_INITIALIZE: (nv.UVM_MM_INITIALIZE_PARAMS, self._mm_initialize),
      nv.UVM_REGISTER_GPU: (nv.UVM_REGISTER_GPU_PARAMS, self._register_gpu),
      nv.UVM_REGISTER_GPU_VASPACE: (nv.UVM_REGISTER_GPU_VASPACE_PARAMS, self._register_vaspace),
      nv.UVM_REGISTER_CHANNEL: (nv.UVM_REGISTER_CHANNEL_PARAMS, self._register_channel),
      nv.UVM_ENABLE_PEER_ACCESS: (nv.UVM_ENABLE_PEER_ACCESS_PARAMS, self._peer_access),
      nv.UVM_CREATE_EXTERNAL_RANGE: (nv.UVM_CREATE_EXTERNAL_RANGE_PARAMS, self._create_range),
      nv.UVM_MAP_EXTERNAL_ALLOCATION: (nv.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, self._map_external),
      nv.UVM_FREE: (nv.UVM_FREE_PARAMS, self._free),
    }

  def ioctl(self, handle, cmd:int, arg) -> int:
    if (entry:=self.handlers.get(cmd)) is None:
      raise UnsupportedIoctl(f"mockgpu: /dev/nvidia-uvm ioctl {cmd} ({UVM_NAMES.get(cmd, 'unknown')}) is not modelled")
    T, fn = entry
    if ctypes.sizeof(arg) != ctypes.sizeof(T): raise UnsupportedIoctl(f"mockgpu: UVM ioctl {cmd}: argument of {ctypes.sizeof(arg)} bytes")
    p = T.from_buffer(arg)
    events.ioctl("uvm", UVM_NAMES.get(cmd, str(cmd)), p, lambda: self._call(handle, cmd, fn, p), "/dev/nvidia-uvm",
                 after=lambda: {"status": status_name(p.rmStatus)})
    return 0

  def _call(self, handle, cmd:int, fn, p):
    if cmd not in (nv.UVM_INITIALIZE, nv.UVM_MM_INITIALIZE) and not handle.initialized: status = nv.NV_ERR_ILLEGAL_ACTION
    else:
      try: status = fn(handle, p) or nv.NV_OK
      except RMError as e:
        log.info("UVM %s: %s", fn.__name__.strip("_"), e)
        status = e.status
    p.rmStatus = status

  def _gpu(self, uuid, what:str) -> NVGPU:
    gpu = self.rm.gpu_by_uuid(bytes(uuid.uuid))
    if gpu is None: raise RMError(nv.NV_ERR_GPU_UUID_NOT_FOUND, f"{what}: GPU {bytes(uuid.uuid).hex()}")
    return gpu
  def _registered(self, uuid, what:str) -> NVGPU:
    if (gpu:=self._gpu(uuid, what)) not in self.registered: raise RMError(nv.NV_ERR_INVALID_DEVICE, f"{what}: {gpu.name} is not registered")
    return gpu

  def _initialize(self, handle, p): handle.initialized = True
  def _mm_initialize(self, handle, p):
    if not getattr(self.handle_of(p.uvmFd), "initialized", False):
      raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"MM_INITIALIZE: fd {p.uvmFd} is not an initialized UVM file")
    handle.initialized = True

  def _register_gpu(self, handle, p): self.registered.add(self._gpu(p.gpu_uuid, "REGISTER_GPU"))

  def _register_vaspace(self, handle, p):
    gpu = self._registered(p.gpuUuid, "REGISTER_GPU_VASPACE")
    if getattr(self.handle_of(p.rmCtrlFd), "kind", None) != "ctl":
      raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"REGISTER_GPU_VASPACE: fd {p.rmCtrlFd} is not nvidiactl")
    vas = self.rm.get(p.hClient, p.hVaSpace, Plain, "VA space")
    if vas.cls != nv.FERMI_VASPACE_A or vas.gpu is not gpu: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"VA space 0x{p.hVaSpace:x} of {gpu.name}")
    self.vaspaces[gpu] = vas

  def _register_channel(self, handle, p):
    gpu = self._registered(p.gpuUuid, "REGISTER_CHANNEL")
    if self.rm.get(p.hClient, p.hChannel, ChannelObject, "channel").gpu is not gpu:
      raise RMError(nv.NV_ERR_INVALID_CHANNEL, f"channel 0x{p.hChannel:x} is not on {gpu.name}")

  def _peer_access(self, handle, p):
    self._registered(p.gpuUuidA, "ENABLE_PEER_ACCESS")
    self._registered(p.gpuUuidB, "ENABLE_PEER_ACCESS")

  def _create_range(self, handle, p):
    if p.base % PAGE or p.length % PAGE or p.length == 0: raise RMError(nv.NV_ERR_INVALID_ADDRESS, f"range 0x{p.base:x}+0x{p.length:x}")
    if any(r.base < p.base + p.length and p.base < r.end for r in self.ranges.values()):
      raise RMError(nv.NV_ERR_UVM_ADDRESS_IN_USE, f"range 0x{p.base:x}+0x{p.length:x}")
    self.ranges[p.base] = Range(p.base, p.length)

  def _map_external(self, handle, p):
    r = next((r for r in self.ranges.values() if r.base <= p.base and p.base + p.length <= r.end), None)
    if r is None or p.length == 0: raise RMError(nv.NV_ERR_INVALID_ADDRESS, f"MAP_EXTERNAL_ALLOCATION 0x{p.base:x}+0x{p.length:x}: no such range")
    mem = self.rm.get(p.hClient, p.hMemory, Memory, "memory")
    if p.offset + p.length > mem.size: raise RMError(nv.NV_ERR_INVALID_LIMIT, f"0x{p.offset:x}+0x{p.length:x} of 0x{mem.size:x} bytes")
    if p.gpuAttributesCount > len(p.perGpuAttributes): raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"{p.gpuAttributesCount} GPU attributes")
    if (p.base | p.length | p.offset) % PAGE: raise RMError(nv.NV_ERR_INVALID_ADDRESS, f"MAP_EXTERNAL_ALLOCATION 0x{p.base:x}+0x{p.length:x} "
                                                           f"at offset 0x{p.offset:x} is not page-aligned")
    gpus = list(dict.fromkeys(self._registered(a.gpuUuid, "MAP_EXTERNAL_ALLOCATION") for a in p.perGpuAttributes[:p.gpuAttributesCount]))
    end = p.base + p.length
    for gpu in gpus:
      # a new mapping replaces the ones it covers; one it covers only in part would have to be split, which is not modelled
      if any(g is gpu and va < end and p.base < va + n and not p.base <= va <= va + n <= end for g, va, n, _ in r.maps):
        raise UnsupportedIoctl(f"mockgpu: UVM_MAP_EXTERNAL_ALLOCATION 0x{p.base:x}+0x{p.length:x} on {gpu.name} overlaps part of an "
                               "earlier mapping (splitting a mapping is not modelled)")
    for gpu in gpus:
      self._unmap(r, lambda g, va: g is gpu and p.base <= va < end)
      gpu.mem.map(p.base, p.length, host=mem.host + p.offset, tag=mem)
      mem.uvm_maps += 1
      r.maps.append((gpu, p.base, p.length, mem))

  def _free(self, handle, p):
    if (r:=self.ranges.pop(p.base, None)) is None: raise RMError(nv.NV_ERR_INVALID_ADDRESS, f"FREE 0x{p.base:x}: no such range")
    self._unmap(r, lambda g, va: True)

  def _unmap(self, r:Range, which):
    keep = []
    for entry in r.maps:
      gpu, va, _, mem = entry
      if not which(gpu, va):
        keep.append(entry)
        continue
      gpu.mem.unmap(va)
      mem.uvm_unmapped()
    r.maps = keep
