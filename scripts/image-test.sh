#!/bin/sh
# The image, built and run for real (a CI step, .ci/run): builds the Containerfile with podman
# on local bases (scripts/image-base.sh: Debian from debootstrap and Node.js from npm, given as
# BASE and BUILD_BASE, since the official Node.js images cannot be pulled here), exports a
# container of it into a directory, and runs its entrypoint from there
# (test/deploy/image-run.ts: as the image's user under unshare and chroot, compose's ledger
# and a gateway on PostgreSQL and Redis on loopback; a transfer sent, landed, read back;
# SIGTERM, status 0). Prints how long the build took and the image's size.
#
# Skipped (status 0, saying why) without podman or without root (chroot and namespaces need
# it); fails when podman is there and the image does not build or work.
# Usage: image-test.sh [NODE_VERSION]   (default 24.21.0, the image's default Node.js, 24)
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=${1:-24.21.0}
if ! command -v podman >/dev/null 2>&1; then
  echo "skipped: podman is not installed, so the image is neither built nor run (apt-get install podman debootstrap)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "skipped: the image test runs the exported image under chroot and unshare, which need root"
  exit 0
fi
for tool in debootstrap unshare chroot; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "image-test: $tool is missing (apt-get install debootstrap util-linux coreutils)" >&2
    exit 1
  }
done
sh scripts/ensure-ready.sh # the compiled image-run.js, up to date

bases=$(sh scripts/image-base.sh "$version")
base=$(echo "$bases" | sed -n 1p)
build_base=$(echo "$bases" | sed -n 2p)
image=localhost/slipway:image-test
work=$(mktemp -d "${TMPDIR:-/tmp}/slipway-image-test.XXXXXX")
container=
cleanup() {
  [ -n "$container" ] && podman rm -f -v "$container" >/dev/null 2>&1
  # The run mounts /proc and /dev inside the exported tree in namespaces of its own, gone with
  # it; were one left here, rm -rf would reach into the machine's /dev.
  if grep -q " $work/" /proc/mounts; then
    echo "image-test: $work still has mounts; left in place" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT INT TERM

# --isolation chroot: RUN steps without an OCI runtime (crun cannot make cgroups in this
# sandbox); --format docker: the OCI format has no HEALTHCHECK.
started=$(date +%s)
podman build --isolation chroot --format docker --build-arg "BASE=$base" --build-arg "BUILD_BASE=$build_base" \
  -f Containerfile -t "$image" . >"$work/build.log" 2>&1 || {
  cat "$work/build.log" >&2
  echo "image-test: FAILED: the image did not build (above)" >&2
  exit 1
}
size=$(podman image inspect "$image" --format '{{.Size}}')
echo "image-test: built $image in $(($(date +%s) - started)) s on $base: $((size / 1000000)) MB"

podman image inspect "$image" >"$work/inspect.json"
container=$(podman create --no-healthcheck "$image")
mkdir "$work/rootfs"
podman export "$container" | tar -C "$work/rootfs" --numeric-owner -xf -
podman rm -v "$container" >/dev/null # and its anonymous /data volume
container=
node dist/test/deploy/image-run.js "$work/rootfs" "$work/inspect.json"
# Each build leaves its untagged layers in podman's storage as the next build's cache; those
# made over three days ago are removed (rebuilt when next needed), so that the storage does
# not grow with every commit.
podman image prune -f --filter until=72h >/dev/null
echo "image-test: passed"
