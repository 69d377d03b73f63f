#!/usr/bin/env bash
# release.sh — build the release directory of the current commit (docs/releasing.md).
#
#   scripts/release.sh [--out DIR] [--base-url URL]
#
# Writes DIR/<tag>/ (DIR defaults to dist/; <tag> is the version with "+" spelled "-", as the image
# is tagged; scripts/release/version.sh), and prints its path last:
#   headroom-<tag>-linux-amd64.oci.tar     the runtime image per platform (OCI layout + docker-archive;
#   headroom-<tag>-linux-arm64.oci.tar       scripts/release/image.sh), each with Debian's package
#                                            metadata so that scanners inventory it
#   headroom-<tag>.oci.tar                 both platforms as one multi-arch image (an image index;
#                                            scripts/release/oci-index.sh)
#   headroom-<tag>-linux-<arch>.spdx.json  the SBOM of each platform's image, by Syft
#   kube-headroom-<version>.tgz            the chart, version and appVersion stamped, Artifact Hub
#   kube-headroom-crds-<version>.tgz         annotations with the image by digest and the changes
#   install.yaml                           the one-file install, the image pinned by the index's digest
#   kubectl-headroom-<tag>-linux-<arch>.tar.gz   the kubectl plugin per platform, runnable without
#                                            Debian's libraries (scripts/release/plugin.sh)
#   headroom.yaml                          the krew manifest: each archive's URI under URL and sha256
#   provenance.intoto.json                 in-toto/SLSA provenance: the commit, this command, the
#                                            Debian packages and Go tools that went in, each digest
#   SHA256SUMS                             over everything above (sha256sum -c accepts it)
#
# URL (--base-url) is where the files will be published; the krew manifest's URIs are under it.
# Default: the GitHub release of the tag, https://github.com/kube-headroom/kube-headroom/releases/download/v<version>.
#
# Reproducible: the binaries are built from the commit's files with their paths mapped away
# (-ffile-prefix-map), every timestamp is SOURCE_DATE_EPOCH (the commit's time unless set), every
# archive is sorted and owned by 0:0, so two runs on one commit write the same bytes
# (tests/release/reproducible.sh builds twice from two clones and compares). Run it on a clean
# tree: a dirty one builds a ".dirty" version.
#
# It installs what it needs: Debian's packages (scripts/setup.sh) and helm and syft, built at
# their pinned versions (tests/cluster/versions.env) and cached (tests/cluster/cluster.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

die() { echo "release: $*" >&2; exit 1; }
say() { echo "release: $*" >&2; }

out=$ROOT/dist base_url=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --base-url) base_url=${2:?--base-url needs a URL}; shift 2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
done
ARCHES=(amd64 arm64)
t0=$(date +%s)

scripts/setup.sh
HELM=$(tests/cluster/cluster.sh bin helm)
[ -x "$HELM" ] || tests/cluster/cluster.sh build >&2 # helm is one of the pinned binaries
tests/cluster/cluster.sh tool syft >/dev/null
# shellcheck source=../tests/cluster/versions.env
. tests/cluster/versions.env

# The version, the commit and the date everything is stamped with.
eval "$(scripts/release/version.sh)"
export SOURCE_DATE_EPOCH=$epoch
: "${base_url:=https://github.com/kube-headroom/kube-headroom/releases/download/v$version}"
dist=$(mkdir -p "$out" && cd "$out" && pwd)/$tag
rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d "${TMPDIR:-/tmp}/release.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "$version (commit $commit, $tree tree, built $date) -> $dist"
[ "$tree" = clean ] || say "WARNING: the work tree is dirty: this is not a release of the commit"

# ---- binaries ----------------------------------------------------------------------------------
# One tree per platform, configured as the image's binary always is (RelWithDebInfo, stripped when
# packed), with the checkout's path mapped to "." so that no path of this machine is in them.
build_arch() { # arch -> build dir
  local a=$1 b=build/release-$1 tc=()
  [ "$a" = amd64 ] || tc=(-DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake")
  cmake -S . -B "$b" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_TESTS=OFF \
    -DCMAKE_C_FLAGS="-ffile-prefix-map=$ROOT/=" "${tc[@]}" >/dev/null
  ninja -C "$b" headroom kubectl-headroom-launcher >/dev/null
}
for a in "${ARCHES[@]}"; do
  say "building headroom for linux/$a"
  build_arch "$a"
done

# ---- images, SBOMs -----------------------------------------------------------------------------
archives=()
for a in "${ARCHES[@]}"; do
  say "image linux/$a"
  img=$(scripts/release/image.sh --print --arch "$a" --bin "build/release-$a/headroom")
  cp "$img" "$dist/headroom-$tag-linux-$a.oci.tar"
  archives+=("$dist/headroom-$tag-linux-$a.oci.tar")
  scripts/release/sbom.sh "$dist/headroom-$tag-linux-$a.oci.tar" "$dist/headroom-$tag-linux-$a.spdx.json"
  # The Debian packages the image carries, for the provenance.
  tar -xOf "$dist/headroom-$tag-linux-$a.oci.tar" \
    "$(tar -xOf "$dist/headroom-$tag-linux-$a.oci.tar" manifest.json | jq -r '.[0].Layers[0]')" |
    tar -t | grep -v '\.md5sums$' | sed -n 's#^\./var/lib/dpkg/status\.d/\([^/]\{1,\}\)$#\1#p' >"$work/image-$a.pkgs"
done
REF=ghcr.io/kube-headroom/headroom
index_digest=$(scripts/release/oci-index.sh --ref "$REF:$tag" --out "$dist/headroom-$tag.oci.tar" "${archives[@]}")
say "image index $REF@$index_digest"

# ---- charts, install.yaml ----------------------------------------------------------------------
# The packaged charts carry the version (chart version = the version, appVersion = the version),
# the image by digest for Artifact Hub, and the changes of the CHANGELOG's first section.
changes=$(awk '/^## \[/{n++; next} n == 1 && /^### /{kind=tolower($2); next}
  n == 1 && /^- /{sub(/^- /, ""); gsub(/"/, "\\\""); print kind "\t" $0} n > 1 {exit}' CHANGELOG.md |
  jq -R -s -c 'split("\n") | map(select(length > 0) | split("\t")
    | {kind: ({"added": "added", "changed": "changed", "deprecated": "deprecated", "removed": "removed",
               "fixed": "fixed", "security": "security"}[.[0]] // "changed"), description: .[1]})')
prerelease=false
case "$version" in *-*) prerelease=true ;; esac
cp -r charts/kube-headroom "$work/chart"
stamp_chart() { # Chart.yaml
  V="$version" P="$prerelease" IMG="$REF:$tag@$index_digest" CH="$changes" python3 - "$1" <<'PY'
import json, os, sys, yaml
p = sys.argv[1]
c = yaml.safe_load(open(p))
c["version"] = os.environ["V"]
c["appVersion"] = os.environ["V"]
a = c.setdefault("annotations", {})
a["artifacthub.io/prerelease"] = os.environ["P"]
if "artifacthub.io/images" in a:
    a["artifacthub.io/images"] = yaml.safe_dump([{"name": "headroom", "image": os.environ["IMG"]}])
changes = json.loads(os.environ["CH"] or "[]")
if changes:
    a["artifacthub.io/changes"] = yaml.safe_dump(changes, sort_keys=False)
for d in c.get("dependencies", []):
    if d["name"] == "kube-headroom-crds":
        d["version"] = os.environ["V"]
open(p, "w").write("# Stamped by scripts/release.sh from charts/%s.\n" % c["name"]
                   + yaml.safe_dump(c, sort_keys=False))
PY
}
stamp_chart "$work/chart/Chart.yaml"
stamp_chart "$work/chart/charts/crds/Chart.yaml"
# helm package stamps the time of packaging into the tar and gzip headers: repack what it wrote
# with SOURCE_DATE_EPOCH, sorted, owned by 0:0 (helm reads the result as it reads its own).
repack_tgz() { # in.tgz out.tgz
  local x=$work/repack
  rm -rf "$x" && mkdir -p "$x"
  tar -C "$x" -xzmf "$1"
  # helm reads the chart from the entries under one top directory (no "./" before it).
  tar -C "$x" --sort=name --mtime=@"$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --mode=go-w --format=ustar -cf - "$(ls "$x")" | gzip -n -9 >"$2"
}
"$HELM" package "$work/chart" -d "$work/pkg" >/dev/null
"$HELM" package "$work/chart/charts/crds" -d "$work/pkg" >/dev/null
repack_tgz "$work/pkg/kube-headroom-$version.tgz" "$dist/kube-headroom-$version.tgz"
repack_tgz "$work/pkg/kube-headroom-crds-$version.tgz" "$dist/kube-headroom-crds-$version.tgz"
"$HELM" lint --strict "$dist/kube-headroom-$version.tgz" >/dev/null ||
  die "helm lint --strict refuses the packaged chart"

# install.yaml: what scripts/release/render-install.sh writes, from the stamped chart, the image by
# the multi-arch index's digest.
CHART="$work/chart" scripts/release/render-install.sh --out "$dist/install.yaml" \
  --set "image.digest=$index_digest"
grep -q "image: $REF@$index_digest\$" "$dist/install.yaml" ||
  die "install.yaml does not name $REF@$index_digest"

# ---- the kubectl plugin ------------------------------------------------------------------------
plugins=()
for a in "${ARCHES[@]}"; do
  say "kubectl plugin linux/$a"
  p=$(scripts/release/plugin.sh --arch "$a" --build "build/release-$a" --out "$dist")
  plugins+=("$p")
  tar -tzf "$p" | sed -n 's#^\(\./\)\{0,1\}share/doc/\([^/]*\)/copyright$#\2#p' >"$work/plugin-$a.pkgs"
done
scripts/release/krew-manifest.sh --base-url "$base_url" --version "$version" "${plugins[@]}" \
  >"$dist/headroom.yaml"

# ---- provenance, SHA256SUMS --------------------------------------------------------------------
# The Debian packages that went in: those whose files the images and plugins carry, and those that
# built them (compilers, binutils, the C library's and the libraries' development files).
deb_arch_of() { # package name from a list made on an arch-specific artifact -> "pkg:arch" if multiarch
  dpkg-query -W -f='${Package} ${Version} ${Architecture}\n' "$1:$2" 2>/dev/null ||
    dpkg-query -W -f='${Package} ${Version} ${Architecture}\n' "$1"
}
{
  for a in "${ARCHES[@]}"; do
    sort -u "$work/image-$a.pkgs" "$work/plugin-$a.pkgs" | while read -r p; do deb_arch_of "$p" "$a"; done
    for p in libcurl4-gnutls-dev libmicrohttpd-dev libfyaml-dev libyyjson-dev libgnutls28-dev libc6-dev; do
      deb_arch_of "$p" "$a"
    done
  done
  dpkg-query -W -f='${Package} ${Version} ${Architecture}\n' gcc-12 gcc-12-aarch64-linux-gnu binutils \
    binutils-aarch64-linux-gnu libc6-dev-arm64-cross cmake ninja-build
} | LC_ALL=C sort -u >"$work/packages"
scripts/release/provenance.sh --dir "$dist" --commit "$commit" --packages "$work/packages" \
  --command "scripts/release.sh --base-url $base_url" \
  --tool "helm=helm.sh/helm/v3@$HELM_VERSION" --tool "syft=github.com/anchore/syft@$SYFT_VERSION" \
  >"$dist/provenance.intoto.json"

(cd "$dist" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort |
  xargs sha256sum >SHA256SUMS && sha256sum --quiet -c SHA256SUMS) || die "SHA256SUMS does not verify"
say "$(wc -l <"$dist/SHA256SUMS") files in $(($(date +%s) - t0)) s"
echo "$dist"
