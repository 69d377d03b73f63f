#!/usr/bin/env bash
# names.sh — one name per thing, and no pointer a reader cannot follow:
#   1. no tracked file cites the tracker ("issue 18", "done-means 3"): a
#      statement points at the design section or the test that holds it;
#   2. no hr_* type of src/ is defined twice (two structs once were both
#      hr_kconfig): `typedef struct|union|enum hr_X {` names one type.
# Silent and exit 0 when the tree agrees; the offending lines and exit 1
# when not.
#
#   scripts/checks/names.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

fail=0

# 1. Tracker pointers, in every tracked file but this one (it names them).
if hits=$(git grep -nE 'issue [0-9]+|done-means' -- . ':!scripts/checks/names.sh'); then
  echo "check-names: cite the design section or the test, not the tracker:" >&2
  echo "$hits" >&2
  fail=1
fi

# 2. Types defined twice: every definition with a body, grouped by name.
defs=$(git grep -nE '^typedef (struct|union|enum) hr_[A-Za-z0-9_]+ *\{' -- 'src/*.[ch]' || true)
dups=$(sed -E 's/^[^:]+:[0-9]+:typedef [a-z]+ (hr_[A-Za-z0-9_]+).*/\1/' <<<"$defs" | sort | uniq -d)
for name in $dups; do
  echo "check-names: $name is defined more than once:" >&2
  grep -E "^[^:]+:[0-9]+:typedef [a-z]+ $name *\{" <<<"$defs" >&2
  fail=1
done

exit "$fail"
