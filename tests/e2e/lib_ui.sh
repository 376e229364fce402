#!/bin/bash
# lib_ui.sh: what an end-to-end test of the web UI shares, sourced (not a test: tests are
# t*.sh): ui_setup makes the scratch directory $T (lib_e2e.sh: removed on exit, after the
# servers in pids are stopped), readies the test tools and Debian's Chromium ($CHROMIUM);
# ui_serve DATA serves a data path with view on free ports and sets $UI; ui_stop stops it
# with ctrl-c and checks it exited cleanly (and, under ASan, without a report). fail
# prints the servers' output.
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"

ui_setup() { # name
	BIN=${NX_BIN:?NX_BIN not set}
	SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
	pids=()
	e2e_setup "$1"
	bash "$SRC/tests/tools/setup.sh" || fail "tests/tools/setup.sh"
	CHROMIUM=$(bash "$SRC/tests/tools/install-chromium.sh") || fail "no chromium"
}

fail() { echo "FAIL: $*" >&2; for f in view.out view.err; do [ -f "$f" ] && sed 's/^/  /' "$f" >&2; done; exit 1; }
e2e_cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }

ui_serve() { # data path
	"$BIN" view --data-path "$1" --port 0 --api-server-port 0 > view.out 2> view.err &
	pids+=($!)
	for _ in $(seq 600); do grep -q "ctrl-c to exit" view.out 2>/dev/null && break; sleep 0.1; done
	grep -q "ctrl-c to exit" view.out || fail "view did not start"
	UI=$(sed -n 's|^View a list of profiles at \(http://localhost:[0-9]*\)/$|\1|p' view.out)
	[ -n "$UI" ] || fail "view did not print the UI's URL"
}

ui_stop() {
	local rc
	kill -INT "${pids[0]}"
	wait "${pids[0]}"; rc=$?
	pids=()
	[ $rc -eq 0 ] || fail "view exited with $rc after SIGINT"
	grep -q "Sanitizer" view.err && fail "sanitizer report"
	return 0
}
