-- table: SbufUsage
-- requires: nx_OnchipAlloc
-- SBUF fill per partition group (0/32/64/96) on the DmaUsage bucket grid (at most
-- 2000 buckets of at least 100 ns). Occupied bytes are an event stream (+bytes at an
-- nx_OnchipAlloc row's start, -bytes at its end, see 53_sbuf_allocation.sql) whose
-- running sum is a step function; its integral is sampled at the bucket edges with an
-- ASOF join, so each value is the mean fill over [timestamp, timestamp + bucket), as a
-- fraction (0..1) of the group's capacity (32 partitions x SBUF partition size).
-- avg_util_percent is the mean of the four groups, i.e. the fill of the whole SBUF.
WITH p AS (
    SELECT first_ns, greatest(100, ceil((last_ns - first_ns + 1) / 2000.0))::BIGINT AS w,
           last_ns FROM nx_Profile
),
a AS (SELECT * FROM nx_OnchipAlloc WHERE mem = 'SBUF' AND end_ts > start_ts),
ev AS (
    SELECT pcore_idx, unit, start_ts AS ts, bytes AS d FROM a
    UNION ALL
    SELECT pcore_idx, unit, end_ts, -bytes FROM a
),
level AS (
    SELECT pcore_idx, unit, ts,
           sum(sum(d)) OVER (PARTITION BY pcore_idx, unit ORDER BY ts) AS bytes
    FROM ev GROUP BY pcore_idx, unit, ts
),
-- area = byte-ns accumulated before ts
step AS (
    SELECT pcore_idx, unit, ts, bytes,
           coalesce(sum(bytes * (lead_ts - ts)) OVER (PARTITION BY pcore_idx, unit ORDER BY ts
                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS area
    FROM (SELECT *, lead(ts) OVER (PARTITION BY pcore_idx, unit ORDER BY ts) AS lead_ts FROM level)
),
cap AS (SELECT max(capacity) AS c FROM nx_OnchipAlloc WHERE mem = 'SBUF'),
cores AS (SELECT DISTINCT pcore_idx FROM nx_OnchipAlloc),
edges AS (
    SELECT c.pcore_idx, u.unit, g.k, p.first_ns + g.k * p.w AS t
    FROM cores c, p, (VALUES (0), (32), (64), (96)) AS u(unit),
         range(0, (p.last_ns - p.first_ns) // p.w + 2) AS g(k)
),
area_at AS (
    SELECT e.pcore_idx, e.unit, e.k, e.t,
           coalesce(s.area + s.bytes * (e.t - s.ts), 0) AS area
    FROM edges e ASOF LEFT JOIN step s
         ON s.pcore_idx = e.pcore_idx AND s.unit = e.unit AND e.t >= s.ts
),
fill AS (
    SELECT pcore_idx, unit, k, t,
           (lead(area) OVER (PARTITION BY pcore_idx, unit ORDER BY k) - area)
               / (p.w * cap.c) AS f
    FROM area_at, p, cap
)
SELECT t AS timestamp,
       avg(f) AS avg_util_percent,
       max(f) FILTER (WHERE unit = 0) AS partition_0_util_percent,
       max(f) FILTER (WHERE unit = 32) AS partition_32_util_percent,
       max(f) FILTER (WHERE unit = 64) AS partition_64_util_percent,
       max(f) FILTER (WHERE unit = 96) AS partition_96_util_percent,
       pcore_idx
FROM fill WHERE f IS NOT NULL
GROUP BY pcore_idx, t
ORDER BY pcore_idx, timestamp
