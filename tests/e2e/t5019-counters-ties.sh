#!/bin/bash
# t5019-counters-ties.sh: the last value of the timeline's counter tracks where samples of
# one series share their time (a real NKI kernel updates 16 semaphores at one ns) is the
# greatest of them (lod.h, NX_LOD_LAST_SQL; NULL above NaN above every number), at every
# level of the cache's counters' pyramid (tl.ctr_lod) and in the server's replies, from
# the pyramid, from tl.ctr's rows (a window finer than the pyramid) and from the profile's
# table (before the cache is there), the value before the window included. arg_max by the
# time alone took the first of the tied rows as they came. The expected values are worked
# out here from the samples by another query: of the samples at the bucket's latest time,
# NULL if one is NULL, else the greatest. tl.ctr holds one row per series and time, its
# samples' last value, least, greatest and count (cache format 11; a row per sample
# before), so the replies' least and greatest values of the tied samples are
# checked too.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
PY=${NX_PYTHON:-/usr/bin/python3}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5019
PIDS=
e2e_cleanup() { for p in $PIDS; do kill -9 $p; done 2> /dev/null; }
# sem 1: 8 samples at each time (every 100 ns), the greatest (7) at a place that moves
# from one time to the next; a NaN among them at every 50th time, a NULL at every 50th
# other; sem 2: one sample per time, beside
PROFILE="SELECT 0 AS pcore_idx, (i // 8) * 100 AS timestamp, 1 AS id, CASE WHEN i % 400 = 3 THEN 'nan'::DOUBLE WHEN i % 400 = 205 THEN NULL ELSE ((i * 5 + (i // 8) * 3) % 8)::DOUBLE END AS value FROM range(20000) r(i) UNION ALL SELECT 0, i * 100 + 50, 2, (i % 10)::DOUBLE FROM range(2500) r(i) ORDER BY timestamp"

# windows from tl.ctr (buckets of 64 and 2^11 ns), at and above the pyramid's finest
# level (2^12 here: 32 of sem 1's 2,500 times, tl.ctr's rows, per bucket over 250,000 ns),
# and the whole span
WINDOWS="t0=64000&t1=128000&px=1000 t0=131072&t1=196608&px=32
	t0=131072&t1=196608&px=16 t0=0&t1=262144&px=16"
# check PORT: every window's reply against the samples
check() {
	for w in $WINDOWS; do
		curl -sf "http://127.0.0.1:$1/api/v1/profiles/namespace/global/profile_name/p/timeline/counters?$w" > reply.json ||
			fail "window $w: $(cat reply.json)"
		"$PY" - "$SQL" "$P/SemaphoreUpdate.parquet" reply.json << 'EOF' || fail "window $w"
import json, subprocess, sys

sql, parquet, reply = sys.argv[1:4]
r = json.load(open(reply))
t0, t1, b = r["t0"], r["t1"], r["bucket"]
back = t0 - (t1 - t0)


def lasts(key, lo, hi):
    # per series and key (the bucket, or 0 before the window): of the samples at the
    # latest time, NULL if one is NULL or NaN (the reply writes both as null), else the
    # greatest; and the least and greatest of all (DuckDB's: NULL left out, NaN above
    # every number)
    num = "CASE WHEN x IS NULL OR isnan(x) THEN 'null' ELSE x::BIGINT::VARCHAR END"
    q = (f"WITH s AS (SELECT 'sem ' || id AS track, timestamp AS ts, {key} AS k, value AS v "
         f"FROM '{parquet}' WHERE timestamp >= {lo} AND timestamp < {hi}), "
         f"m AS (SELECT track, k, max(ts) AS mt, min(v) AS lo, max(v) AS hi FROM s "
         f"GROUP BY ALL) "
         f"SELECT track, k, CASE WHEN bool_or(v IS NULL OR isnan(v)) THEN 'null' ELSE "
         f"max(v)::BIGINT::VARCHAR END, {num.replace('x', 'any_value(m.lo)')}, "
         f"{num.replace('x', 'any_value(m.hi)')} FROM s JOIN m USING (track, k) "
         f"WHERE ts = mt GROUP BY ALL ORDER BY ALL")
    out = subprocess.run([sql, q], capture_output=True, text=True, check=True).stdout
    return {(t, int(k)): v for t, k, *v in (l.split("\t") for l in out.splitlines())}


def num(v):
    return "null" if v is None else str(int(v))


inside = lasts(f"timestamp // {b}", t0, t1)
before = lasts("0", back, t0)
seen = False
for s in r["series"]:
    got = {(s["track"], int(ts) // b): [num(v), num(lo), num(hi)]
           for ts, v, lo, hi in zip(s["ts"], s["last"], s["lo"], s["hi"])}
    want = {k: v for k, v in inside.items() if k[0] == s["track"]}
    if got != want:
        bad = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        sys.exit(f"{s['track']}: {len(bad)} buckets differ, first {bad[0]}: "
                 f"got {got.get(bad[0])}, want {want.get(bad[0])}")
    b4 = num(s["before"])
    if b4 != before.get((s["track"], 0), ["null"])[0]:
        sys.exit(f"{s['track']}: before {b4}, want {before.get((s['track'], 0))}")
    seen += s["track"] == "sem 1" and len(want) > 0
if not seen:
    sys.exit("no bucket of sem 1")
EOF
	done
}

# before the cache is there (the profile's table, or the cache if it was quick)
e2e_counters_profile "$PROFILE" check

# tl.ctr: per series and time one row, the samples' last value (NULL if one is NULL,
# else the greatest), their least and greatest (NULL where that is the last) and their
# count (NULL where it is 1); and the pyramid: at every
# level, per series and bucket, the last value and its time are those of the samples
# (the levels above the finest folded in C)
S_SQL="SELECT pcore_idx::BIGINT AS core, 'sem ' || id AS track, timestamp AS ts, value AS v FROM '$P/SemaphoreUpdate.parquet'"
got=$("$SQL" "ATTACH '$CACHE' AS tl (READ_ONLY)" "WITH s AS ($S_SQL), g AS (SELECT core, track, ts, min(v) AS lo, max(v) AS hi, CASE WHEN bool_or(v IS NULL) THEN NULL ELSE max(v) END AS last, count(*) AS n FROM s GROUP BY ALL) SELECT count(*), count(c.ts), count(g.ts) FROM g FULL JOIN tl.ctr c USING (core, track, ts) WHERE coalesce(c.lo, c.last) IS DISTINCT FROM g.lo OR coalesce(c.hi, c.last) IS DISTINCT FROM g.hi OR c.last IS DISTINCT FROM g.last OR coalesce(c.n, 1) IS DISTINCT FROM g.n") ||
	fail "reading tl.ctr"
[ "$got" = "0	0	0" ] || fail "tl.ctr's rows differing from the samples' (all, in tl.ctr, of the samples): $got"
got=$("$SQL" "ATTACH '$CACHE' AS tl (READ_ONLY)" "WITH s AS ($S_SQL), lv AS (SELECT unnest(range(lo, hi + 1)) AS level FROM tl.meta WHERE src = -1), b AS (SELECT level, core, track, ts // (1::BIGINT << level) AS k, max(ts) AS mt FROM s, lv GROUP BY ALL), e AS (SELECT level, b.core, b.track, k, mt, CASE WHEN bool_or(v IS NULL) THEN NULL ELSE max(v) END AS v FROM b JOIN s c ON c.core = b.core AND c.track = b.track AND c.ts = b.mt GROUP BY ALL) SELECT (SELECT count(*) FROM e FULL JOIN tl.ctr_lod l USING (level, core, track, k) WHERE l.last IS DISTINCT FROM e.v OR l.last_ts IS DISTINCT FROM e.mt), (SELECT count(DISTINCT level) FROM tl.ctr_lod), (SELECT min(level) FROM tl.ctr_lod)") ||
	fail "reading the cache"
[ "$got" = "0	8	12" ] || fail "the pyramid (rows differing, levels, finest level): $got"

# from the cache
e2e_serve srv-2.txt --data-path dp
check $PORT
kill $S; wait $S 2> /dev/null
exit 0
