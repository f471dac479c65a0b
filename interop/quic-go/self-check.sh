#!/bin/sh
# The quic-go peer checked against itself on loopback (see README.md beside this file):
#   sh interop/quic-go/self-check.sh           # the checks, a few seconds
#   sh interop/quic-go/self-check.sh --bench   # and ~10 s of 1,232-byte streams on one connection
# Prints one line per check and exits non-zero at the first that fails. Needs node (for JSON).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
peer=$(sh "$root/scripts/build-interop.sh")
work=$(mktemp -d)
receiver=
cleanup() {
  [ -n "$receiver" ] && kill "$receiver" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# field FILE EVENT KEY: KEY of the last EVENT line in FILE.
field() {
  node -e '
    const [file, name, key] = process.argv.slice(1);
    const events = require("fs").readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const found = events.filter((e) => e.event === name).pop();
    console.log(found === undefined ? "" : String(found[key]));' "$1" "$2" "$3"
}
# start_receiver [ARGS...]: the receiver in the background, its events in $work/receiver.out.
start_receiver() {
  : >"$work/receiver.out"
  "$peer" receive --listen 127.0.0.1:0 "$@" >"$work/receiver.out" </dev/null &
  receiver=$!
  for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    grep -q '"listening"' "$work/receiver.out" && break
    sleep 0.1
  done
  port=$(field "$work/receiver.out" listening port)
  [ -n "$port" ] || fail "the receiver did not start: $(cat "$work/receiver.out")"
}
stop_receiver() {
  kill -TERM "$receiver"
  wait "$receiver" || true
  receiver=
}

"$peer" keygen --out "$work/id.json" >"$work/keygen.out"
identity=$(field "$work/keygen.out" keypair identity)
# The identity as Solana's own library writes it, from the keypair file's last 32 numbers.
expected=$(node -e '
  const bs58 = require(process.argv[2]);
  const key = require(process.argv[1]);
  console.log((bs58.default ?? bs58).encode(Buffer.from(key.slice(32))));' "$work/id.json" "$root/node_modules/bs58")
[ "$identity" = "$expected" ] || fail "keygen printed $identity, bs58 says $expected"

# Three random 1,232-byte transactions, Base64, and their SHA-256s.
node -e '
  const crypto = require("crypto");
  for (let i = 0; i < 3; i++) {
    const tx = crypto.randomBytes(1232);
    console.log(tx.toString("base64"));
    console.error(crypto.createHash("sha256").update(tx).digest("hex"));
  }' >"$work/txs.b64" 2>"$work/txs.sha256"
node -e 'console.log(require("crypto").randomBytes(1233).toString("base64"))' >"$work/long.b64"

for mode in plain retry; do
  if [ $mode = retry ]; then start_receiver --retry; else start_receiver; fi
  "$peer" send --to "127.0.0.1:$port" --identity "$work/id.json" <"$work/txs.b64" >"$work/send.out" || fail "$mode: send: $(cat "$work/send.out")"
  [ "$(field "$work/send.out" sent count)" = 3 ] || fail "$mode: sent $(cat "$work/send.out")"
  [ "$(field "$work/send.out" sent retry)" = "$([ $mode = retry ] && echo true || echo false)" ] || fail "$mode: Retry seen: $(cat "$work/send.out")"
  sleep 0.1 # stream events are flushed every 20 ms
  [ "$(field "$work/receiver.out" connection identity)" = "$expected" ] || fail "$mode: identity $(field "$work/receiver.out" connection identity)"
  [ "$(field "$work/receiver.out" connection alpn)" = solana-tpu ] || fail "$mode: alpn"
  grep '"event":"stream"' "$work/receiver.out" | sed 's/.*"sha256":"\([0-9a-f]*\)".*/\1/' | sort >"$work/got.sha256"
  sort "$work/txs.sha256" | cmp -s - "$work/got.sha256" || fail "$mode: the SHA-256s differ"
  echo "ok: $mode: 3 streams of 1232 bytes, identity $expected, SHA-256s match"

  if "$peer" send --to "127.0.0.1:$port" --identity "$work/id.json" <"$work/long.b64" >"$work/send.out"; then fail "$mode: a 1,233-byte stream was taken"; fi
  [ "$(field "$work/send.out" error application_error_code)" = 5 ] || fail "$mode: over-long: $(cat "$work/send.out")"
  echo "ok: $mode: a 1,233-byte stream closes the connection with application error 5"

  if printf '\n' | "$peer" send --to "127.0.0.1:$port" --identity "$work/id.json" >"$work/send.out"; then fail "$mode: an empty stream was taken"; fi
  [ "$(field "$work/send.out" error application_error_code)" = 5 ] || fail "$mode: empty: $(cat "$work/send.out")"
  echo "ok: $mode: an empty stream closes the connection with application error 5"

  if "$peer" send --to "127.0.0.1:$port" --identity "$work/id.json" --alpn h3 <"$work/txs.b64" >"$work/send.out"; then fail "$mode: ALPN h3 was taken"; fi
  [ "$(field "$work/send.out" error transport_error_code)" = 376 ] || fail "$mode: ALPN h3: $(cat "$work/send.out")"
  echo "ok: $mode: ALPN h3 is refused in the handshake (CRYPTO_ERROR 0x178, no_application_protocol)"

  if "$peer" send --to "127.0.0.1:$port" --identity "$work/id.json" --client-key ecdsa <"$work/txs.b64" >"$work/send.out"; then fail "$mode: an ECDSA client certificate was taken"; fi
  [ "$(field "$work/send.out" error transport_error_code)" = 298 ] || fail "$mode: ECDSA: $(cat "$work/send.out")"
  echo "ok: $mode: a client certificate without an ed25519 key is refused (CRYPTO_ERROR 0x12a, bad_certificate)"
  stop_receiver
  [ "$(field "$work/receiver.out" stats streams)" = 3 ] || fail "$mode: the receiver counted $(field "$work/receiver.out" stats streams) streams"
done

if [ "$1" = --bench ]; then
  start_receiver --quiet
  "$peer" send --to "127.0.0.1:$port" --identity "$work/id.json" --duration 10s --size 1232 >"$work/send.out" || fail "bench: $(cat "$work/send.out")"
  stop_receiver
  node -e '
    const [file, sent] = process.argv.slice(1);
    const read = (f) => require("fs").readFileSync(f, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const stats = read(file).filter((e) => e.event === "stats").pop();
    const done = read(sent).pop();
    const cpu = stats.cpu_user_ms + stats.cpu_system_ms;
    console.log(`bench: ${stats.streams} streams of 1232 bytes in ${done.elapsed_ms} ms on one connection: ` +
      `${Math.round(stats.streams / (done.elapsed_ms / 1000))} streams/s; receiver CPU ${cpu} ms ` +
      `(user ${stats.cpu_user_ms}, system ${stats.cpu_system_ms}): ${((cpu * 1000) / stats.streams).toFixed(1)} us per stream`);' \
    "$work/receiver.out" "$work/send.out"
fi
