#!/usr/bin/env bash
# size.sh — no source file in src/ is longer than 1,000 lines.
#
# A file that long is several ideas in one room (cache.c was 1,950 lines
# before it was split by concern); the limit makes the split happen when a
# file grows, not years later. Exits 1 and names each file over the limit.
set -euo pipefail
cd "$(dirname "$0")/../.."
max=${HR_MAX_LINES:-1000}
over=0
while IFS= read -r f; do
  n=$(wc -l <"$f")
  if [ "$n" -gt "$max" ]; then
    echo "check-size: $f has $n lines (limit $max): split it by concern"
    over=1
  fi
done < <(git ls-files 'src/*.c' 'src/*.h')
exit "$over"
