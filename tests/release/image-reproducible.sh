#!/usr/bin/env bash
# image-reproducible.sh — two builds of the runtime image's archive from the same binary are the
# same bytes, and the archive is stamped as scripts/release/image.sh promises.
# label: image
#
#   tests/release/image-reproducible.sh [--arch amd64|arm64]
#        (CTest: release_image_reproducible; scripts/test.sh --tier image)
#   environment: HEADROOM_BIN (set by tests/release/CMakeLists.txt; default build/release/headroom)
#   for amd64; for arm64 the binary of tests/release/image-arm64.sh's build (HR_ARM64_BIN).
#
# Checks (image.sh --print, which assembles, verifies the package database and packs; no
# container):
#   - two runs with different caches, temporary directories (at different depths) and umasks
#     write archives with the same sha256;
#   - the image is named ghcr.io/kube-headroom/headroom:<version with + as ->;
#   - its config: architecture, os linux, created = the binary's buildDate, and the labels
#     org.opencontainers.image.{version,revision,created} = `headroom version -o json`'s version,
#     commit and buildDate, source/url the GitHub project, licenses Apache-2.0, title,
#     description, documentation;
#   - the layer and the outer tar: GNU format with no pax header (so no atime, ctime), every
#     entry dated the buildDate, owned 0:0 with no user or group name, in name order.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
arch=$(dpkg --print-architecture)
[ "${1:-}" != --arch ] || arch=${2:?--arch needs amd64 or arm64}
bin=${HEADROOM_BIN:-$ROOT/build/release/headroom}
[ "$arch" = "$(dpkg --print-architecture)" ] || bin=${HR_ARM64_BIN:-$ROOT/build/arm64/headroom}
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
[ -x "$bin" ] || fail "no headroom binary at $bin"

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-image-repro.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/a" "$work/b/deeper/still/deeper"
arch_args=()
[ "$arch" = "$(dpkg --print-architecture)" ] || arch_args=(--arch "$arch")

build() { # side umask -> archive path
  (umask "$2" && HEADROOM_CACHE=$work/$1/cache TMPDIR=$work/$1 \
    "$ROOT/scripts/release/image.sh" --print "${arch_args[@]}" --bin "$bin") 2>"$work/$1.err" ||
    { cat "$work/$1.err" >&2; fail "image.sh --print ($1) failed"; }
}
a=$(build a 022)
b=$(build b/deeper/still/deeper 077)
sa=$(sha256sum <"$a" | cut -d' ' -f1)
sb=$(sha256sum <"$b" | cut -d' ' -f1)
if [ "$sa" != "$sb" ]; then
  for s in a b; do
    f=$a
    [ $s = a ] || f=$b
    mkdir -p "$work/x$s"
    tar -C "$work/x$s" -xf "$f"
  done
  diff -r "$work/xa" "$work/xb" >&2 || true
  for s in a b; do # the layers' listings, when the layers differ
    l=$(jq -r '.[0].Layers[0]' "$work/x$s/manifest.json")
    tar -tv --full-time --numeric-owner -f "$work/x$s/$l" >"$work/x$s.list"
  done
  diff "$work/xa.list" "$work/xb.list" | head -40 >&2 || true
  fail "two builds of the $arch image from one binary differ: $sa, $sb"
fi
pass "two builds of the $arch archive are byte-identical (sha256 $sa)"

# What the binary says of itself (under user-mode qemu for a foreign architecture, on the
# image's own root filesystem as image.sh runs it).
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
  info=$("$bin" version -o json)
else
  mkdir "$work/rootfs"
  tar -xOf "$a" "$(tar -xOf "$a" manifest.json | jq -r '.[0].Layers[0]')" | tar -C "$work/rootfs" -xf -
  info=$(qemu-aarch64 -L "$work/rootfs" "$work/rootfs/usr/bin/headroom" version -o json)
fi
version=$(jq -r .version <<<"$info")
commit=$(jq -r .commit <<<"$info")
built=$(jq -r .buildDate <<<"$info")
epoch=$(date -u -d "$built" +%s) || fail "buildDate '$built' is not a date"

ref=$(tar -xOf "$a" index.json | jq -r '.manifests[0].annotations."io.containerd.image.name"')
[ "$ref" = "ghcr.io/kube-headroom/headroom:${version//+/-}" ] || fail "the image is named $ref"
[ "$(tar -xOf "$a" manifest.json | jq -r '.[0].RepoTags[0]')" = "$ref" ] || fail "manifest.json's RepoTags differ"
pass "named $ref"

oci_arch=$arch
cfg=$(tar -xOf "$a" "$(tar -xOf "$a" manifest.json | jq -r '.[0].Config')")
P=https://github.com/kube-headroom/kube-headroom
jq -e --arg arch "$oci_arch" --arg v "$version" --arg c "$commit" --arg d "$built" --arg p "$P" '
  .architecture == $arch and .os == "linux" and .created == $d
  and (.config.Labels as $l
       | $l."org.opencontainers.image.version" == $v
       and $l."org.opencontainers.image.revision" == $c
       and $l."org.opencontainers.image.created" == $d
       and $l."org.opencontainers.image.source" == $p
       and $l."org.opencontainers.image.url" == $p
       and $l."org.opencontainers.image.licenses" == "Apache-2.0"
       and $l."org.opencontainers.image.title" == "kube-headroom"
       and ($l."org.opencontainers.image.description" | length > 20)
       and ($l."org.opencontainers.image.documentation" | startswith($p + "/tree/")))' \
  <<<"$cfg" >/dev/null || fail "the config is not stamped with $version $commit $built: $cfg"
pass "config: $oci_arch/linux, created $built, labels version $version, revision ${commit:0:12}"

tar -xOf "$a" "$(tar -xOf "$a" manifest.json | jq -r '.[0].Layers[0]')" >"$work/layer.tar"
for t in "$work/layer.tar" "$a"; do
  python3 - "$t" "$epoch" <<'PY' || fail "$(basename "$t"): an entry is not stamped as promised"
import sys, tarfile
path, epoch = sys.argv[1], int(sys.argv[2])
bad = []
names = []
# GNU format: no pax header ('x' or 'g' typeflag at any header block).
with tarfile.open(path, format=tarfile.GNU_FORMAT) as t:
    for m in t.getmembers():
        names.append(m.name)
        if m.pax_headers:
            bad.append(f"{m.name}: pax header {m.pax_headers}")
        if m.mtime != epoch:
            bad.append(f"{m.name}: mtime {m.mtime}, not {epoch}")
        if (m.uid, m.gid, m.uname, m.gname) != (0, 0, "", ""):
            bad.append(f"{m.name}: owner {m.uid}:{m.gid} ({m.uname}:{m.gname})")
        if m.type in (tarfile.XHDTYPE, tarfile.XGLTYPE):
            bad.append(f"{m.name}: pax entry")
# tar --sort=name orders each directory's entries by name, depth first.
def key(n):
    return n.rstrip("/").split("/")
if [key(n) for n in names] != sorted(key(n) for n in names):
    bad.append("entries are not in name order")
for b in bad[:20]:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
done
pass "layer and archive: GNU tar without pax headers, every entry dated $built ($epoch), 0:0, in name order"
