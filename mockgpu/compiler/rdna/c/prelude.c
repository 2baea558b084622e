/* The runtime of a kernel translated to C by backends/c.py: register set-up, wave scheduling around barriers, checked
 * memory, and the float helpers that give the same bits as the numpy path (backends/numpy_runtime.py).
 * Built with -fwrapv (integer ops wrap, as the hardware's) and without fast-math or contraction (each float operation
 * rounds as written). A fault, an exhausted instruction budget or an unsupported word stops the dispatch with a
 * longjmp back to mockgpu_run, which returns the status; the Python side raises the matching exception.
 * The kernel's source defines WAVE (32 or 64 lanes) before this text: a lane mask is a lanes_t, EXEC and VCC are SGPR
 * pairs in wave64 (MASK reads one, SET_MASK writes one). */
#include "native_common.c"
#include "native_floats.c"
#if WAVE == 64
typedef uint64_t lanes_t;
#define MASK(r) R64(s[r], s[(r) + 1])
#define SET_MASK(r, x) do { lanes_t m_ = (x); s[r] = (uint32_t)m_; s[(r) + 1] = (uint32_t)(m_ >> 32); } while (0)
#define FIRST_LANE(x) __builtin_ctzll(x)
#else
typedef uint32_t lanes_t;
#define MASK(r) s[r]
#define SET_MASK(r, x) (s[r] = (x))
#define FIRST_LANE(x) __builtin_ctz(x)
#endif
#define ALL_LANES ((lanes_t)~(lanes_t)0)
/* The active lanes (EXEC in ex) of one instruction's body, l the lane: with every lane on (the common case) a loop
 * without a per-lane test and with a constant count, so the compiler can vectorize it; wave64 also has one without a
 * test for a prefix of lanes (a workgroup smaller than the wave: tinygrad's 32-thread workgroups on the CDNA boards). */
#if WAVE == 64
#define LANES(...) if (ex == ALL_LANES) for (int l = 0; l < WAVE; l++) { __VA_ARGS__ } \
  else if ((lanes_t)(ex & (ex + 1)) == 0) for (int l = 0, n_ = FIRST_LANE(~ex); l < n_; l++) { __VA_ARGS__ } \
  else for (int l = 0; l < WAVE; l++) { if (!(ex >> l & 1)) continue; __VA_ARGS__ }
#else
#define LANES(...) if (ex == ALL_LANES) for (int l = 0; l < WAVE; l++) { __VA_ARGS__ } \
  else for (int l = 0; l < WAVE; l++) { if (!(ex >> l & 1)) continue; __VA_ARGS__ }
#endif
#define MAX_WAVES_PER_GROUP 32   /* emulators/rdna/native.py MAX_WAVES_PER_GROUP */

typedef struct {
  uint32_t *s, *v; uint8_t *lds;           /* SGPRs [waves][256], VGPRs [waves][nvgpr][WAVE], LDS [workgroups][lds_size] */
  const Map *maps; int64_t nmaps, hint;    /* the address space, sorted by va; hint: the last mapping hit */
  int64_t waves, wpg, nvgpr, lds_size;
  int64_t wg0, gx, gy, gz, bx, by, bz;     /* first workgroup of this chunk, grid and block dimensions */
  int64_t nuser, enables, comps;           /* user SGPRs; RSRC2 workgroup-ID enables (bits 0-2); TIDIG_COMP_CNT */
  int64_t ttmp_x, ttmp_yz;                 /* gfx12: the ttmp registers of the workgroup ID x and y | z << 16, or -1 */
  uint64_t pgm;
  int64_t budget, used;                    /* wave-instructions */
  int64_t status, fault_pc, fault_size, fault_write, fault_kind;
  uint64_t fault_va;
  const uint32_t *user;                    /* [32] */
  const int64_t *wgs;                      /* the linear IDs of the workgroups to run (an XCC's share) */
  int64_t cur_wave;                        /* the wave (index in the chunk) running: what a fault or budget stop names */
  int64_t vgprs;                           /* the VGPRs a wave has: the ones an M0-relative index may reach */
  uint8_t *scratch;                        /* private memory: [waves][WAVE][private_size], zero at each run */
  int64_t private_size, fault_off;         /* bytes per lane; a scratch fault's offset */
  uint64_t scratch_base;                   /* COMPUTE_DISPATCH_SCRATCH_BASE: where a scratch fault's address starts */
  const int64_t *prog, *params, *blocks;   /* the stencil tier's kernel (backends/stencil.py); unused by a C kernel */
} Ctx;
enum { GLOBAL_SPACE = 0, LDS_SPACE = 1, MISALIGNED = 2, SCRATCH_SPACE = 4 };  /* a fault's kind: its space, | MISALIGNED */

#define V(r) (v + (r) * WAVE)
#define R64(lo, hi) (((uint64_t)(hi) << 32) | (uint64_t)(lo))

/* *** integer helpers: the C forms of the semantics language's helpers (backends/c.py C_CALLS) *** */

static inline int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t imin(int32_t a, int32_t b) { return a < b ? a : b; }
static inline uint32_t umax(uint32_t a, uint32_t b) { return a > b ? a : b; }
static inline uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline int64_t sext(uint32_t x, int bits) { return (int64_t)((uint64_t)x << (64 - bits)) >> (64 - bits); }
/* v_bfe (width S2[4:0]) and s_bfe (width S1[22:16]: wmask 127), as runtime.bfe: the signed forms shift S0.i32 */
static inline uint32_t bfe_w(uint32_t x, uint32_t off, uint32_t width, int sign, uint32_t wmask) {
  off &= 31; width &= wmask;
  if (width > 32) width = 32;
  if (!width) return 0;
  int64_t xs = sign ? (int64_t)(int32_t)x : (int64_t)x;
  int64_t r = (xs >> off) & (((int64_t)1 << width) - 1);
  if (sign && width < 32 && (r >> (width - 1)) & 1) r -= (int64_t)1 << width;
  return (uint32_t)r;
}
static inline uint32_t bfe(uint32_t x, uint32_t off, uint32_t width, int sign) { return bfe_w(x, off, width, sign, 31); }
/* s_bfe_u64/s_bfe_i64 (runtime.bfe64): offset S1[5:0], width S1[22:16]; a width of 64 or more keeps every bit */
static inline uint64_t bfe64(uint64_t x, uint32_t s1, int sign) {
  uint32_t off = s1 & 63, w = (s1 >> 16) & 127;
  uint64_t sh = sign ? (uint64_t)((int64_t)x >> off) : x >> off;
  if (w >= 64) return sh;
  uint64_t mask = (1ull << w) - 1, r = sh & mask;
  if (sign && w && (r >> (w - 1)) & 1) r |= ~mask;
  return r;
}
/* s_quadmask, s_wqm: the same as runtime.quadmask / wqm (s_brev_b64: native_common.c's brev64) */
static inline uint64_t quadmask(uint64_t x, int width) {
  uint64_t d = 0;
  for (int i = 0; i < width / 4; i++) d |= (uint64_t)(((x >> (4 * i)) & 0xf) != 0) << i;
  return d;
}
static inline uint64_t wqm(uint64_t x, int width) {
  uint64_t d = 0;
  for (int i = 0; i < width / 4; i++) if ((x >> (4 * i)) & 0xf) d |= 0xfull << (4 * i);
  return d;
}
static inline uint32_t clz32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 0xffffffffu; }
static inline uint32_t ctz32(uint32_t x) { return x ? (uint32_t)__builtin_ctz(x) : 0xffffffffu; }
static inline uint32_t cls32(uint32_t x) { return (x == 0 || x == 0xffffffffu) ? 0xffffffffu : clz32(x >> 31 ? ~x : x); }
static inline int32_t iabs32(int32_t a) { return a < 0 ? -a : a; }
static inline int64_t imax64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t imin64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline uint64_t umax64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t umin64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint32_t popcount32(uint32_t x) { return (uint32_t)__builtin_popcount(x); }
static inline uint32_t popcount64(uint64_t x) { return (uint32_t)__builtin_popcountll(x); }
static inline uint32_t clz64(uint64_t x) { return x ? (uint32_t)__builtin_clzll(x) : 0xffffffffu; }
static inline uint32_t ctz64(uint64_t x) { return x ? (uint32_t)__builtin_ctzll(x) : 0xffffffffu; }
static inline double sub64(double a, double b) { return nan64(a - b, a, b); }

/* RDNA4's IEEE 754-2019 min/max (numpy_runtime.py has the numpy side; backends/c.py picks the width):
 * minimumNumber/maximumNumber (v_min_num, v_max_num: fmin/fmax, but two NaN operands give the first one quieted) and minimum/maximum (v_minimum, s_maximum_f16, ...: the
 * first signalling NaN operand quieted, else the first quiet NaN; -0 < +0). Half values are carried as floats, whose
 * quiet bit is the half's. */
static inline int snan32(float x) { return x != x && !(U32F(x) & 0x400000u); }
static inline int snan64(double x) { return x != x && !(U64F(x) & 0x8000000000000ull); }
#define IEEE754_2019(W, T) \
  static inline T min_num##W(T a, T b) { return (a != a && b != b) ? quiet##W(a) : fmin##W(a, b); } \
  static inline T max_num##W(T a, T b) { return (a != a && b != b) ? quiet##W(a) : fmax##W(a, b); } \
  static inline T pick754_##W(T a, T b, int pick_a) { \
    if (a != a && (snan##W(a) || !snan##W(b))) return quiet##W(a); \
    return b != b ? quiet##W(b) : pick_a ? a : b; \
  } \
  static inline T minimum754_##W(T a, T b) { return pick754_##W(a, b, a < b || (a == 0 && b == 0 && signbit(a) && !signbit(b))); } \
  static inline T maximum754_##W(T a, T b) { return pick754_##W(a, b, a > b || (a == 0 && b == 0 && !signbit(a) && signbit(b))); }
IEEE754_2019(32, float)
IEEE754_2019(64, double)

/* v_bitop3 (gfx9.bitop3): result bit i is bit (a_i << 2 | b_i << 1 | c_i) of the truth table t */
static inline uint32_t bitop3(uint32_t a, uint32_t b, uint32_t c, uint32_t t) {
  uint32_t d = 0;
  for (int k = 0; k < 8; k++)
    if (t >> k & 1) d |= (k & 4 ? a : ~a) & (k & 2 ? b : ~b) & (k & 1 ? c : ~c);
  return d;
}
/* GFX9 SDWA (gfx9.sdwa_src / sdwa_dst): the byte or word [shift, shift + width) of x, zero- or sign-extended; a result
 * placed in that field of old, the other bits zero (unused 0), copies of the field's top bit above it (1) or old's (2) */
static inline uint32_t sdwa32(uint32_t x, int shift, int width, int sext) {
  if (width == 32) return x;
  uint32_t v = (x >> shift) & ((1u << width) - 1);
  return sext && (v >> (width - 1) & 1) ? v | (0xffffffffu << width) : v;
}
static inline uint32_t sdwa_put(uint32_t r, uint32_t old, int shift, int width, int unused) {
  if (width == 32) return r;
  uint32_t field = ((1u << width) - 1) << shift, placed = (r << shift) & field;
  if (unused == 2) return placed | (old & ~field);
  if (unused == 1 && (placed >> (shift + width - 1) & 1) && shift + width < 32) return placed | (0xffffffffu << (shift + width));
  return placed;
}
/* RDNA3 v_min/v_max in IEEE mode (numpy_runtime.fmin/fmax with ieee): a signalling NaN operand quieted, S0's first;
 * v_med3 (numpy_runtime.fmed3): a NaN operand makes it v_min3, else the manual's median (the v_max of the two
 * operands not equal to the largest: med3(+0, -0, +inf) is +0) */
#define IEEE_MINMAX(W, T) \
  static inline T fmax_ieee##W(T a, T b) { return snan##W(a) ? quiet##W(a) : snan##W(b) ? quiet##W(b) : fmax##W(a, b); } \
  static inline T fmin_ieee##W(T a, T b) { return snan##W(a) ? quiet##W(a) : snan##W(b) ? quiet##W(b) : fmin##W(a, b); } \
  static inline T qnan##W(T x) { return x != x ? quiet##W(x) : x; }
IEEE_MINMAX(32, float)
IEEE_MINMAX(64, double)
/* CDNA (GFX9) v_max/v_min (numpy_runtime.fmax_gfx9/fmin_gfx9): RDNA's IEEE-mode min/max, except that two quiet NaNs
 * give S1 */
#define GFX9_MINMAX(W, T) \
  static inline T fmax_gfx9_##W(T a, T b) { return (a != a && b != b && !snan##W(a) && !snan##W(b)) ? b : fmax_ieee##W(a, b); } \
  static inline T fmin_gfx9_##W(T a, T b) { return (a != a && b != b && !snan##W(a) && !snan##W(b)) ? b : fmin_ieee##W(a, b); }
GFX9_MINMAX(32, float)
GFX9_MINMAX(64, double)
static inline float med3_32(float a, float b, float c) {
  float m = fmax32(fmax32(a, b), c);
  return m == a ? fmax32(b, c) : m == b ? fmax32(a, c) : fmax32(a, b);
}
static inline float fmed3_32(float a, float b, float c, int ieee) {
  if (a != a || b != b || c != c) return ieee ? fmin_ieee32(fmin_ieee32(a, b), c) : fmin32(fmin32(a, b), c);
  return med3_32(a, b, c);
}
/* RDNA4 v_med3_num (numpy_runtime.med3_num): a NaN operand makes it min3_num */
static inline float med3_num32(float a, float b, float c) {
  return (a != a || b != b || c != c) ? min_num32(min_num32(a, b), c) : med3_32(a, b, c);
}
/* v_div_fmas_f32 (numpy_runtime.div_fmas, errata div-fmas-scale): where VCC is set, 2^64 * (a*b + c) when c's biased
 * exponent is above 127, else 2^-64 * (a*b + c), rounded once: the product is exact in double, the sum is rounded to
 * odd (TwoSum's error moves an inexact even result to its odd neighbour), the scaling is exact, then one rounding */
static inline float div_fmas32(float a, float b, float c, int vcc) {
  if (!vcc || !isfinite(a) || !isfinite(b) || !isfinite(c)) return fma32(a, b, c);
  double p = (double)a * (double)b, s = p + (double)c, bp = s - (double)c;
  double err = (p - bp) + ((double)c - (s - bp));
  if (err != 0 && isfinite(s) && !(U64F(s) & 1)) s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
  return (float)ldexp(s, ((U32F(c) >> 23) & 0xff) > 127 ? 64 : -64);
}

/* *** float helpers of the f16 and f64 rows (numpy_runtime.py has the numpy side; backends/c.py C_CALLS picks them) *** */

/* the transcendentals are computed in double and rounded once (numpy_runtime.exp2 ... cos_rev): an invalid operation
 * on a number gives +qNaN; sin/cos take revolutions, reduced exactly by rint */
/* the conversions of f16, bf16 and the fp8 formats are native_floats.c's */
/* v_cvt_pk_f32_fp8/bf8: the two OCP codes of a 16-bit value as f32 bits, the low byte's in bits 31:0 */
static inline uint64_t ocp8_pk_f32(uint32_t x, int bf8) {
  float lo = bf8 ? e5m2_to_f32(x) : e4m3_to_f32(x), hi = bf8 ? e5m2_to_f32(x >> 8) : e4m3_to_f32(x >> 8);
  return (uint64_t)U32F(lo) | (uint64_t)U32F(hi) << 32;
}
static inline double dnan64(double a, double r) { return (r != r && a == a) ? F64(0x7ff8000000000000ull) : r; }
/* a row's float result (numpy_runtime.gnan): a NaN none of its float sources was is generated, and the hardware's is its
 * default NaN, +qNaN; the host's (x86: 0xffc00000, arm64: 0x7fc00000) never shows. An f16 is carried as a float: its
 * store makes 0x7fc00000 0x7e00. */
static inline float gnan32(float r, int nan_in) { return __builtin_expect(r != r, 0) && !nan_in ? F32(0x7fc00000u) : r; }
static inline double gnan64(double r, int nan_in) { return __builtin_expect(r != r, 0) && !nan_in ? F64(0x7ff8000000000000ull) : r; }
static inline double rev64(double x, int cosine) {
  if (!isfinite(x)) return F64(0x7ff8000000000000ull);
  double y = 2 * 3.141592653589793 * (x - rint(x));
  return cosine ? cos(y) : sin(y);
}
/* f16 a*b+c rounded once (numpy_runtime.fma16, _fma_odd): the product is exact in double, the sum is rounded to odd
 * (TwoSum's error), which then rounds to half as the exact value does; NaNs as numpy's float64 operations give them */
static inline float fma16(float a, float b, float c) {
  double p = mul64((double)a, (double)b), s = add64(p, (double)c), bp = s - (double)c;
  double err = (p - bp) + ((double)c - (s - bp));
  if (err != 0 && isfinite(s) && !(U64F(s) & 1)) s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
  return f64_round_f16(s);
}
/* f64 a*b+c rounded once (numpy_runtime.fma64: compiler/exact.py); a non-finite operand: a*b+c in float64 */
static inline double fma64(double a, double b, double c) {
  if (isfinite(a) && isfinite(b) && isfinite(c)) return fma(a, b, c);
  return add64(mul64(a, b), c);
}
/* rounding to an integer (numpy quiets a signalling NaN; a half's floor is a half) */
static inline double floor64(double a) { return a != a ? quiet64(a) : floor(a); }
static inline double ceil64(double a) { return a != a ? quiet64(a) : ceil(a); }
static inline double trunc64(double a) { return a != a ? quiet64(a) : trunc(a); }
static inline double rint64(double a) { return a != a ? quiet64(a) : rint(a); }
static inline float quiet16(float x) { return quiet32(x); }  /* a half carried as a float: its quiet bit is the float's */
/* v_fract (numpy_runtime.fract): x - floor(x) below 1, infinity gives +qNaN; f16 rounds the difference to half */
#define FRACT(W, T, FL, ROUND, BELOW1, QNAN) \
  static inline T fract##W(T x) { \
    if (x != x) return quiet##W(x); \
    if (isinf(x)) return QNAN; \
    T r = ROUND(x - FL(x)); \
    return r < BELOW1 ? r : BELOW1; \
  }
#define SAME(x) (x)
FRACT(16, float, floorf, f32_round_f16, 0.99951171875f, F32(0x7fc00000u))
FRACT(32, float, floorf, SAME, 0.99999994039535522461f, F32(0x7fc00000u))
FRACT(64, double, floor, SAME, 0.99999999999999988898, F64(0x7ff8000000000000ull))
/* v_frexp_mant/exp (numpy_runtime.frexp_mant/exp): a NaN or infinity keeps itself / gives 0 */
static inline double frexp_mant64(double x) { int e; return isfinite(x) ? frexp(x, &e) : x; }
static inline float frexp_mant32(float x) { int e; return isfinite(x) ? frexpf(x, &e) : x; }
static inline int32_t frexp_exp64(double x) { int e = 0; if (isfinite(x)) frexp(x, &e); return e; }
static inline double ldexp64(double a, int64_t e) { return a != a ? quiet64(a) : ldexp(a, e < -2200 ? -2200 : e > 2200 ? 2200 : (int)e); }
static inline float ldexp16(float a, int64_t e) {
  return a != a ? quiet32(a) : f32_round_f16(ldexpf(a, e < -1100 ? -1100 : e > 1100 ? 1100 : (int)e));
}
/* v_cmp_class of any width (numpy_runtime.cmp_class) from the value's bits */
static inline uint32_t cmp_class_bits(uint64_t b, int nbits, int mant_bits, uint32_t mask) {
  uint64_t emax = (1ull << (nbits - 1 - mant_bits)) - 1, e = (b >> mant_bits) & emax, m = b & ((1ull << mant_bits) - 1);
  int neg = (int)((b >> (nbits - 1)) & 1), cls;
  if (e == emax) cls = m ? ((m >> (mant_bits - 1)) & 1 ? 1 : 0) : (neg ? 2 : 9);
  else if (e) cls = neg ? 3 : 8;
  else cls = m ? (neg ? 4 : 7) : (neg ? 5 : 6);
  return (mask >> cls) & 1;
}
/* v_perm_b32 (numpy_runtime.perm): each result byte a byte of {s0, s1}, a sign fill, 0 or 0xff */
static inline uint32_t perm(uint32_t s0, uint32_t s1, uint32_t sel) {
  uint64_t data = R64(s1, s0);
  uint32_t out = 0;
  for (int k = 0; k < 4; k++) {
    uint32_t s = (sel >> (8 * k)) & 0xff, b;
    if (s >= 13) b = 0xff;
    else if (s == 12) b = 0;
    else if (s >= 8) b = (uint32_t)((data >> (8 * (2 * (s - 8) + 1) + 7)) & 1) * 0xff;
    else b = (uint32_t)((data >> (8 * s)) & 0xff);
    out |= b << (8 * k);
  }
  return out;
}

/* v_div_fixup_f16/f32/f64 (numpy_runtime.div_fixup): the special cases of the quotient s0 = s2 / s1, latest rule first:
 * a NaN operand quieted (S2's first), 0/0 and inf/inf the negative default NaN, x/0 and inf/y infinity, x/inf and
 * 0/y zero, the manual's UNDERFLOW (f32/f64) zero, errata div-fixup-nan (f32/f64: a NaN estimate is infinity), else
 * |s0| with the quotient's sign. A half is carried as a float. */
static inline int64_t bexp32(float x) { return (U32F(x) >> 23) & 0xff; }
static inline int64_t bexp64(double x) { return (int64_t)((U64F(x) >> 52) & 0x7ff); }
static inline int64_t bexp16(float x) { (void)x; return 0; }
#define DIV_FIXUP(W, T, FABS, DEFAULT_NAN, UNDERFLOW) \
  static inline T div_fixup##W(T s0, T s1, T s2) { \
    if (s2 != s2) return quiet##W(s2); \
    if (s1 != s1) return quiet##W(s1); \
    if ((s1 == 0 && s2 == 0) || (isinf(s1) && isinf(s2))) return DEFAULT_NAN; \
    int neg = !signbit(s1) != !signbit(s2); \
    if (s1 == 0 || isinf(s2)) return neg ? -(T)INFINITY : (T)INFINITY; \
    if (isinf(s1) || s2 == 0 || (UNDERFLOW && bexp##W(s2) - bexp##W(s1) < UNDERFLOW)) return neg ? -(T)0.0 : (T)0.0; \
    if (W != 16 && s0 != s0) return neg ? -(T)INFINITY : (T)INFINITY; \
    return neg ? -FABS(s0) : FABS(s0); \
  }
DIV_FIXUP(16, float, fabsf, f16_bits_to_f32(0xfe00), 0)
DIV_FIXUP(32, float, fabsf, F32(0xffc00000u), -150)
DIV_FIXUP(64, double, fabs, F64(0xfff8000000000000ull), -1075)

/* v_div_scale_f32/f64 (numpy_runtime.div_scale, errata div-scale-vcc): D and VCC, returned together (backends/c.py
 * renders a row with two results as a struct res_<t0>_<t1> whose fields r0, r1 are its values). The branches in the
 * numpy form's priority order: a zero operand; a huge quotient (exponent gap >= 96 / 768); a denormal denominator;
 * (f64) a denominator whose reciprocal is denormal; a tiny quotient; a tiny numerator (biased exponent <= 23 / 53).
 * Then the errata's extra VCC: a tiny denominator or numerator in the denominator's own call (S0 is S1's bits, not S2's),
 * and a zero numerator. A NaN that is scaled comes back quieted, as numpy's ldexp returns it. */
typedef struct { float r0; int r1; } res_f32_bool;
typedef struct { double r0; int r1; } res_f64_bool;
static inline float dscale32(float x, int e) { return x != x ? quiet32(x) : ldexpf(x, e); }
static inline double dscale64(double x, int e) { return x != x ? quiet64(x) : ldexp(x, e); }
static inline int denorm32(float x) { return x != 0 && bexp32(x) == 0; }
static inline int denorm64(double x) { return x != 0 && bexp64(x) == 0; }
#define DIV_SCALE_VCC(W) \
  int own = U##W##F(s0) == U##W##F(s1) && U##W##F(s0) != U##W##F(s2); \
  r.r1 |= own && s1 != 0 && bexp##W(s1) <= TINY; \
  r.r1 |= s2 == 0 && s1 != 0 && s1 == s1; \
  r.r1 |= own && s2 != 0 && bexp##W(s2) <= TINY; \
  return r;
static inline res_f32_bool div_scale32(float s0, float s1, float s2) {
  enum { UP = 64, BIG = 96, TINY = 23 };
  res_f32_bool r = {s0, 0};
  double q = (double)s2 / (double)s1;   /* errata: a quotient that would be denormal, also one f32 rounds to 0 or up */
  int tiny_q = q != 0 && fabs(q) < 0x1p-126;
  if (s2 == 0 || s1 == 0) { r.r0 = F32(0x7fc00000u); r.r1 = s1 == 0; }
  else if (bexp32(s2) - bexp32(s1) >= BIG) { r.r0 = s0 == s1 ? dscale32(s0, UP) : s0; r.r1 = 1; }
  else if (denorm32(s1)) r.r0 = dscale32(s0, UP);
  else if (tiny_q) { r.r0 = s0 == s2 ? dscale32(s0, UP) : s0; r.r1 = 1; }
  else if (bexp32(s2) <= TINY) r.r0 = dscale32(s0, UP);
  DIV_SCALE_VCC(32)
}
static inline res_f64_bool div_scale64(double s0, double s1, double s2) {
  enum { UP = 128, BIG = 768, TINY = 53 };
  res_f64_bool r = {s0, 0};
  double q = s2 / s1;
  int rcp_den = denorm64(1.0 / s1);
  if (s2 == 0 || s1 == 0) { r.r0 = F64(0x7ff8000000000000ull); r.r1 = s1 == 0; }
  else if (bexp64(s2) - bexp64(s1) >= BIG) { r.r0 = s0 == s1 ? dscale64(s0, UP) : s0; r.r1 = 1; }
  else if (denorm64(s1)) r.r0 = dscale64(s0, UP);
  else if (rcp_den && denorm64(q)) { r.r0 = s0 == s1 ? dscale64(s0, -UP) : s0; r.r1 = 1; }  /* the manual: scaled up */
  else if (rcp_den) r.r0 = dscale64(s0, -UP);
  else if (denorm64(q)) { r.r0 = s0 == s2 ? dscale64(s0, UP) : s0; r.r1 = 1; }
  else if (bexp64(s2) <= TINY) r.r0 = dscale64(s0, UP);
  DIV_SCALE_VCC(64)
}

/* *** v_wmma_* over a wave32 (numpy_runtime.wmma: the same layouts; products summed in K order in double, exact for
 * the integer forms, then C added and the sum rounded once) *** */
enum { WMMA_F16, WMMA_BF16, WMMA_IU8, WMMA_IU4 };        /* A/B element kinds: 2, 2, 4, 8 a VGPR, low bits first */
enum { WMMA_OUT_F32, WMMA_OUT_F16, WMMA_OUT_BF16, WMMA_OUT_I32 };
#define WMMA_MAX_K 64   /* backends/c.py declines a form with a longer K */
static inline double wmma_elem(const uint32_t *v, const int *regs, int kind, int sgn, int lane, int idx) {
  int per = kind <= WMMA_BF16 ? 2 : kind == WMMA_IU8 ? 4 : 8, bits = 32 / per;
  uint32_t e = (V(regs[idx / per])[lane] >> (bits * (idx % per))) & ((1u << bits) - 1);
  if (kind == WMMA_F16) return (double)f16_bits_to_f32((uint16_t)e);
  if (kind == WMMA_BF16) return (double)bf16_bits_to_f32(e);
  return sgn && (e >> (bits - 1)) ? (double)e - (double)(1u << bits) : (double)e;
}
/* A's rows (lane l: row l % 16) and B's columns; RDNA4 (split) holds K's second half in lanes 16-31. Element j of lane l
 * of C/D is (row 2j + l / 16) on RDNA3, (row j + 8 (l / 16)) on RDNA4, column l % 16; a 16-bit D is one half of VGPR j
 * on RDNA3 (hi: the high one, the other half C's), half j % 2 of VGPR j / 2 on RDNA4. */
/* a float D element's bits (kout's format): a NaN none of whose inputs was (nan_in 0) was generated (inf * 0, inf - inf)
 * and is the default NaN, +qNaN, not the host's (exact.generated_nan) */
static inline uint32_t wmma_gnan(uint32_t bits, int kout, int nan_in) {
  if (nan_in) return bits;
  if (kout == WMMA_OUT_F32) return (bits & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : bits;
  if (kout == WMMA_OUT_BF16) return (bits & 0x7fffu) > 0x7f80u ? 0x7fc0u : bits;
  return (bits & 0x7fffu) > 0x7c00u ? 0x7e00u : bits;
}
static void wmma(uint32_t *v, const int *a, const int *b, const int *c, int nab, int dst, int kin, int kout, int hi,
                 int sa, int sb, int clamp, int rdna4, lanes_t ex) {
  int per = kin <= WMMA_BF16 ? 2 : kin == WMMA_IU8 ? 4 : 8, E = nab * per, K = rdna4 ? 2 * E : E;
  int packed = rdna4 && kout == WMMA_OUT_F16;
  uint32_t out[8][32];
  double A[16][WMMA_MAX_K], B[16][WMMA_MAX_K];   /* A's rows and B's columns, each element decoded once */
  int anan[16] = {0}, bnan[16] = {0};            /* a NaN in A's row / B's column */
  for (int r = 0; r < 16; r++)
    for (int k = 0; k < K; k++) {
      int half = rdna4 ? 16 * (k / E) : 0, idx = rdna4 ? k % E : k;
      A[r][k] = wmma_elem(v, a, kin, sa, r + half, idx);
      B[r][k] = wmma_elem(v, b, kin, sb, r + half, idx);
      anan[r] |= isnan(A[r][k]); bnan[r] |= isnan(B[r][k]);
    }
  for (int l = 0; l < 32; l++) {
    for (int j = 0; j < 8; j++) {
      int row = rdna4 ? j + 8 * (l / 16) : 2 * j + l / 16, col = l % 16;
      double acc = mul64(A[row][0], B[col][0]);
      for (int k = 1; k < K; k++) acc = add64(acc, mul64(A[row][k], B[col][k]));
      uint32_t cw = V(c[packed ? j / 2 : j])[l];
      if (kout == WMMA_OUT_I32) {
        double r = acc + (double)(int32_t)cw;
        if (clamp) r = r < -2147483648.0 ? -2147483648.0 : r > 2147483647.0 ? 2147483647.0 : r;
        out[j][l] = (uint32_t)(int64_t)r;
      } else if (kout == WMMA_OUT_F32) {
        double cv = (double)F32(cw);
        out[j][l] = wmma_gnan(U32F((float)add64(acc, cv)), kout, anan[row] || bnan[col] || isnan(cv));
      } else if (packed) {
        double cv = (double)f16_bits_to_f32((uint16_t)(cw >> (16 * (j % 2))));
        uint32_t h = wmma_gnan(f32_to_f16_bits_rne(f64_round_f16(add64(acc, cv))), kout, anan[row] || bnan[col] || isnan(cv));
        out[j / 2][l] = j % 2 ? (out[j / 2][l] & 0xffffu) | (h << 16) : h;
      } else {
        uint32_t ch = hi ? cw >> 16 : cw & 0xffffu;
        double cv = kout == WMMA_OUT_BF16 ? (double)bf16_bits_to_f32(ch) : (double)f16_bits_to_f32((uint16_t)ch);
        uint32_t r = kout == WMMA_OUT_BF16 ? f64_to_bf16_bits_rne(add64(acc, cv)) : f32_to_f16_bits_rne(f64_round_f16(add64(acc, cv)));
        uint32_t h = wmma_gnan(r, kout, anan[row] || bnan[col] || isnan(cv));
        out[j][l] = hi ? (cw & 0xffffu) | (h << 16) : (cw & 0xffff0000u) | h;
      }
    }
  }
  for (int j = 0; j < (packed ? 4 : 8); j++)
    for (int l = 0; l < 32; l++) if (ex >> l & 1) V(dst + j)[l] = out[j][l];
}

#include "native_memory.c"

/* *** stops of one wave besides faults (emulators/rdna/native.py raises each as the numpy path does): an M0-relative
 * index past the reachable registers, a computed jump to no instruction of the program, s_trap. fault_kind: the
 * index of the instruction's name in the translation's messages *** */
enum { RELATIVE = 10, BAD_JUMP = 11, TRAPPED = 12 };
static int64_t stop_wave(Ctx *c, int64_t status, int64_t pc, uint64_t what, int64_t size, int64_t name) {
  c->status = status; c->fault_pc = pc; c->fault_va = what; c->fault_size = size; c->fault_kind = name; longjmp(stop, 1); return -1;
}
/* base plus M0's field (shift, bits) as the pseudocode adds it (uint32), checked: its ndw registers below limit */
static inline int64_t rel(Ctx *c, uint32_t base, uint32_t m0, int shift, int bits, int64_t ndw, int64_t limit, int64_t pc, int64_t name) {
  uint32_t idx = base + (bits < 32 ? (m0 >> shift) & ((1u << bits) - 1) : m0);
  if ((int64_t)idx + ndw > limit) stop_wave(c, RELATIVE, pc, idx, limit, name);
  return idx;
}
static int64_t bad_jump(Ctx *c, int64_t pc, uint64_t target, int64_t name) { return stop_wave(c, BAD_JUMP, pc, target, 0, name); }
static int64_t trap(Ctx *c, int64_t pc, int64_t trap_id) { return stop_wave(c, TRAPPED, pc, (uint64_t)trap_id, 0, -1); }

/* *** LDS: an access with an element past the workgroup's LDS is a fault, reported whole (its offset and all its bytes) *** */

static inline void ldscheck(Ctx *c, uint32_t addr, int64_t esize, int64_t count, int write, int64_t pc) {
  if ((int64_t)addr + count * esize > c->lds_size) fault(c, addr, esize * count, write, pc, LDS_SPACE);
}
/* an atomic whose address is not a multiple of its word size (kind: the space, with MISALIGNED set) */
static void misaligned(Ctx *c, uint64_t va, int64_t n, int64_t pc, int64_t space) { fault(c, va, n, 1, pc, space | MISALIGNED); }
static inline void ldsload(const uint8_t *lds, void *dst, uint32_t addr, int64_t esize, int64_t count) { memcpy(dst, lds + addr, esize * count); }
static inline void ldsstore(uint8_t *lds, uint32_t addr, const void *src, int64_t esize, int64_t count) { memcpy(lds + addr, src, esize * count); }

/* *** private (scratch) memory: each lane's segment of private_size bytes; an access past it is a fault that names its
 * offset and the lane's address, scratch_base + (wave in the chunk * lanes + lane) * private_size + offset, as the numpy
 * path's (numpy_memory._private) *** */

static inline uint8_t *scptr(Ctx *c, int l, uint32_t off, int64_t n, int write, int64_t pc) {
  int64_t lane = c->cur_wave * WAVE + l;
  if ((int64_t)off + n > c->private_size) {
    c->fault_off = off;
    fault(c, c->scratch_base + (uint64_t)(lane * c->private_size) + off, n, write, pc, SCRATCH_SPACE);
  }
  return c->scratch + lane * c->private_size + off;
}

/* *** dispatch *** */

/* user SGPRs, workgroup-ID SGPRs, packed work-item IDs in v0 and the live-lane EXEC, as the SPI sets them up; the
 * chunk's workgroups are wgs[wg0 ..] */
static void init(Ctx *c) {
  memset(c->s, 0, (size_t)c->waves * 256 * 4);
  memset(c->v, 0, (size_t)c->waves * c->nvgpr * WAVE * 4);
  memset(c->lds, 0, (size_t)(c->waves / c->wpg) * c->lds_size);
  if (c->private_size) memset(c->scratch, 0, (size_t)(c->waves * WAVE * c->private_size));
  int64_t threads = c->bx * c->by * c->bz;
  for (int64_t w = 0; w < c->waves; w++) {
    uint32_t *s = c->s + w * 256, *v0 = c->v + w * c->nvgpr * WAVE;
    lanes_t ex = 0;
    int64_t g = c->wgs[c->wg0 + w / c->wpg], k = c->nuser;
    for (int64_t i = 0; i < c->nuser; i++) s[i] = c->user[i];
    if (c->enables & 1) s[k++] = (uint32_t)(g % c->gx);
    if (c->enables & 2) s[k++] = (uint32_t)((g / c->gx) % c->gy);
    if (c->enables & 4) s[k++] = (uint32_t)(g / (c->gx * c->gy));
    if (c->ttmp_x >= 0) {  /* gfx12: the workgroup ID in ttmp registers (semantics/rdna4.py TTMP_WORKGROUP_IDS) */
      s[c->ttmp_x] = (uint32_t)(g % c->gx);
      s[c->ttmp_yz] = (uint32_t)(((g / c->gx) % c->gy) & 0xffff) | (uint32_t)(g / (c->gx * c->gy)) << 16;
    }
    int64_t t = (w % c->wpg) * WAVE, x = t % c->bx, y = (t / c->bx) % c->by, z = t / (c->bx * c->by);
    for (int l = 0; l < WAVE; l++, t++) {  /* the work-item ID counts up x, then y, then z: no division per lane */
      v0[l] = (uint32_t)(x | (c->comps >= 1 ? y << 10 : 0) | (c->comps >= 2 ? z << 20 : 0));
      if (t < threads) ex |= (lanes_t)1 << l;
      if (++x == c->bx) { x = 0; if (++y == c->by) { y = 0; z++; } }
    }
    SET_MASK(126, ex);
  }
}

#ifndef MOCKGPU_STENCIL_HANDLERS   /* a stencil handler library has no run loop: the stencil core's serves it */
static int64_t wave(Ctx *c, uint32_t *s, uint32_t *v, uint8_t *lds, int64_t b);

/* Each workgroup's waves run in turn, each until s_barrier or s_endpgm; once all have, the barrier releases them. */
int64_t mockgpu_run(Ctx *c) {
  if (setjmp(stop)) return c->status;
  c->status = DONE;
  init(c);
  int64_t pcs[MAX_WAVES_PER_GROUP];
  for (int64_t g = 0; g < c->waves / c->wpg; g++) {
    for (int64_t i = 0; i < c->wpg; i++) pcs[i] = 0;
    for (int live = 1; live;) {
      live = 0;
      for (int64_t i = 0; i < c->wpg; i++) {
        if (pcs[i] < 0) continue;
        int64_t w = c->cur_wave = g * c->wpg + i;
        pcs[i] = wave(c, c->s + w * 256, c->v + w * c->nvgpr * WAVE, c->lds + g * c->lds_size, pcs[i]);
        live |= pcs[i] >= 0;
      }
    }
  }
  return DONE;
}
#endif
