"""The `mockgpu` command: `mockgpu demo`, `mockgpu doctor` (what toolchain tinygrad will find, and the LLVM each board
compiles with), `mockgpu info`, `mockgpu replay FILE` (re-run the dispatch an EmulatorBug wrote, see mockgpu/replay.py),
`mockgpu coverage FILE` (the instructions a MOCKGPU_COVERAGE=FILE run contained, see mockgpu/coverage.py),
`mockgpu timeline FILE --png OUT` (draw a MOCKGPU_TIMELINE=FILE run, see mockgpu/timeline.py), `mockgpu debug [-ex CMD]...
-- python prog.py` (the kernel debugger, see mockgpu/debug/)."""
from __future__ import annotations
import argparse, sys

def main(argv:list[str]|None=None) -> int:
  from mockgpu import __version__
  ap = argparse.ArgumentParser(prog="mockgpu", description="software AMD and NVIDIA GPUs for tinygrad")
  ap.add_argument("--version", action="version", version=f"mockgpu {__version__}")
  sub = ap.add_subparsers(dest="cmd", required=True)
  d = sub.add_parser("demo", help="run a small tinygrad program on the mock GPUs and check it against DEV=CPU")
  d.add_argument("--dev", action="append", help="device configuration, e.g. MOCK+AMD (repeatable; default: all)")
  sub.add_parser("doctor", help="which compilers tinygrad will find for the mock devices, the LLVM each AMD board compiles "
                 "with, and what to install")
  sub.add_parser("info", help="the mock's settings")
  r = sub.add_parser("replay", help="re-run the dispatch of an EmulatorBug's replay file; exits 1 if the bug reproduces")
  r.add_argument("file")
  r.add_argument("--path", choices=("numpy", "native", "C"), help="run on this path instead of the recorded one")
  c = sub.add_parser("coverage", help="per ISA family, the instructions the kernels of a MOCKGPU_COVERAGE=FILE run contained, "
                     "marking the unimplemented ones (exit status 1) and those that keep a kernel on numpy")
  c.add_argument("file")
  t = sub.add_parser("timeline", help="draw a MOCKGPU_TIMELINE=FILE trace-event file (needs matplotlib)")
  t.add_argument("file")
  t.add_argument("--png", required=True, help="the picture to write")
  sub.add_parser("debug", help="debug the kernels of a tinygrad program: mockgpu debug [-ex CMD]... [--commands FILE] -- python prog.py",
                 add_help=False)
  argv = sys.argv[1:] if argv is None else argv
  if argv[:1] == ["debug"]:  # its own parser: the program's arguments follow `--`
    from mockgpu.debug import repl
    return repl.main(argv[1:])
  args = ap.parse_args(argv)
  if args.cmd == "timeline":
    from mockgpu import timeline
    timeline.render_png(args.file, args.png)
    return 0
  if args.cmd == "coverage":
    from mockgpu import coverage
    text, status = coverage.report(args.file)
    print(text)
    return status
  if args.cmd == "replay":
    from mockgpu import replay_runner
    return replay_runner.replay(args.file, {"native": "C"}.get(args.path, args.path))
  if args.cmd == "demo":
    from mockgpu import demo
    return demo.main(args.dev)
  if args.cmd == "doctor": return doctor()
  return info()

def doctor() -> int:
  from mockgpu.compiler import toolchain
  for f in toolchain.report(): print(f"{f.name:6s} {'ok     ' if f.usable else 'missing'} {f.detail}")
  problem = toolchain.amd_problem()
  print(f"DEV=MOCK+AMD: {problem or 'ready'}")
  from mockgpu.boards import AMD_BOARDS
  for b in AMD_BOARDS.values():
    choice = toolchain.llvm_for(b.name)
    print(f"board {b.name:8s} {'ok     ' if choice.lib else 'no LLVM'} {b.marketing_name} ({b.family}): {choice.detail}")
  return 1 if problem else 0

def info() -> int:
  from mockgpu import config, boards, __version__
  print(f"mockgpu {__version__}\nGPUs per vendor (MOCKGPU_COUNT): {config.gpu_count()}\n"
        f"boards (DEV's arch field, MOCKGPU_AMD_BOARD, MOCKGPU_NV_MODEL): {boards.selection_summary()}\n"
        f"instruction budget (MOCKGPU_BUDGET): {config.instruction_budget()}\ntranslation cache (MOCKGPU_CACHE_DIR): {config.cache_dir()}\n"
        f"replay files (MOCKGPU_REPLAY_DIR): {config.replay_dir()}\n"
        f"instruction coverage (MOCKGPU_COVERAGE): {config.coverage_file() or 'off'}\n"
        f"trace (MOCKGPU_TRACE): {config.trace() or 'off'}\ntimeline (MOCKGPU_TIMELINE): {config.timeline() or 'off'}")
  return 0

if __name__ == "__main__": sys.exit(main())
