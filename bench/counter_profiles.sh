#!/bin/bash
# SPDX-License-Identifier: MIT
# counter_profiles.sh: makes the two synthetic counter profiles of docs/memory.md's counters
# sections (not a ctest test), each a profile directory of SemaphoreUpdate and Summary for
# bench_lod_build and a server's --data-path:
#   OUT/burst/p   2M values: 8 series of 4 samples at every 100 ns over 5 ms (ties), and a
#                 ninth of 400k values, one per ns from 2 ms (a burst of 0.4 ms)
#   OUT/noties/p  2M values: 4 series of 500k, one every 10 ns each, no two times alike
# usage: bench/counter_profiles.sh NX_SQL OUT
set -eu
SQL=$1
OUT=$2
mk() { # DIR SELECT
	mkdir -p "$1"
	[ ! -e "$1/SemaphoreUpdate.parquet" ] || { echo "$1 exists" >&2; exit 1; }
	"$SQL" "COPY ($2) TO '$1/SemaphoreUpdate.parquet' (FORMAT parquet); COPY (SELECT 1.0::DOUBLE AS total_time) TO '$1/Summary.parquet' (FORMAT parquet)" > /dev/null
}
mk "$OUT/burst/p" "SELECT 0 AS pcore_idx, (i // 4) * 100 AS timestamp, s AS id, ((i * 7 + s) % 101)::DOUBLE AS value FROM range(200000) r(i), range(1, 9) q(s) UNION ALL SELECT 0, 2000000 + i, 9, (i % 17)::DOUBLE FROM range(400000) r(i) ORDER BY timestamp"
mk "$OUT/noties/p" "SELECT 0 AS pcore_idx, i * 10 + s AS timestamp, s AS id, ((i * 7 + s) % 101)::DOUBLE AS value FROM range(500000) r(i), range(1, 5) q(s) ORDER BY timestamp"
