"""The differential API suite's comparison: a case run on every configuration and DEV=CPU, its triage tables
(CPU_CANNOT, MOCK_GAPS, LANE_TRIAGE, ...) and the report.
(Moved from tests/diff/test_diff_api.py so that no test file imports another.)"""
import json, os, re
import diffcases as D
from diffcompare import compare, condition, run_everywhere, upcast, zero_sign_defined
def report(dev:str, case:dict, cls:str, msg:str):
  if path := os.environ.get("MOCKGPU_DIFF_REPORT"):
    with open(path, "a") as f: f.write(json.dumps({"dev": dev, "case": case["id"], "op": case["op"], "class": cls, "msg": msg[:400]}) + "\n")

FLUSH:dict[str, set] = {}  # per configuration: dtypes it has in hardware where DEV=CPU lowers them to integer code

# tinygrad's PTX renderer emits these float64 forms, which ptxas rejects (those operations are .approx for .f32 only, and
# rcp.approx.f64 needs .ftz): the only InvalidPTX a :PTX configuration may raise for a float64 case
APPROX_F64 = re.compile(r"\b(sin|cos|lg2|ex2|sqrt|rcp)\.approx(\.ftz)?\.f64\b")
def invalid_ptx_expected(dev:str, case:dict, got, want, peer_approx_f64:bool=False) -> bool:
  """tinygrad's PTX renderer emits sin/ex2/lg2/sqrt/rcp .approx.f64, which ptxas rejects (not valid PTX: those forms are
  .f32 only, or need .ftz): on :PTX configurations a float64 case that needs them must fail as on hardware, with the
  mock's InvalidPTX naming one of them (MOCK+NV:PTX). MOCK+CUDA:PTX's CUDA_ERROR_INVALID_PTX from cuModuleLoadData names
  no instruction: it is expected where MOCK+NV:PTX, whose PTX is tinygrad's same rendering, named one
  (`peer_approx_f64`)."""
  if not (dev.endswith(":PTX") and got[0] == "error" and touches(case, want, {"float64"})): return False
  if "InvalidPTX" in got[2]: return APPROX_F64.search(got[2].strip().splitlines()[-1]) is not None
  return peer_approx_f64 and ("CUDA_ERROR_INVALID_PTX" in got[2] or "CUDA Error 218" in got[2])

# Known mockgpu gaps the sample meets, each named by the error it raises on one configuration: (configuration, error
# class, text of its message, why). Each goes with the work that fixes it; no other error passes.
MOCK_GAPS:tuple[tuple[str, str, str, str], ...] = (   # (configuration, error, its text, why): none open
)
# Triage of the arm64 lane: (configuration, case id, the difference, why). A listed case may differ from DEV=CPU (x86,
# clang) there and only there; each entry's reason is checked by a test (tests/emulators/test_cpu_lane.py) so it cannot go stale.
LANE_TRIAGE = (
  ("MOCK+CPU:LLVM", "add[fp8e5m2fnuz[],fp8e5m2fnuz[]]", "0x00 (0.0) where DEV=CPU gives 0x04 (2**-15)",
   "not an arm64 difference: native x86 DEV=CPU:LLVM gives 0x00 too. Both inputs are 0.0. tinygrad emulates fp8 through "
   "half where the renderer has half (clang on CPU) and through float32 where it does not (LLVM on CPU); its half -> "
   "fp8e5m2fnuz conversion (codegen/decomp/dtype.py f2f) subtracts the bias difference 15 - 16 = -1 and never flags "
   "underflow, so clang's 0.0 becomes 0x04, and its decode flushes 0x04-0x07 to 0. 0.0 + 0.0 is 0x00: the lane is right "
   "(test_fp8_fnuz_triage_reason)"),
)
def lane_triaged(dev:str, case:dict) -> bool:
  return any(dev == d and case["id"] == cid for d, cid, _, _ in LANE_TRIAGE)

def mock_gap(dev:str, got) -> bool:
  return got[0] == "error" and any(dev == d and got[1] == exc and text in got[2] for d, exc, text, _ in MOCK_GAPS)

def check(dev, case, got, want, ref, runs:dict|None=None, peer_approx_f64:bool=False) -> tuple[str, str]|None:
  """(class, message) of a disagreement, or None. `runs`: the reference's condition runs ("abs", "slope") by name;
  `peer_approx_f64`: MOCK+NV:PTX rejected the case's .approx.f64 (invalid_ptx_expected)."""
  if invalid_ptx_expected(dev, case, got, want, peer_approx_f64) or mock_gap(dev, got) or lane_triaged(dev, case): return None
  if got[0] == "error": return got[1], f"raised {got[1]}: {got[2].strip().splitlines()[-1]}"
  outs, wants = got[1], want[1]
  if len(outs) != len(wants): return "mismatch", f"{len(outs)} outputs, CPU has {len(wants)}"
  refs = ref[1] if ref is not None and ref[0] == "ok" else [None] * len(outs)
  spec = D.CMP[case["op"]]
  for i, (g, w, r) in enumerate(zip(outs, wants, refs)):
    cond = output_condition(case, spec, r, runs or {}, i)
    if (msg := compare(g, w, r, spec, zero_sign_defined(dev, case), FLUSH.get(dev, set()), cond)) is not None: return "mismatch", f"output {i}: {msg}"
  return None

def output_condition(case, spec, ref, runs:dict, i:int):
  """Output i's per-element condition, where the bound names one and the float64 reference is a float tensor."""
  if spec is None or ref is None or ref[0] != "tensor" or not (spec["cond"] or spec["floor"] is not None): return None
  got = {name: run[1][i] for name, run in runs.items() if run[0] == "ok"}
  if set(got) != set(spec["cond"]): return None  # a condition run that failed: compare() then reports the bound unmet
  return condition(case, spec, ref, got)

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
  ("__getitem__.tensors[bfloat16[", "RuntimeError", "CPU's lowering of a tensor-indexed bfloat16 gather fails tinygrad's UOp verification"),
  ("__getitem__.tensors[fp8", "RuntimeError", "CPU's lowering of a tensor-indexed fp8 gather fails tinygrad's UOp verification"),
  ("argmin[uint32[5, 6, 2]/pad", "CalledProcessError", "clang rejects the C tinygrad's CPU renderer emits for it"),
)
def stale_cpu_cannot(cases:list, skip:set) -> list[str]:
  """CPU_CANNOT entries with cases here of which none raised the listed exception on any configuration's reference."""
  out = []
  for prefix, exc, _ in CPU_CANNOT:
    mine = [i for i, c in enumerate(cases) if c["id"].startswith(prefix)]
    if mine and not any(i in mine for _, i in skip):
      out.append(f"  CPU_CANNOT entry {prefix!r} ({exc}) is stale: DEV=CPU ran its {len(mine)} case(s) here")
  return out

def cpu_cannot(case:dict, reply:tuple) -> bool:
  return reply[0] == "error" and any(case["id"].startswith(p) and reply[1] == exc for p, exc, _ in CPU_CANNOT)

def condition_runs(cpu, cases, need) -> dict[int, dict[str, tuple]]:
  """The float64 reference's condition runs (tests/diff/diffcases.py `ulps`) each needed case's bound names: {case: {run: reply}}."""
  todo = [(i, t) for i in need for t in D.CMP[cases[i]["op"]]["cond"]]
  if not todo: return {}
  replies = run_everywhere({"CPU": cpu}, [{**upcast(cases[i]), "id": f"{cases[i]['id']}@{t}", "transform": t} for i, t in todo])["CPU"]
  out:dict[int, dict[str, tuple]] = {}
  for (i, t), reply in zip(todo, replies): out.setdefault(i, {})[t] = reply
  return out

def differential(runners, cases) -> dict[str, list[str]]:
  """Every case on every configuration and on CPU: {configuration: [a line per disagreeing case]}."""
  res = run_everywhere(runners, cases)
  cpu = res.pop("CPU")
  for dev in res: FLUSH[dev] = (runners["CPU"].emulated - runners[dev].emulated) & set(D.FP8)
  emulated = emulated_references(runners, cases, cpu)
  wants = {dev: [emulated.get(dev, {}).get(i, w) for i, w in enumerate(cpu)] for dev in res}
  # a configuration's reference that DEV=CPU cannot compute (CPU_CANNOT) leaves that case out there, not elsewhere
  skip = {(d, i) for d in wants for i, c in enumerate(cases) if cpu_cannot(c, wants[d][i])}
  bad_ref = {f"{c['id']}: the CPU reference raised {w[1]}:\n{w[2][-2000:]}" for d, ws in wants.items() for i, (c, w) in enumerate(zip(cases, ws))
             if w[0] == "error" and (d, i) not in skip}
  assert not bad_ref, "\n".join(sorted(bad_ref))
  # the float64 reference, only for approximate cases that are not bit-identical somewhere
  need = [i for i, c in enumerate(cases)
          if D.CMP[c["op"]] is not None and any(check(d, c, res[d][i], wants[d][i], None) for d in res if (d, i) not in skip)]
  refs = dict(zip(need, run_everywhere({"CPU": runners["CPU"]}, [upcast(cases[i]) for i in need])["CPU"])) if need else {}
  runs = condition_runs(runners["CPU"], cases, need)
  failures:dict[str, list[str]] = {}
  if stale := stale_cpu_cannot(cases, skip): failures["CPU_CANNOT"] = stale
  approx_f64 = {i for i, r in enumerate(res.get("MOCK+NV:PTX", [])) if invalid_ptx_expected("MOCK+NV:PTX", cases[i], r, cpu[i])}
  for dev, outs in res.items():
    for i, case in enumerate(cases):
      if (dev, i) in skip: continue
      if (bad := check(dev, case, outs[i], wants[dev][i], refs.get(i), runs.get(i), i in approx_f64)) is not None:
        report(dev, case, bad[0], bad[1])
        failures.setdefault(dev, []).append(f"  {case['id']}: {bad[1]}")
  return failures
