#!/usr/bin/env bash
# tests/cluster/images/build.sh — the two container images of the real-node tests, built with no
# registry, no daemon and no base image:
#
#   localhost/kube-headroom/pause:1.0    the pod sandbox image (pause/pause.c, /pause alone)
#   localhost/kube-headroom/burner:1.0   a CPU burner (burner/burner.c, /burner alone)
#
# Each program is compiled static (gcc -static, glibc's libc.a from libc6-dev) into an otherwise
# empty root filesystem, which scripts/release/oci-archive.sh packs by hand (tar + sha256sum + jq) into an
# archive that is an OCI image layout and a docker-archive at once. The archives are cached in
# ${HEADROOM_CACHE:-~/.cache/kube-headroom}/images/, named by a hash of everything that goes into
# them (the source, this script, oci-archive.sh, the compiler and libc versions, the
# architecture), so a warm run only prints the paths.
#
#   tests/cluster/images/build.sh                build what is missing, print "REF PATH" for each image
#   tests/cluster/images/build.sh --print NAME   build NAME (pause or burner) if missing, print its path
#   tests/cluster/images/build.sh --ref NAME     print NAME's image reference (builds nothing)
#
# Importing them into a containerd that a kubelet uses (namespace k8s.io), e.g. a standalone
# containerd listening on $SOCK:
#   ctr --address "$SOCK" -n k8s.io images import "$(tests/cluster/images/build.sh --print pause)"
#   ctr --address "$SOCK" -n k8s.io images import "$(tests/cluster/images/build.sh --print burner)"
# then name the pause image in containerd's CRI config
#   (plugins."io.containerd.grpc.v1.cri".sandbox_image = "$(tests/cluster/images/build.sh --ref pause)")
# and use `image: localhost/kube-headroom/burner:1.0` with `imagePullPolicy: Never` (or
# IfNotPresent) in pods. The burner takes its thread count as its argument (`args: ["2"]`) or
# from $BURNER_THREADS (default 1) and exits 0 on SIGTERM. `docker load -i ARCHIVE` works too.
#
# Bump an image's version below when its program changes behaviour.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
IMAGES=${HEADROOM_CACHE:-$HOME/.cache/kube-headroom}/images
CC=${CC:-gcc}

declare -A VERSION=([pause]=1.0 [burner]=1.0)
# The user each image runs as: the sandbox as 65535 like the upstream pause image, the burner as
# the same non-root 65532 as the product image.
declare -A USER_OF=([pause]=65535:65535 [burner]=65532:65532)
declare -A ENTRYPOINT=([pause]='["/pause"]' [burner]='["/burner"]')

die() { echo "tests/cluster/images/build.sh: $*" >&2; exit 1; }

ref_of() { echo "localhost/kube-headroom/$1:${VERSION[$1]}"; }

# archive_of NAME: the cache path, from the hash of every input.
archive_of() {
  local name=$1 key
  command -v "$CC" >/dev/null || die "$CC not found (scripts/setup.sh installs gcc)"
  key=$( {
    cat "$HERE/$name/$name.c" "$HERE/build.sh" "$ROOT/scripts/release/oci-archive.sh"
    "$CC" --version | head -1
    dpkg-query -W -f='${Version}\n' libc6-dev
    dpkg --print-architecture
    echo "${VERSION[$name]} ${USER_OF[$name]} ${ENTRYPOINT[$name]}"
  } | sha256sum | cut -c1-16)
  echo "$IMAGES/$name-${VERSION[$name]}-$key.tar"
}

# build NAME: make the archive unless the cache has it; print its path.
build() {
  local name=$1 out work up
  out=$(archive_of "$name")
  if [ ! -f "$out" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/hr-test-image.XXXXXX")
    mkdir "$work/rootfs"
    up=$(echo "$name" | tr a-z A-Z)
    if ! "$CC" -std=c17 -O2 -Wall -Wextra -Werror -static -s -pthread \
      -D"${up}_VERSION=\"${VERSION[$name]}\"" -o "$work/rootfs/$name" "$HERE/$name/$name.c"; then
      rm -rf "$work"
      die "compiling $name failed (a static build needs libc6-dev's libc.a)"
    fi
    "$work/rootfs/$name" -v >/dev/null || { rm -rf "$work"; die "the built $name does not run"; }
    if ! "$ROOT/scripts/release/oci-archive.sh" --rootfs "$work/rootfs" --ref "$(ref_of "$name")" \
      --out "$out" --user "${USER_OF[$name]}" --entrypoint "${ENTRYPOINT[$name]}" --env '[]'; then
      rm -rf "$work"
      die "packing $name failed"
    fi
    rm -rf "$work"
  fi
  echo "$out"
}

known() { [ -n "${VERSION[$1]:-}" ] || die "unknown image '$1' (pause or burner)"; }

case "${1:-}" in
  "")
    for n in pause burner; do echo "$(ref_of "$n") $(build "$n")"; done ;;
  --print)
    [ $# -eq 2 ] || die "usage: --print NAME"
    known "$2"; build "$2" ;;
  --ref)
    [ $# -eq 2 ] || die "usage: --ref NAME"
    known "$2"; ref_of "$2" ;;
  *) die "unknown argument '$1' (see the header of $0)" ;;
esac
