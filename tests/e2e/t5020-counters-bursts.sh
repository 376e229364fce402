#!/bin/bash
# t5020-counters-bursts.sh: a series of the timeline's counter tracks whose values crowd
# into a burst puts at most 32 of them per pixel under a window finer than the counters'
# pyramid (tl.ctr_lod), and the levels below its finest one cost rows only where the burst
# is (lod_build.c, build_counter_levels): L0 (2^20 ns here) comes from the densest series'
# average; the burst put 52k values in one bucket of 2^19 ns, so the rows of the series'
# buckets of 2^19 ns holding more than 32 move to tl.ctr_burst, whose own levels go down
# to 2^9 ns (at most 32 in a bucket of 2^8). Also: the counters of windows at every width
# from 2^6 to 2^22 ns over the burst, its edges and the sparse values (tl.ctr and
# tl.ctr_burst raw, the bursts' levels with tl.ctr, the pyramid) are the samples' (from
# the parquet), the value before the window included.
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

q() { "$SQL" "ATTACH '$CACHE' AS tl (READ_ONLY)" "$1" || fail "reading the cache: $1"; }
# the pyramid's levels (src -1) and the bursts' (src -2): L0 20, the bursts' 9..19
got=$(q "SELECT string_agg(src || ' ' || n || ' ' || lo || ' ' || hi, ', ' ORDER BY src) FROM tl.meta WHERE src < 0")
[ "$got" = "-2 50001 9 19, -1 51100 20 31" ] || fail "the counters' levels: $got"
# at most 32 of sem 1's values in a bucket of 2^8 ns (27), more in one of 2^9; in
# tl.ctr, at most 32 of a series in a bucket of 2^19; tl.ctr_burst: the two buckets of
# 2^19 of the burst, whole
got=$(q "WITH a AS (SELECT * FROM tl.ctr UNION ALL SELECT * FROM tl.ctr_burst) SELECT (SELECT max(n) FROM (SELECT count(*) AS n FROM a GROUP BY core, track, ts // 256)), (SELECT max(n) FROM (SELECT count(*) AS n FROM a GROUP BY core, track, ts // 512)), (SELECT max(n) FROM (SELECT count(*) AS n FROM tl.ctr GROUP BY core, track, ts // (1 << 19))), (SELECT count(*) || ' ' || min(ts // (1 << 19)) || ' ' || max(ts // (1 << 19)) || ' ' || min(track) || ' ' || max(track) FROM tl.ctr_burst), (SELECT count(*) FROM a)")
[ "$got" = "27	52	1	50001 572 573 sem 1 sem 1	51100" ] ||
	fail "values per bucket (2^8, 2^9 ns; tl.ctr's at 2^19), tl.ctr_burst, all: $got"
# the levels below L0 hold the burst's buckets only: each of them within the two of 2^19
got=$(q "SELECT count(*), count(DISTINCT level), min(level), max(level), sum(CASE WHEN track = 'sem 1' AND k // (1::BIGINT << (19 - level::INTEGER)) IN (572, 573) THEN 1 ELSE 0 END) FROM tl.ctr_lod WHERE level < 20")
n=${got%%	*}
[ "$got" = "$n	11	9	19	$n" ] && [ "$n" -lt 5000 ] || fail "the bursts' levels (rows, levels, least, greatest, in the burst): $got"

# windows over the burst, its start and the sparse values, at every width; per bucket
# the least, greatest and last value and the value before the window are the samples'
e2e_serve srv-2.txt --data-path dp
for b in 6 8 9 10 12 15 18 19 20 21 22; do
	w=$((1000 << b))
	for a in $((300000000 / w * w)) $((300250000 / w * w)) $((700000000 / w * w)); do
		x="t0=$a&t1=$((a + w))&px=1000"
		curl -sf "http://127.0.0.1:$PORT/api/v1/profiles/namespace/global/profile_name/p/timeline/counters?$x" > reply.json ||
			fail "window $x: $(cat reply.json)"
		"$PY" - "$SQL" "$P/SemaphoreUpdate.parquet" reply.json $((1 << b)) << 'EOF' || fail "window $x"
import json, subprocess, sys

sql, parquet, reply, want_b = sys.argv[1:5]
r = json.load(open(reply))
t0, t1, b = r["t0"], r["t1"], r["bucket"]
if b != int(want_b):
    sys.exit(f"bucket {b}, want {want_b}")
q = (f"SELECT 'sem ' || id, timestamp // {b}, min(value)::BIGINT, max(value)::BIGINT, "
     f"arg_max(value, timestamp)::BIGINT FROM '{parquet}' WHERE timestamp >= {t0} "
     f"AND timestamp < {t1} GROUP BY ALL ORDER BY ALL")
out = subprocess.run([sql, q], capture_output=True, text=True, check=True).stdout
want = {}
for l in out.splitlines():
    f = l.split("\t")
    want.setdefault(f[0], []).append([int(x) for x in f[1:]])
q = (f"SELECT 'sem ' || id, arg_max(value, timestamp)::BIGINT FROM '{parquet}' WHERE "
     f"timestamp >= {2 * t0 - t1} AND timestamp < {t0} GROUP BY ALL")
out = subprocess.run([sql, q], capture_output=True, text=True, check=True).stdout
before = {l.split("\t")[0]: int(l.split("\t")[1]) for l in out.splitlines()}
got = {s["track"]: [[int(ts) // b, lo, hi, last] for ts, lo, hi, last in
                    zip(s["ts"], s["lo"], s["hi"], s["last"])] for s in r["series"]}
got_before = {s["track"]: s["before"] for s in r["series"] if s["before"] is not None}
for k in set(want) | set(got):
    if got.get(k, []) != want.get(k, []):
        g, w = got.get(k, []), want.get(k, [])
        sys.exit(f"{k} bucket {b}: {len(g)} buckets, want {len(w)}; first {g[:2]} / {w[:2]}")
if got_before != before:
    sys.exit(f"bucket {b}: before {got_before}, want {before}")
EOF
	done
done
kill $S; wait $S 2> /dev/null
exit 0
