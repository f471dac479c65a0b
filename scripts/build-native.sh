#!/bin/sh
# Builds Slipway's native ed25519 verifier (native/ed25519, a Node-API addon: one build
# serves every Node.js) with the node-gyp that ships with npm, against the running Node's
# headers (npm's nodedir, else the headers beside the running node: nothing is downloaded).
# Without a C compiler it fails, and Slipway verifies with libsodium one signature at a time.
#
# node-gyp is the one npm hands its scripts (npm_config_node_gyp, under `npm test`), else the
# one inside the npm first on PATH (`bin/slipway` runs outside npm, and `npm prefix -g` is
# the running node's folder, which holds no npm when that node is not the one npm came
# with), else the one in `npm prefix -g`, else a node-gyp on PATH.
#
# `build-native.sh --situation` prints what a build depends on (node, node-gyp, headers,
# toolchain) on one line: scripts/ensure-ready.sh tries again after a failure only when it
# changed.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)

# Prints the first candidate that is a file, resolved; each is looked for only when the ones before it are not.
first_file() {
  for candidate in "$@"; do
    if [ -n "$candidate" ] && [ -f "$candidate" ]; then
      readlink -f "$candidate"
      return 0
    fi
  done
  return 1
}

find_gyp() {
  bundled=node_modules/node-gyp/bin/node-gyp.js
  npm_cli=$(command -v npm 2>/dev/null || true)
  [ -n "$npm_cli" ] && npm_cli=$(dirname "$(dirname "$(readlink -f "$npm_cli")")")/$bundled
  first_file "${npm_config_node_gyp:-}" "$npm_cli" ||
    first_file "$(npm prefix -g 2>/dev/null)/lib/node_modules/npm/$bundled" ||
    first_file "$(command -v node-gyp 2>/dev/null || true)"
}

find_nodedir() {
  nodedir=${npm_config_nodedir:-$(npm config get nodedir 2>/dev/null || true)}
  if [ -z "$nodedir" ] || [ "$nodedir" = undefined ] || [ ! -f "$nodedir/include/node/node_api.h" ]; then
    nodedir=$(node -p 'require("path").resolve(process.execPath, "..", "..")')
  fi
  echo "$nodedir"
}

if [ "${1:-}" = --situation ]; then
  tools=
  for tool in "${CC:-cc}" "${CXX:-c++}" make python3; do
    tools="$tools $tool=$(command -v "$tool" 2>/dev/null || echo missing)"
  done
  echo "node $(node -p process.version 2>/dev/null) at $(command -v node); node-gyp $(find_gyp || echo missing); nodedir $(find_nodedir);$tools"
  exit 0
fi

gyp=$(find_gyp) || {
  echo "slipway: npm's node-gyp was not found (looked inside the npm on PATH, in $(npm prefix -g 2>/dev/null)/lib/node_modules/npm and for node-gyp on PATH)" >&2
  exit 1
}
nodedir=$(find_nodedir)
cd "$root/native/ed25519"
npm_config_nodedir="$nodedir" node "$gyp" rebuild --loglevel=warn >&2
