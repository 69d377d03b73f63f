#!/usr/bin/env bash
# sbom.sh — a real scanner inventories every Debian package the runtime image carries files of:
# syft's SPDX (scripts/release/sbom.sh) names each one with the version installed here.
# label: image
#
#   tests/release/sbom.sh     (CTest: release_sbom; scripts/test.sh --tier image)
#   environment: HEADROOM_BIN (set by tests/release/CMakeLists.txt; default build/release/headroom)
#   for this machine's architecture; for arm64 HR_ARM64_BIN, else the first there of
#   $HR_BUILD_DIR/arm64/headroom (tests/release/image-arm64.sh's build, which runs before this
#   test in the image tier) and build/arm64/headroom, else image.sh builds the latter (cross, CMake);
#   HR_SBOM_ARCHIVE=PATH checks that image archive alone instead of building one (an older image,
#   one made by hand).
#
# For the image of this machine's architecture and, on amd64, the arm64 one (image.sh --arch
# arm64: its libraries are this machine's :arm64 packages, multiarch):
#   - image.sh --print builds the archive; sbom.sh writes its SPDX JSON twice: the same bytes, its
#     created time the image config's, its documentNamespace naming the manifest's digest;
#   - the image's files (regular files and symlinks, not the links that stand for a directory such
#     as /lib -> usr/lib) are looked up with dpkg -S on this machine, the one that built the
#     image, under each name dpkg may know them by on merged /usr (/usr/lib/X and /lib/X, ...);
#     a file no package owns (/usr/bin/headroom, /etc/passwd, the dpkg metadata) is left out, and
#     of a file that packages of several architectures own (a Multi-Arch: same package's
#     copyright), only the image architecture's owner counts;
#   - every owning package must be in the SBOM as pkg:deb/debian/NAME@VERSION?arch=ARCH (the
#     purl a vulnerability scanner matches on), VERSION and ARCH as dpkg-query says they are
#     installed (a package installed here only for another architecture and not Multi-Arch:
#     same, such as base-files, may be named at the image's); a missing one is named, with what
#     the SBOM says of that name if anything (syft gives a Debian package no purl when the image
#     has no /etc/os-release naming Debian); the packages the SBOM has beyond them are listed,
#     not failed.
# It closes with "N passed, N failed" and the time it took. syft is built on first use (about
# 5 min cold on 2 cores: tests/cluster/cluster.sh tool syft), then cached by version.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HEADROOM_BIN:-$ROOT/build/release/headroom}
arm_bin=${HR_ARM64_BIN:-}
if [ -z "$arm_bin" ]; then
  for b in "${HR_BUILD_DIR:-$ROOT/build/release}/arm64/headroom" "$ROOT/build/arm64/headroom"; do
    [ -x "$b" ] && { arm_bin=$b; break; }
  done
fi
t0=$(date +%s)
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
die() { echo "FAIL: $*"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
for t in dpkg-query jq tar cmp; do command -v "$t" >/dev/null || die "$t not found"; done

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-sbom-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# jq: a purl's percent-encoded part decoded (ASCII: %3A, %2B, ...).
JQ_DEFS='
def unhex: ascii_downcase | explode | map(if . >= 97 then . - 87 else . - 48 end) | .[0] * 16 + .[1];
def urldecode: split("%") | .[0] + (.[1:] | map(([.[0:2] | unhex] | implode) + .[2:]) | join(""));'

# spellings PATH: the names dpkg may record PATH's file under on merged /usr.
spellings() {
  echo "$1"
  case $1 in
    /usr/bin/* | /usr/sbin/* | /usr/lib/* | /usr/lib32/* | /usr/lib64/* | /usr/libx32/*) echo "${1#/usr}" ;;
    /bin/* | /sbin/* | /lib/* | /lib32/* | /lib64/* | /libx32/*) echo "/usr$1" ;;
  esac
}

# check LABEL ARCHIVE: one image archive, checked; LABEL names it in the output.
check() {
  local label=$1 archive=$2 w config oci_arch arch layer f owners sbom n
  w=$work/$label
  mkdir -p "$w/rootfs"
  echo "== $label: $archive"
  config=$(tar -xOf "$archive" manifest.json | jq -r '.[0].Config') || { fail "$label: no manifest.json in $archive"; return; }
  oci_arch=$(tar -xOf "$archive" "$config" | jq -r '.architecture')
  case $oci_arch in
    amd64 | arm64 | s390x | riscv64) arch=$oci_arch ;;
    386) arch=i386 ;;
    ppc64le) arch=ppc64el ;;
    arm) arch=armhf ;;
    *) fail "$label: the image's architecture '$oci_arch' has no Debian name here"; return ;;
  esac
  for layer in $(tar -xOf "$archive" manifest.json | jq -r '.[0].Layers[]'); do
    tar -xOf "$archive" "$layer" | tar -C "$w/rootfs" -xf - || { fail "$label: cannot unpack layer $layer"; return; }
  done

  # The SBOM, twice.
  if ! "$ROOT/scripts/release/sbom.sh" "$archive" "$w/sbom.json" 2>"$w/sbom.err"; then
    cat "$w/sbom.err"
    fail "$label: scripts/release/sbom.sh failed"
    return
  fi
  "$ROOT/scripts/release/sbom.sh" "$archive" "$w/sbom2.json" 2>/dev/null || true
  if cmp -s "$w/sbom.json" "$w/sbom2.json"; then
    pass "$label: two runs of sbom.sh on the archive write the same bytes"
  else
    fail "$label: two runs of sbom.sh differ: $(diff <(jq -S . "$w/sbom.json") <(jq -S . "$w/sbom2.json") | head -5 | tr '\n' ' ')"
  fi
  local digest created want_ns
  digest=$(tar -xOf "$archive" index.json | jq -r '.manifests[0].digest')
  created=$(tar -xOf "$archive" "$config" | jq -r '.created // "1970-01-01T00:00:00Z"')
  [ -z "${SOURCE_DATE_EPOCH:-}" ] || created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
  if jq -e --arg c "$created" --arg d "$digest" \
    '.spdxVersion == "SPDX-2.3" and .creationInfo.created == $c and (.documentNamespace | endswith("@" + $d))' \
    "$w/sbom.json" >/dev/null; then
    pass "$label: SPDX-2.3, created $created, namespace ...@${digest:0:19}..."
  else
    fail "$label: the SPDX header is not as promised: $(jq -c '{spdxVersion, created: .creationInfo.created, documentNamespace}' "$w/sbom.json")"
  fi

  # The image's files and their owners on this machine.
  (cd "$w/rootfs" && find . \( -type f -o -type l \) -printf '/%P\n') | sort |
    while IFS= read -r f; do
      if [ -L "$w/rootfs$f" ] && [ -d "$w/rootfs$f" ]; then continue; fi # /lib -> usr/lib
      echo "$f"
    done >"$w/files"
  while IFS= read -r f; do spellings "$f"; done <"$w/files" | sort -u >"$w/spellings"
  # One dpkg-query for all (it reads its whole database each call): "PKG[, PKG...]: PATH".
  xargs -r -d '\n' dpkg-query -S <"$w/spellings" 2>/dev/null | grep -E '^[^ ].*: /' |
    grep -v '^diversion by ' >"$w/dpkg-S" || true
  local -A owner_of=()
  local line s
  while IFS= read -r line; do owner_of[/${line#*: /}]=${line%%: /*}; done <"$w/dpkg-S"
  : >"$w/owned"
  : >"$w/owners"
  while IFS= read -r f; do
    owners=$(for s in $(spellings "$f"); do echo "${owner_of[$s]:-}"; done | tr ',' '\n' | tr -d ' ' | sed '/^$/d' | sort -u)
    [ -n "$owners" ] || continue
    # Owners of several architectures (one file of a Multi-Arch: same package): the image's.
    if grep -q ":$arch\$" <<<"$owners"; then owners=$(grep -v ':' <<<"$owners" || true; grep ":$arch\$" <<<"$owners"); fi
    echo "$f" >>"$w/owned"
    printf '%s\n' "$owners" >>"$w/owners"
  done <"$w/files"
  sort -u -o "$w/owners" "$w/owners"
  comm -23 "$w/files" <(sort -u "$w/owned") >"$w/unowned"
  echo "   $(wc -l <"$w/files") files and symlinks, $(wc -l <"$w/owned") of them from $(wc -l <"$w/owners") packages;" \
    "owned by none: $(grep -v '^/var/lib/dpkg/' "$w/unowned" | tr '\n' ' ')and $(grep -c '^/var/lib/dpkg/' "$w/unowned") under /var/lib/dpkg/"
  [ -s "$w/owners" ] || { fail "$label: dpkg -S names no package for any file of the image"; return; }

  # What is installed: "NAME VERSION ARCH" per owner.
  xargs -r dpkg-query -W -f '${Package} ${Version} ${Architecture}\n' <"$w/owners" | sort -u >"$w/want"
  # What the SBOM says: "NAME VERSION ARCH" from each pkg:deb/debian purl.
  jq -r "$JQ_DEFS"'
    .packages[] | .externalRefs[]? | select(.referenceType == "purl") | .referenceLocator
    | select(startswith("pkg:deb/debian/")) | ltrimstr("pkg:deb/debian/")
    | (split("?") | .[0] | split("@")) as $nv
    | ((split("?") | .[1] // "") | split("&") | map(select(startswith("arch="))) | .[0] // "arch=" | ltrimstr("arch=")) as $a
    | "\($nv[0] | urldecode) \($nv[1] // "" | urldecode) \($a | urldecode)"' "$w/sbom.json" | sort -u >"$w/got"
  echo "   installed here (dpkg -S, dpkg-query):"
  sed 's/^/     /' "$w/want"
  echo "   in the SBOM (pkg:deb/debian purls): $(wc -l <"$w/got")"
  comm -23 "$w/want" "$w/got" >"$w/missing.0"
  # A package installed here only for another architecture and not Multi-Arch: same (base-files,
  # whose os-release an arm64 image may carry) cannot be installed here for the image's: the SBOM
  # may name it at the image's architecture.
  local name v a ma
  : >"$w/missing"
  : >"$w/accepted"
  while read -r name v a; do
    ma=$(dpkg-query -W -f '${Multi-Arch}' "$name:$a" 2>/dev/null || true)
    if [ "$a" != "$arch" ] && [ "$a" != all ] && [ "$ma" != same ] && grep -qxF "$name $v $arch" "$w/got"; then
      echo "   $name $v: installed here for $a only, in the SBOM for $arch"
      echo "$name $v $arch" >>"$w/accepted"
      continue
    fi
    echo "$name $v $a" >>"$w/missing"
  done <"$w/missing.0"
  comm -13 "$w/want" "$w/got" | { grep -vxF -f "$w/accepted" || true; } >"$w/extra"
  if [ -s "$w/missing" ]; then
    local said
    while read -r name _; do
      said=$(jq -r --arg n "$name" '[.packages[] | select(.name == $n) |
        "\(.versionInfo // "?") purl \([.externalRefs[]? | select(.referenceType == "purl") | .referenceLocator] | first // "none")"]
        | if length == 0 then "nothing" else join("; ") end' "$w/sbom.json")
      echo "   missing: $(grep "^$name " "$w/missing") (the SBOM says of $name: $said)"
    done <"$w/missing"
    n=$(jq '[.packages[] | select(.SPDXID | startswith("SPDXRef-Package-deb-"))] | length' "$w/sbom.json")
    local why=""
    if [ "$n" -eq 0 ]; then
      why="syft found no Debian package: the image has no dpkg database (/var/lib/dpkg/status or status.d/)"
    elif [ ! -e "$w/rootfs/etc/os-release" ] && [ ! -e "$w/rootfs/usr/lib/os-release" ]; then
      why="syft found $n Debian packages but could give them no pkg:deb/debian purl: the image has no /etc/os-release (nor /usr/lib/os-release) naming Debian, which is where syft takes the distro from"
    fi
    fail "$label: $(wc -l <"$w/missing") of $(wc -l <"$w/want") Debian packages with files in the image are not in the SBOM as pkg:deb/debian/NAME@VERSION?arch=ARCH: $(cut -d' ' -f1 "$w/missing" | tr '\n' ' ')${why:+— $why}"
  else
    pass "$label: all $(wc -l <"$w/want") Debian packages with files in the image are in the SBOM at their installed version and architecture"
  fi
  if [ -s "$w/extra" ]; then
    echo "   in the SBOM beyond the owners of the image's files: $(tr '\n' ';' <"$w/extra")"
  else
    echo "   nothing in the SBOM beyond the owners of the image's files"
  fi
}

if [ -n "${HR_SBOM_ARCHIVE:-}" ]; then
  check given "$HR_SBOM_ARCHIVE"
else
  [ -x "$bin" ] || die "no headroom binary at $bin"
  here=$(dpkg --print-architecture)
  if archive=$("$ROOT/scripts/release/image.sh" --print --bin "$bin" 2>"$work/image.err"); then
    check "$here" "$archive"
  else
    cat "$work/image.err"
    fail "$here: scripts/release/image.sh --print failed"
  fi
  if [ "$here" != arm64 ]; then
    arm_args=()
    [ -z "$arm_bin" ] || arm_args=(--bin "$arm_bin")
    if ! archive=$("$ROOT/scripts/release/image.sh" --print --arch arm64 ${arm_args[@]+"${arm_args[@]}"} 2>"$work/image-arm64.err"); then
      cat "$work/image-arm64.err"
      fail "arm64: scripts/release/image.sh --print --arch arm64 ${arm_args[*]} failed"
    else
      check arm64 "$archive"
    fi
  fi
fi
echo "time: $(($(date +%s) - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
