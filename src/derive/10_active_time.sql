-- table: ActiveTime
-- requires: Instruction
-- Busy intervals per engine: the union of its instruction intervals. Instruction
-- start_ts is the issue time after any semaphore wait, so waits are excluded.
-- Zero-length instructions add nothing; touching intervals merge into one run.
WITH iv AS (
    SELECT lower(engine) AS engine, coalesce(pcore_idx, 0) AS pcore_idx, start_ts, end_ts
    FROM Instruction
    WHERE end_ts > start_ts
),
ordered AS (
    SELECT *,
           max(end_ts) OVER (PARTITION BY engine, pcore_idx ORDER BY start_ts, end_ts
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM iv
),
runs AS (
    SELECT *,
           sum(CASE WHEN reach IS NULL OR start_ts > reach THEN 1 ELSE 0 END)
               OVER (PARTITION BY engine, pcore_idx ORDER BY start_ts, end_ts
                     ROWS UNBOUNDED PRECEDING) AS run
    FROM ordered
)
SELECT min(start_ts) AS start_ts, max(end_ts) AS end_ts, engine, pcore_idx,
       max(end_ts) - min(start_ts) AS duration_ns
FROM runs
GROUP BY engine, pcore_idx, run
ORDER BY engine, pcore_idx, start_ts
