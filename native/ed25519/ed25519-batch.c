/*
 * Batch verification of ed25519 signatures (Bernstein, Duif, Lange, Schwabe and Yang, 2011):
 * with random 128-bit z_i, the n equations R_i + h_i A_i - s_i B = 0 are checked at once as
 *
 *   8 (sum z_i R_i + sum (z_i h_i) A_i - (sum z_i s_i) B) = 0,
 *
 * one multi-scalar multiplication (Straus: the 253 doublings shared by all 2n + 1 points)
 * instead of n double-scalar multiplications: about half the cost a signature. A batch that
 * fails says only that some signature does not verify; the caller then verifies each alone.
 *
 * What is accepted: libsodium's checks on the encodings (s below L; R and A canonical, on the
 * curve and not of small order), and the cofactored equation. A signature that passes the
 * cofactorless check (R = sB - hA exactly, what libsodium and Solana's validators ask) passes
 * here; the reverse differs only for a signature whose R or key carries a small-order
 * component, which only the key's own holder can make (docs/SECURITY.md).
 */
#include "ed25519-batch.h"
#include <stdlib.h>
#include <sys/random.h>
#include "ge25519.h"
#include "sha512.h"

fe ge_d, ge_d2, ge_sqrtm1;

/* L = 2^252 + 27742317777372353535851937790883648493, little-endian words. */
static const uint64_t L[4] = {0x5812631a5cf5d3edULL, 0x14def9dea2f79cd6ULL, 0, 0x1000000000000000ULL};
/* floor(2^512 / L), for Barrett reduction; derived in ed25519_batch_init. */
static uint64_t MU[5];

typedef uint64_t sc[4];

/* ---- scalars modulo L ---- */

static int sc_less_than(const uint64_t *a, const uint64_t *b, int words) {
  for (int i = words - 1; i >= 0; i--)
    if (a[i] != b[i]) return a[i] < b[i];
  return 0;
}

/* r = a - b over `words` words, returning the borrow. */
static uint64_t sc_sub_words(uint64_t *r, const uint64_t *a, const uint64_t *b, int words) {
  uint64_t borrow = 0;
  for (int i = 0; i < words; i++) {
    u128 d = (u128)a[i] - b[i] - borrow;
    r[i] = (uint64_t)d;
    borrow = (uint64_t)(d >> 64) & 1;
  }
  return borrow;
}

/* r (an + bn words) = a * b */
static void sc_mul_words(uint64_t *r, const uint64_t *a, int an, const uint64_t *b, int bn) {
  memset(r, 0, sizeof(uint64_t) * (an + bn));
  for (int i = 0; i < an; i++) {
    uint64_t carry = 0;
    for (int j = 0; j < bn; j++) {
      u128 t = (u128)a[i] * b[j] + r[i + j] + carry;
      r[i + j] = (uint64_t)t;
      carry = (uint64_t)(t >> 64);
    }
    r[i + bn] = carry;
  }
}

/* r = x mod L for x below 2^512 (Barrett; Menezes et al., Handbook of Applied Cryptography, 14.42). */
static void sc_reduce(sc r, const uint64_t x[8]) {
  uint64_t q2[10], q3L[10], rem[5];
  sc_mul_words(q2, x + 3, 5, MU, 5);
  sc_mul_words(q3L, q2 + 5, 5, L, 4);
  sc_sub_words(rem, x, q3L, 5); /* modulo 2^320 */
  const uint64_t L5[5] = {L[0], L[1], L[2], L[3], 0};
  while (!sc_less_than(rem, L5, 5)) sc_sub_words(rem, rem, L5, 5);
  memcpy(r, rem, sizeof(sc));
}

static void sc_from_hash(sc r, const uint8_t h[64]) {
  uint64_t x[8];
  for (int i = 0; i < 8; i++) {
    uint64_t v = 0;
    for (int j = 7; j >= 0; j--) v = (v << 8) | h[8 * i + j];
    x[i] = v;
  }
  sc_reduce(r, x);
}

/* Loads s; 0 when it is not below L (libsodium refuses such an s). */
static int sc_load_canonical(sc r, const uint8_t s[32]) {
  for (int i = 0; i < 4; i++) {
    uint64_t v = 0;
    for (int j = 7; j >= 0; j--) v = (v << 8) | s[8 * i + j];
    r[i] = v;
  }
  return sc_less_than(r, L, 4);
}

static void sc_mul(sc r, const sc a, const sc b) {
  uint64_t x[8];
  sc_mul_words(x, a, 4, b, 4);
  sc_reduce(r, x);
}

static void sc_add(sc r, const sc a, const sc b) {
  uint64_t carry = 0;
  for (int i = 0; i < 4; i++) {
    u128 t = (u128)a[i] + b[i] + carry;
    r[i] = (uint64_t)t;
    carry = (uint64_t)(t >> 64);
  }
  if (!sc_less_than(r, L, 4)) sc_sub_words(r, r, L, 4); /* a, b < L < 2^253: no carry out */
}

static void sc_negate(sc r, const sc a) {
  const sc zero = {0, 0, 0, 0};
  if (memcmp(a, zero, sizeof(sc)) == 0) {
    memset(r, 0, sizeof(sc));
    return;
  }
  sc_sub_words(r, L, a, 4);
}

/*
 * Width-5 NAF: digits odd in [-15, 15] or 0, at least four zeros after each non-zero one.
 * Returns the position of the highest non-zero digit, -1 for zero.
 */
static int sc_wnaf(int8_t digits[256], const sc scalar) {
  uint64_t k[5] = {scalar[0], scalar[1], scalar[2], scalar[3], 0};
  int top = -1;
  memset(digits, 0, 256);
  for (int i = 0; i < 256 && (k[0] | k[1] | k[2] | k[3] | k[4]); i++) {
    if (k[0] & 1) {
      int digit = (int)(k[0] & 31);
      if (digit >= 16) digit -= 32;
      digits[i] = (int8_t)digit;
      top = i;
      if (digit > 0) {
        k[0] -= (uint64_t)digit; /* the low five bits were `digit`: no borrow */
      } else {
        uint64_t add = (uint64_t)(-digit);
        for (int w = 0; w < 5 && add; w++) {
          k[w] += add;
          add = k[w] < add;
        }
      }
    }
    for (int w = 0; w < 4; w++) k[w] = (k[w] >> 1) | (k[w + 1] << 63);
    k[4] >>= 1;
  }
  return top;
}

/* ---- the multi-scalar multiplication ---- */

/* The odd multiples P, 3P, ..., 15P. */
static void multiples(ge_cached table[8], const ge_p3 *p) {
  ge_p1p1 t;
  ge_p3 twice, acc;
  ge_p3_to_cached(&table[0], p);
  ge_p3_dbl(&t, p);
  ge_p1p1_to_p3(&twice, &t);
  acc = *p;
  for (int i = 1; i < 8; i++) {
    ge_cached twice_cached;
    ge_p3_to_cached(&twice_cached, &twice);
    ge_add(&t, &acc, &twice_cached);
    ge_p1p1_to_p3(&acc, &t);
    ge_p3_to_cached(&table[i], &acc);
  }
}

static ge_cached base_multiples[8];

struct term {
  const ge_cached *table;
  int8_t digits[256];
};

/*
 * The batch's random coefficients come from the kernel (getrandom), taken RANDOM_POOL bytes at
 * a time and used once each: a system call per batch cost about 12 us on a virtual machine,
 * as much as a fifth of a small batch's verification.
 */
#define RANDOM_POOL 4096

struct ed25519_scratch {
  ge_cached tables[2 * ED25519_BATCH_MAX][8];
  struct term terms[2 * ED25519_BATCH_MAX + 1];
  uint8_t random[RANDOM_POOL];
  size_t random_used; /* bytes of `random` already handed out: never handed out again */
};

ed25519_scratch *ed25519_scratch_new(void) {
  ed25519_scratch *scratch = malloc(sizeof(ed25519_scratch));
  if (scratch != NULL) scratch->random_used = RANDOM_POOL; /* empty: filled on first use */
  return scratch;
}

/* `bytes` unpredictable bytes, each handed out once; NULL when the kernel gives none. */
static const uint8_t *fresh_random(ed25519_scratch *scratch, size_t bytes) {
  if (RANDOM_POOL - scratch->random_used < bytes) {
    size_t got = 0;
    while (got < RANDOM_POOL) {
      ssize_t n = getrandom(scratch->random + got, RANDOM_POOL - got, 0);
      if (n <= 0) return NULL;
      got += (size_t)n;
    }
    scratch->random_used = 0;
  }
  const uint8_t *out = scratch->random + scratch->random_used;
  scratch->random_used += bytes;
  return out;
}
void ed25519_scratch_free(ed25519_scratch *scratch) { free(scratch); }

/* r = sum of digits_j * P_j (Straus): one chain of doublings, each term added at its digits. */
static void straus(ge_p2 *r, struct term *terms, int count, int top) {
  ge_p1p1 t;
  ge_p3 u;
  fe_0(r->X);
  fe_1(r->Y);
  fe_1(r->Z);
  for (int i = top; i >= 0; i--) {
    ge_p2_dbl(&t, r);
    for (int j = 0; j < count; j++) {
      int digit = terms[j].digits[i];
      if (digit == 0) continue;
      ge_p1p1_to_p3(&u, &t);
      if (digit > 0) ge_add(&t, &u, &terms[j].table[digit / 2]);
      else ge_sub(&t, &u, &terms[j].table[-digit / 2]);
    }
    ge_p1p1_to_p2(r, &t);
  }
}

static int is_neutral_times_8(const ge_p2 *p) {
  ge_p1p1 t;
  ge_p2 q = *p;
  for (int i = 0; i < 3; i++) {
    ge_p2_dbl(&t, &q);
    ge_p1p1_to_p2(&q, &t);
  }
  return ge_is_neutral(&q);
}

int ed25519_verify_batch(ed25519_scratch *scratch, const ed25519_item *items, size_t count) {
  if (count == 0 || count > ED25519_BATCH_MAX) return 0;
  const uint8_t *random = NULL;
  if (count > 1 && (random = fresh_random(scratch, 16 * count)) == NULL) return -1;
  sc base_scalar = {0, 0, 0, 0};
  int top = -1;
  struct term *terms = scratch->terms;
  for (size_t i = 0; i < count; i++) {
    const ed25519_item *item = &items[i];
    sc s, h, z, zh, zs;
    ge_p3 R, A;
    if (!sc_load_canonical(s, item->signature + 32)) return 0;
    if (ge_decode(&A, item->key) != 0 || ge_has_small_order(&A)) return 0;
    if (ge_decode(&R, item->signature) != 0 || ge_has_small_order(&R)) return 0;
    sha512_state hash;
    uint8_t digest[64];
    sha512_init(&hash);
    sha512_update(&hash, item->signature, 32);
    sha512_update(&hash, item->key, 32);
    sha512_update(&hash, item->message, item->length);
    sha512_final(&hash, digest);
    sc_from_hash(h, digest);
    if (count == 1) {
      z[0] = 1;
      z[1] = z[2] = z[3] = 0;
    } else {
      memset(z, 0, sizeof z);
      for (int b = 0; b < 16; b++) ((uint8_t *)z)[b] = random[16 * i + b]; /* little-endian words */
    }
    sc_mul(zh, z, h);
    sc_mul(zs, z, s);
    sc_add(base_scalar, base_scalar, zs);

    multiples(scratch->tables[2 * i], &R);
    terms[2 * i].table = scratch->tables[2 * i];
    int t = sc_wnaf(terms[2 * i].digits, z);
    if (t > top) top = t;
    multiples(scratch->tables[2 * i + 1], &A);
    terms[2 * i + 1].table = scratch->tables[2 * i + 1];
    t = sc_wnaf(terms[2 * i + 1].digits, zh);
    if (t > top) top = t;
  }
  sc_negate(base_scalar, base_scalar);
  terms[2 * count].table = base_multiples;
  int t = sc_wnaf(terms[2 * count].digits, base_scalar);
  if (t > top) top = t;
  ge_p2 sum;
  straus(&sum, terms, (int)(2 * count + 1), top);
  return is_neutral_times_8(&sum);
}

/* ---- constants ---- */

/* r = a^e for an exponent given as little-endian bytes (set-up only). */
static void fe_pow(fe r, const fe a, const uint8_t e[32]) {
  fe acc;
  fe_1(acc);
  for (int i = 255; i >= 0; i--) {
    fe_sq(acc, acc);
    if ((e[i / 8] >> (i % 8)) & 1) fe_mul(acc, acc, a);
  }
  fe_copy(r, acc);
}

static void fe_small(fe r, uint64_t v) {
  fe_0(r);
  r[0] = v;
}

int ed25519_batch_init(void) {
  fe a, b, one, minus_one;
  /* d = -121665 / 121666 */
  fe_small(a, 121665);
  fe_small(b, 121666);
  fe_invert(b, b);
  fe_mul(ge_d, a, b);
  fe_neg(ge_d, ge_d);
  fe_add(ge_d2, ge_d, ge_d);
  fe_carry(ge_d2);
  /* sqrt(-1) = 2^((p - 1) / 4); (p - 1) / 4 = 2^253 - 5 */
  uint8_t e[32];
  memset(e, 0xff, sizeof e);
  e[0] = 0xfb;
  e[31] = 0x1f;
  fe_small(a, 2);
  fe_pow(ge_sqrtm1, a, e);
  fe_1(one);
  fe_neg(minus_one, one);
  fe_sq(a, ge_sqrtm1);
  if (!fe_equal(a, minus_one)) return -1;
  /* MU = floor(2^512 / L), one bit at a time */
  uint64_t rem[5] = {0, 0, 0, 0, 0};
  const uint64_t L5[5] = {L[0], L[1], L[2], L[3], 0};
  memset(MU, 0, sizeof MU);
  for (int bit = 512; bit >= 0; bit--) {
    for (int w = 4; w > 0; w--) rem[w] = (rem[w] << 1) | (rem[w - 1] >> 63);
    rem[0] = (rem[0] << 1) | (bit == 512);
    if (!sc_less_than(rem, L5, 5)) {
      sc_sub_words(rem, rem, L5, 5);
      if (bit / 64 < 5) MU[bit / 64] |= 1ULL << (bit % 64);
    }
  }
  /* The base point: y = 4/5, x even. */
  uint8_t base[32];
  memset(base, 0x66, sizeof base);
  base[0] = 0x58;
  ge_p3 B;
  if (ge_decode(&B, base) != 0) return -1;
  multiples(base_multiples, &B);
  /* L B = 0: the constants, the group law and the multiplication agree. */
  ed25519_scratch *scratch = ed25519_scratch_new();
  if (scratch == NULL) return -1;
  sc order = {L[0], L[1], L[2], L[3]};
  scratch->terms[0].table = base_multiples;
  int top = sc_wnaf(scratch->terms[0].digits, order);
  ge_p2 check;
  straus(&check, scratch->terms, 1, top);
  int sound = ge_is_neutral(&check);
  ed25519_scratch_free(scratch);
  return sound ? 0 : -1;
}
