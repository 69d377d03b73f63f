#!/usr/bin/env bash
# oci-index.sh — join single-platform image archives (scripts/release/oci-archive.sh) into one
# multi-platform image: an OCI image layout whose index.json names one image index, which lists
# each platform's manifest. `skopeo copy --all oci-archive:FILE docker://REPO:TAG` pushes it as
# one multi-arch tag, and a node pulls the manifest of its own platform.
#
#   scripts/release/oci-index.sh --ref NAME:TAG --out FILE.tar ARCHIVE...
#
# Prints the image index's digest (sha256:…): the digest that pins every platform at once, the
# one deploy/install.yaml of a release names. The blobs are the archives' own, so each
# platform's manifest digest is unchanged. Written reproducibly (sorted entries, mtime
# SOURCE_DATE_EPOCH or 0, owner 0:0): the same archives give the same bytes.
set -euo pipefail

die() { echo "oci-index: $*" >&2; exit 1; }

ref="" out="" archives=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ref) ref=${2:?--ref needs NAME:TAG}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    -*) die "unknown argument '$1' (see the header of $0)" ;;
    *) archives+=("$1"); shift ;;
  esac
done
[ -n "$ref" ] && [ -n "$out" ] || die "--ref and --out are required"
[ ${#archives[@]} -gt 0 ] || die "no archive given"
case "$ref" in *:*) ;; *) die "--ref '$ref' has no :TAG" ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/oci-index.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/layout/blobs/sha256"

# Each archive's platform manifest descriptor (its index.json's single entry, platform included).
: >"$work/manifests.jsonl"
for a in "${archives[@]}"; do
  [ -f "$a" ] || die "no archive $a"
  x=$work/x
  rm -rf "$x"
  mkdir -p "$x"
  tar -C "$x" -xf "$a" index.json blobs
  n=$(jq '.manifests | length' "$x/index.json")
  [ "$n" = 1 ] || die "$a: its index.json lists $n manifests, want 1 (a single-platform archive)"
  jq -c '.manifests[0] | {mediaType, digest, size, platform}' "$x/index.json" >>"$work/manifests.jsonl"
  jq -e '.platform.architecture and .platform.os' <<<"$(tail -n1 "$work/manifests.jsonl")" >/dev/null ||
    die "$a: its manifest names no platform"
  cp -n "$x"/blobs/sha256/* "$work/layout/blobs/sha256/"
done
dups=$(jq -r '.platform | "\(.os)/\(.architecture)\(if .variant then "/" + .variant else "" end)"' \
  "$work/manifests.jsonl" | sort | uniq -d)
[ -z "$dups" ] || die "two archives for the platform $dups"

# The image index: the platforms in a fixed order (by platform name), compact JSON.
jq -s -c 'sort_by(.platform.os, .platform.architecture, (.platform.variant // ""))
  | {schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: .}' \
  "$work/manifests.jsonl" >"$work/image-index.json"
hex=$(sha256sum "$work/image-index.json" | cut -d' ' -f1)
size=$(stat -c %s "$work/image-index.json")
mv "$work/image-index.json" "$work/layout/blobs/sha256/$hex"

tag=${ref##*:}
jq -n --arg d "sha256:$hex" --argjson s "$size" --arg ref "$ref" --arg tag "$tag" '
  {schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
   manifests: [{mediaType: "application/vnd.oci.image.index.v1+json", digest: $d, size: $s,
                annotations: {"io.containerd.image.name": $ref,
                              "org.opencontainers.image.ref.name": $tag}}]}' >"$work/layout/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/layout/oci-layout"

mkdir -p "$(dirname "$out")"
tar -C "$work/layout" --sort=name --mtime=@"${SOURCE_DATE_EPOCH:-0}" --owner=0 --group=0 \
  --numeric-owner --format=gnu -cf "$out.tmp" oci-layout index.json blobs
mv "$out.tmp" "$out"
echo "sha256:$hex"
