#!/bin/bash
# t5020-counters-bursts.sh: a series of the timeline's counter tracks whose values crowd
# into a burst puts at most 32 of them per pixel under a window that reads tl.ctr (finer
# than the counters' pyramid, tl.ctr_lod): the pyramid's finest level L0 is lowered until
# no series holds more than 32 values in a bucket of the level below it (lod_build.c,
# bound_bursts). The densest series' average over the span alone set L0 at 2^20 ns here,
# where the burst put 52k values in one bucket of 2^19 ns. Also: the counters of a window
# in the burst just finer than L0 and at L0 are the samples' (from the parquet).
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
PY=${NX_PYTHON:-/usr/bin/python3}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5020
PIDS=
e2e_cleanup() { for p in $PIDS; do kill -9 $p; done 2> /dev/null; }
# sem 1: 1,000 values over the second (one per ms) and a burst of 50,000 (one per 10 ns
# from 300 ms on); sem 2: 100 values over the second
e2e_counters_profile "SELECT 0 AS pcore_idx, i * 1000000 AS timestamp, 1 AS id, (i % 7)::DOUBLE AS value FROM range(1000) r(i) UNION ALL SELECT 0, 300000001 + i * 10, 1, (i % 13)::DOUBLE FROM range(50000) r(i) UNION ALL SELECT 0, i * 10000000 + 5, 2, i::DOUBLE FROM range(100) r(i) ORDER BY timestamp"

# L0 = 9: at most 32 of sem 1's values in a bucket of 2^8 ns (27), more in one of 2^9
got=$("$SQL" "ATTACH '$CACHE' AS tl (READ_ONLY)" "SELECT lo, (SELECT max(n) FROM (SELECT count(*) AS n FROM tl.ctr GROUP BY core, track, ts // (1::BIGINT << (m.lo - 1)))), (SELECT max(n) FROM (SELECT count(*) AS n FROM tl.ctr GROUP BY core, track, ts // (1::BIGINT << m.lo))) FROM tl.meta m WHERE src = -1") ||
	fail "reading the cache"
[ "$got" = "9	27	52" ] || fail "the counters' finest level, values per bucket below it and at it: $got"

# windows in the burst: buckets of 2^8 ns (tl.ctr) and 2^9 (L0); per bucket the least,
# greatest and last value are the samples'
e2e_serve srv-2.txt --data-path dp
for w in "t0=300000000&t1=300256000&px=1000" "t0=300000256&t1=300512256&px=1000"; do
	curl -sf "http://127.0.0.1:$PORT/api/v1/profiles/namespace/global/profile_name/p/timeline/counters?$w" > reply.json ||
		fail "window $w: $(cat reply.json)"
	"$PY" - "$SQL" "$P/SemaphoreUpdate.parquet" reply.json << 'EOF' || fail "window $w"
import json, subprocess, sys

sql, parquet, reply = sys.argv[1:4]
r = json.load(open(reply))
t0, t1, b = r["t0"], r["t1"], r["bucket"]
q = (f"SELECT timestamp // {b}, min(value)::BIGINT, max(value)::BIGINT, "
     f"arg_max(value, timestamp)::BIGINT FROM '{parquet}' WHERE id = 1 AND timestamp >= {t0} "
     f"AND timestamp < {t1} GROUP BY ALL ORDER BY ALL")
out = subprocess.run([sql, q], capture_output=True, text=True, check=True).stdout
want = [[int(x) for x in l.split("\t")] for l in out.splitlines()]
s = [s for s in r["series"] if s["track"] == "sem 1"][0]
got = [[int(ts) // b, lo, hi, last] for ts, lo, hi, last in zip(s["ts"], s["lo"], s["hi"], s["last"])]
if got != want or len(want) < 900:
    sys.exit(f"bucket {b}: {len(got)} buckets, want {len(want)}; first {got[:2]} / {want[:2]}")
EOF
done
kill $S; wait $S 2> /dev/null
exit 0
