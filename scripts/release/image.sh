#!/usr/bin/env bash
# image.sh — build kube-headroom's runtime image with no container registry, then run it.
#
#   scripts/release/image.sh                 build the image archive and check it in a container
#   scripts/release/image.sh --print         build the archive (no check), print its path alone
#   scripts/release/image.sh --rootfs DIR    only assemble the root filesystem in DIR (the Dockerfile's
#                                    build stage uses this)
#   scripts/release/image.sh --verify-rootfs DIR   only check DIR's package database against its
#                                    files (what --rootfs checks at its end); fails when it is wrong
#   scripts/release/image.sh --arch arm64 --qemu-rootfs DIR   only run the emulated check (below)
#                                    on the arm64 root filesystem DIR (root)
#   options: --arch amd64|arm64      the image's architecture (default: this machine's)
#            --bin PATH              the headroom binary (default $HEADROOM_BIN, else
#                                    build/release/headroom, for another architecture
#                                    build/arm64/headroom; built with CMake if missing)
#
# The image is ghcr.io/kube-headroom/headroom:<tag>, <tag> being the version the binary reports
# (`headroom version -o json`) with '+' spelled '-' (an OCI tag cannot hold '+'; the name the
# chart and deploy/install.yaml use). Its config carries the labels org.opencontainers.image.
# version, revision and created (the binary's version, commit and buildDate), source, url,
# documentation (the GitHub project), licenses (Apache-2.0), title and description; its created
# time is the buildDate, and so is every timestamp in the archive (SOURCE_DATE_EPOCH semantics:
# oci-archive.sh), so two runs over the same binary write byte-identical archives.
# Its root filesystem is assembled here, daemonless:
#   - /usr/bin/headroom (stripped) and /usr/bin/kubectl-headroom -> headroom;
#   - exactly the shared libraries the binary needs, plus its program interpreter (PT_INTERP):
#     the NEEDED entries, recursively, each where the image's ld.so finds it (/lib/TRIPLET,
#     /usr/lib/TRIPLET, /lib, /usr/lib; the image has no ld.so.cache) and of the image's machine
#     type, read with readelf for either architecture (scripts/release/deblibs.sh: deb_interp,
#     deb_closure; for amd64 the same set as ldd), each copied from this machine's installed
#     Debian package of the image's architecture (multiarch for arm64) with its symlink chain
#     (the merged-/usr links /lib, /lib64 included). Copying is equivalent to `apt-get download`
#     + `dpkg-deb -x` here because every file is checked against its package's md5sums
#     (deb_owners: dpkg -S names the package of the image's architecture; deb_verify: its
#     /var/lib/dpkg/info/PKG.md5sums the bytes), and better for a test: it is the very library
#     the binary was built and tested with, and it needs no network. The packages' copyright
#     files come along;
#   - base-files' /usr/lib/os-release, the link /etc/os-release -> ../usr/lib/os-release, and
#     base-files' copyright, as Debian has them: scanners (Syft, Trivy, Grype) call the packages
#     pkg:deb/debian/NAME@VERSION and match vulnerabilities only when the image says it is
#     Debian (ID=debian). base-files is this machine's, of this machine's version, when it is
#     installed for --arch; it is not Multi-Arch: same, so for the other architecture it is the
#     .deb of that same version from Debian's mirror (apt-get download, cached in
#     ${HEADROOM_CACHE:-~/.cache/kube-headroom}/debs; deblibs.sh deb_fetch), never made up: each
#     file is checked against the .deb's md5sums, and its status paragraph is the .deb's control
#     fields with Status "install ok installed". When the mirror no longer has that version, it
#     fails and says so (upgrade this machine's base-files to one the mirror has);
#   - the package database scanners read (Syft, Trivy, Grype; distroless' layout), for exactly the
#     Debian packages whose files the image carries: /var/lib/dpkg/status.d/NAME, the package's
#     status paragraph as `dpkg-query -s` prints it (Status "install ok installed"; without
#     Conffiles, which name files the image does not have), and NAME.md5sums, the lines of the
#     package's own md5sums (its spelling of each path, sorted) for the files the image has of it.
#     NAME is the package name without :ARCH (one image, one architecture). Every regular file
#     but the six this script writes (OWN_FILES: headroom, passwd, group, nsswitch.conf, the
#     project's LICENSE and NOTICE), which must be there, must be listed by exactly one package
#     with its bytes, every listed file must be there, /etc/os-release must lead to base-files'
#     os-release saying ID=debian, and the image's NOTICE must list every package of status.d in
#     its package block (verify_db below);
#   - the project's LICENSE and NOTICE (the repository's top-level files; Apache-2.0 section
#     4(d)) in /usr/share/doc/kube-headroom/;
#   - /etc/passwd and /etc/group naming root and nonroot (65532), /etc/nsswitch.conf, /tmp.
# No shell, no package manager, nothing else. The image runs as 65532:65532 and needs no
# writable path (a read-only root filesystem works). The libraries, the interpreter, the packages
# and the config's architecture (os linux) are --arch's; the binary's ELF machine must be too.
# scripts/release/oci-archive.sh packs it (one uncompressed layer, OCI layout + docker-archive in one
# tar) into ${HEADROOM_CACHE:-~/.cache/kube-headroom}/images/headroom-<tag>-linux-<arch>-<digest>.tar,
# <digest> the start of the manifest's digest (the newest three builds of each architecture are
# kept).
#
# The check starts a standalone containerd from Debian's package (its own root, state and
# socket under a temporary directory, no CRI plugin, no TCP listener), imports the archive the
# way a cluster node does (ctr -n k8s.io images import), and runs the image:
#   - `headroom version` in a container with a read-only root and no network (a fresh network
#     namespace: lo alone), as the image's own user; the output must equal the binary's;
#   - a static probe (tests/cluster/images/probe/probe.c, bind-mounted) as the image's user: uid and gid
#     65532, no effective capability, / not writable, no shell or package manager, lo alone;
#   - the test images of tests/cluster/images/build.sh (pause, burner) import and run the same way.
# It prints the image's size (the layer uncompressed and gzip-compressed, as a registry would
# store it) and fails when the uncompressed size exceeds 30 MB. Everything it started (containers,
# containerd, its mounts and the cgroups named kube-headroom-image-PID) is removed at the end.
#
# An image of another architecture cannot run in this machine's containerd (and no binfmt
# handler is ever registered), so its check is the root filesystem under user-mode emulation,
# confined to it: in a private mount namespace where this machine's own libraries of that
# architecture (/usr/lib/TRIPLET, the cross sysroot /usr/TRIPLET) are hidden under empty
# read-only tmpfs, so nothing but the image's files can be loaded:
#   - `qemu-aarch64 -L ROOTFS ROOTFS/usr/bin/headroom version` must print what the given binary
#     prints (run by qemu on this machine's libraries), with "headroom <version>" and
#     "platform linux/<arch>";
#   - `... plan -f -` of tests/golden/cluster.json must print tests/golden/cluster.plan.json
#     (-o json) and tests/golden/cluster.flat.txt (the table) byte for byte;
# and the size is printed as for the native image.
set -euo pipefail
umask 022 # the modes of what assemble makes do not depend on the caller's umask
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/release/containerd.sh
. "$ROOT/scripts/release/containerd.sh"
# shellcheck source=scripts/release/deblibs.sh
. "$ROOT/scripts/release/deblibs.sh"
CACHE=${HEADROOM_CACHE:-$HOME/.cache/kube-headroom}
IMAGES=$CACHE/images
MAX_MB=30
UID_GID=65532:65532

die() { echo "image.sh: $*" >&2; exit 1; }
say() { echo "image: $*"; }

NATIVE=$(dpkg --print-architecture)
mode=check rootfs_only="" bin=${HEADROOM_BIN:-} ARCH=$NATIVE
while [ $# -gt 0 ]; do
  case "$1" in
    --print) mode=print; shift ;;
    --rootfs) mode=rootfs rootfs_only=${2:?--rootfs needs a directory}; shift 2 ;;
    --verify-rootfs) mode=verify rootfs_only=${2:?--verify-rootfs needs a directory}; shift 2 ;;
    --qemu-rootfs) mode=qemu rootfs_only=${2:?--qemu-rootfs needs a directory}; shift 2 ;;
    --arch) ARCH=${2:?--arch needs amd64 or arm64}; shift 2 ;;
    --bin) bin=${2:?--bin needs a path}; shift 2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
done

# The image's Debian architecture (ARCH): the libraries, the interpreter and the packages are this
# one's; TRIPLET its multiarch directory, QEMU its user-mode emulator when it is not this machine's.
case "$ARCH" in
  amd64) QEMU=qemu-x86_64 ;;
  arm64) QEMU=qemu-aarch64 ;;
  *) die "--arch: amd64 or arm64, not '$ARCH'" ;;
esac
TRIPLET=$(deb_multiarch "$ARCH")
FOREIGN=0
[ "$ARCH" = "$NATIVE" ] || FOREIGN=1
[ "$mode" != qemu ] || [ "$FOREIGN" = 1 ] || die "--qemu-rootfs is the check of another architecture than $NATIVE"

if [ "$mode" = verify ] || [ "$mode" = qemu ]; then
  : # no binary needed
elif [ -z "$bin" ] && [ "$FOREIGN" = 0 ]; then
  bin=$ROOT/build/release/headroom
  if [ ! -x "$bin" ]; then
    echo "image.sh: building $bin" >&2
    cmake -S "$ROOT" -B "$ROOT/build/release" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      >/dev/null
    ninja -C "$ROOT/build/release" headroom >/dev/null
  fi
elif [ -z "$bin" ]; then
  bin=$ROOT/build/$ARCH/headroom
  if [ ! -x "$bin" ]; then
    echo "image.sh: building $bin" >&2
    cmake -S "$ROOT" -B "$ROOT/build/$ARCH" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/$TRIPLET.cmake" -DHR_TESTS=OFF >/dev/null
    ninja -C "$ROOT/build/$ARCH" headroom >/dev/null
  fi
fi
case "$mode" in
  verify | qemu) ;;
  *)
    [ -x "$bin" ] || die "no headroom binary at $bin"
    deb_check_machine "$ARCH" "$bin"
    ;;
esac

PROJECT=https://github.com/kube-headroom/kube-headroom

# hr ARGS...: run the image's headroom: the binary itself, or for another architecture the
# image's copy under user-mode qemu on the image's root filesystem ($work/rootfs; files it lacks
# are taken from this machine: the confined runs are emulated_check's).
hr() {
  if [ "$FOREIGN" = 0 ]; then
    "$bin" "$@"
  else
    "$QEMU" -L "$work/rootfs" "$work/rootfs/usr/bin/headroom" "$@"
  fi
}

# build_info: "VERSION COMMIT DATE", what the binary says of itself: `headroom version -o json`
# (keys version, commit, buildDate). A binary older than -o json prints text alone: its first
# line "headroom VERSION", then "commit COMMIT" and, when it has one, "built DATE"; DATE is
# "unknown" when it says none. This fallback is the one place to drop once every binary
# image.sh may be given has -o json.
build_info() {
  local j
  if j=$(hr version -o json 2>/dev/null) &&
    jq -e '(.version | type) == "string" and (.commit | type) == "string"
           and (.buildDate | type) == "string"' <<<"$j" >/dev/null 2>&1; then
    jq -r '"\(.version) \(.commit) \(.buildDate)"' <<<"$j"
  else
    hr version | awk 'NR == 1 && $1 == "headroom" {v = $2} $1 == "commit" {c = $2}
      $1 == "built" {d = $2} END {if (v != "") print v, (c == "" ? "unknown" : c), (d == "" ? "unknown" : d)}'
  fi
}

# ---- the root filesystem ------------------------------------------------------------------

# replicate R PATH: make PATH exist under R as it does here: every symlink on the way is
# recreated verbatim (and followed), the final file copied with its mode.
replicate() {
  local r=$1 path=$2 cur="" rest comp target
  rest=${path#/}
  while [ -n "$rest" ]; do
    comp=${rest%%/*}
    if [ "$comp" = "$rest" ]; then rest=""; else rest=${rest#*/}; fi
    cur=$cur/$comp
    if [ -L "$cur" ]; then
      target=$(readlink "$cur")
      [ -L "$r$cur" ] || { mkdir -p "$r$(dirname "$cur")"; ln -s "$target" "$r$cur"; }
      case "$target" in /*) ;; *) target=$(dirname "$cur")/$target ;; esac
      # The part of cur before this link has no link in it (it was walked), so lexical
      # normalisation of the target is exact.
      replicate "$r" "$(realpath -m -s "$target${rest:+/$rest}")"
      return
    elif [ -d "$cur" ]; then
      mkdir -p "$r$cur"
    elif [ -f "$cur" ]; then
      [ -e "$r$cur" ] || cp -p "$cur" "$r$cur"
    else
      die "$cur (on the way to $path) does not exist"
    fi
  done
}

# The files this script writes itself; every other regular file of the image is a package's.
DOC=/usr/share/doc/kube-headroom
OWN_FILES=(/usr/bin/headroom /etc/passwd /etc/group /etc/nsswitch.conf "$DOC/LICENSE" "$DOC/NOTICE")
DB=/var/lib/dpkg/status.d

# image_files R: the regular files of R that must come from packages (absolute, sorted).
image_files() {
  (cd "$1" && find . -path ".$DB" -prune -o -type f -print) | sed 's|^\.||' |
    awk 'NR == FNR {own[$0] = 1; next} !($0 in own)' <(printf '%s\n' "${OWN_FILES[@]}") - |
    LC_ALL=C sort
}

# inroot R PATH: PATH resolved inside R as the image sees it (symlinks followed, an absolute
# target taken from R's root); printed when it ends at a regular file, else status 1.
inroot() {
  local r=$1 rest=${2#/} cur="" comp t n=0
  while [ -n "$rest" ]; do
    comp=${rest%%/*}
    if [ "$comp" = "$rest" ]; then rest=""; else rest=${rest#*/}; fi
    case "$comp" in
      "" | .) continue ;;
      ..) cur=${cur%/*}; continue ;;
    esac
    if [ -L "$r$cur/$comp" ]; then
      n=$((n + 1))
      [ "$n" -le 40 ] || return 1
      t=$(readlink "$r$cur/$comp")
      case "$t" in
        /*) cur="" rest=${t#/}${rest:+/$rest} ;;
        *) rest=$t${rest:+/$rest} ;;
      esac
    elif [ -e "$r$cur/$comp" ]; then
      cur=$cur/$comp
    else
      return 1
    fi
  done
  [ -f "$r$cur" ] || return 1
  echo "$cur"
}

# Packages whose files come from a .deb rather than from this machine's dpkg (os_release):
# FROM_DEB[PKG:ARCH] is the directory deb_fetch unpacked it in.
declare -A FROM_DEB=()

# pkg_sums PKG: the md5sums of PKG, installed or fetched; pkg_status PKG: its status paragraph
# (an installed one's as dpkg-query -s prints it, without Conffiles).
pkg_sums() {
  if [ -n "${FROM_DEB[$1]:-}" ]; then echo "${FROM_DEB[$1]}/DEBIAN/md5sums"; else deb_md5sums "$1"; fi
}
pkg_status() {
  if [ -n "${FROM_DEB[$1]:-}" ]; then
    deb_fetched_status "${FROM_DEB[$1]}"
  else
    dpkg-query -s "$1" | awk '/^[^ ]/ {skip = /^Conffiles:/} !skip'
  fi
}

# os_release R: base-files' os-release, the link /etc/os-release and base-files' copyright into R
# (the header): from this machine's base-files when it is installed for ARCH, else from the
# ARCH .deb of the same version (base-files is installed here for one architecture only), each
# file checked against its package's md5sums.
os_release() {
  local r=$1 v tree="" sums who f link dir
  v=$(deb_version base-files)
  if [ "$(dpkg-query -W -f='${Architecture}' base-files)" = "$ARCH" ]; then
    sums=$(deb_md5sums base-files) who="base-files $v (installed)"
  else
    dir=$work/deb-base-files
    (deb_fetch "$ARCH" base-files "$v" "$CACHE/debs" "$dir") ||
      die "no base-files $v .deb for $ARCH (above): the $ARCH image carries this machine's version of" \
        "base-files ($v, $NATIVE); when the mirror no longer has it, upgrade this machine's base-files" \
        "to a version the mirror has for both (apt-get install base-files=VERSION; apt-cache policy" \
        "base-files:$ARCH lists them)"
    FROM_DEB[base-files:$ARCH]=$dir
    tree=$dir/root sums=$dir/DEBIAN/md5sums who="base-files $v ($ARCH .deb)"
  fi
  for f in /usr/lib/os-release /usr/share/doc/base-files/copyright; do
    [ -f "$tree$f" ] && [ ! -L "$tree$f" ] || die "$who has no file $f"
    deb_verify_sums "$sums" "$who" "$f" "$tree$f"
    mkdir -p "$r$(dirname "$f")"
    cp -p "$tree$f" "$r$f"
  done
  link=$(readlink "$tree/etc/os-release") || die "$who's /etc/os-release is not a symlink"
  [ "$link" = ../usr/lib/os-release ] || die "$who's /etc/os-release leads to '$link', not ../usr/lib/os-release"
  ln -s "$link" "$r/etc/os-release"
  grep -qx 'ID=debian' "$r/usr/lib/os-release" || die "$who's os-release does not say ID=debian"
}

# dpkg_db R: write R's package database (the header): one status paragraph and one md5sums per
# package whose files R carries. Each file's bytes are checked against its package's md5sums
# again here, the copyright files included, and the name dpkg knows it by is made to lead to it
# in R (/lib/… through the merged-/usr link), so a scanner finds every listed path.
dpkg_db() {
  local r=$1 f pkg dpath sums line name owned key
  local -a files
  declare -A pkg_of_name=() lines=()
  mapfile -t files < <(image_files "$r")
  [ "${#files[@]}" -gt 0 ] || die "no package file in $r"
  owned=$(deb_owners "$ARCH" "${files[@]}")
  for f in "${files[@]}"; do
    if ! read -r _ pkg dpath < <(awk -v l="$f" '$1 == l' <<<"$owned"); then
      # Not an installed ARCH package's: a fetched .deb's, when its md5sums list it.
      pkg=""
      for key in "${!FROM_DEB[@]}"; do
        [ -z "$(deb_sums_line "${FROM_DEB[$key]}/DEBIAN/md5sums" "$f")" ] || { pkg=$key dpath=$f; break; }
      done
      [ -n "$pkg" ] || die "$f (in the image) belongs to no installed $ARCH Debian package"
    fi
    sums=$(pkg_sums "$pkg")
    deb_verify_sums "$sums" "$pkg" "$dpath" "$r$f"
    line=$(deb_sums_line "$sums" "$dpath")
    [ "$dpath" = "$f" ] || replicate "$r" "$dpath"
    name=${pkg%%:*}
    [ "${pkg_of_name[$name]:-$pkg}" = "$pkg" ] || die "two packages named $name: ${pkg_of_name[$name]} and $pkg"
    pkg_of_name[$name]=$pkg
    lines[$name]+=$line$'\n'
  done
  mkdir -p "$r$DB"
  for name in "${!pkg_of_name[@]}"; do
    pkg=${pkg_of_name[$name]}
    pkg_status "$pkg" >"$r$DB/$name"
    grep -qx 'Status: install ok installed' "$r$DB/$name" || die "$pkg is not 'install ok installed' here"
    printf '%s' "${lines[$name]}" | awk '{print substr($0, 35) "\t" $0}' | LC_ALL=C sort | cut -f2- \
      >"$r$DB/$name.md5sums"
    chmod 0644 "$r$DB/$name" "$r$DB/$name.md5sums"
  done
}

# verify_db R: R's package database against R itself, from nothing but R: each status file has
# its md5sums and the reverse, names its own package, is "install ok installed" and of the
# image's architecture (or all); each md5sums is sorted, every path it lists leads to a regular
# file of R with those bytes, no file is listed twice, every regular file R carries but
# OWN_FILES is listed, each of OWN_FILES is a regular file of R, /etc/os-release leads to
# base-files' os-release, which says ID=debian, and R's NOTICE lists every package of status.d
# in its package block. Prints every problem, then fails if there was one.
verify_db() {
  local r=$1 s name sum path real f missing n=0
  local -a fails=() names=()
  declare -A claimed=()
  [ -d "$r$DB" ] || die "$r has no package database ($DB)"
  field() { awk -v k="$1:" '$1 == k {sub(/^[^:]*: ?/, ""); print; exit}' "$2"; }
  for s in "$r$DB"/*; do
    name=${s##*/}
    case "$name" in
      *.md5sums)
        [ -f "${s%.md5sums}" ] || fails+=("$DB/$name: no status file ${name%.md5sums}")
        continue ;;
    esac
    n=$((n + 1))
    names+=("$name")
    [ "$(field Package "$s")" = "$name" ] || fails+=("$DB/$name: Package is '$(field Package "$s")'")
    [ "$(field Status "$s")" = "install ok installed" ] ||
      fails+=("$DB/$name: Status is '$(field Status "$s")'")
    case "$(field Architecture "$s")" in
      "$ARCH" | all) ;;
      *) fails+=("$DB/$name: Architecture is '$(field Architecture "$s")', the image's is $ARCH") ;;
    esac
    [ -n "$(field Version "$s")" ] || fails+=("$DB/$name: no Version")
    if [ ! -s "$s.md5sums" ]; then
      fails+=("$DB/$name: no (or an empty) $name.md5sums")
      continue
    fi
    awk '{print substr($0, 35)}' "$s.md5sums" | LC_ALL=C sort -c 2>/dev/null ||
      fails+=("$DB/$name.md5sums: not sorted by path")
    while read -r sum path; do
      if ! real=$(inroot "$r" "$path"); then
        fails+=("$DB/$name.md5sums: /$path is not a file of the image")
        continue
      fi
      [ "$sum" = "$(md5sum <"$r$real" | cut -d' ' -f1)" ] ||
        fails+=("$DB/$name.md5sums: /$path ($real) does not have the listed bytes")
      [ -z "${claimed[$real]:-}" ] || fails+=("$real is listed by both ${claimed[$real]} and $name")
      claimed[$real]=$name
    done <"$s.md5sums"
  done
  [ "$n" -gt 0 ] || fails+=("$DB: no package")
  # The image says it is Debian, in the file scanners read for the distro (the header).
  if ! real=$(inroot "$r" /etc/os-release); then
    fails+=("/etc/os-release leads to no file: scanners would not know the image is Debian")
  elif [ "${claimed[$real]:-}" != base-files ]; then
    fails+=("/etc/os-release leads to $real, which is ${claimed[$real]:-no package}'s, not base-files'")
  elif ! grep -qx 'ID=debian' "$r$real"; then
    fails+=("/etc/os-release ($real) does not say ID=debian")
  fi
  while IFS= read -r f; do
    [ -n "${claimed[$f]:-}" ] || fails+=("$f is in the image but in no package's md5sums")
  done < <(image_files "$r")
  # The files no package owns: the allow-list, each there; NOTICE names what the image carries.
  for f in "${OWN_FILES[@]}"; do
    [ -f "$r$f" ] && [ ! -L "$r$f" ] || fails+=("$f is not a file of the image (this script writes it)")
  done
  if [ -f "$r$DOC/NOTICE" ] && [ "$n" -gt 0 ]; then
    if ! missing=$(deb_notice_missing "$r$DOC/NOTICE" "${names[@]}" 2>&1); then
      fails+=("$missing")
    elif [ -n "$missing" ]; then
      fails+=("$DOC/NOTICE does not list $(echo "$missing" | paste -sd' ' -) in its package block (the repository's NOTICE)")
    fi
  fi
  if [ "${#fails[@]}" -gt 0 ]; then
    printf 'image.sh: FAIL: %s\n' "${fails[@]}" >&2
    die "the package database of $r does not describe its files"
  fi
}

assemble() {
  local r=$1 pkg dpath doc strip=strip
  mkdir -p "$r/usr/bin" "$r/etc" "$r/tmp"
  chmod 1777 "$r/tmp"
  [ "$FOREIGN" = 0 ] || strip=$TRIPLET-strip
  "$strip" --strip-unneeded -o "$r/usr/bin/headroom" "$bin"
  chmod 0755 "$r/usr/bin/headroom"
  ln -s headroom "$r/usr/bin/kubectl-headroom"

  # The program interpreter and the closure (deblibs.sh), each file of an installed ARCH package
  # with the bytes it installed; copied with the links on the way (the name ld.so looks up).
  local interp closure owned p
  local -a paths reals
  interp=$(deb_interp "$bin")
  [ -n "$interp" ] || die "$bin has no program interpreter (PT_INTERP): not a dynamic executable"
  [ -e "$interp" ] || die "the program interpreter $interp is not installed (libc6:$ARCH)"
  deb_check_machine "$ARCH" "$(realpath "$interp")"
  closure=$(deb_closure "$ARCH" "$bin")
  mapfile -t paths < <({ echo "$interp"; awk '{print $3}' <<<"$closure"; } | LC_ALL=C sort -u)
  mapfile -t reals < <(for p in "${paths[@]}"; do realpath "$p"; done | LC_ALL=C sort -u)
  owned=$(deb_owners "$ARCH" "${reals[@]}")
  declare -A pkgs=()
  for p in "${reals[@]}"; do
    read -r _ pkg dpath < <(awk -v l="$p" '$1 == l' <<<"$owned") ||
      die "$p belongs to no installed $ARCH Debian package"
    deb_verify "$pkg" "$dpath" "$p"
    pkgs[$pkg]=1
  done
  for p in "${paths[@]}"; do replicate "$r" "$p"; done
  for pkg in "${!pkgs[@]}"; do
    doc=/usr/share/doc/${pkg%%:*}/copyright
    if [ -e "$doc" ]; then replicate "$r" "$doc"; fi
  done
  os_release "$r"
  # The project's licence and its NOTICE travel with the binary (Apache-2.0 section 4(d)).
  for f in LICENSE NOTICE; do
    [ -f "$ROOT/$f" ] || die "$ROOT/$f does not exist: the image must carry the project's $f"
    mkdir -p "$r$DOC"
    cp "$ROOT/$f" "$r$DOC/$f"
    chmod 0644 "$r$DOC/$f"
  done

  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' \
    >"$r/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$r/etc/nsswitch.conf"
  chmod 0644 "$r/etc/passwd" "$r/etc/group" "$r/etc/nsswitch.conf"

  dpkg_db "$r"
  verify_db "$r"

  # What must not be there, checked on the tree itself (the container check looks again); the
  # directory /var/lib/dpkg holds the package database, not dpkg.
  local bad
  bad=$(cd "$r" && find . ! -type d \( -name sh -o -name bash -o -name dash -o -name busybox \
    -o -name 'apt*' -o -name 'dpkg*' \) -print)
  [ -z "$bad" ] || die "the root filesystem carries a shell or package manager: $bad"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-image.XXXXXX")
ctd_pid=""
NS=k8s.io
CG=kube-headroom-image-$$
sock=$work/containerd.sock
ctr_() { ctr --address "$sock" -n "$NS" "$@"; }

stop_engine() {
  [ -n "$ctd_pid" ] || return 0
  local c
  for c in $(ctr_ containers list -q 2>/dev/null); do
    ctr_ tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      ctr_ tasks delete "$c" >/dev/null 2>&1 && break
      ctr_ tasks list -q 2>/dev/null | grep -qx "$c" || break
      sleep 0.2
    done
    ctr_ containers delete "$c" >/dev/null 2>&1 || true
  done
  kill "$ctd_pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$ctd_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$ctd_pid" 2>/dev/null || true
  wait "$ctd_pid" 2>/dev/null || true
  ctd_pid=""
  # Mounts under the state directory (snapshots of a container that was not deleted), deepest
  # first, then the cgroups this run named.
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/self/mounts | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" || true; done
  # Looked for at any depth, so a cgroup made elsewhere than meant is found (and said) too.
  local d ok=0
  while read -r d; do
    if [ "$(dirname "$(dirname "$d")")" != /sys/fs/cgroup ]; then
      echo "image.sh: cgroup $d was not made where meant (/sys/fs/cgroup/*/$CG)" >&2
      ok=1
    fi
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null || { echo "image.sh: could not remove cgroup $d" >&2; ok=1; }
  done < <(find /sys/fs/cgroup -type d -name "$CG" 2>/dev/null)
  return "$ok"
}

cleanup() {
  local rc=$?
  stop_engine || { [ "$rc" -ne 0 ] || rc=1; }
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# confined CMD...: CMD in a private mount namespace where this machine's own files of ARCH are
# hidden under empty read-only tmpfs mounts (/usr/lib/TRIPLET, /lib/TRIPLET, the cross sysroot
# /usr/TRIPLET), so that `qemu -L ROOTFS` — which falls back to this machine's path for a file
# ROOTFS lacks — can load nothing but ROOTFS's. The namespace ends with CMD; nothing else changes.
confined() {
  local d
  declare -A masks=()
  for d in "/usr/lib/$TRIPLET" "/lib/$TRIPLET" "/usr/$TRIPLET"; do
    [ -d "$d" ] && masks[$(realpath "$d")]=1
  done
  unshare --mount --propagation private -- bash -c 'n=$1; shift
    for d in "${@:1:n}"; do mount -t tmpfs -o ro,size=4k,mode=0755 hr-image-mask "$d" || exit 125; done
    shift "$n"; exec "$@"' confined "${#masks[@]}" "${!masks[@]}" "$@"
}

# emulated_check R REFBIN: the check of a root filesystem R of another architecture (the header):
# R's headroom under user-mode qemu, confined to R's files, prints what REFBIN prints (qemu on
# this machine's libraries) for `version`, and the golden plan of tests/golden/cluster.json.
emulated_check() {
  local r=$1 ref=$2 want got g out
  command -v "$QEMU" >/dev/null || die "$QEMU not found (scripts/setup.sh installs qemu-user)"
  [ "$(id -u)" -eq 0 ] || die "the emulated check needs root (a private mount namespace); --print builds without it"
  want=$("$QEMU" "$ref" version) || die "$QEMU $ref version failed"
  got=$(confined "$QEMU" -L "$r" "$r/usr/bin/headroom" version 2>"$work/qemu.err") ||
    { cat "$work/qemu.err" >&2; die "headroom version failed under $QEMU on the image's files alone"; }
  [ "$got" = "$want" ] || die "headroom version under $QEMU printed '$got', not '$want'"
  grep -qx "platform linux/$ARCH" <<<"$got" || die "headroom version does not say platform linux/$ARCH: '$got'"
  head -1 <<<"$got" | grep -q '^headroom [0-9]' || die "headroom version's first line is not 'headroom <version>'"
  say "headroom version under $QEMU, confined to the image's files: $(head -1 <<<"$got"), platform linux/$ARCH"
  for g in "cluster.plan.json -o json" "cluster.flat.txt"; do
    # shellcheck disable=SC2086 # $g: the golden file and the output flags
    set -- $g
    out=$(confined "$QEMU" -L "$r" "$r/usr/bin/headroom" plan -f - "${@:2}" \
      <"$ROOT/tests/golden/cluster.json" 2>"$work/qemu.err") ||
      { cat "$work/qemu.err" >&2; die "headroom plan -f - ${*:2} failed under $QEMU on the image's files alone"; }
    if [ "$out" != "$(cat "$ROOT/tests/golden/$1")" ]; then
      diff <(echo "$out") "$ROOT/tests/golden/$1" | head -20 >&2 || true
      die "headroom plan -f tests/golden/cluster.json ${*:2} under $QEMU is not tests/golden/$1"
    fi
  done
  say "headroom plan -f tests/golden/cluster.json (table, -o json) under $QEMU: the golden output"
}

# report_size ARCHIVE: the layer's size, uncompressed and gzip-compressed; fails over MAX_MB.
report_size() {
  local a=$1 layer raw gz
  layer=$(tar -xOf "$a" manifest.json | jq -r '.[0].Layers[0]')
  raw=$(tar -xOf "$a" "$layer" | wc -c)
  # The compressed size takes seconds to measure: kept beside the archive, which never changes.
  [ -s "$a.gzsize" ] || tar -xOf "$a" "$layer" | gzip -6 -n | wc -c >"$a.gzsize"
  gz=$(cat "$a.gzsize")
  mb() { awk -v b="$1" 'BEGIN {printf "%.1f MB", b / 1000000}'; }
  say "$REF ($ARCH): $(mb "$raw") uncompressed, $(mb "$gz") gzip-compressed (goal: at most $MAX_MB MB)"
  say "archive: $a"
  [ "$raw" -le $((MAX_MB * 1000000)) ] || die "the image is $(mb "$raw"), over the $MAX_MB MB goal"
}

if [ "$mode" = qemu ]; then
  [ -x "$rootfs_only/usr/bin/headroom" ] || die "--qemu-rootfs: $rootfs_only/usr/bin/headroom is not there"
  r=$(realpath "$rootfs_only")
  emulated_check "$r" "$r/usr/bin/headroom"
  exit 0
fi

if [ "$mode" = verify ]; then
  [ -d "$rootfs_only" ] || die "--verify-rootfs: $rootfs_only is not a directory"
  verify_db "$(realpath "$rootfs_only")"
  say "the package database of $rootfs_only describes its files"
  exit 0
fi

if [ "$mode" = rootfs ]; then
  mkdir -p "$rootfs_only"
  assemble "$(realpath "$rootfs_only")"
  exit 0
fi

mkdir "$work/rootfs"
assemble "$work/rootfs"

read -r version commit built < <(build_info) || true
[ -n "${version:-}" ] || die "$bin version printed neither -o json nor 'headroom <version>'"
tag=${version//+/-}
REF=ghcr.io/kube-headroom/headroom:$tag
# The image's time is the binary's build date (itself SOURCE_DATE_EPOCH or the commit's time,
# never the time of a build); a binary that knows none: SOURCE_DATE_EPOCH, else 1970.
if [[ $built =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]; then
  created=$built
else
  created=$(date -u -d "@${SOURCE_DATE_EPOCH:-0}" +%Y-%m-%dT%H:%M:%SZ)
fi
docs=$PROJECT/tree/main/docs
[[ $commit =~ ^[0-9a-f]{40}$ ]] && docs=$PROJECT/tree/$commit/docs
labels=(
  org.opencontainers.image.title=kube-headroom
  "org.opencontainers.image.description=Node-aware CPU limits for Kubernetes pods, resized in place (pods/resize) and set at admission."
  org.opencontainers.image.version="$version"
  org.opencontainers.image.revision="$commit"
  org.opencontainers.image.created="$created"
  org.opencontainers.image.source=$PROJECT
  org.opencontainers.image.url=$PROJECT
  org.opencontainers.image.documentation="$docs"
  org.opencontainers.image.licenses=Apache-2.0
)
label_args=()
for l in "${labels[@]}"; do label_args+=(--label "$l"); done
"$ROOT/scripts/release/oci-archive.sh" --rootfs "$work/rootfs" --ref "$REF" --out "$work/image.tar" \
  --arch "$ARCH" --created "$created" "${label_args[@]}" \
  --user "$UID_GID" --entrypoint '["/usr/bin/headroom"]' --cmd '["run","--leader-elect"]'
digest=$(tar -xOf "$work/image.tar" index.json | jq -r '.manifests[0].digest')
short=${digest#sha256:}
archive=$IMAGES/headroom-$tag-linux-$ARCH-${short:0:12}.tar
mkdir -p "$IMAGES"
if [ ! -f "$archive" ]; then
  cp "$work/image.tar" "$archive.tmp.$$"
  mv -f "$archive.tmp.$$" "$archive"
fi
touch "$archive"
# Keep the newest three builds of this architecture (each commit stamps its binary, so each gets
# an archive); archives named before the architecture was in the name go.
{
  ls -1t "$IMAGES"/headroom-*-linux-"$ARCH"-*.tar 2>/dev/null | tail -n +4 || true
  ls -1 "$IMAGES"/headroom-*.tar 2>/dev/null | grep -v -- '-linux-[a-z0-9]*-[0-9a-f]\{12\}\.tar$' || true
} | while read -r old; do rm -f "$old" "$old.gzsize"; done

if [ "$mode" = print ]; then
  echo "$archive"
  exit 0
fi

if [ "$FOREIGN" = 1 ]; then
  emulated_check "$work/rootfs" "$bin"
  report_size "$archive"
  exit 0
fi

# ---- the check in a container -------------------------------------------------------------

for t in containerd ctr runc; do
  command -v "$t" >/dev/null || die "$t not found (scripts/setup.sh installs docker.io, which brings it)"
done
[ "$(id -u)" -eq 0 ] || die "the container check needs root (containerd and runc); --print builds without it"

containerd_config "$work" >"$work/containerd.toml"
containerd --config "$work/containerd.toml" >"$work/containerd.log" 2>&1 &
ctd_pid=$!
for _ in $(seq 100); do
  ctr_ version >/dev/null 2>&1 && break
  kill -0 "$ctd_pid" 2>/dev/null || { tail -20 "$work/containerd.log" >&2; die "containerd exited"; }
  sleep 0.1
done
ctr_ version >/dev/null 2>&1 || { tail -20 "$work/containerd.log" >&2; die "containerd did not answer on $sock"; }

# run ID IMAGE ARGS...: run a container to completion (read-only root, no network, the image's
# user, a cgroup of this run's own name); its output on stdout. The cgroup path is absolute: runc
# puts a relative one under its own cgroup, which here is the machine's service cgroup in the
# memory hierarchy (/process_api/…), never to be touched.
run() {
  local id=$1 image=$2
  shift 2
  ctr_ run --rm --read-only --cgroup "/$CG/$id" "${extra[@]}" "$image" "$id" "$@" </dev/null
}

ctr_ images import "$archive" >/dev/null || die "ctr -n $NS images import $archive failed"
named=$(ctr_ images list -q | grep -Fx "$REF" || true)
[ -n "$named" ] || die "the import did not name the image $REF"

extra=()
want=$("$bin" version)
got=$(run version "$REF" /usr/bin/headroom version) || die "headroom version failed in the container"
[ "$got" = "$want" ] || die "headroom version in the container printed '$got', not '$want'"
say "headroom version in a container (read-only root, no network, user $UID_GID): $(head -1 <<<"$got")"

gcc -std=c17 -O2 -Wall -Wextra -Werror -static -s -o "$work/probe" "$ROOT/tests/cluster/images/probe/probe.c" ||
  die "compiling tests/cluster/images/probe/probe.c failed"
extra=(--mount "type=bind,src=$work/probe,dst=/kube-headroom-probe,options=rbind:ro")
probe=$(run probe "$REF" /kube-headroom-probe) || die "the probe failed in the container"
extra=()
fails=()
expect() { grep -qx -- "$1" <<<"$probe" || fails+=("$2 (probe: $(grep -E "^${1%%=*}=" <<<"$probe" || echo none))"); }
expect "uid=65532 euid=65532 gid=65532 egid=65532" "runs as 65532:65532"
expect "capeff=0000000000000000" "no effective capability"
expect "root_writable=no (Read-only file system)" "the root filesystem is read-only"
expect "interfaces=lo" "no network but loopback"
for p in /bin/sh /usr/bin/sh /bin/bash /usr/bin/bash /bin/dash /bin/busybox /usr/bin/apt \
  /usr/bin/apt-get /usr/bin/dpkg /usr/bin/perl; do
  expect "$p=absent" "no $p"
done
if [ "${#fails[@]}" -gt 0 ]; then
  printf 'image.sh: FAIL: %s\n' "${fails[@]}" >&2
  die "the image is not what it promises (probe output above)"
fi
say "probe in the container: uid/gid 65532, no capabilities, read-only /, no shell or package manager, lo alone"

for t in pause burner; do
  a=$("$ROOT/tests/cluster/images/build.sh" --print "$t")
  r=$("$ROOT/tests/cluster/images/build.sh" --ref "$t")
  ctr_ images import "$a" >/dev/null || die "ctr -n $NS images import $a failed"
  run "$t" "$r" "/$t" -v >/dev/null || die "$r does not run"
done
say "test images pause and burner import and run"

report_size "$archive"
say "load it: ctr -n k8s.io images import $archive   (or docker load -i, kind load image-archive)"
