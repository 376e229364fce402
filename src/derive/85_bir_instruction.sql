-- table: BirInstruction
-- requires: Instruction
-- One row per BIR instruction (raw_bir_id), rolled up from the
-- instructions that carry the whole id chain (docs/derived-tables.md, "IR hierarchy"):
-- time span, merged busy intervals ("[[s,e],...]", touching ones merge) with the
-- element, transposed-element and HBM byte counts of each interval, byte totals.
-- Ancestor ids are those of the node (one each); ids of lower levels are -1.
-- The four hierarchy files 85-88 differ only in their key, name and count columns:
-- keep them alike.
WITH i AS (
    SELECT raw_bir_id AS k, raw_bir_id, raw_penguin_id, raw_hlo_id, raw_framework_id,
           bir_instruction_name, start_ts, end_ts, engine, opcode, pcore_idx,
           hbm_read_bytes, hbm_write_bytes, sbuf_read_bytes, sbuf_write_bytes,
           coalesce(tensor_elements, 0) AS el, coalesce(tensor_elements_transpose, 0) AS tel,
           coalesce(hbm_read_bytes, 0) + coalesce(hbm_write_bytes, 0) AS hbm
    FROM Instruction
    WHERE raw_bir_id IS NOT NULL AND raw_penguin_id IS NOT NULL AND raw_hlo_id IS NOT NULL
      AND raw_framework_id IS NOT NULL
),
w AS (
    SELECT k, start_ts, end_ts, el, tel, hbm,
           max(end_ts) OVER (PARTITION BY k ORDER BY start_ts, end_ts
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM i
),
g AS (
    SELECT *, sum(CASE WHEN prev_end IS NULL OR start_ts > prev_end THEN 1 ELSE 0 END)
                  OVER (PARTITION BY k ORDER BY start_ts, end_ts ROWS UNBOUNDED PRECEDING) AS isl
    FROM w
),
iv AS (
    SELECT k, isl, min(start_ts) AS s, max(end_ts) AS e, sum(el) AS el, sum(tel) AS tel,
           sum(hbm) AS hbm
    FROM g GROUP BY k, isl
),
-- one unordered list per node, sorted by island number afterwards: ordered aggregates
-- (string_agg/list ... ORDER BY) cost several times more
sorted AS (
    SELECT k, list_sort(list({'isl': isl, 's': s, 'e': e, 'el': el, 'tel': tel, 'hbm': hbm})) AS l
    FROM iv GROUP BY k
),
ivs AS (
    SELECT k, '[' || array_to_string(list_transform(l, x -> '[' || x.s || ',' || x.e || ']'), ',')
                  || ']' AS time_intervals,
           list_transform(l, x -> x.el) AS element_count_per_interval,
           list_transform(l, x -> x.tel) AS transpose_element_count_per_interval,
           list_transform(l, x -> x.hbm) AS hbm_transfer_size_per_interval
    FROM sorted
),
n AS (
    SELECT k, min(raw_penguin_id) AS raw_penguin_id, min(raw_hlo_id) AS raw_hlo_id, min(raw_framework_id) AS raw_framework_id,
           any_value(bir_instruction_name) AS bir_name,
           any_value(pcore_idx) AS pcore_idx, min(start_ts) AS start_ts, max(end_ts) AS end_ts,
           sum(coalesce(hbm_read_bytes, 0)) AS hbm_read_bytes,
           sum(coalesce(hbm_write_bytes, 0)) AS hbm_write_bytes,
           sum(coalesce(sbuf_read_bytes, 0)) AS sbuf_read_bytes,
           sum(coalesce(sbuf_write_bytes, 0)) AS sbuf_write_bytes,
           sum(coalesce(sbuf_read_bytes, 0)) FILTER (WHERE opcode = 'LDWEIGHTS') AS load_weight_bytes
    FROM i GROUP BY k
)
SELECT n.k AS id, n.k AS raw_bir_id, n.* EXCLUDE (k, load_weight_bytes),
       coalesce(n.load_weight_bytes, 0) AS load_weight_bytes, 0 AS modular_flow_invocation_idx,
       ivs.* EXCLUDE (k)
FROM n JOIN ivs USING (k)
ORDER BY n.start_ts, n.k
