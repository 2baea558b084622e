"""The C build history's tests (tests/compiler/test_history.py, test_tier.py): a cache directory of the test's own."""
from mockgpu.compiler import history

def isolate(monkeypatch, tmp_path):
  """The test's own cache directory with the history on; this process's seconds kept apart from the real run's.
  Returns the history's directory."""
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path))
  monkeypatch.setenv("MOCKGPU_CC_HISTORY", "1")
  monkeypatch.setattr(history, "_spent", {})
  monkeypatch.setattr(history, "_earlier", (None, {}))
  monkeypatch.setattr(history, "_ratios", (None, {}))
  return tmp_path / "native" / "history"
