"""Stands in for `test.mockgpu.usb`, which tinygrad imports whenever DEV names a MOCK interface.

The AM driver over USB (MOCKUSB+AMD) is not modelled yet: the mock USB bus has no device, so tinygrad's USBIface finds
none ("AMD:0 does not exist (0 devices available)") and libusb never sees the host's USB devices.
"""
from mockgpu.errors import Unmodelled

class MockUSB3:
  @classmethod
  def list_devices(cls, vendor:int, dev:int) -> list:
    """USB3.list_devices: (device, "usb:BUS-ADDR") for each device with that vendor:product. The mock bus is empty."""
    return []
  def __init__(self, *args, **kwargs):
    raise Unmodelled("mockgpu: the USB (AM over USB4/ASM24) interface is not modelled; use DEV=MOCK+AMD (KFD)")
