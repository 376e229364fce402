#!/bin/bash
# t5005-calib-report.sh: the calibration report's family D (bench/bench_calib and
# bench/calibration.sh) on a reference folder written here (the real one is never read
# by tests): measured figures against a results file from the NKI front-end, kernels
# that failed or are missing named, the DMA streams of the DMA-bound kernels, and bad
# inputs: a missing column, a value that is not a number, a missing folder or file,
# usage errors (exit 2). Skipped when the build has no benchmarks (NX_BENCH=OFF).
set -u
BUILD=${NX_BUILD_DIR:?NX_BUILD_DIR not set}
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
CAL=$BUILD/bench/bench_calib
if [ ! -x "$CAL" ]; then
	echo "skipped: $CAL not built (NX_BENCH=OFF)"
	exit 0
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5005
mkdir -p "$T/ref/nki-calibration" || exit 1

cols="problem	kernel_file	latency	hbm_read_bytes	hbm_write_bytes	spill_reload_bytes"
cols="$cols	spill_save_bytes	scalar_engine_active_time_percent"
cols="$cols	vector_engine_active_time_percent	gpsimd_engine_active_time_percent"
{
	echo "$cols"
	printf 'matmul\tk/m.py\t35.2\t9000000000\t200000000\t0\t0\t0.07\t0\t0.001\n'
	printf 'bmm\tk/b.py\t4.6\t67000000\t1086000000\t33000000\t12000000\t0.37\t0\t0.026\n'
	printf 'silu\tk/s.py\t1.33\t117000000\t117000000\t0\t0\t0.31\t0.74\t0.01\n'
} > ref/nki-calibration/measured.tsv
sim="problem	status	total_time	hbm_read_bytes	hbm_write_bytes	spill_reload_bytes"
sim="$sim	spill_save_bytes	scalar_engine_active_time_percent"
sim="$sim	vector_engine_active_time_percent	gpsimd_engine_active_time_percent"
{
	echo "$sim"
	printf 'matmul\tok\t0.0387\t9000000000\t200000000\t0\t0\t0.05\t0\t0.151\n'
	printf 'bmm\tkernel run: ValueError: boom\t\t\t\t\t\t\t\t\n'
} > results.tsv

"$CAL" --only D --reference ref --nki-results results.tsv > out.txt 2> err.txt ||
	fail "bench_calib exit $? ($(cat err.txt))"
grep -Eq '^matmul +total +35.2 +38.7 ms +\+9.9 %' out.txt || fail "matmul total row: $(cat out.txt)"
grep -Eq '^matmul +HBM read\+write +9200 +9200 MB +\+0.0 %' out.txt || fail "HBM row"
grep -Eq '^matmul +ScalarE active +7 +5 % +-2.0 pt' out.txt || fail "ScalarE row"
grep -Eq '^matmul +GpSimd active +0.1 +15.1 % +\+15.0 pt' out.txt || fail "GpSimd row"
grep -q '^bmm: not simulated: kernel run: ValueError: boom' out.txt || fail "bmm failure not named"
grep -q '^silu: not simulated: missing from the results' out.txt || fail "silu not named"
grep -q 'total time (1 of 3 kernels ran): median |error| 9.9%, worst 9.9%; within target: 1 of 1' \
	out.txt || fail "family summary"
grep -q 'ALU engine-busy percentages: .*within target: 2 of 3 (±10 pt)' out.txt ||
	fail "engine summary"
grep -Eq '^matmul +DMA stream vs total +35.2 ' out.txt || fail "matmul DMA stream"
grep -Eq '^bmm +DMA stream vs total +4.6 ' out.txt || fail "bmm DMA stream"
grep -q '^D (DMA streams) ' out.txt || fail "overview line"

# the front-end could not run: the reason is printed, the DMA streams still are
"$CAL" --only D --reference ref --nki-skipped "no front-end here" > out.txt ||
	fail "skipped run failed"
grep -q '^not run: no front-end here' out.txt || fail "skip reason"

# bad inputs name the file and the place
sed 's/latency/latencyX/' ref/nki-calibration/measured.tsv > m2 && mkdir -p bad/nki-calibration &&
	mv m2 bad/nki-calibration/measured.tsv
"$CAL" --only D --reference bad > /dev/null 2> err.txt && fail "missing column accepted"
grep -q "bad/nki-calibration/measured.tsv:1: no column 'latency'" err.txt ||
	fail "missing column message: $(cat err.txt)"
sed 's/^matmul\tok\t0.0387/matmul\tok\tfast/' results.tsv > r2.tsv
"$CAL" --only D --reference ref --nki-results r2.tsv > /dev/null 2> err.txt &&
	fail "a time that is not a number accepted"
grep -q "r2.tsv: matmul: 'fast' is not a number" err.txt || fail "number message: $(cat err.txt)"
"$CAL" --only D --reference nowhere > /dev/null 2> err.txt && fail "missing folder accepted"
grep -q "nowhere/nki-calibration/measured.tsv" err.txt || fail "missing folder message"
printf 'problem\tstatus\n' > empty.tsv
"$CAL" --only D --reference ref --nki-results empty.tsv > /dev/null 2> err.txt &&
	fail "results without columns accepted"
grep -q "empty.tsv:1: no column 'total_time'" err.txt || fail "results column message"

# the front-end end to end (bench/nki_calibration.py): a small kernel of this folder run as the
# harness ran the real ones, its Summary (the summary-json's nested shape) read into the results
PY=""
for p in /usr/bin/python3 python3; do
	if command -v "$p" > /dev/null && "$p" -c 'import numpy' 2> /dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ] && shim=$("$BUILD/neuron-explorer" nki path 2> /dev/null); then
	mkdir -p one/nki-calibration/k one/nki-calibration/r
	cat > one/nki-calibration/k/double.py <<'K'
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(t, 2.0))
    return out
K
	cat > one/nki-calibration/r/double.py <<'R'
import numpy as np


def get_inputs():
    return [np.random.rand(256, 512).astype(np.float32)]


def transform_to_nki_inputs(inputs):
    return inputs
R
	{
		echo "$cols"
		printf 'double	k/double.py	0.01	524288	524288	0	0	0	0.5	0
'
	} | sed 's/^problem	kernel_file/problem	kernel_file	reference_file/;
		s/^double	k\/double.py/double	k\/double.py	r\/double.py/' \
		> one/nki-calibration/measured.tsv
	PYTHONPATH="$shim" "$PY" "$SRC/bench/nki_calibration.py" one run1 res1.tsv \
		"$BUILD/neuron-explorer" 2> err.txt || fail "nki_calibration.py: $(cat err.txt)"
	awk -F'\t' 'NR == 2 && $1 == "double" && $2 == "ok" && $3 > 0 && $4 == 524288 &&
		$5 == 524288 { ok = 1 } END { exit !ok }' res1.tsv || fail "front-end row: $(cat res1.tsv)"
	# (exit 1: its made-up measurement is off target and the DMA-stream kernels are missing)
	"$CAL" --only D --reference one --nki-results res1.tsv > out.txt 2> err.txt
	grep -Eq '^double +HBM read\+write +1.049 +1.049 MB +\+0.0 %' out.txt ||
		fail "front-end HBM row: $(cat out.txt)"
else
	echo "note: no python3 with numpy or no NKI front-end: the end-to-end part is skipped"
fi

# usage
"$CAL" --only Q > /dev/null 2>&1; [ $? -eq 2 ] || fail "--only Q not a usage error"
"$CAL" --nki-results results.tsv > /dev/null 2>&1; [ $? -eq 2 ] ||
	fail "--nki-results without --reference not a usage error"
bash "$SRC/bench/calibration.sh" "$BUILD" "$T/work" --reference "$T/nowhere" > /dev/null 2>&1
[ $? -eq 2 ] || fail "calibration.sh with a missing folder not a usage error"
bash "$SRC/bench/calibration.sh" "$BUILD" --bogus > /dev/null 2>&1
[ $? -eq 2 ] || fail "calibration.sh --bogus not a usage error"
echo "ok"
