"""The KFD driver model (/dev/kfd, render nodes, sysfs), driven by a minimal in-process client.

`Client` opens the mock's /dev/kfd and render nodes and calls ioctls the way tinygrad's KFDIface does (same autogen
structs, same request numbers) without tinygrad's runtime; test_pm4 and test_sdma use it too.
"""
from __future__ import annotations
import ctypes, errno, os
import pytest
from tinygrad.runtime.autogen import kfd, amdgpu_drm
from tinygrad.runtime.autogen.am import am
import machines
from mockgpu.errors import UnsupportedIoctl
from support.kfd_client import Client, FLAGS, call, request

# *** tests ***

@pytest.fixture(autouse=True)
def fresh_machine(monkeypatch):
  """Each test gets its own mock machine (machines.machine() builds a new one)."""
  monkeypatch.setattr(machines, "current", None)
  monkeypatch.setenv("MOCKGPU_COUNT", "2")

def read(path:str) -> str: return machines.machine().vfs.open(path, os.O_RDONLY).read().decode()

def test_topology_lists_cpu_then_gpus():
  nodes = "/sys/devices/virtual/kfd/kfd/topology/nodes"
  assert machines.machine().vfs.listdir(nodes) == ["0", "1", "2"]
  assert int(read(f"{nodes}/0/gpu_id")) == 0
  ids = [int(read(f"{nodes}/{n}/gpu_id")) for n in ("1", "2")]
  assert all(ids) and len(set(ids)) == 2
  props = [{(p:=l.split())[0]: int(p[1]) for l in read(f"{nodes}/{n}/properties").splitlines()} for n in ("1", "2")]
  # what tinygrad derives from them: gfx1100, 6 shader engines, 96 CUs, one XCC, render minors 128 and 129
  assert props[0]["gfx_target_version"] == 110000 and props[0]["simd_count"] == 192 and props[0]["simd_per_cu"] == 2
  assert props[0]["array_count"] // props[0]["simd_arrays_per_engine"] == 6 and props[0]["num_xcc"] == 1
  assert props[0]["lds_size_in_kb"] == 64 and props[0]["max_slots_scratch_cu"] == 32 and props[0]["max_waves_per_simd"] == 16
  assert [p["drm_render_minor"] for p in props] == [128, 129]
  assert int(read(f"{nodes}/1/mem_banks/0/properties").split("size_in_bytes ")[1].split()[0]) == 24 << 30

def test_ip_discovery_matches_navi31():
  base = "/sys/class/drm/renderD128/device/ip_discovery/die/0"
  ver = lambda hwid: tuple(int(read(f"{base}/{hwid}/0/{p}")) for p in ("major", "minor", "revision"))
  assert ver(am.GC_HWID) == (11, 0, 0) and ver(am.SDMA0_HWID) == (6, 0, 0) and ver(am.NBIF_HWID) == (4, 3, 0)
  assert str(am.GC_HWID) in machines.machine().vfs.listdir(base)
  assert read("/sys/class/drm/renderD128/device/device").strip() == "0x744c"

def test_the_ioctl_table_names_each_handler_by_its_header_name():
  """KFD's ioctls are a literal table (header name -> handler), as amdkfd's amdkfd_ioctls[]: each entry's handler is
  the one named after its ioctl, and each modelled name appears in the driver's source for grep to find."""
  from mockgpu.driver import kfd as kfd_model
  table = Client().drv.ioctls
  names = {kfd_model.KFD_IOCTLS[kfd_model.ioctl_nr(ioc)][0]: fn for ioc, fn in table.items()}
  assert len(names) == len(table) == 16 and {"AMDKFD_IOC_CREATE_QUEUE", "AMDKFD_IOC_WAIT_EVENTS"} <= set(names)
  assert [n for n, fn in names.items() if fn.__name__ != "_" + n.removeprefix("AMDKFD_IOC_").lower()] == []
  with open(kfd_model.__file__) as f: source = f.read()
  assert [n for n in names if f"kfd.{n}:" not in source] == []

def test_get_version_and_unknown_ioctls():
  c = Client()
  v = call(c.kfd, kfd.AMDKFD_IOC_GET_VERSION)
  assert (v.major_version, v.minor_version) == (kfd.KFD_IOCTL_MAJOR_VERSION, kfd.KFD_IOCTL_MINOR_VERSION)
  with pytest.raises(UnsupportedIoctl, match="AMDKFD_IOC_SVM"): call(c.kfd, kfd.AMDKFD_IOC_SVM)
  with pytest.raises(OSError) as e: c.kfd.ioctl((3 << 30) | (8 << 16) | (ord("K") << 8) | 0x7f, kfd.struct_kfd_ioctl_get_version_args())
  assert e.value.errno == errno.EINVAL and "0x7f" in str(e.value)
  st = kfd.struct_kfd_ioctl_get_version_args()
  with pytest.raises(OSError) as e: c.kfd.ioctl((2 << 30) | (4 << 16) | (ord("K") << 8) | 1, st)  # the size does not match the struct
  assert e.value.errno == errno.EINVAL

def test_acquire_vm_checks_fd_and_gpu():
  c = Client()
  with pytest.raises(OSError) as e: call(c.kfd, kfd.AMDKFD_IOC_ACQUIRE_VM, drm_fd=12345, gpu_id=c.gpu.gpu_id)
  assert e.value.errno == errno.EBADF
  with pytest.raises(OSError) as e: call(c.kfd, kfd.AMDKFD_IOC_ACQUIRE_VM, drm_fd=c.render.fd, gpu_id=c.drv.gpus[1].gpu_id)
  assert e.value.errno == errno.EINVAL
  with pytest.raises(OSError) as e:  # no VM on GPU 1 yet: no allocations there
    call(c.kfd, kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, va_addr=1 << 40, size=4096, gpu_id=c.drv.gpus[1].gpu_id, flags=FLAGS | 1)
  assert e.value.errno == errno.EINVAL

def test_vram_is_shared_between_cpu_and_gpu_views():
  c = Client()
  buf = c.alloc(0x3000, kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
  data = os.urandom(0x3000)
  ctypes.memmove(buf.va, data, len(data))
  assert c.gpu.mem.read(buf.va, len(data)) == data  # the GPU sees the CPU's writes (same pages, another mapping)
  c.gpu.mem.write_u32(buf.va + 8, 0xdeadbeef)
  assert buf.u32()[2] == 0xdeadbeef
  assert int(read("/sys/class/drm/renderD128/device/mem_info_vram_used")) == 0x3000

def test_map_unmap_free():
  c = Client()
  buf = c.alloc(0x2000, kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, map_gpu=False)
  assert not c.gpu.mem.is_mapped(buf.va)
  assert c.map(buf.handle).n_success == 1 and c.gpu.mem.is_mapped(buf.va, 0x2000)
  with pytest.raises(OSError) as e: call(c.kfd, kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU, handle=buf.handle)
  assert e.value.errno == errno.EBUSY
  assert c.unmap(buf.handle).n_success == 1 and not c.gpu.mem.is_mapped(buf.va)
  call(c.kfd, kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU, handle=buf.handle)
  assert c.gpu.vram.used == 0
  with pytest.raises(OSError) as e: call(c.kfd, kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU, handle=buf.handle)
  assert e.value.errno == errno.EINVAL

def test_map_to_a_second_gpu():
  c0, c1 = Client(0), Client(1)
  buf = c0.alloc(0x1000, kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)
  assert c0.map(buf.handle, [c0.gpu, c1.gpu]).n_success == 2
  buf.u32()[0] = 77
  assert c1.gpu.mem.read_u32(buf.va) == 77

def test_vram_exhaustion_is_enomem():
  c = Client()
  big = (24 << 30) // 2
  c.alloc(big, kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, map_gpu=False)
  with pytest.raises(OSError) as e: c.alloc(big + 0x1000, kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, map_gpu=False)
  assert e.value.errno == errno.ENOMEM
  assert call(c.kfd, kfd.AMDKFD_IOC_AVAILABLE_MEMORY, gpu_id=c.gpu.gpu_id).available == (24 << 30) - big

def test_signal_event_from_interrupt_and_auto_reset():
  c = Client().events()
  ev = c.queue_event
  assert ev.event_slot_index == ev.event_id < kfd.KFD_SIGNAL_EVENT_LIMIT and c.mem_event.event_id >= 0x40000000
  result, _ = c.wait(ev)
  assert result == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT
  c.gpu.interrupt(ev.event_id, 23)  # the slot still reads UNSIGNALED: the kernel ignores such an interrupt
  assert c.wait(ev)[0] == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT
  c.event_page.u64()[ev.event_slot_index] = ev.event_id  # what RELEASE_MEM writes into the mailbox
  c.gpu.interrupt(ev.event_id, 23)
  assert c.event_page.u64()[ev.event_slot_index] == 0xffffffffffffffff  # acknowledged
  assert c.wait(ev)[0] == kfd.KFD_IOC_WAIT_RESULT_COMPLETE
  assert c.wait(ev)[0] == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT  # auto-reset: the first wait consumed it

def test_set_and_reset_event():
  c = Client().events()
  call(c.kfd, kfd.AMDKFD_IOC_SET_EVENT, event_id=c.queue_event.event_id)
  assert c.wait(c.queue_event)[0] == kfd.KFD_IOC_WAIT_RESULT_COMPLETE
  with pytest.raises(OSError): call(c.kfd, kfd.AMDKFD_IOC_SET_EVENT, event_id=c.mem_event.event_id)
  with pytest.raises(OSError): c.wait(kfd.struct_kfd_ioctl_create_event_args(event_id=999))

def test_dev_info_cu_bitmap():
  c = Client()
  inf = amdgpu_drm.struct_drm_amdgpu_info_device()
  st = amdgpu_drm.struct_drm_amdgpu_info(return_pointer=ctypes.addressof(inf), return_size=ctypes.sizeof(inf), query=amdgpu_drm.AMDGPU_INFO_DEV_INFO)
  c.render.ioctl(request(amdgpu_drm.DRM_IOCTL_AMDGPU_INFO, st), st)
  assert inf.device_id == 0x744c and inf.num_shader_engines == 6 and inf.cu_active_number == 96
  # tinygrad's is_wgp_active: every WGP of every shader array is active
  assert all((inf.cu_bitmap[se % 4][sa + (se // 4) * 2] >> (2 * wgp)) & 3 == 3 for se in range(6) for sa in range(2) for wgp in range(4))
  with pytest.raises(UnsupportedIoctl, match="DRM_IOCTL_AMDGPU_GEM_CREATE"):
    st = amdgpu_drm.union_drm_amdgpu_gem_create()
    c.render.ioctl(request(amdgpu_drm.DRM_IOCTL_AMDGPU_GEM_CREATE, st), st)

def test_create_queue_validates():
  c = Client()
  ring = c.alloc(0x1000)
  args = dict(ring_base_address=ring.va, gpu_id=c.gpu.gpu_id, queue_type=kfd.KFD_IOC_QUEUE_TYPE_COMPUTE, queue_percentage=100,
              write_pointer_address=ring.va + 0x800, read_pointer_address=ring.va + 0x808)
  with pytest.raises(OSError) as e: call(c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, ring_size=0x1800, **args)
  assert e.value.errno == errno.EINVAL and "power of 2" in str(e.value)
  with pytest.raises(OSError) as e: call(c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, ring_size=0x1000, **{**args, "read_pointer_address": 1 << 46})
  assert e.value.errno == errno.EINVAL and "read pointer" in str(e.value)
  with pytest.raises(OSError) as e: call(c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, ring_size=0x1000, **{**args, "queue_type": 9})
  assert e.value.errno == errno.EINVAL and "queue_type 9" in str(e.value)
  q = call(c.kfd, kfd.AMDKFD_IOC_CREATE_QUEUE, ring_size=0x1000, **args)
  assert q.doorbell_offset >> 62 == 3 and (q.doorbell_offset >> 46) & 0xffff == c.gpu.gpu_id
  call(c.kfd, kfd.AMDKFD_IOC_DESTROY_QUEUE, queue_id=q.queue_id)
  assert q.queue_id not in c.gpu.queues
  with pytest.raises(OSError): call(c.kfd, kfd.AMDKFD_IOC_DESTROY_QUEUE, queue_id=q.queue_id)
