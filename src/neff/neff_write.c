/* SPDX-License-Identifier: MIT
 * neff_write.c: serialises struct nx_neff into a NEFF: JSON members (jansson, sorted
 * keys), the .bin instruction streams, a deterministic tar.gz, then the header with
 * data_size and hash. The bytes are parsed back before they are published, so the
 * writer never produces a file the reader rejects. */
#include "common/compat.h"
#include "neff/neff.h"
#include "neff/neff_source.h"
#include "neff/tar.h"
#include "common/le.h"
#include "common/outpath.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct wr {
	const struct nx_neff *neff;
	struct nx_err *err;
	struct nx_strbuf tar;
};

/* def.json types written when the caller left def_type NULL. */
static const char *const kind_def_type[] = { "input", "output", "file", "tmp-buf" };
static const char *const queue_def_type[NX_QT_COUNT] = {
	"instruction", "in", "out", "data", "dynamic", "dynamic", "unknown",
};

/* json_string() refuses invalid UTF-8; report that instead of dereferencing NULL. */
static int set_str(struct wr *w, json_t *obj, const char *key, const char *s, const char *what)
{
	json_t *v = json_string(s);

	if (!v)
		return nx_errf(w->err, NX_EUSAGE, "%s: \"%s\" is not valid UTF-8", what, key);
	json_object_set_new(obj, key, v);
	return 0;
}

static void set_int(json_t *obj, const char *key, int64_t v)
{
	json_object_set_new(obj, key, json_integer(v));
}

static json_t *int_array(const void *vals, unsigned n, bool is_signed)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n; i++) {
		int64_t v = is_signed ? ((const int64_t *)vals)[i]
				      : (int64_t)((const uint64_t *)vals)[i];
		json_array_append_new(a, json_integer(v));
	}
	return a;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names must be present and unique: JSON objects would silently keep only one. */
static int check_names(struct wr *w, const char *what, const char **names, size_t n)
{
	const char **s = nx_xcalloc(n + 1, sizeof(*s));
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		if (!names[i] || !names[i][0])
			rc = nx_errf(w->err, NX_EUSAGE, "%s %zu has no name", what, i);
		s[i] = names[i];
	}
	if (!rc && n)
		qsort(s, n, sizeof(*s), cmp_str);
	for (size_t i = 1; i < n && !rc; i++)
		if (!strcmp(s[i], s[i - 1]))
			rc = nx_errf(w->err, NX_EUSAGE, "%s name \"%s\" is used twice", what, s[i]);
	free(s);
	return rc;
}

static int add_json(struct wr *w, const char *member, json_t *root)
{
	char *text = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(1));
	int rc;

	if (!text)
		return nx_errf(w->err, -ENOMEM, "%s: cannot serialise JSON", member);
	rc = nx_tar_add(&w->tar, member, text, strlen(text), w->err);
	free(text);
	return rc;
}

static int tensor_json(struct wr *w, const struct nx_tensor *t, json_t *o)
{
	const char *type = t->def_type;
	int rc;

	if (!type && t->kind >= 0 && t->kind <= NX_TENSOR_OTHER)
		type = kind_def_type[t->kind];
	if (!type)
		type = "tmp-buf";
	if ((rc = set_str(w, o, "type", type, t->name)))
		return rc;
	set_int(o, "var_id", t->var_id);
	set_int(o, "size", (int64_t)t->size);
	if (t->dtype >= 0)
		set_str(w, o, "dtype", nx_dtype_name(t->dtype), t->name);
	if (t->format && (rc = set_str(w, o, "format", t->format, t->name)))
		return rc;
	if (t->rank)
		json_object_set_new(o, "shape",
				    int_array(t->shape, t->rank < 8 ? t->rank : 8, false));
	if (t->node >= 0)
		set_int(o, "node", t->node);
	return 0;
}

static int queue_json(struct wr *w, const struct nx_dma_queue *q, json_t *o)
{
	const char *type = q->def_type;
	int rc;

	if (!type && q->queue_type >= 0 && q->queue_type < NX_QT_COUNT)
		type = queue_def_type[q->queue_type];
	if (!type)
		type = "unknown";
	if ((rc = set_str(w, o, "type", type, q->name)))
		return rc;
	if (q->owner < 0 || q->owner >= NX_ENGINE_COUNT)
		return nx_errf(w->err, NX_EUSAGE, "queue \"%s\": owner %d is not an engine",
			       q->name, q->owner);
	set_str(w, o, "owner", nx_engine_name(q->owner), q->name);
	if (q->semaphore >= 0)
		set_int(o, "semaphore", q->semaphore);
	set_int(o, "engine_idx", q->engine_idx);
	set_int(o, "queue_idx", q->queue_idx);
	set_int(o, "axi_port", q->axi_port);
	set_int(o, "dram_channel", q->dram_channel);
	return 0;
}

static int write_def(struct wr *w)
{
	const struct nx_neff *n = w->neff;
	json_t *root = json_object(), *vars = json_object(), *queues = json_object();
	const char **names;
	int rc;

	json_object_set_new(root, "var", vars);
	json_object_set_new(root, "dma_queue", queues);
	names = nx_xcalloc(n->ntensors + n->nqueues + 1, sizeof(*names));
	for (size_t i = 0; i < n->ntensors; i++)
		names[i] = n->tensors[i].name;
	for (size_t i = 0; i < n->nqueues; i++)
		names[n->ntensors + i] = n->queues[i].name;
	rc = check_names(w, "tensor", names, n->ntensors);
	if (!rc)
		rc = check_names(w, "queue", names + n->ntensors, n->nqueues);
	free(names);
	for (size_t i = 0; !rc && i < n->ntensors; i++) {
		json_t *o = json_object();
		rc = tensor_json(w, &n->tensors[i], o);
		if (!rc && json_object_set_new(vars, n->tensors[i].name, o))
			rc = nx_errf(w->err, NX_EUSAGE, "tensor %zu: name is not valid UTF-8", i);
		else if (rc)
			json_decref(o);
	}
	for (size_t i = 0; !rc && i < n->nqueues; i++) {
		json_t *o = json_object();
		rc = queue_json(w, &n->queues[i], o);
		if (!rc && json_object_set_new(queues, n->queues[i].name, o))
			rc = nx_errf(w->err, NX_EUSAGE, "queue %zu: name is not valid UTF-8", i);
		else if (rc)
			json_decref(o);
	}
	if (!rc)
		rc = add_json(w, "sg00/def.json", root);
	json_decref(root);
	return rc;
}

/* --- the large members, written as text ---------------------------------------------
 * An <Engine>.json and kernel_debug_info.json hold a record per DMA block or instruction
 * (a 100k-instruction kernel: tens of MB); building them as jansson trees cost most of
 * `kernel asm`. They are written straight to text, exactly as json_dumps writes a tree
 * with JSON_SORT_KEYS | JSON_INDENT(1) (the writers below name their keys in sorted
 * order), and with the same checks and errors as the tree writers: a string must be valid
 * UTF-8, as json_string() requires. */

/* Whether s is valid UTF-8 as jansson requires: no overlong forms, no surrogates, at most
 * U+10FFFF. */
static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned c = *p, n, cp;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

/* set_str's check, for a string the text writers will write. */
static int check_str(struct wr *w, const char *key, const char *s, const char *what)
{
	if (!utf8_valid(s))
		return nx_errf(w->err, NX_EUSAGE, "%s: \"%s\" is not valid UTF-8", what, key);
	return 0;
}

/* Pretty JSON text: one space of indent per level, as jansson's JSON_INDENT(1). */
struct pj {
	struct nx_strbuf *sb;
	int depth;
	bool first; /* nothing written yet in the object or array open at depth */
};

static void pj_item(struct pj *p)
{
	struct nx_strbuf *sb = p->sb;

	nx_strbuf_grow(sb, (size_t)p->depth + 2);
	if (!p->first)
		sb->buf[sb->len++] = ',';
	sb->buf[sb->len++] = '\n';
	memset(sb->buf + sb->len, ' ', (size_t)p->depth);
	sb->len += (size_t)p->depth;
	sb->buf[sb->len] = '\0';
	p->first = false;
}

static void pj_open(struct pj *p, char c)
{
	nx_strbuf_addch(p->sb, c);
	p->depth++;
	p->first = true;
}

static void pj_close(struct pj *p, char c)
{
	bool empty = p->first;

	p->depth--;
	if (!empty) {
		p->first = true; /* a newline and the indent, without a comma */
		pj_item(p);
	}
	nx_strbuf_addch(p->sb, c);
	p->first = false;
}

static void pj_key(struct pj *p, const char *key)
{
	pj_item(p);
	nx_strbuf_addch(p->sb, '"');
	nx_strbuf_addstr(p->sb, key);
	nx_strbuf_add(p->sb, "\": ", 3);
}

static void pj_int(struct pj *p, const char *key, int64_t v)
{
	pj_key(p, key);
	nx_strbuf_addi64(p->sb, v);
}

/* A string as jansson escapes it ('"', '\\', the control bytes; \uXXXX in capitals). */
static void pj_quote(struct nx_strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *run = s;

	nx_strbuf_addch(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *esc;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		nx_strbuf_add(sb, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default: {
			char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
			nx_strbuf_addstr(sb, u);
			continue;
		}
		}
		nx_strbuf_addstr(sb, esc);
	}
	nx_strbuf_add(sb, run, (size_t)(s - run));
	nx_strbuf_addch(sb, '"');
}

static void pj_str(struct pj *p, const char *key, const char *s)
{
	pj_key(p, key);
	pj_quote(p->sb, s);
}

static void pj_uints(struct pj *p, const char *key, const uint64_t *v, unsigned n)
{
	pj_key(p, key);
	pj_open(p, '[');
	for (unsigned i = 0; i < n; i++) {
		pj_item(p);
		nx_strbuf_addi64(p->sb, (int64_t)v[i]);
	}
	pj_close(p, ']');
}

static void pj_ints(struct pj *p, const char *key, const int64_t *v, unsigned n)
{
	pj_key(p, key);
	pj_open(p, '[');
	for (unsigned i = 0; i < n; i++) {
		pj_item(p);
		nx_strbuf_addi64(p->sb, v[i]);
	}
	pj_close(p, ']');
}

/* The name one side of a descriptor writes: a variable name for HBM, else "sb" or "psum". */
static int side_name(struct wr *w, const char *pfx, int loc, int var, unsigned ndim,
		     const char **name)
{
	if (ndim < 1 || ndim > 4)
		return nx_errf(w->err, NX_EUSAGE, "%s: %u dimensions, expected 1..4", pfx, ndim);
	if (loc != NX_LOC_HBM) {
		*name = loc == NX_LOC_PSUM ? "psum" : "sb";
		return 0;
	}
	if (var < 0 || (size_t)var >= w->neff->ntensors)
		return nx_errf(w->err, NX_EUSAGE, "%s: tensor index %d is out of range", pfx, var);
	*name = w->neff->tensors[var].name;
	return check_str(w, pfx, *name, pfx);
}

/* One side's members (from, from_off, [from_partition,] from_sizes, from_steps; the
 * destination's element type after "to" when the DMA casts). */
static void side_text(struct pj *p, const char *pfx, const char *name, const char *cast,
		      uint64_t off, unsigned ndim, const uint64_t *sizes, const int64_t *steps,
		      unsigned start)
{
	char key[32];

	pj_str(p, pfx, name);
	if (cast)
		pj_str(p, "to_dtype", cast);
	snprintf(key, sizeof(key), "%s_off", pfx);
	pj_int(p, key, (int64_t)off);
	if (start) {
		snprintf(key, sizeof(key), "%s_partition", pfx);
		pj_int(p, key, start);
	}
	snprintf(key, sizeof(key), "%s_sizes", pfx);
	pj_uints(p, key, sizes, ndim);
	snprintf(key, sizeof(key), "%s_steps", pfx);
	pj_ints(p, key, steps, ndim);
}

static int desc_text(struct wr *w, struct pj *p, const struct nx_dma_desc *d, size_t i)
{
	const char *from, *to;
	int rc;

	if (d->dtype < 0 || d->dtype >= NX_DT_COUNT)
		return nx_errf(w->err, NX_EUSAGE, "desc[%zu]: dtype %d is not defined", i, d->dtype);
	if (d->cast && (d->to_dtype < 0 || d->to_dtype >= NX_DT_COUNT))
		return nx_errf(w->err, NX_EUSAGE, "desc[%zu]: to_dtype %d is not defined", i,
			       d->to_dtype);
	rc = side_name(w, "from", d->from_loc, d->from_var, d->from_ndim, &from);
	if (!rc)
		rc = side_name(w, "to", d->to_loc, d->to_var, d->to_ndim, &to);
	if (rc) {
		nx_err_wrap(w->err, "desc[%zu]", i);
		return rc;
	}
	pj_item(p);
	pj_open(p, '{');
	pj_str(p, "dtype", nx_dtype_name(d->dtype));
	side_text(p, "from", from, NULL, d->from_off, d->from_ndim, d->from_sizes, d->from_steps,
		  d->from_start_partition);
	pj_str(p, "op", "copy");
	side_text(p, "to", to, d->cast ? nx_dtype_name(d->to_dtype) : NULL, d->to_off, d->to_ndim,
		  d->to_sizes, d->to_steps, d->to_start_partition);
	if (d->transpose) {
		pj_key(p, "transpose");
		nx_strbuf_add(p->sb, "true", 4);
	}
	pj_close(p, '}');
	return 0;
}

static int block_text(struct wr *w, struct pj *p, const struct nx_dma_block *b)
{
	const char *queue;
	int rc = 0;

	if (b->queue < 0 || (size_t)b->queue >= w->neff->nqueues)
		return nx_errf(w->err, NX_EUSAGE, "queue index %d is out of range", b->queue);
	queue = w->neff->queues[b->queue].name;
	if ((rc = check_str(w, "queue", queue, "queue")))
		return rc;
	pj_item(p);
	pj_open(p, '{');
	pj_key(p, "desc");
	pj_open(p, '[');
	for (size_t i = 0; !rc && i < b->ndesc; i++)
		rc = desc_text(w, p, &b->desc[i], i);
	pj_close(p, ']');
	pj_int(p, "id", b->id);
	pj_str(p, "queue", queue);
	if (b->semaphore >= 0)
		pj_int(p, "semaphore", b->semaphore);
	pj_close(p, '}');
	return rc;
}

/* sg00/<Engine>.json with that engine's blocks, which must be contiguous. */
static int write_engine_json(struct wr *w, int engine, size_t *next)
{
	const struct nx_neff *n = w->neff;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct pj p = { &sb, 0, true };
	char member[64];
	int rc = 0;

	pj_open(&p, '{');
	pj_key(&p, "dma");
	pj_open(&p, '[');
	for (; *next < n->nblocks && n->blocks[*next].engine == engine && !rc; (*next)++) {
		rc = block_text(w, &p, &n->blocks[*next]);
		if (rc)
			nx_err_wrap(w->err, "block %zu (%s)", *next, nx_engine_name(engine));
	}
	pj_close(&p, ']');
	pj_close(&p, '}');
	snprintf(member, sizeof(member), "sg00/%s.json", nx_engine_name(engine));
	if (!rc)
		rc = nx_tar_add(&w->tar, member, sb.buf, sb.len, w->err);
	nx_strbuf_release(&sb);
	return rc;
}

static int write_bin(struct wr *w, int engine)
{
	const struct nx_neff *n = w->neff;
	size_t count = n->ninst[engine];
	uint8_t *buf = nx_xcalloc(count + 1, NX_INST_EXT_SIZE);
	size_t len = 0;
	char member[64];
	int rc;

	for (size_t i = 0; i < count; i++)
		len += nx_inst_encode(&n->inst[engine][i], buf + len);
	snprintf(member, sizeof(member), "sg00/%s.bin", nx_engine_name(engine));
	rc = nx_tar_add(&w->tar, member, buf, len, w->err);
	free(buf);
	return rc;
}

/* kernel_debug_info.json's strings, checked in the order the records list them (the
 * first bad one is the one reported), before any text is written. */
static int check_debug(struct wr *w)
{
	const struct nx_debug_info *d = &w->neff->dbg;
	const char *what = "kernel_debug_info.json";
	int rc = 0;

	for (size_t i = 0; !rc && i < d->ninsts; i++) {
		const struct nx_dbg_inst *di = &d->insts[i];

		rc = check_str(w, "name", di->name ? di->name : "", what);
		if (!rc && di->file)
			rc = check_str(w, "file", di->file, what);
		if (!rc && di->bir_location)
			rc = check_str(w, "bir_location", di->bir_location, what);
	}
	for (size_t i = 0; !rc && i < d->nframes; i++) {
		rc = check_str(w, "function", d->frames[i].function ? d->frames[i].function : "",
			       what);
		if (!rc && d->frames[i].file)
			rc = check_str(w, "file", d->frames[i].file, what);
	}
	for (size_t i = 0; !rc && i < d->nitervars; i++) {
		rc = check_str(w, "name", d->itervars[i].name ? d->itervars[i].name : "", what);
		if (!rc && d->itervars[i].file)
			rc = check_str(w, "file", d->itervars[i].file, what);
	}
	for (size_t i = 0; !rc && i < d->nbirs; i++)
		rc = check_str(w, "name", d->birs[i].name ? d->birs[i].name : "", what);
	for (size_t i = 0; !rc && i < d->ndecisions; i++) {
		const struct nx_dbg_decision *dc = &d->decisions[i];

		rc = check_str(w, "kind", dc->kind ? dc->kind : "", what);
		if (!rc && dc->file)
			rc = check_str(w, "file", dc->file, what);
		for (size_t k = 0; !rc && k < dc->nargs; k++)
			if (!utf8_valid(dc->keys[k] ? dc->keys[k] : "") ||
			    !utf8_valid(dc->values[k] ? dc->values[k] : ""))
				rc = nx_errf(w->err, NX_EUSAGE, "kernel_debug_info.json: a decision "
					     "argument is not valid UTF-8");
	}
	return rc;
}

/* The compiler's decisions: kind, source location and [key, value] arguments. */
static void debug_decisions(struct pj *p, const struct nx_debug_info *d)
{
	pj_key(p, "compiler_decisions");
	pj_open(p, '[');
	for (size_t i = 0; i < d->ndecisions; i++) {
		const struct nx_dbg_decision *dc = &d->decisions[i];

		pj_item(p);
		pj_open(p, '{');
		pj_key(p, "args");
		pj_open(p, '[');
		for (size_t k = 0; k < dc->nargs; k++) {
			pj_item(p);
			pj_open(p, '[');
			pj_item(p);
			pj_quote(p->sb, dc->keys[k] ? dc->keys[k] : "");
			pj_item(p);
			pj_quote(p->sb, dc->values[k] ? dc->values[k] : "");
			pj_close(p, ']');
		}
		pj_close(p, ']');
		if (dc->file)
			pj_str(p, "file", dc->file);
		pj_str(p, "kind", dc->kind ? dc->kind : "");
		if (dc->line >= 0)
			pj_int(p, "line", dc->line);
		pj_close(p, '}');
	}
	pj_close(p, ']');
}

static void debug_insts(struct pj *p, const struct nx_debug_info *d)
{
	pj_key(p, "instructions");
	pj_open(p, '[');
	for (size_t i = 0; i < d->ninsts; i++) {
		const struct nx_dbg_inst *di = &d->insts[i];

		pj_item(p);
		pj_open(p, '{');
		if (di->bir_location)
			pj_str(p, "bir_location", di->bir_location);
		if (di->file)
			pj_str(p, "file", di->file);
		if (di->iteration_vars_id >= 0)
			pj_int(p, "iteration_variables_id", di->iteration_vars_id);
		if (di->line >= 0)
			pj_int(p, "line", di->line);
		pj_str(p, "name", di->name ? di->name : "");
		if (di->stack_frame_id >= 0)
			pj_int(p, "stack_frame_id", di->stack_frame_id);
		pj_close(p, '}');
	}
	pj_close(p, ']');
}

static void debug_itervars(struct pj *p, const struct nx_debug_info *d)
{
	pj_key(p, "iteration_variables");
	pj_open(p, '[');
	for (size_t i = 0; i < d->nitervars; i++) {
		const struct nx_dbg_itervar *v = &d->itervars[i];

		pj_item(p);
		pj_open(p, '{');
		if (v->file)
			pj_str(p, "file", v->file);
		pj_int(p, "id", v->id);
		if (v->line >= 0)
			pj_int(p, "line", v->line);
		pj_str(p, "name", v->name ? v->name : "");
		if (v->parent >= 0)
			pj_int(p, "parent", v->parent);
		pj_int(p, "value", v->value);
		pj_close(p, '}');
	}
	pj_close(p, ']');
}

static void debug_frames(struct pj *p, const struct nx_debug_info *d)
{
	pj_key(p, "stack_frames");
	pj_open(p, '[');
	for (size_t i = 0; i < d->nframes; i++) {
		const struct nx_dbg_frame *f = &d->frames[i];

		pj_item(p);
		pj_open(p, '{');
		if (f->file)
			pj_str(p, "file", f->file);
		pj_str(p, "function", f->function ? f->function : "");
		pj_int(p, "id", f->id);
		if (f->line >= 0)
			pj_int(p, "line", f->line);
		if (f->parent >= 0)
			pj_int(p, "parent", f->parent);
		pj_close(p, '}');
	}
	pj_close(p, ']');
}

static int write_debug(struct wr *w)
{
	const struct nx_debug_info *d = &w->neff->dbg;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct pj p = { &sb, 0, true };
	int rc = check_debug(w);

	if (rc)
		return rc;
	pj_open(&p, '{');
	if (d->nbirs) {
		pj_key(&p, "bir_instructions");
		pj_open(&p, '[');
		for (size_t i = 0; i < d->nbirs; i++) {
			pj_item(&p);
			pj_open(&p, '{');
			pj_int(&p, "bir_id", d->birs[i].bir_id);
			pj_str(&p, "name", d->birs[i].name ? d->birs[i].name : "");
			pj_close(&p, '}');
		}
		pj_close(&p, ']');
	}
	if (d->ndecisions)
		debug_decisions(&p, d);
	debug_insts(&p, d);
	debug_itervars(&p, d);
	debug_frames(&p, d);
	pj_int(&p, "version", 1);
	pj_close(&p, '}');
	rc = nx_tar_add(&w->tar, "kernel_debug_info.json", sb.buf, sb.len, w->err);
	nx_strbuf_release(&sb);
	return rc;
}

static int write_members(struct wr *w)
{
	const struct nx_neff *n = w->neff;
	json_t *info = json_object();
	size_t next = 0;
	int rc = 0;

	if (n->tool_version)
		rc = set_str(w, info, "tool_version", n->tool_version, "info.json");
	if (!rc)
		rc = add_json(w, "info.json", info);
	json_decref(info);
	if (!rc)
		rc = write_def(w);
	for (int e = 0; !rc && e < NX_ENGINE_COUNT; e++) {
		rc = write_engine_json(w, e, &next);
		if (!rc)
			rc = write_bin(w, e);
	}
	if (!rc && next != n->nblocks)
		rc = nx_errf(w->err, NX_EUSAGE, "block %zu (engine %d) is out of engine order: "
			     "blocks must be grouped by engine, Tensor first", next,
			     n->blocks[next].engine);
	if (!rc && (n->dbg.ninsts || n->dbg.nframes || n->dbg.nitervars || n->dbg.nbirs ||
		    n->dbg.ndecisions))
		rc = write_debug(w);
	if (!rc)
		rc = nx_neff_source_write(&w->tar, &n->source, w->err);
	return rc;
}

/* Extended instruction records, the opcodes, dtypes, activation functions and ALU
 * operations added with them, and DMA casts exist from NEFF major version 3 on. */
static bool needs_v3(const struct nx_neff *n)
{
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		for (size_t i = 0; i < n->ninst[e]; i++)
			if (nx_inst_needs_v3(&n->inst[e][i]))
				return true;
	for (size_t b = 0; b < n->nblocks; b++)
		for (size_t d = 0; d < n->blocks[b].ndesc; d++)
			if (n->blocks[b].desc[d].cast || n->blocks[b].desc[d].dtype >= NX_DT_COUNT_V2)
				return true;
	for (size_t t = 0; t < n->ntensors; t++)
		if (n->tensors[t].dtype >= NX_DT_COUNT_V2)
			return true;
	return false;
}

int nx_neff_write_mem(const struct nx_neff *neff, uint8_t **out, size_t *out_len,
		      struct nx_err *err)
{
	struct wr w = { neff, err, NX_STRBUF_INIT };
	struct nx_neff_header h = neff->hdr;
	struct nx_neff check;
	uint8_t *gz = NULL, *file = NULL;
	size_t gzlen = 0;
	int rc;

	*out = NULL;
	*out_len = 0;
	rc = write_members(&w);
	if (rc)
		goto out;
	nx_tar_finish(&w.tar);
	rc = nx_gzip((const uint8_t *)w.tar.buf, w.tar.len, &gz, &gzlen, err);
	/* The tar is the largest buffer here: gone before the read-back builds a NEFF again. */
	nx_strbuf_release(&w.tar);
	if (rc)
		goto out;
	if (!h.pkg_version)
		h.pkg_version = 1;
	if (!h.major_version)
		h.major_version = NX_NEFF_MAJOR_DEFAULT;
	if (needs_v3(neff) && h.major_version < 3)
		h.major_version = 3;
	h.header_size = NX_NEFF_HEADER_SIZE;
	h.data_size = gzlen;
	nx_neff_payload_hash(h.pkg_version, gz, gzlen, h.hash);
	file = nx_xmalloc(NX_NEFF_HEADER_SIZE + gzlen);
	nx_neff_header_encode(&h, file);
	memcpy(file + NX_NEFF_HEADER_SIZE, gz, gzlen);
	free(gz);
	gz = NULL;
	/* Whatever the reader would reject (bad records, dangling ids) is the caller's bug. */
	rc = nx_neff_read_mem("(new NEFF)", file, NX_NEFF_HEADER_SIZE + gzlen, &check, err);
	if (rc) {
		nx_err_wrap(err, "the NEFF would not read back");
		if (err)
			err->code = NX_EUSAGE;
		rc = NX_EUSAGE;
		goto out;
	}
	nx_neff_release(&check);
	*out = file;
	*out_len = NX_NEFF_HEADER_SIZE + gzlen;
	file = NULL;
out:
	free(gz);
	free(file);
	nx_strbuf_release(&w.tar);
	return rc;
}

int nx_neff_write(const char *path, const struct nx_neff *neff, struct nx_err *err)
{
	uint8_t *data;
	size_t len;
	int rc = nx_neff_write_mem(neff, &data, &len, err);

	if (rc) {
		nx_err_wrap(err, "writing '%s'", path);
		return rc;
	}
	rc = nx_out_file_write(path, &nx_neff_out_kind, 0, data, len, err);
	free(data);
	return rc;
}

/* A NEFF header: package version 1 or 2, then its own size. */
static bool is_neff(const uint8_t *h, size_t n)
{
	return n >= 16 && (nx_get_le64(h) == 1 || nx_get_le64(h) == 2) &&
	       nx_get_le64(h + 8) == NX_NEFF_HEADER_SIZE;
}

const struct nx_out_kind nx_neff_out_kind = { "a NEFF", is_neff };
