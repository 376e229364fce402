#!/usr/bin/env bash
# calibration.sh BUILD_DIR [WORK_DIR] [--reference DIR] [--markdown]: the simulator
# against published hardware measurements (called by run.sh). bench_calib captures every
# calibration kernel of the library at its measured shape and target and prints, family
# by family, measured, simulated and the error of every published figure, the median
# and worst error of each class of figures and how many are within target, then the
# micro facts and an overview. With --reference DIR (a folder holding nki-calibration/,
# the team library's, outside the repository; read, never copied) it adds family D: the NKI calibration
# kernels run unmodified through the NKI front-end (`neuron-explorer nki`, with a
# python3 that has numpy) and compared with their measured Summary, and the DMA
# streams of its DMA-bound kernels. --markdown prints the tables docs/simulator.md
# carries ("Calibration" and the library kernels table).
set -euo pipefail
build=$(cd "$1" && pwd)
shift
work=""
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then work=$1; shift; fi
work=${work:-$build/bench-work}
md=() ref=""
while [ $# -gt 0 ]; do
	case $1 in
	--markdown) md=(--markdown) ;;
	--reference)
		[ -d "${2:-}" ] || { echo "calibration.sh: --reference: no folder '${2:-}'" >&2; exit 2; }
		ref=$(cd "$2" && pwd); shift ;;
	*) echo "calibration.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
nki=()
if [ -n "$ref" ]; then
	[ -r "$ref/nki-calibration/measured.tsv" ] || {
		echo "calibration.sh: $ref/nki-calibration/measured.tsv is not readable" >&2; exit 1; }
	py=""
	for p in /usr/bin/python3 python3; do
		if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
	done
	if ! shim=$("$build/neuron-explorer" nki path 2>/dev/null); then
		nki=(--reference "$ref" --nki-skipped "the NKI front-end (neuron-explorer nki) is not in this build")
	elif [ -z "$py" ]; then
		nki=(--reference "$ref" --nki-skipped "no python3 with numpy (apt-get install python3-numpy)")
	else
		# a fresh folder per run (its NEFFs, NTFFs and results stay for inspection)
		mkdir -p "$work"
		run=$(mktemp -d "$work/nki-calibration.XXXXXX")
		PYTHONPATH="$shim${PYTHONPATH:+:$PYTHONPATH}" "$py" "$(dirname "$0")/nki_calibration.py" \
			"$ref" "$run/kernels" "$run/results.tsv" "$build/neuron-explorer"
		echo "calibration.sh: the NKI kernels' NEFFs, NTFFs and results are in $run" >&2
		nki=(--reference "$ref" --nki-results "$run/results.tsv")
	fi
fi
"$build/bench/bench_calib" "${md[@]}" "${nki[@]}"
if [ ${#md[@]} -gt 0 ]; then "$build/bench/bench_calib" --library; fi
