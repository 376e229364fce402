#!/bin/bash
# t6001-fleet-slurm.sh: `fleet ingest --slurm` on a real single-node Slurm (slurm-wlm +
# munge, installed and started by tests/tools/slurm_setup.sh; a Slurm that cannot start
# fails the test with the daemon's error). A synthetic run of 8 instances x 2
# NeuronCores (library kernels on the simulator) plus 8 framework traces, with one
# planted straggler core and one straggler rank, goes through one sbatch array and the
# dependent index job. Asserts: every member profile published, FleetProfile/FleetRank
# rows, the two stragglers and what explains them, array task ids in the status files;
# an array element runs from its line of the task list alone (no manifest needed);
# a task killed mid-way leaves no profile, reads as failed "killed", and the re-run
# resubmits exactly that task; the same run ingested locally with -j 2 gives identical
# fleet tables.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t6001
e2e_cleanup() { bash "$SRC/tests/tools/slurm_stop.sh" "$T/slurm"; }

bash "$SRC/tests/tools/slurm_setup.sh" "$T/slurm" || fail "Slurm did not start (see above)"
. "$T/slurm/env.sh"
bash "$SRC/tests/tools/slurm_fleet_run.sh" "$BIN" run 8 3 > /dev/null || fail "making the run"

R=run7
IDX=dpS/profiles/global/$R@latest
q() { "$SQL" "$1"; }
"$BIN" fleet ingest run --data-path dpS --display-name $R --slurm --array-throttle 2 \
	--array-max 10 --time 10 --sbatch-arg=--job-name=t6001 --wait > out.txt 2> err.txt ||
	fail "slurm ingest: $(cat out.txt err.txt)"
grep -q "^Run $R: 24 tasks (0 already done, 0 running elsewhere, 24 to run)" out.txt ||
	fail "plan line: $(cat out.txt)"
grep -q "^Submitted 24 task(s) as Slurm array jobs [0-9]*,[0-9]*,[0-9]*$" out.txt ||
	fail "array line (24 tasks in arrays of at most 10): $(cat out.txt)"
grep -q "^24 tasks: 24 done, 0 running, 0 failed, 0 pending" out.txt || fail "counts: $(cat out.txt)"
ajobs=$(sed -n 's/^Submitted 24 task(s) as Slurm array jobs \([0-9,]*\).*/\1/p' out.txt)
[ "$(wc -l < "$(ls dpS/fleet/$R/slurm/array-*-2.list)")" = 4 ] || fail "third array's list"

# every task ran as an element of those arrays, and every member is published
"$BIN" fleet status --data-path dpS --display-name $R > st.txt || fail "status"
[ "$(grep -cE " done .*job (${ajobs//,/|})_[0-9]+\]" st.txt)" = 24 ] || fail "status: $(cat st.txt)"
[ "$(grep -oE "job [0-9]+_" st.txt | sort -u | wc -l)" = 3 ] || fail "not three arrays"
[ "$(wc -l < dpS/fleet/$R/manifest.tsv)" = 25 ] || fail "manifest rows"
cut -f3 dpS/fleet/$R/manifest.tsv | tail -n +2 | while read -r p; do
	[ -s "dpS/profiles/global/$p@latest/Metadata.parquet" ] || { echo "no $p"; exit 1; }
done || fail "a member profile is missing"
[ "$(wc -l < $IDX/fleet-members.txt)" = 24 ] || fail "members list"

# the fleet index
[ "$(q "SELECT count(*), count(DISTINCT instance), count(DISTINCT nc), count(rank) FROM '$IDX/FleetProfile.parquet'")" = \
	"$(printf '16\t8\t2\t16')" ] || fail "FleetProfile rows"
[ "$(q "SELECT count(*), sum(step_count), count(DISTINCT rank) FROM '$IDX/FleetRank.parquet'")" = \
	"$(printf '8\t32\t8')" ] || fail "FleetRank rows"
[ "$(q "SELECT kind, instance, nc, rank, explained_by FROM '$IDX/FleetStraggler.parquet' ORDER BY kind")" = \
	"$(printf 'device\tip-10-0-0-3\t1\t3\tdma\nrank\tip-10-0-0-3\tNULL\t3\tcollective nccl:all_reduce')" ] ||
	fail "stragglers: $(q "SELECT * FROM '$IDX/FleetStraggler.parquet'")"
[ "$(q "SELECT count(*) FROM '$IDX/FleetProfile.parquet' WHERE straggler")" = 1 ] || fail "straggler flag"
[ "$(q "SELECT done_count, failed_count, straggler_count FROM '$IDX/FleetRun.parquet'")" = \
	"$(printf '24\t0\t2')" ] || fail "FleetRun"
"$BIN" fleet report --data-path dpS --display-name $R > rep.txt || fail "report"
sed -n '/^Device profiles/,/^$/p' rep.txt | sed -n 2p | grep -q "vnc_1-[0-9a-f]\{8\} .*instance ip-10-0-0-3 .*STRAGGLER" ||
	fail "report does not list the straggler first: $(cat rep.txt)"

# an array element reads only its own row of the task list (padded lines of one length):
# it runs with the manifest moved away
list0=$(ls dpS/fleet/$R/slurm/array-*-0.list)
[ "$(awk '{ print length($0) }' "$list0" | sort -u | wc -l)" = 1 ] || fail "task list lines differ in length"
lp=$(sed -n 3p "$list0" | cut -f3)
lt=$(sed -n 3p "$list0" | cut -f1)
rm -rf "dpS/profiles/global/$lp@latest" "dpS/fleet/$R/status/$lp.done"
mv dpS/fleet/$R/manifest.tsv manifest.away
"$BIN" fleet run-task --data-path dpS --run $R --list "$list0" --array-index 2 > lt.txt 2>&1 ||
	fail "run-task from its list line: $(cat lt.txt)"
mv manifest.away dpS/fleet/$R/manifest.tsv
grep -q "^task $lt done: $lp$" lt.txt || fail "list line 3 ran another task: $(cat lt.txt)"
[ -s "dpS/profiles/global/$lp@latest/Summary.parquet" ] || [ -s "dpS/profiles/global/$lp@latest/SystemProfileEvents.parquet" ] ||
	fail "the list's task did not publish $lp"
"$BIN" fleet run-task --data-path dpS --run $R --list "$list0" --array-index 10 > lt.txt 2>&1 &&
	fail "a line past the list's end ran"
grep -q "has 10 task(s): there is no line 11" lt.txt || fail "past the end: $(cat lt.txt)"

# a task killed mid-way: no half profile, status "killed", the re-run redoes only it
victim=$(awk -F'\t' '$3 ~ /a1b2c3d4e5f60002/ { print $1 "\t" $3 }' dpS/fleet/$R/manifest.tsv)
vt=${victim%%$'\t'*} vp=${victim#*$'\t'}
rm -rf "dpS/profiles/global/$vp@latest" "dpS/fleet/$R/status/$vp.done"
"$BIN" fleet run-task --data-path dpS --run $R --task "$vt" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 2000); do
	compgen -G "dpS/profiles/global/.$vp@latest.tmp-*/*.parquet" > /dev/null && break
	sleep 0.005
done
kill -9 $pid 2> /dev/null
wait $pid 2> /dev/null
[ ! -e "dpS/profiles/global/$vp@latest" ] || fail "the killed task had already published (too fast to kill?)"
[ -e "dpS/fleet/$R/status/$vp.running" ] || fail "no .running left by the killed task"
"$BIN" fleet status --data-path dpS --display-name $R > st.txt
grep -q "^$vt .*failed .*killed: process $pid" st.txt || fail "killed task status: $(grep "^$vt " st.txt)"
grep -q "^24 tasks: 23 done, 0 running, 1 failed, 0 pending" st.txt || fail "counts after kill"
"$BIN" fleet ingest run --data-path dpS --display-name $R --slurm --wait > out2.txt 2>&1 ||
	fail "re-run: $(cat out2.txt)"
grep -q "23 already done, 0 running elsewhere, 1 to run" out2.txt || fail "re-run plan: $(cat out2.txt)"
grep -q "^Submitted 1 task(s) as Slurm array job" out2.txt || fail "re-run array: $(cat out2.txt)"
[ -s "dpS/profiles/global/$vp@latest/Summary.parquet" ] || fail "killed task not redone"
[ ! -e "dpS/fleet/$R/status/$vp.running" ] || fail ".running left after the redo"
grep -q "^24 tasks: 24 done" out2.txt || fail "counts after the redo"

# a re-run with nothing left to do submits only the index job
"$BIN" fleet ingest run --data-path dpS --display-name $R --slurm --wait > out3.txt 2>&1 ||
	fail "third run: $(cat out3.txt)"
grep -q "24 already done, 0 running elsewhere, 0 to run" out3.txt || fail "third run plan"
! grep -q "array job" out3.txt || fail "third run submitted an array"

# the same run without Slurm gives identical tables
"$BIN" fleet ingest run --data-path dpL --display-name $R -j 2 > outL.txt 2>&1 ||
	fail "local ingest: $(cat outL.txt)"
for t in FleetTask FleetProfile FleetRank FleetStraggler FleetRun; do
	a=$IDX/$t.parquet b=dpL/profiles/global/$R@latest/$t.parquet
	[ "$(q "SELECT (SELECT count(*) FROM (SELECT * FROM '$a' EXCEPT ALL SELECT * FROM '$b')) +
		(SELECT count(*) FROM (SELECT * FROM '$b' EXCEPT ALL SELECT * FROM '$a')),
		(SELECT count(*) FROM '$a')")" != "0	0" ] || fail "$t is empty"
	[ "$(q "SELECT (SELECT count(*) FROM (SELECT * FROM '$a' EXCEPT ALL SELECT * FROM '$b')) +
		(SELECT count(*) FROM (SELECT * FROM '$b' EXCEPT ALL SELECT * FROM '$a'))")" = 0 ] ||
		fail "$t differs between the Slurm and the local run"
done

# sbatch errors come back with sbatch's message
"$BIN" fleet ingest run --data-path dpS --display-name $R --slurm --partition nosuch \
	> /dev/null 2> err.txt && fail "bad partition accepted"
grep -q "sbatch exited with status .*artition" err.txt || fail "sbatch error: $(cat err.txt)"
exit 0
