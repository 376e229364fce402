#!/bin/bash
# SPDX-License-Identifier: MIT
# trace.sh: framework-trace reader benchmark (not a test). For each of the two largest
# vendored traces (tests/data/framework-traces) it runs, single-threaded and in the
# same run: our streaming parser, our full ingest to parquet, DuckDB's read_json, and
# Python's json module; it prints
# wall time, MB/s (decompressed JSON), events/s and peak RSS from /usr/bin/time -v.
# Our parser and ingest run NX_BENCH_REPS times (default 9) and report the median run.
#   bench/trace.sh BUILD_DIR [TRACES_DIR]
set -euo pipefail
build=${1:?usage: bench/trace.sh BUILD_DIR [TRACES_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
traces=${2:-$here/../tests/data/framework-traces}
reps=${NX_BENCH_REPS:-9}
bin=$build/bench/bench_trace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rss() { awk -F': ' '/Maximum resident/ {printf "%.0f MB", $2/1024}' "$1"; }

for f in tl_h100_owlv2_large.json.gz hta_rank0of16_a100_80g.json.gz; do
	path=$traces/$f
	mb=$(zcat -f "$path" | wc -c | awk '{printf "%.1f", $1/1e6}')
	echo "== $f ($mb MB of JSON)"
	# The machine's speed moves by a third within minutes, so our two modes run reps
	# times, alternating, and print the median (and the fastest) run.
	for i in $(seq "$reps"); do
		for mode in parse ingest; do
			rm -rf "$tmp/out-$mode"
			/usr/bin/time -v -o "$tmp/time" "$bin" "$mode" "$path" "$tmp/out-$mode" \
				>> "$tmp/runs-$mode"
			rss "$tmp/time" | awk '{print $1}' >> "$tmp/rss-$mode"
		done
	done
	for mode in parse ingest; do
		sort -n -k2,2 "$tmp/runs-$mode" | awk -v n="$reps" -v r="$(sort -n "$tmp/rss-$mode" | tail -1)" \
			'NR == 1 { fast = $2 } NR == int((n + 1) / 2) { line = $0 }
			 END { printf "%s  (median of %d; fastest %.3f s)  peak RSS %s MB\n", line, n, fast, r }'
		rm -f "$tmp/runs-$mode" "$tmp/rss-$mode"
	done
	line=$(/usr/bin/time -v -o "$tmp/time" "$bin" duckdb "$path" "$tmp/out-duckdb")
	printf '%-60s peak RSS %s\n' "$line" "$(rss "$tmp/time")"
	start=$(date +%s.%N)
	/usr/bin/time -v -o "$tmp/time" python3 -c \
		'import json,gzip,sys; d=json.load(gzip.open(sys.argv[1])); print(len(d["traceEvents"]))' \
		"$path" > "$tmp/n"
	end=$(date +%s.%N)
	awk -v s="$start" -v e="$end" -v mb="$mb" -v n="$(cat "$tmp/n")" -v r="$(rss "$tmp/time")" \
		'BEGIN { t = e - s; printf "python  %8.3f s %8.1f MB/s %10.0f events/s  (json.load, incl. interpreter start)  peak RSS %s\n", t, mb / t, n / t, r }'
done
