-- table: HloInstruction
-- requires: Instruction
-- empty when: SELECT chain_n = 0 FROM nx_InstSums
-- The reference for src/ingest/ir_rollup.c, which replaced it: its window and list
-- aggregates filled DuckDB's pool (docs/memory.md). tests/unit/test_ir_rollup.c compares.
-- One row per HLO op: the custom call running the NKI kernel (raw_hlo_id), rolled up from the
-- instructions that carry the whole id chain (docs/derived-tables.md, "IR hierarchy"):
-- time span, merged busy intervals ("[[s,e],...]", touching ones merge) with the
-- element, transposed-element and HBM byte counts of each interval, byte totals.
-- Ancestor ids are those of the node (one each); ids of lower levels are -1.
-- The rows and intervals come from the macros of 84_ir_rollup.sql; the four
-- hierarchy files 85-88 differ only in their key, name and count columns.
WITH n AS (
    SELECT k, min(raw_framework_id) AS raw_framework_id, -1 AS raw_bir_id, -1 AS raw_penguin_id,
           any_value(hlo_name) AS hlo_name,
           any_value(pcore_idx) AS pcore_idx, min(start_ts) AS start_ts, max(end_ts) AS end_ts,
           sum(coalesce(hbm_read_bytes, 0)) AS hbm_read_bytes,
           sum(coalesce(hbm_write_bytes, 0)) AS hbm_write_bytes,
           sum(coalesce(sbuf_read_bytes, 0)) AS sbuf_read_bytes,
           sum(coalesce(sbuf_write_bytes, 0)) AS sbuf_write_bytes,
           sum(coalesce(sbuf_read_bytes, 0)) FILTER (WHERE opcode = 'LDWEIGHTS') AS load_weight_bytes
    FROM ir_rows('hlo') GROUP BY k
)
SELECT n.k AS id, n.k AS raw_hlo_id, n.* EXCLUDE (k, load_weight_bytes),
       coalesce(n.load_weight_bytes, 0) AS load_weight_bytes, 0 AS modular_flow_invocation_idx,
       ivs.* EXCLUDE (k)
FROM n JOIN ir_intervals('hlo') ivs USING (k)
ORDER BY n.start_ts, n.k
