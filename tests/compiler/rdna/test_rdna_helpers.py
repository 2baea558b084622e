"""The row language's helpers (semantics/lang.py HELPERS): one registry holds each helper's type rule, its numpy form
and its C form or the reason it has none; backends/c.py's C_CALLS is derived from it."""
import ast
import numpy as np
import pytest
from mockgpu.compiler.rdna.semantics import lang
from mockgpu.compiler.rdna.backends import c, numpy_control, numpy_memory, numpy_runtime
from mockgpu.compiler.rdna.backends import numpy as np_backend  # noqa: F401  (registers the numpy forms)

ARGS = [f"x{i}" for i in range(5)]
# the names translated code runs with (backends/numpy.py Translator.source's star imports)
RUNTIME = {n for mod in (numpy_runtime, numpy_memory, numpy_control) for n in dir(mod)}

def test_every_helper_has_a_numpy_form_and_a_c_form_or_the_reason_it_has_none():
  assert len(lang.HELPERS) > 60
  missing_np = sorted(n for n, h in lang.HELPERS.items() if h.numpy is None)
  neither = sorted(n for n, h in lang.HELPERS.items() if h.c is None and not h.no_c)
  both = sorted(n for n, h in lang.HELPERS.items() if h.c is not None and h.no_c)
  assert missing_np == [] and neither == [] and both == []
  assert {n for n, h in lang.HELPERS.items() if h.no_c} == {"fma_rtz", "trig_preop"}

def test_c_calls_is_the_registrys_c_forms():
  assert set(c.C_CALLS) == {n for n, h in lang.HELPERS.items() if h.no_c is None}
  assert all(c.C_CALLS[n] is lang.HELPERS[n].c for n in c.C_CALLS)
  assert c.C_CALLS["fma"](["a", "b", "c"], ["f32"] * 3, "f32") == "fma32(a, b, c)"

def called(code:str) -> set[str]:
  """The functions a rendered numpy expression calls (np.x as written)."""
  out = set()
  for node in ast.walk(ast.parse(code, mode="eval")):
    if isinstance(node, ast.Call): out.add(ast.unparse(node.func))
  return out

@pytest.mark.parametrize("ts", [["f32"] * 5, ["f16"] * 5, ["u32"] * 5])
def test_every_numpy_form_calls_a_function_translated_code_has(ts):
  for name, helper in lang.HELPERS.items():
    for fn in called(helper.numpy(ARGS, ts, ts[0])):
      if fn.startswith("np."): assert hasattr(np, fn[3:]), (name, fn)
      else: assert fn in RUNTIME, (name, fn)

def test_a_form_of_an_unknown_helper_or_a_c_form_where_there_is_a_reason_is_refused():
  with pytest.raises(lang.LangError, match="numpy form of unknown helper no_such_helper"):
    lang.register("numpy", {"no_such_helper": lambda a, ts, t: "x"})
  form = lang.HELPERS["trig_preop"].c
  with pytest.raises(lang.LangError, match="C form of trig_preop, which has none: the 1201 bits of 2/pi"):
    lang.register("c", {"trig_preop": lambda a, ts, t: "x"})
  assert lang.HELPERS["trig_preop"].c is form is None
