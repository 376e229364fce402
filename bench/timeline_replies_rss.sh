#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeline_replies_rss.sh: the server's peak through bench/timeline_replies.py's requests
# (not a ctest test). A fresh `neuron-explorer view` serves DATA_PATH; the requests (seed
# 40, AGG aggregates, 10 by default) go to PROFILE with the server's pid, so OUT gets each
# request's VmHWM before and after and its CPU ms; prints the replies' SHA-256, the server's
# VmHWM at the start and the end, and per route the CPU seconds summed, the requests that
# raised the peak and by how much (MiB). The environment reaches the server. Serve a
# hard-linked copy (`cp -al`) whose timeline cache is built.
#
# usage: bench/timeline_replies_rss.sh BUILD_DIR DATA_PATH PROFILE OUT [AGG]
set -euo pipefail
usage="usage: bench/timeline_replies_rss.sh BUILD_DIR DATA_PATH PROFILE OUT [AGG]"
build=$(cd "${1:?$usage}" && pwd)
data=${2:?$usage}
name=${3:?$usage}
out=${4:?$usage}
agg=${5:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib_server.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-replies.XXXXXX")
trap 'nx_serve_stop; rm -rf "$work"' EXIT
nx_serve "$build" "$work/view.out" --data-path "$data" --disable-ui
echo "load average: $(nx_load), $(nproc) cores"
echo "VmHWM at the start: $(nx_hwm_mib "$nx_pid") MiB"
python3 "$here/timeline_replies.py" "${nx_api##*:}" "$name" "$out" "$agg" "$nx_pid" > "$work/py.out"
head -1 "$work/py.out"
echo "VmHWM at the end: $(nx_hwm_mib "$nx_pid") MiB"
echo "load average: $(nx_load)"
awk '{ split($7, a, "?"); r = a[1]; cpu[r] += $6; n[r]++; d = $5 - $4; if (d > 0) { up[r] += d; k[r]++ } }
	END { for (r in cpu) printf "%-22s n %4d cpu %6.2f s  raised the peak %3d times by %6.1f MiB\n", r, n[r], cpu[r] / 1000, k[r], up[r] / 1024 }' "$out" | sort
