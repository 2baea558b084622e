"""A KFD client on a test machine: /dev/kfd ioctls (call, request), buffers, queues and PM4 packet helpers.
(Moved from tests/driver/test_kfd.py so that no test file imports another.)"""
from __future__ import annotations
import ctypes, mmap, os
from tinygrad.runtime.autogen import kfd
from tinygrad.runtime.autogen.am import pm4_nv as pm4
import machines
from mockgpu.hostmem import MAP_FIXED, MAP_NORESERVE, PAGE, host_mmap, round_page
RW = mmap.PROT_READ | mmap.PROT_WRITE
FLAGS = kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | kfd.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE | kfd.KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE

def request(fn, st) -> int:
  idir, base, nr, _ = fn.args
  return (idir << 30) | (ctypes.sizeof(st) << 16) | (base << 8) | nr

def call(fd, fn, **kwargs):
  st = fn.args[3](**kwargs)
  fd.ioctl(request(fn, st), st)
  return st

def pkt3(op, *body) -> list[int]: return [pm4.PACKET3(op, len(body) - 1), *body]
def lohi(x) -> tuple[int, int]: return x & 0xffffffff, x >> 32

class Buffer:
  def __init__(self, va, size, handle): self.va, self.size, self.handle = va, size, handle
  def u32(self): return (ctypes.c_uint32 * (self.size // 4)).from_address(self.va)
  def u64(self): return (ctypes.c_uint64 * (self.size // 8)).from_address(self.va)

def reserve(size:int) -> int:
  """Address space for a buffer of `size` bytes (PROT_NONE, as the runtime reserves a buffer's VA), and one more
  inaccessible page after it that stays so: a copy a test sends past a buffer's end is EFAULT. Without it the end
  abutted whatever the host's mmap had put above the buffer, in some layouts a live heap arena of the process, which
  such a copy (a legal write of user memory, as the kernel's) overwrote: the fuzz worker died of SIGSEGV cases later."""
  return host_mmap(0, round_page(size) + PAGE, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)

class Client:
  """A process's KFD client on `machine` (default: the test's machine, tests/machines.py)."""
  def __init__(self, gpu_index:int=0, machine=None):
    self.sys = machine if machine is not None else machines.machine()
    self.kfd = self.sys.vfs.open("/dev/kfd", os.O_RDWR)
    self.drv = self.kfd.driver
    self.gpu = self.drv.gpus[gpu_index]
    self.render = self.sys.vfs.open(f"/dev/dri/renderD{128 + gpu_index}", os.O_RDWR)
    call(self.kfd, kfd.AMDKFD_IOC_ACQUIRE_VM, drm_fd=self.render.fd, gpu_id=self.gpu.gpu_id)

  def alloc(self, size:int, domain=kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT, map_gpu=True) -> Buffer:
    va = reserve(size)
    if domain == kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR:
      host_mmap(va, size, RW, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS | MAP_FIXED, -1, 0)
      mem = call(self.kfd, kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, va_addr=va, size=size, gpu_id=self.gpu.gpu_id, flags=FLAGS | domain, mmap_offset=va)
    else:
      mem = call(self.kfd, kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, va_addr=va, size=size, gpu_id=self.gpu.gpu_id, flags=FLAGS | domain)
      assert self.render.mmap(va, size, RW, mmap.MAP_SHARED | 0x10, mem.mmap_offset) == va
    if map_gpu: self.map(mem.handle)
    return Buffer(va, size, mem.handle)

  def map(self, handle:int, gpus=None):
    ids = (ctypes.c_uint32 * len(gpus or [self.gpu]))(*[g.gpu_id for g in gpus or [self.gpu]])
    return call(self.kfd, kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU, handle=handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=len(ids))

  def unmap(self, handle:int):
    ids = (ctypes.c_uint32 * 1)(self.gpu.gpu_id)
    return call(self.kfd, kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, handle=handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1)

  def events(self):
    """The event page and one auto-reset signal event, as tinygrad's KFDIface sets them up."""
    self.event_page = self.alloc(0x8000)
    call(self.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_page_offset=self.event_page.handle)
    self.queue_event = call(self.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_type=kfd.KFD_IOC_EVENT_SIGNAL, auto_reset=1)
    self.mem_event = call(self.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_type=kfd.KFD_IOC_EVENT_MEMORY)
    self.hw_event = call(self.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_type=kfd.KFD_IOC_EVENT_HW_EXCEPTION)
    return self

  def wait(self, *events, timeout=0):
    arr = (kfd.struct_kfd_event_data * len(events))(*[kfd.struct_kfd_event_data(event_id=e.event_id) for e in events])
    res = call(self.kfd, kfd.AMDKFD_IOC_WAIT_EVENTS, events_ptr=ctypes.addressof(arr), num_events=len(events), wait_for_all=0, timeout=timeout)
    return res.wait_result, arr

  def queue(self, queue_type=kfd.KFD_IOC_QUEUE_TYPE_COMPUTE, ring_size=0x1000) -> "Queue":
    return Queue(self, queue_type, ring_size)

class Queue:
  """A ring, its read/write pointers and its doorbell, like tinygrad's AMDQueueDesc."""
  def __init__(self, c:Client, queue_type, ring_size):
    # the unit of the read/write pointers: PM4 counts dwords, SDMA bytes, AQL 64-byte packets
    self.c, self.unit = c, {kfd.KFD_IOC_QUEUE_TYPE_SDMA: 1, kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: 64}.get(queue_type, 4)
    self.ring, self.gart = c.alloc(ring_size), c.alloc(0x1000)
    self.desc = call(c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, ring_base_address=self.ring.va, ring_size=ring_size, gpu_id=c.gpu.gpu_id,
                     queue_type=queue_type, queue_percentage=kfd.KFD_MAX_QUEUE_PERCENTAGE, queue_priority=7,
                     write_pointer_address=self.gart.va + 0x38, read_pointer_address=self.gart.va + 0x80)  # where amd_queue_t has them
    self.doorbells = c.kfd.mmap(0, 0x2000, RW, mmap.MAP_SHARED, self.desc.doorbell_offset & ~0x1fff)
    self.put = 0
    self.hw = c.gpu.queues[self.desc.queue_id]

  @property
  def rptr(self) -> int: return self.gart.u64()[0x80 // 8]

  def submit(self, dwords:list[int], ring_doorbell=True):
    ring = self.ring.u32()
    for i, d in enumerate(dwords): ring[(self.put * self.unit // 4 + i) % len(ring)] = d
    self.put += len(dwords) * 4 // self.unit
    self.gart.u64()[0x38 // 8] = self.put
    if ring_doorbell:  # the same path tinygrad's MMIOInterface write takes: the watch callback of the doorbell page
      addr = self.doorbells + (self.desc.doorbell_offset & 0x1fff)
      ctypes.c_uint64.from_address(addr).value = self.put
      self.c.sys.watcher(addr, 8)(addr, self.put)
