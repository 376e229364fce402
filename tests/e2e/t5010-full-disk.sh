#!/bin/bash
# t5010-full-disk.sh: a full disk (a small tmpfs this test mounts) gives the real reason
# ("No space left on device", not DuckDB's "Attempting to execute an unsuccessful or
# closed pending query result"), exit 1, and leaves what was there: the previous version
# of a profile, an attached archive, an NTFF, no temporaries, and ends every time.
# Exit 77 (skipped) when the test cannot mount a tmpfs (it needs root).
set -u
BIN=${NX_BIN:?NX_BIN not set}
GEN=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/bench/bench_gen_trace
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5010
mkdir -p "$T/full" || exit 1
e2e_cleanup() { umount "$T/full" 2> /dev/null; }
msg() { grep -qF -- "$1" err.txt || fail "message lacks '$1': $(cat err.txt)"; }
[ -x "$GEN" ] || { echo "skip: no bench_gen_trace (NX_BENCH=OFF)"; exit 77; }
mount -t tmpfs -o size=1m tmpfs full 2> /dev/null || { echo "skip: cannot mount a tmpfs (not root?)"; exit 77; }

"$GEN" big 2 > /dev/null || fail "gen"
"$BIN" kernel gen matmul_v0 --size 512 -o k.neff -q && "$BIN" capture -n k.neff -s k.ntff -q || fail "small"
V=("$BIN" view -q --data-path full --ingest-only)
"${V[@]}" -n k.neff -s k.ntff --display-name p > /dev/null || fail "a small profile fits"
"$BIN" upload --data-path full --display-name p --source-code k.neff > /dev/null || fail "upload"
cp full/profiles/global/p@latest/source_folder.tar.gz src.tgz
find full/profiles/global/p@latest -type f | sort | xargs md5sum > before.txt

# the big trace does not fit: our writer's cause, naming the table and the file,
# nothing published, the old p intact
"${V[@]}" -n big/bench.neff -s big/bench.ntff --display-name p > /dev/null 2> err.txt
[ $? -eq 1 ] || fail "a full disk: not exit 1"
msg "No space left on device"
grep -q "^neuron-explorer view: writing DmaPacket in parts: cannot write '.*/DmaPacket_0.parquet.tmp.[0-9]*' at byte " err.txt ||
	fail "message: $(cat err.txt)"
find full/profiles/global/p@latest -type f | sort | xargs md5sum | diff - before.txt ||
	fail "the previous version changed"
ls -A full/profiles/global | grep -q '\.tmp' && fail "temporary left: $(ls -A full/profiles/global)"

# the same with DuckDB's writers (NX_INGEST_WRITER=duckdb): DuckDB's own cause, not its
# wrapper's; and again and again: when one of the two raw-table writers fails on
# DuckDB's own thread while the other waits for the shared batches, the copy must still
# end (it once hung there about one time in ten on a loaded machine); timeout only
# catches a hang
for i in 1 2 3 4 5 6 7 8 9 10; do
	NX_INGEST_WRITER=duckdb timeout 300 "${V[@]}" -n big/bench.neff -s big/bench.ntff \
		--display-name p > /dev/null 2> err.txt
	rc=$?
	[ $rc -eq 124 ] && fail "run $i of a full-disk ingest hung"
	[ $rc -eq 1 ] || fail "run $i of a full-disk ingest: exit $rc"
	msg "No space left on device"
	grep -q "Attempting to execute" err.txt && fail "DuckDB's wrapper message: $(cat err.txt)"
	grep -q "^neuron-explorer view: IO Error: Could not write file " err.txt ||
		fail "DuckDB's message: $(cat err.txt)"
done
ls -A full/profiles/global | grep -q '\.tmp' && fail "temporary left: $(ls -A full/profiles/global)"

# fill the rest: an upload, a capture and an export fail with the reason
head -c 1M /dev/urandom > full/filler 2> /dev/null
mkdir src && head -c 1M /dev/urandom > src/blob.bin
"$BIN" upload --data-path full --display-name p --source-code src 2> err.txt; [ $? -eq 1 ] || fail "upload: not 1"
msg "No space left on device"
cmp -s full/profiles/global/p@latest/source_folder.tar.gz src.tgz || fail "the attached archive changed"
cp k.ntff full/old.ntff 2> /dev/null || { rm -f full/filler; cp k.ntff full/old.ntff && head -c 1M /dev/urandom > full/filler 2> /dev/null; }
"$BIN" capture -n big/bench.neff -s full/old.ntff -q 2> err.txt; [ $? -eq 1 ] || fail "capture: not 1"
msg "No space left on device"
cmp -s full/old.ntff k.ntff || fail "the NTFF changed"
"$BIN" view -n k.neff -s k.ntff -q --output-format perfetto --output-file full/t.json 2> err.txt
[ $? -eq 1 ] || fail "perfetto: not 1"
msg "No space left on device"
[ ! -e full/t.json ] || fail "a partial perfetto file"
ls -A full full/profiles/global | grep -q '\.tmp' && fail "temporary left: $(ls -A full full/profiles/global)"
exit 0
