#!/usr/bin/env bash
# recommend.sh BUILD_DIR WORK_DIR: time and peak memory of `recommend` on a generated
# profile of 15M trace records (about 10.5M instructions and 4.5M DMA packets;
# NX_BENCH_RECOMMEND_RECORDS overrides, in millions): the whole-kernel report (bounds
# from Summary, investigations over the raw tables) and a windowed one (every input
# recomputed from the raw tables). Prints one summary line.
set -euo pipefail
build=$1
work=$2
m=${NX_BENCH_RECOMMEND_RECORDS:-15}
bin=$build/neuron-explorer
d=$work/recommend-$m
prof=$d/data/profiles/global/bench@latest
if [ ! -f "$prof/Summary.parquet" ]; then
	"$build/bench/bench_gen_trace" "$d" "$m" >/dev/null
	"$bin" view -n "$d/bench.neff" -s "$d/bench.ntff" --data-path "$d/data" \
		--display-name bench --ingest-only -q >/dev/null
fi
insts=$("$build/nx-sql" -C "$prof" "SELECT count(*) FROM Instruction")
run() {
	/usr/bin/time -f '%e %M' -o "$d/time.txt" "$bin" recommend --data-path "$d/data" \
		--display-name bench "$@" >"$d/report.out"
	cat "$d/time.txt"
}
read -r w_s w_kb < <(run)
read -r k_s k_kb < <(run --window kernel)
read -r j_s j_kb < <(run --format json)
awk -v m="$m" -v n="$insts" -v ws="$w_s" -v wk="$w_kb" -v ks="$k_s" -v kk="$k_kb" \
    -v js="$j_s" 'BEGIN {
	printf "recommend on %sM records (%.1fM instructions): whole kernel %.2f s (peak RSS %.0f MB), json %.2f s, window=kernel %.2f s (peak RSS %.0f MB)\n",
		m, n / 1e6, ws, wk / 1024, js, ks, kk / 1024 }'
