#!/bin/bash
# t6003-fleet-hardening.sh: a fleet member's identity comes from its input (its path in
# the run and its content): names survive a re-plan after files are added (no
# walk-order suffixes), a changed file is a new member, a long run name keeps the
# documented form; one `fleet ingest` of a run at a time (a lock); SIGTERM to
# `fleet ingest` stops and reaps its task processes, and the re-run finishes; a
# manifest naming '../../esc' is refused before anything is written; `fleet report`'s
# suggestion for a run without its index works.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t6003
e2e_cleanup() { [ -n "${ING:-}" ] && kill "$ING" 2> /dev/null; }
msg() { grep -qF -- "$1" err.txt || fail "message lacks '$1': $(cat err.txt)"; }
# member NAME for the task whose input ends with SUFFIX
member() { awk -F'\t' -v s="$1" 'NR > 1 && substr($10, length($10) - length(s) + 1) == s { print $3 }' \
	dp/fleet/$R/manifest.tsv; }
names() { cut -f3,10 dp/fleet/$R/manifest.tsv | tail -n +2 | sort; }

bash "$SRC/tests/tools/slurm_fleet_run.sh" "$BIN" run 2 1 > /dev/null || fail "making the run"
R=idr
"$BIN" fleet ingest run --data-path dp --display-name $R -j 2 > out.txt 2>&1 || fail "ingest: $(cat out.txt)"
names > before.txt
grep -q "^$R-ip-10-0-0-0_pid_4000-a1b2c3d4e5f60001_instid_0_vnc_0-[0-9a-f]\{8\}	" before.txt ||
	fail "pair member name: $(cat before.txt)"
grep -q "^$R-trace-ip-10-0-0-1-rank1-[0-9a-f]\{8\}	" before.txt || fail "trace member name"

# a new instance that sorts first, and a second copy of a NEFF/NTFF pair's files under
# another directory: the old names are kept, the new inputs get new names
mkdir -p run/aa/ip-10-0-0-0_pid_4000
cp run/ip-10-0-0-0_pid_4000/* run/aa/ip-10-0-0-0_pid_4000/
"$BIN" fleet ingest run --data-path dp --display-name $R -j 2 > out.txt 2>&1 || fail "re-plan: $(cat out.txt)"
grep -q "^Run $R: 9 tasks (6 already done, 0 running elsewhere, 3 to run)" out.txt ||
	fail "re-plan counts: $(cat out.txt)"
names > after.txt
comm -23 before.txt after.txt | grep -q . && fail "a name changed: $(comm -23 before.txt after.txt)"
[ "$(cut -f1 after.txt | sort -u | wc -l)" = 9 ] || fail "names not unique: $(cat after.txt)"
a=$(member run/aa/ip-10-0-0-0_pid_4000/a1b2c3d4e5f60001_instid_0_vnc_0.ntff)
b=$(member run/ip-10-0-0-0_pid_4000/a1b2c3d4e5f60001_instid_0_vnc_0.ntff)
[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] || fail "copies share a member: '$a' '$b'"
# a changed file is a new member (its content is part of its identity)
"$BIN" capture -n run/.kernels/fast.neff -s x.ntff --num-exec 2 --profile-nth-exec 2 -q || fail "capture"
cp profile_exec_2.ntff run/ip-10-0-0-1_pid_4001/a1b2c3d4e5f60001_instid_0_vnc_0.ntff
old=$(grep "ip-10-0-0-1_pid_4001/a1b2c3d4e5f60001_instid_0_vnc_0.ntff" before.txt | cut -f1)
"$BIN" fleet ingest run --data-path dp --display-name $R > out.txt 2>&1 || fail "changed file: $(cat out.txt)"
new=$(member run/ip-10-0-0-1_pid_4001/a1b2c3d4e5f60001_instid_0_vnc_0.ntff)
[ -n "$new" ] && [ "$new" != "$old" ] || fail "a changed file kept its member '$old'"
grep -q "(8 already done, 0 running elsewhere, 1 to run)" out.txt || fail "changed file counts: $(cat out.txt)"

# the longest run name: members <run>-<id>; one more character is refused
bash "$SRC/tests/tools/slurm_fleet_run.sh" "$BIN" run1 1 9 > /dev/null || fail "making run1"
L=$(printf 'r%.0s' {1..190})
"$BIN" fleet ingest run1 --data-path dp --display-name "$L" -j 2 > /dev/null 2>&1 || fail "190-char run"
cut -f3 "dp/fleet/$L/manifest.tsv" | tail -n +2 | grep -vq "^$L-[0-9a-f]\{8\}$" &&
	fail "long run members: $(cut -f3 "dp/fleet/$L/manifest.tsv")"
"$BIN" fleet ingest run1 --data-path dp --display-name "${L}r" 2> err.txt; [ $? -eq 2 ] || fail "191-char run"
msg "a fleet run's name has at most 190"

# a tampered manifest: refused with its line, nothing written outside the run
M=dp/fleet/$R/manifest.tsv
cp $M m.good
awk -F'\t' -v OFS='\t' 'NR == 2 { $3 = "../../../esc" } { print }' m.good > $M
"$BIN" fleet index --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "tampered manifest"
msg "manifest.tsv': line 2: '../../../esc' is not a member name of run '$R'"
"$BIN" fleet run-task --data-path dp --run $R --task 0 2> err.txt; [ $? -eq 1 ] || fail "tampered run-task"
[ -z "$(find . -name 'esc*')" ] || fail "written outside: $(find . -name 'esc*')"
cp m.good $M

# a run whose index is gone: report says to build it, and that works
rm -rf dp/profiles/global/$R@latest
"$BIN" fleet report --data-path dp --display-name $R 2> err.txt; [ $? -eq 1 ] || fail "report without index"
msg "is not a fleet index (no fleet-members.txt); run 'neuron-explorer fleet index' first"
"$BIN" fleet index --data-path dp --display-name $R > /dev/null 2> err.txt || fail "the suggested index: $(cat err.txt)"
"$BIN" fleet report --data-path dp --display-name $R > /dev/null || fail "report after the index"

# one ingest of a run at a time; SIGTERM stops and reaps the task processes
bash "$SRC/tests/tools/slurm_fleet_run.sh" "$BIN" run2 4 1 > /dev/null || fail "making run2"
"$BIN" fleet ingest run2 --data-path dp --display-name r2 -j 2 > ing.txt 2>&1 &
ING=$!
for _ in $(seq 600); do ls dp/fleet/r2/status/*.running > /dev/null 2>&1 && break; sleep 0.05; done
ls dp/fleet/r2/status/*.running > /dev/null 2>&1 || fail "no task started"
"$BIN" fleet ingest run2 --data-path dp --display-name r2 2> err.txt; [ $? -eq 1 ] || fail "second ingest not 1"
msg "run 'r2' is being ingested by another 'fleet ingest' (process $ING)"
pids=$(cut -f2 dp/fleet/r2/status/*.running 2> /dev/null)
kill -TERM $ING
wait $ING
rc=$?
ING=
[ $rc -eq 143 ] || fail "fleet ingest after SIGTERM: exit $rc, not 143 (killed by SIGTERM): $(cat ing.txt)"
grep -q "stopped by signal 15 (Terminated)" ing.txt || fail "no stop message: $(cat ing.txt)"
for p in $pids; do
	kill -0 "$p" 2> /dev/null && fail "task process $p still runs after SIGTERM"
done
ps -eo pid,args | grep -v grep | grep -q "fleet run-task --data-path $T/dp --run r2" &&
	fail "task processes left: $(ps -eo pid,args | grep 'run-task' | grep -v grep)"
"$BIN" fleet ingest run2 --data-path dp --display-name r2 -j 2 > out.txt 2>&1 || fail "re-run: $(cat out.txt)"
grep -q "^12 tasks: 12 done" out.txt || fail "re-run counts: $(cat out.txt)"
ls -A dp/profiles/global | grep -q '\.tmp' && fail "temporaries left: $(ls -A dp/profiles/global | grep tmp)"
exit 0
