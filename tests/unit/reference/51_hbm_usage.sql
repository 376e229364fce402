-- table: HbmUsage
-- requires: DmaPacket, DmaPacketAggregated
-- HBM throughput over time, bucketed like DmaUsage, counting only packets of transfers
-- with an HBM side (49_throughput_grid.sql).
SELECT * FROM nx_throughput_grid(true)
