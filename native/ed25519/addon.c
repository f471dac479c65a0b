/*
 * Node-API binding of ed25519-batch.c. Two calls:
 *   verifyDetached(signature, message, key) -> boolean, one signature (as libsodium's
 *     crypto_sign_verify_detached, cofactored);
 *   verifyPacked(memory, offsets, lengths, count) -> 1 | 0 | -1, every signature of `count`
 *     packed transactions at once (the layout of src/validation/verify-worker.ts: u8 n, n
 *     signatures, n keys, the message), read in place from `memory` (which may be shared).
 * Each thread (each Node-API environment) has its own scratch memory.
 */
#include <math.h>
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "ed25519-batch.h"

#define MAX_ITEMS 256

/* The constants are derived once per process, whichever thread loads the module first. */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status = -1;
static void init_constants(void) { init_status = ed25519_batch_init(); }

typedef struct {
  ed25519_scratch *scratch;
  ed25519_item items[ED25519_BATCH_MAX];
} instance;

static void instance_free(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  instance *self = data;
  ed25519_scratch_free(self->scratch);
  free(self);
}

/* The data of a typed array of the given type (a view of shared memory included). */
static int typed_of(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  bool is_typed;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return 0;
  if (napi_get_typedarray_info(env, value, &type, length, data, &buffer, &offset) != napi_ok) return 0;
  return type == want;
}

static int bytes_of(napi_env env, napi_value value, uint8_t **data, size_t *length) {
  return typed_of(env, value, napi_uint8_array, (void **)data, length);
}

static int int32s_of(napi_env env, napi_value value, int32_t **data, size_t *length) {
  return typed_of(env, value, napi_int32_array, (void **)data, length);
}

static napi_value number(napi_env env, int32_t value) {
  napi_value result;
  napi_create_int32(env, value, &result);
  return result;
}

static napi_value type_error(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

static napi_value verify_detached(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  instance *self;
  napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&self);
  uint8_t *signature, *message, *key;
  size_t signature_length, message_length, key_length;
  if (argc < 3 || !bytes_of(env, argv[0], &signature, &signature_length) ||
      !bytes_of(env, argv[1], &message, &message_length) || !bytes_of(env, argv[2], &key, &key_length))
    return type_error(env, "verifyDetached(signature, message, key) takes three Uint8Arrays");
  napi_value result;
  if (signature_length != 64 || key_length != 32) {
    napi_get_boolean(env, false, &result);
    return result;
  }
  ed25519_item item = {signature, key, message, message_length};
  napi_get_boolean(env, ed25519_verify_batch(self->scratch, &item, 1) == 1, &result);
  return result;
}

static napi_value range_error(napi_env env, const char *message) {
  napi_throw_range_error(env, NULL, message);
  return NULL;
}

/*
 * The count of transactions, a whole number from 1 to what both arrays hold (and MAX_ITEMS):
 * read as a double, since napi_get_value_int32 would take NaN and Infinity as 0 and 2^32 + 1
 * as 1, and a count of 0 would answer "all verify" for a group of none. 0 and an exception
 * pending when it is not.
 */
static int count_of(napi_env env, napi_value value, size_t offsets_length, size_t lengths_length, int32_t *count) {
  napi_valuetype type;
  double wanted;
  char message[200];
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number || napi_get_value_double(env, value, &wanted) != napi_ok) {
    type_error(env, "verifyPacked: count must be a number (of packed transactions)");
    return 0;
  }
  size_t most = offsets_length < lengths_length ? offsets_length : lengths_length;
  if (most > MAX_ITEMS) most = MAX_ITEMS;
  if (isnan(wanted) || isinf(wanted)) {
    snprintf(message, sizeof message, "verifyPacked: count must be a whole number of transactions, not %s",
             isnan(wanted) ? "NaN" : wanted > 0 ? "Infinity" : "-Infinity");
  } else if (floor(wanted) != wanted) {
    snprintf(message, sizeof message, "verifyPacked: count must be a whole number of transactions, not %.17g", wanted);
  } else if (wanted < 1) {
    snprintf(message, sizeof message, "verifyPacked: count must be at least 1 (a group of none verifies nothing), not %.17g", wanted);
  } else if (wanted > (double)most) {
    snprintf(message, sizeof message,
             "verifyPacked: count %.17g is more than the group holds: the offsets hold %zu, the lengths %zu, and at most %d are taken at once",
             wanted, offsets_length, lengths_length, MAX_ITEMS);
  } else {
    *count = (int32_t)wanted;
    return 1;
  }
  range_error(env, message);
  return 0;
}

static napi_value verify_packed(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  instance *self;
  napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&self);
  uint8_t *memory;
  int32_t *offsets, *lengths;
  size_t memory_length, offsets_length, lengths_length;
  int32_t count;
  if (argc < 4 || !bytes_of(env, argv[0], &memory, &memory_length) ||
      !int32s_of(env, argv[1], &offsets, &offsets_length) || !int32s_of(env, argv[2], &lengths, &lengths_length))
    return type_error(env, "verifyPacked(memory, offsets, lengths, count) takes a Uint8Array, two Int32Arrays and a count");
  if (!count_of(env, argv[3], offsets_length, lengths_length, &count)) return NULL;
  size_t filled = 0;
  for (int32_t i = 0; i < count; i++) {
    if (offsets[i] < 0 || lengths[i] < 1 || (size_t)offsets[i] + (size_t)lengths[i] > memory_length) return number(env, 0);
    const uint8_t *packed = memory + offsets[i];
    size_t n = packed[0];
    size_t header = 1 + n * 96;
    if (n == 0 || header > (size_t)lengths[i]) return number(env, 0);
    for (size_t k = 0; k < n; k++) {
      if (filled == ED25519_BATCH_MAX) {
        int verdict = ed25519_verify_batch(self->scratch, self->items, filled);
        if (verdict != 1) return number(env, verdict);
        filled = 0;
      }
      ed25519_item *item = &self->items[filled++];
      item->signature = packed + 1 + k * 64;
      item->key = packed + 1 + n * 64 + k * 32;
      item->message = packed + header;
      item->length = (size_t)lengths[i] - header;
    }
  }
  return number(env, ed25519_verify_batch(self->scratch, self->items, filled));
}

static napi_value init(napi_env env, napi_value exports) {
  pthread_once(&init_once, init_constants);
  if (init_status != 0) {
    napi_throw_error(env, NULL, "the ed25519 batch verifier failed its self-check on this machine");
    return NULL;
  }
  instance *self = calloc(1, sizeof(instance));
  if (self == NULL || (self->scratch = ed25519_scratch_new()) == NULL) {
    free(self);
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  napi_set_instance_data(env, self, instance_free, NULL);
  napi_property_descriptor properties[] = {
      {"verifyDetached", NULL, verify_detached, NULL, NULL, NULL, napi_enumerable, self},
      {"verifyPacked", NULL, verify_packed, NULL, NULL, NULL, napi_enumerable, self},
  };
  napi_define_properties(env, exports, 2, properties);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
