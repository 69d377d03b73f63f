#!/usr/bin/env bash
# setup.sh — install every Debian package kube-headroom needs to build and test.
#
# Idempotent and quiet when everything is already present. yyjson is the one
# library bookworm does not ship: it comes from Debian 13 (trixie), through a
# deb822 source derived from this machine's own Debian source, pinned to
# priority 100 so nothing else is ever upgraded from trixie.
#
# Installing starts no service: some packages (prometheus) ship an init script
# that their postinst starts through invoke-rc.d, which on a machine without
# systemd runs the daemon at once. While apt runs, a policy-rc.d that refuses
# every action (exit 101) is in place, unless the machine already has one.
set -euo pipefail

PACKAGES=(
  cmake ninja-build pkg-config gcc make git
  libcurl4-gnutls-dev zlib1g-dev openssl
  libmicrohttpd-dev libfyaml-dev libcmocka-dev
  clang-14 libclang-rt-14-dev llvm-14 clang-format-14 clang-tidy-14 universal-ctags
  valgrind jq curl ca-certificates
  python3-jsonschema python3-yaml
  # The image check (scripts/release/image.sh): containerd and runc run the built image; libc6-dev's
  # libc.a links the static test programs (tests/cluster/images/). containerd's package ships a systemd
  # unit only, so installing it where systemd does not run starts nothing.
  libc6-dev containerd runc
  prometheus
  # The real node (tests/cluster/realnode.sh): CNI's loopback plugin; ip and nsenter for its own
  # plugin (tests/cluster/cni/inpod-veth).
  containernetworking-plugins iproute2 util-linux
  # The release (scripts/release.sh): the arm64 cross compiler, user-mode qemu to run what it
  # builds (qemu-user only: qemu-user-binfmt, a recommendation, would register binfmt handlers),
  # Debian's Docker engine and mmdebstrap for the Dockerfile build, binutils' readelf.
  gcc-aarch64-linux-gnu qemu-user docker.io mmdebstrap binutils
  # The image's /etc/os-release is base-files'; the arm64 image takes the arm64 .deb of the
  # installed version from the mirror, which holds only the newest point release: kept current.
  base-files
)
TRIXIE_PACKAGES=(libyyjson-dev)
# The arm64 image and plugin link Debian's arm64 builds of the same libraries (multiarch).
ARM64_PACKAGES=(libcurl4-gnutls-dev:arm64 zlib1g-dev:arm64 libmicrohttpd-dev:arm64 libfyaml-dev:arm64
  libgnutls28-dev:arm64)
TRIXIE_ARM64_PACKAGES=(libyyjson-dev:arm64)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
dpkg --print-foreign-architectures | grep -qx arm64 || missing+=("(architecture arm64)")
bf=$(apt-cache policy base-files 2>/dev/null | awk '$1 == "Installed:" {i = $2} $1 == "Candidate:" {c = $2} END {if (i != c) print c}')
[ -z "$bf" ] || missing+=("(base-files $bf)")
for p in "${PACKAGES[@]}" "${TRIXIE_PACKAGES[@]}" "${ARM64_PACKAGES[@]}" "${TRIXIE_ARM64_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2

# The trixie source reuses the URI of the machine's existing Debian source, so a
# mirror or snapshot configured here is honoured.
trixie_list=/etc/apt/sources.list.d/kube-headroom-trixie.sources
if [ ! -f "$trixie_list" ]; then
  uri=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/{for(i=2;i<=NF;i++) if ($i !~ /security/) {print $i; exit}}' "$f")
    [ -n "$uri" ] && break
  done
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || { echo "setup: cannot find this machine's Debian apt source" >&2; exit 1; }
  $SUDO tee "$trixie_list" >/dev/null <<SRC
Types: deb
URIs: $uri
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  $SUDO tee /etc/apt/preferences.d/kube-headroom-trixie >/dev/null <<'PIN'
Package: *
Pin: release n=trixie
Pin-Priority: 100
PIN
fi

policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# kube-headroom setup.sh: start no service while installing\nexit 101\n' |
    $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  trap '$SUDO rm -f "$policy"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" "${ARM64_PACKAGES[@]}" >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends -t trixie \
  "${TRIXIE_PACKAGES[@]}" "${TRIXIE_ARM64_PACKAGES[@]}" >/dev/null
echo "setup: done" >&2
