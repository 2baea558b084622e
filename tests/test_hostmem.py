"""Host memory (mockgpu/hostmem.py): shared memfd pages seen through two mappings, aliases of shared anonymous pages,
the mapped-page probe, named mmap failures, and the one binding of libc, PAGE and MAP_NORESERVE in the package."""
import ctypes, errno, mmap, os, re
import pytest
import mockgpu
from mockgpu import hostmem
from mockgpu.hostmem import PAGE, SharedMemory, alias, host_mmap, mapped, munmap, round_page

RW = mmap.PROT_READ | mmap.PROT_WRITE

def u32(addr:int, n:int=4): return (ctypes.c_uint32 * n).from_address(addr)

def test_round_page():
  assert [round_page(n) for n in (0, 1, PAGE - 1, PAGE, PAGE + 1)] == [0, PAGE, PAGE, PAGE, 2 * PAGE]

def test_shared_memory_is_one_set_of_pages_and_release_zeroes_them():
  m = SharedMemory("mockgpu-test-hostmem", 4 * PAGE)
  view = m.map_at(0, 2 * PAGE, RW, 0, PAGE)  # the runtime's mapping of pages 1-2
  try:
    u32(m.base + PAGE)[:] = [1, 2, 3, 4]
    u32(view + PAGE)[0] = 0xdead
    assert list(u32(view)) == [1, 2, 3, 4] and u32(m.base + 2 * PAGE)[0] == 0xdead
    m.release(PAGE, 1)  # one byte frees its whole page
    assert list(u32(view)) == [0, 0, 0, 0] and u32(m.base + 2 * PAGE)[0] == 0xdead
  finally: munmap(view, 2 * PAGE)
  with pytest.raises(OSError, match="mockgpu-test-hostmem: mmap of 0x3000\\+0x2000 is out of range") as e: m.map_at(0, 2 * PAGE, RW, 0, 3 * PAGE)
  assert e.value.errno == errno.EINVAL

def test_shared_memory_maps_at_a_fixed_address():
  m = SharedMemory("mockgpu-test-fixed", PAGE)
  spot = host_mmap(0, PAGE, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)  # reserve an address, as the runtime does
  try:
    assert m.map_at(spot, PAGE, RW, hostmem.MAP_FIXED, 0) == spot
    u32(m.base)[0] = 77
    assert u32(spot)[0] == 77
  finally: munmap(spot, PAGE)

def test_alias_duplicates_shared_anonymous_pages():
  base = host_mmap(0, 2 * PAGE, RW, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS | hostmem.MAP_NORESERVE, -1, 0)
  second = alias(base, 2 * PAGE, None)
  try:
    assert second != base
    u32(base + PAGE)[1] = 5
    assert u32(second + PAGE)[1] == 5
  finally:
    munmap(second, 2 * PAGE)
    munmap(base, 2 * PAGE)

def test_mapped_probe_and_named_mmap_failure():
  addr = host_mmap(0, PAGE, RW, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
  assert mapped(addr) and mapped(addr, PAGE)
  munmap(addr, PAGE)
  assert not mapped(addr)
  with pytest.raises(OSError, match=r"mmap of 0x1000 bytes at 0x0: Invalid argument") as e:
    host_mmap(0, PAGE, RW, mmap.MAP_ANONYMOUS, -1, 0)   # neither MAP_SHARED nor MAP_PRIVATE
  assert e.value.errno == errno.EINVAL

def test_the_package_binds_libc_and_page_once():
  """No other module binds libc or spells the page size or MAP_NORESERVE: they import them from hostmem."""
  pkg = os.path.dirname(mockgpu.__file__)
  pattern = re.compile(r"CDLL\(None|^\s*_?PAGE\s*=|^\s*_?MAP_NORESERVE\b.*=|memfd_create", re.M)
  hits = []
  for d, _, files in os.walk(pkg):
    for f in files:
      if f.endswith(".py") and (path:=os.path.join(d, f)) != hostmem.__file__:
        with open(path) as fh: hits += [f"{os.path.relpath(path, pkg)}: {m.group(0).strip()}" for m in pattern.finditer(fh.read())]
  assert hits == []
