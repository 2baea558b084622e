"""What setting a dispatch up reads of each ISA family, apart from its rows: the executor asks per dispatch (the IEEE
mode bit, where the workgroup IDs go, the scratch slot's field and unit, the VGPR granule, the GFX9 register files), so a
dispatch of a kernel whose translation is cached imports no semantics table (parsing RDNA3's ~800 rows: ~7 ms of a
process's first dispatch). The table modules take their values from here: each is written once.
"""
from __future__ import annotations
from mockgpu.boards import WAVE32, WAVE64

class RDNA3:
  # COMPUTE_PGM_RSRC1 bit 23 (ENABLE_IEEE_MODE, gfx6-gfx11) sets the waves' MODE.IEEE: signalling NaNs in v_min/v_max
  # are returned quieted, and omod is ignored (errata omod-ieee). gfx12 has no IEEE mode (the bit is DISABLE_PERF).
  IEEE_MODE_BIT:int|None = 23
  # the workgroup IDs go to SGPRs after the user SGPRs (no ttmp registers); COMPUTE_TMPRING_SIZE.WAVESIZE is bits
  # 12..26, in 256-byte units
  TTMP_WORKGROUP_IDS:tuple[int, int]|None = None
  TMPRING_WAVESIZE_BITS = 15
  TMPRING_WAVESIZE_UNIT = 256
  # RSRC1.GRANULATED_WORKITEM_VGPR_COUNT's unit by wave size (gfx10+): a wave has (count + 1) * unit VGPRs, the ones an
  # M0-relative VGPR index may reach
  VGPR_GRANULES:dict[int, int] = {WAVE32: 8, WAVE64: 4}
  # the GFX9 family (semantics/cdna.py): its encodings, 1 KiB scratch units, AGPRs
  GFX9 = False

class RDNA35(RDNA3): pass  # RDNA3.5 sets dispatches up as RDNA3

class RDNA4(RDNA3):
  IEEE_MODE_BIT = None   # gfx12 has no IEEE mode: RSRC1 bit 23 is DISABLE_PERF, and omod always applies
  # the SPI writes a wave's workgroup ID x to ttmp9 and y | z << 16 to ttmp7 (operand encodings 108-123 are ttmp0-15)
  TTMP_WORKGROUP_IDS = (117, 115)
  # COMPUTE_TMPRING_SIZE.WAVESIZE (the wave's scratch slot, 256-byte units) is bits 12..29 on gfx12 (gfx11: 12..26)
  TMPRING_WAVESIZE_BITS = 18

class CDNA3(RDNA3):
  # COMPUTE_PGM_RSRC1 bit 23 is ENABLE_IEEE_MODE on gfx9 as on gfx11 (RDNA3's IEEE_MODE_BIT)
  # COMPUTE_TMPRING_SIZE.WAVESIZE: bits 12..24, in 1 KiB units (tinygrad: mem_alignment_size 1024 on gfx9)
  TMPRING_WAVESIZE_BITS = 13
  TMPRING_WAVESIZE_UNIT = 1024
  VGPR_GRANULES = {WAVE64: 8}  # gfx90a+: VGPRs and AGPRs together (cdna.VGPR_GRANULE)
  GFX9 = True

class CDNA4(CDNA3): pass  # CDNA4 sets dispatches up as CDNA3

SETUPS:dict[str, type[RDNA3]] = {"rdna3": RDNA3, "rdna35": RDNA35, "rdna4": RDNA4, "cdna3": CDNA3, "cdna4": CDNA4}
NAMES = ("IEEE_MODE_BIT", "TTMP_WORKGROUP_IDS", "TMPRING_WAVESIZE_BITS", "TMPRING_WAVESIZE_UNIT", "VGPR_GRANULES", "GFX9")
