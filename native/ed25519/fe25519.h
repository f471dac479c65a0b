/*
 * Arithmetic modulo p = 2^255 - 19 in five 51-bit limbs, with 128-bit products. Variable
 * time throughout: only public data (signatures, keys, messages) is ever computed on.
 *
 * Limb bounds: fe_mul and fe_sq take limbs up to 2^54 and return limbs below 2^51 + 2^13;
 * fe_add returns the plain sum (callers add at most two such outputs before a product);
 * fe_sub adds 4p first, so its subtrahend may be up to 2^53, and returns carried limbs.
 */
#ifndef SLIPWAY_FE25519_H
#define SLIPWAY_FE25519_H
#include <stdint.h>
#include <string.h>

typedef uint64_t fe[5];
typedef unsigned __int128 u128;
#define FE_MASK ((1ULL << 51) - 1)

static inline void fe_copy(fe r, const fe a) { memcpy(r, a, sizeof(fe)); }
static inline void fe_0(fe r) { memset(r, 0, sizeof(fe)); }
static inline void fe_1(fe r) {
  fe_0(r);
  r[0] = 1;
}

static inline void fe_add(fe r, const fe a, const fe b) {
  for (int i = 0; i < 5; i++) r[i] = a[i] + b[i];
}

static inline void fe_carry(fe r) {
  uint64_t c;
  c = r[0] >> 51; r[0] &= FE_MASK; r[1] += c;
  c = r[1] >> 51; r[1] &= FE_MASK; r[2] += c;
  c = r[2] >> 51; r[2] &= FE_MASK; r[3] += c;
  c = r[3] >> 51; r[3] &= FE_MASK; r[4] += c;
  c = r[4] >> 51; r[4] &= FE_MASK; r[0] += 19 * c;
}

static inline void fe_sub(fe r, const fe a, const fe b) {
  r[0] = a[0] + 0x1FFFFFFFFFFFB4ULL - b[0];
  r[1] = a[1] + 0x1FFFFFFFFFFFFCULL - b[1];
  r[2] = a[2] + 0x1FFFFFFFFFFFFCULL - b[2];
  r[3] = a[3] + 0x1FFFFFFFFFFFFCULL - b[3];
  r[4] = a[4] + 0x1FFFFFFFFFFFFCULL - b[4];
  fe_carry(r);
}

static inline void fe_neg(fe r, const fe a) {
  fe zero;
  fe_0(zero);
  fe_sub(r, zero, a);
}

static inline void fe_reduce_products(fe r, u128 t0, u128 t1, u128 t2, u128 t3, u128 t4) {
  uint64_t c;
  r[0] = (uint64_t)t0 & FE_MASK; c = (uint64_t)(t0 >> 51);
  t1 += c; r[1] = (uint64_t)t1 & FE_MASK; c = (uint64_t)(t1 >> 51);
  t2 += c; r[2] = (uint64_t)t2 & FE_MASK; c = (uint64_t)(t2 >> 51);
  t3 += c; r[3] = (uint64_t)t3 & FE_MASK; c = (uint64_t)(t3 >> 51);
  t4 += c; r[4] = (uint64_t)t4 & FE_MASK; c = (uint64_t)(t4 >> 51);
  r[0] += c * 19;
  c = r[0] >> 51; r[0] &= FE_MASK; r[1] += c;
}

static inline void fe_mul(fe r, const fe a, const fe b) {
  const uint64_t b1 = 19 * b[1], b2 = 19 * b[2], b3 = 19 * b[3], b4 = 19 * b[4];
  u128 t0 = (u128)a[0] * b[0] + (u128)a[1] * b4 + (u128)a[2] * b3 + (u128)a[3] * b2 + (u128)a[4] * b1;
  u128 t1 = (u128)a[0] * b[1] + (u128)a[1] * b[0] + (u128)a[2] * b4 + (u128)a[3] * b3 + (u128)a[4] * b2;
  u128 t2 = (u128)a[0] * b[2] + (u128)a[1] * b[1] + (u128)a[2] * b[0] + (u128)a[3] * b4 + (u128)a[4] * b3;
  u128 t3 = (u128)a[0] * b[3] + (u128)a[1] * b[2] + (u128)a[2] * b[1] + (u128)a[3] * b[0] + (u128)a[4] * b4;
  u128 t4 = (u128)a[0] * b[4] + (u128)a[1] * b[3] + (u128)a[2] * b[2] + (u128)a[3] * b[1] + (u128)a[4] * b[0];
  fe_reduce_products(r, t0, t1, t2, t3, t4);
}

static inline void fe_sq(fe r, const fe a) {
  const uint64_t d0 = 2 * a[0], d1 = 2 * a[1], a3_19 = 19 * a[3], a4_19 = 19 * a[4];
  u128 t0 = (u128)a[0] * a[0] + (u128)d1 * a4_19 + (u128)(2 * a[2]) * a3_19;
  u128 t1 = (u128)d0 * a[1] + (u128)a[3] * a3_19 + (u128)(2 * a[2]) * a4_19;
  u128 t2 = (u128)d0 * a[2] + (u128)a[1] * a[1] + (u128)(2 * a[3]) * a4_19;
  u128 t3 = (u128)d0 * a[3] + (u128)d1 * a[2] + (u128)a[4] * a4_19;
  u128 t4 = (u128)d0 * a[4] + (u128)d1 * a[3] + (u128)a[2] * a[2];
  fe_reduce_products(r, t0, t1, t2, t3, t4);
}

static inline void fe_sq_times(fe r, const fe a, int n) {
  fe_sq(r, a);
  while (--n > 0) fe_sq(r, r);
}

/* The 255 low bits, little-endian; bit 255 is ignored (an encoding's sign bit). */
static inline void fe_frombytes(fe r, const uint8_t s[32]) {
  uint64_t x[4];
  for (int i = 0; i < 4; i++) {
    uint64_t v = 0;
    for (int j = 7; j >= 0; j--) v = (v << 8) | s[8 * i + j];
    x[i] = v;
  }
  x[3] &= 0x7FFFFFFFFFFFFFFFULL;
  r[0] = x[0] & FE_MASK;
  r[1] = ((x[0] >> 51) | (x[1] << 13)) & FE_MASK;
  r[2] = ((x[1] >> 38) | (x[2] << 26)) & FE_MASK;
  r[3] = ((x[2] >> 25) | (x[3] << 39)) & FE_MASK;
  r[4] = x[3] >> 12;
}

/* The canonical encoding (the value reduced below p). */
static inline void fe_tobytes(uint8_t s[32], const fe a) {
  fe t;
  fe_copy(t, a);
  fe_carry(t);
  fe_carry(t);
  /* t < 2^255 now; t >= p exactly when t + 19 reaches 2^255. */
  uint64_t q = (t[0] + 19) >> 51;
  q = (t[1] + q) >> 51;
  q = (t[2] + q) >> 51;
  q = (t[3] + q) >> 51;
  q = (t[4] + q) >> 51;
  t[0] += 19 * q;
  uint64_t c;
  c = t[0] >> 51; t[0] &= FE_MASK; t[1] += c;
  c = t[1] >> 51; t[1] &= FE_MASK; t[2] += c;
  c = t[2] >> 51; t[2] &= FE_MASK; t[3] += c;
  c = t[3] >> 51; t[3] &= FE_MASK; t[4] += c;
  t[4] &= FE_MASK;
  const uint64_t x[4] = {t[0] | (t[1] << 51), (t[1] >> 13) | (t[2] << 38), (t[2] >> 26) | (t[3] << 25),
                         (t[3] >> 39) | (t[4] << 12)};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 8; j++) s[8 * i + j] = (uint8_t)(x[i] >> (8 * j));
}

static inline int fe_iszero(const fe a) {
  uint8_t s[32];
  fe_tobytes(s, a);
  uint8_t any = 0;
  for (int i = 0; i < 32; i++) any |= s[i];
  return any == 0;
}

static inline int fe_isnegative(const fe a) {
  uint8_t s[32];
  fe_tobytes(s, a);
  return s[0] & 1;
}

static inline int fe_equal(const fe a, const fe b) {
  fe d;
  fe_sub(d, a, b);
  return fe_iszero(d);
}

/* a^(2^252 - 3), the exponent of the square root candidate when p = 5 (mod 8). */
static inline void fe_pow22523(fe r, const fe z) {
  fe t0, t1, t2;
  fe_sq(t0, z);                /* 2 */
  fe_sq_times(t1, t0, 2);      /* 8 */
  fe_mul(t1, z, t1);           /* 9 */
  fe_mul(t0, t0, t1);          /* 11 */
  fe_sq(t0, t0);               /* 22 */
  fe_mul(t0, t1, t0);          /* 2^5 - 1 */
  fe_sq_times(t1, t0, 5);
  fe_mul(t0, t1, t0);          /* 2^10 - 1 */
  fe_sq_times(t1, t0, 10);
  fe_mul(t1, t1, t0);          /* 2^20 - 1 */
  fe_sq_times(t2, t1, 20);
  fe_mul(t1, t2, t1);          /* 2^40 - 1 */
  fe_sq_times(t1, t1, 10);
  fe_mul(t0, t1, t0);          /* 2^50 - 1 */
  fe_sq_times(t1, t0, 50);
  fe_mul(t1, t1, t0);          /* 2^100 - 1 */
  fe_sq_times(t2, t1, 100);
  fe_mul(t1, t2, t1);          /* 2^200 - 1 */
  fe_sq_times(t1, t1, 50);
  fe_mul(t0, t1, t0);          /* 2^250 - 1 */
  fe_sq_times(t0, t0, 2);      /* 2^252 - 4 */
  fe_mul(r, t0, z);            /* 2^252 - 3 */
}

/* a^(p - 2) = 1/a. */
static inline void fe_invert(fe r, const fe z) {
  fe t0, t1, t2, t3;
  fe_sq(t0, z);                /* 2 */
  fe_sq_times(t1, t0, 2);      /* 8 */
  fe_mul(t1, z, t1);           /* 9 */
  fe_mul(t0, t0, t1);          /* 11 */
  fe_sq(t2, t0);               /* 22 */
  fe_mul(t1, t1, t2);          /* 2^5 - 1 */
  fe_sq_times(t2, t1, 5);
  fe_mul(t1, t2, t1);          /* 2^10 - 1 */
  fe_sq_times(t2, t1, 10);
  fe_mul(t2, t2, t1);          /* 2^20 - 1 */
  fe_sq_times(t3, t2, 20);
  fe_mul(t2, t3, t2);          /* 2^40 - 1 */
  fe_sq_times(t2, t2, 10);
  fe_mul(t1, t2, t1);          /* 2^50 - 1 */
  fe_sq_times(t2, t1, 50);
  fe_mul(t2, t2, t1);          /* 2^100 - 1 */
  fe_sq_times(t3, t2, 100);
  fe_mul(t2, t3, t2);          /* 2^200 - 1 */
  fe_sq_times(t2, t2, 50);
  fe_mul(t1, t2, t1);          /* 2^250 - 1 */
  fe_sq_times(t1, t1, 5);      /* 2^255 - 32 */
  fe_mul(r, t1, t0);           /* 2^255 - 21 */
}

#endif
