"""fp8 kernels with NVRTC (the default renderer of MOCK+NV and MOCK+CUDA): NVRTC must compile against the CUDA headers
of its own release, whatever /usr/local/cuda or CUDA_PATH holds (CUDA 13's cuda_fp8.hpp does not compile with NVRTC
12). mockgpu rebinds tinygrad.runtime.support.compiler_cuda.CUDA_PATH when a MOCK interface is imported."""
import json
import pytest
from conftest import run_tinygrad
from mockgpu.compiler import toolchain

NVRTC_DEVS = ["MOCK+NV", "MOCK+CUDA"]
FP8 = ["fp8e4m3", "fp8e5m2", "fp8e4m3fnuz", "fp8e5m2fnuz"]   # every fp8 dtype tinygrad 0.14 has (dtypes.fp8s)
# exactly representable in every fp8 format, and so are (x + x) * x and x * 3
EXACT = [0.5, -1.0, 2.0, 4.0, -0.25, 0.0]
ROUNDED = [3.3, -0.1, 7.7, 0.7, 13.0]   # rounded by the cast (the same round-to-nearest-even as the CPU's)

needs_headers = pytest.mark.skipif(toolchain.cuda_headers_for((12, 9)) is None and toolchain.cuda_headers_for((12, 99)) is None,
                                   reason=toolchain.CUDA_HEADERS_HINT)
SRC = '#include <cuda_fp8.h>\nextern "C" __global__ void k(float* a, __nv_fp8_e4m3* b, __nv_fp8_e5m2* c) ' \
      '{ b[0] = (__nv_fp8_e4m3)a[0]; a[1] = (float)b[1]; c[0] = (__nv_fp8_e5m2)a[0]; a[2] = (float)c[1]; }'

FP8_CODE = """
  import json
  from tinygrad import Tensor, dtypes
  dt = getattr(dtypes, %r)
  if True:
    x, y = Tensor(%r).cast(dt).realize(), Tensor(%r).cast(dt).realize()
    print(json.dumps([x.cast(dtypes.float).tolist(), y.cast(dtypes.float).tolist(), ((x + x) * x).cast(dtypes.float).tolist(),
                      (x * 3).cast(dtypes.float).tolist(), x.cast(dt).cast(dtypes.half).cast(dt).cast(dtypes.float).tolist()]))
"""

def fp8_results(dev, name, env=None):
  return json.loads(run_tinygrad(dev, FP8_CODE % (name, EXACT, ROUNDED), env=env).stdout.splitlines()[-1])

@needs_headers
@pytest.mark.parametrize("dev", NVRTC_DEVS)
def test_nvrtc_compiles_fp8_against_matching_headers(dev):
  p = run_tinygrad(dev, f"""
    import json
    from tinygrad import Device
    from mockgpu.compiler import toolchain
    dev = Device[Device.DEFAULT]
    assert len(dev.compiler.compile({SRC!r})) > 0
    inc = [o for o in dev.compiler.compile_options if o.startswith("-I")]
    print(json.dumps([inc, toolchain.cuda_headers_version(inc[0][2:-len("/include")]), toolchain.nvrtc_version()]))
  """)
  inc, hv, nv = json.loads(p.stdout.splitlines()[-1])
  assert len(inc) == 1 and inc[0].endswith("nvidia/cuda_runtime/include") and "/usr/local/cuda" not in inc[0], p.stdout
  assert hv == nv, p.stdout   # the headers of the NVRTC's own release

@needs_headers
@pytest.mark.parametrize("dev", NVRTC_DEVS)
def test_mismatched_cuda_path_loses(dev, tmp_path):
  """A CUDA_PATH whose headers are another release's (a fake CUDA 13 with a broken cuda_fp8.hpp) is what tinygrad
  would pass as -I$CUDA_PATH/include; mockgpu's choice wins. Without mockgpu's rebinding the same compile fails."""
  inc = tmp_path / "include"
  inc.mkdir()
  (inc / "cuda.h").write_text("#define CUDA_VERSION 13000\n")
  (inc / "cuda_fp8.h").write_text('#include "cuda_fp8.hpp"\n')
  (inc / "cuda_fp8.hpp").write_text("this is not C++ ;;; }\n")
  p = run_tinygrad(dev, f"""
    from tinygrad import Device
    from tinygrad.device import CompileError
    from tinygrad.runtime.support import compiler_cuda
    dev = Device[Device.DEFAULT]
    print("bound", compiler_cuda.CUDA_PATH)
    assert len(dev.compiler.compile({SRC!r})) > 0
    compiler_cuda.CUDA_PATH = {str(tmp_path)!r}   # what tinygrad alone would use
    try: compiler_cuda.NVRTCCompiler(dev.compiler.arch).compile({SRC!r}); print("fake compiled")
    except CompileError as e: print("fake fails", "cuda_fp8.hpp" in str(e))
  """, env={"CUDA_PATH": str(tmp_path)})
  out = p.stdout.splitlines()
  assert out[0].startswith("bound ") and out[0].endswith("nvidia/cuda_runtime") and str(tmp_path) not in out[0], out
  assert out[-1] == "fake fails True", out

def test_matching_cuda_path_is_kept_and_headers_found(tmp_path):
  for ver, name in ((12090, "a"), (12040, "b"), (13000, "c")):
    (d := tmp_path / name / "nvidia" / "cuda_runtime" / "include").mkdir(parents=True)
    (d / "cuda.h").write_text(f"#define CUDA_VERSION {ver}\n")
  search = [str(tmp_path / n) for n in "cba"]
  assert toolchain.cuda_headers_version(str(tmp_path / "a" / "nvidia" / "cuda_runtime")) == (12, 9)
  assert toolchain.cuda_headers_for((12, 9), search) == str(tmp_path / "a" / "nvidia" / "cuda_runtime")
  assert toolchain.cuda_headers_for((12, 6), search) == str(tmp_path / "b" / "nvidia" / "cuda_runtime")  # newest not past it
  assert toolchain.cuda_headers_for((11, 8), search) is None

@pytest.fixture(scope="module")
def cpu_fp8():
  return {name: fp8_results("CPU", name) for name in FP8}

@needs_headers
@pytest.mark.parametrize("name", FP8)
@pytest.mark.parametrize("dev", NVRTC_DEVS + ["MOCK+NV:PTX", "MOCK+CUDA:PTX"])
def test_fp8_round_trip_and_arithmetic_match_cpu(dev, name, cpu_fp8):
  # the fnuz formats have no CUDA type: tinygrad emulates them in float32 kernels; the OCP ones are native __nv_fp8, whose
  # NVRTC kernels convert with cvt.rn.satfinite.{e4m3x2,e5m2x2}.{f32,f16x2} and cvt.rn.f16x2.{e4m3x2,e5m2x2}
  # (tests/compiler/ptx/test_ptx_fp8.py tests those bit for bit)
  assert fp8_results(dev, name) == cpu_fp8[name]
