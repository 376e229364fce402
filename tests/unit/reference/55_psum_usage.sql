-- table: PsumUsage
-- requires: nx_OnchipAlloc
-- PSUM fill per bank on the DmaUsage bucket grid. A bank's range is occupied from the
-- write that starts it (a non-accumulating MATMUL, or any other PSUM dst or DMA write)
-- until the end of its last read (TENSOR_COPY, ACTIVATE, ... with a PSUM src, or an
-- accumulating MATMUL, which also continues it); see 53_sbuf_allocation.sql for the
-- lifetime rules. The same event stream, running sum and integral as SbufUsage: each
-- value is the mean fill over [timestamp, timestamp + bucket) as a fraction (0..1) of the
-- bank (128 partitions x bank size); avg_util_percent is the mean of the eight banks.
WITH p AS (
    SELECT first_ns, greatest(100, ceil((last_ns - first_ns + 1) / 2000.0))::BIGINT AS w,
           last_ns FROM nx_Profile
),
a AS (SELECT * FROM nx_OnchipAlloc WHERE mem = 'PSUM' AND end_ts > start_ts),
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
step AS (
    SELECT pcore_idx, unit, ts, bytes,
           coalesce(sum(bytes * (lead_ts - ts)) OVER (PARTITION BY pcore_idx, unit ORDER BY ts
                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS area
    FROM (SELECT *, lead(ts) OVER (PARTITION BY pcore_idx, unit ORDER BY ts) AS lead_ts FROM level)
),
cap AS (SELECT max(capacity) AS c FROM nx_OnchipAlloc WHERE mem = 'PSUM'),
cores AS (SELECT DISTINCT pcore_idx FROM nx_OnchipAlloc),
edges AS (
    SELECT c.pcore_idx, u.unit, g.k, p.first_ns + g.k * p.w AS t
    FROM cores c, p, range(0, 8) AS u(unit),
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
       max(f) FILTER (WHERE unit = 0) AS bank_0_util_percent,
       max(f) FILTER (WHERE unit = 1) AS bank_1_util_percent,
       max(f) FILTER (WHERE unit = 2) AS bank_2_util_percent,
       max(f) FILTER (WHERE unit = 3) AS bank_3_util_percent,
       max(f) FILTER (WHERE unit = 4) AS bank_4_util_percent,
       max(f) FILTER (WHERE unit = 5) AS bank_5_util_percent,
       max(f) FILTER (WHERE unit = 6) AS bank_6_util_percent,
       max(f) FILTER (WHERE unit = 7) AS bank_7_util_percent,
       pcore_idx
FROM fill WHERE f IS NOT NULL
GROUP BY pcore_idx, t
ORDER BY pcore_idx, timestamp
