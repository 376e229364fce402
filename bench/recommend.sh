#!/usr/bin/env bash
# recommend.sh BUILD_DIR WORK_DIR: time and peak memory of `recommend` on generated
# profiles of 1M and 10M trace records (about 0.7 instructions and 0.3 DMA packets per
# record; NX_BENCH_RECOMMEND_SIZES overrides, in millions, e.g. "1 10 30";
# NX_BENCH_RECOMMEND_100=1 adds 100M, which needs about 6 GB of disk and some minutes
# of ingest). The profiles carry source locations as a compiled kernel's do
# (bench_gen_trace --source-lines: 40 lines of bench_kernel.py), so the findings name lines
# and the passes do the per-line work a real profile asks of them (the packets' busy time
# per transfer, the transfers' merge by line); NX_BENCH_RECOMMEND_SOURCE=0 generates them
# without. The runs: the whole-kernel report (bounds from Summary, investigations over the raw
# tables), the same as JSON, and a windowed one (every input recomputed from the raw
# tables). Beside them, in the same run, the scan floor: DuckDB reading once every
# column of Instruction and DmaPacket the analysis reads (docs/recommend.md, "Memory and
# time"). Prints one line per size, and a second one with the CPU seconds (user + system)
# of each against the scan's; the peak RSS figures hold on a loaded machine, the times
# only as the same-run ratio to the floor (the CPU ratio moves less with the load than
# the wall-clock one). Profiles it generates are removed
# unless NX_BENCH_KEEP=1; one found in WORK_DIR is reused and kept (the line says whether
# it has source locations).
set -euo pipefail
build=$1
work=$2
sizes=${NX_BENCH_RECOMMEND_SIZES:-${NX_BENCH_RECOMMEND_RECORDS:-1 10}}
[[ ${NX_BENCH_RECOMMEND_100:-0} == 1 ]] && sizes="$sizes 100"
bin=$build/neuron-explorer
gen_opts=()
[[ ${NX_BENCH_RECOMMEND_SOURCE:-1} == 0 ]] || gen_opts=(--source-lines)
# every column of the two large tables that the analysis's passes read (scan.h; DmaPacket's
# duration and transfer id for the busy time per transfer of the transfers' merge)
scan_sql="SELECT count(id), max(engine), max(opcode), max(tensor_instruction_type),
	max(start_ts), max(end_ts), max(duration_ns), max(evt_wait_time_ns),
	max(adjusted_flops), max(operands), max(bir_debug_info_source_location),
	max(hbm_read_bytes), max(hbm_write_bytes) FROM Instruction
	UNION ALL SELECT count(*), max(queue_type), NULL, NULL, max(start_ts), max(end_ts),
	max(transfer_bytes), max(duration_ns), max(packet_aggregation_id), NULL, NULL, NULL, NULL
	FROM DmaPacket"
for m in $sizes; do
	d=$work/recommend-$m
	prof=$d/data/profiles/global/bench@latest
	made=0
	if [ ! -f "$prof/Summary.parquet" ]; then
		[ -e "$d" ] && { echo "recommend.sh: $d exists without a profile" >&2; exit 1; }
		made=1
		"$build/bench/bench_gen_trace" "${gen_opts[@]}" "$d" "$m" >/dev/null
		"$bin" view -n "$d/bench.neff" -s "$d/bench.ntff" --data-path "$d/data" \
			--display-name bench --ingest-only -q >/dev/null
		rm -f "$d/bench.ntff"
	fi
	insts=$("$build/nx-sql" -C "$prof" "SELECT count(*) FROM Instruction")
	lines=$("$build/nx-sql" -C "$prof" "SELECT count(DISTINCT bir_debug_info_source_location)
		FROM (SELECT bir_debug_info_source_location FROM Instruction LIMIT 100000)")
	if [ "$lines" -gt 0 ]; then src="with source lines"; else src="WITHOUT source lines"; fi
	# "seconds peak-KiB cpu-seconds" of a command, its output into $d/out.txt
	timed() {
		/usr/bin/time -f '%e %M %U %S' -o "$d/time.txt" "$@" >"$d/out.txt"
		awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$d/time.txt"
	}
	run() { timed "$bin" recommend --data-path "$d/data" --display-name bench "$@"; }
	read -r f_s f_kb f_cpu < <(timed "$build/nx-sql" -C "$prof" "$scan_sql")
	read -r w_s w_kb w_cpu < <(run)
	read -r k_s k_kb k_cpu < <(run --window kernel)
	read -r j_s j_kb j_cpu < <(run --format json)
	awk -v m="$m" -v n="$insts" -v ws="$w_s" -v wk="$w_kb" -v ks="$k_s" -v kk="$k_kb" \
	    -v js="$j_s" -v jk="$j_kb" -v fs="$f_s" -v fk="$f_kb" -v src="$src" 'BEGIN {
		printf "recommend on %sM records (%.1fM instructions, %s): whole kernel %.2f s (%.2fx the scan, peak RSS %.0f MB), json %.2f s (%.2fx, %.0f MB), window=kernel %.2f s (%.2fx, %.0f MB); scan floor %.2f s (peak RSS %.0f MB)\n",
			m, n / 1e6, src, ws, ws / fs, wk / 1024, js, js / fs, jk / 1024, ks, ks / fs,
			kk / 1024, fs, fk / 1024 }'
	awk -v m="$m" -v w="$w_cpu" -v j="$j_cpu" -v k="$k_cpu" -v f="$f_cpu" 'BEGIN {
		printf "  cpu seconds on %sM records: whole kernel %.2f (%.2fx the scan), json %.2f (%.2fx), window=kernel %.2f (%.2fx); scan %.2f\n",
			m, w, w / f, j, j / f, k, k / f, f }'
	# only what this run generated
	[[ ${NX_BENCH_KEEP:-0} == 1 || $made == 0 ]] || rm -rf "$d"
done
