-- table: OpcodeSummary
-- requires: Instruction
-- Per (engine, opcode): instruction count, summed duration, merged active time, and
-- that active time as a fraction of the profile's total time (nx_Profile.total_ns).
WITH iv AS (
    SELECT lower(engine) AS engine, opcode, start_ts, end_ts FROM Instruction
),
counts AS (
    SELECT engine, opcode, count(*) AS n, sum(end_ts - start_ts) AS t
    FROM iv GROUP BY engine, opcode
),
ordered AS (
    SELECT *,
           max(end_ts) OVER (PARTITION BY engine, opcode ORDER BY start_ts, end_ts
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM iv WHERE end_ts > start_ts
),
runs AS (
    SELECT *,
           sum(CASE WHEN reach IS NULL OR start_ts > reach THEN 1 ELSE 0 END)
               OVER (PARTITION BY engine, opcode ORDER BY start_ts, end_ts
                     ROWS UNBOUNDED PRECEDING) AS run
    FROM ordered
),
active AS (
    SELECT engine, opcode, sum(len) AS a
    FROM (SELECT engine, opcode, max(end_ts) - min(start_ts) AS len
          FROM runs GROUP BY engine, opcode, run)
    GROUP BY engine, opcode
)
SELECT c.engine, c.opcode, c.n AS instruction_count, c.t AS instruction_time_ns,
       coalesce(a.a, 0) AS active_time_ns,
       coalesce(a.a, 0)::DOUBLE / nullif((SELECT total_ns FROM nx_Profile), 0) AS active_time_percent
FROM counts c LEFT JOIN active a USING (engine, opcode)
ORDER BY c.engine, active_time_ns DESC, c.opcode
