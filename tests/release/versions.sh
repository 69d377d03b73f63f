#!/usr/bin/env bash
# versions.sh — scripts/release/version.sh gives every commit its own version and image tag.
#
#   tests/release/versions.sh [SOURCE_DIR]     (default: the checkout this script is in)
#
# In a scratch repository of its own (git alone: no build, no network) holding the script under
# test and a VERSION file, commit by commit:
#   - the commit that adds VERSION builds VERSION-dev.0+gSHA12, the next one -dev.1+g<its SHA12>:
#     two commits, two versions and two image tags (no '+' in a tag), the full commit id, the
#     committer time as the date (RFC 3339 UTC) and epoch, tree clean;
#   - a change to a tracked file makes it +gSHA12.dirty (tree dirty); an untracked file does not;
#   - the tag v<VERSION> on HEAD makes it exactly VERSION (+dirty when the tree is), another tag
#     does not;
#   - a new VERSION starts the count again (-dev.0 on the commit that changed it);
#   - SOURCE_DATE_EPOCH wins over the commit's time;
#   - without git: VERSION+unknown, commit unknown; with the overrides, the overrides; a bad
#     override is refused (exit 2); a tree inside another repository is not that repository's.
# Prints PASS/FAIL lines and "N passed, N failed"; exits 1 on any failure.
# label: unit
set -euo pipefail
SRC=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)

pass=0 failed=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; failed=$((failed + 1)); }
eq() { # WHAT GOT WANT
  if [ "$2" = "$3" ]; then ok "$1: $2"; else ko "$1: got '$2', wanted '$3'"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-versions.XXXXXX")
trap 'rm -rf "$work"' EXIT
repo=$work/repo
mkdir -p "$repo/scripts/release"
cp "$SRC/scripts/release/version.sh" "$repo/scripts/release/"
echo 0.1.0 >"$repo/VERSION"
echo one >"$repo/file.txt"

export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$work # no user or system configuration (hooks, signing)
unset SOURCE_DATE_EPOCH GIT_DIR GIT_WORK_TREE
git_() { git -C "$repo" "$@"; }
commit_at() { # EPOCH ARGS...: a commit with that committer time
  local t=$1
  shift
  GIT_COMMITTER_DATE="@$t +0000" GIT_AUTHOR_DATE="@$t +0000" git_ commit -q "$@"
}
git_ init -q -b main
git_ add VERSION file.txt scripts/release/version.sh
commit_at 1790000000 -m first

vs() { "$repo/scripts/release/version.sh" "$@"; }
field() { vs --field "$@"; }

# 1. The commit that adds VERSION.
a=$(git_ rev-parse HEAD)
eval "$(vs)"
eq "first commit: version" "$version" "0.1.0-dev.0+g${a:0:12}"
eq "first commit: commit" "$commit" "$a"
eq "first commit: tree" "$tree" clean
eq "first commit: date" "$date" 2026-09-21T14:13:20Z
eq "first commit: epoch" "$epoch" 1790000000
eq "first commit: tag" "$tag" "0.1.0-dev.0-g${a:0:12}"
v1=$version t1=$tag
eq "--field version" "$(field version)" "$v1"

# 2. An empty commit: another version, another tag.
commit_at 1790000100 --allow-empty -m second
b=$(git_ rev-parse HEAD)
v2=$(field version) t2=$(field tag)
eq "second commit: version" "$v2" "0.1.0-dev.1+g${b:0:12}"
eq "second commit: tag" "$t2" "0.1.0-dev.1-g${b:0:12}"
eq "second commit: date" "$(field date)" 2026-09-21T14:15:00Z
if [ "$v1" != "$v2" ] && [ "$t1" != "$t2" ]; then ok "two commits, two versions ($v1, $v2) and tags"; else ko "two commits share a version or tag: $v1/$t1, $v2/$t2"; fi
case "$t1$t2" in *+*) ko "an image tag holds '+': $t1 $t2" ;; *) ok "image tags hold no '+'" ;; esac

# 3. Dirty: a tracked file changed; an untracked file alone is not.
echo scratch >"$repo/untracked.txt"
eq "untracked file: tree" "$(field tree)" clean
echo two >"$repo/file.txt"
eq "tracked file changed: version" "$(field version)" "0.1.0-dev.1+g${b:0:12}.dirty"
eq "tracked file changed: tree" "$(field tree)" dirty
eq "tracked file changed: tag" "$(field tag)" "0.1.0-dev.1-g${b:0:12}.dirty"
git_ add file.txt
eq "staged change: version" "$(field version)" "0.1.0-dev.1+g${b:0:12}.dirty"
git_ reset -q file.txt
git_ checkout -q -- file.txt
rm "$repo/untracked.txt"
eq "change undone: version" "$(field version)" "$v2"

# 4. Tags: v<VERSION> on HEAD is the release; another tag is not.
git_ tag v0.0.9
eq "tag v0.0.9: version" "$(field version)" "$v2"
git_ tag v0.1.0
eq "tag v0.1.0: version" "$(field version)" 0.1.0
eq "tag v0.1.0: tag" "$(field tag)" 0.1.0
echo three >"$repo/file.txt"
eq "tag v0.1.0, dirty: version" "$(field version)" 0.1.0+dirty
eq "tag v0.1.0, dirty: tag" "$(field tag)" 0.1.0-dirty
git_ checkout -q -- file.txt
commit_at 1790000200 --allow-empty -m third
c=$(git_ rev-parse HEAD)
eq "a commit after the tag: version" "$(field version)" "0.1.0-dev.2+g${c:0:12}"

# 5. A new VERSION starts the count again.
echo 0.2.0 >"$repo/VERSION"
git_ add VERSION
commit_at 1790000300 -m bump
d=$(git_ rev-parse HEAD)
eq "VERSION changed: version" "$(field version)" "0.2.0-dev.0+g${d:0:12}"
commit_at 1790000400 --allow-empty -m after
e=$(git_ rev-parse HEAD)
eq "one commit after: version" "$(field version)" "0.2.0-dev.1+g${e:0:12}"

# 6. SOURCE_DATE_EPOCH.
eq "SOURCE_DATE_EPOCH: date" "$(SOURCE_DATE_EPOCH=1700000000 field date)" 2023-11-14T22:13:20Z
eq "SOURCE_DATE_EPOCH: epoch" "$(SOURCE_DATE_EPOCH=1700000000 field epoch)" 1700000000

# 7. Without git (a tarball, a Docker context without .git), and inside another repository.
for where in "$work/tarball" "$repo/vendor/tarball"; do
  mkdir -p "$where/scripts/release"
  cp "$repo/VERSION" "$where/"
  cp "$repo/scripts/release/version.sh" "$where/scripts/release/"
  eval "$("$where/scripts/release/version.sh")"
  eq "no git ($where): version" "$version" 0.2.0+unknown
  eq "no git ($where): commit/tree/date/tag" "$commit/$tree/$date/$tag" unknown/unknown/unknown/0.2.0-unknown
done
nogit=$work/tarball/scripts/release/version.sh
eval "$("$nogit" --version "0.2.0-dev.1+g${e:0:12}.dirty" --commit "$e" --date 2026-09-21T16:26:40+02:00)"
eq "no git, overrides: version" "$version" "0.2.0-dev.1+g${e:0:12}.dirty"
eq "no git, overrides: commit/tree/date/epoch" "$commit/$tree/$date/$epoch" "$e/dirty/2026-09-21T14:26:40Z/1790000800"
eq "no git, overrides: tag" "$tag" "0.2.0-dev.1-g${e:0:12}.dirty"
eq "no git, clean override: tree" "$("$nogit" --version 0.2.0 --commit "$e" --field tree)" clean
eq "override wins over git" "$(vs --version 9.9.9 --field version)/$(vs --commit "$a" --field commit)" "9.9.9/$a"
for bad in "--version 1.2" "--version 1.2.3\"x" "--commit abc" "--date yesterday" "--tree maybe" "--field nope" "--frob"; do
  rc=0
  # shellcheck disable=SC2086 # each case is a flag and its value
  vs $bad >/dev/null 2>&1 || rc=$?
  eq "refused: $bad" "$rc" 2
done

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
