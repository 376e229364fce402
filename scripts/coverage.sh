#!/usr/bin/env bash
# coverage.sh [BUILD_DIR]: builds neuron-explorer with gcc's line coverage (NX_COVERAGE=ON,
# default folder build-cov), runs the test suite but t6001 (it starts a private Slurm), and
# prints the line coverage of every source file under src/ and the total, read with gcov.
# The counts of an earlier run are removed first, so the figure is this run's.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-cov}
command -v gcov > /dev/null || { echo "coverage.sh: gcov is missing (apt-get install gcc)" >&2; exit 1; }
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNX_DEVELOPER=ON \
	-DNX_COVERAGE=ON -DNX_BENCH=OFF > /dev/null
ninja -C "$build" -j"$(nproc)"
find "$build" -name '*.gcda' -delete
# failures are reported but still leave counts to read
rc=0
ctest --test-dir "$build" --output-on-failure -j2 -E t6001 || rc=$?

# gcov -n prints, for each object's sources, "File 'PATH'" then "Lines executed:P% of N";
# only src/*.c count (a header's inline functions would be counted once per includer).
report="$build/coverage.txt"
find "$build/CMakeFiles" -path '*/src/*' -name '*.gcda' -print0 | sort -z |
	while IFS= read -r -d '' gcda; do
		(cd "$(dirname "$gcda")" && gcov -n -o . "$gcda" 2> /dev/null)
	done |
	awk -v src="$here/src/" '
		/^File / { f = $0; sub(/^File \047/, "", f); sub(/\047$/, "", f); next }
		/^Lines executed:/ && f != "" {
			if (index(f, src) == 1 && f ~ /\.c$/ && !(f in total)) {
				split($0, a, /[:% ]+/); pct = a[3]; n = $NF
				total[f] = n; hit[f] = int(pct * n / 100 + 0.5)
			}
			f = ""
		}
		END {
			for (f in total) {
				rel = substr(f, length(src) + 1)
				printf "%6.1f%% %6d  src/%s\n", total[f] ? 100 * hit[f] / total[f] : 100, total[f], rel
				T += total[f]; H += hit[f]
			}
			if (T == 0) { print "coverage.sh: no coverage counts found" > "/dev/stderr"; exit 1 }
			printf "TOTAL %d of %d lines of src/ executed: %.1f%%\n", H, T, 100 * H / T > "/dev/stderr"
		}' 2> "$report.total" | sort -k3 > "$report"
cat "$report" "$report.total"
cat "$report.total" >> "$report"
rm -f "$report.total"
[ "$rc" -eq 0 ] || echo "coverage.sh: some tests failed (ctest exit $rc); the figure counts what ran" >&2
exit "$rc"
