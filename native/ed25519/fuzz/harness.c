/*
 * Fuzz harness of the native ed25519 verifier (ed25519-batch.c and sha512.c, built with
 * AddressSanitizer and UBSan by scripts/fuzz-native.sh): single signatures and groups of 1 to
 * 64 with one spoilt, each verdict compared with libsodium's crypto_sign_verify_detached.
 *
 *   harness --seed S [--cases N] [--batches M]
 *
 * The cases come from the seed alone: the same seed replays the same run. The groups' random
 * coefficients come from the kernel as in the addon; a group's verdict does not depend on
 * them but with probability 2^-125. Exit status 1 on any mismatch (each printed with its
 * case number, kind and bytes), 2 on bad arguments.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../ed25519-batch.h"
#include "fuzz.h"

#define SHOWN_MAX 5

typedef struct {
  unsigned long cases, both_accept, both_refuse, cofactored, mismatches;
} tally;

static ed25519_scratch *scratch;
static unsigned long shown;

static void hex(const char *label, const uint8_t *bytes, size_t length) {
  fprintf(stderr, "    %s ", label);
  for (size_t i = 0; i < length && i < 64; i++) fprintf(stderr, "%02x", bytes[i]);
  fprintf(stderr, "%s\n", length > 64 ? "..." : "");
}

static void show(const char *what, const char *where, const fuzz_case *c, int native, int sodium) {
  if (shown++ >= SHOWN_MAX) return;
  fprintf(stderr, "MISMATCH %s: %s, %s: native %d, libsodium %d\n", where, KINDS[c->kind].name, what, native, sodium);
  hex("signature", c->signature, 64);
  hex("key      ", c->key, 32);
  fprintf(stderr, "    message  %zu bytes%s\n", c->length, c->message == NULL ? " (NULL)" : "");
  if (c->message != NULL) hex("         ", c->message, c->length);
}

static int native_verdict(const fuzz_case *c) {
  ed25519_item item = {c->signature, c->key, c->message, c->length};
  return ed25519_verify_batch(scratch, &item, 1);
}

static int sodium_verdict(const fuzz_case *c) {
  return crypto_sign_verify_detached(c->signature, c->message, c->length, c->key) == 0;
}

/* Counts one signature's two verdicts; 1 when they agree or differ only as documented. */
static int judge(tally *t, const fuzz_case *c, int native, int sodium, const char *where) {
  t->cases++;
  if (KINDS[c->kind].cofactor && native != 1) {
    show("the cofactored equation should accept it", where, c, native, sodium);
  } else if (native == sodium) {
    if (native) t->both_accept++;
    else t->both_refuse++;
    return 1;
  } else if (native == 1 && sodium == 0 && cofactored_only(c)) {
    t->cofactored++;
    return 1;
  } else {
    show("the verdicts differ", where, c, native, sodium);
  }
  t->mismatches++;
  return 0;
}

static int pick_kind(rng *r, int spoilt) {
  if (!spoilt) return KIND_VALID;
  return 1 + (int)rng_below(r, (size_t)KIND_COUNT - 1);
}

static void run_singles(uint64_t seed, unsigned long count, tally *by_kind) {
  rng r = {seed ^ 0x73696e676c65ULL};
  char where[48];
  for (unsigned long i = 0; i < count; i++) {
    fuzz_case c;
    forge_case(&r, &c, pick_kind(&r, rng_below(&r, 4) != 0));
    snprintf(where, sizeof where, "single %lu", i);
    judge(&by_kind[c.kind], &c, native_verdict(&c), sodium_verdict(&c), where);
    forge_free(&c);
  }
}

typedef struct {
  unsigned long groups, signatures, both_accept, both_refuse, cofactored, mismatches;
} group_tally;

/* A group of 1 to 64, all valid or one spoilt: the group's verdict against libsodium's one at a time, and against the native verifier's one at a time. */
static void run_group(rng *r, unsigned long g, group_tally *t, tally *by_kind) {
  static fuzz_case cases[ED25519_BATCH_MAX];
  ed25519_item items[ED25519_BATCH_MAX];
  size_t count = 1 + rng_below(r, ED25519_BATCH_MAX);
  size_t bad = rng_below(r, 5) == 0 ? count : rng_below(r, count);
  char where[64];
  int sodium_all = 1, native_all = 1, explained = 1;
  for (size_t i = 0; i < count; i++) {
    fuzz_case *c = &cases[i];
    forge_case(r, c, pick_kind(r, i == bad));
    items[i] = (ed25519_item){c->signature, c->key, c->message, c->length};
    int native = native_verdict(c), sodium = sodium_verdict(c);
    snprintf(where, sizeof where, "group %lu, signature %zu of %zu", g, i, count);
    if (!judge(&by_kind[c->kind], c, native, sodium, where)) explained = 0;
    native_all &= native == 1;
    sodium_all &= sodium;
  }
  int verdict = ed25519_verify_batch(scratch, items, count);
  t->groups++;
  t->signatures += count;
  snprintf(where, sizeof where, "group %lu (%zu signatures)", g, count);
  if (verdict != native_all) {
    t->mismatches++;
    if (shown++ < SHOWN_MAX)
      fprintf(stderr, "MISMATCH %s: the group's verdict is %d, its signatures one at a time %d\n", where, verdict, native_all);
  } else if (verdict == sodium_all) {
    if (verdict) t->both_accept++;
    else t->both_refuse++;
  } else if (verdict == 1 && explained) {
    t->cofactored++;
  } else {
    t->mismatches++;
    if (shown++ < SHOWN_MAX) fprintf(stderr, "MISMATCH %s: native %d, libsodium %d\n", where, verdict, sodium_all);
  }
  for (size_t i = 0; i < count; i++) forge_free(&cases[i]);
}

static void report(const tally *by_kind, const group_tally *groups) {
  printf("%-36s %8s %8s %8s %10s %10s\n", "signatures (alone and in groups)", "cases", "both ok", "both no", "cofactored", "mismatches");
  for (int k = 0; k < KIND_COUNT; k++) {
    const tally *t = &by_kind[k];
    printf("%-36s %8lu %8lu %8lu %10lu %10lu\n", KINDS[k].name, t->cases, t->both_accept, t->both_refuse, t->cofactored, t->mismatches);
  }
  printf("%-36s %8lu %8lu %8lu %10lu %10lu\n", "groups of 1-64 (one spoilt in 4 of 5)", groups->groups, groups->both_accept,
         groups->both_refuse, groups->cofactored, groups->mismatches);
  unsigned long cofactored = groups->cofactored;
  for (int k = 0; k < KIND_COUNT; k++) cofactored += by_kind[k].cofactored;
  printf("cofactored: %lu verdicts (signatures, and groups holding one) accepted by the native verifier and refused by\n"
         "libsodium, each with a small-order component in R or the key: the documented difference (docs/SECURITY.md,\n"
         "'Which signatures pass'), checked with libsodium's group operations (8(R - sB + hA) = 0, encodings canonical and\n"
         "not of small order) and not counted as mismatches\n",
         cofactored);
}

/* --seed S (required), --cases N, --batches M: whole numbers. 0 on anything else. */
static int parse(int argc, char **argv, uint64_t *seed, unsigned long *cases, unsigned long *groups) {
  int seeded = 0;
  for (int i = 1; i < argc; i += 2) {
    const char *value = i + 1 < argc ? argv[i + 1] : "";
    char *end = NULL;
    if (value[0] < '0' || value[0] > '9') return 0;
    unsigned long long n = strtoull(value, &end, 10);
    if (*end != '\0') return 0;
    if (strcmp(argv[i], "--seed") == 0) {
      *seed = n;
      seeded = 1;
    } else if (strcmp(argv[i], "--cases") == 0) {
      *cases = (unsigned long)n;
    } else if (strcmp(argv[i], "--batches") == 0) {
      *groups = (unsigned long)n;
    } else {
      return 0;
    }
  }
  return seeded;
}

int main(int argc, char **argv) {
  uint64_t seed = 0;
  unsigned long cases = 30000, groups = 900;
  if (!parse(argc, argv, &seed, &cases, &groups)) {
    fprintf(stderr, "usage: %s --seed S [--cases N] [--batches M] (whole numbers)\n", argv[0]);
    return 2;
  }
  if (sodium_init() < 0 || ed25519_batch_init() != 0 || (scratch = ed25519_scratch_new()) == NULL) {
    fprintf(stderr, "fuzz-native: libsodium or the native verifier failed to initialise\n");
    return 1;
  }
  printf("fuzz-native: seed %" PRIu64 ", %lu single signatures and %lu groups\n", seed, cases, groups);
  fflush(stdout);
  rng keys = {seed};
  if (forge_init(&keys) != 0) return 1;
  static tally by_kind[64];
  group_tally group_counts = {0};
  time_t started = time(NULL);
  run_singles(seed, cases, by_kind);
  rng r = {seed ^ 0x67726f757073ULL};
  for (unsigned long g = 0; g < groups; g++) run_group(&r, g, &group_counts, by_kind);
  report(by_kind, &group_counts);
  unsigned long mismatches = group_counts.mismatches;
  for (int k = 0; k < KIND_COUNT; k++) mismatches += by_kind[k].mismatches;
  ed25519_scratch_free(scratch);
  printf("fuzz-native: %lu mismatches in %lu single signatures and %lu groups (%lu signatures), %ld s, seed %" PRIu64 "\n",
         mismatches, cases, groups, group_counts.signatures, (long)(time(NULL) - started), seed);
  return mismatches == 0 ? 0 : 1;
}
