"""Stands in for `test.mockgpu.usb`, which tinygrad imports whenever DEV names a MOCK interface: the USB bus of the mock
machine, with MOCKGPU_COUNT GPUs behind ASM2464 bridges (tinygrad's custom firmware, VID:PID ADD1:0001) for
DEV=MOCKUSB+AMD (with GMMU=0, as tinygrad's CI runs it). Each bridge (mockgpu.emulators.am.asm2464) drives its own AM
PCI function (mockgpu.emulators.am.device), the same model DEV=MOCKPCI+AMD uses. Transfers never reach libusb.

USB3's interface as tinygrad's CustomASM24Controller uses it: control transfers, bulk OUT (0x02) and IN (0x81), and the
asynchronous forms, which complete at once and in order (bulk_wait returns at once).
"""
from __future__ import annotations
import itertools, os
from mockgpu import config
from mockgpu.errors import Unmodelled

VENDOR, PRODUCT = 0xADD1, 0x0001

def _machine():
  from mockgpu.bridge import machine   # the process's machine; MockUSB3 is used only under tinygrad, after the bridge
  return machine()

def _gpus() -> list:
  machine = _machine()
  if not hasattr(machine, "usb_gpus"): machine.usb_gpus = [None] * config.gpu_count()
  return machine.usb_gpus

def _bridge(index:int):
  gpus, machine = _gpus(), _machine()
  if gpus[index] is None:
    from mockgpu.boards import selected_amd_board
    from mockgpu.emulators.am.device import AMDevice
    from mockgpu.emulators.am.asm2464 import ASM2464
    dev = AMDevice(index, selected_amd_board(), bus_name(index), machine, machine.host_pages, [])
    gpus[index] = ASM2464(dev, machine)
    dev.dma_windows = gpus[index].windows
    machine.devices.setdefault("AM", []).append(dev)
  return gpus[index]

def bus_name(index:int) -> str: return f"usb:{os.getpid():x}-{index + 1}"

class MockUSB3:
  @classmethod
  def list_devices(cls, vendor:int, dev:int) -> list:
    """USB3.list_devices: (device, "usb:BUS-ADDR") for each device with that vendor:product (the address is unique to
    the process, so AM's lock files of parallel processes never collide)."""
    if (vendor, dev) != (VENDOR, PRODUCT): return []
    return [(i, bus_name(i)) for i in range(config.gpu_count())]

  def __init__(self, dev, *args, **kwargs):
    if not isinstance(dev, int) or not 0 <= dev < config.gpu_count():
      raise Unmodelled(f"mockgpu: USB device {dev!r} is not one MockUSB3.list_devices gave")
    self.bridge = _bridge(dev)
    self.product = "custom mockgpu ASM2464"
    self._tags = itertools.count(1)

  def control_write(self, request:int, value:int=0, index:int=0, data:bytes=b'', timeout:int=1000):
    self.bridge.control_write(request, value, index, bytes(data))
  def control_read(self, request:int, length:int, value:int=0, index:int=0, timeout:int=1000) -> memoryview:
    data = self.bridge.control_read(request, length, value, index)
    return memoryview(bytearray(data[:length].ljust(length, b"\0")))
  def bulk_write(self, payload, timeout:int=1000): self.bridge.bulk_write(bytes(payload))
  def bulk_read(self, length:int, timeout:int=1000) -> memoryview: return memoryview(bytearray(self.bridge.bulk_read(length)))

  # asynchronous transfers: done when submitted, in order
  def bulk_write_async(self, payload, timeout:int=10000) -> int:
    self.bulk_write(payload)
    return next(self._tags)
  def control_write_async(self, request:int, value:int=0, index:int=0, data:bytes=b"", timeout:int=1000) -> int:
    self.control_write(request, value, index, data)
    return next(self._tags)
  def control_read_async(self, request:int, length:int, value:int=0, index:int=0, timeout:int=1000) -> tuple[int, memoryview]:
    return next(self._tags), self.control_read(request, length, value, index)
  def bulk_wait(self, tag:int): pass
