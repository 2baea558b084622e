"""Runs a test file's function again in a child whose numpy has every dispatched SIMD target disabled
(NPY_DISABLE_CPU_FEATURES), so the baseline loops compute: a result that depends on the host's SIMD shows there."""
import json, os, subprocess, sys
import pytest
from conftest import HERE as TESTS

def dispatched() -> list[str]:
  """The SIMD targets this numpy build dispatches to."""
  try: from numpy._core._multiarray_umath import __cpu_dispatch__
  except ImportError: from numpy.core._multiarray_umath import __cpu_dispatch__   # numpy 1.x
  return list(__cpu_dispatch__)

def run_limited(test_file:str, fn:str, timeout:int=900):
  """fn() of the module test_file in the limited child: its JSON result. Skips where numpy dispatches to nothing, and
  fails if numpy kept a target on. The child imports the file from its folder and the shared modules from tests/."""
  feats = dispatched()
  if not feats: pytest.skip("this numpy build dispatches to no SIMD target")
  here, module = os.path.dirname(os.path.abspath(test_file)), os.path.basename(test_file)[:-3]
  code = (f"import json, {module} as t\nfrom numpy._core._multiarray_umath import __cpu_features__ as f\n"
          f"print(json.dumps([t.{fn}(), [k for k in {feats!r} if f.get(k)]]))")
  env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(feats), PYTHONPATH=os.pathsep.join([here, TESTS, os.environ.get("PYTHONPATH", "")]))
  p = subprocess.run([sys.executable, "-c", code], cwd=here, env=env, capture_output=True, text=True, timeout=timeout)
  assert p.returncode == 0, p.stderr[-3000:]
  child, still_on = json.loads(p.stdout.strip().splitlines()[-1])
  assert still_on == [], f"numpy kept {still_on} on"
  return child
