/* The runtime of a PTX kernel translated to C by backends/c.py: one thread at a time, CTA by CTA, with the checked memory
 * and float helpers shared with the RDNA translation (native_common.c, native_memory.c).
 * The translation defines NSAVE (registers kept across a barrier), BARRIERS (whether the kernel has any) and the
 * thread function before this text's scheduler. Built with -fwrapv and without fast-math or contraction. A fault or an
 * exhausted instruction budget stops the launch with a longjmp back to mockgpu_run, which returns the status. */
#include "native_common.c"

typedef struct {
  const Map *maps; int64_t nmaps, hint;    /* the device's address space, sorted by va; hint: the last mapping hit */
  uint8_t *shared; int64_t shared_size;    /* one CTA's shared memory (zeroed for each CTA, as the numpy path's) */
  uint8_t *local; int64_t local_size;      /* the local memory of each thread of a CTA: [threads][local_size], zeroed too */
  const uint8_t *params; int64_t nparams;
  int64_t gx, gy, gz, bx, by, bz;          /* grid and block dimensions */
  int64_t cta0, nctas;                     /* the CTAs of this call */
  int64_t budget, used;                    /* thread-instructions */
  uint64_t *save; int64_t *resume;         /* per thread of a CTA: registers across a barrier, the block to resume at */
  int64_t *hints;                          /* per global load/store of the kernel: the mapping it hit last */
  int64_t status, fault_pc, fault_size, fault_write, fault_kind;
  uint64_t fault_va;
} Ctx;
enum { GLOBAL_SPACE = 0, SHARED_SPACE = 1, PARAM_SPACE = 2, LOCAL_SPACE = 3, CONST_SPACE = 4 };
#define LOW_BITS 0x00FFFFFFFFFFFFFFull   /* a window address without its window tag (runtime.py) */
#define CONST_WINDOW 0xFB00000000000000ull  /* module-scope .const variables: mapped (read-only) with the .global ones */

#include "native_memory.c"

/* *** shared and local memory and parameters: offsets past the CTA's (thread's) window or the parameter block are
 * faults *** */

static inline uint8_t *wptr(Ctx *c, uint8_t *base, int64_t size, int64_t space, uint64_t a, int64_t n, int write, int64_t pc) {
  a &= LOW_BITS;
  if (a + (uint64_t)n > (uint64_t)size) fault(c, a, n, write, pc, space);
  return base + a;
}
#define SPTR(a, n, w, pc) wptr(c, c->shared, c->shared_size, SHARED_SPACE, a, n, w, pc)
#define LPTR(a, n, w, pc) wptr(c, lm, c->local_size, LOCAL_SPACE, a, n, w, pc)
/* global accesses look their mapping up from the one their instruction hit last (a kernel reading one buffer and
 * writing another would make a single shared hint miss on every access); a miss of every mapping takes gload/gstore's
 * path, which faults at the first bad element */
static inline const Map *findh(Ctx *c, uint64_t va, int64_t *h) {
  const Map *m = c->maps + *h;
  if (va - m->va < m->size) return m;
  if ((m = search(c, va))) *h = m - c->maps;
  return m;
}
static inline void gget(Ctx *c, void *dst, uint64_t va, int64_t esize, int64_t count, int64_t pc, int64_t *h) {
  const Map *m = findh(c, va, h);
  if (m && (uint64_t)(esize * count) <= m->size - (va - m->va)) memcpy(dst, (const void *)(uintptr_t)(m->host + (va - m->va)), esize * count);
  else gload(c, dst, va, esize, count, pc);
}
/* a global store: the module's .const window is read-only */
static inline void gput(Ctx *c, uint64_t va, const void *src, int64_t esize, int64_t count, int64_t pc, int64_t *h) {
  if ((va >> 56) == (CONST_WINDOW >> 56)) fault(c, va, esize * count, 1, pc, CONST_SPACE);
  const Map *m = findh(c, va, h);
  if (m && (uint64_t)(esize * count) <= m->size - (va - m->va)) memcpy((void *)(uintptr_t)(m->host + (va - m->va)), src, esize * count);
  else { gcheck(c, va, esize, count, 1, pc); gstore(c, va, src, esize, count); }
}
static inline void pload(Ctx *c, void *dst, int64_t off, int64_t n, int64_t pc) {
  if (off + n > c->nparams) fault(c, off, n, 0, pc, PARAM_SPACE);
  memcpy(dst, c->params + off, n);
}

/* *** arithmetic as the numpy path computes it (emulators/ptx/numerics.py, bitops.py) *** */

static inline float ftz_f32(float x) { return fabsf(x) < 1.17549435082228750797e-38f ? x * 0.0f : x; }
/* min/max: a NaN operand yields the other (two NaNs: the first, as numpy's fmax/fmin); a zero result is -0 when (min)
   either or (max) both operands are negative */
#define MINMAX(T, N, Z) \
  static inline T pmax##N(T a, T b) { \
    T r = b != b ? a : a != a ? b : (a >= b ? a : b); \
    return r == 0 ? ((signbit(a) && signbit(b)) ? -Z : Z) : r; \
  } \
  static inline T pmin##N(T a, T b) { \
    T r = b != b ? a : a != a ? b : (a <= b ? a : b); \
    return r == 0 ? ((signbit(a) || signbit(b)) ? -Z : Z) : r; \
  }
MINMAX(float, 32, 0.0f)
MINMAX(double, 64, 0.0)
/* .NaN: a NaN operand gives the default NaN */
static inline float pmax32n(float a, float b) { return (a != a || b != b) ? F32(0x7fc00000u) : pmax32(a, b); }
static inline float pmin32n(float a, float b) { return (a != a || b != b) ? F32(0x7fc00000u) : pmin32(a, b); }
/* cvt.rni/rzi/rmi/rpi to an integer: NaN -> 0, saturated at the type's range (hi given as the double it rounds to) */
static inline int64_t f2s(double r, double lo, double hi, int64_t ilo, int64_t ihi) {
  return r != r ? 0 : r >= hi ? ihi : r <= lo ? ilo : (int64_t)r;
}
static inline uint64_t f2u(double r, double hi, uint64_t ihi) { return r != r ? 0 : r >= hi ? ihi : r <= 0 ? 0 : (uint64_t)r; }
static inline uint16_t h_add(uint16_t a, uint16_t b) { return f2h(h2f(a) + h2f(b)); }  /* exact in float, rounded once */
static inline uint16_t h_sub(uint16_t a, uint16_t b) { return f2h(h2f(a) - h2f(b)); }
static inline uint16_t h_mul(uint16_t a, uint16_t b) { return f2h(h2f(a) * h2f(b)); }
static inline uint16_t h_max(uint16_t a, uint16_t b) { return f2h(pmax32(h2f(a), h2f(b))); }
static inline uint16_t h_min(uint16_t a, uint16_t b) { return f2h(pmin32(h2f(a), h2f(b))); }
static inline float tanh_32(float x) { return x != x ? F32(0x7fc00000u) : (float)tanh((double)x); }  /* numpy: the default NaN */
static inline float h2f_q(uint16_t h) { float r = h2f(h); return r != r ? quiet32(r) : r; }   /* through float64, as numpy */
/* bfe/bfi (bitops.bfe, bfi): position and length taken mod 256, clamped to the width */
static inline uint64_t bfe_p(uint64_t a, uint32_t pos, uint32_t len, uint64_t nbits, int sign) {
  uint64_t p = pos & 0xff, l = len & 0xff, msb = nbits - 1, room = p > msb ? 0 : nbits - p;
  uint64_t keep = l < room ? l : room, mask = keep >= 64 ? ~0ull : (1ull << keep) - 1, v = (p > msb ? 0 : a >> p) & mask;
  if (sign && l && (a >> (p + l - 1 < msb ? p + l - 1 : msb)) & 1) v |= ~mask;
  return nbits == 64 ? v : v & 0xffffffffull;
}
static inline uint64_t bfi_p(uint64_t f, uint64_t b, uint32_t pos, uint32_t len, uint64_t nbits) {
  uint64_t p = pos & 0xff, l = len & 0xff, room = p >= nbits ? 0 : nbits - p;
  if (l > room) l = room;
  uint64_t mask = l >= 64 ? ~0ull : (1ull << l) - 1, sh = p < 63 ? p : 63;
  uint64_t out = l == 0 ? b : (b & ~(mask << sh)) | ((f & mask) << sh);
  return nbits == 64 ? out : out & 0xffffffffull;
}
static inline uint64_t brev64(uint64_t x) { return ((uint64_t)brev32((uint32_t)x) << 32) | brev32((uint32_t)(x >> 32)); }
/* prmt.b32 in its default mode: a selector nibble per result byte picks one of the bytes {b, a}, bit 3 its sign */
static inline uint32_t prmt_p(uint32_t a, uint32_t b, uint32_t c) {
  uint64_t x = ((uint64_t)b << 32) | a;
  uint32_t out = 0;
  for (int i = 0; i < 4; i++) {
    uint32_t sel = (c >> (4 * i)) & 0xf, v = (uint32_t)(x >> ((sel & 7) * 8)) & 0xff;
    if (sel & 8) v = (v >> 7) ? 0xff : 0;
    out |= v << (8 * i);
  }
  return out;
}
/* fp8 (numerics.to_fp8, fp8_to_f16): p significand bits, emin the least normal exponent, mx the largest finite value.
 * To fp8: round to nearest even, saturate (infinities too), NaN -> 0x7f with its sign; relu: negative (-0 too) -> +0,
 * NaN -> 0x7f. The code is linear in the rounded ulp count across a carry into the next binade. */
static inline uint32_t to_fp8(double x, int p, int emin, double mx, int relu) {
  uint32_t neg = signbit(x) ? 0x80u : 0u;
  if (x != x) return relu ? 0x7fu : 0x7fu | neg;
  if (relu && neg) return 0;
  double a = fabs(x) < mx ? fabs(x) : mx;
  int k = 0, e = emin;
  if (a != 0) { frexp(a, &k); if (k - 1 > emin) e = k - 1; }
  int64_t r = (int64_t)rint(ldexp(a, (p - 1) - e));
  return (uint32_t)((((int64_t)(e - emin) << (p - 1)) + r) & 0x7f) | neg;
}
/* to float16 bits, exactly; NaN -> 0x7fff; relu: negative (-0 too) -> +0 */
static inline uint32_t fp8_to_h(uint32_t b, int p, int emin, int e4m3, int relu) {
  uint32_t mag = b & 0x7f, neg = (b >> 7) & 1;
  if (e4m3 ? mag == 0x7f : mag > 0x7c) return 0x7fff;
  if (relu && neg) return 0;
  if (!e4m3 && mag == 0x7c) return neg ? 0xfc00u : 0x7c00u;
  int ef = (int)(mag >> (p - 1)), m = (int)(mag & ((1u << (p - 1)) - 1));
  double v = ldexp((double)(ef ? m + (1 << (p - 1)) : m), (ef ? ef : 1) + emin - 1 - (p - 1));
  return (uint32_t)f2h((float)v) | (neg << 15);
}
static inline uint16_t fp8x2_f32(float hi, float lo, int p, int emin, double mx, int relu) {
  return (uint16_t)((to_fp8((double)hi, p, emin, mx, relu) << 8) | to_fp8((double)lo, p, emin, mx, relu));
}
static inline uint16_t fp8x2_h2(uint32_t x, int p, int emin, double mx, int relu) {
  return fp8x2_f32(h2f((uint16_t)(x >> 16)), h2f((uint16_t)x), p, emin, mx, relu);
}
static inline uint32_t h2_fp8x2(uint32_t x, int p, int emin, int e4m3, int relu) {
  return fp8_to_h(x & 0xff, p, emin, e4m3, relu) | (fp8_to_h((x >> 8) & 0xff, p, emin, e4m3, relu) << 16);
}
static inline uint32_t clz32p(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 32u; }
static inline uint32_t clz64p(uint64_t x) { return x ? (uint32_t)__builtin_clzll(x) : 64u; }

/* *** the launch *** */

static int64_t thread(Ctx *c, const uint32_t *sp, uint64_t *save, uint8_t *lm, int64_t resume);

/* Every CTA in turn. Without barriers each thread runs to its end; with them, each runs to its next barrier (keeping
 * its registers), and once every live thread has arrived the CTA's threads run on to the next one. */
int64_t mockgpu_run(Ctx *c) {
  if (setjmp(stop)) return c->status;
  c->status = DONE;
  int64_t tpc = c->bx * c->by * c->bz;
  uint32_t sp[15] = {0, 0, 0, (uint32_t)c->bx, (uint32_t)c->by, (uint32_t)c->bz, 0, 0, 0,
                     (uint32_t)c->gx, (uint32_t)c->gy, (uint32_t)c->gz, 0, 0, (uint32_t)((tpc + 31) / 32)};
  for (int64_t g = c->cta0; g < c->cta0 + c->nctas; g++) {
    sp[6] = (uint32_t)(g % c->gx); sp[7] = (uint32_t)((g / c->gx) % c->gy); sp[8] = (uint32_t)(g / (c->gx * c->gy));
    memset(c->shared, 0, (size_t)c->shared_size);
    memset(c->local, 0, (size_t)(tpc * c->local_size));
    for (int64_t t = 0; t < tpc; t++) c->resume[t] = 0;
    for (int live = 1; live;) {
      live = 0;
      uint32_t x = 0, y = 0, z = 0;   /* the thread index counts up x, then y, then z */
      for (int64_t t = 0; t < tpc; t++) {
        if (c->resume[t] >= 0) {
          sp[0] = x; sp[1] = y; sp[2] = z; sp[12] = (uint32_t)(t & 31); sp[13] = (uint32_t)(t >> 5);
          c->resume[t] = thread(c, sp, c->save + t * NSAVE, c->local + t * c->local_size, c->resume[t]);
          live |= c->resume[t] >= 0;
        }
        if (++x == c->bx) { x = 0; if (++y == c->by) { y = 0; z++; } }
      }
      if (!BARRIERS) break;
    }
  }
  return DONE;
}
