#!/usr/bin/env bash
# sbom.sh — the SPDX software bill of materials of a runtime image archive, made by a real scanner
# (syft), offline and reproducibly.
#
#   scripts/release/sbom.sh ARCHIVE OUT.json
#
# ARCHIVE is what scripts/release/image.sh writes (image.sh --print names it): one tar that is an
# OCI image layout (and a docker-archive); syft reads it as oci-archive:ARCHIVE. OUT.json is SPDX
# 2.3 JSON (syft -o spdx-json). The image's Debian packages are found from their dpkg metadata in
# the image (/var/lib/dpkg/status or status.d/, with each package's md5sums), and they get a
# pkg:deb/debian/NAME@VERSION?arch=... purl only when the image's /etc/os-release names Debian.
#
# syft is the pinned one (tests/cluster/versions.env SYFT_VERSION), built from the Go module proxy
# and cached by version like the test control plane (tests/cluster/cluster.sh tool syft: about
# 5 min cold on 2 cores, then a stamp check); SYFT=PATH uses another binary.
#
# Offline: syft runs with a clean environment (no caller's SYFT_* variable or config file reaches
# it: its configuration is written here, update check off, every network lookup and enrichment
# off), a HOME of its own, and, when the user may make one (root), in a network namespace of its
# own with loopback alone (unshare --net).
#
# Reproducible: syft sets the SPDX document's creationInfo.created to the time it runs and its
# documentNamespace to a random UUID (1.57 reads no SOURCE_DATE_EPOCH), so both are set after it
# with jq: created from SOURCE_DATE_EPOCH when set, else from the image config's `created`
# (1970-01-01T00:00:00Z for image.sh's images); documentNamespace from the image's manifest digest,
# https://kube-headroom.dev/spdx/<name>@sha256:<digest>. The document names the image by its
# reference (ghcr.io/kube-headroom/headroom:<version>), not by the archive's path. The same archive
# then gives the same bytes.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

die() { echo "sbom.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: scripts/release/sbom.sh ARCHIVE OUT.json"
archive=$(realpath "$1") out=$2
[ -f "$archive" ] || die "no image archive at $1"
for t in jq tar date; do command -v "$t" >/dev/null || die "$t not found"; done

syft=${SYFT:-$("$ROOT/tests/cluster/cluster.sh" tool syft)}
[ -x "$syft" ] || die "no syft at $syft"

# The image's name, manifest digest and config, from the OCI layout.
index=$(tar -xOf "$archive" index.json) || die "$archive has no index.json: not an OCI image layout"
ref=$(jq -r '.manifests[0].annotations["io.containerd.image.name"] // empty' <<<"$index")
digest=$(jq -r '.manifests[0].digest' <<<"$index")
[ -n "$ref" ] || die "$archive: index.json names no image (io.containerd.image.name)"
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || die "$archive: index.json has no manifest digest"
name=${ref%:*} tag=${ref##*:}
config=$(tar -xOf "$archive" "blobs/sha256/${digest#sha256:}" | jq -r '.config.digest')
created=$(tar -xOf "$archive" "blobs/sha256/${config#sha256:}" | jq -r '.created // empty')
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  [[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH is not a number of seconds"
  created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
fi
[ -n "$created" ] || created=1970-01-01T00:00:00Z
namespace=https://kube-headroom.dev/spdx/$name@$digest

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-sbom.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/home" "$work/tmp"
cat >"$work/syft.yaml" <<'EOF'
check-for-app-update: false
enrich: []
golang:
  search-local-mod-cache-licenses: false
  search-local-vendor-licenses: false
  search-remote-licenses: false
java:
  use-network: false
  use-maven-local-repository: false
javascript:
  search-remote-licenses: false
python:
  search-remote-licenses: false
cpp:
  vcpkg-allow-git-clone: false
EOF

netns=()
if command -v unshare >/dev/null && unshare --net true 2>/dev/null; then netns=(unshare --net); fi
if ! env -i PATH=/usr/bin:/bin HOME="$work/home" TMPDIR="$work/tmp" XDG_CONFIG_HOME="$work/home" \
  XDG_CACHE_HOME="$work/home/cache" SYFT_CHECK_FOR_APP_UPDATE=false \
  ${netns[@]+"${netns[@]}"} "$syft" scan --config "$work/syft.yaml" --quiet \
  --source-name "$name" --source-version "$tag" \
  -o "spdx-json=$work/syft.json" "oci-archive:$archive" 2>"$work/syft.log"; then
  cat "$work/syft.log" >&2
  die "syft failed on $archive"
fi

jq --arg created "$created" --arg ns "$namespace" \
  '.creationInfo.created = $created | .documentNamespace = $ns' "$work/syft.json" >"$work/out.json"
mkdir -p "$(dirname "$out")"
mv "$work/out.json" "$out"
