#!/bin/sh
# Stops with a clear message on a Node.js that Slipway does not run on, before anything is
# installed. The range is package.json's "engines" (a test checks that the two agree):
# 20.18 or later (past its end of life), 22.14 or later (Node-API 10, for the SQLite
# driver), 24 and later. Usage: check-node.sh [VERSION] (default: the node on PATH).
v=${1:-$(node -p 'process.versions.node' 2>/dev/null)}
if [ -z "$v" ]; then
  echo "slipway: Node.js was not found on PATH; install Node.js 22, 24 or 26" >&2
  exit 1
fi
major=${v%%.*}
rest=${v#*.}
minor=${rest%%.*}
case "$major" in
  20) [ "$minor" -ge 18 ] ;;
  22) [ "$minor" -ge 14 ] ;;
  *) [ "$major" -ge 24 ] ;;
esac 2>/dev/null && exit 0
echo "slipway: Node.js $v is not supported. Use Node.js 22 (22.14 or later), 24 or 26; Node.js 20.18 or later also runs, past its end of life." >&2
exit 1
