#!/bin/sh
# Fuzzes the native ed25519 verifier against libsodium: native/ed25519's C (not the Node
# addon) built with AddressSanitizer and UBSan into a harness (native/ed25519/fuzz), which
# makes signatures from a seed, spoils them (R, s and key bits, s + L, small-order and
# non-canonical points, random bytes, other keys; messages empty, at SHA-512's block
# boundaries and up to 1 MiB) and compares every verdict, alone and in groups of 1-64, with
# crypto_sign_verify_detached's. The documented cofactored difference is counted apart.
#
#   sh scripts/fuzz-native.sh [--seed S] [--cases N] [--batches M]
#
# The seed is printed first and last; --seed S replays a run case for case. About a minute
# on two cores. Skipped, saying why, where there is no C compiler with the sanitizers'
# runtimes or no libsodium headers (installed with apt-get where this can, as root).
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
seed=
for arg in "$@"; do
  [ "$previous" = --seed ] && seed=$arg
  previous=$arg
done
if [ -z "$seed" ]; then
  seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
  set -- --seed "$seed" "$@"
fi

skip() {
  echo "fuzz-native: skipped: $1" >&2
  exit 0
}

cc=${CC:-}
if [ -z "$cc" ]; then
  for candidate in clang gcc cc; do
    if command -v "$candidate" >/dev/null 2>&1; then
      cc=$candidate
      break
    fi
  done
fi
[ -n "$cc" ] || skip "no C compiler (clang, gcc or cc; or set CC)"

has_sodium() { echo '#include <sodium.h>' | "$cc" -E -x c - >/dev/null 2>&1; }
if ! has_sodium; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "fuzz-native: installing libsodium's headers (apt-get install libsodium-dev)..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsodium-dev >&2 \
      || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsodium-dev >&2; } \
      || true
  fi
  has_sodium || skip "libsodium's headers are missing (install libsodium-dev)"
fi

out=$root/native/ed25519/build/fuzz
mkdir -p "$out"
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all"
echo 'int main(void) { return 0; }' > "$out/probe.c"
# shellcheck disable=SC2086
"$cc" $sanitize "$out/probe.c" -o "$out/probe" >/dev/null 2>&1 \
  || skip "$cc cannot build with $sanitize (its AddressSanitizer and UBSan runtimes, libasan and libubsan, are missing)"

src=$root/native/ed25519
echo "fuzz-native: building the harness with $cc ($sanitize)" >&2
# shellcheck disable=SC2086
"$cc" -O2 -g -fno-omit-frame-pointer $sanitize -std=gnu11 -Wall -Wextra -Werror \
  "$src"/fuzz/*.c "$src/ed25519-batch.c" "$src/sha512.c" -lsodium -lm -o "$out/harness"

echo "fuzz-native: replay this run with: sh scripts/fuzz-native.sh $*" >&2
status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  "$out/harness" "$@" || status=$?
if [ "$status" != 0 ]; then
  echo "fuzz-native: FAILED (exit status $status; a sanitizer's report, if any, is above). Replay: sh scripts/fuzz-native.sh $*" >&2
fi
exit "$status"
