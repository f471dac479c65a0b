#!/bin/sh
# Installs dependencies on a fresh clone and (re)builds when the sources are newer
# than the build, so that `bin/slipway` and `npm test` each work as the first command.
# One node_modules serves every supported Node.js: the native modules are Node-API builds,
# but for Node 20's SQLite driver (better-sqlite3-node20), built from source for one Node
# ABI at a time and rebuilt here when another Node 20 runs the tree.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runtime=$(node -p 'process.versions.node + " " + process.versions.modules' 2>/dev/null) || runtime=
sh scripts/check-node.sh "${runtime%% *}"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "slipway: installing dependencies (npm ci; on Node 20 the SQLite driver builds from source, about a minute)..." >&2
  npm ci --no-audit --no-fund >&2
fi
# A failed build is not tried again at every command (each try costs seconds), but only when
# the sources or what the build depends on changed: `failed` holds the situation it failed
# in (node, node-gyp, headers, compiler: build-native.sh --situation), so that a compiler
# installed since, another Node, or npm test (which hands node-gyp over) tries again.
addon=native/ed25519/build/Release/ed25519_batch.node
failed=native/ed25519/build/failed
if [ ! -f "$addon" ] || [ -n "$(find native/ed25519 -maxdepth 1 -type f -newer "$addon" 2>/dev/null | head -n 1)" ]; then
  situation=
  [ -f "$failed" ] && situation=$(sh scripts/build-native.sh --situation)
  if [ ! -f "$failed" ] || [ "$(cat "$failed")" != "$situation" ] || [ -n "$(find native/ed25519 -maxdepth 1 -type f -newer "$failed" 2>/dev/null | head -n 1)" ]; then
    echo "slipway: building the native ed25519 verifier (native/ed25519, a few seconds)..." >&2
    if sh scripts/build-native.sh; then rm -f "$failed"; else
      mkdir -p native/ed25519/build && sh scripts/build-native.sh --situation > "$failed"
      echo "slipway: the native ed25519 verifier did not build (why is above; tried again when the toolchain, node-gyp or Node changes): signatures are verified with libsodium, one at a time" >&2
    fi
  fi
fi
stamp=dist/src/cli/main.js
if [ ! -f "$stamp" ] || [ -n "$(find src test bench tsconfig.json -newer "$stamp" -name '*.ts' -o -newer "$stamp" -name 'tsconfig.json' 2>/dev/null | head -n 1)" ]; then
  echo "slipway: compiling TypeScript..." >&2
  npx --no-install tsc -p tsconfig.json >&2
  node scripts/prune-dist.js
  touch "$stamp"
fi
checked=node_modules/.slipway-driver-checked
if [ "$(cat "$checked" 2>/dev/null)" != "$runtime" ]; then
  load="require('./dist/src/stores/database/sqlite-binding')"
  if ! node -e "$load" 2>/dev/null; then
    if [ "${runtime%%.*}" = 20 ]; then
      echo "slipway: building the SQLite driver for Node.js ${runtime%% *} (npm rebuild better-sqlite3-node20, about a minute)..." >&2
      npm rebuild better-sqlite3-node20 >&2 || true
    fi
    node -e "$load" >/dev/null # says what is wrong and stops, when it still does not load
  fi
  echo "$runtime" > "$checked"
fi
