"""Fuzz surface: /dev/kfd ioctls with random arguments (every modelled ioctl, unmodelled and unknown numbers, argument
structs of the wrong size), mmaps of /dev/kfd and a render node at random offsets, and DRM_IOCTL_AMDGPU_INFO.

Field values are drawn by the field's name: pointers are symbolic (a mapped buffer or 8 bytes before its end, a user array
that ends right before an unmapped guard page, so a count larger than the array reads past it, an unmapped address, a
small integer, a kernel address; every buffer ends at an inaccessible page, support.kfd_client.reserve, so a copy past
its end is EFAULT and never lands in the worker's own heap), ids and handles are the worker's live ones or random.
What a case creates (buffer objects, queues, events) is torn down after it, so cases stay independent and the
known-good op always has room.
"""
from __future__ import annotations
import ctypes, mmap, os
from tinygrad.runtime.autogen import kfd, amdgpu_drm
from harness import interesting
from userpages import guarded_page, inaccessible
import surface_pm4

NAME = "kfd"
ENV = {"MOCKGPU_COUNT": "2"}
POINTERS = ("buf", "buf_end", "events", "ids", "unmapped", "small", "kernel", 0, "random")
rig = user = None

def _fields(T) -> list[tuple[str, int]]:
  return [(f[0], ctypes.sizeof(f[1])) for f in getattr(T, "_real_fields_", getattr(T, "_fields_", []))
          if not f[0].startswith("pad") and issubclass(f[1], ctypes._SimpleCData)]  # integer fields (nested structs stay zero)

def _value(rng, name:str, size:int):
  bits = 8 * size
  if rng.random() < 0.15: return interesting(rng, bits)
  if "gpu_id" in name: return rng.choice(("gpu0", "gpu0", "gpu1", 0, 0xffff))
  if name.endswith(("_ptr", "_address", "va_addr")) or name == "mmap_offset": return rng.choice(POINTERS)
  if "handle" in name or name == "event_page_offset": return rng.choice(("bo", "bo", "evpage", 0, "random"))
  if name == "event_id": return rng.choice(("event", "event", "mem_event", 0, 1 << 30, "random"))
  if name == "drm_fd": return rng.choice(("render0", "render0", "render1", 0, -1))
  if name in ("num_events", "n_devices", "n_success"): return rng.choice((0, 1, 1, 2, 16, 4096, 4097, 1 << 20))
  if name == "queue_type": return rng.randrange(6)
  if name == "event_type": return rng.randrange(8)
  if name == "flags": return rng.choice((kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT, kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR,
                                         kfd.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, kfd.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)) | rng.getrandbits(4) << 27
  if "size" in name: return rng.choice((0, 1, 0x100, 0x1000, 0x10000, 1 << 20, 1 << 40))
  if name == "timeout": return rng.choice((0, 1, 0xffffffff))
  return rng.getrandbits(bits) if rng.random() < 0.3 else rng.randrange(4)

def generate(rng, n:int) -> list:
  from mockgpu.driver.kfd import KFD, KFD_IOCTLS
  table = sorted(KFD_IOCTLS.items())
  modelled = [e for e in table if hasattr(KFD, "_" + e[1][0].removeprefix("AMDKFD_IOC_").lower())]
  cases = []
  for _ in range(n):
    r = rng.random()
    if r < 0.06: cases.append({"kind": "mmap", "node": rng.choice(("kfd", "render")), "size": rng.choice((0x1000, 0x2000, 0x8000, 1 << 20)),
                               "offset": rng.choice(("doorbell", "events", "bo", interesting(rng, 64)))})
    elif r < 0.1: cases.append({"kind": "drm", "query": rng.choice((amdgpu_drm.AMDGPU_INFO_DEV_INFO,) * 3 + (rng.getrandbits(8),)),
                                "return_pointer": rng.choice(POINTERS), "return_size": rng.choice((0, 8, 0x100, 0x400, 0x10000))})
    else:
      r = rng.random()
      nr, (name, T) = rng.choice(modelled) if r < 0.85 else rng.choice(table) if r < 0.95 else (rng.getrandbits(8), ("random", None))
      fields = {} if T is None else {f: _value(rng, f, size) for f, size in _fields(T)}
      cases.append({"kind": "ioctl", "nr": nr, "name": name, "fields": fields, "size": None if rng.random() > 0.05 else rng.choice((0, 8, 4096)),
                    "magic": ord("K") if rng.random() > 0.02 else ord("F")})
  return cases

def setup():
  global rig, user
  rig = surface_pm4.Rig(kfd.KFD_IOC_QUEUE_TYPE_COMPUTE)
  c = rig.c
  c.render1 = c.sys.vfs.open("/dev/dri/renderD129", os.O_RDWR)
  c.bo = c.alloc(0x2000, map_gpu=False)
  c.evt = c.queue_event
  # two pages, the second unmapped: user arrays end right before it, so a count larger than the array faults
  user = guarded_page()

def _resolve(v, size:int):
  c = rig.c
  if not isinstance(v, str): return v % (1 << 8 * size)
  events_at = user + 0x1000 - ctypes.sizeof(kfd.struct_kfd_event_data)
  table = {"gpu0": c.gpu.gpu_id, "gpu1": c.drv.gpus[1].gpu_id, "buf": rig.data.va, "buf_end": rig.data.va + surface_pm4.DATA_BYTES - 8,
           "events": events_at, "ids": user + 0x1000 - 4, "unmapped": inaccessible(), "small": 0x10, "kernel": 0xffff_8000_0000_0000,
           "random": inaccessible() + 0x5000,
           "bo": c.bo.handle, "evpage": c.event_page.handle, "event": c.evt.event_id, "mem_event": c.mem_event.event_id,
           "render0": c.render.fd, "render1": c.render1.fd}
  return table[v] % (1 << 8 * size)

def _fill_user_arrays():
  """The guarded user arrays: one event (the queue event) and one device id (GPU 0), at the end of the mapped page."""
  ev = kfd.struct_kfd_event_data.from_address(user + 0x1000 - ctypes.sizeof(kfd.struct_kfd_event_data))
  ctypes.memset(ctypes.addressof(ev), 0, ctypes.sizeof(ev))
  ev.event_id = rig.c.evt.event_id
  ctypes.c_uint32.from_address(user + 0x1000 - 4).value = rig.c.gpu.gpu_id

def _cleanup(before):
  """Undo what the case created: queues, events, buffer objects (unmapped first)."""
  drv = rig.c.drv
  queues, events, bos = before
  for qid in set(drv.queues) - queues: drv._destroy_queue(kfd.struct_kfd_ioctl_destroy_queue_args(queue_id=qid))
  for ev_id in set(drv.events) - events: drv._destroy_event(kfd.struct_kfd_ioctl_destroy_event_args(event_id=ev_id))
  for h in set(drv.bos) - bos:
    bo = drv.bos[h]
    for g in list(bo.mapped_on): g.mem.unmap(bo.va)
    bo.mapped_on.clear()
    drv._free_memory_of_gpu(kfd.struct_kfd_ioctl_free_memory_of_gpu_args(handle=h))
  _restore()

def _restore():
  """The worker's own objects a case may have destroyed (its events, its spare buffer object) are made again."""
  from support.kfd_client import call
  c = rig.c
  if c.evt.event_id not in c.drv.events: c.evt = call(c.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_type=kfd.KFD_IOC_EVENT_SIGNAL, auto_reset=1)
  if c.mem_event.event_id not in c.drv.events: c.mem_event = call(c.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_type=kfd.KFD_IOC_EVENT_MEMORY)
  if c.bo.handle not in c.drv.bos: c.bo = c.alloc(0x2000, map_gpu=False)

def _mmap(case):
  import machines
  from mockgpu.driver.kfd import MMAP_TYPE_DOORBELL, MMAP_TYPE_EVENTS, MMAP_GPU_ID_SHIFT
  c = rig.c
  bo = c.drv.bos.get(c.bo.handle)
  off = {"doorbell": MMAP_TYPE_DOORBELL | (c.gpu.gpu_id << MMAP_GPU_ID_SHIFT), "events": MMAP_TYPE_EVENTS,
         "bo": bo.mmap_offset if bo is not None else 0}.get(case["offset"], case["offset"])
  node = c.kfd if case["node"] == "kfd" else c.render
  addr = node.mmap(0, case["size"], mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, off)
  machines.machine().unwatch(addr)
  libc = ctypes.CDLL(None)
  libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
  libc.munmap(addr, case["size"])

def _drm(case):
  arg = amdgpu_drm.struct_drm_amdgpu_info(return_pointer=_resolve(case["return_pointer"], 8), return_size=case["return_size"], query=case["query"])
  fn = amdgpu_drm.DRM_IOCTL_AMDGPU_INFO
  idir, base, nr, _ = fn.args
  rig.c.render.ioctl((idir << 30) | (ctypes.sizeof(arg) << 16) | (base << 8) | nr, arg)

def _ioctl(case):
  from mockgpu.driver.kfd import KFD_IOCTLS
  T = KFD_IOCTLS.get(case["nr"], (None, None))[1] if case["name"] != "random" else None
  arg = T() if T is not None else (ctypes.c_uint8 * 16)()
  for f, size in (_fields(T) if T is not None else []):
    if f in case["fields"]: setattr(arg, f, _resolve(case["fields"][f], size))
  size = ctypes.sizeof(arg) if case["size"] is None else case["size"]
  rig.c.kfd.ioctl((3 << 30) | ((size & 0x3fff) << 16) | (case["magic"] << 8) | case["nr"], arg)

def execute(case):
  drv = rig.c.drv
  _fill_user_arrays()
  before = (set(drv.queues), set(drv.events), set(drv.bos))
  try: {"mmap": _mmap, "drm": _drm, "ioctl": _ioctl}[case["kind"]](case)
  finally: _cleanup(before)

def known_good() -> bool:
  """GPU 0 still runs a fresh queue, and a WAIT_EVENTS on the guarded array still answers."""
  if not rig.known_good(lambda v: surface_pm4.release_mem("good", 0, v, 1)): return False
  _fill_user_arrays()
  from support.kfd_client import call
  res = call(rig.c.kfd, kfd.AMDKFD_IOC_WAIT_EVENTS, events_ptr=user + 0x1000 - ctypes.sizeof(kfd.struct_kfd_event_data), num_events=1, timeout=0)
  return res.wait_result in (kfd.KFD_IOC_WAIT_RESULT_COMPLETE, kfd.KFD_IOC_WAIT_RESULT_TIMEOUT)
