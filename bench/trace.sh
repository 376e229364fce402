#!/bin/bash
# SPDX-License-Identifier: MIT
# trace.sh: framework-trace reader benchmark (not a test). For each of the two largest
# vendored traces (tests/data/framework-traces) it runs, single-threaded and in the
# same run: our streaming parser, our full ingest to parquet, DuckDB's read_json, and
# Python's json module; it prints
# wall time, MB/s (decompressed JSON), events/s and peak RSS from /usr/bin/time -v.
#   bench/trace.sh BUILD_DIR [TRACES_DIR]
set -euo pipefail
build=${1:?usage: bench/trace.sh BUILD_DIR [TRACES_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
traces=${2:-$here/../tests/data/framework-traces}
bin=$build/bench/bench_trace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rss() { awk -F': ' '/Maximum resident/ {printf "%.0f MB", $2/1024}' "$1"; }

for f in tl_h100_owlv2_large.json.gz hta_rank0of16_a100_80g.json.gz; do
	path=$traces/$f
	mb=$(zcat -f "$path" | wc -c | awk '{printf "%.1f", $1/1e6}')
	echo "== $f ($mb MB of JSON)"
	for mode in parse ingest duckdb; do
		line=$(/usr/bin/time -v -o "$tmp/time" "$bin" "$mode" "$path" "$tmp/out-$mode")
		printf '%-60s peak RSS %s\n' "$line" "$(rss "$tmp/time")"
	done
	start=$(date +%s.%N)
	/usr/bin/time -v -o "$tmp/time" python3 -c \
		'import json,gzip,sys; d=json.load(gzip.open(sys.argv[1])); print(len(d["traceEvents"]))' \
		"$path" > "$tmp/n"
	end=$(date +%s.%N)
	awk -v s="$start" -v e="$end" -v mb="$mb" -v n="$(cat "$tmp/n")" -v r="$(rss "$tmp/time")" \
		'BEGIN { t = e - s; printf "python  %8.3f s %8.1f MB/s %10.0f events/s  (json.load, incl. interpreter start)  peak RSS %s\n", t, mb / t, n / t, r }'
done
