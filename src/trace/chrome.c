/* SPDX-License-Identifier: MIT
 * chrome.c: the Chrome Trace Event reader (see chrome.h). It walks the top level of
 * the document with the tokenizer, turns each element of the event array into a
 * struct nx_cev, and keeps every member it does not map to a column as compact JSON
 * in ev->extra, so nothing in the file is lost on the way to parquet. */
#include "common/compat.h"
#include "trace/chrome.h"
#include "common/json_writer.h"
#include "trace/num.h"

#include <stdio.h>
#include <string.h>

#define VALUE_LIMIT (64u << 20) /* largest single member value kept, in bytes */

enum { M_START, M_OBJ, M_EVENTS, M_AFTER, M_END };

void nx_cev_init(struct nx_cev *ev)
{
	memset(ev, 0, sizeof(*ev));
}

void nx_cev_release(struct nx_cev *ev)
{
	struct nx_strbuf *all[] = { &ev->name, &ev->ph, &ev->cat, &ev->id, &ev->extra,
				    &ev->ts_text, &ev->dur_text, &ev->pid_text, &ev->tid_text,
				    &ev->bind };
	for (size_t i = 0; i < NX_ARRAY_SIZE(all); i++)
		nx_strbuf_release(all[i]);
}

static void reset_event(struct nx_cev *ev)
{
	struct nx_strbuf *all[] = { &ev->name, &ev->ph, &ev->cat, &ev->id, &ev->extra,
				    &ev->ts_text, &ev->dur_text, &ev->pid_text, &ev->tid_text,
				    &ev->bind };
	for (size_t i = 0; i < NX_ARRAY_SIZE(all); i++)
		nx_strbuf_reset(all[i]);
	ev->has_ts = ev->has_dur = ev->has_id = false;
	ev->has_bind = ev->flow_in = ev->flow_out = false;
	ev->ts_exact = true;
	ev->ts_ns = ev->dur_ns = 0;
	ev->pid_kind = ev->tid_kind = NX_ID_NONE;
	ev->pid = ev->tid = 0;
}

static int start(struct nx_chrome *c, struct nx_err *err)
{
	nx_jtok_init(&c->tok, &c->in);
	nx_strbuf_init(&c->meta);
	c->mode = M_START;
	(void)err;
	return 0;
}

int nx_chrome_open(struct nx_chrome *c, const char *path, struct nx_err *err)
{
	memset(c, 0, sizeof(*c));
	int rc = nx_tin_open(&c->in, path, err);
	if (rc) {
		nx_tin_close(&c->in);
		return rc;
	}
	return start(c, err);
}

int nx_chrome_open_mem(struct nx_chrome *c, const void *buf, size_t len, const char *name,
		       struct nx_err *err)
{
	memset(c, 0, sizeof(*c));
	int rc = nx_tin_open_mem(&c->in, buf, len, name, err);
	if (rc) {
		nx_tin_close(&c->in);
		return rc;
	}
	return start(c, err);
}

void nx_chrome_close(struct nx_chrome *c)
{
	if (c->tok.buf)
		nx_jtok_release(&c->tok);
	nx_tin_close(&c->in);
	nx_strbuf_release(&c->meta);
}

static const char *kind_name(int k)
{
	switch (k) {
	case NX_JT_STR: return "a string";
	case NX_JT_NUM: return "a number";
	case NX_JT_TRUE: case NX_JT_FALSE: return "a boolean";
	case NX_JT_NULL: return "null";
	case NX_JT_ARR: return "an array";
	default: return "an object";
	}
}

/* Starts one member of the event's extra object; plain: the name needs no escape
 * (struct nx_jtok's text_plain). */
static void extra_key(struct nx_cev *ev, const char *key, size_t len, bool plain)
{
	nx_strbuf_addch(&ev->extra, ev->extra.len ? ',' : '{');
	if (plain)
		nx_json_quote_plain(&ev->extra, key, len);
	else
		nx_json_quote(&ev->extra, key, len);
	nx_strbuf_addch(&ev->extra, ':');
}

static void set_text(struct nx_strbuf *dst, const struct nx_strbuf *src)
{
	nx_strbuf_reset(dst);
	nx_strbuf_add(dst, src->buf ? src->buf : "", src->len);
}

/* A time member (ts, dur): a number or a numeric string in microseconds. */
static void time_member(struct nx_jtok *t, int k, bool *has, int64_t *ns, bool *exact,
			struct nx_strbuf *text)
{
	bool ex = true;

	if ((k == NX_JT_NUM || k == NX_JT_STR) &&
	    nx_num_us_to_ns(nx_strbuf_str(&t->text), ns, &ex)) {
		*has = true;
		*exact = ex;
	}
	set_text(text, &t->text);
}

/* pid and tid: integers are taken as they are; anything else keeps its text. */
static int id_member(struct nx_jtok *t, int k, enum nx_idkind *kind, int64_t *v,
		     struct nx_strbuf *text, struct nx_err *err)
{
	nx_strbuf_reset(text);
	if (k == NX_JT_NUM && nx_num_i64(nx_strbuf_str(&t->text), v)) {
		*kind = NX_ID_INT;
		return 0;
	}
	*kind = NX_ID_TEXT;
	if (k == NX_JT_STR || k == NX_JT_NUM) {
		set_text(text, &t->text);
		return 0;
	}
	return nx_jtok_capture(t, k, text, VALUE_LIMIT, err);
}

/* Reads the members of one event object (its '{' was just returned). Returns 0, or 1
 * for an empty object. */
static int read_event(struct nx_chrome *c, struct nx_cev *ev, struct nx_err *err)
{
	struct nx_jtok *t = &c->tok;
	int depth = nx_jtok_depth(t) - 1, k, rc;
	char key[64];
	size_t klen;
	bool ts_ok = true, dur_ok = true, members = false;

	reset_event(ev);
	ev->offset = t->tok_off;
	for (;;) {
		k = nx_jtok_next(t, err);
		if (k < 0)
			return k;
		if (k == NX_JT_OBJ_END && nx_jtok_depth(t) == depth)
			break;
		members = true;
		/* k is a member name; long names are kept whole in extra only. */
		klen = t->text.len < sizeof(key) - 1 ? t->text.len : sizeof(key) - 1;
		memcpy(key, t->text.buf ? t->text.buf : "", klen);
		key[klen] = '\0';
		bool long_key = t->text.len >= sizeof(key) - 1, key_plain = t->text_plain;
		struct nx_strbuf longk = NX_STRBUF_INIT;
		if (long_key)
			nx_strbuf_add(&longk, t->text.buf, t->text.len);
		k = nx_jtok_next(t, err);
		if (k < 0) {
			nx_strbuf_release(&longk);
			return k;
		}
		rc = 0;
		if (long_key) {
			extra_key(ev, longk.buf, longk.len, key_plain);
			rc = nx_jtok_capture(t, k, &ev->extra, VALUE_LIMIT, err);
		} else if (!strcmp(key, "name")) {
			if (k == NX_JT_STR)
				set_text(&ev->name, &t->text);
			else {
				nx_strbuf_reset(&ev->name);
				rc = nx_jtok_capture(t, k, &ev->name, VALUE_LIMIT, err);
			}
		} else if (!strcmp(key, "ts")) {
			time_member(t, k, &ev->has_ts, &ev->ts_ns, &ts_ok, &ev->ts_text);
			if (k != NX_JT_NUM && k != NX_JT_STR)
				rc = nx_jtok_capture(t, k, NULL, 0, err);
			if (!ev->has_ts || !ts_ok) {
				extra_key(ev, "ts", 2, true);
				if (k == NX_JT_NUM || k == NX_JT_STR)
					nx_jtok_capture(t, k, &ev->extra, VALUE_LIMIT, err);
				else
					nx_strbuf_addstr(&ev->extra, "null");
			}
		} else if (!strcmp(key, "dur")) {
			time_member(t, k, &ev->has_dur, &ev->dur_ns, &dur_ok, &ev->dur_text);
			if (k != NX_JT_NUM && k != NX_JT_STR)
				rc = nx_jtok_capture(t, k, NULL, 0, err);
			if (!ev->has_dur || !dur_ok || ev->dur_ns < 0) {
				extra_key(ev, "dur", 3, true);
				if (k == NX_JT_NUM || k == NX_JT_STR)
					nx_jtok_capture(t, k, &ev->extra, VALUE_LIMIT, err);
				else
					nx_strbuf_addstr(&ev->extra, "null");
			}
		} else if (!strcmp(key, "pid") || !strcmp(key, "tid")) {
			bool p = key[0] == 'p';
			rc = id_member(t, k, p ? &ev->pid_kind : &ev->tid_kind, p ? &ev->pid : &ev->tid,
				       p ? &ev->pid_text : &ev->tid_text, err);
			if (!rc && (p ? ev->pid_kind : ev->tid_kind) == NX_ID_TEXT) {
				extra_key(ev, key, 3, true);
				if (k == NX_JT_STR)
					nx_json_quote(&ev->extra, nx_strbuf_str(p ? &ev->pid_text : &ev->tid_text),
						      (p ? ev->pid_text : ev->tid_text).len);
				else
					nx_strbuf_addstr(&ev->extra,
							 nx_strbuf_str(p ? &ev->pid_text : &ev->tid_text));
			}
		} else {
			/* ph, cat, id, the flow-v2 members and everything else go to extra as
			 * they are. */
			if (!strcmp(key, "ph") && k == NX_JT_STR)
				set_text(&ev->ph, &t->text);
			else if (!strcmp(key, "cat") && k == NX_JT_STR)
				set_text(&ev->cat, &t->text);
			else if (key[0] == 'f' && k == NX_JT_TRUE && !strcmp(key, "flow_in"))
				ev->flow_in = true;
			else if (key[0] == 'f' && k == NX_JT_TRUE && !strcmp(key, "flow_out"))
				ev->flow_out = true;
			else if (key[0] == 'b' && (k == NX_JT_STR || k == NX_JT_NUM) &&
				 !strcmp(key, "bind_id")) {
				set_text(&ev->bind, &t->text);
				ev->has_bind = true;
			}
			extra_key(ev, key, klen, key_plain);
			size_t at = ev->extra.len;
			rc = nx_jtok_capture(t, k, &ev->extra, VALUE_LIMIT, err);
			if (!rc && (!strcmp(key, "id") || !strcmp(key, "id2"))) {
				nx_strbuf_reset(&ev->id);
				if (k == NX_JT_STR)
					set_text(&ev->id, &t->text);
				else
					nx_strbuf_add(&ev->id, ev->extra.buf + at, ev->extra.len - at);
				ev->has_id = true;
			}
		}
		nx_strbuf_release(&longk);
		if (rc)
			return rc;
	}
	ev->ts_exact = ts_ok && dur_ok;
	if (ev->extra.len)
		nx_strbuf_addch(&ev->extra, '}');
	return members ? 0 : 1;
}

/* Records why the events stop early; the caller turns it into a Warning. */
static int stop_truncated(struct nx_chrome *c, struct nx_err *err)
{
	snprintf(c->trunc_msg, sizeof(c->trunc_msg), "%s", err ? err->msg : "input ends early");
	nx_err_clear(err);
	c->meta.len = c->meta_ok_len; /* drop a member cut in the middle */
	if (c->meta.len)
		nx_strbuf_addch(&c->meta, '}');
	else
		nx_strbuf_reset(&c->meta);
	c->truncated = true;
	c->mode = M_END;
	return 0;
}

static int not_a_trace(struct nx_chrome *c, const struct nx_strbuf *keys, struct nx_err *err)
{
	return nx_errf(err, NX_ECORRUPT,
		       "'%s' is not a Chrome trace: its top-level object has no \"traceEvents\" "
		       "array (its members: %s)", c->in.path, keys->len ? keys->buf : "none");
}

/* Reads top-level members up to traceEvents (M_OBJ) or the end (M_AFTER). */
static int top_members(struct nx_chrome *c, struct nx_err *err)
{
	struct nx_jtok *t = &c->tok;
	struct nx_strbuf keys = NX_STRBUF_INIT;
	int k, rc = 0;

	for (;;) {
		k = nx_jtok_next(t, err);
		if (k < 0) {
			rc = k;
			break;
		}
		if (k == NX_JT_OBJ_END) {
			if (c->mode == M_OBJ) {
				rc = not_a_trace(c, &keys, err);
				break;
			}
			k = nx_jtok_next(t, err);
			rc = k < 0 ? k : 0;
			if (c->meta.len)
				nx_strbuf_addch(&c->meta, '}');
			c->mode = M_END;
			break;
		}
		if (c->mode == M_OBJ && !strcmp(nx_strbuf_str(&t->text), "traceEvents")) {
			k = nx_jtok_next(t, err);
			if (k < 0) {
				rc = k;
				break;
			}
			if (k != NX_JT_ARR) {
				rc = nx_jtok_fail(t, NX_ECORRUPT, err,
						  "'%s' is not a Chrome trace: \"traceEvents\" is %s, not "
						  "an array", t->in->path, kind_name(k));
				break;
			}
			c->mode = M_EVENTS;
			break;
		}
		if (keys.len < 200)
			nx_strbuf_addf(&keys, "%s%s", keys.len ? ", " : "", nx_strbuf_str(&t->text));
		nx_strbuf_addch(&c->meta, c->meta.len ? ',' : '{');
		nx_json_quote(&c->meta, nx_strbuf_str(&t->text), t->text.len);
		nx_strbuf_addch(&c->meta, ':');
		k = nx_jtok_next(t, err);
		if (k < 0 || (k = nx_jtok_capture(t, k, &c->meta, VALUE_LIMIT, err)) < 0) {
			rc = k;
			break;
		}
		c->meta_ok_len = c->meta.len;
	}
	nx_strbuf_release(&keys);
	return rc;
}

int nx_chrome_next(struct nx_chrome *c, struct nx_cev *ev, struct nx_err *err)
{
	struct nx_jtok *t = &c->tok;
	int k, rc;

	for (;;) {
		switch (c->mode) {
		case M_START:
			k = nx_jtok_next(t, err);
			if (k < 0)
				return k;
			if (k == NX_JT_ARR) {
				c->bare_array = true;
				c->mode = M_EVENTS;
			} else if (k == NX_JT_OBJ) {
				c->mode = M_OBJ;
			} else {
				return nx_jtok_fail(t, NX_ECORRUPT, err,
						    "'%s' is not a Chrome trace: the document is %s, "
						    "not an object or an array", t->in->path, kind_name(k));
			}
			continue;
		case M_OBJ:
		case M_AFTER:
			rc = top_members(c, err);
			if (rc == NX_ETRUNC && c->mode == M_AFTER)
				return stop_truncated(c, err);
			if (rc)
				return rc;
			continue;
		case M_EVENTS:
			k = nx_jtok_next(t, err);
			if (k == NX_ETRUNC)
				return stop_truncated(c, err);
			if (k < 0)
				return k;
			if (k == NX_JT_ARR_END) {
				if (!c->bare_array) {
					c->mode = M_AFTER;
					continue;
				}
				k = nx_jtok_next(t, err);
				c->mode = M_END;
				return k < 0 ? k : 0;
			}
			if (k != NX_JT_OBJ) {
				if (!c->skipped++)
					c->first_skip_off = t->tok_off;
				rc = nx_jtok_capture(t, k, NULL, 0, err);
				if (rc == NX_ETRUNC)
					return stop_truncated(c, err);
				if (rc)
					return rc;
				continue;
			}
			rc = read_event(c, ev, err);
			if (rc == NX_ETRUNC)
				return stop_truncated(c, err);
			if (rc < 0)
				return rc;
			if (rc == 1) { /* {}: nothing to keep, and no time to invent */
				c->empty++;
				continue;
			}
			c->events++;
			return 1;
		default:
			return 0;
		}
	}
}
