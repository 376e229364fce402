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
-- The ASOF joins' keys are integers: a semaphore's id as a BIGINT (the waiters' and
-- producers' ids are integers; an update's or a transfer's id text that is not an
-- integer's own text could never equal theirs, so those rows are left out), and the
-- update's source as a small number `k` (its rank among the distinct sources, NULL for
-- none), matched to the producers' engine by the same table. Sorting 1.09M updates by
-- text keys with the source's text as payload made this file 2.5-4.5 s of CPU on a real
-- NKI kernel (docs/memory.md, "Flow's SEMAPHORE part on integer keys"). Updates equal in
-- all three (semaphore, time, source) are one for the join: whichever of them it picks
-- gives the same row; a real kernel updates a semaphore many times in one ns (1.09M
-- updates, 99,317 distinct times), so the join sorts a tenth of the rows. `released`, read
-- by three parts, is MATERIALIZED (as DuckDB 1.4.4 chose on its own) and so is `sources`,
-- whose numbers must be the same in both places that read them.
-- Without SemaphoreUpdate rows no wait is released and the file is skipped (its
-- query, giving no rows, took the bench's 100M-record ingest from 273 to 359 MB).
WITH sources AS MATERIALIZED (
    SELECT update_source, row_number() OVER (ORDER BY update_source) AS k
    FROM (SELECT DISTINCT update_source FROM SemaphoreUpdate WHERE update_source IS NOT NULL)
),
waiters AS (
    SELECT i.id, i.start_ts, s.wait_sem AS sem
    FROM Instruction i
    JOIN nx_StaticInst s ON s.engine = i.engine AND s.pc = i.pc
    WHERE s.wait_sem IS NOT NULL
),
updates AS (
    SELECT DISTINCT u.sem, u.timestamp, s.k
    FROM (SELECT TRY_CAST(id AS BIGINT) AS sem, id, timestamp, update_source
          FROM SemaphoreUpdate) u
    LEFT JOIN sources s ON s.update_source = u.update_source
    WHERE u.id = u.sem::VARCHAR
),
released AS MATERIALIZED (
    SELECT w.id, w.start_ts, w.sem, u.timestamp AS upd_ts, u.k
    FROM waiters w
    ASOF JOIN updates u ON u.sem = w.sem AND w.start_ts >= u.timestamp
),
axi AS MATERIALIZED (
    SELECT k FROM sources WHERE update_source = 'AXI'
),
producers AS (
    SELECT i.id, src.k, i.end_ts, s.sig_sem AS sem
    FROM Instruction i
    JOIN nx_StaticInst s ON s.engine = i.engine AND s.pc = i.pc
    JOIN sources src ON src.update_source = i.engine
    WHERE s.sig_sem IS NOT NULL
),
by_engine AS (
    SELECT p.id AS in_id, r.id AS out_id, 'Instruction' AS in_table, 'Instruction' AS out_table,
           'SEMAPHORE' AS dependency_type, r.start_ts - p.end_ts AS gap_time
    FROM released r
    ASOF JOIN producers p ON p.sem = r.sem AND p.k = r.k AND r.upd_ts >= p.end_ts
    WHERE r.k NOT IN (SELECT k FROM axi)
),
transfers AS (
    SELECT id, end_ts, sem
    FROM (SELECT id, end_ts, semaphore_id, TRY_CAST(semaphore_id AS BIGINT) AS sem
          FROM DmaPacketAggregated)
    WHERE semaphore_id = sem::VARCHAR
      AND sem IN (SELECT sem FROM released WHERE k IN (SELECT k FROM axi))
),
by_dma AS (
    SELECT a.id AS in_id, r.id AS out_id, 'DmaPacketAggregated' AS in_table,
           'Instruction' AS out_table, 'SEMAPHORE' AS dependency_type,
           r.start_ts - a.end_ts AS gap_time
    FROM released r
    ASOF JOIN transfers a ON a.sem = r.sem AND r.upd_ts >= a.end_ts
    WHERE r.k IN (SELECT k FROM axi)
)
SELECT in_id::BIGINT AS in_id, out_id::BIGINT AS out_id, in_table, out_table,
       dependency_type, gap_time::BIGINT AS gap_time
FROM (SELECT * FROM by_engine UNION ALL SELECT * FROM by_dma)
ORDER BY out_id, in_table, in_id
