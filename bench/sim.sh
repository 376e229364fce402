#!/usr/bin/env bash
# sim.sh BUILD_DIR WORK_DIR: simulator benchmark (called by run.sh). bench_sim measures
# the simulator in-process, on trn2 and, for the trn1 calibration kernels, on trn1 (whose
# cost model tracks which SBUF bytes a DMA wrote); then each library kernel is captured
# through the CLI (kernel gen + capture with DGE notifications), timed end to end.
set -euo pipefail
build=$1
work=$2/sim
mkdir -p "$work"
"$build/bench/bench_sim" "$work"
echo
"$build/bench/bench_sim" "$work" --target trn1 calib_trn1_matmul_tiled calib_trn1_matmul_opt \
	calib_trn1_layernorm_v1 calib_trn1_layernorm_v2
echo
echo "# CLI wall time per kernel (default size): kernel gen, capture"
bin=$build/neuron-explorer
for k in $("$bin" kernel list | awk '{print $1}'); do
	t0=$(date +%s.%N)
	"$bin" kernel gen "$k" -q -o "$work/$k.neff"
	t1=$(date +%s.%N)
	NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$bin" capture -q -n "$work/$k.neff" \
		-s "$work/$k.ntff" > /dev/null
	t2=$(date +%s.%N)
	printf "%-17s gen %6.2f s  capture %6.2f s\n" "$k" "$(echo "$t1 - $t0" | bc)" \
		"$(echo "$t2 - $t1" | bc)"
done
rm -rf "$work"
