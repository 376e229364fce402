-- Flow's SEMAPHORE edges as 39_flow_semaphore.sql computed them before its joins took
-- integer keys and distinct updates (docs/memory.md, "Flow's SEMAPHORE part on integer
-- keys"): the reference test_flow_semaphore.c compares the file with.
WITH waiters AS (
    SELECT i.id, i.start_ts, s.wait_sem::VARCHAR AS sem
    FROM Instruction i
    JOIN nx_StaticInst s ON s.engine = i.engine AND s.pc = i.pc
    WHERE s.wait_sem IS NOT NULL
),
released AS (
    SELECT w.id, w.start_ts, w.sem, u.timestamp AS upd_ts, u.update_source
    FROM waiters w
    ASOF JOIN (SELECT id, timestamp, update_source FROM SemaphoreUpdate) u
           ON u.id = w.sem AND w.start_ts >= u.timestamp
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
    ASOF JOIN (SELECT id, end_ts, semaphore_id FROM DmaPacketAggregated
               WHERE semaphore_id IN (SELECT sem FROM released WHERE update_source = 'AXI')) a
           ON a.semaphore_id = r.sem AND r.upd_ts >= a.end_ts
    WHERE r.update_source = 'AXI'
)
SELECT in_id::BIGINT AS in_id, out_id::BIGINT AS out_id, in_table, out_table,
       dependency_type, gap_time::BIGINT AS gap_time
FROM (SELECT * FROM by_engine UNION ALL SELECT * FROM by_dma)
ORDER BY out_id, in_table, in_id
