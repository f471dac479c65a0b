#!/bin/sh
# The README's two commands, in its order, on a fresh clone and a Node.js other than the
# machine's (CI runs it for one version of .ci/node-versions, in place of that version's
# plain npm test): `bin/slipway serve` until /health answers, stopped with SIGTERM, then
# `npm test`, each with only that Node first on PATH, as the README says. The first start
# builds the native verifier outside npm; that it was built is checked before npm test
# (which would otherwise build it itself and hide a first start that could not).
#
#   sh scripts/readme-commands.sh VERSION [WORD]   (e.g. 24.21.0; WORD: npm test -- WORD, some files only)
#
# The clone is of this tree's HEAD (committed changes only) and shares this tree's
# node_modules by hard links (its lock file is the same): a second npm ci would cost minutes
# and test nothing the first did not. Removed at the end.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: readme-commands.sh VERSION [WORD]}
shift
bin=$(sh "$root/scripts/node-bin.sh" "$version")
[ -d "$root/node_modules" ] || sh "$root/scripts/ensure-ready.sh"
clone=$(mktemp -d "${TMPDIR:-/tmp}/slipway-readme.XXXXXX")
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$clone"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git clone -q --no-checkout "$root" "$clone"
git -C "$clone" checkout -q --detach "$(git -C "$root" rev-parse HEAD)"
cp -al "$root/node_modules" "$clone/node_modules"
touch "$clone/node_modules/.package-lock.json"
rm -f "$clone/node_modules/.slipway-driver-checked" # the clone checks its own driver (unlinked, not the shared file)
cd "$clone"

# Two free ports in a row (the gateway and its WebSocket port), so that nothing else on the machine is in the way.
port=$(node -e '
const net = require("node:net");
const free = (port) => new Promise((ok) => { const s = net.createServer().once("error", () => ok(false)).listen(port, "127.0.0.1", () => s.close(() => ok(true))); });
(async () => { for (;;) { const p = 20000 + Math.floor(Math.random() * 30000); if ((await free(p)) && (await free(p + 1))) return console.log(p); } })();
')

echo "-- bin/slipway serve on Node.js $version (a fresh clone, port $port)"
PATH="$bin:$PATH" SLIPWAY_PORT=$port bin/slipway serve > serve.log 2>&1 &
server=$!
answered=
for _ in $(seq 1 300); do
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  if PATH="$bin:$PATH" node -e "fetch('http://127.0.0.1:$port/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then
    answered=yes
    break
  fi
  sleep 1
done
if [ -z "$answered" ]; then
  cat serve.log >&2
  echo "readme-commands: bin/slipway serve did not answer /health on port $port within 300 s" >&2
  exit 1
fi
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
grep '^slipway:' serve.log || true # not the first key's line
[ "$status" = 0 ] || { echo "readme-commands: bin/slipway serve exited with status $status on SIGTERM" >&2; exit 1; }
if [ ! -f native/ed25519/build/Release/ed25519_batch.node ]; then
  echo "readme-commands: the first bin/slipway serve did not build the native ed25519 verifier (its output is above)" >&2
  exit 1
fi

echo "-- npm test on Node.js $version (the same clone)"
if [ $# -gt 0 ]; then PATH="$bin:$PATH" npm test -- "$@"; else PATH="$bin:$PATH" npm test; fi
