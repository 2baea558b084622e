"""AddressSpace: what the GPU may touch, checked for every lane at once."""
import ctypes
import numpy as np
import pytest
from mockgpu.errors import GPUPageFault
from mockgpu.memory import AddressSpace

@pytest.fixture
def space():
  bufs = [np.arange(256, dtype=np.uint8), np.zeros(64, dtype=np.uint8)]
  s = AddressSpace("test")
  for b in bufs: s.map(b.ctypes.data, b.nbytes)
  return s, bufs

def test_vector_load_aligned_and_unaligned(space):
  s, (a, _) = space
  base = a.ctypes.data
  got = s.load(np.array([base, base + 4, base + 252], np.uint64), np.uint32)
  assert got.tolist() == a.view(np.uint32)[[0, 1, 63]].tolist()
  got = s.load(np.array([base + 1, base + 3], np.uint64), np.uint32)
  assert got.tolist() == [int.from_bytes(a[1:5].tobytes(), "little"), int.from_bytes(a[3:7].tobytes(), "little")]

def test_loads_across_two_mappings(space):
  s, (a, b) = space
  b[:] = 7
  got = s.load(np.array([a.ctypes.data + 10, b.ctypes.data + 5], np.uint64), np.uint8)
  assert got.tolist() == [10, 7]

def test_store_scatters_and_highest_lane_wins(space):
  s, (_, b) = space
  addrs = np.array([b.ctypes.data, b.ctypes.data + 8, b.ctypes.data], np.uint64)
  s.store(addrs, np.array([1, 2, 3], np.uint32))
  assert b.view(np.uint32)[[0, 2]].tolist() == [3, 2]

def test_access_past_the_end_is_a_page_fault(space):
  s, (a, _) = space
  with pytest.raises(GPUPageFault, match=f"0x{a.ctypes.data + 254:x}") as e:
    s.load(np.array([a.ctypes.data, a.ctypes.data + 254], np.uint64), np.uint32, where="test load")
  assert e.value.va == a.ctypes.data + 254 and not e.value.write and "test load" in str(e.value)

def test_unmapped_store_is_a_page_fault_and_writes_nothing(space):
  s, (a, b) = space
  before = a.copy()
  with pytest.raises(GPUPageFault) as e: s.store(np.array([16], np.uint64), np.array([1], np.uint8))
  assert e.value.write and e.value.va == 16
  assert (a == before).all()

def test_unmap_then_fault(space):
  s, (a, _) = space
  s.unmap(a.ctypes.data)
  with pytest.raises(GPUPageFault): s.read_u32(a.ctypes.data)
  with pytest.raises(KeyError, match="nothing is mapped"): s.unmap(a.ctypes.data)

def test_overlapping_map_is_refused(space):
  s, (a, _) = space
  with pytest.raises(ValueError, match="overlaps"): s.map(a.ctypes.data + 8, 16)

def test_scalar_helpers(space):
  s, (_, b) = space
  s.write_u64(b.ctypes.data + 8, 0x1122334455667788)
  assert s.read_u32(b.ctypes.data + 8) == 0x55667788 and s.read_u64(b.ctypes.data + 8) == 0x1122334455667788
  s.copy(b.ctypes.data + 32, b.ctypes.data + 8, 8)
  assert s.read(b.ctypes.data + 32, 8) == (0x1122334455667788).to_bytes(8, "little")

def test_separate_host_backing():
  host = (ctypes.c_uint32 * 4)(1, 2, 3, 4)
  s = AddressSpace("nv")
  s.map(0x200000000, 16, host=ctypes.addressof(host))
  assert s.load(np.array([0x200000004, 0x20000000c], np.uint64), np.uint32).tolist() == [2, 4]

from hypothesis import given, settings, strategies as st

@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 300), min_size=1, max_size=4), offsets=st.lists(st.integers(-64, 1400), min_size=1, max_size=40),
       itemsize=st.sampled_from([1, 2, 4, 8]))
def test_page_fault_exactly_when_outside(sizes, offsets, itemsize):
  """A random set of allocations (gaps between them) and random accesses: the load returns the bytes at every address,
  or raises GPUPageFault naming the first address whose access leaves its allocation."""
  arena = np.random.default_rng(len(sizes)).integers(0, 256, 2048, dtype=np.uint8)
  s, ranges, pos = AddressSpace("prop"), [], 0
  for n in sizes:
    s.map(arena.ctypes.data + pos, n)
    ranges.append((pos, pos + n))
    pos += n + 17  # a gap that belongs to no allocation
  inside = lambda o: any(a <= o and o + itemsize <= b for a, b in ranges)
  addrs = np.array([arena.ctypes.data + o for o in offsets], np.uint64)
  dt = np.dtype(f"u{itemsize}")
  bad = [o for o in offsets if not inside(o)]
  if bad:
    with pytest.raises(GPUPageFault) as e: s.load(addrs, dt)
    assert e.value.va == arena.ctypes.data + bad[0]
  else:
    want = [int.from_bytes(arena[o:o + itemsize].tobytes(), "little") for o in offsets]
    assert s.load(addrs, dt).tolist() == want
