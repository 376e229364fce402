#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# soak.sh: soak test of the HTTP API server (a benchmark, not a ctest test).
# Captures a kernel (kernel gen + capture), publishes it as two profiles with
# `view --ingest-only`, serves the data path with `neuron-explorer view --disable-ui`,
# and runs wrk with 16 connections for DURATION; bench/soak.lua rotates the seed
# workflow's queries (Summary, instruction breakdown, source-line hotspots, a
# SchemaFields lookup, listDbFiles) over both profiles. Meanwhile a loop re-publishes
# the two profiles every REPUBLISH_EVERY seconds, so the server keeps finding new
# @latest directories while it serves them. The server's RSS (VmRSS), thread and
# open-file counts are sampled every SAMPLE_EVERY seconds into a CSV, and the curve is
# printed: min/max per minute, first vs last window, and the least-squares slope after
# the first minute. Prints requests, errors (non-2xx and socket errors, failed
# re-publishes) and p50/p99; exits 1 on any error.
#
# usage: bench/soak.sh [BUILD_DIR]
#   env: DURATION (30m; wrk syntax: 90s, 5m, 1h)  CONNECTIONS (16)  WRK_THREADS (2)
#        KERNEL (matmul_v0)  SIZE (2048)  REPUBLISH_EVERY (3 s)  SAMPLE_EVERY (10 s)
#        ACCESS_LOG=1 keeps the server's access log  KEEP=1 keeps the work directory
#        (it is kept anyway on failure)
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
duration=${DURATION:-30m}
conns=${CONNECTIONS:-16}
wthreads=${WRK_THREADS:-2}
kernel=${KERNEL:-matmul_v0}
size=${SIZE:-2048}
every=${REPUBLISH_EVERY:-3}
sample_every=${SAMPLE_EVERY:-10}
bin=$build/neuron-explorer
[[ -x $bin ]] || { echo "missing $bin: build the project (ninja -C $build) first" >&2; exit 1; }
for t in wrk curl python3; do
	command -v $t >/dev/null || { echo "$t is not installed (apt-get install $t)" >&2; exit 1; }
done
case $duration in
*h) secs=$(( ${duration%h} * 3600 )) ;;
*m) secs=$(( ${duration%m} * 60 )) ;;
*s) secs=${duration%s} ;;
*) secs=$duration; duration=${duration}s ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-soak.XXXXXX")
server_pid= sampler_pid= publisher_pid=
stop() { [[ -z $1 ]] || { kill "$1" && wait "$1"; } 2>/dev/null || true; }
# The re-publisher is asked to stop and waited for: killing its loop would leave an
# ingest running that still writes into the work directory while it is removed.
stop_publisher() { [[ -z $1 ]] || { touch "$work/stop-publishing"; wait "$1" 2>/dev/null || true; }; }
cleanup() {
	stop_publisher "$publisher_pid"; stop "$sampler_pid"; stop "$server_pid"
	[[ ${KEEP:-0} == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT

# The profile: one captured kernel, published under two names.
"$bin" kernel gen "$kernel" --size "$size" -o "$work/k.neff" -q
"$bin" capture -n "$work/k.neff" -s "$work/k.ntff" -q
publish() { # NAME: one ingest into the served data path
	"$bin" view -n "$work/k.neff" -s "$work/k.ntff" --data-path "$work/data" \
		--display-name "$1" --ingest-only -q >/dev/null 2>>"$work/publish.err"
}
profiles="soak-a soak-b"
for p in $profiles; do publish "$p"; done
size_a=$(du -sh "$work/data/profiles/global/soak-a@latest" | cut -f1)
echo "profile: $kernel --size $size, $size_a of parquet, published as: $profiles"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0))
print(s.getsockname()[1])')
quiet=-q
[[ ${ACCESS_LOG:-0} == 1 ]] && quiet=
"$bin" view --data-path "$work/data" --disable-ui --api-server-port "$port" $quiet \
	>"$work/server.out" 2>"$work/server.err" &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
	curl -s "$base/api/v1/health" 2>/dev/null | grep -q healthy && break
	sleep 0.1
done
curl -s "$base/api/v1/health" | grep -q healthy || { echo "the server did not start" >&2; exit 1; }

# RSS sampler: elapsed seconds, VmRSS in KiB, threads, open files, and the resident
# KiB of the main malloc heap ([heap], glibc's main arena; the rest of the anonymous
# memory is thread arenas, jemalloc's (DuckDB's buffers) and stacks).
csv=$work/rss.csv
echo "t_s,rss_kib,threads,fds,heap_kib" >"$csv"
sample() { # SECONDS: appends one row
	local st=/proc/$server_pid/status
	echo "$1,$(awk '/^VmRSS:/ {print $2}' $st),$(awk '/^Threads:/ {print $2}' $st)," \
		"$(ls /proc/$server_pid/fd 2>/dev/null | wc -l)," \
		"$(awk '/\[heap\]/ {h = 1; next} h && /^Rss:/ {print $2; exit}' \
			/proc/$server_pid/smaps 2>/dev/null)" | tr -d ' ' >>"$csv"
}
(
	t0=$(date +%s)
	while [[ -r /proc/$server_pid/status ]]; do
		sample $(( $(date +%s) - t0 ))
		sleep "$sample_every"
	done
) &
sampler_pid=$!

# Re-publisher: alternates the two names; one line per ingest, "ok" or "fail".
(
	while [[ ! -e $work/stop-publishing ]]; do
		for p in $profiles; do
			[[ -e $work/stop-publishing ]] && break
			if publish "$p"; then echo ok; else echo fail; fi >>"$work/publish.log"
			sleep "$every"
		done
	done
) &
publisher_pid=$!

echo "soak: $duration, wrk $wthreads threads, $conns connections," \
	"re-publishing every ${every} s, RSS every ${sample_every} s, $(nproc) cores"
SOAK_PROFILES=$profiles wrk -t"$wthreads" -c"$conns" -d"$duration" --timeout 60s --latency \
	-s "$here/soak.lua" "$base" >"$work/wrk.out"
kill -0 "$server_pid" 2>/dev/null || { echo "FAILED: the server died (work directory kept: $work)" >&2
	KEEP=1; exit 1; }
# One last sample after the load.
stop_publisher "$publisher_pid"; publisher_pid=
stop "$sampler_pid"; sampler_pid=
sample "$secs"

reqs=$(awk '/requests in/ {print $1}' "$work/wrk.out")
rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/wrk.out")
p50=$(awk '$1 == "50%" {print $2}' "$work/wrk.out")
p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.out")
non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$work/wrk.out")
sock=$(awk '/Socket errors:/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "$work/wrk.out")
pub_ok=$(grep -c '^ok' "$work/publish.log" || true)
pub_fail=$(grep -c '^fail' "$work/publish.log" || true)
echo "requests: $reqs ($rps/s)  p50 $p50  p99 $p99"
echo "errors: ${non2xx:-0} non-2xx, ${sock:-0} socket errors," \
	"$pub_fail failed re-publishes (of $(( pub_ok + pub_fail )))"

# The RSS curve. Window for first vs last: 5 minutes, or a quarter of a shorter run.
win=$(( secs >= 1200 ? 300 : secs / 4 ))
awk -F, -v secs="$secs" -v win="$win" 'NR > 1 {
	m = int($1 / 60); r = $2 / 1024
	if (!(m in lo) || r < lo[m]) lo[m] = r
	if (!(m in hi) || r > hi[m]) hi[m] = r
	if (m > last) last = m
	if (NR == 2) { first_r = r; first_t = $3; first_f = $4; first_h = $5 / 1024 }
	end_r = r; end_t = $3; end_f = $4; end_h = $5 / 1024
	if (r > max_r) max_r = r
	if ($1 > 0 && $1 <= win) { fs += r; fn++ }	# t = 0 is before the load
	if ($1 >= secs - win) { ls += r; ln++ }
	if ($1 >= 60) { n++; sx += $1; sy += r; sxx += $1 * $1; sxy += $1 * r
			hy += $5 / 1024; hxy += $1 * $5 / 1024 }
} END {
	printf "RSS MiB per minute (min-max):"
	for (i = 0; i <= last; i++) if (i in lo) printf " %d:%.0f-%.0f", i, lo[i], hi[i]
	printf "\n"
	printf "RSS MiB: start %.1f  max %.1f  end %.1f; mean first %d s %.1f, last %d s %.1f\n",
		first_r, max_r, end_r, win, fn ? fs / fn : 0, win, ln ? ls / ln : 0
	if (n >= 2 && n * sxx - sx * sx > 0) {
		printf "RSS slope after the first minute: %+.2f MiB/min (%d samples)\n",
			60 * (n * sxy - sx * sy) / (n * sxx - sx * sx), n
		printf "main heap MiB: start %.1f end %.1f, slope %+.2f MiB/min\n", first_h, end_h,
			60 * (n * hxy - sx * hy) / (n * sxx - sx * sx)
	}
	printf "threads: start %d end %d; open files: start %d end %d\n", first_t, end_t, first_f, end_f
}' "$csv"

if (( ${non2xx:-0} + ${sock:-0} + pub_fail )); then
	echo "FAILED: errors (work directory kept: $work; wrk.out, server.err, publish.err, rss.csv)" >&2
	KEEP=1
	exit 1
fi
echo "zero errors"
[[ ${KEEP:-0} == 1 ]] && echo "RSS samples: $csv"
exit 0
