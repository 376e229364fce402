#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz.sh [FUZZ_BUILD_DIR [RUNS [TARGET...]]]: a fuzzing campaign (not a test): builds the
# libFuzzer targets with clang (-DNX_FUZZ=ON) when needed and runs each for RUNS
# executions (default 10000000) from its committed seed corpus, printing executions,
# executions/s and new inputs per target; findings are kept in FUZZ_BUILD_DIR/fuzz-artifacts
# and fail the run. At a few hundred executions/s for the file-based targets (NTFF, trace
# events) 10M executions take hours: pass a smaller RUNS for a shorter campaign.
#   bench/fuzz.sh build-fuzz 10000000 ntff neff
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-fuzz}
runs=${2:-10000000}
shift $(( $# >= 2 ? 2 : $# )) || true
if ! command -v clang > /dev/null; then
	echo "fuzz: clang is not installed (it is needed for libFuzzer): apt-get install clang libclang-rt-dev"
	exit 1
fi
CC=clang cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNX_FUZZ=ON \
	-DBUILD_TESTING=OFF -DNX_BENCH=OFF > /dev/null
ninja -C "$build" fuzz > /dev/null
echo "# libFuzzer campaign: $runs executions per target, $(nproc) cores, $(date -u)"
start=$(date +%s)
rc=0
bash "$here/tests/fuzz/run.sh" "$build" -n "$runs" "$@" || rc=$?
echo "campaign took $(( $(date +%s) - start )) s"
exit $rc
