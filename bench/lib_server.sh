# SPDX-License-Identifier: MIT
# lib_server.sh: what the server benchmarks share (sourced, not run): start `neuron-explorer
# view` on free loopback ports and wait for it, stop it, and read a process's CPU time, RSS
# and peak RSS from /proc, and the load average. A benchmark sets `trap nx_serve_stop EXIT`
# (or calls it from its own cleanup).

nx_pid=
nx_api=
nx_ui=

# nx_serve BUILD_DIR LOG [view arguments...]: starts the server with its output in LOG and
# waits (up to 60 s) until it listens; sets nx_pid, nx_api (http://127.0.0.1:PORT) and nx_ui
# (the UI's address, empty with --disable-ui). Fails, printing LOG, if no API address shows.
nx_serve() {
	local build=$1 log=$2
	shift 2
	"$build/neuron-explorer" view --port 0 --api-server-port 0 "$@" > "$log" 2>&1 &
	nx_pid=$!
	for _ in $(seq 600); do grep -q "ctrl-c" "$log" && break; sleep 0.1; done
	nx_api=$(sed -n 's|^\(Ready: \)\{0,1\}API server listening on \(http://127.0.0.1:[0-9]*\)/api/v1 .*|\2|p' "$log")
	nx_ui=$(sed -n 's|^View .* at \(http://localhost:[0-9]*\)/.*|\1|p' "$log")
	[[ -n $nx_api ]] || { cat "$log" >&2; return 1; }
}

# nx_serve_stop: stops the server nx_serve started, if it runs.
nx_serve_stop() {
	[[ -n $nx_pid ]] && kill "$nx_pid" 2>/dev/null && wait "$nx_pid" 2>/dev/null
	nx_pid=
}

# nx_cpu_ms PID: the process's CPU time so far, user + system, in ms (unlike a wall time,
# it holds on a loaded machine).
nx_cpu_ms() {
	sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($12 + $13) * 1000 / hz }'
}

# nx_hwm_mib PID, nx_rss_mib PID: the process's peak RSS (VmHWM) and RSS (VmRSS), MiB.
nx_hwm_mib() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
nx_rss_mib() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# nx_load: the load average over 1, 5 and 15 minutes.
nx_load() { cut -d' ' -f1-3 /proc/loadavg; }
