# fleet_lib.sh: what the fleet benchmarks (fleet_scale.sh, fleet_members.sh) share;
# sourced, not run.

# timed OUT COMMAND...: runs COMMAND with its output in OUT and prints /usr/bin/time's
# "wall cpu rss_kB" of it (cpu = user + sys seconds); a failure ends the benchmark with
# the tail of OUT.
timed() {
	local out=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$out.time" "$@" >"$out" 2>&1 || {
		echo "failed: $* (see $out)" >&2
		tail -n 5 "$out" >&2
		exit 1
	}
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$out.time"
}

# start_server DATA LOG: `view --disable-ui` of the data path DATA ($bin, on $port) in the
# background, its pid in $server; returns once it answers /api/v1/health (60 s at most).
start_server() {
	"$bin" view --data-path "$1" --disable-ui --api-server-port "$port" -q >"$2" 2>&1 &
	server=$!
	for _ in $(seq 600); do
		curl -s "http://127.0.0.1:$port/api/v1/health" 2>/dev/null | grep -q healthy && return 0
		sleep 0.1
	done
}

# proc_cpu PID: the user + sys seconds the process PID has used so far (all its threads).
proc_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$1/stat"
}
