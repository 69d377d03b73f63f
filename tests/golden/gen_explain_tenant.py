#!/usr/bin/env python3
"""gen_explain_tenant.py — writes explain-tenant.json: one 16-core node shared
by two namespaces, team-a (web-0: app 400m + sidecar 100m; web-1: 1000m) and
team-b (db-0: 4000m; cache-0: 2000m), all managed, dryRun false. web-0 carries
the v2 status annotation of the controller's figures for it (the cluster-wide
explain of the same dump prints the same numbers); web-1 carries a v1 one
(node figures only); team-a/new-0 on the node has none yet. The tenant view
(explain --from-annotation) must print team-a's pods by name and team-b's
only as one sum."""
import json

items = [{"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
          "metadata": {"name": "cluster", "generation": 1, "resourceVersion": "1"},
          "spec": {"dryRun": False}}]
rv = [10]


def ns(name):
    items.append({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": name, "labels": {"kube-headroom.dev/mode": "managed"}}})


def node(name, cpu):
    items.append({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": name, "labels": {"kubernetes.io/os": "linux"}},
                  "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"},
                             "conditions": [{"type": "Ready", "status": "True"}]}})


def pod(nsname, name, nodename, ctrs, ann=None):
    rv[0] += 1
    spec, status = [], []
    for cname, req, lim in ctrs:
        res = {"requests": {"cpu": req, "memory": "256Mi"},
               "limits": {"cpu": lim, "memory": "512Mi"}}
        spec.append({"name": cname, "image": "x:1", "resources": res})
        status.append({"name": cname, "ready": True, "restartCount": 0, "resources": res})
    md = {"name": name, "namespace": nsname, "resourceVersion": str(rv[0]),
          "uid": "00000000-0000-4000-8000-%012d" % rv[0],
          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name[:-2],
                               "controller": True, "uid": "c0000000-0000-4000-8000-%012d" % rv[0]}]}
    if ann:
        md["annotations"] = {"kube-headroom.dev/status": json.dumps(ann, separators=(",", ":"))}
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": md,
                  "spec": {"nodeName": nodename, "containers": spec},
                  "status": {"phase": "Running", "qosClass": "Burstable",
                             "containerStatuses": status}})


NODE = {"factor": "2.13", "slack": "8500m", "managedRequests": "7500m", "nodePods": 5}
V2 = dict(NODE, allocatable="16000m", booked="7500m", managedPods=4,
          request="500m", floor="1000m", burst="1000m", targetLimit="1500m",
          limits={"app": "1200m", "sidecar": "300m"}, cap="none",
          caps={"multiplier": "5000m", "allocatable": "16000m"},
          computedAt="2026-12-05T05:00:00Z", policy="proportional-v1", dryRun=False)
V1 = dict(NODE, computedAt="2026-12-05T05:00:00Z", policy="proportional-v1", dryRun=False)

ns("team-a")
ns("team-b")
node("shared", "16")
pod("team-a", "web-0", "shared", [("app", "400m", "1200m"), ("sidecar", "100m", "300m")], V2)
pod("team-a", "web-1", "shared", [("app", "1", "2")], V1)
pod("team-a", "new-0", "shared", [("app", "0", "1")])
pod("team-b", "db-0", "shared", [("app", "4", "8")])
pod("team-b", "cache-0", "shared", [("app", "2", "4")])

print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1))
