"""compiler/history.py: the numpy path's seconds per kernel across processes (the Tier's persistent profile): summed over
processes that exit, written by concurrent processes without a count lost or doubled, tolerant of files that are not
its own and of a cache it cannot write, bounded by its merges. The Tier's rule over them: tests/compiler/test_tier.py."""
from __future__ import annotations
import json, logging, os, subprocess, sys, time
import pytest
from mockgpu.compiler import history, native
from support.history import isolate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

@pytest.fixture
def cache(monkeypatch, tmp_path):
  """The test's own cache directory with the history on (support.history.isolate)."""
  return isolate(monkeypatch, tmp_path)

def _child(code:str, cache_dir, **env) -> subprocess.Popen:
  """A Python process of this checkout's mockgpu with the cache directory given (history on)."""
  env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
         "MOCKGPU_CACHE_DIR": str(cache_dir), "MOCKGPU_CC_HISTORY": "1", **env}
  return subprocess.Popen([sys.executable, "-c", "from mockgpu.compiler import history, native\n" + code], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

def _done(p:subprocess.Popen) -> str:
  out, err = p.communicate(timeout=120)
  assert p.returncode == 0, err
  return out

def test_seconds_accumulate_over_processes_that_exit(cache, tmp_path):
  _done(_child("history.add('k1', 0.25); history.add('k1', 0.125); history.add('k2', 1.0)", tmp_path))
  assert _done(_child("print(history.earlier('k1'), history.earlier('k2'), history.earlier('k3'))", tmp_path)).strip() == \
    "(0.375, 1) (1.0, 1) (0.0, 0)"
  _done(_child("history.add('k1', 0.5)", tmp_path))
  assert history.earlier("k1") == (0.875, 2) and history.earlier("k2") == (1.0, 1)
  assert len(history.names(str(cache))) == 2   # one file per process that ran kernels: none for the one that only read

def test_a_forked_child_does_not_write_its_parents_seconds(cache, tmp_path):
  code = "import os, sys\nhistory.add('k', 0.5)\npid = os.fork()\nif pid == 0: sys.exit(0)\nos.waitpid(pid, 0)"
  _done(_child(code, tmp_path))
  assert history.earlier("k") == (0.5, 1)

def test_two_concurrent_writers_lose_and_double_nothing(cache, tmp_path):
  """Two processes each record 40 processes' worth (a flush each) and merge whenever more than 2 files lie there, so
  their merges race over the same files: the sum is exact (the seconds are binary fractions)."""
  go = tmp_path / "go"
  code = (f"import os, time\nhistory.MAX_FILES = 2\nopen(TAG, 'w').close()\nwhile not os.path.exists({str(go)!r}): time.sleep(0.001)\n"
          "for i in range(40):\n  history.add('k', 0.5); history.add(f'{TAG}{i % 3}', 0.25); history.flush()")
  writers = [_child(f"TAG = {str(tmp_path / tag)!r}\n" + code, tmp_path) for tag in ("a", "b")]
  while not all((tmp_path / tag).exists() for tag in "ab"): time.sleep(0.001)   # both started: they write at once
  go.touch()
  for p in writers: _done(p)
  total = history.read(str(cache))
  assert total["k"][:2] == [40.0, 80]
  assert {k: v[:2] for k, v in total.items() if k != "k"} == {f"{tmp_path / t}{i}": [0.25 * n, n] for t in "ab" for i, n in enumerate((14, 13, 13))}
  assert len(history.names(str(cache))) <= 3 and not [n for n in os.listdir(cache) if ".claimed-" in n]

def test_a_file_that_is_not_history_is_named_ignored_and_dropped_at_the_merge(cache, caplog):
  history.add("k", 0.5)
  history.flush()
  (cache / "p-1-torn.json").write_text('{"version": 1, "kernels": {"k": [0.5,')
  (cache / "p-2-other.json").write_text(json.dumps({"version": 1, "kernels": {"k": "lots"}}))
  with caplog.at_level(logging.WARNING, logger="mockgpu"):
    assert history.earlier("k") == (0.5, 1)
  warned = [r.getMessage() for r in caplog.records if "C build history" in r.getMessage()]
  assert len(warned) == 2 and all("is not a history file" in m for m in warned)
  assert any("p-1-torn.json" in m for m in warned) and any("'k': 'lots' is not [seconds, processes, last seen]" in m for m in warned)
  history.merge(str(cache))
  assert [n[:2] for n in history.names(str(cache))] == ["m-"] and history.read(str(cache))["k"][:2] == [0.5, 1]

def test_no_history_yet_and_a_cache_that_cannot_be_written(cache, tmp_path, monkeypatch, caplog):
  assert history.earlier("k") == (0.0, 0)   # the directory does not exist yet
  blocked = tmp_path / "a-file"
  blocked.write_text("not a directory")
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(blocked))   # every write under it fails, as in a read-only cache
  assert history.earlier("k") == (0.0, 0)
  history.add("k", 0.5)
  with caplog.at_level(logging.DEBUG, logger="mockgpu"): history.flush()
  assert any("C build history: cannot write" in r.getMessage() for r in caplog.records)
  t = native.Tier("ptx", 0)   # and a dispatch's tiering works as without history
  assert t.native("auto", lambda: "k", lambda key: pytest.fail("built"), lambda key: native.NOT_CACHED) is None

def test_history_off_reads_and_writes_nothing(cache, monkeypatch):
  monkeypatch.setenv("MOCKGPU_CC_HISTORY", "0")
  history.add("k", 0.5)
  history.flush()
  assert not cache.exists() and history.earlier("k") == (0.0, 0)

def test_read_once_per_process(cache, monkeypatch):
  history.add("k", 0.5)
  history.flush()
  reads = []
  monkeypatch.setattr(history, "read", lambda d, read=history.read: reads.append(d) or read(d))
  assert history.earlier("k") == (0.5, 1) and history.earlier("k2") == (0.0, 0) and history.earlier("k") == (0.5, 1)
  assert reads == [str(cache)]

def test_merge_keeps_the_kernels_seen_most_recently(cache, monkeypatch):
  monkeypatch.setattr(history, "MAX_KERNELS", 3)
  cache.mkdir(parents=True)
  for i in range(5):   # kernel k<i> last seen at time i
    (cache / f"p-{i}-x.json").write_text(json.dumps({"version": 1, "kernels": {f"k{i}": [0.5, 1, float(i)]}}))
  history.merge(str(cache))
  assert sorted(history.read(str(cache))) == ["k2", "k3", "k4"]

def test_exit_finishes_the_running_build_and_drops_the_queued(tmp_path):
  """A process that exits while a background build runs lets it finish (it paid; later processes take it from the
  artifact index), and drops the builds not started (a later process starts them again)."""
  code = f"""
import threading, time
started = threading.Event()
def build(path):
  started.set(); time.sleep(0.5)
  open(path, 'w').close()
native.background(lambda: build({str(tmp_path / "first")!r}))
native.background(lambda: open({str(tmp_path / "second")!r}, 'w').close())
started.wait()
"""
  _done(_child(code, tmp_path))
  assert (tmp_path / "first").exists() and not (tmp_path / "second").exists()

# *** what C builds cost on this machine: the estimates learn from the compiler's CPU ***

def test_build_ratio_is_measured_over_estimated_of_the_newest_builds(cache, monkeypatch):
  assert history.build_ratio("ptx") == 1.0   # nothing recorded: BUILD_COST as it is
  history.record_build("ptx", 1.0, 2.0)
  history.record_build("ptx", 1.0, 4.0)
  history.record_build("rdna", 2.0, 1.0)
  assert history.build_ratio("ptx") == 3.0 and history.build_ratio("rdna") == 0.5
  assert native.build_estimate("ptx", 100) == pytest.approx(3.0 * native.base_estimate("ptx", 100))
  monkeypatch.setattr(history, "BUILDS_KEPT", 2)
  history.record_build("ptx", 1.0, 1.0)   # the oldest (2.0) leaves the window and its file is deleted
  assert history.build_ratio("ptx") == 2.5
  assert len(os.listdir(cache.parent / "builds")) == 3
  history.record_build("ptx", 1.0, 100.0)
  assert history.build_ratio("ptx") == history.RATIO_RANGE[1]   # one slow build moves the estimate 8x at most

def test_a_build_record_that_is_not_one_is_named_and_ignored(cache, caplog):
  history.record_build("ptx", 1.0, 2.0)
  (cache.parent / "builds" / "ptx-1-torn.json").write_text("[1.0,")
  (cache.parent / "builds" / "ptx-2-neg.json").write_text("[1.0, -3]")
  assert history._ratios[0] is None   # recording invalidates the process's copy
  with caplog.at_level(logging.WARNING, logger="mockgpu"): assert history.build_ratio("ptx") == 2.0
  warned = sorted(r.getMessage() for r in caplog.records if "is not a build record" in r.getMessage())
  assert len(warned) == 2 and "ptx-1-torn.json" in warned[0]
  assert "ptx-2-neg.json is not a build record (not [estimated seconds, CPU seconds])" in warned[1]

def test_history_off_records_no_build(cache, monkeypatch):
  monkeypatch.setenv("MOCKGPU_CC_HISTORY", "0")
  history.record_build("ptx", 1.0, 2.0)
  assert history.build_ratio("ptx") == 1.0 and not cache.parent.exists()

def test_a_real_build_records_the_compilers_cpu(cache, tmp_path):
  """A Tier's build through the C compiler: its CPU (os.wait4: the driver and cc1, as, ld) recorded against the estimate;
  a build the compiler rejects records its CPU too, and says why."""
  so = str(tmp_path / "k.so")
  t = native.Tier("ptx", 1000)
  assert t.native("1", lambda: "k", lambda key: native._build(so, "int f(void) { return 1; }\n", ("-O2",)), None) is True
  (name,) = os.listdir(cache.parent / "builds")
  est, cpu = json.loads((cache.parent / "builds" / name).read_text())
  assert name.startswith("ptx-") and est == native.base_estimate("ptx", 1000) and 0 < cpu < 60
  assert native.build_cpu() is None   # taken by the Tier
  assert not native._build(so, "int f(void) { return }\n", ("-O0",)) and native.build_cpu() > 0
