"""The translation's fast paths against the slow checks they stand for: decode.py's integer-test decoder (format search,
variant check, field validity) against tinygrad's own (the same class, the same bits, the same error, for words drawn
to hit every format of every instruction table), and numpy.py's register-range prefilter against its full scan."""
import sys
import numpy as np
import pytest
from tinygrad.renderer.amd import decode_inst, _load_formats
from tinygrad.renderer.amd.dsl import EnumBitField, FixedBitField
from mockgpu.compiler.rdna import decode
from mockgpu.compiler.rdna.backends import numpy as numpy_backend

rng = np.random.default_rng(0)  # the test's own stream (conftest seeds it from the node id)
TABLES = ("rdna3", "rdna4", "cdna")

def _outcome(fn):
  try: inst = fn()
  except Exception as e: return (type(e).__name__, str(e))
  return (type(inst).__name__, inst._raw)

def _fixed_bits(cls) -> tuple[int, int]:
  mask = value = 0
  for _, f in cls._fields:
    if isinstance(f, FixedBitField): mask, value = mask | f.mask << f.lo, value | (f.default & f.mask) << f.lo
  return mask, value

def _words(table:str, per_format:int) -> list[bytes]:
  """Random code windows: per format, words with its encoding bits (random operands, opcodes and later dwords), and
  as many with every bit random; lengths 4 to 16 bytes, so that a format's later dwords are sometimes missing."""
  out = []
  for cls in _load_formats()[table]:
    mask, value = _fixed_bits(cls)
    for _ in range(per_format):
      body = rng.integers(0, 1 << 32, 4, dtype=np.uint64)
      if rng.random() < 0.2: body[0] = (int(body[0]) & ~0x1ff) | int(rng.choice([249, 250, 255, 233, 234]))
      bits = sum(int(w) << 32 * i for i, w in enumerate(body))
      data = ((bits & ~mask) | value).to_bytes(16, "little")
      out.append(data[:int(rng.choice([4, 8, 12, 16, 16, 16]))])
      out.append(rng.integers(0, 256, 16, dtype=np.uint8).tobytes())
  return out

def _slow_dpp8(inst, data:bytes):
  """decode._dpp8 as it was: src0 read through tinygrad's descriptor."""
  cls = type(inst)
  if "src0" not in dict(cls._fields) or inst.src0.offset not in decode.DPP8_MARKERS: return inst
  variant = getattr(sys.modules[cls.__module__], cls.__name__ + "_DPP8", None)
  return inst if variant is None else variant.from_bytes(data)

@pytest.mark.parametrize("table", TABLES)
def test_the_format_search_variant_check_and_dpp8_match_tinygrads(table):
  assert decode._format_tests(table) is not None, f"{table}: takes tinygrad's own format search"
  words = _words(table, 150)
  mine = [_outcome(lambda d=d: decode._dpp8(decode._from_bytes(decode._detect(d, table), d), d)) for d in words]
  theirs = [_outcome(lambda d=d: _slow_dpp8(decode_inst(d, table), d)) for d in words]
  diff = [(d.hex(), m, t) for d, m, t in zip(words, mine, theirs) if m != t]
  assert not diff, f"{len(diff)} of {len(words)} differ, e.g. {diff[:3]}"
  assert len({m[0] for m in mine}) > len(_load_formats()[table]) // 2  # the draw reaches most formats

def _slow_fields_valid(inst, word:int):
  """The check as it was: read every field, the first that raises names the word Bad."""
  for name, _ in type(inst)._fields:
    try: getattr(inst, name)
    except decode.READ_ERRORS as e: return decode.Bad(word, f"{decode.INVALID}word 0x{word:08x}: reserved {name} value ({e})")
  return inst

@pytest.mark.parametrize("table", TABLES)
def test_field_validity_matches_reading_every_field(table):
  bad = 0
  for d in _words(table, 60):
    try: inst = decode._from_bytes(decode._detect(d, table), d)
    except (ValueError, AssertionError): continue
    word = int.from_bytes(d[:4], "little")
    fast, slow = decode._fields_valid(inst, word), _slow_fields_valid(inst, word)
    assert type(fast) is type(slow) and (fast is inst or fast == slow), (d.hex(), fast, slow)
    bad += isinstance(slow, decode.Bad)
  assert bad > 0 or table == "cdna"  # the RDNA draws hold reserved field values (a VOPD opy); CDNA's drew none

@pytest.mark.parametrize("table", TABLES)
def test_enum_fields_valid_values_are_those_that_decode(table):
  for cls in _load_formats()[table]:
    for name, f in cls._fields:
      if not isinstance(f, EnumBitField): continue
      decodes, allowed = set(), set()
      for raw in range(f.mask + 1):
        try: op = f.decode(raw)
        except ValueError: continue
        decodes.add(raw)
        if f.allowed is not None and op in f.allowed: allowed.add(raw)
      assert decode._valid(f, False) == decodes, (cls.__name__, name)
      if f.allowed is not None: assert decode._valid(f, True) == allowed, (cls.__name__, name)

def _full_scan(lines:list[str]) -> str|None:
  text = "\n".join(lines)
  return numpy_backend.bad_vgprs([int(m.group(m.lastindex)) for m in numpy_backend.VREG.finditer(text)]) or \
    numpy_backend.bad_sgprs([int(i) for i in numpy_backend.SREG.findall(text)])

def test_the_register_range_prefilter_misses_no_bad_register():
  """past_v255 skips its scan where SUSPECT finds nothing: over lines naming registers at every index from -20 to
  past the AGPRs, in each form the translation writes, it finds what the full scan finds."""
  agpr = numpy_backend.ops.AGPR
  indexes = [*range(-20, 300), *range(agpr - 5, agpr + 5), *range(agpr + 250, agpr + 262), 999, 1000, 2560, 10000]
  forms = ("V[{}][w]", "vw(V, {}, w, x, m, full)", "vw16(V, {}, w, x, m, full, False)", "r64(V[3][w], V[{}][w])", "S[{}][w]",
           "_S[{}]", "XV[{}]")
  found = 0
  for i in indexes:
    for form in forms:
      lines = ["    _t = u32(7)", "    " + form.format(i)]
      assert numpy_backend.past_v255(lines) == _full_scan(lines), lines
      found += _full_scan(lines) is not None
  assert found > 0

def _source(code:bytes, lanes:int, memo:bool, monkeypatch) -> str:
  """The numpy module of code: with the per-process memos as they stand, or without them (emptied, none kept, no op
  kind emitted through the memo)."""
  from mockgpu.compiler.rdna import operands
  with monkeypatch.context() as m:
    if not memo:
      for name, table in (("_names", decode), ("_lowered", operands), ("EMITTED", numpy_backend)):
        m.setattr(table, name, {})
      m.setattr(operands, "MEMO_LIMIT", 0)
      m.setattr(numpy_backend, "MEMO_OPS", ())
    return numpy_backend.module(decode.blocks(decode.walk(code, "rdna3")), False, False, "rdna3", lanes, True)

def test_remembered_translations_are_the_translation_at_every_offset(monkeypatch):
  """The memos (op names, lowered ops, emitted lines with the PC as a mark) give the module a fresh translation gives,
  for bodies at shifted offsets (PC-bearing lines: loads, stores, s_getpc, branches) and lane-mask states (a compare
  left pending, then read as a mask and as an SGPR; a compare first remembered where the mask it writes was already
  pending, then met where none is)."""
  from tinygrad.renderer.amd.dsl import s, v
  from tinygrad.runtime.autogen.amd.rdna3 import ins as I
  from mockgpu.compiler.rdna import operands
  for name, table in (("_names", decode), ("_lowered", operands), ("EMITTED", numpy_backend)): monkeypatch.setattr(table, name, {})
  body = [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0), I.v_lshlrev_b32_e32(v[1], 2, v[0]),
          I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[6:7], offset=0), I.s_waitcnt(simm16=0),
          I.v_cmp_gt_u32_e32(5, v[2]), I.v_cndmask_b32_e32(v[3], 7, v[2]), I.v_add_co_u32(v[4], s[10], v[2], v[3]),
          I.s_getpc_b64(s[12:13]), I.s_mov_b32(s[14], s[10]), I.s_cbranch_vccz(simm16=1), I.v_mov_b32_e32(v[3], 1),
          I.global_store_b32(addr=v[1], data=v[3], saddr=s[4:5], offset=0), I.s_endpgm()]
  second = [I.v_cmp_lt_u32_e32(3, v[2]), I.v_cndmask_b32_e32(v[3], 7, v[2]), I.s_endpgm()]
  bodies = [(shift, body) for shift in range(4)] + [(0, [I.v_cmp_gt_u32_e32(5, v[2]), *second]), (0, second)]
  for lanes in (32, 64):
    for shift, insts in bodies:
      code = b"".join(i.to_bytes() for i in [I.s_nop(simm16=0)] * shift + insts)
      fresh = _source(code, lanes, False, monkeypatch)
      assert _source(code, lanes, True, monkeypatch) == fresh and _source(code, lanes, True, monkeypatch) == fresh, (shift, insts)
      assert numpy_backend.PC_MARK not in fresh
      if insts is body: assert f"u64(st.pgm + {4 * shift + 44})" in fresh  # s_getpc's own PC
