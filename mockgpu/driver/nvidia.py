"""The NVIDIA kernel driver as tinygrad's NVKIface sees it: /dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm, /proc/driver/nvidia.

install() only registers the paths: the driver model (nv_rm.py: RM and the device files; nv_uvm.py: UVM) and tinygrad's
large NVIDIA ABI tables are imported at the first open, so processes that never touch an NVIDIA path do not pay for them.
"""
from mockgpu import config

DRIVER_VERSION = "570.133.07"

def install(system):
  drv = None
  def driver():
    nonlocal drv
    if drv is None:
      from mockgpu.driver.nv_rm import Driver
      drv = Driver(system)
    return drv
  def opener(kind:str):
    return lambda path, flags: driver().open(kind, path, flags)
  vfs = system.vfs
  vfs.claim("/dev/nvidia*")
  vfs.claim("/proc/driver/nvidia")
  vfs.add_device("/dev/nvidiactl", opener("ctl"))
  vfs.add_device("/dev/nvidia-uvm", opener("uvm"))
  vfs.add_file("/proc/driver/nvidia/version", f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {DRIVER_VERSION}  (mockgpu)\n")
  for i in range(config.gpu_count()):
    vfs.add_device(f"/dev/nvidia{i}", opener("dev"))
    vfs.add_file(f"/proc/driver/nvidia/gpus/0000:{i + 1:02x}:00.0/information", lambda i=i: driver().proc_information(i))
