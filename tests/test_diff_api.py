"""The differential suite: tinygrad's public Tensor API (tests/diffcases.py), every case on every mock configuration
and on DEV=CPU, compared bit for bit or within the op's stated ulp bound against a float64 reference.

Tiers: the generated cases are the slow tier, run only with MOCKGPU_DIFF set: 8 (the default stride) runs every 8th
case of each public name (about 500 per configuration);
MOCKGPU_DIFF=N every Nth, MOCKGPU_DIFF=full every case (3429 per configuration, about 30 minutes on 2 cores). MOCKGPU_DIFF_REPORT=FILE appends one JSON line per failing (configuration, case) with its class, for counting.
"""
import json, os
import pytest
import diffcases as D
from diffops2 import EXCLUDED
from diffcompare import compare, run_everywhere, upcast, zero_sign_defined

CHUNK = 48
TIER = os.environ.get("MOCKGPU_DIFF", "8")
STRIDE = 1 if TIER == "full" else int(TIER)
def chunks() -> dict[str, list]:
  """The cases grouped by public name, in tests of up to CHUNK cases. CI's tier (the default) takes every 8th case of
  each name, its first always; MOCKGPU_DIFF=N takes every Nth, MOCKGPU_DIFF=full all of them."""
  by_op:dict[str, list] = {}
  for c in D.CASES: by_op.setdefault(c["op"].split(".")[0], []).append(c)
  by_op = {name: cs[::STRIDE] for name, cs in by_op.items()}
  return {f"{name}-{i // CHUNK}": cs[i:i + CHUNK] for name, cs in by_op.items() for i in range(0, len(cs), CHUNK)}
CHUNKS = chunks()

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

def report(dev:str, case:dict, cls:str, msg:str):
  if path := os.environ.get("MOCKGPU_DIFF_REPORT"):
    with open(path, "a") as f: f.write(json.dumps({"dev": dev, "case": case["id"], "op": case["op"], "class": cls, "msg": msg[:400]}) + "\n")

FLUSH:dict[str, set] = {}  # per configuration: dtypes it has in hardware where DEV=CPU lowers them to integer code

def invalid_ptx_expected(dev:str, case:dict, got, want) -> bool:
  """tinygrad's PTX renderer emits sin/ex2/lg2/sqrt/rcp .approx.f64, which ptxas rejects (not valid PTX: those forms are
  .f32 only, or need .ftz): on :PTX configurations a float64 case that needs them must fail as on hardware, with the
  mock's InvalidPTX (MOCK+NV:PTX) or CUDA_ERROR_INVALID_PTX from cuModuleLoadData (MOCK+CUDA:PTX)."""
  return (dev.endswith(":PTX") and got[0] == "error" and touches(case, want, {"float64"})
          and ("InvalidPTX" in got[2] or "CUDA_ERROR_INVALID_PTX" in got[2]))

def check(dev, case, got, want, ref) -> tuple[str, str]|None:
  """(class, message) of a disagreement, or None."""
  if invalid_ptx_expected(dev, case, got, want): return None
  if got[0] == "error": return got[1], f"raised {got[1]}: {got[2].strip().splitlines()[-1]}"
  outs, wants = got[1], want[1]
  if len(outs) != len(wants): return "mismatch", f"{len(outs)} outputs, CPU has {len(wants)}"
  refs = ref[1] if ref is not None and ref[0] == "ok" else [None] * len(outs)
  for i, (g, w, r) in enumerate(zip(outs, wants, refs)):
    if (msg := compare(g, w, r, D.CMP[case["op"]], zero_sign_defined(dev), FLUSH.get(dev, set()))) is not None: return "mismatch", f"output {i}: {msg}"
  return None

def strings(v) -> set:
  if isinstance(v, str): return {v}
  if isinstance(v, (list, tuple)): return set().union(*map(strings, v)) if v else set()
  if isinstance(v, dict): return strings(list(v.values()))
  return set()

def touches(case:dict, cpu_reply, names:set) -> bool:
  """Whether the case has one of the dtypes `names`: an input's, a cast's (any string argument), or an output's."""
  dts = {s[1] for s in case["x"]} | strings(case["kw"]) | ({o[1] for o in cpu_reply[1] if o[0] == "tensor"} if cpu_reply[0] == "ok" else set())
  return bool(dts & names)

def emulated_references(runners, cases, cpu) -> dict[str, dict[int, tuple]]:
  """Where a configuration's renderer has no bfloat16 or half (tinygrad's PTX renderer has no bfloat16) tinygrad lowers
  it to integer code, as hardware with that renderer runs it: that configuration's reference is DEV=CPU under
  EMULATED_DTYPES of the same dtypes (the same lowering), not CPU's native type."""
  out, by_key = {}, {}
  for dev in runners:
    if dev == "CPU" or not (extra := (runners[dev].emulated - runners["CPU"].emulated) & {"bfloat16", "float16"}): continue
    idx = [i for i, c in enumerate(cases) if "EMULATED_DTYPES" not in c["ctx"] and touches(c, cpu[i], extra)]
    key = ",".join(sorted(extra))
    if idx and key not in by_key:
      emu = [{**cases[i], "id": cases[i]["id"] + "@emulated", "ctx": {**cases[i]["ctx"], "EMULATED_DTYPES": key}} for i in idx]
      by_key[key] = dict(zip(idx, run_everywhere({"CPU": runners["CPU"]}, emu)["CPU"]))
    out[dev] = by_key.get(key, {})
  return out

# Cases tinygrad 0.14's DEV=CPU itself cannot run, so there is no reference to compare with: (id prefix, the
# exception DEV=CPU raises, why). Only a listed case raising the listed exception is left out; any other CPU error fails.
CPU_CANNOT = (
  ("max[bfloat16[257, 3, 263]", "RuntimeError", "CPU's lowering of a large bfloat16 reduction fails tinygrad's UOp verification"),
  ("min[bfloat16[257, 3, 263]", "RuntimeError", "CPU's lowering of a large bfloat16 reduction fails tinygrad's UOp verification"),
  ("log_softmax[bfloat16[257, 3, 263]", "RuntimeError", "CPU's lowering of a large bfloat16 reduction fails tinygrad's UOp verification"),
  ("logsumexp[bfloat16[", "RuntimeError", "CPU's lowering of a bfloat16 reduction fails tinygrad's UOp verification"),
  ("__getitem__.tensors[bfloat16[", "RuntimeError", "CPU's lowering of a tensor-indexed bfloat16 gather fails tinygrad's UOp verification"),
  ("__getitem__.tensors[fp8", "RuntimeError", "CPU's lowering of a tensor-indexed fp8 gather fails tinygrad's UOp verification"),
  ("argmin[uint32[5, 6, 2]/pad", "CalledProcessError", "clang rejects the C tinygrad's CPU renderer emits for it"),
)
def cpu_cannot(case:dict, reply:tuple) -> bool:
  return reply[0] == "error" and any(case["id"].startswith(p) and reply[1] == exc for p, exc, _ in CPU_CANNOT)

def differential(runners, cases) -> dict[str, list[str]]:
  """Every case on every configuration and on CPU: {configuration: [a line per disagreeing case]}."""
  res = run_everywhere(runners, cases)
  cpu = res.pop("CPU")
  for dev in res: FLUSH[dev] = (runners["CPU"].emulated - runners[dev].emulated) & set(D.FP8)
  emulated = emulated_references(runners, cases, cpu)
  wants = {dev: [emulated.get(dev, {}).get(i, w) for i, w in enumerate(cpu)] for dev in res}
  keep = [i for i, c in enumerate(cases) if not cpu_cannot(c, cpu[i]) and not any(cpu_cannot(c, wants[d][i]) for d in wants)]
  cases, res, wants = [cases[i] for i in keep], {d: [o[i] for i in keep] for d, o in res.items()}, {d: [w[i] for i in keep] for d, w in wants.items()}
  bad_ref = {f"{c['id']}: the CPU reference raised {w[1]}:\n{w[2][-2000:]}" for ws in wants.values() for c, w in zip(cases, ws) if w[0] == "error"}
  assert not bad_ref, "\n".join(sorted(bad_ref))
  # the float64 reference, only for approximate cases that are not bit-identical somewhere
  need = [i for i, c in enumerate(cases) if D.CMP[c["op"]] is not None and any(check(d, c, res[d][i], wants[d][i], None) for d in res)]
  refs = dict(zip(need, run_everywhere({"CPU": runners["CPU"]}, [upcast(cases[i]) for i in need])["CPU"])) if need else {}
  failures:dict[str, list[str]] = {}
  for dev, outs in res.items():
    for i, case in enumerate(cases):
      if (bad := check(dev, case, outs[i], wants[dev][i], refs.get(i))) is not None:
        report(dev, case, bad[0], bad[1])
        failures.setdefault(dev, []).append(f"  {case['id']}: {bad[1]}")
  return failures

@pytest.mark.skipif("MOCKGPU_DIFF" not in os.environ, reason="the slow tier: MOCKGPU_DIFF=8 (every 8th case), N or full")
@pytest.mark.parametrize("chunk", sorted(CHUNKS))
def test_diff(diff_runners, chunk):
  failures = differential(diff_runners, CHUNKS[chunk])
  assert not failures, "\n".join(f"{dev}: {len(f)} of {len(CHUNKS[chunk])} cases disagree with DEV=CPU\n" + "\n".join(f[:10]) for dev, f in failures.items())
