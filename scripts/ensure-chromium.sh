#!/bin/sh
# Before the tests only (not before every bin/slipway command).
# The dashboard test drives Debian's Chromium (headless); install it where this can.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "slipway: installing chromium for the dashboard test (apt-get install chromium)..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2 \
      || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2; } \
      || echo "slipway: could not install chromium: the dashboard test will say so" >&2
  else
    echo "slipway: /usr/bin/chromium is missing: install Debian's chromium package, or the dashboard test fails" >&2
  fi
fi
