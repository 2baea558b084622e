"""The NVIDIA Resource Manager model: clients, objects, classes, control commands and memory, and the device files.

RM is a tree of objects per client: root client -> device -> subdevice / memory / VA spaces / channel groups ->
channels -> engine objects. tinygrad allocates them with NV_ESC_RM_ALLOC (NVOS21), drives them with NV_ESC_RM_CONTROL
(NVOS54) and frees them with NV_ESC_RM_FREE (NVOS00). Failures set the NV status field, as the kernel driver does, so
tinygrad's own error paths run: an unknown handle is NV_ERR_INVALID_OBJECT_HANDLE, exhausted video memory is
NV_ERR_NO_MEMORY, a class or control command the model lacks is NV_ERR_NOT_SUPPORTED (logged with its name).

Memory objects are backed by shared anonymous host memory; CPU mappings (mmap of /dev/nvidia*) alias the same pages with
mremap, so tinygrad's view and the GPU's AddressSpace see one set of bytes wherever each of them lives.

The device files decode the NV_ESC_* escapes (ioctl type 'F', the argument size in the request) with tinygrad's autogen
structs; /dev/nvidia-uvm ioctls go to the UVM model (nv_uvm.py). An mmap of a node maps what the last
NV_ESC_RM_MAP_MEMORY naming that node's fd asked for, as the real driver does.
"""
from __future__ import annotations
import ctypes, errno, itertools, mmap, os
from tinygrad.runtime.autogen import nv_570 as nv
from mockgpu import config, events, hostmem
from mockgpu.vfs import Handle
from mockgpu.errors import PacketError, UnsupportedIoctl, Unmodelled
from mockgpu.driver import uaccess
from mockgpu.hostmem import MAP_FIXED, MAP_NORESERVE
from mockgpu.emulators.nv_gpu import NVGPU, Fault, class_name, engine_for, names as nv_names
from mockgpu.emulators.gpfifo import Channel, ChannelGroup

from mockgpu import log

DRIVER_VERSION = "570.133.07"  # tinygrad picks its nv_570 ABI tables for a 570 driver

USERMODE_SIZE, DOORBELL = 0x10000, 0x90  # NVC361_NOTIFY_CHANNEL_PENDING: the work-submit token goes here

class RMError(Exception):
  def __init__(self, status:int, msg:str):
    super().__init__(f"{msg}: {nv.nv_status_codes.get(status, status)}")
    self.status = status

ESCAPE_NAMES:dict[int, str] = nv_names()["escape"]  # escape number -> NV_ESC_* name

def status_name(status:int) -> str: return nv.nv_status_codes.get(status, str(status))

def ctrl_name(cmd:int) -> str: return nv_names()["ctrl"].get(cmd, "unknown command")

# *** host memory ***

def host_alloc(size:int) -> int:
  """Shared anonymous pages (mockgpu/hostmem.py), which a CPU mapping aliases (hostmem.alias); NV_ERR_NO_MEMORY if none."""
  try: return hostmem.host_mmap(0, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
  except OSError as e: raise RMError(nv.NV_ERR_NO_MEMORY, f"host memory for 0x{size:x} bytes ({os.strerror(e.errno)})") from None

# *** objects ***

class Object:
  def __init__(self, handle:int, cls:int, parent:Object|None, gpu:NVGPU|None=None):
    self.handle, self.cls, self.parent, self.children = handle, cls, parent, []
    self.gpu = gpu if gpu is not None else (parent.gpu if parent is not None else None)
  def root(self) -> Client: return self.parent.root()
  def free(self): pass

class Client(Object):
  def __init__(self, handle:int):
    super().__init__(handle, nv.NV01_ROOT_CLIENT, None)
    self.objects:dict[int, Object] = {handle: self}
  def root(self) -> Client: return self

class Device(Object): pass
class Subdevice(Object): pass
class Plain(Object): pass  # VA spaces, virtual-memory ranges, context shares: RM bookkeeping the channels need no data from

class Memory(Object):
  """Video, system or OS-descriptor memory. The backing lives until RM has freed it and UVM has unmapped it."""
  def __init__(self, handle, cls, parent, size:int, host:int|None=None):
    super().__init__(handle, cls, parent)
    self.size, self.owned = size, host is None
    self.vidmem = cls == nv.NV1_MEMORY_USER
    if self.vidmem and self.gpu.vram_used + size > self.gpu.board.memory_size:
      raise RMError(nv.NV_ERR_NO_MEMORY, f"{self.gpu.name}: 0x{size:x} bytes of video memory (0x{self.gpu.vram_used:x} in use)")
    self.host = host_alloc(size) if host is None else host
    if self.vidmem: self.gpu.vram_used += size
    self.uvm_maps, self.rm_freed = 0, False
  def free(self):
    self.rm_freed = True
    self._release()
  def uvm_unmapped(self):
    self.uvm_maps -= 1
    self._release()
  def _release(self):
    if not self.rm_freed or self.uvm_maps or self.host is None: return
    if self.vidmem: self.gpu.vram_used -= self.size
    if self.owned: hostmem.munmap(self.host, self.size)
    self.host = None

class Usermode(Object):
  """The usermode MMIO page (TURING/HOPPER_USERMODE_A): a write of a work-submit token at 0x90 rings that channel."""
  def __init__(self, handle, cls, parent):
    super().__init__(handle, cls, parent)
    self.size, self.host, self.watched = USERMODE_SIZE, host_alloc(USERMODE_SIZE), []
  def mapped(self, addr:int):
    self.gpu.machine.watch(addr, self.size, lambda a, v, base=addr: self.write(a - base, v))
    self.watched.append(addr)
  def write(self, offset:int, value:int):
    if offset != DOORBELL: raise Unmodelled(f"mockgpu {self.gpu.name}: usermode register 0x{offset:x} is not modelled")
    if (ch:=self.gpu.channels.get(value)) is None: raise PacketError(f"{self.gpu.name}: doorbell rung with token {value}, which no channel has")
    if events.enabled: events.emit("doorbell", self.gpu.name, ch.name, offset=offset, value=value)
    ch.doorbell()
    try:
      machine = self.gpu.machine
      machine.kick()
      if errors:=[e for gpu in machine.devices["nv"] for e in gpu.take_errors()]: raise errors[0]
    except Exception:
      ch.submission_failed()
      raise
  def free(self):
    for addr in self.watched: self.gpu.machine.unwatch(addr)
    hostmem.munmap(self.host, self.size)

class GroupObject(Object):
  def __init__(self, handle, cls, parent):
    super().__init__(handle, cls, parent)
    self.group = ChannelGroup()
  def schedule(self, enable:bool): self.group.scheduled = enable

class ChannelObject(Object):
  def __init__(self, handle, cls, parent, channel:Channel):
    super().__init__(handle, cls, parent)
    self.channel = channel
    self.gpu.channels[channel.chid] = channel
    self.gpu.machine.add_queue(channel)
  def free(self):
    self.gpu.channels.pop(self.channel.chid, None)
    self.channel.group.channels.remove(self.channel)
    self.gpu.machine.remove_queue(self.channel)

class Debugger(Object): pass

class EngineObject(Object):
  def free(self): self.parent.channel.objects.pop(self.cls, None)

# *** the resource manager ***

def _user(call, *args):
  """A uaccess copy; a fault is RM's NV_ERR_INVALID_ADDRESS (what os_memcpy_from_user/to_user report)."""
  try: return call(*args)
  except OSError as e: raise RMError(nv.NV_ERR_INVALID_ADDRESS, str(e)) from None

def _params(T, ptr:int|None, what:str, required:bool=True):
  """The parameter struct at a user pointer, checked as RM copies it in (and out: handlers fill it in place)."""
  if not ptr:
    if required: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"{what}: no parameters")
    return None
  p = _user(uaccess.user_struct, T, ptr, f"{what} parameters")
  if events.enabled: _params_seen.append((T.__name__, p, events.fields_of(p)))  # the trace shows them in and out
  return p

# the parameter blocks RM read during the current escape: (struct name, live struct, fields as read), for the trace
_params_seen:list[tuple[str, object, dict]] = []

def params_decoded() -> dict:
  """The parameter blocks of the escape that just ran, decoded in and out (the `params` field of its ioctl event)."""
  out = {name: {"in": before, "out": events.fields_of(p)} for name, p, before in _params_seen}
  _params_seen.clear()
  return out

class RM:
  def __init__(self, gpus:list[NVGPU]):
    self.gpus, self.clients = gpus, {}
    self._client_handles, self._handles = itertools.count(0xc1d00000), itertools.count(0xcf000000)
    self._chids = itertools.count(1)
    self.alloc_handlers = {
      nv.NV01_DEVICE_0: self._device, nv.NV20_SUBDEVICE_0: self._subdevice,
      nv.NV01_MEMORY_VIRTUAL: self._plain(Device, nv.NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS),
      nv.FERMI_VASPACE_A: self._plain(Device, nv.NV_VASPACE_ALLOCATION_PARAMETERS),
      nv.FERMI_CONTEXT_SHARE_A: self._plain(GroupObject, nv.NV_CTXSHARE_ALLOCATION_PARAMETERS),
      nv.KEPLER_CHANNEL_GROUP_A: self._channel_group, nv.NV1_MEMORY_USER: self._memory, nv.NV1_MEMORY_SYSTEM: self._memory,
      nv.GT200_DEBUGGER: self._debugger,
    }
    self.controls = {
      nv.NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: (Client, nv.NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, self._build_version),
      nv.NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: (Client, nv.NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, self._id_info),
      nv.NV0080_CTRL_CMD_GPU_GET_CLASSLIST: (Device, nv.NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS, self._classlist),
      nv.NV2080_CTRL_CMD_PERF_BOOST: (Subdevice, nv.NV2080_CTRL_PERF_BOOST_PARAMS, None),
      nv.NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE: (Subdevice, nv.NV2080_CTRL_FB_FLUSH_GPU_CACHE_PARAMS, None),  # memory is coherent
      nv.NV2080_CTRL_CMD_GPU_GET_GID_INFO: (Subdevice, nv.NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, self._gid_info),
      nv.NV2080_CTRL_CMD_GR_GET_INFO: (Subdevice, nv.NV2080_CTRL_GR_GET_INFO_PARAMS, self._gr_info),
      nv.NV2080_CTRL_CMD_GR_GET_TPC_MASK: (Subdevice, nv.NV2080_CTRL_GR_GET_TPC_MASK_PARAMS, self._tpc_mask),
      nv.NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: (GroupObject, nv.NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS, lambda o, p: o.schedule(bool(p.bEnable))),
      nv.NVA06F_CTRL_CMD_GPFIFO_SCHEDULE: (ChannelObject, nv.NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS, self._schedule_channel),
      nv.NVA06F_CTRL_CMD_BIND: (ChannelObject, nv.NVA06F_CTRL_BIND_PARAMS, None),
      nv.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: (ChannelObject, nv.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS, self._token),
      nv.NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES: (Debugger, nv.NV83DE_CTRL_DEBUG_READ_ALL_SM_ERROR_STATES_PARAMS, self._sm_errors),
      nv.NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO: (Debugger, nv.NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS, self._mmu_faults),
      # the profiler object (MAXWELL_PROFILER_DEVICE): nv_profiler.py; None: a control without parameters
    }

  # *** lookup ***
  def client(self, h:int) -> Client:
    if (c:=self.clients.get(h)) is None: raise RMError(nv.NV_ERR_INVALID_CLIENT, f"client 0x{h:x}")
    return c
  def get(self, client:int, h:int, T:type=Object, what:str="object") -> Object:
    obj = self.client(client).objects.get(h)
    if obj is None: raise RMError(nv.NV_ERR_INVALID_OBJECT_HANDLE, f"{what} 0x{h:x}")
    if not isinstance(obj, T): raise RMError(nv.NV_ERR_INVALID_OBJECT, f"{what} 0x{h:x} is a {class_name(obj.cls)} (0x{obj.cls:x})")
    return obj
  def gpu_by_uuid(self, uuid:bytes) -> NVGPU|None: return next((g for g in self.gpus if g.uuid == uuid), None)

  # *** NV_ESC_RM_ALLOC / NV_ESC_RM_ALLOC_MEMORY / NV_ESC_RM_FREE ***
  def alloc(self, root:int, parent:int, new:int, cls:int, params:int|None) -> int:
    if cls == nv.NV01_ROOT_CLIENT:
      h = new or next(self._client_handles)
      if h in self.clients: raise RMError(nv.NV_ERR_INSERT_DUPLICATE_NAME, f"client 0x{h:x}")
      self.clients[h] = Client(h)
      return h
    client = self.client(root)
    if new and new in client.objects: raise RMError(nv.NV_ERR_INSERT_DUPLICATE_NAME, f"handle 0x{new:x}")
    p = client.objects.get(parent)
    if p is None: raise RMError(nv.NV_ERR_INVALID_OBJECT_PARENT, f"{class_name(cls)} (0x{cls:x}): parent 0x{parent:x}")
    handler = self.alloc_handlers.get(cls) or self._gpu_class(p, cls)
    obj = handler(new or next(self._handles), cls, p, params)
    client.objects[obj.handle] = obj
    p.children.append(obj)  # only now: a handler that fails leaves nothing behind
    return obj.handle

  def alloc_os_descriptor(self, root:int, parent:int, new:int, cls:int, addr:int, limit:int) -> int:
    """NV_ESC_RM_ALLOC_MEMORY of NV01_MEMORY_SYSTEM_OS_DESCRIPTOR: host memory the process already has, at addr."""
    if cls != nv.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR:
      raise RMError(nv.NV_ERR_NOT_SUPPORTED, f"RM_ALLOC_MEMORY of {class_name(cls)} (0x{cls:x}) is not modelled")
    client = self.client(root)
    if new in client.objects: raise RMError(nv.NV_ERR_INSERT_DUPLICATE_NAME, f"handle 0x{new:x}")
    if not addr: raise RMError(nv.NV_ERR_INVALID_ADDRESS, "an OS descriptor without memory")
    if limit >= 1 << 40: raise RMError(nv.NV_ERR_INVALID_LIMIT, f"an OS descriptor of 0x{limit + 1:x} bytes")
    _user(uaccess.check_user, addr, limit + 1, "OS descriptor memory")  # RM pins the pages: they must be there
    obj = Memory(new, cls, p:=self.get(root, parent, Device, "parent device"), limit + 1, host=addr)
    client.objects[new] = obj
    p.children.append(obj)
    return new

  def free(self, root:int, parent:int, old:int):
    client = self.client(root)
    if old == root:
      for obj in list(client.objects.values()): obj.free()
      del self.clients[root]
      return
    obj = self.get(root, old)
    if obj.parent is not None and obj.parent.handle != parent:
      raise RMError(nv.NV_ERR_INVALID_OBJECT_PARENT, f"object 0x{old:x}: parent 0x{parent:x}")
    self._free_tree(client, obj)
    if obj.parent is not None: obj.parent.children.remove(obj)

  def _free_tree(self, client:Client, obj:Object):
    for child in obj.children: self._free_tree(client, child)
    obj.free()
    client.objects.pop(obj.handle, None)

  # *** class handlers ***
  def _gpu_class(self, parent:Object, cls:int):
    b = parent.gpu.board if parent.gpu is not None else None
    if b is not None and cls in b.gpfifo: return self._channel
    if b is not None and cls in b.usermode: return self._usermode
    if b is not None and cls in (b.compute, b.dma): return self._engine
    known = class_name(cls) != "unknown class"
    log.warning("RM class %s (0x%x) is not modelled", class_name(cls), cls)
    raise RMError(nv.NV_ERR_NOT_SUPPORTED if known else nv.NV_ERR_INVALID_CLASS, f"class {class_name(cls)} (0x{cls:x}) is not modelled")

  def _expect(self, parent:Object, T:type, cls:int):
    if not isinstance(parent, T): raise RMError(nv.NV_ERR_INVALID_OBJECT_PARENT, f"{class_name(cls)} needs a {T.__name__} parent")

  def _device(self, h, cls, parent, params):
    self._expect(parent, Client, cls)
    p = _params(nv.NV0080_ALLOC_PARAMETERS, params, "NV01_DEVICE_0")
    if p.deviceId >= len(self.gpus): raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"device {p.deviceId}")
    return Device(h, cls, parent, self.gpus[p.deviceId])

  def _subdevice(self, h, cls, parent, params):
    self._expect(parent, Device, cls)
    p = _params(nv.NV2080_ALLOC_PARAMETERS, params, "NV20_SUBDEVICE_0", required=False)
    if p is not None and p.subDeviceId != 0: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"subdevice {p.subDeviceId}")
    return Subdevice(h, cls, parent)

  def _plain(self, parent_type:type, T):
    def make(h, cls, parent, params):
      self._expect(parent, parent_type, cls)
      _params(T, params, class_name(cls), required=False)
      return Plain(h, cls, parent)
    return make

  def _channel_group(self, h, cls, parent, params):
    self._expect(parent, Device, cls)
    return GroupObject(h, cls, parent)

  def _memory(self, h, cls, parent, params):
    self._expect(parent, Device, cls)
    p = _params(nv.NV_MEMORY_ALLOCATION_PARAMS, params, class_name(cls))
    if p.size == 0: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"{class_name(cls)} of 0 bytes")
    mem = Memory(h, cls, parent, p.size)
    p.offset, p.limit = 0, p.size - 1
    return mem

  def _usermode(self, h, cls, parent, params):
    self._expect(parent, Subdevice, cls)
    return Usermode(h, cls, parent)

  def _channel(self, h, cls, parent, params):
    if not isinstance(parent, (GroupObject, Device)): raise RMError(nv.NV_ERR_INVALID_OBJECT_PARENT, f"{class_name(cls)} needs a channel group")
    p = _params(nv.NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS, params, class_name(cls))
    client = parent.root()
    userd = self.get(client.handle, p.hUserdMemory[0], Memory, "USERD memory")
    notifier = self.get(client.handle, p.hObjectError, Memory, "error notifier") if p.hObjectError else None
    if p.userdOffset[0] + 0x200 > userd.size: raise RMError(nv.NV_ERR_INVALID_OFFSET, f"USERD offset 0x{p.userdOffset[0]:x}")
    if p.gpFifoEntries == 0 or p.gpFifoEntries & (p.gpFifoEntries - 1): raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"{p.gpFifoEntries} GPFIFO entries")
    group = parent.group if isinstance(parent, GroupObject) else ChannelGroup()
    ch = Channel(parent.gpu, cls, next(self._chids), group, p.gpFifoOffset, p.gpFifoEntries, userd.host + p.userdOffset[0],
                 notifier.host if notifier is not None else None)
    return ChannelObject(h, cls, parent, ch)

  def _engine(self, h, cls, parent, params):
    self._expect(parent, ChannelObject, cls)
    engine = parent.channel.objects[cls] = engine_for(parent.gpu, cls)
    if engine is not None: engine.queue = parent.channel.name
    return EngineObject(h, cls, parent)

  def _debugger(self, h, cls, parent, params):
    self._expect(parent, Device, cls)
    _params(nv.NV83DE_ALLOC_PARAMETERS, params, "GT200_DEBUGGER")
    return Debugger(h, cls, parent)

  # *** NV_ESC_RM_CONTROL ***
  def control(self, client:int, h:int, cmd:int, params:int|None, size:int):
    obj = self.get(client, h)
    if (entry:=self.controls.get(cmd)) is None:
      log.warning("RM control %s (0x%x) on %s is not modelled", ctrl_name(cmd), cmd, class_name(obj.cls))
      raise RMError(nv.NV_ERR_NOT_SUPPORTED, f"control {ctrl_name(cmd)} (0x{cmd:x}) is not modelled")
    T, PT, fn = entry
    if not isinstance(obj, T): raise RMError(nv.NV_ERR_INVALID_OBJECT_HANDLE, f"{ctrl_name(cmd)} on {class_name(obj.cls)}")
    if size != (0 if PT is None else ctypes.sizeof(PT)) or (PT is None and params):
      raise RMError(nv.NV_ERR_INVALID_PARAM_STRUCT, f"{ctrl_name(cmd)}: {size} bytes of parameters")
    p = None if PT is None else _params(PT, params, ctrl_name(cmd))
    if fn is not None: fn(obj, p)

  def _build_version(self, obj, p):
    p.driverVersionBuffer = p.versionBuffer = DRIVER_VERSION.encode()
    p.driverBranch, p.titleBuffer = b"r570_00", b"mockgpu"

  def _id_info(self, obj, p):
    gpu = next((g for g in self.gpus if g.gpu_id == p.gpuId), None)
    if gpu is None: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"gpuId 0x{p.gpuId:x}")
    p.deviceInstance, p.subDeviceInstance, p.gpuInstance, p.boardId, p.numaId = gpu.index, 0, gpu.index, gpu.index, -1

  def _classlist(self, obj, p):
    classes = self.classlist(obj.gpu)
    if p.numClasses and p.classList:
      n = min(p.numClasses, len(classes))
      _user(uaccess.copy_to_user, p.classList, bytes((ctypes.c_uint32 * n)(*classes[:n])), "GET_CLASSLIST classList")
    p.numClasses = len(classes)

  def classlist(self, gpu:NVGPU) -> list[int]:
    b = gpu.board
    return [*self.alloc_handlers, nv.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, *b.gpfifo, *b.usermode, b.compute, b.dma]

  def _gid_info(self, obj, p):
    uuid = obj.gpu.uuid
    if p.flags & 3 == nv.NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY: data = uuid
    else: data = ("GPU-" + "-".join(uuid.hex()[a:b] for a, b in ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32)))).encode() + b"\0"
    p.data[:len(data)], p.length = list(data), len(data)

  def _gr_info(self, obj, p):
    b = obj.gpu.board
    values = {nv.NV2080_CTRL_GR_INFO_INDEX_SM_VERSION: b.sm_version, nv.NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM: b.max_warps_per_sm,
              nv.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS: b.gpcs, nv.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC: b.tpc_per_gpc,
              nv.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC: b.sm_per_tpc}
    if not p.grInfoList: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, "GR_GET_INFO without a list")
    if p.grInfoListSize > nv.NV2080_CTRL_GR_INFO_MAX_SIZE: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"GR_GET_INFO of {p.grInfoListSize} entries")
    for info in _user(uaccess.user_struct, nv.NV2080_CTRL_GR_INFO * p.grInfoListSize, p.grInfoList, "GR_GET_INFO grInfoList"):
      if info.index not in values:
        log.warning("GR info index %d is not modelled", info.index)
        raise RMError(nv.NV_ERR_NOT_SUPPORTED, f"GR info index {info.index} is not modelled")
      info.data = values[info.index]

  def _tpc_mask(self, obj, p):
    b = obj.gpu.board
    if p.gpcId >= b.gpcs: raise RMError(nv.NV_ERR_INVALID_ARGUMENT, f"GPC {p.gpcId}")
    p.tpcMask = (1 << b.tpc_per_gpc) - 1

  def _schedule_channel(self, obj, p): obj.channel.group.scheduled = bool(p.bEnable)
  def _token(self, obj, p): p.workSubmitToken = obj.channel.chid

  def _sm_errors(self, obj, p):
    faults = reported_faults(obj.gpu)
    p.mmuFault.valid, p.mmuFault.faultInfo = int(bool(faults)), len(faults)

  def _mmu_faults(self, obj, p):
    faults = reported_faults(obj.gpu)[:len(p.mmuFaultInfoList)]
    for entry, f in zip(p.mmuFaultInfoList, faults): entry.faultAddress, entry.faultType, entry.accessType = f.address, f.fault_type, f.access_type
    p.count = len(faults)

  # *** NV_ESC_RM_MAP_MEMORY (CPU) and NV_ESC_RM_MAP_MEMORY_DMA (GPU VA) ***
  def map_request(self, client:int, device:int, memory:int, offset:int, length:int) -> tuple[Object, int, int]:
    self.get(client, device, Device, "device")
    obj = self.get(client, memory, (Memory, Usermode), "memory")
    if offset + length > obj.size: raise RMError(nv.NV_ERR_INVALID_LIMIT, f"mapping 0x{offset:x}+0x{length:x} of 0x{obj.size:x} bytes")
    return obj, offset, length

  def cpu_map(self, request:tuple[Object, int, int], start:int|None, size:int, fixed:bool) -> int:
    obj, offset, length = request
    if size > length: raise OSError(errno.EINVAL, f"mockgpu: mmap of 0x{size:x} bytes, RM mapped 0x{length:x}")
    addr = hostmem.alias(obj.host + offset, size, start if fixed else None)
    if isinstance(obj, Usermode): obj.mapped(addr)
    return addr

  def dma_map(self, client:int, device:int, dma:int, memory:int, offset:int, length:int, fixed:bool, dma_offset:int) -> int:
    """RM's view of the mapping; the channels' page tables are UVM's (UVM_MAP_EXTERNAL_ALLOCATION maps the GPU VA)."""
    self.get(client, device, Device, "device")
    self.get(client, dma, Plain, "virtual memory")
    mem = self.get(client, memory, Memory, "memory")
    if offset + length > mem.size: raise RMError(nv.NV_ERR_INVALID_LIMIT, f"DMA mapping 0x{offset:x}+0x{length:x} of 0x{mem.size:x} bytes")
    if not fixed: raise RMError(nv.NV_ERR_NOT_SUPPORTED, "DMA mappings at an RM-chosen offset are not modelled")
    return dma_offset

# *** the device files ***

class NVFile(Handle):
  """/dev/nvidiactl (kind 'ctl') or /dev/nvidiaN (kind 'dev')."""
  def __init__(self, drv:Driver, path:str, flags:int, kind:str):
    super().__init__(path, flags)
    self.drv, self.kind, self.map_request = drv, kind, None
    drv.files[self.fd] = self
  def ioctl(self, request:int, arg) -> int: return self.drv.escape(self, request, arg)
  def mmap(self, start, size, prot, flags, offset):
    if self.map_request is None: raise OSError(errno.EINVAL, f"{self.path}: mmap without an NV_ESC_RM_MAP_MEMORY for this file")
    addr = self.drv.rm.cpu_map(self.map_request, start, size, bool(flags & MAP_FIXED))
    return addr
  def close(self): self.drv.files.pop(self.fd, None)

class UVMFile(Handle):
  kind = "uvm"
  def __init__(self, drv:Driver, path:str, flags:int):
    super().__init__(path, flags)
    self.drv, self.initialized = drv, False
    drv.files[self.fd] = self
  def ioctl(self, request:int, arg) -> int: return self.drv.uvm.ioctl(self, request, arg)
  def close(self): self.drv.files.pop(self.fd, None)

class Driver:
  """The device files over RM and UVM (built by nvidia.py, NVIDIA's root): NV_ESC_* escapes go to RM, /dev/nvidia-uvm
  ioctls to UVM. files: the open device files by fd, which UVM also reads (an fd named in a UVM call)."""
  def __init__(self, rm:RM, uvm, files:dict[int, Handle]):
    self.rm, self.uvm, self.files = rm, uvm, files
    self._last_call:str|None = None  # what the running escape asked RM for, for the trace
    self.escapes = {
      nv.NV_ESC_CARD_INFO: ((nv.nv_ioctl_card_info_t * 64), self._card_info),
      nv.NV_ESC_REGISTER_FD: (nv.nv_ioctl_register_fd_t, self._register_fd),
      nv.NV_ESC_RM_ALLOC: (nv.NVOS21_PARAMETERS, self._alloc),
      nv.NV_ESC_RM_ALLOC_MEMORY: (nv.nv_ioctl_nvos02_parameters_with_fd, self._alloc_memory),
      nv.NV_ESC_RM_CONTROL: (nv.NVOS54_PARAMETERS, self._control),
      nv.NV_ESC_RM_FREE: (nv.NVOS00_PARAMETERS, self._free),
      nv.NV_ESC_RM_MAP_MEMORY: (nv.nv_ioctl_nvos33_parameters_with_fd, self._map_memory),
      nv.NV_ESC_RM_MAP_MEMORY_DMA: (nv.NVOS46_PARAMETERS, self._map_memory_dma),
    }

  @property
  def gpus(self) -> list[NVGPU]: return self.rm.gpus

  def open(self, kind:str, path:str, flags:int) -> Handle:
    return UVMFile(self, path, flags) if kind == "uvm" else NVFile(self, path, flags, kind)

  # *** escapes ***
  def escape(self, f:NVFile, request:int, arg) -> int:
    nr, size = request & 0xff, (request >> 16) & 0x3fff
    if (request >> 8) & 0xff != ord("F"): raise UnsupportedIoctl(f"mockgpu: {f.path}: ioctl 0x{request:x} is not an NVIDIA escape")
    if (entry:=self.escapes.get(nr)) is None:
      raise UnsupportedIoctl(f"mockgpu: {f.path}: escape 0x{nr:x} ({ESCAPE_NAMES.get(nr, 'unknown')}) is not modelled")
    T, fn = entry
    if size != ctypes.sizeof(T) & 0x3fff or ctypes.sizeof(arg) != ctypes.sizeof(T):
      raise OSError(errno.EINVAL, f"{f.path}: escape 0x{nr:x} with a {ctypes.sizeof(arg)}-byte argument, {ctypes.sizeof(T)} expected")
    p = T.from_buffer(arg)
    _params_seen.clear()
    return events.ioctl("rm", ESCAPE_NAMES.get(nr, hex(nr)), p, lambda: fn(f, p), f.path, after=lambda: self._traced_call(p))

  def _traced_call(self, p) -> dict:
    """The trace's view of an escape beyond its argument: the RM call it made (class or control name), its NV status
    and its parameter blocks in and out."""
    out = {"call": self._last_call, "params": params_decoded()}
    if (status:=getattr(p, "status", None)) is not None and isinstance(status, int): out["status"] = status_name(status)
    self._last_call = None
    return out

  def _rm_call(self, what:str, call) -> tuple[object, int]:
    """Run an RM operation; a failure becomes its NV status, as the driver reports it."""
    self._last_call = what
    try:
      ret, status = call(), nv.NV_OK
    except RMError as e:
      ret, status = None, e.status
      if status != nv.NV_ERR_NOT_SUPPORTED: log.info("%s: %s", what, e)  # not-modelled was already logged as a warning
    return ret, status

  def _card_info(self, f, cards):
    for i, gpu in enumerate(self.gpus[:len(cards)]):
      c = cards[i]
      c.valid, c.gpu_id, c.minor_number, c.fb_size, c.reg_size = 1, gpu.gpu_id, i, gpu.board.memory_size, 16 << 20
      c.pci_info.domain, c.pci_info.bus, c.pci_info.slot, c.pci_info.function = 0, gpu.gpu_id >> 8, 0, 0
      c.pci_info.vendor_id, c.pci_info.device_id = gpu.board.pci_vendor_id, gpu.board.pci_device_id
    return 0

  def _register_fd(self, f, p):
    ctl = self.files.get(p.ctl_fd)
    if getattr(ctl, "kind", None) != "ctl": raise OSError(errno.EINVAL, f"{f.path}: NV_ESC_REGISTER_FD with fd {p.ctl_fd}, not nvidiactl")
    return 0

  def _alloc(self, f, p):
    h, p.status = self._rm_call(f"RM_ALLOC {class_name(p.hClass)} (0x{p.hClass:x}) under 0x{p.hObjectParent:x}",
                                lambda: self.rm.alloc(p.hRoot, p.hObjectParent, p.hObjectNew, p.hClass, p.pAllocParms))
    if h is not None: p.hObjectNew = h
    return 0

  def _alloc_memory(self, f, w):
    p = w.params
    _, p.status = self._rm_call(f"RM_ALLOC_MEMORY {class_name(p.hClass)} 0x{p.hObjectNew:x}",
                                lambda: self.rm.alloc_os_descriptor(p.hRoot, p.hObjectParent, p.hObjectNew, p.hClass, p.pMemory, p.limit))
    return 0

  def _control(self, f, p):
    _, p.status = self._rm_call(f"RM_CONTROL {ctrl_name(p.cmd)} (0x{p.cmd:x}) on 0x{p.hObject:x}",
                                lambda: self.rm.control(p.hClient, p.hObject, p.cmd, p.params, p.paramsSize))
    return 0

  def _free(self, f, p):
    _, p.status = self._rm_call(f"RM_FREE 0x{p.hObjectOld:x}", lambda: self.rm.free(p.hRoot, p.hObjectParent, p.hObjectOld))
    return 0

  def _map_memory(self, f, w):
    p, target = w.params, self.files.get(w.fd)
    if not isinstance(target, NVFile):
      p.status = nv.NV_ERR_INVALID_ARGUMENT
      log.info("RM_MAP_MEMORY: fd %d is not an NVIDIA device file", w.fd)
      return 0
    req, p.status = self._rm_call(f"RM_MAP_MEMORY 0x{p.hMemory:x}", lambda: self.rm.map_request(p.hClient, p.hDevice, p.hMemory, p.offset, p.length))
    if req is not None: target.map_request, p.pLinearAddress = req, None
    return 0

  def _map_memory_dma(self, f, p):
    fixed = bool((p.flags >> 15) & 1)  # NVOS46_FLAGS_DMA_OFFSET_FIXED
    off, p.status = self._rm_call(f"RM_MAP_MEMORY_DMA 0x{p.hMemory:x} at 0x{p.dmaOffset:x}", lambda: self.rm.dma_map(
      p.hClient, p.hDevice, p.hDma, p.hMemory, p.offset, p.length, fixed, p.dmaOffset))
    if off is not None: p.dmaOffset = off
    return 0

  # *** /proc/driver/nvidia ***
  def proc_information(self, index:int) -> str:
    gpu = self.gpus[index]
    return (f"Model: \t\t {gpu.board.marketing_name}\nIRQ:   \t\t 0\nGPU UUID: \t GPU-{gpu.uuid.hex()}\n"
            f"Bus Location: \t 0000:{gpu.gpu_id >> 8:02x}:00.0\n"
            f"Device Minor: \t {gpu.index}\n")

def emu_fault_addr() -> int|None:
  """MOCKGPU_EMU_FAULTADDR=0x... (tinygrad's in-tree mock contract): the address the MMU-fault report carries."""
  return config.emu_fault_addr()

def reported_faults(gpu:NVGPU) -> list[Fault]:
  """The debugger's MMU-fault report: the GPU's faults; with MOCKGPU_EMU_FAULTADDR set, each carries that address, and a
  hang with no fault reports one there (so the runtime's on_device_hang report can be checked without a faulting kernel)."""
  if (va:=emu_fault_addr()) is None: return gpu.faults
  if not gpu.faults: return [Fault(va, nv.NV_PFAULT_FAULT_TYPE_PTE, nv.NV_PFAULT_ACCESS_TYPE_VIRT_READ, "MOCKGPU_EMU_FAULTADDR")]
  return [Fault(va, f.fault_type, f.access_type, f.where) for f in gpu.faults]
