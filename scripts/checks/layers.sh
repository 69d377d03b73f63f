#!/usr/bin/env bash
# layers.sh — dependencies point one way: every `#include "x/..."` in
# src/ and every hr_* link line in CMakeLists.txt is allowed by the layer
# table in docs/architecture.md (between <!-- layers:begin --> and
# <!-- layers:end -->), and that table has no cycle. Silent and exit 0 when
# the tree agrees; one line per violation and exit 1 when not.
#
#   scripts/checks/layers.sh
#
# The unit of a file is the longest row of the table that is a prefix of its
# path under src/ (a sub-layer row such as `kube/transport`, else its layer:
# the first folder). An include "t/..." from unit U is allowed when t is in U
# (or in a layer U belongs to), or when a table entry of U is t's layer,
# sub-layer or the header itself.
set -euo pipefail
cd "$(dirname "$0")/../.."

doc=docs/architecture.md
fail=0
violation() { echo "check-layers: $*" >&2; fail=1; }

[ -f "$doc" ] || { echo "check-layers: $doc not found" >&2; exit 2; }
table=$(sed -n '/<!-- layers:begin/,/<!-- layers:end/p' "$doc")
[ -n "$table" ] || { echo "check-layers: no layer table (<!-- layers:begin --> ... <!-- layers:end -->) in $doc" >&2; exit 2; }

# ---- the table: unit -> allowed entries
declare -A allow=()
units=()
while IFS= read -r row; do
  case "$row" in '|'*) ;; *) continue ;; esac
  row=${row//\`/}
  IFS='|' read -r _ unit deps _ <<<"$row"
  unit=$(echo "$unit" | tr -d ' ')
  case "$unit" in layer | ---* | '') continue ;; esac
  list=""
  for e in $(echo "$deps" | tr ',' ' '); do
    case "$e" in — | - | '(nothing)') ;; *) list="$list $e" ;; esac
  done
  [ -z "${allow[$unit]+x}" ] || violation "$doc: layer $unit has two rows"
  allow[$unit]=${list# }
  units+=("$unit")
done <<<"$table"
[ "${#units[@]}" -gt 0 ] || { echo "check-layers: the layer table in $doc has no rows" >&2; exit 2; }

# unit_of PATH (relative to src/): the longest unit that is a prefix of it,
# else its first component.
unit_of() {
  local p=$1 best="" u
  for u in "${units[@]}"; do
    if [[ "$p" == "$u" || "$p" == "$u"/* ]] && [ ${#u} -gt ${#best} ]; then best=$u; fi
  done
  [ -n "$best" ] && { echo "$best"; return; }
  echo "${p%%/*}"
}

# Every entry names a unit, a layer of one, or a header that exists.
for u in "${units[@]}"; do
  [ -d "src/$u" ] || violation "$doc: layer table row $u: there is no src/$u/"
  for e in ${allow[$u]}; do
    if [ -z "${allow[$e]+x}" ] && [ ! -f "src/$e" ] && [ ! -d "src/$e" ]; then
      violation "$doc: layer table row $u: $e is neither a row nor a file under src/"
    fi
  done
done

# No cycle: depth-first search over unit -> unit of each entry.
declare -A state=()
visit() { # unit path...
  local u=$1; shift
  case "${state[$u]:-}" in
    done) return ;;
    open) violation "$doc: the layer table has a cycle: $* $u"; return ;;
  esac
  state[$u]=open
  local e
  for e in ${allow[$u]:-}; do visit "$(unit_of "$e")" "$@" "$u ->"; done
  state[$u]=done
}
for u in "${units[@]}"; do visit "$u"; done

# allowed UNIT TARGET: may a file of UNIT include TARGET (a path under src/)?
allowed() {
  local u=$1 t=$2 tu e
  tu=$(unit_of "$t")
  [[ "$tu" == "$u" || "$u" == "$tu"/* || "$t" == "$u"/* ]] && return 0
  for e in ${allow[$u]:-}; do
    [[ "$t" == "$e" || "$t" == "$e"/* ]] && return 0
    # an entry that is a layer allows its sub-layers too
    [[ "$tu" == "$e"/* ]] && return 0
  done
  return 1
}

# ---- includes in src/ (tracked files and new ones not yet added)
declare -A unit_cache=()
while IFS= read -r f; do
  rel=${f#src/}
  [[ "$rel" == */* ]] || continue # a file directly in src/ belongs to no layer
  dir=${rel%/*}
  u=${unit_cache[$dir]:-}
  if [ -z "$u" ]; then
    u=$(unit_of "$rel")
    unit_cache[$dir]=$u
  fi
  if [ -z "${allow[$u]+x}" ]; then
    violation "$f: src/${rel%%/*}/ is not a layer in the table in $doc"
    continue
  fi
  while IFS=: read -r line inc; do
    t=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1/' <<<"$inc")
    case "$t" in
      */../* | ../* | ./*) violation "$f:$line: #include \"$t\": name headers as layer/file.h" ;;
      */*) allowed "$u" "$t" ||
             violation "$f:$line: #include \"$t\": $u may not include $(unit_of "$t")" \
                       "(allowed: ${allow[$u]:-nothing of ours}; table in $doc)" ;;
      *) ;; # same folder
    esac
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
done < <(git ls-files --cached --others --exclude-standard -- 'src/*.c' 'src/*.h' | sort -u)

# ---- link lines in CMakeLists.txt: hr_link(hr_a hr_b ...) and headroom's
link_ok() { # unit layer: may unit link the layer's library?
  local u=$1 l=$2 e
  [ "$l" = "$u" ] && return 0
  for e in ${allow[$u]:-}; do [[ "${e%%/*}" == "$l" ]] && return 0; done
  return 1
}
while IFS= read -r ln; do
  set -- $(sed -E 's/hr_link\(//; s/\).*//' <<<"$ln")
  from=${1#hr_}; shift
  [ -n "${allow[$from]+x}" ] || { violation "CMakeLists.txt: hr_link($1 ...): $from is not a layer in $doc"; continue; }
  for lib in "$@"; do
    case "$lib" in hr_*) ;; *) continue ;; esac
    link_ok "$from" "${lib#hr_}" ||
      violation "CMakeLists.txt: hr_link(hr_$from ... $lib): $from may not depend on ${lib#hr_} (table in $doc)"
  done
done < <(grep -E '^[[:space:]]*hr_link\(hr_' CMakeLists.txt || true)

if [ "$fail" -ne 0 ]; then
  echo "check-layers: the layering above breaks the table in $doc: fix the code," \
       "or change the table on purpose" >&2
  exit 1
fi
