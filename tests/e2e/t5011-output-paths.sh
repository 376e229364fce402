#!/bin/bash
# t5011-output-paths.sh: the one rule for output paths (src/common/outpath.h) through every
# command that writes one: a directory output goes to a new or empty directory or to one
# neuron-explorer wrote before (it holds .neuron-explorer-output), a file output replaces
# only a file of its own kind; everything else (a user's directory or file, a symbolic
# link, the current directory or an ancestor, the data path, the data path's profiles)
# is refused with exit 2 before any work, and what was there is left byte for byte.
# Two captures to one -s path at once each write a temporary file of their own.
set -u
BIN=${NX_BIN:?NX_BIN not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5011
# refused CMD...: exit 2, the message on stderr, nothing on stdout, no ingest started
refused() {
	"$@" > out.txt 2> err.txt
	local rc=$?
	[ $rc -eq 2 ] || fail "'$*' exit $rc, not 2: $(cat err.txt)"
	grep -q "Ingesting" err.txt && fail "'$*' started work before refusing"
	[ ! -s out.txt ] || fail "'$*' printed on stdout: $(cat out.txt)"
	return 0
}
msg() { grep -qF -- "$1" err.txt || fail "message lacks '$1': $(cat err.txt)"; }

"$BIN" kernel gen matmul_v0 --size 512 -o k.neff -q || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n k.neff -s k.ntff -q || fail "capture"
V=("$BIN" view -n k.neff -s k.ntff -q --data-path dp)

# --- view --output-file DIR (parquet) ---
mkdir mine && echo precious > mine/notes.txt && mkdir mine/sub && echo deep > mine/sub/x
refused "${V[@]}" --output-file mine
msg "the output 'mine' already holds files that neuron-explorer did not write (it has no .neuron-explorer-output file); give a new or empty directory (nothing in 'mine' was changed)"
[ "$(cat mine/notes.txt)$(cat mine/sub/x)" = preciousdeep ] || fail "mine changed"
[ "$(ls -A mine | wc -l)" = 2 ] || fail "mine gained files"
"${V[@]}" --output-file out1 > /dev/null || fail "a new output directory"
[ -f out1/.neuron-explorer-output ] && [ -f out1/Summary.parquet ] || fail "out1 not written and marked"
echo stale > out1/old.txt
"${V[@]}" --output-file out1 > /dev/null || fail "an output directory written before"
[ ! -e out1/old.txt ] && [ -f out1/Summary.parquet ] || fail "out1 not replaced"
mkdir empty
"${V[@]}" --output-file empty > /dev/null || fail "an empty directory"
[ -f empty/Summary.parquet ] || fail "empty not written"
echo text > afile
refused "${V[@]}" --output-file afile
msg "the output 'afile' exists and is not a directory"
[ "$(cat afile)" = text ] || fail "afile changed"
ln -s mine alink
refused "${V[@]}" --output-file alink
msg "the output 'alink' is a symbolic link"
[ -L alink ] || fail "alink replaced"
"${V[@]}" --display-name keep --ingest-only > /dev/null || fail "a profile in dp"
refused "${V[@]}" --output-file dp
msg "the output 'dp' is the data path 'dp' or holds it"
refused "${V[@]}" --output-file dp/profiles/global/x@latest
msg "lies in the data path's profiles"
[ -f dp/profiles/global/keep@latest/Summary.parquet ] || fail "the data path lost a profile"
# the current directory and its ancestors, even one written before
(cd out1 && "$BIN" view -n ../k.neff -s ../k.ntff -q --data-path ../dp --output-file . \
	> /dev/null 2> ../err.txt; [ $? -eq 2 ]) || fail "the current directory was accepted"
msg "the output '.' is the current directory or holds it"
(cd mine/sub && "$BIN" view -n ../../k.neff -s ../../k.ntff -q --data-path ../../dp \
	--output-file .. > /dev/null 2> ../../err.txt; [ $? -eq 2 ]) || fail "an ancestor of the cwd"
[ -f out1/Summary.parquet ] && [ "$(cat mine/sub/x)" = deep ] || fail "cwd refusals changed files"
# directory mode writes the same way
mkdir -p fw/plugins/profile && printf '{"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]}' \
	> fw/plugins/profile/trace.json
refused "$BIN" view -d fw -q --data-path dp --output-file mine
"$BIN" view -d fw -q --data-path dp --output-file fwout > /dev/null || fail "view -d --output-file"
[ -f fwout/SystemProfileEvents.parquet ] && [ -f fwout/.neuron-explorer-output ] || fail "fwout"
[ ! -e dp/profiles/global/fw@latest ] || fail "view -d --output-file also published into dp"

# --- the exports' --output-file FILE ---
refused "${V[@]}" --output-format summary-json --output-file afile
msg "the output 'afile' exists and is not a summary-json document that neuron-explorer wrote"
[ "$(cat afile)" = text ] || fail "afile changed by summary-json"
refused "${V[@]}" --output-format summary-json --output-file mine
msg "the output 'mine' is a directory"
"${V[@]}" --output-format summary-json --output-file s.json || fail "summary-json to a new file"
"${V[@]}" --output-format summary-json --output-file s.json || fail "summary-json over its own file"
${NX_PYTHON:-/usr/bin/python3} -c "import json; d = json.load(open('s.json')); assert list(d) == ['k'] and len(d['k']) == 101" ||
	fail "s.json"
refused "${V[@]}" --output-format summary-text --output-file s.json
msg "is not a summary-text document"
refused "${V[@]}" --output-format perfetto --output-file afile
"${V[@]}" --output-format perfetto --output-file t.json || fail "perfetto"
"${V[@]}" --output-format perfetto --output-file t.json || fail "perfetto over its own file"
# a missing directory is a failure (1), also found before any work
"${V[@]}" --output-format perfetto --output-file nodir/t.json > out.txt 2> err.txt
[ $? -eq 1 ] || fail "perfetto into a missing directory: not 1"
msg "neuron-explorer view: the directory of the output 'nodir/t.json' does not exist"
grep -q Ingesting err.txt && fail "ingest before the missing directory was found"
[ ! -e nodir ] || fail "nodir created"
ls -A | grep -q '\.tmp' && fail "temporary files left: $(ls -A | grep '\.tmp')"

# --- kernel gen / asm -o, --listing ---
refused "$BIN" kernel gen matmul_v0 --size 512 -o afile
msg "the output 'afile' exists and is not a NEFF that neuron-explorer wrote"
refused "$BIN" kernel gen matmul_v0 --size 512 -o k2.neff --listing afile
msg "is not a kernel listing"
[ ! -e k2.neff ] || fail "k2.neff written despite the refused listing"
"$BIN" kernel gen matmul_v0 --size 512 -o k2.neff --listing k2.txt -q || fail "gen with listing"
"$BIN" kernel gen matmul_v0 --size 512 -o k2.neff --listing k2.txt -q || fail "gen over its own"
refused "$BIN" kernel asm k2.txt -o k2.txt
refused "$BIN" kernel asm k2.txt -o k.ntff
"$BIN" kernel asm k2.txt -o k2.neff || fail "asm over a NEFF"
[ "$(cat afile)" = text ] || fail "afile changed by kernel"

# --- capture -s ---
refused "$BIN" capture -n k.neff -s afile
msg "the output 'afile' exists and is not an NTFF that neuron-explorer wrote"
refused "$BIN" capture -n k.neff -s k.neff
refused "$BIN" capture -n k.neff -s mine
msg "the output 'mine' is a directory; give the file to write (e.g. 'mine/profile.ntff')"
refused "$BIN" capture -n k.neff -s alink
[ "$(cat afile)" = text ] && cmp -s k2.neff k.neff || fail "capture changed an input"
# two captures of different kernels to one path at once: both succeed, and the file is
# one of the two whole traces, never a mix
"$BIN" kernel gen matmul_v1 --size 512 -o k1.neff -q || fail "gen v1"
"$BIN" capture -n k.neff -s ref0.ntff -q && "$BIN" capture -n k1.neff -s ref1.ntff -q || fail "refs"
for i in 1 2 3; do
	"$BIN" capture -n k.neff -s both.ntff -q & a=$!
	"$BIN" capture -n k1.neff -s both.ntff -q & b=$!
	wait $a || fail "first concurrent capture"
	wait $b || fail "second concurrent capture"
	cmp -s both.ntff ref0.ntff || cmp -s both.ntff ref1.ntff || fail "both.ntff is a mix (round $i)"
done
ls -A | grep -q '\.tmp' && fail "temporary files left: $(ls -A | grep '\.tmp')"
exit 0
