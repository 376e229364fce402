#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nki_view.sh BUILD_DIR WORK_DIR: a real NKI kernel's profile through every step after
# the kernel (called by run.sh; not a ctest test). The repository's own tiled matmul
# (kernels/calib_trn1_matmul_tiled.py, bfloat16) at two sizes: small, lhsT 2048x1024 and
# rhs 2048x2048; large, lhsT 8192x4096 and rhs 8192x8192 (about 133k instructions and
# 3.5M raw rows, docs/memory.md "A real NKI kernel's profile"). Per size and step, the
# CPU seconds (user + system, children included) and the peak RSS:
#   nki run        record, compile, listing, kernel asm, capture (`nki run -n -s`)
#   kernel asm     the listing `nki run` wrote, assembled again
#   capture        the NEFF simulated again (as `nki run` runs it)
#   view           `view --ingest-only` into a data path (the timeline cache included)
#   recommend      its default report (Markdown) of the ingested profile
#   first open     the server's first answers: GET .../timeline/tracks, then the whole
#                  profile's /timeline at 1600 px (the server's CPU for both; its peak)
# then each step's ratio large / small beside the ratio of instructions (linear when
# they match). The machine may be loaded: CPU seconds and peaks hold, walls do not.
set -uo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$2/nki-view
bin=$build/neuron-explorer
py=${NX_PYTHON:-/usr/bin/python3}
kernel=$here/../kernels/calib_trn1_matmul_tiled.py
if ! "$py" -c 'import numpy' 2>/dev/null; then
	echo "nki-view: $py has no numpy (apt-get install python3-numpy): skipped"
	exit 0
fi
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$here/lib_server.sh"
trap 'nx_serve_stop; rm -rf "$work"' EXIT

sizes=(small large)
declare -A inputs=(
	[small]="--input lhsT=2048x1024:bfloat16 --input rhs=2048x2048:bfloat16"
	[large]="--input lhsT=8192x4096:bfloat16 --input rhs=8192x8192:bfloat16")
steps=("nki run" "kernel asm" capture view recommend "first open")
declare -A cpu peak insts
# `nki run`'s NEFF carries the kernel's file (a binary of before that: none)
attach=()
"$bin" kernel asm --help | grep -q attach-source && attach=(--attach-source "$kernel")

# measure SIZE STEP COMMAND...: runs it under /usr/bin/time, keeps CPU s and peak MB.
measure() {
	local size=$1 step=$2 u s m
	shift 2
	if ! /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$@" > "$work/out.txt" 2>&1; then
		echo "nki-view: $size $step failed: $*"
		tail -5 "$work/out.txt"
		return 1
	fi
	read -r u s m < <(tail -1 "$work/time.txt")
	cpu[$size,$step]=$(echo "$u + $s" | bc)
	peak[$size,$step]=$((m / 1024))
}

echo "load average: $(nx_load), $(nproc) cores"
for size in "${sizes[@]}"; do
	d=$work/$size
	mkdir -p "$d"
	# shellcheck disable=SC2086 # the inputs are words
	measure "$size" "nki run" "$bin" nki run "$kernel" --entry calib_trn1_matmul_tiled \
		${inputs[$size]} -n "$d/mm.neff" -s "$d/mm.ntff" --listing "$d/mm.listing" || exit 1
	echo "$size: $(sed -n 's/^nki run: \([^;]*\);.*/\1/p' "$work/out.txt"); load $(nx_load)"
	measure "$size" "kernel asm" "$bin" kernel asm "$d/mm.listing" -o "$d/asm.neff" \
		"${attach[@]}" || exit 1
	cmp -s "$d/asm.neff" "$d/mm.neff" || echo "nki-view: $size: kernel asm wrote other bytes"
	rm -f "$d/asm.neff"
	measure "$size" capture "$bin" capture -n "$d/mm.neff" -s "$d/cap.ntff" --target trn2 \
		--enable-dge-notifs -q || exit 1
	rm -f "$d/cap.ntff"
	measure "$size" view "$bin" view -n "$d/mm.neff" -s "$d/mm.ntff" --ingest-only \
		--data-path "$d/data" --display-name mm -q || exit 1
	measure "$size" recommend "$bin" recommend --data-path "$d/data" --display-name mm \
		|| exit 1
	prof=$d/data/profiles/global/mm@latest
	insts[$size]=$("$build/nx-sql" -C "$prof" "SELECT count(*) FROM Instruction")
	raw=$("$build/nx-sql" -C "$prof" "SELECT (SELECT count(*) FROM Instruction) +
		(SELECT count(*) FROM DmaPacket) + (SELECT count(*) FROM SemaphoreUpdate)")
	echo "$size: ${insts[$size]} Instruction rows, $raw raw rows (with DmaPacket and" \
		"SemaphoreUpdate), NEFF $(($(stat -c %s "$d/mm.neff") / 1024)) KiB"

	nx_serve "$build" "$d/serve.log" --data-path "$d/data" --disable-ui || exit 1
	base=$nx_api/api/v1/profiles/namespace/global/profile_name/mm
	c0=$(nx_cpu_ms "$nx_pid")
	curl -sf -o "$work/tracks.json" "$base/timeline/tracks" ||
		{ echo "nki-view: tracks failed"; exit 1; }
	span=$("$py" -c 'import json, sys
t = json.load(open(sys.argv[1])); c = [x["name"] for x in t["columns"]]
s = [r[c.index("start")] for r in t["rows"] if r[c.index("start")] is not None]
e = [r[c.index("end")] for r in t["rows"] if r[c.index("end")] is not None]
print("t0=%d&t1=%d" % (min(s), max(e)))' "$work/tracks.json")
	curl -sf -o /dev/null "$base/timeline?$span&px=1600" ||
		{ echo "nki-view: timeline failed"; exit 1; }
	cpu[$size,first open]=$(echo "scale=2; ($(nx_cpu_ms "$nx_pid") - $c0) / 1000" | bc)
	peak[$size,first open]=$(nx_hwm_mib "$nx_pid" | cut -d. -f1)
	nx_serve_stop
	rm -rf "$d"
done

echo
echo "load average: $(nx_load)"
ratio=$(echo "scale=1; ${insts[large]} / ${insts[small]}" | bc)
printf "%-12s %9s %9s %8s %9s %9s %8s   (instructions x%s)\n" step "small s" "large s" "CPU x" \
	"small MB" "large MB" "peak x" "$ratio"
for step in "${steps[@]}"; do
	printf "%-12s %9.2f %9.2f %8.1f %9d %9d %8.1f\n" "$step" "${cpu[small,$step]}" \
		"${cpu[large,$step]}" \
		"$(echo "scale=3; ${cpu[large,$step]} / (${cpu[small,$step]} + 0.001)" | bc)" \
		"${peak[small,$step]}" "${peak[large,$step]}" \
		"$(echo "scale=3; ${peak[large,$step]} / ${peak[small,$step]}" | bc)"
done
echo "(CPU s = user + system; first open = the server's CPU for its first tracks and whole-profile"
echo " timeline answers, its peak the server's; nki run's CPU includes its kernel asm and capture)"
