"""Settings follow the environment as it changes within a process (tests set them with monkeypatch)."""
import os
from mockgpu import config

def test_settings_follow_environment_changes(monkeypatch):
  monkeypatch.delenv("MOCKGPU_BUDGET", raising=False)
  assert config.instruction_budget() == 2_000_000_000
  monkeypatch.setenv("MOCKGPU_BUDGET", "1234")
  assert config.instruction_budget() == 1234
  os.environ["MOCKGPU_BUDGET"] = "99"
  assert config.instruction_budget() == 99
  monkeypatch.delenv("MOCKGPU_BUDGET")
  assert config.instruction_budget() == 2_000_000_000

def test_cache_dir_off_and_default(monkeypatch):
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", "off")
  assert config.cache_dir() is None
  monkeypatch.delenv("MOCKGPU_CACHE_DIR")
  monkeypatch.setenv("XDG_CACHE_HOME", "/tmp/xdg-test")
  assert config.cache_dir() == "/tmp/xdg-test/mockgpu"

def test_native_mode_rejects_unknown_values(monkeypatch):
  import pytest
  from mockgpu.emulators.rdna import native
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "fast")
  with pytest.raises(ValueError, match="MOCKGPU_RDNA_NATIVE='fast'"): native.mode()
