"""What each RDNA instruction computes: one table per ISA family, in the language of lang.py, read by every backend.

  lang.py    the expression language: parsing, numpy-2 typing, the typed tree the backends render
  rdna3.py   the RDNA3 rows (vector, scalar, packed, compares), the accumulator/literal/clamp sets, DS atomics, WMMA
  rdna35.py  RDNA3.5 (gfx115x) as RDNA3's rows plus its scalar float ops (derived from the VALU rows)
  rdna4.py   RDNA4 as RDNA3's rows plus its own (renames, float SALU derived from VALU rows, IEEE 754-2019 min/max, ...)
  cdna.py    CDNA3 (GFX9, gfx942): the RDNA3 rows CDNA repeats, under their CDNA names (ALIASES), plus its own rows
  cdna4.py   CDNA4 (gfx950) as CDNA3 plus its additions (v_bitop3, v_cvt_pk_f16_f32, MFMA forms, OCP fp8)
  family_setup.py  what a dispatch's set-up reads of each family (setup(arch)), apart from the tables
"""
from __future__ import annotations
from mockgpu.compiler.rdna.semantics.family_setup import SETUPS

# the families by name -> their table module; a table is imported at its first use, so a process running one family
# does not parse the others' rows and tinygrad's enums for them (a third of the RDNA executor's import time). Written
# as imports, not module-name strings, so the import graph (tests/test_import_graph.py) sees each edge.
def _rdna3():
  from mockgpu.compiler.rdna.semantics import rdna3
  return rdna3
def _rdna35():
  from mockgpu.compiler.rdna.semantics import rdna35
  return rdna35
def _rdna4():
  from mockgpu.compiler.rdna.semantics import rdna4
  return rdna4
def _cdna3():
  from mockgpu.compiler.rdna.semantics import cdna
  return cdna
def _cdna4():
  from mockgpu.compiler.rdna.semantics import cdna4
  return cdna4
FAMILIES = {"rdna3": _rdna3, "rdna35": _rdna35, "rdna4": _rdna4, "cdna3": _cdna3, "cdna4": _cdna4}

_loaded:dict[str, object] = {}  # a family's module once imported: the executor asks per dispatch (an import statement each)

def family(arch:str):
  """The semantics table module of an ISA family."""
  if (m:=_loaded.get(arch)) is not None: return m
  if arch not in FAMILIES: raise KeyError(f"no RDNA semantics table for {arch!r} ({', '.join(FAMILIES)})")
  m = _loaded[arch] = FAMILIES[arch]()
  return m

def setup(arch:str):
  """What setting a dispatch up reads of a family (semantics/family_setup.py: IEEE_MODE_BIT, TTMP_WORKGROUP_IDS, ...), the
  same values as its table's, without importing the table."""
  if arch not in SETUPS: raise KeyError(f"no RDNA semantics table for {arch!r} ({', '.join(SETUPS)})")
  return SETUPS[arch]
