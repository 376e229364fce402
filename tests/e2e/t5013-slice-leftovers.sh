#!/bin/bash
# t5013-slice-leftovers.sh: the folder of slices ($TMPDIR/nx-serve-slices-*) of a server
# killed with -9 is removed by the next server's start; never the folder of a live server
# (it holds the lock on its mark), nor one whose mark names a live process, nor a folder of
# that name without our mark, nor a link, nor anything else in $TMPDIR. A large table is
# cut only when a query first names it: a query of the other tables cuts nothing.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5013
PIDS=
e2e_cleanup() { for p in $PIDS; do kill -9 $p; done 2> /dev/null; }
P=dp/profiles/global/p@latest
mkdir -p $P tmp
"$SQL" "COPY (SELECT i AS id, i * 10 AS start_ts, i * 10 + 7 AS end_ts FROM range(204800) r(i)) TO '$P/Instruction.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048); COPY (SELECT 1.5::DOUBLE AS total_time) TO '$P/Summary.parquet' (FORMAT parquet)" > /dev/null ||
	fail "making the profile"
export TMPDIR=$T/tmp NX_SERVER_SLICE_FOOTER=0 # cut every file of more than 64 row groups

# serve: a server in the background (its output in srv-N.txt), its pid in S, port in PORT
N=0
serve() {
	N=$((N + 1))
	e2e_serve srv-$N.txt --data-path dp
}
q() { curl -s -X POST "http://127.0.0.1:$PORT/api/v1/db/p/_search" -H 'Content-Type: application/json' -d "{\"type\":\"databaseExplorerQuery\",\"query\":\"$1\"}"; }
folders() { ls -A tmp | grep '^nx-serve-slices-' | sort; }
slices() { ls tmp/$1 | grep -c '\.parquet$'; }

# not ours: a folder of that name without the mark; a mark naming a live process (not
# locked: no server holds it); a link to a folder with a dead process's mark; a file
mkdir tmp/nx-serve-slices-foreign && touch tmp/nx-serve-slices-foreign/keep.parquet
sleep 600 &
L=$!
PIDS="$PIDS $L"
mkdir tmp/nx-serve-slices-livemark
printf 'neuron-explorer serve-slices\npid %s\nstart %s\n' $L "$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/$L/stat)" \
	> tmp/nx-serve-slices-livemark/.nx-serve-slices
mkdir elsewhere && printf 'neuron-explorer serve-slices\npid 999999999\nstart 1\n' > elsewhere/.nx-serve-slices
ln -s "$T/elsewhere" tmp/nx-serve-slices-link
touch tmp/nx-serve-slices-file

serve
q "SELECT total_time FROM Summary" | grep -q '"rows":\[\[1.5\]\]' || fail "Summary"
mine=$(comm -13 <(printf '%s\n' foreign file link livemark | sed 's/^/nx-serve-slices-/' | sort) <(folders))
[ "$(echo "$mine" | wc -w)" = 1 ] || fail "the server's folder: $(folders)"
[ -f tmp/$mine/.nx-serve-slices ] || fail "no mark in $mine: $(ls -A tmp/$mine)"
[ "$(slices $mine)" = 0 ] || fail "a query of Summary cut Instruction: $(ls tmp/$mine)"
q "SELECT count(*) FROM Instruction" | grep -q '"rows":\[\[204800\]\]' || fail "count"
[ "$(slices $mine)" = 7 ] || fail "slices: $(ls tmp/$mine)"
kill -9 $S; wait $S 2> /dev/null
[ "$(slices $mine)" = 7 ] || fail "the killed server left nothing to sweep"

# a live server with its own folder, then a third server: the killed one's folder goes
serve
LIVE=$S
q "SELECT count(*) FROM Instruction" | grep -q '"rows":\[\[204800\]\]' || fail "count (live)"
live=$(comm -13 <(printf '%s\n' foreign file link livemark | sed 's/^/nx-serve-slices-/' | sort) <(folders) | grep -v "^$mine\$")
[ "$(echo "$live" | wc -w)" = 1 ] || fail "the live server's folder: $(folders)"
[ -d tmp/$mine ] && fail "the second server's start left the killed one's folder"
serve
q "SELECT count(*) FROM Instruction" | grep -q '"rows":\[\[204800\]\]' || fail "count (third)"
[ "$(slices $live)" = 7 ] || fail "the live server's slices were touched: $(ls -A tmp/$live)"
[ -f tmp/nx-serve-slices-foreign/keep.parquet ] || fail "a folder without our mark was touched"
[ -f tmp/nx-serve-slices-livemark/.nx-serve-slices ] || fail "a live process's folder was removed"
[ -L tmp/nx-serve-slices-link ] && [ -f elsewhere/.nx-serve-slices ] || fail "the link or its target was touched"
[ -f tmp/nx-serve-slices-file ] || fail "a file was removed"
# stopped as usual, each server removes its own folder
kill $S $LIVE; wait $S $LIVE 2> /dev/null
[ "$(folders | wc -l)" = 4 ] || fail "after the servers stopped: $(folders)"
exit 0
