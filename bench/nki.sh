#!/usr/bin/env bash
# nki.sh BUILD_DIR WORK_DIR [REFERENCE_DIR]: the NKI front-end (called by run.sh; the
# reference folder comes from the third argument or NX_BENCH_REFERENCE: the team
# library's reference folder, outside the repository, only read):
#  1. the shim's own cost: recorded instructions per second, numerics off and on, and the
#     compile rate (bench/nki_rate.py, a kernel written here);
#  2. the whole `nki run` of the matmul tutorial's tiled kernel at 4096 x 8192 x 8192, and
#     its CPU time stage by stage (bench/nki_stages.py: recording, compile passes, listing,
#     kernel asm, capture);
#  3. every nki-samples tutorial with a __main__ block, run unmodified as `python3 FILE`;
#  4. every nki-calibration kernel through nki.baremetal as its README describes, numerics
#     against its numpy forward, simulated time against the measured latency.
# Prints which run and which fail, and why.
set -uo pipefail
build=$(cd "$1" && pwd)
work=$2/nki
ref=${3:-${NX_BENCH_REFERENCE:-}}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/neuron-explorer
py=${NX_PYTHON:-/usr/bin/python3}
mkdir -p "$work"
if ! "$py" -c 'import numpy' 2>/dev/null; then
	echo "nki: $py has no numpy (apt-get install python3-numpy): skipped"
	exit 0
fi
shim=$("$bin" nki path) || { echo "nki: no shim beside $bin"; exit 1; }
export PYTHONPATH=$shim NX_NKI_BIN=$bin
now() { date +%s.%N; }

echo "# shim cost (listing level: $("$py" -c 'from nx_nki import driver; print(driver.level())'))"
"$py" "$here/nki_rate.py" "${NX_BENCH_NKI_K:-8192}"

if [ -z "$ref" ] || [ ! -d "$ref/nki-samples" ]; then
	echo
	echo "nki: no reference folder given (bench/nki.sh BUILD WORK REFERENCE_DIR):"
	echo "nki: the tutorials and calibration kernels are skipped"
	rm -rf "$work"
	exit 0
fi
ref=$(cd "$ref" && pwd)

echo
echo "# nki run: matmul tutorial, nki_matmul_tiled_ and nki_matmul_fully_optimized_, 4096x8192x8192 bf16"
mm=$ref/nki-samples/legacy-fc5c69f/matrix_multiplication__matrix_multiplication_nki_kernels.py
for entry in nki_matmul_tiled_ nki_matmul_fully_optimized_; do
	t0=$(now)
	"$bin" nki run "$mm" --entry "$entry" --input lhsT=8192x4096:bfloat16 \
		--input rhs=8192x8192:bfloat16 -n "$work/mm.neff" -s "$work/mm.ntff" \
		> "$work/mm.log" 2>&1
	rc=$?
	t1=$(now)
	printf "%-28s rc=%d  %6.1f s end to end: %s\n" "$entry" $rc "$(echo "$t1 - $t0" | bc)" \
		"$(tail -1 "$work/mm.log")"
done
"$py" "$here/nki_stages.py" "$mm" nki_matmul_tiled_ lhsT=8192x4096:bfloat16 \
	rhs=8192x8192:bfloat16 || echo "nki: the stage breakdown failed"

echo
echo "# nki-samples: every file with a __main__ block, run as python3 FILE (in a scratch directory)"
pass=0 fail=0
for f in "$ref"/nki-samples/*/*.py; do
	grep -q '__main__' "$f" || continue
	name=$(basename "$(dirname "$f")")/$(basename "$f")
	d=$work/samples/$(basename "$f" .py)
	mkdir -p "$d"
	# the reference folder names files TUTORIAL__FILE.py: link the tutorial's files under
	# their own names beside a link to this one, so sibling imports resolve as in the
	# tutorial's directory (the files themselves are run unmodified)
	tut=$(basename "$f"); tut=${tut%%__*}
	for s in "$(dirname "$f")/${tut}__"*.py; do ln -sf "$s" "$d/$(basename "${s#*__}")"; done
	run=$d/$(basename "${f#*__}")
	t0=$(now)
	# (python3 puts the resolved directory of a linked script on sys.path, hence PYTHONPATH)
	(cd "$d" && PYTHONPATH="$shim:$d" timeout "${NX_BENCH_NKI_TIMEOUT:-1800}" "$py" "$run" \
		> run.log 2>&1)
	rc=$?
	t1=$(now)
	why=$(grep -m1 -E "^error: |ModuleNotFoundError|Error:" "$d/run.log" | cut -c1-160)
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		printf "run   %-72s %6.1f s  %s\n" "$name" "$(echo "$t1 - $t0" | bc)" \
			"$(tail -1 "$d/run.log" | cut -c1-60)"
	else
		fail=$((fail + 1))
		printf "FAIL  %-72s %6.1f s  %s\n" "$name" "$(echo "$t1 - $t0" | bc)" "${why:-exit $rc}"
	fi
done
echo "nki-samples: $pass run, $fail fail"

echo
echo "# nki-calibration: nki.baremetal as the README describes (trn1, --disable-dge)"
pass=0 fail=0
for k in "$ref"/nki-calibration/kernels/*_0.py; do
	name=$(basename "$k" _0.py)
	if timeout "${NX_BENCH_NKI_TIMEOUT:-1800}" "$py" "$here/nki_calib.py" \
		"$ref/nki-calibration" "$name" "$work" ${NX_BENCH_NKI_NUMERICS:-} > "$work/c.log" 2>&1; then
		pass=$((pass + 1))
		cat "$work/c.log"
	else
		fail=$((fail + 1))
		printf "FAIL  %-40s %s\n" "$name" "$(grep -m1 -E "^error: |Error" "$work/c.log" | cut -c1-200)"
	fi
	rm -f "$work/$name.neff" "$work/$name.ntff"
done
echo "nki-calibration: $pass run, $fail fail"
rm -rf "$work"
