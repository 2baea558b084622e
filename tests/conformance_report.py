"""The RDNA conformance report: python tests/conformance_report.py [--full] [--arch rdna3|rdna4] [FAMILY ...]

Runs the conformance suite (tests/pcode) on both executor paths and prints, per ISA family (RDNA3, RDNA4; both by
default) and per instruction family: the opcodes in tinygrad's table, how many each backend implements
(tests/rdna_coverage.py's probe), how many were conformance-tested on each path, and the mismatches; then one line per
mismatch (with its class from expected_mismatches.txt, or NEW) and per untestable instruction, the readings the suite
applies, the instructions no backend implements (all of tinygrad's RDNA3 encodings, against
tests/rdna_coverage_baseline.txt), and the pseudocode parse check over RDNA3, RDNA4 and CDNA.
"""
from __future__ import annotations
import collections, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcode import harness as H, expected, readings
from pcode.parse import parse, PcodeSyntaxError
import rdna_coverage

def table(rows:list[list], head:list[str]) -> str:
  cells = [head] + [[str(c) for c in r] for r in rows]
  widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
  line = lambda r: "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
  return "\n".join([line(cells[0]), line(["-" * w for w in widths])] + [line(r) for r in cells[1:]])

def family_rows(runs:dict[str, H.FamilyRun], arch:str) -> list[list]:
  rows, total = [], collections.Counter()
  for fam, run in runs.items():
    infos = H.infos(fam, arch)
    with H.using(arch): impl = [H.implemented(fam, i.name) for i in infos]
    r = run.results
    tested = {p: sum(x.status in ("pass", "mismatch", "error") for x in r[p].values()) for p in H.PATHS}
    bad = {p: sum(x.status in expected.FAILED for x in r[p].values()) for p in H.PATHS}
    counts = [len(infos), sum(a for a, _ in impl), sum(b for _, b in impl), tested["numpy"], tested["native"],
              bad["numpy"], bad["native"], sum(x.status == "untestable" for x in r["numpy"].values())]
    total.update(dict(enumerate(counts)))
    rows.append([fam] + counts)
  rows.append(["total"] + [total[i] for i in range(8)])
  return rows

def mismatch_lines(runs:dict[str, H.FamilyRun], listed:dict) -> list[str]:
  out = []
  for fam, run in runs.items():
    for name in sorted(run.results["numpy"]):
      st = {p: run.results[p][name] for p in H.PATHS if name in run.results[p]}
      bad = [p for p, r in st.items() if r.status in expected.FAILED]
      if not bad: continue
      e = listed.get((name, bad[0]))
      tag = f"class {e.cls}" if e else "NEW"
      out.append(f"  {fam:7} {name:28} {'+'.join(bad):13} {tag:8} {e.reason if e else st[bad[0]].detail[:160]}")
  return out

def untestable_lines(runs:dict[str, H.FamilyRun]) -> list[str]:
  by_reason = collections.defaultdict(list)
  for fam, run in runs.items():
    for name, r in run.results["numpy"].items():
      if r.status == "untestable": by_reason[r.detail].append(name)
  return [f"  {len(ns):3}  {why}\n       {', '.join(sorted(ns))}" for why, ns in sorted(by_reason.items(), key=lambda x: -len(x[1]))]

def unmodelled_reason(enc:str, name:str) -> str|None:
  from mockgpu.compiler.rdna import operands
  from mockgpu.compiler.rdna.semantics import rdna3
  return operands.unmodelled(enc, name, rdna3)

def unimplemented_lines() -> list[str]:
  """Opcodes of tinygrad's RDNA3 tables that neither backend implements, per encoding, and the changes against the
  checked-in baseline (tests/rdna_coverage_baseline.txt)."""
  rows = rdna_coverage.report()
  with open(rdna_coverage.BASELINE) as f: base = {tuple(l.split()) for l in f if l.strip()}
  out, by_enc, unbuilt, unmodelled = [], collections.defaultdict(list), set(), collections.defaultdict(list)
  for (enc, name), r in sorted(rows.items()):
    if (why := unmodelled_reason(enc, name)) is not None and not (r and any(r)):
      unmodelled[why].append(name)
      continue
    if r is None and enc in H.FAMILIES:  # probed with the harness's encoding: the coverage probe cannot build it
      r = rows[(enc, name)] = H.implemented(enc, name)
      unbuilt.add((enc, name))
    if r is None: by_enc[enc].append(f"{name} (the probe cannot build it)")
    elif not r[0] and not r[1]: by_enc[enc].append(name)
  for enc in rdna_coverage.ENCODINGS:
    if by_enc.get(enc): out.append(f"  {enc} ({len(by_enc[enc])}): {', '.join(by_enc[enc])}")
  out.append("  not modelled, with the reason (semantics/rdna3.py UNMODELLED):")
  out += [f"    {len(ns):3}  {why}\n         {', '.join(sorted(set(ns)))}" for why, ns in sorted(unmodelled.items(), key=lambda x: -len(x[1]))]
  now = {(p, enc, name) for (enc, name), r in rows.items() if r for p, ok in zip(("numpy", "C"), r) if ok}
  gained, lost = sorted(now - base), sorted(base - now)
  hidden = [x for x in gained if x[1:] in unbuilt]
  out.append(f"  against the baseline: {len(gained) - len(hidden)} newly implemented, {len(lost)} no longer implemented, "
             f"{len(hidden)} implemented but missing from it (rdna_coverage.py's probe cannot build them)")
  out += [f"    + {' '.join(x)}" for x in gained if x not in hidden] + [f"    - {' '.join(x)}" for x in lost]
  return out

def not_executed_lines() -> list[str]:
  """The instructions the RDNA3 table lists as not executed (semantics/rdna3.py NOT_EXECUTED), by reason."""
  from mockgpu.compiler.rdna.semantics import rdna3
  by_reason = collections.defaultdict(list)
  for name, why in rdna3.NOT_EXECUTED.items(): by_reason[why].append(name)
  return [f"  {len(ns):3}  {why}\n       {', '.join(sorted(ns))}" for why, ns in by_reason.items()]

def parse_lines() -> list[str]:
  out = []
  for fam in ("rdna3", "rdna4", "cdna"):
    table_ = __import__(f"tinygrad.runtime.autogen.amd.{fam}.str_pcode", fromlist=["PCODE"]).PCODE
    bad = []
    for op, text in table_.items():
      try: parse(text)
      except PcodeSyntaxError: bad.append(op.name)
    out.append(f"  {fam}: {len(table_) - len(bad)} of {len(table_)} parse; not code: {', '.join(sorted(bad))}")
  return out

def arch_report(arch:str, families:list[str], full:bool):
  """One ISA family's table, mismatches and untestable instructions."""
  t0 = time.time()
  runs = {fam: H.run_family(fam, full=full, arch=arch) for fam in families}
  listed = expected.load(expected.PATHS[arch])
  print(f"{arch.upper()} conformance with the ISA manual's pseudocode ({'full' if full else 'CI'} tier, {time.time() - t0:.0f} s)\n")
  print(table(family_rows(runs, arch), ["family", "in table", "impl numpy", "impl C", "tested numpy", "tested C",
                                        "mismatch numpy", "mismatch C", "untestable"]))
  print(f"\nMismatches ({os.path.basename(expected.PATHS[arch])} class, or NEW):")
  print("\n".join(mismatch_lines(runs, listed)) or "  none")
  print("\nUntestable instructions, by reason:")
  print("\n".join(untestable_lines(runs)) or "  none")
  print()

def main(argv:list[str]):
  full = "--full" in argv or os.environ.get("MOCKGPU_CONFORMANCE") == "full"
  archs = [argv[argv.index("--arch") + 1]] if "--arch" in argv else list(H.ARCHS)
  families = [a for a in argv if not a.startswith("-") and a not in H.ARCHS] or H.FAMILIES
  for arch in archs: arch_report(arch, families, full)
  print("\nReadings where the pseudocode is not what the suite compares with (readings.py):")
  for name, (_, cls, why) in sorted(readings.OVERRIDES.items()): print(f"  {name:24} class {cls}: {why}")
  for cid, what, choice, why in readings.CHOICES: print(f"  {cid:24} ({what}): {choice}. Why: {why}")
  for pat, ulps, fmt, why in readings.TOLERANCE: print(f"  {pat:24} within {ulps} ulp ({fmt}): {why}")
  print("\nErrata not compared (mockgpu/compiler/rdna/errata.py):")
  for eid, why in readings.NOT_COMPARED: print(f"  {eid:24} {why}")
  print("\nListed as not executed, with the reason (semantics/rdna3.py NOT_EXECUTED; raises UnsupportedInstruction):")
  print("\n".join(not_executed_lines()))
  print("\nNot implemented on either path (tinygrad's RDNA3 tables, all encodings; RDNA4: the table's impl columns):")
  print("\n".join(unimplemented_lines()))
  print("\nPseudocode parse check (the evaluator's language over each family's table):")
  print("\n".join(parse_lines()))

if __name__ == "__main__": main(sys.argv[1:])
