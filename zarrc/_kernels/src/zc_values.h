/* Element-wise value kernels of the array -> array codecs that change numbers, not
 * bytes: cast_value (a value cast with a rounding mode, an out-of-range rule and a
 * scalar map) and scale_offset ((x - offset) * scale, and back).  Plain C, no Python,
 * no global state: called without the GIL by values.pyx.
 *
 * Types are numbered ZV_I8 .. ZV_F64 (values.pyx's TYPE_CODES).  Values travel as
 * long double, which on x86-64 (80-bit extended, 64-bit significand) holds every
 * int64, uint64 and double exactly; rounding to a target is done on that exact value,
 * once, in the target's grid (its precision and least exponent, with an unbounded
 * greatest exponent, so values that round past the largest finite one are out of range).
 */
#ifndef ZC_VALUES_H
#define ZC_VALUES_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { ZV_I8, ZV_I16, ZV_I32, ZV_I64, ZV_U8, ZV_U16, ZV_U32, ZV_U64, ZV_F16, ZV_F32, ZV_F64 };
enum { ZV_NEAREST_EVEN, ZV_TOWARDS_ZERO, ZV_TOWARDS_POSITIVE, ZV_TOWARDS_NEGATIVE, ZV_NEAREST_AWAY };
enum { ZV_OOR_ERROR, ZV_OOR_CLAMP, ZV_OOR_WRAP };
/* why an element failed */
enum { ZV_OK, ZV_NOT_FINITE, ZV_OUT_OF_RANGE, ZV_INEXACT };

#define ZV_MAX_MAP 64

typedef struct {
    int src, dst, rounding, out_of_range;
    int nmap;
    long double keys[ZV_MAX_MAP];
    long double vals[ZV_MAX_MAP];
} zv_cast;

static inline int zv_is_float(int t) { return t >= ZV_F16; }
static inline int zv_is_signed(int t) { return t <= ZV_I64; }
static inline int zv_bits(int t) {
    static const int bits[] = {8, 16, 32, 64, 8, 16, 32, 64, 16, 32, 64};
    return bits[t];
}

/* ---- float16 <-> numbers */

static inline long double zv_half_value(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    long double v;
    if (e == 0x1f)
        v = m ? (long double)NAN : (long double)INFINITY;
    else if (e == 0)
        v = ldexpl((long double)m, -24);
    else
        v = ldexpl((long double)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* the bits of v, a value already on float16's grid (or +-inf, NaN) */
static inline uint16_t zv_half_bits(long double v) {
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    long double a = fabsl(v);
    int e;
    if (isnan(v)) return sign | 0x7e00;
    if (isinf(v)) return sign | 0x7c00;
    if (a == 0) return sign;
    e = ilogbl(a);
    if (e < -14) return sign | (uint16_t)ldexpl(a, 24);
    return sign | (uint16_t)((e + 15) << 10) | ((uint16_t)ldexpl(a, 10 - e) & 0x3ff);
}

static inline long double zv_round_int(long double v, int mode) {
    switch (mode) {
    case ZV_TOWARDS_ZERO: return truncl(v);
    case ZV_TOWARDS_POSITIVE: return ceill(v);
    case ZV_TOWARDS_NEGATIVE: return floorl(v);
    case ZV_NEAREST_AWAY: return roundl(v);
    default: return rintl(v);   /* the default rounding mode: to nearest, ties to even */
    }
}

/* v (finite) rounded to float type t's grid: its precision, its least exponent, no
 * greatest one */
static inline long double zv_round_float(long double v, int t, int mode) {
    int p = t == ZV_F16 ? 11 : t == ZV_F32 ? 24 : 53;
    int emin = t == ZV_F16 ? -14 : t == ZV_F32 ? -126 : -1022;
    int e;
    if (v == 0) return v;
    e = ilogbl(v);
    if (e < emin) e = emin;
    return ldexpl(zv_round_int(ldexpl(v, p - 1 - e), mode), e - (p - 1));
}

static inline long double zv_max(int t) {
    switch (t) {
    case ZV_I8: return 127; case ZV_I16: return 32767; case ZV_I32: return 2147483647.0L;
    case ZV_I64: return 9223372036854775807.0L;
    case ZV_U8: return 255; case ZV_U16: return 65535; case ZV_U32: return 4294967295.0L;
    case ZV_U64: return 18446744073709551615.0L;
    case ZV_F16: return 65504; case ZV_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}

static inline long double zv_min(int t) {
    switch (t) {
    case ZV_I8: return -128; case ZV_I16: return -32768; case ZV_I32: return -2147483648.0L;
    case ZV_I64: return -9223372036854775808.0L;
    case ZV_U8: case ZV_U16: case ZV_U32: case ZV_U64: return 0;
    default: return -zv_max(t);
    }
}

static inline long double zv_load(int t, const void* p, int64_t i) {
    switch (t) {
    case ZV_I8: return ((const int8_t*)p)[i];
    case ZV_I16: return ((const int16_t*)p)[i];
    case ZV_I32: return ((const int32_t*)p)[i];
    case ZV_I64: return (long double)((const int64_t*)p)[i];
    case ZV_U8: return ((const uint8_t*)p)[i];
    case ZV_U16: return ((const uint16_t*)p)[i];
    case ZV_U32: return ((const uint32_t*)p)[i];
    case ZV_U64: return (long double)((const uint64_t*)p)[i];
    case ZV_F16: return zv_half_value(((const uint16_t*)p)[i]);
    case ZV_F32: return ((const float*)p)[i];
    default: return ((const double*)p)[i];
    }
}

/* store v, a value representable in t (an integer within range, a float on t's grid) */
static inline void zv_store(int t, void* p, int64_t i, long double v) {
    switch (t) {
    case ZV_I8: ((int8_t*)p)[i] = (int8_t)v; break;
    case ZV_I16: ((int16_t*)p)[i] = (int16_t)v; break;
    case ZV_I32: ((int32_t*)p)[i] = (int32_t)v; break;
    case ZV_I64: ((int64_t*)p)[i] = (int64_t)v; break;
    case ZV_U8: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case ZV_U16: ((uint16_t*)p)[i] = (uint16_t)v; break;
    case ZV_U32: ((uint32_t*)p)[i] = (uint32_t)v; break;
    case ZV_U64: ((uint64_t*)p)[i] = (uint64_t)v; break;
    case ZV_F16: ((uint16_t*)p)[i] = zv_half_bits(v); break;
    case ZV_F32: ((float*)p)[i] = (float)v; break;
    default: ((double*)p)[i] = (double)v; break;
    }
}

/* store the integer r (integral, any size) into int type t modulo 2^bits */
static inline void zv_store_wrapped(int t, void* p, int64_t i, long double r) {
    long double m = ldexpl(1.0L, zv_bits(t));
    long double w = fmodl(r, m);
    uint64_t u;
    if (w < 0) w += m;
    u = (uint64_t)w;
    switch (t) {
    case ZV_I8: case ZV_U8: ((uint8_t*)p)[i] = (uint8_t)u; break;
    case ZV_I16: case ZV_U16: ((uint16_t*)p)[i] = (uint16_t)u; break;
    case ZV_I32: case ZV_U32: ((uint32_t*)p)[i] = (uint32_t)u; break;
    default: ((uint64_t*)p)[i] = u; break;
    }
}

/* ---- fast paths of zv_cast_values without a scalar map: a loop per (source, target)
 * pair, the value in the source's own type or double (every float16 / float32 / float64
 * value is a double), falling back to the exact long double path only for values out
 * of range.  Returns -2 when no fast path applies. */

#define ZV_FOR_DST(MACRO, ST)                                                   \
    switch (c->dst) {                                                           \
    case ZV_I8: MACRO(ST, int8_t) case ZV_I16: MACRO(ST, int16_t)               \
    case ZV_I32: MACRO(ST, int32_t) case ZV_I64: MACRO(ST, int64_t)             \
    case ZV_U8: MACRO(ST, uint8_t) case ZV_U16: MACRO(ST, uint16_t)             \
    case ZV_U32: MACRO(ST, uint32_t) case ZV_U64: MACRO(ST, uint64_t)           \
    case ZV_F32: MACRO(ST, float) case ZV_F64: MACRO(ST, double)                \
    default: return -2;                                                         \
    }

/* every source value is a target value: a plain conversion */
#define ZV_EXACT(ST, DT)                                                        \
    { const ST* s = (const ST*)src; DT* d = (DT*)dst;                           \
      for (i = 0; i < n; i++) d[i] = (DT)s[i];                                  \
      return -1; }

/* float source, integer target */
#define ZV_F2I(ST, DT)                                                          \
    { const ST* s = (const ST*)src; DT* d = (DT*)dst; double x, r;              \
      for (i = 0; i < n; i++) {                                                 \
          x = s[i];                                                             \
          if (!isfinite(x)) { *why = ZV_NOT_FINITE; *value = x; return i; }     \
          switch (c->rounding) {                                                \
          case ZV_TOWARDS_ZERO: r = trunc(x); break;                            \
          case ZV_TOWARDS_POSITIVE: r = ceil(x); break;                         \
          case ZV_TOWARDS_NEGATIVE: r = floor(x); break;                        \
          case ZV_NEAREST_AWAY: r = round(x); break;                            \
          default: r = rint(x); break;                                          \
          }                                                                     \
          if (r >= lo && r <= hi) { d[i] = (DT)r; continue; }                   \
          if (c->out_of_range == ZV_OOR_ERROR) { *why = ZV_OUT_OF_RANGE; *value = x; return i; } \
          if (c->out_of_range == ZV_OOR_WRAP) zv_store_wrapped(c->dst, dst, i, r); \
          else d[i] = r < lo ? (DT)llo : (DT)lhi;                               \
      }                                                                         \
      return -1; }

/* integer source, integer target */
#define ZV_I2I(ST, DT)                                                          \
    { const ST* s = (const ST*)src; DT* d = (DT*)dst; ST x;                     \
      for (i = 0; i < n; i++) {                                                 \
          x = s[i];                                                             \
          if ((x < 0 && (long double)x < lo) || (x > 0 && (long double)x > hi)) { \
              if (c->out_of_range == ZV_OOR_ERROR) { *why = ZV_OUT_OF_RANGE; *value = (long double)x; return i; } \
              if (c->out_of_range == ZV_OOR_CLAMP) { d[i] = (DT)(x < 0 ? lo : hi); continue; } \
          }                                                                     \
          d[i] = (DT)x;    /* (wrap: truncation is modulo 2^bits) */            \
      }                                                                         \
      return -1; }

static inline int zv_exact_into(int src, int dst) {
    /* whether every value of src is a value of dst */
    int sbits = zv_bits(src);
    if (src == dst) return 1;
    if (zv_is_float(src)) return zv_is_float(dst) && zv_bits(dst) > sbits;
    if (zv_is_float(dst)) {
        int p = dst == ZV_F16 ? 11 : dst == ZV_F32 ? 24 : 53;
        return sbits - (zv_is_signed(src) ? 1 : 0) <= p;
    }
    if (zv_is_signed(src)) return zv_is_signed(dst) && zv_bits(dst) >= sbits;
    return zv_bits(dst) > sbits || (!zv_is_signed(dst) && zv_bits(dst) == sbits);
}

static inline int64_t zv_cast_fast(const zv_cast* c, const void* src, void* dst, int64_t n,
                                   int* why, long double* value) {
    int64_t i;
    double lo = (double)zv_min(c->dst), hi = (double)zv_max(c->dst);
    long double llo = zv_min(c->dst), lhi = zv_max(c->dst);
    if (c->nmap || c->src == ZV_F16 || c->dst == ZV_F16) return -2;
    if (zv_exact_into(c->src, c->dst)) {
        switch (c->src) {
        case ZV_I8: ZV_FOR_DST(ZV_EXACT, int8_t)
        case ZV_I16: ZV_FOR_DST(ZV_EXACT, int16_t)
        case ZV_I32: ZV_FOR_DST(ZV_EXACT, int32_t)
        case ZV_I64: ZV_FOR_DST(ZV_EXACT, int64_t)
        case ZV_U8: ZV_FOR_DST(ZV_EXACT, uint8_t)
        case ZV_U16: ZV_FOR_DST(ZV_EXACT, uint16_t)
        case ZV_U32: ZV_FOR_DST(ZV_EXACT, uint32_t)
        case ZV_U64: ZV_FOR_DST(ZV_EXACT, uint64_t)
        case ZV_F32: ZV_FOR_DST(ZV_EXACT, float)
        case ZV_F64: ZV_FOR_DST(ZV_EXACT, double)
        default: return -2;
        }
    }
    if (zv_is_float(c->src) && !zv_is_float(c->dst)) {
        /* hi of int64 / uint64 as a double is 2^63 / 2^64, outside the range: one less */
        if (c->dst == ZV_I64 || c->dst == ZV_U64) hi = nextafter(hi, 0);
        if (c->src == ZV_F32) { ZV_FOR_DST(ZV_F2I, float) }
        ZV_FOR_DST(ZV_F2I, double)
    }
    if (!zv_is_float(c->src) && !zv_is_float(c->dst)) {
        long double lo = llo, hi = lhi;
        switch (c->src) {
        case ZV_I8: ZV_FOR_DST(ZV_I2I, int8_t)
        case ZV_I16: ZV_FOR_DST(ZV_I2I, int16_t)
        case ZV_I32: ZV_FOR_DST(ZV_I2I, int32_t)
        case ZV_I64: ZV_FOR_DST(ZV_I2I, int64_t)
        case ZV_U8: ZV_FOR_DST(ZV_I2I, uint8_t)
        case ZV_U16: ZV_FOR_DST(ZV_I2I, uint16_t)
        case ZV_U32: ZV_FOR_DST(ZV_I2I, uint32_t)
        default: ZV_FOR_DST(ZV_I2I, uint64_t)
        }
    }
    if (c->src == ZV_F64 && c->dst == ZV_F32 && c->rounding == ZV_NEAREST_EVEN) {
        const double* s = (const double*)src; float* d = (float*)dst;
        for (i = 0; i < n; i++) {
            float y = (float)s[i];
            if (isinf(y) && !isinf(s[i]) && c->out_of_range == ZV_OOR_ERROR) {
                *why = ZV_OUT_OF_RANGE; *value = s[i]; return i;
            }
            d[i] = y;
        }
        return -1;
    }
    return -2;
}

/* Cast n elements of src (type c->src) to dst (type c->dst).  Returns -1, or the index
 * of the first element that cannot be cast, with *why (ZV_NOT_FINITE, ZV_OUT_OF_RANGE)
 * and *value (the element) set. */
static inline int64_t zv_cast_values(const zv_cast* c, const void* src, void* dst, int64_t n,
                                     int* why, long double* value) {
    int dst_float = zv_is_float(c->dst), k;
    long double lo = zv_min(c->dst), hi = zv_max(c->dst), x, r;
    int64_t i = zv_cast_fast(c, src, dst, n, why, value);
    if (i != -2) return i;
    for (i = 0; i < n; i++) {
        x = zv_load(c->src, src, i);
        for (k = 0; k < c->nmap; k++) {
            if (c->keys[k] == x || (isnan(c->keys[k]) && isnan(x))) break;
        }
        if (k < c->nmap) {
            zv_store(c->dst, dst, i, c->vals[k]);
            continue;
        }
        if (!isfinite(x)) {
            if (!dst_float) { *why = ZV_NOT_FINITE; *value = x; return i; }
            zv_store(c->dst, dst, i, x);
            continue;
        }
        r = dst_float ? zv_round_float(x, c->dst, c->rounding) : zv_round_int(x, c->rounding);
        if (r < lo || r > hi) {
            if (c->out_of_range == ZV_OOR_ERROR) { *why = ZV_OUT_OF_RANGE; *value = x; return i; }
            if (c->out_of_range == ZV_OOR_WRAP && !dst_float) {
                zv_store_wrapped(c->dst, dst, i, r);
                continue;
            }
            r = dst_float ? (r < 0 ? -(long double)INFINITY : (long double)INFINITY) : (r < lo ? lo : hi);
        }
        zv_store(c->dst, dst, i, r);
    }
    return -1;
}

/* ---- scale_offset: (x - offset) * scale, and x / scale + offset, in the type's
 * arithmetic as numpy does it (zarr-python's): floats in their own precision (float16
 * through float32, rounded after each operation), integers exactly and checked against
 * the type's range (int64: numpy's wrapping int64 arithmetic), decoded integers only
 * when the division is exact. */

typedef struct {
    int type, decode;
    double offset_f, scale_f;          /* floats */
    int64_t offset_i, scale_i;         /* integers (uint64: the bits) */
} zv_scale_offset;

static inline uint16_t zv_half_round(float f) {
    long double v = f, r;
    if (!isfinite(v)) return zv_half_bits(v);
    r = zv_round_float(v, ZV_F16, ZV_NEAREST_EVEN);
    if (fabsl(r) > 65504) r = r < 0 ? -(long double)INFINITY : (long double)INFINITY;
    return zv_half_bits(r);
}

static inline int64_t zv_scale_offset_values(const zv_scale_offset* c, const void* src, void* dst,
                                             int64_t n, int* why) {
    int64_t i;
    int t = c->type;
    if (t == ZV_F32) {
        const float* s = (const float*)src; float* d = (float*)dst;
        float o = (float)c->offset_f, k = (float)c->scale_f, y;
        if (c->decode) for (i = 0; i < n; i++) { y = s[i] / k; d[i] = y + o; }
        else for (i = 0; i < n; i++) { y = s[i] - o; d[i] = y * k; }
        return -1;
    }
    if (t == ZV_F64) {
        const double* s = (const double*)src; double* d = (double*)dst;
        double o = c->offset_f, k = c->scale_f, y;
        if (c->decode) for (i = 0; i < n; i++) { y = s[i] / k; d[i] = y + o; }
        else for (i = 0; i < n; i++) { y = s[i] - o; d[i] = y * k; }
        return -1;
    }
    if (t == ZV_F16) {
        const uint16_t* s = (const uint16_t*)src; uint16_t* d = (uint16_t*)dst;
        float o = (float)c->offset_f, k = (float)c->scale_f;
        uint16_t h;
        for (i = 0; i < n; i++) {
            float x = (float)zv_half_value(s[i]);
            if (c->decode) { h = zv_half_round(x / k); d[i] = zv_half_round((float)zv_half_value(h) + o); }
            else { h = zv_half_round(x - o); d[i] = zv_half_round((float)zv_half_value(h) * k); }
        }
        return -1;
    }
    if (t == ZV_U64) {
        const uint64_t* s = (const uint64_t*)src; uint64_t* d = (uint64_t*)dst;
        unsigned __int128 o = (uint64_t)c->offset_i, k = (uint64_t)c->scale_i, x, y;
        for (i = 0; i < n; i++) {
            x = s[i];
            if (c->decode) {
                if (x % k) { *why = ZV_INEXACT; return i; }
                y = x / k + o;
            } else {
                if (x < o) { *why = ZV_OUT_OF_RANGE; return i; }
                y = (x - o) * k;   /* both < 2^64: no overflow of 128 bits */
            }
            if (y > UINT64_MAX) { *why = ZV_OUT_OF_RANGE; return i; }
            d[i] = (uint64_t)y;
        }
        return -1;
    }
    {
        /* int8 .. int64, uint8 .. uint32: in int64 (wrapping, as numpy's), range-checked */
        uint64_t o = (uint64_t)c->offset_i, k = (uint64_t)c->scale_i, y;
        int64_t ks = c->scale_i, x, v;
        long double lo = zv_min(t), hi = zv_max(t);
        for (i = 0; i < n; i++) {
            x = (int64_t)zv_load(t, src, i);
            if (c->decode) {
                if (ks == -1) y = (uint64_t)0 - (uint64_t)x;
                else {
                    if (x % ks) { *why = ZV_INEXACT; return i; }
                    y = (uint64_t)(x / ks);
                }
                y += o;
            } else {
                y = ((uint64_t)x - o) * k;
            }
            v = (int64_t)y;
            if (t != ZV_I64 && ((long double)v < lo || (long double)v > hi)) { *why = ZV_OUT_OF_RANGE; return i; }
            zv_store(t, dst, i, (long double)v);
        }
        return -1;
    }
}

/* ---- bitround (encode only; decoding is the identity): n units of `bytes` bytes rounded
 * in place, as zarrs and numcodecs do it: a float's significand (`mantissa` bits) to
 * `keepbits` bits, an integer's bits from its most significant set bit (its bit pattern,
 * unsigned), ties to even, with a saturating add. */

#define ZV_BITROUND(T, MAXV)                                                            \
    {                                                                                   \
        T* d = (T*)data; T v, mask, half; int maxbits, maskbits;                        \
        for (i = 0; i < n; i++) {                                                       \
            v = d[i];                                                                   \
            maxbits = mantissa ? mantissa : (v ? width - zv_clz64((uint64_t)v, width) : 0); \
            if (keepbits >= maxbits) continue;                                          \
            maskbits = maxbits - keepbits;                                              \
            mask = (T)(((T)MAXV >> maskbits) << maskbits);                              \
            half = (T)((((T)1) << (maskbits - 1)) - 1);                                 \
            half = (T)(half + ((v >> maskbits) & 1));                                   \
            v = (T)MAXV - v < half ? (T)MAXV : (T)(v + half);                           \
            d[i] = (T)(v & mask);                                                       \
        }                                                                               \
    }

static inline int zv_clz64(uint64_t v, int width) {
    int z = 0;
    uint64_t top = (uint64_t)1 << (width - 1);
    while (z < width && !(v & top)) { v <<= 1; z++; }
    return z;
}

static inline void zv_bitround(void* data, int64_t n, int bytes, int mantissa, int keepbits) {
    int64_t i;
    int width = bytes * 8;
    switch (bytes) {
    case 1: ZV_BITROUND(uint8_t, UINT8_MAX) break;
    case 2: ZV_BITROUND(uint16_t, UINT16_MAX) break;
    case 4: ZV_BITROUND(uint32_t, UINT32_MAX) break;
    default: ZV_BITROUND(uint64_t, UINT64_MAX) break;
    }
}

#endif
