#!/usr/bin/env bash
# fleet.sh BUILD_DIR WORK_DIR: a synthetic run of NX_BENCH_FLEET_INSTANCES (default 32)
# instances x 2 NeuronCores (64 NEFF/NTFF pairs) + one framework trace per instance,
# ingested three ways on this machine: the existing sequential ingest (`view -d`, one
# process, pairs one after another), `fleet ingest -j NPROC` (local subprocesses), and
# `fleet ingest --slurm` (one sbatch array on a real single-node Slurm started by
# tests/tools/slurm_setup.sh, plus the dependent index job). Prints wall time, per-task
# overhead (Slurm wall minus the local fan-out's, per task; and a task's own time minus
# the sequential per-pair time) and peak memory (largest task process).
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
bin=$build/neuron-explorer
n=${NX_BENCH_FLEET_INSTANCES:-32}
jobs=$(nproc)
d=$work/fleet
rm -rf "$d" && mkdir -p "$d"
trap 'bash "$src/tests/tools/slurm_stop.sh" "$d/slurm"' EXIT
bash "$src/tests/tools/slurm_setup.sh" "$d/slurm"
. "$d/slurm/env.sh"
bash "$src/tests/tools/slurm_fleet_run.sh" "$bin" "$d/run" "$n" 3 >/dev/null
ntasks=$((3 * n))
now() { date +%s.%N; }
rss_of() { grep -oP 'Maximum resident set size \(kbytes\): \K[0-9]+' "$1"; }

t0=$(now)
/usr/bin/time -v "$bin" view -d "$d/run" --data-path "$d/seq" --display-name seq --ingest-only -q \
	>"$d/seq.log" 2>&1
t1=$(now)
seq_wall=$(echo "$t1 - $t0" | bc -l)
seq_rss=$(rss_of "$d/seq.log")

t0=$(now)
/usr/bin/time -v "$bin" fleet ingest "$d/run" --data-path "$d/loc" --display-name run -j "$jobs" \
	>"$d/loc.log" 2>&1
t1=$(now)
loc_wall=$(echo "$t1 - $t0" | bc -l)

# Slurm: submit, then poll for the published index every 0.1 s (sbatch --wait polls
# Slurm at growing intervals, which would count as our overhead).
t0=$(now)
"$bin" fleet ingest "$d/run" --data-path "$d/slurm-data" --display-name run --slurm \
	>"$d/slurm.log" 2>&1
until [ -e "$d/slurm-data/profiles/global/run@latest/fleet-members.txt" ]; do sleep 0.1; done
t1=$(now)
slurm_wall=$(echo "$t1 - $t0" | bc -l)
"$bin" fleet status --data-path "$d/slurm-data" --display-name run >"$d/slurm-status.log"
grep -q "^$ntasks tasks: $ntasks done" "$d/slurm-status.log" || { tail -3 "$d/slurm-status.log"; exit 1; }

# per-task figures from the status files: seconds and peak RSS (kB) of each task
stats() { cat "$1"/fleet/run/status/*.done | awk -F'\t' '{ s += $4; if ($5 > m) m = $5; n++ }
	END { printf "%.3f %d %d", s / n, m, n }'; }
read -r loc_task loc_rss _ <<<"$(stats "$d/loc")"
read -r sl_task sl_rss _ <<<"$(stats "$d/slurm-data")"
awk -v n="$ntasks" -v inst="$n" -v pairs=$((2 * n)) -v j="$jobs" -v sw="$seq_wall" -v sr="$seq_rss" \
    -v lw="$loc_wall" -v lt="$loc_task" -v lr="$loc_rss" -v qw="$slurm_wall" -v qt="$sl_task" \
    -v qr="$sl_rss" 'BEGIN {
	printf "run: %d pairs + %d traces = %d tasks, %d cores\n", pairs, inst, n, j
	printf "sequential view -d:   wall %7.2f s  (%.3f s per task)  peak RSS %.0f MB\n", sw, sw / n, sr / 1024
	printf "fleet -j %d (local):  wall %7.2f s  (speedup %.2fx)  mean task %.3f s  peak task RSS %.0f MB\n", j, lw, sw / lw, lt, lr / 1024
	printf "fleet --slurm:        wall %7.2f s  (speedup %.2fx)  mean task %.3f s  peak task RSS %.0f MB\n", qw, sw / qw, qt, qr / 1024
	printf "Slurm overhead per task vs local fan-out: %.3f s ((slurm wall - local wall) / tasks)\n", (qw - lw) / n
	printf "task overhead vs sequential: %.3f s (mean task - sequential per task)\n", lt - sw / n
}'
