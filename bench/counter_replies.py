#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# counter_replies.py: the replies of a running server's .../timeline/counters at every
# bucket width (not a ctest test): per power of two b from 1 ns to past the value tracks'
# span, the window of PX buckets of 2^b ns centred on the span, asked REPEAT times; prints
# per width the status, the bytes and SHA-256 of the reply, and, given the server's PID,
# the CPU ms each request took (user + system, from /proc: it holds on a loaded machine)
# and the server's VmHWM after it; then one SHA-256 over every reply, so two builds or
# caches that answer the same bytes print the same total (docs/memory.md, "The counters'
# pyramid from the densest series").
# usage: bench/counter_replies.py PORT PROFILE PX REPEAT [PID]
import hashlib, json, os, sys, urllib.error, urllib.request

port, name, px, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pid = sys.argv[5] if len(sys.argv) > 5 else None
base = f"http://127.0.0.1:{port}/api/v1/profiles/namespace/global/profile_name/{name}"
hz = os.sysconf("SC_CLK_TCK")


def get(p):
    try:
        with urllib.request.urlopen(base + p) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def cpu_ms():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 // hz


def hwm_mib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024


st, body = get("/timeline/tracks")
tracks = json.loads(body)
cols = [c["name"] for c in tracks["columns"]]
rows = [r for r in tracks["rows"] if r[cols.index("kind")] == "counter"]
if st != 200 or not rows:
    sys.exit(f"no value tracks: {st} {body[:200]!r}")
t0 = min(int(r[cols.index("start")]) for r in rows)
t1 = max(int(r[cols.index("end")]) for r in rows)
mid = (t0 + t1) // 2
total = hashlib.sha256()
print("bucket_log2 status bytes sha256[:16] cpu_ms(each) hwm_mib")
b = 0
while True:
    w = px << b
    a = mid - w // 2
    path = f"/timeline/counters?t0={a}&t1={a + w}&px={px}"
    cpus = []
    for _ in range(repeat):
        c0 = cpu_ms() if pid else 0
        st, body = get(path)
        cpus.append(cpu_ms() - c0 if pid else 0)
    total.update(path.encode() + str(st).encode() + body)
    sha = hashlib.sha256(body).hexdigest()[:16]
    print(b, st, len(body), sha, ",".join(map(str, cpus)),
          "%.1f" % hwm_mib() if pid else "-", flush=True)
    if w > 2 * (t1 - t0):
        break
    b += 1
print("all", total.hexdigest())
