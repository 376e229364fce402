#!/bin/bash
# t6004-fleet-lazy-views.sh: a fleet run's union views are made when a query first names
# their table, not when the server opens the run. Through the real HTTP server, on a
# synthetic run of 3 instances x 2 NeuronCores + 3 framework traces ingested locally:
# Summary, Instruction and SystemProfileEvents answer exactly the rows of a plain
# union_by_name read of the members' files (EXCEPT ALL both ways, against copies written
# beside the index by DuckDB), on first and later use; the table schema request makes a
# view too; a member file removed after the server opened the run (unseen by its
# identity check) gives an error naming the file, before and after that table's view was
# made, and the server goes on answering. The API's file listings name every member
# file.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t6004
SRV=
e2e_cleanup() { [ -n "$SRV" ] && kill "$SRV" 2> /dev/null; }

bash "$SRC/tests/tools/slurm_fleet_run.sh" "$BIN" run 3 1 > /dev/null || fail "making the run"
R=lz
G=$T/dp/profiles/global
IDX=$G/$R@latest
"$BIN" fleet ingest run --data-path dp --display-name $R -j 2 > out.txt 2>&1 ||
	fail "ingest: $(tail -n 5 out.txt)"
[ "$(wc -l < $IDX/fleet-members.txt)" = 9 ] || fail "members: $(cat $IDX/fleet-members.txt)"

# the reference of each table: its members' files read with union_by_name, the member
# as `profile`, as the union views were made before they were made lazily
for t in Summary Instruction SystemProfileEvents; do
	list=
	while read -r m; do
		f=$G/$m@latest/$t.parquet
		[ -f "$f" ] && list="$list${list:+,}'$f'"
	done < $IDX/fleet-members.txt
	[ -n "$list" ] || fail "no member has $t"
	"$SQL" "COPY (SELECT regexp_extract(filename, '([^/]*)@latest/[^/]*\$', 1) AS profile, * EXCLUDE (filename) FROM read_parquet([$list], filename=true, union_by_name=true)) TO '$IDX/Ref$t.parquet' (FORMAT parquet)" > /dev/null ||
		fail "reference of $t"
done

"$BIN" view --data-path dp --api-server-port 0 --disable-ui > srv.txt 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "listening" srv.txt && break; sleep 0.1; done
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/api.*/\1/p' srv.txt)
[ -n "$PORT" ] || fail "server: $(cat srv.txt)"
s() { curl -s -X POST "http://127.0.0.1:$PORT/api/v1/db/$R/_search" -H 'Content-Type: application/json' -d "$1"; }
same() { # TABLE: rows in the view and not in the reference, the other way, and the count
	s "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT (SELECT count(*) FROM (SELECT * FROM $1 EXCEPT ALL SELECT * FROM Ref$1)), (SELECT count(*) FROM (SELECT * FROM Ref$1 EXCEPT ALL SELECT * FROM $1)), (SELECT count(*) FROM $1)\"}"
}

# the index's own table (one row per device member) answers before any union view exists
s '{"type":"databaseExplorerQuery","query":"SELECT count(*) FROM FleetProfile"}' |
	grep -q '"rows":\[\[6\]\]' || fail "FleetProfile"
for t in Summary Instruction SystemProfileEvents; do
	n=$("$SQL" "SELECT count(*) FROM '$IDX/Ref$t.parquet'")
	[ "$n" -gt 0 ] || fail "empty reference of $t"
	for use in first later; do
		same $t > same.json
		grep -q "\"rows\":\[\[0,0,$n\]\]" same.json || fail "$t on $use use: $(head -c 400 same.json)"
	done
done
# a schema request is the first use of a member table no query named yet
tab=$(sed -n 2p $IDX/fleet-members.txt)
first=$(ls "$G/$tab@latest" | sed -n 's/^\(Dma[A-Za-z]*\)\.parquet$/\1/p' | head -n 1)
[ -n "$first" ] || fail "no Dma table in $tab: $(ls "$G/$tab@latest")"
s "{\"type\":\"tableSchema\",\"tableName\":\"$first\"}" > schema.json
grep -q '"profile"' schema.json || fail "schema of $first: $(head -c 400 schema.json)"

# the file listings (listDbFiles, the artifacts) name every member file as
# ../<member>@latest/<file>, as the scan keeps them (member and name numbers)
s '{"type":"listDbFiles"}' > files.json
curl -s "http://127.0.0.1:$PORT/api/v1/profiles/namespace/global/profile_name/$R/artifacts" > art.json
nf=0
while read -r m; do
	for f in $(cd "$G/$m@latest" && ls *.parquet); do
		grep -qF "\"../$m@latest/$f\"" files.json || fail "listDbFiles lacks ../$m@latest/$f"
		grep -qF "\"name\":\"../$m@latest/$f\"" art.json || fail "artifacts lack ../$m@latest/$f"
		nf=$((nf + 1))
	done
done < $IDX/fleet-members.txt
[ "$(grep -o '"\.\./[^"]*@latest/[^"]*"' art.json | wc -l)" = "$nf" ] ||
	fail "artifacts: $(grep -o '"\.\./[^"]*"' art.json | wc -l) member files, expected $nf"

# member files removed after the server opened the run; each member directory's time is
# put back, so the server's identity check does not see it (as in a race with it)
gone() { # MEMBER TABLE
	local d=$G/$1@latest
	local when
	when=$(stat -c '%.9Y' "$d")
	rm "$d/$2.parquet"
	touch -d "@$when" "$d"
}
m=$(sed -n 4p $IDX/fleet-members.txt)
# a table whose view is made after the removal: the error names the file
for c in Dma Semaphore Queue; do
	t=$(ls "$G/$m@latest" | sed -n "s/^\($c[A-Za-z]*\)\.parquet\$/\1/p" | grep -vx "$first" | head -n 1)
	[ -n "$t" ] && break
done
[ -n "$t" ] || fail "no other table to remove in $m: $(ls "$G/$m@latest")"
gone "$m" "$t"
s "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT count(*) FROM $t\"}" > gone1.json
grep -qF "../$m@latest/$t.parquet" gone1.json || fail "removed file before first use not named: $(head -c 400 gone1.json)"
grep -q '"error"' gone1.json || fail "no error for a removed file: $(head -c 400 gone1.json)"
# a table whose view was made before the removal: DuckDB's error names the file
gone "$m" Summary
s '{"type":"databaseExplorerQuery","query":"SELECT count(*) FROM Summary"}' > gone2.json
grep -q '"error"' gone2.json || fail "no error for a removed Summary: $(head -c 400 gone2.json)"
grep -qF "$m@latest/Summary.parquet" gone2.json || fail "removed Summary not named: $(head -c 400 gone2.json)"
# the server goes on: another table answers
same SystemProfileEvents | grep -q '"rows":\[\[0,0,' || fail "the server after the errors"
kill -0 "$SRV" || fail "the server died"
exit 0
