#!/usr/bin/env bash
# build.sh [BUILD_DIR [extra cmake args...]]: configures and builds neuron-explorer as a
# developer build (NX_DEVELOPER=ON: warnings are errors; plain cmake builds do not).
# DuckDB 1.4.4 is fetched (pinned, checksummed) from the npm registry on first use.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
shift || true
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNX_DEVELOPER=ON "$@" >/dev/null
ninja -C "$build" -j"$(nproc)"
