"""Address translation under AM (DEV=MOCKPCI+AMD): what the GMC's walk of the page tables AM writes enforces, each case
followed by a known-good op. The PTE permission bits (a load, store or instruction fetch the PTE does not permit is a
GPU fault naming the VA, latched as PERMISSION_FAULTS), the FRAG field (a fragment that is not one contiguous run of
like entries is refused at the invalidation), a system PTE to a page since munmapped (a fault), and a translation used
after its PTEs changed with no invalidation since (reported: a warning naming the VA; the old translation is used).
"""
import pytest
from support.am import run, SETUP

VM = SETUP + """
from tinygrad.runtime.autogen.am import am
from tinygrad.runtime.support.memory import PageTableTraverseContext, AddrSpace
dev = Device["AMD"]
adev = dev.iface.dev_impl
def buffer_of(t): return t.uop.base.buffer._buf
def edit_ptes(b, fn, flush=True):
  ctx = PageTableTraverseContext(adev, adev.mm.root_page_table, b.va_addr, inspect=True)
  for _, pt, i, n, covers in ctx.next(b.meta.mapping.size):
    for j in range(i, i + n): pt.entries[j] = fn(pt.entries[j], covers)
  if flush: adev.gmc.flush_tlb("GC", 0)
x = np.arange(64, dtype=np.float32)
a = Tensor(x).contiguous().realize()
b = buffer_of(a)
print("VA", hex(b.va_addr))
"""

PERMS = {"write": ("WRITEABLE", 4), "read": ("READABLE", 2), "execute": ("EXECUTABLE", 8)}

@pytest.mark.parametrize("access,dev", [("write", "MOCKPCI+AMD"), ("read", "MOCKPCI+AMD"), ("execute", "MOCKPCI+AMD"),
                                        ("write", "MOCKPCI+AMD:LLVM:gfx1201")])
def test_access_the_pte_does_not_permit_is_a_fault(access, dev):
  """The PTEs of a buffer (or of the kernel's code) lose one permission: a read still works where only WRITEABLE went;
  the access that needs the permission faults, the fault latches PERMISSION_FAULTS (2 read, 4 write, 8 execute) and
  the page, AM reports it through the IH ring and recovers, and the next op is right."""
  flag, bits = PERMS[access]
  tags, out = run(VM + f"""
import gc
twice = a * 2
twice.realize()
if "{access}" == "execute":
  code = [o.lib_gpu for o in gc.get_objects() if type(o).__name__ == "AMDProgram" and o.dev is dev]   # every kernel's code
  for c in code: edit_ptes(c, lambda e, _: e & ~am.AMDGPU_PTE_{flag})
  print("VA", hex(code[-1].va_addr))
else: edit_ptes(b, lambda e, _: e & ~am.AMDGPU_PTE_{flag})
if "{access}" == "write": print("READ", (a + 1).tolist() == (x + 1).tolist())
report("ERROR", lambda: (a.assign(a + 1) if "{access}" == "write" else a * 2).tolist())
fresh_op("AMD")
""", dev)
  assert tags["ERROR"] == "RuntimeError | Device hang detected", out
  assert f"'permission_faults': {bits}" in out and "'mapping_error': 0" in out, out
  assert f"is not permitted: its PTE is not {flag.lower()}" in out and tags["VA"] in out, out
  if access == "write": assert tags["READ"] == "True", out
  assert tags["FRESH"] == "True", out

@pytest.mark.parametrize("dev", ["MOCKPCI+AMD", "MOCKPCI+AMD:LLVM:gfx1201"])
def test_fragment_that_is_not_contiguous_is_refused(dev):
  """A 4 MiB buffer's PTEs claim fragments (FRAG, bits 7-11 on both generations); one entry of a fragment is moved to
  another page: the invalidation refuses the tables, naming the VA and the fragment. Put back, the device works."""
  tags, out = run(VM + """
big = Tensor(np.arange(1 << 20, dtype=np.float32)).contiguous().realize()
bb, found = buffer_of(big), []
def corrupt(e, covers):
  if not found and (e >> 7) & 0x1f > covers.bit_length() - 13:   # the first entry inside a larger fragment
    found.append(e)
    return e + 0x1000
  return e
report("FRAG", lambda: edit_ptes(bb, corrupt))
print("FOUND", bool(found))
edit_ptes(bb, lambda e, _: found[0] if e == found[0] + 0x1000 else e)
print("BIG", (big + 1).numpy()[-3:].tolist() == [(1 << 20) - 2, (1 << 20) - 1, 1 << 20])
fresh_op("AMD")
""", dev)
  assert tags["FOUND"] == "True", out
  assert tags["FRAG"].startswith("FragmentMismatch |") and "it is not contiguous in memory" in tags["FRAG"], out
  assert tags["BIG"] == "True" and tags["FRESH"] == "True", out

def test_system_pte_to_a_munmapped_page_faults():
  """A buffer's page is mapped to a host page (a system PTE through the pagemap's frame) and reads through it; then the
  host page is freed (AM munmaps it and leaves the PTE): the GPU's next read there faults, naming the VA."""
  tags, out = run(VM + """
hb = dev.iface.alloc(0x1000, host=True)
hb.cpu_view().view(size=256, fmt='B')[:] = np.arange(100, 164, dtype=np.float32).tobytes()
adev.mm.unmap_range(b.va_addr, 0x1000)
adev.mm.map_range(b.va_addr, 0x1000, hb.meta.mapping.paddrs, aspace=AddrSpace.SYS, snooped=True, uncached=True)
print("HOST", (a + 1).tolist() == list(range(101, 165)))
dev.iface.free(hb)
report("ERROR", lambda: (a + 1).tolist())
fresh_op("AMD")
""")
  assert tags["HOST"] == "True", out
  assert tags["ERROR"] == "RuntimeError | Device hang detected", out
  assert "'mapping_error': 1" in out and tags["VA"] in out, out
  assert tags["FRESH"] == "True", out

def test_translation_used_after_its_ptes_changed_without_flush_is_reported():
  """AM unmaps a buffer's PTEs (no invalidation, as its unmap_range does) and a kernel still reads the buffer (nothing is
  mapped in between: each map_range invalidates): the TLB's old translation is used (the values are right) and the use
  is reported, naming the VA. After an invalidation the same read faults."""
  tags, out = run(VM + """
out = Tensor.zeros(64).contiguous().realize()
out.assign(a + 1).realize().numpy()   # the kernel is built and uploaded, the staging buffers exist: nothing maps below
adev.mm.unmap_range(b.va_addr, 0x1000)
dev.allocator._copyin(b, memoryview(x * 3))   # SDMA writes the buffer through the old translation
out.assign(a + 1).realize()                   # and the same kernel reads it
print("OLD", out.numpy().tolist() == (x * 3 + 1).tolist())
adev.gmc.flush_tlb("GC", 0)
report("ERROR", lambda: (a + 1).tolist())
fresh_op("AMD")
""")
  assert tags["OLD"] == "True", out
  assert f"access at {tags['VA']}" in out and "uses a stale translation" in out, out
  assert tags["ERROR"] == "RuntimeError | Device hang detected" and "'mapping_error': 1" in out, out
  assert tags["FRESH"] == "True", out
