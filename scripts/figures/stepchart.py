#!/usr/bin/env python3
"""stepchart.py DATA OUT.svg — a step chart of a pod's CPU limit as neighbours land, as SVG text.

DATA (limit-falls.sh writes it) is lines of words, '#' starts a comment:
    title TEXT...                  the chart's title
    pod NAME REQUEST_MILLI         the pod drawn, its request
    node NAME ALLOCATABLE_MILLI    its node, its allocatable
    step N LIMIT_MILLI LABEL...    after N neighbours landed, the pod's limit; LABEL under the step
The steps in order, N = 0, 1, 2, ... The y axis is cores, 0 to allocatable; the limit is a step
line, the request and the allocatable are horizontal lines.

Deterministic: the same DATA gives the same bytes (no time, no randomness, numbers with a fixed
format), so a test can draw it again and compare with the committed file. No plotting library:
the SVG is written by hand.
"""
import sys
from xml.sax.saxutils import escape

W, H = 640, 380
LEFT, RIGHT, TOP, BOTTOM = 56, 128, 74, 72


def num(v):
    """A coordinate: one decimal, never '-0.0'."""
    s = "%.1f" % v
    return "0.0" if s == "-0.0" else s


def cores(milli):
    """16000 -> '16', 2500 -> '2.5', 250 -> '0.25'."""
    s = "%.3f" % (milli / 1000.0)
    return s.rstrip("0").rstrip(".")


def read(path):
    d = {"title": "", "steps": []}
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if not w:
                continue
            if w[0] == "title":
                d["title"] = " ".join(w[1:])
            elif w[0] == "pod":
                d["pod"], d["request"] = w[1], int(w[2])
            elif w[0] == "node":
                d["node"], d["allocatable"] = w[1], int(w[2])
            elif w[0] == "step":
                if int(w[1]) != len(d["steps"]):
                    sys.exit("stepchart: step %s out of order" % w[1])
                d["steps"].append((int(w[2]), " ".join(w[3:])))
            else:
                sys.exit("stepchart: unknown line: %s" % line.strip())
    for k in ("pod", "node"):
        if k not in d:
            sys.exit("stepchart: no %s line" % k)
    if not d["steps"]:
        sys.exit("stepchart: no step")
    return d


def tick_step(top):
    """A tick every 1, 2, 4, 5, 10... cores: at most 8 ticks."""
    for s in (0.5, 1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if top / s <= 8:
            return s
    return top / 8


def draw(d):
    a, r, steps = d["allocatable"], d["request"], d["steps"]
    top_cores = a / 1000.0
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    n = len(steps)
    band = pw / n

    def y(milli):
        return TOP + ph - ph * (milli / 1000.0) / top_cores

    def x(i):
        return LEFT + band * i

    o = []
    o.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
             'font-family="sans-serif" font-size="12">' % (W, H, W, H))
    o.append('<title>%s</title>' % escape(d["title"]))
    o.append('<desc>%s</desc>' % escape(
        "The CPU limit of pod %s (request %s cores) on node %s (allocatable %s cores) after each "
        "neighbour landed: %s cores." % (d["pod"], cores(r), d["node"], cores(a),
                                          ", ".join(cores(l) for l, _ in steps))))
    o.append('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (W, H))
    o.append('<text x="%s" y="24" font-size="15" font-weight="bold">%s</text>' % (num(LEFT), escape(d["title"])))
    o.append('<text x="%s" y="42" fill="#555555">pod %s requests %s cores on node %s (%s cores); '
             'limits as the controller wrote them</text>' % (num(LEFT), escape(d["pod"]), cores(r),
                                                              escape(d["node"]), cores(a)))
    # The y axis: ticks in cores, light grid lines.
    t = tick_step(top_cores)
    v = 0.0
    while v <= top_cores + 1e-9:
        yy = y(v * 1000)
        o.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/>' % (num(LEFT), num(yy), num(LEFT + pw), num(yy)))
        o.append('<text x="%s" y="%s" text-anchor="end" fill="#333333">%s</text>' % (num(LEFT - 6), num(yy + 4), cores(v * 1000)))
        v += t
    o.append('<text x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle" fill="#333333">'
             'CPU (cores)</text>' % (num(TOP + ph / 2), num(TOP + ph / 2)))
    o.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333333"/>' % (num(LEFT), num(TOP), num(LEFT), num(TOP + ph)))
    o.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333333"/>' % (num(LEFT), num(TOP + ph), num(LEFT + pw), num(TOP + ph)))
    # The x axis: one band per step, its neighbour count and what landed.
    for i, (_, label) in enumerate(steps):
        cx = x(i) + band / 2
        o.append('<text x="%s" y="%s" text-anchor="middle" fill="#333333">%d</text>' % (num(cx), num(TOP + ph + 16), i))
        o.append('<text x="%s" y="%s" text-anchor="middle" fill="#555555">%s</text>' % (num(cx), num(TOP + ph + 32), escape(label)))
    o.append('<text x="%s" y="%s" text-anchor="middle" fill="#333333">neighbours on the node</text>'
             % (num(LEFT + pw / 2), num(TOP + ph + 52)))
    # The allocatable and the request.
    for milli, colour, dash, name in ((a, "#888888", "2 3", "allocatable %s" % cores(a)),
                                      (r, "#2b8a3e", "6 4", "request %s" % cores(r))):
        yy = y(milli)
        o.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"/>'
                 % (num(LEFT), num(yy), num(LEFT + pw), num(yy), colour, dash))
        o.append('<text x="%s" y="%s" fill="%s">%s</text>' % (num(LEFT + pw + 6), num(yy + 4), colour, name))
    # The limit: a step line, a dot and its value on each step.
    pts = []
    for i, (l, _) in enumerate(steps):
        pts.append("%s,%s" % (num(x(i)), num(y(l))))
        pts.append("%s,%s" % (num(x(i + 1)), num(y(l))))
    o.append('<polyline points="%s" fill="none" stroke="#1c64c8" stroke-width="2.5"/>' % " ".join(pts))
    for i, (l, _) in enumerate(steps):
        cx, cy = x(i) + band / 2, y(l)
        o.append('<circle cx="%s" cy="%s" r="3.5" fill="#1c64c8"/>' % (num(cx), num(cy)))
        o.append('<text x="%s" y="%s" text-anchor="middle" fill="#1c64c8" font-weight="bold">%s</text>'
                 % (num(cx), num(cy - 8), cores(l)))
    last = steps[-1][0]
    o.append('<text x="%s" y="%s" fill="#1c64c8">limit of %s</text>' % (num(LEFT + pw + 6), num(y(last) - 10 if last == r else y(last) + 4), escape(d["pod"])))
    o.append('</svg>')
    return "\n".join(o) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: stepchart.py DATA OUT.svg")
    svg = draw(read(sys.argv[1]))
    with open(sys.argv[2], "w", encoding="utf-8", newline="\n") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
