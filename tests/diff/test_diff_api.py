"""The differential suite: tinygrad's public Tensor API (tests/diff/diffcases.py), every case on every mock configuration
and on DEV=CPU, compared bit for bit or within the op's stated per-element bound against a float64 reference.

Tiers: CI (MOCKGPU_DIFF unset) runs a stratified, deterministic sample of the generated cases (`sample`): every
public Tensor name's cheapest case, then the cheapest case of each (op family, dtype) pair, fp8 included, on every
configuration and every AMD board. MOCKGPU_DIFF=N runs every Nth case of each public name (8: the slow tier, tox -e
slow), MOCKGPU_DIFF=full every case. MOCKGPU_DIFF_REPORT=FILE appends one JSON line per failing (configuration, case)
with its class, for counting.
"""
import os
import numpy as np
import pytest
import diffcases as D
from diffops_tensor import EXCLUDED
from support.diff_api import differential, strings

CHUNK = 48
TIER = os.environ.get("MOCKGPU_DIFF", "sample")
STRIDE = 1 if TIER in ("full", "sample") else int(TIER)

def case_dtypes(case:dict) -> set[str]:
  """The dtypes a case names: its inputs', and any dtype argument (a cast's target)."""
  return ({s[1] for s in case["x"]} | strings(case["kw"])) & set(D.ALL)

def case_cost(case:dict) -> tuple:
  """Cheaper first: no gradient, fewer input elements, but an empty input last (it computes nothing to compare); the
  case's position breaks ties."""
  sizes = [int(np.prod(s[0])) for s in case["x"]]
  return (case["grad"], 0 in sizes, sum(sizes))

def sample() -> list[dict]:
  """CI's stratified sample: for every public Tensor name its cheapest case, then for every (op family, dtype) pair
  the cases have, the cheapest case of that family with that dtype not yet drawn. Deterministic: no RNG."""
  order = sorted(range(len(D.CASES)), key=lambda i: (case_cost(D.CASES[i]), i))
  chosen:dict[int, None] = {}
  for name in sorted(D.COVERS):
    if (i := next((i for i in order if D.CASES[i]["op"] in D.COVERS[name]), None)) is not None: chosen.setdefault(i)
  seen = {(D.CASES[i]["family"], t) for i in chosen for t in case_dtypes(D.CASES[i])}
  for i in order:
    c = D.CASES[i]
    if new := {(c["family"], t) for t in case_dtypes(c)} - seen:
      chosen.setdefault(i)
      seen |= new
  return [D.CASES[i] for i in sorted(chosen)]

def chunks() -> dict[str, list]:
  """The cases grouped by public name, in tests of up to CHUNK cases. CI's tier (the default) runs the stratified
  sample; MOCKGPU_DIFF=N every Nth case of each name (its first always), MOCKGPU_DIFF=full all of them."""
  by_op:dict[str, list] = {}
  for c in (sample() if TIER == "sample" else D.CASES): by_op.setdefault(c["op"].split(".")[0], []).append(c)
  if TIER == "sample":
    flat = [c for v in by_op.values() for c in v]
    return {f"sample-{i // CHUNK}": flat[i:i + CHUNK] for i in range(0, len(flat), CHUNK)}
  by_op = {name: cs[::STRIDE] for name, cs in by_op.items()}
  return {f"{name}-{i // CHUNK}": cs[i:i + CHUNK] for name, cs in by_op.items() for i in range(0, len(cs), CHUNK)}

def public_names() -> set[str]:
  from tinygrad import Tensor
  return {n for n in dir(Tensor) if not n.startswith("_")}

def test_every_public_method_has_a_case():
  """A public Tensor name with neither a case nor a stated reason fails here: a new tinygrad's additions show up."""
  covered = {name for name, ops in D.COVERS.items() if any(c["op"] in ops for c in D.CASES)}
  missing = sorted(public_names() - covered - set(EXCLUDED))
  assert not missing, f"public Tensor methods with no differential case and no reason to skip: {missing}"

def test_exclusions_are_current():
  stale = sorted((set(EXCLUDED) - public_names()) | (set(EXCLUDED) & set(D.COVERS)))
  assert not stale, f"EXCLUDED names that tinygrad no longer has, or that have cases after all: {stale}"

def test_case_count():
  """At least 3000 generated cases, each run on every configuration (the case ids are distinct)."""
  assert len(D.CASES) >= 3000, len(D.CASES)
  assert len({c["id"] for c in D.CASES}) == len(D.CASES)

CHUNKS = chunks()
@pytest.mark.parametrize("chunk", sorted(CHUNKS))
def test_diff(diff_runners, chunk):
  failures = differential(diff_runners, CHUNKS[chunk])
  assert not failures, "\n".join(f"{dev}: {len(f)} of {len(CHUNKS[chunk])} cases disagree with DEV=CPU\n" + "\n".join(f[:10]) for dev,
                                 f in failures.items())
