#!/usr/bin/env python3
"""gen_nodepools.py — writes nodepools.json, the dump of the node-pool golden
tests (design §2.11): spec.nodePools on three 16-core nodes, top-level
maxMultiplier 4.

- batch-1 (label pool=batch): pool "batch" sets maxMultiplier 0 (no cap):
  two 1000m pods, S = 14000, each 1000 + 7000 = 8000m (the top level would
  cap them at 4000m).
- latency-1 (label pool=latency): pool "latency" sets maxMultiplier 2 and
  deadband growPercent 50: one 1000m pod alone gets 2000m (its cap).
- plain-1 (no pool label): the top level, one 1000m pod capped at 4000m.
- a pool "gpu" that matches no node (0 nodes).

Run it from this folder: python3 gen_nodepools.py > nodepools.json
"""
import json

rv = [3000]


def meta(**kw):
    rv[0] += 1
    m = {"resourceVersion": str(rv[0]), "uid": f"9a9a9a9a-0000-4000-8000-{rv[0]:012d}"}
    m.update(kw)
    return m


def node(name, labels):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(name=name, labels={"kubernetes.io/hostname": name,
                                                "kubernetes.io/os": "linux", **labels}),
            "status": {"allocatable": {"cpu": "16", "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": "16", "memory": "32Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name, node_name):
    res = {"requests": {"cpu": "1", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name=name, namespace="shop"),
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "app", "image": "app:1", "resources": res}]},
            "status": {"phase": "Running", "qosClass": "Burstable",
                       "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0,
                                              "resources": res}]}}


items = [
    {"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
     "metadata": meta(name="cluster", generation=1),
     "spec": {"dryRun": False, "maxMultiplier": "4", "nodePools": [
         {"name": "batch", "nodeSelector": {"matchLabels": {"pool": "batch"}},
          "overrides": {"maxMultiplier": "0"}},
         {"name": "latency",
          "nodeSelector": {"matchExpressions": [
              {"key": "pool", "operator": "In", "values": ["latency"]}]},
          "overrides": {"maxMultiplier": "2", "deadband": {"growPercent": 50}}},
         {"name": "gpu", "nodeSelector": {"matchExpressions": [
             {"key": "gpu", "operator": "Exists"}]},
          "overrides": {"quantum": "50m"}}]}},
    {"apiVersion": "v1", "kind": "Namespace",
     "metadata": meta(name="shop", labels={"kubernetes.io/metadata.name": "shop",
                                           "kube-headroom.dev/mode": "managed"}),
     "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
    {"apiVersion": "v1", "kind": "LimitRange",  # no CPU bound: a complete dump
     "metadata": meta(name="memory", namespace="shop"),
     "spec": {"limits": [{"type": "Container", "max": {"memory": "4Gi"}}]}},
    node("batch-1", {"pool": "batch"}),
    node("latency-1", {"pool": "latency"}),
    node("plain-1", {}),
    pod("batch-a", "batch-1"), pod("batch-b", "batch-1"),
    pod("api-0", "latency-1"),
    pod("web-0", "plain-1"),
]
print(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                  "items": items}, indent=1))
