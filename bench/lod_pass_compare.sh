#!/usr/bin/env bash
# lod_pass_compare.sh BUILD_DIR PROFILE_DIR WORK_DIR: the timeline cache of one profile
# built with the events copy and L0 in one pass (the default) and as before, copied first
# and L0 read back (NX_LOD_COPY_THEN_L0=1), each by bench_lod_build on a hard-linked copy
# of the profile in WORK_DIR (the profile itself is only read; WORK_DIR must not exist).
# Prints both builds' CPU per phase, then per table of the events part the rows each cache
# has that the other lacks, row ids included (tl.tracks without: its GROUP BY order
# follows the thread count, and the server sorts the tracks): all 0 when the pass gives
# the same cache.
set -euo pipefail
build=$1
profile=$2
work=$3
mkdir "$work"
for way in pass before; do
	cp -al "$profile" "$work/$way"
	rm -rf "$work/$way/.timeline"
done
echo "== one pass"
"$build/bench/bench_lod_build" "$work/pass" p
echo "== copy, then L0 read back (NX_LOD_COPY_THEN_L0=1)"
NX_LOD_COPY_THEN_L0=1 "$build/bench/bench_lod_build" "$work/before" p
q="ATTACH '$work/pass/.timeline/timeline.duckdb' AS a (READ_ONLY);
ATTACH '$work/before/.timeline/timeline.duckdb' AS b (READ_ONLY);"
sel=""
for t in lod ev0 ev1 ev2 ev3 meta tracks; do
	id="rowid, "
	[[ $t == tracks || $t == meta ]] && id=""
	n=$("$build/nx-sql" "$q SELECT count(*) FROM duckdb_tables() WHERE database_name = 'b'
		AND table_name = '$t'" | tail -1)
	[[ $n == 0 ]] && continue
	sel+="${sel:+ UNION ALL }SELECT '$t', (SELECT count(*) FROM a.$t),
		(SELECT count(*) FROM (SELECT $id* FROM a.$t EXCEPT ALL SELECT $id* FROM b.$t)),
		(SELECT count(*) FROM (SELECT $id* FROM b.$t EXCEPT ALL SELECT $id* FROM a.$t))"
done
echo "== table, rows, only in the pass's, only in the other's"
"$build/nx-sql" "$q $sel"
