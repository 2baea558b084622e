"""tinygrad's own smoke test, test/test_tiny.py from the tinygrad 0.14.0 sdist, on every mock device configuration
and every other AMD board mockgpu runs (conftest.board_configs: DEV=MOCKKFD+AMD:LLVM:gfx1151, gfx1201, gfx942, gfx950), the arm64
CPU lane (DEV=MOCK+CPU, MOCK+CPU:LLVM), and tinygrad's own driver AM over the mock PCI function (DEV=MOCKPCI+AMD,
MOCKPCI+AMD:LLVM:gfx1201) and over the mock ASM2464 USB bridge (GMMU=0 DEV=MOCKUSB+AMD).

It runs from a directory outside any tinygrad checkout (only the one file is there), so the MOCK modules can only come
from mockgpu. The only skips allowed are tinygrad's own (its test skips image tests unless DEV is CL).
"""
import os, re, subprocess, sys, tarfile
import pytest
from conftest import device_configs, cpu_lane_configs

TINYGRAD_SKIPS = {"image only supported on CL"}

@pytest.fixture(scope="session")
def test_tiny(tmp_path_factory) -> str:
  cache = os.path.join(os.path.expanduser("~/.cache/mockgpu"), "sdist")
  sdist = os.path.join(cache, "tinygrad-0.14.0.tar.gz")
  if not os.path.exists(sdist):
    os.makedirs(cache, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "tinygrad==0.14.0", "-d", cache],
                   check=True, timeout=300)
  with tarfile.open(sdist) as tf: member = tf.extractfile("tinygrad-0.14.0/test/test_tiny.py").read()
  d = tmp_path_factory.mktemp("smoke")
  (d / "test_tiny.py").write_bytes(member)
  return str(d)

# tinygrad's own AMD driver (AM) on the mock PCI function, on both RDNA boards (tinygrad's CI runs test_tiny on MOCKPCI)
AM_CONFIGS = ["MOCKPCI+AMD", "MOCKPCI+AMD:LLVM:gfx1201", "MOCKUSB+AMD"]
ENV = {"MOCKUSB+AMD": {"GMMU": "0"}}   # tinygrad's CI runs AM over USB with GMMU=0

@pytest.mark.parametrize("dev", device_configs(boards=True) + cpu_lane_configs()
                         + ([] if os.environ.get("MOCKGPU_TEST_DEVICES") else AM_CONFIGS))
def test_tiny_passes(test_tiny, dev):
  p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "test_tiny.py"], cwd=test_tiny,
                     env={**os.environ, "DEV": dev, **ENV.get(dev, {})}, capture_output=True, text=True, timeout=1500)
  assert p.returncode == 0, f"test_tiny.py failed on DEV={dev}:\n{p.stdout[-8000:]}\n{p.stderr[-3000:]}"
  skips = set(re.findall(r"SKIPPED \[\d+\] [^:]+:\d+: (.*)", p.stdout))
  assert skips <= TINYGRAD_SKIPS, f"skips not made by tinygrad itself on DEV={dev}: {skips - TINYGRAD_SKIPS}"
  assert re.search(r"\b(1[0-9]|2[0-9]) passed", p.stdout), p.stdout[-2000:]
