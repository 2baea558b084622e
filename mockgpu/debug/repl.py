"""The debugger's command language (gdb-like) over a Session, and `mockgpu debug [options] -- python prog.py`.

The program runs in this process (runpy); at each stop the commands are read: first those given with -ex and
--commands FILE, in order, then standard input (unless --batch). When they run out the program continues with its
breakpoints removed. Commands before the first stop set breakpoints; `run`, or the first command that needs a stop,
starts the program. `help` lists the commands.
"""
from __future__ import annotations
import argparse, collections, os, re, runpy, sys, traceback
import numpy as np
from mockgpu.debug import buffers, view
from mockgpu.debug.session import Session, Stop

HELP = """\
break PATTERN            stop at the launch of kernels whose symbol matches (fnmatch)
break *OFFSET [PATTERN]  stop before the instruction at byte offset OFFSET of the kernel
cond EXPR                stop after an instruction when EXPR (Python over v, s, exec, vcc, scc, lds, lane, active,
                         written, f32/f16/i32/u32/f64, isnan, np) holds; a per-lane bool array names its lanes
watch ADDR SIZE | bufN   stop after a store into the range (bufN: see `buffers`)
delete N, info break     remove / list breakpoints
postmortem on|off        stop at a fault or budget stop of a debugged dispatch (default on)
run                      start the program
step [N], next [N]       run N instructions of the selected wave (next: the same; there are no calls to step over)
continue, finish         resume until the next stop / run the rest of the dispatch without stopping
reverse-step [N]         undo the last N instructions of the dispatch (rs)
reverse-continue         undo back to the latest breakpoint hit, or to the dispatch's start (rc)
where, disas [N]         the selected wave and its next instruction / N instructions around the PC
info registers           scalar registers, EXEC, VCC, SCC, M0
print REG [FMT] [LANES]  a per-lane register (vN; PTX: %r3) as a lane table (FMT x u d f h; LANES like 0-7 or 3)
print EXPR               a Python expression over the wave's state (as cond)
info lane                every VGPR of the selected lane
lds [OFF [N [FMT]]]      LDS (PTX: shared memory) from byte OFF: N elements of FMT
x/NF ADDR|bufN           N elements of format F (x u d f h b) of global memory
buffers                  tinygrad's buffers on the device, with their addresses
waves                    every wave of the dispatch: where it is
wave G W, lane L         select workgroup G's wave W / lane L
quit                     end the program"""

SETUP = {"break", "b", "cond", "watch", "delete", "info", "postmortem", "buffers", "help"}
RESUME = {"continue", "c", "finish", "quit", "q"}

class CommandError(ValueError):
  """A command that cannot run: its text and why."""

class Repl:
  def __init__(self, commands:list[str], stdin:bool=True, out=None):
    self.queue = collections.deque(c for c in commands if c.strip() and not c.strip().startswith("#"))
    self.stdin, self.out = stdin, out or sys.stdout
    self.session = Session(on_stop=self.at_stop)
    self.lane, self.errors, self.started = 0, 0, False

  def say(self, text:str):
    print(text, file=self.out, flush=True)

  def next_command(self) -> str|None:
    if self.queue: return self.queue.popleft()
    if not self.stdin: return None
    try: line = input("(mockgpu-debug) " if sys.stdin.isatty() else "")
    except EOFError: return None
    return line

  # *** before the program, and at each stop ***
  def setup(self):
    """Commands up to `run` (or to the first that needs a stop, which stays queued)."""
    while (cmd:=self.next_command()) is not None:
      word = cmd.split()[0] if cmd.split() else ""
      if word == "run": break
      if word not in SETUP:
        self.queue.appendleft(cmd)
        break
      self.execute(cmd)
    self.started = True

  def at_stop(self, session:Session, stop:Stop):
    self.lane = stop.lanes[0] if stop.lanes else 0
    self.say(view.stop_text(session.target, stop))
    while True:
      cmd = self.next_command()
      if cmd is None:
        self.say("(no more commands: continuing without breakpoints)")
        session.breakpoints.clear()
        session.postmortem = False
        return
      if self.execute(cmd) in RESUME: return

  def execute(self, cmd:str) -> str:
    """Run one command; a failing one is reported and counted (the CLI's exit status says so)."""
    self.say(f"(mockgpu-debug) {cmd}")
    words = cmd.split()
    if not words: return ""
    name, args = words[0], words[1:]
    try: self.dispatch(name, args, cmd[len(words[0]):].strip())
    except (CommandError, ValueError, KeyError, IndexError, RuntimeError) as e:  # KeyError: an unknown wave; RuntimeError: not stopped
      self.errors += 1
      self.say(f"error: {e}")
      return ""
    return name

  def dispatch(self, name:str, args:list[str], rest:str):
    s, t = self.session, self.session.target
    if name in ("help", "h"): return self.say(HELP)
    if name in ("break", "b"): return self.cmd_break(args)
    if name == "cond": return self.say(f"breakpoint #{s.break_if(rest).id}: if {rest}")
    if name == "watch": return self.cmd_watch(args)
    if name == "delete": return s.delete(int(args[0]))
    if name == "postmortem": s.postmortem = args[0] == "on"; return
    if name == "buffers":
      return self.say("\n".join(f"buf{i}: 0x{va:x} {n} bytes {b.dtype}[{b.size}]" for i, (va, n, b) in enumerate(buffers.tinygrad_buffers()))
                      or "no buffers")
    if name == "info" and args[:1] in (["break"], ["breakpoints"]):
      return self.say("\n".join(b.describe() for b in s.breakpoints) or "no breakpoints")
    if name in ("quit", "q"): raise SystemExit(0)
    if t is None: raise CommandError(f"{name}: no dispatch is stopped")
    if name in ("continue", "c"): return
    if name == "finish": return s.finish()
    if name in ("step", "s", "stepi", "si", "next", "n", "nexti", "ni"):
      n = s.step(int(args[0]) if args else 1)
      return self.say(f"{n} instructions\n{view.disassembly(t)}")
    if name in ("reverse-step", "rs"):
      n = s.reverse_step(int(args[0]) if args else 1)
      return self.say(f"{n} instructions undone\n{view.where(t)}\n{view.disassembly(t)}")
    if name in ("reverse-continue", "rc"):
      stop = s.reverse_continue()
      return self.say(f"back to: {stop.message}\n{view.where(t)}\n{view.disassembly(t)}")
    if name == "where": return self.say(f"{view.where(t)}, lane {self.lane}")
    if name == "disas": return self.say(view.disassembly(t, int(args[0]) if args else 3, int(args[0]) if args else 5))
    if name == "info" and args[:1] in (["registers"], ["reg"]): return self.say(view.sgprs(t))
    if name == "info" and args[:1] == ["lane"]: return self.cmd_lane_info(t)
    if name in ("print", "p"): return self.cmd_print(t, args, rest)
    if name == "lds": return self.cmd_lds(t, args)
    if name.startswith("x"): return self.cmd_x(t, name, args)
    if name == "waves": return self.say("\n".join(t.location(u) for u in t.units()))
    if name == "wave":
      t.select((int(args[0]), int(args[1])))
      return self.say(view.where(t))
    if name == "lane":
      if not 0 <= (lane:=int(args[0])) < t.lanes: raise CommandError(f"lane {lane}: a wave has lanes 0..{t.lanes - 1}")
      self.lane = lane
      return self.say(f"lane {lane}")
    raise CommandError(f"unknown command {name!r} (help lists them)")

  def cmd_break(self, args:list[str]):
    if not args: raise CommandError("break PATTERN or break *OFFSET [PATTERN]")
    s = self.session
    bp = s.break_at(int(args[0][1:], 0), args[1] if len(args) > 1 else "*") if args[0].startswith("*") else s.break_kernel(args[0])
    self.say(f"breakpoint {bp.describe()}")

  def cmd_watch(self, args:list[str]):
    if len(args) == 1 and args[0].startswith("buf"):
      va, n, b = buffers.tinygrad_buffers()[int(args[0][3:])]
      bp = self.session.watch(b)
    elif len(args) == 2: bp = self.session.watch(int(args[0], 0), int(args[1], 0))
    else: raise CommandError("watch ADDR SIZE or watch bufN")
    self.say(f"watchpoint {bp.describe()}")

  def cmd_print(self, t, args:list[str], rest:str):
    if args and (re.fullmatch(r"v\d+", args[0]) or args[0] in t.registers()):
      fmt = args[1] if len(args) > 1 else "x"
      if fmt not in view.FORMATS: raise CommandError(f"format {fmt!r}: one of {' '.join(view.FORMATS)}")
      return self.say(view.lane_table(t, args[0], fmt, lane_range(args[2], t.lanes) if len(args) > 2 else None))
    if args and args[0][0] == "s" and args[0][1:].isdigit():
      x = int(t.registers()["s"][int(args[0][1:])])
      return self.say(f"{args[0]} = 0x{x:08x} ({x})")
    try: value = eval(compile(rest, "<print>", "eval"), {}, t.namespace())
    except SyntaxError as e: raise CommandError(f"print {rest}: {e}") from None
    except Exception as e: raise CommandError(f"print {rest}: {type(e).__name__}: {e}") from None
    with np.printoptions(threshold=4096, linewidth=120): self.say(repr(value))

  def cmd_lane_info(self, t): self.say(view.lane_registers(t, self.lane))

  def cmd_lds(self, t, args:list[str]):
    regs = t.registers()
    lds = np.frombuffer(bytes(regs["lds"] if "lds" in regs else regs["shared"]), np.uint8)  # RDNA LDS, PTX shared memory
    off, n, fmt = int(args[0], 0) if args else 0, int(args[1], 0) if len(args) > 1 else 16, args[2] if len(args) > 2 else "x"
    size = np.dtype(view.FORMATS[fmt]).itemsize
    if off + n * size > len(lds): raise CommandError(f"lds: bytes {off}..{off + n * size} are past the LDS's {len(lds)} bytes")
    self.say(view.dump(lds[off:off + n * size].tobytes(), off, fmt))

  def cmd_x(self, t, name:str, args:list[str]):
    spec = name[2:] if name.startswith("x/") else ""
    count, fmt = int(spec[:-1] or 8) if spec else 8, spec[-1] if spec else "x"
    if fmt not in view.FORMATS: raise CommandError(f"x/{spec}: format one of {' '.join(view.FORMATS)}")
    if not args: raise CommandError("x/NF ADDR or x/NF bufN")
    addr = buffers.tinygrad_buffers()[int(args[0][3:])][0] if args[0].startswith("buf") else int(args[0], 0)
    self.say(view.dump(t.read_memory(addr, count * np.dtype(view.FORMATS[fmt]).itemsize), addr, fmt))

def lane_range(text:str, lanes:int) -> range:
  lo, _, hi = text.partition("-")
  r = range(int(lo), int(hi or lo) + 1)
  if r.start < 0 or r.stop > lanes: raise CommandError(f"lanes {text}: a wave has lanes 0..{lanes - 1}")
  return r

def run_program(argv:list[str]):
  """Run `python prog.py args`, `python -m module args` or `python -c code` in this process."""
  if argv and os.path.basename(argv[0]).startswith("python"): argv = argv[1:]
  if not argv: raise SystemExit("mockgpu debug: no program (mockgpu debug [options] -- python prog.py)")
  if argv[0] == "-c":
    sys.argv = ["-c", *argv[2:]]
    exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
  elif argv[0] == "-m":
    sys.argv = [argv[1], *argv[2:]]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
  else:
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")

def main(argv:list[str]) -> int:
  ap = argparse.ArgumentParser(prog="mockgpu debug", description="debug the kernels of a tinygrad program on the mock GPUs",
                               epilog=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("-ex", action="append", default=[], metavar="CMD", help="a debugger command (repeatable; run in order)")
  ap.add_argument("--commands", metavar="FILE", help="debugger commands, one a line (after the -ex ones)")
  ap.add_argument("--batch", action="store_true", help="never read commands from standard input")
  ap.add_argument("program", nargs=argparse.REMAINDER, help="-- python prog.py [args]")
  args = ap.parse_args(argv)
  prog = args.program[1:] if args.program[:1] == ["--"] else args.program
  cmds = list(args.ex)
  if args.commands:
    with open(args.commands) as f: cmds += f.read().splitlines()
  repl = Repl(cmds, stdin=not args.batch)
  repl.setup()
  with repl.session:
    try: run_program(prog)
    except SystemExit as e:
      if e.code not in (None, 0): return e.code if isinstance(e.code, int) else 1
    except BaseException:
      traceback.print_exc()
      return 1
  return 1 if repl.errors else 0
