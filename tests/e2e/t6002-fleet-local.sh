#!/bin/bash
# t6002-fleet-local.sh: `fleet ingest -j 2` without Slurm on a synthetic run of 4
# instances x 2 NeuronCores + 4 framework traces: a corrupt NTFF fails its task with a
# message naming the file (status, FleetTask), the other members are published, the
# re-run after the fix runs only that task, a third run nothing; bad manifests and bad
# options give clear errors; the run is served as one name by the real HTTP server
# (union views with a profile column, a member with a column more, the sandbox still
# refusing other files, a damaged member file named); the hive export scans back to the
# members' row counts; `recommend` on the run analyses every device member, each as on
# its own.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t6002
SRV=
e2e_cleanup() { [ -n "$SRV" ] && kill "$SRV" 2> /dev/null; }
q() { "$SQL" "$1"; }

bash "$SRC/tests/tools/slurm_fleet_run.sh" "$BIN" run 4 1 > /dev/null || fail "making the run"
R=loc
IDX=dp/profiles/global/$R@latest

# usage errors
"$BIN" fleet ingest run --data-path dp > /dev/null 2>&1; [ $? -eq 2 ] || fail "no --display-name not 2"
"$BIN" fleet ingest --data-path dp --display-name $R > /dev/null 2>&1; [ $? -eq 2 ] || fail "no dir not 2"
"$BIN" fleet ingest run --data-path dp --display-name $R --partition p 2> err.txt; [ $? -eq 2 ] ||
	fail "--partition without --slurm not 2"
"$BIN" fleet ingest run --data-path dp --display-name $R -j 0 2> /dev/null; [ $? -eq 2 ] || fail "-j 0"
# a missing input is a failure (1), as for every command; the same for every verb
"$BIN" fleet ingest nosuch --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "missing dir"
grep -qF "neuron-explorer fleet: run directory 'nosuch': no such file or directory" err.txt ||
	fail "missing dir message: $(cat err.txt)"
mkdir empty
"$BIN" fleet ingest empty --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "empty dir"
grep -q "no NEFF/NTFF pair and no framework trace under 'empty'" err.txt || fail "empty message"
"$BIN" fleet ingest run --data-path dp --display-name 'a/b' 2> /dev/null; [ $? -eq 2 ] || fail "bad name"
for v in status index report export run-task; do
	"$BIN" fleet $v --data-path dp --display-name nosuch -o ex --task 0 2> err.txt
	[ $? -eq 1 ] || fail "unknown run: fleet $v not 1"
	grep -qF "neuron-explorer fleet: no fleet run 'nosuch' in '$T/dp' (no $T/dp/fleet/nosuch/manifest.tsv); run 'neuron-explorer fleet ingest' first" \
		err.txt || fail "fleet $v: unknown run message: $(cat err.txt)"
done
# a run name read into a path is checked by every verb
"$BIN" fleet status --data-path dp --display-name ../../etc 2> err.txt; [ $? -eq 2 ] || fail "../../etc"
grep -q "the display name contains '/'" err.txt || fail "../../etc message: $(cat err.txt)"
"$BIN" fleet frob --data-path dp 2> err.txt; [ $? -eq 2 ] || fail "bad subcommand"
grep -qF "neuron-explorer fleet: 'frob' is not a fleet subcommand (ingest, status, index, report, export)" \
	err.txt || fail "bad subcommand message: $(cat err.txt)"
# an ordinary profile of the run's name is not replaced by the run's index
"$BIN" kernel gen matmul_v0 --size 512 -o k.neff -q && "$BIN" capture -n k.neff -s k.ntff -q &&
	"$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name plain --ingest-only > /dev/null ||
	fail "an ordinary profile"
"$BIN" fleet ingest run --data-path dp --display-name plain 2> err.txt; [ $? -eq 2 ] || fail "plain not 2"
grep -qF "profile 'plain' already exists and is not a fleet run (it has no fleet-members.txt); choose another --display-name (nothing was changed)" \
	err.txt || fail "plain message: $(cat err.txt)"
[ -f dp/profiles/global/plain@latest/Instruction.parquet ] && [ ! -e dp/fleet/plain/manifest.tsv ] ||
	fail "the ordinary profile was touched"
"$BIN" fleet --help | grep -q -- "--array-throttle" || fail "help"

# a corrupt NTFF: its task fails with the file named, the others are published
bad=$(ls run/ip-10-0-0-2_pid_4002/*_vnc_0.ntff)
cp "$bad" good.ntff
head -c 200 good.ntff > "$bad"
"$BIN" fleet ingest run --data-path dp --display-name $R -j 2 > out.txt 2> err.txt
[ $? -eq 1 ] || fail "a failed task did not make ingest exit 1"
grep -q "^12 tasks: 11 done, 0 running, 1 failed, 0 pending" out.txt || fail "counts: $(cat out.txt)"
grep -q "1 task(s) did not finish" err.txt || fail "failure summary: $(cat err.txt)"
"$BIN" fleet status --data-path dp --display-name $R > st.txt || fail "status"
grep -q "failed .*ip-10-0-0-2_pid_4002.*vnc_0-[0-9a-f]\{8\} .*task 4 .*$(basename "$bad")" st.txt ||
	fail "status does not show the failure: $(cat st.txt)"
[ "$(q "SELECT status, message LIKE '%$(basename "$bad")%' FROM '$IDX/FleetTask.parquet' WHERE task = 4")" = \
	"$(printf 'failed\ttrue')" ] || fail "FleetTask failure row"
[ "$(q "SELECT count(*) FROM '$IDX/FleetProfile.parquet'")" = 7 ] || fail "FleetProfile without the failed one"
[ ! -e "dp/profiles/global/$(cut -f3 dp/fleet/$R/manifest.tsv | sed -n 6p)@latest" ] ||
	fail "the failed task published something"

# the fix, then the re-run runs only that task; a third run runs nothing
cp good.ntff "$bad"
"$BIN" fleet ingest run --data-path dp --display-name $R -j 2 > out.txt 2>&1 || fail "re-run: $(cat out.txt)"
grep -q "(11 already done, 0 running elsewhere, 1 to run)" out.txt || fail "re-run plan: $(cat out.txt)"
grep -q "^12 tasks: 12 done" out.txt || fail "re-run counts"
# the task processes read their rows from a task list, which the run removes at its end
[ -d dp/fleet/$R/local ] && [ -z "$(ls -A dp/fleet/$R/local)" ] || fail "a local task list was left"
"$BIN" fleet ingest run --data-path dp --display-name $R -j 2 > out.txt 2>&1 || fail "third run"
grep -q "(12 already done, 0 running elsewhere, 0 to run)" out.txt || fail "third run plan"
[ "$(q "SELECT count(*), count(*) FILTER (straggler) FROM '$IDX/FleetProfile.parquet'")" = "$(printf '8\t1')" ] ||
	fail "FleetProfile after the fix"
[ "$(q "SELECT instance, nc, explained_by FROM '$IDX/FleetStraggler.parquet' WHERE kind = 'device'")" = \
	"$(printf 'ip-10-0-0-1\t1\tdma')" ] || fail "device straggler"
"$BIN" fleet report --data-path dp --display-name $R --top 2 > rep.txt || fail "report"
grep -q "^  device .*ip-10-0-0-1.*most of the difference: dma" rep.txt || fail "report: $(cat rep.txt)"
[ "$(grep -c '^  [0-9]\. ' rep.txt)" = 2 ] || fail "--top 2"
"$BIN" fleet report --data-path dp --display-name $R --top 1 --recommend 1 > rep.txt || fail "report --recommend"
grep -q "^=== recommend $R-ip-10-0-0-1_pid_4001-a1b2c3d4e5f60002_instid_0_vnc_1-[0-9a-f]\{8\} ===" rep.txt ||
	fail "recommend of the slowest member: $(cat rep.txt)"
grep -q "It is bound by \*\*DMA\*\*" rep.txt || fail "recommend bound line"

# recommend on the run: the run-wide part, then every device member, slowest first, each
# report the same as recommend on that member alone
"$BIN" recommend --data-path dp --display-name $R > rec.md || fail "recommend on the run"
grep -q "^# Performance analysis: run $R\$" rec.md || fail "run title: $(head -3 rec.md)"
grep -q "^Device members analysed, slowest first: 8\." rec.md || fail "member count"
grep -q "^| $R-ip-10-0-0-1_pid_4001-a1b2c3d4e5f60002_instid_0_vnc_1-[0-9a-f]\{8\} | .* | DMA | " rec.md ||
	fail "the slowest member's row: $(cat rec.md)"
grep -q "^| Redundant DMA transfers (1c) | [0-9] of 8 | " rec.md || fail "findings across the run"
[ "$(grep -c '^=== recommend ' rec.md)" = 8 ] || fail "8 member reports"
grep '^=== recommend ' rec.md | head -1 | grep -q "vnc_1-[0-9a-f]\{8\} ===" || fail "slowest first"
for m in $(grep '^=== recommend ' rec.md | cut -d' ' -f3); do
	"$BIN" recommend --data-path dp --display-name "$m" > one.md || fail "recommend $m"
	awk -v m="$m" '$0 == "=== recommend " m " ===" { on = 1; next } /^=== recommend / { on = 0 }
		on' rec.md | sed '${/^$/d}' > part.md # the blank line before the next member
	cmp -s one.md part.md || fail "member $m differs from its own report: $(diff one.md part.md | head)"
done
"$BIN" recommend --data-path dp --display-name $R --format json > rec.json || fail "json on the run"
/usr/bin/python3 - rec.json "$R" <<'PY' || fail "run json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "recommend_run" and d["run"] == sys.argv[2], d["kind"]
m = d["members"]
assert len(m) == 8 and len(d["reports"]) == 8
assert [x["total_ns"] for x in m] == sorted((x["total_ns"] for x in m), reverse=True)
assert [r["profile"]["name"] for r in d["reports"]] == [x["profile"] for x in m]
assert {f["id"] for f in d["findings"]} >= {"dma_efficiency", "serialisation"}
PY
"$BIN" recommend --data-path dp --compare $R "$m" 2> err.txt; [ $? -eq 2 ] || fail "--compare a run"
grep -q "'$R' is a fleet run" err.txt || fail "--compare a run message: $(cat err.txt)"

# a bad manifest is an error naming the file and the line
M=dp/fleet/$R/manifest.tsv
cp $M m.good
head -c -1 m.good > $M
"$BIN" fleet status --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "truncated manifest"
grep -q "manifest.tsv': line 13: truncated" err.txt || fail "truncated message: $(cat err.txt)"
sed '1s/^task/job/' m.good > $M
"$BIN" fleet status --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "bad header"
grep -q "line 1: not a fleet manifest header" err.txt || fail "header message"
sed '5s/\t[^\t]*$//' m.good > $M
"$BIN" fleet status --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "short row"
grep -q "line 5: too few columns" err.txt || fail "short row message: $(cat err.txt)"
sed '6s/^4\t/x\t/' m.good > $M
"$BIN" fleet index --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "bad task number"
grep -q "line 6: malformed task row" err.txt || fail "bad row message"
awk -F'\t' -v OFS='\t' 'NR == 7 { $5 = "99999999999999999999999" } { print }' m.good > $M
"$BIN" fleet status --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "huge pid"
grep -q "line 7: malformed task row" err.txt || fail "huge pid message: $(cat err.txt)"
cp m.good $M

# served as one name: union views with a profile column, through the sandbox
"$BIN" view --data-path dp --api-server-port 0 --disable-ui > srv.txt 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "listening" srv.txt && break; sleep 0.1; done
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/api.*/\1/p' srv.txt)
[ -n "$PORT" ] || fail "server: $(cat srv.txt)"
s() { curl -s -X POST "http://127.0.0.1:$PORT/api/v1/db/$R/_search" -H 'Content-Type: application/json' -d "$1"; }
s '{"type":"databaseExplorerQuery","tableName":"Summary","query":"SELECT count(DISTINCT profile) AS n FROM Summary"}' |
	grep -q '"rows":\[\[8\]\]' || fail "Summary union"
s '{"type":"databaseExplorerQuery","query":"SELECT profile FROM Summary ORDER BY total_time DESC LIMIT 1"}' |
	grep -q "ip-10-0-0-1_pid_4001-a1b2c3d4e5f60002_instid_0_vnc_1" || fail "slowest member via the API"
s '{"type":"databaseExplorerQuery","query":"SELECT count(DISTINCT profile) FROM SystemProfileEvents"}' |
	grep -q '"rows":\[\[4\]\]' || fail "SystemProfileEvents union"
s '{"type":"databaseExplorerQuery","query":"SELECT count(*) FROM FleetStraggler"}' |
	grep -q '"rows":\[\[2\]\]' || fail "FleetStraggler via the API"
n=$(q "SELECT count(*) FROM read_parquet('dp/profiles/global/$R-*/Instruction.parquet')")
s '{"type":"databaseExplorerQuery","tableName":"Instruction","query":"SELECT count(*) FROM Instruction"}' |
	grep -q "\"rows\":\[\[$n\]\]" || fail "Instruction union count"
s '{"type":"databaseExplorerQuery","query":"SELECT * FROM read_csv('"'"'/etc/passwd'"'"')"}' |
	grep -q '"query_not_allowed"' || fail "the sandbox let a fleet query read /etc/passwd"
s '{"type":"databaseExplorerQuery","query":"COPY (SELECT 1) TO '"'"'x.csv'"'"'"}' |
	grep -q '"query_not_allowed"' || fail "COPY allowed"
# a member's damaged file: the union view is checked as a whole, and only then file by
# file, so the reply names that file (and the other tables still answer)
dm=$(sed -n 3p $IDX/fleet-members.txt)
cp "dp/profiles/global/$dm@latest/Summary.parquet" summary.good
printf 'not parquet' > "dp/profiles/global/$dm@latest/.junk" &&
	mv "dp/profiles/global/$dm@latest/.junk" "dp/profiles/global/$dm@latest/Summary.parquet"
s '{"type":"databaseExplorerQuery","query":"SELECT count(*) FROM Summary"}' > dmg.json
grep -qF "table Summary cannot be read: ../$dm@latest/Summary.parquet is damaged or not a parquet file" dmg.json ||
	fail "damaged member file not named: $(head -c 400 dmg.json)"
s '{"type":"databaseExplorerQuery","query":"SELECT count(DISTINCT profile) FROM SystemProfileEvents"}' |
	grep -q '"rows":\[\[4\]\]' || fail "another union table with a damaged member file"
cp summary.good "dp/profiles/global/$dm@latest/.good" &&
	mv "dp/profiles/global/$dm@latest/.good" "dp/profiles/global/$dm@latest/Summary.parquet"
s '{"type":"databaseExplorerQuery","query":"SELECT count(DISTINCT profile) AS n FROM Summary"}' |
	grep -q '"rows":\[\[8\]\]' || fail "Summary union after the repair"
# a member whose Summary has a column more: read as a schema group of its own, joined by
# name; the other members' rows have it null
q "COPY (SELECT *, 42 AS added_later FROM read_parquet('summary.good')) TO 'dp/profiles/global/$dm@latest/.more.parquet' (FORMAT parquet)" > /dev/null &&
	mv "dp/profiles/global/$dm@latest/.more.parquet" "dp/profiles/global/$dm@latest/Summary.parquet"
s '{"type":"databaseExplorerQuery","query":"SELECT count(DISTINCT profile), count(added_later), max(added_later), count(total_time) FROM Summary"}' |
	grep -q '"rows":\[\[8,1,42,8\]\]' || fail "Summary union of two schemas"
cp summary.good "dp/profiles/global/$dm@latest/.good" &&
	mv "dp/profiles/global/$dm@latest/.good" "dp/profiles/global/$dm@latest/Summary.parquet"
kill "$SRV"; wait "$SRV" 2> /dev/null; SRV=

# hive-style export
"$BIN" fleet export --data-path dp --display-name $R -o exp > out.txt || fail "export: $(cat out.txt)"
[ -s "exp/Instruction/instance=ip-10-0-0-1/nc=1/part0.parquet" ] || fail "no partition file: $(find exp/Instruction | head)"
[ -s "exp/SystemProfileEvents/instance=ip-10-0-0-3/nc=-1/part0.parquet" ] || fail "trace partition"
[ -s "exp/FleetProfile/part0.parquet" ] || fail "index table in the export"
[ "$(q "SELECT count(*), count(DISTINCT profile), count(DISTINCT (instance, nc)) FROM read_parquet('exp/Instruction/**/*.parquet', hive_partitioning=true)")" = \
	"$(printf '%s\t8\t8' "$n")" ] || fail "export Instruction counts"
# the slow kernel sits on ip-10-0-0-1 nc 1: its partition alone is slower than every other one
S="read_parquet('exp/Summary/**/*.parquet', hive_partitioning=true)"
[ "$(q "SELECT count(*) FROM $S WHERE instance = 'ip-10-0-0-1' AND nc = 1 AND total_time > (SELECT max(total_time) FROM $S WHERE NOT (instance = 'ip-10-0-0-1' AND nc = 1))")" = 1 ] ||
	fail "export Summary partition filter"
exit 0
