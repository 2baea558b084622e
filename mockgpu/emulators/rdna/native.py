"""Native helpers for the translated code: small C loops, compiled once per machine by the host C compiler.

numpy has no fused multiply-add, so runtime.fma32 emulates it with about ten array passes; the C loop calls fmaf (one
correctly rounded operation, as the hardware's FMA) in one pass. NaN results are recomputed as numpy's float64 path
computes them (a*b then +c, x86 NaN rules), so both paths give the same bits for every input; the tests compare them.
The library is built into the translation cache directory (write, then rename, so parallel workers never load a torn
file). Without a compiler, or with MOCKGPU_NATIVE=0, `lib()` is None and callers use their numpy path.
"""
from __future__ import annotations
import ctypes, hashlib, os, subprocess, sys, tempfile
import numpy as np
from mockgpu import config

SOURCE = r"""
#include <math.h>
#include <string.h>
static float quiet_f32(float x) { unsigned u; memcpy(&u, &x, 4); u |= 0x400000u; memcpy(&x, &u, 4); return x; }
/* NaN results as x86 float64 math gives them for (x*y)+z: the first NaN operand, quieted; else the default NaN */
static float nan_f32(float x, float y, float z) {
  if (x != x) return quiet_f32(x);
  if (y != y) return quiet_f32(y);
  if (z != z) return quiet_f32(z);
  volatile double p = (double)x * (double)y;
  volatile double s = p + (double)z;
  return (float)s;
}
/* out[i][j] = fma(a, b, c) over a rows x cols grid; each operand has its own element strides (0 = broadcast).
   The fma pass has no branch, so it vectorises; the rare NaN results are redone in a second pass. */
#define FMA_LOOP(ATTR, NAME)                                                                                  \
ATTR static void NAME(float *out, const float *a, const float *b, const float *c, long rows, long cols,     \
                      long ar, long ac, long br, long bc, long cr, long cc) {                                \
  int nan = 0;                                                                                                \
  for (long i = 0; i < rows; i++) {                                                                           \
    const float *pa = a + i * ar, *pb = b + i * br, *pc = c + i * cr;                                         \
    float *po = out + i * cols;                                                                               \
    if (ac == 1 && bc == 1 && cc == 1)                                                                        \
      for (long j = 0; j < cols; j++) { float r = __builtin_fmaf(pa[j], pb[j], pc[j]); nan |= r != r; po[j] = r; } \
    else                                                                                                      \
      for (long j = 0; j < cols; j++) {                                                                       \
        float r = __builtin_fmaf(pa[j * ac], pb[j * bc], pc[j * cc]); nan |= r != r; po[j] = r;               \
      }                                                                                                       \
  }                                                                                                           \
  if (nan)                                                                                                    \
    for (long i = 0; i < rows; i++)                                                                           \
      for (long j = 0; j < cols; j++)                                                                         \
        if (out[i * cols + j] != out[i * cols + j])                                                           \
          out[i * cols + j] = nan_f32(a[i * ar + j * ac], b[i * br + j * bc], c[i * cr + j * cc]);            \
}
FMA_LOOP(, fma_f32_generic)
#if defined(__x86_64__)
FMA_LOOP(__attribute__((target("fma"))), fma_f32_fma)  /* one vfmadd per element instead of a libm call */
#endif
void fma_f32(float *out, const float *a, const float *b, const float *c, long rows, long cols,
             long ar, long ac, long br, long bc, long cr, long cc) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("fma")) { fma_f32_fma(out, a, b, c, rows, cols, ar, ac, br, bc, cr, cc); return; }
#endif
  fma_f32_generic(out, a, b, c, rows, cols, ar, ac, br, bc, cr, cc);
}
"""

_lib:ctypes.CDLL|None|bool = False  # False: not tried yet

def _build(path:str) -> bool:
  cc = os.environ.get("CC", "cc")
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with tempfile.TemporaryDirectory(dir=os.path.dirname(path)) as tmp:
    src, out = os.path.join(tmp, "native.c"), os.path.join(tmp, "native.so")
    with open(src, "w") as f: f.write(SOURCE)
    # no -ffast-math and no contraction: every operation must round exactly as written
    p = subprocess.run([cc, "-O3", "-ffp-contract=off", "-fno-fast-math", "-shared", "-fPIC", src, "-o", out, "-lm"],
                       capture_output=True)
    if p.returncode != 0: return False
    os.replace(out, path)
  return True

def lib() -> ctypes.CDLL|None:
  """The compiled helpers, or None when they cannot be built here (or MOCKGPU_NATIVE=0)."""
  global _lib
  if _lib is False:
    _lib = None
    if os.environ.get("MOCKGPU_NATIVE", "1") != "0":
      d = config.cache_dir() or tempfile.gettempdir()
      key = hashlib.sha256(f"{SOURCE}|{sys.platform}|{os.uname().machine}".encode()).hexdigest()[:16]
      path = os.path.join(d, "native", f"rdna-{key}.so")
      try:
        if os.path.exists(path) or _build(path):
          _lib = ctypes.CDLL(path)
          _lib.fma_f32.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long] * 8
          _lib.fma_f32.restype = None
      except (OSError, subprocess.SubprocessError): _lib = None
  return _lib

def fma_f32(a:np.ndarray, b:np.ndarray, c:np.ndarray) -> np.ndarray|None:
  """fmaf over broadcast float32 operands of at most 2 dimensions; None if the native library is not available."""
  if (L:=lib()) is None: return None
  shape = a.shape if a.shape == b.shape == c.shape else np.broadcast_shapes(a.shape, b.shape, c.shape)
  if len(shape) > 2: return None
  rows, cols = (1,) * (2 - len(shape)) + shape
  out = np.empty(shape, np.float32)
  strides = []
  for x in (a, b, c):
    st = (0,) * (2 - x.ndim) + tuple(s // 4 if n > 1 else 0 for s, n in zip(x.strides, x.shape))
    strides += [st[0], st[1]]
  L.fma_f32(out.ctypes.data, a.ctypes.data, b.ctypes.data, c.ctypes.data, rows, cols, *strides)
  return out
