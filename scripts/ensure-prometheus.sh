#!/bin/sh
# Before the tests only (not before every bin/slipway command).
# The deploy/ monitoring test runs promtool (Debian's prometheus package) on the alert rules;
# install it where this can. Only promtool is wanted: the Prometheus server the package
# starts (on a machine with systemd) is stopped and disabled at once, so nothing listens.
if ! command -v promtool >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "slipway: installing prometheus for promtool, for the alert rules test (apt-get install prometheus)..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >&2 \
      || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >&2; } \
      || echo "slipway: could not install prometheus: the alert rules test will say so" >&2
    if command -v systemctl >/dev/null 2>&1; then
      systemctl disable --now prometheus >/dev/null 2>&1 || true
    fi
  else
    echo "slipway: promtool is missing: install Debian's prometheus package, or the alert rules test fails" >&2
  fi
fi
