# deblibs.sh — sourced, not run: what a dynamically linked binary needs at run time, taken from
# this machine's installed Debian packages, for any architecture dpkg has installed (amd64, or
# arm64 through multiarch: libc6:arm64, libcurl3-gnutls:arm64, ...).
#
#   . scripts/release/deblibs.sh
#   deb_interp FILE                 the program interpreter FILE asks for (PT_INTERP), or nothing
#   deb_needed FILE                 FILE's DT_NEEDED names, one a line
#   deb_closure ARCH FILE           "NAME PATH" for every library FILE needs, recursively: NAME
#                                   as DT_NEEDED spells it, PATH the real file (symlinks resolved)
#                                   found where ld.so looks on Debian (/lib/<multiarch>,
#                                   /usr/lib/<multiarch>, /lib, /usr/lib), of ARCH's machine type
#   deb_owners PATH...              "PATH PACKAGE DPKGPATH" for each PATH an installed package
#                                   owns (DPKGPATH: the name dpkg knows it by; one dpkg-query)
#   deb_verify PKG DPKGPATH FILE    FILE's bytes are the ones PKG installed (its md5sums)
#   deb_version PKG                 PKG's installed version
#   deb_machine ARCH                readelf's "Machine:" for ARCH (amd64, arm64)
#   deb_multiarch ARCH              the multiarch triplet of ARCH
#   deb_check_machine ARCH FILE     FILE is an ELF file of ARCH's machine type (else it dies)
#
# It reads ELF files with readelf (binutils: any architecture), never by running them, so a
# foreign architecture's closure resolves the same way as the machine's own (for amd64 it
# agrees with ldd; scripts/release/plugin.sh checks the result with the interpreter's --list).
# Each function dies (one line on stderr, exit 1) on anything it cannot resolve. Written to be
# shared: scripts/release/plugin.sh uses it; scripts/release/image.sh resolves with ldd and has
# its own copy of the owner and md5sums lookups (owners, verify), which these can replace.

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
    echo "$name $real"
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

deb_owners() {
  local p s line pkgs path
  declare -A pkg_of=()
  # "pkg[, pkg...]: /path" per owned spelling; diversions and misses say something else.
  while IFS= read -r line; do
    case "$line" in
      *": /"*)
        pkgs=${line%%: /*}
        path=/${line#*: /}
        pkg_of[$path]=${pkgs%%,*}
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

deb_verify() {
  local pkg=$1 dpath=$2 file=$3 sums want
  sums=/var/lib/dpkg/info/$pkg.md5sums
  [ -f "$sums" ] || sums=/var/lib/dpkg/info/${pkg%%:*}.md5sums
  [ -f "$sums" ] || deb_die "no md5sums for package $pkg"
  want=$(awk -v f="${dpath#/}" '$2 == f {print $1; exit}' "$sums")
  [ -n "$want" ] || deb_die "$pkg's md5sums do not list $dpath (for $file)"
  [ "$want" = "$(md5sum <"$file" | cut -d' ' -f1)" ] ||
    deb_die "$file differs from what $pkg installed (dpkg --verify ${pkg})"
}

deb_version() {
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null || deb_die "package $1 is not installed"
}
