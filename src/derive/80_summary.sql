-- table: Summary
-- requires: Instruction, Metadata
-- optimizers off: join_order
-- One row of whole-profile metrics. Conventions (see docs/derived-tables.md):
--  * times in seconds; *_percent fields hold fractions of total_time (0..1), as the
--    real tool writes them;
--  * total_time = nx_Profile.total_ns (execution start/stop records); the interval
--    unions (DMA active time by queue class, total active time) were merged in C while
--    the raw tables streamed and arrive through nx_Profile;
--  * dma_transfer_total_bytes counts kernel packets: queue_type <> 'instruction' and
--    transfer_bytes > 4 (semaphore writes and instruction fetches excluded);
--  * static DMA = queues of type instruction/input/output/data/unknown, dynamic =
--    software_dynamic + hardware_dynamic;
--  * peak TE flops = rows x cols x 2 x TE clock; HBM peak = Metadata.hbm_ddr_bandwidth;
--  * model_flops needs HLO statistics the NEFF does not carry: null, and the HLO MFU
--    fields are 0 as the schema says for missing HLO stats; mfu_estimated_percent and
--    its ceiling are estimated from the kernel's own matmul FLOPs, hardware_flops -
--    transpose_flops (docs/derived-tables.md); collective fields are null (no
--    collectives are modelled).
--  * its CTEs are one row each, joined across: DuckDB's search for a join order took
--    half of the query's time and cannot change the row, so it is off for it.
WITH p AS (SELECT * FROM nx_Profile),
md AS (
    SELECT tensor_engine_num_rows * tensor_engine_num_cols * 2.0 * tensor_engine_clock_freq * 1e9 AS te_peak,
           hbm_ddr_bandwidth AS hbm_bw, neuroncore_clock_freq * 1e9 AS nc_hz
    FROM Metadata LIMIT 1
),
-- Instruction and DmaPacket aggregates were accumulated while those tables streamed
-- (src/ingest/summary_sums.c; the SQL they replaced is tests/unit/reference/80_summary.sql).
ins AS (SELECT * FROM nx_InstSums),
act AS (
    SELECT coalesce(sum(duration_ns) FILTER (WHERE engine = 'tensor'), 0) AS te_a,
           coalesce(sum(duration_ns) FILTER (WHERE engine = 'vector'), 0) AS ve_a,
           coalesce(sum(duration_ns) FILTER (WHERE engine = 'scalar'), 0) AS se_a,
           coalesce(sum(duration_ns) FILTER (WHERE engine = 'sync'), 0) AS sy_a,
           coalesce(sum(duration_ns) FILTER (WHERE engine = 'gpsimd'), 0) AS gp_a
    FROM ActiveTime
),
pk AS (SELECT * FROM nx_DmaSums),
-- DmaPacketAggregated's count and summed duration, and the trace tables' rows, were
-- counted by the ingest as it wrote them (nx_Profile; the reference reads the files).
dpa AS (SELECT dpa_n AS n, dpa_t AS t FROM nx_Profile),
merged AS (
    SELECT dma_active_ns AS dma, static_dma_active_ns AS st, dynamic_dma_active_ns AS dyn,
           software_dma_active_ns AS sw, hardware_dma_active_ns AS hw, all_active_ns AS all_
    FROM nx_Profile
),
ten AS (
    SELECT coalesce(sum(size) FILTER (WHERE type = 'IN'), 0) AS in_b,
           coalesce(sum(size) FILTER (WHERE type = 'OUT'), 0) AS out_b,
           coalesce(sum(size) FILTER (WHERE type = 'WEIGHT'), 0) AS w_b
    FROM TensorInfo
),
q AS (SELECT count(*) AS n FROM DmaQueuesInfo),
rows_ AS (SELECT trace_rows AS events FROM nx_Profile),
base AS (
    SELECT p.total_ns, p.total_ns / 1e9 AS tt, md.*, ins.*, act.*, merged.*, ten.*,
           pk.n AS pk_n, pk.t AS pk_t, pk.bytes AS pk_bytes, pk.kbytes, pk.st_n, pk.st_b,
           pk.sw_n, pk.sw_b, pk.hw_n, pk.hw_b, pk.d_first, pk.d_last,
           dpa.n AS dpa_n, dpa.t AS dpa_t, q.n AS q_n, rows_.events, pk.n > 0 AS has_dma
    FROM p, md, ins, act, pk, dpa, merged, ten, q, rows_
)
SELECT
    tt AS total_time,
    round(tt * nc_hz)::BIGINT AS neuroncore_cycle_count,
    NULL AS model_flops,
    hw_flops AS hardware_flops,
    tp_flops AS transpose_flops,
    adj_flops AS adjusted_hardware_flops,
    adj_tp_flops AS adjusted_transpose_flops,
    (hw_flops - tp_flops) / nullif(hbm_r + hbm_w, 0) AS mm_arithmetic_intensity,
    te_peak / nullif(hbm_bw, 0) AS peak_flops_bandwidth_ratio,
    1 AS trace_count,
    events AS event_count,
    events AS total_row_count,
    CASE WHEN has_dma THEN round(dma / 1e9 * nc_hz)::BIGINT END AS dma_active_cycles,
    CASE WHEN has_dma THEN dma / 1e9 END AS dma_active_time,
    CASE WHEN has_dma THEN dma / nullif(total_ns, 0) END AS dma_active_time_percent,
    CASE WHEN has_dma THEN st / 1e9 END AS static_dma_active_time,
    CASE WHEN has_dma THEN dyn / nullif(total_ns, 0) END AS dynamic_dma_active_time_percent,
    CASE WHEN has_dma THEN st / nullif(total_ns, 0) END AS static_dma_active_time_percent,
    CASE WHEN has_dma THEN pk_bytes / nullif(dpa_n, 0) END AS dma_transfer_average_bytes,
    CASE WHEN has_dma THEN pk_t / 1e9 END AS dma_packet_time,
    CASE WHEN has_dma THEN dpa_t / 1e9 END AS dma_transfer_time,
    CASE WHEN has_dma THEN dpa_n END AS dma_transfer_count,
    CASE WHEN has_dma THEN coalesce(kbytes, 0) END AS dma_transfer_total_bytes,
    q_n AS dma_queue_count,
    in_b + w_b AS inputs_and_weights_size_bytes,
    in_b + out_b + w_b AS inputs_outputs_weights_size_bytes,
    w_b AS weight_size_bytes,
    CASE WHEN has_dma THEN st_n END AS static_dma_packet_count,
    CASE WHEN has_dma THEN st_b END AS static_dma_size,
    CASE WHEN has_dma THEN (sw_n + hw_n)::DOUBLE / pk_n END AS dynamic_dma_packet_percent,
    CASE WHEN has_dma THEN st_n::DOUBLE / pk_n END AS static_dma_packet_percent,
    CASE WHEN has_dma THEN (sw_b + hw_b)::DOUBLE / nullif(pk_bytes, 0) END AS dynamic_dma_size_percent,
    CASE WHEN has_dma THEN st_b::DOUBLE / nullif(pk_bytes, 0) END AS static_dma_size_percent,
    (hbm_r + hbm_w) / nullif(tt, 0) / nullif(hbm_bw, 0) AS mbu_estimated_percent,
    (in_b + w_b) / nullif(tt, 0) / nullif(hbm_bw, 0) AS mbu_min_read_util_percent,
    hbm_w AS hbm_write_bytes,
    hbm_r AS hbm_read_bytes,
    sb_w AS sbuf_write_bytes,
    sb_r AS sbuf_read_bytes,
    sp_s AS spill_save_bytes,
    sp_r AS spill_reload_bytes,
    ps_w AS psum_write_bytes,
    ps_r AS psum_read_bytes,
    ps_sb_n AS psum_read_sbuf_write_count,
    ps_sb AS psum_read_sbuf_write_bytes,
    in_q AS input_queue_bytes,
    out_q AS output_queue_bytes,
    w_q AS weight_queue_bytes,
    CASE WHEN has_dma THEN sw / 1e9 END AS software_dynamic_dma_active_time,
    CASE WHEN has_dma THEN sw / nullif(total_ns, 0) END AS software_dynamic_dma_active_time_percent,
    CASE WHEN has_dma THEN sw_n END AS software_dynamic_dma_packet_count,
    CASE WHEN has_dma THEN sw_b END AS software_dynamic_dma_size,
    CASE WHEN has_dma THEN sw_n::DOUBLE / pk_n END AS software_dynamic_dma_packet_percent,
    CASE WHEN has_dma THEN sw_b::DOUBLE / nullif(pk_bytes, 0) END AS software_dynamic_dma_size_percent,
    CASE WHEN has_dma THEN hw / 1e9 END AS hardware_dynamic_dma_active_time,
    CASE WHEN has_dma THEN hw / nullif(total_ns, 0) END AS hardware_dynamic_dma_active_time_percent,
    CASE WHEN has_dma THEN hw_n END AS hardware_dynamic_dma_packet_count,
    CASE WHEN has_dma THEN hw_b END AS hardware_dynamic_dma_size,
    CASE WHEN has_dma THEN hw_n::DOUBLE / pk_n END AS hardware_dynamic_dma_packet_percent,
    CASE WHEN has_dma THEN hw_b::DOUBLE / nullif(pk_bytes, 0) END AS hardware_dynamic_dma_size_percent,
    te_t / 1e9 AS tensor_engine_instruction_time,
    te_a / 1e9 AS tensor_engine_active_time,
    te_a / nullif(total_ns, 0) AS tensor_engine_active_time_percent,
    te_n AS tensor_engine_instruction_count,
    mm_n AS matmul_instruction_count,
    (hw_flops - tp_flops) / nullif(te_peak * tt, 0) AS mfu_estimated_percent,
    ((hw_flops - tp_flops) / nullif(hbm_r + hbm_w, 0)) / nullif(te_peak / hbm_bw, 0)
        AS mfu_max_achievable_estimated_percent,
    0.0 AS mfu_hlo_estimated_percent,
    0.0 AS mfu_hlo_max_achievable_estimated_percent,
    (hw_flops - tp_flops) / nullif(te_peak * tt, 0) AS mfu_inst_estimated_percent,
    ((hw_flops - tp_flops) / nullif(hbm_r + hbm_w, 0)) / nullif(te_peak / hbm_bw, 0)
        AS mfu_inst_max_achievable_estimated_percent,
    hw_flops / nullif(te_peak * tt, 0) AS hfu_estimated_percent,
    ve_t / 1e9 AS vector_engine_instruction_time,
    ve_a / 1e9 AS vector_engine_active_time,
    ve_a / nullif(total_ns, 0) AS vector_engine_active_time_percent,
    ve_n AS vector_engine_instruction_count,
    se_t / 1e9 AS scalar_engine_instruction_time,
    se_a / 1e9 AS scalar_engine_active_time,
    se_a / nullif(total_ns, 0) AS scalar_engine_active_time_percent,
    se_n AS scalar_engine_instruction_count,
    act_t / 1e9 AS activate_instruction_time,
    act_n AS activate_instruction_count,
    sy_t / 1e9 AS sync_engine_instruction_time,
    sy_a / 1e9 AS sync_engine_active_time,
    sy_a / nullif(total_ns, 0) AS sync_engine_active_time_percent,
    sy_n AS sync_engine_instruction_count,
    gp_t / 1e9 AS gpsimd_engine_instruction_time,
    gp_a / 1e9 AS gpsimd_engine_active_time,
    gp_a / nullif(total_ns, 0) AS gpsimd_engine_active_time_percent,
    gp_n AS gpsimd_engine_instruction_count,
    NULL AS cc_op_time, NULL AS cc_op_active_time, NULL AS cc_op_active_time_percent,
    NULL AS cc_op_count, NULL AS cc_cores_instruction_time,
    NULL AS cc_cores_instruction_active_time, NULL AS cc_cores_instruction_active_time_percent,
    NULL AS cc_cores_instruction_count,
    (greatest(x_last, coalesce(d_last, x_last)) - least(x_first, coalesce(d_first, x_first))) / 1e9
        AS total_exec_time,
    all_ / 1e9 AS total_active_time,
    all_ / nullif(total_ns, 0) AS total_active_time_percent
FROM base
