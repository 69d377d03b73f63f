#!/usr/bin/env bash
# plugin.sh — the kubectl plugin's release archive for one architecture: headroom with every
# shared library it needs, so that it runs on a machine that has none of them.
#
#   scripts/release/plugin.sh --arch amd64|arm64 --bin PATH --out DIR [--launcher PATH] [--tag TAG]
#   scripts/release/plugin.sh --arch amd64|arm64 --build DIR --out DIR [--tag TAG]
#
#   --arch      the architecture of the binary (its libraries are taken from this machine's Debian
#               packages of that architecture: multiarch for arm64, scripts/setup.sh)
#   --bin       the headroom binary (a build tree's, e.g. build/release/headroom)
#   --build     a build tree: --bin DIR/headroom --launcher DIR/kubectl-headroom-launcher
#   --out       where the archive goes (created if missing)
#   --launcher  the static launcher (default: kubectl-headroom-launcher beside --bin, the CMake
#               target of src/launch/launcher.c in the same build tree)
#   --tag       the version in the archive's name (default: what `headroom version` prints, '+'
#               spelled '-': the tag of scripts/release/version.sh)
#
# It writes DIR/kubectl-headroom-<tag>-linux-<arch>.tar.gz and prints its path (alone, on
# stdout). Inside, regular files and directories only (krew's tar reader takes nothing else):
#   kubectl-headroom                          the launcher (static): runs lib/<ld.so> --library-path
#                                             lib --argv0 kubectl-headroom libexec/headroom ARGS
#   libexec/headroom                          the binary, stripped
#   lib/<interpreter>, lib/<NEEDED>...        the program interpreter and every library the binary
#                                             needs, recursively (scripts/release/deblibs.sh), libc
#                                             included, each under the name ld.so looks it up by,
#                                             copied from its installed Debian package and checked
#                                             against the package's md5sums
#   share/doc/<package>/copyright             the licence of each Debian package shipped
#   share/kube-headroom/libraries             lib/<name> <package> <version>, one a line
#   share/kube-headroom/completions/          headroom.bash, headroom.zsh, headroom.fish,
#                                             kubectl_complete-headroom (headroom completion ...)
#   LICENSE, NOTICE                           the project's (the repository's top-level files;
#                                             Apache-2.0 section 4(d)); NOTICE's package block
#                                             must list every Debian package shipped (the
#                                             libraries' and the copyright files' owners)
# Before packing, the assembled tree is run through its own interpreter (under qemu-aarch64 for
# arm64): `version` must answer, and --list must resolve every library inside lib/.
#
# The archive is reproducible: entries sorted by name, mtimes SOURCE_DATE_EPOCH (default: the
# commit's time, git log -1 --format=%ct), owner 0:0 numeric, modes 0755/0644, ustar, gzip -n.
# tests/release/plugin.sh builds it twice, compares, and runs it in an empty root.
# scripts/release/krew-manifest.sh writes the krew manifest for the archives.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/release/deblibs.sh
. "$ROOT/scripts/release/deblibs.sh"

die() { echo "plugin.sh: $*" >&2; exit 1; }

arch="" bin="" out="" launcher="" tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch=${2:?--arch needs amd64 or arm64}; shift 2 ;;
    --bin) bin=${2:?--bin needs a path}; shift 2 ;;
    --build) bin=${2:?--build needs a directory}/headroom launcher=$2/kubectl-headroom-launcher; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --launcher) launcher=${2:?--launcher needs a path}; shift 2 ;;
    --tag) tag=${2:?--tag needs a version}; shift 2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
done
[ -n "$arch" ] && [ -n "$bin" ] && [ -n "$out" ] || die "--arch, --bin (or --build) and --out are required (see the header of $0)"
case "$arch" in
  amd64) cross="" run=() ;;
  arm64) cross=aarch64-linux-gnu- run=(qemu-aarch64) ;;
  *) die "--arch $arch: amd64 or arm64" ;;
esac
[ -n "$launcher" ] || launcher=$(dirname "$bin")/kubectl-headroom-launcher
[ -f "$bin" ] || die "no headroom binary at $bin"
[ -f "$launcher" ] || die "no launcher at $launcher (ninja kubectl-headroom-launcher in the build tree of $bin)"
for t in readelf "${cross}strip" tar gzip dpkg-query md5sum realpath "${run[@]}"; do
  command -v "$t" >/dev/null || die "$t not found (scripts/setup.sh installs it)"
done

# The binary and the launcher are of the architecture asked for; the launcher is static and
# names the interpreter the binary asks for.
deb_check_machine "$arch" "$bin"
deb_check_machine "$arch" "$launcher"
interp=$(deb_interp "$bin")
[ -n "$interp" ] || die "$bin has no program interpreter (not a dynamically linked executable)"
[ -z "$(deb_interp "$launcher")" ] && ! LC_ALL=C readelf -dW "$launcher" | grep -q NEEDED ||
  die "$launcher is not static (it must run on a machine without our libraries)"
iname=$(basename "$interp")
grep -qaF "$iname" "$launcher" || die "$launcher does not run $iname, the interpreter $bin asks for"

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null) ||
    die "no SOURCE_DATE_EPOCH and no commit to take the time of ($ROOT is not a git work tree)"
fi
export SOURCE_DATE_EPOCH
[[ "$SOURCE_DATE_EPOCH" =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH '$SOURCE_DATE_EPOCH' is not a number of seconds"

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-plugin.XXXXXX")
trap 'rm -rf "$work"' EXIT
st=$work/stage
mkdir -p "$st/lib" "$st/libexec" "$st/share/kube-headroom/completions"

"${cross}strip" --strip-all -o "$st/kubectl-headroom" "$launcher"
"${cross}strip" --strip-all -o "$st/libexec/headroom" "$bin"

for f in LICENSE NOTICE; do
  [ -f "$ROOT/$f" ] || die "$ROOT/$f does not exist: the archive must carry the project's $f"
done

# ---- the interpreter and the libraries, from their packages --------------------------------
# "name real-path [found]": the interpreter under its own name, then the closure (which names the
# interpreter again through libc's DT_NEEDED: the first one wins).
pairs=$(
  echo "$iname $(realpath "$interp")"
  deb_closure "$arch" "$bin"
)
declare -A shipped=() pkgs=()
mapfile -t reals < <(awk '{print $2}' <<<"$pairs" | sort -u)
owned=$(deb_owners "$arch" "${reals[@]}")
libs_list=""
while read -r name real _; do
  [ -z "${shipped[$name]:-}" ] || continue
  read -r _ pkg dpath < <(awk -v r="$real" '$1 == r' <<<"$owned") || die "$real ($name) belongs to no installed Debian package"
  deb_verify "$pkg" "$dpath" "$real"
  cp "$real" "$st/lib/$name"
  shipped[$name]=$pkg
  pkgs[$pkg]=1
  libs_list+="lib/$name ${pkg%%:*} $(deb_version "$pkg")"$'\n'
done <<<"$pairs"
printf '%s' "$libs_list" | LC_ALL=C sort >"$st/share/kube-headroom/libraries"

# The licences: each package's copyright file (a doc directory may be a link to another
# package's of the same source: the file it reaches is checked against its own owner).
docs=()
for pkg in "${!pkgs[@]}"; do
  doc=/usr/share/doc/${pkg%%:*}/copyright
  [ -f "$doc" ] || die "$pkg has no $doc"
  docs+=("$(realpath "$doc")")
done
owned=$(deb_owners "$arch" "${docs[@]}")
owners=()
for pkg in "${!pkgs[@]}"; do
  real=$(realpath "/usr/share/doc/${pkg%%:*}/copyright")
  read -r _ owner dpath < <(awk -v r="$real" '$1 == r' <<<"$owned") || die "$real belongs to no installed package"
  deb_verify "$owner" "$dpath" "$real"
  owners+=("$owner")
  mkdir -p "$st/share/doc/${pkg%%:*}"
  cp "$real" "$st/share/doc/${pkg%%:*}/copyright"
done

# The project's licence and NOTICE; NOTICE names every package the archive has files of.
cp "$ROOT/LICENSE" "$st/LICENSE"
cp "$ROOT/NOTICE" "$st/NOTICE"
missing=$(deb_notice_missing "$st/NOTICE" "${!pkgs[@]}" "${owners[@]}")
[ -z "$missing" ] || die "NOTICE does not list $(paste -sd' ' - <<<"$missing") in its package block (add each with its licence)"

# ---- the assembled tree runs on its own libraries -------------------------------------------
# What the launcher will exec, minus the launcher (for arm64 qemu-user runs it: an exec inside
# qemu would need binfmt). env -i: nothing of this machine's environment (LD_LIBRARY_PATH) helps.
hr() {
  env -i "${run[@]}" "$st/lib/$iname" --library-path "$st/lib" --argv0 kubectl-headroom \
    "$st/libexec/headroom" "$@"
}
listing=$(env -i "${run[@]}" "$st/lib/$iname" --library-path "$st/lib" --list "$st/libexec/headroom") ||
  die "the interpreter cannot load libexec/headroom on lib/: $listing"
outside=$(awk -v lib="$st/lib/" '$2 == "=>" && index($3, lib) != 1 {print}' <<<"$listing")
[ -z "$outside" ] || die "libraries resolved outside lib/: $outside"
version_out=$(hr version) || die "the assembled libexec/headroom does not run: $version_out"
version=$(awk 'NR == 1 && $1 == "headroom" {print $2}' <<<"$version_out")
[ -n "$version" ] || die "headroom version printed '$version_out', not 'headroom <version>'"
[ -n "$tag" ] || tag=${version//+/-}
[[ "$tag" =~ ^[0-9A-Za-z.+_-]+$ ]] || die "--tag '$tag' is not a file-name-safe version"

c=$st/share/kube-headroom/completions
for sh in bash zsh fish; do hr completion "$sh" >"$c/headroom.$sh" || die "headroom completion $sh failed"; done
hr completion kubectl >"$c/kubectl_complete-headroom" || die "headroom completion kubectl failed"

# ---- the archive ----------------------------------------------------------------------------
find "$st" -type d -exec chmod 0755 {} +
find "$st" -type f -exec chmod 0644 {} +
chmod 0755 "$st/kubectl-headroom" "$st/libexec/headroom" "$st/lib/$iname" "$c/kubectl_complete-headroom"
bad=$(find "$st" ! -type f ! -type d)
[ -z "$bad" ] || die "only files and directories may go in a krew archive: $bad"

name=kubectl-headroom-$tag-linux-$arch.tar.gz
mkdir -p "$out"
mapfile -t top < <(cd "$st" && LC_ALL=C ls -A | LC_ALL=C sort)
(cd "$st" && LC_ALL=C tar --create --format=ustar --sort=name --mtime="@$SOURCE_DATE_EPOCH" \
  --owner=0 --group=0 --numeric-owner --no-acls --no-xattrs --no-selinux -f - "${top[@]}") |
  gzip -9 -n >"$out/$name.tmp.$$"
mv -f "$out/$name.tmp.$$" "$out/$name"
bytes=$(stat -c %s "$out/$name")
echo "plugin.sh: $name: ${#shipped[@]} files in lib/ from ${#pkgs[@]} packages, $bytes bytes," \
  "sha256 $(sha256sum "$out/$name" | cut -d' ' -f1)" >&2
echo "$out/$name"
