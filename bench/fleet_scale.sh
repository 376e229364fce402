#!/usr/bin/env bash
# fleet_scale.sh [N]: the fleet at scale. Synthetic runs of 100, 300 and N (default 1000)
# NEFF/NTFF pairs (N/2 instances x 2 NeuronCores, plus one framework trace per instance:
# 1.5 N tasks) go through `fleet ingest --slurm` on a private single-node Slurm that this
# script starts and stops (tests/tools/slurm_setup.sh, as root on a test machine; never
# a system Slurm). The kernels are made and captured once; every pair is a hard link to
# them under its own instance directory, so a member differs by its path only.
# Per size it prints: wall time from submission to the published index, the tasks' own
# time (their status files), the overhead per task (node slots x wall - task time, per
# task), the controller's and the largest task's peak RSS, `fleet status` and `fleet
# index` (wall, CPU, RSS), a cross-profile query over the union views through the API
# (first, which opens the run, its wall time and the server's CPU for it, and warm),
# the server's peak RSS, files and processes.
# The per-task figures and their growth from the smallest size show what grows faster
# than the run; the last table compares, in the same run, the two ways a task finds its
# row (the whole manifest, `run-task --task`, against its line of the task list,
# `run-task --list`, what the Slurm and local runners use), in CPU time and bytes read.
# Environment: NX_BENCH_BUILD (default ./build; its binary must not change while this
# runs), NX_BENCH_SIZES (the sizes in the order to run them, default "100 300 N"),
# NX_BENCH_KEEP=1 keeps the work directory. Each size's raw figures are printed to stderr
# as soon as they are measured.
# Wall times on a loaded machine are indicative only; CPU seconds and counts are not.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=$(cd "${NX_BENCH_BUILD:-$src/build}" && pwd)
bin=$build/neuron-explorer
n_max=${1:-1000}
case $n_max in '' | *[!0-9]*) echo "usage: fleet_scale.sh [N] (N pairs, even, >= 2)" >&2; exit 2 ;; esac
[ "$n_max" -ge 2 ] || { echo "fleet_scale.sh: N must be at least 2" >&2; exit 2; }
sizes=${NX_BENCH_SIZES:-$(printf '%s\n' 100 300 "$n_max" | awk -v m="$n_max" '$1 <= m' | sort -nu)}
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-fleet-scale.XXXXXX")
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	bash "$src/tests/tools/slurm_stop.sh" "$work/slurm"
	[ "${NX_BENCH_KEEP:-0}" = 1 ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
bash "$src/tests/tools/slurm_setup.sh" "$work/slurm"
. "$work/slurm/env.sh"
slots=$(sinfo -h -o %c | head -n 1)
now() { date +%s.%N; }
. "$here/fleet_lib.sh" # timed, start_server, proc_cpu

# one capture of each kernel, then a run tree of hard links per size
bash "$src/tests/tools/slurm_fleet_run.sh" "$bin" "$work/base" 1 -1 >/dev/null
b=$work/base/ip-10-0-0-0_pid_4000
make_run() { # DIR INSTANCES
	local d i
	for ((i = 0; i < $2; i++)); do
		d=$1/ip-10-0-0-$i\_pid_$((4000 + i))
		mkdir -p "$d"
		ln "$b/neff_a1b2c3d4e5f60001.neff" "$d/"
		ln "$b/a1b2c3d4e5f60001_instid_0_vnc_0.ntff" "$b/a1b2c3d4e5f60001_instid_0_vnc_1.ntff" "$d/"
		sed "s/\"rank\":0/\"rank\":$i/" "$b/neuron_framework_trace_rank_0.json" \
			>"$d/neuron_framework_trace_rank_$i.json"
	done
}

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
query() { # RUN SQL -> seconds
	local body
	body=$(printf '{"type":"databaseExplorerQuery","query":"%s"}' "$2")
	curl -s -o "$work/q.json" -w '%{time_total}' -X POST -H 'Content-Type: application/json' \
		-d "$body" "http://127.0.0.1:$port/api/v1/db/$1/_search"
	grep -q '"error"' "$work/q.json" && { echo "query failed: $(head -c 300 "$work/q.json")" >&2; exit 1; }
	return 0
}
q1="SELECT profile, total_time FROM Summary ORDER BY total_time DESC, profile LIMIT 5"
q2="SELECT count(DISTINCT profile) AS members, count(*) AS instructions FROM Instruction"

rows=()
lookup=()
for n in $sizes; do
	inst=$((n / 2))
	tasks=$((3 * inst))
	r=$work/run$n d=$work/data$n
	make_run "$r" "$inst"
	# submission, then the published index (polled every 0.1 s: sbatch --wait's own
	# polling would count as overhead)
	t0=$(now)
	read -r ctl_wall ctl_cpu ctl_rss < <(timed "$work/ingest$n.log" "$bin" fleet ingest "$r" \
		--data-path "$d" --display-name run --slurm)
	until [ -e "$d/profiles/global/run@latest/fleet-members.txt" ]; do sleep 0.1; done
	wall=$(echo "$(now) - $t0" | bc -l)
	read -r st_wall st_cpu st_rss < <(timed "$work/status$n.log" "$bin" fleet status \
		--data-path "$d" --display-name run)
	grep -q "^$tasks tasks: $tasks done" "$work/status$n.log" ||
		{ tail -n 3 "$work/status$n.log" >&2; exit 1; }
	read -r task_s task_rss < <(cat "$d"/fleet/run/status/*.done |
		awk -F'\t' '{ s += $4; if ($5 > m) m = $5 } END { printf "%.2f %d\n", s, m }')
	read -r ix_wall ix_cpu ix_rss < <(timed "$work/index$n.log" "$bin" fleet index \
		--data-path "$d" --display-name run)
	files=$(find "$d" | wc -l)
	arrays=$(ls "$d"/fleet/run/slurm/array-*.list | wc -l)
	# processes: one per task, the index job, the sbatch calls
	procs=$((tasks + 1 + arrays + 1))

	start_server "$d" "$work/server$n.log"
	c0=$(proc_cpu "$server")
	qa=$(query run "$q1")
	c1=$(proc_cpu "$server")
	qb=$(query run "$q1")
	qc=$(query run "$q2")
	qcpu=$(echo "$c1 - $c0" | bc -l)
	srv_rss=$(awk '/VmHWM/ { print $2 }' "/proc/$server/status")
	kill "$server" && wait "$server" 2>/dev/null || true
	server=

	rows+=("$(printf '%s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s' \
		"$n" "$tasks" "$wall" "$task_s" "$ctl_wall" "$ctl_cpu" "$ctl_rss" "$task_rss" \
		"$st_wall" "$st_cpu" "$ix_wall" "$ix_cpu" "$ix_rss" "$qa" "$qb" "$qc" "$srv_rss" \
		"$files" "$procs" "$qcpu")")
	echo "measured: ${rows[-1]}" >&2

	# a task finding its row, the two ways, with the member's lock held by us so that
	# the task stops right after (it reports the member as being ingested)
	member=$(awk -F'\t' 'NR == 2 { print $3 }' "$d/fleet/run/manifest.tsv")
	list=$(ls "$d"/fleet/run/slurm/array-*-0.list | head -n 1)
	line=$(awk -F'\t' -v m="$member" '$3 == m { print NR - 1; exit }' "$list")
	exec {lockfd}>>"$d/fleet/run/status/$member.lock"
	flock -n "$lockfd"
	cpu_of() { # reps command... -> CPU ms per call
		local reps=$1 total=0 c
		shift
		for ((k = 0; k < reps; k++)); do
			/usr/bin/time -f '%U %S' -o "$work/lk.time" "$@" >/dev/null 2>"$work/lk.err" || true
			grep -q "being ingested by another process" "$work/lk.err" ||
				{ cat "$work/lk.err" >&2; exit 1; }
			c=$(tail -n 1 "$work/lk.time" | awk '{ print $1 + $2 }')
			total=$(echo "$total + $c" | bc -l)
		done
		echo "$total * 1000 / $reps" | bc -l
	}
	old=$(cpu_of 20 "$bin" fleet run-task --data-path "$d" --run run --task 0)
	new=$(cpu_of 20 "$bin" fleet run-task --data-path "$d" --run run --list "$list" \
		--array-index "$line")
	exec {lockfd}>&-
	width=$(head -n 1 "$list" | wc -c)
	lookup+=("$n $tasks $old $new $(stat -c %s "$d/fleet/run/manifest.tsv") $width")
	echo "lookup: ${lookup[-1]}" >&2
done

echo "fleet at scale: private Slurm, $slots slots, $(nproc) cores; each pair a hard link to one capture"
echo "(wall times on a loaded machine are indicative only; CPU seconds and counts are not)"
printf '%s\n' "${rows[@]}" | sort -n | awk -v slots="$slots" '
BEGIN {
	printf "%6s %6s %8s %8s %9s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s %8s %7s %6s\n",
		"pairs", "tasks", "wall_s", "task_s", "ovh/task", "ctl_cpu", "ctl_MB", "task_MB",
		"stat_cpu", "idx_wall", "idx_cpu", "idx_MB", "q1st_s", "q1st_cpu", "qwarm_s",
		"qinst_s", "files", "procs"
}
{
	ovh = (slots * $3 - $4) / $2
	printf "%6d %6d %8.1f %8.1f %9.3f %9.2f %9.0f %9.0f %9.2f %9.2f %9.2f %8.0f %8.3f %8.2f %8.3f %8.3f %7d %6d\n",
		$1, $2, $3, $4, ovh, $6, $7 / 1024, $8 / 1024, $10, $11, $12, $13 / 1024, $14, $20,
		$15, $16, $18, $19
	if (NR == 1) { t0 = $2; o0 = ovh; i0 = $12 / $2; s0 = $10 / $2; f0 = $18 / $2; q0 = $20 / $2 }
	t[NR] = $2; o[NR] = ovh; ic[NR] = $12 / $2; sc[NR] = $10 / $2; fl[NR] = $18 / $2
	qf[NR] = $20 / $2; srv[NR] = $17; nr = NR
}
END {
	print ""
	print "growth per task against the smallest run (1.00 = linear in the run):"
	printf "%6s %10s %10s %10s %10s %12s %10s\n", "tasks", "overhead", "index_cpu",
		"status_cpu", "files", "q_first_cpu", "server_MB"
	for (i = 1; i <= nr; i++)
		printf "%6d %10.2f %10.2f %10.2f %10.2f %12.2f %10.0f\n", t[i],
			(o0 > 0 ? o[i] / o0 : 0), (i0 > 0 ? ic[i] / i0 : 0), (s0 > 0 ? sc[i] / s0 : 0),
			fl[i] / f0, (q0 > 0 ? qf[i] / q0 : 0), srv[i] / 1024
}'
echo
echo "a task finding its row (CPU per call, 20 calls; the task then stops at the member's lock):"
printf '%s\n' "${lookup[@]}" | sort -n | awk '
BEGIN { printf "%6s %6s %14s %14s %14s %14s %16s\n", "pairs", "tasks", "manifest_ms",
	"list_ms", "manifest_B", "list_B/task", "run_total_B(old)" }
{ printf "%6d %6d %14.2f %14.2f %14d %14d %16d\n", $1, $2, $3, $4, $5, 2 * $6, $2 * $5 }'
