#!/usr/bin/env bash
# fleet_members.sh [PAIRS...]: memory of the fleet index and of a server opening a run,
# against the number of members, without Slurm and without ingesting every member. One
# instance (two NEFF/NTFF pairs of one small captured kernel and a framework trace) is
# ingested with `fleet ingest -j 2`; a run of P pairs (default 50, 200 and 500) is then
# made of P/2 copies of that instance: each member's profile directory is hard-linked
# under a new member name, with its manifest row (instance, pid and rank of the copy) and
# its status file, so members differ by their names and paths only (which is all the
# index and the union views see of them besides their rows). Per size it prints the
# members, their files, `fleet index` (wall, CPU, peak RSS) and a server opening the run
# (`view --disable-ui`, a cross-profile query over the Summary union view, which opens
# it, then one over every member's Instruction rows): its CPU and peak RSS.
# Environment: NX_BENCH_BUILD (default ./build), NX_BENCH_KEEP=1 keeps the work
# directory. CPU seconds and peak RSS hold on a loaded machine; wall times do not.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=$(cd "${NX_BENCH_BUILD:-$src/build}" && pwd)
bin=$build/neuron-explorer
sizes=${*:-50 200 500}
for n in $sizes; do
	case $n in '' | *[!0-9]*) echo "usage: fleet_members.sh [PAIRS...] (even, >= 2)" >&2; exit 2 ;; esac
	[ "$n" -ge 2 ] && [ $((n % 2)) -eq 0 ] || { echo "fleet_members.sh: $n: even and >= 2" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-fleet-members.XXXXXX")
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	[ "${NX_BENCH_KEEP:-0}" = 1 ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

# the one instance, ingested for real
bash "$src/tests/tools/slurm_fleet_run.sh" "$bin" "$work/base" 1 -1 >/dev/null
"$bin" fleet ingest "$work/base" --data-path "$work/d0" --display-name run -j 2 >"$work/base.log" 2>&1 ||
	{ tail -n 5 "$work/base.log" >&2; exit 1; }
man0=$work/d0/fleet/run/manifest.tsv

# make_run DIR INSTANCES: copies of the base members as instances ip-10-0-0-<i>
make_run() {
	local d=$1 prof new
	mkdir -p "$d/profiles/global" "$d/fleet/run/status" "$d/fleet/run/logs"
	awk -F'\t' -v OFS='\t' -v n="$2" '
	NR == 1 { print; next }
	{ row[++k] = $0 }
	END {
		t = 0
		for (i = 0; i < n; i++)
			for (j = 1; j <= k; j++) {
				split(row[j], f, "\t")
				f[1] = t++
				f[3] = "run-c" i "-" substr(f[3], 5)
				f[4] = "ip-10-0-0-" i
				f[5] = 4000 + i
				if (f[2] == "trace")
					f[8] = i
				line = f[1]
				for (c = 2; c <= 10; c++)
					line = line OFS f[c]
				print line
			}
	}' "$man0" >"$d/fleet/run/manifest.tsv"
	for ((i = 0; i < $2; i++)); do
		for prof in $(tail -n +2 "$man0" | cut -f 3); do
			new="run-c$i-${prof#run-}"
			cp -al "$work/d0/profiles/global/$prof@latest" "$d/profiles/global/$new@latest"
			cp "$work/d0/fleet/run/status/$prof.done" "$d/fleet/run/status/$new.done"
		done
	done
}

. "$here/fleet_lib.sh" # timed, start_server, proc_cpu
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
query() { # SQL
	local body
	body=$(printf '{"type":"databaseExplorerQuery","query":"%s"}' "$1")
	curl -s -o "$work/q.json" -X POST -H 'Content-Type: application/json' -d "$body" \
		"http://127.0.0.1:$port/api/v1/db/run/_search"
	grep -q '"error"' "$work/q.json" && { echo "query failed: $(head -c 300 "$work/q.json")" >&2; exit 1; }
	return 0
}

rows=()
for n in $sizes; do
	d=$work/data$n
	make_run "$d" $((n / 2))
	members=$(($(wc -l <"$d/fleet/run/manifest.tsv") - 1))
	files=$(find "$d/profiles/global" -name '*.parquet' | wc -l)
	read -r ix_wall ix_cpu ix_rss < <(timed "$work/index$n.log" "$bin" fleet index \
		--data-path "$d" --display-name run)
	grep -q "^$n$" <(awk -F'\t' '$2 == "device"' "$d/fleet/run/manifest.tsv" | wc -l) ||
		{ echo "size $n: unexpected manifest" >&2; exit 1; }

	start_server "$d" "$work/server$n.log"
	c0=$(proc_cpu "$server")
	query "SELECT count(DISTINCT profile) AS members, max(total_time) FROM Summary"
	grep -q "\"rows\":\[\[$n," "$work/q.json" || { echo "size $n: $(head -c 300 "$work/q.json")" >&2; exit 1; }
	c1=$(proc_cpu "$server")
	query "SELECT count(DISTINCT profile) AS members, count(*) AS instructions FROM Instruction"
	c2=$(proc_cpu "$server")
	grep -q "\"rows\":\[\[$n," "$work/q.json" || { echo "size $n: $(head -c 300 "$work/q.json")" >&2; exit 1; }
	srv_rss=$(awk '/VmHWM/ { print $2 }' "/proc/$server/status")
	kill "$server" && wait "$server" 2>/dev/null || true
	server=
	rows+=("$n $members $files $ix_wall $ix_cpu $ix_rss $(echo "$c1 - $c0" | bc -l) $(echo "$c2 - $c1" | bc -l) $srv_rss")
	echo "measured: ${rows[-1]}" >&2
	rm -rf "$d"
done

echo "fleet index and server memory against members (copies of one instance; $(nproc) cores)"
echo "(CPU and peak RSS hold under load; wall time does not)"
printf '%s\n' "${rows[@]}" | awk '
BEGIN {
	printf "%6s %8s %8s %9s %9s %8s %11s %11s %10s\n", "pairs", "members", "files",
		"idx_wall", "idx_cpu", "idx_MB", "open_cpu_s", "inst_cpu_s", "server_MB"
}
{
	printf "%6d %8d %8d %9.2f %9.2f %8.0f %11.2f %11.2f %10.0f\n", $1, $2, $3, $4, $5,
		$6 / 1024, $7, $8, $9 / 1024
}'
