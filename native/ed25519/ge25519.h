/*
 * Points of edwards25519 (-x^2 + y^2 = 1 + d x^2 y^2) in the representations of the ref10
 * design: extended (p3: x = X/Z, y = Y/Z, xy = T/Z), projective (p2), the completed result
 * of an addition or a doubling (p1p1: x = X/Z, y = Y/T), and the form an addend is kept in
 * (cached: Y+X, Y-X, Z, 2dT). The formulas are Hisil, Wong, Carter and Dawson's (2008).
 */
#ifndef SLIPWAY_GE25519_H
#define SLIPWAY_GE25519_H
#include "fe25519.h"

typedef struct { fe X, Y, Z; } ge_p2;
typedef struct { fe X, Y, Z, T; } ge_p3;
typedef struct { fe X, Y, Z, T; } ge_p1p1;
typedef struct { fe YplusX, YminusX, Z, T2d; } ge_cached;

/* d, 2d and sqrt(-1), derived once by ge_constants_init (ed25519-batch.c). */
extern fe ge_d, ge_d2, ge_sqrtm1;

static inline void ge_p3_0(ge_p3 *r) {
  fe_0(r->X);
  fe_1(r->Y);
  fe_1(r->Z);
  fe_0(r->T);
}

static inline void ge_p1p1_to_p2(ge_p2 *r, const ge_p1p1 *p) {
  fe_mul(r->X, p->X, p->T);
  fe_mul(r->Y, p->Y, p->Z);
  fe_mul(r->Z, p->Z, p->T);
}

static inline void ge_p1p1_to_p3(ge_p3 *r, const ge_p1p1 *p) {
  fe_mul(r->X, p->X, p->T);
  fe_mul(r->Y, p->Y, p->Z);
  fe_mul(r->Z, p->Z, p->T);
  fe_mul(r->T, p->X, p->Y);
}

static inline void ge_p3_to_p2(ge_p2 *r, const ge_p3 *p) {
  fe_copy(r->X, p->X);
  fe_copy(r->Y, p->Y);
  fe_copy(r->Z, p->Z);
}

static inline void ge_p3_to_cached(ge_cached *r, const ge_p3 *p) {
  fe_add(r->YplusX, p->Y, p->X);
  fe_sub(r->YminusX, p->Y, p->X);
  fe_copy(r->Z, p->Z);
  fe_mul(r->T2d, p->T, ge_d2);
}

/* r = 2p */
static inline void ge_p2_dbl(ge_p1p1 *r, const ge_p2 *p) {
  fe t0;
  fe_sq(r->X, p->X);
  fe_sq(r->Z, p->Y);
  fe_sq(r->T, p->Z);
  fe_add(r->T, r->T, r->T);
  fe_add(r->Y, p->X, p->Y);
  fe_sq(t0, r->Y);
  fe_add(r->Y, r->Z, r->X);
  fe_sub(r->Z, r->Z, r->X);
  fe_sub(r->X, t0, r->Y);
  fe_sub(r->T, r->T, r->Z);
}

static inline void ge_p3_dbl(ge_p1p1 *r, const ge_p3 *p) {
  ge_p2 q;
  ge_p3_to_p2(&q, p);
  ge_p2_dbl(r, &q);
}

/* r = p + q */
static inline void ge_add(ge_p1p1 *r, const ge_p3 *p, const ge_cached *q) {
  fe t0;
  fe_add(r->X, p->Y, p->X);
  fe_sub(r->Y, p->Y, p->X);
  fe_mul(r->Z, r->X, q->YplusX);
  fe_mul(r->Y, r->Y, q->YminusX);
  fe_mul(r->T, q->T2d, p->T);
  fe_mul(r->X, p->Z, q->Z);
  fe_add(t0, r->X, r->X);
  fe_sub(r->X, r->Z, r->Y);
  fe_add(r->Y, r->Z, r->Y);
  fe_add(r->Z, t0, r->T);
  fe_sub(r->T, t0, r->T);
}

/* r = p - q */
static inline void ge_sub(ge_p1p1 *r, const ge_p3 *p, const ge_cached *q) {
  fe t0;
  fe_add(r->X, p->Y, p->X);
  fe_sub(r->Y, p->Y, p->X);
  fe_mul(r->Z, r->X, q->YminusX);
  fe_mul(r->Y, r->Y, q->YplusX);
  fe_mul(r->T, q->T2d, p->T);
  fe_mul(r->X, p->Z, q->Z);
  fe_add(t0, r->X, r->X);
  fe_sub(r->X, r->Z, r->Y);
  fe_add(r->Y, r->Z, r->Y);
  fe_sub(r->Z, t0, r->T);
  fe_add(r->T, t0, r->T);
}

/*
 * Decodes a point as libsodium's verification accepts an encoding: y below p (canonical),
 * on the curve, x chosen by the sign bit. Returns 0 on success, -1 when no point has this
 * encoding.
 */
static inline int ge_decode(ge_p3 *r, const uint8_t s[32]) {
  /* y >= p: bytes 1..30 all 0xff, byte 31 (sign bit aside) 0x7f, byte 0 at least 0xed. */
  int high = (s[31] & 0x7f) == 0x7f && s[0] >= 0xed;
  for (int i = 1; high && i < 31; i++) high = s[i] == 0xff;
  if (high) return -1;
  fe u, v, v3, vxx, check;
  fe_frombytes(r->Y, s);
  fe_1(r->Z);
  fe_sq(u, r->Y);
  fe_mul(v, u, ge_d);
  fe_sub(u, u, r->Z); /* y^2 - 1 */
  fe_add(v, v, r->Z); /* d y^2 + 1 */
  fe_sq(v3, v);
  fe_mul(v3, v3, v);  /* v^3 */
  fe_sq(r->X, v3);
  fe_mul(r->X, r->X, v);
  fe_mul(r->X, r->X, u); /* u v^7 */
  fe_pow22523(r->X, r->X);
  fe_mul(r->X, r->X, v3);
  fe_mul(r->X, r->X, u); /* u v^3 (u v^7)^((p-5)/8) */
  fe_sq(vxx, r->X);
  fe_mul(vxx, vxx, v);
  fe_sub(check, vxx, u);
  if (!fe_iszero(check)) {
    fe_add(check, vxx, u);
    if (!fe_iszero(check)) return -1;
    fe_mul(r->X, r->X, ge_sqrtm1);
  }
  if (fe_isnegative(r->X) != (s[31] >> 7)) fe_neg(r->X, r->X);
  fe_mul(r->T, r->X, r->Y);
  return 0;
}

/* Whether p is one of the eight points of order dividing 8 (x = 0, y = 0, or x = ±y·sqrt(-1)). */
static inline int ge_has_small_order(const ge_p3 *p) {
  fe ysqrtm1, c;
  if (fe_iszero(p->X) || fe_iszero(p->Y)) return 1;
  fe_mul(ysqrtm1, p->Y, ge_sqrtm1);
  fe_sub(c, ysqrtm1, p->X);
  if (fe_iszero(c)) return 1;
  fe_add(c, ysqrtm1, p->X);
  return fe_iszero(c);
}

/* Whether p is the neutral element (X = 0, Y = Z). */
static inline int ge_is_neutral(const ge_p2 *p) {
  return fe_iszero(p->X) && fe_equal(p->Y, p->Z);
}

#endif
