#!/bin/sh
# Slipway with curl: the latest blockhash, a signed transaction sent (TX: Base64 of its wire
# bytes), a batch, and what became of them.
#   SLIPWAY_URL=http://127.0.0.1:8080 SLIPWAY_API_KEY=slw_… TX=AQAB… sh examples/curl.sh
set -eu
URL=${SLIPWAY_URL:-http://127.0.0.1:8080}

curl -sS "$URL/" -H "x-api-key: $SLIPWAY_API_KEY" -H 'content-type: application/json' \
  -d '{"jsonrpc":"2.0","id":1,"method":"getLatestBlockhash"}'
echo

# sendTransaction answers the signature (or a JSON-RPC error saying what was wrong).
curl -sS "$URL/" -H "x-api-key: $SLIPWAY_API_KEY" -H 'content-type: application/json' \
  -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sendTransaction\",\"params\":[\"$TX\",{\"encoding\":\"base64\"}]}"
echo

# /submit-batch answers {code: 1, message, signatures} (the same transaction again: a duplicate, answered alike).
curl -sS "$URL/submit-batch" -H "x-api-key: $SLIPWAY_API_KEY" -H 'content-type: application/json' \
  -d "{\"jsonrpc\":\"2.0\",\"id\":3,\"params\":{\"transactions\":[\"$TX\"],\"options\":[]}}"
echo

# What became of it: Slipway's own status (state, slot, reason).
SIGNATURE=$(node -e 'const bs58 = require("bs58"); const w = Buffer.from(process.argv[1], "base64"); console.log((bs58.default ?? bs58).encode(w.subarray(1, 65)))' "$TX")
sleep 1
curl -sS "$URL/" -H "x-api-key: $SLIPWAY_API_KEY" -H 'content-type: application/json' \
  -d "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"getSubmissionStatuses\",\"params\":[[\"$SIGNATURE\"]]}"
echo
