"""Inputs the driver tests and the fuzz surfaces share: user memory that ends at an unmapped page, and a small PTX kernel."""
import ctypes, mmap

def guarded_page(size:int=0x1000) -> int:
  """`size` bytes of user memory followed by an unmapped page: what lies past it faults instead of being other heap."""
  from mockgpu.hostmem import host_mmap
  addr = host_mmap(0, size + 0x1000, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
  libc = ctypes.CDLL(None)
  libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
  libc.munmap(addr + size, 0x1000)
  return addr

def unmapped_range(size:int=0x1000) -> int:
  """An address with `size` bytes of no mapping at it: mapped, then unmapped (a fixed address such as 0x7000_0000_0000
  may hold another test's memory by the time a test in the same process runs)."""
  from mockgpu.hostmem import host_mmap
  addr = host_mmap(0, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
  libc = ctypes.CDLL(None)
  libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
  libc.munmap(addr, size)
  return addr

_hole:list[int] = []

def inaccessible() -> int:
  """The process's 64 KiB of PROT_NONE address space, reserved once and kept: a fuzz surface's "unmapped" and "random"
  pointers point into it, so a copy to them faults whatever the host's layout (a fixed address such as 0x7000_0000_0000
  or 0x5555_5555_5000 can be a live mapping of the process in some layouts, and a driver writing there corrupts it)."""
  if not _hole:  # PROT_NONE (0: the mmap module has no name for it)
    from mockgpu.hostmem import host_mmap
    _hole.append(host_mmap(0, 0x10000, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0))
  return _hole[0]

# out[tid] = inp[tid] * k
SCALE_PTX = """
.version 7.8
.target sm_89
.address_size 64
.visible .entry scale(.param .u64 out, .param .u64 inp, .param .u32 k)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [inp];
  ld.param.u32 %r1, [k];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  cvt.rn.f32.u32 %f2, %r1;
  mul.f32 %f3, %f1, %f2;
  add.s64 %rd5, %rd1, %rd3;
  st.global.f32 [%rd5], %f3;
  ret;
}
"""
