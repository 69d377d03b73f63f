#!/usr/bin/env python3
"""gen_tenantfair.py — writes tenantfair.json, the dump of the TenantFair
golden tests (design §2.9): `policy: TenantFair` on two nodes.

- worker-16 (16 cores): team-a (no weight label: 1) has five 1000m pods,
  team-b (kube-headroom.dev/weight "3") one 1000m pod: the table test's node
  with weights, so S = 10000, W = 4, S_a = 2500, S_b = 7500.
- worker-8 (8 cores): team-a one 1000m pod, team-c (weight label "lots":
  invalid, read as 1) one 500m pod, sandbox (not managed) one 1000m pod that
  books but is no tenant: S = 5500, W = 2, S_a = S_c = 2750.

Run it from this folder: python3 gen_tenantfair.py > tenantfair.json
"""
from dumpgen import Dump, print_list

d = Dump(2000)

managed = {"kube-headroom.dev/mode": "managed"}
items = [
    d.config({"policy": "TenantFair", "dryRun": False}),
    d.ns("team-a", managed),
    d.ns("team-b", {**managed, "kube-headroom.dev/weight": "3"}),
    d.ns("team-c", {**managed, "kube-headroom.dev/weight": "lots"}),
    d.ns("sandbox", {}),
    d.memory_limitrange("sandbox"),
    d.node("worker-16", "16"),
    d.node("worker-8", "8"),
]
items += [d.pod("team-a", f"web-{i}", "worker-16", "1") for i in range(5)]
items += [d.pod("team-b", "db-0", "worker-16", "1"),
          d.pod("team-a", "web-5", "worker-8", "1"),
          d.pod("team-c", "batch-0", "worker-8", "500m"),
          d.pod("sandbox", "toy-0", "worker-8", "1")]
print_list(items)
