/* The float conversions of both ISAs' C translations, one function per contract and named for it (source_to_target,
 * `_bits` where a narrow format is its bits, `_rne`/`_rtz` the rounding, `round_f16` a value rounded to f16's grid and
 * carried as a float): what compiler/floats.py computes, and numpy's float16 casts, one value at a time. Each is
 * written here only; tests/compiler/test_floats.py compares them with floats.py bit for bit over every f16 and bf16
 * pattern and every fp8 code. Included by both preludes after native_common.c (F32, U32F, F64, U64F). */

/* *** f16 *** */

/* float16 as numpy converts it: finite values round to nearest even; a NaN keeps its sign and the top 10 bits of its
 * payload, quiet or not (at least one payload bit stays set). Half values are carried as floats, which hold them
 * exactly, and every f16 operation rounds its float result once (float has more than 2*11+2 bits, so rounding a
 * float sum or product of halves again to half is the correctly rounded result). */
static inline uint16_t f32_to_f16_bits_rne(float x) {
  uint32_t f = U32F(x), sgn = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sgn | 0x7c00u | (((a >> 13) & 0x3ffu) ? ((a >> 13) & 0x3ffu) : 1u));
  if (a >= 0x477ff000u) return (uint16_t)(sgn | 0x7c00u);      /* 65520 and up round to infinity */
  if (a < 0x38800000u) return (uint16_t)(sgn | (uint32_t)rintf(F32(a) * 16777216.0f));  /* subnormal: units of 2^-24 */
  return (uint16_t)(sgn | ((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
}
static inline float f16_bits_to_f32(uint16_t h) {
  uint32_t sgn = (uint32_t)(h & 0x8000u) << 16, e = h & 0x7c00u, m = h & 0x3ffu;
  if (e == 0x7c00u) return F32(sgn | 0x7f800000u | (m << 13));
  if (e == 0) { float v = (float)m * 5.9604644775390625e-08f; return sgn ? -v : v; }
  return F32(sgn | (((uint32_t)(h & 0x7fffu) + 0x1c000u) << 13));
}
static inline float f32_round_f16(float x) { return f16_bits_to_f32(f32_to_f16_bits_rne(x)); }
/* f16 bits as a double, bit for bit (a signalling NaN stays one, as numpy's cast keeps it) */
static inline double f16_bits_to_f64(uint16_t h) {
  if ((h & 0x7c00u) != 0x7c00u) return (double)f16_bits_to_f32(h);
  return F64(((uint64_t)(h & 0x8000u) << 48) | 0x7ff0000000000000ull | ((uint64_t)(h & 0x3ffu) << 42));
}
/* a double rounded to odd at float precision (24 bits >= 11 + 2 and 8 + 2: rounding that once more to half or bf16
 * to nearest even is rounding the double once) */
static inline float f64_to_f32_odd(double x) {
  float f = (float)x;
  if (x != x || (double)f == x) return f;
  uint32_t b = U32F(f);
  if (fabs((double)f) > fabs(x)) b--;   /* the float toward zero, then its odd neighbour */
  return F32(b | 1u);
}
/* a double as numpy's astype(float16) converts it: rounded once to nearest even; a NaN keeps its sign and the top 10
 * bits of its payload (at least one set), not quieted */
static inline uint16_t f64_to_f16_bits_rne(double x) {
  if (x != x) { uint64_t b = U64F(x), m = (b >> 42) & 0x3ffu; return (uint16_t)(((b >> 48) & 0x8000u) | 0x7c00u | (m ? m : 1u)); }
  return f32_to_f16_bits_rne(f64_to_f32_odd(x));
}
/* a double rounded once to f16's grid, carried as a float (a NaN goes through the float conversion, which quiets it) */
static inline float f64_round_f16(double x) { return f32_round_f16(f64_to_f32_odd(x)); }
/* a float rounded to f16's grid toward zero (floats.f32_to_f16_rtz), carried as a float */
static inline float f32_round_f16_rtz(float x) {
  uint16_t h = f32_to_f16_bits_rne(x);
  if (isfinite(x) && fabsf(f16_bits_to_f32(h)) > fabsf(x)) h--;
  return f16_bits_to_f32(h);
}

/* *** bf16 *** */

static inline float bf16_bits_to_f32(uint32_t b) { return F32((b & 0xffffu) << 16); }
static inline double bf16_bits_to_f64(uint16_t b) { return (double)bf16_bits_to_f32(b); }
/* a float rounded to bf16 bits (floats.bf16bits): to nearest even; a NaN stays a NaN, quieted */
static inline uint32_t f32_to_bf16_bits_rne(float x) {
  uint32_t u = U32F(x);
  return (x != x ? u | 0x400000u : u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
/* a double rounded once to bf16 bits (floats.bf16bits_f64): to odd at float precision, then to nearest even */
static inline uint32_t f64_to_bf16_bits_rne(double x) { return f32_to_bf16_bits_rne(f64_to_f32_odd(x)); }
/* a double already on bf16's grid (or an infinity) as bf16 bits, a NaN as 0x7fff (floats.bf16bits_exact) */
static inline uint16_t f64_to_bf16_bits_exact(double x) { float f = (float)x; return f != f ? 0x7fffu : (uint16_t)(U32F(f) >> 16); }

/* *** fp8 (floats.FP8): m mantissa bits, the exponent bias *** */

/* a non-negative finite code's value, exactly */
static inline double fp8_magnitude(int code, int m, int bias) {
  int e = code >> m, f = code & ((1 << m) - 1);
  return e == 0 ? ldexp((double)f, 1 - bias - m) : ldexp((double)((1 << m) + f), e - bias - m);
}
/* an OCP code (E4M3: S.1111.111 the NaN, no infinity; E5M2: IEEE-like) as f32, exactly; a NaN as the quiet NaN of its sign */
static inline float ocp8_to_f32(uint32_t c, int m, int bias, int has_inf) {
  uint32_t a = c & 0x7fu, neg = c & 0x80u, top = 0x7fu >> m << m;   /* top: the all-ones exponent */
  if (!has_inf && a == 0x7fu) return F32(neg ? 0xffc00000u : 0x7fc00000u);
  if (has_inf && a >= top) return a == top ? (neg ? -INFINITY : INFINITY) : F32(neg ? 0xffc00000u : 0x7fc00000u);
  float v = (float)fp8_magnitude((int)a, m, bias);
  return neg ? -v : v;
}
static inline float e4m3_to_f32(uint32_t c) { return ocp8_to_f32(c & 0xffu, 3, 7, 0); }
static inline float e5m2_to_f32(uint32_t c) { return ocp8_to_f32(c & 0xffu, 2, 15, 1); }
/* f32 to an OCP code as gfx950 converts (floats.f32_to_ocp8): round to nearest even over the finite codes; past the
 * largest (the midpoint to one more step included by the even rule) and for infinity `over` (E4M3: the NaN 0x7f, E5M2:
 * infinity 0x7c); a NaN gives 0x7f; the input's sign kept */
static inline uint32_t f32_to_ocp8_rne(float x, int m, int bias, int top, uint32_t over) {
  uint32_t sign = (U32F(x) >> 31) << 7;
  double a = fabs((double)x);
  if (a != a) return 0x7fu | sign;
  if (isinf(a)) return over | sign;
  int lo = 0, hi = top + 1;
  while (lo < hi) { int mid = (lo + hi) / 2; if (fp8_magnitude(mid, m, bias) < a) lo = mid + 1; else hi = mid; }
  int l = lo - 1 < 0 ? 0 : lo - 1, h = lo > top ? top : lo;
  double dlo = a - fp8_magnitude(l, m, bias), dhi = fp8_magnitude(h, m, bias) - a;
  uint32_t code = (uint32_t)((dhi < dlo || (dhi == dlo && h % 2 == 0)) ? h : l);
  double big = fp8_magnitude(top, m, bias), half = big + (big - fp8_magnitude(top - 1, m, bias)) / 2;
  if (a > half || (a == half && top % 2 == 1)) code = over;
  return code | sign;
}
static inline uint32_t f32_to_e4m3_rne(float x) { return f32_to_ocp8_rne(x, 3, 7, 0x7e, 0x7fu); }
static inline uint32_t f32_to_e5m2_rne(float x) { return f32_to_ocp8_rne(x, 2, 15, 0x7b, 0x7cu); }
/* gfx942's FNUZ codes (floats.f32_to_fnuz8, fp8_table's e4m3fnuz/e5m2fnuz): 0x80 the only NaN, no infinity, no -0 */
static inline float fnuz8_to_f32(uint32_t c, int m, int bias) {
  c &= 0xffu;
  if (c == 0x80u) return F32(0xffc00000u);
  float v = (float)fp8_magnitude((int)(c & 0x7fu), m, bias);
  return c & 0x80u ? -v : v;
}
static inline uint32_t f32_to_fnuz8_rne(float x, int m, int bias) {
  double a = fabs((double)x);
  if (a != a || isinf(a)) return 0x80u;
  double big = fp8_magnitude(0x7f, m, bias);
  if (a >= big + (big - fp8_magnitude(0x7e, m, bias)) / 2) return 0x80u;
  uint32_t code = f32_to_ocp8_rne(x, m, bias, 0x7f, 0x80u) & 0x7fu;
  return code ? code | (U32F(x) >> 31) << 7 : 0u;
}
/* PTX's cvt to an OCP code (floats.to_fp8): p significand bits, emin the least normal exponent, mx the largest finite
 * value. Round to nearest even, saturate (infinities too), NaN -> 0x7f with its sign; relu: negative (-0 too) -> +0,
 * NaN -> 0x7f. The code is linear in the rounded ulp count across a carry into the next binade. */
static inline uint32_t f64_to_fp8_satfinite(double x, int p, int emin, double mx, int relu) {
  uint32_t neg = signbit(x) ? 0x80u : 0u;
  if (x != x) return relu ? 0x7fu : 0x7fu | neg;
  if (relu && neg) return 0;
  double a = fabs(x) < mx ? fabs(x) : mx;
  int k = 0, e = emin;
  if (a != 0) { frexp(a, &k); if (k - 1 > emin) e = k - 1; }
  int64_t r = (int64_t)rint(ldexp(a, (p - 1) - e));
  return (uint32_t)((((int64_t)(e - emin) << (p - 1)) + r) & 0x7f) | neg;
}
/* PTX's cvt of an OCP code to float16 bits (floats.fp8_to_f16), exactly; NaN -> 0x7fff; relu: negative (-0 too) -> +0 */
static inline uint32_t fp8_to_f16_bits(uint32_t b, int p, int emin, int e4m3, int relu) {
  uint32_t mag = b & 0x7f, neg = (b >> 7) & 1;
  if (e4m3 ? mag == 0x7f : mag > 0x7c) return 0x7fff;
  if (relu && neg) return 0;
  if (!e4m3 && mag == 0x7c) return neg ? 0xfc00u : 0x7c00u;
  return (uint32_t)f32_to_f16_bits_rne((float)fp8_magnitude((int)mag, p - 1, 1 - emin)) | (neg << 15);
}
