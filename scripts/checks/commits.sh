#!/usr/bin/env bash
# commits.sh — every commit subject since the tree's reorganisation is at
# most 72 characters, and no commit (merges aside) has an empty subject.
#
# Why: `git log --oneline`, shortlogs, blame views and review tools show the
# subject alone, cut at about 72 columns; what follows the cut is lost, and
# an empty subject says nothing at all. Details go in the body.
#
# Usage: scripts/checks/commits.sh   (checks the repository it lives in)
# Prints one line per offending commit, "HASH: N characters: SUBJECT" or
# "HASH: empty subject", and exits 1 when there is any; 0 otherwise.
#
# In a shallow clone, or any history without the base, it checks the commits
# git has that HEAD reaches (at most $LIMIT) and says so.
set -eu
cd "$(dirname "$0")/../.."
export LC_ALL=C.UTF-8 # ${#s} counts characters, not bytes

# The base: commits from 01d151a on are checked (01d151a, "Move test/ under
# tests/, split bench/ and scripts/ by kind", is the first commit of the
# reorganisation; the history before it stays as it was written).
FIRST=01d151a
MAX=72
LIMIT=200
# Commits already shared with a subject over MAX: history is never rewritten here (no rebase, no
# amend), so each is named by its full hash, with its length, and skipped. Add none knowingly.
KNOWN_LONG=(
    f574918f9344d998c7540c9ce2cd3de986edf12d # 73: "webhook certificates: existing (Cluster)Issuer, ..."
    76a0c19649b392e8a52566d69c17d1ad7af86ec4 # 76: "plan: a flat table by default, -o jsonpath= and ..."
    d79954457c072e807064cbb9ffc5a80d036302a8 # 77: "e2e_kubectl_output: kubectl's recorded -o ..."
    4153294b04b23af486b2b7daf22db9441cc79441 # 73: "version, preflight: -o json|yaml|jsonpath=|..."
    ecfd94cdd0e78812279108d42a0542ca66ee5c5d # 74: "plan's flat table: the glossary check, ..."
    1245d8e9d633e7ee937a5228531ca63b482e55ec # 74: "Pod-level limits: manage a pod through its ..."
)

if first=$(git rev-parse -q --verify "$FIRST^{commit}") &&
    git merge-base --is-ancestor "$first" HEAD; then
    if git rev-parse -q --verify "$first^" >/dev/null; then
        range=("$first^..HEAD") # everything from $FIRST on
        what="the commits since $FIRST^"
    else # a shallow clone cut at $FIRST itself: all it has is from $FIRST on
        range=(HEAD)
        what="the commits from $FIRST (its parent is not in this shallow clone)"
    fi
else
    range=(--max-count="$LIMIT" HEAD)
    what="the last $LIMIT commits git has"
    echo "check-commits: $FIRST is not in this history (a shallow clone?): checking $what" >&2
fi

bad=0
n=0
# One line per commit: short hash, parents, subject (separated by the unit
# separator, which, unlike a tab, read does not merge when parents are empty).
while IFS=$'\x1f' read -r hash parents subject; do
    n=$((n + 1))
    case " ${KNOWN_LONG[*]} " in *" $(git rev-parse "$hash") "*) continue ;; esac
    if [ -z "$subject" ] && [ "${parents}" = "${parents% *}" ]; then
        echo "$hash: empty subject"
        bad=1
    elif [ "${#subject}" -gt "$MAX" ]; then
        echo "$hash: ${#subject} characters (at most $MAX): $subject"
        bad=1
    fi
done < <(git log --format='%h%x1f%p%x1f%s' "${range[@]}")

if [ "$bad" -ne 0 ]; then
    echo "check-commits: subjects over $MAX characters or empty in $what (see above)" >&2
    exit 1
fi
echo "check-commits: $n subjects in $what, none over $MAX characters or empty"
