#!/bin/bash
# slurm_fleet_run.sh BIN OUT NINST [STRAGGLER]: writes a synthetic training run for the
# fleet tests and benchmark: NINST instance directories ip-10-0-0-<i>_pid_<4000+i>/, each
# with two NeuronCores (NTFFs <hash>_instid_0_vnc_{0,1}.ntff beside neff_<hash>.neff,
# captured on the simulator from library kernels: matmul_v2 --size 512) and one
# framework trace neuron_framework_trace_rank_<i>.json (4 ProfilerStep#k slices, each
# with an nccl:all_reduce inside). Instance STRAGGLER (default 3) is the planted
# straggler: its vnc_1 runs matmul_v0 --size 512 (DMA-bound, about 1.8x slower) and
# its rank's all_reduce takes 3x longer.
set -eu
BIN=$1 OUT=$2 NINST=$3 SLOW=${4:-3}
mkdir -p "$OUT/.kernels"
K=$OUT/.kernels
if [ ! -s "$K/fast.ntff" ]; then
	"$BIN" kernel gen matmul_v2 --size 512 -o "$K/fast.neff" -q
	NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n "$K/fast.neff" -s "$K/fast.ntff" -q
	"$BIN" kernel gen matmul_v0 --size 512 -o "$K/slow.neff" -q
	NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n "$K/slow.neff" -s "$K/slow.ntff" -q
fi
FAST=a1b2c3d4e5f60001 SLOWH=a1b2c3d4e5f60002
for ((i = 0; i < NINST; i++)); do
	d=$OUT/ip-10-0-0-$i\_pid_$((4000 + i))
	mkdir -p "$d"
	cp "$K/fast.neff" "$d/neff_$FAST.neff"
	cp "$K/fast.ntff" "$d/${FAST}_instid_0_vnc_0.ntff"
	if [ "$i" = "$SLOW" ]; then
		cp "$K/slow.neff" "$d/neff_$SLOWH.neff"
		cp "$K/slow.ntff" "$d/${SLOWH}_instid_0_vnc_1.ntff"
	else
		cp "$K/fast.ntff" "$d/${FAST}_instid_0_vnc_1.ntff"
	fi
	ar=2000
	[ "$i" = "$SLOW" ] && ar=6000
	{
		printf '{"distributedInfo":{"rank":%d,"world_size":%d},"traceEvents":[\n' "$i" "$NINST"
		t=1700000000000000
		for s in 0 1 2 3; do
			printf '{"ph":"X","name":"ProfilerStep#%d","pid":%d,"tid":1,"ts":%d,"dur":%d},\n' \
				"$s" $((4000 + i)) "$t" $((10000 + ar))
			printf '{"ph":"X","name":"aten::matmul","pid":%d,"tid":1,"ts":%d,"dur":8000},\n' \
				$((4000 + i)) $((t + 100))
			printf '{"ph":"X","name":"nccl:all_reduce","pid":%d,"tid":1,"ts":%d,"dur":%d},\n' \
				$((4000 + i)) $((t + 8200)) "$ar"
			t=$((t + 20000))
		done
		printf '{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"rank%d"}}\n]}\n' \
			$((4000 + i)) "$i"
	} > "$d/neuron_framework_trace_rank_$i.json"
done
