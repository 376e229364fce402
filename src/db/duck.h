/* SPDX-License-Identifier: MIT
 * duck.h: the ingest side's boundary to DuckDB (handle-level code uses db/duck_conn.h).
 *
 * Raw tables are produced by C row sources: a source fills batches of rows for one
 * schema table, and nx_duck_copy_source streams them through a DuckDB table function
 * straight into a parquet file (COPY (SELECT * FROM nx_source(k)) TO ...), so memory
 * stays bounded whatever the trace size. Derived tables are plain SQL run by
 * nx_duck_exec over views of the parquet files already written. */
#ifndef NX_DB_DUCK_H
#define NX_DB_DUCK_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "schema/schema.h"

struct nx_duck;

/* A batch of rows being filled for one table. Every cell starts NULL; a setter makes
 * it valid. Columns are addressed by field index in the schema table. */
struct nx_rowbuf;
size_t nx_rowbuf_capacity(const struct nx_rowbuf *b);
/* Where the rows' keys go (struct nx_row_keys): NULL when the batch takes none. */
uint32_t *nx_rowbuf_keys(struct nx_rowbuf *b);
void nx_rowbuf_i64(struct nx_rowbuf *b, size_t col, size_t row, int64_t v);
void nx_rowbuf_i32(struct nx_rowbuf *b, size_t col, size_t row, int32_t v);
void nx_rowbuf_f32(struct nx_rowbuf *b, size_t col, size_t row, float v);
void nx_rowbuf_f64(struct nx_rowbuf *b, size_t col, size_t row, double v);
void nx_rowbuf_bool(struct nx_rowbuf *b, size_t col, size_t row, bool v);
/* Copies s; a NULL s leaves the cell NULL. */
void nx_rowbuf_str(struct nx_rowbuf *b, size_t col, size_t row, const char *s);
void nx_rowbuf_strn(struct nx_rowbuf *b, size_t col, size_t row, const char *s, size_t len);
/* Like nx_rowbuf_str without copying s: the cell points at it. Only for a string that
 * outlives the statement or file write the batch is for (a literal, the parsed NEFF);
 * DuckDB's COPY and our writer copy the bytes before that ends. */
void nx_rowbuf_str_kept(struct nx_rowbuf *b, size_t col, size_t row, const char *s);
/* The same for len bytes at s (strlen(s) when s is NUL-terminated, made once by the
 * caller for a string set in many rows). */
void nx_rowbuf_str_kept_len(struct nx_rowbuf *b, size_t col, size_t row, const char *s,
			    size_t len);
/* List columns (BIGINT[], VARCHAR[]): a cell is set once. nx_rowbuf_strlist makes the
 * items of s split at every sep, as DuckDB's string_split does ("" is [""], "1,2" is
 * ["1", "2"]); a NULL s leaves the cell NULL. nx_rowbuf_i64list makes the n items of v.
 * A scalar setter on a list column makes a list of that one value; a list setter on a
 * scalar column sets its first item (strlist: all of s). */
void nx_rowbuf_strlist(struct nx_rowbuf *b, size_t col, size_t row, const char *s, char sep);
void nx_rowbuf_i64list(struct nx_rowbuf *b, size_t col, size_t row, const int64_t *v, size_t n);

/* Column indices are resolved once by name so sources read like the schema. */
struct nx_colmap {
	const struct nx_table *table;
	int idx[128];
};
/* Resolves names[i] (NULL-terminated list) into map->idx[i]; fails with NX_EUSAGE when a
 * name is not a field of the table (a programming error caught by tests). */
int nx_colmap_init(struct nx_colmap *map, const char *table, const char *const *names,
		   struct nx_err *err);

/* A row key's absence: the row's keyed columns are not known to follow its key. */
#define NX_ROW_NOKEY UINT32_MAX

/* A source's promise that some of its columns are functions of a key per row: on every
 * row of the same key, column c (bit c % 64 of cols[c / 64]) holds the same value, NULL
 * or not. Keys are 0 .. n - 1, or NX_ROW_NOKEY for a row that promises nothing (an
 * unknown instruction). Our parquet writer then gives such a cell its dictionary index
 * from a memo of the key instead of a hash (db/parquet_write.h, "Keyed columns"); it
 * checks each value against the memo's, so a broken promise costs time, never data. */
struct nx_row_keys {
	uint32_t n;
	uint64_t cols[2];
	/* Optional (NULL: none; only with n <= NX_ROW_KEYS_FILLED): writes the keyed cells
	 * of key `key` into row `row` of b, given arg. With it, the source leaves the keyed
	 * cells of every row with a key unwritten in a batch that takes keys
	 * (nx_rowbuf_keys not NULL): our writer takes them from rows it had filled once, one
	 * per key. Called on the writer's thread while next runs on another: it reads only
	 * what does not change. DuckDB's writer takes no keys, and gets every cell. */
	void (*fill)(void *arg, uint32_t key, struct nx_rowbuf *b, size_t row);
	void *arg;
};
/* The keys a source with a fill may have at most: our writer keeps a row per key (about
 * 7 MB of batches for Instruction's 51 columns at the most). */
#define NX_ROW_KEYS_FILLED 8192u

struct nx_row_source {
	const struct nx_table *table;
	void *self;
	/* Fills rows [0, n) of b with n <= capacity and returns n; 0 means the end. A
	 * negative return is an error described in err. With keys set (NULL: none), next
	 * also writes each row's key to b->keys[row] whenever b->keys is not NULL (only
	 * batches bound for our writer have it). */
	int (*next)(void *self, struct nx_rowbuf *b, struct nx_err *err);
	const struct nx_row_keys *keys;
};

/* Runs a source to its end into a scratch batch, without a database (fuzzing and
 * counting); *rows gets the number of rows produced. */
int nx_duck_drain_source(struct nx_row_source *src, uint64_t *rows, struct nx_err *err);

/* Opens an in-memory database. threads = 0 lets DuckDB choose; memory_limit may be NULL. */
int nx_duck_open(struct nx_duck **out, unsigned threads, const char *memory_limit,
		 struct nx_err *err);
void nx_duck_close(struct nx_duck *d);
/* *out gets a handle of its own on d's database (its own connections: one runs its
 * statements while d's run others, on another thread), without the ingest's nx_source
 * function; closed with nx_duck_close before d, which leaves the database open. */
int nx_duck_open_sibling(struct nx_duck *d, struct nx_duck **out, struct nx_err *err);
/* Asks the statement running on d (from another thread) to stop: it fails with
 * DuckDB's "Interrupted" error. Harmless when nothing runs. */
void nx_duck_interrupt(struct nx_duck *d);
/* Runs one or more statements, discarding results. */
int nx_duck_exec(struct nx_duck *d, const char *sql, struct nx_err *err);
/* Runs a query and returns the first column of the first row as int64 (NULL -> 0). */
int nx_duck_query_i64(struct nx_duck *d, const char *sql, int64_t *out, struct nx_err *err);
/* Runs a query and returns the first column of the first row as double (NULL -> NaN). */
int nx_duck_query_f64(struct nx_duck *d, const char *sql, double *out, struct nx_err *err);
/* Streams a row source into a zstd parquet file; *rows gets the number written. The
 * source's own error (e.g. a corrupt trace chunk) is returned as is, with its message. */
int nx_duck_copy_source(struct nx_duck *d, struct nx_row_source *src, const char *path,
			uint64_t *rows, struct nx_err *err);
/* Like nx_duck_copy_source, written by our parquet writer (db/parquet_write.h) on the
 * calling thread, or by DuckDB's COPY with NX_INGEST_WRITER=duckdb: the same rows in the
 * same row groups, at about half DuckDB's CPU (docs/memory.md, "Our writer for the raw
 * tables"). The ingest's tables derived in C go this way. */
int nx_duck_write_source(struct nx_duck *d, struct nx_row_source *src, const char *path,
			 uint64_t *rows, struct nx_err *err);
/* Like nx_duck_write_source, with src->next run ahead on a thread of its own while the
 * calling thread encodes (nx_duck_ahead_start, under its rule: the source shares no
 * state with what runs meanwhile): the same file, for a source that costs about as much
 * as its encoding (DmaPacketAggregated's pass). */
int nx_duck_write_ahead(struct nx_duck *d, struct nx_row_source *src, const char *path,
			uint64_t *rows, struct nx_err *err);
/* Like nx_duck_copy_source, with src->next run on a thread of its own up to a few
 * batches ahead of DuckDB's writer, so that reading and writing overlap, in two steps so
 * that the source can read before the database exists (the trace ingest starts it before
 * DuckDB opens). nx_duck_ahead_start runs src on its thread, filling a bounded queue;
 * nx_duck_copy_ahead writes it, and stops and frees a whichever way it ends;
 * nx_duck_ahead_stop (NULL: nothing) stops and frees one that is not copied. The source
 * must not share state with what the calling thread or other sources touch meanwhile
 * (its callbacks, e.g. warnings, run on that thread); it runs to its end, its error or
 * the copy's end, and has stopped when the copy returns. Row groups hold row_group rows
 * (0: as nx_duck_copy_source; NX_INGEST_ROW_GROUP overrides both). With own_strings
 * the batches keep their strings in arenas of their own, cheaper than DuckDB's string
 * heap: only nx_pqw_write_ahead (db/parquet_write.h) can write such a source
 * (nx_duck_copy_ahead refuses). */
struct nx_duck_ahead;
int nx_duck_ahead_start(struct nx_row_source *src, bool own_strings,
			struct nx_duck_ahead **out, struct nx_err *err);
int nx_duck_copy_ahead(struct nx_duck *d, struct nx_duck_ahead *a, const char *path,
		       unsigned long row_group, uint64_t *rows, struct nx_err *err);
void nx_duck_ahead_stop(struct nx_duck_ahead *a);
/* Like nx_duck_copy_source, as the parts of a split table (db/table_files.h): files
 * dir/<T>_0.parquet, <T>_1.parquet, ... of 64 row groups each (NX_INGEST_PART_GROUPS),
 * so no file's metadata grows with the table (db/parquet_concat.h joins them later).
 * No rows: no file. src runs ahead on a thread of its own, as with nx_duck_copy_ahead
 * (and under its rule: it shares no state with what runs meanwhile), and our parquet
 * writer (db/parquet_write.h) writes it on the calling thread; a failure names the
 * table and leaves no part. With NX_INGEST_WRITER=duckdb, DuckDB's COPY writes it
 * instead: two COPYs on two threads, each some of the columns, into files joined side
 * by side (db/parquet_zip.h), the same rows in the same row groups as one COPY writes
 * (NX_INGEST_WRITERS=1 makes it one); d gets a second connection for that. */
/* Whether NX_INGEST_WRITER, if set, names a writer (ours or duckdb): a usage error
 * naming it otherwise, so an ingest can refuse it before any work. */
int nx_duck_part_writer_check(struct nx_err *err);
int nx_duck_copy_source_parts(struct nx_duck *d, struct nx_row_source *src, const char *dir,
			      uint64_t *rows, struct nx_err *err);
/* Runs COPY (<select_sql>) TO path as zstd parquet; *rows gets the row count. */
int nx_duck_copy_query(struct nx_duck *d, const char *select_sql, const char *path,
		       uint64_t *rows, struct nx_err *err);

/* Lists the output column names of a SELECT (caller frees each name and the array). */
int nx_duck_columns(struct nx_duck *d, const char *select_sql, char ***names, size_t *n,
		    struct nx_err *err);

/* Kinds of cell handed to nx_duck_row_fn. */
enum nx_cell_kind { NX_CELL_NULL, NX_CELL_INT, NX_CELL_FLOAT, NX_CELL_BOOL, NX_CELL_TEXT };
typedef void (*nx_duck_row_fn)(void *arg, size_t row, const char *column, int kind,
			       const char *text);
/* Runs a query and hands every cell to fn as text (numbers in C locale, floats with
 * 9 significant digits). */
int nx_duck_query_cells(struct nx_duck *d, const char *sql, nx_duck_row_fn fn, void *arg,
			struct nx_err *err);
/* The same through duckdb_query, DuckDB's own execution path for SQL text (one bind, its
 * own wait for worker threads), as a program using DuckDB directly runs it: the
 * baseline of bench/server.sh. Only sql's last statement's result is handed out. */
int nx_duck_query_cells_plain(struct nx_duck *d, const char *sql, nx_duck_row_fn fn,
			      void *arg, struct nx_err *err);

/* A chunk of a query's result streamed to C (nx_duck_scan): up to a vector of rows.
 * The accessors fill *v and return true, or return false for a NULL cell; a column's
 * type must be the accessor's (i64: BIGINT, INTEGER or BOOLEAN; f64: DOUBLE or FLOAT;
 * str: VARCHAR, whose bytes are valid during the call only). */
struct nx_dchunk;
size_t nx_dchunk_rows(const struct nx_dchunk *c);
bool nx_dchunk_i64(const struct nx_dchunk *c, size_t col, size_t row, int64_t *v);
bool nx_dchunk_f64(const struct nx_dchunk *c, size_t col, size_t row, double *v);
bool nx_dchunk_str(const struct nx_dchunk *c, size_t col, size_t row, const char **s,
		   size_t *len);
/* Column col as an array, for a loop that reads every row without a call per cell: its
 * values when it is BIGINT (NULL for another type), *valid its validity bits (NULL: no
 * NULL in the chunk; row r is valid when bit r % 64 of word r / 64 is set). */
const int64_t *nx_dchunk_i64s(const struct nx_dchunk *c, size_t col, const uint64_t **valid);
static inline bool nx_dchunk_valid(const uint64_t *valid, size_t row)
{
	return !valid || (valid[row >> 6] >> (row & 63)) & 1;
}
/* Called for each chunk in order; a non-zero return (an error set in err) stops the
 * scan and is returned. */
typedef int (*nx_dchunk_fn)(void *arg, const struct nx_dchunk *c, struct nx_err *err);
/* Runs one query as a streaming result and hands its chunks to fn: the result is never
 * whole in memory. Result columns must be BIGINT, INTEGER, BOOLEAN, DOUBLE, FLOAT or
 * VARCHAR (cast in SQL otherwise). */
int nx_duck_scan(struct nx_duck *d, const char *sql, nx_dchunk_fn fn, void *arg,
		 struct nx_err *err);

/* Registers on d's first connection the SQL function name(arg, ...) -> BOOLEAN, of n
 * arguments of the kinds given (NX_CELL_INT: BIGINT, NX_CELL_FLOAT: DOUBLE, NX_CELL_BOOL,
 * NX_CELL_TEXT: VARCHAR), true on every row, NULLs included, never folded away: each
 * chunk of its arguments goes to fn(arg, ...) as a scan's would, while the query calling
 * it runs (in the WHERE of a CREATE TABLE ... AS, fn sees the rows being copied; on one
 * thread, in the order they are read). A non-zero return of fn fails that query with the
 * message fn set. arg must outlive every query calling the function. */
int nx_duck_chunk_function(struct nx_duck *d, const char *name, const enum nx_cell_kind *kinds,
			   size_t n, nx_dchunk_fn fn, void *arg, struct nx_err *err);

/* Registers on d's first connection the SQL function name(VARCHAR) -> type, type an ENUM
 * type of at most 65535 values (its SQL name, e.g. tl.ev0_track): the value of the text,
 * NULL for NULL, and a failure of the query for text that is none of its values, as the
 * cast to the type gives. Unlike the cast, DuckDB runs it once per entry of a dictionary
 * vector (a parquet column chunk's), not once per row (duck_enum.c). */
int nx_duck_enum_function(struct nx_duck *d, const char *name, const char *type,
			  struct nx_err *err);

/* A streaming result read chunk by chunk by its caller, on d's first connection or its
 * second (so that two can be read in step). */
struct nx_duck_cursor;
int nx_duck_cursor_open(struct nx_duck *d, const char *sql, bool second,
			struct nx_duck_cursor **out, struct nx_err *err);
/* The next chunk into *chunk, valid until the next call; NULL at the end. */
int nx_duck_cursor_next(struct nx_duck_cursor *c, const struct nx_dchunk **chunk,
			struct nx_err *err);
void nx_duck_cursor_close(struct nx_duck_cursor *c);

/* Rows appended to a table of d (DuckDB's appender, on a connection of its own, so
 * that it can write while a scan or a cursor reads): each row's cells in column order,
 * then nx_duck_append_end_row. Errors surface at the end of a row or at close. table is
 * a name, or "catalog.name" for a table of an attached database. */
struct nx_duck_appender;
int nx_duck_appender_open(struct nx_duck *d, const char *table, struct nx_duck_appender **out,
			  struct nx_err *err);
void nx_duck_append_i64(struct nx_duck_appender *a, int64_t v);
void nx_duck_append_f64(struct nx_duck_appender *a, double v);
void nx_duck_append_bool(struct nx_duck_appender *a, bool v);
/* s of len bytes; a NULL s appends NULL. */
void nx_duck_append_str(struct nx_duck_appender *a, const char *s, size_t len);
void nx_duck_append_null(struct nx_duck_appender *a);
int nx_duck_append_end_row(struct nx_duck_appender *a, struct nx_err *err);
/* The same appender, its rows buffered in a chunk of the given kinds (one per column:
 * NX_CELL_INT BIGINT, NX_CELL_FLOAT DOUBLE, NX_CELL_BOOL BOOLEAN, NX_CELL_TEXT VARCHAR)
 * that DuckDB casts to the table's types a chunk at a time: for an ENUM column, one
 * vectorized cast per chunk rather than one per value (appending VARCHAR values to an
 * ENUM column row by row cost 3.4 times appending them to a VARCHAR column;
 * docs/memory.md, "The events part on two threads"). The append calls are the same;
 * errors of a row surface when its chunk is appended (every 2048 rows) or at close. */
int nx_duck_appender_open_typed(struct nx_duck *d, const char *table,
				const enum nx_cell_kind *kinds, size_t n,
				struct nx_duck_appender **out, struct nx_err *err);
/* For a typed appender: the rows appended so far that filled whole chunks are committed
 * to the table; the rest (fewer than 2048) stay in the appender's chunk for more rows or
 * the close. Appends that begin and end on whole vectors of the table (2048 rows) keep
 * their version info small: DuckDB holds 32 KB per vector an append covers in part until
 * the next checkpoint (docs/memory.md, "Version info of appends"). */
int nx_duck_appender_commit(struct nx_duck_appender *a, struct nx_err *err);
/* Before a typed appender's first row: the table holds table_rows rows, so its first
 * chunk is cut at the table's next multiple of 2048 rows and each commit after it ends on
 * a whole vector. */
void nx_duck_appender_align(struct nx_duck_appender *a, uint64_t table_rows);
/* Flushes and frees a (NULL: nothing); the rows are in the table once it returns 0. */
int nx_duck_appender_close(struct nx_duck_appender *a, struct nx_err *err);
/* Runs sql on the connection of d's appenders: after "BEGIN TRANSACTION" there, the rows
 * every appender of d flushes or closes are in that transaction until "COMMIT" (a
 * committed transaction's rows go at the tables' ends) or "ROLLBACK" there. */
int nx_duck_appends_exec(struct nx_duck *d, const char *sql, struct nx_err *err);

/* Locks the database down before anything reads a file: files can then be read only
 * below dirs[0..n) (allowed_directories), all other external access (other files,
 * ATTACH, INSTALL, COPY elsewhere) is off, and the configuration is locked so no later
 * statement can undo this. Views over those directories' parquet files still work.
 * DuckDB spills into temp_dir (a private directory) or, when NULL, nowhere
 * (nx_duck_con_sandbox). */
int nx_duck_sandbox(struct nx_duck *d, const char *const *dirs, size_t n, const char *temp_dir,
		    struct nx_err *err);

/* Test hook: fn(arg, d) runs on each database just before nx_duck_close closes it, so a
 * test can inspect a database that code under test opened (NULL removes it). */
typedef void (*nx_duck_close_hook)(void *arg, struct nx_duck *d);
void nx__duck_set_close_hook(nx_duck_close_hook fn, void *arg);

/* Appends s as a single-quoted SQL string literal. Every literal built from a file
 * name or user input goes through here. */
void nx_sql_quote(struct nx_strbuf *out, const char *s);
/* Appends s as a double-quoted SQL identifier (table, view or column name). */
void nx_sql_quote_ident(struct nx_strbuf *out, const char *s);

#endif
