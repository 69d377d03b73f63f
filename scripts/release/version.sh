#!/usr/bin/env bash
# version.sh — which version a build is: the one place that reads VERSION and asks git.
#
#   scripts/release/version.sh                     every field, one NAME=VALUE line each (eval-able)
#   scripts/release/version.sh --field NAME        one field's value alone
#   options (each wins over what git says; CMake's HR_VERSION, HR_COMMIT, HR_BUILD_DATE,
#   HR_TREE_STATE and the Dockerfile's build args pass them when there is no .git):
#     --version V          the version (semantic versioning: 1.2.3, 1.2.3-dev.4+g0123456789ab)
#     --commit SHA         the full 40-hex commit, or "unknown"
#     --date RFC3339       the build date, e.g. 2026-12-04T22:16:14Z (UTC)
#     --tree clean|dirty   the state of the work tree
#     -C DIR               the source tree (default: the checkout this script is in)
#
# The fields (every value matches [0-9A-Za-z.+:-]+, so `eval "$(version.sh)"` needs no quoting):
#   version  VERSION (the top-level file, e.g. 0.1.0) on a commit that the tag v<VERSION> points
#            at; on any other commit <VERSION>-dev.N+gSHA12: N commits since the one that last
#            changed VERSION (0 on that commit), SHA12 the commit's first 12 hex digits. Uncommitted
#            changes to tracked files add ".dirty" to the build metadata (+gSHA12.dirty; a tagged
#            tree: +dirty). Without git and without --version: <VERSION>+unknown.
#   commit   the full commit id (40 hex), or "unknown"
#   tree     clean or dirty (unknown without git; with --version alone, dirty when its build
#            metadata says so)
#   date     the build date, RFC 3339 UTC: $SOURCE_DATE_EPOCH when set, else the commit's committer
#            time; never the time of the build, so a build is reproducible. "unknown" without git.
#   epoch    the same date in seconds since 1970 (for SOURCE_DATE_EPOCH), or "unknown"
#   tag      the image tag: the version with '+' as '-' (an OCI tag cannot hold '+')
#
# Exit status: 0; 2 for a bad option or override, 1 when VERSION is missing or malformed.
# Nothing else in the tree asks git for a version: CMake (cmake/hr_version.cmake), the image
# scripts, the release and the tests call this script.
set -euo pipefail

die() { echo "version.sh: $1" >&2; exit "${2:-1}"; }
usage() { die "$* (see the header of $0)" 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
field="" o_version="" o_commit="" o_date="" o_tree=""
while [ $# -gt 0 ]; do
  case "$1" in
    --field) [ $# -ge 2 ] || usage "--field needs a name"; field=$2; shift 2 ;;
    --field=*) field=${1#--field=}; shift ;;
    --version) [ $# -ge 2 ] || usage "--version needs a value"; o_version=$2; shift 2 ;;
    --version=*) o_version=${1#--version=}; shift ;;
    --commit) [ $# -ge 2 ] || usage "--commit needs a value"; o_commit=$2; shift 2 ;;
    --commit=*) o_commit=${1#--commit=}; shift ;;
    --date) [ $# -ge 2 ] || usage "--date needs a value"; o_date=$2; shift 2 ;;
    --date=*) o_date=${1#--date=}; shift ;;
    --tree) [ $# -ge 2 ] || usage "--tree needs a value"; o_tree=$2; shift 2 ;;
    --tree=*) o_tree=${1#--tree=}; shift ;;
    -C) [ $# -ge 2 ] || usage "-C needs a directory"; root=$(cd "$2" && pwd); shift 2 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
case "$field" in "" | version | commit | tree | date | epoch | tag) ;; *) usage "no field '$field'" ;; esac

# Semantic versioning 2.0.0: X.Y.Z, an optional -prerelease and +build metadata.
SEMVER='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
[ -f "$root/VERSION" ] || die "no VERSION file in $root"
base=$(tr -d ' \t\r\n' <"$root/VERSION")
[[ $base =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
  die "$root/VERSION holds '$base', not a release number X.Y.Z"

[ -z "$o_version" ] || [[ $o_version =~ $SEMVER ]] || usage "--version '$o_version' is not a semantic version"
[ -z "$o_commit" ] || [[ $o_commit =~ ^([0-9a-f]{40}|unknown)$ ]] ||
  usage "--commit '$o_commit' is neither 40 hex digits nor 'unknown'"
[ -z "$o_tree" ] || [[ $o_tree =~ ^(clean|dirty|unknown)$ ]] || usage "--tree '$o_tree' is not clean or dirty"
rfc3339() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
o_epoch=""
if [ -n "$o_date" ]; then
  [[ $o_date =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})$ ]] &&
    o_epoch=$(date -u -d "$o_date" +%s 2>/dev/null) || usage "--date '$o_date' is not an RFC 3339 time"
  o_date=$(rfc3339 "$o_epoch")
fi
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  [[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || usage "SOURCE_DATE_EPOCH '$SOURCE_DATE_EPOCH' is not a number of seconds"
fi

# git, only when the source tree is the top of a work tree (a tarball unpacked inside some other
# repository must not take that repository's commit).
git_() { git -C "$root" --no-optional-locks "$@"; }
have_git=0
if command -v git >/dev/null 2>&1 && top=$(git_ rev-parse --show-toplevel 2>/dev/null) &&
  [ "$(cd "$top" && pwd -P)" = "$(cd "$root" && pwd -P)" ] && git_ rev-parse -q --verify HEAD >/dev/null; then
  have_git=1
fi

if [ "$have_git" -eq 1 ]; then
  commit=$(git_ rev-parse HEAD)
  # Tracked files only: a build tree or a scratch file does not make a build dirty.
  if [ -n "$(git_ status --porcelain --untracked-files=no)" ]; then tree=dirty; else tree=clean; fi
  if git_ tag --points-at HEAD | grep -qxF "v$base"; then
    version=$base
    [ "$tree" = clean ] || version=$base+dirty
  else
    since=$(git_ log -1 --format=%H -- VERSION)
    if [ -n "$since" ]; then n=$(git_ rev-list --count "$since..HEAD"); else n=$(git_ rev-list --count HEAD); fi
    version=$base-dev.$n+g${commit:0:12}
    [ "$tree" = clean ] || version=$version.dirty
  fi
  epoch=${SOURCE_DATE_EPOCH:-$(git_ log -1 --format=%ct HEAD)}
else
  commit=unknown tree=unknown version=$base+unknown
  epoch=${SOURCE_DATE_EPOCH:-unknown}
fi

[ -z "$o_commit" ] || commit=$o_commit
if [ -n "$o_version" ]; then
  version=$o_version
  # Without git the override's own build metadata says whether the tree was dirty.
  if [ "$have_git" -eq 0 ] && [ "$commit" != unknown ]; then
    case "$version" in *+*dirty*) tree=dirty ;; *) tree=clean ;; esac
  fi
fi
[ -z "$o_tree" ] || tree=$o_tree
[ -z "$o_epoch" ] || epoch=$o_epoch
if [ "$epoch" = unknown ]; then date=unknown; else date=$(rfc3339 "$epoch"); fi
tag=${version//+/-}

if [ -n "$field" ]; then
  echo "${!field}"
else
  printf 'version=%s\ncommit=%s\ntree=%s\ndate=%s\nepoch=%s\ntag=%s\n' \
    "$version" "$commit" "$tree" "$date" "$epoch" "$tag"
fi
