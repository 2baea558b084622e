"""Synthetic AMD firmware for AM, offline.

tinygrad's AM driver downloads pinned linux-firmware blobs (tinygrad.helpers.fetch_fw, sha256-checked) and no machine
that runs the mock may reach the network. mockgpu rebinds `tinygrad.runtime.support.am.amdev.fetch_fw` to `fetch_fw`
here (mockgpu/_finder.py, when DEV names MOCKPCI or MOCKUSB): it builds an image with the header versions AM parses
for that blob, so AM takes the same code paths, and payloads that carry their own identity, so the PSP model can
check that what it is asked to load is the right piece: each payload is `payload(name, kind)`, the tag
`mockgpu-fw:<blob>:<piece>:` repeated to the piece's size.

Header versions (what AM's AMFirmware branches on; those of the pinned blobs as far as they are known offline): PSP
sOS v2.0 with its component table, SMC v2.0, SDMA v2.0 (SDMA 6.x: separate ctx/ctl ucode) or v3.0 (SDMA 7.x: one
ucode), GFX PFP/ME/MEC v2.0 (RS64 with ucode_start_addr), IMU v1.0, RLC v2.3 (IRAM/DRAM and P/V pieces). The exact
minor versions of the real blobs could not be checked against the blobs here.
"""
from __future__ import annotations
import ctypes, struct
from tinygrad.runtime.autogen.am import am
from mockgpu.errors import Unmodelled

PIECE = 0x400          # bytes per firmware piece
HDR = 0x100            # header area before the payloads
PSP_COMPONENTS = ("PSP_KDB", "PSP_SPL", "PSP_SYS_DRV", "PSP_SOC_DRV", "PSP_INTF_DRV", "PSP_DBG_DRV", "PSP_RAS_DRV", "PSP_SOS", "PSP_TOC")

def payload(name:str, kind:str, size:int=PIECE) -> bytes:
  """The bytes of piece `kind` of blob `name`: its tag repeated (what the PSP model compares a load against)."""
  tag = f"mockgpu-fw:{name}:{kind}:".encode()
  return (tag * (size // len(tag) + 1))[:size]

def _common(major:int, minor:int, total:int, ucode_size:int, ucode_off:int):
  return am.struct_common_firmware_header(size_bytes=total, header_size_bytes=HDR, header_version_major=major, header_version_minor=minor,
                                          ucode_size_bytes=ucode_size, ucode_array_offset_bytes=ucode_off)

def _image(header, pieces:list[bytes]) -> bytes: return bytes(header).ljust(HDR, b"\0")[:max(HDR, ctypes.sizeof(header))] + b"".join(pieces)

def _psp(name:str) -> bytes:
  data, descs = b"", b""
  for comp in PSP_COMPONENTS:
    descs += struct.pack("<IIII", getattr(am, f"PSP_FW_TYPE_{comp}"), 1, len(data), PIECE)
    data += payload(name, comp)
  h = am.struct_psp_firmware_header_v2_0(header=_common(2, 0, HDR + len(data), len(data), HDR), psp_fw_bin_count=len(PSP_COMPONENTS))
  return (bytes(h)[:ctypes.sizeof(am.struct_psp_firmware_header_v2_0) - ctypes.sizeof(am.struct_psp_fw_bin_desc)] + descs).ljust(HDR, b"\0") + data

def _smu(name:str) -> bytes:
  h = am.struct_smc_firmware_header_v2_0()
  h.v1_0.header = _common(2, 0, HDR + PIECE, PIECE, HDR)
  return _image(h, [payload(name, "SMU")])

def _sdma(name:str, major:int) -> bytes:
  if major == 2:
    h = am.struct_sdma_firmware_header_v2_0(header=_common(2, 0, HDR + 2 * PIECE, 2 * PIECE, HDR), ctx_ucode_size_bytes=PIECE,
                                            ctl_ucode_offset=HDR + PIECE, ctl_ucode_size_bytes=PIECE)
    return _image(h, [payload(name, "SDMA_UCODE_TH0"), payload(name, "SDMA_UCODE_TH1")])
  h = am.struct_sdma_firmware_header_v3_0(header=_common(3, 0, HDR + PIECE, PIECE, HDR), ucode_size_bytes=PIECE)
  return _image(h, [payload(name, "SDMA_UCODE_TH0")])

UCODE_START = 0x10000  # RS64 ucode start address (bytes); AM programs CP_*_PRGRM_CNTR_START with it >> 2

def _gfx(name:str, engine:str) -> bytes:
  h = am.struct_gfx_firmware_header_v2_0(header=_common(2, 0, HDR + 2 * PIECE, PIECE, HDR), ucode_size_bytes=PIECE, data_offset_bytes=HDR + PIECE,
                                         data_size_bytes=PIECE, ucode_start_addr_lo=UCODE_START, ucode_start_addr_hi=0)
  return _image(h, [payload(name, f"RS64_{engine}"), payload(name, f"RS64_{engine}_P0_STACK")])

def _imu(name:str) -> bytes:
  h = am.struct_imu_firmware_header_v1_0(header=_common(1, 0, HDR + 2 * PIECE, 2 * PIECE, HDR), imu_iram_ucode_size_bytes=PIECE,
                                         imu_dram_ucode_size_bytes=PIECE)
  return _image(h, [payload(name, "IMU_I"), payload(name, "IMU_D")])

def _rlc(name:str) -> bytes:
  pieces = ("RLC_G", "RLC_IRAM", "RLC_DRAM_BOOT", "RLC_P", "RLC_V")
  off = {p: HDR + i * PIECE for i, p in enumerate(pieces)}
  h = am.struct_rlc_firmware_header_v2_3()
  h.v2_2.v2_1.v2_0.header = _common(2, 3, HDR + len(pieces) * PIECE, PIECE, off["RLC_G"])
  v22 = h.v2_2
  v22.rlc_iram_ucode_offset_bytes, v22.rlc_iram_ucode_size_bytes = off["RLC_IRAM"], PIECE
  v22.rlc_dram_ucode_offset_bytes, v22.rlc_dram_ucode_size_bytes = off["RLC_DRAM_BOOT"], PIECE
  h.rlcp_ucode_offset_bytes, h.rlcp_ucode_size_bytes = off["RLC_P"], PIECE
  h.rlcv_ucode_offset_bytes, h.rlcv_ucode_size_bytes = off["RLC_V"], PIECE
  return _image(h, [payload(name, p) for p in pieces])

def blob_names(board) -> dict[str, str]:
  """The firmware files AM loads for `board`, by role."""
  from tinygrad.runtime.autogen.am import am as _am
  v = lambda hwid: "_".join(map(str, board.ip_version(hwid)))
  gc = v(_am.GC_HWID)
  return {"SMU": f"smu_{v(_am.MP1_HWID)}.bin", "SDMA": f"sdma_{v(_am.SDMA0_HWID)}.bin", "PFP": f"gc_{gc}_pfp.bin", "ME": f"gc_{gc}_me.bin",
          "MEC": f"gc_{gc}_mec.bin", "IMU": f"gc_{gc}_imu.bin", "RLC": f"gc_{gc}_rlc.bin"}

def piece_for(board, fw_type:str) -> tuple[str|None, str]:
  """(blob, piece) whose payload a LOAD_IP_FW of GFX_FW_TYPE_<fw_type> must carry; blob None for a type AM never loads."""
  names = blob_names(board)
  if fw_type == "SMU": return names["SMU"], "SMU"
  if fw_type.startswith("SDMA_UCODE"): return names["SDMA"], fw_type
  if fw_type.startswith("RS64_"):
    engine = fw_type.split("_")[1]
    return names[engine], f"RS64_{engine}" if fw_type == f"RS64_{engine}" else f"RS64_{engine}_P0_STACK"
  if fw_type.startswith("IMU_"): return names["IMU"], fw_type
  if fw_type.startswith("RLC_"): return names["RLC"], fw_type
  return None, fw_type

def build(name:str) -> bytes:
  """The synthetic image of firmware file `name` (as AM names it: psp_13_0_0_sos.bin, gc_11_0_0_mec.bin, ...)."""
  stem = name.removesuffix(".bin")
  if stem.startswith("psp_") and stem.endswith("_sos"): return _psp(name)
  if stem.startswith("smu_"): return _smu(name)
  if stem.startswith("sdma_"): return _sdma(name, 2 if stem.split("_")[1] in ("5", "6") else 3)
  if stem.startswith("gc_"):
    engine = stem.rsplit("_", 1)[1]
    if engine in ("pfp", "me", "mec"): return _gfx(name, engine.upper())
    if engine == "imu": return _imu(name)
    if engine == "rlc": return _rlc(name)
  raise Unmodelled(f"mockgpu: no synthetic firmware for {name!r}")

def fetch_fw(path:str, name:str, sha256:str) -> bytes:
  """Stands in for tinygrad.helpers.fetch_fw inside AM (rebound at import): the synthetic image, never a download.
  sha256 names the real blob, which the synthetic image is not; it is not checked."""
  if path != "amdgpu": raise Unmodelled(f"mockgpu: firmware from {path!r} ({name}) is not modelled")
  return build(name)
