-- table: DmaUsage
-- requires: DmaPacket
-- DMA throughput over time, every packet counted (49_throughput_grid.sql).
SELECT * FROM nx_throughput_grid(false)
