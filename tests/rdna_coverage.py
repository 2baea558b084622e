"""Which of tinygrad's RDNA3 opcodes each RDNA backend implements: every opcode of every encoding enum in
tinygrad.runtime.autogen.amd.rdna3.enum is built (op field set, the other fields at their defaults, register
operands v0/s0) and handed to each translator's per-instruction entry. The numpy Translator raises Unsupported
and the C CTranslator raises NoNative for what they do not implement; anything else counts as implemented.
Run as a script for the report: python tests/rdna_coverage.py"""
from __future__ import annotations
import enum
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I, enum as E
from mockgpu.compiler.rdna.backends import numpy as translate, c as cgen

ENCODINGS = ["SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P",
             "VOPD", "VINTERP", "DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF", "MIMG", "EXP", "LDSDIR"]

def opcodes() -> list[tuple[str, enum.Enum]]:
  """(encoding, opcode) for every opcode in the tables; VOP3 repeats the VOP1/VOP2/VOPC ops as their e64 forms."""
  return [(enc, op) for enc in ENCODINGS for op in getattr(E, f"{enc}Op")]

# ops whose encoding needs VGPR operands (an SGPR placeholder is an operand error, not a missing opcode)
VGPR_ONLY = {"V_SWAP_B16_E32": (v[0], v[1]), "V_SWAP_B32_E32": (v[0], v[1]), "V_PERMLANE64_B32_E32": (v[0], v[1]),
             "V_PERMLANE16_B32": (v[0], v[1], s[0], s[1]), "V_PERMLANEX16_B32": (v[0], v[1], s[0], s[1]),
             **{f"V_{k}_{e}": (v[0], v[1]) for k in ("MOVRELS_B32", "MOVRELSD_B32", "MOVRELSD_2_B32", "SWAPREL_B32") for e in ("E32", "E64")
                if not (k == "SWAPREL_B32" and e == "E64")},
             **{f"V_WMMA_{k}": (v[0:7], v[8:15], v[16:23], v[0:7]) for k in
                ("F32_16X16X16_F16", "F32_16X16X16_BF16", "F16_16X16X16_F16", "BF16_16X16X16_BF16")},
             **{f"V_WMMA_I32_16X16X16_{k}": (v[0:7], v[8:9 + n], v[12:13 + n], v[0:7]) for k, n in (("IU8", 2), ("IU4", 0))}}

# ops whose zero immediate is refused as an operand (hwreg 0 is no register; denorm mode 0 flushes, a MODE change)
MODE_FIELD = 1 | 7 << 11  # hwreg(MODE, 0, 8)
FIELDS = {"S_GETREG_B32": dict(simm16=MODE_FIELD), "S_SETREG_B32": dict(simm16=MODE_FIELD), "S_DENORM_MODE": dict(simm16=0xf),
          "S_SENDMSG": dict(simm16=3)}  # MSG_DEALLOC_VGPRS, the message modelled

def build(enc:str, op):
  """The opcode in its encoding; ops the DSL only accepts through their own constructor (V_FMAAK_F32 wants its
  literal, V_READFIRSTLANE_B32 an SGPR destination) are tried with a few operand shapes."""
  cls = getattr(I, enc)
  if enc == "VOPD":
    fields = dict(opx=op, opy=E.VOPDOp.V_DUAL_MOV_B32, vdstx=v[0], vdsty=v[1], srcx0=v[2], srcy0=v[3])
    if op.name.endswith(("FMAAK_F32", "FMAMK_F32")): return I.VOPD_LIT(**fields, literal=0x3f800000)
    return cls(**fields)
  if op.name in VGPR_ONLY: return getattr(I, op.name.lower())(*VGPR_ONLY[op.name])
  if enc == "VINTERP": return getattr(I, op.name.lower())(v[0], v[1], v[2], v[3])  # quad sources are VGPRs
  if op.name in FIELDS: return cls(op=op, **FIELDS[op.name])
  try: return cls(op=op)
  except Exception: pass
  fn = getattr(I, op.name.lower())
  for args in ((v[0], v[1], v[2], 0x3f800000), (s[0], v[1]), (v[0], v[1], v[2])):
    try: return fn(*args)
    except Exception: pass
  raise ValueError(f"cannot build {op.name}")

class AnyBlock(dict):
  """A block index that knows every pc, so a branch's target resolves."""
  def __contains__(self, k): return True
  def __missing__(self, k): return 0

def implemented(tr, inst, refusal) -> bool:
  tr.pc, tr.pending, tr.before, tr.index = 0, {}, {}, AnyBlock()
  try: tr.inst(inst)
  except refusal: return False
  except Exception: return True  # got past the name dispatch and tripped on the placeholder operands
  return True

def translators(wave:int) -> tuple:
  np_tr, c_tr = translate.Translator([], False, False, "rdna3", wave), cgen.CTranslator([], False, False, "rdna3", wave)
  c_tr.names, c_tr.vregs = {}, {0}
  return np_tr, c_tr

def report(wave_sizes=(32, 64)) -> dict:
  """(numpy, C) implemented per opcode: in a wave32 or, for the wave64 forms (s_and_saveexec_b64), a wave64 kernel."""
  waves = {w: translators(w) for w in wave_sizes}
  rows = {}
  for enc, op in opcodes():
    try: inst = build(enc, op)
    except Exception: rows[(enc, op.name)] = None; continue  # the DSL cannot build it: not probed
    rows[(enc, op.name)] = tuple(any(implemented(trs[k], inst, refusal) for trs in waves.values())
                                 for k, refusal in enumerate((translate.Unsupported, cgen.NoNative)))
  return rows

BASELINE = __file__.replace("rdna_coverage.py", "rdna_coverage_baseline.txt")

def write_baseline():
  """Record what each backend implements now (python tests/rdna_coverage.py --baseline): lines 'numpy|C ENC NAME'."""
  rows = report()
  lines = [f"{p} {enc} {name}" for (enc, name), r in sorted(rows.items()) if r for p, ok in zip(("numpy", "C"), r) if ok]
  with open(BASELINE, "w") as f: f.write("\n".join(lines) + "\n")

if __name__ == "__main__":
  import sys
  if "--baseline" in sys.argv: write_baseline()
  rows = report()
  got = {k: r for k, r in rows.items() if r is not None}
  print(f"instructions total {len(rows)}, probed {len(got)}, implemented numpy {sum(a for a, _ in got.values())}, "
        f"implemented C {sum(b for _, b in got.values())}")
  for (enc, name), r in sorted(rows.items()):
    if r is None: print(f"  not probed (the DSL cannot build it): {enc} {name}")
    elif not r[0] or not r[1]: print(f"  unimplemented ({', '.join(p for p, ok in zip(('numpy', 'C'), r) if not ok)}): {enc} {name}")
