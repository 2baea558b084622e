"""The PTX instruction table (compiler/ptx/semantics.py): one row per opcode, rendered by both backends. The bits
each backend computes are compared in test_ptx_native.py and the [native] variants of the ISA suites; here, what the
table promises its backends."""
import numpy as np
import pytest
from mockgpu.compiler.ptx import parser, semantics
from mockgpu.compiler.ptx.layout import entries
from mockgpu.compiler.ptx.backends import numpy as numpy_backend, c as c_backend
from support.ptx_isa import kernel, run, LOAD3

PRIMITIVES = sorted(n for n, f in vars(semantics.Backend).items() if getattr(f, "primitive", False))

def test_the_numpy_backend_renders_every_primitive():
  assert len(PRIMITIVES) > 50
  assert [n for n in PRIMITIVES if getattr(numpy_backend.Ctx, n) is getattr(semantics.Backend, n)] == []

def _c_decline(body:str) -> str:
  (fn, layout), = entries(parser.parse(kernel(LOAD3 + body + "\nst.global.b32 [%rd9], %r4;")))[0]
  with pytest.raises(c_backend.NoNative) as e: c_backend.kernel_source(fn, layout)
  return str(e.value)

@pytest.mark.parametrize("body, why", [
  ("cnot.b32 %r4, %r1;", "instruction cnot"),   # a row the C backend does not translate
  ("mov.b32 %f1, %r1;\natom.global.min.f32 %f2, [%rd9], %f1;\nmov.b32 %r4, %f2;", "atom.min.f32"),
  ("mov.b32 {%h1, %h2}, %r1;\nmin.NaN.f16 %h3, %h1, %h2;\nmov.b32 %r4, {%h3, %h3};", "min.NaN.f16"),   # a primitive it declines
  ("mov.b32 {%h1, %h2}, %r1;\ncvt.rni.f16.f16 %h3, %h1;\nmov.b32 %r4, {%h3, %h3};", "cvt.rni.f16.f16"),
  ("ld.global.acquire.gpu.b32 %r4, [%rd9];", "ld ordered against other threads (.acquire/.release/.mmio)"),
])
def test_the_c_backend_declines_by_row_or_primitive(body, why):
  assert _c_decline(body) == why
  if why.startswith("instruction "): assert semantics.ROWS[why.split()[1]].no_c

def _c_source(body:str) -> str:
  (fn, layout), = entries(parser.parse(kernel(LOAD3 + body + "\nst.global.b32 [%rd9], %r4;")))[0]
  return c_backend.kernel_source(fn, layout)[0]

@pytest.mark.parametrize("body", ["shfl.sync.bfly.b32 %r4, %r1, 1, 31, -1;", "setp.ne.u32 %p1, %r1, 0;\nbar.red.popc.u32 %r4, 0, %p1;",
                                  "bar.sync 1, 32;\nmov.u32 %r4, %r1;", "add.cc.u32 %r4, %r1, %r2;\nbar.sync 0;\naddc.u32 %r4, %r4, 0;"])
def test_threads_that_combine_take_warp_mode_and_others_do_not(body):
  """An instruction that combines threads (or a barrier form or carry the thread-at-a-time translation cannot keep)
  makes the kernel's C source warp mode's; a kernel without keeps the thread-at-a-time one."""
  assert "#define WARPS 1" in _c_source(body)
  assert "#define WARPS 1" not in _c_source("bar.sync 0;\nadd.u32 %r4, %r1, %r2;")

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_a_row_once_serves_both_paths(path, monkeypatch):
  """A row's validation is the same on both paths: min/max of three sources is refused by the table (was silently
  the first two on the numpy path)."""
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0" if path == "numpy" else "1")
  x = np.arange(32, dtype=np.uint32)
  with pytest.raises(semantics.UnsupportedInstruction, match=r"max of three operands not supported: max.s32 %r4, %r1, %r2, %r3"):
    run(kernel(LOAD3 + "max.s32 %r4, %r1, %r2, %r3;\nst.global.b32 [%rd9], %r4;"), [np.zeros(32, np.uint32), x, x, x])

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_a_cache_policy_operand_is_a_hint(path, monkeypatch):
  """ld/st .L2::cache_hint take one more operand, the cache policy (createpolicy's): read past, as the model has no
  cache (was a ValueError out of the translation)."""
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0" if path == "numpy" else "1")
  x, out = np.arange(32, dtype=np.uint32) * 7, np.zeros(32, np.uint32)
  body = "mov.b64 %rd1, 0;\nld.global.L2::cache_hint.b32 %r4, [%rd5], %rd1;\nadd.u32 %r4, %r4, 1;\nst.global.L2::cache_hint.b32 [%rd9], %r4, %rd1;"
  st = run(kernel(LOAD3 + body), [out, x, x, x])
  assert st.native == (path == "native")
  np.testing.assert_array_equal(out, x + 1)

def test_translation_is_cached():
  """A module is translated once per process (it launches nothing, so it is not run per path)."""
  from mockgpu.compiler import cache
  from mockgpu.emulators.ptx import load_module
  src = kernel("mov.u32 %r0, %tid.x;", ".param .u64 out") + "// cache probe\n"
  m1 = load_module(src)
  before = dict(cache.stats)
  assert load_module(src) is m1 and cache.stats == before   # the in-process dict answers without touching the cache
