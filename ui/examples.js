/* examples.js: the example queries of the SQL page. Provenance: the seed documents of
 * this project, AWS's agent skills "neuron-nki-profile-querying" (headline metrics, time by
 * engine and opcode, NKI source line hotspots, DMA packet check, LDWEIGHTS/MATMUL overlap)
 * and "neuron-explorer-profile-schema" v1.0.0 (SchemaFields search), as gathered in the
 * team's seed folder; the SQL is theirs, reformatted, with the pandas example turned into
 * one SELECT. The last two are ours. */
'use strict';

const EXAMPLES = [
  ['Headline metrics', 'SELECT total_time, mfu_estimated_percent, tensor_engine_active_time_percent,\n' +
    '       vector_engine_active_time_percent, dma_active_time_percent, hbm_read_bytes, hbm_write_bytes\nFROM Summary'],
  ['Time by engine and opcode', 'SELECT engine, opcode, COUNT(*) AS cnt, SUM(duration_ns) AS total_dur_ns,\n' +
    '       SUM(evt_wait_time_ns) AS total_evt_wait_ns\nFROM Instruction GROUP BY engine, opcode ORDER BY total_dur_ns DESC'],
  ['NKI source line hotspots', 'SELECT bir_debug_info_source_location, engine, opcode, COUNT(*) AS cnt,\n' +
    '       SUM(duration_ns) AS total_dur_ns\nFROM Instruction WHERE bir_debug_info_source_location IS NOT NULL\n' +
    'GROUP BY bir_debug_info_source_location, engine, opcode\nORDER BY total_dur_ns DESC LIMIT 10'],
  ['DMA packets captured?', 'SELECT COUNT(*) AS cnt FROM DmaPacket'],
  ['Fields about matmuls', "SELECT table_name, field_name, field_description, field_unit\n" +
    "FROM SchemaFields WHERE field_name ILIKE '%matmul%'"],
  ['LDWEIGHTS / MATMUL overlap', "SELECT CASE WHEN lw.end_ts <= mm.start_ts THEN 'lw_before'\n" +
    "            WHEN lw.start_ts >= mm.end_ts THEN 'lw_after'\n            ELSE 'overlap' END AS rel,\n" +
    "       COUNT(*) AS cnt\nFROM Instruction mm JOIN Instruction lw ON mm.bir_id = lw.bir_id\n" +
    "WHERE mm.opcode = 'MATMUL' AND lw.opcode = 'LDWEIGHTS'\n" +
    "  AND mm.tensor_instruction_type = 'REGULAR' AND lw.tensor_instruction_type = 'REGULAR'\nGROUP BY rel"],
  ['Instructions, first 1000', 'SELECT * FROM Instruction ORDER BY start_ts LIMIT 1000'],
  ['Busiest framework events', 'SELECT name, COUNT(*) AS cnt, SUM(duration_ns) AS total_ns\n' +
    'FROM SystemProfileEvents GROUP BY name ORDER BY total_ns DESC LIMIT 20'],
];
