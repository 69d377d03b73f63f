#!/usr/bin/env bash
# oci-archive.sh — pack a root filesystem directory into a one-layer container image archive,
# by hand (tar + sha256sum + jq): no daemon, no registry, no base image.
#
#   scripts/release/oci-archive.sh --rootfs DIR --ref NAME:TAG --out FILE.tar
#                          [--user UID:GID] [--entrypoint JSON-ARRAY] [--cmd JSON-ARRAY]
#                          [--env JSON-ARRAY] [--workdir DIR] [--arch DEBIAN-ARCH]
#                          [--created RFC3339] [--label KEY=VALUE]...
#
#   --arch      the Debian architecture of DIR's files (default: this machine's), mapped to its
#               OCI name (amd64, arm64 with variant v8, ...) in the config and the index
#   --created   the image's creation time, UTC, e.g. 2026-12-04T22:16:14Z (default:
#               $SOURCE_DATE_EPOCH, else 1970-01-01T00:00:00Z); also every timestamp in the archive
#   --label     a label of the image's config (repeatable; the org.opencontainers.image.* ones)
#
# The archive is both an OCI image layout (oci-layout, index.json, blobs/sha256/…) and a
# docker-archive (manifest.json naming the same blobs), so each of these loads it:
#   ctr -n k8s.io images import FILE.tar      (containerd; the kubelet's namespace)
#   docker load -i FILE.tar                   (Docker)
#   kind load image-archive FILE.tar          (kind, which runs ctr import on its nodes)
# and the image is named NAME:TAG (io.containerd.image.name in index.json, RepoTags in
# manifest.json).
#
# The layer is an uncompressed tar (its digest is its diffID, which is what docker-archive
# needs), written reproducibly (SOURCE_DATE_EPOCH's rules): entries sorted by name, every mtime
# the --created time, every entry owned by 0:0 numerically (whoever built DIR; modes are kept),
# GNU format (no pax header, so no atime or ctime); the config, manifest and index are jq's
# compact, ordered output; the outer tar is written the same way. So the same DIR and options
# give the same bytes, and the same digests.
set -euo pipefail
export LC_ALL=C
umask 022

die() { echo "oci-archive: $*" >&2; exit 1; }

rootfs="" ref="" out="" user="" entrypoint="null" cmd="null" env='["PATH=/usr/local/bin:/usr/bin:/bin"]' workdir="/"
deb_arch="" created="" labels='{}'
while [ $# -gt 0 ]; do
  case "$1" in
    --rootfs) rootfs=$2; shift 2 ;;
    --ref) ref=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --user) user=$2; shift 2 ;;
    --entrypoint) entrypoint=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --env) env=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --arch) deb_arch=$2; shift 2 ;;
    --created) created=$2; shift 2 ;;
    --label)
      case "$2" in *=*) ;; *) die "--label '$2' is not KEY=VALUE" ;; esac
      labels=$(jq -c --arg k "${2%%=*}" --arg v "${2#*=}" '. + {($k): $v}' <<<"$labels")
      shift 2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
done
[ -d "$rootfs" ] || die "--rootfs '$rootfs' is not a directory"
[ -n "$ref" ] || die "--ref NAME:TAG is required"
[ -n "$out" ] || die "--out FILE is required"
case "$ref" in *:*) ;; *) die "--ref '$ref' has no :TAG" ;; esac
for j in "$entrypoint" "$cmd" "$env"; do
  jq -e 'type == "array" or type == "null"' <<<"$j" >/dev/null 2>&1 || die "not a JSON array: $j"
done

if [ -z "$created" ]; then
  created=$(date -u -d "@${SOURCE_DATE_EPOCH:-0}" +%Y-%m-%dT%H:%M:%SZ) ||
    die "SOURCE_DATE_EPOCH '${SOURCE_DATE_EPOCH:-}' is not a number of seconds"
fi
[[ $created =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] ||
  die "--created '$created' is not an RFC 3339 UTC time (2026-12-04T22:16:14Z)"
epoch=$(date -u -d "$created" +%s) || die "--created '$created' is not a date"

[ -n "$deb_arch" ] || deb_arch=$(dpkg --print-architecture)
variant=""
case "$deb_arch" in
  amd64 | arm64 | s390x | riscv64 | mips64el) arch=$deb_arch ;;
  i386) arch=386 ;;
  ppc64el) arch=ppc64le ;;
  armhf) arch=arm variant=v7 ;;
  armel) arch=arm variant=v5 ;;
  *) die "no OCI architecture name known for Debian architecture '$deb_arch'" ;;
esac
[ "$arch" = arm64 ] && variant=v8

work=$(mktemp -d "${TMPDIR:-/tmp}/oci-archive.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"

# blob FILE: move FILE into blobs/ under its digest, print "sha256:<hex> <size>".
blob() {
  local hex size
  hex=$(sha256sum "$1" | cut -d' ' -f1)
  size=$(stat -c %s "$1")
  mv "$1" "$work/blobs/sha256/$hex"
  echo "sha256:$hex $size"
}

# ctar ARGS...: tar with every field that could vary between two runs fixed.
ctar() { tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu "$@"; }

ctar -C "$rootfs" -cf "$work/layer.tar" .
read -r layer_digest layer_size < <(blob "$work/layer.tar")

jq -n --arg arch "$arch" --arg variant "$variant" --arg user "$user" --arg workdir "$workdir" \
  --argjson entrypoint "$entrypoint" --argjson cmd "$cmd" --argjson env "$env" \
  --arg diff "$layer_digest" --arg created "$created" --argjson labels "$labels" '
  {created: $created, architecture: $arch, os: "linux",
   config: ({Env: $env, WorkingDir: $workdir}
            + (if $user != "" then {User: $user} else {} end)
            + (if $entrypoint != null then {Entrypoint: $entrypoint} else {} end)
            + (if $cmd != null then {Cmd: $cmd} else {} end)
            + (if $labels != {} then {Labels: $labels} else {} end)),
   rootfs: {type: "layers", diff_ids: [$diff]},
   history: [{created: $created, created_by: "scripts/release/oci-archive.sh"}]}
  + (if $variant != "" then {variant: $variant} else {} end)' -c >"$work/config.json"
read -r config_digest config_size < <(blob "$work/config.json")

jq -n --arg cd "$config_digest" --argjson cs "$config_size" \
  --arg ld "$layer_digest" --argjson ls "$layer_size" '
  {schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
   config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
   layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $ld, size: $ls}]}' -c \
  >"$work/manifest.oci.json"
read -r manifest_digest manifest_size < <(blob "$work/manifest.oci.json")

tag=${ref##*:}
jq -n --arg md "$manifest_digest" --argjson ms "$manifest_size" --arg ref "$ref" --arg tag "$tag" \
  --arg arch "$arch" --arg variant "$variant" '
  {schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
   manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $md, size: $ms,
                platform: ({architecture: $arch, os: "linux"}
                           + (if $variant != "" then {variant: $variant} else {} end)),
                annotations: {"io.containerd.image.name": $ref,
                              "org.opencontainers.image.ref.name": $tag}}]}' >"$work/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci-layout"
jq -n --arg c "blobs/sha256/${config_digest#sha256:}" --arg l "blobs/sha256/${layer_digest#sha256:}" \
  --arg ref "$ref" '[{Config: $c, RepoTags: [$ref], Layers: [$l]}]' -c >"$work/manifest.json"

mkdir -p "$(dirname "$out")"
ctar -C "$work" -cf "$out.tmp" blobs index.json manifest.json oci-layout # in name order
mv "$out.tmp" "$out"
