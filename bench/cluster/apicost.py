#!/usr/bin/env python3
"""apicost.py — the API server's CPU per write kind (bench/cluster/apicost.sh runs it).

   apicost.py KUBECONFIG_JSON NAMESPACE N RATE APISERVER_PID KIND[,KIND...] [ROUND]

For each KIND (apply: a server-side apply of one container's CPU limit to pods/resize, as the
controller writes it; merge: the same limit as a strategic merge patch to pods/resize; annot: a merge
patch of a status annotation on the pod; event: a core/v1 Event created for the pod), one write to
each of N pods of NAMESPACE, one after the other on one keep-alive connection, at most RATE a second,
protobuf answers asked. The API server's CPU (its /proc/PID/stat) over each batch, less its idle
rate measured first over 10 s, divided by the writes. KUBECONFIG_JSON: `kubectl config view --raw
--minify -o json` of a user with client-certificate data (the test cluster's admin)."""
import base64, json, os, ssl, sys, tempfile, time, http.client  # noqa: E401
kc_path, ns, n, rate, pid = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
kinds = sys.argv[6].split(",")
kc = json.load(open(kc_path))
cl = kc["clusters"][0]["cluster"]; us = kc["users"][0]["user"]
d = tempfile.mkdtemp()
def w(name, b64):
    p = os.path.join(d, name); open(p, "wb").write(base64.b64decode(b64)); return p
ctx = ssl.create_default_context(cafile=w("ca", cl["certificate-authority-data"]))
ctx.load_cert_chain(w("crt", us["client-certificate-data"]), w("key", us["client-key-data"]))
host, port = cl["server"].split("//")[1].split(":")
conn = http.client.HTTPSConnection(host, int(port), context=ctx)
def req(m, path, body=None, ct=None, accept="application/json"):
    h = {"Accept": accept}
    if ct: h["Content-Type"] = ct
    conn.request(m, path, body=body, headers=h)
    r = conn.getresponse(); data = r.read()
    if r.status >= 300: raise SystemExit(f"{m} {path}: {r.status} {data[:300]}")
    return data
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
pods = json.loads(req("GET", f"/api/v1/namespaces/{ns}/pods"))["items"]
pods = [p for p in pods if p["spec"].get("nodeName")][:n]
def measure(label, fn):
    t0, c0 = time.monotonic(), cpu()
    for i, p in enumerate(pods):
        fn(i, p)
        nxt = t0 + (i + 1) / rate
        s = nxt - time.monotonic()
        if s > 0: time.sleep(s)
    dt, dc = time.monotonic() - t0, cpu() - c0
    return label, dt, dc
# idle rate
t0, c0 = time.monotonic(), cpu(); time.sleep(10); idle = (cpu() - c0) / (time.monotonic() - t0)
prot = "application/vnd.kubernetes.protobuf"
rounds = {"v": 100 * int(sys.argv[7]) if len(sys.argv) > 7 else 0}  # each round writes new values
def lim(i): return f"{300 + 10 * rounds['v'] + (i % 7)}m"
def apply_resize(i, p):
    c = p["spec"]["containers"][0]["name"]
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": p["metadata"]["name"], "namespace": ns},
                       "spec": {"containers": [{"name": c, "resources": {"limits": {"cpu": lim(i)}}}]}})
    req("PATCH", f"/api/v1/namespaces/{ns}/pods/{p['metadata']['name']}/resize?fieldManager=apicost&force=true", body, "application/apply-patch+yaml", prot)
def merge_resize(i, p):
    c = p["spec"]["containers"][0]["name"]
    body = json.dumps({"spec": {"containers": [{"name": c, "resources": {"limits": {"cpu": lim(i)}}}]}})
    req("PATCH", f"/api/v1/namespaces/{ns}/pods/{p['metadata']['name']}/resize?fieldManager=apicost", body, "application/strategic-merge-patch+json", prot)
def annotate(i, p):
    body = json.dumps({"metadata": {"annotations": {"kube-headroom.dev/status": f"limit={lim(i)} round={rounds['v']}"}}})
    req("PATCH", f"/api/v1/namespaces/{ns}/pods/{p['metadata']['name']}?fieldManager=apicost", body, "application/merge-patch+json", prot)
def event(i, p):
    nm = p["metadata"]["name"]
    body = json.dumps({"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": nm + ".", "namespace": ns},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": nm, "uid": p["metadata"]["uid"], "apiVersion": "v1"},
        "reason": "CPULimitAdjusted", "message": f"CPU limit set to {lim(i)}", "type": "Normal",
        "source": {"component": "apicost"}, "firstTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "lastTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "count": 1, "reportingComponent": "apicost", "reportingInstance": "apicost"})
    req("POST", f"/api/v1/namespaces/{ns}/events", body, "application/json", prot)
fns = {"apply": apply_resize, "merge": merge_resize, "annot": annotate, "event": event}
print(f"idle {idle*1000:.1f} ms/s; {len(pods)} pods; rate {rate}/s")
for k in kinds:
    rounds["v"] += 1
    label, dt, dc = measure(k, fns[k])
    net = dc - idle * dt
    print(f"{label:6s} {len(pods)} writes in {dt:.1f} s: API server {dc:.2f} CPU-s, net {net:.2f}: {net/len(pods)*1000:.2f} ms/write")
