/* The runtime of a kernel translated to C by cgen.py: register set-up, wave scheduling around barriers, checked
 * memory, and the float helpers that give the same bits as the numpy path (runtime.py).
 * Built with -fwrapv (integer ops wrap, as the hardware's) and without fast-math or contraction (each float operation
 * rounds as written). A fault, an exhausted instruction budget or an unsupported word stops the dispatch with a
 * longjmp back to mockgpu_run, which returns the status; the Python side raises the matching exception. */
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <setjmp.h>

typedef struct { uint64_t va, size, host; } Map;
typedef struct {
  uint32_t *s, *v; uint8_t *lds;           /* SGPRs [waves][256], VGPRs [waves][nvgpr][32], LDS [workgroups][lds_size] */
  const Map *maps; int64_t nmaps, hint;    /* the address space, sorted by va; hint: the last mapping hit */
  int64_t waves, wpg, nvgpr, lds_size;
  int64_t wg0, gx, gy, gz, bx, by, bz;     /* first workgroup of this chunk, grid and block dimensions */
  int64_t nuser, enables, comps;           /* user SGPRs; RSRC2 workgroup-ID enables (bits 0-2); TIDIG_COMP_CNT */
  uint64_t pgm;
  int64_t budget, used;                    /* wave-instructions */
  int64_t status, fault_pc, fault_size, fault_write, fault_kind;
  uint64_t fault_va;
  const uint32_t *user;                    /* [32] */
} Ctx;
enum { DONE = 0, FAULT = 1, BUDGET = 2, UNSUPPORTED = 3 };
enum { GLOBAL_SPACE = 0, LDS_SPACE = 1 };

static __thread jmp_buf stop;

#define V(r) (v + (r) * 32)
#define R64(lo, hi) (((uint64_t)(hi) << 32) | (uint64_t)(lo))

static inline float F32(uint32_t x) { float f; memcpy(&f, &x, 4); return f; }
static inline uint32_t U32F(float f) { uint32_t x; memcpy(&x, &f, 4); return x; }
static inline double F64(uint64_t x) { double f; memcpy(&f, &x, 8); return f; }
static inline uint64_t U64F(double f) { uint64_t x; memcpy(&x, &f, 8); return x; }

/* *** stopping the dispatch *** */

static void fault(Ctx *c, uint64_t va, int64_t n, int write, int64_t pc, int64_t kind) {
  c->status = FAULT; c->fault_va = va; c->fault_size = n; c->fault_write = write; c->fault_pc = pc; c->fault_kind = kind;
  longjmp(stop, 1);
}
static int64_t over_budget(Ctx *c, int64_t pc) { c->status = BUDGET; c->fault_pc = pc; longjmp(stop, 1); return -1; }
static int64_t unsupported(Ctx *c, int64_t pc, int64_t msg) {
  c->status = UNSUPPORTED; c->fault_pc = pc; c->fault_size = msg; longjmp(stop, 1); return -1;
}

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
static float fma_nan32(float x, float y, float z) {
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
/* float16 as numpy converts it: finite values round to nearest even; a NaN keeps its sign and the top 10 bits of its
 * payload, quiet or not (at least one payload bit stays set). Half values are carried as floats, which hold them
 * exactly, and every f16 operation rounds its float result once (float has more than 2*11+2 bits, so rounding a
 * float sum or product of halves again to half is the correctly rounded result). */
static inline uint16_t f2h(float x) {
  uint32_t f = U32F(x), sgn = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sgn | 0x7c00u | (((a >> 13) & 0x3ffu) ? ((a >> 13) & 0x3ffu) : 1u));
  if (a >= 0x477ff000u) return (uint16_t)(sgn | 0x7c00u);      /* 65520 and up round to infinity */
  if (a < 0x38800000u) return (uint16_t)(sgn | (uint32_t)rintf(F32(a) * 16777216.0f));  /* subnormal: units of 2^-24 */
  return (uint16_t)(sgn | ((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
}
static inline float h2f(uint16_t h) {
  uint32_t sgn = (uint32_t)(h & 0x8000u) << 16, e = h & 0x7c00u, m = h & 0x3ffu;
  if (e == 0x7c00u) return F32(sgn | 0x7f800000u | (m << 13));
  if (e == 0) { float v = (float)m * 5.9604644775390625e-08f; return sgn ? -v : v; }
  return F32(sgn | (((uint32_t)(h & 0x7fffu) + 0x1c000u) << 13));
}
static inline float r16(float x) { return h2f(f2h(x)); }

/* libm returns the default NaN (sign set) for log2 of a negative number, numpy a positive one; rounding functions
 * pass a signalling NaN through where numpy quiets it */
static inline float log2_32(float a) { double r = log2((double)a); return (r != r && a == a) ? F32(0x7fc00000u) : (float)r; }
static inline float floor32(float a) { return a != a ? quiet32(a) : floorf(a); }
static inline float ceil32(float a) { return a != a ? quiet32(a) : ceilf(a); }
static inline float trunc32(float a) { return a != a ? quiet32(a) : truncf(a); }
static inline float rint32(float a) { return a != a ? quiet32(a) : rintf(a); }
static inline float ftz32(float x) { return fabsf(x) < 1.17549435082228750797e-38f ? copysignf(0.0f, x) : x; }
static inline float clamp01_32(float x) { return x > 0 ? (x < 1.0f ? x : 1.0f) : 0.0f; }
static inline double clamp01_64(double x) { return x > 0 ? (x < 1.0 ? x : 1.0) : 0.0; }
static inline float ldexp32(float a, int32_t e) { return ldexpf(a, e < -1100 ? -1100 : e > 1100 ? 1100 : e); }
/* float -> integer: truncate toward zero, saturate, NaN -> 0 */
static inline int64_t cvt_int(double x, double lo, double hi) {
  if (x != x) return 0;
  x = trunc(x);
  return (int64_t)(x < lo ? lo : x > hi ? hi : x);
}
static inline uint32_t cmp_class32(float x, uint32_t mask) {
  uint32_t b = U32F(x), e = (b >> 23) & 0xff, m = b & 0x7fffff, neg = b >> 31, cls;
  if (e == 0xff) cls = m ? ((m >> 22) & 1 ? 1 : 0) : (neg ? 2 : 9);
  else if (e) cls = neg ? 3 : 8;
  else cls = m ? (neg ? 4 : 7) : (neg ? 5 : 6);
  return (mask >> cls) & 1;
}

/* *** integer helpers *** */

static inline int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t imin(int32_t a, int32_t b) { return a < b ? a : b; }
static inline uint32_t umax(uint32_t a, uint32_t b) { return a > b ? a : b; }
static inline uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline int64_t sext(uint32_t x, int bits) { return (int64_t)((uint64_t)x << (64 - bits)) >> (64 - bits); }
static inline uint32_t bfe(uint32_t x, uint32_t off, uint32_t width, int sign) {
  off &= 31; width &= 31;
  if (!width) return 0;
  int64_t r = ((int64_t)x >> off) & (((int64_t)1 << width) - 1);
  if (sign && (r >> (width - 1)) & 1) r -= (int64_t)1 << width;
  return (uint32_t)r;
}
static inline uint32_t clz32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 0xffffffffu; }
static inline uint32_t ctz32(uint32_t x) { return x ? (uint32_t)__builtin_ctz(x) : 0xffffffffu; }
static inline uint32_t cls32(uint32_t x) { return (x == 0 || x == 0xffffffffu) ? 0xffffffffu : clz32(x >> 31 ? ~x : x); }
static inline uint32_t brev32(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
static inline uint64_t mad_u64_u32(uint32_t a, uint32_t b, uint64_t c, uint32_t *cy) {
  uint64_t p = (uint64_t)a * b, s = p + c;
  *cy = s < p;
  return s;
}
static inline uint64_t mad_i64_i32(uint32_t a, uint32_t b, uint64_t c, uint32_t *cy) {
  int64_t p = (int64_t)(int32_t)a * (int32_t)b, cs = (int64_t)c, s = (int64_t)((uint64_t)p + c);
  int overflow = ((p < 0) == (cs < 0)) && ((s < 0) != (p < 0));
  *cy = (uint32_t)((s < 0) ^ overflow);
  return (uint64_t)s;
}

/* *** checked memory: an element outside every mapping (global) or past the workgroup's LDS is a fault; the first
 * faulting element in lane order, then element order, is the one reported, as in the numpy path *** */

static const Map *search(Ctx *c, uint64_t va) {
  int64_t lo = 0, hi = c->nmaps;
  while (lo < hi) { int64_t mid = (lo + hi) / 2; if (c->maps[mid].va <= va) lo = mid + 1; else hi = mid; }
  if (lo == 0 || va - c->maps[lo - 1].va >= c->maps[lo - 1].size) return 0;
  c->hint = lo - 1;
  return c->maps + lo - 1;
}
/* the mapping holding va; the last one hit first (an empty table holds one mapping of size 0) */
static inline const Map *find(Ctx *c, uint64_t va) {
  const Map *m = c->maps + c->hint;
  return va - m->va < m->size ? m : search(c, va);
}
static uint8_t *gptr(Ctx *c, uint64_t va, int64_t n, int write, int64_t pc) {
  const Map *m = find(c, va);
  if (!m || (uint64_t)n > m->size - (va - m->va)) fault(c, va, n, write, pc, GLOBAL_SPACE);
  return (uint8_t *)(uintptr_t)(m->host + (va - m->va));
}
static inline void gcheck(Ctx *c, uint64_t va, int64_t esize, int64_t count, int write, int64_t pc) {
  const Map *m = find(c, va);
  if (m && (uint64_t)(esize * count) <= m->size - (va - m->va)) return;
  for (int64_t i = 0; i < count; i++) gptr(c, va + i * esize, esize, write, pc);
}
static inline void gload(Ctx *c, void *dst, uint64_t va, int64_t esize, int64_t count, int64_t pc) {
  const Map *m = find(c, va);
  if (m && (uint64_t)(esize * count) <= m->size - (va - m->va)) {
    memcpy(dst, (const void *)(uintptr_t)(m->host + (va - m->va)), esize * count);
    return;
  }
  for (int64_t i = 0; i < count; i++) memcpy((uint8_t *)dst + i * esize, gptr(c, va + i * esize, esize, 0, pc), esize);
}
static inline void gstore(Ctx *c, uint64_t va, const void *src, int64_t esize, int64_t count) {
  const Map *m = find(c, va);
  if (m && (uint64_t)(esize * count) <= m->size - (va - m->va)) {
    memcpy((void *)(uintptr_t)(m->host + (va - m->va)), src, esize * count);
    return;
  }
  for (int64_t i = 0; i < count; i++) memcpy(gptr(c, va + i * esize, esize, 1, 0), (const uint8_t *)src + i * esize, esize);
}
static inline void ldscheck(Ctx *c, uint32_t addr, int64_t esize, int64_t count, int write, int64_t pc) {
  for (int64_t i = 0; i < count; i++)
    if ((int64_t)addr + i * esize + esize > c->lds_size) fault(c, (int64_t)addr + i * esize, esize, write, pc, LDS_SPACE);
}
static inline void ldsload(const uint8_t *lds, void *dst, uint32_t addr, int64_t esize, int64_t count) { memcpy(dst, lds + addr, esize * count); }
static inline void ldsstore(uint8_t *lds, uint32_t addr, const void *src, int64_t esize, int64_t count) { memcpy(lds + addr, src, esize * count); }

/* *** dispatch *** */

/* user SGPRs, workgroup-ID SGPRs, packed work-item IDs in v0 and the live-lane EXEC, as the SPI sets them up */
static void init(Ctx *c) {
  memset(c->s, 0, (size_t)c->waves * 256 * 4);
  memset(c->v, 0, (size_t)c->waves * c->nvgpr * 32 * 4);
  memset(c->lds, 0, (size_t)(c->waves / c->wpg) * c->lds_size);
  int64_t threads = c->bx * c->by * c->bz;
  for (int64_t w = 0; w < c->waves; w++) {
    uint32_t *s = c->s + w * 256, *v0 = c->v + w * c->nvgpr * 32, ex = 0;
    int64_t g = c->wg0 + w / c->wpg, k = c->nuser;
    for (int64_t i = 0; i < c->nuser; i++) s[i] = c->user[i];
    if (c->enables & 1) s[k++] = (uint32_t)(g % c->gx);
    if (c->enables & 2) s[k++] = (uint32_t)((g / c->gx) % c->gy);
    if (c->enables & 4) s[k++] = (uint32_t)(g / (c->gx * c->gy));
    int64_t t = (w % c->wpg) * 32, x = t % c->bx, y = (t / c->bx) % c->by, z = t / (c->bx * c->by);
    for (int l = 0; l < 32; l++, t++) {  /* the work-item ID counts up x, then y, then z: no division per lane */
      v0[l] = (uint32_t)(x | (c->comps >= 1 ? y << 10 : 0) | (c->comps >= 2 ? z << 20 : 0));
      if (t < threads) ex |= 1u << l;
      if (++x == c->bx) { x = 0; if (++y == c->by) { y = 0; z++; } }
    }
    s[126] = ex;
  }
}

static int64_t wave(Ctx *c, uint32_t *s, uint32_t *v, uint8_t *lds, int64_t b);

/* Each workgroup's waves run in turn, each until s_barrier or s_endpgm; once all have, the barrier releases them. */
int64_t mockgpu_run(Ctx *c) {
  if (setjmp(stop)) return c->status;
  c->status = DONE;
  init(c);
  int64_t pcs[32];
  for (int64_t g = 0; g < c->waves / c->wpg; g++) {
    for (int64_t i = 0; i < c->wpg; i++) pcs[i] = 0;
    for (int live = 1; live;) {
      live = 0;
      for (int64_t i = 0; i < c->wpg; i++) {
        if (pcs[i] < 0) continue;
        int64_t w = g * c->wpg + i;
        pcs[i] = wave(c, c->s + w * 256, c->v + w * c->nvgpr * 32, c->lds + g * c->lds_size, pcs[i]);
        live |= pcs[i] >= 0;
      }
    }
  }
  return DONE;
}
