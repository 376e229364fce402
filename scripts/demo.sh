#!/usr/bin/env bash
# demo.sh: the main job on a built-in demo, from nothing:
#   set up (Debian packages, DuckDB) and build,
#   generate the naive 4096^3 BF16 matmul kernel (matmul_v0) as a NEFF,
#   capture it on the NeuronCore simulator with DGE notifications (NTFF),
#   ingest NEFF + NTFF and serve the API (view --disable-ui),
#   answer the seed workflow's queries over HTTP, then stop the server.
# Everything is written under out/demo/ (DEMO_DIR overrides: a new folder, or one an
# earlier demo made; any other is refused). The server takes port 3002
# when it is free, else a free one; DEMO_PORT chooses another (0: any free port).
# DEMO_SIZE sets the kernel's --size (default 4096; 512 is a quick run), DEMO_SKIP_BUILD=1
# skips the set-up and build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
demo=${DEMO_DIR:-$here/out/demo}
bin=$here/build/neuron-explorer

if [ "${DEMO_SKIP_BUILD:-0}" != 1 ]; then
	bash "$here/scripts/bootstrap.sh"
	echo "== building"
	bash "$here/scripts/build.sh" "$here/build"
fi

# The demo's folder is replaced on every run, so it must be one the demo made (it leaves
# its marker there), an empty one, or the default out/demo: a DEMO_DIR holding anything
# else is the user's and is left alone. The demo never makes a symbolic link, so a link
# (even to an empty folder) is the user's too.
marker=.neuron-explorer-demo
if [ -L "$demo" ]; then
	echo "demo: $demo is a symbolic link, which the demo did not make:" \
		"set DEMO_DIR to a new folder" >&2
	exit 2
fi
if [ -e "$demo" ] && [ ! -e "$demo/$marker" ] && [ "$demo" != "$here/out/demo" ] &&
	{ [ ! -d "$demo" ] || [ -n "$(ls -A "$demo")" ]; }; then
	echo "demo: $demo exists and was not made by the demo (no $marker in it):" \
		"set DEMO_DIR to a new folder" >&2
	exit 2
fi
rm -rf "$demo"
mkdir -p "$demo"
touch "$demo/$marker"
cd "$demo"
echo "== generating the matmul_v0 kernel (NEFF)"
"$bin" kernel gen matmul_v0 --size "${DEMO_SIZE:-4096}" -o kernel.neff
echo "== capturing on the simulator (NTFF)"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$bin" capture -n kernel.neff -s profile.ntff --profile-nth-exec=2

port=${DEMO_PORT:-3002}
if [ "$port" != 0 ] && (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
	echo "port $port is busy: the demo uses a free port instead"
	port=0
fi
echo "== ingesting and serving (view --disable-ui)"
"$bin" view -n kernel.neff -s profile_exec_2.ntff --data-path "$demo/data" \
	--display-name my-kernel --disable-ui --api-server-port $port >view.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
	grep -q "^Ready:" view.log 2>/dev/null && break
	kill -0 $pid 2>/dev/null || { cat view.log; exit 1; }
	sleep 0.5
done
grep "Processing for" view.log
port=$(grep -oP 'listening on http://127.0.0.1:\K[0-9]+' view.log)
api=http://localhost:$port/api/v1
curl -s "$api/health"; echo

query() {
	curl -s -X POST "$api/db/my-kernel/_search" -H 'Content-Type: application/json' \
		-d "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"$1\",\"query\":\"$2\"}" |
		python3 -m json.tool
}
echo "== seed query: Summary metrics"
query Summary "SELECT total_time, mfu_estimated_percent, tensor_engine_active_time_percent, dma_active_time_percent FROM Summary"
echo "== seed query: instruction breakdown"
query Instruction "SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns, SUM(evt_wait_time_ns) as total_evt_wait_ns FROM Instruction GROUP BY engine, opcode ORDER BY total_dur_ns DESC"
echo "== seed query: NKI source line hotspots"
query Instruction "SELECT bir_debug_info_source_location, engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns FROM Instruction WHERE bir_debug_info_source_location IS NOT NULL GROUP BY bir_debug_info_source_location, engine, opcode ORDER BY total_dur_ns DESC LIMIT 10"
echo "== done: the profile is in $demo/data/profiles/global/my-kernel@latest"
