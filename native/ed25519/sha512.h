/* SHA-512 (FIPS 180-4), incremental: R, then the public key, then the message. */
#ifndef SLIPWAY_SHA512_H
#define SLIPWAY_SHA512_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t state[8];
  uint64_t length; /* bytes hashed so far (messages here are far below 2^61 bytes) */
  uint8_t block[128];
  size_t filled;
} sha512_state;

void sha512_init(sha512_state *s);
void sha512_update(sha512_state *s, const uint8_t *data, size_t length);
void sha512_final(sha512_state *s, uint8_t out[64]);

#endif
