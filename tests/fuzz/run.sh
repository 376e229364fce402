#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh FUZZ_BUILD_DIR [-t SECONDS] [-n RUNS] [TARGET...]: runs the libFuzzer
# targets of a -DNX_FUZZ=ON build, each from its committed seed corpus
# (tests/fuzz/corpus/<name>, never written to: new inputs go to a scratch corpus), for
# a bounded time (-t, default 30 s without -n) or number of executions (-n), or until the
# first of both is reached when both are given. Prints one line per
# target: executions, executions/s, new corpus size, and the verdict. A crash, leak,
# timeout or sanitizer report fails the run; its input is kept in
# FUZZ_BUILD_DIR/fuzz-artifacts/ and printed, to become a regression test.
set -euo pipefail
build=$(cd "${1:?usage: run.sh FUZZ_BUILD_DIR [-t SECONDS] [-n RUNS] [TARGET...]}" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
secs="" runs=""
while getopts "t:n:" o; do
	case $o in
	t) secs=$OPTARG ;;
	n) runs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ -n "$secs$runs" ] || secs=30
shift $((OPTIND - 1))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for d in "$here"/corpus/*/; do targets+=("$(basename "$d")"); done
fi
art=$build/fuzz-artifacts
mkdir -p "$art"
fail=0 npass=0 nfail=0
for t in "${targets[@]}"; do
	exe=$build/tests/fuzz/fuzz_$t
	if [ ! -x "$exe" ]; then
		echo "fuzz_$t: not built (configure with CC=clang -DNX_FUZZ=ON)"
		fail=1 nfail=$((nfail + 1))
		continue
	fi
	work=$(mktemp -d)
	limit=()
	[ -n "$secs" ] && limit+=(-max_total_time="$secs")
	[ -n "$runs" ] && limit+=(-runs="$runs")
	# rss_limit: the trace targets hold a 256 KiB window per file; 2 GB flags real growth.
	set +e
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$exe" "${limit[@]}" -timeout=20 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$art/$t-" "$work" "$here/corpus/$t" > "$work.log" 2>&1
	rc=$?
	set -e
	execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$work.log")
	rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$work.log")
	found=$(find "$work" -type f | wc -l)
	if [ $rc -eq 0 ]; then
		npass=$((npass + 1))
		printf 'fuzz_%-13s %10s executions %7s/s  %4s new inputs  ok\n' "$t" "${execs:-?}" "${rate:-?}" "$found"
	else
		fail=1 nfail=$((nfail + 1))
		printf 'fuzz_%-13s %10s executions  FAILED (exit %d); log:\n' "$t" "${execs:-?}" "$rc"
		grep -E "ERROR|SUMMARY|runtime error|Test unit written|#0 |#1 |#2 |#3 " "$work.log" | head -30
	fi
	rm -rf "$work" "$work.log"
done
echo "fuzz: $npass passed, $nfail failed"
exit $fail
