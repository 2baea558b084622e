"""The fuzzing harness: hostile inputs for mockgpu's seams, each run in a child process with a timeout.

A *surface* is a module in tests/fuzz/ (importable by its bare name: tests/fuzz is on sys.path) with:

  NAME: str                                   the surface's name in reports ("kfd", "pm4", "cuda", "rdna", ...)
  ENV: dict[str, str]                         optional: extra environment of its worker processes (e.g. a small MOCKGPU_BUDGET)
  setup() -> None                             once per worker process, before its first case: open the device, build state
  generate(rng: random.Random, n: int) -> list
                                              n cases, made in the parent from rng alone (deterministic for a seed); a case
                                              must be picklable and printable (plain tuples/dicts/bytes/ints), and must not
                                              hold process-specific addresses: execute() resolves symbolic ones
  execute(case) -> None | str                 run one case in the worker. Returning None is outcome "ok". Returning a str is
                                              outcome "named": the modelled error code the interface returned (a CUresult
                                              name, an NV status name, ...). Raising is classified (see below)
  known_good() -> bool                        a fixed, valid operation whose answer is checked (a copy that must arrive, a
                                              signal that must land): True when it gave the right answer. Run by the worker
                                              at start-up and after every case that did not end "ok". Where a fault is
                                              sticky by design (a faulted KFD queue, a CUDA context after error 700), it
                                              uses another queue/context/device of the process, never the broken one

Outcomes of a case:
  ok           execute() returned None
  named        execute() returned a str, or raised a mockgpu.errors.MockGPUError (Unmodelled, PacketError, GPUPageFault,
               UnsupportedIoctl, ...), or an OSError whose errno is one a real driver answers (MODELLED_ERRNOS)
  internal     an EmulatorBug (a MockGPUError, but mockgpu naming a bug of its own): a bug, on every surface. Recorded with
               its input and its cause's traceback
  generic      any other exception (ValueError, IndexError, RecursionError, MemoryError, a bare NotImplementedError...):
               a bug in mockgpu. Recorded with its input and the traceback's last frames
  crash        the worker died (a signal, an os._exit): recorded with its input; the worker is replaced
  hang         the case ran past the timeout: the worker is killed, the case recorded, the worker replaced
  broken_after known_good() returned False or raised after a failing case: the failing case is recorded; the worker is
               replaced (its state can no longer be trusted)

Use:
  from harness import run
  report = run("surface_pm4", n=2000, seed=1)       # -> Report: .counts, .failures, .named (error type histogram)
  assert report.clean(), report.summary()
  python tests/fuzz/harness.py surface_pm4 surface_kfd -n 10000 --seed 3 --jobs 2

Mutators for surfaces: interesting(rng, bits) (boundary values), mutate_words(rng, words) (bit flips, interesting
values, insertions, deletions, duplications, swaps, truncation; non-int items such as symbolic addresses move intact).
Tiers: tests/fuzz/test_fuzz_*.py run each surface's CI count; MOCKGPU_FUZZ=N (scale()) multiplies it, `tox -e fuzz` uses 20.

Workers are long-lived `python harness.py --worker MODULE` processes fed batches of cases over a pipe (pickles); the
parent reads one result per case with the per-case timeout, so a crash or a hang loses only that case's worker.
"""
from __future__ import annotations
import argparse, collections, errno, functools, importlib, json, os, pickle, queue, random, select, signal, struct, subprocess, sys, tempfile
import threading, time, traceback
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path: sys.path.insert(0, os.path.dirname(HERE))  # tests/: userpages, test_kfd
OUTCOMES = ("ok", "named", "generic", "internal", "crash", "hang", "broken_after")
BAD = ("generic", "internal", "crash", "hang", "broken_after")
# the errnos the modelled kernel interfaces answer (a real ioctl's -1/errno); anything else from a driver model is generic
MODELLED_ERRNOS = {errno.EINVAL, errno.EFAULT, errno.ENOMEM, errno.EBUSY, errno.EBADF, errno.ENOENT, errno.EPERM, errno.ENOSPC,
                   errno.ENOTTY, errno.ENODEV, errno.EACCES, errno.EISDIR, errno.EEXIST, errno.E2BIG, errno.ERANGE, errno.EIO}

def classify(exc:BaseException) -> str:
  from mockgpu.errors import MockGPUError, EmulatorBug
  if isinstance(exc, EmulatorBug): return "internal"
  if isinstance(exc, MockGPUError): return "named"
  if isinstance(exc, OSError) and exc.errno in MODELLED_ERRNOS: return "named"  # OSError(EPERM, ...) is a PermissionError
  return "generic"

def _short(exc:BaseException) -> str:
  frames = traceback.extract_tb(exc.__traceback__)[-4:]
  where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(frames))
  return f"{type(exc).__name__}: {str(exc)[:300]} [{where}]"

# *** mutators, for surfaces ***

INTERESTING = [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 1023, 1024, 1025, 4095, 4096, 0x3fff, 0xffff, 0x10000,
               0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, 1 << 47, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]

@functools.cache
def corpus(name:str) -> list[dict]:
  """A surface's seed kernels, tests/fuzz/corpus/NAME.json (written by make_corpus.py), read once per process."""
  with open(os.path.join(HERE, "corpus", f"{name}.json")) as f: return json.load(f)

def interesting(rng:random.Random, bits:int=32) -> int:
  """An integer of `bits` bits that tends to sit on a boundary: 0, +-1 around powers of two, all ones, or random."""
  r = rng.random()
  if r < 0.5: return rng.choice(INTERESTING) & ((1 << bits) - 1)
  if r < 0.8: return ((1 << rng.randrange(bits)) + rng.choice((-1, 0, 1))) & ((1 << bits) - 1)
  return rng.getrandbits(bits)

def mutate_words(rng:random.Random, words:list, n:int|None=None, bits:int=32) -> list:
  """1 to 4 (or n) random edits of a word list: flip a bit, put an interesting value, insert, delete, duplicate a
  slice, swap two words, truncate. Items that are not ints (symbolic addresses a surface resolves) move as they are."""
  w = list(words)
  for _ in range(n if n is not None else rng.randint(1, 4)):
    op, i = rng.randrange(7), rng.randrange(len(w)) if w else 0
    if op == 0 and w and isinstance(w[i], int): w[i] ^= 1 << rng.randrange(bits)
    elif op == 1 and w: w[i] = interesting(rng, bits)
    elif op == 2: w.insert(i, interesting(rng, bits))
    elif op == 3 and w: del w[i]
    elif op == 4 and w: w[i:i] = w[i:i + rng.randint(1, 8)]
    elif op == 5 and len(w) > 1:
      j = rng.randrange(len(w))
      w[i], w[j] = w[j], w[i]
    elif op == 6 and w: w = w[:i]
  return w

# *** the worker process ***

def _send(out, msg):
  data = pickle.dumps(msg)
  out.write(struct.pack("<I", len(data)) + data)
  out.flush()

def _recv(inp):
  head = inp.read(4)
  if len(head) < 4: raise EOFError
  return pickle.loads(inp.read(struct.unpack("<I", head)[0]))

def _known_good(surface) -> tuple[bool, str]:
  try: return bool(surface.known_good()), ""
  except BaseException as e: return False, _short(e)

def _run_case(surface, case) -> tuple[str, str]:
  try: res = surface.execute(case)
  except RecursionError as e: return "generic", _short(e)
  except Exception as e:
    kind = classify(e)
    if kind == "internal": return kind, f"EmulatorBug: {str(e)[:300]}; cause {_short(e.__cause__ or e)}"
    return kind, _short(e) if kind == "generic" else f"{type(e).__name__}: {str(e)[:200]}"
  return ("ok", "") if res is None else ("named", str(res))

def worker_main(module:str):
  # the result channel is the original stdout; anything the code under test prints goes to stderr
  out = os.fdopen(os.dup(1), "wb")
  os.dup2(2, 1)
  sys.stdout = sys.stderr
  inp = os.fdopen(0, "rb")
  sys.path.insert(0, HERE)
  surface = importlib.import_module(module)
  surface.setup()
  ok, why = _known_good(surface)
  _send(out, ("ready", ok, why))
  while True:
    try: batch = _recv(inp)
    except EOFError: return
    for i, case in batch:
      outcome, detail = _run_case(surface, case)
      if outcome != "ok":
        good, why = _known_good(surface)
        if not good: outcome, detail = "broken_after", f"{outcome} ({detail}); then known_good failed {why}"
      _send(out, (i, outcome, detail))
      if outcome == "broken_after": return  # replaced: its state is no longer trusted

# *** the parent ***

@dataclass
class Report:
  surface:str
  counts:collections.Counter = field(default_factory=collections.Counter)
  named:collections.Counter = field(default_factory=collections.Counter)  # named outcomes by error type / code
  failures:list[tuple[str, object, str]] = field(default_factory=list)    # (outcome, case, detail) of every bad outcome
  seconds:float = 0.0
  def clean(self) -> bool: return not any(self.counts[k] for k in BAD)
  def total(self) -> int: return sum(self.counts.values())
  def line(self) -> str:
    return f"{self.surface}: {self.total()} cases in {self.seconds:.1f}s: " + ", ".join(f"{k} {self.counts[k]}" for k in OUTCOMES)
  def summary(self, limit:int=10) -> str:
    lines = [self.line()] + [f"  {o}: {d}\n    input: {c!r}"[:1500] for o, c, d in self.failures[:limit]]
    return "\n".join(lines)

class Worker:
  def __init__(self, module:str, env:dict):
    self.log = tempfile.TemporaryFile()
    self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", module], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=self.log, env={**os.environ, **env}, cwd=HERE, bufsize=0)
    self.module, self.buf = module, b""
  def stderr_tail(self) -> str:
    self.log.seek(0)
    return self.log.read().decode(errors="replace")[-2000:]
  def read(self, timeout:float):
    """The next message, or 'hang' after timeout seconds, or 'crash' if the worker died. Reads the pipe unbuffered
    (select cannot see what a buffered reader already holds)."""
    fd, deadline = self.proc.stdout.fileno(), time.monotonic() + timeout
    while True:
      if len(self.buf) >= 4 and len(self.buf) >= 4 + (size:=struct.unpack("<I", self.buf[:4])[0]):
        msg, self.buf = self.buf[4:4 + size], self.buf[4 + size:]
        try: return pickle.loads(msg)
        except Exception: return "crash"
      if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]: return "hang"
      if not (chunk:=os.read(fd, 1 << 16)): return "crash"
      self.buf += chunk
  def send(self, batch):
    try: _send(self.proc.stdin, batch)
    except (BrokenPipeError, OSError): pass  # seen as a crash at the next read
  def died(self) -> str:
    rc = self.proc.wait()
    sig = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}"
    return f"worker died ({sig}): {self.stderr_tail()}"
  def kill(self):
    if self.proc.poll() is None:
      self.proc.kill()
    self.proc.wait()
    for f in (self.proc.stdin, self.proc.stdout):
      try: f.close()
      except OSError: pass

def _start(module:str, env:dict, start_timeout:float) -> Worker:
  w = Worker(module, env)
  msg = w.read(start_timeout)
  if not (isinstance(msg, tuple) and msg[0] == "ready"):
    tail = w.died() if msg == "crash" else "start-up timed out"
    w.kill()
    raise RuntimeError(f"fuzz worker for {module} did not start: {tail}")
  if not msg[1]:
    w.kill()
    raise RuntimeError(f"fuzz surface {module}: known_good() fails on a fresh worker: {msg[2]}")
  return w

def _drive(module:str, env:dict, batches:queue.Queue, cases:list, report:Report, lock:threading.Lock, timeout:float, start_timeout:float):
  w = None
  try:
    while True:
      try: batch = batches.get_nowait()
      except queue.Empty: return
      while batch:
        if w is None: w = _start(module, env, start_timeout)
        w.send(batch)
        done = 0
        while done < len(batch):
          msg = w.read(timeout)
          if msg in ("hang", "crash"):
            i = batch[done][0]
            detail = f"no result after {timeout}s" if msg == "hang" else w.died()
            w.kill()
            w = None
            with lock:
              report.counts[msg] += 1
              report.failures.append((msg, cases[i], detail))
            done += 1
            break
          i, outcome, detail = msg
          with lock:
            report.counts[outcome] += 1
            if outcome == "named": report.named[detail.split(":")[0][:60]] += 1
            elif outcome != "ok": report.failures.append((outcome, cases[i], detail))
          done += 1
          if outcome == "broken_after":
            w.kill()
            w = None
            break
        batch = batch[done:]
  finally:
    if w is not None: w.kill()

def run(module:str, n:int, seed:int=0, jobs:int=1, timeout:float=20.0, batch:int=100, start_timeout:float=120.0) -> Report:
  """Generate n cases of surface `module` from `seed` and run them on `jobs` workers."""
  if HERE not in sys.path: sys.path.insert(0, HERE)
  surface = importlib.import_module(module)
  cases = surface.generate(random.Random(f"{module}:{seed}"), n)
  report = Report(getattr(surface, "NAME", module))
  batches:queue.Queue = queue.Queue()
  for k in range(0, len(cases), batch): batches.put([(i, cases[i]) for i in range(k, min(k + batch, len(cases)))])
  env, lock, t0 = dict(getattr(surface, "ENV", {})), threading.Lock(), time.perf_counter()
  errors:list[BaseException] = []
  def drive():
    try: _drive(module, env, batches, cases, report, lock, timeout, start_timeout)
    except BaseException as e: errors.append(e)
  threads = [threading.Thread(target=drive, daemon=True) for _ in range(max(1, jobs))]
  for t in threads: t.start()
  for t in threads: t.join()
  if errors: raise errors[0]
  report.seconds = time.perf_counter() - t0
  return report

def scale() -> int:
  """MOCKGPU_FUZZ=N multiplies the case counts of the fuzz tests (the long tier, tox -e fuzz, runs with 20)."""
  return max(1, int(os.environ.get("MOCKGPU_FUZZ", "1") or 1))

def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("surfaces", nargs="+")
  ap.add_argument("-n", type=int, default=1000)
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--jobs", type=int, default=1)
  ap.add_argument("--timeout", type=float, default=20.0)
  a = ap.parse_args(argv)
  bad = False
  for s in a.surfaces:
    r = run(s, a.n, a.seed, a.jobs, a.timeout)
    print(r.summary(), flush=True)
    bad |= not r.clean()
  return int(bad)

if __name__ == "__main__":
  if len(sys.argv) == 3 and sys.argv[1] == "--worker": worker_main(sys.argv[2])
  else: sys.exit(main())
