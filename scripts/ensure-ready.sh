#!/bin/sh
# Installs dependencies on a fresh clone and (re)builds when the sources are newer
# than the build, so that `bin/slipway` and `npm test` each work as the first command.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "slipway: installing dependencies (npm ci; native modules build from source, about a minute)..." >&2
  npm ci --no-audit --no-fund >&2
fi
stamp=dist/src/cli/main.js
if [ ! -f "$stamp" ] || [ -n "$(find src test bench tsconfig.json -newer "$stamp" -name '*.ts' -o -newer "$stamp" -name 'tsconfig.json' 2>/dev/null | head -n 1)" ]; then
  echo "slipway: compiling TypeScript..." >&2
  npx --no-install tsc -p tsconfig.json >&2
  touch "$stamp"
fi
