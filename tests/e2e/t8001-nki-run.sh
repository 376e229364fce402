#!/bin/bash
# t8001-nki-run.sh: the NKI front-end end to end: `nki path` on PYTHONPATH and a user-style
# script (nki.baremetal with save_neff_name/save_trace_name, then view summary-json),
# `nki run` with an ingest whose instructions point at the user's file, and bad kernels
# (unsupported call, out-of-bounds slice, >128 partitions, syntax error) giving the
# documented one-line error and exit status; --listing under the output rule.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
PY=${NX_PYTHON:-/usr/bin/python3}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t8001
"$PY" -c 'import numpy' 2>/dev/null || { echo "skip: no python3 with numpy"; exit 0; }

dir=$("$BIN" nki path) || fail "nki path"
[ -f "$dir/neuronxcc/nki/language.py" ] && [ -f "$dir/nki/isa.py" ] || fail "nki path: $dir"
"$BIN" nki path extra 2>/dev/null; [ $? = 2 ] || fail "nki path with an argument is not a usage error"
"$BIN" nki run --help | grep -q -- '--input NAME=SHAPE' || fail "nki run --help"

cat > kern.py <<'EOF'
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def scale_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        s = nisa.tensor_scalar(x, nl.multiply, 2.0)
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(s, y))
    return out


if __name__ == '__main__':
    a = np.random.rand(512, 256).astype(np.float32)
    b = np.random.rand(512, 256).astype(np.float32)
    out = nki.baremetal(scale_add, save_neff_name='user.neff', save_trace_name='user.ntff')(a, b)
    assert np.allclose(out, 2 * a + b), 'numerics differ'
    print('NKI and NumPy match')
EOF

# a user's script, unchanged, with the shim on PYTHONPATH
PYTHONPATH="$dir" "$PY" kern.py > user.log 2>&1 || { cat user.log; fail "user script"; }
grep -q 'NKI and NumPy match' user.log || fail "user script output"
[ -s user.neff ] && [ -s user.ntff ] || fail "baremetal did not write user.neff/user.ntff"
"$BIN" view -n user.neff -s user.ntff --output-format summary-json > sum.json 2>/dev/null ||
	fail "view summary-json"
"$PY" -c 'import json,sys; d=json.load(open("sum.json")); assert d["user"]["total_time"] > 0, d' ||
	fail "summary total_time"

# nki run: random inputs, NEFF + NTFF, ingest under a display name
"$BIN" nki run kern.py --entry scale_add --input a=512x256:bfloat16 --input b=512x256:bfloat16 \
	-n run.neff -s run.ntff --data-path dp --display-name nkirun > run.log 2>&1 ||
	{ cat run.log; fail "nki run"; }
grep -q 'instructions recorded' run.log || fail "nki run summary line"
grep -q '^warning:' run.log && fail "nki run warned about a kernel that made NKI calls"
# a function that makes no NKI call: a profile, and a warning that it is empty
printf 'def idle(a):\n    return a\n' > idle.py
"$BIN" nki run idle.py --entry idle --input a=128x128 > idle.log 2>&1 || { cat idle.log; fail "nki run idle"; }
grep -q '^warning: idle made no NKI call' idle.log || { cat idle.log; fail "no warning for an empty kernel"; }

# -n and --listing FILE follow the binary's output rule (`kernel asm --check`, then
# `kernel asm --listing`): a user's file, a symbolic link or a directory is refused before
# any work (exit 2, the binary's message, left as it is, nothing written); a listing
# neuron-explorer wrote is replaced; the listing gets the NEFF's mode (the umask's)
lrun() { "$BIN" nki run kern.py --entry scale_add --input a=256x256 --input b=256x256 "$@"; }
echo mine > mine.lst
ln -s mine.lst link.lst
mkdir lst.d
refused() { # FLAG FILE MESSAGE
	if [ "$1" = -n ]; then lrun -n "$2" -s l.ntff; else lrun "$1" "$2" -n l.neff -s l.ntff; fi > l.log 2>&1; rc=$?
	[ $rc = 2 ] || { cat l.log; fail "$1 $2: exit status $rc, expected 2"; }
	grep -qF "neuron-explorer nki run: the output '$2' $3" l.log || { cat l.log; fail "$1 $2: message"; }
	[ ! -e l.ntff ] || fail "$1 $2: an NTFF was written after the refusal"
	[ "$1" = -n ] || [ ! -e l.neff ] || fail "$1 $2: a NEFF was written after the refusal"
}
refused --listing mine.lst "exists and is not a kernel listing that neuron-explorer wrote"
refused --listing link.lst "is a symbolic link"
refused --listing lst.d "is a directory; give the file to write"
refused -n mine.lst "exists and is not a NEFF that neuron-explorer wrote"
[ "$(cat mine.lst)" = mine ] && [ "$(readlink link.lst)" = mine.lst ] || fail "--listing replaced a user's file"
[ -z "$(ls -A lst.d)" ] || fail "--listing wrote into a directory"
for k in 1 2; do
	(umask 022; lrun --listing new.lst -n l$k.neff -s l$k.ntff -q) > l.log 2>&1 ||
		{ cat l.log; fail "--listing new.lst, run $k"; }
done
head -1 new.lst | grep -q 'recorded by the neuron-explorer NKI shim' || fail "the listing's first line"
[ "$(stat -c %a new.lst)" = 644 ] && [ "$(stat -c %a l1.neff)" = 644 ] ||
	fail "modes: the listing $(stat -c %a new.lst), the NEFF $(stat -c %a l1.neff), expected 644"
"$BIN" kernel gen matmul_v0 --size 512 -o g.neff --listing new.lst -q > l.log 2>&1 ||
	{ cat l.log; fail "kernel gen --listing over the shim's listing"; }
ls -a | grep -q '\.tmp$' && fail "a temporary file was left"

if [ -x "$SQL" ]; then
	q() { "$SQL" -C "dp/profiles/global/nkirun@latest" "$1"; }
	[ "$(q "SELECT COUNT(*) FROM Instruction WHERE opcode = 'TENSOR_SCALAR'")" = 4 ] ||
		fail "tensor_scalar count"
	loc=$(q "SELECT DISTINCT bir_debug_info_source_location FROM Instruction WHERE opcode = 'TENSOR_SCALAR'")
	[ "$loc" = "$T/kern.py:13" ] || fail "source location '$loc'"
	[ "$(q "SELECT COUNT(*) FROM KernelIterationVariables WHERE variable_name = 'i'")" = 4 ] ||
		fail "iteration variables"
	# with the full listing the compiler's decisions are Warning rows
	level=$(PYTHONPATH="$dir" NX_NKI_BIN="$BIN" "$PY" -c 'from nx_nki import driver; print(driver.level())')
	if [ "$level" = full ]; then
		[ "$(q "SELECT COUNT(*) FROM Warning WHERE category = 'Compiler Decision' AND message LIKE 'alloc %'")" -ge 3 ] ||
			fail "no Compiler Decision rows for the allocation"
	fi
fi

# usage errors exit 2; kernel errors exit 1 with FILE:LINE: API: problem
"$BIN" nki run kern.py --entry scale_add --input a=512xq > u.log 2>&1; [ $? = 2 ] ||
	fail "bad --input is not a usage error"
"$BIN" nki run kern.py --entry scale_add --input a=512x256 > u.log 2>&1; [ $? = 2 ] ||
	fail "missing --input is not a usage error"

bad() { # name expected-needle expected-line: runs bad.py's kernel k and checks the error
	"$BIN" nki run bad.py --entry k --input a=256x64 > bad.log 2>&1
	rc=$?
	[ $rc = 1 ] || { cat bad.log; fail "$1: exit status $rc, expected 1"; }
	grep -q "^error: $T/bad.py:$3: .*$2" bad.log || { cat bad.log; fail "$1: message"; }
	! grep -q 'Traceback' bad.log || { cat bad.log; fail "$1: a traceback"; }
}
head='import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)'
printf '%s\n    x = nl.load(a[0:128, :])\n    nisa.max8(x)\n    return out\n' "$head" > bad.py
bad unsupported 'nisa.max8: is not supported' 9
printf '%s\n    x = nl.load(a[0:128, 0:96])\n    return out\n' "$head" > bad.py
bad oob "indexing 'a': index 0:96 is out of bounds for dim 1 of size 64" 8
printf '%s\n    x = nl.load(a)\n    return out\n' "$head" > bad.py
bad partitions 'nl.load: loading 256 partitions' 8
printf '%s\n    t = nl.ndarray((256, 64), dtype=a.dtype, buffer=nl.sbuf)\n    return out\n' "$head" > bad.py
bad partitions-declared 'nl.ndarray: 256 partitions' 8
printf '%s\n    x = nl.load(a[0:128, :]\n    return out\n' "$head" > bad.py
bad syntax 'syntax error' 8

# the same errors from a user's own script: one line on stderr, status 1, no traceback
printf '%s\n    x = nl.load(a[0:128, 0:96])\n    return out\n\n\nimport numpy as np\nnki.baremetal(k)(np.zeros((256, 64), np.float32))\n' "$head" > script.py
PYTHONPATH="$dir" "$PY" script.py > s.log 2>&1; rc=$?
[ $rc = 1 ] || fail "script with a bad kernel: status $rc"
grep -q "^error: $T/script.py:8: indexing .a.: index 0:96 is out of bounds" s.log || { cat s.log; fail "script message"; }
! grep -q 'Traceback' s.log || { cat s.log; fail "script traceback"; }
exit 0
