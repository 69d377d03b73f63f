#!/usr/bin/env bash
# format.sh — every C file in src/, tests/ and bench/ is formatted as
# .clang-format says. Exits 1 and names the files (with clang-format's own
# report of the first differences) when one is not.
#
#   scripts/checks/format.sh          check
#   scripts/checks/format.sh --fix    reformat the files in place
#
# The file list comes from git, so build trees and untracked scratch files
# are never looked at. CLANG_FORMAT overrides the binary (clang-format-14:
# another version formats some constructs differently).
set -euo pipefail
cd "$(dirname "$0")/../.."

CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$CLANG_FORMAT" >/dev/null ||
  { echo "check-format: $CLANG_FORMAT not found (scripts/setup.sh installs it)" >&2; exit 2; }

mapfile -t files < <(git ls-files -- 'src/*.[ch]' 'tests/*.[ch]' 'bench/*.[ch]')
[ "${#files[@]}" -gt 0 ] || { echo "check-format: no C files found" >&2; exit 2; }

if [ "${1:-}" = "--fix" ]; then
  "$CLANG_FORMAT" -i --style=file "${files[@]}"
  exit 0
fi

report=$(mktemp)
trap 'rm -f "$report"' EXIT
# One process for all files: clang-format reports every file, then fails.
if ! "$CLANG_FORMAT" --dry-run --Werror --style=file "${files[@]}" 2>"$report"; then
  mapfile -t bad < <(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
                     "$report" | sort -u)
  head -30 "$report" >&2
  echo "check-format: ${#bad[@]} file(s) not formatted as .clang-format says:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "check-format: scripts/checks/format.sh --fix reformats them" >&2
  exit 1
fi
