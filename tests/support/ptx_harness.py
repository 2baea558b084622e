"""tinygrad kernels rendered to PTX by its PTXRenderer and run on the PTX executor, checked against DEV=CPU.
(Moved from tests/compiler/ptx/test_ptx_harness.py so that no test file imports another.)"""
import numpy as np
from tinygrad import Tensor
from tinygrad.helpers import Target
from tinygrad.uop.ops import Ops
from tinygrad.codegen import to_program
from tinygrad.engine.realize import resolve_params, pm_exec, ExecContext
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, launch
_renderers = {}
def renderer(kind:str):
  """'ptx': tinygrad's own PTX renderer; 'cuda': CUDA C compiled to PTX by NVRTC."""
  if kind not in _renderers:
    if kind == "ptx":
      from tinygrad.renderer.ptx import PTXRenderer
      _renderers[kind] = PTXRenderer(Target.parse("MOCK+CUDA:PTX:sm_89"))
    else:
      from tinygrad.renderer.cstyle import CUDARenderer
      _renderers[kind] = CUDARenderer(Target.parse("MOCK+CUDA:CUDA:sm_89"))
  return _renderers[kind]

def ptx_of(prg) -> str:
  return next(s.arg for s in prg.src if s.op is Ops.BINARY).decode().rstrip("\x00")

def _map(mem:AddressSpace, buf):
  base = buf._base if getattr(buf, "_base", None) is not None else buf
  base.ensure_allocated()
  va = base._buf.va_addr
  if not mem.is_mapped(va, base.nbytes): mem.map(va, base.nbytes)
  return buf.ensure_allocated()._buf.va_addr

def run(out:Tensor, kind:str, stats:list|None=None, sources:list|None=None) -> np.ndarray:
  """Realize `out` with every kernel run on the PTX executor; returns its value."""
  mem = AddressSpace("test")
  for call in out.schedule_linear().src:
    ast = call.src[0]
    if ast.op is not Ops.SINK:
      pm_exec.rewrite(call, ExecContext())   # copies stay on the CPU
      continue
    prg = to_program(ast, renderer(kind))
    text = ptx_of(prg)
    if sources is not None: sources.append(text)
    resolved = resolve_params(call, ())
    bufs = [resolved[i].buffer for i in prg.arg.globals]
    k = load_module(text).kernel(prg.arg.function_name if hasattr(prg.arg, "function_name") else _entry(text))
    vals = prg.arg.vals({})
    args = [_map(mem, b) for b in bufs] + list(vals)
    params = bytearray(k.param_size)
    for (name, size, align, off), v in zip(k.params, args): params[off:off + size] = int(v).to_bytes(size, "little", signed=v < 0)
    gs, ls = prg.arg.launch_dims({})
    st = launch(mem, k, tuple(gs), tuple(ls), bytes(params))
    if stats is not None: stats.append(st)
  return out.numpy()

def _entry(text:str) -> str:
  import re
  return re.search(r"\.entry\s+([\w$]+)", text).group(1)

def check(fn, inputs:list[np.ndarray], kind:str, rtol=0, atol=0, exact=False):
  """fn on the executor vs. fn on tinygrad's CPU backend."""
  want = fn(*[Tensor(x).realize() for x in inputs]).numpy()
  got = run(fn(*[Tensor(x).realize() for x in inputs]), kind)
  if exact or (rtol == 0 and atol == 0):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8) if got.dtype.kind == "f" else got, want.view(np.uint8) if want.dtype.kind == "f" else want)
  else: np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
  return got

def fma_ref(a:np.ndarray, b:np.ndarray, c:np.ndarray) -> np.ndarray:
  """float32 a*b+c rounded once (ties to even), from exact rational arithmetic: an independent reference for fma."""
  from fractions import Fraction
  out = []
  for x, y, z in zip(a.ravel(), b.ravel(), c.ravel()):
    v = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
    f = np.float32(float(v))
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    out.append(min(cands, key=lambda q: (abs(Fraction(float(q)) - v), int(np.array(q).view(np.uint32)) & 1)))
  return np.array(out, np.float32).reshape(a.shape)
