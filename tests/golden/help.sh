#!/bin/sh
# help.sh HEADROOM — `headroom help` cuts no command's summary: each line of its
# command list says in full what `headroom help CMD` says under the usage line, and
# that summary is one line (a second one would be cut off from the list), and the
# list names every command whose help exists.
set -u
hr=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
list=$("$hr" help) || bad "headroom help exited $?"
cmds=$(printf '%s\n' "$list" | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
[ -n "$cmds" ] || bad "headroom help lists no commands"
for c in $cmds; do
  help=$("$hr" help "$c") || bad "headroom help $c exited $?"
  summary=$(printf '%s\n' "$help" | sed -n 3p)
  after=$(printf '%s\n' "$help" | sed -n 4p)
  [ -n "$summary" ] || bad "headroom help $c: no summary under the usage line"
  [ -z "$after" ] || bad "headroom help $c: the summary goes on to a second line ('$after'), which headroom help cuts off"
  line=$(printf '%s\n' "$list" | grep -E "^  $c +" | sed -E "s/^  $c +//")
  [ "$line" = "$summary" ] || bad "headroom help lists $c as '$line', its help says '$summary'"
done
echo "help: $([ "$fail" -eq 0 ] && echo ok || echo FAILED)"
exit "$fail"
