-- table: DmaPacketAggregated
-- requires: DmaPacket
-- One row per DMA transfer: its packets grouped by packet_aggregation_id, joined with
-- the NEFF block that describes it (source, destination, shapes) and with the
-- instruction that triggered it (trigger/completion = that instruction's start/end).
WITH t AS (
    SELECT packet_aggregation_id AS id,
           min(start_ts) AS start_ts, max(end_ts) AS end_ts,
           any_value(pcore_idx) AS pcore_idx, any_value(queue_idx) AS queue_idx,
           any_value(queue_name) AS queue_name, any_value(queue_type) AS queue_type,
           max(variable) AS packet_variable,
           sum(read_bytes) AS read_bytes, sum(write_bytes) AS write_bytes,
           sum(transfer_bytes) AS transfer_bytes
    FROM DmaPacket
    GROUP BY packet_aggregation_id
)
SELECT t.start_ts, t.end_ts, t.end_ts - t.start_ts AS duration_ns, t.id, t.pcore_idx,
       coalesce(b.block_id, -1) AS block_id,
       coalesce(t.queue_idx, b.queue_idx, -1) AS queue_idx,
       coalesce(t.queue_name, b.queue_name, '') AS queue_name,
       coalesce(t.queue_type, b.queue_type) AS queue_type,
       coalesce(b.op, 'copy') AS op,
       coalesce(b.variable, t.packet_variable, '') AS variable,
       t.read_bytes, t.write_bytes, t.transfer_bytes,
       CASE WHEN t.end_ts > t.start_ts
            THEN t.transfer_bytes * 1e9 / (t.end_ts - t.start_ts) ELSE 0 END AS throughput,
       coalesce(b.source, '') AS source, coalesce(b.dest, '') AS dest,
       coalesce(b.semaphore_id, '') AS semaphore_id,
       'sg0000:0' AS modular_flow_function,
       coalesce(b.read_sbuf_partitions, '') AS read_sbuf_partitions,
       coalesce(b.read_num_sbuf_partitions, 0) AS read_num_sbuf_partitions,
       coalesce(b.read_shape, '') AS read_shape, coalesce(b.read_offset, '') AS read_offset,
       coalesce(b.read_steps, '') AS read_steps,
       coalesce(b.write_sbuf_partitions, '') AS write_sbuf_partitions,
       coalesce(b.write_num_sbuf_partitions, 0) AS write_num_sbuf_partitions,
       coalesce(b.write_shape, '') AS write_shape, coalesce(b.write_offset, '') AS write_offset,
       coalesce(b.write_steps, '') AS write_steps,
       b.is_transpose_mode, b.transpose_element_size,
       i.start_ts AS trigger, i.end_ts AS completion
FROM t
LEFT JOIN nx_DmaTransfer x ON x.transfer = t.id
LEFT JOIN nx_DmaBlock b ON b.block = x.block
LEFT JOIN Instruction i ON i.id = x.trigger
ORDER BY t.start_ts, t.id
