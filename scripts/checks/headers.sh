#!/bin/sh
# headers.sh — every function a header under src/ declares is defined
# in the .c file of the same basename beside it (design: "headers declare
# only what their own file defines"), so a reader who opens foo.h knows the
# code is in foo.c.
#
# Declarations are function prototypes (ctags kind p); static inline
# functions defined in a header are definitions, not declarations, and are
# fine. A header with no .c of its own (types, macros, inline helpers only)
# must then declare no function at all.
#
# Usage: scripts/checks/headers.sh [SRCDIR]   (default: src)
# Prints one line per violation, "header: name (defined in FILE|not defined)",
# and exits 1 when there is any. Needs universal-ctags (apt-get install
# universal-ctags).
set -eu
cd "$(dirname "$0")/../.."
src=${1:-src}

if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
    echo "check-headers: universal-ctags is required (apt-get install universal-ctags)" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every function definition in src/: "name file".
find "$src" -name '*.[ch]' -print | sort >"$tmp/files"
ctags -x --language-force=C --c-kinds=f --_xformat='%N %F' -L "$tmp/files" |
    sort -u >"$tmp/defs"

bad=0
for h in $(find "$src" -name '*.h' -print | sort); do
    c=${h%.h}.c
    ctags -x --language-force=C --c-kinds=p --_xformat='%N' "$h" | sort -u >"$tmp/decl"
    while read -r name; do
        [ -n "$name" ] || continue
        if [ -f "$c" ] && awk -v n="$name" -v f="$c" '$1 == n && $2 == f { ok = 1 } END { exit !ok }' "$tmp/defs"; then
            continue
        fi
        where=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/defs" | tr '\n' ' ' | sed 's/ $//')
        if [ -n "$where" ]; then
            echo "$h: $name (defined in $where)"
        else
            echo "$h: $name (not defined)"
        fi
        bad=1
    done <"$tmp/decl"
done
exit $bad
