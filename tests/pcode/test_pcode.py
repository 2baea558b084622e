"""The pseudocode evaluator (tests/pcode) on its own: the language over all three families' tables, exact rounding,
the NaN rule, and small programs with known results. The conformance suite (test_conformance.py) is only as good as
this reference."""
from __future__ import annotations
import importlib, math, struct
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pcode import numbers as N, interp, readings
from pcode.parse import parse, PcodeSyntaxError

def f32(x:float) -> int: return struct.unpack("<I", struct.pack("<f", x))[0]

def run(text:str, **vars) -> dict:
  env = interp.Env(dict(vars))
  interp.Program(text).run(env)
  return env.vars

# the tables' entries that are prose or not code (matrix ops, waits, traps, ...): they must stay the only ones
UNPARSED_RDNA3 = {"DS_SWIZZLE_B32", "DS_CONSUME", "DS_APPEND", "DS_ADD_GS_REG_RTN", "DS_SUB_GS_REG_RTN",
                  "DS_BVH_STACK_RTN_B32", "LDS_DIRECT_LOAD", "IMAGE_GET_LOD", "S_WAITCNT_VSCNT", "S_WAITCNT_VMCNT",
                  "S_WAITCNT_EXPCNT", "S_WAITCNT_LGKMCNT", "S_DELAY_ALU", "S_TRAP", "S_CODE_END", "S_SETPRIO",
                  "V_WMMA_F32_16X16X16_F16", "V_WMMA_F32_16X16X16_BF16", "V_WMMA_F16_16X16X16_F16",
                  "V_WMMA_BF16_16X16X16_BF16", "V_WMMA_I32_16X16X16_IU8", "V_WMMA_I32_16X16X16_IU4"}

def unparsed(family:str) -> set[str]:
  table = importlib.import_module(f"tinygrad.runtime.autogen.amd.{family}.str_pcode").PCODE
  out = set()
  for op, text in table.items():
    try: parse(text)
    except PcodeSyntaxError: out.add(op.name)
  return out

def test_rdna3_pseudocode_parses_except_prose():
  assert unparsed("rdna3") == UNPARSED_RDNA3

@pytest.mark.parametrize("family,at_least", [("rdna4", 1400), ("cdna", 1370)])
def test_other_families_parse(family, at_least):
  """The language is family-generic: RDNA4 and CDNA tables parse as well (what does not is prose: matrix ops)."""
  table = importlib.import_module(f"tinygrad.runtime.autogen.amd.{family}.str_pcode").PCODE
  bad = unparsed(family)
  assert len(table) - len(bad) >= at_least, sorted(bad)
  assert all(("MMA" in n or "MFMA" in n or n.startswith(("S_", "DS_", "IMAGE_"))) for n in bad), sorted(bad)

def test_syntax_errors_name_the_token():
  with pytest.raises(PcodeSyntaxError, match="expected 'then'"): parse("if SCC D0.u32 = 1 endif")
  with pytest.raises(PcodeSyntaxError, match="unexpected"): parse("D0.u32 = ;")

# *** rounding ***

@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_rounding_to_f32_and_f16_is_correct(x):
  """The fast path (Python's float packing) and the exact one (round_ratio over the fraction) agree; numpy's
  conversions are a third, independent check."""
  n, d = x.as_integer_ratio()
  for fmt, np_t, bits in (("f32", np.float32, np.uint32), ("f16", np.float16, np.uint16)):
    with np.errstate(over="ignore"): want = int(np.array([x]).astype(np_t).view(bits)[0])
    if x != 0: assert N.round_ratio(n, d, fmt) == want, (fmt, x)  # a ratio of integers has no -0
    assert N.encode(N.rounded(fmt, x), fmt)[0] == want, (fmt, x)

def test_round_to_nearest_even_and_toward_zero():
  assert N.round_ratio(1, 3, "f32") == 0x3eaaaaab
  assert N.round_ratio(-(2**24 + 1), 1, "f32") == f32(-16777216.0)        # a tie: to even
  assert N.round_ratio(2**24 + 3, 1, "f32") == f32(16777220.0)
  assert N.round_ratio(70000, 1, "f16") == 0x7c00                        # overflow: inf
  assert N.round_ratio(70000, 1, "f16", rtz=True) == 0x7bff              # toward zero: the largest finite
  assert N.round_ratio(1, 2**149, "f32") == 1 and N.round_ratio(1, 2**150, "f32") == 0   # subnormal, tie to even 0

def test_fma_rounds_once():
  """(1 + 2**-12)**2 + 2**-60 lies just above a float32 tie: rounding the float64 sum first lands on the tie and
  rounds down; the exact sum rounds up."""
  v = run("D0.f32 = fma(S0.f32, S1.f32, S2.f32)", S0=0x3f800800, S1=0x3f800800, S2=0x21800000, D0=0)
  assert v["D0"] == 0x3f801001
  a = struct.unpack("<f", struct.pack("<I", 0x3f800800))[0]
  assert f32(float(np.float32(a * a + 2.0**-60))) == 0x3f801000  # the double-rounded value the reference avoids
  assert run("D0.f32 = fma(S0.f32, S1.f32, S2.f32)", S0=f32(1 + 2**-23), S1=f32(1 + 2**-23), S2=f32(-(1 + 2**-22)),
             D0=0)["D0"] == f32(2.0**-46)

# *** the NaN rule ***

def test_arithmetic_nans_are_loose_moves_are_exact():
  v = run("D0.f32 = S0.f32 + S1.f32", S0=0x7fc12345, S1=f32(1.0), D0=0)
  assert interp.loose_fields(v["D0"]) == ((0, 32, "f32"),)
  v = run("D0.f32 = S0.f32", S0=0xff812345, D0=0)
  assert v["D0"] == 0xff812345 and not interp.loose_fields(v["D0"])
  v = run("D0.f32 = 32'F(cvtToQuietNAN(64'F(S0.f32)))", S0=0x7f800001, D0=0)
  assert v["D0"] == 0x7fc00001                                           # quieted, payload kept through 64'F
  assert run("SCC = isSignalNAN(64'F(S0.f32))", S0=0x7f800001, SCC=0)["SCC"] == 1
  v = run("D0[31 : 16].f16 = S0.f16 * S1.f16", S0=0x7e00, S1=0x3c00, D0=0x1234)
  assert v["D0"] & 0xffff == 0x1234 and interp.loose_fields(v["D0"]) == ((16, 16, "f16"),)

# *** the language ***

def test_slices_concatenation_and_parts():
  assert run("D0.u32[31 : 0] = S0.u32[0 : 31]", S0=1, D0=0)["D0"] == 0x80000000        # reversed range: brev
  assert run("D0 = { S1[15 : 0].u16, S0[15 : 0].u16 }", S0=0x1111aaaa, S1=0x2222bbbb, D0=0)["D0"] == 0xbbbbaaaa
  assert run("D0.u32 = S0.u32[8 +: 8]", S0=0x12345678, D0=0)["D0"] == 0x56
  v = run("{ D1.u1, D0.u64 } = 65'B(65'U(S0.u32) * 65'U(S1.u32) + 65'U(S2.u64))", S0=2**32 - 1, S1=2**32 - 1,
          S2=2**64 - 1, D0=0, D1=0)
  assert (v["D1"], v["D0"]) == (1, 0xfffffffe00000000)
  assert run("D0.u64[laneId] = S0.f32 < S1.f32", S0=f32(1), S1=f32(2), D0=0, laneId=5)["D0"] == 32

def test_control_flow_lambdas_and_declarations():
  prog = "tmp = -1;\nfor i in 0 : 31 do\nif S0.u32[i] == 1'1U then\ntmp = i;\nbreak\nendif\nendfor;\nD0.i32 = tmp"
  assert run(prog, S0=0x100, D0=0)["D0"] == 8
  assert run(prog, S0=0, D0=0)["D0"] == 0xffffffff
  lam = "ABSDIFF = lambda(x, y) (\nx > y ? x - y : y - x);\nD0.u32 = ABSDIFF(S0.u32, S1.u32)"
  assert run(lam, S0=3, S1=10, D0=0)["D0"] == 7
  sat = "SAT8 = lambda(n) (\nif n.i32 <= 0 then\nreturn 8'0U\nelsif n >= 16'I(0xff) then\nreturn 8'255U\nelse\n" \
        "return n[7 : 0].u8\nendif);\nD0.b16 = { SAT8(S0[31 : 16].i16), SAT8(S0[15 : 0].i16) }"
  assert run(sat, S0=0x01ff8000, D0=0)["D0"] == 0xff00
  assert run("declare tmp : 32'B[4];\ntmp[2] = 7U;\nD0.u32 = tmp[2]", D0=0)["D0"] == 7

def test_typed_writes_keep_the_other_bits_and_wrap():
  assert run("D0.f16 = S0.f16", S0=0x3c00, D0=0xabcd0000)["D0"] == 0xabcd3c00
  assert run("D0.u32 = S0.u32 - S1.u32", S0=1, S1=2, D0=0)["D0"] == 0xffffffff
  assert run("D0.i32 = S0.i32 >> 4U", S0=0x80000000, D0=0)["D0"] == 0xf8000000
  assert run("D0.f32 = S0.f32 * 2.0F ** S1.i32", S0=f32(2.0**-140), S1=200, D0=0)["D0"] == f32(2.0**60)

def test_unknown_names_raise_eval_error():
  with pytest.raises(interp.EvalError, match="HW_REGISTERS"): run("D0.u32 = HW_REGISTERS[3]", D0=0)

def test_overrides_name_their_class_and_errata_exist():
  from mockgpu.compiler.rdna.errata import ERRATA
  ids = {e.id for e in ERRATA}
  from tinygrad.runtime.autogen.amd.rdna3.str_pcode import PCODE
  from tinygrad.runtime.autogen.amd.rdna4.str_pcode import PCODE as PCODE4
  # each reading applies to the RDNA3 manual's text, or to RDNA4's for an RDNA4-only instruction (its float SALU)
  manual = {op.name.removesuffix("_E32").removesuffix("_E64"): (text, "rdna4") for op, text in PCODE4.items()}
  manual.update({op.name.removesuffix("_E32").removesuffix("_E64"): (text, "rdna3") for op, text in PCODE.items()})
  for name, (_, cls, why) in readings.OVERRIDES.items():
    assert cls in "bc" and len(why) > 20, name
    text, none = readings.pcode_for("VOP3", name, manual[name][0], manual[name][1])
    manual[name] = manual[name][0]
    assert none is None and text != manual[name], name
    parse(text)
    if cls == "b": assert why.split(":")[0].removeprefix("errata ") in ids, (name, why)
  assert {eid for eid, _ in readings.NOT_COMPARED} <= ids

# *** RDNA4's additions: CalcDsAddr, TRAPSTS.INVALID, the OCP 8-bit floats ***

def test_rdna4_ds_address_status_flag_and_fp8():
  v = run("addr = CalcDsAddr(vgpr_a.b32, offset.b32);\nD0.u32 = addr", vgpr_a=0xfffffff0, offset=0x20, D0=0)
  assert v["D0"] == 0x10  # a 32-bit address: the sum wraps
  v = run("if isSignalNAN(64'F(S0.f32)) then\nTRAPSTS.INVALID = 1\nendif;\nD0.f32 = S0.f32", S0=0x7f800001, D0=0)
  assert v["TRAPSTS.INVALID"] == 1 and v["D0"] == 0x7f800001
  assert "TRAPSTS.INVALID" not in run("if isSignalNAN(64'F(S0.f32)) then\nTRAPSTS.INVALID = 1\nendif", S0=0x7fc00000)
  fp8 = lambda b: run("D0.f32 = fp8_to_f32(S0[7 : 0].fp8)", S0=b, D0=0)["D0"]
  bf8 = lambda b: run("D0.f32 = bf8_to_f32(S0[7 : 0].bf8)", S0=b, D0=0)["D0"]
  # E4M3: bias 7, 3 fraction bits, 0x7e the largest (448), 0x7f NaN, 0x01 the smallest subnormal (2**-9)
  assert [fp8(b) for b in (0x38, 0x7e, 0x01, 0xb8, 0x08, 0x78)] == [f32(1.0), f32(448.0), f32(2.0**-9), f32(-1.0), f32(2.0**-6), f32(256.0)]
  assert math.isnan(struct.unpack("<f", struct.pack("<I", fp8(0x7f)))[0])
  # E5M2: IEEE-like, bias 15: 0x7b the largest (57344), 0x7c infinity
  assert [bf8(b) for b in (0x3c, 0x7b, 0x7c, 0x01)] == [f32(1.0), f32(57344.0), 0x7f800000, f32(2.0**-16)]
  to8 = lambda x, f: run(f"D0.b8 = f32_to_{f}(S0.f32)", S0=f32(x), D0=0)["D0"]
  assert [to8(x, "fp8") for x in (1.0, 448.0, 464.0, 480.0, -1e9, 2.0**-10, 3 * 2.0**-10)] == [0x38, 0x7e, 0x7e, 0x7f, 0xff, 0, 0x02]
  assert [to8(x, "bf8") for x in (1.0, 57344.0, 61440.0, 1e9)] == [0x3c, 0x7b, 0x7c, 0x7c]
  # every finite 8-bit float encodes back to itself
  for fmt in ("fp8", "bf8"):
    for b in range(256):
      x = N.decode(b, fmt)
      if not x.is_nan(): assert N.encode(x, fmt)[0] == b, (fmt, hex(b))
