/* Cofactored ed25519 verification of many signatures at once (see ed25519-batch.c). */
#ifndef SLIPWAY_ED25519_BATCH_H
#define SLIPWAY_ED25519_BATCH_H
#include <stddef.h>
#include <stdint.h>

/* The most signatures one call takes; the caller splits larger groups. */
#define ED25519_BATCH_MAX 64

typedef struct {
  const uint8_t *signature; /* 64 bytes: R, then s */
  const uint8_t *key;       /* 32 bytes */
  const uint8_t *message;
  size_t length;
} ed25519_item;

/* Scratch for one call; one per thread (a call is not reentrant across threads). */
typedef struct ed25519_scratch ed25519_scratch;
ed25519_scratch *ed25519_scratch_new(void);
void ed25519_scratch_free(ed25519_scratch *scratch);

/* Derives the curve's constants and checks them; 0 when the code is sound on this machine. */
int ed25519_batch_init(void);

/* 1 when every signature verifies, 0 when at least one does not (or the batch is empty or too large), -1 when no randomness was to be had. */
int ed25519_verify_batch(ed25519_scratch *scratch, const ed25519_item *items, size_t count);

#endif
