"""The cross-lane tables of compiler/rdna/operands.py (permlane16_lanes/_selects/_table, permlane64_lanes, dpp16_lanes,
dpp8_lanes), which every backend reads, against independent readings of the ISA: tinygrad's copy of the manual's
pseudocode for the permlanes (run lane by lane through a small translator written here), and the RDNA3 manual's DPP_CTRL
table written per lane for DPP."""
from __future__ import annotations
import re
import numpy as np
import pytest
from tinygrad.runtime.autogen.amd.rdna4 import str_pcode as pcode4
from mockgpu.compiler.rdna import operands as ops

rng = np.random.default_rng(0)  # reseeded from each test's node id (conftest)
PCODE = {op.name: text for op, text in pcode4.PCODE.items()}

# the pseudocode's phrases, as Python: tmp[] holds each lane's own number, so the written value is the source lane
PHRASES = [(r"declare .*;", ""), (r"//.*", ""), (r"s_nop\(16'0U\)", "pass"),
           (r"lanesel = \{ S2\.u32, S1\.u32 \};", "lanesel = S2 << 32 | S1"),
           (r"altrow = \{ row\[1\], ~row\[0\] \};", "altrow = (row & 2) | (~row & 1)"),
           (r"altlane = \{ ~lane\[5\], lane\[4 : 0\] \};", "altlane = (~lane >> 5 & 1) << 5 | (lane & 31)"),
           (r"for (\w+) in (\d+)U? : (?:WAVE32|wave32\.u1) \? (\d+)U? : (\d+)U? do", r"for \1 in range(\2, (\3 if WAVE32 else \4) + 1):"),
           (r"for (\w+) in (\d+)U? : (\d+)U? do", r"for \1 in range(\2, \3 + 1):"),
           (r"if WAVE32 then", "if WAVE32:"), (r"^else$", "else:"), (r"if EXEC\[(.*)\]\.u1 then", r"if EXEC[\1]:"),
           (r"tmp\[(\w+)\] = VGPR\[\w+\]\[SRC0\.u32\]", r"tmp[\1] = \1"),
           (r"VGPR\[(.*)\]\[VDST\.u32\] = (.*)", r"D[\1] = \2"),
           (r"lanesel\[i \* 4 \+ 3 : i \* 4\]", "(lanesel >> (i * 4) & 15)"),
           (r"VGPR\[lane\]\[SRC1\.u32\]\[3 : 0\]\.i32", "(SEL[lane] & 15)"),
           (r"64'B\((.*?)\)", r"(\1)"), (r"\.i32", ""), (r";$", "")]

def translate(text:str) -> str:
  """The pseudocode as a Python function body: the phrases above, indentation from do/then/else and endfor/endif."""
  out, depth = [], 1
  for line in text.split("\n"):
    line = line.strip()
    for pat, rep in PHRASES: line = re.sub(pat, rep, line).strip()
    if line in ("endfor", "endif", "endfor;", "endif;"): depth -= 1; continue
    if line.startswith("else"): depth -= 1
    if line: out.append("  " * depth + line)
    if line.endswith(":"): depth += 1
  return "def run(WAVE32, EXEC, S1, S2, SEL, D):\n  tmp = [0] * 64\n" + "\n".join(out) + "\n"

def pcode_sources(name:str, wave:int, s1:int=0, s2:int=0, sel=None) -> list[int|None]:
  """The source lane each lane of `name` writes (None: not written), every lane active, by the manual's pseudocode."""
  text = PCODE[name]
  ns:dict = {}
  exec(translate(text), ns)  # noqa: S102 - our own translation of tinygrad's pseudocode text
  D:list = [None] * wave
  ns["run"](wave == 32, [True] * 64, s1, s2, sel if sel is not None else [0] * 64, D)
  return D

def test_the_translator_reads_every_line():
  """Nothing of the pseudocode is left untranslated (a phrase the table misses would fail to compile or run)."""
  for name in ("V_PERMLANE16_B32", "V_PERMLANEX16_B32", "V_PERMLANE16_VAR_B32", "V_PERMLANEX16_VAR_B32", "V_PERMLANE64_B32_E32"):
    assert "VGPR" not in translate(PCODE[name]) and "lanesel[" not in translate(PCODE[name])

@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("cross", [False, True])
def test_permlane16_table_is_the_pseudocode(wave, cross):
  """v_permlane16/x16_b32 for a sample of 64-bit selects: operands' selects and lanes, and the C backend's baked
  [16][wave] table read at each lane's nibble, give the pseudocode's source lanes."""
  name = "V_PERMLANEX16_B32" if cross else "V_PERMLANE16_B32"
  table, nib = ops.permlane16_table(cross, wave), ops.permlane16_nibble(wave)
  for sel in [0, 2 ** 64 - 1, 0xfedcba9876543210, *(int(x) * 2 + 1 for x in rng.integers(0, 2 ** 63, 24))]:
    want = pcode_sources(name, wave, sel & 0xffffffff, sel >> 32)
    got = ops.permlane16_lanes(ops.permlane16_selects(sel, wave), cross, wave)
    assert got.tolist() == want, hex(sel)
    assert [int(table[(sel >> (4 * int(nib[l]))) & 15][l]) for l in range(wave)] == want, hex(sel)

@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("cross", [False, True])
def test_permlane16_var_table_is_the_pseudocode(wave, cross):
  """RDNA4's _var forms: each lane's select from its own VGPR (bits above 3:0 ignored)."""
  name = "V_PERMLANEX16_VAR_B32" if cross else "V_PERMLANE16_VAR_B32"
  for _ in range(16):
    sel = [int(x) for x in rng.integers(0, 2 ** 32, 64)]
    want = pcode_sources(name, wave, sel=sel)
    assert ops.permlane16_lanes(np.array(sel[:wave], np.uint32), cross, wave).tolist() == want
    assert [int(ops.permlane16_table(cross, wave)[sel[l] & 15][l]) for l in range(wave)] == want

@pytest.mark.parametrize("wave", [32, 64])
def test_permlane64_table_is_the_pseudocode(wave):
  want = pcode_sources("V_PERMLANE64_B32_E32", wave)
  got = ops.permlane64_lanes(wave)
  assert (got is None and want == [None] * wave) if wave == 32 else got.tolist() == want

def dpp16_ref(ctrl:int, lane:int) -> int|None:
  """The RDNA3 manual's DPP_CTRL table for one lane: its source lane, or None where the source is off its row of 16."""
  row, i, n = lane & ~15, lane & 15, ctrl & 15
  if ctrl <= 0xff: return (lane & ~3) + ((ctrl >> (2 * (lane & 3))) & 3)   # quad_perm
  if 0x101 <= ctrl <= 0x10f: j = i + n                                      # row_shl
  elif 0x111 <= ctrl <= 0x11f: j = i - n                                    # row_shr
  elif 0x121 <= ctrl <= 0x12f: j = (i - n) % 16                             # row_ror
  elif ctrl == 0x140: j = 15 - i                                            # row_mirror
  elif ctrl == 0x141: j = (7 - i) % 8 + (i // 8) * 8                        # row_half_mirror
  elif 0x150 <= ctrl <= 0x15f: j = n                                        # row_share
  elif 0x160 <= ctrl <= 0x16f: j = i ^ n                                    # row_xmask
  else: raise AssertionError(hex(ctrl))
  return row + j if 0 <= j < 16 else None

RDNA_DPP16 = [*range(0x100), *range(0x101, 0x110), *range(0x111, 0x120), *range(0x121, 0x130), 0x140, 0x141,
              *range(0x150, 0x160), *range(0x160, 0x170)]

@pytest.mark.parametrize("wave", [32, 64])
def test_dpp16_table_is_the_manual(wave):
  """Every RDNA DPP16 control: operands.dpp16_lanes' source lanes (where the source exists) and existence."""
  for ctrl in RDNA_DPP16:
    src, exists = ops.dpp16_lanes(ctrl, wave)
    want = [dpp16_ref(ctrl, lane) for lane in range(wave)]
    assert exists.tolist() == [w is not None for w in want], hex(ctrl)
    assert [int(s) if e else None for s, e in zip(src, exists)] == want, hex(ctrl)

@pytest.mark.parametrize("wave", [32, 64])
def test_dpp8_table_is_the_manual(wave):
  """DPP8: lane i reads lane sel[i % 8] of its group of 8, for a sample of the 8**8 selects."""
  for _ in range(64):
    sels = [int(x) for x in rng.integers(0, 8, 8)]
    assert ops.dpp8_lanes(sels, wave).tolist() == [(lane // 8) * 8 + sels[lane % 8] for lane in range(wave)]
