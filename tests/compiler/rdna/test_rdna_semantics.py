"""The semantics table and its language (compiler/rdna/semantics/): every row types; the types lang.infer gives each
statement are the dtypes numpy computes for the row's numpy rendering (the C backend spells out exactly those types,
so this is what makes the two renderings compute the same values); what C cannot render is counted, not hidden."""
from __future__ import annotations
import numpy as np
import pytest
from mockgpu.compiler.rdna.semantics import rdna3 as sem, lang
from mockgpu.compiler.rdna.semantics.lang import E, LangError, value_type
from mockgpu.compiler.rdna.backends import numpy_runtime
from mockgpu.compiler.rdna.backends.numpy import np_expr
from mockgpu.compiler.rdna.backends.c import c_rows
from mockgpu.compiler.rdna.semantics.lang import free_names

DTYPE = {"bool": np.bool_, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "i8": np.int8,
         "i16": np.int16, "i32": np.int32, "i64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
SPECIALS = {"vcc": "bool", "lane": "u32", "scc": "u32", "pc": "u64", "ieee": "bool"}  # ieee: the wave's IEEE mode
rng = np.random.default_rng(17)

def _value(t:str, vector:bool):
  bits = rng.integers(0, 2**64, 8, dtype=np.uint64)
  x = bits.astype(np.uint8).astype(bool) if t == "bool" else bits.astype(DTYPE[{"f16": "u16", "f32": "u32", "f64": "u64"}.get(t, t)])
  if t[0] == "f": x = x.view(DTYPE[t])
  return x if vector else x[0]

ROWS = [(kind, name) for kind, table in (("VOP", sem.VOP), ("SOP", sem.SOP), ("PACKED", sem.PACKED), ("CLAMPED", sem.CLAMPED))
        for name in table]

@pytest.mark.parametrize("kind,name", ROWS)
def test_row_types_are_numpys(kind, name):
  row = getattr(sem, kind)[name]
  vector = kind != "SOP"
  env, values = {}, {}
  for n, t in row.srcs: env[n], values[n] = E("var", value_type(t), val=n), _value(value_type(t), vector)
  for n in free_names(row):
    if n in env: continue
    t = "u32" if n == "exec" else (value_type(row.dst) if n == "d" else SPECIALS[n])
    env[n], values[n] = E("var", t, val=n), _value(t, vector and n in ("vcc", "lane"))
  stmts, _ = lang.instance(row, env)
  ns = dict(vars(numpy_runtime), **values)
  with np.errstate(all="ignore"):
    for s in stmts:
      exec(f"{', '.join(s.targets)} = {np_expr(s.value, None)}", ns)
      types = s.value.t if isinstance(s.value.t, tuple) else (s.value.t,)
      for target, t in zip(s.targets, types):
        assert np.asarray(ns[target]).dtype == np.dtype(DTYPE[t]), f"{name}: {target} is {np.asarray(ns[target]).dtype}, typed {t}"

def test_every_row_written_once_and_c_coverage_counted():
  rows = c_rows()
  assert set(rows) == set(sem.VOP)
  numpy_only = sorted(n for n, ok in rows.items() if not ok)
  # helpers with no C form (f64 div_fmas, trig_preop, VINTERP's round-toward-zero fma); div_scale's two results (D and
  # VCC) render as the prelude's struct
  assert numpy_only == ["DIV_FMAS_F64", "INTERP_P10_RTZ_F16_F32", "INTERP_P2_RTZ_F16_F32", "TRIG_PREOP_F64"]
  assert rows["DIV_SCALE_F32"] and rows["DIV_SCALE_F64"]
  assert rows["FMA_F32"] and rows["ADD_CO_CI_U32"] and rows["CMP_NGE_F32"] and rows["CNDMASK_B16"]
  assert rows["SIN_F32"] and rows["FMA_F64"] and rows["EXP_F16"] and rows["DOT2_F32_BF16"]

@pytest.mark.parametrize("body,why", [("a / b", "operator Div"), ("a < b < c", "chained comparison"), ("nothing(a)", "unknown helper"),
                                      ("a + zz", "unknown name"), ("a if b else c", "expected bool"), ("1.5 & a", "& on")])
def test_outside_the_language(body, why):
  row = lang.row(f"X u32 u32 u32 u32 = {body}")
  env = {n: E("var", "u32", val=n) for n in "abc"}
  with pytest.raises(LangError, match=why): lang.instance(row, env)

def test_numpy_promotion_rules():
  assert lang.promote("u32", "i32") == "i64" and lang.promote("u32", "int") == "u32" and lang.promote("bool", "u16") == "u16"
  assert lang.promote("f16", "f32") == "f32" and lang.promote("i32", "float") == "f64" and lang.promote("u64", "u32") == "u64"

def test_every_family_row_parses():
  """Rows are parsed at their first use (lang.Row.body), so a row outside the language would only fail in a kernel
  using it: parse every row of every family's tables here."""
  from mockgpu.compiler.rdna.semantics import FAMILIES, family
  count = 0
  for name in FAMILIES:
    for table in vars(family(name)).values():
      if not isinstance(table, dict): continue
      for row in table.values():
        if isinstance(row, lang.Row): count += len(row.body) > 0
  assert count > 800

def test_each_family_sets_dispatches_up_as_its_table_says():
  """semantics.setup(arch), what a dispatch's set-up reads without importing the family's table (family_setup.py), holds the
  values of the table itself, family by family; and they differ where the families do."""
  from mockgpu.compiler.rdna import semantics
  from mockgpu.compiler.rdna.semantics import family_setup
  for arch in semantics.FAMILIES:
    table, s = semantics.family(arch), semantics.setup(arch)
    assert {n: getattr(s, n) for n in family_setup.NAMES} == {n: getattr(table, n) for n in family_setup.NAMES}, arch
  assert semantics.setup("rdna4").IEEE_MODE_BIT is None and semantics.setup("rdna3").IEEE_MODE_BIT == 23
  assert semantics.setup("cdna4").GFX9 and semantics.setup("cdna3").TMPRING_WAVESIZE_UNIT == 1024
  with pytest.raises(KeyError, match="gfx1100"): semantics.setup("gfx1100")
