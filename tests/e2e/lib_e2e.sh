#!/bin/bash
# lib_e2e.sh: the preamble every end-to-end shell test shares, sourced (not a test: tests
# are t*.sh). e2e_setup NAME makes the scratch directory $T, a new one by mktemp -d under
# $NX_TEST_TMP (or /tmp) that nobody else owns, and goes into it; on exit it runs the
# test's e2e_cleanup, if the test defines one (servers to stop, a mount to undo), and
# removes $T (KEEP=1 keeps it and says where). fail MESSAGE ends the test (a test may
# define its own after sourcing).
e2e_setup() { # name
	local base=${NX_TEST_TMP:-/tmp}

	mkdir -p "$base" && T=$(mktemp -d "$base/$1.XXXXXX") && cd "$T" || exit 1
	trap e2e_exit EXIT
}

# the EXIT trap: the test's exit status stays as it was
e2e_exit() {
	declare -F e2e_cleanup > /dev/null && e2e_cleanup
	cd /
	if [ -n "${KEEP:-}" ]; then
		echo "kept $T" >&2
	else
		rm -rf "$T"
	fi
}

fail() { echo "FAIL: $*" >&2; exit 1; }
