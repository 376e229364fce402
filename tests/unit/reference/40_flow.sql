-- table: Flow
-- requires: Instruction, nx_StaticInst
-- Dependency edges.
-- 1. DGE_TRIGGER: the instruction that started a DMA transfer -> that transfer;
--    gap_time = transfer start - instruction end.
-- 2. SEMAPHORE: the producer whose semaphore update released a waiting instruction ->
--    the waiting instruction. The releasing update is the last update of the waited
--    semaphore at or before the waiter's start; its producer is the latest instruction
--    on the updating engine that signals that semaphore and ended by then, or, for
--    updates written over AXI by DMA engines, the latest transfer completing on that
--    semaphore. gap_time = waiter start - producer end.
WITH trig AS (
    SELECT i.id AS in_id, a.id AS out_id, 'Instruction' AS in_table,
           'DmaPacketAggregated' AS out_table, 'DGE_TRIGGER' AS dependency_type,
           a.start_ts - i.end_ts AS gap_time
    FROM nx_DmaTransfer x
    JOIN DmaPacketAggregated a ON a.id = x.transfer
    JOIN Instruction i ON i.id = x.trigger
),
waiters AS (
    SELECT i.id, i.start_ts, s.wait_sem::VARCHAR AS sem
    FROM Instruction i
    JOIN nx_StaticInst s ON s.engine = i.engine AND s.pc = i.pc
    WHERE s.wait_sem IS NOT NULL
),
released AS (
    SELECT w.id, w.start_ts, w.sem, u.timestamp AS upd_ts, u.update_source
    FROM waiters w
    ASOF JOIN SemaphoreUpdate u ON u.id = w.sem AND w.start_ts >= u.timestamp
),
producers AS (
    SELECT i.id, i.engine, i.end_ts, s.sig_sem::VARCHAR AS sem
    FROM Instruction i
    JOIN nx_StaticInst s ON s.engine = i.engine AND s.pc = i.pc
    WHERE s.sig_sem IS NOT NULL
),
by_engine AS (
    SELECT p.id AS in_id, r.id AS out_id, 'Instruction' AS in_table, 'Instruction' AS out_table,
           'SEMAPHORE' AS dependency_type, r.start_ts - p.end_ts AS gap_time
    FROM released r
    ASOF JOIN producers p ON p.sem = r.sem AND p.engine = r.update_source AND r.upd_ts >= p.end_ts
    WHERE r.update_source <> 'AXI'
),
by_dma AS (
    SELECT a.id AS in_id, r.id AS out_id, 'DmaPacketAggregated' AS in_table,
           'Instruction' AS out_table, 'SEMAPHORE' AS dependency_type,
           r.start_ts - a.end_ts AS gap_time
    FROM released r
    ASOF JOIN DmaPacketAggregated a ON a.semaphore_id = r.sem AND r.upd_ts >= a.end_ts
    WHERE r.update_source = 'AXI'
)
SELECT * FROM trig
UNION ALL SELECT * FROM by_engine
UNION ALL SELECT * FROM by_dma
ORDER BY out_table, out_id, in_table, in_id
