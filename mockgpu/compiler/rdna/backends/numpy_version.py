"""The numpy translation's cache key: the text of the files that decide it.

Apart from the translator (numpy.py) so that the executor can look a kernel's translation up in the cache without
importing the translator, the decoder and the operand model (and through them tinygrad's instruction tables: about
100 ms of a process whose kernels are all in the cache).
"""
from __future__ import annotations
import hashlib, os, re

# any change to the translator or to the helpers its output calls invalidates the cached translations
_PKG = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the mockgpu package

_MODULE = re.compile(r"\s*(?:from|import) mockgpu\.compiler\.(?!rdna\b)(\w+)")
_NAMES = re.compile(r"\s*from mockgpu\.compiler import ([\w, ]+)")

def _rdna_files() -> list[str]:
  rdna = os.path.join(_PKG, "compiler", "rdna")
  return sorted(os.path.join(d, f) for d, _, fs in os.walk(rdna) for f in fs if f.endswith(".py"))

def translator_files() -> list[str]:
  """The files whose text decides a numpy translation: every module of compiler/rdna (decoding, operands, semantics,
  errata, the backends and the runtime helpers translated code calls) and the mockgpu.compiler modules they import
  (found in their import statements). The module the cache stores is whole here (numpy.module()): nothing else adds to it."""
  files = _rdna_files()
  found:set[str] = set()
  for path in files:
    with open(path) as f: text = f.read()
    # line by line, regular expressions only where the package is named: a multiline search over the ~450 KB took 20 ms
    for line in text.splitlines():
      if "mockgpu.compiler" not in line: continue
      if (m:=_MODULE.match(line)) is not None: found.add(m.group(1))
      if (m:=_NAMES.match(line)) is not None: found |= {n.strip() for n in m.group(1).split(",")}
  outside = [os.path.join(_PKG, "compiler", m + ".py") for m in sorted(found)]
  return files + [p for p in outside if os.path.exists(p)]

def _digest(files:list[str]) -> str:
  h = hashlib.sha256()
  for f in files:
    with open(f, "rb") as fh: h.update(os.path.relpath(f, _PKG).encode() + fh.read())
  return h.hexdigest()[:16]

def _version() -> str:
  """The digest of translator_files()' text, kept per machine under their stamps (cache.source_version)."""
  from mockgpu.compiler import cache
  return cache.source_version("rdna-numpy", _rdna_files(), lambda: (_digest(files:=translator_files()), files))

VERSION = _version()
