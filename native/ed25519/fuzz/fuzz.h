/*
 * The native verifier's fuzz harness (scripts/fuzz-native.sh builds it with AddressSanitizer
 * and UBSan): signatures, keys and messages made and spoilt from one seed, each verdict of
 * ed25519-batch.c compared with libsodium's crypto_sign_verify_detached.
 */
#ifndef SLIPWAY_FUZZ_H
#define SLIPWAY_FUZZ_H
#include <stddef.h>
#include <stdint.h>

/* splitmix64: every case is drawn from the seed alone, so a seed replays the same run. */
typedef struct {
  uint64_t state;
} rng;

static inline uint64_t rng_next(rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline size_t rng_below(rng *r, size_t n) { return (size_t)(rng_next(r) % n); }

static inline void rng_bytes(rng *r, uint8_t *out, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = (uint8_t)rng_next(r);
}

/* One signature to verify, with the message it owns (NULL for some empty ones, as Node passes them). */
typedef struct {
  uint8_t signature[64];
  uint8_t key[32];
  uint8_t *message;
  size_t length;
  int kind; /* index in KINDS */
} fuzz_case;

/* The ways a case is made: valid, spoilt one way, or the documented cofactored difference. */
typedef struct {
  const char *name;
  int cofactor; /* 1: made with an order-8 component, which the cofactored equation accepts by design */
} fuzz_kind;

extern const fuzz_kind KINDS[];
extern const int KIND_COUNT;
#define KIND_VALID 0

/* forge.c */
int forge_init(rng *r);
void forge_case(rng *r, fuzz_case *c, int kind);
void forge_free(fuzz_case *c);

/* cofactor.c */
int cofactored_only(const fuzz_case *c);

#endif
