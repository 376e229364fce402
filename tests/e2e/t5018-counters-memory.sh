#!/bin/bash
# t5018-counters-memory.sh: the timeline's counter tracks (.../timeline/counters) of a
# profile whose one dense semaphore sits beside many sparse ones (as a real NKI kernel's
# do) answer within the server's 32MB pool of the timeline cache, and the same bytes as
# under a 1GB limit. The query used to hold every row of the window (a materialised CTE)
# and got a 503 memory_limit. The pyramid's finest level is set by the densest series
# (32 of its values per bucket on average: 2^15 ns here), not by the average one (2^20,
# when a window just finer than it read the dense series' whole span raw).
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5018
PIDS=
e2e_cleanup() { for p in $PIDS; do kill -9 $p; done 2> /dev/null; }
# semaphore 1: a million updates, one per us; semaphores 2..31: 100 each
e2e_counters_profile "SELECT 0 AS pcore_idx, i * 1000 AS timestamp, 1 AS id, (i % 100)::DOUBLE AS value FROM range(1000000) r(i) UNION ALL SELECT 0, i * 10000000 + s, s, s::DOUBLE FROM range(100) r(i), range(2, 32) t(s) ORDER BY timestamp"

# the counters of windows at the pyramid's finest level (2^15 ns), just finer (2^14; at
# px 16384 half a million raw rows with the look-back), finer still, at the level the
# average series gave (2^20) and just finer (2^19), and the whole span
WINDOWS="t0=32768000&t1=65536000&px=1000 t0=16384000&t1=32768000&px=1000
	t0=268435456&t1=536870912&px=16384 t0=600000000&t1=600100000&px=1000
	t0=0&t1=1048576000&px=1000 t0=524288000&t1=1048576000&px=1000 t0=0&t1=2000000000&px=1000"
NWIN=7
counters() { # port: every window's reply and status
	for w in $WINDOWS; do
		curl -s -w ' %{http_code}\n' "http://127.0.0.1:$1/api/v1/profiles/namespace/global/profile_name/p/timeline/counters?$w"
	done
}

NX_SERVER_MEMORY_LIMIT=1GB e2e_serve srv-2.txt --data-path dp
want=$(counters $PORT)
kill $S; wait $S 2> /dev/null
[ "$(echo "$want" | grep -c ' 200$')" = $NWIN ] || fail "under 1GB: $(echo "$want" | cut -c1-300)"
echo "$want" | grep -q '"track":"sem 1","before":' || fail "no dense series: $(echo "$want" | head -c 300)"
echo "$want" | sed -n 3p | grep -q '"track":"sem 1","before":[0-9]' || fail "no value before the window: $(echo "$want" | sed -n 3p | head -c 300)"
echo "$want" | sed -n 3p | grep -q '"bucket":16384,' ||
	fail "window 2 not at 2^14: $(echo "$want" | sed -n 3p | head -c 100)"
# the pyramid's levels: from the densest series' 10^6 values over the span of 10^9 ns,
# 32 per bucket of 2^15 ns on average (the 31 series' average gave 2^20)
levels=$("$SQL" "ATTACH '$CACHE' AS tl (READ_ONLY)" "SELECT lo, hi FROM tl.meta WHERE src = -1") ||
	fail "reading the cache's levels"
[ "$(echo $levels)" = "15 31" ] || fail "the counters' levels: $levels"

e2e_serve srv-3.txt --data-path dp
got=$(counters $PORT)
[ "$got" = "$want" ] || fail "under the default 32MB pool: $(echo "$got" | grep -v ' 200$' | cut -c1-300)"
grep -q memory_limit srv-3.txt && fail "memory_limit in the log: $(grep memory_limit srv-3.txt)"
kill $S; wait $S 2> /dev/null
exit 0
