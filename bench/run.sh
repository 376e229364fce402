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
# Nothing here installs anything or runs sudo: a missing tool is named with the command
# that installs it, and the benchmarks that need it are skipped.
need=()
for t in wrk bc; do command -v $t >/dev/null || need+=("$t"); done
[ -x /usr/bin/time ] || need+=(time)
if [ "${#need[@]}" -gt 0 ]; then
	echo "bench: missing ${need[*]}; install with: sudo apt-get install ${need[*]}"
	echo "bench: skipping the benchmarks that need them"
fi
missing() { for t in "$@"; do [[ " ${need[*]} " == *" $t "* ]] && return 0; done; return 1; }
if [ ! -x "$build/bench/bench_sim" ]; then
	echo "bench: $build was configured with -DNX_BENCH=OFF: no benchmark programs to run"
	exit 1
fi

echo "# neuron-explorer benchmarks, $(date -u), $(nproc) cores"
section() { echo; echo "## $1"; }
skip() { echo "skipped: needs $*"; }
section ingest;    if missing time; then skip time; else "$here/ingest.sh" "$build" "$work"; fi
section sim;       if missing bc; then skip bc; else "$here/sim.sh" "$build" "$work"; fi
# NX_BENCH_REFERENCE (unset: the parts that need it are skipped): a folder holding the
# NKI calibration kernels and tutorials (e.g. a team library's reference/), given by the
# caller and read only by the calibration and NKI benchmarks; nothing outside the
# repository is looked for by default
ref=${NX_BENCH_REFERENCE:-}
calib_ref=(); [ -n "$ref" ] && [ -r "$ref/nki-calibration/measured.tsv" ] && calib_ref=(--reference "$ref")
section calibration; "$here/calibration.sh" "$build" "$work" "${calib_ref[@]}"
nki_ref=(); [ -n "$ref" ] && [ -d "$ref/nki-samples" ] && nki_ref=("$ref")
section nki;       if missing bc; then skip bc; else "$here/nki.sh" "$build" "$work" "${nki_ref[@]}"; fi
# a real NKI kernel's profile (the repository's tiled matmul, two sizes) through nki run,
# kernel asm, capture, view, recommend and the server's first answers
section nki-view;  if missing bc time; then skip bc time; else "$here/nki_view.sh" "$build" "$work"; fi
section server;    if missing wrk bc time; then skip wrk bc time; else "$here/server.sh" "$build"; fi
section soak;      if missing wrk; then skip wrk; else DURATION=${SOAK_DURATION:-5m} "$here/soak.sh" "$build"; fi
section trace;     if missing time; then skip time; else "$here/trace.sh" "$build"; fi
# the legacy JSON export at 10M records against DuckDB's COPY ... (FORMAT json)
section json;      if missing time; then skip time; else "$here/json_export.sh" "$build" "$work"; fi
section recommend; if missing time; then skip time; else "$here/recommend.sh" "$build" "$work"; fi
section fleet;     if missing time bc; then skip time bc; else "$here/fleet.sh" "$build" "$work"; fi
# The web UI at 10M and 100M trace records (NX_BENCH_UI_SIZES): timeline cache, viewport
# latency per zoom level, page data (bench/ui_pages.sh), panning frame rate in Chromium.
section ui;        if missing bc; then skip bc; else SIZES=${NX_BENCH_UI_SIZES:-10 100} "$here/ui_timeline.sh" "$build" "$work"; fi
# The fuzzing campaign takes hours at 10M executions per target: only on request.
section fuzz
if [ -n "${NX_BENCH_FUZZ_RUNS:-}" ]; then
	"$here/fuzz.sh" "$build-fuzz" "$NX_BENCH_FUZZ_RUNS"
else
	echo "skipped: set NX_BENCH_FUZZ_RUNS=10000000 (or run bench/fuzz.sh) for a campaign"
fi
echo
echo "results kept in $out"
