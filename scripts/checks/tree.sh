#!/usr/bin/env bash
# tree.sh — the test tree keeps its shape (01d151a):
#   1. no top-level test/ directory: every test lives under tests/;
#   2. nothing under tests/ sources or runs a file under bench/: a test must
#      not depend on a benchmark (the CI-sized benchmark runs are declared in
#      bench/cluster/CMakeLists.txt instead);
#   3. nothing under bench/ sources or runs a file under tests/ except the
#      shared harness: tests/lib/ (the shell library) and tests/cluster/ (the
#      cluster scripts, fixture.cmake). Benchmarks must not run tests.
# Why: the reorganisation split tests/ and bench/ so that each can change on
# its own; a path across the line ties them together again unnoticed.
#
# "Sources or runs" is read from *.sh, *.py, CMakeLists.txt and *.cmake, with
# comments left out: in shell, a path that is the command word or the word
# after `.`, source, exec, command, bash, sh, python3 or env (at the start of
# a line or after ; && || | ( $( `); in Python and CMake, any path on a line.
# A path counts when one of its components is bench/ (or tests/) and it does
# not go through a build directory (build/…, ${CMAKE_BINARY_DIR}).
#
# Usage: scripts/checks/tree.sh   (checks the tree it lives in)
# Prints one line per violation, "path:line: what", and exits 1 if any.
set -eu
cd "$(dirname "$0")/../.."

bad=0
if [ -d test ]; then
    echo "test/:0: a top-level test/ directory: tests live under tests/"
    bad=1
fi

# scan DIR COMPONENT ALLOWED WHY: the files under DIR that use a path through
# COMPONENT/ whose part from COMPONENT/ on does not match the regex ALLOWED.
scan() {
    find "$1" -type f \( -name '*.sh' -o -name '*.py' -o -name CMakeLists.txt -o -name '*.cmake' \) |
        sort | xargs -r awk -v comp="$2" -v allow="$3" -v why="$4" '
        function hit(w, line) {
            if (w !~ "(^|/)" comp "/" || tolower(w) ~ /build|binary/) return
            w = substr(w, match(w, "(^|/)" comp "/")); sub(/^\//, "", w)
            if (w !~ allow) { printf "%s:%d: sources or runs %s: %s\n", FILENAME, FNR, w, why; bad = 1 }
        }
        {
            line = $0
            sub(/(^|[ \t])#.*/, "", line)                # the comment
            gsub(/\$\(dirname "[^"]*"\)/, "DIR", line)   # "$(dirname "$0")"/..
            gsub(/["\047]/, "", line)
            if (FILENAME !~ /\.sh$/) {                   # Python, CMake: any path
                n = split(line, w, /[^A-Za-z0-9_.${}\/-]+/)
                for (i = 1; i <= n; i++) hit(w[i])
                next
            }
            n = split(line, seg, /&&|\|\||[;|(`]|\$\(/)   # shell: each command
            for (i = 1; i <= n; i++) {
                s = seg[i]; sub(/^[ \t]*((if|then|do|else|while|until|!)[ \t]+)*/, "", s)
                while (sub(/^[A-Za-z_][A-Za-z0-9_]*=[^ \t]*[ \t]+/, "", s)) {}  # VAR=x cmd
                sub(/^(\.|source|exec|command|bash|sh|python3?|env)[ \t]+/, "", s)
                sub(/[ \t].*/, "", s)
                hit(s)
            }
        }
        END { exit bad }' || bad=1
}
scan tests bench '^$' "a test must not depend on a benchmark"
scan bench tests '^tests/(lib|cluster)/' "bench/ may use only tests/lib/ and tests/cluster/"
[ "$bad" -eq 0 ] && echo "check-tree: no test/, no use of bench/ from tests/, only the harness from bench/"
exit "$bad"
