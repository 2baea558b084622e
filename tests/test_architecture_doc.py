"""docs/ARCHITECTURE.md's layout (its first code block) against the tree: every file or folder it names exists, and
every module of the package is named there or lies in a folder it describes as a whole."""
import os, re
import mockgpu

PKG = os.path.dirname(os.path.abspath(mockgpu.__file__))
ROOT = os.path.dirname(PKG)
DOC = os.path.join(ROOT, "docs", "ARCHITECTURE.md")
NAME = re.compile(r"[\w./-]+\.(?:py|c)\b|[\w./-]+/")

def layout_block(text:str) -> list[str]:
  """The lines of the document's first fenced code block."""
  m = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
  assert m, "ARCHITECTURE.md has no layout block"
  return m.group(1).splitlines()

def entries(lines:list[str]) -> tuple[set[str], set[str]]:
  """(paths the layout names in its first column, paths its descriptions name), relative to the repository. A line
  that starts with mockgpu/ is an entry; an indented first column (`  decode.py ...`, `  semantics/lang.py, rdna3.py`)
  names files of the last folder entry. A description's file names count where they are in the entry's folder."""
  named, mentioned, folder, here = set(), set(), None, ""
  for line in lines:
    if not line.strip(): continue
    if line.startswith("mockgpu/"):
      first = re.match(r"mockgpu/\S+(?:, [\w./]+)*", line).group(0)
      paths = [p.strip() for p in first.split(",")]
      base = os.path.dirname(paths[0])
      named |= {paths[0]} | {f"{base}/{p}" for p in paths[1:]}
      here = paths[0] if paths[0].endswith("/") else base + "/"
      if paths[0].endswith("/"): folder = paths[0]
      desc = line[len(first):]
    elif line.startswith("  ") and not line.startswith("   ") and folder:
      first = line.strip().split("  ")[0]
      parts = [p.strip() for p in first.split(",")]
      base = os.path.dirname(parts[0])
      for p in parts: named.add(folder + (p if "/" in p or not base else f"{base}/{p}"))
      here, desc = folder, line[len(line) - len(line.lstrip()) + len(first):]
    else: desc = line
    for m in NAME.findall(desc):
      if not m.startswith("mockgpu/") and os.path.exists(os.path.join(ROOT, here + m)): mentioned.add(here + m)
  return named, mentioned

def package_files() -> set[str]:
  """Every module and C file of the package, relative to the repository (a package's __init__.py is its folder)."""
  out = set()
  for d, dirs, files in os.walk(PKG):
    dirs[:] = [x for x in dirs if x != "__pycache__"]
    for f in files:
      if f.endswith((".py", ".c")) and f != "__init__.py": out.add(os.path.relpath(os.path.join(d, f), ROOT))
  return out

def covered(path:str, named:set[str]) -> bool:
  return path in named or any(n.endswith("/") and path.startswith(n) for n in named)

def test_every_path_the_layout_names_exists():
  with open(DOC) as f: named, _ = entries(layout_block(f.read()))
  missing = sorted(p for p in named if not os.path.exists(os.path.join(ROOT, p)))
  assert not missing, f"ARCHITECTURE.md's layout names paths that do not exist: {missing}"

def test_every_module_is_in_the_layout():
  with open(DOC) as f: named, mentioned = entries(layout_block(f.read()))
  absent = sorted(p for p in package_files() if not covered(p, named | mentioned))
  assert not absent, f"modules ARCHITECTURE.md's layout neither names nor covers by a folder entry: {absent}"

def test_the_layout_reader():
  lines = ["mockgpu/a.py      the a; b.py: the b", "mockgpu/sub/       a folder", "  x.py             one of its files",
           "  y/z.py, w.py     two more", "                   more words about pm4.py"]
  named, _ = entries(lines)
  assert named == {"mockgpu/a.py", "mockgpu/sub/", "mockgpu/sub/x.py", "mockgpu/sub/y/z.py", "mockgpu/sub/y/w.py"}
  assert covered("mockgpu/sub/q/r.py", named) and not covered("mockgpu/b.py", named)

def test_every_test_path_the_document_names_exists():
  """The test files and data the text names (`tests/...`) exist, so a moved or renamed test leaves no stale pointer."""
  with open(DOC) as f: text = f.read()
  missing = sorted({p for p in re.findall(r"\btests/[\w/]+\.(?:py|txt)\b", text) if not os.path.exists(os.path.join(ROOT, p))})
  assert not missing, f"ARCHITECTURE.md names test paths that do not exist: {missing}"
