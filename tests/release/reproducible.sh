#!/usr/bin/env bash
# reproducible.sh — the release command, run from two fresh clones of the commit in two different
# directories, writes the same bytes; and what it writes is whole and consistent.
# label: release
#
#   tests/release/reproducible.sh          (CTest: release_reproducible; scripts/test.sh --tier release)
#
# Checks:
#   - both runs of scripts/release.sh succeed, each directory's SHA256SUMS verifies
#     (sha256sum -c), and the two directories are byte-identical, file by file;
#   - every artifact the release promises is there, for linux/amd64 and linux/arm64;
#   - install.yaml pins the image by the multi-arch index's digest, and that digest is the index
#     blob's sha256 in headroom-<tag>.oci.tar, which lists both platforms' manifests;
#   - each image's config carries the version and the commit in its OCI labels;
#   - the krew manifest's sha256 of each archive is the archive's, its URI under the base URL;
#   - the packaged charts carry the version (helm show chart) and pass helm lint --strict;
#   - the provenance names every other artifact with its digest, and the commit;
#   - NOTICE lists every Debian package whose files an image or a plugin archive carries.
# The clones are removed at the end (KEEP=1 keeps them).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE_URL=https://example.invalid/kube-headroom/releases/test
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-reproducible.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
commit=$(git -C "$ROOT" rev-parse HEAD)

t0=$(date +%s)
for side in a b; do
  # Different depths of directory, so a path that leaks into an artifact shows as a difference.
  dir=$work/$side
  [ "$side" = b ] && dir=$work/b/clone/of/the/same/commit
  git clone -q "$ROOT" "$dir"
  git -C "$dir" checkout -q "$commit"
  s=$(date +%s)
  "$dir/scripts/release.sh" --out "$dir/dist" --base-url "$BASE_URL" >"$work/$side.out" 2>"$work/$side.err" ||
    { tail -30 "$work/$side.err" >&2; fail "scripts/release.sh failed in clone $side"; }
  echo "release ($side): $(($(date +%s) - s)) s"
done
A=$(tail -n1 "$work/a.out")
B=$(tail -n1 "$work/b.out")
tag=$(basename "$A")
[ "$tag" = "$(basename "$B")" ] || fail "the two runs name different versions: $tag, $(basename "$B")"
(cd "$A" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS of run a does not verify"
(cd "$B" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS of run b does not verify"
pass "SHA256SUMS verifies ($(wc -l <"$A/SHA256SUMS") files)"
if ! diff -r "$A" "$B" >"$work/diff"; then
  cat "$work/diff" >&2
  diff "$A/SHA256SUMS" "$B/SHA256SUMS" >&2 || true
  fail "two release builds of $commit differ"
fi
pass "two release builds of ${commit:0:12} from two clones are byte-identical"

cd "$A"
version=$(cd "$work/a" && scripts/release/version.sh --field version)
want=(SHA256SUMS provenance.intoto.json install.yaml headroom.yaml "headroom-$tag.oci.tar"
  "kube-headroom-$version.tgz" "kube-headroom-crds-$version.tgz")
for a in amd64 arm64; do
  want+=("headroom-$tag-linux-$a.oci.tar" "headroom-$tag-linux-$a.spdx.json"
    "kubectl-headroom-$tag-linux-$a.tar.gz")
done
for f in "${want[@]}"; do [ -s "$f" ] || fail "the release has no $f"; done
pass "every artifact is there (${#want[@]})"

# The multi-arch index, its digest in install.yaml.
idx_digest=$(tar -xOf "headroom-$tag.oci.tar" index.json | jq -r '.manifests[0].digest')
idx_hex=${idx_digest#sha256:}
[ "$(tar -xOf "headroom-$tag.oci.tar" "blobs/sha256/$idx_hex" | sha256sum | cut -d' ' -f1)" = "$idx_hex" ] ||
  fail "the image index blob's sha256 is not its name"
plats=$(tar -xOf "headroom-$tag.oci.tar" "blobs/sha256/$idx_hex" |
  jq -r '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort | join(",")')
[ "$plats" = "linux/amd64,linux/arm64" ] || fail "the image index lists $plats"
grep -q "image: ghcr.io/kube-headroom/headroom@$idx_digest\$" install.yaml ||
  fail "install.yaml does not pin the image by the index's digest $idx_digest"
[ "$(grep -c 'image: ' install.yaml)" = "$(grep -c "image: ghcr.io/kube-headroom/headroom@$idx_digest\$" install.yaml)" ] ||
  fail "install.yaml names an image not by digest"
pass "install.yaml pins ghcr.io/kube-headroom/headroom@$idx_digest (linux/amd64, linux/arm64)"

# Each platform's image: its labels name the version and the commit.
for a in amd64 arm64; do
  f=headroom-$tag-linux-$a.oci.tar
  cfg=$(tar -xOf "$f" manifest.json | jq -r '.[0].Config')
  labels=$(tar -xOf "$f" "$cfg" | jq -c '.config.Labels // {}')
  [ "$(jq -r '."org.opencontainers.image.version"' <<<"$labels")" = "$version" ] ||
    fail "$f: label org.opencontainers.image.version is not $version: $labels"
  [ "$(jq -r '."org.opencontainers.image.revision"' <<<"$labels")" = "$commit" ] ||
    fail "$f: label org.opencontainers.image.revision is not $commit"
  [ "$(tar -xOf "$f" "$cfg" | jq -r .architecture)" = "$a" ] || fail "$f: its config is not for $a"
done
pass "each image's OCI labels carry version $version and commit ${commit:0:12}"

# The krew manifest.
for a in amd64 arm64; do
  f=kubectl-headroom-$tag-linux-$a.tar.gz
  sum=$(sha256sum "$f" | cut -d' ' -f1)
  python3 - "$f" "$a" "$sum" "$BASE_URL" <<'PY' || fail "headroom.yaml does not describe $f"
import sys, yaml
f, arch, sha, base = sys.argv[1:]
m = yaml.safe_load(open("headroom.yaml"))
ps = [p for p in m["spec"]["platforms"] if p["selector"]["matchLabels"] == {"os": "linux", "arch": arch}]
assert len(ps) == 1, ps
p = ps[0]
assert p["sha256"] == sha, (p["sha256"], sha)
assert p["uri"] == base + "/" + f, p["uri"]
assert p["bin"] == "kubectl-headroom", p["bin"]
PY
done
pass "headroom.yaml: each archive's URI and sha256"

# The charts.
HELM=$(cd "$ROOT" && tests/cluster/cluster.sh bin helm)
for c in kube-headroom kube-headroom-crds; do
  v=$("$HELM" show chart "$c-$version.tgz" | python3 -c 'import sys, yaml; c = yaml.safe_load(sys.stdin); print(c["version"], c["appVersion"])')
  [ "$v" = "$version $version" ] || fail "$c-$version.tgz: version/appVersion $v"
  "$HELM" lint --strict "$c-$version.tgz" >/dev/null || fail "helm lint --strict $c-$version.tgz"
done
"$HELM" show chart "kube-headroom-$version.tgz" | grep -q "ghcr.io/kube-headroom/headroom:$tag@$idx_digest" ||
  fail "the chart's artifacthub.io/images does not name the image by digest"
pass "both charts carry $version and lint; Artifact Hub names the image by digest"

# The provenance.
jq -e --arg c "$commit" '._type == "https://in-toto.io/Statement/v1"
  and .predicateType == "https://slsa.dev/provenance/v1"
  and .predicate.buildDefinition.externalParameters.source.digest.gitCommit == $c' \
  provenance.intoto.json >/dev/null || fail "provenance.intoto.json: not a statement of $commit"
for f in *; do
  case $f in SHA256SUMS | provenance.intoto.json) continue ;; esac
  jq -e --arg n "$f" --arg d "$(sha256sum "$f" | cut -d' ' -f1)" \
    'any(.subject[]; .name == $n and .digest.sha256 == $d)' provenance.intoto.json >/dev/null ||
    fail "the provenance does not name $f with its digest"
done
jq -e 'any(.predicate.buildDefinition.resolvedDependencies[]; .uri | startswith("pkg:deb/debian/libc6@"))' \
  provenance.intoto.json >/dev/null || fail "the provenance lists no Debian package"
pass "the provenance names every artifact by digest, the commit and the Debian packages"

# NOTICE covers what ships.
awk '/^--- packages ---$/{on=1; next} /^--- end packages ---$/{on=0} on && NF {print $1}' \
  "$ROOT/NOTICE" | sort -u >"$work/notice"
[ -s "$work/notice" ] || fail "NOTICE has no package block"
for a in amd64 arm64; do
  f=headroom-$tag-linux-$a.oci.tar
  layer=$(tar -xOf "$f" manifest.json | jq -r '.[0].Layers[0]')
  tar -xOf "$f" "$layer" | tar -t | grep -v '\.md5sums$' | sed -n 's#^\./var/lib/dpkg/status\.d/\([^/]\{1,\}\)$#\1#p'
  tar -tzf "kubectl-headroom-$tag-linux-$a.tar.gz" | sed -n 's#^\(\./\)\{0,1\}share/doc/\([^/]*\)/copyright$#\2#p'
done | sort -u >"$work/shipped"
[ -s "$work/shipped" ] || fail "no Debian package found in the images and plugins"
missing=$(comm -23 "$work/shipped" "$work/notice")
[ -z "$missing" ] || fail "NOTICE does not list: $(echo $missing)"
pass "NOTICE lists every Debian package shipped ($(wc -l <"$work/shipped"))"

echo "reproducible: $(($(date +%s) - t0)) s"
