#!/usr/bin/env bash
# run.sh BUILD_DIR: the benchmarks (never run by ctest). Prints figures to stdout and
# keeps a copy in bench/results/<date>.txt. Each benchmark measures its own baseline in
# the same run, so ratios hold even on a noisy machine.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=${NX_BENCH_DIR:-$build/bench-work}
mkdir -p "$work" "$here/results"
out="$here/results/$(date +%Y%m%d-%H%M%S).txt"
exec > >(tee "$out") 2>&1

echo "# neuron-explorer benchmarks, $(date -u), $(nproc) cores"
for b in "$here"/ingest.sh "$here"/sim.sh "$here"/server.sh "$here"/trace.sh "$here"/recommend.sh; do
	[ -x "$b" ] || continue
	echo
	echo "## $(basename "$b" .sh)"
	"$b" "$build" "$work"
done
echo
echo "results kept in $out"
