#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ui_pages.sh: latency of the queries the web UI's pages issue (not a ctest test), on a
# synthetic profile of ROWS Instruction rows with source locations (200 lines of one
# file), written with nx-sql and served by `neuron-explorer view`. Times each request
# (curl, N runs, p50 and max): the profiles page's facts, the overview's Summary, schema
# and engine bars, the source view's per-line aggregate and one line's opcodes, and the
# SQL page's first page and count of SELECT * FROM Instruction.
#
# usage: bench/ui_pages.sh [BUILD_DIR]    env: ROWS (10000000)  N (5 runs per request)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rows=${ROWS:-10000000}
n=${N:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-pages.XXXXXX")
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
dir=$work/data/profiles/global/big@latest
mkdir -p "$dir"
t=$(date +%s.%N)
(cd "$dir" && "$build/nx-sql" "COPY (SELECT i AS id, 0::BIGINT AS pcore_idx,
	(['Tensor','Vector','Scalar','GpSimd','Sync'])[1 + (i % 5)::INT] AS engine,
	(['MATMUL','LDWEIGHTS','ACTIVATE','TENSOR_TENSOR','IOTA'])[1 + (hash(i) % 5)::INT] AS opcode,
	(i * 8)::BIGINT AS start_ts, (i * 8 + 5 + hash(i * 7) % 60)::BIGINT AS end_ts,
	(5 + hash(i * 7) % 60)::BIGINT AS duration_ns,
	'kernels/big.py:' || (10 + hash(i * 3) % 200)::VARCHAR AS bir_debug_info_source_location,
	NULL::VARCHAR AS nki_source_location
	FROM range($rows) t(i) ORDER BY start_ts) TO 'Instruction.parquet' (FORMAT parquet)" >/dev/null
 "$build/nx-sql" "COPY (SELECT ($rows * 8e-9)::DOUBLE AS total_time, $rows::BIGINT AS event_count)
	TO 'Summary.parquet' (FORMAT parquet)" >/dev/null
 "$build/nx-sql" "COPY (SELECT e AS engine, 0::BIGINT AS pcore_idx, (i * 1000)::BIGINT AS start_ts,
	(i * 1000 + 900)::BIGINT AS end_ts, 900::BIGINT AS duration_ns
	FROM range($rows // 1000) t(i), (VALUES ('tensor'), ('vector'), ('scalar')) v(e))
	TO 'ActiveTime.parquet' (FORMAT parquet)" >/dev/null
 "$build/nx-sql" "COPY (SELECT 1 AS execution_index, 'big' AS neff_name) TO 'ExecutionInfo.parquet'
	(FORMAT parquet)" >/dev/null)
echo "generated $rows rows in $(echo "$(date +%s.%N) - $t" | bc) s ($(du -sh "$dir" | cut -f1))"
"$build/neuron-explorer" view --data-path "$work/data" --port 0 --api-server-port 0 -q \
	> "$work/view.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "ctrl-c" "$work/view.out" && break; sleep 0.1; done
api=$(sed -n 's|^\(Ready: \)\{0,1\}API server listening on \(http://127.0.0.1:[0-9]*\)/api/v1 .*|\2|p' "$work/view.out")
search() { # body -> seconds
	curl -sf -o "$work/r.json" -w '%{time_total}' -X POST -H 'Content-Type: application/json' \
		-d "$1" "$api/api/v1/db/big/_search"
}
q() { printf '{"type":"databaseExplorerQuery","query":"%s"}' "$1"; }
loc="coalesce(bir_debug_info_source_location, nki_source_location)"
echo "first request (opens the database): $(search "$(q 'SELECT 1')") s"
printf '%-28s %8s %8s %10s\n' request p50_ms max_ms reply_bytes
bench() { # label body
	: > "$work/times"
	for _ in $(seq "$n"); do search "$2" >> "$work/times"; echo >> "$work/times"; done
	sort -n "$work/times" | awk -v l="$1" -v b="$(stat -c %s "$work/r.json")" \
		'{ v[NR] = $1 * 1000 } END { printf "%-28s %8.1f %8.1f %10d\n", l, v[int((NR + 1) / 2)], v[NR], b }'
}
bench "profiles: listDbFiles" '{"type":"listDbFiles"}'
bench "profiles: facts" "$(q "SELECT (SELECT count(*) FROM Instruction) AS instructions, (SELECT total_time FROM Summary LIMIT 1) AS total_time, (SELECT engine FROM ActiveTime GROUP BY engine ORDER BY SUM(duration_ns) DESC LIMIT 1) AS bottleneck, (SELECT neff_name FROM ExecutionInfo LIMIT 1) AS kernel")"
bench "overview: Summary" "$(q 'SELECT * FROM Summary LIMIT 1')"
bench "overview: tableSchema" '{"type":"tableSchema","tableName":"Summary"}'
bench "overview: engine bars" "$(q 'SELECT engine, SUM(duration_ns) AS busy_ns, COUNT(*) AS intervals FROM ActiveTime GROUP BY engine ORDER BY busy_ns DESC')"
bench "source: per-line aggregate" "$(q "SELECT loc, count(*) AS n, sum(duration_ns)::BIGINT AS dur, min(start_ts) AS t0, max(end_ts) AS t1 FROM (SELECT $loc AS loc, duration_ns, start_ts, end_ts FROM Instruction) WHERE loc IS NOT NULL GROUP BY loc ORDER BY dur DESC LIMIT 20000")"
bench "source: one line's opcodes" "$(q "SELECT engine, opcode, count(*) AS n, sum(duration_ns)::BIGINT AS dur FROM Instruction WHERE $loc IN ('kernels/big.py:42') GROUP BY ALL ORDER BY dur DESC LIMIT 50")"
bench "sql: page 1 of SELECT *" "$(q 'SELECT * FROM (\nSELECT * FROM Instruction\n) AS nx_page LIMIT 101 OFFSET 0')"
bench "sql: page 1000 of SELECT *" "$(q 'SELECT * FROM (\nSELECT * FROM Instruction\n) AS nx_page LIMIT 101 OFFSET 99900')"
bench "sql: count of SELECT *" "$(q 'SELECT count(*) AS n FROM (\nSELECT * FROM Instruction\n) AS nx_count')"
