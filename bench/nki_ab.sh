#!/usr/bin/env bash
# nki_ab.sh SHIM_A SHIM_B [REPS] [K]: the NKI shim's recording rate, two versions against
# each other on the same machine at the same time: each SHIM is a directory holding the
# shim's packages (what `neuron-explorer nki path` prints, e.g. build/nki/python of two
# build trees, or src/nki/python of two checkouts). The two are measured alternately, one
# fresh process per measurement (bench/nki_rate.py --record-only: a cold recording of the
# tiled matmul, K = 32768 by default: ~25k instructions), REPS times each (default 7); the
# medians of the CPU-time rates and their ratio are printed. On a loaded machine the
# absolute rates drift with the load, the ratio much less.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
a=$(cd "$1" && pwd) || exit 2
b=$(cd "$2" && pwd) || exit 2
reps=${3:-7}
K=${4:-32768}
py=${NX_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy' 2>/dev/null; then
	echo "nki_ab: $py has no numpy (apt-get install python3-numpy)"
	exit 1
fi
for r in $(seq "$reps"); do
	for v in A B; do
		d=$a; [ $v = B ] && d=$b
		out=$(PYTHONPATH=$d "$py" "$here/nki_rate.py" --record-only "$K") || {
			echo "nki_ab: the recording with $d failed"; exit 1; }
		echo "$v $out"
	done
done | "$py" -c '
import statistics, sys
rates = {"A": [], "B": []}
n = 0
for line in sys.stdin:
    v, count, cpu = line.split()
    n = int(count)
    rates[v].append(n / float(cpu))
med = {v: statistics.median(r) for v, r in rates.items()}
for v, name in (("A", sys.argv[1]), ("B", sys.argv[2])):
    print("%s: median %8.0f instructions/s of CPU time (%s)   %s" % (
        v, med[v], " ".join("%.0f" % x for x in rates[v]), name))
print("B/A: %.2f  (%d instructions per recording)" % (med["B"] / med["A"], n))
' "$a" "$b"
