-- table: PendingDma
-- requires: DmaPacketAggregated
-- Transfers queued or in flight over time: +1 when a transfer is triggered (the
-- triggering instruction's end, or the first packet when no trigger is known), -1 when
-- its last packet ends; sampled at the DmaUsage bucket starts.
WITH p AS (
    SELECT first_ns, greatest(100, ceil((last_ns - first_ns + 1) / 2000.0))::BIGINT AS w,
           last_ns FROM nx_Profile
),
ev AS (
    SELECT coalesce(pcore_idx, 0) AS pcore_idx, least(coalesce(completion, start_ts), start_ts) AS ts, 1 AS d
    FROM DmaPacketAggregated
    UNION ALL
    SELECT coalesce(pcore_idx, 0), end_ts, -1 FROM DmaPacketAggregated
),
level AS (
    SELECT pcore_idx, ts, sum(sum(d)) OVER (PARTITION BY pcore_idx ORDER BY ts) AS value
    FROM ev GROUP BY pcore_idx, ts
),
cores AS (SELECT DISTINCT pcore_idx FROM level),
grid AS (
    SELECT c.pcore_idx, p.first_ns + g.k * p.w AS timestamp
    FROM cores c, p, range(0, (p.last_ns - p.first_ns) // p.w + 1) AS g(k)
)
SELECT g.timestamp, coalesce(l.value, 0) AS value, g.pcore_idx
FROM grid g ASOF LEFT JOIN level l ON l.pcore_idx = g.pcore_idx AND g.timestamp >= l.ts
ORDER BY g.pcore_idx, g.timestamp
