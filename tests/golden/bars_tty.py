#!/usr/bin/env python3
"""bars_tty.py HEADROOM — `headroom node`'s bars on a real terminal and through a pipe.

Runs `headroom node node-c -f cluster.json` on a pseudo-terminal (the kernel's pty, a window of
101 columns set with TIOCSWINSZ, no $COLUMNS) and through a pipe, and checks what docs/cli.md
says: on a UTF-8 terminal the table is followed by the bars in block characters (█ ▓ ░ and an
eighth block), one line per pod, as wide as the window; with --ascii, TERM=dumb or a locale that
is not UTF-8 the bars are # = . ; through a pipe the output is the table alone, ASCII only,
byte for byte `-o table`'s; `-o bars` through a pipe draws in ASCII, 80 columns (or $COLUMNS).
Prints PASS/FAIL lines, exits 1 on any FAIL.
"""
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

HR = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = ["node", "node-c", "-f", "cluster.json"]
BLOCKS = "█▓░"
EIGHTHS = "▏▎▍▌▋▊▉"
passed = failed = 0


def check(ok, what, out=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS", what)
    else:
        failed += 1
        print("FAIL", what)
        if out:
            print("--- output was:\n" + out)


def env_of(**kv):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LC_ALL", "LC_CTYPE", "LANG", "TERM")}
    env.update({k: v for k, v in kv.items() if v is not None})
    return env


def on_pty(args, cols=100, **kv):
    """Run headroom ARGS with its stdout (and stdin, stderr) on a new pty of cols columns."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR  # the bytes as written: no \r added by the line discipline
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    p = subprocess.Popen([HR] + args, cwd=HERE, stdin=slave, stdout=slave, stderr=slave,
                         env=env_of(**kv), close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            d = os.read(master, 65536)
        except OSError:  # EIO: the other end is closed
            break
        if not d:
            break
        out += d
    os.close(master)
    rc = p.wait()
    return rc, out.decode("utf-8", "replace")


def on_pipe(args, **kv):
    p = subprocess.run([HR] + args, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env_of(**kv))
    return p.returncode, p.stdout


def bar_lines(text):
    """The picture's rows (the node's and the pods'): after its header, which is the node's
    figures alone (the table's node line says more), and the scale line."""
    lines = text.split("\n")
    head = [i for i, l in enumerate(lines) if l == "NODE node-c  allocatable 4000m  booked 1750m  slack 2250m"]
    if not head:
        return []
    return [l for l in lines[head[-1] + 2:] if l.startswith("  ") and not l.startswith("  " + BLOCKS[0])
            and not l.startswith("  # ")]


UTF8 = dict(LANG="C.UTF-8", TERM="xterm")

# 1. A UTF-8 terminal, 101 columns (ends that fall inside a column): the table, then the bars
#    in blocks, 101 wide.
rc, out = on_pty(ARGS, 101, **UTF8)
rows = bar_lines(out)
table = on_pipe(ARGS + ["-o", "table"], **UTF8)[1].decode()
check(rc == 0 and out.startswith(table + "\n"), "pty: the table first, as -o table prints it (exit 0)", out)
check(len(rows) == 4, "pty: the bars follow it: the node's line and one per pod (4)", out)
check(any(c in out for c in BLOCKS) and any(c in out for c in EIGHTHS),
      "pty: block characters and an eighth block", out)
check(not any(c in "#=" for r in rows for c in r[27:-25]), "pty: no ASCII bar characters", out)
check(rows and max(len(r) for r in rows) == 101, "pty: the rows are as wide as the window (101)", out)

# 2. The same terminal, other ways to ask for ASCII.
for what, args, kv in (("--ascii", ARGS + ["--ascii"], UTF8),
                       ("TERM=dumb", ARGS, dict(LANG="C.UTF-8", TERM="dumb")),
                       ("LANG=C", ARGS, dict(LANG="C", TERM="xterm")),
                       ("LC_ALL=C over LANG=C.UTF-8", ARGS, dict(LC_ALL="C", LANG="C.UTF-8", TERM="xterm"))):
    rc, out = on_pty(args, 100, **kv)
    rows = bar_lines(out)
    check(rc == 0 and len(rows) == 4 and out.isascii() and "#" in "".join(rows),
          "pty, %s: the bars in ASCII (# = .), nothing else" % what, out)

# 3. $COLUMNS wins over the window.
rc, out = on_pty(ARGS, 100, COLUMNS="120", **UTF8)
rows = bar_lines(out)
check(rows and max(len(r) for r in rows) == 120, "pty, COLUMNS=120: rows 120 wide", out)

# 4. -o table on the terminal: the table alone.
rc, out = on_pty(ARGS + ["-o", "table"], 100, **UTF8)
check(rc == 0 and not bar_lines(out) and "(node)" not in out, "pty, -o table: no bars", out)

# 5. Through a pipe: the table alone, ASCII, as -o table.
rc, piped = on_pipe(ARGS, **UTF8)
rc2, table = on_pipe(ARGS + ["-o", "table"], **UTF8)
check(rc == 0 and piped.isascii() and b"(node)" not in piped, "pipe: ASCII only, no bars", piped.decode())
check(piped == table, "pipe: byte for byte -o table's output", piped.decode())

# 6. -o bars through a pipe: ASCII bars, 80 columns without $COLUMNS.
rc, out = on_pipe(ARGS + ["-o", "bars"], **UTF8)
text = out.decode("utf-8", "replace")
rows = bar_lines(text)
check(rc == 0 and out.isascii() and len(rows) == 4 and "#" in "".join(rows),
      "pipe, -o bars: ASCII bars", text)
check(rows and max(len(r) for r in rows) == 80, "pipe, -o bars: 80 columns", text)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
