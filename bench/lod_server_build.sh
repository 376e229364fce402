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
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib_server.sh"
cleanup() {
	nx_serve_stop
	rm -rf "$work"
}
trap cleanup EXIT
dst=$work/data/profiles/global/$base
mkdir -p "$dst"
# hard links (the same file system) or else copies; never the carried cache
for f in "$prof"/*; do
	ln "$f" "$dst/" 2>/dev/null || cp -r "$f" "$dst/"
done
nx_serve "$build" "$work/view.out" --data-path "$work/data" --disable-ui ||
	{ echo "lod_server_build.sh: the server did not start" >&2; exit 1; }
echo "load average: $(nx_load), $(nproc) cores"
c0=$(nx_cpu_ms "$nx_pid")
t0=$(date +%s.%N)
curl -sf -o /dev/null "$nx_api/api/v1/profiles/namespace/global/profile_name/$name/timeline/tracks"
t1=$(date +%s.%N)
c1=$(nx_cpu_ms "$nx_pid")
cache=$(find "$work/data/.cache/timeline" -name timeline.duckdb | head -1)
if [[ -z $cache ]]; then
	echo "lod_server_build.sh: the server built no cache: $(cat "$work/view.out")" >&2
	exit 1
fi
awk -v t="$(echo "$t1 - $t0" | bc)" -v c="$(( c1 - c0 ))" \
	-v hwm="$(nx_hwm_mib "$nx_pid")" -v b="$(stat -c %s "$cache")" \
	-v p="$prof" 'BEGIN {
	printf "server build of the timeline cache of %s: %.2f s, CPU %.2f s, ", p, t, c / 1000
	printf "server peak RSS %.0f MiB, timeline.duckdb %.1f MB\n", hwm, b / 1e6 }'
echo "load average: $(nx_load)"
