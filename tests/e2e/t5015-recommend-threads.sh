#!/bin/bash
# t5015-recommend-threads.sh: recommend's passes decode the row groups on a thread of
# their own, one ahead of the pass (analysis/scan_read.c), and the Instruction pass hands
# its semaphore waits to their sort on a helper thread (analysis/scan_waits.c);
# NX_REC_THREADS=1 does both on the pass's thread, as before. The reports are the same
# bytes both ways: a kernel captured by the simulator and a bench trace with source lines
# (when the build has bench_gen_trace; 118,000 waits: three blocks, one run on disk), each
# ingested in small row groups (500 and 8192 rows) so that every pass reads many;
# Markdown, JSON, --details, --window kernel, --window dpa --details and a T0:T1 window.
# DmaPacket and Flow reversed give the same reports. A damaged row group past the first
# of Instruction gives the same error both ways, naming the file and the byte.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
GEN=$NX_BUILD_DIR/bench/bench_gen_trace
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5015
[ -x "$SQL" ] || { echo "skip: no nx-sql"; exit 77; }

"$BIN" kernel gen matmul_v0 --size 2048 -o k.neff > /dev/null || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n k.neff -s k.ntff > /dev/null 2>&1 ||
	fail "capture"
NX_INGEST_ROW_GROUP=500 "$BIN" view -n k.neff -s k.ntff --data-path data --display-name k \
	--ingest-only -q > /dev/null || fail "ingest of the kernel"
names=k
if [ -x "$GEN" ]; then
	# 1.2M records: about 119,000 semaphore waits, handed to their sort in three blocks,
	# which writes one run to disk (analysis/scan_waits.c)
	"$GEN" --source-lines tr 1.2 > /dev/null || fail "gen"
	NX_INGEST_ROW_GROUP=8192 "$BIN" view -n tr/bench.neff -s tr/bench.ntff --data-path data \
		--display-name b --ingest-only -q > /dev/null || fail "ingest of the bench trace"
	names="k b"
else
	echo "no bench_gen_trace (a build with NX_BENCH=OFF): the kernel only"
fi

for n in $names; do
	p=data/profiles/global/$n@latest
	groups=$("$SQL" "SELECT count(DISTINCT (file_name, row_group_id)) FROM
		parquet_metadata('$p/Instruction*.parquet')")
	[ "$groups" -ge 4 ] || fail "$n: Instruction in $groups row groups, want several"
	# a window inside the profile: its middle half
	w=$("$SQL" -C "$p" "SELECT (min(start_ts) + (max(end_ts) - min(start_ts)) // 4)::VARCHAR
		|| ':' || (max(end_ts) - (max(end_ts) - min(start_ts)) // 4)::VARCHAR
		FROM Instruction")
	i=0
	for opts in "" "--format json" "--details" "--details --format json" \
		"--window kernel" "--window kernel --format json" "--window dpa --details" \
		"--window $w --format json"; do
		i=$((i + 1))
		for t in 1 2; do
			# shellcheck disable=SC2086
			NX_REC_THREADS=$t "$BIN" recommend --data-path data --display-name "$n" \
				$opts > "$n-$i-$t.out" 2> "$n-$i-$t.err" ||
				fail "$n, '$opts', NX_REC_THREADS=$t: $(cat "$n-$i-$t.err")"
		done
		cmp "$n-$i-1.out" "$n-$i-2.out" || fail "$n, '$opts': the reports differ"
		[ -s "$n-$i-1.out" ] || fail "$n, '$opts': an empty report"
	done
done
# the generated trace's report names its source lines
if [ -x "$GEN" ]; then
	grep -q 'bench_kernel.py' b-1-1.out || fail "no source line in the bench trace's report"
fi

# DmaPacket and Flow in reverse order, in row groups of 500 rows: the passes meet rows
# out of order with the next row group decoded ahead, stop and start again sorted by
# DuckDB; the same reports, with one thread or two, as the original's
mkdir -p rev/profiles/global && cp -r data/profiles/global/k@latest rev/profiles/global/
p=rev/profiles/global/k@latest
rm "$p/DmaPacket.parquet" "$p/Flow.parquet"
"$SQL" -C data/profiles/global/k@latest "COPY (SELECT * FROM DmaPacket ORDER BY start_ts DESC)
	TO '$p/DmaPacket.parquet' (ROW_GROUP_SIZE 500); COPY (SELECT * FROM Flow ORDER BY in_id
	DESC NULLS FIRST, out_id) TO '$p/Flow.parquet' (ROW_GROUP_SIZE 500)" > /dev/null ||
	fail "reversed copy"
for t in 1 2; do
	NX_REC_THREADS=$t "$BIN" recommend --data-path rev --display-name k --format json \
		> "rev-$t.out" || fail "reversed, NX_REC_THREADS=$t"
	sed 's,"rev/,"data/,' "rev-$t.out" | cmp k-2-1.out - || fail "reversed, NX_REC_THREADS=$t: another report"
done

# a damaged page in Instruction's third row group: the same error, with one thread or two
cp -r data bad
p=bad/profiles/global/k@latest
read -r f off len < <("$SQL" "SELECT file_name, data_page_offset, total_compressed_size
	FROM parquet_metadata('$p/Instruction*.parquet')
	WHERE row_group_id = 2 AND path_in_schema = 'start_ts' LIMIT 1" | tr '|,' '  ')
[ -n "${off:-}" ] && [ "$len" -gt 40 ] || fail "no third row group in $p: '$f $off $len'"
# bytes of the page past the start of its header
python3 - "$f" $((off + 20)) 16 <<'EOF' || fail "damage"
import sys
path, at, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    f.seek(at)
    f.write(b"\xff" * n)
EOF
for t in 1 2; do
	NX_REC_THREADS=$t "$BIN" recommend --data-path bad --display-name k --format json \
		> "bad-$t.out" 2> "bad-$t.err"
	echo $? > "bad-$t.rc"
done
[ "$(cat bad-1.rc)" != 0 ] || fail "the damaged profile was read: $(cat bad-1.out | head -5)"
cmp bad-1.rc bad-2.rc || fail "exit $(cat bad-1.rc) with one thread, $(cat bad-2.rc) with two"
cmp bad-1.err bad-2.err || fail "the errors differ: $(cat bad-1.err) / $(cat bad-2.err)"
grep -q 'Instruction.*parquet' bad-1.err || fail "the error names no file: $(cat bad-1.err)"
grep -q 'byte' bad-1.err || fail "the error names no byte: $(cat bad-1.err)"
[ "$(grep -c . bad-2.err)" -le 2 ] || fail "more than one error: $(cat bad-2.err)"
echo ok
