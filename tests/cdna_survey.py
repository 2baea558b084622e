"""Which CDNA instructions LLVM emits for the op suite: runs every case of tests/ops/opcases.py on
DEV=MOCKKFD+AMD:LLVM:<arch> (gfx942 by default) with a recording stand-in for the executor, which decodes each
dispatched kernel with tinygrad's CDNA tables (mockgpu.compiler.rdna.decode, arch "cdna") and counts its instructions
by encoding and name. The kernels do not run (the results are garbage and are not looked at); only the code is read.

  python tests/cdna_survey.py gfx942 > /tmp/942; LLVM_PATH=.../libLLVM-22.so python tests/cdna_survey.py gfx950 > /tmp/950
  cat /tmp/942 /tmp/950 > tests/cdna_instructions.txt   (gfx950 needs LLVM 20 or newer)

Output: a comment line, then one line per (encoding, instruction): the arch, tinygrad's encoding class, the
instruction and the number of kernels that contain it, sorted. The file is the checked-in input of
tests/compiler/rdna/test_cdna.py::test_every_surveyed_instruction_is_classified.
"""
import collections, os, sys, traceback
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

def main(arch:str="gfx942"):
  os.environ["DEV"] = f"MOCKKFD+AMD:LLVM:{arch}"
  from mockgpu.emulators import rdna
  from mockgpu.emulators.rdna import executor
  from mockgpu.compiler.rdna import decode
  seen:dict[bytes, set] = {}
  def record(mem, d):
    code = executor._code_window(mem, d.pgm_addr)
    insts = decode.walk(code, "cdna")
    key = code[:decode.extent(insts)]
    if key not in seen:
      seen[key] = {(type(i).__name__, decode.op_name(i)) if not isinstance(i, decode.Bad) else ("Bad", i.reason[:60]) for i in insts.values()}
    return rdna.DispatchStats(0, 0, 0.0)
  rdna.run_dispatch = record  # the machine's executor looks run_dispatch up on the module at each dispatch
  import opcases
  from oprunner import as_numpy
  failed = []
  for name, case in opcases.CASES.items():
    try: as_numpy(case["fn"]("AMD"))
    except Exception: failed.append((name, traceback.format_exc(limit=1).strip().splitlines()[-1]))
  counts = collections.Counter(x for s in seen.values() for x in s)
  print(f"# {arch}: {len(seen)} distinct kernels from {len(opcases.CASES)} op-suite cases ({len(failed)} cases raised before dispatching)")
  for (enc, name), n in sorted(counts.items()): print(f"{arch:7s} {enc:18s} {name:40s} {n}")
  for name, why in failed: print(f"# case {name} raised: {why}", file=sys.stderr)

if __name__ == "__main__": main(*sys.argv[1:])
