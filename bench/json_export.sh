#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# json_export.sh BUILD_DIR WORK_DIR: throughput and peak memory of the legacy JSON export
# (`view --output-format json`, docs/formats/json.md) on a generated profile of 10M trace
# records (NX_BENCH_JSON_SIZES, in millions, e.g. "10 100"), against DuckDB's own
# `COPY (SELECT ...) TO ... (FORMAT json, ARRAY true)` of the same fields of the same
# tables, measured in the same run. The export runs NX_BENCH_REPS times (default 3),
# alternating with the baseline; the median of each is printed with its peak RSS (from
# /usr/bin/time -v). The profile is ingested once (reusing WORK_DIR/trace-<M> of
# bench/ingest.sh when it holds one); NX_BENCH_KEEP=1 keeps it.
set -euo pipefail
build=$1
work=$2
sizes=${NX_BENCH_JSON_SIZES:-10}
reps=${NX_BENCH_REPS:-3}
bin=$build/neuron-explorer
rss() { awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$1"; }
wall() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
	for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for m in $sizes; do
	d=$work/trace-$m
	prof=$d/data/profiles/global/bench@latest
	if [ ! -f "$prof/Instruction.parquet" ]; then
		"$build/bench/bench_gen_trace" "$d" "$m" >/dev/null
		"$bin" view -n "$d/bench.neff" -s "$d/bench.ntff" --data-path "$d/data" \
			--display-name bench --ingest-only -q -F ignore-nc-buf-usage=true >/dev/null
	fi
	out=$d/export.json
	base=$d/baseline
	# the export's three large members, with the fields json_export.c writes
	scan() { echo "read_parquet('$prof/$1.parquet')"; }
	copy() { echo "COPY (SELECT $2 FROM $(scan "$1")) TO '$base/$1.json' (FORMAT json, ARRAY true)"; }
	inst="start_ts AS timestamp, duration_ns AS duration, coalesce(timeline_track, engine) AS label, hlo_name, opcode, operands, engine, pcore_idx, id, pc, bir_id, layer, nki_source_location, evt_wait_time_ns"
	agg="start_ts AS timestamp, duration_ns AS duration, variable, transfer_bytes AS transfer_size, source, dest, op, queue_name, queue_type::VARCHAR AS queue_type, pcore_idx, id, block_id, throughput"
	pkt="start_ts AS timestamp, duration_ns AS duration, queue_name, queue_type::VARCHAR AS queue_type, variable, transfer_bytes AS transfer_size, pcore_idx, engine_idx, id, packet_aggregation_id"
	rm -f "$d"/runs-*
	for i in $(seq "$reps"); do
		rm -f "$out"
		/usr/bin/time -v "$bin" view --data-path "$d/data" --display-name bench \
			--output-format json --output-file "$out" -q 2> "$d/time-export"
		echo "$(wall "$d/time-export") $(rss "$d/time-export")" >> "$d/runs-export"
		rm -rf "$base" && mkdir -p "$base"
		/usr/bin/time -v "$build/nx-sql" "$(copy Instruction "$inst")" \
			"$(copy DmaPacketAggregated "$agg")" "$(copy DmaPacket "$pkt")" \
			> /dev/null 2> "$d/time-base"
		echo "$(wall "$d/time-base") $(rss "$d/time-base")" >> "$d/runs-base"
	done
	records=$("$build/nx-sql" "SELECT (SELECT count(*) FROM $(scan Instruction)) + \
		(SELECT count(*) FROM $(scan DmaPacketAggregated)) + (SELECT count(*) FROM $(scan DmaPacket))")
	mb=$(stat -c %s "$out" | awk '{printf "%.1f", $1 / 1e6}')
	bmb=$(du -cb "$base"/*.json | tail -1 | awk '{printf "%.1f", $1 / 1e6}')
	et=$(awk '{print $1}' "$d/runs-export" | median)
	er=$(awk '{print $2}' "$d/runs-export" | sort -n | tail -1)
	bt=$(awk '{print $1}' "$d/runs-base" | median)
	br=$(awk '{print $2}' "$d/runs-base" | sort -n | tail -1)
	awk -v m="$m" -v n="$records" -v et="$et" -v er="$er" -v bt="$bt" -v br="$br" \
	    -v mb="$mb" -v bmb="$bmb" -v reps="$reps" 'BEGIN {
		printf "%sM records (%d instructions, DMA transfers and packets), median of %d:\n", m, n, reps
		printf "  view --output-format json  %8.2f s %8.2f M rec/s %8.1f MB/s  peak RSS %5d MB  (%s MB)\n", et, n / et / 1e6, mb / et, er, mb
		printf "  DuckDB COPY ... FORMAT json %7.2f s %8.2f M rec/s %8.1f MB/s  peak RSS %5d MB  (%s MB, 3 tables)\n", bt, n / bt / 1e6, bmb / bt, br, bmb
		printf "  export/COPY time %.2fx\n", et / bt }'
	rm -rf "$base" "$out" "$d"/runs-* "$d"/time-*
	[[ ${NX_BENCH_KEEP:-0} == 1 ]] || rm -rf "$d"
done
