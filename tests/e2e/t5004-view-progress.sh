#!/bin/bash
# t5004-view-progress.sh: the ingest's progress output, which the library reports
# through a callback and only `view` prints: one line per table written and a final
# "Wrote ..." line on stderr when not a terminal (no live line, no carriage return);
# nothing with -q; on a terminal (script(1)) the same lines, plus live "[raw] <table>:
# N rows, M rows/s" lines when a table takes more than a second (not asserted: timing).
# With NX_INGEST_MEMORY_LOG=1, a "memory after <phase>:" note at each phase end, with
# glibc's and DuckDB's allocators' figures, and one at the end with the figures at the
# highest VmRSS the watcher saw.
set -u
BIN=${NX_BIN:?NX_BIN not set}
GEN=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/bench/bench_gen_trace
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5004
[ -x "$GEN" ] || { echo "skip: no bench_gen_trace (a build with NX_BENCH=OFF)"; exit 77; }

"$GEN" tr 0.05 > /dev/null || fail "gen"
"$BIN" view -n tr/bench.neff -s tr/bench.ntff --data-path dp --display-name p --ingest-only \
	2> err.txt > out.txt || fail "ingest"
grep -q "^Ingesting 'tr/bench.neff' + 'tr/bench.ntff' as 'p'" err.txt || fail "no Ingesting line"
for t in Instruction DmaPacket ActiveTime SbufUsage PsumUsage DmaPacketAggregated Summary; do
	grep -Eq "^  $t +[0-9]+ rows +[0-9.]+ s  peak [0-9]+ MB" err.txt || fail "no line for $t"
done
grep -q "^  SbufUsage .*(derived in C)" err.txt || fail "SbufUsage not marked as C"
grep -q "^  Summary .*(derived)" err.txt || fail "Summary not marked derived"
grep -Eq "^Wrote [0-9]+ raw rows to .*: raw tables [0-9.]+ s, derived tables [0-9.]+ s, total [0-9.]+ s, peak [0-9]+ MB" \
	err.txt || fail "no Wrote line"
! grep -q $'\r' err.txt || fail "carriage return written to a non-terminal"

"$BIN" view -n tr/bench.neff -s tr/bench.ntff --data-path dp --display-name q --ingest-only -q \
	2> errq.txt > outq.txt || fail "ingest -q"
[ ! -s errq.txt ] || fail "-q printed: $(head -3 errq.txt)"
[ -d dp/profiles/global/q@latest ] || fail "-q ingest published nothing"

! grep -q "^memory after" err.txt || fail "memory notes without NX_INGEST_MEMORY_LOG"
NX_INGEST_MEMORY_LOG=1 "$BIN" view -n tr/bench.neff -s tr/bench.ntff --data-path dp --display-name m \
	--ingest-only 2> errm.txt > outm.txt || fail "ingest with NX_INGEST_MEMORY_LOG=1"
for phase in "stream the trace tables" "the derive SQL" "run the derive SQL" "publish"; do
	grep -Eq "^memory after $phase: VmRSS [0-9]+ MB VmHWM [0-9]+ MB" errm.txt ||
		grep -Eq "^memory after $phase: VmHWM [0-9]+ MB VmRSS [0-9]+ MB" errm.txt ||
		fail "no memory note after '$phase'"
done
grep -q "^memory after the derive SQL: .*; duckdb_memory():" errm.txt || fail "no duckdb_memory() in the notes"
grep -q "^memory after publish: " errm.txt && ! grep -q "^memory after publish: .*duckdb_memory" errm.txt ||
	fail "a note after publish names the closed database"
grep -Eq "^memory after the derive SQL: .* anon [0-9]+ MB; glibc: [0-9]+ arenas, [0-9.]+ MB mapped in them \([0-9.]+ MB in use, [0-9.]+ MB free\), [0-9.]+ MB in mmaps(; jemalloc: [0-9.]+ MB allocated, [0-9.]+ MB active, [0-9.]+ MB resident, [0-9.]+ MB mapped)?; duckdb_memory\(\):" \
	errm.txt || fail "no allocators' figures in the notes: $(grep '^memory after the derive SQL' errm.txt)"
[ "$(grep -c '^memory at the highest VmRSS seen: VmHWM [0-9]* MB VmRSS [0-9]* MB .*; glibc: ' errm.txt)" = 1 ] ||
	fail "not one note of the highest VmRSS"
! grep -q "^memory at the highest" err.txt || fail "a watcher's note without NX_INGEST_MEMORY_LOG"
[ -d dp/profiles/global/m@latest ] || fail "the ingest with memory notes published nothing"

if command -v script > /dev/null; then
	script -qec "$BIN view -n tr/bench.neff -s tr/bench.ntff --data-path dp --display-name r --ingest-only" \
		tty.txt > /dev/null 2>&1 || fail "ingest on a terminal"
	grep -q "Summary" tty.txt || fail "no table lines on a terminal"
	grep -q "Wrote" tty.txt || fail "no Wrote line on a terminal"
fi
echo ok
