/* SPDX-License-Identifier: MIT
 * neff_write.c: serialises struct nx_neff into a NEFF: JSON members (jansson, sorted
 * keys), the .bin instruction streams, a deterministic tar.gz, then the header with
 * data_size and hash. The bytes are parsed back before they are published, so the
 * writer never produces a file the reader rejects. */
#include "common/compat.h"
#include "neff/neff.h"
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

/* One side of a descriptor: a variable name for HBM, else "sb" or "psum". */
static int side_json(struct wr *w, json_t *o, const char *pfx, int loc, int var, uint64_t off,
		     unsigned ndim, const uint64_t *sizes, const int64_t *steps, unsigned start)
{
	char key[32];

	if (ndim < 1 || ndim > 4)
		return nx_errf(w->err, NX_EUSAGE, "%s: %u dimensions, expected 1..4", pfx, ndim);
	if (loc == NX_LOC_HBM) {
		if (var < 0 || (size_t)var >= w->neff->ntensors)
			return nx_errf(w->err, NX_EUSAGE, "%s: tensor index %d is out of range",
				       pfx, var);
		if (set_str(w, o, pfx, w->neff->tensors[var].name, pfx))
			return NX_EUSAGE;
	} else {
		set_str(w, o, pfx, loc == NX_LOC_PSUM ? "psum" : "sb", pfx);
	}
	snprintf(key, sizeof(key), "%s_off", pfx);
	set_int(o, key, (int64_t)off);
	snprintf(key, sizeof(key), "%s_sizes", pfx);
	json_object_set_new(o, key, int_array(sizes, ndim, false));
	snprintf(key, sizeof(key), "%s_steps", pfx);
	json_object_set_new(o, key, int_array(steps, ndim, true));
	if (start) {
		snprintf(key, sizeof(key), "%s_partition", pfx);
		set_int(o, key, start);
	}
	return 0;
}

static int block_json(struct wr *w, const struct nx_dma_block *b, json_t *o)
{
	json_t *descs = json_array();
	int rc = 0;

	if (b->queue < 0 || (size_t)b->queue >= w->neff->nqueues)
		rc = nx_errf(w->err, NX_EUSAGE, "queue index %d is out of range", b->queue);
	else
		rc = set_str(w, o, "queue", w->neff->queues[b->queue].name, "queue");
	set_int(o, "id", b->id);
	if (b->semaphore >= 0)
		set_int(o, "semaphore", b->semaphore);
	json_object_set_new(o, "desc", descs);
	for (size_t i = 0; !rc && i < b->ndesc; i++) {
		const struct nx_dma_desc *d = &b->desc[i];
		json_t *dj = json_object();

		json_array_append_new(descs, dj);
		set_str(w, dj, "op", "copy", "op");
		if (d->dtype < 0 || d->dtype >= NX_DT_COUNT) {
			rc = nx_errf(w->err, NX_EUSAGE, "desc[%zu]: dtype %d is not defined", i,
				     d->dtype);
			break;
		}
		set_str(w, dj, "dtype", nx_dtype_name(d->dtype), "dtype");
		if (d->transpose)
			json_object_set_new(dj, "transpose", json_true());
		if (d->cast && (d->to_dtype < 0 || d->to_dtype >= NX_DT_COUNT)) {
			rc = nx_errf(w->err, NX_EUSAGE, "desc[%zu]: to_dtype %d is not defined", i,
				     d->to_dtype);
			break;
		}
		if (d->cast)
			set_str(w, dj, "to_dtype", nx_dtype_name(d->to_dtype), "to_dtype");
		rc = side_json(w, dj, "from", d->from_loc, d->from_var, d->from_off, d->from_ndim,
			       d->from_sizes, d->from_steps, d->from_start_partition);
		if (!rc)
			rc = side_json(w, dj, "to", d->to_loc, d->to_var, d->to_off, d->to_ndim,
				       d->to_sizes, d->to_steps, d->to_start_partition);
		if (rc)
			nx_err_wrap(w->err, "desc[%zu]", i);
	}
	return rc;
}

/* sg00/<Engine>.json with that engine's blocks, which must be contiguous. */
static int write_engine_json(struct wr *w, int engine, size_t *next)
{
	const struct nx_neff *n = w->neff;
	json_t *root = json_object(), *dma = json_array();
	char member[64];
	int rc = 0;

	json_object_set_new(root, "dma", dma);
	for (; *next < n->nblocks && n->blocks[*next].engine == engine && !rc; (*next)++) {
		json_t *o = json_object();
		json_array_append_new(dma, o);
		rc = block_json(w, &n->blocks[*next], o);
		if (rc)
			nx_err_wrap(w->err, "block %zu (%s)", *next, nx_engine_name(engine));
	}
	snprintf(member, sizeof(member), "sg00/%s.json", nx_engine_name(engine));
	if (!rc)
		rc = add_json(w, member, root);
	json_decref(root);
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

static int dbg_str(struct wr *w, json_t *o, const char *key, const char *s)
{
	return s ? set_str(w, o, key, s, "kernel_debug_info.json") : 0;
}

static int decision_json(struct wr *w, const struct nx_dbg_decision *dc, json_t *decs)
{
	json_t *o = json_object(), *args = json_array();
	int rc;

	json_array_append_new(decs, o);
	json_object_set_new(o, "args", args);
	rc = dbg_str(w, o, "kind", dc->kind ? dc->kind : "");
	if (!rc)
		rc = dbg_str(w, o, "file", dc->file);
	if (dc->line >= 0)
		set_int(o, "line", dc->line);
	for (size_t k = 0; !rc && k < dc->nargs; k++) {
		json_t *kv = json_array();

		json_array_append_new(args, kv);
		json_array_append_new(kv, json_string(""));
		json_array_append_new(kv, json_string(""));
		if (!json_string_set(json_array_get(kv, 0), dc->keys[k] ? dc->keys[k] : "") &&
		    !json_string_set(json_array_get(kv, 1), dc->values[k] ? dc->values[k] : ""))
			continue;
		rc = nx_errf(w->err, NX_EUSAGE, "kernel_debug_info.json: a decision argument is "
			     "not valid UTF-8");
	}
	return rc;
}

static int write_debug(struct wr *w)
{
	const struct nx_debug_info *d = &w->neff->dbg;
	json_t *root = json_object(), *insts = json_array(), *frames = json_array();
	json_t *vars = json_array();
	int rc = 0;

	set_int(root, "version", 1);
	json_object_set_new(root, "instructions", insts);
	json_object_set_new(root, "stack_frames", frames);
	json_object_set_new(root, "iteration_variables", vars);
	for (size_t i = 0; !rc && i < d->ninsts; i++) {
		const struct nx_dbg_inst *di = &d->insts[i];
		json_t *o = json_object();

		json_array_append_new(insts, o);
		rc = dbg_str(w, o, "name", di->name ? di->name : "");
		if (!rc)
			rc = dbg_str(w, o, "file", di->file);
		if (!rc)
			rc = dbg_str(w, o, "bir_location", di->bir_location);
		if (di->line >= 0)
			set_int(o, "line", di->line);
		if (di->stack_frame_id >= 0)
			set_int(o, "stack_frame_id", di->stack_frame_id);
		if (di->iteration_vars_id >= 0)
			set_int(o, "iteration_variables_id", di->iteration_vars_id);
	}
	for (size_t i = 0; !rc && i < d->nframes; i++) {
		const struct nx_dbg_frame *f = &d->frames[i];
		json_t *o = json_object();

		json_array_append_new(frames, o);
		set_int(o, "id", f->id);
		if (f->parent >= 0)
			set_int(o, "parent", f->parent);
		rc = dbg_str(w, o, "function", f->function ? f->function : "");
		if (!rc)
			rc = dbg_str(w, o, "file", f->file);
		if (f->line >= 0)
			set_int(o, "line", f->line);
	}
	for (size_t i = 0; !rc && i < d->nitervars; i++) {
		const struct nx_dbg_itervar *v = &d->itervars[i];
		json_t *o = json_object();

		json_array_append_new(vars, o);
		set_int(o, "id", v->id);
		if (v->parent >= 0)
			set_int(o, "parent", v->parent);
		rc = dbg_str(w, o, "name", v->name ? v->name : "");
		set_int(o, "value", v->value);
		if (!rc)
			rc = dbg_str(w, o, "file", v->file);
		if (v->line >= 0)
			set_int(o, "line", v->line);
	}
	if (d->nbirs) {
		json_t *birs = json_array();
		json_object_set_new(root, "bir_instructions", birs);
		for (size_t i = 0; !rc && i < d->nbirs; i++) {
			json_t *o = json_object();
			json_array_append_new(birs, o);
			set_int(o, "bir_id", d->birs[i].bir_id);
			rc = dbg_str(w, o, "name", d->birs[i].name ? d->birs[i].name : "");
		}
	}
	if (d->ndecisions) {
		json_t *decs = json_array();
		json_object_set_new(root, "compiler_decisions", decs);
		for (size_t i = 0; !rc && i < d->ndecisions; i++)
			rc = decision_json(w, &d->decisions[i], decs);
	}
	if (!rc)
		rc = add_json(w, "kernel_debug_info.json", root);
	json_decref(root);
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
