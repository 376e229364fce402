#!/bin/bash
# t5014-instruction-keys.sh: the Instruction table's columns of the static instruction,
# keyed by it for our parquet writer (db/parquet_write.h, "Keyed columns"): a bench trace
# of 50,000 records (its 2560 static instructions repeat), ingested by our writer (its
# debug line shows cells taken from the keys' memos) and by DuckDB's
# (NX_INGEST_WRITER=duckdb, which takes no keys), has the same Instruction rows both
# ways.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
GEN=$NX_BUILD_DIR/bench/bench_gen_trace
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5014
[ -x "$SQL" ] || { echo "skip: no nx-sql"; exit 77; }
[ -x "$GEN" ] || { echo "skip: no bench_gen_trace (a build with NX_BENCH=OFF)"; exit 77; }

"$GEN" tr 0.05 > /dev/null || fail "gen"
NX_LOG=debug "$BIN" view -n tr/bench.neff -s tr/bench.ntff --data-path ours --display-name k \
	--ingest-only > ours.log 2>&1 || fail "ingest by our writer"
NX_INGEST_WRITER=duckdb "$BIN" view -n tr/bench.neff -s tr/bench.ntff --data-path duck \
	--display-name k --ingest-only > duck.log 2>&1 || fail "ingest by DuckDB's writer"

# our writer took cells of Instruction from the memos: "N cells of M rows by their key's memo"
cells=$(sed -n "s/.*Instruction_[0-9]*\.parquet[^']*': \([0-9]*\) cells of .*/\1/p" ours.log |
	awk '{ s += $1 } END { print s + 0 }')
[ "$cells" -gt 0 ] || fail "no Instruction cell by its key's memo: $(grep -c 'memo' ours.log) lines"
grep -q "DmaPacket_[0-9]*\.parquet[^']*': [0-9]* cells" ours.log && fail "DmaPacket has keys"

A=ours/profiles/global/k@latest/Instruction.parquet
B=duck/profiles/global/k@latest/Instruction.parquet
[ "$("$SQL" "SELECT count(*) FROM '$A'")" -gt 0 ] || fail "no Instruction rows"
[ "$("$SQL" "SELECT (SELECT count(*) FROM (FROM '$A' EXCEPT ALL FROM '$B')) +
		    (SELECT count(*) FROM (FROM '$B' EXCEPT ALL FROM '$A'))")" = 0 ] ||
	fail "Instruction differs between our writer and DuckDB's"
echo ok
