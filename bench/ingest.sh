#!/usr/bin/env bash
# ingest.sh BUILD_DIR WORK_DIR: ingest throughput and peak memory on generated traces
# of 1M and 10M records (NX_BENCH_SIZES, in millions, e.g. "1 10 30 100"; the older
# NX_BENCH_RECORDS is accepted too), next to the writer floor: DuckDB alone copying the
# same Instruction and DmaPacket rows from an in-memory table to zstd parquet, measured
# in the same run. Prints one line per size, then every table's time (and the peak RSS
# reached by the end of it when the ingest reports it). The total includes the timeline
# cache that view builds into the profile before publishing it (its own line,
# timeline_cache; bench/bench_lod_build measures it alone), and again with the cache built
# whole after the ingest (NX_VIEW_CACHE_SERIAL=1; NX_BENCH_SERIAL=0 skips it). The raw
# stage is also run with the trace tables written by DuckDB's two COPYs
# (NX_INGEST_WRITER=duckdb, the build before our writer wrote them; docs/memory.md, "Our
# writer for the raw tables") and by ours, alternating, NX_BENCH_PAIRS pairs (default 1),
# for their ratios to the same floor, CPU seconds and peak RSS; NX_BENCH_ONE=0 skips
# those runs. NX_BENCH_KEEP=1 keeps the generated traces and profiles (they take about
# 0.5 GB per 10M records).
set -euo pipefail
build=$1
work=$2
sizes=${NX_BENCH_SIZES:-${NX_BENCH_RECORDS:-1 10}}
bin=$build/neuron-explorer
for m in $sizes; do
	d=$work/trace-$m
	"$build/bench/bench_gen_trace" "$d" "$m" >/dev/null
	bytes=$(stat -c %s "$d/bench.ntff")
	log=$d/ingest.log
	/usr/bin/time -v "$bin" view -n "$d/bench.neff" -s "$d/bench.ntff" --data-path "$d/data" \
		--display-name bench --ingest-only >"$log" 2>&1
	wall=$(grep -oP 'total \K[0-9.]+(?= s)' "$log")
	raw=$(grep -oP 'raw tables \K[0-9.]+' "$log")
	der=$(grep -oP 'derived tables \K[0-9.]+' "$log")
	rss=$(grep -oP 'Maximum resident set size \(kbytes\): \K[0-9]+' "$log")
	# CPU seconds (user + system) of the whole ingest: less sensitive to other load
	# on a shared machine than the wall times
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$log")
	rows=$(grep -oP 'Wrote \K[0-9]+' "$log")
	prof=$d/data/profiles/global/bench@latest
	# writer floor: same rows, from memory to parquet, DuckDB alone
	# (above 10M records the source table lives in a database file rather than in
	# memory: 100M Instruction rows in memory would take tens of GB on a shared machine)
	db=memory
	if awk -v m="$m" 'BEGIN { exit !(m > 10) }'; then
		db=floor_db
		rm -f "$d/floor.db"
	fi
	floor=$("$build/nx-sql" -t \
		"$( [[ $db == memory ]] && echo 'SELECT 1' || echo "ATTACH '$d/floor.db' AS floor_db; USE floor_db")" \
		"CREATE TABLE i AS SELECT * FROM read_parquet('$prof/Instruction.parquet')" \
		"CREATE TABLE p AS SELECT * FROM read_parquet('$prof/DmaPacket.parquet')" \
		"COPY i TO '$d/floor_i.parquet' (FORMAT parquet, COMPRESSION zstd)" \
		"COPY p TO '$d/floor_p.parquet' (FORMAT parquet, COMPRESSION zstd)" 2>&1 >/dev/null |
		awk '/time_s/ {n++; if (n > 3) s += $2} END {printf "%.2f", s}')
	rm -f "$d/floor_i.parquet" "$d/floor_p.parquet" "$d/floor.db" "$d/floor.db.wal"
	awk -v m="$m" -v rows="$rows" -v raw="$raw" -v der="$der" -v wall="$wall" -v rss="$rss" \
	    -v bytes="$bytes" -v floor="$floor" -v cpu="$cpu" 'BEGIN {
		printf "%sM records: raw tables %.2f s (%.2f M rec/s, %.1f MB/s of NTFF), floor %.2f s (raw/floor %.2fx); derived %.2f s; total %.2f s (total/floor %.2fx); CPU %s s; peak RSS %.0f MB\n",
			m, raw, rows / raw / 1e6, bytes / raw / 1e6, floor, raw / floor, der, wall,
			wall / floor, cpu, rss / 1024 }'
	# the same ingest with the timeline cache built whole after it (NX_VIEW_CACHE_SERIAL=1,
	# the build before its events part ran beside the derive stage), against the same
	# floor; NX_BENCH_SERIAL=0 skips it
	if [[ ${NX_BENCH_SERIAL:-1} != 0 ]]; then
		slog=$d/serial.log
		NX_VIEW_CACHE_SERIAL=1 /usr/bin/time -v "$bin" view -n "$d/bench.neff" \
			-s "$d/bench.ntff" --data-path "$d/data" --display-name bench-serial \
			--ingest-only >"$slog" 2>&1
		rm -rf "$d/data/profiles/global/bench-serial@"*
		swall=$(grep -oP 'total \K[0-9.]+(?= s)' "$slog")
		awk -v floor="$floor" -v t="$swall" -v wall="$wall" '
		     /User time|System time/ { split($0, f, ": "); c += f[2] }
		     /Maximum resident/ { m = $NF }
		     END { printf "    cache built after the ingest (NX_VIEW_CACHE_SERIAL=1): total %.2f s (total/floor %.2fx, overlapped %.2fx); CPU %.1f s; peak RSS %.0f MB\n",
			t, t / floor, wall / floor, c, m / 1024 }' "$slog"
	fi
	# the raw stage with DuckDB's writer and with ours, alternating (NX_BENCH_PAIRS
	# pairs), against the same floor: wall, CPU and peak RSS of each
	if [[ ${NX_BENCH_ONE:-1} != 0 ]]; then
		for ((r = 1; r <= ${NX_BENCH_PAIRS:-1}; r++)); do
			for w in duckdb ours; do
				wlog=$d/writer-$w-pair$r.log
				NX_INGEST_WRITER=$w /usr/bin/time -v "$bin" view -n "$d/bench.neff" \
					-s "$d/bench.ntff" --data-path "$d/data" \
					--display-name "bench-w$w" --ingest-only >"$wlog" 2>&1
				rm -rf "$d/data/profiles/global/bench-w$w@"*
				wraw=$(grep -oP 'raw tables \K[0-9.]+' "$wlog")
				who=$([[ $w == ours ]] && echo our || echo "DuckDB's")
				awk -v floor="$floor" -v who="$who" -v r="$r" -v t="$wraw" '
				     /User time|System time/ { split($0, f, ": "); c += f[2] }
				     /Maximum resident/ { m = $NF }
				     END { printf "    the trace tables by %s writer (pair %d): raw tables %.2f s (raw/floor %.2fx); CPU %.1f s; peak RSS %.0f MB\n",
					who, r, t, t / floor, c, m / 1024 }' "$wlog"
			done
		done
	fi
	# per table: "  <Table> <rows> rows <time> s [...]" ("tables" for the join of split
	# tables); "peak <n> MB" when reported
	awk '/^  [A-Za-z_]+ +[0-9]+ (rows|tables)/ {
		t = "-"; p = "";
		for (i = 1; i <= NF; i++) {
			if ($i == "s" && $(i - 1) ~ /^[0-9.]+$/) t = $(i - 1);
			if ($i == "peak") p = $(i + 1) " MB";
		}
		printf "    %-26s %11s %-6s %8s s %10s\n", $1, $2, $3, t, p }' "$log"
	# the same without the SBUF/PSUM occupancy tables (the real tool's opt-out flag);
	# NX_BENCH_NOBUF=0 skips it
	[[ ${NX_BENCH_NOBUF:-1} == 0 ]] || /usr/bin/time -v "$bin" view -n "$d/bench.neff" -s "$d/bench.ntff" --data-path "$d/data" \
		--display-name bench-nobuf --ingest-only -F ignore-nc-buf-usage=true >"$log" 2>&1
	[[ ${NX_BENCH_NOBUF:-1} == 0 ]] || awk '/derived tables/ { for (i = 1; i <= NF; i++) if ($i == "derived") d = $(i + 2);
				for (i = 1; i <= NF; i++) if ($i == "total") t = $(i + 1) }
	     /Maximum resident/ { r = $NF }
	     END { printf "    with -F ignore-nc-buf-usage=true: derived %s s; total %s s; peak RSS %.0f MB\n", d, t, r / 1024 }' "$log"
	[[ ${NX_BENCH_KEEP:-0} == 1 ]] || rm -rf "$d"
done
