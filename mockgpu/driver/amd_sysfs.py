"""The sysfs files of an AMD board (mockgpu.boards; RX 7900 XTX by default) as the amdgpu/amdkfd kernel drivers publish them.

Everything is derived from the board's record so the KFD topology, the DRM device directory, the ip_discovery tree and
the DRM_IOCTL_AMDGPU_INFO answer agree.
"""
from __future__ import annotations
import os
from mockgpu.boards import AMDBoard, selected_amd_board

KFD_TOPOLOGY = "/sys/devices/virtual/kfd/kfd/topology"
DRM_CLASS = "/sys/class/drm"
# KFD gpu_ids are 16-bit hashes (the doorbell mmap offset carries 16 bits of one); any stable non-zero value per node does
GPU_ID_BASE, GPU_ID_STEP = 0x3e51, 0x0111

def gpu_id(index:int) -> int:
  if not 0 <= (gid:=GPU_ID_BASE + index * GPU_ID_STEP) <= 0xffff: raise ValueError(f"GPU index {index}: no 16-bit KFD gpu_id left")
  return gid
def render_minor(index:int) -> int: return 128 + index

def kfd_roots(count:int) -> list[str]:
  """The paths kfd.install claims for `count` GPUs (the bridge defers the install until one of them is looked at)."""
  return ["/dev/kfd", KFD_TOPOLOGY, *(f"{d}/renderD{render_minor(i)}" for i in range(count) for d in ("/dev/dri", DRM_CLASS))]
def pci_location(index:int) -> int: return (0x03 + index) << 8  # bus 3+i, device 0, function 0

def gpu_properties(index:int, t:AMDBoard|None=None) -> dict[str, int]:
  """The KFD node 'properties' file of GPU `index`, in the kernel's order (of the selected board unless `t` is given).
  KFD counts SIMDs and shader arrays over all XCCs of the node; tinygrad divides them by num_xcc again."""
  t = t or selected_amd_board()
  arrays = t.se * t.sa_per_se * t.num_xcc
  return {
    "cpu_cores_count": 0, "simd_count": t.cu_count * t.simd_per_cu, "mem_banks_count": 1, "caches_count": 0,
    "io_links_count": 1, "p2p_links_count": 0, "cpu_core_id_base": 0, "simd_id_base": 0x80001000 + index * 0x1000,
    "max_waves_per_simd": t.max_waves_per_simd, "lds_size_in_kb": t.lds_size_in_kb, "gds_size_in_kb": 0,
    "num_gws": t.num_gws, "wave_front_size": t.wave_front_size, "array_count": arrays,
    "simd_arrays_per_engine": t.sa_per_se, "cu_per_simd_array": t.cu_per_sa, "simd_per_cu": t.simd_per_cu,
    "max_slots_scratch_cu": t.max_slots_scratch_cu, "gfx_target_version": t.gfx_target_version, "vendor_id": t.vendor_id,
    "device_id": t.device_id, "location_id": pci_location(index), "domain": 0, "drm_render_minor": render_minor(index),
    "hive_id": 0, "num_sdma_engines": t.num_sdma_engines, "num_sdma_xgmi_engines": 0,
    "num_sdma_queues_per_engine": t.num_sdma_queues_per_engine, "num_cp_queues": t.num_cp_queues,
    "max_engine_clk_fcompute": t.max_engine_clk, "local_mem_size": 0, "fw_version": t.fw_version,
    "capability": 0x28070280, "debug_prop": 0x5d7, "sdma_fw_version": t.sdma_fw_version,
    "unique_id": 0x5a17c0de00000000 + index, "num_xcc": t.num_xcc, "max_engine_clk_ccompute": 2400,
  }

def cpu_properties() -> dict[str, int]:
  """Node 0: the CPU, as KFD lists it (no SIMDs, gpu_id 0)."""
  return {"cpu_cores_count": os.cpu_count() or 1, "simd_count": 0, "mem_banks_count": 1, "caches_count": 0, "io_links_count": 0, "p2p_links_count": 0,
          "cpu_core_id_base": 0, "simd_id_base": 0, "max_waves_per_simd": 0, "lds_size_in_kb": 0, "gds_size_in_kb": 0, "num_gws": 0,
          "wave_front_size": 0, "array_count": 0, "simd_arrays_per_engine": 0, "cu_per_simd_array": 0, "simd_per_cu": 0,
          "max_slots_scratch_cu": 0, "gfx_target_version": 0, "vendor_id": 0, "device_id": 0, "location_id": 0, "domain": 0,
          "drm_render_minor": 0, "hive_id": 0, "num_sdma_engines": 0, "num_sdma_xgmi_engines": 0, "num_sdma_queues_per_engine": 0,
          "num_cp_queues": 0, "max_engine_clk_ccompute": 2400}

def _kv(d:dict) -> str: return "".join(f"{k} {v}\n" for k, v in d.items())

def install(vfs, count:int, vram_used, t:AMDBoard|None=None):
  """Register the KFD topology of 1 CPU + `count` GPUs and each GPU's DRM sysfs directory.
  vram_used(index) -> bytes of VRAM in use on that GPU (for mem_info_vram_used)."""
  t = t or selected_amd_board()
  vfs.claim(KFD_TOPOLOGY)
  vfs.add_file(f"{KFD_TOPOLOGY}/generation_id", "1\n")
  vfs.add_file(f"{KFD_TOPOLOGY}/system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0\n")
  nodes = f"{KFD_TOPOLOGY}/nodes"
  vfs.add_file(f"{nodes}/0/gpu_id", "0\n")
  vfs.add_file(f"{nodes}/0/name", "\n")
  vfs.add_file(f"{nodes}/0/properties", _kv(cpu_properties()))
  vfs.add_file(f"{nodes}/0/mem_banks/0/properties", _kv({"heap_type": 0, "size_in_bytes": 64 << 30, "flags": 0, "width": 64,
                                                        "mem_clk_max": 3200}))
  for i in range(count):
    node = f"{nodes}/{i + 1}"
    vfs.add_file(f"{node}/gpu_id", f"{gpu_id(i)}\n")
    vfs.add_file(f"{node}/name", f"{t.name}\n")
    vfs.add_file(f"{node}/properties", _kv(gpu_properties(i, t)))
    vfs.add_file(f"{node}/mem_banks/0/properties", _kv({"heap_type": 1, "size_in_bytes": t.vram_size, "flags": 0,
                                                      "width": t.vram_width, "mem_clk_max": t.mem_clk_max}))
    vfs.add_file(f"{node}/io_links/0/properties", _kv({"type": 2, "version_major": 0, "version_minor": 0, "node_from": i + 1,
                                                     "node_to": 0, "weight": 20, "min_latency": 0, "max_latency": 0,
                                                     "min_bandwidth": 312, "max_bandwidth": 64000, "recommended_transfer_size": 0,
                                                     "flags": 1}))
    _install_drm(vfs, i, lambda i=i: vram_used(i), t)

def _install_drm(vfs, index:int, vram_used, t):
  vfs.claim(f"{DRM_CLASS}/renderD{render_minor(index)}")
  dev = f"{DRM_CLASS}/renderD{render_minor(index)}/device"
  for name, key in (("vendor", "vendor_id"), ("device", "device_id"), ("revision", "revision"),
                    ("subsystem_vendor", "subsystem_vendor"), ("subsystem_device", "subsystem_device")):
    vfs.add_file(f"{dev}/{name}", f"0x{getattr(t, key):04x}\n")
  vfs.add_file(f"{dev}/product_name", f"{t.marketing_name}\n")
  vfs.add_file(f"{dev}/mem_info_vram_total", f"{t.vram_size}\n")
  vfs.add_file(f"{dev}/mem_info_vram_used", lambda: f"{vram_used()}\n")
  # the mock's clocks never change, which is what the stable "profile_standard" level promises; a board reading "auto"
  # would make tinygrad's PMC/SQTT setup run `sudo tee` on this (virtual) path through the host's shell
  vfs.add_file(f"{dev}/power_dpm_force_performance_level", "profile_standard\n")
  ip = f"{dev}/ip_discovery/die/0"
  for (hwid, inst), (major, minor, rev) in t.ip.items():
    count = sum(1 for (h, _) in t.ip if h == hwid)
    for name, value in (("major", major), ("minor", minor), ("revision", rev), ("hw_id", hwid), ("num_instance", count), ("harvest", 0)):
      vfs.add_file(f"{ip}/{hwid}/{inst}/{name}", f"{value}\n")
