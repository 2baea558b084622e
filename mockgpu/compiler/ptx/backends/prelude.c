/* The runtime of a PTX kernel translated to C by backends/c.py: one thread at a time, CTA by CTA, with the checked memory
 * and float helpers shared with the RDNA translation (native_common.c, native_memory.c).
 * The translation defines NSAVE (registers kept across a barrier), BARRIERS (whether the kernel has any) and the
 * thread function before this text's scheduler. Built with -fwrapv and without fast-math or contraction. A fault or an
 * exhausted instruction budget stops the launch with a longjmp back to mockgpu_run, which returns the status. */
#include "native_common.c"
#include "native_floats.c"

typedef struct {
  const Map *maps; int64_t nmaps, hint;    /* the device's address space, sorted by va; hint: the last mapping hit */
  uint8_t *shared; int64_t shared_size;    /* one CTA's shared memory (zeroed for each CTA, as the numpy path's) */
  uint8_t *local; int64_t local_size;      /* the local memory of each thread of a CTA: [threads][local_size], zeroed too */
  const uint8_t *params; int64_t nparams;
  int64_t gx, gy, gz, bx, by, bz;          /* grid and block dimensions */
  int64_t dynamic_shared;                  /* %dynamic_smem_size */
  int64_t cta0, nctas;                     /* the CTAs of this call */
  int64_t budget, used;                    /* thread-instructions */
  int64_t warp;                            /* the board's warp size (NVBoard.warp_size), a power of two */
  uint64_t *save; int64_t *resume;         /* per thread of a CTA: registers across a barrier, the block to resume at */
  int64_t *hints;                          /* per global load/store of the kernel: the mapping it hit last */
  uint64_t *xsrc, *xres; uint8_t *act;     /* warp mode, per thread of a CTA: the operands (NSRC) and results (NRES) of
                                              an instruction that combines threads, and whether it arrived there */
  int64_t status, fault_pc, fault_size, fault_write, fault_kind;
  uint64_t fault_va;
} Ctx;
enum { TRAP = 4 };                       /* a trap instruction stopped the launch (after native_common.c's statuses) */
#ifndef WARPS
#define WARPS 0
#endif
enum { GLOBAL_SPACE = 0, SHARED_SPACE = 1, PARAM_SPACE = 2, LOCAL_SPACE = 3, CONST_SPACE = 4, MISALIGNED_ATOMIC = 5 };
#define LOW_BITS 0x00FFFFFFFFFFFFFFull   /* a window address without its window tag (runtime.py) */
/* the translation defines SHARED_WINDOW, LOCAL_WINDOW and CONST_WINDOW (layout.WINDOWS: the tags of generic addresses
 * of .shared and .local memory and of the module-scope .const variables, mapped read-only with the .global ones) */

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
/* a generic address: the tag of its window says its space (runtime.Env.ld_global/st_global); untagged, global memory */
static inline void genget(Ctx *c, uint8_t *lm, void *dst, uint64_t va, int64_t esize, int64_t count, int64_t pc, int64_t *h) {
  if (va >> 56 == SHARED_WINDOW >> 56) memcpy(dst, SPTR(va, esize * count, 0, pc), esize * count);
  else if (va >> 56 == LOCAL_WINDOW >> 56) memcpy(dst, LPTR(va, esize * count, 0, pc), esize * count);
  else gget(c, dst, va, esize, count, pc, h);
}
static inline void genput(Ctx *c, uint8_t *lm, uint64_t va, const void *src, int64_t esize, int64_t count, int64_t pc, int64_t *h) {
  if (va >> 56 == SHARED_WINDOW >> 56) memcpy(SPTR(va, esize * count, 1, pc), src, esize * count);
  else if (va >> 56 == LOCAL_WINDOW >> 56) memcpy(LPTR(va, esize * count, 1, pc), src, esize * count);
  else gput(c, va, src, esize, count, pc, h);
}
static int64_t trap_stop(Ctx *c, int64_t pc) { c->status = TRAP; c->fault_pc = pc; longjmp(stop, 1); return -1; }
static inline void pload(Ctx *c, void *dst, int64_t off, int64_t n, int64_t pc) {
  if (off + n > c->nparams) fault(c, off, n, 0, pc, PARAM_SPACE);
  memcpy(dst, c->params + off, n);
}

/* *** arithmetic as the numpy path computes it (compiler/ptx/backends/numerics.py, bitops.py) *** */

/* a NaN result -> the canonical NaN NVIDIA returns (numerics.canon) */
static inline float canon_f32(float x) { return x != x ? F32(0x7fffffffu) : x; }
static inline double canon_f64(double x) { return x != x ? F64(0x7fffffffffffffffull) : x; }
static inline uint16_t canon_f16(uint16_t x) { return (x & 0x7fffu) > 0x7c00u ? 0x7fffu : x; }
static inline uint16_t canon_bf16(uint16_t x) { return (x & 0x7fffu) > 0x7f80u ? 0x7fffu : x; }
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
/* exact in float, rounded once */
static inline uint16_t h_add(uint16_t a, uint16_t b) { return f32_to_f16_bits_rne(f16_bits_to_f32(a) + f16_bits_to_f32(b)); }
static inline uint16_t h_sub(uint16_t a, uint16_t b) { return f32_to_f16_bits_rne(f16_bits_to_f32(a) - f16_bits_to_f32(b)); }
static inline uint16_t h_mul(uint16_t a, uint16_t b) { return f32_to_f16_bits_rne(f16_bits_to_f32(a) * f16_bits_to_f32(b)); }
static inline uint16_t h_max(uint16_t a, uint16_t b) { return f32_to_f16_bits_rne(pmax32(f16_bits_to_f32(a), f16_bits_to_f32(b))); }
static inline uint16_t h_min(uint16_t a, uint16_t b) { return f32_to_f16_bits_rne(pmin32(f16_bits_to_f32(a), f16_bits_to_f32(b))); }
static inline float tanh_32(float x) { return x != x ? F32(0x7fc00000u) : (float)tanh((double)x); }  /* numpy: the default NaN */
static inline float h2f_q(uint16_t h) { float r = f16_bits_to_f32(h); return r != r ? quiet32(r) : r; }   /* through float64, as numpy */
/* *** rounding in a mode without the FPU's rounding mode (numerics.py: round_to; exact.py: op_with_error_sign, nudge64) ***
 * An operation is evaluated in double together with the sign of its exact error (TwoSum, Dekker's TwoProduct), then
 * rounded to the format in the mode, with the same double operations as the numpy path, so both give the same bits. */
enum { RN = 0, RZ = 1, RM = 2, RP = 3 };
enum { OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_FMA = 3, OP_DIV = 4, OP_SQRT = 5 };
static inline double two_sum(double a, double b, double *e) {
  double s = a + b, bb = s - a;
  *e = (a - (s - bb)) + (b - bb);
  return s;
}
static inline double two_prod(double a, double b, double *e) {
  double p = a * b, ca = a * 134217729.0, cb = b * 134217729.0;   /* Veltkamp's split at 2^27 + 1 */
  double ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
  *e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return p;
}
/* op's double result and the sign of (exact - result): 0 where the result is not finite (exact.op_with_error_sign). A NaN
 * result is the one numpy's loops give: the first NaN operand's, quieted, else the one the operation made (nan64:
 * the C compiler may swap the operands of + and * and fold a + -b into a - b, which keeps b's sign) */
static inline double exact_op(int op, double a, double b, double c, double *es) {
  double s, e, e1, pl, ph, nb = -b;
  switch (op) {
    case OP_ADD: s = nan64(two_sum(a, b, &e), a, b); break;
    case OP_SUB: s = nan64(two_sum(a, nb, &e), a, nb); break;
    case OP_MUL: s = nan64(two_prod(a, b, &e), a, b); break;
    case OP_FMA: ph = nan64(two_prod(a, b, &pl), a, b); s = nan64(two_sum(ph, c, &e1), ph, c); e = e1 + pl; break;
    case OP_DIV: s = nan64(a / b, a, b); ph = two_prod(s, b, &pl); e = ((a - ph) - pl) * (b > 0 ? 1.0 : -1.0); break;
    default: s = sqrt(a); ph = two_prod(s, s, &pl); e = (a - ph) - pl; break;
  }
  *es = !isfinite(s) ? 0.0 : e > 0 ? 1.0 : e < 0 ? -1.0 : 0.0;
  return s;
}
/* a double s whose exact value is s + tiny (of sign es) rounded to double in mode (exact.nudge64) */
static inline double nudge64(double s, double es, int mode) {
  int toward = mode == RZ ? (signbit(s) ? es > 0 : es < 0) : mode == RM ? es < 0 : mode == RP ? es > 0 : 0;
  return toward && isfinite(s) ? nextafter(s, mode == RZ ? 0.0 : mode == RM ? -INFINITY : INFINITY) : s;
}
/* s + tiny (sign es) rounded to the format of p significand bits, least normal exponent emin and largest finite
 * value mx, in mode: a double on the format's grid, or +-inf, or s itself when it is NaN (numerics.round_to) */
static inline double scaled(double a, int p, int emin, double *q) {
  int k;
  frexp(a, &k);
  *q = ldexp(1.0, (k - 1 > emin ? k - 1 : emin) - p + 1);
  return a / *q;
}
static inline double round_to(double s, double es, int p, int emin, double mx, int mode) {
  if (s != s || isinf(s)) return s;
  int neg = signbit(s) != 0;
  double a = fabs(s), ea = neg ? -es : es, q, x = scaled(a, p, emin, &q);
  /* an inexact value exactly on a grid point or midpoint moves one double ulp toward its true side */
  if (ea != 0 && x * 2 == floor(x * 2) && a > 0) x = scaled(a = nextafter(a, ea > 0 ? INFINITY : 0.0), p, emin, &q);
  double fl = floor(x), frac = x - fl;
  int up = mode == RN ? (frac > 0.5 || (frac == 0.5 && fmod(fl, 2) == 1)) : mode == RM ? neg && frac > 0 : mode == RP ? !neg && frac > 0 : 0;
  double r = (fl + up) * q;
  if (r > mx) r = (mode == RN || (mode == RM && neg) || (mode == RP && !neg)) ? INFINITY : mx;
  return neg ? -r : r;
}
/* storage of float16 and bfloat16 from a double and back (numerics.to64/from64, numpy's casts): a double NaN keeps
 * its sign and the top 10 payload bits in float16 (at least one set), and is 0x7fff in bfloat16 */
static inline double round_f64(int op, int mode, double a, double b, double c) {
  double es, s = exact_op(op, a, b, c, &es);
  return nudge64(s, es, mode);
}
static inline double round_fmt(int op, int p, int emin, double mx, int mode, double a, double b, double c) {
  double es, s = exact_op(op, a, b, c, &es);
  return round_to(s, es, p, emin, mx, mode);
}
/* float64 fma in a directed mode (exact.fma64): Boldo & Melquiond's round-to-odd, then the mode from the remaining
 * error; the lanes the error-free transformations cannot hold (products near or past float64's range, tiny products)
 * exactly: the sign of a*b + c - RN(a*b + c) from big integers (exact.round_fraction does it with rationals) */
#define BIG_LIMBS 72   /* 4608 bits: every a*b, c and result of float64 aligned to the smallest exponent */
static void big_add(uint64_t *w, unsigned __int128 m, int sh, int neg) {
  uint64_t ml = (uint64_t)m, mh = (uint64_t)(m >> 64), t[3];
  int li = sh / 64, bo = sh % 64;
  t[0] = ml << bo; t[1] = (mh << bo) | (bo ? ml >> (64 - bo) : 0); t[2] = bo ? mh >> (64 - bo) : 0;
  unsigned __int128 carry = 0;
  for (int i = li; i < BIG_LIMBS; i++) {   /* two's complement: subtracting adds the complement plus one */
    uint64_t x = i - li < 3 ? t[i - li] : 0;
    if (neg) x = ~x;
    unsigned __int128 s = (unsigned __int128)w[i] + x + (i == li ? (unsigned)neg : 0) + carry;
    w[i] = (uint64_t)s; carry = s >> 64;
    if (!neg && i - li >= 2 && !carry) break;
  }
}
static inline uint64_t mant(double d, int *e) { int k; double f = frexp(fabs(d), &k); *e = k - 53; return (uint64_t)ldexp(f, 53); }
static int fma_error_sign(double a, double b, double c, double x) {   /* sign of a*b + c - x, all finite */
  uint64_t w[BIG_LIMBS] = {0};
  int ea = 0, eb = 0, ec = 0, ex = 0;
  uint64_t ma = mant(a, &ea), mb = mant(b, &eb), mc = mant(c, &ec), mx = mant(x, &ex);
  int ep = ea + eb, e0 = 1 << 20;
  if (a != 0 && b != 0 && ep < e0) e0 = ep;
  if (c != 0 && ec < e0) e0 = ec;
  if (x != 0 && ex < e0) e0 = ex;
  if (a != 0 && b != 0) big_add(w, (unsigned __int128)ma * mb, ep - e0, (signbit(a) != 0) ^ (signbit(b) != 0));
  if (c != 0) big_add(w, mc, ec - e0, signbit(c) != 0);
  if (x != 0) big_add(w, mx, ex - e0, signbit(x) == 0);
  if (w[BIG_LIMBS - 1] >> 63) return -1;
  for (int i = 0; i < BIG_LIMBS; i++) if (w[i]) return 1;
  return 0;
}
static double fma64_exact(double a, double b, double c, int mode) {   /* exact.round_fraction(a*b + c) */
  double x = fma(a, b, c);   /* to nearest, overflow included */
  if (isinf(x)) return (mode == RN || (mode == RP && x > 0) || (mode == RM && x < 0)) ? x : copysign(1.7976931348623157e308, x);
  int s = fma_error_sign(a, b, c, x);
  if (s == 0 && x == 0) return mode == RM ? -0.0 : 0.0;
  if ((mode == RZ && ((x > 0 && s < 0) || (x < 0 && s > 0))) || (mode == RM && s < 0) || (mode == RP && s > 0))
    return nextafter(x, mode == RZ ? 0.0 : mode == RM ? -INFINITY : INFINITY);
  return x;
}
static double fma64_m(double a0, double b0, double c, int mode) {   /* exact.fma64, lane by lane */
  double a = a0, b = b0;
  int sa = fabs(a) >= 0x1p995, sb = !sa && fabs(b) >= 0x1p995;
  if (sa) { a = a * 0x1p-60; b = b * 0x1p60; } else if (sb) { a = a * 0x1p60; b = b * 0x1p-60; }
  double pl, ph = two_prod(a, b, &pl), ul, uh = two_sum(c, ph, &ul), te, t = two_sum(ul, pl, &te);
  if (te != 0 && (U64F(t) & 1) == 0 && isfinite(t)) t = nextafter(t, te > 0 ? INFINITY : -INFINITY);
  double re, r = two_sum(uh, t, &re);
  int finite = isfinite(a0) && isfinite(b0) && isfinite(c);
  if (!finite) { double p = nan64(a0 * b0, a0, b0); return nan64(p + c, p, c); }
  int big = !(fabs(ph) < 0x1p1000 && isfinite(r)), tiny = isfinite(ph) && fabs(ph) < 0x1p-900 && a0 != 0 && b0 != 0;
  if (mode != RN) { double e = isfinite(r) ? re + (ul + pl - t) : 0.0; r = nudge64(r, e > 0 ? 1.0 : e < 0 ? -1.0 : 0.0, mode); }
  int zero = a0 == 0 || b0 == 0;
  if (zero) r = a0 * b0 + c;
  if (mode == RM && r == 0) r = (zero && !((signbit(a0) != 0) ^ (signbit(b0) != 0)) && c == 0 && !signbit(c)) ? 0.0 : -0.0;
  return big || tiny ? fma64_exact(a0, b0, c, mode) : r;
}
static inline double tanh_64(double x) { return x != x ? F64(0x7ff8000000000000ull) : tanh(x); }  /* numpy: the default NaN */
static inline double sat64(double x) { return x != x ? 0.0 : x < 0 ? 0.0 : x > 1 ? 1.0 : x; }   /* np.clip keeps -0 */
static inline float sat32(float x) { return x != x ? 0.0f : x < 0 ? 0.0f : x > 1 ? 1.0f : x; }
static inline double relu64(double x) { return x != x || x < 0 ? 0.0 : x; }
static inline float relu32(float x) { return x != x || x < 0 ? 0.0f : x; }
/* an integer in double and the sign of its conversion error (numerics.int_to_float: from the 32-bit halves) */
static inline double i2d(int64_t x, int wide, int sign, double *es) {
  double s = sign ? (double)x : (double)(uint64_t)x;
  if (!wide) { *es = 0; return s; }
  double hi = sign ? (double)(x >> 32) : (double)((uint64_t)x >> 32), lo = (double)((uint64_t)x & 0xffffffffu);
  double e = (hi * 4294967296.0 - s) + lo;
  *es = e > 0 ? 1.0 : e < 0 ? -1.0 : 0.0;
  return s;
}
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
/* cvt's packed fp8 pairs (numerics.fp8x2_*): each element by native_floats.c's f64_to_fp8_satfinite, fp8_to_f16_bits */
static inline uint16_t fp8x2_f32(float hi, float lo, int p, int emin, double mx, int relu) {
  return (uint16_t)((f64_to_fp8_satfinite((double)hi, p, emin, mx, relu) << 8) | f64_to_fp8_satfinite((double)lo, p, emin, mx, relu));
}
static inline uint16_t fp8x2_h2(uint32_t x, int p, int emin, double mx, int relu) {
  return fp8x2_f32(f16_bits_to_f32((uint16_t)(x >> 16)), f16_bits_to_f32((uint16_t)x), p, emin, mx, relu);
}
static inline uint32_t h2_fp8x2(uint32_t x, int p, int emin, int e4m3, int relu) {
  return fp8_to_f16_bits(x & 0xff, p, emin, e4m3, relu) | (fp8_to_f16_bits((x >> 8) & 0xff, p, emin, e4m3, relu) << 16);
}
static inline uint32_t clz32p(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 32u; }
static inline uint32_t clz64p(uint64_t x) { return x ? (uint32_t)__builtin_clzll(x) : 64u; }

/* *** the launch *** */

static int64_t thread(Ctx *c, const uint32_t *sp, uint64_t *save, uint8_t *lm, int64_t resume);

/* the special registers of thread t of the CTA (backends/c.py SPECIAL; sp[19]: t itself) */
static inline void thread_sp(Ctx *c, uint32_t *sp, int64_t t) {
  sp[0] = (uint32_t)(t % c->bx); sp[1] = (uint32_t)((t / c->bx) % c->by); sp[2] = (uint32_t)(t / (c->bx * c->by));
  sp[12] = (uint32_t)(t & (c->warp - 1)); sp[13] = (uint32_t)(t >> __builtin_ctzll((uint64_t)c->warp)); sp[19] = (uint32_t)t;
}

#if WARPS
/* *** warp mode: instructions that combine threads (compiler/ptx/backends/collective.py's algorithms, over one warp's
 * threads t0 .. t0+n-1, or the CTA's for bar.red). A thread arrives (act) at one with its operands in xsrc; every
 * thread of the warp has its operands there too (shfl reads any lane, mma.sync every lane); each arrived thread
 * gets its results in xres. *** */
#define NSRC 16
#define NRES 4
#define PAUSED (NBLOCKS + 1)                      /* thread() returns PAUSED + k when it pauses at collective k */
#define NEXT(b) do { c->used += used; return (b); } while (0)
#define PAUSE(k) do { c->used += used; return PAUSED + (k); P##k:; } while (0)
#define XR (c->xres + (int64_t)sp[19] * NRES)     /* the thread's results */
enum { SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX };
enum { VOTE_ALL, VOTE_ANY, VOTE_UNI, VOTE_BALLOT };
enum { RED_ADD, RED_MIN, RED_MAX, RED_AND, RED_OR, RED_XOR, RED_POPC };
enum { T_F16, T_BF16, T_TF32, T_F32 };
static void coll_run(Ctx *c, int64_t k, int64_t t0, int64_t n, uint32_t *sp);
static int coll_cta_wide(int64_t k);

/* shfl.sync: the lane that mode, b (xsrc 1) and c (xsrc 2: clamp, segment mask at bits 8-12) select; out of range or
 * outside the warp, the lane's own a (xsrc 0); xres: the value and whether the selected lane was in range */
static void warp_shfl(Ctx *c, int64_t t0, int64_t n, int mode) {
  int64_t top = c->warp - 1;   /* b[4:0], c[4:0] and c[12:8] are lane indices: their bits are the warp's */
  for (int64_t l = 0; l < n; l++) {
    if (!c->act[t0 + l]) continue;
    const uint64_t *v = c->xsrc + (t0 + l) * NSRC;
    int64_t b = (int64_t)v[1] & top, cv = (int64_t)(uint32_t)v[2], seg = (cv >> 8) & top, max_lane = (l & seg) | ((cv & top) & ~seg);
    int64_t j = mode == SHFL_UP ? l - b : mode == SHFL_DOWN ? l + b : mode == SHFL_BFLY ? l ^ b : (l & seg) | (b & ~seg);
    int p = mode == SHFL_UP ? j >= max_lane : j <= max_lane;
    if (!p || j < 0 || j >= n) j = l;
    uint64_t *r = c->xres + (t0 + l) * NRES;
    r[0] = (uint32_t)c->xsrc[(t0 + j) * NSRC]; r[1] = (uint64_t)p;
  }
}
/* vote.sync and activemask over the arrived lanes' predicates (xsrc 0) */
static void warp_vote(Ctx *c, int64_t t0, int64_t n, int mode) {
  uint32_t ballot = 0;
  int any = 0, all = 1;
  for (int64_t l = 0; l < n; l++)
    if (c->act[t0 + l]) { if (c->xsrc[(t0 + l) * NSRC]) { ballot |= 1u << l; any = 1; } else all = 0; }
  uint64_t r = mode == VOTE_BALLOT ? ballot : mode == VOTE_ANY ? (uint64_t)any : mode == VOTE_ALL ? (uint64_t)all : (uint64_t)(all || !any);
  for (int64_t l = 0; l < n; l++) if (c->act[t0 + l]) c->xres[(t0 + l) * NRES] = r;
}
/* redux.sync of the arrived lanes' 32-bit values (xsrc 0): add wraps, min/max signed or not */
static void warp_redux(Ctx *c, int64_t t0, int64_t n, int op, int sign) {
  uint32_t acc = op == RED_AND ? 0xffffffffu : op == RED_MIN ? (sign ? 0x7fffffffu : 0xffffffffu) : op == RED_MAX && sign ? 0x80000000u : 0u;
  for (int64_t l = 0; l < n; l++) {
    if (!c->act[t0 + l]) continue;
    uint32_t x = (uint32_t)c->xsrc[(t0 + l) * NSRC];
    int less = sign ? (int32_t)x < (int32_t)acc : x < acc;
    switch (op) {
      case RED_ADD: acc += x; break;
      case RED_AND: acc &= x; break;
      case RED_OR: acc |= x; break;
      case RED_XOR: acc ^= x; break;
      case RED_MIN: if (less) acc = x; break;
      default: if (!less && x != acc) acc = x; break;
    }
  }
  for (int64_t l = 0; l < n; l++) if (c->act[t0 + l]) c->xres[(t0 + l) * NRES] = acc;
}
/* bar.red: popc, and, or of the arrived threads' predicates (xsrc 0) over the CTA */
static void cta_reduce(Ctx *c, int64_t t0, int64_t n, int op) {
  int64_t cnt = 0, tot = 0;
  for (int64_t l = 0; l < n; l++) if (c->act[t0 + l]) { tot++; cnt += c->xsrc[(t0 + l) * NSRC] != 0; }
  uint64_t r = op == RED_POPC ? (uint64_t)(uint32_t)cnt : op == RED_AND ? (uint64_t)(cnt == tot) : (uint64_t)(cnt > 0);
  for (int64_t l = 0; l < n; l++) if (c->act[t0 + l]) c->xres[(t0 + l) * NRES] = r;
}
/* element i of a lane's fragment registers of type t as a double, exactly (collective._frag) */
static inline double frag(const uint64_t *regs, int t, int i) {
  if (t == T_F16 || t == T_BF16) {
    uint16_t h = (uint16_t)(regs[i / 2] >> (16 * (i % 2)));
    return t == T_F16 ? f16_bits_to_f64(h) : bf16_bits_to_f64(h);
  }
  uint32_t x = (uint32_t)regs[i];
  return (double)F32(t == T_TF32 ? x & 0xffffe000u : x);   /* tf32 ignores the 13 low mantissa bits */
}
/* mma.sync m16n8kK (row.col) of a whole warp: xsrc holds each lane's na registers of A, nb of B, then C's; la, lb, lc
 * place each lane's elements (fragments.layout); D = A*B + C in float64 in fragments.multiply's order, rounded once */
static void warp_mma(Ctx *c, int64_t t0, int K, int tab, int tc, int td, int na, int nb,
                     const int16_t *la, const int16_t *lb, const int16_t *lc, int64_t msg) {
  if ((c->bx * c->by * c->bz) % c->warp) { c->status = UNSUPPORTED; c->fault_pc = msg; longjmp(stop, 1); }
  double A[16 * 16], B[16 * 8], C[16 * 8], D[16 * 8];
  int ea = K / 2, eb = K / 4;   /* a lane's elements of A (16 x K) and B (K x 8) */
  for (int l = 0; l < c->warp; l++) {
    const uint64_t *v = c->xsrc + (t0 + l) * NSRC;
    for (int i = 0; i < ea; i++) A[la[l * ea + i]] = frag(v, tab, i);
    for (int i = 0; i < eb; i++) B[lb[l * eb + i]] = frag(v + na, tab, i);
    for (int i = 0; i < 4; i++) C[lc[l * 4 + i]] = frag(v + na + nb, tc, i);
  }
  for (int m = 0; m < 16; m++) {   /* a row at a time, its 8 sums side by side (the compiler vectorizes them) */
    double s[8];
    for (int j = 0; j < 8; j++) s[j] = A[m * K] * B[j];
    for (int k = 1; k < K; k++) for (int j = 0; j < 8; j++) s[j] = s[j] + A[m * K + k] * B[k * 8 + j];
    for (int j = 0; j < 8; j++) D[m * 8 + j] = s[j] + C[m * 8 + j];
  }
  for (int i = 0; i < 16 * 8; i++) {   /* a NaN: again with the NaN numpy's operand order keeps (nan64) */
    if (D[i] == D[i]) continue;
    int m = i / 8, j = i % 8;
    double s = mul64(A[m * K], B[j]);
    for (int k = 1; k < K; k++) s = add64(s, mul64(A[m * K + k], B[k * 8 + j]));
    D[i] = add64(s, C[i]);
  }
  for (int l = 0; l < c->warp; l++) {
    if (!c->act[t0 + l]) continue;
    uint64_t *r = c->xres + (t0 + l) * NRES;
    const int16_t *p = lc + l * 4;
    if (td == T_F32) for (int i = 0; i < 4; i++) r[i] = U32F((float)D[p[i]]);
    else for (int i = 0; i < 2; i++) r[i] = (uint64_t)f64_to_f16_bits_rne(D[p[2 * i]]) | ((uint64_t)f64_to_f16_bits_rne(D[p[2 * i + 1]]) << 16);
  }
}
/* One CTA, as the numpy path schedules it: the lowest block runs next for the threads at it (min-PC), each thread up
 * to its next block; then the block's collectives in program order, each for the threads that arrived there, which
 * then run on. A barrier needs nothing more: its block runs when no thread is below it. */
static void run_cta(Ctx *c, uint32_t *sp, int64_t tpc) {
  int64_t *pc = c->resume;
  for (;;) {
    int64_t b = NBLOCKS;
    for (int64_t t = 0; t < tpc; t++) if (pc[t] < b) b = pc[t];
    if (b == NBLOCKS) return;
    for (int64_t t = 0; t < tpc; t++)
      if (pc[t] == b) { thread_sp(c, sp, t); pc[t] = thread(c, sp, c->save + t * NSAVE, c->local + t * c->local_size, b); }
    for (;;) {
      int64_t k = -1;
      for (int64_t t = 0; t < tpc; t++) if (pc[t] >= PAUSED && (k < 0 || pc[t] - PAUSED < k)) k = pc[t] - PAUSED;
      if (k < 0) break;
      for (int64_t t = 0; t < tpc; t++) c->act[t] = pc[t] == PAUSED + k;
      if (coll_cta_wide(k)) coll_run(c, k, 0, tpc, sp);
      else for (int64_t t0 = 0; t0 < tpc; t0 += c->warp) {
        int64_t n = tpc - t0 < c->warp ? tpc - t0 : c->warp, any = 0;
        for (int64_t l = 0; l < n; l++) any |= c->act[t0 + l];
        if (any) coll_run(c, k, t0, n, sp);
      }
      for (int64_t t = 0; t < tpc; t++)
        if (c->act[t]) { thread_sp(c, sp, t); pc[t] = thread(c, sp, c->save + t * NSAVE, c->local + t * c->local_size, PAUSED + k); }
    }
  }
}
#endif

/* Every CTA in turn. Without barriers each thread runs to its end; with them, each runs to its next barrier (keeping
 * its registers), and once every live thread has arrived the CTA's threads run on to the next one. */
int64_t mockgpu_run(Ctx *c) {
  if (setjmp(stop)) return c->status;
  c->status = DONE;
  int64_t tpc = c->bx * c->by * c->bz;
  /* backends/c.py SPECIAL: the thread, block and grid ids and sizes, lane, warp, shared memory sizes, SM (one) */
  uint32_t sp[20] = {0, 0, 0, (uint32_t)c->bx, (uint32_t)c->by, (uint32_t)c->bz, 0, 0, 0,
                     (uint32_t)c->gx, (uint32_t)c->gy, (uint32_t)c->gz, 0, 0, (uint32_t)((tpc + c->warp - 1) / c->warp),
                     (uint32_t)c->dynamic_shared, (uint32_t)c->shared_size, 0, 1, 0};
  for (int64_t g = c->cta0; g < c->cta0 + c->nctas; g++) {
    sp[6] = (uint32_t)(g % c->gx); sp[7] = (uint32_t)((g / c->gx) % c->gy); sp[8] = (uint32_t)(g / (c->gx * c->gy));
    memset(c->shared, 0, (size_t)c->shared_size);
    memset(c->local, 0, (size_t)(tpc * c->local_size));
    for (int64_t t = 0; t < tpc; t++) c->resume[t] = 0;
#if WARPS
    memset(c->save, 0, (size_t)(tpc * NSAVE * 8));   /* every register starts at 0, as the numpy path's */
    run_cta(c, sp, tpc);
    continue;
#endif
    for (int live = 1; live;) {
      live = 0;
      uint32_t x = 0, y = 0, z = 0;   /* the thread index counts up x, then y, then z */
      for (int64_t t = 0; t < tpc; t++) {
        if (c->resume[t] >= 0) {
          sp[0] = x; sp[1] = y; sp[2] = z; sp[12] = (uint32_t)(t & (c->warp - 1)); sp[13] = (uint32_t)(t >> __builtin_ctzll((uint64_t)c->warp));
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
