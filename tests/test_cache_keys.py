"""Both translation caches (RDNA's numpy backend, compiler/rdna/backends/numpy.VERSION, and PTX's, emulators/ptx.VERSION)
key a translation by the text of their package's files, computed from the tree, not a hand-written list: in a copy of
mockgpu, changing one file's content changes the key, and so does a file added to the package. The C builds' artifact
keys (emulators/ptx/native.key, emulators/rdna/native.key) cover the shared C parts beside compiler/native.py that the
preludes include (native_common.c, native_floats.c, native_memory.c), found by name, not listed."""
import json, os, shutil, subprocess, sys
import mockgpu

PKG = os.path.dirname(os.path.abspath(mockgpu.__file__))
KEYS = ("import json\nfrom mockgpu.compiler.rdna.backends import numpy as rdna\nfrom mockgpu.emulators import ptx\n"
        "print(json.dumps({'rdna': rdna.VERSION, 'ptx': ptx.VERSION}))")

C_KEYS = ("import json, types\nfrom mockgpu.emulators.ptx import native as ptx\nfrom mockgpu.emulators.rdna import native as rdna\n"
          "k = types.SimpleNamespace(name='k', module=types.SimpleNamespace(text='.version 8.0'))\n"
          "print(json.dumps({'rdna': rdna.key(b'code', 'arch', False, False, 32, True), 'ptx': ptx.key(k)}))")

def keys(root, script:str=KEYS) -> dict:
  """The two cache keys of the mockgpu copy under root, computed by a fresh interpreter that imports that copy."""
  env = {**os.environ, "PYTHONPATH": str(root)}
  p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env, cwd=root)
  assert p.returncode == 0, p.stderr[-3000:]
  return json.loads(p.stdout.strip().splitlines()[-1])

def edit(path, extra:str):
  with open(path, "a") as f: f.write(extra)

def test_a_changed_or_added_file_changes_its_packages_cache_key(tmp_path):
  shutil.copytree(PKG, tmp_path / "mockgpu", ignore=shutil.ignore_patterns("__pycache__"))
  base = keys(tmp_path)
  assert base == keys(tmp_path)  # computed from the text alone: the same tree gives the same keys
  edit(tmp_path / "mockgpu/compiler/rdna/semantics/rdna3.py", "\n# a change of content\n")
  rdna_changed = keys(tmp_path)
  assert rdna_changed["rdna"] != base["rdna"] and rdna_changed["ptx"] == base["ptx"]
  edit(tmp_path / "mockgpu/compiler/ptx/backends/numerics.py", "\n# a change of content\n")
  ptx_changed = keys(tmp_path)
  assert ptx_changed["ptx"] != rdna_changed["ptx"] and ptx_changed["rdna"] == rdna_changed["rdna"]
  # a module no list names: found because the keys walk their package
  for d in ("rdna/semantics", "ptx/backends"): (tmp_path / "mockgpu/compiler" / d / "added_module.py").write_text("X = 1\n")
  added = keys(tmp_path)
  assert added["rdna"] != ptx_changed["rdna"] and added["ptx"] != ptx_changed["ptx"]

def test_the_shared_c_parts_key_both_isas_c_builds(tmp_path):
  shutil.copytree(PKG, tmp_path / "mockgpu", ignore=shutil.ignore_patterns("__pycache__"))
  base = keys(tmp_path, C_KEYS)
  edit(tmp_path / "mockgpu/compiler/native_floats.c", "\n/* a change of content */\n")
  changed = keys(tmp_path, C_KEYS)
  assert changed["rdna"] != base["rdna"] and changed["ptx"] != base["ptx"]
  (tmp_path / "mockgpu/compiler/native_added.c").write_text("/* a shared part no list names */\n")
  added = keys(tmp_path, C_KEYS)
  assert added["rdna"] != changed["rdna"] and added["ptx"] != changed["ptx"]

def test_a_source_digest_is_kept_under_its_files_stamps_and_read_again_when_one_changes(tmp_path, monkeypatch):
  """cache.source_version serves a digest from disk while every file it was read from has the size and modification
  time it had (the walked files and the files build() read beyond them), and rebuilds it when one changes."""
  from mockgpu.compiler import cache
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path / "cache"))
  monkeypatch.setattr(cache, "_values", {})
  inside, outside = tmp_path / "a.py", tmp_path / "b.py"
  inside.write_text("A = 1\n")
  outside.write_text("B = 1\n")
  builds = []
  def build():
    builds.append(1)
    return (inside.read_text() + outside.read_text(), [str(inside), str(outside)])
  assert cache.source_version("t", [str(inside)], build) == "A = 1\nB = 1\n" and len(builds) == 1
  monkeypatch.setattr(cache, "_values", {})  # a new process: from disk
  assert cache.source_version("t", [str(inside)], build) == "A = 1\nB = 1\n" and len(builds) == 1
  outside.write_text("B = 22\n")
  monkeypatch.setattr(cache, "_values", {})
  assert cache.source_version("t", [str(inside)], build) == "A = 1\nB = 22\n" and len(builds) == 2
  inside.write_text("A = 333\n")
  assert cache.source_version("t", [str(inside)], build) == "A = 333\nB = 22\n" and len(builds) == 3
