#!/bin/bash
# lib_e2e.sh: the preamble every end-to-end shell test shares, sourced (not a test: tests
# are t*.sh). e2e_setup NAME makes the scratch directory $T, a new one by mktemp -d under
# $NX_TEST_TMP (or /tmp) that nobody else owns, and goes into it; on exit it runs the
# test's e2e_cleanup, if the test defines one (servers to stop, a mount to undo), and
# removes $T (KEEP=1 keeps it and says where). fail MESSAGE ends the test (a test may
# define its own after sourcing). e2e_serve starts a server of $BIN (below).
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

# e2e_serve OUT [ARGS...]: `$BIN view --api-server-port 0 --disable-ui ARGS` in the
# background, its output in OUT; S gets its pid (added to PIDS, for e2e_cleanup to kill),
# PORT its API port; fails when it does not listen within 30 s. Variables set before the
# call (VAR=value e2e_serve ...) reach the server.
e2e_serve() {
	local out=$1
	shift
	"$BIN" view --api-server-port 0 --disable-ui "$@" > "$out" 2>&1 &
	S=$!
	PIDS="${PIDS:-} $S"
	for _ in $(seq 300); do grep -q "listening" "$out" && break; sleep 0.1; done
	PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/api.*/\1/p' "$out")
	[ -n "$PORT" ] || fail "server: $(cat "$out")"
}

# e2e_counters_profile SELECT [CMD]: the prelude of the counters' tests (t5018-t5020): a
# profile p in dp/ ($P) of SemaphoreUpdate (SELECT's rows: pcore_idx, timestamp, id,
# value, in time order) and Summary, made by $SQL (nx-sql); TMPDIR=$T/tmp. Serves it
# (srv-1.txt), fetches its tracks, runs `CMD $PORT` if given (before the cache is there,
# or just after), waits for the timeline cache the server builds (CACHE gets its
# timeline.duckdb) and stops the server. Variables set before the call reach the server.
e2e_counters_profile() {
	P=dp/profiles/global/p@latest
	mkdir -p $P tmp || fail "making $P"
	export TMPDIR=$T/tmp
	"$SQL" "COPY ($1) TO '$P/SemaphoreUpdate.parquet' (FORMAT parquet); COPY (SELECT 1.0::DOUBLE AS total_time) TO '$P/Summary.parquet' (FORMAT parquet)" > /dev/null ||
		fail "making the profile"
	e2e_serve srv-1.txt --data-path dp
	curl -sf "http://127.0.0.1:$PORT/api/v1/profiles/namespace/global/profile_name/p/timeline/tracks" > /dev/null ||
		fail "tracks"
	[ -z "${2:-}" ] || "$2" $PORT
	CACHE=
	for _ in $(seq 600); do
		CACHE=$(ls -d dp/.cache/timeline/p@*/timeline.duckdb 2> /dev/null) && break
		sleep 0.1
	done
	[ -n "$CACHE" ] || fail "no cache: $(ls -R dp | head -20)"
	kill $S
	wait $S 2> /dev/null
}

# e2e_million_profile DIR: a profile of Instruction (a million rows: id, start_ts, end_ts,
# 97 opcodes) and Summary (total_time) in DIR, made by $SQL (nx-sql), for the tests of
# the server's memory limits.
e2e_million_profile() {
	mkdir -p "$1" || fail "making $1"
	"$SQL" "COPY (SELECT i AS id, i * 10 AS start_ts, i * 10 + 7 AS end_ts, 'op' || (i % 97) AS opcode FROM range(1000000) r(i)) TO '$1/Instruction.parquet' (FORMAT parquet); COPY (SELECT 1.5::DOUBLE AS total_time) TO '$1/Summary.parquet' (FORMAT parquet)" > /dev/null ||
		fail "making the profile"
}
