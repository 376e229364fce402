#!/bin/bash
# SPDX-License-Identifier: MIT
# t5006-view-harness-shapes.sh: the outputs scripts written against the real tool parse,
# read by Python scripts written the way those harnesses are (tests/e2e/harness/), run
# through the old name neuron-profile from the build tree:
#   - summary-json, first-key reading, for -n/-s (published or not) and --output-file;
#   - summary-json, largest-value reading, for -d with two NEFF/NTFF pairs (one key per
#     device profile) and for a fleet run (one key per member);
#   - json, loaded whole, instruction durations summed and checked against the
#     Instruction table through nx-sql; its summary equal to summary-json's;
#   - output files (common/outpath.h): ours replaced (known by content, a copy of it too),
#     a user's kept (exit 2) unless --force, a link refused even with --force, '-' is
#     stdout, no temporary file left; the old tool's flags accepted; messages name
#     neuron-profile;
#   - bad input: a damaged table, a profile with no device Summary: exit 1, a message
#     naming the file, no output file.
set -u
BUILD=${NX_BUILD_DIR:?NX_BUILD_DIR not set}
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
PY=${NX_PYTHON:-/usr/bin/python3}
H=$SRC/tests/e2e/harness
NP=$BUILD/neuron-profile
SQL=$BUILD/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5006
q() { "$SQL" "$1"; }
# same float32 value, as printed with 9 significant digits by both sides
same() { "$PY" -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 1e-6 * abs(b))' "$1" "$2"; }

[ -L "$NP" ] || fail "no neuron-profile link in the build tree"
"$NP" kernel gen matmul_v0 --size 512 -o k.neff -q || fail "kernel gen"
"$NP" kernel gen matmul_v0 --size 1024 -o k2.neff -q || fail "kernel gen 1024"
export NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1
"$NP" capture -n k.neff -s k.ntff -q > /dev/null || fail "capture"
"$NP" capture -n k2.neff -s k2.ntff -q > /dev/null || fail "capture 1024"
D=$T/data
P=$D/profiles/global

# --- summary-json, first key: unpublished (stdout), then published with --output-file
"$NP" view -n k.neff -s k.ntff --output-format summary-json > s0.json 2> s0.err || fail "summary-json"
read -r key t0 < <("$PY" "$H/first_key.py" s0.json) || fail "first-key reading: $(head -c 300 s0.json)"
[ "$key" = k ] || fail "summary-json key '$key', expected the profile name k"
"$NP" view -n k.neff -s k.ntff --data-path "$D" --display-name k --output-format summary-json \
	--output-file s1.json -q || fail "summary-json --output-file"
read -r key t1 < <("$PY" "$H/first_key.py" s1.json)
[ "$key" = k ] || fail "key $key"
same "$t0" "$t1" || fail "total_time $t0 vs $t1"
same "$t1" "$(q "SELECT total_time FROM read_parquet('$P/k@latest/Summary.parquet')")" ||
	fail "total_time $t1 is not the Summary table's"

# --- summary-json, largest value: -d with two pairs, then a fleet run of the same tree
mkdir -p run/i-0abc_pid_42
cp k.neff run/i-0abc_pid_42/neff_111.neff && cp k.ntff run/i-0abc_pid_42/111_instid_0_vnc_0.ntff
cp k2.neff run/i-0abc_pid_42/neff_222.neff && cp k2.ntff run/i-0abc_pid_42/222_instid_0_vnc_1.ntff
"$NP" view -n k2.neff -s k2.ntff --data-path "$D" --display-name big --ingest-only -q > /dev/null ||
	fail "ingest big"
big=$(q "SELECT total_time FROM read_parquet('$P/big@latest/Summary.parquet')")
"$NP" view -d run --data-path "$D" --display-name r --output-format summary-json -q > d.json ||
	fail "summary-json -d"
"$PY" -c 'import json, sys; k = list(json.load(open(sys.argv[1]))); sys.exit(k != ["r", "r-222_instid_0_vnc_1"])' d.json ||
	fail "-d keys: $(grep -o '^  "[^"]*"' d.json | tr '\n' ' ')"
read -r n slowest < <("$PY" "$H/largest.py" d.json)
[ "$n" = 2 ] && same "$slowest" "$big" || fail "-d: largest $slowest of $n, expected $big of 2"
"$NP" fleet ingest run --data-path "$D" --display-name fr -j 1 > fleet.log 2>&1 || { cat fleet.log; fail "fleet ingest"; }
"$NP" view --data-path "$D" --display-name fr --output-format summary-json > f.json || fail "fleet summary-json"
read -r n slowest < <("$PY" "$H/largest.py" f.json)
[ "$n" = 2 ] && same "$slowest" "$big" || fail "fleet: largest $slowest of $n, expected $big of 2"
grep -Eq '^  "fr-i-0abc_pid_42-111_instid_0_vnc_0-[0-9a-f]{8}": \{' f.json ||
	fail "fleet member key: $(head -3 f.json)"
# member names read back from disk name sibling profiles only
printf '../../r@latest/..\n.hidden\n/etc\n' >> "$P/fr@latest/fleet-members.txt"
"$NP" view --data-path "$D" --display-name fr --output-format summary-json > f2.json || fail "tampered list"
cmp -s f.json f2.json || fail "a tampered member list changed the output: $(grep -o '^  "[^"]*"' f2.json)"
"$NP" view --data-path "$D" --display-name r --output-format summary-text > d.txt || fail "summary-text -d"
[ "$(grep -c '^profile_name ' d.txt)" = 2 ] && [ "$(grep -c '^total_time ' d.txt)" = 2 ] ||
	fail "summary-text of two profiles: $(grep -E '^(profile_name|total_time) ' d.txt)"

# --- json: the whole document loaded, durations summed, checked against the table
"$NP" view --data-path "$D" --display-name k --output-format json --output-file p.json 2> j.err ||
	{ cat j.err; fail "json export"; }
grep -q "^Wrote .* records" j.err || fail "json export line: $(cat j.err)"
"$PY" "$H/json_trace.py" p.json > j.txt || fail "json harness"
I="read_parquet('$P/k@latest/Instruction.parquet')"
[ "$(awk '$1 == "instructions" {print $2}' j.txt)" = "$(q "SELECT count(*) FROM $I")" ] || fail "instruction count"
[ "$(awk '$1 == "duration" {print $2}' j.txt)" = "$(q "SELECT sum(duration_ns) FROM $I")" ] || fail "duration sum"
[ "$(awk '$1 == "span" {print $2}' j.txt)" = "$(q "SELECT max(end_ts) - min(start_ts) FROM $I")" ] || fail "span"
diff <(awk '$1 == "opcode" {print $2 "\t" $3}' j.txt) \
	<(q "SELECT opcode, sum(duration_ns) FROM $I GROUP BY opcode ORDER BY opcode") > /dev/null ||
	fail "time per opcode differs from the Instruction table"
[ "$(awk '$1 == "dma" {print $2}' j.txt)" = \
  "$(q "SELECT count(*) FROM read_parquet('$P/k@latest/DmaPacketAggregated.parquet')")" ] || fail "dma count"
[ "$(awk '$1 == "dma_packet" {print $2}' j.txt)" -gt 0 ] || fail "no DMA packets"
same "$(awk '$1 == "total_time" {print $2}' j.txt)" "$t1" || fail "json summary differs from summary-json"

# --- output files
"$NP" view --data-path "$D" --display-name k --output-format json --output-file p.json -q ||
	fail "replacing our own output"
echo "my notes" > mine.json
"$NP" view --data-path "$D" --display-name k --output-format json --output-file mine.json 2> e.txt
[ $? -eq 2 ] || fail "a user's file not refused with exit 2"
grep -q "^neuron-profile view: the output 'mine.json' exists and is not a json export that neuron-explorer wrote; give a new file name, or --force to replace it (the file was left as it is)$" e.txt ||
	fail "refusal message: $(cat e.txt)"
[ "$(cat mine.json)" = "my notes" ] || fail "the user's file was changed"
"$NP" view -n k.neff -s k.ntff --output-format json --output-file mine.json 2> e.txt
[ $? -eq 2 ] && ! grep -q Ingesting e.txt || fail "the output file not checked before the ingest"
"$NP" view --data-path "$D" --display-name k --output-format summary-json --output-file mine.json --force -q ||
	fail "--force"
"$PY" "$H/first_key.py" mine.json > /dev/null || fail "forced file is not the summary"
# ours is known by its content: a copy of it (another inode, no attribute) is replaced
# without --force, but not by an export of another format
cat mine.json > copy.json
"$NP" view --data-path "$D" --display-name k --output-format summary-json --output-file copy.json -q ||
	fail "a copy of our summary-json was not replaced"
"$NP" view --data-path "$D" --display-name k --output-format json --output-file copy.json 2> e.txt
[ $? -eq 2 ] && grep -q "'copy.json' exists and is not a json export" e.txt ||
	fail "json over a summary-json: $(cat e.txt)"
# a symbolic link is refused even with --force: the link and its target stay
ln -s mine.json link.json && cp mine.json before.json
"$NP" view --data-path "$D" --display-name k --output-format summary-json --output-file link.json \
	--force 2> e.txt
[ $? -eq 2 ] && grep -q "'link.json' is a symbolic link" e.txt && [ -L link.json ] &&
	cmp -s mine.json before.json || fail "a link as output file: $(cat e.txt)"
mkdir adir
"$NP" view --data-path "$D" --display-name k --output-format json --output-file adir --force 2> e.txt
[ $? -eq 2 ] && grep -q "is a directory" e.txt || fail "a directory as output file"
"$NP" view --data-path "$D" --display-name k --output-format json --output-file - -q > out.json ||
	fail "json to stdout"
"$PY" "$H/json_trace.py" out.json > /dev/null || fail "json on stdout does not load"
( cd adir && "$NP" view --data-path "$D" --display-name k --output-format json -q ) &&
	[ -s adir/ntff.json ] || fail "json without --output-file: ntff.json"
ls -a . adir | grep -q '\.tmp-' && fail "a temporary file was left: $(ls -a . adir)"

# --- the old tool's flags, and its name in messages
"$NP" view -n k.neff -s k.ntff --data-path "$D" --display-name old --ingest-only -q \
	--ignore-nc-buf-usage --output-format db --db-endpoint http://localhost:8086 --db-org o \
	--db-bucket b --show-perfetto-flows --enable-memory-tracker > old.log 2>&1 ||
	{ cat old.log; fail "old flags"; }
[ "$(q "SELECT count(*) FROM read_parquet('$P/old@latest/SbufUsage.parquet')")" = 0 ] ||
	fail "--ignore-nc-buf-usage did not skip SbufUsage"
"$NP" view --no-such-flag 2> e.txt; [ $? -eq 2 ] || fail "unknown flag"
grep -q "^neuron-profile view: unknown option '--no-such-flag'" e.txt || fail "message name: $(head -1 e.txt)"
"$NP" view --help | grep -q "^usage: neuron-profile view" || fail "usage under the old name"
"$NP" --version | grep -q "^neuron-profile " || fail "--version under the old name"
"$BUILD/neuron-explorer" view --help | grep -q "^usage: neuron-explorer view" || fail "usage"

# --- bad input: a damaged table, a profile without a device Summary, a fleet index
cp -r "$P/k@latest" "$P/dmg@latest"
head -c 100 "$P/k@latest/Instruction.parquet" > "$P/dmg@latest/Instruction.parquet"
"$NP" view --data-path "$D" --display-name dmg --output-format json --output-file dmg.json 2> e.txt
[ $? -eq 1 ] || fail "damaged table: exit $?"
grep -q "reading table Instruction of '.*dmg@latest'" e.txt || fail "damaged message: $(cat e.txt)"
[ ! -e dmg.json ] && ! ls | grep -q '\.tmp-' || fail "a damaged export left a file"
"$NP" view -d "$SRC/tests/data/framework-traces/ss_edge_simple-partial.json" --data-path "$D" \
	--display-name fw --output-format summary-json > fw.json 2> e.txt
[ $? -eq 1 ] && [ ! -s fw.json ] || fail "framework-only summary-json: exit/stdout"
grep -q "profile 'fw' has no device Summary" e.txt || fail "framework-only message: $(cat e.txt)"
"$NP" view --data-path "$D" --display-name fr --output-format json --output-file fr.json 2> e.txt
[ $? -eq 2 ] && grep -q "index of a fleet run" e.txt || fail "json of a fleet index"
"$NP" view --data-path "$D" --display-name nosuch --output-format summary-json 2> e.txt
[ $? -eq 2 ] && grep -q "no profile 'nosuch'" e.txt || fail "missing profile"
echo "PASS"
