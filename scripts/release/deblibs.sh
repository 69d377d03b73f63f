# shellcheck shell=bash
# deblibs.sh — sourced, not run: what a dynamically linked binary needs at run time, taken from
# this machine's installed Debian packages, for any architecture dpkg has installed (amd64, or
# arm64 through multiarch: libc6:arm64, libcurl3-gnutls:arm64, ...), and each file checked
# against its package.
#
#   . scripts/release/deblibs.sh
#   deb_interp FILE                 the program interpreter FILE asks for (PT_INTERP), or nothing
#   deb_needed FILE                 FILE's DT_NEEDED names, one a line
#   deb_closure ARCH FILE           "NAME PATH FOUND" for every library FILE needs, recursively:
#                                   NAME as DT_NEEDED spells it, FOUND where ld.so finds it on
#                                   Debian (the first of /lib/<multiarch>, /usr/lib/<multiarch>,
#                                   /lib, /usr/lib that has it, of ARCH's machine type: what an
#                                   image without ld.so.cache loads), PATH the real file (FOUND's
#                                   symlinks resolved)
#   deb_owners ARCH PATH...         "PATH PACKAGE DPKGPATH" for each PATH that an installed package
#                                   of ARCH owns: PACKAGE as dpkg names it (PKG:ARCH for a
#                                   Multi-Arch: same one, else PKG of ARCH or of Architecture: all),
#                                   DPKGPATH the name dpkg knows the file by (/lib/… or /usr/lib/…
#                                   on merged /usr); PATH a real path (no symlink on the way); one
#                                   dpkg-query for all. A PATH no such package owns is left out
#   deb_md5sums PKG                 the md5sums file dpkg keeps for installed PKG
#   deb_sums_line SUMS DPKGPATH     the line of the md5sums file SUMS for DPKGPATH, or nothing
#   deb_verify PKG DPKGPATH FILE    FILE's bytes are the ones PKG installed as DPKGPATH (its md5sums)
#   deb_verify_sums SUMS WHO DPKGPATH FILE   the same against the md5sums file SUMS (WHO names
#                                   its package in the error)
#   deb_version PKG                 PKG's installed version
#   deb_fetch ARCH PKG VERSION CACHE DIR   for a package dpkg has not installed for ARCH (one
#                                   that is not Multi-Arch: same, such as base-files, is
#                                   installed for one architecture only): its .deb of exactly
#                                   VERSION from the mirror (apt-get download, kept in CACHE as
#                                   apt names it), unpacked: DIR/root its files (dpkg-deb -x),
#                                   DIR/DEBIAN its control files (dpkg-deb -e: control, md5sums).
#                                   The .deb must be the one apt's lists describe (their SHA256,
#                                   which apt's signed Release vouches for; a cached .deb of a
#                                   version the lists no longer have is taken on its control
#                                   fields alone) and say Package PKG, Version VERSION,
#                                   Architecture ARCH; a VERSION the mirror does not have dies,
#                                   naming the versions it has
#   deb_fetched_status DIR          the status paragraph dpkg would write for DIR's package once
#                                   installed: its control fields in dpkg's order (Package,
#                                   Essential, Status, Priority, ..., Description, then the
#                                   others as the control has them) with "Status: install ok
#                                   installed"
#   deb_notice_missing NOTICE NAME...   the NAMEs (Debian packages; a :ARCH suffix is dropped)
#                                   that NOTICE's package block does not list, one a line: the
#                                   lines between "--- packages ---" and "--- end packages ---",
#                                   first field the package (the project's NOTICE; Apache-2.0
#                                   section 4(d) has it travel with what ships them)
#   deb_machine ARCH                readelf's "Machine:" for ARCH (amd64, arm64)
#   deb_multiarch ARCH              the multiarch triplet of ARCH
#   deb_check_machine ARCH FILE     FILE is an ELF file of ARCH's machine type (else it dies)
#
# It reads ELF files with readelf (binutils: any architecture), never by running them, so a
# foreign architecture's closure resolves the same way as the machine's own (for amd64 it
# agrees with ldd). Each function dies (one line on stderr, exit 1) on anything it cannot
# resolve or verify; inside $(...) that is the substitution's status, which set -e turns into
# the caller's exit. The one home of this logic: scripts/release/plugin.sh (the plugin archive,
# checked with the interpreter's --list) and scripts/release/image.sh (the runtime image, both
# architectures) use it.

deb_die() {
  echo "deblibs: $*" >&2
  exit 1
}

deb_multiarch() {
  case "$1" in
    amd64) echo x86_64-linux-gnu ;;
    arm64) echo aarch64-linux-gnu ;;
    *) deb_die "no multiarch triplet known for architecture '$1' (amd64, arm64)" ;;
  esac
}

deb_machine() {
  case "$1" in
    amd64) echo "Advanced Micro Devices X86-64" ;;
    arm64) echo "AArch64" ;;
    *) deb_die "no ELF machine known for architecture '$1' (amd64, arm64)" ;;
  esac
}

# elf_machine FILE: readelf's Machine line of FILE, or nothing when FILE is no ELF file.
deb_elf_machine_() {
  LC_ALL=C readelf -hW "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p'
}

deb_check_machine() {
  local want got
  want=$(deb_machine "$1")
  got=$(deb_elf_machine_ "$2")
  [ -n "$got" ] || deb_die "$2 is not an ELF file"
  [ "$got" = "$want" ] || deb_die "$2 is built for '$got', not $1 ('$want')"
}

deb_interp() {
  LC_ALL=C readelf -lW "$1" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]$/\1/p'
}

deb_needed() {
  LC_ALL=C readelf -dW "$1" | sed -n 's/.*(NEEDED) *Shared library: \[\(.*\)\]$/\1/p'
}

deb_closure() {
  local arch=$1 file=$2 ma want name dir found real
  ma=$(deb_multiarch "$arch")
  want=$(deb_machine "$arch")
  declare -A seen=()
  local queue=()
  mapfile -t queue < <(deb_needed "$file")
  while [ "${#queue[@]}" -gt 0 ]; do
    name=${queue[0]}
    queue=("${queue[@]:1}")
    [ -z "${seen[$name]:-}" ] || continue
    found=""
    for dir in "/lib/$ma" "/usr/lib/$ma" /lib /usr/lib; do
      [ -f "$dir/$name" ] || continue
      # ld.so skips a file of another machine type (an amd64 /usr/lib/X beside an arm64 one).
      [ "$(deb_elf_machine_ "$dir/$name")" = "$want" ] || continue
      found=$dir/$name
      break
    done
    [ -n "$found" ] || deb_die "$name (needed by $file or one of its libraries) is not installed for $arch" \
      "(looked in /lib/$ma, /usr/lib/$ma, /lib, /usr/lib)"
    real=$(realpath "$found")
    seen[$name]=$real
    echo "$name $real $found"
    local more
    mapfile -t more < <(deb_needed "$real")
    queue+=("${more[@]}")
  done
}

# deb_spellings_ PATH: the names dpkg may know PATH's file by: a package ships /lib/… or
# /usr/lib/…, and on merged /usr both reach the same file.
deb_spellings_() {
  local p=$1
  echo "$p"
  case "$p" in
    /usr/*) echo "${p#/usr}" ;;
    *) echo "/usr$p" ;;
  esac
}

# deb_pick_ ARCH "PKG, PKG...": of the packages dpkg -S names for one path, the one of ARCH, in
# deb_picked_ (empty when none is). A file shared by every installed instance of a Multi-Arch:
# same package (its copyright file) is listed under each ("libc6:amd64, libc6:arm64"); an
# unqualified name is a package of the native architecture or of Architecture: all, asked of
# dpkg-query once a name (deb_arch_of_, which lasts as long as the shell that calls).
declare -A deb_arch_of_=()
deb_pick_() {
  local arch=$1 c
  local -a cands
  deb_picked_=""
  IFS=', ' read -r -a cands <<<"$2"
  for c in "${cands[@]}"; do
    case "$c" in *:"$arch") deb_picked_=$c; return ;; esac
  done
  for c in "${cands[@]}"; do
    case "$c" in *:*) continue ;; esac
    [ -n "${deb_arch_of_[$c]:-}" ] || deb_arch_of_[$c]=$(dpkg-query -W -f='${Architecture}' "$c" 2>/dev/null || echo none)
    case "${deb_arch_of_[$c]}" in "$arch" | all) deb_picked_=$c; return ;; esac
  done
}

deb_owners() {
  local arch=$1 p s line path
  shift
  declare -A pkg_of=()
  # "pkg[, pkg...]: /path" per owned spelling; a diversion's lines and the misses are skipped.
  while IFS= read -r line; do
    case "$line" in
      "diversion by "*) ;;
      *": /"*)
        path=/${line#*: /}
        deb_pick_ "$arch" "${line%%: /*}"
        pkg_of[$path]=$deb_picked_
        ;;
    esac
  done < <(for p in "$@"; do deb_spellings_ "$p"; done | sort -u | xargs -r dpkg-query -S 2>/dev/null || true)
  for p in "$@"; do
    while IFS= read -r s; do
      if [ -n "${pkg_of[$s]:-}" ]; then
        echo "$p ${pkg_of[$s]} $s"
        break
      fi
    done < <(deb_spellings_ "$p")
  done
}

deb_md5sums() {
  local sums=/var/lib/dpkg/info/$1.md5sums
  [ -f "$sums" ] || sums=/var/lib/dpkg/info/${1%%:*}.md5sums
  [ -f "$sums" ] || deb_die "no md5sums for package $1"
  echo "$sums"
}

# md5sums lines are "MD5  PATH" (32 hex digits, two spaces, the path without its leading /).
deb_sums_line() {
  awk -v f="${2#/}" 'substr($0, 35) == f {print; exit}' "$1"
}

deb_verify_sums() {
  local sums=$1 who=$2 dpath=$3 file=$4 line
  line=$(deb_sums_line "$sums" "$dpath")
  [ -n "$line" ] || deb_die "$who's md5sums do not list $dpath (for $file)"
  [ "${line%% *}" = "$(md5sum <"$file" | cut -d' ' -f1)" ] ||
    deb_die "$file differs from what $who ships as $dpath ($sums)"
}

deb_verify() {
  local sums
  sums=$(deb_md5sums "$1")
  deb_verify_sums "$sums" "$1" "$2" "$3"
}

deb_version() {
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null || deb_die "package $1 is not installed"
}

deb_fetch() {
  local arch=$1 pkg=$2 ver=$3 cache=$4 dir=$5 deb sha tmp got f has
  local -a debs
  # apt's file name (an epoch's colon spelled %3a), and the SHA256 its lists give that version.
  deb=$cache/${pkg}_${ver//:/%3a}_$arch.deb
  sha=$(apt-cache show "$pkg:$arch=$ver" 2>/dev/null | awk '$1 == "SHA256:" {print $2; exit}')
  if [ ! -f "$deb" ]; then
    if [ -z "$sha" ]; then
      has=$(apt-cache madison "$pkg:$arch" 2>/dev/null | awk -F' *[|] *' '{print $2}' | paste -sd' ' -)
      deb_die "$pkg $ver for $arch is not on the mirror (apt's lists have ${has:-no version of $pkg:$arch};" \
        "apt-get update if they are old) nor in $cache"
    fi
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
    chmod 0755 "$tmp" # apt downloads as _apt
    if ! (cd "$tmp" && apt-get download -q "$pkg:$arch=$ver") >"$tmp/log" 2>&1; then
      got=$(grep -E '^(E|W):' "$tmp/log" | tail -1)
      rm -rf "$tmp"
      deb_die "apt-get download $pkg:$arch=$ver failed: ${got:-no message}"
    fi
    debs=("$tmp"/*.deb)
    [ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || { rm -rf "$tmp"; deb_die "apt-get download $pkg:$arch=$ver wrote no .deb"; }
    mv -f "${debs[0]}" "$deb"
    rm -rf "$tmp"
  fi
  if [ -n "$sha" ]; then
    got=$(sha256sum <"$deb" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || deb_die "$deb has sha256 $got, not $sha (apt-cache show $pkg:$arch=$ver): remove it to fetch it again"
  fi
  for f in "Package $pkg" "Version $ver" "Architecture $arch"; do
    got=$(dpkg-deb -f "$deb" "${f%% *}") || deb_die "$deb is not a .deb dpkg-deb can read"
    [ "$got" = "${f#* }" ] || deb_die "$deb says ${f%% *} '$got', not '${f#* }'"
  done
  rm -rf "$dir"
  mkdir -p "$dir/root"
  dpkg-deb -x "$deb" "$dir/root" || deb_die "dpkg-deb -x $deb failed"
  dpkg-deb -e "$deb" "$dir/DEBIAN" || deb_die "dpkg-deb -e $deb failed"
  [ -f "$dir/DEBIAN/md5sums" ] || deb_die "$deb has no md5sums"
}

deb_notice_missing() {
  local notice=$1 listed n
  shift
  [ -f "$notice" ] || deb_die "no NOTICE at $notice"
  listed=$(awk '/^--- packages ---$/ {on = 1; seen = 1; next} /^--- end packages ---$/ {on = 0; ended = 1}
    on && NF {print $1} END {exit !(seen && ended)}' "$notice") ||
    deb_die "$notice has no package block ('--- packages ---' to '--- end packages ---')"
  [ -n "$listed" ] || deb_die "$notice's package block is empty"
  for n in "$@"; do
    grep -qxF -- "${n%%:*}" <<<"$listed" || echo "${n%%:*}"
  done | LC_ALL=C sort -u
}

deb_fetched_status() {
  awk -v order="Package Essential Protected Status Priority Section Installed-Size Origin Maintainer
      Bugs Architecture Multi-Arch Source Version Config-Version Replaces Provides Depends
      Pre-Depends Recommends Suggests Breaks Conflicts Enhances Conffiles Description
      Triggers-Pending Triggers-Awaited" '
    /^$/ {next}
    /^[ \t]/ {text[name] = text[name] "\n" $0; next}
    {name = substr($0, 1, index($0, ":") - 1); if (!(name in text)) seq[++n] = name; text[name] = $0}
    END {
      seq[++n] = "Status"
      text["Status"] = "Status: install ok installed"
      k = split(order, o, /[ \n]+/)
      for (i = 1; i <= k; i++) {known[o[i]] = 1; if (o[i] in text) print text[o[i]]}
      for (i = 1; i <= n; i++) if (!(seq[i] in known)) print text[seq[i]]
    }' "$1/DEBIAN/control"
}
