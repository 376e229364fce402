#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ui_timeline.sh: the web UI at scale (not a ctest test). Per size (millions of trace
# records: about 70 % instructions, 30 % DMA packets), bench_gen_trace writes a trace,
# `view --ingest-only` ingests it (the trace is deleted then), `view` serves it, and:
#   1. `view` builds the timeline cache (lod.h) into the profile while it ingests: its
#      time and the ingest's peak RSS then (the ingest log's timeline_cache line); the
#      first GET .../timeline/tracks then only opens it: its time (goal: < 2 s at any
#      size), the cache's size next to the parquet of the event tables, the server's
#      peak RSS; baseline: one read of the Instruction columns the timeline uses (nx-sql,
#      same files). A profile without it (REUSE=1 of an older run) gets it built by the
#      server on that first request, as before;
#   2. bench/ui_viewports.mjs: viewport latency at every zoom level, whole profile down
#      to raw rows (p50/p99, the counters' reply alone, server CPU per viewport, reply
#      size, pyramid or rows);
#   3. bench/ui_pages.sh against the same server: the overview's and other pages' data;
#   4. bench/ui_fps.mjs: frames per second of the timeline panning in headless Chromium
#      (needs tests/tools/node_modules/playwright-core and /usr/bin/chromium: skipped
#      with the command that installs them when missing).
# The profile is deleted after each size unless KEEP=1 (100M records take about 3 GB).
#
# usage: bench/ui_timeline.sh [BUILD_DIR] [WORK_DIR]
#   env: SIZES ("10 100")  N (30 viewports per level)  DURATION (4000 ms of panning)  KEEP
#        REUSE=1 (a kept profile of an earlier run is served again, its cache rebuilt)
#        PREPARE=1 (only generate and ingest, with KEEP=1: the timed part can then run
#        alone under the bench lock with REUSE=1)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=${2:-$build/bench-work}
sizes=${SIZES:-10 100}
tools=$here/../tests/tools
mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$here/lib_server.sh"
trap nx_serve_stop EXIT
now() { date +%s.%N; }
echo "load average: $(nx_load), $(nproc) cores"
for m in $sizes; do
	d=$work/ui-$m
	prof=$d/data/profiles/global/big$m@latest
	echo
	echo "### ${m}M records"
	if [[ ${REUSE:-0} == 1 && -f $d/ingest.log && -d $prof ]]; then
		echo "reusing the profile of an earlier run (REUSE=1), without its timeline cache"
		rm -rf "$d/data/.cache"
	else
		rm -rf "$d"
		t=$(now)
		"$build/bench/bench_gen_trace" "$d" "$m"
		"$build/neuron-explorer" view -n "$d/bench.neff" -s "$d/bench.ntff" --data-path "$d/data" \
			--display-name "big$m" --ingest-only > "$d/ingest.log" 2>&1
		rm -f "$d/bench.ntff"
		printf 'generated and ingested in %.0f s\n' "$(echo "$(now) - $t" | bc)"
	fi
	echo "$(grep -oP 'Wrote \K[0-9]+' "$d/ingest.log") rows, profile $(du -sh "$prof" | cut -f1)"
	[[ ${PREPARE:-0} == 1 ]] && continue
	ev_bytes=0
	for f in Instruction DmaPacketAggregated DmaPacket; do
		[[ -f $prof/$f.parquet ]] && ev_bytes=$((ev_bytes + $(stat -c %s "$prof/$f.parquet")))
	done
	t=$(now)
	"$build/nx-sql" "SELECT sum(hash(id, start_ts, end_ts, opcode, timeline_track, pcore_idx))
		FROM read_parquet('$prof/Instruction.parquet')" > /dev/null
	scan=$(echo "$(now) - $t" | bc)

	nx_serve "$build" "$d/view.out" --data-path "$d/data"
	pid=$nx_pid api=$nx_api ui=$nx_ui
	base="$api/api/v1/profiles/namespace/global/profile_name/big$m"
	how="built by the server on first open"
	if [[ -f $prof/.timeline/timeline.duckdb ]]; then
		how="carried by the profile, first open"
		grep -E '^  timeline_cache ' "$d/ingest.log" | awk '{
			printf "timeline cache built by view while ingesting: %s s, %s events, ingest peak %s MB\n", $4, $2, $7 }'
	fi
	t=$(now)
	curl -sf -o /dev/null "$base/timeline/tracks"
	build_s=$(echo "$(now) - $t" | bc)
	cache=$( { find "$prof/.timeline" "$d/data/.cache/timeline" -name timeline.duckdb \
		2>/dev/null || true; } | head -1)
	cbytes=$(stat -c %s "$cache")
	# the pyramid: one table per event source, tl.lod0..tl.lod3 (cache format 8)
	lod_sql=$("$build/nx-sql" "ATTACH '$cache' AS tl (READ_ONLY)" "SELECT string_agg('SELECT \
count(*) AS n FROM tl.' || table_name, ' UNION ALL ') FROM duckdb_tables() WHERE \
database_name = 'tl' AND regexp_matches(table_name, '^lod[0-9]\$')")
	lod_rows=$("$build/nx-sql" "ATTACH '$cache' AS tl (READ_ONLY)" "SELECT sum(n) FROM ($lod_sql)")
	awk -v how="$how" -v b="$build_s" -v s="$scan" -v c="$cbytes" -v e="$ev_bytes" -v r="$lod_rows" \
		-v hwm="$(nx_hwm_mib "$pid")" 'BEGIN {
		printf "timeline cache %s: %.2f s (baseline, one read of the Instruction columns: %.1f s; ratio %.2fx)\n", how, b, s, b / s
		printf "  timeline.duckdb %.1f MB (%d pyramid rows) = %.2fx the event tables'"'"' parquet (%.1f MB); server peak RSS %.0f MiB\n", c / 1e6, r, c / e, e / 1e6, hwm }'
	echo "load average: $(nx_load)"
	node "$here/ui_viewports.mjs" "$api" "big$m" "$pid"
	echo "load average: $(nx_load)"
	echo "page data:"
	API=$api PROFILE=big$m "$here/ui_pages.sh" "$build"
	echo "load average: $(nx_load)"
	if [[ ! -d $tools/node_modules/playwright-core || ! -x /usr/bin/chromium ]]; then
		echo "panning frame rate: skipped (needs: bash tests/tools/setup.sh; apt-get install chromium)"
	else
		echo "panning frame rate (headless Chromium, software canvas):"
		node "$here/ui_fps.mjs" "$ui" "big$m" "$tools"
		echo "load average: $(nx_load)"
	fi
	nx_serve_stop
	[[ ${KEEP:-0} == 1 ]] || rm -rf "$d"
done
