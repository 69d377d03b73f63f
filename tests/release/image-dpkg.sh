#!/usr/bin/env bash
# image-dpkg.sh — the runtime image carries the package database scanners read (Syft, Trivy,
# Grype: /var/lib/dpkg/status.d/, distroless' layout) for exactly the Debian packages whose files
# it has, and the check of that database fails when it is wrong.
# label: image
#
#   tests/release/image-dpkg.sh [--arch amd64|arm64]
#        (CTest: release_image_dpkg; scripts/test.sh --tier image)
#   environment: HEADROOM_BIN (set by tests/release/CMakeLists.txt; default build/release/headroom)
#   for amd64; HR_ARM64_BIN (default build/arm64/headroom) for arm64.
#
# Checks, on the root filesystem scripts/release/image.sh --rootfs assembles (no container):
#   - the packages with a status file are exactly the owners (dpkg -S, of the image's
#     architecture) of the libraries and the interpreter the binary loads (ldd; for arm64 the
#     image's own ld.so --list under qemu) and base-files (the owner of this machine's
#     /usr/lib/os-release), and nothing else;
#   - /etc/os-release is the link ../usr/lib/os-release, as Debian has it, to an os-release
#     saying ID=debian that status.d/base-files.md5sums lists;
#   - /usr/share/doc/kube-headroom/LICENSE and NOTICE are the repository's LICENSE and NOTICE,
#     and NOTICE's package block lists every package of status.d;
#   - each status file is `dpkg-query -s PKG:ARCH` without its Conffiles field, Status "install
#     ok installed"; each md5sums holds lines of the package's own md5sums only, sorted, and the
#     image's copy of each file has those bytes (md5sum -c in the tree). A package installed
#     here for another architecture only (base-files for arm64: not Multi-Arch: same) comes
#     from its .deb of the installed version, which image.sh keeps in
#     ${HEADROOM_CACHE:-~/.cache/kube-headroom}/debs: its status file is the installed
#     paragraph with the .deb's Architecture and Installed-Size, its md5sums lines the .deb's;
#   - image.sh --verify-rootfs accepts the tree, and refuses it (exit 1, naming the fault) with a
#     status file removed, an md5sums removed, a wrong checksum, an unlisted file added, a
#     listed file removed, a line of another package's md5sums added, /etc/os-release removed,
#     /etc/os-release leading to another package's file, the image's NOTICE removed, its NOTICE
#     without libc6's line, a file beside it that no package owns nor image.sh writes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
native=$(dpkg --print-architecture)
arch=$native
[ "${1:-}" != --arch ] || arch=${2:?--arch needs amd64 or arm64}
bin=${HEADROOM_BIN:-$ROOT/build/release/headroom}
[ "$arch" = "$native" ] || bin=${HR_ARM64_BIN:-$ROOT/build/arm64/headroom}
IMAGE=$ROOT/scripts/release/image.sh
DB=var/lib/dpkg/status.d
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
[ -x "$bin" ] || fail "no headroom binary at $bin"

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-image-dpkg.XXXXXX")
trap 'rm -rf "$work"' EXIT
r=$work/rootfs
"$IMAGE" --rootfs "$r" --arch "$arch" --bin "$bin" >"$work/assemble.log" 2>&1 ||
  { cat "$work/assemble.log" >&2; fail "image.sh --rootfs --arch $arch failed"; }

# What the binary loads, asked of the loader itself: ldd here; for another architecture the
# image's own ld.so, under qemu, listing what it would load from the image (-L: the image first).
if [ "$arch" = "$native" ]; then
  loaded=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
else
  interp=$(readelf -lW "$bin" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]$/\1/p')
  loaded=$(qemu-aarch64 -L "$r" "$r$interp" --list "$r/usr/bin/headroom" |
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sed "s|^$r/|/|")
fi
[ -n "$loaded" ] || fail "no library found for $bin"
os_owner=$(dpkg -S /usr/lib/os-release | sed 's/: .*//')
want=$({
  for f in $loaded; do
    p=$(realpath "$f")
    { dpkg -S "$p" 2>/dev/null || dpkg -S "${p#/usr}"; } | head -1 | sed 's/: .*//' | tr -d ' ' |
      tr ',' '\n' | grep -E ":$arch\$|^[^:]+\$" | head -1
  done
  echo "$os_owner"
} | sed 's/:.*//' | sort -u)
have=$(find "$r/$DB" -type f ! -name '*.md5sums' -printf '%f\n' | sort)
if [ "$want" != "$have" ]; then
  diff <(echo "$want") <(echo "$have") >&2 || true
  fail "the status files (right) are not the packages of the loaded libraries (left)"
fi
pass "status.d names exactly the $(wc -l <<<"$have") $arch packages of the libraries $bin loads and $os_owner"

[ "$(readlink "$r/etc/os-release")" = ../usr/lib/os-release ] || fail "/etc/os-release is not the link ../usr/lib/os-release"
grep -qx 'ID=debian' "$r/usr/lib/os-release" || fail "/usr/lib/os-release does not say ID=debian"
grep -q '  usr/lib/os-release$' "$r/$DB/$os_owner.md5sums" || fail "$DB/$os_owner.md5sums does not list usr/lib/os-release"
pass "/etc/os-release -> ../usr/lib/os-release, owned by $os_owner, ID=debian"

doc=$r/usr/share/doc/kube-headroom
for f in LICENSE NOTICE; do
  cmp -s "$doc/$f" "$ROOT/$f" || fail "/usr/share/doc/kube-headroom/$f is not the repository's $f"
done
unlisted=$(comm -23 <(echo "$have") <(awk '/^--- packages ---$/ {on = 1; next} /^--- end packages ---$/ {on = 0}
  on && NF {print $1}' "$doc/NOTICE" | sort -u))
[ -z "$unlisted" ] || fail "NOTICE's package block does not list: $unlisted"
pass "/usr/share/doc/kube-headroom/{LICENSE,NOTICE} are the repository's; NOTICE lists all $(wc -l <<<"$have") packages"

n=0
for s in "$r/$DB"/*; do
  case "$s" in *.md5sums) continue ;; esac
  name=${s##*/}
  pkg=$name:$arch
  dpkg-query -s "$pkg" >/dev/null 2>&1 || pkg=$name
  para=$(dpkg-query -s "$pkg" | awk '/^[^ ]/ {skip = /^Conffiles:/} !skip')
  sums=/var/lib/dpkg/info/$pkg.md5sums
  [ -f "$sums" ] || sums=/var/lib/dpkg/info/$name.md5sums
  a=$(dpkg-query -W -f='${Architecture}' "$pkg")
  if [ "$a" != "$arch" ] && [ "$a" != all ] && [ "$(dpkg-query -W -f='${Multi-Arch}' "$pkg")" != same ]; then
    # Installed here for another architecture only: the .deb of the same version, as fetched.
    v=$(dpkg-query -W -f='${Version}' "$pkg")
    deb=${HEADROOM_CACHE:-$HOME/.cache/kube-headroom}/debs/${name}_${v//:/%3a}_$arch.deb
    [ -f "$deb" ] || fail "$name is installed here for $a only, and there is no $deb"
    [ "$(dpkg-deb -f "$deb" Version)" = "$v" ] || fail "$deb is not version $v"
    para=$(sed -e "s/^Architecture: .*/Architecture: $(dpkg-deb -f "$deb" Architecture)/" \
      -e "s/^Installed-Size: .*/Installed-Size: $(dpkg-deb -f "$deb" Installed-Size)/" <<<"$para")
    sums=$work/$name.deb.md5sums
    dpkg-deb -I "$deb" md5sums >"$sums"
    echo "  $name: installed here for $a only; checked against $(basename "$deb")"
  fi
  grep -qx "Architecture: $arch" <<<"$para" || fail "$name is not of $arch here (nor a .deb of it)"
  cmp -s <(echo "$para") "$s" || { diff <(echo "$para") "$s" >&2 || true;
    fail "$DB/$name is not dpkg-query -s $pkg without Conffiles"; }
  grep -qx 'Status: install ok installed' "$s" || fail "$DB/$name: Status"
  extra=$(grep -vxF -f "$sums" "$s.md5sums" || true)
  [ -z "$extra" ] || fail "$DB/$name.md5sums has lines not in $sums: $extra"
  awk '{print substr($0, 35)}' "$s.md5sums" | LC_ALL=C sort -c || fail "$DB/$name.md5sums is not sorted"
  (cd "$r" && md5sum --quiet -c "$DB/$name.md5sums") || fail "md5sum -c $DB/$name.md5sums in the image"
  n=$((n + 1))
done
pass "$n status files are dpkg's paragraphs; their md5sums are dpkg's lines and the image's bytes"

"$IMAGE" --verify-rootfs "$r" --arch "$arch" >/dev/null || fail "image.sh --verify-rootfs refuses the tree it built"
# red FAULT EDIT: on a copy of the tree, EDIT (run in the copy) must make --verify-rootfs fail.
red() {
  local c=$work/copy
  rm -rf "$c"
  cp -a "$r" "$c"
  (cd "$c" && eval "$2")
  if "$IMAGE" --verify-rootfs "$c" --arch "$arch" >"$work/red.out" 2>&1; then
    fail "image.sh --verify-rootfs accepts a tree with $1"
  fi
  echo "  refused, $1: $(grep -m1 'FAIL' "$work/red.out" || tail -1 "$work/red.out")"
}
lib=$(awk '$2 ~ /\.so/ {print $2; exit}' "$r/$DB/libc6.md5sums")
red "libc6's status file removed" "rm $DB/libc6"
red "zlib1g's md5sums removed" "rm $DB/zlib1g.md5sums"
red "a wrong checksum" "awk 'NR == 1 {\$0 = (substr(\$0, 1, 1) == \"0\" ? \"1\" : \"0\") substr(\$0, 2)} 1' \
  $DB/libc6.md5sums >x && mv x $DB/libc6.md5sums"
red "an unlisted file" "echo x >usr/lib/$(ls "$r/usr/lib" | grep linux-gnu | head -1)/libstray.so.1"
red "a listed file removed" "rm $lib"
red "a line of another package's md5sums" "{ head -1 $DB/zlib1g.md5sums; grep -m1 ' usr/bin/dpkg\$' \
  /var/lib/dpkg/info/dpkg.md5sums; tail -n +2 $DB/zlib1g.md5sums; } >x && mv x $DB/zlib1g.md5sums"
red "/etc/os-release removed" "rm etc/os-release"
red "/etc/os-release leading to libc6's copyright" "ln -sfn ../usr/share/doc/libc6/copyright etc/os-release"
red "the image's NOTICE removed" "rm usr/share/doc/kube-headroom/NOTICE"
red "a NOTICE without libc6's line" "sed -i '/^libc6 /d' usr/share/doc/kube-headroom/NOTICE"
red "a file beside NOTICE that no package owns" "echo x >usr/share/doc/kube-headroom/README"
pass "image.sh --verify-rootfs refuses each broken tree"
