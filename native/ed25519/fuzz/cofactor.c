/*
 * The one documented difference between the native verifier and libsodium (docs/SECURITY.md,
 * "Which signatures pass"): the native one checks the cofactored equation 8(R - sB + hA) = 0,
 * libsodium the cofactorless R = sB - hA. A signature accepted by the first and refused by
 * the second is accounted for here only when libsodium's own checks on the encodings pass
 * and libsodium's own group operations find 8(R - sB + hA) to be the identity: R - sB + hA
 * is then a point of small order, which only the key's holder can put there. Anything else
 * is a mismatch.
 */
#include <sodium.h>
#include <string.h>
#include "fuzz.h"

static const uint8_t IDENTITY[32] = {1};
static const uint8_t EIGHT[32] = {8};
static const uint8_t ORDER[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                  0xa2, 0xde, 0xf9, 0xde, 0x14, [31] = 0x10};

/* a < b, both 32 bytes little-endian */
static int less_than(const uint8_t *a, const uint8_t *b) {
  for (int i = 31; i >= 0; i--)
    if (a[i] != b[i]) return a[i] < b[i];
  return 0;
}

/* y below p (libsodium's ge25519_is_canonical: the sign bit aside). */
static int canonical(const uint8_t p[32]) {
  uint8_t y[32], prime[32];
  memcpy(y, p, 32);
  y[31] &= 0x7f;
  memset(prime, 0xff, 32);
  prime[0] = 0xed;
  prime[31] = 0x7f;
  return less_than(y, prime);
}

/* Of small order (8P the identity), as the canonical encodings on libsodium's list are; the sign bit aside. */
static int listed_small(const uint8_t p[32]) {
  uint8_t y[32], t[32];
  memcpy(y, p, 32);
  y[31] &= 0x7f;
  if (crypto_core_ed25519_add(t, y, IDENTITY) != 0) return 0; /* off the curve: not on the list's points either */
  for (int i = 0; i < 3; i++)
    if (crypto_core_ed25519_add(t, t, t) != 0) return 0;
  return memcmp(t, IDENTITY, 32) == 0;
}

/* 8P, by three doublings; -1 when P does not decode. */
static int times8(uint8_t out[32], const uint8_t p[32]) {
  if (crypto_core_ed25519_add(out, p, p) != 0) return -1;
  for (int i = 0; i < 2; i++)
    if (crypto_core_ed25519_add(out, out, out) != 0) return -1;
  return 0;
}

int cofactored_only(const fuzz_case *c) {
  const uint8_t *R = c->signature, *s = c->signature + 32;
  if (!less_than(s, ORDER) || !canonical(R) || !canonical(c->key) || listed_small(R) || listed_small(c->key)) return 0;
  crypto_hash_sha512_state hash;
  uint8_t digest[64], h[32], R8[32], A8[32], hA8[32], s8[32], s8B[32], sum[32];
  crypto_hash_sha512_init(&hash);
  crypto_hash_sha512_update(&hash, R, 32);
  crypto_hash_sha512_update(&hash, c->key, 32);
  if (c->length > 0) crypto_hash_sha512_update(&hash, c->message, c->length);
  crypto_hash_sha512_final(&hash, digest);
  crypto_core_ed25519_scalar_reduce(h, digest);
  if (times8(R8, R) != 0 || times8(A8, c->key) != 0) return 0;
  /* h(8A), with 8A in the prime-order subgroup as libsodium's multiplication requires; 8sB as (8s mod L)B. */
  if (crypto_scalarmult_ed25519_noclamp(hA8, h, A8) != 0) return 0;
  crypto_core_ed25519_scalar_mul(s8, s, EIGHT);
  if (crypto_scalarmult_ed25519_base_noclamp(s8B, s8) != 0) memcpy(s8B, IDENTITY, 32);
  if (crypto_core_ed25519_sub(sum, R8, s8B) != 0 || crypto_core_ed25519_add(sum, sum, hA8) != 0) return 0;
  return memcmp(sum, IDENTITY, 32) == 0;
}
