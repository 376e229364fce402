#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make_corpus.sh BIN: regenerates the committed seed corpora in tests/fuzz/corpus/ from
# the simulator (NEFF, NTFF, listings of the library kernels at their smallest size),
# the small vendored traces (tests/data/framework-traces) and hand-written _search
# bodies. Run it when a format changes; the files are small on purpose (a few KiB) so
# that the fuzzers stay fast.
set -euo pipefail
bin=${1:?usage: make_corpus.sh NEURON_EXPLORER_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
traces=$here/../data/framework-traces
c=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$c"
mkdir -p "$c"/{neff,ntff,listing,jtok,trace_events,search,parquet,tl_window,lod_stamp}

for k in matmul_v0 matmul_v2 softmax layernorm attention dma_tiny serial_sem; do
	"$bin" kernel gen "$k" --size 512 --listing "$c/listing/$k.lst" -o "$tmp/$k.neff" > /dev/null
done
for k in matmul_v2 softmax serial_sem; do
	# fuzz_neff's first byte: 0 = file as is, 1 = size and hash fixed up, 3 = the
	# payload is an uncompressed tar that the target gzips (see fuzz_neff.c).
	{ printf '\000'; cat "$tmp/$k.neff"; } > "$c/neff/$k.raw"
	{ printf '\001'; cat "$tmp/$k.neff"; } > "$c/neff/$k.fixed"
	{ printf '\003'; head -c 1024 "$tmp/$k.neff"; tail -c +1025 "$tmp/$k.neff" | gzip -dc; } \
		> "$c/neff/$k.tar"
	NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$bin" capture -n "$tmp/$k.neff" \
		-s "$c/ntff/$k-dge.ntff" > /dev/null
	"$bin" capture -n "$tmp/$k.neff" -s "$c/ntff/$k.ntff" > /dev/null
done

# Traces up to 20 KiB decompressed; fuzz_jtok's first byte is its mode (see fuzz_jtok.c).
for f in "$traces"/*.json "$traces"/*.json.gz; do
	n=$(basename "$f")
	[ "$(zcat -f "$f" | wc -c)" -le 20480 ] || continue
	zcat -f "$f" > "$c/trace_events/${n%.gz}"
	for m in 0 1 6; do
		{ printf "\\00$m"; zcat -f "$f"; } > "$c/jtok/$m-${n%.gz}"
	done
done
cp "$traces/hta_large_uint64_arg.pt.trace.json.gz" "$c/trace_events/"
{ printf '\001'; cat "$traces/hta_large_uint64_arg.pt.trace.json.gz"; } > "$c/jtok/1-uint64.json.gz"
printf '\000{"a":[1,-2.5e+3,true,false,null,"\\u00e9\\ud83d\\ude00\\n"],"b":{}}' > "$c/jtok/0-all-tokens"
printf '[{"ph":"b","id":"0x1","cat":"c","name":"a","ts":1,"pid":1,"tid":1},{"ph":"e","id":"0x1","cat":"c","name":"a","ts":2.5,"pid":1,"tid":1},{"ph":"s","id":7,"ts":1,"pid":"p","tid":"t"},{"ph":"f","id":7,"ts":3,"pid":"p","tid":"t","bp":"e"},{"ph":"C","name":"mem","ts":4,"pid":1,"args":{"v":1}}]' \
	> "$c/trace_events/async-flow-counter.json"

# Parquet files as DuckDB writes them: dictionaries and bloom filters, NULLs and
# booleans, several row groups (nx-sql is built next to BIN).
sql=$(dirname "$bin")/nx-sql
"$sql" "COPY (SELECT range AS id, 'n' || (range % 7) AS name FROM range(300)) TO '$c/parquet/dict.parquet' (FORMAT parquet)" \
	"COPY (SELECT range % 2 = 0 AS flag, CASE WHEN range % 3 = 0 THEN NULL ELSE range / 7.0 END AS v FROM range(200)) TO '$c/parquet/nulls.parquet' (FORMAT parquet, COMPRESSION zstd)" \
	"COPY (SELECT range AS id FROM range(5000)) TO '$c/parquet/groups.parquet' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048)" \
	> /dev/null 2>&1

s=$c/search
printf '{"type":"listDbFiles"}' > "$s/list"
printf '{"type":"tableSchema","tableName":"Instruction"}' > "$s/schema"
printf '{"type":"databaseExplorerQuery","tableName":"Instruction","query":"SELECT count(*) FROM Instruction"}' > "$s/query"
printf '{"type":"databaseExplorerQuery","query":"SELECT opcode,\n count(*) AS n\tFROM Instruction GROUP BY 1"}' > "$s/raw-newline"
printf '{"type":"databaseExplorerQuery","query":"SELECT \\"name\\" FROM \\u0053ummary"}' > "$s/escapes"
printf '{"type":7}' > "$s/bad-type"
printf '[1,2]' > "$s/array"
printf '{"type":"tableSchema","tableName":null}' > "$s/null-table"

# The timeline's window parameters, "t0&t1&px": a view, the bounds, beyond them.
w=$c/tl_window
printf '1024&17408&1000' > "$w/view"
printf -- '-2305843009213693952&2305843009213693952&1' > "$w/bounds"
printf -- '-2305843009213693952&-2305843009213693951&16384' > "$w/narrow"
printf '0&9223372036854775807&7' > "$w/beyond"
printf '5&5&0' > "$w/empty"

# Stamps of the timeline cache: a valid one (for the target's expected stamp), others.
l=$c/lod_stamp
printf 'neuron-explorer timeline cache\nformat 4\nprofile my-kernel\nversion 65024-10961294-1796431540.568407194\ntables 3f9a0c1e22b7d415\nbytes 1847296\n' > "$l/valid"
printf 'neuron-explorer timeline cache\nformat 3\nprofile other\nversion 1-2-3.000000000\ntables 0\nbytes x\n' > "$l/other"
