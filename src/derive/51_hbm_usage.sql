-- table: HbmUsage
-- requires: DmaPacket, DmaPacketAggregated
-- HBM throughput over time, bucketed like DmaUsage, counting only packets of
-- transfers with an HBM side (source or destination is not SBUF/PSUM).
WITH p AS (
    SELECT first_ns, greatest(100, ceil((last_ns - first_ns + 1) / 2000.0))::BIGINT AS w,
           last_ns FROM nx_Profile
),
hbm AS (
    SELECT d.pcore_idx, d.start_ts, d.transfer_bytes
    FROM DmaPacket d JOIN DmaPacketAggregated a ON a.id = d.packet_aggregation_id
    WHERE a.source NOT IN ('[[SB]]', '[[PSUM]]') OR a.dest NOT IN ('[SB]', '[PSUM]')
),
b AS (
    SELECT coalesce(pcore_idx, 0) AS pcore_idx,
           (start_ts - p.first_ns) // p.w AS k, sum(transfer_bytes) AS bytes
    FROM hbm, p GROUP BY ALL
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
