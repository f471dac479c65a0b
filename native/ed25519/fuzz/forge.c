/*
 * Cases for the fuzz harness: a message of a length that matters to SHA-512 (empty, around
 * its 128-byte blocks, transaction-sized, long), signed by one of a few keys, then left
 * valid or spoilt one way. Everything is drawn from the run's seed; signing is libsodium's
 * (deterministic), so a seed makes the same cases again.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

const fuzz_kind KINDS[] = {
    {"valid", 0},
    {"R bit flipped", 0},
    {"s bit flipped", 0},
    {"key bit flipped", 0},
    {"message bit flipped", 0},
    {"s + L", 0},
    {"s with its top bits set", 0},
    {"s zero", 0},
    {"R of small order", 0},
    {"key of small order", 0},
    {"R not canonical (y >= p)", 0},
    {"key not canonical (y >= p)", 0},
    {"R random bytes", 0},
    {"key random bytes", 0},
    {"signature random bytes", 0},
    {"another key's signature", 0},
    {"R with a small-order component", 1},
    {"key with a small-order component", 1},
};
const int KIND_COUNT = sizeof KINDS / sizeof KINDS[0];

/* L, the group's order, little-endian. */
static const uint8_t ORDER[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                  0xa2, 0xde, 0xf9, 0xde, 0x14, [31] = 0x10};

/* libsodium's list of small-order encodings (the sign bit is set at random on use). */
static const uint8_t SMALL_ORDER[7][32] = {
    {0},
    {1},
    {0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
     0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
    {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
     0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
    {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    {0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    {0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
};
/* Points of order 2, 4 and 8 that decode (the first four above but the identity): torsion to add. */
static const int TORSION[] = {0, 2, 3, 4};

#define KEYS 8
static uint8_t public_keys[KEYS][32], secret_keys[KEYS][64];
/* Keys by their secret scalar a (not a seed), for signatures computed by hand. */
static uint8_t scalars[KEYS][32], scalar_keys[KEYS][32];

static void random_scalar(rng *r, uint8_t out[32]) {
  uint8_t wide[64];
  rng_bytes(r, wide, sizeof wide);
  crypto_core_ed25519_scalar_reduce(out, wide);
}

int forge_init(rng *r) {
  for (int i = 0; i < KEYS; i++) {
    uint8_t seed[32];
    rng_bytes(r, seed, sizeof seed);
    if (crypto_sign_seed_keypair(public_keys[i], secret_keys[i], seed) != 0) return -1;
    random_scalar(r, scalars[i]);
    if (crypto_scalarmult_ed25519_base_noclamp(scalar_keys[i], scalars[i]) != 0) return -1;
  }
  return 0;
}

static const size_t BOUNDARIES[] = {1, 31, 32, 63, 64, 111, 112, 113, 127, 128, 129, 239, 240, 241, 255, 256, 1232};

/* Empty (a tenth, half of them NULL), at a block boundary, transaction-sized, or long (to 1 MiB). */
static void forge_message(rng *r, fuzz_case *c) {
  size_t pick = rng_below(r, 100);
  if (pick < 10) c->length = 0;
  else if (pick < 35) c->length = BOUNDARIES[rng_below(r, sizeof BOUNDARIES / sizeof BOUNDARIES[0])];
  else if (pick < 95) c->length = 1 + rng_below(r, 1232);
  else if (pick < 99) c->length = 1233 + rng_below(r, 64 * 1024);
  else c->length = 1 + rng_below(r, 1024 * 1024);
  c->message = c->length == 0 && rng_below(r, 2) ? NULL : malloc(c->length + 1);
  if (c->message != NULL) rng_bytes(r, c->message, c->length);
}

static void flip(rng *r, uint8_t *bytes, size_t length) { bytes[rng_below(r, length)] ^= (uint8_t)(1u << rng_below(r, 8)); }

static void add_order(uint8_t s[32]) {
  unsigned carry = 0;
  for (int i = 0; i < 32; i++) {
    carry += (unsigned)s[i] + ORDER[i];
    s[i] = (uint8_t)carry;
    carry >>= 8;
  }
}

static void small_order(rng *r, uint8_t out[32]) {
  memcpy(out, SMALL_ORDER[rng_below(r, 7)], 32);
  if (rng_below(r, 2)) out[31] |= 0x80;
}

/* y = p + k (k from 0 to 18), the only values of y at or above p that fit: not canonical. */
static void not_canonical(rng *r, uint8_t out[32]) {
  memset(out, 0xff, 32);
  out[0] = (uint8_t)(0xed + rng_below(r, 19));
  out[31] = rng_below(r, 2) ? 0xff : 0x7f;
}

/* s = r + H(R, key, M) a, for an R (and key) of the harness's choosing. */
static void sign_by_hand(fuzz_case *c, const uint8_t nonce[32], const uint8_t a[32]) {
  crypto_hash_sha512_state hash;
  uint8_t digest[64], h[32], ha[32];
  crypto_hash_sha512_init(&hash);
  crypto_hash_sha512_update(&hash, c->signature, 32);
  crypto_hash_sha512_update(&hash, c->key, 32);
  if (c->length > 0) crypto_hash_sha512_update(&hash, c->message, c->length);
  crypto_hash_sha512_final(&hash, digest);
  crypto_core_ed25519_scalar_reduce(h, digest);
  crypto_core_ed25519_scalar_mul(ha, h, a);
  crypto_core_ed25519_scalar_add(c->signature + 32, nonce, ha);
}

/* Signed by the holder of a scalar key with an order-2, 4 or 8 point added to R or to the key. */
static void forge_torsion(rng *r, fuzz_case *c, int in_key) {
  size_t k = rng_below(r, KEYS);
  const uint8_t *torsion = SMALL_ORDER[TORSION[rng_below(r, sizeof TORSION / sizeof TORSION[0])]];
  uint8_t nonce[32], R[32];
  random_scalar(r, nonce);
  crypto_scalarmult_ed25519_base_noclamp(R, nonce);
  if (in_key) {
    memcpy(c->signature, R, 32);
    crypto_core_ed25519_add(c->key, scalar_keys[k], torsion);
  } else {
    crypto_core_ed25519_add(c->signature, R, torsion);
    memcpy(c->key, scalar_keys[k], 32);
  }
  sign_by_hand(c, nonce, scalars[k]);
}

void forge_case(rng *r, fuzz_case *c, int kind) {
  c->kind = kind;
  forge_message(r, c);
  if (KINDS[kind].cofactor) return forge_torsion(r, c, kind == KIND_COUNT - 1);
  size_t k = rng_below(r, KEYS);
  memcpy(c->key, public_keys[k], 32);
  crypto_sign_detached(c->signature, NULL, c->message, c->length, secret_keys[k]);
  uint8_t *R = c->signature, *s = c->signature + 32;
  switch (kind) {
    case 1: flip(r, R, 32); break;
    case 2: flip(r, s, 32); break;
    case 3: flip(r, c->key, 32); break;
    case 4:
      if (c->length == 0) {
        free(c->message);
        c->message = calloc(1, 1);
        c->length = 1;
      }
      flip(r, c->message, c->length);
      break;
    case 5: add_order(s); break;
    case 6: s[31] |= (uint8_t)(0x20u << rng_below(r, 3)); break;
    case 7: memset(s, 0, 32); break;
    case 8: small_order(r, R); break;
    case 9: small_order(r, c->key); break;
    case 10: not_canonical(r, R); break;
    case 11: not_canonical(r, c->key); break;
    case 12: rng_bytes(r, R, 32); break;
    case 13: rng_bytes(r, c->key, 32); break;
    case 14: rng_bytes(r, c->signature, 64); break;
    case 15: memcpy(c->key, public_keys[(k + 1 + rng_below(r, KEYS - 1)) % KEYS], 32); break;
    default: break;
  }
}

void forge_free(fuzz_case *c) {
  free(c->message);
  c->message = NULL;
}
