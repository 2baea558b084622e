"""Performance counter values (PMC) of the GRBM, SQ and GL2C blocks that tinygrad selects, per dispatch.

EXACT (from the executor's block steps: emulators/rdna/recorder.py): SQ_WAVES and the SQ_INSTS_* classes (VALU, SALU,
SMEM, LDS, FLAT, TEX_LOAD, TEX_STORE, GDS), SQ_INSTS_WAVE32*, SQ_WAVE32_INSTS / SQ_WAVE64_INSTS, SQC_LDS_BANK_CONFLICT
(from the lanes' LDS addresses by the board's bank rule: recorder.bank_conflicts), per WGP by the placement model
(sqtt.py: workgroup i on SE i mod SEs, then SA, then WGP).
MODEL (deterministic, never host time): SQ_BUSY_CYCLES (per WGP: max(its wave-instructions / 4 SIMDs, 5 cycles per
instruction of its longest wave) plus one VMEM load latency when it loads), GRBM_GUI_ACTIVE and GRBM_COUNT (the
longest WGP's busy cycles plus a fixed command-processor cost per dispatch), SQC_LDS_IDX_ACTIVE (LDS instructions),
GL2C_HIT / GL2C_MISS (one request per 128 bytes a VMEM/FLAT wave-instruction moves at 4 bytes a lane, a quarter of them
misses, spread evenly over the 32 instances).
Any other counter raises UnmodelledFeature when selected.
"""
from __future__ import annotations
import numpy as np
from mockgpu.boards import WAVE32

CLASSES = ("VALU", "SALU", "SMEM", "LDS", "FLAT", "TEX_LOAD", "TEX_STORE", "GDS")
CP_DISPATCH_CYCLES = 2000   # MODEL: the command processor's cost of one dispatch (launch, drain), in shader cycles
VMEM_LOAD_CYCLES = 1500
GL2C_INSTANCES = 32
TCC_INSTANCES = 16  # gfx9's L2 channels, as tinygrad reads them (ops_amd.py pmc_start: "TCC": 16 instances)
SQ = {**{f"SQ_INSTS_{c}": c for c in CLASSES}, "SQ_WAVES": "waves", "SQ_INSTS_WAVE32": "w32", "SQ_WAVE32_INSTS": "w32",
      "SQ_WAVE64_INSTS": "w64", "SQ_INSTS_WAVE32_VALU": "w32_VALU", "SQ_INSTS_WAVE32_LDS": "w32_LDS",
      "SQ_BUSY_CYCLES": "busy", "SQC_LDS_IDX_ACTIVE": "LDS", "SQC_LDS_BANK_CONFLICT": "conflicts",
      "SQ_LDS_IDX_ACTIVE": "LDS", "SQ_LDS_BANK_CONFLICT": "conflicts"}  # the last two: gfx9's names (the LDS is the SQ's there)
GRBM = {"GRBM_GUI_ACTIVE", "GRBM_COUNT"}
GL2C = {"GL2C_HIT", "GL2C_MISS", "TCC_HIT", "TCC_MISS"}  # TCC: gfx9's L2
MODELLED = set(SQ) | GRBM | GL2C

class DispatchCounts:
  """One dispatch's counts per WGP slot (arrays shaped [SE, SA, WGP per SA]) and its modelled cycles."""
  def __init__(self, per_wgp:dict[str, np.ndarray], insts:np.ndarray, longest:np.ndarray, lanes:int):
    self.per_wgp = per_wgp
    loads = per_wgp["TEX_LOAD"] + per_wgp["FLAT"]
    self.busy = np.maximum(-(-insts // 4), 5 * longest) + np.where(loads > 0, VMEM_LOAD_CYCLES, 0)
    self.busy[insts == 0] = 0
    self.cycles = int(self.busy.max(initial=0)) + CP_DISPATCH_CYCLES
    w32 = lanes == WAVE32
    per_wgp.update(busy=self.busy, w32=insts if w32 else np.zeros_like(insts),
                   w64=np.zeros_like(insts) if w32 else insts, w32_VALU=per_wgp["VALU"] if w32 else np.zeros_like(insts),
                   w32_LDS=per_wgp["LDS"] if w32 else np.zeros_like(insts))
    # one request per 128 bytes a wave-instruction moves at 4 bytes a lane
    requests = int((per_wgp["TEX_LOAD"] + per_wgp["TEX_STORE"] + per_wgp["FLAT"]).sum()) * (4 * lanes // 128)
    self.gl2c_miss = requests // 4
    self.gl2c_hit = requests - self.gl2c_miss

def spread(total:int, n:int) -> np.ndarray:
  return np.array([total // n + (i < total % n) for i in range(n)], np.int64)

def add(name:str, values:np.ndarray, c:DispatchCounts):
  """Add dispatch c's value of counter `name` to `values` (the counter's per-instance array)."""
  if name in SQ: values += c.per_wgp[SQ[name]]
  elif name in GRBM: values += c.cycles
  elif name in ("GL2C_HIT", "TCC_HIT"): values += spread(c.gl2c_hit, len(values))
  elif name in ("GL2C_MISS", "TCC_MISS"): values += spread(c.gl2c_miss, len(values))
  else: raise AssertionError(f"counter {name} was selected but has no model")  # selection checks MODELLED first
