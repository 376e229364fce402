#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ui_session_rss.sh: the server's memory through what the web UI requests when a user opens a
# profile (not a ctest test). Serves DATA_PATH with `neuron-explorer view` and sends, in the
# UI's order: the profile list, the tables (with their rows: the instruction count), the
# profile's facts (SystemProfileEvents, Summary, ExecutionInfo), recommend's bounds, the
# Summary row and its schema, the timeline's tracks, the whole-profile timeline and
# counters, then the Analysis page (the tables again for its instruction count, and the
# `recommend` analysis), then a count(*) of Instruction through SQL (the first query naming
# it: the server cuts a large file into slices then) and a narrow SQL page over Instruction
# (a WHERE on start_ts over a hundredth of the profile). After each request: its time, the
# server's CPU time it took (user + system, ms: what holds on a loaded machine), RSS and peak
# RSS (VmRSS, VmHWM). The profile is only read: serve a hard-linked
# copy (`cp -al`) of one whose timeline cache was built, or the first tracks request builds
# it (and that build's peak shows).
#
# usage: bench/ui_session_rss.sh [BUILD_DIR] DATA_PATH PROFILE
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
data=${2:?usage: bench/ui_session_rss.sh [BUILD_DIR] DATA_PATH PROFILE}
name=${3:?usage: bench/ui_session_rss.sh [BUILD_DIR] DATA_PATH PROFILE}
. "$(cd "$(dirname "$0")" && pwd)/lib_server.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-session.XXXXXX")
trap 'nx_serve_stop; rm -rf "$work"' EXIT
nx_serve "$build" "$work/view.out" --data-path "$data" --disable-ui
api=$nx_api
base="$api/api/v1/profiles/namespace/global/profile_name/$name"
mem() { printf '%7s %7s' "$(nx_rss_mib "$nx_pid")" "$(nx_hwm_mib "$nx_pid")"; }
last_cpu=0
step() { # label, then curl arguments
	local label=$1 t now
	shift
	t=$(curl -sf -o "$work/r.json" -w '%{time_total}' "$@") || { echo "$label: request failed" >&2; exit 1; }
	now=$(nx_cpu_ms "$nx_pid")
	printf '%-30s %9.1f %7d %s %9d\n' "$label" "$(echo "$t * 1000" | bc)" $((now - last_cpu)) \
		"$(mem)" "$(stat -c %s "$work/r.json")"
	last_cpu=$now
}
q() { step "$1" -X POST -H 'Content-Type: application/json' \
	-d "$(printf '{"type":"databaseExplorerQuery","query":"%s"}' "$2")" "$api/api/v1/db/$name/_search"; }
echo "load average: $(nx_load), $(nproc) cores"
printf '%-30s %9s %7s %7s %7s %9s\n' request ms cpu_ms rss_MB peak_MB bytes
last_cpu=$(nx_cpu_ms "$nx_pid")
printf '%-30s %9s %7d %s\n' "(server started)" - "$last_cpu" "$(mem)"
step "profiles: list" "$api/api/v1/profiles"
step "profiles: tables" -X POST -H 'Content-Type: application/json' -d '{"type":"listDbFiles"}' \
	"$api/api/v1/db/$name/_search"
q "profiles: facts" "SELECT 1 AS one, (SELECT count(*) FROM SystemProfileEvents) AS fw_events, (SELECT max(end_ts) - min(start_ts) FROM SystemProfileEvents WHERE duration_ns > 0) AS fw_span_ns, (SELECT min(instance_id) FROM SystemProfileEvents) AS fw_instance, (SELECT total_time FROM Summary LIMIT 1) AS total_time, (SELECT neff_name FROM ExecutionInfo LIMIT 1) AS kernel"
step "profiles: bounds" "$base/analysis?part=bounds"
q "overview: Summary" "SELECT * FROM Summary LIMIT 1"
step "overview: tableSchema" -X POST -H 'Content-Type: application/json' \
	-d '{"type":"tableSchema","tableName":"Summary"}' "$api/api/v1/db/$name/_search"
step "timeline: tracks" "$base/timeline/tracks"
span=$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1])).rows.filter((x) => x[0] !== "counter");
	console.log(Math.min(...r.map((x) => x[4])), Math.max(...r.map((x) => x[5])))' "$work/r.json")
t0=${span% *}
t1=${span#* }
step "timeline: whole profile" "$base/timeline?t0=$t0&t1=$t1&px=1200&dma=transfers"
step "timeline: counters" "$base/timeline/counters?t0=$t0&t1=$t1&px=1200"
step "analysis: instruction count" -X POST -H 'Content-Type: application/json' -d '{"type":"listDbFiles"}' \
	"$api/api/v1/db/$name/_search"
step "analysis: recommend" "$base/analysis"
q "sql: count(*) of Instruction" "SELECT count(*) FROM Instruction"
q "sql: a hundredth by start_ts" "SELECT count(*), sum(duration_ns) FROM Instruction WHERE start_ts BETWEEN $t0 AND $((t0 + (t1 - t0) / 100))"
echo "server peak RSS through the session: $(nx_hwm_mib "$nx_pid") MiB"
