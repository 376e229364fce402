#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make_corpus.sh BIN: regenerates the committed seed corpora in tests/fuzz/corpus/ from
# the simulator (NEFF, NTFF, listings of the library kernels at their smallest size, a
# listing of the NKI operations and its NEFF),
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
mkdir -p "$c"/{neff,neff_json,ntff,listing,jtok,trace_events,search,parquet,tl_window,lod_stamp}

for k in matmul_v0 matmul_v2 softmax layernorm attention dma_tiny serial_sem; do
	"$bin" kernel gen "$k" --size 512 --listing "$c/listing/$k.lst" -o "$tmp/$k.neff" > /dev/null
done
# The NKI operations (docs/formats/listing.md): every new opcode and operand form, a
# DMA cast and transpose, decisions; also a NEFF of major version 3 for fuzz_neff.
cat > "$c/listing/nki_ops.lst" <<'LST'
kernel nki_ops
source k.py
frame nki_ops k.py:1
tensor x input bf16 128x512
tensor a input bf16 64x128
tensor y output fp32 128x512
queue qSyncIO0 in Sync sem=1
queue qOut out Sync sem=2
block load_x qSyncIO0
  desc x[0:128, 0:512] -> sbuf[0:128]+0:fp32
block load_a qSyncIO0
  desc a[0:64, 0:128] -> sbuf[0:128]+65536 transpose
block store qOut
  desc sbuf[0:128]+2048:fp32[512] -> y[0:128, 0:512]
@20 decision alloc buffer=x_tile mem=sbuf partitions=128 offset=0 bytes=2048 bufs=1
decision spill buffer=kv save_bytes=262144 reload_bytes=262144
@21 Sync dma_trigger block=load_x
@21 Sync dma_trigger block=load_a
@22 Vector tensor_scalar src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+2048:fp32[512] op0=sub operand0=sbuf[0:128]+8192:fp32[1] reverse0 op1=mul operand1=0.125 wait=S[1]>=32
@23 Scalar activate act=gelu_apprx_tanh src=sbuf[0:128]+2048:fp32[512] dst=sbuf[0:128]+4096:bf16[512] bias=sbuf[0:128]+8196:fp32[1] scale=0.5 reduce_op=add reduce_res=sbuf[0:128]+8200:fp32[1] reduce_cmd=reset_reduce wait=S[1]>=32
@24 Vector tensor_tensor_scan src=sbuf[0:128]+0:fp32[512] src1=sbuf[0:128]+2048:fp32[512] dst=sbuf[0:128]+10240:fp32[512] op0=mul op1=add initial=0
@25 Vector bn_stats src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+12288:fp32[6]
@26 Vector bn_aggr src=sbuf[0:128]+12288:fp32[6] dst=sbuf[0:128]+12312:fp32[2]
@27 GpSimd affine_select src=sbuf[0:128]+2048:fp32[128] dst=sbuf[0:128]+14336:fp32[128] pattern={-1} offset=0 channel_multiplier=1 cmp_op=is_ge on_false_value=-9984.0
@28 Vector tensor_reduce src=sbuf[0:64]+0:fp32[2,2,16,16]{1,32,2,64} dst=sbuf[0:64]+16384:fp32[16,16] alu=add axes=2 negate keepdims
@29 Vector scalar_tensor_tensor src=sbuf[0:128]+0:bf16[512] src1=sbuf[0:128]+1024:bf16[512] dst=sbuf[0:128]+20480:bf16[512] op0=mul operand0=2 op1=add
@30 Vector tensor_scalar_reduce src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+22528:fp32[512] op0=mul operand0=1.0 reduce_op=max reduce_res=sbuf[0:128]+24576:fp32[1]
@31 Vector transpose src=sbuf[0:32]+0:bf16[32] dst=sbuf[0:32]+24640:bf16[32]
@32 Vector tensor_copy_predicated src=sbuf[0:128]+0:fp32[512] predicate=sbuf[0:128]+24704:uint8[512] dst=sbuf[0:128]+26624:fp32[512] reverse0
@33 GpSimd select src=sbuf[0:128]+0:fp32[512] src1=sbuf[0:128]+2048:fp32[512] predicate=sbuf[0:128]+24704:uint8[512] dst=sbuf[0:128]+28672:fp32[512]
@34 Vector range_select src=sbuf[0:128]+0:fp32[512] bound0=sbuf[0:128]+30720:fp32[1] bound1=sbuf[0:128]+30724:fp32[1] dst=sbuf[0:128]+32768:fp32[512] comp_op0=is_ge comp_op1=is_lt range_start=16 on_false_value=-1e9 reduce_op=max reduce_res=sbuf[0:128]+30728:fp32[1]
@35 Vector max8 src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+34816:fp32[8]
@36 Vector find_index8 src=sbuf[0:128]+0:fp32[512] vals=sbuf[0:128]+34816:fp32[8] dst=sbuf[0:128]+34848:uint32[8]
@37 Vector match_replace8 src=sbuf[0:128]+0:fp32[512] vals=sbuf[0:128]+34816:fp32[8] dst=sbuf[0:128]+36864:fp32[512] imm=-1e9
@38 GpSimd local_gather src=sbuf[0:128]+0:fp32[512] index=sbuf[0:128]+38912:uint16[64] dst=sbuf[0:128]+39040:fp32[64] num_elem_per_idx=1
@39 GpSimd iota dst=sbuf[0:128]+39296:int32[8,4] pattern={1,8} offset=3 channel_multiplier=32
@40 Vector reciprocal src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+40960:fp32[512]
@41 Tensor ldweights src=sbuf[0:128]+43008:fp8_e5m2[128] stationary_onezero tile_position=0,0 tile_size=128,128
@41 Tensor matmul src=sbuf[0:128]+43136:fp8_e5m2[512] dst=psum[0:128]+0:fp32[512] moving_onezero perf=2x
@42 Vector tensor_copy src=sbuf[0:128]+2048:fp32[512] dst=sbuf[0:128]+45056:int8[512] sig=S[3]++
@43 Sync dma_trigger block=store wait=S[3]>=1
@44 Sync event_semaphore wait=S[2]>=16
LST
"$bin" kernel asm "$c/listing/nki_ops.lst" -o "$tmp/nki_ops.neff" > /dev/null

for k in matmul_v2 softmax serial_sem nki_ops; do
	# fuzz_neff's first byte: 0 = file as is, 1 = size and hash fixed up, 3 = the
	# payload is an uncompressed tar that the target gzips (see fuzz_neff.c).
	{ printf '\000'; cat "$tmp/$k.neff"; } > "$c/neff/$k.raw"
	{ printf '\001'; cat "$tmp/$k.neff"; } > "$c/neff/$k.fixed"
	{ printf '\003'; head -c 1024 "$tmp/$k.neff"; tail -c +1025 "$tmp/$k.neff" | gzip -dc; } \
		> "$c/neff/$k.tar"
	# fuzz_neff_json: the members it reads piece by piece.
	mkdir "$tmp/$k.x"
	tail -c +1025 "$tmp/$k.neff" | gzip -dc | tar -x -C "$tmp/$k.x"
	cp "$tmp/$k.x/kernel_debug_info.json" "$c/neff_json/$k-debug.json"
	cp "$tmp/$k.x/sg00/Sync.json" "$c/neff_json/$k-Sync.json"
	[ "$k" = nki_ops ] && continue # NTFF seeds: the library kernels only
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

# Parquet files as DuckDB writes them: dictionaries (indices of 7 and 8 bits) and bloom
# filters, NULLs and booleans, several row groups (nx-sql is built next to BIN).
sql=$(dirname "$bin")/nx-sql
"$sql" "COPY (SELECT range AS id, 'n' || (range % 7) AS name FROM range(300)) TO '$c/parquet/dict.parquet' (FORMAT parquet)" \
	"COPY (SELECT range % 2 = 0 AS flag, CASE WHEN range % 3 = 0 THEN NULL ELSE range / 7.0 END AS v FROM range(200)) TO '$c/parquet/nulls.parquet' (FORMAT parquet, COMPRESSION zstd)" \
	"COPY (SELECT range AS id FROM range(5000)) TO '$c/parquet/groups.parquet' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048)" \
	"COPY (SELECT CASE WHEN range % 5 = 0 THEN NULL ELSE 'k' || (range * 5 % 256) END AS k, (range * 3 % 100)::INTEGER AS v FROM range(2000)) TO '$c/parquet/widths.parquet' (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 1000)" \
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
