#!/usr/bin/env python3
"""gen_explain.py — writes explain.json: one node per case of design §2.3,
each cap binding in turn, the request over every bound, and the slack-aware
floor (README.md in this folder checks each by hand)."""
import json

items = [{"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
          "metadata": {"name": "cluster", "generation": 1, "resourceVersion": "1"},
          "spec": {"dryRun": False}}]
rv = [10]


def ns(name, **lr):
    items.append({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": name, "labels": {"kube-headroom.dev/mode": "managed"}}})


def limitrange(nsname, typ, spec):
    items.append({"apiVersion": "v1", "kind": "LimitRange",
                  "metadata": {"name": "cpu-bounds", "namespace": nsname},
                  "spec": {"limits": [dict(type=typ, **spec)]}})


def node(name, cpu):
    items.append({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": name, "labels": {"kubernetes.io/os": "linux"}},
                  "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"},
                             "conditions": [{"type": "Ready", "status": "True"}]}})


def pod(nsname, name, nodename, req, lim, ann=None):
    rv[0] += 1
    res = {"requests": {"cpu": req, "memory": "256Mi"}, "limits": {"cpu": lim, "memory": "512Mi"}}
    md = {"name": name, "namespace": nsname, "resourceVersion": str(rv[0]),
          "uid": "00000000-0000-4000-8000-%012d" % rv[0],
          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name[:-2],
                               "controller": True, "uid": "c0000000-0000-4000-8000-%012d" % rv[0]}]}
    if ann:
        md["annotations"] = ann
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": md,
                  "spec": {"nodeName": nodename,
                           "containers": [{"name": "app", "image": "x:1", "resources": res}]},
                  "status": {"phase": "Running", "qosClass": "Burstable",
                             "containerStatuses": [{"name": "app", "ready": True,
                                                    "restartCount": 0, "resources": res}]}})


ns("shop")
ns("podmax")
limitrange("podmax", "Pod", {"max": {"cpu": "2"}})
ns("ratio")
limitrange("ratio", "Container", {"maxLimitRequestRatio": {"cpu": "3"}})

node("big", "64")
pod("shop", "mult-0", "big", "100m", "200m")            # maxMultiplier binds
node("eight", "8")
pod("shop", "alloc-0", "eight", "1", "2")               # allocatable is the cap
node("mid", "16")
pod("shop", "capped-0", "mid", "1", "2", {"kube-headroom.dev/max-cpu": "1500m"})  # max-cpu
node("lrpod", "16")
pod("podmax", "web-0", "lrpod", "500m", "1")            # LimitRange Pod max
node("lrctr", "16")
pod("ratio", "api-0", "lrctr", "1", "2")                # LimitRange Container ratio
node("req", "4")
pod("shop", "tiny-0", "req", "500m", "1", {"kube-headroom.dev/max-cpu": "200m"})  # request wins
node("floor", "4")
pod("shop", "small-0", "floor", "200m", "400m")         # the floor binds
pod("shop", "large-0", "floor", "2", "3")

print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1))
