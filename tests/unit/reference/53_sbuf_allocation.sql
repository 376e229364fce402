-- table: SbufAllocation
-- requires: nx_OnchipAlloc
-- The reference for src/ingest/sbuf_allocation.c, which replaced this query: sorting
-- every SBUF allocation row in DuckDB took memory outside its pool that grew with the
-- table (docs/memory.md). tests/unit/test_derive_ref.c compares the two.
-- SBUF occupancy intervals. nx_OnchipAlloc is built while the instruction and DMA
-- packet records stream (src/ingest/occupancy.c): a range of SBUF becomes live when an
-- instruction (dst, at its start) or a DMA packet (at its start) writes it, in-place
-- updates continue it, and it stays live until the end of the last read of any of its
-- bytes before they are all overwritten. One row per allocation and partition group: a
-- range spanning several groups has a row in each, with the same times and bytes.
-- Addresses are byte offsets inside each partition; rows with negative bytes are the
-- usage corrections for partial overwrites and are not allocations.
SELECT a.start_ts, a.end_ts, a.start_address, a.end_address, a.unit AS partition,
       a.source AS op_source_type,
       s.opcode, s.operands,
       b.queue_name, b.block_id, nullif(b.variable, '') AS tensor_name,
       a.pcore_idx
FROM nx_OnchipAlloc a
-- Equality-only join keys (NULL where the row's source is the other kind) keep both
-- joins hash joins; a filter in the ON clause of an outer join would not.
LEFT JOIN nx_StaticInst s
       ON s.engine = a.engine
      AND s.pc = CASE WHEN a.source = 'instruction' THEN a.pc END
LEFT JOIN nx_DmaBlock b ON b.block = CASE WHEN a.source = 'dma' THEN a.block END
WHERE a.mem = 'SBUF' AND a.bytes > 0
ORDER BY a.pcore_idx, a.start_ts, a.unit, a.start_address
