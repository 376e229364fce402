-- table: FrameworkNode
-- requires: FrameworkInstruction, Instruction, Metadata
-- threads: 1
-- The tree of framework paths: framework_name split on '/', one node per distinct
-- prefix (node_name = its last component, parent_name = the one before, '' at the
-- root), rolled up over the FrameworkInstruction rows beneath it. Intervals of several
-- operators are merged again (touching ones merge); per interval: hfu = elements /
-- (rows x cols x cycles), mfu = the same without transposed elements, mbu = HBM bytes /
-- interval / HBM peak; the node's hfu/mfu use its span (end_ts - start_ts) in
-- Tensor-engine cycles. See docs/derived-tables.md, "IR hierarchy". One thread: its
-- ordered string aggregates over one operator's many intervals held a copy per thread.
WITH md AS (
    SELECT tensor_engine_num_rows * tensor_engine_num_cols AS cells,
           tensor_engine_clock_freq AS ghz, hbm_ddr_bandwidth AS hbm_bw
    FROM Metadata LIMIT 1
),
fi AS (
    SELECT *, string_split(framework_name, '/') AS parts FROM FrameworkInstruction
    WHERE framework_name IS NOT NULL AND framework_name <> ''
),
node_of AS (
    SELECT fi.raw_framework_id AS fid, d,
           array_to_string(fi.parts[1:d], '/') AS path,
           fi.parts[d] AS node_name,
           CASE WHEN d > 1 THEN fi.parts[d - 1] ELSE '' END AS parent_name,
           CASE WHEN d > 1 THEN array_to_string(fi.parts[1:d - 1], '/') END AS parent_path
    FROM fi, range(1, len(fi.parts) + 1) AS r(d)
),
ints AS (
    SELECT n.path, u.iv[1] AS s, u.iv[2] AS e, u.el, u.tel, u.hbm
    FROM node_of n JOIN fi ON fi.raw_framework_id = n.fid,
         LATERAL (SELECT unnest(from_json(fi.time_intervals, '[["BIGINT"]]')) AS iv,
                         unnest(fi.element_count_per_interval) AS el,
                         unnest(fi.transpose_element_count_per_interval) AS tel,
                         unnest(fi.hbm_transfer_size_per_interval) AS hbm) u
),
w AS (
    SELECT *, max(e) OVER (PARTITION BY path ORDER BY s, e
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
    FROM ints
),
g AS (
    SELECT *, sum(CASE WHEN prev_e IS NULL OR s > prev_e THEN 1 ELSE 0 END)
                  OVER (PARTITION BY path ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS isl
    FROM w
),
iv AS (
    SELECT path, isl, min(s) AS s, max(e) AS e, sum(el) AS el, sum(tel) AS tel, sum(hbm) AS hbm
    FROM g GROUP BY path, isl
),
ivs AS (
    SELECT path,
           '[' || string_agg('[' || s || ',' || e || ']', ',' ORDER BY isl) || ']' AS time_intervals,
           '[' || string_agg(el::VARCHAR, ',' ORDER BY isl) || ']' AS element_count_per_interval,
           '[' || string_agg(tel::VARCHAR, ',' ORDER BY isl) || ']' AS transpose_element_count_per_interval,
           '[' || string_agg(hbm::VARCHAR, ',' ORDER BY isl) || ']' AS hbm_transfer_size_per_interval,
           '[' || string_agg(CASE WHEN e > s THEN (el / (md.cells * (e - s) * md.ghz))::VARCHAR
                                  ELSE '0' END, ',' ORDER BY isl) || ']' AS hfu_per_interval,
           '[' || string_agg(CASE WHEN e > s THEN ((el - tel) / (md.cells * (e - s) * md.ghz))::VARCHAR
                                  ELSE '0' END, ',' ORDER BY isl) || ']' AS mfu_per_interval,
           '[' || string_agg(CASE WHEN e > s AND md.hbm_bw > 0
                                  THEN (hbm * 1e9 / (e - s) / md.hbm_bw)::VARCHAR
                                  ELSE '0' END, ',' ORDER BY isl) || ']' AS mbu_per_interval
    FROM iv, md GROUP BY path
),
eng AS (
    SELECT n.path, lower(i.engine) AS engine, min(i.start_ts) AS s, max(i.end_ts) AS e
    FROM node_of n JOIN Instruction i ON i.raw_framework_id = n.fid
    GROUP BY n.path, lower(i.engine)
),
agg AS (
    SELECT n.path, any_value(n.node_name) AS node_name, any_value(n.parent_name) AS parent_name,
           '[' || string_agg(DISTINCT n.fid::VARCHAR, ', ') || ']' AS children_ids,
           min(fi.start_ts) AS start_ts, max(fi.end_ts) AS end_ts,
           sum(list_sum(fi.element_count_per_interval)) AS el,
           sum(list_sum(fi.transpose_element_count_per_interval)) AS tel,
           sum(fi.hbm_read_bytes) AS hbm_read_bytes, sum(fi.hbm_write_bytes) AS hbm_write_bytes,
           sum(fi.sbuf_read_bytes) AS sbuf_read_bytes, sum(fi.sbuf_write_bytes) AS sbuf_write_bytes,
           sum(fi.load_weight_bytes) AS load_weight_bytes,
           sum(fi.tensor_engine_instruction_count) AS tensor_engine_instruction_count,
           sum(fi.scalar_engine_instruction_count) AS scalar_engine_instruction_count,
           sum(fi.sync_engine_instruction_count) AS sync_engine_instruction_count,
           sum(fi.gpsimd_engine_instruction_count) AS gpsimd_engine_instruction_count,
           sum(fi.vector_engine_instruction_count) AS vector_engine_instruction_count
    FROM node_of n JOIN fi ON fi.raw_framework_id = n.fid
    GROUP BY n.path
),
kids AS (
    SELECT parent_path AS path, '[' || string_agg(DISTINCT node_name, ', ') || ']' AS children_names
    FROM node_of WHERE parent_path IS NOT NULL GROUP BY parent_path
)
SELECT a.node_name, coalesce(k.children_names, '[]') AS children_names, a.parent_name,
       a.children_ids, a.start_ts, a.end_ts, ivs.* EXCLUDE (path),
       CASE WHEN a.end_ts > a.start_ts THEN a.el / (md.cells * (a.end_ts - a.start_ts) * md.ghz) END AS hfu,
       CASE WHEN a.end_ts > a.start_ts THEN (a.el - a.tel) / (md.cells * (a.end_ts - a.start_ts) * md.ghz) END AS mfu,
       a.hbm_read_bytes, a.hbm_write_bytes, a.sbuf_read_bytes, a.sbuf_write_bytes,
       a.tensor_engine_instruction_count, a.scalar_engine_instruction_count,
       a.sync_engine_instruction_count, a.gpsimd_engine_instruction_count,
       a.vector_engine_instruction_count,
       coalesce((SELECT '[' || s || ',' || e || ']' FROM eng WHERE eng.path = a.path AND engine = 'tensor'), '[]') AS total_time_tensor,
       coalesce((SELECT '[' || s || ',' || e || ']' FROM eng WHERE eng.path = a.path AND engine = 'scalar'), '[]') AS total_time_scalar,
       coalesce((SELECT '[' || s || ',' || e || ']' FROM eng WHERE eng.path = a.path AND engine = 'sync'), '[]') AS total_time_sync,
       coalesce((SELECT '[' || s || ',' || e || ']' FROM eng WHERE eng.path = a.path AND engine = 'gpsimd'), '[]') AS total_time_gpsimd,
       coalesce((SELECT '[' || s || ',' || e || ']' FROM eng WHERE eng.path = a.path AND engine = 'vector'), '[]') AS total_time_vector,
       a.load_weight_bytes
FROM agg a JOIN ivs USING (path) LEFT JOIN kids k USING (path), md
ORDER BY a.start_ts, a.node_name
