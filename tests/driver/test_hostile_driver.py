"""Issue 13, the driver and device-model half: one regression test per class of hostile input the fuzzer found. Each
asserts the modelled outcome (errno, CUresult, NV status, or a named mockgpu error whose message names the culprit)
and that a known-good operation on the same device still gives the right answer afterwards."""
import ctypes, errno, importlib, logging, os, struct
import numpy as np
import pytest
from tinygrad.runtime.autogen import hsa, kfd, nv_570 as nv
from tinygrad.runtime.autogen.am import pm4_nv as pm4
import machines
from mockgpu.errors import PacketError, Unmodelled, UnsupportedIoctl
from support.kfd_client import Client, call, lohi, pkt3
from userpages import guarded_page, unmapped_range

@pytest.fixture(autouse=True)
def fresh_machine(monkeypatch):
  monkeypatch.setattr(machines, "current", None)
  monkeypatch.setenv("MOCKGPU_COUNT", "2")

def release_mem(addr, value):
  event = pm4.PACKET3_RELEASE_MEM_EVENT_TYPE(pm4.CACHE_FLUSH_AND_INV_TS_EVENT) | pm4.PACKET3_RELEASE_MEM_EVENT_INDEX(5)
  return pkt3(pm4.PACKET3_RELEASE_MEM, event, pm4.PACKET3_RELEASE_MEM_DATA_SEL(1), *lohi(addr), value, 0, 0)

def pm4_still_works(c:Client):
  q, buf = c.queue(), c.alloc(0x1000)
  q.submit(release_mem(buf.va, 0x600d))
  assert buf.u32()[0] == 0x600d and q.hw.error is None

# *** user pointers (KFD) ***

def test_wait_events_past_the_buffer_is_efault():
  c = Client().events()
  page = guarded_page()
  at = page + 0x1000 - ctypes.sizeof(kfd.struct_kfd_event_data)  # one event, right before the unmapped page
  kfd.struct_kfd_event_data.from_address(at).event_id = c.queue_event.event_id
  with pytest.raises(OSError) as e:
    call(c.kfd, kfd.AMDKFD_IOC_WAIT_EVENTS, events_ptr=at, num_events=2, timeout=0)
  assert e.value.errno == errno.EFAULT and "WAIT_EVENTS events_ptr (2 events)" in str(e.value)
  res = call(c.kfd, kfd.AMDKFD_IOC_WAIT_EVENTS, events_ptr=at, num_events=1, timeout=0)  # the same buffer, the right count
  assert res.wait_result == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT
  pm4_still_works(c)

def test_wait_events_on_signal_events_only_reads_the_array():
  """kfd_wait_on_events copies each event in, and copies out only an activated exception event's data: a wait on
  signal events reads its array and never writes it, so a read-only array answers. The model used to probe the array
  by writing back what it had just read, which put stale bytes over memory that changed in between: with a count past
  the buffer's end, the host's own heap (a fuzz worker's SIGSEGV, cases later)."""
  import mmap
  from mockgpu.hostmem import libc
  c = Client().events()
  page = guarded_page()
  size = ctypes.sizeof(kfd.struct_kfd_event_data)
  at = page + 0x1000 - 2 * size
  for i in range(2): kfd.struct_kfd_event_data.from_address(at + i * size).event_id = c.queue_event.event_id
  libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
  assert libc.mprotect(page, 0x1000, mmap.PROT_READ) == 0
  before = ctypes.string_at(page, 0x1000)
  res = call(c.kfd, kfd.AMDKFD_IOC_WAIT_EVENTS, events_ptr=at, num_events=2, timeout=0)
  assert res.wait_result == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT
  call(c.kfd, kfd.AMDKFD_IOC_SET_EVENT, event_id=c.queue_event.event_id)
  res = call(c.kfd, kfd.AMDKFD_IOC_WAIT_EVENTS, events_ptr=at, num_events=2, timeout=0)
  assert res.wait_result == kfd.KFD_IOC_WAIT_RESULT_COMPLETE and ctypes.string_at(page, 0x1000) == before
  assert libc.mprotect(page, 0x1000, mmap.PROT_READ | mmap.PROT_WRITE) == 0
  pm4_still_works(c)

def test_event_page_mmap_is_at_most_the_signal_slots():
  """kfd_event_mmap maps at most the KFD_SIGNAL_EVENT_LIMIT slots (EINVAL past them, and before there is an event
  page), however large the buffer the runtime gave for the page: the fuzz case of a 1 MiB events mmap is EINVAL. What it
  maps is the page itself, every byte of it there to touch."""
  import mmap
  from mockgpu.driver.kfd import EVENT_PAGE_SIZE, MMAP_TYPE_EVENTS, UNSIGNALED
  from mockgpu.hostmem import munmap
  rw, c = mmap.PROT_READ | mmap.PROT_WRITE, Client()
  def events_mmap(size:int) -> int: return c.kfd.mmap(0, size, rw, mmap.MAP_SHARED, MMAP_TYPE_EVENTS)
  with pytest.raises(OSError, match="before any signal event") as e: events_mmap(0x1000)
  assert e.value.errno == errno.EINVAL
  page = c.alloc(1 << 20)  # a 1 MiB GTT buffer for the event page: larger than the slots, as the kernel allows
  call(c.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_page_offset=page.handle)
  ev = call(c.kfd, kfd.AMDKFD_IOC_CREATE_EVENT, event_type=kfd.KFD_IOC_EVENT_SIGNAL, auto_reset=1)
  for size in (1 << 20, EVENT_PAGE_SIZE + 0x1000):
    with pytest.raises(OSError, match=f"event page mmap of 0x{size:x} bytes") as e: events_mmap(size)
    assert e.value.errno == errno.EINVAL
  addr = events_mmap(EVENT_PAGE_SIZE)
  slots = (ctypes.c_uint64 * (EVENT_PAGE_SIZE // 8)).from_address(addr)
  assert slots[ev.event_slot_index] == UNSIGNALED and list(slots) == list(page.u64()[:EVENT_PAGE_SIZE // 8])
  slots[ev.event_slot_index] = 7  # the runtime's mapping is the page the model reads
  assert page.u64()[ev.event_slot_index] == 7
  munmap(addr, EVENT_PAGE_SIZE)

@pytest.mark.parametrize("ptr", [0x10, "hole", 1 << 63])
def test_kfd_device_ids_and_info_pointers_are_efault(ptr):
  c = Client()
  bo = c.alloc(0x1000, map_gpu=False)
  ptr = unmapped_range() if ptr == "hole" else ptr  # after the allocations, which could take the hole
  with pytest.raises(OSError, match="MAP_MEMORY_TO_GPU device_ids_array_ptr") as e:
    call(c.kfd, kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU, handle=bo.handle, device_ids_array_ptr=ptr, n_devices=1)
  assert e.value.errno == errno.EFAULT
  from tinygrad.runtime.autogen import amdgpu_drm
  arg = amdgpu_drm.struct_drm_amdgpu_info(return_pointer=ptr, return_size=0x100, query=amdgpu_drm.AMDGPU_INFO_DEV_INFO)
  idir, base, nr, _ = amdgpu_drm.DRM_IOCTL_AMDGPU_INFO.args
  with pytest.raises(OSError, match="AMDGPU_INFO return_pointer") as e:
    c.render.ioctl((idir << 30) | (ctypes.sizeof(arg) << 16) | (base << 8) | nr, arg)
  assert e.value.errno == errno.EFAULT
  c.map(bo.handle)  # the valid call still maps it
  assert c.gpu.mem.is_mapped(bo.va, 0x1000)

def test_userptr_of_unmapped_memory_is_efault():
  c = Client()
  with pytest.raises(OSError, match="USERPTR") as e:
    hole = unmapped_range(0x2000)
    call(c.kfd, kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, va_addr=hole, size=0x2000, gpu_id=c.gpu.gpu_id,
         flags=kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, mmap_offset=hole)
  assert e.value.errno == errno.EFAULT

def test_large_userptr_with_a_hole_or_unreadable_end_is_efault():
  """A range past uaccess.PROBE_LIMIT is checked by mincore (every page mapped) and its end pages' reads: an unmapped
  page in its middle, or a PROT_NONE last page, is EFAULT; the whole range mapped, it is pinned."""
  import mmap
  from mockgpu.driver.uaccess import PROBE_LIMIT
  from mockgpu.hostmem import host_mmap, libc
  c, size = Client(), 4 * PROBE_LIMIT
  def userptr(addr:int):
    return call(c.kfd, kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, va_addr=addr, size=size, gpu_id=c.gpu.gpu_id,
                flags=kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, mmap_offset=addr)
  def fresh() -> int: return host_mmap(0, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
  assert userptr(fresh()).handle in c.drv.bos
  holed, unreadable = fresh(), fresh()
  libc.munmap(holed + size // 2, 0x1000)
  libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
  assert libc.mprotect(unreadable + size - 0x1000, 0x1000, 0) == 0  # PROT_NONE
  for addr in (holed, unreadable):
    with pytest.raises(OSError, match="USERPTR") as e: userptr(addr)
    assert e.value.errno == errno.EFAULT

# *** user pointers (RM) ***

def test_rm_parameters_at_a_bad_pointer_are_invalid_address():
  vfs = machines.machine().vfs
  ctl = vfs.open("/dev/nvidiactl", os.O_RDWR)
  rm = ctl.drv.rm
  client = rm.alloc(0, 0, 0, nv.NV01_ROOT_CLIENT, None)
  for ptr in (0x10, guarded_page() + 0x1000 - 4):  # unmapped, and a struct running into the unmapped page
    p = nv.NVOS21_PARAMETERS(hRoot=client, hObjectParent=client, hObjectNew=0, hClass=nv.NV01_DEVICE_0, pAllocParms=ptr)
    ctl.ioctl((3 << 30) | (ctypes.sizeof(p) << 16) | (ord("F") << 8) | nv.NV_ESC_RM_ALLOC, p)
    assert p.status == nv.NV_ERR_INVALID_ADDRESS
  dev = nv.NV0080_ALLOC_PARAMETERS(deviceId=0)
  p = nv.NVOS21_PARAMETERS(hRoot=client, hObjectParent=client, hObjectNew=0, hClass=nv.NV01_DEVICE_0, pAllocParms=ctypes.addressof(dev))
  ctl.ioctl((3 << 30) | (ctypes.sizeof(p) << 16) | (ord("F") << 8) | nv.NV_ESC_RM_ALLOC, p)
  assert p.status == nv.NV_OK and p.hObjectNew in rm.clients[client].objects

# *** user pointers (CUDA) ***

@pytest.fixture
def cu(monkeypatch):
  monkeypatch.delenv("MOCKGPU_NV_MODEL", raising=False)
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")
  from mockgpu import events, trace
  def to_log(ev): logging.getLogger("mockgpu").debug("%s", trace.human(ev))  # each call's trace line names why it failed
  events.subscribe(to_log)
  import mockgpu.driver.cuda as mod
  mod = importlib.reload(mod)
  assert mod.cuInit(0) == 0
  ctx = mod.CUcontext()
  assert mod.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0) == 0
  yield mod
  events.unsubscribe(to_log)

SCALE_PTX = """.version 7.8
.target sm_89
.address_size 64
.visible .entry scale(.param .u64 out, .param .u64 inp, .param .u32 k)%s
{
  .reg .b32 %%r<4>;
  .reg .b64 %%rd<6>;
  .reg .f32 %%f<4>;%s
  ld.param.u64 %%rd1, [out];
  ld.param.u64 %%rd2, [inp];
  ld.param.u32 %%r1, [k];
  mov.u32 %%r2, %%tid.x;
  mul.wide.u32 %%rd3, %%r2, 4;
  add.s64 %%rd4, %%rd2, %%rd3;
  ld.global.f32 %%f1, [%%rd4];
  cvt.rn.f32.u32 %%f2, %%r1;
  mul.f32 %%f3, %%f1, %%f2;
  add.s64 %%rd5, %%rd1, %%rd3;
  st.global.f32 [%%rd5], %%f3;
  ret;
}
"""

def function(cu, directives="", body=""):
  mod, fn = cu.CUmodule(), cu.CUfunction()
  assert cu.cuModuleLoadData(ctypes.byref(mod), (SCALE_PTX % (directives, body)).encode()) == 0
  assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"scale") == 0
  return fn

def cuda_still_works(cu):
  """Copy in, scale by 3 on the GPU, copy out."""
  x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
  ptrs = []
  for _ in range(2):
    p = cu.CUdeviceptr()
    assert cu.cuMemAlloc_v2(ctypes.byref(p), x.nbytes) == 0
    ptrs.append(p.value)
  assert cu.cuMemcpyHtoD_v2(ptrs[1], x.ctypes.data, x.nbytes) == 0
  args = [ctypes.c_uint64(ptrs[0]), ctypes.c_uint64(ptrs[1]), ctypes.c_uint32(3)]
  kp = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in args])
  assert cu.cuLaunchKernel(function(cu), 1, 1, 1, 32, 1, 1, 0, None, kp, None) == 0
  assert cu.cuMemcpyDtoH_v2(out.ctypes.data, ptrs[0], out.nbytes) == 0
  assert (out == 3 * x).all()

def test_cuda_small_and_garbage_pointers_are_invalid_value(cu, caplog):
  caplog.set_level(logging.DEBUG, "mockgpu")
  m = cu.CUmodule()
  assert cu.cuModuleLoadData(ctypes.byref(m), 0x10) == cu.CUDA_ERROR_INVALID_VALUE
  assert "cuModuleLoadData image: 0x10+" in caplog.text and "is not mapped user memory" in caplog.text
  assert cu.cuDeviceGetName(0x10, 64, 0) == cu.CUDA_ERROR_INVALID_VALUE
  assert "cuDeviceGetName name: 0x10" in caplog.text
  assert cu.cuMemAlloc_v2(ctypes.cast(0x10, ctypes.POINTER(ctypes.c_uint64)), 16) == cu.CUDA_ERROR_INVALID_VALUE  # and nothing leaks
  assert cu.cuModuleGetFunction(ctypes.byref(cu.CUfunction()), m, 0x10) == cu.CUDA_ERROR_INVALID_HANDLE
  fn = function(cu)
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, 0x10, None) == cu.CUDA_ERROR_INVALID_VALUE
  assert "cuLaunchKernel kernelParams" in caplog.text
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, 0x7000_0000_0000) == cu.CUDA_ERROR_INVALID_VALUE
  page = guarded_page()
  text = SCALE_PTX % ("", "")
  ctypes.memmove(page + 0x1000 - len(text), text.encode(), len(text))  # no NUL before the unmapped page
  assert cu.cuModuleLoadData(ctypes.byref(m), page + 0x1000 - len(text)) == cu.CUDA_ERROR_INVALID_VALUE
  cuda_still_works(cu)

def test_cuda_writes_no_more_than_asked(cu, caplog):
  """A length larger than the buffer behind a valid pointer: the name is written only as far as it is long (and never
  past the length given); a copy into unmapped memory past a 4 KiB host buffer is CUDA_ERROR_INVALID_VALUE."""
  caplog.set_level(logging.DEBUG, "mockgpu")
  page = guarded_page()
  ctypes.memset(page, 0xee, 0x1000)
  assert cu.cuDeviceGetName(page, 65536, 0) == 0
  name = ctypes.string_at(page)
  assert b"RTX 4090" in name and ctypes.string_at(page + len(name) + 1, 8) == b"\xee" * 8
  assert cu.cuDeviceGetName(page, 4, 0) == 0 and ctypes.string_at(page, 5) == name[:3] + b"\0" + name[4:5]
  dev = cu.CUdeviceptr()
  assert cu.cuMemAlloc_v2(ctypes.byref(dev), 0x10000) == 0
  assert cu.cuMemcpyDtoH_v2(page, dev.value, 0x10000) == cu.CUDA_ERROR_INVALID_VALUE
  assert "memcpy destination" in caplog.text
  assert cu.cuMemcpyHtoD_v2(dev.value, page, 0x10000) == cu.CUDA_ERROR_INVALID_VALUE
  assert cu.cuMemcpyDtoH_v2(page, dev.value, 0x1000) == 0  # what fits is copied
  cuda_still_works(cu)

# *** launch limits (CUDA) ***

def test_launch_limits_are_curesults(cu, caplog):
  caplog.set_level(logging.DEBUG, "mockgpu")
  fn, small = function(cu), function(cu, " .maxntid 64, 1, 1")
  args = struct.pack("<QQI", 0, 0, 1)
  class Args(ctypes.Structure): _fields_ = [("raw", ctypes.c_char * len(args))]
  a = Args(args)
  assert cu.cuLaunchKernel(small, 1, 1, 1, 128, 1, 1, 0, None, None, a) == cu.CUDA_ERROR_INVALID_VALUE
  assert ".maxntid/.reqntid of 64" in caplog.text
  assert cu.cuLaunchKernel(fn, 1, 65536, 1, 1, 1, 1, 0, None, None, a) == cu.CUDA_ERROR_INVALID_VALUE
  assert "grid (1, 65536, 1) exceeds" in caplog.text
  assert cu.cuLaunchKernel(fn, 1, 1, 0, 1, 1, 1, 0, None, None, a) == cu.CUDA_ERROR_INVALID_VALUE
  assert "has a dimension of 0" in caplog.text
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 100 << 10, None, None, a) == cu.CUDA_ERROR_INVALID_VALUE
  assert "102400 bytes of dynamic shared memory > 49152" in caplog.text
  mod = cu.CUmodule()  # 60 KiB of static shared memory: ptxas refuses the entry
  big = SCALE_PTX % ("", "\n  .shared .align 4 .b8 s[61440];")
  assert cu.cuModuleLoadData(ctypes.byref(mod), big.encode()) == cu.CUDA_ERROR_INVALID_PTX
  assert "uses too much shared data" in caplog.text
  cuda_still_works(cu)

def test_shared_memory_past_a_cta_is_out_of_resources(cu, monkeypatch):
  """Static shared memory, the alignment gap before the dynamic window and the dynamic bytes together past a CTA's
  99 KiB: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (the per-function limit counts the static bytes only)."""
  fn = function(cu, "", "\n  .shared .align 4 .b8 s[40001];")
  k = cu._handles[cu._addr(fn)].kernel
  monkeypatch.setattr(k, "dynamic_base", k.shared_size + 15)  # a window aligned past the static end
  dyn = (99 << 10) - k.shared_size
  assert cu.cuFuncSetAttribute(fn, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn) == 0
  kind, why = cu._drv.devices[0].board.launch_error(k, (1, 1, 1), (1, 1, 1), dyn)
  assert kind == "resources" and "exceed the 101376 bytes of a CTA" in why
  class Args(ctypes.Structure): _fields_ = [("raw", ctypes.c_char * 20)]
  assert cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, dyn, None, None, Args()) == cu.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
  cuda_still_works(cu)

# *** rings (PM4 / SDMA / AQL) ***

def test_write_pointer_1_shl_32_is_a_packet_error():
  c = Client().events()
  q = c.queue()
  q.gart.u64()[0x38 // 8] = 1 << 32
  with pytest.raises(PacketError, match=r"AMD:0 PM4 queue 0: ring offset 0x0: write pointer 0x100000000 is 4294967296 dwords ahead "
                                        r"of the read pointer .*the ring holds 1024 dwords"):
    machines.machine().kick()
  assert isinstance(q.hw.error, PacketError)
  pm4_still_works(c)

def test_compute_num_thread_past_1024_is_a_packet_error(monkeypatch):
  c = Client().events()
  q = c.queue()
  dispatches = []
  import types
  machines.stand_in(monkeypatch, types.SimpleNamespace(Dispatch=lambda **kw: kw, run_dispatch=lambda m, d: dispatches.append(d)))
  gc = c.gpu.gc
  set_sh = lambda reg, *v: pkt3(pm4.PACKET3_SET_SH_REG, reg.addr[0] - pm4.PACKET3_SET_SH_REG_START, *v)
  init = 1 | (1 << 2) | (1 << 15)
  with pytest.raises(PacketError, match=r"DISPATCH_DIRECT.*COMPUTE_NUM_THREAD_X/Y/Z = \(65535, 65535, 1\): 4294836225 work-items per "
                                        r"workgroup, the hardware takes 1 to 1024"):
    q.submit(set_sh(gc.regCOMPUTE_NUM_THREAD_X, 65535, 65535, 1) + pkt3(pm4.PACKET3_DISPATCH_DIRECT, 1, 1, 1, init))
  assert dispatches == []
  q2 = c.queue()
  q2.submit(set_sh(gc.regCOMPUTE_NUM_THREAD_X, 1024, 1, 1) + pkt3(pm4.PACKET3_DISPATCH_DIRECT, 1, 1, 1, init))
  assert [d["block"] for d in dispatches] == [(1024, 1, 1)]
  pm4_still_works(c)

def test_aql_empty_grid_and_null_kernarg(monkeypatch):
  """An AQL dispatch with a 0 grid runs nothing (it reached the executor); a 0 kernarg_address reads None from its
  c_void_p field and was a TypeError."""
  import types
  from tinygrad.runtime.autogen import amdgpu_kd
  dispatches = []
  machines.stand_in(monkeypatch, types.SimpleNamespace(Dispatch=lambda **kw: kw, run_dispatch=lambda m, d: dispatches.append(d)))
  c = Client().events()
  q, code = c.queue(kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL), c.alloc(0x1000)
  props = hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_KERNARG_SEGMENT_PTR | hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_WAVEFRONT_SIZE32
  ctypes.memmove(code.va, bytes(amdgpu_kd.llvm_amdhsa_kernel_descriptor_t(kernel_code_properties=props)), 64)
  hdr = hsa.HSA_PACKET_TYPE_KERNEL_DISPATCH << hsa.HSA_PACKET_HEADER_TYPE
  for grid in (0, 32):
    pkt = hsa.hsa_kernel_dispatch_packet_t(header=hdr, setup=3, workgroup_size_x=32, workgroup_size_y=1, workgroup_size_z=1, grid_size_x=grid,
                                           grid_size_y=1, grid_size_z=1, kernel_object=code.va, kernarg_address=0)
    q.submit(list((ctypes.c_uint32 * 16).from_buffer_copy(bytes(pkt))))
  assert len(dispatches) == 1 and dispatches[0]["user_data"][:2] == [0, 0] and q.hw.error is None

def test_constant_fill_checks_its_range_first():
  from tinygrad.runtime.autogen.am import sdma_6_0_0 as sdma
  c = Client().events()
  q, buf = c.queue(kfd.KFD_IOC_QUEUE_TYPE_SDMA), c.alloc(0x1000)
  q.submit([sdma.SDMA_OP_CONST_FILL | sdma.SDMA_PKT_CONSTANT_FILL_HEADER_FILLSIZE(2), *lohi(buf.va), 0x12345678, (1 << 30) - 2])  # 1 GiB - 1
  assert q.hw.error is not None and "CONSTANT_FILL" in str(q.hw.error) and buf.u32()[0] == 0  # a fault, nothing written
  q2 = c.queue(kfd.KFD_IOC_QUEUE_TYPE_SDMA)
  q2.submit([sdma.SDMA_OP_CONST_FILL | sdma.SDMA_PKT_CONSTANT_FILL_HEADER_FILLSIZE(2), *lohi(buf.va), 0xabcd, 6])  # 7 bytes
  assert bytes((ctypes.c_uint8 * 8).from_address(buf.va)) == b"\xcd\xab\0\0\xcd\xab\0\0"
  pm4_still_works(c)

# *** QMDs and pushbuffers (NV) ***

@pytest.fixture
def qmd(monkeypatch):
  """A channel with the compute class and a recording PTX executor (tests/emulators/test_nv_gpfifo.py's), a program, a cbuf."""
  from support.nv_gpfifo import Rig, FakePTX, PTX_TEXT, DATA, VA, encode_qmd, nvm
  fake = FakePTX()
  r = Rig(executor=fake)
  prog, cbuf = DATA, DATA + 0x1000
  r.mem[prog:prog + len(PTX_TEXT)] = np.frombuffer(PTX_TEXT, np.uint8)
  r.mem[cbuf + 320:cbuf + 328] = np.array([2, 1], np.uint32).view(np.uint8)
  common = {"program_address_upper": (VA + prog) >> 32, "program_address_lower": (VA + prog) & 0xffffffff,
            "constant_buffer_addr_upper_0": (VA + cbuf) >> 32,
            "constant_buffer_addr_lower_0": (VA + cbuf) & 0xffffffff, "constant_buffer_size_shifted4_0": 0x160, "cta_thread_dimension0": 8,
            "cta_thread_dimension1": 1, "cta_thread_dimension2": 1, "cta_raster_width": 2, "cta_raster_height": 1, "cta_raster_depth": 1,
            "release0_enable": 1, "release0_address_upper": (VA + DATA + 0x3000) >> 32, "release0_address_lower": (VA + DATA + 0x3000) & 0xffffffff,
            "release0_payload_lower": 55}
  def launch(addr_off:int, **vals):
    r.mem[addr_off:addr_off + 0x100] = np.frombuffer(encode_qmd({**common, **vals}), np.uint8)
    r.submit(nvm(1, nv.NVC6C0_SET_OBJECT, nv.ADA_COMPUTE_A) + nvm(1, nv.NVC6C0_SEND_PCAS_A, (VA + addr_off) >> 8) +
             nvm(1, nv.NVC6C0_SEND_SIGNALING_PCAS2_B, nv.NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE))
  return types_ns(r=r, fake=fake, launch=launch, VA=VA, DATA=DATA)

def types_ns(**kw):
  import types
  return types.SimpleNamespace(**kw)

def qmd_still_works(t):
  t.r.mem[t.DATA + 0x3000:t.DATA + 0x3008] = 0
  before = len(t.fake.launches)
  t.launch(t.DATA + 0x2800)
  assert len(t.fake.launches) > before and t.r.u64(t.DATA + 0x3000) == 55

def test_qmd_depending_on_itself_is_bounded(qmd):
  at = qmd.DATA + 0x2000
  with pytest.raises(PacketError,
                     match=rf"dependent QMD chain from 0x{qmd.VA + at:x} loops back to QMD 0x{qmd.VA + at:x} \(DEPENDENT_QMD0_POINTER\)"):
    qmd.launch(at, dependent_qmd0_enable=1, dependent_qmd0_action=1, dependent_qmd0_pointer=(qmd.VA + at) >> 8)
  assert qmd.r.u64(qmd.DATA + 0x3000) == 55  # the QMD ran once, with its release
  qmd_still_works(qmd)

@pytest.mark.parametrize("vals,message", [
  ({"cta_thread_dimension0": 2048}, r"block \(2048, 1, 1\) \(2048 threads\) exceeds the hardware's"),
  ({"cta_raster_width": 0}, r"grid \(0, 1, 1\) block \(8, 1, 1\) has a dimension of 0"),
  ({"cta_raster_width": 2**31}, r"grid \(2147483648, 1, 1\) exceeds the hardware's"),
])
def test_qmd_launch_limits_are_packet_errors(qmd, vals, message):
  with pytest.raises(PacketError, match=rf"QMD 0x[0-9a-f]+: kernel .*{message}"): qmd.launch(qmd.DATA + 0x2000, **vals)
  assert all(not isinstance(x, tuple) for x in qmd.fake.launches)  # the executor was never handed it
  qmd_still_works(qmd)

def test_qmd_launch_limits_are_the_boards(qmd):
  """The QMD path checks the GPU's board record: a 1024-thread CTA runs on sm_89 and is a PacketError on a record (a
  variant made here) whose CTAs hold 512 threads."""
  import dataclasses
  qmd.launch(qmd.DATA + 0x2000, cta_thread_dimension0=1024)
  assert qmd.fake.launches[-1][1] == (1024, 1, 1)
  qmd.r.gpu.board = dataclasses.replace(qmd.r.gpu.board, name="sm_89_small", max_threads_per_block=512)
  with pytest.raises(PacketError,
                     match=r"block \(1024, 1, 1\) \(1024 threads\) exceeds the hardware's \(1024, 1024, 64\) and 512 threads \(sm_89_small\)"):
    qmd.launch(qmd.DATA + 0x2000, cta_thread_dimension0=1024)
  qmd_still_works(qmd)

def test_mutated_cbuf_is_a_packet_error(qmd):
  cbuf = qmd.DATA + 0x1000
  qmd.r.mem[cbuf + 320:cbuf + 328] = np.array([0xffffffff, 7], np.uint32).view(np.uint8)
  with pytest.raises(PacketError, match=r"cbuf0 holds 4294967295 buffers and 7 values, the kernel takes 3 parameters"):
    qmd.launch(qmd.DATA + 0x2000)
  qmd.r.mem[cbuf + 320:cbuf + 328] = np.array([2, 1], np.uint32).view(np.uint8)
  qmd.launch(qmd.DATA + 0x2000, constant_buffer_size_shifted4_0=0)  # a bank smaller than the count words: they are still read
  qmd_still_works(qmd)

def test_program_that_is_not_utf8_is_a_packet_error(qmd):
  qmd.r.mem[qmd.DATA:qmd.DATA + 2] = [0xe6, 0x41]
  with pytest.raises(PacketError, match=rf"the program at 0x{qmd.VA + qmd.DATA:x} is not PTX text \(byte 0xe6 at offset 0 is not UTF-8\)"):
    qmd.launch(qmd.DATA + 0x2000)

def test_unsupported_features_are_unmodelled():
  from support.nv_gpfifo import Rig, nvm, copy_methods, sem, VA, DATA
  r = Rig()
  with pytest.raises(Unmodelled, match="block-linear"):
    r.submit(nvm(4, nv.NVC56F_SET_OBJECT, nv.AMPERE_DMA_COPY_B) + copy_methods(VA + DATA, VA + DATA + 64, 64, 2))
  with pytest.raises(Unmodelled, match="semaphore reductions"): r.submit(sem(VA + DATA, 1, nv.NVC56F_SEM_EXECUTE_OPERATION_REDUCTION))
  r.submit(sem(VA + DATA, 9, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE))
  assert r.u64(DATA) == 9

# *** UVM ***

def test_uvm_map_over_part_of_a_mapping_is_unmodelled():
  from mockgpu.driver.nv_rm import Memory
  vfs = machines.machine().vfs
  ctl, uvmf = vfs.open("/dev/nvidiactl", os.O_RDWR), vfs.open("/dev/nvidia-uvm", os.O_RDWR)
  rm = ctl.drv.rm
  client = rm.alloc(0, 0, 0, nv.NV01_ROOT_CLIENT, None)
  dev = nv.NV0080_ALLOC_PARAMETERS(deviceId=0)
  device = rm.alloc(client, client, 0, nv.NV01_DEVICE_0, ctypes.addressof(dev))
  m = nv.NV_MEMORY_ALLOCATION_PARAMS(size=0x4000)
  mem = rm.alloc(client, device, 0, nv.NV1_MEMORY_SYSTEM, ctypes.addressof(m))
  gpu = rm.gpus[0]
  def ioctl(cmd, p):
    uvmf.ioctl(cmd, p)
    return p.rmStatus
  assert ioctl(nv.UVM_INITIALIZE, nv.UVM_INITIALIZE_PARAMS()) == 0
  assert ioctl(nv.UVM_REGISTER_GPU, nv.UVM_REGISTER_GPU_PARAMS(gpu_uuid=nv.struct_nv_uuid(uuid=(ctypes.c_ubyte * 16)(*gpu.uuid)))) == 0
  base = 0x30_0000_0000
  assert ioctl(nv.UVM_CREATE_EXTERNAL_RANGE, nv.UVM_CREATE_EXTERNAL_RANGE_PARAMS(base=base, length=0x8000)) == 0
  def mapping(at, length, count=1):
    p = nv.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS(base=at, length=length, hClient=client, hMemory=mem, gpuAttributesCount=count)
    for i in range(count): p.perGpuAttributes[i].gpuUuid.uuid[:] = list(gpu.uuid)
    return p
  assert ioctl(nv.UVM_MAP_EXTERNAL_ALLOCATION, mapping(base + 0x1000, 0x2000)) == 0
  with pytest.raises(UnsupportedIoctl, match=r"UVM_MAP_EXTERNAL_ALLOCATION 0x3000000000\+0x2000 on NV:0 overlaps part of an earlier mapping"):
    uvmf.ioctl(nv.UVM_MAP_EXTERNAL_ALLOCATION, mapping(base, 0x2000))
  assert ioctl(nv.UVM_MAP_EXTERNAL_ALLOCATION, mapping(base, 0x4000, count=2)) == 0  # covers it whole: replaces it; a GPU listed twice once
  host = rm.get(client, mem, Memory).host
  ctypes.c_uint32.from_address(host + 0x1004).value = 0x600d
  assert gpu.mem.read_u32(base + 0x1004, "test") == 0x600d
