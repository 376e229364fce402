#!/bin/bash
# t5012-unremovable.sh: an old file that cannot be removed (chattr +i as root; without
# root, a file in a directory we made read-only) is an error with exit 1 naming where it
# stays, never a silent exit 0: the previous version of a re-ingested profile, of an
# output directory, an NTFF capture replaces. After the file is released, the next
# publication removes the leftover (its process has ended). Exit 77 (skipped) when
# neither way to pin a file works here.
set -u
BIN=${NX_BIN:?NX_BIN not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5012
# release: frees every pinned file wherever a rename moved it
release() {
	find "$T" -name 'pinned*' -o -name old.ntff | while read -r f; do
		chattr -i "$f" 2> /dev/null
	done
	find "$T" -type d -exec chmod u+w {} + 2> /dev/null
}
e2e_cleanup() { release; }
msg() { grep -qF -- "$1" err.txt || fail "message lacks '$1': $(cat err.txt)"; }

# pin DIR: puts a file into DIR that cannot be removed
MODE=
touch probe
if chattr +i probe 2> /dev/null; then
	chattr -i probe
	MODE=chattr
elif [ "$(id -u)" != 0 ]; then
	MODE=readonly
else
	echo "skip: root without chattr +i on this file system: no way to pin a file"
	exit 77
fi
pin() {
	if [ $MODE = chattr ]; then
		touch "$1/pinned" && chattr +i "$1/pinned"
	else
		mkdir "$1/pinned.d" && touch "$1/pinned.d/f" && chmod a-w "$1/pinned.d"
	fi
}

"$BIN" kernel gen matmul_v0 --size 512 -o k.neff -q || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n k.neff -s k.ntff -q || fail "capture"
V=("$BIN" view -n k.neff -s k.ntff -q --data-path dp)

# a re-ingest whose previous version holds a pinned file
"${V[@]}" --display-name a --ingest-only > /dev/null || fail "first ingest"
pin dp/profiles/global/a@latest || fail "pin"
"${V[@]}" --display-name a --ingest-only > /dev/null 2> err.txt
[ $? -eq 1 ] || fail "re-ingest over a pinned file: not exit 1"
msg "'dp/profiles/global/a@latest' is published, but its previous version could not be removed and stays in 'dp/profiles/global/.a@latest.tmp-"
[ -f dp/profiles/global/a@latest/Summary.parquet ] && [ ! -e dp/profiles/global/a@latest/pinned ] &&
	[ ! -e dp/profiles/global/a@latest/pinned.d ] || fail "the new version is not in place"
release
"${V[@]}" --display-name b --ingest-only > /dev/null || fail "another ingest"
ls -A dp/profiles/global | grep -q '\.tmp' && fail "the leftover stays: $(ls -A dp/profiles/global)"

# an output directory written before, with a pinned file
"${V[@]}" --output-file out > /dev/null || fail "output directory"
pin out || fail "pin out"
"${V[@]}" --output-file out > /dev/null 2> err.txt
[ $? -eq 1 ] || fail "output over a pinned file: not exit 1"
msg "'out' is published, but its previous version could not be removed and stays in './.out.tmp-"
release

# capture over an NTFF that cannot be replaced
mkdir cap && cp k.ntff cap/old.ntff
if [ $MODE = chattr ]; then
	chattr +i cap/old.ntff
else
	chmod a-w cap
fi
"$BIN" capture -n k.neff -s cap/old.ntff -q 2> err.txt
[ $? -eq 1 ] || fail "capture over a pinned NTFF: not exit 1"
msg "cap/old.ntff"
cmp -s cap/old.ntff k.ntff || fail "the pinned NTFF changed"
release
ls -A cap | grep -q '\.tmp' && fail "capture left a temporary: $(ls -A cap)"
exit 0
