#!/usr/bin/env bash
# Builds the Debian base of every lab image from the distribution's own mirror, since no
# container registry is reachable: debootstrap a minimal rootfs, then `docker import` it.
# Usage: build-rootfs.sh IMAGE_TAG
set -euo pipefail

tag=$1
suite=bookworm
mirror=${LAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}

rootfs=$(mktemp -d /tmp/inferops-lab-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT

debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >/dev/null
# Images are shared between machines: leave no package lists, caches or host name behind.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
: >"$rootfs"/etc/hostname
tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  - "$tag" >/dev/null
