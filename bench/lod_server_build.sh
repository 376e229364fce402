#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lod_server_build.sh: the timeline cache as a server builds it for a profile that does
# not carry one (docs/memory.md, "The timeline cache"). The profile's files are
# hard-linked, without its .timeline, into a fresh data path under WORK_DIR (the profile
# itself is only read), a `view` server is started on it, and the first
# GET .../timeline/tracks makes it build the cache. Prints the request's wall time, the
# server's CPU seconds over it (user + system, /proc: the figure to compare on a loaded
# machine), its peak RSS (VmHWM) and the cache's size. The scratch data path is removed.
# NX_LOD_MEMORY_LIMIT, NX_LOD_CHUNK_ROWS, NX_LOD_SLICE_GROUPS and NX_LOD_PURGE_MS pass to the
# server (lod.h).
#
# usage: bench/lod_server_build.sh PROFILE_DIR [BUILD_DIR] [WORK_DIR]
#   PROFILE_DIR: <data>/profiles/global/<name>@latest; BUILD_DIR holds neuron-explorer
set -euo pipefail
prof=$(cd "${1:?usage: lod_server_build.sh PROFILE_DIR [BUILD_DIR] [WORK_DIR]}" && pwd)
build=$(cd "${2:-build}" && pwd)
parent=${3:-${TMPDIR:-/tmp}}
mkdir -p "$parent"
work=$(mktemp -d "$parent/lod_server_build.XXXXXX")
base=$(basename "$prof")
name=${base%@latest}
[[ $base == "$name@latest" && -f $prof/Instruction.parquet ]] ||
	{ echo "lod_server_build.sh: $prof is not a profile (<name>@latest)" >&2; exit 2; }
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
dst=$work/data/profiles/global/$base
mkdir -p "$dst"
# hard links (the same file system) or else copies; never the carried cache
for f in "$prof"/*; do
	ln "$f" "$dst/" 2>/dev/null || cp -r "$f" "$dst/"
done
"$build/neuron-explorer" view --data-path "$work/data" --disable-ui --api-server-port 0 \
	> "$work/view.out" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q '^Ready:' "$work/view.out" && break; sleep 0.1; done
api=$(sed -n 's|^Ready: API server listening on \(http://127.0.0.1:[0-9]*\)/api/v1 .*|\1|p' \
	"$work/view.out")
if [[ -z $api ]]; then
	echo "lod_server_build.sh: the server did not start: $(cat "$work/view.out")" >&2
	exit 1
fi
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
tick=$(getconf CLK_TCK)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
c0=$(cpu)
t0=$(date +%s.%N)
curl -sf -o /dev/null "$api/api/v1/profiles/namespace/global/profile_name/$name/timeline/tracks"
t1=$(date +%s.%N)
c1=$(cpu)
cache=$(find "$work/data/.cache/timeline" -name timeline.duckdb | head -1)
if [[ -z $cache ]]; then
	echo "lod_server_build.sh: the server built no cache: $(cat "$work/view.out")" >&2
	exit 1
fi
awk -v t="$(echo "$t1 - $t0" | bc)" -v c="$(echo "($c1 - $c0) / $tick" | bc -l)" \
	-v hwm="$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")" -v b="$(stat -c %s "$cache")" \
	-v p="$prof" 'BEGIN {
	printf "server build of the timeline cache of %s: %.2f s, CPU %.2f s, ", p, t, c
	printf "server peak RSS %.0f MB, timeline.duckdb %.1f MB\n", hwm / 1024, b / 1e6 }'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
