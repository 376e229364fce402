#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeline_replies.py: the timeline replies of a running server, hashed (not a ctest
# test): seeded requests, 600 /timeline windows of 1 to 10^-6 of the profile's span at px
# 100 to 3000 over all its sources, AGG (100) /timeline/aggregate windows, 30
# /timeline/flows and 30 /timeline/chain by Instruction id; writes one line per request
# (status, SHA-256 of the body, ms, path) to OUT and prints one SHA-256 over all of them
# and the p50/p99 per route. Two caches answer the same when the totals match (used for
# docs/memory.md, "The events in files of our writer"). Given the server's PID, each line
# also gets the server's VmHWM before and after the request (KiB) and the CPU ms it took
# (user + system; docs/memory.md, "The server's memory: users' SQL and flatness").
# usage: bench/timeline_replies.py PORT PROFILE OUT [AGG [PID]]
import os
import hashlib, json, random, sys, time, urllib.request, urllib.error
port, name = sys.argv[1], sys.argv[2]
base = f"http://127.0.0.1:{port}/api/v1/profiles/namespace/global/profile_name/{name}"
def get(p):
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(base + p) as r:
            b, st = r.read(), r.status
    except urllib.error.HTTPError as e:
        b, st = e.read(), e.code
    return st, b, (time.perf_counter() - t) * 1000
st, b, _ = get("/timeline/tracks")
tr = json.loads(b)
cols = [c["name"] for c in tr["columns"]]
starts = [int(r[cols.index("start")]) for r in tr["rows"] if r[cols.index("start")] is not None]
ends = [int(r[cols.index("end")]) for r in tr["rows"] if r[cols.index("end")] is not None]
t0 = min(s for s in starts if s is not None); t1 = max(e for e in ends if e is not None)
span = t1 - t0
rnd = random.Random(40)
reqs = ["/timeline/tracks"]
for i in range(600):
    share = rnd.choice([1, .3, .1, .03, .01, .003, .001, 1e-4, 1e-5, 1e-6])
    w = max(1, int(span * share)); a = t0 + rnd.randint(0, max(0, span - w))
    px = rnd.choice([100, 800, 1600, 3000])
    reqs.append(f"/timeline?t0={a}&t1={a + w}&px={px}")
for i in range(int(sys.argv[4]) if len(sys.argv) > 4 else 100):
    share = rnd.choice([1, .1, .01, .001, 1e-5])
    w = max(1, int(span * share)); a = t0 + rnd.randint(0, max(0, span - w))
    reqs.append(f"/timeline/aggregate?t0={a}&t1={a + w}")
for i in range(30):
    reqs.append(f"/timeline/flows?table=Instruction&id={rnd.randint(0, 7000000)}")
    reqs.append(f"/timeline/chain?table=Instruction&id={rnd.randint(0, 7000000)}")
pid = sys.argv[5] if len(sys.argv) > 5 else None
hz = os.sysconf("SC_CLK_TCK")
def hwm():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM:"):
            return int(l.split()[1])
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 // hz
h = hashlib.sha256(); times = {}
out = open(sys.argv[3], "w")
for p in reqs:
    if pid:
        h0, c0 = hwm(), cpu()
    st, b, ms = get(p)
    d = hashlib.sha256(b).hexdigest()
    h.update(p.encode()); h.update(str(st).encode()); h.update(b)
    extra = f" {h0} {hwm()} {cpu() - c0}" if pid else ""
    out.write(f"{st} {d} {ms:.2f}{extra} {p}\n")
    k = p.split("?")[0]
    times.setdefault(k, []).append(ms)
print("requests", len(reqs), "span", span, "all", h.hexdigest())
for k, v in times.items():
    v.sort(); print(k, "n", len(v), "p50 %.1f p99 %.1f ms" % (v[len(v)//2], v[min(len(v)-1, int(len(v)*.99))]))
