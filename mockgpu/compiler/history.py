"""The numpy path's profile across processes, as a JIT's persistent profile: per kernel (keyed as the artifact index
keys it), the CPU seconds its numpy path spent in earlier processes and how many processes ran it there. native.Tier
adds them to this process's seconds, so its ski rental runs over the kernel's lifetime on this machine (its cache
directory) rather than one process: a kernel that a suite dispatches twice per process, run after run (a CI cache kept
between runs, a developer re-running pytest, the xdist workers), is built once those runs' numpy seconds together
reach its build's estimate, and every later process takes the build at its first dispatch.

On disk, <cache>/native/history/:
- each process that ran kernels on numpy writes one file of its own at exit, p-<pid>-<random>.json (written under a
  temporary name, then renamed: never torn, never shared, so xdist workers contend for nothing on the hot path, where a
  dispatch only adds to a dict);
- a process reads every file there once, at its first kernel's first dispatch (`earlier`), and sums them;
- once more than MAX_FILES lie there, the process exiting merges them into one, m-<random>.json: it claims each file by
  renaming it (of two processes renaming the same file, one succeeds, so no file is counted twice), writes the sum of
  what it claimed, then deletes it. A reader meanwhile misses the claimed files' seconds: a kernel is built a little later.
- the merged file keeps the MAX_KERNELS kernels seen most recently, so the history stays bounded (about 100 bytes each).
Beside them, <cache>/native/builds/: one small file per C build, [estimated seconds, the compiler's CPU seconds], named
by its ISA; the newest BUILDS_KEPT per ISA are kept. `build_ratio` is their measured / estimated over that window, so
a machine whose builds run slower than the constants say (a loaded CI runner, an older compiler) weighs its builds
at what they cost there. A file that is not a history file is logged (the "C build history" warning, naming it) and dropped at the next merge. An
unwritable or read-only cache directory only means no history (logged once at debug level); MOCKGPU_CC_HISTORY=0 turns
it off.
"""
from __future__ import annotations
import atexit, json, os, time
from mockgpu import config

from mockgpu import log
VERSION = 1
MAX_FILES = 16         # files read at a process's first dispatch, at most about this many (merged at exit beyond it)
MAX_KERNELS = 4096     # kernels the merged file keeps: those seen most recently
STALE_CLAIM_S = 600    # a claimed file this old belongs to a merge that died: deleted

_spent:dict[str, float] = {}   # this process's numpy seconds per kernel key, written at exit
_earlier:tuple[str|None, dict] = (None, {})   # (the directory read, key -> [seconds, processes, last seen])
_ratios:tuple[str|None, dict] = (None, {})   # (the directory read, isa -> measured / estimated build seconds)
BUILDS_KEPT = 32       # C builds per ISA whose cost the estimate learns from: the newest
RATIO_RANGE = (0.25, 8.0)   # how far the measured builds may move the estimate
_registered:int|None = None   # the process that registered the exit handler (a forked child inherits both)

def directory() -> str|None:
  """The history's directory, or None where it is off (MOCKGPU_CC_HISTORY=0, MOCKGPU_CACHE_DIR=off)."""
  if config.setting("MOCKGPU_CC_HISTORY") == "0" or (d:=config.cache_dir()) is None: return None
  return os.path.join(d, "native", "history")

def earlier(key:str) -> tuple[float, int]:
  """(numpy seconds, processes) that earlier processes recorded for the kernel of this key; (0.0, 0) without history.
  The directory is read once per process (again only if MOCKGPU_CACHE_DIR changes)."""
  global _earlier
  if (d:=directory()) is None: return 0.0, 0
  if _earlier[0] != d: _earlier = (d, read(d))
  seconds, processes, _ = _earlier[1].get(key, (0.0, 0, 0.0))
  return seconds, processes

def add(key:str, seconds:float):
  """Count seconds of this process's numpy path against the kernel of this key (written at exit)."""
  global _registered
  if _registered is None:
    _registered = os.getpid()
    atexit.register(flush)
  _spent[key] = _spent.get(key, 0.0) + seconds

def flush():
  """Write this process's seconds (one file of its own) and merge the directory when it holds too many files."""
  if not _spent or (d:=directory()) is None: return
  if os.getpid() != _registered:   # a forked child that exits normally: its parent's seconds are the parent's to write
    _spent.clear()
    return
  now = int(time.time())
  kernels = {k: [round(s, 6), 1, now] for k, s in _spent.items()}   # microseconds and seconds: a smaller file to read
  _spent.clear()
  try:
    os.makedirs(d, exist_ok=True)
    _write(d, "p-", kernels)
    if len(names(d)) > MAX_FILES: merge(d)
  except OSError as e:  # a read-only or full cache: later processes just do not count this one's seconds
    log.debug("C build history: cannot write in %s (%s); this process's numpy seconds are not recorded", d, e)

def names(d:str) -> list[str]:
  """The history files in d (none when d does not exist yet)."""
  try: return sorted(n for n in os.listdir(d) if n.endswith(".json") and n[:2] in ("p-", "m-"))
  except FileNotFoundError: return []
  except OSError as e:  # the cache directory is a file, or unreadable: no history
    log.debug("C build history: cannot list %s (%s); no history", d, e)
    return []

def read(d:str) -> dict:
  """key -> [seconds, processes, last seen] summed over the history files in d."""
  total:dict = {}
  for name in names(d): _add_into(total, load(os.path.join(d, name)))
  return total

def load(path:str) -> dict:
  """A history file's kernels; {} for one that is gone (merged meanwhile) or is not a history file (logged)."""
  try:
    with open(path) as f: rec = json.load(f)
    kernels = rec["kernels"] if isinstance(rec, dict) and rec.get("version") == VERSION else None
    if not isinstance(kernels, dict): raise ValueError(f"not a version-{VERSION} history record")
    if not all(map(_entry, kernels.values())):   # one pass (4096 kernels: about a millisecond); then name the first bad one
      k, v = next((k, v) for k, v in kernels.items() if not _entry(v))
      raise ValueError(f"kernel {k!r}: {v!r} is not [seconds, processes, last seen]")
    return kernels
  except FileNotFoundError: return {}
  except (OSError, ValueError, UnicodeDecodeError) as e:
    log.warning("C build history: %s is not a history file (%s); ignored, and dropped at the next merge", path, e)
    return {}

_NUMBER = (int, float)

def _entry(v) -> bool: return type(v) is list and len(v) == 3 and type(v[0]) in _NUMBER and type(v[1]) is int and type(v[2]) in _NUMBER

def _add_into(total:dict, kernels:dict):
  for k, (s, n, t) in kernels.items():
    cur = total.get(k)
    total[k] = [s, n, t] if cur is None else [cur[0] + s, cur[1] + n, max(cur[2], t)]

def _write(d:str, prefix:str, kernels:dict):
  """Write kernels as a new history file in d."""
  _publish(d, f"{prefix}{os.getpid()}", {"version": VERSION, "kernels": kernels})

def _publish(d:str, stem:str, rec):
  """rec as JSON in a new file of d named stem-<random>.json: written under a temporary name (readers skip it), then
  renamed, so no reader sees it torn and no two writers share a name."""
  import uuid  # here, at exit or after a build: not on the way to a process's first op (~1.5 ms)
  config.publish(os.path.join(d, f"{stem}-{uuid.uuid4().hex[:12]}.json"), lambda f: json.dump(rec, f, separators=(",", ":")),
                 prefix=".tmp-", suffix=".part")

def merge(d:str):
  """Merge the history files in d into one: each claimed by a rename first, so two merging processes never count one
  file twice; the merged file keeps the MAX_KERNELS kernels seen most recently."""
  import uuid
  tag, claimed = f".claimed-{os.getpid()}-{uuid.uuid4().hex[:8]}", []
  for name in names(d):
    try: os.rename(os.path.join(d, name), path:=os.path.join(d, name + tag))
    except FileNotFoundError: continue  # another process claimed it first
    claimed.append(path)
  total:dict = {}
  for path in claimed: _add_into(total, load(path))
  if total: _write(d, "m-", dict(sorted(total.items(), key=lambda kv: kv[1][2])[-MAX_KERNELS:]))
  for path in claimed: os.unlink(path)
  _drop_stale_claims(d)

def _drop_stale_claims(d:str):
  """Files claimed by a merge that died before it wrote its sum (their seconds are lost: a kernel is built later)."""
  now = time.time()
  for name in os.listdir(d):
    if ".claimed-" not in name and not name.startswith(".tmp-"): continue
    try:
      if now - os.stat(p:=os.path.join(d, name)).st_ctime > STALE_CLAIM_S: os.unlink(p)
    except FileNotFoundError: pass

# *** what C builds cost on this machine ***

def builds_directory() -> str|None:
  return None if (d:=directory()) is None else os.path.join(os.path.dirname(d), "builds")

def record_build(isa:str, estimate:float, cpu:float):
  """A C build of isa that was estimated at `estimate` seconds took `cpu` seconds of compiler CPU: kept for the
  estimates of later builds here and in later processes."""
  global _ratios
  if (d:=builds_directory()) is None or estimate <= 0: return
  try: _publish(d, f"{isa}-{time.time_ns()}", [estimate, cpu])   # (config.publish makes the directory)
  except OSError as e:
    log.debug("C build history: cannot write in %s (%s); this build's cost is not recorded", d, e)
    return
  _ratios = (None, {})   # read again, this build included

def build_ratio(isa:str) -> float:
  """Measured / estimated seconds of isa's recent C builds on this machine (clamped to RATIO_RANGE), 1.0 where none is
  recorded; read once per process (and again after a build of its own)."""
  global _ratios
  if (d:=builds_directory()) is None: return 1.0
  if _ratios[0] != d: _ratios = (d, _read_builds(d))
  return _ratios[1].get(isa, 1.0)

def _read_builds(d:str) -> dict[str, float]:
  """isa -> the ratio over its newest BUILDS_KEPT builds; older files are deleted."""
  try: files = sorted((n for n in os.listdir(d) if n.endswith(".json") and not n.startswith(".")), key=_build_time)
  except OSError: return {}
  by_isa:dict[str, list[str]] = {}
  for n in files: by_isa.setdefault(n.split("-")[0], []).append(n)
  ratios = {}
  for isa, names_ in by_isa.items():
    for old in names_[:-BUILDS_KEPT]:
      try: os.unlink(os.path.join(d, old))
      except FileNotFoundError: pass
    est = cpu = 0.0
    for n in names_[-BUILDS_KEPT:]:
      rec = _load_build(os.path.join(d, n))
      if rec is not None: est, cpu = est + rec[0], cpu + rec[1]
    if est > 0: ratios[isa] = min(max(cpu / est, RATIO_RANGE[0]), RATIO_RANGE[1])
  return ratios

def _build_time(name:str) -> int:
  parts = name.split("-")
  return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0

def _load_build(path:str) -> tuple[float, float]|None:
  """A build record [estimate, cpu]; None for one gone meanwhile or one that is not a record (logged)."""
  try:
    with open(path) as f: rec = json.load(f)
    if type(rec) is not list or len(rec) != 2 or not all(type(x) in _NUMBER and x >= 0 for x in rec):
      raise ValueError("not [estimated seconds, CPU seconds]")
    return float(rec[0]), float(rec[1])
  except FileNotFoundError: return None
  except (OSError, ValueError, UnicodeDecodeError) as e:
    log.warning("C build history: %s is not a build record (%s); ignored", path, e)
    return None
