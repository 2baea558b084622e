"""The IP discovery table AM reads from the end of VRAM (vram_size - 64 KiB): the binary header, the IP discovery
header with one die, an ip_v4 entry per IP instance of the board (version and 32-bit base addresses, the ones
regs.ip_bases gives the register file), and the gc_info table (v1.2) with the board's shader-engine layout."""
from __future__ import annotations
import ctypes, struct
from tinygrad.runtime.autogen.am import am
from mockgpu.emulators.am.regs import BASE_PREFIX, ip_bases

OFFSET_FROM_END = 64 << 10

def build(board) -> bytes:
  ips = b""
  entries = [(hwid, inst, ver) for (hwid, inst), ver in board.ip.items() if hwid in BASE_PREFIX]
  for hwid, inst, (ma, mi, rv) in entries:
    bases = ip_bases(hwid, inst)
    ip = am.struct_ip_v4(hw_id=hwid, instance_number=inst, num_base_address=len(bases), major=ma, minor=mi, revision=rv)
    ips += bytes(ip).ljust(8, b"\0") + b"".join(struct.pack("<I", b) for b in bases)
  bh_sz, ih_sz = ctypes.sizeof(am.struct_binary_header), ctypes.sizeof(am.struct_ip_discovery_header)
  ihdr = am.struct_ip_discovery_header(signature=am.DISCOVERY_TABLE_SIGNATURE, version=4, num_dies=1)
  ihdr.die_info[0].die_offset = bh_sz + ih_sz
  dhdr = am.struct_die_header(num_ips=len(entries))
  gc = am.struct_gc_info_v1_2()
  gc.header.table_id, gc.header.version_major, gc.header.version_minor, gc.header.size = am.GC, 1, 2, ctypes.sizeof(gc)
  gc.gc_num_se, gc.gc_num_sa_per_se = board.se, board.sa_per_se
  gc.gc_num_wgp0_per_sa, gc.gc_num_wgp1_per_sa = board.cu_per_sa // 2, 0
  gc.gc_max_waves_per_simd, gc.gc_max_scratch_slots_per_cu = board.max_waves_per_simd, board.max_slots_scratch_cu
  gc.gc_lds_size, gc.gc_wave_size = board.lds_size_in_kb, board.wave_front_size
  gc_off = bh_sz + ih_sz + ctypes.sizeof(dhdr) + len(ips)
  bhdr = am.struct_binary_header(binary_signature=am.BINARY_SIGNATURE)
  bhdr.table_list[am.IP_DISCOVERY].offset, bhdr.table_list[am.GC].offset = bh_sz, gc_off
  return bytes(bhdr) + bytes(ihdr) + bytes(dhdr) + ips + bytes(gc)

def write_table(dev):
  table = build(dev.board)
  ctypes.memmove(dev.vram_base + dev.board.vram_size - OFFSET_FROM_END, table, len(table))
