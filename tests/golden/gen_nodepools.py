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
from dumpgen import Dump, print_list

d = Dump(3000, uid_prefix="9a9a9a9a")


def pod(name, node_name):  # a 1000m pod of the managed namespace shop
    return d.pod("shop", name, node_name, "1")


items = [
    d.config({"dryRun": False, "maxMultiplier": "4", "nodePools": [
         {"name": "batch", "nodeSelector": {"matchLabels": {"pool": "batch"}},
          "overrides": {"maxMultiplier": "0"}},
         {"name": "latency",
          "nodeSelector": {"matchExpressions": [
              {"key": "pool", "operator": "In", "values": ["latency"]}]},
          "overrides": {"maxMultiplier": "2", "deadband": {"growPercent": 50}}},
         {"name": "gpu", "nodeSelector": {"matchExpressions": [
             {"key": "gpu", "operator": "Exists"}]},
          "overrides": {"quantum": "50m"}}]}),
    d.ns("shop", {"kube-headroom.dev/mode": "managed"}),
    d.memory_limitrange("shop"),
    d.node("batch-1", "16", {"pool": "batch"}),
    d.node("latency-1", "16", {"pool": "latency"}),
    d.node("plain-1", "16"),
    pod("batch-a", "batch-1"), pod("batch-b", "batch-1"),
    pod("api-0", "latency-1"),
    pod("web-0", "plain-1"),
]
print_list(items)
