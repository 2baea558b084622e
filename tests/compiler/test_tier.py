"""compiler/native.py's Tier: when a kernel's C build pays (ski rental over the numpy path's seconds), built in the
background, and found again through the artifact index."""
from __future__ import annotations
import pytest
from mockgpu.compiler import native

def _tier(monkeypatch, cost:float) -> native.Tier:
  monkeypatch.setenv("MOCKGPU_CC_COST", str(cost / sum(native.BUILD_COST["ptx"][:1])))  # an estimate of `cost` seconds
  return native.Tier("ptx", 0)

def test_numpy_until_the_build_would_have_paid(monkeypatch):
  t, built = _tier(monkeypatch, 0.5), []
  build = lambda: built.append(1) or "C"
  t.ran(0.3)
  assert t.native("auto", build, lambda: native.NOT_CACHED) is None
  native.wait()
  assert built == []
  t.ran(0.3)  # 0.6 s on numpy: more than the build
  assert t.native("auto", build, lambda: native.NOT_CACHED) is None  # started in the background; numpy runs this one
  native.wait()
  assert t.native("auto", build, lambda: native.NOT_CACHED) == "C" and built == [1]
  assert t.native("auto", build, lambda: native.NOT_CACHED) == "C" and built == [1]

def test_recorded_build_taken_at_once_and_looked_up_once(monkeypatch):
  t, looked = _tier(monkeypatch, 100), []
  assert t.native("auto", lambda: pytest.fail("built"), lambda: looked.append(1) or "C") == "C"
  t2 = _tier(monkeypatch, 100)
  assert t2.native("auto", lambda: pytest.fail("built"), lambda: looked.append(1) or native.NOT_CACHED) is None
  assert t2.native("auto", lambda: pytest.fail("built"), lambda: looked.append(1) or native.NOT_CACHED) is None
  assert looked == [1, 1]

def test_recorded_refusal_is_kept(monkeypatch):
  t = _tier(monkeypatch, 0)
  assert t.native("auto", lambda: pytest.fail("built"), lambda: None) is None
  t.ran(10)
  assert t.native("auto", lambda: pytest.fail("built"), lambda: None) is None

def test_mode_one_builds_now_and_waits_for_a_pending_build(monkeypatch):
  t = _tier(monkeypatch, 100)
  assert t.native("1", lambda: "C", lambda: pytest.fail("looked up")) == "C"
  t2 = _tier(monkeypatch, 0)
  assert t2.native("auto", lambda: "C", lambda: native.NOT_CACHED) is None
  assert t2.native("1", lambda: pytest.fail("built twice"), lambda: pytest.fail("looked up")) == "C"

def test_background_error_raises_in_the_dispatch_that_takes_it(monkeypatch):
  t = _tier(monkeypatch, 0)
  def broken(): raise RuntimeError("the translator broke")
  assert t.native("auto", broken, lambda: native.NOT_CACHED) is None
  native.wait()
  with pytest.raises(RuntimeError, match="the translator broke"): t.native("auto", broken, lambda: native.NOT_CACHED)

def test_bad_cost_setting_is_named(monkeypatch):
  monkeypatch.setenv("MOCKGPU_CC_COST", "cheap")
  with pytest.raises(ValueError, match="MOCKGPU_CC_COST='cheap'"): native.Tier("rdna", 10)
