#!/bin/bash
# t5008-leftovers.sh: the hidden temporary of an ingest killed with -9
# (.<name>@latest.tmp-<pid>@<host>) is removed by the next publication of any profile
# and by the next `view` that serves the data path; never one whose process is alive
# (a stopped ingest finishes and publishes afterwards), nor one of another host, nor a
# file that is no temporary of ours. A publication finds the dead temporaries through
# their records (profiles/global/.in-progress), which go with them.
set -u
BIN=${NX_BIN:?NX_BIN not set}
GEN=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/bench/bench_gen_trace
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5008
PIDS=
e2e_cleanup() { for p in $PIDS; do kill -CONT $p; kill $p; done 2> /dev/null; }
[ -x "$GEN" ] || { echo "skip: no bench_gen_trace (NX_BENCH=OFF)"; exit 77; }
G=dp/profiles/global

"$GEN" big 2 > /dev/null || fail "gen"
"$BIN" kernel gen matmul_v0 --size 512 -o k.neff -q && "$BIN" capture -n k.neff -s k.ntff -q || fail "small"
ING=("$BIN" view -n big/bench.neff -s big/bench.ntff -q --data-path dp --ingest-only)
# start NAME: an ingest of the big trace in the background, returned once its temporary exists
start() {
	"${ING[@]}" --display-name "$1" > /dev/null 2>&1 &
	P=$!
	PIDS="$PIDS $P"
	for _ in $(seq 3000); do ls -A $G 2> /dev/null | grep -q "^\.$1@latest\.tmp-$P@" && return 0; sleep 0.01; done
	fail "no temporary for $1"
}

start a
kill -9 $P; wait $P 2> /dev/null
ls -A $G | grep -q '^\.a@latest\.tmp-' || fail "the killed ingest left nothing to clean"
mkdir -p $G/.x@latest.tmp-999999@another-host
touch $G/notes.txt $G/.notes.tmp-1 $G/.in-progress/notes.txt
# the next `view` serving the data path removes it
"$BIN" view --data-path dp --disable-ui --api-server-port 0 -q > srv.txt 2>&1 &
S=$!
PIDS="$PIDS $S"
for _ in $(seq 300); do grep -q '^Ready:' srv.txt && break; sleep 0.05; done
grep -q '^Ready:' srv.txt || fail "server: $(cat srv.txt)"
kill $S; wait $S 2> /dev/null
ls -A $G | grep -q '^\.a@latest\.tmp-' && fail "server start left the dead temporary: $(ls -A $G)"
[ -d $G/.x@latest.tmp-999999@another-host ] || fail "another host's temporary was removed"

# a killed one goes at the next publication of another name; a live (stopped) one stays
start b
kill -9 $P; wait $P 2> /dev/null
start c
kill -STOP $P
C=$P
"$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name other --ingest-only > /dev/null ||
	fail "another publication"
ls -A $G | grep -q '^\.b@latest\.tmp-' && fail "the dead temporary stays after a publication"
ls -A $G/.in-progress | grep -q '^\.b@latest\.tmp-' && fail "the dead temporary's record stays"
ls -A $G | grep -q "^\.c@latest\.tmp-$C@" || fail "a live ingest's temporary was removed"
kill -CONT $C
wait $C || fail "the stopped ingest failed after it went on"
[ -f $G/c@latest/Instruction.parquet ] || fail "c not published"
[ -d $G/.x@latest.tmp-999999@another-host ] || fail "another host's temporary was removed"
[ -f $G/notes.txt ] && [ -f $G/.notes.tmp-1 ] && [ -f $G/.in-progress/notes.txt ] ||
	fail "a file that is not ours was removed: $(ls -A $G $G/.in-progress)"
exit 0
