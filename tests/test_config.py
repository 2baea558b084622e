"""Settings follow the environment as it changes within a process (tests set them with monkeypatch)."""
import os
import pytest
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

def _readers():
  """Every MOCKGPU_* variable mockgpu's source names: the settings mockgpu reads (and replay.py's lists of them)."""
  import re
  import mockgpu
  root, names = os.path.dirname(mockgpu.__file__), set()
  for d, _, files in os.walk(root):
    for f in files:
      if f.endswith(".py"):
        with open(os.path.join(d, f)) as fh: names |= set(re.findall(r"[\"'](MOCKGPU_[A-Z0-9_]+)[\"']", fh.read()))
  return names

def test_every_setting_is_in_the_registry():
  """No MOCKGPU_* variable is read outside config.SETTINGS (a new one must be added there, with what it accepts)."""
  assert _readers() <= set(config.SETTINGS), sorted(_readers() - set(config.SETTINGS))
  assert {"MOCKGPU_COUNT", "MOCKGPU_BUDGET", "MOCKGPU_SANITIZE", "MOCKGPU_CC_TIMEOUT"} <= set(config.SETTINGS)

def test_every_setting_refuses_a_malformed_value_by_name(monkeypatch):
  import pytest
  walked = 0
  for name, s in config.SETTINGS.items():
    if s.malformed is None:
      assert s.parse("any/thing") is not None  # a free-form setting (a path) takes every value
      continue
    monkeypatch.setenv(name, s.malformed)
    if s.checked_by:  # a board name: checked where the board is selected, as UnknownBoard listing the modelled ones
      import importlib
      from mockgpu.errors import MockGPUError
      module, fn = s.checked_by.rsplit(".", 1)
      monkeypatch.delenv("DEV", raising=False)
      with pytest.raises(MockGPUError) as e: getattr(importlib.import_module(module), fn)()
      assert name in str(e.value) and repr(s.malformed) in str(e.value) and "mockgpu models" in str(e.value)
    else:
      with pytest.raises(config.SettingError) as e: config.setting(name)
      assert name in str(e.value) and repr(s.malformed) in str(e.value) and s.accepts in str(e.value)
    assert isinstance(e.value, ValueError)
    monkeypatch.delenv(name)
    assert config.setting(name) == s.default
    walked += 1
  assert walked >= 10

def test_count_abc_names_the_setting_in_a_child(tmp_path):
  """MOCKGPU_COUNT=abc ended in a bare ValueError: invalid literal for int(); the process that reads it now says which
  setting and what it takes."""
  import subprocess, sys
  env = {**os.environ, "MOCKGPU_COUNT": "abc"}
  p = subprocess.run([sys.executable, "-c", "from mockgpu import config; config.gpu_count()"], env=env, capture_output=True, text=True)
  assert p.returncode != 0 and "SettingError: MOCKGPU_COUNT='abc': expected a whole number of GPUs per vendor" in p.stderr, p.stderr
  env["MOCKGPU_COUNT"] = "2"
  p = subprocess.run([sys.executable, "-c", "from mockgpu import config; print(config.gpu_count())"], env=env, capture_output=True, text=True)
  assert p.stdout.strip() == "2"

def test_publish_writes_whole_files_and_leaves_nothing_when_the_write_fails(tmp_path):
  """config.publish: the file appears whole under its name (made with its directory); a write that raises leaves the old
  file as it was, no temporary file beside it, and its error goes on."""
  path = str(tmp_path / "sub" / "rec.json")
  config.publish(path, lambda f: f.write('{"a": 1}'))
  assert open(path).read() == '{"a": 1}' and os.listdir(tmp_path / "sub") == ["rec.json"]
  def torn(f):
    f.write('{"a": ')
    raise ValueError("no room")
  with pytest.raises(ValueError, match="no room"): config.publish(path, torn, prefix=".tmp-", suffix=".part")
  assert open(path).read() == '{"a": 1}' and os.listdir(tmp_path / "sub") == ["rec.json"]
  config.publish(path, lambda f: f.write(b"\x00\x01"), "wb")
  assert open(path, "rb").read() == b"\x00\x01"
