#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz.sh [FUZZ_BUILD_DIR [RUNS [TARGET...]]]: a fuzzing campaign (not a test): builds the
# libFuzzer targets with clang (-DNX_FUZZ=ON) when needed and runs each (every target of
# tests/fuzz/corpus/, or the ones named) from its committed seed corpus for RUNS
# executions (default 10000000) or NX_FUZZ_MAX_SECONDS (default 3600: one hour), whichever
# comes first, printing executions, executions/s and new inputs per target; findings are
# kept in FUZZ_BUILD_DIR/fuzz-artifacts and fail the run. The fast targets (search,
# listing, the timeline's) reach 10M executions in minutes; the file-based ones (NTFF,
# trace events) run at a few hundred executions/s and stop at the hour: the whole
# campaign takes up to an hour per target.
#   bench/fuzz.sh build-fuzz 10000000 ntff neff
#   NX_FUZZ_MAX_SECONDS=60 bench/fuzz.sh build-fuzz 100000      # a quick check
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-fuzz}
runs=${2:-10000000}
secs=${NX_FUZZ_MAX_SECONDS:-3600}
shift $(( $# >= 2 ? 2 : $# )) || true
if ! command -v clang > /dev/null; then
	echo "fuzz: clang is not installed (it is needed for libFuzzer): apt-get install clang libclang-rt-dev"
	exit 1
fi
CC=clang cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNX_FUZZ=ON \
	-DBUILD_TESTING=OFF -DNX_BENCH=OFF > /dev/null
ninja -C "$build" fuzz > /dev/null
echo "# libFuzzer campaign: $runs executions or $secs s per target, whichever comes first," \
	"$(nproc) cores, $(date -u)"
start=$(date +%s)
rc=0
bash "$here/tests/fuzz/run.sh" "$build" -n "$runs" -t "$secs" "$@" || rc=$?
echo "campaign took $(( $(date +%s) - start )) s"
exit $rc
