"""The triaged mismatches (expected_mismatches.txt for RDNA3, expected_mismatches_rdna4.txt for RDNA4) and the
strict check against them.

A line: `INSTRUCTION PATH CLASS reason`, PATH numpy, native or both (with `@full`: found by the full tier only, whose
C path runs every operand kind), CLASS
  a  the manual's pseudocode is what hardware does and mockgpu is wrong: a bug to fix
  b  hardware departs from the pseudocode: an erratum mockgpu does not model yet (errata.py id in the reason)
  c  the pseudocode is ambiguous or incomplete: the reason says the reading and why mockgpu differs from it
  u  unverified: mockgpu departs from the pseudocode and what hardware does is not measured (the reason says why
     mockgpu chose as it did)
The suite fails on a mismatch that is not listed and on a listed one that no longer mismatches (strict xfail), so
the list is always the exact to-do list.
"""
from __future__ import annotations
import dataclasses, os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_mismatches.txt")
PATHS = {"rdna3": PATH, "rdna4": PATH.replace(".txt", "_rdna4.txt")}
CLASSES = {"a": "mockgpu is wrong (the pseudocode is hardware)", "b": "hardware departs from the pseudocode (erratum)",
           "c": "the pseudocode is ambiguous or incomplete", "u": "unverified: hardware not measured"}
FAILED = ("mismatch", "error")

@dataclasses.dataclass(frozen=True)
class Expected:
  name: str
  path: str
  cls: str
  reason: str
  full_only: bool = False

def load(path:str=PATH) -> dict[tuple[str, str], Expected]:
  """{(instruction, path): Expected} of a list (PATHS[arch] for an ISA family's); `both` lines give two entries."""
  out = {}
  with open(path) as f:
    for n, line in enumerate(f, 1):
      line = line.strip()
      if not line or line.startswith("#"): continue
      name, where, cls, reason = line.split(None, 3)
      where, _, tier = where.partition("@")
      if where not in ("numpy", "native", "both") or cls not in CLASSES or tier not in ("", "full"):
        raise ValueError(f"{path}:{n}: expected 'NAME numpy|native|both[@full] a|b|c reason', got {line!r}")
      for p in (("numpy", "native") if where == "both" else (where,)):
        out[(name, p)] = Expected(name, p, cls, reason, tier == "full")
  return out

def problems(results:dict, listed:dict[tuple[str, str], Expected], family_names:set[str], full:bool, path_:str=PATH) -> list[str]:
  """Differences between a family's results ({path: {name: OpResult}}) and the list: unlisted failures, and listed
  entries of this family that did not fail (in the CI tier, not counting the full tier's entries)."""
  out = []
  listed = {k: e for k, e in listed.items() if full or not e.full_only}
  for path, rs in results.items():
    for name, r in sorted(rs.items()):
      if r.status in FAILED and (name, path) not in listed:
        out.append(f"NEW {r.status} on {path}: {name}: {r.detail}")
  for (name, path), e in sorted(listed.items()):
    if name not in family_names or path not in results: continue
    r = results[path].get(name)
    if r is None or r.status not in FAILED:
      out.append(f"LISTED but {r.status if r else 'not run'} on {path}: {name} (class {e.cls}: {e.reason}); remove it "
                 f"from {os.path.basename(path_)}")
  return out
