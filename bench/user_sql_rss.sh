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
work=$(mktemp -d "${TMPDIR:-/tmp}/nx-bench-usersql.XXXXXX")
pid=
stop() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=; }
trap 'stop; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
cpu() { sed 's/.*) //' "/proc/$pid/stat" | awk -v hz="$hz" '{ printf "%d", ($12 + $13) * 1000 / hz }'; }
hwm() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status"; }
post() { curl -s -o "$work/r.json" -w '%{http_code} %{time_total}' -X POST \
	-H 'Content-Type: application/json' -d "$(printf '{"type":"databaseExplorerQuery","query":"%s"}' "$1")" \
	"$api/api/v1/db/$name/_search"; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '%-6s %9s %8s %8s %8s  %s\n' status wall_ms cpu_ms hwm0_MB hwm1_MB query
for sql in "$@"; do
	"$build/neuron-explorer" view --data-path "$data" --port 0 --api-server-port 0 --disable-ui \
		> "$work/view.out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do grep -q "ctrl-c" "$work/view.out" && break; sleep 0.1; done
	api=$(sed -n 's|^\(Ready: \)\{0,1\}API server listening on \(http://127.0.0.1:[0-9]*\)/api/v1 .*|\2|p' "$work/view.out")
	[[ -n $api ]] || { cat "$work/view.out" >&2; exit 1; }
	post "SELECT 1 FROM Summary" > /dev/null
	h0=$(hwm)
	c0=$(cpu)
	read -r code t <<< "$(post "$sql")"
	printf '%-6s %9.0f %8d %8s %8s  %s\n' "$code" "$(echo "$t * 1000" | bc)" $(($(cpu) - c0)) "$h0" "$(hwm)" "$sql"
	echo "       reply: $(head -c 100 "$work/r.json")"
	stop
done
