"""pytest plugin (entry point `mockgpu`): reports the mock's settings in the test header."""
def pytest_report_header(config):
  from mockgpu import config as mcfg, __version__
  return f"mockgpu {__version__}: {mcfg.gpu_count()} GPU(s) per vendor, NV model {mcfg.nv_model()}, cache {mcfg.cache_dir()}"
