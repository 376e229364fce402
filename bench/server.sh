#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# server.sh: load test of the HTTP API server (not a ctest test).
# Generates a profile with >= 10M Instruction rows (bench_server_gen, DuckDB), serves it
# with `neuron-explorer view --disable-ui`, and runs wrk against health and the seed
# workflows' Summary, Instruction-breakdown and source-line-hotspot queries. Prints
# requests/s, p50/p99 latency and the error count per scenario; exits 1 on any error.
#
# Then, single client and warm, each seed query through `_search` against the same SQL
# run by DuckDB directly on the same files (bench_http: each API request, kept alive or on
# a new connection, is followed by one run of the SQL through duckdb_query in the
# client's own process, so a slow spell of the machine lands on both), median of REPS
# pairs (REPS_FAST pairs in ROUNDS_FAST rounds for a query under 20 ms), and by curl.
#
# usage: bench/server.sh [BUILD_DIR]
#   env: ROWS (10000000)  DURATION (15s)  REPS (7)  REPS_FAST (301)  ROUNDS_FAST (3)
#        CONNECTIONS (16)  WRK_THREADS (2)  KEEP=1 keeps the data
# wrk waits up to 60 s per reply: the aggregate queries scan 10M rows and queue behind each
# other on a small machine, which is latency, not an error.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib_server.sh" # nx_hwm_mib, nx_rss_mib
rows=${ROWS:-10000000}
duration=${DURATION:-15s}
conns=${CONNECTIONS:-16}
wthreads=${WRK_THREADS:-2}
bin=$build/neuron-explorer
gen=$build/bench/bench_server_gen
for f in "$bin" "$gen"; do
	[[ -x $f ]] || { echo "missing $f: build the project (ninja -C $build) first" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-server.XXXXXX")
server_pid=
cleanup() {
	[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	[[ ${KEEP:-0} == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT

echo "generating a profile with $rows Instruction rows in $work ..."
t0=$(date +%s.%N)
"$gen" "$work/data" bench "$rows"
printf 'generated in %.1f s (%s)\n' "$(echo "$(date +%s.%N) - $t0" | bc)" \
	"$(du -sh "$work/data" | cut -f1)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" view --data-path "$work/data" --disable-ui --api-server-port "$port" -q \
	>"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 1 100); do
	curl -s "http://127.0.0.1:$port/api/v1/health" 2>/dev/null | grep -q healthy && break
	sleep 0.1
done
base="http://127.0.0.1:$port"

# One wrk scenario; a POST body selects a query. Prints one table row.
errors_total=0
run() {
	local label=$1 url=$2 body=${3:-}
	local lua=$work/req.lua out=$work/wrk.out
	if [[ -n $body ]]; then
		# Lua long brackets keep the JSON body verbatim.
		printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [==[%s]==]\n' \
			"$body" >"$lua"
	else
		printf 'wrk.method = "GET"\n' >"$lua"
	fi
	# Warm the profile's database and DuckDB's caches first.
	curl -s -o /dev/null ${body:+-X POST -H 'Content-Type: application/json' -d "$body"} "$url"
	wrk -t"$wthreads" -c"$conns" -d"$duration" --timeout 60s --latency -s "$lua" "$url" >"$out"
	local rps p50 p99 non2xx sock
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
	p50=$(awk '$1 == "50%" {print $2}' "$out")
	p99=$(awk '$1 == "99%" {print $2}' "$out")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$out")
	sock=$(awk '/Socket errors:/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "$out")
	local errs=$(( ${non2xx:-0} + ${sock:-0} ))
	errors_total=$(( errors_total + errs ))
	printf '%-22s %12s %10s %10s %8s\n' "$label" "$rps" "$p50" "$p99" "$errs"
}

q() { # builds a databaseExplorerQuery body
	printf '{"type":"databaseExplorerQuery","tableName":"%s","query":"%s"}' "$1" "$2"
}

echo "wrk: $wthreads threads, $conns connections, $duration per scenario, $(nproc) cores"
printf '%-22s %12s %10s %10s %8s\n' scenario "requests/s" p50 p99 errors
run health "$base/api/v1/health"
run summary "$base/api/v1/db/bench/_search" "$(q Summary 'SELECT total_time, mfu_estimated_percent, tensor_engine_active_time_percent, vector_engine_active_time_percent, dma_active_time_percent, hbm_read_bytes, hbm_write_bytes FROM Summary')"
run instruction-breakdown "$base/api/v1/db/bench/_search" "$(q Instruction 'SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns, SUM(evt_wait_time_ns) as total_evt_wait_ns FROM Instruction GROUP BY engine, opcode ORDER BY total_dur_ns DESC')"
run source-line-hotspots "$base/api/v1/db/bench/_search" "$(q Instruction 'SELECT bir_debug_info_source_location, engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns FROM Instruction WHERE bir_debug_info_source_location IS NOT NULL GROUP BY bir_debug_info_source_location, engine, opcode ORDER BY total_dur_ns DESC LIMIT 10')"

# Single client, warm: the API against DuckDB alone on the same parquet files.
reps=${REPS:-7}
prof=$work/data/profiles/global/bench@latest
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
curl_new() { # median seconds of one _search request by curl, a new curl and connection each
	local body=$1
	for _ in $(seq 1 "$reps"); do
		curl -s -o /dev/null -w '%{time_total}\n' -X POST -H 'Content-Type: application/json' \
			-d "$body" "$base/api/v1/db/bench/_search"
	done | median
}
paired() { # "api direct ratio": bench_http, each request paired with DuckDB directly
	"$build/bench/bench_http" "$port" /api/v1/db/bench/_search "$1" "$reps" "$2" "$prof" "$3"
}
echo
echo "single client, warm: _search against DuckDB directly on the same files"
echo "(direct: duckdb_query, DuckDB's own path for SQL text, over the same views with the"
echo " server's parquet footer cache, in bench_http's process, alternating with the API"
echo " requests one by one; keep-alive: REPS requests on one connection; new conn: a new"
echo " connection per request, connect to last byte; curl: a new curl per request, with its"
echo " own start-up; ratios: median of the per-pair ratios; queries under 20 ms get"
echo " ROUNDS_FAST rounds of REPS_FAST pairs and the median of the round medians; ratio mem:"
echo " keep-alive against DuckDB on in-memory copies of the small tables the SQL names, as"
echo " the server makes of small tables read often (src/server/resident.h), i.e. the"
echo " server's own cost; last column: rounds x pairs)"
printf '%-22s %9s %10s %12s %10s %9s %9s %9s\n' query "curl s" "new conn s" "keep-alive s" \
	"direct s" "ratio ka" "ratio new" "ratio mem"
cmp() {
	local label=$1 table=$2 sql=$3
	local body reps=$reps rounds=1 lists=$work/cmp c n k d rk rn rmem
	body=$(q "$table" "$sql")
	read -r _ d _ < <(reps=3 paired "$body" ka "$sql")
	if (( $(echo "$d < 0.02" | bc) )); then
		reps=${REPS_FAST:-301} rounds=${ROUNDS_FAST:-3}
	fi
	rm -f "$lists".*
	for _ in $(seq "$rounds"); do
		curl_new "$body" >>"$lists.c"
		paired "$body" new "$sql" >>"$lists.n"
		paired "$body" ka "$sql" >>"$lists.k"
		BENCH_HTTP_RESIDENT=1 paired "$body" ka "$sql" >>"$lists.m"
	done
	c=$(median <"$lists.c")
	n=$(awk '{print $1}' "$lists.n" | median) rn=$(awk '{print $3}' "$lists.n" | median)
	k=$(awk '{print $1}' "$lists.k" | median) rk=$(awk '{print $3}' "$lists.k" | median)
	d=$(awk '{print $2}' "$lists.k" | median) rmem=$(awk '{print $3}' "$lists.m" | median)
	printf '%-22s %9.4f %10.4f %12.4f %10.4f %9.2f %9.2f %9.2f  (%dx%d)\n' "$label" "$c" "$n" \
		"$k" "$d" "$rk" "$rn" "$rmem" "$rounds" "$reps"
}
cmp summary Summary 'SELECT total_time, mfu_estimated_percent, tensor_engine_active_time_percent, vector_engine_active_time_percent, dma_active_time_percent, hbm_read_bytes, hbm_write_bytes FROM Summary'
cmp instruction-breakdown Instruction 'SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns, SUM(evt_wait_time_ns) as total_evt_wait_ns FROM Instruction GROUP BY engine, opcode ORDER BY total_dur_ns DESC'
cmp source-line-hotspots Instruction 'SELECT bir_debug_info_source_location, engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns FROM Instruction WHERE bir_debug_info_source_location IS NOT NULL GROUP BY bir_debug_info_source_location, engine, opcode ORDER BY total_dur_ns DESC LIMIT 10'
# A large result (about 100 MB of JSON, past the 64 MB reply cap) is streamed: the
# server's peak RSS before and after it tells what it cost.
before=$(nx_hwm_mib "$server_pid")
big=$(curl -s -o /dev/null -w '%{size_download} %{time_total}' -X POST -H 'Content-Type: application/json' \
	-d "$(q Instruction 'SELECT * FROM Instruction LIMIT 100000')" "$base/api/v1/db/bench/_search")
echo "large result (Instruction LIMIT 100000): ${big% *} bytes in ${big#* } s; server peak RSS ${before} MiB before, $(nx_hwm_mib "$server_pid") MiB after"
echo "server RSS after the runs: $(nx_rss_mib "$server_pid") MiB (peak $(nx_hwm_mib "$server_pid") MiB)"

if (( errors_total )); then
	echo "FAILED: $errors_total errors (server log: $work/server.err)" >&2
	KEEP=1
	exit 1
fi
echo "zero errors"
