-- table: DmaUsage
-- requires: DmaPacket
-- DMA throughput over time: the profile span is cut into at most 2000 equal buckets
-- (at least 100 ns each); each packet's bytes count in the bucket where it starts.
-- current_throughput = bytes in the bucket / bucket length; total_transfer_bytes is
-- cumulative from the profile start.
WITH p AS (
    SELECT first_ns, greatest(100, ceil((last_ns - first_ns + 1) / 2000.0))::BIGINT AS w,
           last_ns FROM nx_Profile
),
b AS (
    SELECT coalesce(pcore_idx, 0) AS pcore_idx,
           (start_ts - p.first_ns) // p.w AS k, sum(transfer_bytes) AS bytes
    FROM DmaPacket, p GROUP BY ALL
),
cores AS (SELECT DISTINCT pcore_idx FROM b),
grid AS (
    SELECT c.pcore_idx, g.k
    FROM cores c, p, range(0, (p.last_ns - p.first_ns) // p.w + 1) AS g(k)
)
SELECT p.first_ns + g.k * p.w AS timestamp,
       coalesce(b.bytes, 0) * 1e9 / p.w AS current_throughput,
       sum(coalesce(b.bytes, 0)) OVER (PARTITION BY g.pcore_idx ORDER BY g.k) AS total_transfer_bytes,
       g.pcore_idx
FROM grid g CROSS JOIN p LEFT JOIN b ON b.k = g.k AND b.pcore_idx = g.pcore_idx
ORDER BY g.pcore_idx, timestamp
