"""compiler/native.py's Tier: when a kernel's C build pays (ski rental over the numpy path's seconds, this process's and
earlier processes' from the history), built in the background, and found again through the artifact index."""
from __future__ import annotations
import pytest
from mockgpu.compiler import history, native
from support.history import isolate

KEY = lambda: "k"

def _tier(monkeypatch, cost:float) -> native.Tier:
  monkeypatch.setenv("MOCKGPU_CC_COST", str(cost / sum(native.BUILD_COST["ptx"][:1])))  # an estimate of `cost` seconds
  monkeypatch.setenv("MOCKGPU_CC_HISTORY", "0")  # this process's seconds only (test_history.py: with earlier ones)
  return native.Tier("ptx", 0)

def test_numpy_until_the_build_would_have_paid(monkeypatch):
  t, built = _tier(monkeypatch, 0.5), []
  build = lambda key: built.append(key) or "C"
  t.ran(0.3)
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) is None
  native.wait()
  assert built == []
  t.ran(0.3)  # 0.6 s on numpy: more than the build
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) is None  # started in the background; numpy runs this one
  native.wait()
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) == "C" and built == ["k"]
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) == "C" and built == ["k"]

def test_recorded_build_taken_at_once_and_looked_up_once(monkeypatch):
  t, looked = _tier(monkeypatch, 100), []
  assert t.native("auto", KEY, lambda key: pytest.fail("built"), lambda key: looked.append(key) or "C") == "C"
  t2 = _tier(monkeypatch, 100)
  assert t2.native("auto", KEY, lambda key: pytest.fail("built"), lambda key: looked.append(key) or native.NOT_CACHED) is None
  assert t2.native("auto", KEY, lambda key: pytest.fail("built"), lambda key: looked.append(key) or native.NOT_CACHED) is None
  assert looked == ["k", "k"]

def test_recorded_refusal_is_kept(monkeypatch):
  t = _tier(monkeypatch, 0)
  assert t.native("auto", KEY, lambda key: pytest.fail("built"), lambda key: None) is None
  t.ran(10)
  assert t.native("auto", KEY, lambda key: pytest.fail("built"), lambda key: None) is None

def test_mode_one_builds_now_and_waits_for_a_pending_build(monkeypatch):
  t = _tier(monkeypatch, 100)
  assert t.native("1", KEY, lambda key: "C", lambda key: pytest.fail("looked up")) == "C"
  t2 = _tier(monkeypatch, 0)
  assert t2.native("auto", KEY, lambda key: "C", lambda key: native.NOT_CACHED) is None
  assert t2.native("1", KEY, lambda key: pytest.fail("built twice"), lambda key: pytest.fail("looked up")) == "C"

def test_background_error_raises_in_the_dispatch_that_takes_it(monkeypatch):
  t = _tier(monkeypatch, 0)
  def broken(key): raise RuntimeError("the translator broke")
  assert t.native("auto", KEY, broken, lambda key: native.NOT_CACHED) is None
  native.wait()
  with pytest.raises(RuntimeError, match="the translator broke"): t.native("auto", KEY, broken, lambda key: native.NOT_CACHED)

def test_bad_cost_setting_is_named(monkeypatch):
  monkeypatch.setenv("MOCKGPU_CC_COST", "cheap")
  with pytest.raises(ValueError, match="MOCKGPU_CC_COST='cheap'"): native.Tier("rdna", 10)

# *** with the history: the seconds of earlier processes count ***

@pytest.fixture
def profiled(monkeypatch, tmp_path):
  """A cache directory of the test's own, the history on, and this process's seconds kept apart from the real run's."""
  isolate(monkeypatch, tmp_path)
  def earlier(seconds:float):   # what earlier processes recorded for KEY
    history.add("k", seconds)
    history.flush()
    monkeypatch.setattr(history, "_earlier", (None, {}))   # as a new process: read again
  return earlier

def _auto(monkeypatch, cost:float) -> native.Tier:
  monkeypatch.setenv("MOCKGPU_CC_COST", str(cost / native.BUILD_COST["ptx"][0]))
  return native.Tier("ptx", 0)

def test_earlier_seconds_and_this_process_together_reach_the_build(monkeypatch, profiled):
  profiled(0.375)
  t, built = _auto(monkeypatch, 0.5), []
  build = lambda key: built.append(key) or "C"
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) is None and t.earlier == 0.375
  t.ran(0.0625)   # 0.4375 of 0.5
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) is None
  native.wait()
  assert built == []
  t.ran(0.125)    # 0.5625: the lifetime's numpy seconds pass the build
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) is None
  native.wait()
  assert t.native("auto", KEY, build, lambda key: native.NOT_CACHED) == "C" and built == ["k"]
  assert history._spent == {"k": 0.1875}   # this process's seconds, for the processes after it

def test_a_kernel_that_paid_in_earlier_processes_builds_at_its_first_dispatch(monkeypatch, profiled):
  profiled(0.25)
  profiled(0.25)
  assert history.earlier("k") == (0.5, 2)
  t = _auto(monkeypatch, 0.5)
  assert t.native("auto", KEY, lambda key: "C", lambda key: native.NOT_CACHED) is None   # numpy runs the first
  native.wait()
  assert t.native("auto", KEY, lambda key: pytest.fail("built twice"), lambda key: native.NOT_CACHED) == "C"

def test_history_off_counts_this_process_only(monkeypatch, profiled):
  profiled(10.0)
  monkeypatch.setenv("MOCKGPU_CC_HISTORY", "0")
  t = _auto(monkeypatch, 0.5)
  assert t.native("auto", KEY, lambda key: pytest.fail("built"), lambda key: native.NOT_CACHED) is None
  t.ran(0.25)
  assert t.earlier == 0.0 and history._spent == {}

def test_a_kernel_taken_from_the_index_records_no_seconds(monkeypatch, profiled):
  t = _auto(monkeypatch, 0.5)
  assert t.native("auto", KEY, lambda key: pytest.fail("built"), lambda key: "C") == "C"
  t.ran(0.25)
  assert history._spent == {}
