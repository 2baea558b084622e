"""The differential suite's bounds (tests/diff/diffcompare.py `compare`) hold per element: each bound class, fed a result
known to be wrong, fails; the issue's examples among them (a bfloat16 softmax and sum, float32 sin(0.001) off by
6,700 ulps), which a bound relative to the largest output accepted."""
import math
import numpy as np
import pytest
import diffcases as D
from diffcompare import compare, condition

def tensor(values, name:str) -> tuple:
  """A worker's output tuple of `values` rounded to `name` (round to nearest even; bfloat16 from float32)."""
  v = np.asarray(values, np.float64)
  if name == "bfloat16":
    b = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return ("tensor", name, "H", v.shape, bits.tobytes())
  return ("tensor", name, np.dtype(name).char, v.shape, v.astype(name).tobytes())

def ref(values) -> tuple: return tensor(values, "float64")

def check(f, x:np.ndarray, got, name:str, spec:dict, case:dict|None=None) -> str|None:
  """compare() of `got` against CPU's correctly rounded f(x), with the condition runs computed as the suite does."""
  runs = {"abs": ref(f(np.abs(x))), "slope": ref(f(x * (1 + D.SLOPE_STEP)))}
  r = ref(f(x))
  cond = condition(case or {"x": []}, spec, r, {k: v for k, v in runs.items() if k in spec["cond"]})
  return compare(tensor(got, name), tensor(f(x), name), r, spec, cond=cond)

def softmax(x): return np.exp(x - x.max()) / np.exp(x - x.max()).sum()

def test_bf16_softmax_far_off_fails():
  x = np.log([0.7, 0.2, 0.06, 0.03, 0.01])
  assert check(softmax, x, softmax(x), "bfloat16", D.SOFTMAX) is None
  msg = check(softmax, x, [0.7, 0.44, 0.30, 0.27, 0.25], "bfloat16", D.SOFTMAX)
  assert msg is not None and msg.startswith("4 of 5 elements beyond 64 ulps"), msg

def test_bf16_sum_far_off_fails():
  x = np.array([[60, 40], [1, 2], [-1, -1], [0.25, 0.25]])
  def rowsum(a): return a.sum(axis=1)
  assert check(rowsum, x, [100, 3, -2, 0.5], "bfloat16", D.REDUCE) is None
  msg = check(rowsum, x, [100, 30, -29, 28], "bfloat16", D.REDUCE)
  assert msg is not None and msg.startswith("3 of 4 elements beyond 64 ulps"), msg

def test_f32_sin_6700_ulps_fails():
  x = np.array([0.001])
  off = np.float32(np.sin(0.001)).view(np.uint32) + np.uint32(6700)
  assert check(np.sin, x, [np.float32(np.sin(0.001))], "float32", D.TRIG) is None
  msg = check(np.sin, x, [off.view(np.float32)], "float32", D.TRIG)
  assert msg is not None and "6699.8 ulps" in msg, msg

def test_cos_near_its_zero_is_absolute():
  """cos(pi/2 + 1e-4) rounds at the argument's scale (the element's condition |x sin x| ~ 1.57): 4 ulps of 1.57
  pass though they are some 60,000 ulps of the element."""
  x = np.array([math.pi / 2 + 1e-4])
  got = np.float32(np.cos(x[0])) + np.float32(4 * 2.0 ** -23)
  assert check(np.cos, x, [got], "float32", D.TRIG) is None
  assert check(np.cos, x, [np.float32(np.cos(x[0])) + np.float32(64 * 2.0 ** -23)], "float32", D.TRIG) is not None

def distinct_bounds() -> dict[str, dict]:
  out = {}
  for spec in D.CMP.values():
    if spec is not None: out.setdefault(f"{spec['ulps']}ulps-{'+'.join(spec['cond']) or 'elem'}-floor{spec['floor']}", spec)
  return out

@pytest.mark.parametrize("name", sorted(distinct_bounds()))
def test_every_bound_class_rejects_a_wrong_result(name):
  """Each bound the suite uses, on an elementwise exp over values of mixed scale: an error of twice the bound at one
  element's own scale fails, half of it passes (the bound is neither empty nor stricter than it says)."""
  spec = distinct_bounds()[name]
  x = np.array([-3.0, -0.5, 0.25, 1.5, 2.0])
  case = {"x": [((5,), "float32", (-4, 4), 0, None)]}
  r = ref(np.exp(x))
  runs = {"abs": ref(np.exp(np.abs(x))), "slope": ref(np.exp(x * (1 + D.SLOPE_STEP)))}
  named = {k: v for k, v in runs.items() if k in spec["cond"]}
  cond = condition(case, spec, r, named) if spec["cond"] or spec["floor"] is not None else None
  want = np.exp(x).astype(np.float32)
  scale = np.maximum(np.abs(np.exp(x)), cond if cond is not None else 0)
  ulp = np.exp2(np.floor(np.log2(scale)) - 23)
  for factor, fails in ((2.0, True), (0.5, False)):
    got = want.astype(np.float64)
    got[0] += factor * spec["ulps"] * ulp[0]
    msg = compare(tensor(got, "float32"), tensor(want, "float32"), r, spec, cond=cond)
    assert (msg is not None) == fails, (factor, msg)

def test_a_named_condition_is_required():
  x = np.array([0.5])
  msg = compare(tensor([1.0], "float32"), tensor(np.sin(x), "float32"), ref(np.sin(x)), D.TRIG)
  assert msg is not None and "names a condition" in msg

def test_exact_is_bit_for_bit():
  assert compare(tensor([1.0, 2.0], "float32"), tensor([1.0, 2.0], "float32"), None, None) is None
  off = np.array([1.0, 2.0], np.float32)
  off.view(np.uint32)[1] += 1
  assert compare(tensor(off, "float32"), tensor([1.0, 2.0], "float32"), ref([1.0, 2.0]), None) is not None
