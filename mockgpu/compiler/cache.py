"""The translation cache: a kernel is translated once per process (memory) and once per machine (disk).

Translators turn a kernel (RDNA machine code, PTX text) into Python source over numpy arrays. The compiled code object
is kept in memory and marshalled to disk, keyed by the kernel's bytes, the translator's kind and version, the
mockgpu version and the Python version (marshal is version specific), so a second test run skips the work.
"""
from __future__ import annotations
import hashlib, marshal, os, sys, types
from typing import Callable
from mockgpu import config, __version__

_memory:dict[str, types.CodeType] = {}
stats = {"memory_hits": 0, "disk_hits": 0, "translations": 0}

def key_of(kind:str, version:str, data:bytes) -> str:
  h = hashlib.sha256(f"{kind}|{version}|{__version__}|{sys.version}".encode())
  h.update(data)
  return h.hexdigest()

def translated(kind:str, version:str, data:bytes, build:Callable[[], str], filename:str|None=None) -> types.CodeType:
  """The compiled code for `data`: from memory, else from disk, else from build() (which returns Python source)."""
  key = key_of(kind, version, data)
  if (code:=_memory.get(key)) is not None:
    stats["memory_hits"] += 1
    return code
  code = _load(key)
  if code is not None: stats["disk_hits"] += 1
  else:
    stats["translations"] += 1
    code = compile(build(), filename or f"<mockgpu {kind} {key[:12]}>", "exec")
    _store(key, code)
  _memory[key] = code
  return code

_values:dict[str, object] = {}

def remembered(kind:str, version:str, data:bytes, build:Callable[[], object], valid:Callable[[object], bool]) -> object:
  """A plain value (what marshal writes: tuples, numbers, bytes) computed from `data` once per machine: from memory,
  else from disk when valid(value), else from build()."""
  key = key_of(kind, version, data)
  if (v:=_values.get(key)) is not None: return v
  v = _load(key)
  if v is None or not valid(v): v = build(); _store(key, v)
  _values[key] = v
  return v

def _stamp(path:str) -> tuple[str, int, int]|None:
  try: st = os.stat(path)
  except OSError: return None
  return (path, st.st_size, st.st_mtime_ns)

def source_version(kind:str, walked:list[str], build:Callable[[], tuple[str, list[str]]]) -> str:
  """A digest of source text, kept per machine under the paths, sizes and modification times of the files it was read
  from (as Python validates its bytecode cache), so that a process need not read and hash them again: ~450 KB for the
  RDNA translator's key (2.5-4 ms of every AMD process), ~150 KB for PTX's. walked: the files found without reading
  any (a directory walk); build() -> (the digest, every file it read), which may name files beyond walked: their
  stamps are kept with the digest and checked too."""
  def made() -> tuple:
    digest, read = build()
    return (digest, tuple(_stamp(f) for f in read if f not in inside))
  def valid(v) -> bool: return isinstance(v, tuple) and len(v) == 2 and all(_stamp(s[0]) == tuple(s) for s in v[1])
  inside = set(walked)
  return remembered(f"{kind}-source", "1", repr([_stamp(f) for f in walked]).encode(), made, valid)[0]

def _path(key:str) -> str|None:
  d = config.cache_dir()
  return None if d is None else os.path.join(d, key[:2], key + ".marshal")

def _load(key:str):
  if (p:=_path(key)) is None or not os.path.exists(p): return None
  try:
    with open(p, "rb") as f: return marshal.loads(f.read())   # marshal.load(f) reads piecewise: 3-7x slower (2 ms for 80 KB)
  except (OSError, EOFError, ValueError, TypeError): return None  # a torn or foreign file: translate again

def _store(key:str, code):
  if (p:=_path(key)) is None: return
  try:
    config.publish(p, lambda f: marshal.dump(code, f), "wb")   # parallel test workers never read a half-written file
  except OSError: pass  # a read-only cache is only slower
