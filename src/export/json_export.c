/* SPDX-License-Identifier: MIT
 * json_export.c: the legacy JSON export (see json_export.h). Each member is one query
 * per file (or slice) of its table (db/duck_stream.h); the result columns, already named
 * as the JSON fields, become the records' keys, and each row is formatted straight into
 * a buffer that is written out every 256 KiB. */
#include "common/compat.h"
#include "export/json_export.h"
#include "common/fsutil.h"
#include "common/json_writer.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/duck_stream.h"
#include "db/parquet_slice.h"
#include "db/table_files.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_AT (256u << 10)
#define PROGRESS_EVERY (1u << 20)

/* One member of the document: the records of one table. */
struct member {
	const char *key;
	const char *table;
	const char *select; /* the record's fields: SQL expressions named as in the JSON */
	bool one;           /* a single object (the first row) instead of an array */
};

/* The fields and their sources are listed in docs/formats/json.md: keep both in step.
 * "summary" comes first: a document is recognised by it (is_json_export). */
static const struct member members[] = {
	{ "summary", "Summary", "*", false },
	{ "instruction", "Instruction",
	  "start_ts AS timestamp, duration_ns AS duration, "
	  "coalesce(timeline_track, engine) AS label, hlo_name, opcode, operands, engine, "
	  "pcore_idx, id, pc, bir_id, layer, nki_source_location, evt_wait_time_ns", false },
	{ "dma", "DmaPacketAggregated",
	  "start_ts AS timestamp, duration_ns AS duration, variable, "
	  "transfer_bytes AS transfer_size, source, dest, op, queue_name, "
	  "queue_type::VARCHAR AS queue_type, pcore_idx, id, block_id, throughput", false },
	{ "dma_packet", "DmaPacket",
	  "start_ts AS timestamp, duration_ns AS duration, queue_name, "
	  "queue_type::VARCHAR AS queue_type, variable, transfer_bytes AS transfer_size, "
	  "pcore_idx, engine_idx, id, packet_aggregation_id", false },
	{ "semaphore", "SemaphoreUpdate",
	  "timestamp, id AS semaphore, value, update_source, update_operation_type, pcore_idx",
	  false },
	{ "error", "Error",
	  "timestamp, type::VARCHAR AS type, description, error_type_id, pcore_idx", false },
	{ "throttle", "Throttle", "timestamp, duration, type, k, n, pcore_idx", false },
	{ "neff_node", "TensorInfo", "variable_name, type, shape, size, format, pcore_idx", false },
	{ "trace_events", "SystemProfileEvents",
	  "start_ts AS timestamp, duration_ns AS duration, name, id, trace_event_source, "
	  "instance_id, process_id, thread_id, nc_idx, pcore_idx, worker_gid", false },
	{ "profile_info", "Metadata",
	  "profile_name, profile_schema_version, explorer_version, instance_type, is_simulation, "
	  "neuroncore_idx, neuron_device_idx, first_hw_timestamp, last_hw_timestamp", true },
};

struct writer {
	FILE *out;
	struct nx_strbuf buf;
	struct nx_strbuf *keys; /* per column: ",\"name\":" ('{' instead of ',' for the first) */
	size_t nkeys;
	uint64_t rows;
	const struct member *m;
	const struct nx_json_opts *o;
	double t0;
	bool write_failed; /* the error is the output's, not the table's */
	struct nx_err *err;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int flush(struct writer *w)
{
	if (w->buf.len && fwrite(w->buf.buf, 1, w->buf.len, w->out) != w->buf.len) {
		w->write_failed = true;
		return nx_errf(w->err, errno ? -errno : -EIO, "cannot write the JSON output: %s",
			       strerror(errno ? errno : EIO));
	}
	nx_strbuf_reset(&w->buf);
	return 0;
}

static void head(void *arg, const char *const *names, size_t n)
{
	struct writer *w = arg;

	if (w->keys) /* the member's next file: the same columns */
		return;
	w->keys = nx_xcalloc(n ? n : 1, sizeof(*w->keys));
	w->nkeys = n;
	for (size_t i = 0; i < n; i++) {
		nx_strbuf_addch(&w->keys[i], i ? ',' : '{');
		nx_json_quote(&w->keys[i], names[i], strlen(names[i]));
		nx_strbuf_addch(&w->keys[i], ':');
	}
}

static void add_int(struct nx_strbuf *b, int64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	nx_strbuf_add(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* A number as the summary exports write it (9 significant digits); JSON has no NaN. */
static void add_float(struct nx_strbuf *b, double v)
{
	char tmp[32];
	int n;

	if (!isfinite(v)) {
		nx_strbuf_add(b, "null", 4);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.9g", v);
	nx_strbuf_add(b, tmp, (size_t)n);
}

static int row(void *arg, const struct nx_dcell *c, size_t n)
{
	struct writer *w = arg;
	struct nx_strbuf *b = &w->buf;

	if (w->rows++)
		nx_strbuf_add(b, ",\n", 2);
	for (size_t i = 0; i < n && i < w->nkeys; i++) {
		nx_strbuf_add(b, w->keys[i].buf, w->keys[i].len);
		switch (c[i].kind) {
		case NX_D_NULL: nx_strbuf_add(b, "null", 4); break;
		case NX_D_INT: add_int(b, c[i].i); break;
		case NX_D_BOOL: nx_strbuf_addstr(b, c[i].i ? "true" : "false"); break;
		case NX_D_FLOAT: add_float(b, c[i].f); break;
		case NX_D_TEXT: nx_json_quote(b, c[i].s, c[i].len); break;
		}
	}
	nx_strbuf_addch(b, '}');
	if (b->len >= FLUSH_AT) {
		int rc = flush(w);
		if (rc)
			return rc;
	}
	if (w->rows % PROGRESS_EVERY == 0) {
		struct nx_progress_event ev = { .kind = NX_PROGRESS_ROWS, .stage = "json",
						.table = w->m->key, .rows = w->rows,
						.seconds = now_s() - w->t0 };
		nx_progress_emit(w->o->progress, &ev);
	}
	return 0;
}

static void release_keys(struct writer *w)
{
	for (size_t i = 0; i < w->nkeys; i++)
		nx_strbuf_release(&w->keys[i]);
	free(w->keys);
	w->keys = NULL;
	w->nkeys = 0;
}

/* Streams the member's records from one parquet file. */
static int stream_file(struct writer *w, const char *path)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	nx_strbuf_addf(&sql, "SELECT %s FROM read_parquet(", w->m->select);
	nx_sql_quote(&sql, path);
	nx_strbuf_addstr(&sql, w->m->one ? ") LIMIT 1" : ")");
	rc = nx_duck_stream_named(sql.buf, head, row, w, w->err);
	nx_strbuf_release(&sql);
	return rc;
}

static int stream_piece(void *arg, const char *path, uint32_t index, struct nx_err *err)
{
	(void)index;
	(void)err;
	return stream_file(arg, path);
}

/* Streams one file of the member's table: a file of many row groups slice by slice
 * through the scratch directory. */
static int stream_table_file(struct writer *w, const char *path)
{
	if (w->m->one || !w->o->scratch)
		return stream_file(w, path);
	return nx_pq_each_slice(path, NX_JSON_SLICE_GROUPS, w->o->scratch, "json-slice", false,
				stream_piece, w, NULL, w->err);
}

/* Writes one member: "key":[records] (or "key":{record}). */
static int write_member(struct writer *w, const char *dir, const struct member *m, bool first)
{
	struct nx_table_file *f = NULL;
	size_t n = 0;
	int rc;

	w->m = m;
	w->rows = 0;
	w->t0 = now_s();
	nx_strbuf_addstr(&w->buf, first ? "{" : ",\n");
	nx_json_quote(&w->buf, m->key, strlen(m->key));
	nx_strbuf_addstr(&w->buf, m->one ? ":" : ":[\n");
	rc = nx_table_files_list(dir, NULL, NULL, &f, &n, w->err);
	for (size_t i = 0; !rc && i < n; i++) {
		if (strcmp(f[i].table, m->table) || (m->one && w->rows))
			continue;
		char *path = nx_path_join(dir, f[i].file);
		if ((rc = stream_table_file(w, path)) && !w->write_failed)
			nx_err_wrap(w->err, "reading table %s of '%s'", m->table, dir);
		free(path);
	}
	nx_table_files_free(f, n);
	release_keys(w);
	if (!rc) {
		if (m->one && !w->rows)
			nx_strbuf_addstr(&w->buf, "{}");
		else if (!m->one)
			nx_strbuf_addstr(&w->buf, w->rows ? "\n]" : "]");
		struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "json",
						.table = m->key, .how = "json", .rows = w->rows,
						.seconds = now_s() - w->t0 };
		nx_progress_emit(w->o->progress, &ev);
	}
	return rc;
}

int nx_export_json(const char *dir, FILE *out, const struct nx_json_opts *o,
		   struct nx_json_stats *stats, struct nx_err *err)
{
	static const struct nx_json_opts none = { 0 };
	struct writer w = { .out = out, .o = o ? o : &none, .err = err };
	struct nx_json_stats st = { 0 };
	char *fleet = nx_path_join(dir, NX_PROFILE_FLEET_MEMBERS);
	int rc = 0;

	if (!nx_is_dir(dir))
		rc = nx_errf(err, NX_ENOTFOUND, "profile directory '%s' does not exist", dir);
	else if (nx_is_file(fleet))
		rc = nx_errf(err, NX_EUSAGE, "'%s' is the index of a fleet run, which holds no "
			     "events of its own: export its member profiles (listed in %s) one "
			     "by one", dir, NX_PROFILE_FLEET_MEMBERS);
	free(fleet);
	for (size_t i = 0; !rc && i < NX_ARRAY_SIZE(members); i++) {
		rc = write_member(&w, dir, &members[i], i == 0);
		st.records += w.rows;
		if (!strcmp(members[i].key, "instruction"))
			st.instructions = w.rows;
	}
	if (!rc) {
		nx_strbuf_addstr(&w.buf, "}\n");
		rc = flush(&w);
	}
	nx_strbuf_release(&w.buf);
	if (!rc && stats)
		*stats = st;
	return rc;
}

static bool is_json_export(const uint8_t *h, size_t n)
{
	static const char head[] = "{\"summary\":[";

	return n >= sizeof(head) - 1 && !memcmp(h, head, sizeof(head) - 1);
}

const struct nx_out_kind nx_json_out_kind = { "a json export", is_json_export };
