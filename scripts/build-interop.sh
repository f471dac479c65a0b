#!/bin/sh
# Builds interop/quic-go's slipway-tpu-peer, the Solana-TPU-like QUIC peer on Debian's quic-go
# 0.29, and prints the binary's path on stdout. Offline, in GOPATH mode, from the sources Debian
# installs under /usr/share/gocode/src; into node_modules/.cache/slipway-interop/ (outside the
# source tree), and again only when the sources or the toolchain changed.
#   sh scripts/build-interop.sh        # -> .../node_modules/.cache/slipway-interop/slipway-tpu-peer
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
gopath_own="$root/interop/quic-go"
gopath_debian=/usr/share/gocode
quic_go="$gopath_debian/src/github.com/lucas-clemente/quic-go"
cache=${SLIPWAY_INTEROP_CACHE:-"$root/node_modules/.cache/slipway-interop"}
binary="$cache/slipway-tpu-peer"
install_hint='apt-get install golang-go golang-github-lucas-clemente-quic-go-dev'

missing() {
  echo "slipway interop: $1" >&2
  echo "slipway interop: install Debian's Go 1.19 and quic-go 0.29 (as root):" >&2
  echo "  apt-get update && $install_hint" >&2
  exit 1
}

# quic-go 0.29 builds on Go 1.18 and 1.19 only (its TLS fork is per Go version): prefer Debian's
# Go 1.19 to whatever go comes first on PATH.
go=${SLIPWAY_INTEROP_GO:-}
if [ -z "$go" ]; then
  if [ -x /usr/lib/go-1.19/bin/go ]; then go=/usr/lib/go-1.19/bin/go; else go=$(command -v go || true); fi
fi
[ -n "$go" ] && [ -x "$go" ] || missing "no Go toolchain (go) found."
go_version=$("$go" env GOVERSION 2>/dev/null) || missing "$go does not run."
case "$go_version" in
  go1.18 | go1.18.* | go1.19 | go1.19.*) ;;
  *) missing "$go is $go_version; quic-go 0.29 needs Go 1.18 or 1.19." ;;
esac
[ -f "$quic_go/server.go" ] || missing "quic-go's sources are not in $quic_go."
[ -d "$gopath_debian/src/github.com/marten-seemann/qtls-go1-19" ] || missing "quic-go's TLS (qtls-go1-19) is not in $gopath_debian/src."

# The build's fingerprint: our sources, the toolchain, and the Debian package's version.
quic_go_version=$(dpkg-query -W -f '${Version}' golang-github-lucas-clemente-quic-go-dev 2>/dev/null || ls -l --time-style=+%s "$quic_go/go.mod")
fingerprint=$(
  {
    echo "$go_version $quic_go_version"
    find "$gopath_own/src" -type f -name '*.go' | LC_ALL=C sort | xargs cat
  } | sha256sum | cut -d' ' -f1
)
if [ -x "$binary" ] && [ "$(cat "$binary.fingerprint" 2>/dev/null)" = "$fingerprint" ]; then
  echo "$binary"
  exit 0
fi

mkdir -p "$cache"
echo "slipway interop: building slipway-tpu-peer with $go_version and quic-go $quic_go_version (offline, GOPATH mode)..." >&2
tmp="$binary.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# GOPATH mode reads nothing but GOPATH and GOROOT; GOPROXY=off and GOFLAGS= make sure nothing
# else is asked for. The build cache lives in our cache too (HOME may be read-only in CI).
GO111MODULE=off GOPATH="$gopath_own:$gopath_debian" GOPROXY=off GOFLAGS= CGO_ENABLED=0 \
  GOCACHE="$cache/go-build" "$go" build -trimpath -o "$tmp" slipway-tpu-peer >&2
mv -f "$tmp" "$binary" # atomic: a concurrent build's result is just as good
echo "$fingerprint" > "$binary.fingerprint"
echo "$binary"
