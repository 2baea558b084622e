/* Shared by every native translation (RDNA and PTX): float and integer conversions and the float helpers that
 * give the same bits as the numpy paths. Pure functions: each prelude includes this text first. */
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <setjmp.h>

typedef struct { uint64_t va, size, host; } Map;   /* one mapping of an address space, sorted by va */
enum { DONE = 0, FAULT = 1, BUDGET = 2, UNSUPPORTED = 3 };
#ifdef MOCKGPU_STENCIL_STOP   /* the stencil tier's libraries share one (compiler/rdna/backends/stencil.py) */
extern __thread jmp_buf mockgpu_stencil_stop;
#define stop mockgpu_stencil_stop
#else
static __thread jmp_buf stop;
#endif

static inline float F32(uint32_t x) { float f; memcpy(&f, &x, 4); return f; }
static inline uint32_t U32F(float f) { uint32_t x; memcpy(&x, &f, 4); return x; }
static inline double F64(uint64_t x) { double f; memcpy(&f, &x, 8); return f; }
static inline uint64_t U64F(double f) { uint64_t x; memcpy(&x, &f, 8); return x; }

/* *** float helpers: NaN results are the ones numpy produces on x86 (the first NaN operand, quieted; else the
 * default NaN), whatever operand order the C compiler picks *** */

static inline float quiet32(float x) { return F32(U32F(x) | 0x400000u); }
static inline double quiet64(double x) { return F64(U64F(x) | 0x8000000000000ull); }
static inline float nan32(float r, float a, float b) { return r == r ? r : a != a ? quiet32(a) : b != b ? quiet32(b) : r; }
static inline double nan64(double r, double a, double b) { return r == r ? r : a != a ? quiet64(a) : b != b ? quiet64(b) : r; }
static inline float add32(float a, float b) { return nan32(a + b, a, b); }
static inline float sub32(float a, float b) { return nan32(a - b, a, b); }
static inline float mul32(float a, float b) { return nan32(a * b, a, b); }
static inline double add64(double a, double b) { return nan64(a + b, a, b); }
static inline double mul64(double a, double b) { return nan64(a * b, a, b); }
/* the NaN of a*b+c as the float64 emulation (runtime._fma_odd) and the native ufunc produce it */
__attribute__((cold, noinline)) static float fma_nan32(float x, float y, float z) {
  if (x != x) return quiet32(x);
  if (y != y) return quiet32(y);
  volatile double p = (double)x * (double)y;
  if (p != p) return (float)p;
  if (z != z) return quiet32(z);
  volatile double s = p + (double)z;
  return (float)s;
}
static inline float fma32(float a, float b, float c) { float r = fmaf(a, b, c); return r == r ? r : fma_nan32(a, b, c); }
/* v_max/v_min (IEEE mode): a NaN operand yields the other one; +0 > -0 (runtime.fmax/fmin over np.fmax/np.fmin) */
static inline float fmax32(float a, float b) {
  float r = (a >= b || b != b) ? a : b;
  return (r == 0 && a == 0 && b == 0) ? (signbit(a) ? b : a) : r;
}
static inline float fmin32(float a, float b) {
  float r = (a <= b || b != b) ? a : b;
  return (r == 0 && a == 0 && b == 0) ? (signbit(a) ? a : b) : r;
}
static inline double fmax64(double a, double b) {
  double r = (a >= b || b != b) ? a : b;
  return (r == 0 && a == 0 && b == 0) ? (signbit(a) ? b : a) : r;
}
static inline double fmin64(double a, double b) {
  double r = (a <= b || b != b) ? a : b;
  return (r == 0 && a == 0 && b == 0) ? (signbit(a) ? a : b) : r;
}

/* an invalid operation on a number gives the hardware's default NaN, +qNaN, where x86 gives one with the sign set;
 * rounding functions pass a signalling NaN through where numpy quiets it */
static inline float dnan32(float a, double r) { return (r != r && a == a) ? F32(0x7fc00000u) : (float)r; }
static inline float log2_32(float a) { return dnan32(a, log2((double)a)); }
static inline float sqrt32(float a) { return dnan32(a, sqrt((double)a)); }
static inline float rsq32(float a) { return dnan32(a, 1.0 / sqrt((double)a)); }
static inline float floor32(float a) { return a != a ? quiet32(a) : floorf(a); }
static inline float ceil32(float a) { return a != a ? quiet32(a) : ceilf(a); }
static inline float trunc32(float a) { return a != a ? quiet32(a) : truncf(a); }
static inline float rint32(float a) { return a != a ? quiet32(a) : rintf(a); }
static inline float ftz32(float x) { return fabsf(x) < 1.17549435082228750797e-38f ? copysignf(0.0f, x) : x; }
static inline float clamp01_32(float x) { return x > 0 ? (x < 1.0f ? x : 1.0f) : 0.0f; }
static inline double clamp01_64(double x) { return x > 0 ? (x < 1.0 ? x : 1.0) : 0.0; }
/* a NaN quieted (ldexpf(x, 0) may be folded to x, leaving a signalling NaN signalling: numpy's ldexp quiets it) */
static inline float ldexp32(float a, int32_t e) { return a != a ? quiet32(a) : ldexpf(a, e < -1100 ? -1100 : e > 1100 ? 1100 : e); }
/* float -> integer: truncate toward zero, saturate, NaN -> 0 */
static inline int64_t cvt_int(double x, double lo, double hi) {
  if (x != x) return 0;
  x = trunc(x);
  return (int64_t)(x < lo ? lo : x > hi ? hi : x);
}

static inline uint32_t brev32(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
static inline uint64_t brev64(uint64_t x) { return ((uint64_t)brev32((uint32_t)x) << 32) | brev32((uint32_t)(x >> 32)); }
