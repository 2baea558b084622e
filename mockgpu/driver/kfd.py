"""The amdkfd kernel driver (/dev/kfd) and the amdgpu render nodes (/dev/dri/renderD*), for tinygrad's KFD interface.

One KFD process per mock machine. ioctls are decoded with tinygrad's kfd/amdgpu_drm autogen structs (matched on the
ioctl number, the size checked against the struct) and follow the kernel's semantics and errnos: buffer objects in
VRAM (per-GPU heap with the board's 24 GiB, ENOMEM past it), GTT (a process heap) and user pointers; mapping a buffer
to a GPU adds it to that GPU's AddressSpace; events with the signal page, GPU interrupts (RELEASE_MEM INT_SEL, SDMA
TRAP) that signal the event whose slot the GPU wrote, and the process-wide memory and hardware exception events that
a GPU fault fires. WAIT_EVENTS runs the machine (system.kick) first.

Faults: a faulted queue stays stopped (a GPU page fault evicts all the process's queues on that GPU, as the kernel
does) and every memory- or hardware-exception event of the process reports it, so tinygrad's device goes into its
error state (KFD devices cannot recover). The mock itself stays healthy: the other GPUs, and any new process, work.
"""
from __future__ import annotations
import ctypes, errno, functools, os, time
from tinygrad.runtime.autogen import kfd, amdgpu_drm, hsa
from mockgpu import config, events
from mockgpu.driver import amd_sysfs
from mockgpu.boards import selected_amd_board
from mockgpu.driver.uaccess import check_user, copy_from_user, copy_to_user
from mockgpu.emulators.amd_gpu import AMDGPU, Pool, gpu_clock
from mockgpu.hostmem import PAGE, SharedMemory, round_page
from mockgpu.errors import GPUPageFault, UnsupportedIoctl
from mockgpu.vfs import Handle

from mockgpu import log

def _ioctl_table(module, base:str) -> dict[int, tuple[str, type|None]]:
  """ioctl number -> (name, argument struct), from the autogen module's _IOW/_IOR/_IOWR partials."""
  out:dict[int, tuple[str, type|None]] = {}
  for name, v in vars(module).items():
    if isinstance(v, functools.partial) and v.func.__name__ == "_do_ioctl" and v.args[1] == ord(base): out.setdefault(v.args[2], (name, v.args[3]))
  return out

KFD_IOCTLS, DRM_IOCTLS = _ioctl_table(kfd, "K"), _ioctl_table(amdgpu_drm, "d")
def ioctl_nr(ioc:functools.partial) -> int: return ioc.args[2]  # an autogen _IOWR(base, nr, struct) partial's number
MMAP_TYPE_SHIFT, MMAP_GPU_ID_SHIFT = 62, 46
MMAP_TYPE_DOORBELL, MMAP_TYPE_EVENTS = 3 << MMAP_TYPE_SHIFT, 2 << MMAP_TYPE_SHIFT
UNSIGNALED = 0xffffffffffffffff
FIRST_NONSIGNAL_EVENT_ID = 0x40000000
EVENT_PAGE_SIZE = kfd.KFD_SIGNAL_EVENT_LIMIT * 8
BO_MMAP_BASE = {"vram": 1 << 44, "gtt": 2 << 44}  # DRM fake offsets of the render-node mmaps, one range per heap
GTT_SIZE = 64 << 30
INFINITE = 0xffffffff
WAIT_SLICE_S = 0.02  # nothing can progress while the only thread waits in WAIT_EVENTS: give up after this, not the full timeout
DOMAINS = {kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM: "vram", kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT: "gtt", kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR: "userptr",
           kfd.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL: "doorbell", kfd.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP: "mmio_remap"}
# AMDGPU_INFO_DEV_INFO's family, which the kernel derives from the GC IP major version (AMDGPU_FAMILY_AI for gfx9,
# GC_11_0_0 for gfx11, GC_12_0_0 = 152 for gfx12: amdgpu_drm.h, newer than tinygrad's autogen)
DRM_FAMILY = {9: amdgpu_drm.AMDGPU_FAMILY_AI, 11: amdgpu_drm.AMDGPU_FAMILY_GC_11_0_0, 12: 152}

def _err(code:int, msg:str) -> OSError: return OSError(code, f"{os.strerror(code)}: {msg}")

class BO:
  """A KFD buffer object."""
  def __init__(self, handle:int, gpu:AMDGPU, va:int, size:int, domain:str, pool:Pool|None, offset:int, host:int, mmap_offset:int):
    self.handle, self.gpu, self.va, self.size, self.domain = handle, gpu, va, size, domain
    self.pool, self.offset, self.host, self.mmap_offset = pool, offset, host, mmap_offset
    self.mapped_on:set[AMDGPU] = set()
  @property
  def map_size(self) -> int: return self.size if self.domain == "userptr" else round_page(self.size)

class Event:
  def __init__(self, event_id:int, event_type:int, auto_reset:bool):
    self.id, self.type, self.auto_reset, self.signaled = event_id, event_type, auto_reset, False
    self.faulted = False   # a real VM fault signalled it (sticky, as the evicted queues are)
    self.memory_exception_data = kfd.struct_kfd_hsa_memory_exception_data()
    self.hw_exception_data = kfd.struct_kfd_hsa_hw_exception_data()
  @property
  def is_signal(self) -> bool: return self.type in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT)

class KFD:
  """The process's view of amdkfd: its GPUs, buffer objects, events and queues, on `machine` (system.System), whose
  RDNA executor each GPU is built with."""
  def __init__(self, machine, count:int):
    self.machine, self.board = machine, selected_amd_board()  # every mock AMD GPU of the process is this board
    self.gpus = [AMDGPU(i, amd_sysfs.gpu_id(i), amd_sysfs.gpu_properties(i, self.board), self.board, machine, machine.rdna)
                 for i in range(count)]
    for gpu in self.gpus: gpu.on_interrupt, gpu.on_fault = self._interrupt, self._fault
    self.gtt = Pool("mockgpu-gtt", GTT_SIZE)
    self.bos:dict[int, BO] = {}
    self.bo_at:dict[tuple[AMDGPU, int], BO] = {}  # (render node's GPU, mmap offset) -> VRAM/GTT buffer object
    self.events:dict[int, Event] = {}
    self.signal_page:tuple[SharedMemory, int, int]|None = None  # (memory, offset, size)
    self.signal_handle = 0
    self.vms:dict[AMDGPU, int] = {}  # gpu -> render fd whose VM this process uses
    self.renders:dict[int, RenderHandle] = {}  # open render-node fds
    self.queues:dict[int, tuple[AMDGPU, object]] = {}
    self.doorbell_slots:dict[AMDGPU, set[int]] = {g: set() for g in self.gpus}
    self.next_handle = 1
    self.runtime_enabled = False
    # the ioctls modelled, by their header names (amdkfd's amdkfd_ioctls[]): any other KFD ioctl is UnsupportedIoctl
    self.ioctls = {
      kfd.AMDKFD_IOC_GET_VERSION: self._get_version, kfd.AMDKFD_IOC_ACQUIRE_VM: self._acquire_vm,
      kfd.AMDKFD_IOC_RUNTIME_ENABLE: self._runtime_enable, kfd.AMDKFD_IOC_GET_CLOCK_COUNTERS: self._get_clock_counters,
      kfd.AMDKFD_IOC_AVAILABLE_MEMORY: self._available_memory,
      kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: self._alloc_memory_of_gpu, kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU: self._free_memory_of_gpu,
      kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU: self._map_memory_to_gpu, kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: self._unmap_memory_from_gpu,
      kfd.AMDKFD_IOC_CREATE_QUEUE: self._create_queue, kfd.AMDKFD_IOC_DESTROY_QUEUE: self._destroy_queue,
      kfd.AMDKFD_IOC_CREATE_EVENT: self._create_event, kfd.AMDKFD_IOC_DESTROY_EVENT: self._destroy_event,
      kfd.AMDKFD_IOC_SET_EVENT: self._set_event, kfd.AMDKFD_IOC_RESET_EVENT: self._reset_event,
      kfd.AMDKFD_IOC_WAIT_EVENTS: self._wait_events,
    }
    self._by_nr = {ioctl_nr(ioc): fn for ioc, fn in self.ioctls.items()}

  def gpu(self, gpu_id:int, what:str) -> AMDGPU:
    for g in self.gpus:
      if g.gpu_id == gpu_id: return g
    raise _err(errno.EINVAL, f"{what}: no GPU with gpu_id 0x{gpu_id:x}")

  def gpu_with_vm(self, gpu_id:int, what:str) -> AMDGPU:
    if (g:=self.gpu(gpu_id, what)) not in self.vms: raise _err(errno.EINVAL, f"{what}: gpu_id 0x{gpu_id:x} has no VM (AMDKFD_IOC_ACQUIRE_VM first)")
    return g

  # *** ioctl dispatch ***
  def ioctl(self, request:int, arg) -> int:
    nr, size = request & 0xff, (request >> 16) & 0x3fff
    if (request >> 8) & 0xff != ord("K") or nr not in KFD_IOCTLS:
      raise _err(errno.EINVAL, f"/dev/kfd: no such KFD ioctl 0x{request:x} (nr 0x{nr:02x})")
    name, struct = KFD_IOCTLS[nr]
    if (handler:=self._by_nr.get(nr)) is None:
      raise UnsupportedIoctl(f"/dev/kfd: {name} (ioctl nr 0x{nr:02x}) is not modelled by mockgpu")
    if struct is not None and (size != ctypes.sizeof(struct) or not isinstance(arg, struct)):
      raise _err(errno.EINVAL, f"/dev/kfd: {name} with a {size}-byte argument, expected struct {struct.__name__}")
    events.ioctl("kfd", name, arg, lambda: handler(arg), "/dev/kfd")
    return 0

  def _get_version(self, a):
    a.major_version, a.minor_version = kfd.KFD_IOCTL_MAJOR_VERSION, kfd.KFD_IOCTL_MINOR_VERSION

  def _acquire_vm(self, a):
    gpu = self.gpu(a.gpu_id, "ACQUIRE_VM")
    if (render:=self.renders.get(a.drm_fd)) is None: raise _err(errno.EBADF, f"ACQUIRE_VM: fd {a.drm_fd} is not an open render node")
    if render.gpu is not gpu: raise _err(errno.EINVAL, f"ACQUIRE_VM: fd {a.drm_fd} is {render.path}, not the node of gpu_id 0x{a.gpu_id:x}")
    if self.vms.get(gpu, a.drm_fd) != a.drm_fd: raise _err(errno.EBUSY, f"ACQUIRE_VM: gpu_id 0x{a.gpu_id:x} already uses another fd's VM")
    self.vms[gpu] = a.drm_fd

  def _runtime_enable(self, a):
    enable = bool(a.mode_mask & kfd.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK)
    if enable and self.runtime_enabled: raise _err(errno.EBUSY, "RUNTIME_ENABLE: the runtime is already enabled")
    self.runtime_enabled, a.capabilities_mask = enable, 0  # no debugger capabilities

  def _get_clock_counters(self, a):
    self.gpu(a.gpu_id, "GET_CLOCK_COUNTERS")
    a.gpu_clock_counter, a.cpu_clock_counter = gpu_clock(), time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    a.system_clock_counter, a.system_clock_freq = time.clock_gettime_ns(time.CLOCK_BOOTTIME), 1_000_000_000

  def _available_memory(self, a):
    gpu = self.gpu(a.gpu_id, "AVAILABLE_MEMORY")
    a.available = gpu.vram.size - gpu.vram.used

  # *** memory ***
  def _alloc_memory_of_gpu(self, a):
    gpu = self.gpu_with_vm(a.gpu_id, "ALLOC_MEMORY_OF_GPU")
    domains = [d for bit, d in DOMAINS.items() if a.flags & bit]
    if len(domains) != 1: raise _err(errno.EINVAL, f"ALLOC_MEMORY_OF_GPU: flags 0x{a.flags:x} name {len(domains)} memory domains, need exactly one")
    domain, handle = domains[0], (gpu.gpu_id << 32) | self.next_handle
    if a.size == 0 or a.va_addr == 0 or (a.va_addr % PAGE and domain != "userptr"):
      raise _err(errno.EINVAL, f"ALLOC_MEMORY_OF_GPU: va 0x{a.va_addr:x} size 0x{a.size:x}")
    if domain in ("vram", "gtt"):
      pool = gpu.vram if domain == "vram" else self.gtt
      offset = pool.alloc(a.size)
      bo = BO(handle, gpu, a.va_addr, a.size, domain, pool, offset, pool.mem.base + offset, BO_MMAP_BASE[domain] + offset)
    elif domain == "userptr":
      if a.mmap_offset == 0: raise _err(errno.EINVAL, "ALLOC_MEMORY_OF_GPU: USERPTR without a user address (mmap_offset)")
      check_user(a.mmap_offset, a.size, "ALLOC_MEMORY_OF_GPU USERPTR")  # the kernel pins the pages: EFAULT if they are not there
      bo = BO(handle, gpu, a.va_addr, a.size, domain, None, 0, a.mmap_offset, 0)
    elif domain == "doorbell":
      if a.size > gpu.doorbells.size: raise _err(errno.EINVAL, f"ALLOC_MEMORY_OF_GPU: doorbell BO of 0x{a.size:x} bytes")
      bo = BO(handle, gpu, a.va_addr, a.size, domain, None, 0, gpu.doorbells.base, MMAP_TYPE_DOORBELL | (gpu.gpu_id << MMAP_GPU_ID_SHIFT))
    else: raise UnsupportedIoctl("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU with KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP is not modelled by mockgpu")
    self.next_handle += 1
    self.bos[handle] = bo
    if bo.pool is not None: self.bo_at[(gpu, bo.mmap_offset)] = bo
    a.handle, a.mmap_offset = handle, bo.mmap_offset

  def bo(self, handle:int, what:str) -> BO:
    if (bo:=self.bos.get(handle)) is None: raise _err(errno.EINVAL, f"{what}: no buffer object with handle 0x{handle:x}")
    return bo

  def _free_memory_of_gpu(self, a):
    bo = self.bo(a.handle, "FREE_MEMORY_OF_GPU")
    if a.handle == self.signal_handle: raise _err(errno.EPERM, "FREE_MEMORY_OF_GPU: the event page cannot be freed")
    if bo.mapped_on: raise _err(errno.EBUSY, f"FREE_MEMORY_OF_GPU: handle 0x{a.handle:x} is still mapped on {sorted(g.name for g in bo.mapped_on)}")
    if bo.pool is not None:
      bo.pool.free(bo.offset, bo.size)
      del self.bo_at[(bo.gpu, bo.mmap_offset)]
    del self.bos[a.handle]

  def _device_ids(self, a, what:str) -> list[int]:
    if a.n_devices == 0 or a.device_ids_array_ptr == 0: raise _err(errno.EINVAL, f"{what}: empty device list")
    if a.n_success > a.n_devices: raise _err(errno.EINVAL, f"{what}: n_success {a.n_success} > n_devices {a.n_devices}")
    if a.n_devices > 1 << 20: raise _err(errno.ENOMEM, f"{what}: no kernel buffer for {a.n_devices} device ids")  # kmalloc_array fails
    return list((ctypes.c_uint32 * a.n_devices).from_buffer_copy(copy_from_user(a.device_ids_array_ptr, 4 * a.n_devices,
                                                                                f"{what} device_ids_array_ptr")))

  def _map_memory_to_gpu(self, a):
    bo, ids = self.bo(a.handle, "MAP_MEMORY_TO_GPU"), self._device_ids(a, "MAP_MEMORY_TO_GPU")
    for i in range(a.n_success, a.n_devices):  # like the kernel, resume after the devices an earlier call mapped
      gpu = self.gpu_with_vm(ids[i], "MAP_MEMORY_TO_GPU")
      if gpu not in bo.mapped_on:
        try: gpu.mem.map(bo.va, bo.map_size, host=bo.host, tag=bo)
        except ValueError as e: raise _err(errno.EINVAL, f"MAP_MEMORY_TO_GPU: {e}") from None
        bo.mapped_on.add(gpu)
      a.n_success = i + 1

  def _unmap_memory_from_gpu(self, a):
    bo, ids = self.bo(a.handle, "UNMAP_MEMORY_FROM_GPU"), self._device_ids(a, "UNMAP_MEMORY_FROM_GPU")
    for i in range(a.n_success, a.n_devices):
      gpu = self.gpu(ids[i], "UNMAP_MEMORY_FROM_GPU")
      if gpu in bo.mapped_on:
        gpu.mem.unmap(bo.va)
        bo.mapped_on.discard(gpu)
      a.n_success = i + 1

  # *** queues ***
  def _create_queue(self, a):
    from mockgpu.emulators.pm4 import AQLQueue, PM4Queue
    from mockgpu.emulators.sdma import SDMAQueue
    gpu = self.gpu_with_vm(a.gpu_id, "CREATE_QUEUE")
    kinds = {kfd.KFD_IOC_QUEUE_TYPE_COMPUTE: PM4Queue, kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: AQLQueue, kfd.KFD_IOC_QUEUE_TYPE_SDMA: SDMAQueue,
             kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI: SDMAQueue, kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: SDMAQueue}
    if (cls:=kinds.get(a.queue_type)) is None: raise _err(errno.EINVAL, f"CREATE_QUEUE: unknown queue_type {a.queue_type}")
    if (a.queue_percentage & 0xff) > kfd.KFD_MAX_QUEUE_PERCENTAGE or a.queue_priority > kfd.KFD_MAX_QUEUE_PRIORITY:
      raise _err(errno.EINVAL, f"CREATE_QUEUE: queue_percentage {a.queue_percentage & 0xff} / queue_priority {a.queue_priority}")
    if a.ring_size < 0x100 or a.ring_size & (a.ring_size - 1):
      raise _err(errno.EINVAL, f"CREATE_QUEUE: ring_size 0x{a.ring_size:x} is not a power of 2 of at least 256 bytes")
    buffers = [("ring", a.ring_base_address, a.ring_size), ("read pointer", a.read_pointer_address, 8), ("write pointer", a.write_pointer_address, 8)]
    if cls is AQLQueue:  # the packet processor reads the runtime's amd_queue_t around the read pointer (read_dispatch_id)
      buffers.append(("amd_queue_t", a.read_pointer_address - hsa.amd_queue_t.read_dispatch_id.offset, ctypes.sizeof(hsa.amd_queue_t)))
    for what, va, size in buffers:
      if va % (4 if what == "ring" else 8) or not gpu.mem.is_mapped(va, size):
        raise _err(errno.EINVAL, f"CREATE_QUEUE: the {what} at 0x{va:x} is not mapped on {gpu.name}")
    sdma = cls is SDMAQueue
    limit = gpu.props["num_sdma_engines"] * gpu.props["num_sdma_queues_per_engine"] if sdma else 32
    if sum(isinstance(q, cls) for q in gpu.queues.values()) >= limit: raise _err(errno.ENOMEM, f"CREATE_QUEUE: {gpu.name} has no free queue")
    queue_id = next(i for i in range(len(self.queues) + 1) if i not in self.queues)
    slot = next(i for i in range(gpu.doorbells.size // 8) if i not in self.doorbell_slots[gpu])
    queue = cls(gpu, queue_id, a.ring_base_address, a.ring_size, a.read_pointer_address, a.write_pointer_address, **self._xccs(gpu, cls, a))
    self.doorbell_slots[gpu].add(slot)
    self.queues[queue_id] = (gpu, queue)
    gpu.add_queue(queue, slot * 8)
    a.queue_id, a.doorbell_offset = queue_id, MMAP_TYPE_DOORBELL | (gpu.gpu_id << MMAP_GPU_ID_SHIFT) | (slot * 8)

  @staticmethod
  def _xccs(gpu:AMDGPU, cls, a) -> dict:
    """The XCCs a compute queue runs on. KFD loads its MQD on every XCC of the partition (one partition, SPX): an AQL
    queue runs on all of them; a PM4 queue on the target XCC that bits 15:8 of queue_percentage name (pm4_target_xcc)."""
    from mockgpu.emulators.pm4 import AQLQueue, PM4Queue
    if not issubclass(cls, PM4Queue): return {}
    if cls is AQLQueue: return {"xccs": tuple(range(gpu.board.num_xcc))}
    if (target:=(a.queue_percentage >> 8) & 0xff) >= gpu.board.num_xcc:
      raise _err(errno.EINVAL, f"CREATE_QUEUE: pm4_target_xcc {target} (queue_percentage bits 15:8), {gpu.name} has {gpu.board.num_xcc} XCCs")
    return {"xccs": (target,)}

  def _destroy_queue(self, a):
    if (entry:=self.queues.pop(a.queue_id, None)) is None: raise _err(errno.EINVAL, f"DESTROY_QUEUE: no queue {a.queue_id}")
    gpu, queue = entry
    self.doorbell_slots[gpu] -= {off // 8 for off, q in gpu.doorbell_queues.items() if q is queue}
    gpu.remove_queue(a.queue_id)

  # *** events ***
  def _create_event(self, a):
    if a.event_page_offset and self.signal_page is None: self._set_event_page(a.event_page_offset)
    elif a.event_page_offset: raise _err(errno.EINVAL, "CREATE_EVENT: the event page is already set")
    ev_id = self._new_event_id(a.event_type)
    ev = self.events[ev_id] = Event(ev_id, a.event_type, bool(a.auto_reset))
    a.event_id, a.event_trigger_data = ev_id, ev_id
    if ev.is_signal:
      if self.signal_page is None: self.signal_page = (SharedMemory("mockgpu-kfd-events", EVENT_PAGE_SIZE), 0, EVENT_PAGE_SIZE)
      self._slots()[ev_id] = UNSIGNALED
      a.event_slot_index, a.event_page_offset = ev_id, MMAP_TYPE_EVENTS

  def _set_event_page(self, handle:int):
    bo = self.bo(handle, "CREATE_EVENT event page")
    if bo.domain != "gtt": raise _err(errno.EINVAL, f"CREATE_EVENT: the event page must be a GTT buffer, not {bo.domain}")
    if bo.size < EVENT_PAGE_SIZE: raise _err(errno.EINVAL, f"CREATE_EVENT: event page of 0x{bo.size:x} bytes, need 0x{EVENT_PAGE_SIZE:x}")
    self.signal_page, self.signal_handle = (bo.pool.mem, bo.offset, bo.size), handle
    self._slots()[:] = [UNSIGNALED] * kfd.KFD_SIGNAL_EVENT_LIMIT

  def _slots(self):
    mem, off, _ = self.signal_page
    return (ctypes.c_uint64 * kfd.KFD_SIGNAL_EVENT_LIMIT).from_address(mem.base + off)

  def _new_event_id(self, event_type:int) -> int:
    signal = event_type in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT)
    first, last = (0, kfd.KFD_SIGNAL_EVENT_LIMIT) if signal else (FIRST_NONSIGNAL_EVENT_ID, 0x7fffffff)
    ev_id = next((i for i in range(first, last) if i not in self.events), None)
    if ev_id is None: raise _err(errno.ENOSPC, "CREATE_EVENT: no free event slot")
    return ev_id

  def event(self, ev_id:int, what:str) -> Event:
    if (ev:=self.events.get(ev_id)) is None: raise _err(errno.EINVAL, f"{what}: no event {ev_id}")
    return ev

  def _destroy_event(self, a):
    ev = self.event(a.event_id, "DESTROY_EVENT")
    if ev.is_signal: self._slots()[ev.id] = UNSIGNALED
    del self.events[a.event_id]

  def _set_event(self, a):
    if not (ev:=self.event(a.event_id, "SET_EVENT")).is_signal: raise _err(errno.EINVAL, f"SET_EVENT: event {a.event_id} is not a signal event")
    ev.signaled = True

  def _reset_event(self, a): self.event(a.event_id, "RESET_EVENT").signaled = False

  def _wait_events(self, a):
    if a.num_events == 0 or a.num_events > kfd.KFD_SIGNAL_EVENT_LIMIT or a.events_ptr == 0:
      raise _err(errno.EINVAL, f"WAIT_EVENTS: {a.num_events} events at 0x{a.events_ptr:x}")
    evs = self._waited_events(a)
    activated = [False] * len(evs)
    deadline = time.monotonic() + min(WAIT_SLICE_S, (a.timeout if a.timeout != INFINITE else 1 << 30) / 1000)
    emulated = self._emulated_fault()
    while True:
      self.machine.kick()
      for i, ev in enumerate(evs):
        if activated[i]: continue
        if ev.signaled: activated[i], ev.signaled = True, not ev.auto_reset  # a wait consumes an auto-reset signal
        elif emulated is not None and ev.type == kfd.KFD_IOC_EVENT_MEMORY: activated[i] = True   # reported, never latched
      if (all if a.wait_for_all else any)(activated) or time.monotonic() >= deadline: break
      time.sleep(0.001)
    done = (all if a.wait_for_all else any)(activated)
    a.wait_result = kfd.KFD_IOC_WAIT_RESULT_COMPLETE if done else kfd.KFD_IOC_WAIT_RESULT_TIMEOUT
    for i, (ev, act) in enumerate(zip(evs, activated)):
      if ev.type == kfd.KFD_IOC_EVENT_MEMORY and (act or not ev.faulted):
        # an emulated report lasts while MOCKGPU_EMU_FAULTADDR is set: a later wait without it clears the entry
        report = ev.memory_exception_data if ev.faulted else emulated if act and emulated is not None \
          else kfd.struct_kfd_hsa_memory_exception_data()
        self._copy_out(a, i, "memory_exception_data", report)
      if act and ev.type == kfd.KFD_IOC_EVENT_HW_EXCEPTION: self._copy_out(a, i, "hw_exception_data", ev.hw_exception_data)

  def _waited_events(self, a) -> list[Event]:
    """The events array, copied in an event at a time as kfd_wait_on_events does (EFAULT, or EINVAL for an unknown
    id, at the first bad one). Never a live view: the array is written only where a report is copied out (_copy_out),
    never probed by writing back what was read, which would put stale bytes over memory that changed meanwhile."""
    size, evs = ctypes.sizeof(kfd.struct_kfd_event_data), []
    for i in range(a.num_events):
      raw = copy_from_user(a.events_ptr + i * size, size, f"WAIT_EVENTS events_ptr ({a.num_events} events)")
      evs.append(self.event(kfd.struct_kfd_event_data.from_buffer_copy(raw).event_id, "WAIT_EVENTS"))
    return evs

  @staticmethod
  def _copy_out(a, i:int, field:str, report):
    """copy_signaled_event_data: one event's exception report to its entry of the user's array (EFAULT)."""
    at = a.events_ptr + i * ctypes.sizeof(kfd.struct_kfd_event_data) + getattr(kfd.struct_kfd_event_data, field).offset
    copy_to_user(at, bytes(report), f"WAIT_EVENTS events_ptr ({a.num_events} events)")

  def _emulated_fault(self):
    """MOCKGPU_EMU_FAULTADDR set: the report of a fault at that address, which each wait on a memory-exception event
    returns while the variable is set (as tinygrad's in-tree mock does, so the runtime's hang report, on_device_hang,
    can be checked without a faulting kernel). Nothing is latched: the event is not signalled, and once the variable
    is unset later waits see no fault."""
    if (va:=config.emu_fault_addr()) is None or not self.gpus: return None
    return self._memory_exception(self.gpus[0], va)

  @staticmethod
  def _memory_exception(gpu:AMDGPU, va:int):
    data = kfd.struct_kfd_hsa_memory_exception_data(va=va, gpu_id=gpu.gpu_id, ErrorType=kfd.KFD_MEM_ERR_NO_RAS)
    data.failure.NotPresent = 1
    return data

  # *** interrupts and faults, from the GPU models ***
  def _interrupt(self, gpu:AMDGPU, ctxid:int, valid_bits:int):
    """kfd_signal_event_interrupt: the event named by the context id if its slot was written, else every written slot."""
    if self.signal_page is None: return
    slots, ev_id = self._slots(), ctxid & ((1 << valid_bits) - 1)
    if ev_id < kfd.KFD_SIGNAL_EVENT_LIMIT and slots[ev_id] != UNSIGNALED and (ev:=self.events.get(ev_id)) is not None and ev.is_signal:
      candidates = [ev]
    else: candidates = [ev for ev in self.events.values() if ev.is_signal and slots[ev.id] != UNSIGNALED]
    for ev in candidates:
      slots[ev.id] = UNSIGNALED  # the kernel acknowledges the slot when it signals the event
      ev.signaled = True

  def _fault(self, gpu:AMDGPU, queue, err:Exception):
    if isinstance(err, GPUPageFault):
      for q in gpu.queues.values():  # a VM fault evicts all of the process's queues on that GPU (kfd_process_vm_fault)
        if q.error is None: q.error = err
      data = self._memory_exception(gpu, va if (va:=config.emu_fault_addr()) is not None else err.va & ~(PAGE - 1))
      for ev in self.events.values():
        if ev.type == kfd.KFD_IOC_EVENT_MEMORY: ev.memory_exception_data, ev.signaled, ev.faulted = data, True, True
    else:
      data = kfd.struct_kfd_hsa_hw_exception_data(reset_type=kfd.KFD_HW_EXCEPTION_PER_ENGINE_RESET, reset_cause=kfd.KFD_HW_EXCEPTION_GPU_HANG,
                                                  memory_lost=0, gpu_id=gpu.gpu_id)
      for ev in self.events.values():
        if ev.type == kfd.KFD_IOC_EVENT_HW_EXCEPTION: ev.hw_exception_data, ev.signaled = data, True

  # *** /dev/kfd mmap: doorbells and the signal page ***
  def mmap(self, start:int, size:int, prot:int, flags:int, offset:int) -> int:
    kind = offset & (3 << MMAP_TYPE_SHIFT)
    if kind == MMAP_TYPE_DOORBELL:
      gpu = self.gpu((offset >> MMAP_GPU_ID_SHIFT) & 0xffff, "mmap of doorbells")
      if size != gpu.doorbells.size: raise _err(errno.EINVAL, f"/dev/kfd: doorbell mmap of 0x{size:x} bytes, the region is 0x{gpu.doorbells.size:x}")
      addr = gpu.doorbells.map_at(start, size, prot, flags, 0)
      self.machine.watch(addr, size, lambda at, value, base=addr, gpu=gpu: gpu.ring_doorbell(at - base, value))
      return addr
    if kind == MMAP_TYPE_EVENTS:
      # kfd_event_mmap: at most the signal page's KFD_SIGNAL_EVENT_LIMIT slots (its page order), whatever the size of a
      # buffer the runtime gave for the page (_set_event_page: at least that), checked before the page is looked up
      if size > EVENT_PAGE_SIZE: raise _err(errno.EINVAL, f"/dev/kfd: event page mmap of 0x{size:x} bytes, the page is 0x{EVENT_PAGE_SIZE:x}")
      if self.signal_page is None: raise _err(errno.EINVAL, "/dev/kfd: mmap of the event page before any signal event exists")
      mem, off, _ = self.signal_page
      return mem.map_at(start, size, prot, flags, off)
    raise UnsupportedIoctl(f"/dev/kfd: mmap at offset 0x{offset:x} (MMIO / reserved memory) is not modelled by mockgpu")

  # *** render nodes ***
  def render_mmap(self, gpu:AMDGPU, start:int, size:int, prot:int, flags:int, offset:int) -> int:
    if (bo:=self.bo_at.get((gpu, offset))) is None:
      raise _err(errno.EINVAL, f"renderD{gpu.props['drm_render_minor']}: no buffer object at offset 0x{offset:x}")
    if size > round_page(bo.size): raise _err(errno.EINVAL, f"mmap of 0x{size:x} bytes of a 0x{bo.size:x}-byte buffer object")
    return bo.pool.mem.map_at(start, size, prot, flags, bo.offset)

  def drm_ioctl(self, gpu:AMDGPU, request:int, arg) -> int:
    nr = request & 0xff
    name = DRM_IOCTLS.get(nr, (f"DRM ioctl 0x{request:x}", None))[0] if (request >> 8) & 0xff == ord("d") else f"ioctl 0x{request:x}"
    if name != "DRM_IOCTL_AMDGPU_INFO": raise UnsupportedIoctl(f"renderD{gpu.props['drm_render_minor']}: {name} is not modelled by mockgpu")
    return events.ioctl("drm", name, arg, lambda: self._amdgpu_info(gpu, arg), gpu.name)

  def _amdgpu_info(self, gpu:AMDGPU, arg) -> int:
    if arg.query != amdgpu_drm.AMDGPU_INFO_DEV_INFO:
      raise UnsupportedIoctl(f"renderD{gpu.props['drm_render_minor']}: DRM_IOCTL_AMDGPU_INFO query 0x{arg.query:x} is not modelled "
                             "(only AMDGPU_INFO_DEV_INFO)")
    info = self.dev_info(gpu)
    if arg.return_pointer == 0: raise _err(errno.EFAULT, "DRM_IOCTL_AMDGPU_INFO: no return pointer")
    copy_to_user(arg.return_pointer, bytes(info)[:arg.return_size], "DRM_IOCTL_AMDGPU_INFO return_pointer")
    return 0

  @staticmethod
  def dev_info(gpu:AMDGPU) -> amdgpu_drm.struct_drm_amdgpu_info_device:
    t, p = gpu.board, gpu.props
    info = amdgpu_drm.struct_drm_amdgpu_info_device(device_id=t.device_id, chip_rev=0, external_rev=0x20, pci_rev=t.revision,
      family=DRM_FAMILY[t.gc_version[0]], num_shader_engines=t.se, num_shader_arrays_per_engine=t.sa_per_se, gpu_counter_freq=100_000,
      max_engine_clock=t.max_engine_clk * 1000, max_memory_clock=t.mem_clk_max * 1000, cu_active_number=p["simd_count"] // p["simd_per_cu"],
      cu_ao_mask=0, num_rb_pipes=24, wave_front_size=t.wave_front_size, num_cu_per_sh=t.cu_per_sa,
      vram_type=getattr(amdgpu_drm, f"AMDGPU_VRAM_TYPE_{t.vram_type}"),
      vram_bit_width=t.vram_width, num_tcc_blocks=24, num_shader_visible_vgprs=1536, virtual_address_max=1 << 47,
      virtual_address_alignment=PAGE, gart_page_size=PAGE, pte_fragment_size=2 << 20)
    cus = (1 << t.cu_per_sa) - 1
    for se in range(t.se):  # the kernel's layout: 4 rows of shader engines, two shader-array columns per row
      for sa in range(t.sa_per_se): info.cu_bitmap[se % 4][sa + (se // 4) * 2] = cus
    return info

class KFDHandle(Handle):
  def __init__(self, driver:KFD, path:str, flags:int):
    super().__init__(path, flags)
    self.driver = driver
  def ioctl(self, request, arg): return self.driver.ioctl(request, arg)
  def mmap(self, start, size, prot, flags, offset): return self.driver.mmap(start, size, prot, flags, offset)

class RenderHandle(Handle):
  def __init__(self, driver:KFD, gpu:AMDGPU, path:str, flags:int):
    super().__init__(path, flags)
    self.driver, self.gpu = driver, gpu
    driver.renders[self.fd] = self
  def ioctl(self, request, arg): return self.driver.drm_ioctl(self.gpu, request, arg)
  def mmap(self, start, size, prot, flags, offset): return self.driver.render_mmap(self.gpu, start, size, prot, flags, offset)
  def close(self):
    if self.driver.vms.get(self.gpu) != self.fd: self.driver.renders.pop(self.fd, None)  # a VM keeps its node open, as in the kernel

_toolchain_checked = False
def _open_kfd(driver:KFD, path:str, flags:int) -> KFDHandle:
  """Opening /dev/kfd means tinygrad is bringing up an AMD device: say now, not at the first compile, if no AMD
  compiler can be found, and what to install."""
  global _toolchain_checked
  if not _toolchain_checked:
    _toolchain_checked = True
    from mockgpu.compiler import toolchain
    if (problem:=toolchain.amd_problem()) is not None: log.warning("DEV=MOCK+AMD cannot compile kernels here: %s", problem)
  return KFDHandle(driver, path, flags)

def install(system):
  """Register /dev/kfd, the render nodes and the sysfs topology on the machine `system` (system.System)."""
  driver = KFD(system, config.gpu_count())
  system.devices["amd"] = driver.gpus
  system.vfs.claim("/dev/kfd")
  system.vfs.add_device("/dev/kfd", lambda path, flags: _open_kfd(driver, path, flags))
  for gpu in driver.gpus:
    path = f"/dev/dri/renderD{gpu.props['drm_render_minor']}"
    system.vfs.claim(path)
    system.vfs.add_device(path, lambda p, flags, gpu=gpu: RenderHandle(driver, gpu, p, flags))
  amd_sysfs.install(system.vfs, len(driver.gpus), lambda i: driver.gpus[i].vram.used, driver.board)
