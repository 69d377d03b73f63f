#!/usr/bin/env python3
"""gen_tenants.py — writes tenants.json, the dump of the TenantFair golden
tests of tenants that span namespaces (design §2.9, property 8's example).

- `spec.tenantLabel: capsule.clastix.io/tenant`, as where Capsule makes the
  tenants. worker-16 (16 cores): the tenant `evil` spreads five 1000m pods
  over five namespaces evil-0 … evil-4, each labelled
  capsule.clastix.io/tenant=evil (evil-4 also carries the default key
  kube-headroom.dev/tenant=other, which this config ignores); the namespace
  `victim` (no tenant label: its own tenant) has one 1000m pod. Two
  tenants: S = 10000, W = 2, S_evil = S_victim = 5000; the victim's pod
  gets 6000m, as if evil's pods were in one namespace (2670m when the
  namespaces were the tenants), evil's 2000m each.

Run it from this folder: python3 gen_tenants.py > tenants.json
"""
from dumpgen import Dump, print_list

d = Dump(2000)

managed = {"kube-headroom.dev/mode": "managed"}
evil = {**managed, "capsule.clastix.io/tenant": "evil"}
items = [
    d.config({"policy": "TenantFair", "dryRun": False,
              "tenantLabel": "capsule.clastix.io/tenant"}),
    d.ns("evil-0", evil),
    d.ns("evil-1", evil),
    d.ns("evil-2", evil),
    d.ns("evil-3", evil),
    d.ns("evil-4", {**evil, "kube-headroom.dev/tenant": "other"}),
    d.ns("victim", managed),
    d.memory_limitrange("victim"),
    d.node("worker-16", "16"),
]
items += [d.pod(f"evil-{i}", "web-0", "worker-16", "1") for i in range(5)]
items += [d.pod("victim", "db-0", "worker-16", "1")]
print_list(items)
