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

# Load generators and helpers the benchmarks use (not needed by the build or tests).
need=()
for t in wrk bc; do command -v $t >/dev/null || need+=("$t"); done
[ -x /usr/bin/time ] || need+=(time)
if [ "${#need[@]}" -gt 0 ]; then
	SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

echo "# neuron-explorer benchmarks, $(date -u), $(nproc) cores"
section() { echo; echo "## $1"; }
section ingest;    "$here/ingest.sh" "$build" "$work"
section sim;       "$here/sim.sh" "$build" "$work"
section calibration; "$here/calibration.sh" "$build" "$work"
section server;    "$here/server.sh" "$build"
section trace;     "$here/trace.sh" "$build"
section recommend; "$here/recommend.sh" "$build" "$work"
section fleet;     "$here/fleet.sh" "$build" "$work"
echo
echo "results kept in $out"
