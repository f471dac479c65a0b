#!/bin/sh
# Builds Slipway's native ed25519 verifier (native/ed25519, a Node-API addon: one build
# serves every Node.js) with the node-gyp that ships with npm, against the running Node's
# headers (npm's nodedir, else the headers beside the running node: nothing is downloaded).
# Without a C compiler it fails, and Slipway verifies with libsodium one signature at a time.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
gyp=${npm_config_node_gyp:-}
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then
  gyp="$(npm prefix -g 2>/dev/null)/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"
fi
[ -f "$gyp" ] || { echo "slipway: npm's node-gyp was not found" >&2; exit 1; }
nodedir=${npm_config_nodedir:-$(npm config get nodedir 2>/dev/null || true)}
if [ -z "$nodedir" ] || [ "$nodedir" = undefined ] || [ ! -f "$nodedir/include/node/node_api.h" ]; then
  nodedir=$(node -p 'require("path").resolve(process.execPath, "..", "..")')
fi
cd "$root/native/ed25519"
npm_config_nodedir="$nodedir" node "$gyp" rebuild --loglevel=warn >&2
