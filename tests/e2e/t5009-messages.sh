#!/bin/bash
# t5009-messages.sh: the messages and exit codes users hit (issue 37), each checked word
# for word: outputs checked before any work, a missing path, -s with -d, equal ports, a
# data path that is a file, an NTFF without its NEFF, a profile compared with itself,
# a framework-only trace's summaries, an input that is a directory, a profile not
# ingested yet, the directory-depth limit, capture's one line, a
# bad whole number, a bad memory size, a bad log level.
# (Fleet verbs: t6002; upload: t5007; a full disk: t5010.)
set -u
BIN=${NX_BIN:?NX_BIN not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5009
# expect CODE MESSAGE CMD...: exit CODE, stderr exactly "neuron-explorer <...>: MESSAGE"
# (one line), nothing on stdout
expect() {
	local code=$1 want=$2
	shift 2
	"$@" > out.txt 2> err.txt
	local rc=$?
	[ $rc -eq "$code" ] || fail "'$*': exit $rc, not $code: $(cat err.txt)"
	[ "$(cat err.txt)" = "$want" ] || fail "'$*': message
  got:  $(cat err.txt)
  want: $want"
	[ ! -s out.txt ] || fail "'$*' printed on stdout: $(head -c 300 out.txt)"
}

"$BIN" kernel gen matmul_v0 --size 512 -o k.neff -q || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n k.neff -s k.ntff -q || fail "capture"
"$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name a --ingest-only > /dev/null || fail "a"
mkdir adir && echo x > afile

expect 2 "neuron-explorer view: the output 'adir' is a directory; give the file to write (e.g. 'adir/out')" \
	"$BIN" view -n k.neff -s k.ntff --data-path dp --display-name sj --output-format summary-json --output-file adir
[ ! -e dp/profiles/global/sj@latest ] || fail "summary-json ingested before refusing its output"
expect 1 "neuron-explorer view: 'nosuch': no such file or directory" \
	"$BIN" view -d nosuch --data-path dp --ingest-only -q
expect 2 "neuron-explorer view: give either -n NEFF -s NTFF (one device profile) or -d DIR, not both" \
	"$BIN" view -s k.ntff -d adir
expect 2 "neuron-explorer view: a device profile needs both -n NEFF and -s NTFF; -n is missing" \
	"$BIN" view -s k.ntff
expect 2 "neuron-explorer view: --api-server-port and --port are both 3555; the API and the web UI need a port each (or --disable-ui)" \
	"$BIN" view --data-path dp --api-server-port 3555 --port 3555
expect 2 "neuron-explorer view: the data path 'afile' is not a directory; give the directory that holds (or is to hold) the profiles" \
	"$BIN" view --data-path afile
expect 2 "neuron-explorer recommend: the data path 'afile' is not a directory; give the directory that holds (or is to hold) the profiles" \
	"$BIN" recommend --data-path afile --display-name a
expect 1 "neuron-explorer view: NEFF file 'adir' is a directory, not a file" \
	"$BIN" view -n adir -s k.ntff --data-path dp --display-name d --ingest-only -q
expect 1 "neuron-explorer view: NTFF file 'nosuch.ntff' does not exist" \
	"$BIN" view -n k.neff -s nosuch.ntff --data-path dp --display-name d --ingest-only -q
[ ! -e dp/profiles/global/d@latest ] || fail "a refused input left a profile"
expect 1 "neuron-explorer recommend: no profile 'nosuch' in the data path 'dp' (dp/profiles/global/nosuch@latest): ingest it first with 'neuron-explorer view -n NEFF -s NTFF --data-path dp --display-name nosuch', or give -n/-s here" \
	"$BIN" recommend --data-path dp --display-name nosuch
expect 1 "neuron-explorer recommend: no profile 'nosuch' in the data path 'dp' (dp/profiles/global/nosuch@latest): ingest it first with 'neuron-explorer view -n NEFF -s NTFF --data-path dp --display-name nosuch', or give -n/-s here" \
	"$BIN" recommend --data-path dp --compare a nosuch

mkdir -p lone/sub && cp k.ntff lone/sub/123_instid_0_vnc_0.ntff
expect 1 "neuron-explorer view: no NEFF/NTFF pair under 'lone': the NTFF 'lone/sub/123_instid_0_vnc_0.ntff' has no NEFF of its hash beside it or elsewhere in the tree (neff_123.neff, neff_123_vnc_0.neff or graph_123.neff)" \
	"$BIN" view -d lone --data-path dp --ingest-only -q
# beside a trace, the lone NTFF is a warning on stderr (and in the Warning table)
mkdir -p lone/plugins/profile && printf '{"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]}' \
	> lone/plugins/profile/trace.json
"$BIN" view -d lone --data-path dp --ingest-only -q > /dev/null 2> err.txt || fail "lone with a trace"
grep -qxF "neuron-explorer view: warning: 'lone/sub/123_instid_0_vnc_0.ntff' has no NEFF of its hash in the tree (neff_123.neff, neff_123_vnc_0.neff or graph_123.neff); it was not ingested" \
	err.txt || fail "lone warning: $(cat err.txt)"

expect 2 "neuron-explorer recommend: --compare needs two different profiles; 'a' and 'a' are the same profile ($T/dp/profiles/global/a@latest)" \
	"$BIN" recommend --data-path dp --compare a a
"$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name b --ingest-only > /dev/null || fail "b"
"$BIN" recommend --data-path dp --compare a b > out.txt || fail "compare a b"
grep -q "^Total time: [0-9.,]* us → [0-9.,]* us, —\. Deltas are new - previous" out.txt ||
	fail "compare total line: $(grep 'Total time' out.txt)"

mkdir -p fw/plugins/profile && cp lone/plugins/profile/trace.json fw/plugins/profile/
for f in summary-json summary-text; do
	expect 1 "neuron-explorer view: profile 'fw' has no device Summary: it holds framework traces only, no NEFF/NTFF pair; $f describes a device profile (--output-format perfetto exports the trace's events)" \
		"$BIN" view -d fw -q --output-format $f
done
"$BIN" view -d fw -q --output-format perfetto > out.txt || fail "fw perfetto"
/usr/bin/python3 -c "import json; assert json.load(open('out.txt'))['traceEvents']" || fail "fw perfetto JSON"

d=deep
for _ in $(seq 34); do d=$d/x; done
mkdir -p $d && cp fw/plugins/profile/trace.json $d/
expect 2 "neuron-explorer view: '$(echo deep/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x)' lies more than 32 directories deep, deeper than the walk goes; give a directory nearer to the traces" \
	"$BIN" view -d deep --data-path dp --ingest-only -q

# capture: one line on stderr, as the README says; none with -q
"$BIN" capture -n k.neff -s c.ntff > out.txt 2> err.txt || fail "capture"
[ ! -s out.txt ] && [ "$(wc -l < err.txt)" = 1 ] || fail "capture lines: $(cat out.txt err.txt)"
grep -q "^capture: wrote c.ntff: k.neff on trn2, 1 execution, profiled #1: [0-9]* instructions, [0-9]* DMA packets (not recorded), [0-9.]* us simulated, [0-9.]* s wall$" \
	err.txt || fail "capture line: $(cat err.txt)"
"$BIN" capture -n k.neff -s c.ntff -q > out.txt 2> err.txt || fail "capture -q"
[ ! -s out.txt ] && [ ! -s err.txt ] || fail "capture -q printed: $(cat out.txt err.txt)"
# whole numbers: one wording for every option that takes one
expect 2 "neuron-explorer view: --port needs a whole number from 0 to 65535, not 'x'" \
	"$BIN" view --port x
expect 2 "neuron-explorer fleet: -j needs a whole number from 1 to 1024, not '0'" \
	"$BIN" fleet ingest -j 0 x
expect 2 "neuron-explorer fleet: SLURM_ARRAY_TASK_ID needs a whole number from 0 to 100000000, not '-3'" \
	env SLURM_ARRAY_TASK_ID=-3 "$BIN" fleet run-task --list x --display-name r

# a memory limit from the environment that is not a size: refused before any work,
# naming the variable (the timeline cache's own: test_server_carried)
size_help="give a size such as 160MB or 1.5GiB (a number and B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)"
expect 2 "neuron-explorer view: NX_INGEST_MEMORY_LIMIT is 'lots'; $size_help" \
	env NX_INGEST_MEMORY_LIMIT=lots "$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name ml --ingest-only
[ ! -e dp/profiles/global/ml@latest ] || fail "an ingest with a bad memory limit published"
expect 2 "neuron-explorer view: NX_DERIVE_MEMORY_LIMIT is '128'; $size_help" \
	env NX_DERIVE_MEMORY_LIMIT=128 "$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name ml --ingest-only
# the raw tables' writer, likewise
expect 2 "neuron-explorer view: NX_INGEST_WRITER is 'arrow': it must be ours or duckdb" \
	env NX_INGEST_WRITER=arrow "$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name ml --ingest-only
[ ! -e dp/profiles/global/ml@latest ] || fail "an ingest with an unknown writer published"
expect 2 "neuron-explorer recommend: analysing 'dp/profiles/global/a@latest': NX_REC_MEMORY_LIMIT is '0MB'; $size_help" \
	env NX_REC_MEMORY_LIMIT=0MB "$BIN" recommend --data-path dp --display-name a

# a newcomer's first tries: options a command does not take, a missing value, no NEFF
# where capture looks by default, a file that is no NEFF, a run directory without a run
# (nothing written into the data path)
for c in capture "kernel asm" "kernel gen" upload; do
	expect 2 "neuron-explorer $c: unknown option '--bogus'
try 'neuron-explorer $c --help'" "$BIN" $c --bogus
done
expect 2 "neuron-explorer capture: unknown option '-Z'
try 'neuron-explorer capture --help'" "$BIN" capture -Z
expect 2 "neuron-explorer kernel gen: option '-o' needs a value
try 'neuron-explorer kernel gen --help'" "$BIN" kernel gen matmul_v0 -o
expect 2 "neuron-explorer capture: no NEFF to run: give one with -n K.neff (the default, 'file.neff', is not in this directory)" \
	"$BIN" capture
[ ! -e profile.ntff ] || fail "capture without a NEFF wrote profile.ntff"
echo "not a neff" > notneff.bin
expect 1 "neuron-explorer capture: notneff.bin: truncated header: the file has 11 bytes, the header alone needs 1024: it is not a NEFF, or one cut short (kernel gen, kernel asm and the compiler write whole ones)" \
	"$BIN" capture -n notneff.bin -s nn/p.ntff
[ ! -e nn ] || fail "capture of a bad NEFF made its output directory"
mkdir emptyrun
expect 1 "neuron-explorer fleet: no NEFF/NTFF pair and no framework trace under 'emptyrun'" \
	"$BIN" fleet ingest emptyrun --display-name er --data-path dp
[ ! -e dp/fleet/er ] || fail "fleet ingest of an empty run wrote dp/fleet/er"
for v in status report export; do
	expect 1 "neuron-explorer fleet: no fleet run 'er' in '$T/nodp' (no $T/nodp/fleet/er/manifest.tsv); run 'neuron-explorer fleet ingest' first" \
		"$BIN" fleet $v --display-name er --data-path nodp -o out
	[ ! -e nodp ] || fail "fleet $v made the data path it only reads"
done

# the log level: a bad one is a usage error naming where it came from; a good one passes
expect 2 "neuron-explorer: --log-level: 'loud' is not a log level (error, warn, info, debug)" \
	"$BIN" --log-level loud view -d adir
expect 2 "neuron-explorer: NX_LOG: 'loud' is not a log level (error, warn, info, debug)" \
	env NX_LOG=loud "$BIN" view -d adir
NX_LOG=debug "$BIN" --log-level=warn --version > out.txt || fail "--log-level=warn --version"
grep -q '^neuron-explorer ' out.txt || fail "--log-level=warn --version printed $(cat out.txt)"

exit 0
