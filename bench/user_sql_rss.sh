#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# user_sql_rss.sh: what users' SQL costs the server (not a ctest test). For each query (the
# arguments, else the four of docs/memory.md's "The server's memory: users' SQL and
# flatness": count(DISTINCT id), a DISTINCT of two columns, a GROUP BY id, a join of
# DmaPacket and Instruction) a fresh `neuron-explorer view` serves DATA_PATH and gets
# `SELECT 1 FROM Summary` (opens the profile's database), then the query through `_search`:
# its HTTP status, wall ms, the server's CPU ms (user + system), VmHWM before and after (MB),
# and the reply's first 100 bytes. The environment (NX_SERVER_MEMORY_LIMIT,
# NX_SERVER_QUERY_MEMORY_LIMIT) reaches the server. Serve a hard-linked copy (`cp -al`).
#
# usage: bench/user_sql_rss.sh BUILD_DIR DATA_PATH PROFILE [SQL...]
set -euo pipefail
build=$(cd "${1:?usage: bench/user_sql_rss.sh BUILD_DIR DATA_PATH PROFILE [SQL...]}" && pwd)
data=${2:?usage: bench/user_sql_rss.sh BUILD_DIR DATA_PATH PROFILE [SQL...]}
name=${3:?usage: bench/user_sql_rss.sh BUILD_DIR DATA_PATH PROFILE [SQL...]}
shift 3
if (($# == 0)); then
	set -- "SELECT count(DISTINCT id) FROM Instruction" \
		"SELECT count(*) FROM (SELECT DISTINCT id, opcode FROM Instruction)" \
		"SELECT count(*) FROM (SELECT id FROM Instruction GROUP BY id)" \
		"SELECT * FROM DmaPacket d JOIN Instruction i ON d.start_ts=i.start_ts LIMIT 5"
fi
. "$(cd "$(dirname "$0")" && pwd)/lib_server.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-usersql.XXXXXX")
trap 'nx_serve_stop; rm -rf "$work"' EXIT
post() { curl -s -o "$work/r.json" -w '%{http_code} %{time_total}' -X POST \
	-H 'Content-Type: application/json' -d "$(printf '{"type":"databaseExplorerQuery","query":"%s"}' "$1")" \
	"$nx_api/api/v1/db/$name/_search"; }
echo "load average: $(nx_load), $(nproc) cores"
printf '%-6s %9s %8s %8s %8s  %s\n' status wall_ms cpu_ms hwm0_MB hwm1_MB query
for sql in "$@"; do
	nx_serve "$build" "$work/view.out" --data-path "$data" --disable-ui
	post "SELECT 1 FROM Summary" > /dev/null
	h0=$(nx_hwm_mib "$nx_pid")
	c0=$(nx_cpu_ms "$nx_pid")
	read -r code t <<< "$(post "$sql")"
	printf '%-6s %9.0f %8d %8s %8s  %s\n' "$code" "$(echo "$t * 1000" | bc)" \
		$(($(nx_cpu_ms "$nx_pid") - c0)) "$h0" "$(nx_hwm_mib "$nx_pid")" "$sql"
	echo "       reply: $(head -c 100 "$work/r.json")"
	nx_serve_stop
done
