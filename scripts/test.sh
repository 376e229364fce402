#!/usr/bin/env bash
# test.sh: sets up everything and runs the whole test suite twice: once in a normal
# build, once under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/bootstrap.sh"
bash "$here/tests/tools/setup.sh"

echo "== build (RelWithDebInfo) and test"
bash "$here/scripts/build.sh" "$here/build"
ctest --test-dir "$here/build" --output-on-failure -j2

echo "== build (ASan + UBSan) and test"
bash "$here/scripts/build.sh" "$here/build-asan" -DNX_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
LSAN_OPTIONS=suppressions=$here/tests/tools/lsan.supp \
	ctest --test-dir "$here/build-asan" --output-on-failure -j2
