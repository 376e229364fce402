/* SPDX-License-Identifier: MIT
 * events.c: shapes Chrome trace events into SystemProfileEvents rows (see events.h).
 * The rule for each phase is one small function; what cannot be taken as it is
 * (an E without a B, a negative duration, an unreadable ts, ...) is counted and
 * reported per file, together with the grammar slips the tokenizer tolerated. */
#include "common/compat.h"
#include "trace/events.h"
#include "common/hash.h"
#include "common/json_writer.h"
#include "common/xalloc.h"
#include "trace/num.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_ID, C_NAME, C_START, C_END, C_DUR, C_SRC, C_INST, C_PID, C_TID, C_FLOW, C_STREAM,
       C_EXTRA };
static const char *const columns[] = { "id", "name", "start_ts", "end_ts", "duration_ns",
				       "trace_event_source", "instance_id", "process_id",
				       "thread_id", "flow_id", "framework_stream_id",
				       "extra_attributes_json", NULL };

/* Phases of the Trace Event Format; anything else is kept and reported. */
static const char known_phases[] = "BEXiICMstfbneSTFpPONDRc()=<>Vv";

/* Integer id of a pid/tid: integers as they are, numeric text parsed, other text
 * hashed to a stable value in [2^62, 2^63) so that it cannot meet a small real id. */
static int64_t id_value(enum nx_idkind kind, int64_t v, const struct nx_strbuf *text)
{
	int64_t n;

	if (kind == NX_ID_INT)
		return v;
	if (kind == NX_ID_NONE)
		return 0;
	if (nx_num_i64(nx_strbuf_str(text), &n))
		return n;
	return (int64_t)((nx_fnv1a(text->buf ? text->buf : "", text->len) >> 2) |
			 ((uint64_t)1 << 62));
}

static void count(struct nx_tev_count *c, uint64_t off)
{
	if (!c->n++)
		c->first = off;
}

static void see(struct nx_tev_src *s, int64_t a, int64_t b)
{
	if (s->file_first > s->file_last) {
		s->file_first = a;
		s->file_last = b;
	} else {
		if (a < s->file_first)
			s->file_first = a;
		if (b > s->file_last)
			s->file_last = b;
	}
}

/* A text cell of a row and its length. */
struct cell {
	const char *s;
	size_t n;
};

static struct cell text(const char *s)
{
	return (struct cell){ s, s ? strlen(s) : 0 };
}

static struct cell sbtext(const struct nx_strbuf *sb)
{
	return (struct cell){ nx_strbuf_str(sb), sb->len };
}

/* Writes one row; the event's ids and stream key come from s->ev unless given. */
static void put(struct nx_tev_src *s, struct nx_rowbuf *b, size_t row, struct cell name,
		int64_t start, int64_t end, int64_t pid, int64_t tid, const char *flow,
		struct cell stream, struct cell extra)
{
	const int *c = s->map.idx;

	start += s->files[s->cur].shift_ns;
	end += s->files[s->cur].shift_ns;
	nx_rowbuf_i64(b, (size_t)c[C_ID], row, s->next_id++);
	nx_rowbuf_strn(b, (size_t)c[C_NAME], row, name.s, name.n);
	nx_rowbuf_i64(b, (size_t)c[C_START], row, start);
	nx_rowbuf_i64(b, (size_t)c[C_END], row, end);
	nx_rowbuf_i64(b, (size_t)c[C_DUR], row, end - start);
	nx_rowbuf_strn(b, (size_t)c[C_SRC], row, "framework", 9);
	nx_rowbuf_str(b, (size_t)c[C_INST], row, s->files[s->cur].instance);
	nx_rowbuf_i64(b, (size_t)c[C_PID], row, pid);
	nx_rowbuf_i64(b, (size_t)c[C_TID], row, tid);
	nx_rowbuf_strlist(b, (size_t)c[C_FLOW], row, flow, ',');
	nx_rowbuf_strn(b, (size_t)c[C_STREAM], row, stream.s, stream.n);
	if (extra.n)
		nx_rowbuf_strn(b, (size_t)c[C_EXTRA], row, extra.s, extra.n);
	s->files[s->cur].rows++;
}

/* "<instance>/<pid>/<tid>" with the ids as written in the file. Consecutive events
 * mostly come from one thread, so a key of integer ids is kept for the next call. */
static struct cell stream_key(struct nx_tev_src *s, int64_t pid, int64_t tid)
{
	const struct nx_cev *ev = &s->ev;
	bool ints = ev->pid_kind != NX_ID_TEXT && ev->tid_kind != NX_ID_TEXT;

	if (ints && s->key_ok && s->key_file == s->cur && s->key_pid == pid && s->key_tid == tid)
		return sbtext(&s->sb);
	nx_strbuf_reset(&s->sb);
	nx_strbuf_addstr(&s->sb, s->files[s->cur].instance);
	nx_strbuf_addch(&s->sb, '/');
	if (ev->pid_kind == NX_ID_TEXT)
		nx_strbuf_add(&s->sb, nx_strbuf_str(&ev->pid_text), ev->pid_text.len);
	else
		nx_strbuf_addi64(&s->sb, pid);
	nx_strbuf_addch(&s->sb, '/');
	if (ev->tid_kind == NX_ID_TEXT)
		nx_strbuf_add(&s->sb, nx_strbuf_str(&ev->tid_text), ev->tid_text.len);
	else
		nx_strbuf_addi64(&s->sb, tid);
	s->key_ok = ints;
	s->key_file = s->cur;
	s->key_pid = pid;
	s->key_tid = tid;
	return sbtext(&s->sb);
}

static struct nx_tstate *stack_of(struct nx_tev_src *s, struct nx_strmap *m, int64_t pid,
				 int64_t tid, bool async)
{
	const struct nx_cev *ev = &s->ev;

	nx_strbuf_reset(&s->sb2);
	nx_strbuf_addi64(&s->sb2, pid);
	nx_strbuf_addch(&s->sb2, '\x1f');
	nx_strbuf_addi64(&s->sb2, async ? 0 : tid);
	if (async) {
		nx_strbuf_addch(&s->sb2, '\x1f');
		nx_strbuf_addstr(&s->sb2, nx_strbuf_str(&ev->cat));
		nx_strbuf_addch(&s->sb2, '\x1f');
		nx_strbuf_addstr(&s->sb2, nx_strbuf_str(&ev->id));
		nx_strbuf_addch(&s->sb2, '\x1f');
		nx_strbuf_addstr(&s->sb2, nx_strbuf_str(&ev->name));
	}
	struct nx_tstate *slot = nx_strmap_get(m, s->sb2.buf, s->sb2.len, NULL);
	slot->pid = pid;
	slot->tid = tid;
	return slot;
}

/* The flow text of a flow number (0: none). */
static const char *flow_text(int64_t num, char buf[NX_I64_TEXT])
{
	return num ? nx_i64_text(num, buf) : NULL;
}

/* The flow slot of a key; a new one gets the next profile-wide flow number. */
static struct nx_tstate *flow_slot(struct nx_tev_src *s)
{
	struct nx_tstate *slot = nx_strmap_get(&s->flows, s->sb2.buf, s->sb2.len, NULL);

	if (!slot->num)
		slot->num = s->next_flow++;
	return slot;
}

/* Version-2 flow keys start with this, so they never meet a (cat, id) key. */
#define V2_KEY "\x1fv2\x1f"

/* Flow version 2: a slice with bind_id and flow_in and/or flow_out true belongs to the
 * flow of that bind_id (flow_out starts it, flow_in ends it, as s and f do). Returns
 * the flow number, 0 when the event carries no such flow. */
static int64_t flow_v2(struct nx_tev_src *s)
{
	const struct nx_cev *ev = &s->ev;

	if (!ev->has_bind || !(ev->flow_in || ev->flow_out))
		return 0;
	nx_strbuf_reset(&s->sb2);
	nx_strbuf_addstr(&s->sb2, V2_KEY);
	nx_strbuf_add(&s->sb2, ev->bind.buf ? ev->bind.buf : "", ev->bind.len);
	struct nx_tstate *slot = flow_slot(s);
	slot->starts += ev->flow_out;
	slot->ends += ev->flow_in;
	return slot->num;
}

/* Takes the flow number an open B was given (0: none). */
static int64_t take_bflow(struct nx_tev_src *s, uint64_t off)
{
	for (size_t i = s->nbflow; i-- > 0;) {
		if (s->bflow[i].off != off)
			continue;
		int64_t num = s->bflow[i].num;
		s->bflow[i] = s->bflow[--s->nbflow];
		return num;
	}
	return 0;
}

/* E and e: closes the innermost open begin. Returns the rows written (0 or 1). */
static int close_begin(struct nx_tev_src *s, struct nx_rowbuf *b, size_t row, int64_t pid,
		       int64_t tid, bool async)
{
	struct nx_cev *ev = &s->ev;
	struct nx_tstate *slot = stack_of(s, async ? &s->async : &s->threads, pid, tid, async);

	if (!slot->nopen) {
		count(async ? &s->k.ae_no_b : &s->k.e_no_b, ev->offset);
		return 0;
	}
	struct nx_open *o = &slot->open[--slot->nopen];
	int64_t end = ev->ts_ns;
	if (end < o->start) {
		count(&s->k.neg, ev->offset);
		end = o->start;
	}
	if (!async && ev->name.len && o->name[0] && strcmp(o->name, ev->name.buf))
		count(&s->k.mismatch, ev->offset);
	/* The end event's args are kept next to the begin's members. */
	char *extra = o->extra;
	struct nx_strbuf merged = NX_STRBUF_INIT;
	if (ev->extra.len && strstr(ev->extra.buf, "\"args\":")) {
		if (extra && extra[0] == '{') {
			nx_strbuf_add(&merged, extra, strlen(extra) - 1);
			nx_strbuf_addstr(&merged, ",\"end_event\":");
		} else {
			nx_strbuf_addstr(&merged, "{\"end_event\":");
		}
		nx_strbuf_add(&merged, ev->extra.buf, ev->extra.len);
		nx_strbuf_addch(&merged, '}');
		extra = merged.buf;
	}
	char num[NX_I64_TEXT];
	const char *flow = s->nbflow && !async ? flow_text(take_bflow(s, o->offset), num) : NULL;
	see(s, o->start, end);
	put(s, b, row, text(o->name), o->start, end, slot->pid, slot->tid, flow,
	    stream_key(s, slot->pid, slot->tid), text(extra));
	nx_strbuf_release(&merged);
	free(o->name);
	free(o->extra);
	return 1;
}

/* s, t, f: a zero-length row whose flow_id names the flow, numbered per (cat, id). */
static int flow(struct nx_tev_src *s, struct nx_rowbuf *b, size_t row, int64_t pid, int64_t tid)
{
	struct nx_cev *ev = &s->ev;
	char num[NX_I64_TEXT];

	nx_strbuf_reset(&s->sb2);
	nx_strbuf_addstr(&s->sb2, nx_strbuf_str(&ev->cat));
	nx_strbuf_addch(&s->sb2, '\x1f');
	nx_strbuf_addstr(&s->sb2, nx_strbuf_str(&ev->id));
	struct nx_tstate *slot = flow_slot(s);
	if (ev->ph.buf[0] == 's')
		slot->starts++;
	else if (ev->ph.buf[0] == 'f')
		slot->ends++;
	see(s, ev->ts_ns, ev->ts_ns);
	put(s, b, row, sbtext(&ev->name), ev->ts_ns, ev->ts_ns, pid, tid,
	    flow_text(slot->num, num), stream_key(s, pid, tid), sbtext(&ev->extra));
	return 1;
}

/* One event in, zero or one row out. */
static int shape(struct nx_tev_src *s, struct nx_rowbuf *b, size_t row)
{
	struct nx_cev *ev = &s->ev;
	int64_t pid = id_value(ev->pid_kind, ev->pid, &ev->pid_text);
	int64_t tid = id_value(ev->tid_kind, ev->tid, &ev->tid_text);
	char ph = ev->ph.len == 1 ? ev->ph.buf[0] : '?';
	int64_t start = ev->ts_ns, dur = ev->has_dur ? ev->dur_ns : 0;
	char num[NX_I64_TEXT];

	/* Only metadata may go without a time; any other event without a readable ts
	 * would be placed at the epoch and stretch the profile back to 1970. */
	if (ph != 'M' && !ev->has_ts) {
		count(&s->k.no_ts, ev->offset);
		return 0;
	}
	if (ph == '?' || !strchr(known_phases, ph)) {
		count(&s->k.unknown, ev->offset);
		size_t ul = strlen(s->k.unknown_ph);
		if (ul + ev->ph.len + 3 < sizeof(s->k.unknown_ph) &&
		    !strstr(s->k.unknown_ph, nx_strbuf_str(&ev->ph)))
			snprintf(s->k.unknown_ph + ul, sizeof(s->k.unknown_ph) - ul, "%s'%s'",
				 ul ? ", " : "", nx_strbuf_str(&ev->ph));
		ph = '?';
	}
	switch (ph) {
	case 'B': {
		int64_t f = flow_v2(s);
		if (f) {
			NX_GROW(s->bflow, s->nbflow + 1, s->bflow_cap);
			s->bflow[s->nbflow].off = ev->offset;
			s->bflow[s->nbflow++].num = f;
		}
		nx_open_push(stack_of(s, &s->threads, pid, tid, false), nx_strbuf_str(&ev->name),
			     ev->name.len, nx_strbuf_str(&ev->extra), ev->extra.len, start, ev->offset);
		return 0;
	}
	case 'E':
		return close_begin(s, b, row, pid, tid, false);
	case 'b':
		nx_open_push(stack_of(s, &s->async, pid, tid, true), nx_strbuf_str(&ev->name),
			     ev->name.len, nx_strbuf_str(&ev->extra), ev->extra.len, start, ev->offset);
		return 0;
	case 'e':
		return close_begin(s, b, row, pid, tid, true);
	case 's':
	case 't':
	case 'f':
		return flow(s, b, row, pid, tid);
	case 'X':
		if (!ev->has_dur)
			count(&s->k.no_dur, ev->offset);
		break;
	default:
		break;
	}
	if (dur < 0) {
		count(&s->k.neg, ev->offset);
		dur = 0;
	}
	if (ph != 'M')
		see(s, start, start + dur);
	const char *fl = ph == 'X' ? flow_text(flow_v2(s), num) : NULL;
	put(s, b, row, sbtext(&ev->name), start, start + dur, pid, tid, fl, stream_key(s, pid, tid),
	    sbtext(&ev->extra));
	return 1;
}

static void pend(struct nx_tev_src *s, const char *name, const char *extra, const char *stream,
		 int64_t start, int64_t end, int64_t pid, int64_t tid, int64_t flow)
{
	NX_GROW(s->pend, s->npend + 1, s->pend_cap);
	struct nx_prow *p = &s->pend[s->npend++];
	p->name = nx_xstrdup(name);
	p->extra = extra ? nx_xstrdup(extra) : NULL;
	p->stream = nx_xstrdup(stream);
	p->start = start;
	p->end = end < start ? start : end;
	p->pid = pid;
	p->tid = tid;
	p->flow = flow;
}

/* Begins never closed end at the file's last timestamp, as trace viewers draw them;
 * their starts count for the time bounds. */
static void flush_open(struct nx_tev_src *s, struct nx_strmap *m, struct nx_tev_count *c,
		       bool async)
{
	bool any = s->file_first <= s->file_last;
	int64_t last = s->file_last;
	char stream[256];

	struct nx_tstate *slot;
	size_t pos = 0;

	while ((slot = nx_strmap_next(m, &pos, NULL, NULL))) {
		for (size_t k = 0; k < slot->nopen; k++) {
			struct nx_open *o = &slot->open[k];
			int64_t end = any && last > o->start ? last : o->start;
			count(c, o->offset);
			snprintf(stream, sizeof(stream), "%s/%" PRId64 "/%" PRId64,
				 s->files[s->cur].instance, slot->pid, slot->tid);
			see(s, o->start, end);
			pend(s, o->name, o->extra, stream, o->start, end, slot->pid, slot->tid,
			     s->nbflow && !async ? take_bflow(s, o->offset) : 0);
		}
	}
}

static void tev_warn(struct nx_tev_src *s, const char *category, const char *fmt, ...)
	NX_PRINTF(3, 4);
static void tev_warn(struct nx_tev_src *s, const char *category, const char *fmt, ...)
{
	struct nx_strbuf msg = NX_STRBUF_INIT;
	va_list ap;

	if (!s->warn)
		return;
	va_start(ap, fmt);
	nx_strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	s->warn(s->warn_arg, category, nx_strbuf_str(&msg));
	nx_strbuf_release(&msg);
}

static void warn_count(struct nx_tev_src *s, const struct nx_tev_count *c, const char *what,
		       const char *outcome)
{
	if (c->n)
		tev_warn(s, "Invalid Data",
			    "'%s': %" PRIu64 " %s (the first at byte %" PRIu64 "); %s",
			    s->files[s->cur].path, c->n, what, c->first, outcome);
}

static void warn_slip(struct nx_tev_src *s, const struct nx_jtok_slip *sl, const char *what,
		      const char *outcome)
{
	struct nx_tev_count c = { sl->n, sl->first };

	warn_count(s, &c, what, outcome);
}

static void file_warnings(struct nx_tev_src *s)
{
	const char *path = s->files[s->cur].path;
	const struct nx_jtok_slips *sl = &s->rd.tok.slips;
	uint64_t orphan_f = 0, orphan_ids = 0, orphan_in = 0, orphan_binds = 0;

	warn_count(s, &s->k.e_no_b, "E events have no open B event on their thread",
		   "they were dropped");
	warn_count(s, &s->k.b_no_e, "B events have no matching E event",
		   "their rows end at the last timestamp of the file");
	warn_count(s, &s->k.mismatch, "E events close a B event of another name",
		   "each closes the innermost open B of its thread, as trace viewers do");
	warn_count(s, &s->k.ae_no_b, "async e events have no open b event with the same id",
		   "they were dropped");
	warn_count(s, &s->k.ab_no_e, "async b events have no matching e event",
		   "their rows end at the last timestamp of the file");
	warn_count(s, &s->k.neg, "events have a negative duration",
		   "their duration was set to 0");
	warn_count(s, &s->k.no_dur, "complete (X) events have no dur",
		   "their duration was set to 0");
	warn_count(s, &s->k.no_ts, "events have no readable ts (missing, or not a number of "
		   "microseconds)", "they were dropped rather than placed at time 0");
	if (s->k.unknown.n)
		tev_warn(s, "Invalid Data",
			    "'%s': %" PRIu64 " events have a phase that is not in the Trace Event "
			    "Format (%s; the first at byte %" PRIu64 "); they were kept as generic "
			    "events", path, s->k.unknown.n, s->k.unknown_ph, s->k.unknown.first);
	const struct nx_tstate *f;
	const char *key;
	size_t klen, pos = 0;
	while ((f = nx_strmap_next(&s->flows, &pos, &key, &klen))) {
		if (!f->ends || f->starts)
			continue;
		bool v2 = klen >= sizeof(V2_KEY) - 1 && !memcmp(key, V2_KEY, sizeof(V2_KEY) - 1);
		orphan_f += v2 ? 0 : f->ends;
		orphan_ids += !v2;
		orphan_in += v2 ? f->ends : 0;
		orphan_binds += v2;
	}
	if (orphan_f)
		tev_warn(s, "Invalid Data",
			    "'%s': %" PRIu64 " flow end (f) events of %" PRIu64 " flow ids have no "
			    "flow start (s) in the file; their rows are kept, unlinked", path,
			    orphan_f, orphan_ids);
	if (orphan_in)
		tev_warn(s, "Invalid Data",
			    "'%s': %" PRIu64 " slices with flow_in of %" PRIu64 " bind_id values have "
			    "no slice with flow_out in the file; their rows are kept, unlinked", path,
			    orphan_in, orphan_binds);
	if (s->rd.skipped)
		tev_warn(s, "Invalid Data",
			    "'%s': %" PRIu64 " elements of the event array are not objects (the "
			    "first at byte %" PRIu64 "); they were skipped", path, s->rd.skipped,
			    s->rd.first_skip_off);
	/* Grammar slips the tokenizer let through. */
	warn_slip(s, &sl->comma_arr, "trailing commas before a closing ']'",
		  "tolerated, as trace viewers do");
	warn_slip(s, &sl->comma_obj, "trailing commas before a closing '}'",
		  "tolerated, as trace viewers do");
	warn_slip(s, &sl->ctrl, "raw control characters (newline, tab ...) inside strings",
		  "tolerated; the strings keep them as written");
	if (s->rd.truncated)
		tev_warn(s, "Missing Data",
			    "%s; the %" PRIu64 " complete events before that point were ingested",
			    s->rd.trunc_msg, s->rd.events);
}

/* Folds the device memory size one file's top-level members state into hbm_capacity:
 * an integer, a number (rounded) or a string holding an integer, as SQL's TRY_CAST to
 * BIGINT of the member's text would take it. */
static void note_capacity(struct nx_tev_src *s, const char *meta, size_t len)
{
	json_t *root = json_loadb(meta, len, 0, NULL);
	json_t *v = json_object_get(json_array_get(json_object_get(root, "deviceProperties"), 0),
				    "totalGlobalMem");
	int64_t n = 0;
	bool ok = false;

	if (json_is_integer(v)) {
		n = json_integer_value(v);
		ok = true;
	} else if (json_is_real(v)) {
		double x = json_real_value(v);

		ok = x > -9.2e18 && x < 9.2e18; /* false for NaN too */
		n = ok ? llround(x) : 0;
	} else if (json_is_string(v)) {
		const char *t = json_string_value(v);
		char *end;

		errno = 0;
		n = strtoll(t, &end, 10);
		ok = end != t && !*end && !errno;
	}
	if (ok && (!s->has_capacity || n > s->hbm_capacity)) {
		s->hbm_capacity = n;
		s->has_capacity = true;
	}
	json_decref(root);
}

/* Notes the file's baseTimeNanoseconds (an integer, or a string holding one) from its
 * top-level members. */
static void note_base(struct nx_tev_file *f, const char *meta, size_t len)
{
	json_t *root = json_loadb(meta, len, 0, NULL);
	json_t *v = json_object_get(root, "baseTimeNanoseconds");
	char *end;

	if (json_is_integer(v)) {
		f->base_ns = json_integer_value(v);
		f->has_base = true;
	} else if (json_is_string(v)) {
		errno = 0;
		f->base_ns = strtoll(json_string_value(v), &end, 10);
		f->has_base = end != json_string_value(v) && !*end && !errno;
	}
	json_decref(root);
}

/* End of one file: open begins and the metadata row become pending rows. */
static void finish_file(struct nx_tev_src *s)
{
	flush_open(s, &s->threads, &s->k.b_no_e, false);
	flush_open(s, &s->async, &s->k.ab_no_e, true);
	s->nbflow = 0;
	if (s->rd.meta.len) {
		struct nx_strbuf x = NX_STRBUF_INIT;
		char stream[256];

		note_capacity(s, s->rd.meta.buf, s->rd.meta.len);
		note_base(&s->files[s->cur], s->rd.meta.buf, s->rd.meta.len);
		nx_strbuf_addstr(&x, "{\"ph\":\"M\",\"args\":");
		nx_strbuf_add(&x, s->rd.meta.buf, s->rd.meta.len);
		nx_strbuf_addch(&x, '}');
		snprintf(stream, sizeof(stream), "%s/0/0", s->files[s->cur].instance);
		int64_t at = s->file_first <= s->file_last ? s->file_first : 0;
		pend(s, "trace_metadata", x.buf, stream, at, at, 0, 0, 0);
		nx_strbuf_release(&x);
	}
	file_warnings(s);
	s->files[s->cur].events = s->rd.events;
	s->files[s->cur].first_ns = s->file_first;
	s->files[s->cur].last_ns = s->file_last;
	if (s->file_first <= s->file_last) {
		int64_t sh = s->files[s->cur].shift_ns;

		if (s->first_ns > s->last_ns || s->file_first + sh < s->first_ns)
			s->first_ns = s->file_first + sh;
		if (s->first_ns > s->last_ns || s->file_last + sh > s->last_ns)
			s->last_ns = s->file_last + sh;
	}
	nx_tstates_clear(&s->threads);
	nx_tstates_clear(&s->async);
	nx_tstates_clear(&s->flows);
	nx_chrome_close(&s->rd);
	s->open = false;
}

static int open_file(struct nx_tev_src *s, struct nx_err *err)
{
	int rc = nx_chrome_open(&s->rd, s->files[s->cur].path, err);

	if (rc)
		return rc;
	s->open = true;
	memset(&s->k, 0, sizeof(s->k));
	s->file_first = 1;
	s->file_last = 0;
	return 0;
}

static void free_pending(struct nx_tev_src *s)
{
	for (size_t i = 0; i < s->npend; i++) {
		free(s->pend[i].name);
		free(s->pend[i].extra);
		free(s->pend[i].stream);
	}
	s->npend = s->pend_pos = 0;
}

static int next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct nx_tev_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), n = 0;
	int rc;

	while (n < cap) {
		if (s->pend_pos < s->npend) {
			struct nx_prow *p = &s->pend[s->pend_pos++];
			char num[NX_I64_TEXT];
			s->cur--; /* pending rows belong to the file just finished */
			put(s, b, n++, text(p->name), p->start, p->end, p->pid, p->tid,
			    flow_text(p->flow, num), text(p->stream), text(p->extra));
			s->cur++;
			if (s->pend_pos == s->npend)
				free_pending(s);
			continue;
		}
		if (!s->open) {
			if (s->cur >= s->nfiles)
				break;
			if ((rc = open_file(s, err)))
				return rc;
		}
		rc = nx_chrome_next(&s->rd, &s->ev, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			finish_file(s);
			s->cur++;
			continue;
		}
		n += (size_t)shape(s, b, n);
	}
	return (int)n;
}

int nx_tev_init(struct nx_tev_src *s, struct nx_tev_file *files, size_t nfiles,
		nx_tev_warn_fn warn, void *warn_arg, struct nx_row_source *src, struct nx_err *err)
{
	memset(s, 0, sizeof(*s));
	s->files = files;
	s->nfiles = nfiles;
	s->warn = warn;
	s->warn_arg = warn_arg;
	s->next_id = 1;
	s->next_flow = 1;
	s->first_ns = 1;
	s->last_ns = 0;
	nx_cev_init(&s->ev);
	nx_tstates_init(&s->threads);
	nx_tstates_init(&s->async);
	nx_tstates_init(&s->flows);
	int rc = nx_colmap_init(&s->map, "SystemProfileEvents", columns, err);
	if (rc)
		return rc;
	src->table = s->map.table;
	src->self = s;
	src->next = next;
	src->keys = NULL;
	return 0;
}

void nx_tev_release(struct nx_tev_src *s)
{
	if (s->open)
		nx_chrome_close(&s->rd);
	free_pending(s);
	free(s->pend);
	free(s->bflow);
	nx_tstates_release(&s->threads);
	nx_tstates_release(&s->async);
	nx_tstates_release(&s->flows);
	nx_cev_release(&s->ev);
	nx_strbuf_release(&s->sb);
	nx_strbuf_release(&s->sb2);
	memset(s, 0, sizeof(*s));
}
