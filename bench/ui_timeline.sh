#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ui_timeline.sh: viewport latency of the web UI's timeline endpoint (not a ctest test).
# Writes a synthetic profile of ROWS Instruction rows (5 engine tracks, ordered by start
# time, as ingest writes them) with nx-sql, serves it with `neuron-explorer view`, and
# times GET .../timeline?t0&t1&px=1600 at several zoom levels (whole profile down to
# 1e-5 of it) at random offsets. Prints p50/p99 per level, the server's CPU time per
# request (user + sys from /proc: a figure that a loaded machine disturbs less than
# wall time), the reply size and whether the level came from the LOD pyramid. The first
# request builds the pyramid (<data>/.cache/timeline): its time and size are printed.
#
# usage: bench/ui_timeline.sh [BUILD_DIR]    env: ROWS (10000000)  N (20 requests per level)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rows=${ROWS:-10000000}
n=${N:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-ui.XXXXXX")
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
dir=$work/data/profiles/global/big@latest
mkdir -p "$dir"
t=$(date +%s.%N)
(cd "$dir" && "$build/nx-sql" "COPY (SELECT i AS id, 0::BIGINT AS pcore_idx,
	(['Tensor','Vector','Scalar','GpSimd','Sync'])[1 + (i % 5)::INT] AS timeline_track,
	(['MATMUL','LDWEIGHTS','ACTIVATE','TENSOR_TENSOR','IOTA'])[1 + (hash(i) % 5)::INT] AS opcode,
	(i * 8)::BIGINT AS start_ts, (i * 8 + 5 + hash(i * 7) % 60)::BIGINT AS end_ts
	FROM range($rows) t(i) ORDER BY start_ts) TO 'Instruction.parquet' (FORMAT parquet)" >/dev/null)
echo "generated $rows rows in $(echo "$(date +%s.%N) - $t" | bc) s ($(du -h "$dir/Instruction.parquet" | cut -f1))"
"$build/neuron-explorer" view --data-path "$work/data" --port 0 --api-server-port 0 -q \
	> "$work/view.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "ctrl-c" "$work/view.out" && break; sleep 0.1; done
api=$(sed -n 's|^\(Ready: \)\{0,1\}API server listening on \(http://127.0.0.1:[0-9]*\)/api/v1 .*|\2|p' "$work/view.out")
base="$api/api/v1/profiles/namespace/global/profile_name/big"
end=$((rows * 8))
get() { curl -sf -o "$work/r.json" -w '%{time_total}' "$base/timeline?t0=$1&t1=$2&px=1600"; }
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
tck=$(getconf CLK_TCK)
echo "first request (opens the database, builds the LOD pyramid): $(get 0 $end) s"
lod=$(find "$work/data/.cache/timeline" -name TimelineLod.parquet)
echo "LOD pyramid: $(stat -c %s "$lod") bytes, $("$build/nx-sql" "SELECT count(*) FROM '$lod'") rows" \
	"(Instruction.parquet: $(stat -c %s "$dir/Instruction.parquet") bytes)"
printf '%-10s %10s %10s %10s %10s %12s %5s\n' fraction span_ns p50_ms p99_ms cpu_ms reply_bytes lod
for frac in 1 0.3 0.1 0.03 0.01 0.003 0.001 0.0003 0.0001 0.00001; do
	span=$(awk -v e=$end -v f=$frac 'BEGIN { printf "%d", e * f }')
	: > "$work/times"
	c0=$(cpu)
	for i in $(seq "$n"); do
		t0=$(awk -v e=$end -v s=$span -v r=$RANDOM 'BEGIN { printf "%d", (e - s) * r / 32767 }')
		get "$t0" $((t0 + span)) >> "$work/times"; echo >> "$work/times"
	done
	c=$(( ($(cpu) - c0) * 1000 / tck / n ))
	l=$(grep -o '"lod":[a-z]*' "$work/r.json" | head -1 | cut -d: -f2)
	sort -n "$work/times" | awk -v f=$frac -v s=$span -v b=$(stat -c %s "$work/r.json") \
		-v c=$c -v l=$l '{ v[NR] = $1 * 1000 } END { printf "%-10s %10d %10.1f %10.1f %10d %12d %5s\n",
		f, s, v[int((NR + 1) / 2)], v[int(NR * 0.99 + 0.999)], c, b, l }'
done
