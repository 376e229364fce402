/* SPDX-License-Identifier: MIT
 * perfetto.c: the Chrome-JSON export of a profile (see perfetto.h).
 *
 * Framework rows are written back in the shape they were read: the phase and the
 * members kept in extra_attributes_json come back, B/E pairs come back as X slices,
 * b/e pairs as b and e, flows as s/t/f with the profile's flow number as id. Device
 * rows become X slices on tracks named after their engine or DMA queue. Times are
 * written in microseconds with three decimals, which is exact for nanoseconds. */
#include "common/compat.h"
#include "export/perfetto.h"
#include "common/fsutil.h"
#include "common/json_writer.h"
#include "common/outpath.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/duck_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct track {
	int64_t pid;
	char *name;
	int64_t tid;
};

struct exp {
	FILE *fp;
	struct nx_strbuf ev;
	bool first;
	struct nx_export_stats st;
	struct track *tracks;
	size_t ntracks, track_cap;
	int64_t next_tid;
};

static void emit(struct exp *x)
{
	if (!x->first)
		fputs(",\n", x->fp);
	x->first = false;
	fwrite(x->ev.buf, 1, x->ev.len, x->fp);
	x->st.events++;
}

/* ts in microseconds, exact to the nanosecond. */
static void add_us(struct nx_strbuf *sb, const char *key, int64_t ns)
{
	const char *sign = ns < 0 ? "-" : "";
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	nx_strbuf_addf(sb, ",\"%s\":%s%" PRIu64 ".%03" PRIu64, key, sign, a / 1000, a % 1000);
}

static void add_text(struct nx_strbuf *sb, const char *key, const struct nx_dcell *c)
{
	nx_strbuf_addf(sb, ",\"%s\":", key);
	if (c->kind == NX_D_TEXT)
		nx_json_quote(sb, c->s, c->len);
	else
		nx_strbuf_addstr(sb, "\"\"");
}

/* The rest of an extra object ("{...}") appended after members already written. */
static void add_rest(struct nx_strbuf *sb, const struct nx_dcell *c)
{
	if (c->kind != NX_D_TEXT || c->len <= 2)
		return;
	nx_strbuf_addch(sb, ',');
	nx_strbuf_add(sb, c->s + 1, c->len - 2);
}

/* Columns: name, ph, start_ts, duration_ns, process_id, thread_id, flow, rest. */
static int framework_row(void *arg, const struct nx_dcell *c, size_t n)
{
	struct exp *x = arg;
	char ph = c[1].kind == NX_D_TEXT && c[1].len == 1 ? c[1].s[0] : 'X';
	const char *out_ph;
	bool with_dur = false, pair = false;

	(void)n;
	switch (ph) {
	case 'B': case 'X': out_ph = "X"; with_dur = true; break;
	case 'b': out_ph = "b"; pair = true; break;
	default: out_ph = NULL; with_dur = c[3].i > 0; break;
	}
	for (int half = 0; half < (pair ? 2 : 1); half++) {
		struct nx_strbuf *e = &x->ev;
		nx_strbuf_reset(e);
		nx_strbuf_addstr(e, "{\"name\":");
		if (c[0].kind == NX_D_TEXT)
			nx_json_quote(e, c[0].s, c[0].len);
		else
			nx_strbuf_addstr(e, "\"\"");
		if (out_ph)
			nx_strbuf_addf(e, ",\"ph\":\"%s\"", half ? "e" : out_ph);
		else
			add_text(e, "ph", &c[1]);
		add_us(e, "ts", half ? c[2].i + c[3].i : c[2].i);
		if (with_dur)
			add_us(e, "dur", c[3].i);
		nx_strbuf_addf(e, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64, c[4].i, c[5].i);
		if (c[6].kind == NX_D_TEXT) {
			nx_strbuf_addstr(e, ",\"id\":");
			nx_strbuf_add(e, c[6].s, c[6].len);
		}
		add_rest(e, &c[7]);
		nx_strbuf_addch(e, '}');
		emit(x);
	}
	x->st.framework++;
	return 0;
}

/* A metadata event naming a process (tid 0) or a thread: {"name":"process_name",
 * "ph":"M","ts":0,"pid":..,"tid":..,"args":{"name":label}}. */
static void name_event(struct exp *x, const char *what, int64_t pid, int64_t tid,
		       const char *label, size_t len)
{
	struct nx_jw jw;

	nx_strbuf_reset(&x->ev);
	nx_jw_init(&jw, &x->ev, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "name");
	nx_jw_string(&jw, what);
	nx_jw_key(&jw, "ph");
	nx_jw_string(&jw, "M");
	nx_jw_key(&jw, "ts");
	nx_jw_int(&jw, 0);
	nx_jw_key(&jw, "pid");
	nx_jw_int(&jw, pid);
	nx_jw_key(&jw, "tid");
	nx_jw_int(&jw, tid);
	nx_jw_key(&jw, "args");
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "name");
	nx_jw_string_len(&jw, label, len);
	nx_jw_object_end(&jw);
	nx_jw_object_end(&jw);
	emit(x);
	x->st.names++;
}

/* Thread id of a named device track, announcing the process and thread on first use. */
static int64_t track_of(struct exp *x, int64_t pid, const char *name, size_t len, bool dma)
{
	bool new_pid = true;

	for (size_t i = 0; i < x->ntracks; i++) {
		struct track *t = &x->tracks[i];
		if (t->pid != pid)
			continue;
		new_pid = false;
		if (strlen(t->name) == len && !memcmp(t->name, name, len))
			return t->tid;
	}
	struct nx_strbuf label = NX_STRBUF_INIT;
	if (new_pid) {
		nx_strbuf_addf(&label, "Device NeuronCore %" PRId64, pid - NX_EXPORT_DEVICE_PID(0));
		name_event(x, "process_name", pid, 0, label.buf, label.len);
		nx_strbuf_reset(&label);
	}
	NX_GROW(x->tracks, x->ntracks + 1, x->track_cap);
	struct track *t = &x->tracks[x->ntracks++];
	t->pid = pid;
	t->name = nx_xstrndup(name, len);
	t->tid = ++x->next_tid;
	nx_strbuf_addstr(&label, dma ? "DMA " : "");
	nx_strbuf_add(&label, name, len);
	name_event(x, "thread_name", pid, t->tid, label.buf, label.len);
	nx_strbuf_release(&label);
	return t->tid;
}

/* Columns: name, start_ts, duration_ns, pcore, track, detail (JSON args text). */
static int device_row(struct exp *x, const struct nx_dcell *c, bool dma)
{
	int64_t pid = NX_EXPORT_DEVICE_PID(c[3].kind == NX_D_INT ? c[3].i : 0);
	const char *track = c[4].kind == NX_D_TEXT ? c[4].s : "?";
	size_t tlen = c[4].kind == NX_D_TEXT ? c[4].len : 1;
	int64_t tid = track_of(x, pid, track, tlen, dma);
	struct nx_strbuf *e = &x->ev;

	nx_strbuf_reset(e);
	nx_strbuf_addstr(e, "{\"name\":");
	if (c[0].kind == NX_D_TEXT)
		nx_json_quote(e, c[0].s, c[0].len);
	else
		nx_strbuf_addstr(e, "\"\"");
	nx_strbuf_addf(e, ",\"ph\":\"X\",\"cat\":\"%s\"", dma ? "dma" : "instruction");
	add_us(e, "ts", c[1].i);
	add_us(e, "dur", c[2].i);
	nx_strbuf_addf(e, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64, pid, tid);
	if (c[5].kind == NX_D_TEXT) {
		nx_strbuf_addstr(e, ",\"args\":");
		nx_strbuf_add(e, c[5].s, c[5].len);
	}
	nx_strbuf_addch(e, '}');
	emit(x);
	return 0;
}

static int instruction_row(void *arg, const struct nx_dcell *c, size_t n)
{
	struct exp *x = arg;
	(void)n;
	x->st.instructions++;
	return device_row(x, c, false);
}

static int dma_row(void *arg, const struct nx_dcell *c, size_t n)
{
	struct exp *x = arg;
	(void)n;
	x->st.dma++;
	return device_row(x, c, true);
}

struct part {
	const char *table;
	const char *select; /* %s: the quoted parquet path */
	nx_dstream_fn fn;
};

static const struct part parts[] = {
	{ "SystemProfileEvents",
	  "SELECT name, coalesce(json_extract_string(extra_attributes_json, '$.ph'), 'X'), "
	  "start_ts, duration_ns, process_id, thread_id, "
	  "CASE WHEN len(flow_id) > 0 THEN flow_id[1] END, "
	  "json_merge_patch(coalesce(extra_attributes_json, '{}'), CASE WHEN len(flow_id) > 0 "
	  "THEN '{\"ph\":null,\"pid\":null,\"tid\":null,\"ts\":null,\"dur\":null,\"id\":null}' "
	  "ELSE '{\"ph\":null,\"pid\":null,\"tid\":null,\"ts\":null,\"dur\":null}' END)::VARCHAR "
	  "FROM read_parquet(%s) ORDER BY id",
	  framework_row },
	{ "Instruction",
	  "SELECT opcode, start_ts, duration_ns, pcore_idx, engine, "
	  "json_object('operands', operands, 'pc', pc, 'id', id)::VARCHAR "
	  "FROM read_parquet(%s)",
	  instruction_row },
	{ "DmaPacket",
	  "SELECT coalesce(variable, queue_name, 'dma'), start_ts, duration_ns, pcore_idx, "
	  "coalesce(queue_name, 'queue ' || queue_idx::VARCHAR, 'queue'), "
	  "json_object('transfer_bytes', transfer_bytes, 'engine_idx', engine_idx, "
	  "'queue_type', queue_type, 'id', id)::VARCHAR "
	  "FROM read_parquet(%s)",
	  dma_row },
};

static int run_parts(struct exp *x, const char *dir, bool *any, struct nx_err *err)
{
	for (size_t i = 0; i < NX_ARRAY_SIZE(parts); i++) {
		char *path = nx_xasprintf("%s/%s.parquet", dir, parts[i].table);
		struct nx_strbuf q = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
		int rc = 0;

		if (nx_is_file(path)) {
			*any = true;
			nx_sql_quote(&q, path);
			nx_strbuf_addf(&sql, parts[i].select, q.buf);
			rc = nx_duck_stream(sql.buf, parts[i].fn, x, err);
			if (rc)
				nx_err_wrap(err, "exporting %s", parts[i].table);
		}
		nx_strbuf_release(&q);
		nx_strbuf_release(&sql);
		free(path);
		if (rc)
			return rc;
	}
	return 0;
}

int nx_export_perfetto_stream(const char *profile_dir, FILE *out, struct nx_export_stats *stats,
			      struct nx_err *err)
{
	struct exp x;
	bool any = false;
	int rc = 0;

	memset(&x, 0, sizeof(x));
	x.first = true;
	x.fp = out;
	if (!nx_is_dir(profile_dir)) {
		rc = nx_errf(err, -ENOENT, "profile directory '%s' does not exist", profile_dir);
		goto out;
	}
	fputs("{\"traceEvents\":[\n", x.fp);
	if ((rc = run_parts(&x, profile_dir, &any, err)))
		goto out;
	if (!any) {
		rc = nx_errf(err, NX_ENOTFOUND, "'%s' has no SystemProfileEvents, Instruction or "
			     "DmaPacket table to export", profile_dir);
		goto out;
	}
	fputs("\n]}\n", x.fp);
	if (fflush(x.fp) || ferror(x.fp)) {
		rc = nx_errf(err, -EIO, "cannot write the trace: %s", strerror(errno));
		goto out;
	}
	if (stats)
		*stats = x.st;
out:
	for (size_t i = 0; i < x.ntracks; i++)
		free(x.tracks[i].name);
	free(x.tracks);
	nx_strbuf_release(&x.ev);
	return rc;
}

int nx_export_perfetto_ex(const char *profile_dir, const char *out_path,
			  struct nx_export_stats *stats, struct nx_err *err)
{
	struct nx_out_file f;
	int rc = nx_out_file_open(&f, out_path, &nx_perfetto_out_kind, 0, err);

	if (rc)
		return rc;
	if ((rc = nx_export_perfetto_stream(profile_dir, f.fp, stats, err))) {
		nx_out_file_abort(&f);
		nx_err_wrap(err, "writing '%s'", out_path);
		return rc;
	}
	return nx_out_file_commit(&f, err);
}

int nx_export_perfetto(const char *profile_dir, const char *out_path, struct nx_err *err)
{
	return nx_export_perfetto_ex(profile_dir, out_path, NULL, err);
}

static bool is_perfetto(const uint8_t *h, size_t n)
{
	static const char head[] = "{\"traceEvents\":[";

	return n >= sizeof(head) - 1 && !memcmp(h, head, sizeof(head) - 1);
}

const struct nx_out_kind nx_perfetto_out_kind = { "a Perfetto trace", is_perfetto };
