"""Stands in for `test.mockgpu.usb`, which tinygrad imports whenever DEV names a MOCK interface.

The AM driver over USB (MOCKUSB+AMD) is not modelled yet; tinygrad only touches MockUSB3 when that interface is chosen.
"""
from mockgpu.errors import Unmodelled

class MockUSB3:
  def __init__(self, *args, **kwargs):
    raise Unmodelled("mockgpu: the USB (AM over USB4/ASM24) interface is not modelled; use DEV=MOCK+AMD (KFD)")
