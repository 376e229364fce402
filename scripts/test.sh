#!/usr/bin/env bash
# test.sh: sets up everything and runs the whole test suite: the normal developer build
# (warnings are errors), the same tests under AddressSanitizer + UndefinedBehaviorSanitizer,
# the server tests under ThreadSanitizer, and every libFuzzer target for a bounded time
# (NX_FUZZ_SECONDS, default 30 s each) in a clang build. Stages can be skipped with
# NX_TEST_SKIP="asan tsan fuzz" (for a quick local run; CI runs them all).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
skip=" ${NX_TEST_SKIP:-} "
bash "$here/scripts/bootstrap.sh" --test
bash "$here/tests/tools/setup.sh"

echo "== build (RelWithDebInfo) and test"
bash "$here/scripts/build.sh" "$here/build"
ctest --test-dir "$here/build" --output-on-failure -j2

if [[ $skip != *" asan "* ]]; then
	echo "== build (ASan + UBSan) and test"
	bash "$here/scripts/build.sh" "$here/build-asan" -DNX_SANITIZE=address,undefined -DNX_BENCH=OFF
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$here/tests/tools/lsan.supp \
		ctest --test-dir "$here/build-asan" --output-on-failure -j2
fi

if [[ $skip != *" tsan "* ]]; then
	echo "== build (TSan) and the tests of our own threads: the server, the trace ingest"
	cmake -S "$here" -B "$here/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DNX_DEVELOPER=ON -DNX_SANITIZE=thread -DNX_BENCH=OFF > /dev/null
	# both ingests read ahead of DuckDB's writer (db/duck.c); the device ingest runs its
	# occupancy pass on a thread (ingest/src_staging.c); the trace ingest inflates gzip
	# on a thread and writes the empty tables on a thread of their own (trace/input.c,
	# ingest/ingest_dir.c); the timeline cache's events part builds on two threads
	# (server/lod_build.c); recommend's passes decode row groups on a thread of their own
	# (analysis/scan_read.c: t5015 compares one thread and two, test_recommend_kernels
	# runs them)
	threaded=$(cd "$here/tests/unit" && ls test_server_*.c test_duck_source.c \
		test_ingest.c test_trace_ingest.c test_trace_tok.c test_lod_threads.c \
		test_recommend_kernels.c | sed 's/\.c$//')
	# shellcheck disable=SC2086
	ninja -C "$here/build-tsan" neuron-explorer nx-sql $threaded
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$here/tests/tools/tsan.supp" \
		ctest --test-dir "$here/build-tsan" --output-on-failure -j2 \
		-R '^(test_server_.*|test_duck_source|test_ingest|test_trace_ingest|test_trace_tok|test_lod_threads|test_recommend_kernels|t5015-recommend-threads)$'
fi

if [[ $skip != *" fuzz "* ]]; then
	echo "== build (clang, libFuzzer + ASan + UBSan) and fuzz each target for ${NX_FUZZ_SECONDS:-30} s"
	CC=clang cmake -S "$here" -B "$here/build-fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DNX_DEVELOPER=ON -DNX_FUZZ=ON -DBUILD_TESTING=OFF -DNX_BENCH=OFF > /dev/null
	ninja -C "$here/build-fuzz" fuzz
	bash "$here/tests/fuzz/run.sh" "$here/build-fuzz" -t "${NX_FUZZ_SECONDS:-30}"
fi
