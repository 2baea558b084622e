"""tinygrad's own AMD driver (AM, DEV=MOCKPCI+AMD) on the mock PCI function: the function itself (config space,
ReBAR, COMMAND gates, sysfs, pagemap), and what AM sees when something goes wrong, each followed by a known-good op.

The child programs run tinygrad; the in-process tests build the models directly.
"""
import ctypes, mmap, os
import pytest
from conftest import run_tinygrad
from tinygrad.runtime.autogen import pci as P
from mockgpu.boards import amd_board
from mockgpu.emulators.am.pci import PCIFunction, PCIAccessRefused, MB
from mockgpu.emulators.am.regs import RegisterFile, UndefinedRegister
from mockgpu.driver.am_pci import HostPages
from support.am import run, SETUP


@pytest.mark.parametrize("dev", ["MOCKPCI+AMD", "MOCKPCI+AMD:LLVM:gfx1201"])
def test_am_boots_and_computes(dev):
  tags, out = run("""
rng = np.random.default_rng(5)
a, b = rng.standard_normal((24, 40), dtype=np.float32), rng.standard_normal((40, 8), dtype=np.float32)
got = (Tensor(a) @ Tensor(b)).relu().numpy()
print("CLOSE", np.allclose(got, np.maximum(a.astype(np.float64) @ b, 0), atol=1e-4))
print("ARCH", Device["AMD"].arch, type(Device["AMD"].iface).__name__)
""", dev)
  assert tags["CLOSE"] == "True", out
  assert tags["ARCH"] == ("gfx1201" if "gfx1201" in dev else "gfx1100") + " MOCKPCIIface"

def test_copies_cpu_buffers_disk_and_peers():
  """What tinygrad's HCQ tests check on MOCKPCI, written here: copies both ways (a 20000-byte buffer spans VRAM chunks
  that are not physically contiguous), a peer copy between two functions (P2P through the peer's BAR0), a CPU buffer
  mapped to the device (pagemap frames), a disk-to-device copy, and 50 ops in a row on the timeline."""
  tags, out = run("""
import os, tempfile
from tinygrad import dtypes
x = np.random.default_rng(1).standard_normal(5000).astype(np.float32)
t = Tensor(x, device="AMD").realize(); print("COPY", np.array_equal(t.numpy(), x))
print("PEER", np.array_equal((t.to("AMD:1").realize() * 2).numpy(), x * 2))
print("CPU2DEV", np.array_equal(Tensor(x, device="CPU").realize().to("AMD").realize().numpy(), x))
fn = os.path.join(tempfile.mkdtemp(), "w.bin"); x.tofile(fn)
print("DISK", np.array_equal(Tensor.empty(5000, dtype=dtypes.float32, device=f"disk:{fn}").to("AMD").realize().numpy(), x))
acc = Tensor.zeros(16, device="AMD").contiguous().realize()
for i in range(50): acc = (acc + 1).realize()
print("TIMELINE", acc.numpy().tolist() == [50.0] * 16)
""")
  assert all(tags[k] == "True" for k in ("COPY", "PEER", "CPU2DEV", "DISK", "TIMELINE")), out

@pytest.mark.parametrize("how,dev", [("unmap", "MOCKPCI+AMD"), ("corrupt", "MOCKPCI+AMD"), ("unmap", "MOCKPCI+AMD:LLVM:gfx1201")])
def test_page_fault_reaches_am_through_ih_and_recovery_works(how, dev):
  """A kernel reads a page whose PTE AM removed (or a PTE pointing past VRAM): the UTCL2 fault latches the GCVM fault
  registers and writes an IH entry; AM's interrupt handler reports it, recovery resets the MEC and re-creates the
  compute queue, and the next op on the same device is right."""
  tags, out = run(f"""
dev = Device["AMD"]
a = Tensor(np.arange(64, dtype=np.float32)).contiguous().realize()
buf, adev = a.uop.base.buffer._buf, dev.iface.dev_impl
if "{how}" == "unmap": adev.mm.unmap_range(buf.va_addr, 0x1000)
else:
  adev.mm.unmap_range(buf.va_addr, 0x1000)
  adev.mm.map_range(buf.va_addr, 0x1000, [(0, 0x1000)], aspace=__import__("tinygrad").runtime.support.memory.AddrSpace.PHYS)
  pt = adev.mm.page_tables(buf.va_addr, 0x1000)[-1]
  idx = ((buf.va_addr - adev.mm.va_base) >> 12) & 511
  pt.entries[idx] = (pt.entries[idx] & 0xfff) | (1 << 40)   # a frame far past the 24 GiB of VRAM
adev.gmc.flush_tlb("GC", 0)
print("VA", hex(buf.va_addr))
report("ERROR", lambda: (a + 1).tolist())
fresh_op("AMD")
""", dev)
  assert tags["ERROR"] == "RuntimeError | Device hang detected", out
  assert "src=UTCL2_FAULT" in out and "mapping_error': 1" in out and tags["VA"] in out, out
  assert tags["FRESH"] == "True", out

def test_undefined_register_and_bus_master_cleared():
  """An access to an address no block defines names it and the nearest register; DMA with PCI_COMMAND.MASTER clear is
  refused (the queues fault on their first system-memory access and AM sees the faults); the other function works."""
  tags, out = run("""
adev = Device["AMD"].iface.dev_impl
report("UNDEFINED", lambda: adev.rreg(0x3))
cmd = adev.pci_dev.read_config(pci.PCI_COMMAND, 2)
adev.pci_dev.write_config(pci.PCI_COMMAND, cmd & ~pci.PCI_COMMAND_MASTER, 2)
report("DMA", lambda: (Tensor([1.0, 2.0, 3.0]) + 1).tolist())
fresh_op("AMD:1")
""")
  assert tags["UNDEFINED"].startswith("UndefinedRegister |") and "dword 0x3" in tags["UNDEFINED"], out
  assert "nearest is NBIO regBIF_BX0_PCIE_INDEX2 at 0xe" in tags["UNDEFINED"]
  assert tags["DMA"] == "RuntimeError | Device hang detected" and "PCI_COMMAND.MASTER clear" in out, out
  assert tags["FRESH"] == "True", out

def test_wrong_firmware_payload_is_a_psp_failure():
  """The MEC image AM uploads is not the one the PSP expects: LOAD_IP_FW answers a non-zero status and AM raises
  "PSP command failed"; the second function (loaded with the right image) works."""
  tags, out = run("""
from mockgpu.emulators.am import firmware
orig, done = firmware.build, []
def corrupt(name):
  blob = bytearray(orig(name))
  if name.endswith("_mec.bin") and not done:
    done.append(name)
    blob[firmware.HDR + 5] ^= 0xff
  return bytes(blob)
firmware.build = corrupt
report("BOOT", lambda: Device["AMD:0"])
fresh_op("AMD:1")
""")
  assert tags["BOOT"].startswith("RuntimeError | PSP command failed"), out
  assert tags["FRESH"] == "True", out

# *** the models, in process ***

def _fn() -> PCIFunction:
  b = amd_board("gfx1100")
  return PCIFunction("test", b.vendor_id, b.device_id, b.revision, b.subsystem_vendor, b.subsystem_device, b.vram_size)

def test_config_space_capabilities_and_read_only_fields():
  fn = _fn()
  caps, cap = [], fn.read(P.PCI_CAPABILITY_LIST, 1)
  while cap:
    caps.append(fn.read(cap, 1))
    cap = fn.read(cap + 1, 1)
  assert caps == [P.PCI_CAP_ID_VNDR, P.PCI_CAP_ID_PM, P.PCI_CAP_ID_EXP, P.PCI_CAP_ID_MSI]
  assert fn.read(0x100, 4) & 0xffff == P.PCI_EXT_CAP_ID_REBAR
  fn.write(P.PCI_VENDOR_ID, 0x1234, 2)
  assert fn.read(P.PCI_VENDOR_ID, 2) == 0x1002 and fn.read(P.PCI_DEVICE_ID, 2) == 0x744c
  with pytest.raises(PCIAccessRefused, match="not naturally aligned"): fn.read(0x3, 2)

def test_bar_sizing_and_rebar():
  fn = _fn()
  fn.write(P.PCI_BASE_ADDRESS_5, 0xffffffff, 4)
  assert (~(fn.read(P.PCI_BASE_ADDRESS_5, 4) & ~0xf) + 1) & 0xffffffff == 1 * MB
  assert fn.bar_size[0] == 256 * MB
  fn.resize(15)   # 32 GiB: the smallest power of two holding the 24 GiB of VRAM
  assert fn.bar_size[0] == 32 << 30 and (fn.read(0x108, 4) >> 8) & 0x3f == 15
  with pytest.raises(OSError, match="cannot be resized"): fn.resize(16)

def test_command_gates():
  fn = _fn()
  with pytest.raises(PCIAccessRefused, match="MEMORY clear"): fn.require_memory("BAR5 read")
  fn.write(P.PCI_COMMAND, P.PCI_COMMAND_MEMORY, 2)
  fn.require_memory("BAR5 read")
  with pytest.raises(PCIAccessRefused, match="MASTER clear"): fn.require_master("a signal write")

def test_register_file_names_undefined_addresses():
  regs = RegisterFile("AM test", amd_board("gfx1201"))
  with pytest.raises(UndefinedRegister, match=r"dword 0x3 .*nearest is NBIF regBIF_BX0_PCIE_INDEX2"): regs.read(0x3)
  regs.write(regs.addr("regSCRATCH_REG6"), 0x1_0000_0005)
  assert regs.read(regs.addr("regSCRATCH_REG6")) == 5

def test_status_registers_are_read_only():
  from mockgpu import system
  from mockgpu.driver import host_pci, am_pci
  from mockgpu.emulators.am.regs import ReadOnlyRegister
  machine = system.System()
  for driver in (host_pci, am_pci): driver.install(machine)
  model = machine.host_pages.devices[0].dev()   # the function's model, built on first use
  for name in ("regMMMC_VM_FB_LOCATION_BASE", "regCP_STAT"):
    with pytest.raises(ReadOnlyRegister, match=name.removeprefix("reg")): model.regs.write(model.regs.addr(name), 1)
  with pytest.raises(ReadOnlyRegister, match="RCC_CONFIG_MEMSIZE"): model.regs.write(0xde3, 1)
  assert model.regs.read(0xde3) == 24 << 10

def test_pagemap_frames_stable_until_munmap():
  pages, m = HostPages(), mmap.mmap(-1, 2 * 0x1000)
  addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
  first, second = pages.entries(addr, 2)
  assert first >> 63 == 1 and pages.entries(addr, 1) == [first] and second == first + 1
  assert list(pages.resolve(0x5000, (first & ((1 << 55) - 1)) << 12, 0x2000, None)) == [(0x5000, 0x2000, addr)]
  pages.retire(addr, 0x1000)
  assert list(pages.resolve(0x5000, (first & ((1 << 55) - 1)) << 12, 0x2000, None)) == [(0x6000, 0x1000, addr + 0x1000)]

def test_functions_have_their_own_bus_names_and_bars(monkeypatch):
  monkeypatch.setenv("MOCKGPU_COUNT", "2")
  from mockgpu import system
  from mockgpu.driver import host_pci, am_pci
  machine = system.System()
  for driver in (host_pci, am_pci): driver.install(machine)
  buses = machine.vfs.listdir("/sys/bus/pci/devices")
  assert len(buses) == 2 and all(b.startswith(f"{os.getpid():04x}:") for b in buses)
  starts = [machine.vfs.open(f"/sys/bus/pci/devices/{b}/resource", os.O_RDONLY).read().decode().split()[0] for b in buses]
  assert len(set(starts)) == 2

def test_usb_bridge_boots_am_and_refuses_unrouted_requests():
  """GMMU=0 DEV=MOCKUSB+AMD: AM boots through the ASM2464 model (config and memory TLPs, the SRAM engine for msg1 and
  copies); a config request to a bus no bridge forwards completes as Unsupported Request, which tinygrad raises; the
  device keeps working."""
  p = run_tinygrad("MOCKUSB+AMD", SETUP + """
dev = Device["AMD"]
usb = dev.iface.pci_dev.usb
report("UR", lambda: usb.pcie_cfg_req(0x0, bus=9, dev=0, fn=0, size=4))
print("VENDOR", hex(usb.pcie_cfg_req(0x0, bus=4, dev=0, fn=0, size=2)))
fresh_op("AMD")
""", env={"GMMU": "0", "MOCKGPU_COUNT": "1"})
  tags = dict(line.partition(" ")[::2] for line in p.stdout.splitlines())
  assert tags["UR"] == "RuntimeError | TLP completion status: Unsupported Request: 0x9000000", p.stdout
  assert tags["VENDOR"] == "0x1002" and tags["FRESH"] == "True", p.stdout

def test_usb_sdma_fault_reaches_tinygrad_within_the_wait_timeout():
  """Over USB the copy window's PTEs are gone and an SDMA copy into it is submitted: SDMA faults on its first access,
  the fault latches and goes to the IH ring. USB has no interrupt wake-up (USBIface.sleep does nothing), so tinygrad
  notices at its wait timeout (HCQDEV_WAIT_TIMEOUT_MS, 3 s here), reads the IH ring over the bridge and reports the
  fault: within the timeout plus the recovery, not tinygrad's fixed 10 s copy-in drain (a fault inside _copyin's
  streaming surfaces only there, as on hardware). AM never resets SDMA, so that device's copies stay broken; the second
  bridge works."""
  p = run_tinygrad("MOCKUSB+AMD", SETUP + """
import time
dev = Device["AMD"]
cb, adev = dev.iface.copy_bufs[0], dev.iface.dev_impl
src = Tensor(np.arange(1024, dtype=np.float32), device="AMD").realize().uop.base.buffer._buf
adev.mm.unmap_range(cb.va_addr, cb.size)
adev.gmc.flush_tlb("GC", 0)
dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).copy(cb, src, 0x1000) \
  .signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
t0 = time.perf_counter()
report("SYNC", lambda: dev.synchronize())
print("SECONDS", time.perf_counter() - t0)
print("VA", hex(cb.va_addr))
fresh_op("AMD:1")
""", env={"GMMU": "0", "MOCKGPU_COUNT": "2", "HCQDEV_WAIT_TIMEOUT_MS": "3000"})
  tags = dict(line.partition(" ")[::2] for line in p.stdout.splitlines())
  assert tags["SYNC"] == "RuntimeError | Device hang detected", p.stdout + p.stderr[-3000:]
  assert 3.0 <= float(tags["SECONDS"]) < 8.0, p.stdout
  assert "src=UTCL2_FAULT" in p.stdout and "mapping_error': 1" in p.stdout and f"}} {tags['VA']}" in p.stdout, p.stdout
  assert "SDMA queue 100 stopped: GPU page fault" in p.stderr and tags["FRESH"] == "True", p.stdout

@pytest.mark.parametrize("board", ["gfx942", "gfx950"])
def test_cdna_boards_are_refused_on_am(board):
  """gfx942/gfx950 over AM (8 XCCs over AIDs, NBIO 7.9's indirect PCIe writes, AQL) are not modelled: opening one is a
  named Unmodelled error that says so, not an internal crash; gfx950's MP0/MP1 are 13.0.12, the version tinygrad's AM
  treats as MI350 (no SMU firmware, the MI3xx SMU messages)."""
  from tinygrad.runtime.autogen.am import am
  tags, out = run('report("OPEN", lambda: Device["AMD"])', f"MOCKPCI+AMD:LLVM:{board}")
  assert tags["OPEN"].startswith(f"Unmodelled | AM (DEV=MOCKPCI/MOCKUSB) models the RDNA boards gfx1100 and gfx1201: {board}"), out
  if board == "gfx950": assert amd_board(board).ip_version(am.MP0_HWID) == amd_board(board).ip_version(am.MP1_HWID) == (13, 0, 12)
