"""The NVIDIA kernel driver as tinygrad's NVKIface sees it: /dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm, /proc/driver/nvidia.

NVIDIA's root: install() registers the paths; the first open builds the driver (build()): the GPUs, RM over them
(nv_rm.py: objects, classes, controls, memory), then UVM over RM (nv_uvm.py), and the device files that hand escapes to
RM and UVM ioctls to UVM (nv_rm.Driver). The driver model and tinygrad's large NVIDIA ABI tables are imported only
then, so processes that never touch an NVIDIA path do not pay for them.
"""
from mockgpu import config

def build(machine):
  """The NVIDIA driver on `machine` (system.System): its GPUs (the selected board; an unknown one raises UnknownBoard
  here, at the first NVIDIA open, never for the AMD mock), each built with the machine and its PTX executor, then RM
  with the profiler's classes and controls, then UVM."""
  from mockgpu.boards import selected_nv_board
  from mockgpu.driver import nv_profiler, nv_rm, nv_uvm
  from mockgpu.emulators.nv_gpu import NVGPU
  board = selected_nv_board()
  rm = nv_rm.RM([NVGPU(i, board, machine, machine.ptx) for i in range(config.gpu_count())])
  nv_profiler.attach(rm)
  files:dict = {}  # the open device files by fd: the device files register there, UVM looks fds up there
  uvm = nv_uvm.UVM(rm, files.get)
  machine.devices["nv"] = rm.gpus
  return nv_rm.Driver(rm, uvm, files)

def version_text() -> str:
  from mockgpu.driver.nv_rm import DRIVER_VERSION
  return f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {DRIVER_VERSION}  (mockgpu)\n"

def install(machine):
  drv = None
  def driver():
    nonlocal drv
    if drv is None: drv = build(machine)
    return drv
  def opener(kind:str):
    return lambda path, flags: driver().open(kind, path, flags)
  vfs = machine.vfs
  vfs.claim("/dev/nvidia*")
  vfs.claim("/proc/driver/nvidia")
  vfs.add_device("/dev/nvidiactl", opener("ctl"))
  vfs.add_device("/dev/nvidia-uvm", opener("uvm"))
  vfs.add_file("/proc/driver/nvidia/version", version_text)
  for i in range(config.gpu_count()):
    vfs.add_device(f"/dev/nvidia{i}", opener("dev"))
    vfs.add_file(f"/proc/driver/nvidia/gpus/0000:{i + 1:02x}:00.0/information", lambda i=i: driver().proc_information(i))
