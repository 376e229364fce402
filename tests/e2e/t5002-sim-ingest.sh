#!/bin/bash
# t5002-sim-ingest.sh: simulated profiles through ingest and SQL: the V0 matmul's
# DMA rows and matmul count, source lines of the NKI file, the simulation flag, and
# the bottleneck engine of the planted kernels in ActiveTime.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5002
[ -x "$SQL" ] || { echo "skip: no nx-sql"; exit 77; }

ingest() { # kernel size name [gen options]
	"$BIN" kernel gen "$1" --size "$2" -o "$3.neff" "${@:4}" || fail "gen $1"
	NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n "$3.neff" -s "$3/profile.ntff" \
		--profile-nth-exec=2 > /dev/null || fail "capture $1"
	"$BIN" view -n "$3.neff" -s "$3/profile_exec_2.ntff" --data-path dp --display-name "$3" \
		--ingest-only > /dev/null 2>&1 || fail "ingest $1"
}
q() { "$SQL" -C "dp/profiles/global/$1@latest" "$2"; }

ingest matmul_v0 1024 v0 --instr-fetch
# 8 m x 2 n x 8 k tiles: 128 matmuls, 256 loads + 16 stores of 16 data packets each
[ "$(q v0 "SELECT COUNT(*) FROM Instruction WHERE engine = 'Tensor' AND opcode = 'MATMUL'")" = 128 ] ||
	fail "V0 matmul count"
[ "$(q v0 "SELECT COUNT(*) FROM DmaPacket WHERE queue_type != 'instruction' AND transfer_bytes > 4")" = 4352 ] ||
	fail "V0 kernel packet count"
[ "$(q v0 "SELECT SUM(transfer_bytes) FROM DmaPacket WHERE queue_type != 'instruction' AND transfer_bytes > 4")" = $((128 * (32768 + 131072) + 16 * 131072)) ] ||
	fail "V0 bytes"
# instruction fetch traffic: every instruction's 128 bytes, on instruction queues
[ "$(q v0 "SELECT SUM(transfer_bytes) FROM DmaPacket WHERE queue_type = 'instruction'")" = \
  "$(q v0 "SELECT 128 * COUNT(*) FROM Instruction")" ] || fail "V0 instruction fetch bytes"
[ "$(q v0 "SELECT DISTINCT bir_debug_info_source_location FROM Instruction WHERE opcode = 'MATMUL'")" = "kernels/matmul_v0.py:29" ] ||
	fail "V0 matmul source line"
[ "$(q v0 "SELECT is_simulation FROM Metadata")" = true ] || fail "not marked simulated"
top() { q "$1" "SELECT engine FROM (SELECT engine, SUM(duration_ns) t FROM ActiveTime GROUP BY engine UNION ALL SELECT 'dma', CAST(dma_active_time * 1e9 AS BIGINT) FROM Summary) ORDER BY t DESC LIMIT 1"; }
[ "$(top v0)" = dma ] || fail "V0 bottleneck is $(top v0), not DMA"

ingest vector_bound 1024 vb
[ "$(top vb)" = vector ] || fail "vector_bound bottleneck is $(top vb)"
ingest dma_tiny 1024 dt
[ "$(top dt)" = dma ] || fail "dma_tiny bottleneck is $(top dt)"
ingest matmul_v2 2048 v2
[ "$(top v2)" = tensor ] || fail "V2 bottleneck is $(top v2)"
exit 0
