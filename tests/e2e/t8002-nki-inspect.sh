#!/bin/bash
# t8002-nki-inspect.sh: `inspect -- python3 prog.py` on a program that calls two NKI
# kernels three times each: the runtime's layout in the output directory (one
# <instance>_pid_<pid> directory, the two NEFFs and the NTFFs of their first executions,
# the host trace), the host trace's calls, steps, inputs' shapes and device executions,
# -n dropping the oldest events; then `view -d` ingests the directory and the API shows
# both kernels' device profiles inside their nc_exec_running slices, on the host trace's
# clock. Also: the output rule for -o (a user's directory refused before the program
# runs, our own replaced), the program's exit status passed on, usage errors.
set -u
BIN=${NX_BIN:?NX_BIN not set}
PY=${NX_PYTHON:-/usr/bin/python3}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t8002
SRV=
e2e_cleanup() { [ -n "$SRV" ] && kill "$SRV" 2> /dev/null; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "skip: no python3 with numpy"; exit 77; }

cat > prog.py <<'EOF'
import os
import sys
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def mul_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(a.shape[0] // 128):
        rows = nl.ds(t * 128, 128)
        x, y = nl.load(a[rows, :]), nl.load(b[rows, :])
        nl.store(out[rows, :], value=nisa.tensor_tensor(nl.multiply(x, y), x, op=nl.add))
    return out


@nki.jit
def row_max(a):
    out = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.max(x, axis=1, keepdims=True))
    return out


a = np.random.rand(256, 512).astype(np.float32)
b = np.random.rand(256, 512).astype(np.float32)
for _ in range(3):
    assert np.allclose(mul_add(a, b), a * b + a)
    assert np.allclose(row_max(a), a.max(axis=1, keepdims=True))
print('pid', os.getpid())
sys.exit(int(os.environ.get('PROG_EXIT', '0')))
EOF

# --- usage, and the output rule before the program runs
"$BIN" inspect --help | grep -q "^usage: neuron-explorer inspect \[-o DIR\] \[-n N\]" || fail "--help"
"$BIN" inspect -o x 2> e.txt; [ $? -eq 2 ] && grep -q "no command to run" e.txt || fail "no command"
"$BIN" inspect -n 0 -- true 2> e.txt; [ $? -eq 2 ] || fail "-n 0 accepted"
"$BIN" inspect -n 12x -- true 2> e.txt; [ $? -eq 2 ] &&
	grep -q -- "-n needs a whole number from 1 to 1000000000, not '12x'" e.txt || fail "-n 12x: $(cat e.txt)"
"$BIN" inspect -o 2> e.txt; [ $? -eq 2 ] && grep -q "needs a value" e.txt || fail "-o without a value"
# capture's device clock (what inspect hands each profiled execution): bad values refused
for v in -5 abc 3000000000000000000; do
	"$BIN" capture -n none.neff -s none.ntff --start-ns "$v" 2> e.txt; [ $? -eq 2 ] &&
		grep -q -- "--start-ns needs a whole number" e.txt || fail "--start-ns $v: $(cat e.txt)"
done
[ ! -e none.ntff ] || fail "a refused capture wrote its NTFF"
mkdir mine && echo notes > mine/notes.txt
"$BIN" inspect -o mine -- touch ran 2> e.txt; [ $? -eq 2 ] || fail "a user's directory accepted"
grep -q "the output 'mine' already holds files that neuron-explorer did not write" e.txt ||
	fail "refusal: $(cat e.txt)"
[ ! -e ran ] && [ "$(ls mine)" = notes.txt ] || fail "the program ran, or mine changed"
"$BIN" inspect -o nocmd -- ./no-such-program 2> e.txt; [ $? -eq 1 ] || fail "missing program"
grep -q "cannot run './no-such-program'" e.txt && [ ! -e nocmd ] && ! ls -a | grep -q '\.tmp' ||
	fail "missing program: $(cat e.txt); $(ls -a)"

# --- the program, inspected
"$BIN" inspect -o out -- "$PY" prog.py > run.log 2> inspect.err ||
	{ cat inspect.err; fail "inspect"; }
pid=$(awk '$1 == "pid" {print $2}' run.log)
grep -q "^inspect: wrote out: 2 device profiles (2 NEFFs) and 1 host trace from 1 process; '$PY' exited with 0" \
	inspect.err || fail "summary line: $(cat inspect.err)"
[ -f out/.neuron-explorer-output ] || fail "out not marked"
P=$(ls -d out/*_pid_"$pid") && [ "$(ls -d out/*_pid_* | wc -l)" = 1 ] || fail "pid dir: $(ls out)"
ls "$P" | grep -Eq '^neff_[0-9]+\.neff$' || fail "no neff_<hash>.neff: $(ls "$P")"
for n in "$P"/neff_*.neff; do
	h=${n##*/neff_}; h=${h%.neff}
	[ -s "$P/${h}_instid_0_vnc_0.ntff" ] || fail "no NTFF for $h: $(ls "$P")"
done
[ "$(ls "$P" | grep -c '\.neff$')" = 2 ] && [ "$(ls "$P" | grep -c '\.ntff$')" = 2 ] ||
	fail "files: $(ls "$P")"
ls -a . out "$P" | grep -q '\.tmp' && fail "a temporary was left: $(ls -a . out "$P")"

# the host trace: 6 calls with their steps, 6 device executions, 2 of them profiled
"$PY" - "$P/system_profile.trace.json" <<'EOF' || fail "host trace"
import json, sys
doc = json.load(open(sys.argv[1]))
ev = [e for e in doc['traceEvents'] if e['ph'] == 'X']
calls = [e for e in ev if e['cat'] == 'nki_call']
assert sorted(e['name'] for e in calls) == ['mul_add'] * 3 + ['row_max'] * 3, calls
sa = [e for e in calls if e['name'] == 'mul_add'][0]['args']
assert sa['inputs'] == ['a: float32[256, 512]', 'b: float32[256, 512]'], sa
assert sa['source'].endswith('prog.py:10'), sa
for c in calls:
    steps = [e for e in ev if e['cat'] == 'nki' and e['tid'] == c['tid'] and
             c['ts'] <= e['ts'] and e['ts'] + e['dur'] <= c['ts'] + c['dur'] + 1e-3]
    names = [e['name'] for e in steps]
    for s in ('trace', 'compile', 'assemble', 'simulate'):
        assert names.count(s) == 1, (c, names)
runs = [e for e in ev if e['name'] == 'nc_exec_running']
assert len(runs) == 6 and all(e['tid'] == 0 and e['dur'] > 0 for e in runs), runs
prof = sorted(e['args']['device_profile'] for e in runs if e['args']['device_profile'])
assert len(prof) == 2 and sorted(e['args']['execution'] for e in runs) == [1, 1, 2, 2, 3, 3]
assert doc['neuronExplorerInspect']['events_dropped'] == 0, doc['neuronExplorerInspect']
# the clock is Unix time in microseconds
assert all(1.6e15 < e['ts'] < 3e15 for e in ev), [e['ts'] for e in ev][:3]
EOF

# -n: only the last N events are kept
"$BIN" inspect -o small -n 5 -q -- "$PY" prog.py > /dev/null 2> e.txt || fail "-n 5: $(cat e.txt)"
[ ! -s e.txt ] || fail "-q printed: $(cat e.txt)"
"$PY" - small/*/system_profile.trace.json <<'EOF' || fail "-n 5 trace"
import json, sys
doc = json.load(open(sys.argv[1]))
ev = [e for e in doc['traceEvents'] if e['ph'] != 'M']
info = doc['neuronExplorerInspect']
assert len(ev) == 5 and info['max_events'] == 5, (len(ev), info)
# each call: its slice, trace, compile, assemble, simulate, nc_exec_running
assert info['events_recorded'] == 6 * 6 and info['events_dropped'] == 31, info
assert ev[-1]['name'] == 'row_max', ev[-1]   # the last call's slice ends the trace
EOF

# our own output directory is replaced whole; the program's exit status is passed on
echo stale > out/stale.txt
PROG_EXIT=3 "$BIN" inspect -o out -q -- "$PY" prog.py > run2.log 2> /dev/null; rc=$?
[ $rc -eq 3 ] || fail "exit status $rc, not the program's 3"
pid=$(awk '$1 == "pid" {print $2}' run2.log)
[ ! -e out/stale.txt ] && [ "$(ls -d out/*_pid_* | wc -l)" = 1 ] && P=$(ls -d out/*_pid_"$pid") ||
	fail "out not replaced: $(ls out)"

# SIGTERM to inspect reaches the program; what it recorded is published all the same
cat > slow.py <<'EOF2'
import time
import numpy as np
exec(open('prog.py').read().split('a = np.random')[0])
row_max(np.ones((128, 64), dtype=np.float32))
open('ready', 'w').close()
time.sleep(600)
EOF2
"$BIN" inspect -o term -q -- "$PY" slow.py > /dev/null 2> term.err &
ipid=$!
for _ in $(seq 600); do [ -e ready ] && break; sleep 0.1; done
[ -e ready ] || fail "the slow program did not start: $(cat term.err)"
kill -TERM "$ipid"
wait "$ipid"; rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit status $rc, not 143: $(cat term.err)"
[ -f term/.neuron-explorer-output ] && ls term/*_pid_*/neff_*.neff > /dev/null &&
	ls term/*_pid_*/*_instid_0_vnc_0.ntff > /dev/null || fail "SIGTERM: $(ls -R term)"
ls -a . | grep -q '\.tmp' && fail "SIGTERM left a temporary: $(ls -a)"

# --- view -d: host and device on one time axis
"$BIN" view -d out --data-path dp --display-name insp --ingest-only -q > view.log 2>&1 ||
	{ cat view.log; fail "view -d"; }
"$BIN" view --data-path dp --api-server-port 0 --disable-ui > srv.txt 2>&1 &
SRV=$!
for _ in $(seq 200); do grep -q "listening" srv.txt && break; sleep 0.1; done
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/api.*/\1/p' srv.txt)
[ -n "$PORT" ] || fail "server: $(cat srv.txt)"
s() { curl -s -X POST "http://127.0.0.1:$PORT/api/v1/db/$1/_search" -H 'Content-Type: application/json' -d "$2"; }
sql() { s "$1" "{\"type\":\"databaseExplorerQuery\",\"query\":\"$2\"}"; }
# the host events: 6 calls, 6 device executions
sql insp "SELECT count(*) FROM SystemProfileEvents WHERE name = 'nc_exec_running' AND process_id = $pid" |
	grep -q '"rows":\[\[6\]\]' || fail "nc_exec_running rows"
sql insp "SELECT count(*) FROM SystemProfileEvents WHERE json_extract_string(extra_attributes_json, '\$.cat') = 'nki_call'" |
	grep -q '"rows":\[\[6\]\]' || fail "call rows"
# each kernel's device profile: one at the top of insp, the other its sibling profile;
# its instructions lie inside the profiled nc_exec_running slice of its NTFF
n=0
for ntff in "$P"/*.ntff; do
	pair=$(basename "$ntff" .ntff)
	prof=insp
	sql insp "SELECT count(*) FROM DeviceProfileList WHERE device_profile_name = '$pair' AND process_id = $pid" |
		grep -q '"rows":\[\[1\]\]' || fail "DeviceProfileList lacks $pair of pid $pid"
	sql "insp-$pair" "SELECT 1" | grep -q '"rows":\[\[1\]\]' && prof="insp-$pair"
	win=$(sql insp "SELECT start_ts, end_ts FROM SystemProfileEvents WHERE name = 'nc_exec_running' AND json_extract_string(extra_attributes_json, '\$.args.device_profile') = '$pair.ntff'")
	start=$(echo "$win" | sed -n 's/.*"rows":\[\["*\([0-9]*\)"*,"*\([0-9]*\)"*\]\].*/\1/p')
	end=$(echo "$win" | sed -n 's/.*"rows":\[\["*\([0-9]*\)"*,"*\([0-9]*\)"*\]\].*/\2/p')
	[ -n "$start" ] && [ -n "$end" ] || fail "no nc_exec_running for $pair: $win"
	sql "$prof" "SELECT count(*) > 0, bool_and(start_ts >= $start AND end_ts <= $end) FROM Instruction" |
		grep -q '"rows":\[\[true,true\]\]' || fail "$pair's instructions outside [$start, $end] in $prof: $(sql "$prof" "SELECT min(start_ts), max(end_ts) FROM Instruction")"
	n=$((n + 1))
done
[ $n = 2 ] || fail "$n device profiles"
sql insp "SELECT count(*) FROM Warning WHERE message LIKE '%clocks do not meet%'" | grep -q '"rows":\[\[0\]\]' ||
	fail "a clock warning: $(sql insp "SELECT message FROM Warning")"
echo "PASS"
