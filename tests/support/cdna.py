"""CDNA's DPP reference: the lanes a GFX9 DPP_CTRL selects, written from the manual.
(Moved from tests/compiler/rdna/test_cdna.py so that no test file imports another.)"""
# *** DPP ***

def dpp_reference(ctrl:int, lane:int):
  """The GFX9 DPP_CTRL source lane per the ISA manual's table, lane by lane (None: no source)."""
  row, i = lane // 16 * 16, lane % 16
  if ctrl <= 0xff: return lane // 4 * 4 + ((ctrl >> (2 * (lane % 4))) & 3)
  n = ctrl & 15
  if 0x101 <= ctrl <= 0x10f: return row + i + n if i + n < 16 else None
  if 0x111 <= ctrl <= 0x11f: return row + i - n if i - n >= 0 else None
  if 0x121 <= ctrl <= 0x12f: return row + (i - n) % 16
  return {0x130: lane + 1 if lane < 63 else None, 0x134: (lane + 1) % 64, 0x138: lane - 1 if lane else None, 0x13c: (lane - 1) % 64,
          0x140: row + 15 - i, 0x141: row + (i // 8 * 8) + 7 - i % 8, 0x142: row - 1 if row else None, 0x143: 31 if lane >= 32 else None,
          }.get(ctrl, row + n if 0x150 <= ctrl <= 0x15f else "reserved")
