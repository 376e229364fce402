#!/usr/bin/env bash
# sim_identity.sh BASE_BUILD NEW_BUILD WORK_DIR [--reference DIR | --neffs DIR]: checks that
# two builds simulate the same timeline, to the byte. For every library kernel on trn2 and
# trn1, each build generates the NEFF (the two must be equal) and captures it twice: with
# DMA packets (DGE notifications, what bench_sim simulates) and as the second of two
# executions without them; the NTFFs of the two builds must be equal (cmp), or both builds
# refuse the NEFF with the same message (trn2 kernels too large for trn1). With
# --reference DIR (a folder holding nki-calibration/, outside the repository) the NKI
# calibration kernels are also compiled once by NEW_BUILD's NKI front-end (python3 with
# numpy) and captured on trn1 by both builds; --neffs DIR captures the NEFFs already in DIR
# that way instead (e.g. the kernels folder bench/calibration.sh leaves). WORK_DIR must not
# exist; it is created and kept. Every difference is reported; the exit status is 1 if there
# was one. Use: build main (or your branch's base) into a second build directory, then run
# this with it as BASE_BUILD.
set -euo pipefail
usage() {
	echo "usage: sim_identity.sh BASE_BUILD NEW_BUILD WORK_DIR" \
		"[--reference DIR | --neffs DIR]" >&2
	exit 2
}
[ $# -ge 3 ] || usage
base=$(cd "$1" && pwd)/neuron-explorer
new=$(cd "$2" && pwd)/neuron-explorer
work=$3
shift 3
ref="" neffs=""
while [ $# -gt 0 ]; do
	case $1 in
	--reference) [ -d "${2:-}" ] || usage; ref=$(cd "$2" && pwd); shift ;;
	--neffs) [ -d "${2:-}" ] || usage; neffs=$(cd "$2" && pwd); shift ;;
	*) usage ;;
	esac
	shift
done
for b in "$base" "$new"; do
	[ -x "$b" ] || { echo "sim_identity.sh: $b is not built" >&2; exit 2; }
done
# a fresh folder: nothing of anyone else's is written over
mkdir "$work" || { echo "sim_identity.sh: give a WORK_DIR that does not exist" >&2; exit 2; }
work=$(cd "$work" && pwd)
same=0 differ=0

# compare WHAT FILE_A FILE_B: counts and reports one comparison
compare() {
	if cmp -s "$2" "$3"; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		echo "DIFFERENT: $1 ($2 vs $3: $(cmp "$2" "$3" 2>&1 | head -1))"
	fi
}

# capture_both NAME NEFF_BASE NEFF_NEW TARGET: the two captures of a NEFF with each build.
# A NEFF the target refuses (a trn2 kernel's tiles past trn1's SBUF) must be refused by
# both builds with the same message.
capture_both() {
	local name=$1 t=$4 d bin neff side v
	for side in base new; do
		d=$work/$t/$name.$side
		mkdir -p "$d/packets" "$d/second"
		bin=$base neff=$2
		[ "$side" = new ] && bin=$new neff=$3
		"$bin" capture -q --target "$t" --enable-dge-notifs -n "$neff" \
			-s "$d/packets/profile_exec_1.ntff" 2> "$d/packets/stderr" || true
		"$bin" capture -q --target "$t" --num-exec 2 --profile-nth-exec 2 -n "$neff" \
			-s "$d/second/p.ntff" 2> "$d/second/stderr" || true
		sed -i "s|$neff|NEFF|g" "$d/packets/stderr" "$d/second/stderr"
	done
	for v in packets second; do
		local fb=$work/$t/$name.base/$v fn=$work/$t/$name.new/$v f
		f=profile_exec_1.ntff
		[ $v = second ] && f=profile_exec_2.ntff
		if [ -e "$fb/$f" ] || [ -e "$fn/$f" ]; then
			compare "$t $name, $v" "$fb/$f" "$fn/$f"
		else
			compare "$t $name, $v: refused" "$fb/stderr" "$fn/stderr"
		fi
	done
}

for t in trn2 trn1; do
	mkdir -p "$work/$t"
	for k in $("$new" kernel list | awk '{print $1}'); do
		"$base" kernel gen "$k" -q --target "$t" -o "$work/$t/$k.base.neff"
		"$new" kernel gen "$k" -q --target "$t" -o "$work/$t/$k.new.neff"
		compare "$t $k NEFF" "$work/$t/$k.base.neff" "$work/$t/$k.new.neff"
		capture_both "$k" "$work/$t/$k.base.neff" "$work/$t/$k.new.neff" "$t"
		echo "sim_identity: $t $k done ($same identical, $differ different so far)" >&2
	done
done

if [ -n "$ref" ]; then
	py=""
	for p in /usr/bin/python3 python3; do
		if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then
			py=$p
			break
		fi
	done
	[ -n "$py" ] || {
		echo "sim_identity.sh: --reference needs a python3 with numpy" >&2
		exit 1
	}
	shim=$("$new" nki path)
	PYTHONPATH="$shim${PYTHONPATH:+:$PYTHONPATH}" "$py" "$(dirname "$0")/nki_calibration.py" \
		"$ref" "$work/nki" "$work/nki.tsv" "$new" >&2
	neffs=$work/nki
fi
if [ -n "$neffs" ]; then
	n=0
	for f in "$neffs"/*.neff; do
		[ -e "$f" ] || continue
		capture_both "nki-$(basename "$f" .neff)" "$f" "$f" trn1
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "sim_identity.sh: no NEFF in $neffs" >&2; differ=$((differ + 1)); }
fi

echo "sim_identity: $same identical, $differ different (files in $work)"
[ "$differ" -eq 0 ]
