#!/bin/sh
# run.sh — one golden test: run a command, compare its exit status, its
# stdout and (optionally) its stderr with the expected ones.
#
#   run.sh EXIT EXPECTED_STDOUT|- EXPECTED_STDERR|- [<STDIN] -- COMMAND ARGS...
#
# "-" skips a comparison. A command killed by a signal (a crash) never
# matches: its status is >128. Runs in the directory of the expected files
# so messages name inputs by relative path, the same on every machine.
set -u
want_rc=$1 want_out=$2 want_err=$3
shift 3
stdin=/dev/null
if [ "$1" != "--" ]; then stdin=$1; shift; fi
shift # --
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$(dirname "$0")" || exit 1
"$@" <"$stdin" >"$work/out" 2>"$work/err"
rc=$?
fail=0
if [ "$rc" -ne "$want_rc" ]; then
  echo "exit status $rc, expected $want_rc"; fail=1
fi
if [ "$want_out" != "-" ] && ! diff -u "$want_out" "$work/out"; then fail=1; fi
if [ "$want_err" != "-" ] && ! diff -u "$want_err" "$work/err"; then fail=1; fi
if [ "$fail" -ne 0 ]; then
  echo "--- stderr was:"; cat "$work/err"
fi
exit "$fail"
