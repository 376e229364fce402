/* SPDX-License-Identifier: MIT
 * flow_trigger.c: Flow's DGE_TRIGGER edges from the DmaPacketAggregated pass (see
 * flow_trigger.h). */
#include "common/compat.h"
#include "ingest/flow_trigger.h"
#include "db/profile_views.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "ingest/internal_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F NX_INTERNAL_FIELD

/* Flow's columns, as its SQL file reads them back. */
static const struct nx_field edge_fields[] = {
	F("in_id", "integer", "int64"), F("out_id", "integer", "int64"),
	F("in_table", "string", ""), F("out_table", "string", ""),
	F("dependency_type", "string", ""), F("gap_time", "integer", "int64"),
};
static const struct nx_table edge_table = NX_INTERNAL_TABLE("nx_FlowEdges", edge_fields);

int nx_flow_trig_open(struct nx_flow_trig *f, const char *dir, struct nx_err *err)
{
	char *path = nx_xasprintf("%s/flow-XXXXXX", dir);

	memset(f, 0, sizeof(*f));
	f->sorted = true;
	f->fd = mkstemp(path);
	if (f->fd < 0) {
		int rc = nx_errf(err, -errno, "cannot create '%s': %s", path, strerror(errno));
		free(path);
		return rc;
	}
	unlink(path);
	free(path);
	return 0;
}

static void flush(struct nx_flow_trig *f)
{
	const char *p = (const char *)f->buf;
	size_t len = f->n * sizeof(*f->buf);

	while (len && !f->rc) {
		ssize_t w = write(f->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			f->rc = nx_errf(&f->err, w < 0 ? -errno : -ENOSPC,
					"cannot write the DMA trigger edges: %s",
					strerror(w < 0 ? errno : ENOSPC));
		else {
			p += w;
			len -= (size_t)w;
		}
	}
	f->n = 0;
}

void nx_flow_trig_reset(struct nx_flow_trig *f)
{
	f->n = 0;
	f->edges = 0;
	f->last_out = 0;
	f->sorted = true;
	if (!f->rc && (ftruncate(f->fd, 0) || lseek(f->fd, 0, SEEK_SET) < 0))
		f->rc = nx_errf(&f->err, -errno, "cannot truncate the DMA trigger edges: %s",
				strerror(errno));
}

void nx_flow_trig_add(struct nx_flow_trig *f, uint64_t in_id, uint64_t out_id, int64_t gap)
{
	/* out_id is a BIGINT column: its order is the signed one */
	if (f->edges && (int64_t)out_id <= (int64_t)f->last_out)
		f->sorted = false;
	f->last_out = out_id;
	f->edges++;
	f->buf[f->n++] = (struct nx_flow_edge){ .in_id = in_id, .out_id = out_id, .gap = gap };
	if (f->n == NX_ARRAY_SIZE(f->buf))
		flush(f);
}

struct edge_src {
	struct nx_flow_trig *f;
	uint64_t left;
	off_t off;
};

static int edge_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct edge_src *s = self;
	struct nx_flow_edge e[256];
	size_t cap = nx_rowbuf_capacity(b), row = 0;

	while (row < cap && s->left) {
		size_t want = s->left < NX_ARRAY_SIZE(e) ? (size_t)s->left : NX_ARRAY_SIZE(e);
		if (want > cap - row)
			want = cap - row;
		ssize_t got = pread(s->f->fd, e, want * sizeof(*e), s->off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || got % (ssize_t)sizeof(*e))
			return nx_errf(err, got < 0 ? -errno : -EIO,
				       "cannot read the DMA trigger edges back");
		size_t n = (size_t)got / sizeof(*e);
		for (size_t i = 0; i < n; i++, row++) {
			nx_rowbuf_i64(b, 0, row, (int64_t)e[i].in_id);
			nx_rowbuf_i64(b, 1, row, (int64_t)e[i].out_id);
			nx_rowbuf_str(b, 2, row, "Instruction");
			nx_rowbuf_str(b, 3, row, "DmaPacketAggregated");
			nx_rowbuf_str(b, 4, row, "DGE_TRIGGER");
			nx_rowbuf_i64(b, 5, row, e[i].gap);
		}
		s->off += got;
		s->left -= n;
	}
	return (int)row;
}

/* The edges by the SQL join (tests/unit/reference/40_flow.sql's first part);
 * Instruction may still be in parts here. */
static int join_sql(struct nx_strbuf *q, const char *dir, const char *staging,
		    struct nx_err *err)
{
	char *x = nx_path_join(staging, "nx_DmaTransfer.parquet");
	char *a = nx_path_join(dir, "DmaPacketAggregated.parquet");

	nx_strbuf_addstr(q, "SELECT i.id AS in_id, a.id AS out_id, 'Instruction' AS in_table, "
			    "'DmaPacketAggregated' AS out_table, 'DGE_TRIGGER' AS dependency_type, "
			    "a.start_ts - i.end_ts AS gap_time FROM read_parquet(");
	nx_sql_quote(q, x);
	nx_strbuf_addstr(q, ") x JOIN read_parquet(");
	nx_sql_quote(q, a);
	nx_strbuf_addstr(q, ") a ON a.id = x.transfer JOIN ");
	int rc = nx_db_add_table_scan(q, dir, "Instruction", err);
	nx_strbuf_addstr(q, " i ON i.id = x.trigger ORDER BY out_id, in_id");
	free(x);
	free(a);
	return rc;
}

int nx_flow_trig_write(struct nx_flow_trig *f, struct nx_duck *d, const char *dir,
		       const char *staging, const char *path, bool exact, uint64_t *rows,
		       struct nx_err *err)
{
	char *tmp = nx_path_join(staging, ".nx_FlowEdges_unsorted.parquet");
	struct nx_strbuf q = NX_STRBUF_INIT;
	struct edge_src s = { .f = f, .left = f->edges };
	struct nx_row_source src = { .table = &edge_table, .self = &s, .next = edge_next };
	int rc;

	*rows = 0;
	flush(f);
	if (f->rc) {
		*err = f->err;
		rc = f->rc;
	} else if (!exact) {
		rc = join_sql(&q, dir, staging, err);
		if (!rc)
			rc = nx_duck_copy_query(d, q.buf, path, rows, err);
	} else if (f->sorted) {
		rc = nx_duck_write_source(d, &src, path, rows, err);
	} else {
		rc = nx_duck_write_source(d, &src, tmp, rows, err);
		nx_strbuf_addstr(&q, "SELECT * FROM read_parquet(");
		nx_sql_quote(&q, tmp);
		nx_strbuf_addstr(&q, ") ORDER BY out_id, in_id");
		if (!rc)
			rc = nx_duck_copy_query(d, q.buf, path, rows, err);
		remove(tmp);
	}
	nx_strbuf_release(&q);
	free(tmp);
	return rc;
}

void nx_flow_trig_release(struct nx_flow_trig *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
