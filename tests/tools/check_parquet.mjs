// check_parquet.mjs: reads a parquet file with hyparquet, an implementation independent
// of DuckDB, and prints {"num_rows", "columns": [{"name","type","logical"}], "rows": [...]}
// as JSON, so tests can cross-check what our writer produced.
// usage: node check_parquet.mjs FILE [MAX_ROWS]
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const [file, maxArg] = process.argv.slice(2)
const max = Number(maxArg ?? 5)
const buf = await asyncBufferFromFile(file)
const meta = await parquetMetadataAsync(buf)
const columns = meta.schema.slice(1).map(s => ({
  name: s.name,
  type: s.type ?? null,
  logical: s.logical_type?.type ?? s.converted_type ?? null,
  repetition: s.repetition_type ?? null,
}))
const rows = await parquetReadObjects({ file: buf, compressors, rowEnd: max })
const json = JSON.stringify({ num_rows: Number(meta.num_rows), columns, rows },
  (k, v) => typeof v === 'bigint' ? v.toString() : v)
console.log(json)
