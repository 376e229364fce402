-- macro: nx_throughput_grid
-- The bucketed DMA throughput that DmaUsage and HbmUsage share, as a table macro
-- nx_throughput_grid(hbm_only). The profile span is cut into at most 2000 equal buckets
-- (at least 100 ns each); each packet's bytes count in the bucket where it starts.
-- current_throughput = bytes in the bucket / bucket length; total_transfer_bytes is
-- cumulative from the profile start, per core. With hbm_only, only packets of transfers
-- with an HBM side (source or destination not SBUF/PSUM) count; the branch not taken is
-- folded away when the macro is expanded, so DmaUsage never reads DmaPacketAggregated.
CREATE OR REPLACE TEMP MACRO nx_throughput_grid(hbm_only) AS TABLE
WITH p AS (
    SELECT first_ns, greatest(100, ceil((last_ns - first_ns + 1) / 2000.0))::BIGINT AS w,
           last_ns FROM nx_Profile
),
packets AS (
    SELECT pcore_idx, start_ts, transfer_bytes FROM DmaPacket WHERE NOT hbm_only
    UNION ALL
    SELECT d.pcore_idx, d.start_ts, d.transfer_bytes
    FROM DmaPacket d JOIN DmaPacketAggregated a ON a.id = d.packet_aggregation_id
    WHERE hbm_only AND (a.source NOT IN ('[[SB]]', '[[PSUM]]') OR a.dest NOT IN ('[SB]', '[PSUM]'))
),
b AS (
    SELECT coalesce(pcore_idx, 0) AS pcore_idx,
           (start_ts - p.first_ns) // p.w AS k, sum(transfer_bytes) AS bytes
    FROM packets, p GROUP BY ALL
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
