#!/usr/bin/env bash
# calibration.sh BUILD_DIR [WORK_DIR] [--markdown]: the simulator against published
# hardware measurements (called by run.sh). bench_calib captures every calibration
# kernel of the library at its measured shape and target, prints measured, simulated
# and error per kernel and per published engine-busy or DMA figure, the median and
# worst error per family, then the micro facts. --markdown prints the tables that
# docs/simulator.md carries ("Calibration" and the library kernels table).
set -euo pipefail
build=$1
md=""
for a in "${@:2}"; do [ "$a" = "--markdown" ] && md="--markdown"; done
"$build/bench/bench_calib" $md
[ -n "$md" ] && "$build/bench/bench_calib" --library
