#!/usr/bin/env python3
"""scale_replay.py — the minimum writes of a churn, and the stale ceilings
(bench/cluster/scale.sh; design §5, §16).

Replays a recorded churn (a snapshot, then every pod change as
bench/cluster/scale_watch.py recorded it) through the planner, `headroom node NODE
-f DUMP -o json`, as an ideal controller would act: after every single
scheduling event (a pod bound to a node, or one leaving it: deleted,
terminal, terminating) the node is planned from the cluster as it is then,
with every pod's CPU limit as the ideal controller last wrote it, and every
pod the planner would write (its target left the deadband) is written at
once. The count is the minimum number of resizes the churn needs; the
controller's own count (from the audit record, --resizes) is compared with
it. A node is planned once before its first event (its pending writes at
the start are counted apart, not in the minimum).

Stale ceilings: at each bind, the neighbours the planner shrinks
held a ceiling too generous for the node from the bind on. Their real
limits are followed in the recorded watch (what the controller wrote):
the window of a bind ends when every such neighbour's limit went down (or
the neighbour left). Printed: p50/p99/max of the windows.

  scale_replay.py --headroom BIN --snapshot FILE --watch FILE --resizes N
                  [--work DIR]

The snapshot is concatenated JSON: the raw PodList, NodeList,
NamespaceList, LimitRangeList and the HeadroomConfig. Pods with more than
one container cannot take the planner's pod target as one limit: they are
counted and skipped (bench/cluster/scale.sh makes none).
"""
import argparse
import copy
import json
import os
import subprocess
import sys


def docs(path):
    dec = json.JSONDecoder()
    with open(path) as f:
        s = f.read()
    i = 0
    while True:
        while i < len(s) and s[i].isspace():
            i += 1
        if i >= len(s):
            return
        o, i = dec.raw_decode(s, i)
        yield o


def cpu_milli(q):
    if q is None:
        return None
    q = str(q)
    if q.endswith("m"):
        return int(q[:-1])
    return int(round(float(q) * 1000))


def limit_of(pod):
    cs = pod.get("spec", {}).get("containers", [])
    if not cs:
        return None
    return cpu_milli(((cs[0].get("resources") or {}).get("limits") or {}).get("cpu"))


def sig(pod):
    if pod is None:
        return (None, False, False)
    st = pod.get("status", {}).get("phase")
    return (pod.get("spec", {}).get("nodeName"), st in ("Succeeded", "Failed"),
            pod.get("metadata", {}).get("deletionTimestamp") is not None)


def pct(vals, p):
    if not vals:
        return "-"
    v = sorted(vals)
    i = max(1, (p * len(v) + 99) // 100)
    return "%.2f" % v[i - 1]


class Replay:
    def __init__(self, a):
        self.a = a
        self.pods = {}      # uid -> pod with the ideal limits
        self.by_node = {}   # node -> set of uids
        self.nodes = {}
        self.extra = []     # namespaces, limitranges, the config
        self.inited = set()
        self.n_plan = 0
        self.minimum = 0
        self.pending_start = 0
        self.multi = 0
        self.binds = 0
        self.departs = 0
        self.events_nodes = set()
        self.stale = []     # open windows: {"t": bind time, "open": {uid: limit at bind}, "end": t}
        self.windows = []
        self.unresolved = 0
        self.shrinks = 0
        self.shrink_pct = 5
        self.targets = {}
        os.makedirs(a.work, exist_ok=True)

    def load(self):
        ds = list(docs(self.a.snapshot))
        kinds = {"PodList": "Pod", "NodeList": "Node", "NamespaceList": "Namespace", "LimitRangeList": "LimitRange"}
        rv = None
        for d in ds:
            k = d.get("kind")
            if k in kinds:
                for it in d.get("items", []):
                    it["kind"] = kinds[k]
                    it["apiVersion"] = "v1"
                    if k == "PodList":
                        self.add(it)
                    elif k == "NodeList":
                        self.nodes[it["metadata"]["name"]] = it
                    else:
                        self.extra.append(it)
                if k == "PodList":
                    rv = int(d["metadata"]["resourceVersion"])
            elif k == "HeadroomConfig":
                self.extra.append(d)
                self.shrink_pct = ((d.get("spec") or {}).get("deadband") or {}).get("shrinkPercent", 5)
        return rv

    def add(self, pod):
        uid = pod["metadata"]["uid"]
        self.pods[uid] = pod
        n = pod.get("spec", {}).get("nodeName")
        if n:
            self.by_node.setdefault(n, set()).add(uid)

    def remove(self, uid):
        pod = self.pods.pop(uid, None)
        if pod is None:
            return
        n = pod.get("spec", {}).get("nodeName")
        if n and n in self.by_node:
            self.by_node[n].discard(uid)

    def plan(self, node):
        """Plans NODE; writes what the planner would write; returns the plan's pods that were written."""
        if node not in self.nodes:
            return []
        items = [self.nodes[node]] + [self.pods[u] for u in sorted(self.by_node.get(node, ()))] + self.extra
        path = os.path.join(self.a.work, "node.json")
        with open(path, "w") as f:
            json.dump({"kind": "List", "apiVersion": "v1", "items": items}, f)
        r = subprocess.run([self.a.headroom, "node", node, "-f", path, "-o", "json"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        self.n_plan += 1
        if r.returncode != 0:
            raise SystemExit("scale_replay: headroom node %s failed (exit %d; dump %s)" % (node, r.returncode, path))
        out = json.loads(r.stdout)
        by_name = {(p["metadata"]["namespace"], p["metadata"]["name"]): u for u, p in
                   ((u, self.pods[u]) for u in self.by_node.get(node, ()))}
        written = []
        self.targets = {}
        for n in out.get("nodes", []):
            for p in n.get("pods", []):
                uid = by_name.get((p["namespace"], p["name"]))
                if uid is None:
                    continue
                if p.get("managed") and "targetMilli" in p:
                    self.targets[uid] = p["targetMilli"]
                if not p.get("write"):
                    continue
                pod = self.pods[uid]
                cs = pod["spec"]["containers"]
                if len(cs) != 1 or pod["spec"].get("initContainers"):
                    self.multi += 1
                    continue
                res = cs[0].setdefault("resources", {})
                res.setdefault("limits", {})["cpu"] = "%dm" % p["targetMilli"]
                written.append((uid, p["limitMilli"], p["targetMilli"]))
        return written

    def touch(self, node):
        if node and node not in self.inited:
            self.inited.add(node)
            self.pending_start += len(self.plan(node))

    def retarget(self, t, node, real):
        """After a plan of NODE: a neighbour whose real limit is no longer above its target (beyond the
        shrink deadband) no longer holds a stale ceiling, whoever wrote it."""
        for w in self.stale:
            if w["node"] != node:
                continue
            for u in list(w["open"]):
                tgt = self.targets.get(u)
                lim = real.get(u)
                if tgt is not None and lim is not None and (lim - tgt) * 100 < self.shrink_pct * lim:
                    del w["open"][u]
                    w["end"] = t
        self.observe(t, None, None)

    def observe(self, t, uid, pod):
        """The real (controller-written) limit of UID changed or it left: close stale windows."""
        lim = limit_of(pod) if pod is not None else None
        for w in self.stale:
            if uid is not None and uid in w["open"] and (pod is None or (lim is not None and lim < w["open"][uid])):
                del w["open"][uid]
                w["end"] = t
        keep = []
        for w in self.stale:
            if w["open"]:
                keep.append(w)
            else:
                self.windows.append(w["end"] - w["t"])
        self.stale = keep

    def run(self):
        rv0 = self.load()
        real = {u: limit_of(p) for u, p in self.pods.items()}  # uid -> the real limit, as last watched
        departed = set()
        with open(self.a.watch) as f:
            for line in f:
                ev = json.loads(line)
                obj = ev["object"]
                md = obj.get("metadata", {})
                if int(md.get("resourceVersion", "0")) <= rv0:
                    continue
                t = ev["t"]
                uid = md["uid"]
                old = self.pods.get(uid)
                new = None if ev["type"] == "DELETED" else obj
                so, sn = sig(old), sig(new)
                self.observe(t, uid, new)
                if new is None:
                    real.pop(uid, None)
                else:
                    real[uid] = limit_of(new)
                if so == sn:
                    # no scheduling change: keep the ideal limits, take the rest
                    if new is not None and old is not None:
                        ideal = old["spec"]["containers"]
                        new = copy.deepcopy(new)
                        new["kind"], new["apiVersion"] = "Pod", "v1"
                        for c, ic in zip(new["spec"]["containers"], ideal):
                            c["resources"] = ic.get("resources", {})
                        self.pods[uid] = new
                    continue
                for n in {so[0], sn[0]}:
                    self.touch(n)
                self.remove(uid)
                if new is not None:
                    new = copy.deepcopy(new)
                    new["kind"], new["apiVersion"] = "Pod", "v1"
                    if old is not None:
                        for c, ic in zip(new["spec"]["containers"], old["spec"]["containers"]):
                            c["resources"] = ic.get("resources", {})
                    self.add(new)
                bind = so[0] is None and sn[0] is not None
                if bind:
                    self.binds += 1
                elif so[0] is not None and uid not in departed:
                    # leaving its node (terminating, terminal or deleted), counted once a pod
                    departed.add(uid)
                    self.departs += 1
                for n in {so[0], sn[0]}:
                    if not n:
                        continue
                    self.events_nodes.add(n)
                    w = self.plan(n)
                    self.minimum += len(w)
                    if bind and n == sn[0]:
                        shr = {u: lim for u, lim, tgt in w if u != uid and tgt < lim}
                        self.shrinks += len(shr)
                        if shr:
                            # the neighbours' real limits now (the controller's)
                            op = {u: real[u] for u in shr if real.get(u) is not None}
                            if op:
                                self.stale.append({"t": t, "node": n, "open": op, "end": t})
                    self.retarget(t, n, real)
        self.unresolved = len(self.stale)
        ev = self.binds + self.departs
        r = self.a.resizes
        ratio = ("%.2f" % (r / self.minimum)) if self.minimum else "-"
        print("replay: %d scheduling events (%d binds, %d departures) on %d nodes, %d plans;"
              " minimum resizes (the planner after every event) %d; the controller's %d: %sx the minimum,"
              " %.2f per scheduling event (minimum %.2f); pending at the first event of a node %d%s"
              % (ev, self.binds, self.departs, len(self.events_nodes), self.n_plan, self.minimum, r, ratio,
                 r / ev if ev else 0, self.minimum / ev if ev else 0, self.pending_start,
                 ("; %d multi-container pods skipped" % self.multi) if self.multi else ""))
        print("replay: stale ceilings (design §11.3): %d binds left %d neighbours' ceilings too generous;"
              " the bound pod ran beside them p50 %s s, p99 %s s, max %s s (%d windows still open at the end)"
              % (len(self.windows) + self.unresolved, self.shrinks, pct(self.windows, 50), pct(self.windows, 99),
                 pct(self.windows, 100), self.unresolved))
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--headroom", required=True)
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--watch", required=True)
    ap.add_argument("--resizes", type=int, required=True)
    ap.add_argument("--work", default="/tmp/scale-replay")
    return Replay(ap.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
