"""The bridge: tinygrad's MOCK imports resolve to mockgpu with no PYTHONPATH, and nothing else in the process changes."""
import os, subprocess, sys

def py(code:str, **env) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/tmp", env={**os.environ, **env}, timeout=120)

def test_mock_modules_resolve_to_mockgpu():
  p = py("import tinygrad.runtime.support.hcq, test.mockgpu.mockgpu as m, test.mockgpu.usb as u, mockgpu.bridge, mockgpu.driver.usb\n"
         "print(m is mockgpu.bridge, u is mockgpu.driver.usb, m.__spec__.name)", DEV="MOCK+AMD")
  assert p.stdout.split() == ["True", "True", "mockgpu.bridge"], p.stderr

def test_nothing_is_imported_until_tinygrad_asks():
  p = py("import sys; print(sorted(m for m in sys.modules if m.startswith(('mockgpu', 'test', 'tinygrad', 'numpy'))))")
  assert p.stdout.strip() == "['mockgpu', 'mockgpu._finder']", p.stdout + p.stderr

def test_other_test_packages_still_win(tmp_path):
  (tmp_path / "test").mkdir()
  (tmp_path / "test" / "__init__.py").write_text("MARK = 'mine'\n")
  p = subprocess.run([sys.executable, "-c", "import test; print(test.MARK)"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
  assert p.stdout.strip() == "mine", p.stderr

def test_usb_bus_lists_only_the_bridges_it_models():
  p = py("from test.mockgpu.usb import MockUSB3\nprint(len(MockUSB3.list_devices(0xADD1, 1)), MockUSB3.list_devices(0x3801, 1))\n"
         "try: MockUSB3(99)\nexcept NotImplementedError as e: print('NIE', e)", DEV="MOCKUSB+AMD", MOCKGPU_COUNT="2")
  assert p.stdout.splitlines()[0] == "2 []" and "NIE" in p.stdout and "USB device 99" in p.stdout, p.stdout + p.stderr

def test_mmio_interface_is_tinygrads_own_class_extended():
  p = py("import tinygrad.runtime.support.hcq as hcq, mockgpu.bridge as b\n"
         "print(issubclass(hcq.FileIOInterface, b._RealFileIO), issubclass(hcq.MMIOInterface, b._RealMMIO), hcq.MMIOInterface.__name__)",
         DEV="MOCK+AMD")
  assert p.stdout.split() == ["True", "True", "MockMMIOInterface"], p.stderr

def test_real_paths_go_to_the_os():
  p = py("from tinygrad.runtime.support.hcq import FileIOInterface as F\n"
         "f = F('/etc/hostname'); print(f.handle is None, f.read() == open('/etc/hostname').read(), F.exists('/proc/self'), "
         "F.exists('/dev/kfd-nope'))",
         DEV="MOCK+AMD")
  assert p.stdout.split() == ["True", "True", "True", "False"], p.stderr

def test_builtins_untouched():
  p = py("import builtins; mv = builtins.memoryview; from tinygrad import Tensor\nimport tinygrad.runtime.ops_amd\n"
         "print(builtins.memoryview is mv, memoryview.__module__)", DEV="MOCK+AMD")
  assert p.stdout.split() == ["True", "builtins"], p.stderr

def test_only_watched_ranges_call_back():
  p = py("""
import ctypes, tinygrad.runtime.support.hcq as hcq, mockgpu.bridge as b
page, other = (ctypes.c_uint64 * 4)(), (ctypes.c_uint32 * 4)()
seen = []
b.machine().watch(ctypes.addressof(page), 32, lambda addr, v: seen.append((addr - ctypes.addressof(page), v)))
db = hcq.MMIOInterface(ctypes.addressof(page) + 8, 8, fmt='Q')
plain = hcq.MMIOInterface(ctypes.addressof(other), 16, fmt='I')
db[0] = 7; plain[1] = 9
print(type(db).__name__, type(plain).__name__, isinstance(plain, hcq.MMIOInterface), seen, page[1], other[1],
      type(plain).__setitem__ is b._RealMMIO.__setitem__)
""", DEV="MOCK+AMD")
  assert p.stdout.split(maxsplit=3)[:3] == ["WatchedMMIOInterface", "MockMMIOInterface", "True"], p.stdout + p.stderr
  assert p.stdout.strip().endswith("[(8, 7)] 7 9 True"), p.stdout

def test_tinygrads_own_mmio_subclasses_keep_their_constructors():
  """USBMMIOInterface(usb, addr, size, fmt, pcimem) and RemoteMMIOInterface(dev, residx, nbytes, fmt, off, ...) subclass
  the MMIOInterface the bridge gives tinygrad; their constructors take other arguments, and their views keep the class."""
  p = py("""
from tinygrad.runtime.support.usb import USBMMIOInterface
from tinygrad.runtime.support.system import RemoteMMIOInterface
u = USBMMIOInterface(None, 0xf000, 16, fmt='B', pcimem=False)
r = RemoteMMIOInterface(None, 5, 64, 'B')
rv = r.view(8, 16, fmt='I')
print(type(u).__name__, u.addr, len(u), type(r).__name__, len(r), type(rv).__name__, rv.off, rv.fmt, len(rv))
""", DEV="MOCK+AMD")
  assert p.stdout.split() == ["USBMMIOInterface", str(0xf000), "16", "RemoteMMIOInterface", "64", "RemoteMMIOInterface", "8", "I", "4"], \
    p.stdout + p.stderr

def test_kfd_is_installed_at_its_first_use():
  """The bridge defers KFD (system.System.defer): an NVIDIA process neither imports nor builds it; a look at
  devices["amd"] or under one of its paths installs it, claiming exactly amd_sysfs.kfd_roots."""
  nv = py("from tinygrad import Tensor\nimport sys\nassert (Tensor([1., 2]) + 1).tolist() == [2., 3.]\n"
          "print('kfd' if 'mockgpu.driver.kfd' in sys.modules else 'none')", DEV="MOCK+NV")
  assert nv.stdout.split()[-1:] == ["none"], nv.stdout + nv.stderr[-3000:]
  code = """import tinygrad.runtime.support.hcq, sys
from mockgpu import bridge
from mockgpu.driver import amd_sysfs
m = bridge.machine()
print('mockgpu.driver.kfd' in sys.modules, m.vfs.owns('/proc/self/maps'), 'mockgpu.driver.kfd' in sys.modules)
first = {touch}
ours = sorted(r for r in m.vfs.roots if r.startswith(('/dev/kfd', '/dev/dri', '/sys/devices/virtual/kfd', '/sys/class/drm')))
print(len(m.devices['amd']), m.vfs.exists('/dev/kfd'), ours == sorted(amd_sysfs.kfd_roots(3)), first)
"""
  for touch, first in (("len(m.devices['amd'])", "3"), ("m.vfs.listdir('/sys/devices/virtual/kfd/kfd/topology/nodes')", "['0', '1', '2', '3']")):
    p = py(code.format(touch=touch), DEV="MOCK+AMD", MOCKGPU_COUNT="3")
    assert p.stdout.splitlines() == ["False False False", f"3 True True {first}"], (touch, p.stdout + p.stderr[-3000:])
