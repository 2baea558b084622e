"""The host paths through which tinygrad reaches PCI devices and physical memory, owned under every MOCK interface.

tinygrad's PCI interfaces (AM over PCI, NV over PCI) scan `/sys/bus/pci/devices`, unbind the driver of what they find,
remove its sibling functions and map its BARs; before they read `/proc/self/pagemap` they make sure
`/proc/sys/vm/compact_unevictable_allowed` reads 0, running `sudo` to write it when it does not; with VFIO=1 they load
the vfio module with `sudo modprobe` unless `/sys/module/vfio` exists. A mock must never do any of that to the host, so
these roots are claimed here whatever the interface: a path under them answers from the mock or is ENOENT, never the
host's file. The mock PCI functions (mockgpu.driver.am_pci) add their files under the claimed bus directory.

- `/proc/sys/vm/compact_unevictable_allowed` reads 0: tinygrad has nothing to change, so it runs no `sudo`.
- `/sys/module/vfio` exists with its `enable_unsafe_noiommu_mode` parameter, so tinygrad runs no `modprobe`;
  `/dev/vfio` is claimed and empty, so opening `/dev/vfio/vfio` is ENOENT and tinygrad's VFIO=1 path falls back to the
  plain sysfs path (VFIO and its MSI interrupts are not modelled).
- `/sys/bus/pci/drivers_probe` and `/sys/bus/pci/rescan` are claimed (the whole `/sys/bus/pci` tree is) and absent.
- `/proc/self/pagemap` belongs to the mock PCI model; until a mock function serves it, reading it is Unmodelled.
"""
from __future__ import annotations
from mockgpu.errors import Unmodelled
from mockgpu.vfs import Handle

PCI_ROOT = "/sys/bus/pci"
PCI_DEVICES = "/sys/bus/pci/devices"
COMPACT_UNEVICTABLE = "/proc/sys/vm/compact_unevictable_allowed"
PAGEMAP = "/proc/self/pagemap"
VFIO_MODULE = "/sys/module/vfio"
CLAIMED = (PCI_ROOT, "/proc/sys/vm", PAGEMAP, VFIO_MODULE, "/dev/vfio")

class NoPagemap(Handle):
  def read(self, size=None, offset=None):
    raise Unmodelled(f"mockgpu: {PAGEMAP} is served by a mock PCI function's memory model; none is open in this process")

def install(system):
  vfs = system.vfs
  for root in CLAIMED: vfs.claim(root)
  vfs.dirs.setdefault(PCI_DEVICES, set())   # an empty bus until a PCI model adds its functions
  vfs.dirs.setdefault("/dev/vfio", set())
  vfs.add_file(COMPACT_UNEVICTABLE, "0\n")
  noiommu = ["N\n"]
  def set_noiommu(data:bytes):
    if data.strip() not in (b"1", b"Y", b"0", b"N"): raise OSError(22, f"{VFIO_MODULE}/parameters/enable_unsafe_noiommu_mode: invalid {data!r}")
    noiommu[0] = "Y\n" if data.strip() in (b"1", b"Y") else "N\n"
  vfs.add_file(f"{VFIO_MODULE}/parameters/enable_unsafe_noiommu_mode", lambda: noiommu[0], on_write=set_noiommu)
  vfs.add_device(PAGEMAP, lambda path, flags: NoPagemap(path, flags))
