-- macro: ir_rollup
-- The reference for src/ingest/ir_rollup.c, which replaced it: its window and list
-- aggregates filled DuckDB's pool (docs/memory.md). tests/unit/test_ir_rollup.c compares.
-- What the IR hierarchy tables (85-88; docs/derived-tables.md, "IR hierarchy") share.
-- level is 'bir', 'penguin', 'hlo' or 'framework': the id each table rolls up by (a
-- constant in each call, so DuckDB folds the CASE away).
-- ir_rows(level): the instructions that carry the whole id chain, with k, the level's id,
-- and each instruction's element, transposed-element and HBM byte counts (el, tel, hbm).
CREATE OR REPLACE MACRO ir_rows(level) AS TABLE
    SELECT CASE level WHEN 'bir' THEN raw_bir_id WHEN 'penguin' THEN raw_penguin_id
                      WHEN 'hlo' THEN raw_hlo_id ELSE raw_framework_id END AS k,
           raw_bir_id, raw_penguin_id, raw_hlo_id, raw_framework_id,
           bir_instruction_name, kernel_instruction_name, hlo_name, layer,
           start_ts, end_ts, engine, opcode, pcore_idx,
           hbm_read_bytes, hbm_write_bytes, sbuf_read_bytes, sbuf_write_bytes,
           coalesce(tensor_elements, 0) AS el, coalesce(tensor_elements_transpose, 0) AS tel,
           coalesce(hbm_read_bytes, 0) + coalesce(hbm_write_bytes, 0) AS hbm
    FROM Instruction
    WHERE raw_bir_id IS NOT NULL AND raw_penguin_id IS NOT NULL AND raw_hlo_id IS NOT NULL
      AND raw_framework_id IS NOT NULL;
-- ir_intervals(level): per node k, its merged busy intervals ("[[s,e],...]", touching
-- ones merge) with the element, transposed-element and HBM byte counts of each.
CREATE OR REPLACE MACRO ir_intervals(level) AS TABLE
    WITH w AS (
        SELECT k, start_ts, end_ts, el, tel, hbm,
               max(end_ts) OVER (PARTITION BY k ORDER BY start_ts, end_ts
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
        FROM ir_rows(level)
    ),
    g AS (
        SELECT *, sum(CASE WHEN prev_end IS NULL OR start_ts > prev_end THEN 1 ELSE 0 END)
                      OVER (PARTITION BY k ORDER BY start_ts, end_ts ROWS UNBOUNDED PRECEDING)
                      AS isl
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
        SELECT k, list_sort(list({'isl': isl, 's': s, 'e': e, 'el': el, 'tel': tel,
                                  'hbm': hbm})) AS l
        FROM iv GROUP BY k
    )
    SELECT k, '[' || array_to_string(list_transform(l, x -> '[' || x.s || ',' || x.e || ']'),
                                     ',') || ']' AS time_intervals,
           list_transform(l, x -> x.el) AS element_count_per_interval,
           list_transform(l, x -> x.tel) AS transpose_element_count_per_interval,
           list_transform(l, x -> x.hbm) AS hbm_transfer_size_per_interval
    FROM sorted;
