#!/usr/bin/env python3
"""scale_watch.py — records every pod change of the cluster for bench/cluster/scale.sh.

Watches /api/v1/pods from a resourceVersion (the snapshot's, so nothing
between the snapshot and the watch is lost) through `kubectl get --raw`,
and writes one line per event to OUT: {"t": arrival time (epoch seconds),
"type": ..., "object": the pod without managedFields}. When the API server
ends the watch (its timeout), it resumes from the last resourceVersion
seen. Ends on SIGTERM/SIGINT. OUT.started is written once the first watch
request is running.

  scale_watch.py --kubectl KUBECTL --rv RESOURCEVERSION --out OUT
"""
import argparse
import json
import signal
import subprocess
import sys
import time

stop = False
child = None


def on_signal(_sig, _frame):
    global stop
    stop = True
    if child is not None:
        child.terminate()


def main():
    global child
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubectl", required=True)
    ap.add_argument("--rv", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    rv = a.rv
    with open(a.out, "w", buffering=1 << 20) as out:
        first = True
        while not stop:
            url = "/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv
            child = subprocess.Popen([a.kubectl, "get", "--raw", url], stdout=subprocess.PIPE)
            if first:
                with open(a.out + ".started", "w") as f:
                    f.write(url + "\n")
                first = False
            for line in child.stdout:
                t = time.time()
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                obj = ev.get("object") or {}
                md = obj.get("metadata") or {}
                if ev.get("type") == "ERROR":
                    print("scale_watch: the watch failed: %s" % obj.get("message"), file=sys.stderr)
                    return 1
                if md.get("resourceVersion"):
                    rv = md["resourceVersion"]
                if ev.get("type") == "BOOKMARK":
                    continue
                md.pop("managedFields", None)
                out.write(json.dumps({"t": t, "type": ev["type"], "object": obj}, separators=(",", ":")) + "\n")
            child.wait()
            if not stop:
                time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
