/* SPDX-License-Identifier: MIT
 * h_timeline_chain.c: GET .../timeline/chain?table=&id=[&max=] (docs/api.md), the
 * dependency chain of one instruction or DMA transfer, walked upstream on the server
 * along Flow's edges: a transfer was started by the instruction that triggered it (its
 * DGE_TRIGGER edge); an instruction whose engine sat idle waiting on a semaphore
 * (evt_wait_time_ns > 0) was released by the producer of its SEMAPHORE edge that ended
 * last (the smallest gap_time). The walk goes through every event that waited and ends
 * at the first one that did not: an instruction that issued as soon as its engine was
 * free (the work the whole chain waited for), or an event with no edge into it. One
 * small query per step (Flow is stored in out_id order, so its row groups' statistics
 * find the edges of one event without a scan), at most `max` steps (64, at most 256),
 * all under one request. */
#include "common/compat.h"
#include "common/json_writer.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "server/duck_vec.h"
#include "server/http.h"
#include "server/lod.h"
#include "server/registry.h"
#include "server/timeline.h"

#include <stdlib.h>
#include <string.h>

#define CHAIN_DEFAULT 64
#define CHAIN_MAX 256

/* One event of the chain, and the edge from it to the event below it (downstream). */
struct step {
	int table; /* index into nx__lod_sources: 0 Instruction, 1 DmaPacketAggregated */
	int64_t id, core, start, end, wait, gap;
	bool core_null, wait_null, gap_null;
	char *track, *label, *edge;
};

/* What one step's query found: the event's row and its gating edge. */
struct found {
	bool row, edge;
	struct step ev;
	int up_table;
	int64_t up_id, up_gap;
	bool up_gap_null;
	char *up_type;
};

/* The step query's one row: core, track, s, e, label, wait, in_table, in_id, type, gap. */
static int step_chunk(void *a, duckdb_data_chunk chunk, struct nx_err *err)
{
	struct found *f = a;
	duckdb_vector v[10];
	char *t;

	(void)err;
	if (f->row || !duckdb_data_chunk_get_size(chunk))
		return 0;
	for (idx_t c = 0; c < 10; c++)
		v[c] = duckdb_data_chunk_get_vector(chunk, c);
	f->row = true;
	f->ev.core = nx__vec_i64(v[0], 0, &f->ev.core_null);
	f->ev.track = nx__vec_text(v[1], 0);
	f->ev.start = nx__vec_i64(v[2], 0, NULL);
	f->ev.end = nx__vec_i64(v[3], 0, NULL);
	f->ev.label = nx__vec_text(v[4], 0);
	f->ev.wait = nx__vec_i64(v[5], 0, &f->ev.wait_null);
	t = nx__vec_text(v[6], 0);
	if (t) {
		f->edge = true;
		f->up_table = strcmp(t, "Instruction") ? 1 : 0;
		f->up_id = nx__vec_i64(v[7], 0, NULL);
		f->up_type = nx__vec_text(v[8], 0);
		f->up_gap = nx__vec_i64(v[9], 0, &f->up_gap_null);
		free(t);
	}
	return 0;
}

/* The query of one step: the row of event (table s, id) and the edge into it that
 * gated it, if any (flow: the profile has Flow; wait: Instruction has evt_wait_time_ns). */
static void step_sql(struct nx_strbuf *sql, int s, int64_t id, bool flow, bool wait)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];

	nx_strbuf_addf(sql, "SELECT e.*, f.* FROM (SELECT pcore_idx::BIGINT AS core, "
			    "(%s)::VARCHAR AS track, start_ts::BIGINT AS s, end_ts::BIGINT AS e, "
			    "(%s)::VARCHAR AS label, %s AS wait FROM \"%s\" WHERE id = %" PRId64
			    " LIMIT 1) e LEFT JOIN (",
		       src->track, src->label, s == 0 && wait ? "evt_wait_time_ns::BIGINT"
		       : "NULL::BIGINT", src->table, id);
	if (flow)
		/* a transfer: its trigger; an instruction: the producer that ended last */
		nx_strbuf_addf(sql, "SELECT in_table::VARCHAR AS in_table, in_id::BIGINT AS in_id, "
				    "dependency_type::VARCHAR AS type, gap_time::BIGINT AS gap FROM "
				    "Flow WHERE out_table = '%s' AND out_id = %" PRId64 " AND "
				    "dependency_type = '%s' AND in_table IN ('Instruction', "
				    "'DmaPacketAggregated') ORDER BY gap_time NULLS LAST, in_table, "
				    "in_id LIMIT 1",
			       src->table, id, s == 0 ? "SEMAPHORE" : "DGE_TRIGGER");
	else
		nx_strbuf_addstr(sql, "SELECT NULL::VARCHAR AS in_table, NULL::BIGINT AS in_id, "
				      "NULL::VARCHAR AS type, NULL::BIGINT AS gap WHERE false");
	nx_strbuf_addstr(sql, ") f ON true");
}

/* An integer as the API sends it: a string beyond +-2^53. */
static void put_int(struct nx_jw *jw, int64_t v, bool null)
{
	struct nx_strbuf t = NX_STRBUF_INIT;

	if (null) {
		nx_jw_null(jw);
		return;
	}
	nx__tl_put_time(&t, v);
	nx_jw_raw(jw, t.buf);
	nx_strbuf_release(&t);
}

static void put_text(struct nx_jw *jw, const char *key, const char *s)
{
	nx_jw_key(jw, key);
	if (s)
		nx_jw_string(jw, s);
	else
		nx_jw_null(jw);
}

static void put_step(struct nx_jw *jw, const struct step *st)
{
	nx_jw_object_begin(jw);
	put_text(jw, "table", nx__lod_sources[st->table].table);
	nx_jw_key(jw, "kind");
	nx_jw_string(jw, nx__lod_sources[st->table].kind);
	nx_jw_key(jw, "id");
	put_int(jw, st->id, false);
	nx_jw_key(jw, "core");
	put_int(jw, st->core, st->core_null);
	put_text(jw, "track", st->track);
	nx_jw_key(jw, "start");
	put_int(jw, st->start, false);
	nx_jw_key(jw, "end");
	put_int(jw, st->end, false);
	put_text(jw, "label", st->label);
	nx_jw_key(jw, "wait");
	put_int(jw, st->wait, st->wait_null);
	put_text(jw, "edge", st->edge);
	nx_jw_key(jw, "gap");
	put_int(jw, st->gap, st->gap_null);
	nx_jw_object_end(jw);
}

static void step_release(struct step *st)
{
	free(st->track);
	free(st->label);
	free(st->edge);
}

/* Whether the profile's Instruction table has evt_wait_time_ns. */
static bool has_wait_column(struct nx_profile *p)
{
	struct nx_pdb_column *cols = NULL;
	struct nx_err err = { 0 };
	size_t n = 0;
	bool has = false;

	if (!nx__pfiles_find(&p->files, "Instruction") ||
	    nx__pdb_describe(p->db, "Instruction", &cols, &n, &err))
		return false;
	for (size_t i = 0; i < n; i++)
		has = has || !strcasecmp(cols[i].name, "evt_wait_time_ns");
	nx__pdb_columns_free(cols, n);
	return has;
}

struct walk {
	struct step *steps;
	size_t n;
	const char *end; /* why the walk stopped */
};

/* Walks up from (s, id): 0, NX_ENOTFOUND when the first event has no row, or a query's
 * error. */
static int walk(struct nx_req *rq, struct nx_profile *p, int s, int64_t id, int64_t max,
		struct walk *w, struct nx_err *err)
{
	bool flow = nx__pfiles_find(&p->files, "Flow") != NULL, wait = has_wait_column(p);
	char *edge = NULL;
	int64_t gap = 0;
	bool gap_null = true;
	int rc = 0;

	w->steps = nx_xcalloc((size_t)max, sizeof(*w->steps));
	for (;;) {
		struct nx_strbuf sql = NX_STRBUF_INIT;
		struct found f = { .row = false };
		struct step *st;

		for (size_t i = 0; i < w->n; i++)
			if (w->steps[i].table == s && w->steps[i].id == id) {
				w->end = "cycle";
				goto out;
			}
		if (!nx__pfiles_find(&p->files, nx__lod_sources[s].table)) {
			w->end = "missing";
			goto out;
		}
		step_sql(&sql, s, id, flow, wait);
		rc = nx__query_chunks_limited(rq, p->db, sql.buf, step_chunk, &f, err);
		nx_strbuf_release(&sql);
		if (rc || !f.row) {
			step_release(&f.ev);
			free(f.up_type);
			if (!rc && !w->n)
				rc = nx_errf(err, NX_ENOTFOUND, "profile '%s' has no %s row with id %"
						PRId64, p->name, nx__lod_sources[s].table, id);
			w->end = "missing";
			goto out;
		}
		st = &w->steps[w->n++];
		*st = f.ev;
		st->table = s;
		st->id = id;
		st->edge = edge;
		st->gap = gap;
		st->gap_null = gap_null;
		edge = NULL;
		if (!flow) {
			w->end = "no_flow";
		} else if (s == 0 && wait && !st->wait_null && st->wait <= 0) {
			w->end = "not_waiting"; /* its engine was busy up to its start */
		} else if (!f.edge) {
			w->end = "no_edge";
		} else if ((int64_t)w->n >= max) {
			w->end = "limit";
		} else {
			s = f.up_table;
			id = f.up_id;
			edge = f.up_type;
			gap = f.up_gap;
			gap_null = f.up_gap_null;
			continue;
		}
		free(f.up_type);
		break;
	}
out:
	free(edge);
	return rc;
}

/* The chain's arguments: the first event (table index and id) and the step limit. */
struct chain_args {
	int s;
	int64_t id, max;
};

/* The reply of .../timeline/chain (nx__tl_body, without the timeline cache). */
static int chain_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
		      struct nx_strbuf *out, struct nx_err *err)
{
	const struct chain_args *a = arg;
	struct walk w = { .n = 0 };
	struct nx_jw jw;
	int rc;

	(void)lod;
	rc = walk(rq, p, a->s, a->id, a->max, &w, err);
	if (!rc) {
		nx_jw_init(&jw, out, false);
		nx_jw_object_begin(&jw);
		put_text(&jw, "table", nx__lod_sources[a->s].table);
		nx_jw_key(&jw, "id");
		put_int(&jw, a->id, false);
		nx_jw_key(&jw, "max");
		nx_jw_int(&jw, a->max);
		put_text(&jw, "end", w.end);
		nx_jw_key(&jw, "steps");
		nx_jw_array_begin(&jw);
		for (size_t i = 0; i < w.n; i++)
			put_step(&jw, &w.steps[i]);
		nx_jw_array_end(&jw);
		nx_jw_object_end(&jw);
	}
	for (size_t i = 0; i < w.n; i++)
		step_release(&w.steps[i]);
	free(w.steps);
	return rc;
}

enum MHD_Result nx__h_timeline_chain(struct nx_req *rq, char **cap)
{
	struct chain_args a = { .max = CHAIN_DEFAULT };
	struct nx_profile *p;
	enum MHD_Result ret;
	const char *table;

	if (!nx__tl_event_arg(rq, &a.s, &a.id, &ret) ||
	    !nx__tl_int_opt_arg(rq, "max", 1, CHAIN_MAX, &a.max, &ret))
		return ret;
	table = nx__lod_sources[a.s].table;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	if (!nx__tl_has_table(rq, p, table, &ret)) {
		nx__reg_put(&rq->s->reg, p);
		return ret;
	}
	/* a missing first event is 404 not_found, a failed query 500 (nx__tl_query_failed) */
	return nx__tl_serve(rq, p, false, chain_body, &a);
}
