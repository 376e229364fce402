#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ui_pages.sh: latency of the requests the web UI's pages send (not a ctest test). Times
# each request with curl (N runs, p50 and max): the profiles page (list, tables, facts of
# one profile, its bottleneck from recommend's bounds), the profile page (Summary row and
# its schema, the profiles for "Compare with…", recommend's bounds for the headline and
# the engine bars, the timeline's tracks and first whole-profile view with its counters,
# then the small-DMA band, which follows the view), the timeline's operator table of a
# tenth of the profile, the Analysis page (the instruction count, then the `recommend`
# analysis), the source view's per-line summary (and, for comparison, the aggregate over
# Instruction it replaces) and one line's opcodes, and the SQL page's first page, page
# 1000 and count of SELECT * FROM Instruction. "overview data" adds up the p50s of the
# profile page's requests before the band (the page sends some of them at once, so this
# is an upper bound).
#
# Against a running server when API (http://127.0.0.1:PORT) and PROFILE are set (as
# bench/ui_timeline.sh does); else on a synthetic profile of ROWS Instruction rows with
# source locations on 200 lines, written with nx-sql and served here.
#
# usage: bench/ui_pages.sh [BUILD_DIR]    env: API, PROFILE | ROWS (10000000); N (5)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
n=${N:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-pages.XXXXXX")
. "$(cd "$(dirname "$0")" && pwd)/lib_server.sh"
trap 'nx_serve_stop; rm -rf "$work"' EXIT
api=${API:-}
name=${PROFILE:-big}
if [[ -z $api ]]; then
	rows=${ROWS:-10000000}
	dir=$work/data/profiles/global/big@latest
	mkdir -p "$dir"
	t=$(date +%s.%N)
	(cd "$dir" && "$build/nx-sql" "COPY (SELECT i AS id, 0::BIGINT AS pcore_idx,
		(['Tensor','Vector','Scalar','GpSimd','Sync'])[1 + (i % 5)::INT] AS engine,
		(['Tensor','Vector','Scalar','GpSimd','Sync'])[1 + (i % 5)::INT] AS timeline_track,
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
	nx_serve "$build" "$work/view.out" --data-path "$work/data" -q
	api=$nx_api
fi
base="$api/api/v1/profiles/namespace/global/profile_name/$name"
search() { # body -> seconds
	curl -sf -o "$work/r.json" -w '%{time_total}' -X POST -H 'Content-Type: application/json' \
		-d "$1" "$api/api/v1/db/$name/_search"
}
get() { curl -sf -o "$work/r.json" -w '%{time_total}' "$1"; }
q() { printf '{"type":"databaseExplorerQuery","query":"%s"}' "$1"; }
loc="coalesce(bir_debug_info_source_location, nki_source_location)"
echo "first request (opens the database): $(search "$(q 'SELECT 1')") s"
# the whole profile's span, for the first timeline view
get "$base/timeline/tracks" > /dev/null
span=$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1])).rows.filter((x) => x[0] !== "counter");
	console.log(Math.min(...r.map((x) => x[4])), Math.max(...r.map((x) => x[5])))' "$work/r.json")
t0=${span% *}
t1=${span#* }
printf '%-34s %8s %8s %10s\n' request p50_ms max_ms reply_bytes
: > "$work/overview"
bench() { # label (kind: post|get) body-or-url [overview]
	: > "$work/times"
	for _ in $(seq "$n"); do
		if [[ $2 == get ]]; then get "$3"; else search "$3"; fi >> "$work/times"
		echo >> "$work/times"
	done
	sort -n "$work/times" | awk -v l="$1" -v b="$(stat -c %s "$work/r.json")" -v o="${4:-}" \
		-v of="$work/overview" '{ v[NR] = $1 * 1000 } END {
		printf "%-34s %8.1f %8.1f %10d\n", l, v[int((NR + 1) / 2)], v[NR], b
		if (o) printf "%f\n", v[int((NR + 1) / 2)] >> of }'
}
bench "profiles: list" get "$api/api/v1/profiles"
bench "profiles: listDbFiles" post '{"type":"listDbFiles"}'
bench "profiles: facts" post "$(q "SELECT (SELECT count(*) FROM Instruction) AS instructions, (SELECT total_time FROM Summary LIMIT 1) AS total_time, (SELECT neff_name FROM ExecutionInfo LIMIT 1) AS kernel")"
bench "profiles: bottleneck (bounds)" get "$base/analysis?part=bounds"
bench "overview: Summary" post "$(q 'SELECT * FROM Summary LIMIT 1')" o
bench "overview: tableSchema" post '{"type":"tableSchema","tableName":"Summary"}' o
bench "overview: compare-with list" get "$api/api/v1/profiles" o
bench "overview: bounds (headline)" get "$base/analysis?part=bounds" o
bench "overview: timeline tracks" get "$base/timeline/tracks" o
bench "overview: timeline, whole view" get "$base/timeline?t0=$t0&t1=$t1&px=1200&dma=transfers" o
bench "overview: counters, whole view" get "$base/timeline/counters?t0=$t0&t1=$t1&px=1200" o
awk '{ s += $1 } END { printf "%-34s %8.1f   (sum of the p50s above)\n", "overview data", s }' "$work/overview"
bench "overview: small-DMA band" get "$base/timeline/small-dma?t0=$t0&t1=$t1&px=1200"
tenth=$((t0 + (t1 - t0) / 10))
bench "operators: per label, a tenth" get "$base/timeline/aggregate?t0=$t0&t1=$tenth"
bench "operators: per line, a tenth" get "$base/timeline/lines?t0=$t0&t1=$tenth"
bench "analysis: has instructions" post "$(q 'SELECT count(*) FROM Instruction')"
n=1 bench "analysis: recommend" get "$base/analysis"
bench "source: per-line summary" get "$base/timeline/lines"
bench "source: per-line aggregate (scan)" post "$(q "SELECT loc, count(*) AS n, sum(duration_ns)::BIGINT AS dur, min(start_ts) AS t0, max(end_ts) AS t1 FROM (SELECT $loc AS loc, duration_ns, start_ts, end_ts FROM Instruction) WHERE loc IS NOT NULL GROUP BY loc ORDER BY dur DESC LIMIT 20000")"
# one line's opcodes, bounded by the line's time span as the page does (here a tenth of the profile)
bench "source: one line's opcodes" post "$(q "SELECT engine, opcode, count(*) AS n, sum(duration_ns)::BIGINT AS dur FROM Instruction WHERE start_ts <= $((t0 + (t1 - t0) / 10)) AND end_ts >= $t0 AND $loc IN ('kernels/big.py:42') GROUP BY ALL ORDER BY dur DESC LIMIT 50")"
bench "sql: page 1 of SELECT *" post "$(q 'SELECT * FROM (\nSELECT * FROM Instruction\n) AS nx_page LIMIT 101 OFFSET 0')"
bench "sql: page 1000 of SELECT *" post "$(q 'SELECT * FROM (\nSELECT * FROM Instruction\n) AS nx_page LIMIT 101 OFFSET 99900')"
bench "sql: count of SELECT *" post "$(q 'SELECT count(*) AS n FROM (\nSELECT * FROM Instruction\n) AS nx_count')"
