-- stage: nx_FlowEdges_1
-- requires: Instruction, nx_StaticInst, SemaphoreUpdate
-- memory: 64MB
-- Flow's SEMAPHORE edges (40_flow.sql): the producer whose semaphore update released a
-- waiting instruction -> the waiting instruction. The releasing update is the last
-- update of the waited semaphore at or before the waiter's start; its producer is the
-- latest instruction on the updating engine that signals that semaphore and ended by
-- then, or, for updates written over AXI by DMA engines, the latest transfer completing
-- on that semaphore. gap_time = waiter start - producer end. In Flow's order (out_id,
-- in_table, in_id: out_table is always Instruction), after the DGE_TRIGGER edges that
-- the ingest wrote as nx_FlowEdges_0.
-- The ASOF joins sort their right side whole: only the columns they need are read, and
-- only the transfers on a semaphore some AXI update released (DuckDB does not prune
-- the columns of an ASOF join's right side itself: DmaPacketAggregated's 37 columns
-- took a 30M-record ingest past 350 MB for a trace without semaphores).
-- Without SemaphoreUpdate rows no wait is released and the file is skipped (its
-- query, giving no rows, took the bench's 100M-record ingest from 273 to 359 MB).
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
