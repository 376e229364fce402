/* SPDX-License-Identifier: MIT
 * neff_read.c: parses a NEFF into struct nx_neff: header and hash, then the tarball's
 * info.json, sg00/def.json, sg00/<Engine>.json, kernel_debug_info.json and the
 * sg00/<Engine>.bin instruction streams (formats in docs/formats/neff.md), and the kernel
 * source the NEFF may carry (neff_source.c).
 *
 * Every value that sizes something is range-checked before use; counts come from the
 * data actually present (JSON arrays, file lengths), never from a field that merely
 * claims them. Errors read "<file>: <member>: <JSON path or record>: <problem>".
 *
 * The big members (the debug info, the engines' DMA blocks: tens of MB in a real kernel)
 * are never parsed whole: neff_json.h hands their arrays' elements over one at a time,
 * each tree freed once its element is read. */
#include "common/compat.h"
#include "neff/neff.h"
#include "neff/json_tok.h"
#include "neff/neff_json.h"
#include "neff/neff_source.h"
#include "neff/tar.h"
#include "common/assert.h"
#include "common/fsutil.h"
#include "common/strmap.h"
#include "common/xalloc.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sanity limits on sizes found in JSON (bytes, elements, offsets). */
#define MAX_BYTES ((int64_t)1 << 48)
#define MAX_DIM ((int64_t)1 << 32)
#define MAX_STEP ((int64_t)1 << 40)

/* A name or id with the position it came from, so qsort needs no context. */
struct keyed {
	const char *name;
	int64_t id;
	size_t pos;
};

struct rd {
	const char *file;   /* the NEFF, for messages */
	const char *member; /* tar member being parsed */
	struct nx_err *err;
	struct nx_neff *neff;
	struct keyed *by_name; /* tensors sorted by name */
	int engine;            /* whose sg00/<Engine>.json is being read */
	const struct nx_jt *jt; /* the tokens the getters read: root's or elem's */
	struct nx_jt root;      /* a member's top-level values but its streamed arrays */
	struct nx_jt elem;      /* the streamed array's element at hand */
};

static int fail(struct rd *r, int code, const char *path, const char *fmt, ...) NX_PRINTF(4, 5);
static int fail(struct rd *r, int code, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path && path[0])
		return nx_errf(r->err, code, "%s: %s: %s: %s", r->file, r->member, path, msg);
	return nx_errf(r->err, code, "%s: %s: %s", r->file, r->member, msg);
}

static const char *type_of(const struct rd *r, uint32_t v)
{
	switch (nx_jt_type(r->jt, v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE: case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

/* "path.key" (or "key" at the top level) for messages. */
static const char *keypath(char buf[512], const char *path, const char *key)
{
	snprintf(buf, 512, "%s%s%s", path, path[0] && key[0] ? "." : "", key);
	return buf;
}

/* Fetches obj[key]; NULL when absent or null and not required. */
static bool is(const struct rd *r, uint32_t v, json_type type)
{
	return nx_jt_type(r->jt, v) == type;
}

static int get(struct rd *r, uint32_t obj, const char *path, const char *key, bool req,
	       uint32_t *out)
{
	char p[512];

	*out = nx_jt_get(r->jt, obj, key);
	if (*out != NX_JT_NONE && is(r, *out, JSON_NULL))
		*out = NX_JT_NONE;
	if (*out == NX_JT_NONE && req)
		return fail(r, NX_ECORRUPT, keypath(p, path, key), "missing");
	return 0;
}

#define NO_INDEX SIZE_MAX

/* path.key, or path.key[index] unless index is NO_INDEX: the place of a failure (made
 * only then, a snprintf per value read being a tenth of reading a big NEFF). */
static const char *indexed_keypath(char buf[512], const char *path, const char *key,
				   size_t index)
{
	char k[96];

	if (index == NO_INDEX)
		return keypath(buf, path, key);
	snprintf(k, sizeof(k), "%s[%zu]", key, index);
	return keypath(buf, path, k);
}

/* "base[i]" into buf (of 512 bytes), as snprintf's "%s[%zu]" but without its cost, paid
 * per element (a tenth of the elements' reading once jansson no longer builds them). */
static const char *index_path(char buf[512], const char *base, size_t i)
{
	char digits[24];
	size_t n = 0, len = strlen(base);

	do
		digits[n++] = (char)('0' + i % 10);
	while ((i /= 10));
	if (len + n + 3 > 512)
		len = 512 - n - 3;
	memcpy(buf, base, len);
	buf[len++] = '[';
	while (n)
		buf[len++] = digits[--n];
	buf[len++] = ']';
	buf[len] = '\0';
	return buf;
}

static int int_value(struct rd *r, uint32_t v, const char *path, const char *key, size_t index,
		     int64_t min, int64_t max, int64_t *out)
{
	char p[512];

	if (!is(r, v, JSON_INTEGER))
		return fail(r, NX_ECORRUPT, indexed_keypath(p, path, key, index),
			    "expected integer, found %s", type_of(r, v));
	*out = nx_jt_int(r->jt, v);
	if (*out < min || *out > max)
		return fail(r, NX_ECORRUPT, indexed_keypath(p, path, key, index), "value %" PRId64
			    " is out of range %" PRId64 "..%" PRId64, *out, min, max);
	return 0;
}

/* Integer member; `def` when absent and not required. */
static int get_int(struct rd *r, uint32_t obj, const char *path, const char *key, bool req,
		   int64_t def, int64_t min, int64_t max, int64_t *out)
{
	uint32_t v;
	int rc = get(r, obj, path, key, req, &v);

	*out = def;
	if (rc || v == NX_JT_NONE)
		return rc;
	return int_value(r, v, path, key, NO_INDEX, min, max, out);
}

/* String member (borrowed from the JSON tree); NULL when absent and not required. */
static int get_str(struct rd *r, uint32_t obj, const char *path, const char *key, bool req,
		   const char **out)
{
	char p[512];
	uint32_t v;
	int rc = get(r, obj, path, key, req, &v);

	*out = NULL;
	if (rc || v == NX_JT_NONE)
		return rc;
	if (!is(r, v, JSON_STRING))
		return fail(r, NX_ECORRUPT, keypath(p, path, key), "expected string, found %s",
			    type_of(r, v));
	*out = nx_jt_str(r->jt, v);
	return 0;
}

static int get_bool(struct rd *r, uint32_t obj, const char *path, const char *key, bool *out)
{
	char p[512];
	uint32_t v;
	int rc = get(r, obj, path, key, false, &v);

	*out = false;
	if (rc || v == NX_JT_NONE)
		return rc;
	if (!is(r, v, JSON_TRUE) && !is(r, v, JSON_FALSE))
		return fail(r, NX_ECORRUPT, keypath(p, path, key), "expected boolean, found %s",
			    type_of(r, v));
	*out = is(r, v, JSON_TRUE);
	return 0;
}

/* Object or array member of the wanted type; NULL when absent and not required. */
static int get_typed(struct rd *r, uint32_t obj, const char *path, const char *key, bool req,
		     json_type type, uint32_t *out)
{
	char p[512];
	int rc = get(r, obj, path, key, req, out);

	if (rc || *out == NX_JT_NONE)
		return rc;
	if (!is(r, *out, type))
		return fail(r, NX_ECORRUPT, keypath(p, path, key), "expected %s, found %s",
			    type == JSON_OBJECT ? "object" : "array", type_of(r, *out));
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? nx_xstrdup(s) : NULL;
}

/* Members may be stored with a leading "./" (tar -C dir .). */
static const struct nx_tar_entry *find_member(const struct nx_tar *tar, const char *name)
{
	char alt[128];
	const struct nx_tar_entry *e = nx_tar_find(tar, name);

	if (!e) {
		snprintf(alt, sizeof(alt), "./%s", name);
		e = nx_tar_find(tar, alt);
	}
	return e;
}

static int kind_of(const char *def_type)
{
	if (!strcmp(def_type, "input"))
		return NX_TENSOR_IN;
	if (!strcmp(def_type, "output"))
		return NX_TENSOR_OUT;
	if (!strcmp(def_type, "file") || !strcmp(def_type, "weight"))
		return NX_TENSOR_WEIGHT;
	return NX_TENSOR_OTHER;
}

static int queue_type_of(const char *def_type, int owner)
{
	if (!strcmp(def_type, "in"))
		return NX_QT_INPUT;
	if (!strcmp(def_type, "out"))
		return NX_QT_OUTPUT;
	if (!strcmp(def_type, "data") || !strcmp(def_type, "weights"))
		return NX_QT_DATA;
	if (!strcmp(def_type, "dynamic"))
		return owner == NX_ENGINE_GPSIMD ? NX_QT_SOFTWARE_DYNAMIC : NX_QT_HARDWARE_DYNAMIC;
	if (!strcmp(def_type, "instruction"))
		return NX_QT_INSTRUCTION;
	return NX_QT_UNKNOWN;
}

static int parse_var(struct rd *r, const char *name, uint32_t v, struct nx_tensor *t)
{
	char path[512], kp[512];
	const char *s;
	uint32_t shape;
	int64_t x;
	int rc;

	snprintf(path, sizeof(path), "var.%s", name);
	t->name = nx_xstrdup(name);
	t->dtype = -1;
	t->node = -1;
	if (!name[0] || !strcmp(name, "sb") || !strcmp(name, "psum"))
		return fail(r, NX_ECORRUPT, path, "variable name \"%s\" is reserved", name);
	if (!is(r, v, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, path, "expected object, found %s", type_of(r, v));
	if ((rc = get_str(r, v, path, "type", true, &s)))
		return rc;
	t->def_type = nx_xstrdup(s);
	t->kind = kind_of(s);
	if ((rc = get_int(r, v, path, "var_id", true, 0, 0, INT64_MAX, &t->var_id)) ||
	    (rc = get_int(r, v, path, "size", true, 0, 0, MAX_BYTES, &x)))
		return rc;
	t->size = (uint64_t)x;
	if ((rc = get_str(r, v, path, "dtype", false, &s)))
		return rc;
	if (s && (t->dtype = nx_dtype_parse(s)) < 0)
		return fail(r, NX_ECORRUPT, keypath(kp, path, "dtype"), "unknown data type \"%s\"",
			    s);
	if ((rc = get_str(r, v, path, "format", false, &s)))
		return rc;
	t->format = dup_or_null(s);
	if ((rc = get_int(r, v, path, "node", false, -1, -1, INT32_MAX, &t->node)) ||
	    (rc = get_typed(r, v, path, "shape", false, JSON_ARRAY, &shape)))
		return rc;
	if (shape != NX_JT_NONE && nx_jt_size(r->jt, shape) > NX_ARRAY_SIZE(t->shape))
		return fail(r, NX_ECORRUPT, keypath(kp, path, "shape"),
			    "%zu dimensions, at most %zu supported", nx_jt_size(r->jt, shape),
			    NX_ARRAY_SIZE(t->shape));
	uint32_t dim = shape != NX_JT_NONE ? nx_jt_first(r->jt, shape) : 0;
	for (size_t i = 0; shape != NX_JT_NONE && i < nx_jt_size(r->jt, shape);
	     i++, dim = nx_jt_next(r->jt, dim)) {
		if ((rc = int_value(r, dim, path, "shape", i, 0, MAX_BYTES, &x)))
			return rc;
		t->shape[t->rank++] = (uint64_t)x;
	}
	return 0;
}

static int parse_queue(struct rd *r, const char *name, uint32_t v, struct nx_dma_queue *q)
{
	char path[512], kp[512];
	const char *s;
	int64_t x;
	int rc;

	snprintf(path, sizeof(path), "dma_queue.%s", name);
	q->name = nx_xstrdup(name);
	if (!is(r, v, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, path, "expected object, found %s", type_of(r, v));
	if ((rc = get_str(r, v, path, "type", true, &s)))
		return rc;
	q->def_type = nx_xstrdup(s);
	if ((rc = get_str(r, v, path, "owner", true, &s)))
		return rc;
	if ((q->owner = nx_engine_parse(s)) < 0)
		return fail(r, NX_ECORRUPT, keypath(kp, path, "owner"), "unknown engine \"%s\"", s);
	q->queue_type = queue_type_of(q->def_type, q->owner);
	if ((rc = get_int(r, v, path, "semaphore", false, -1, -1, NX_NUM_SEMAPHORES - 1, &x)))
		return rc;
	q->semaphore = (int)x;
	if ((rc = get_int(r, v, path, "engine_idx", true, 0, 0, 15, &x)))
		return rc;
	q->engine_idx = (int)x;
	if ((rc = get_int(r, v, path, "queue_idx", true, 0, 0, 15, &x)))
		return rc;
	q->queue_idx = (int)x;
	if ((rc = get_int(r, v, path, "axi_port", true, 0, 0, INT32_MAX, &x)))
		return rc;
	q->axi_port = (int)x;
	if ((rc = get_int(r, v, path, "dram_channel", true, 0, 0, INT32_MAX, &x)))
		return rc;
	q->dram_channel = (int)x;
	/* Queue sets: validated for the reader's sake, one queue is modelled. */
	return get_int(r, v, path, "num_queues", false, 1, 1, 16, &x);
}

static int cmp_tensor(const void *a, const void *b)
{
	const struct nx_tensor *x = a, *y = b;

	if (x->var_id != y->var_id)
		return x->var_id < y->var_id ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_queue(const void *a, const void *b)
{
	const struct nx_dma_queue *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static int cmp_keyed_name(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->name, ((const struct keyed *)b)->name);
}

static int cmp_keyed_id(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* def.json: tensors ordered by (var_id, name), queues by name. */
static int parse_def(struct rd *r, uint32_t root)
{
	struct nx_neff *n = r->neff;
	uint32_t vars, queues, v;
	size_t k;
	int rc;

	if ((rc = get_typed(r, root, "", "var", true, JSON_OBJECT, &vars)) ||
	    (rc = get_typed(r, root, "", "dma_queue", true, JSON_OBJECT, &queues)))
		return rc;
	n->tensors = nx_xcalloc(nx_jt_size(r->jt, vars), sizeof(*n->tensors));
	for (k = 0, v = nx_jt_first(r->jt, vars); k < nx_jt_size(r->jt, vars);
	     k++, v = nx_jt_next(r->jt, v)) {
		rc = parse_var(r, nx_jt_key(r->jt, v), v, &n->tensors[n->ntensors++]);
		if (rc)
			return rc;
	}
	n->queues = nx_xcalloc(nx_jt_size(r->jt, queues), sizeof(*n->queues));
	for (k = 0, v = nx_jt_first(r->jt, queues); k < nx_jt_size(r->jt, queues);
	     k++, v = nx_jt_next(r->jt, v)) {
		rc = parse_queue(r, nx_jt_key(r->jt, v), v, &n->queues[n->nqueues++]);
		if (rc)
			return rc;
	}
	if (n->ntensors)
		qsort(n->tensors, n->ntensors, sizeof(*n->tensors), cmp_tensor);
	if (n->nqueues)
		qsort(n->queues, n->nqueues, sizeof(*n->queues), cmp_queue);
	r->by_name = nx_xcalloc(n->ntensors ? n->ntensors : 1, sizeof(*r->by_name));
	for (size_t i = 0; i < n->ntensors; i++)
		r->by_name[i] = (struct keyed){ n->tensors[i].name, 0, i };
	if (n->ntensors)
		qsort(r->by_name, n->ntensors, sizeof(*r->by_name), cmp_keyed_name);
	return 0;
}

static int lookup_tensor(struct rd *r, const char *name)
{
	size_t lo = 0, hi = r->neff->ntensors;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, r->by_name[mid].name);
		if (!c)
			return (int)r->by_name[mid].pos;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

static int lookup_queue(struct rd *r, const char *name)
{
	size_t lo = 0, hi = r->neff->nqueues;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, r->neff->queues[mid].name);
		if (!c)
			return (int)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* One side ("from" or "to") of a descriptor. */
struct side {
	int *loc, *var;
	uint64_t *off, *sizes;
	int64_t *steps;
	unsigned *ndim, *start;
};

/* The keys of one side, spelled out (not printed per descriptor). */
struct side_keys {
	const char *pfx, *off, *partition, *sizes, *steps;
};

static const struct side_keys from_keys = { "from", "from_off", "from_partition",
					    "from_sizes", "from_steps" };
static const struct side_keys to_keys = { "to", "to_off", "to_partition", "to_sizes",
					  "to_steps" };

static int parse_side(struct rd *r, uint32_t d, const char *path, const struct side_keys *k,
		      struct side *s, uint64_t *elems)
{
	const char *pfx = k->pfx, *where;
	uint32_t sizes, steps, size_i, step_i;
	char kp[512];
	int64_t x;
	int rc;

	if ((rc = get_str(r, d, path, pfx, true, &where)))
		return rc;
	*s->var = -1;
	if (!strcmp(where, "sb")) {
		*s->loc = NX_LOC_SBUF;
	} else if (!strcmp(where, "psum")) {
		*s->loc = NX_LOC_PSUM;
	} else {
		*s->loc = NX_LOC_HBM;
		if ((*s->var = lookup_tensor(r, where)) < 0)
			return fail(r, NX_ECORRUPT, keypath(kp, path, pfx),
				    "unknown variable \"%s\"", where);
	}
	if ((rc = get_int(r, d, path, k->off, true, 0, 0, MAX_BYTES, &x)))
		return rc;
	*s->off = (uint64_t)x;
	if ((rc = get_int(r, d, path, k->partition, false, 0, 0, NX_NUM_PARTITIONS - 1, &x)))
		return rc;
	*s->start = (unsigned)x;
	if ((rc = get_typed(r, d, path, k->sizes, true, JSON_ARRAY, &sizes)) ||
	    (rc = get_typed(r, d, path, k->steps, true, JSON_ARRAY, &steps)))
		return rc;
	size_t nd = nx_jt_size(r->jt, sizes);
	if (nd < 1 || nd > 4)
		return fail(r, NX_ECORRUPT, keypath(kp, path, pfx),
			    "%s_sizes has %zu dimensions, expected 1..4", pfx, nd);
	if (nx_jt_size(r->jt, steps) != nd)
		return fail(r, NX_ECORRUPT, keypath(kp, path, pfx),
			    "%s_steps has %zu entries but %s_sizes has %zu", pfx,
			    nx_jt_size(r->jt, steps), pfx, nd);
	*s->ndim = (unsigned)nd;
	*elems = 1;
	size_i = nx_jt_first(r->jt, sizes);
	step_i = nx_jt_first(r->jt, steps);
	for (size_t i = 0; i < nd; i++, size_i = nx_jt_next(r->jt, size_i),
				   step_i = nx_jt_next(r->jt, step_i)) {
		if ((rc = int_value(r, size_i, path, k->sizes, i, 0, MAX_DIM, &x)))
			return rc;
		s->sizes[i] = (uint64_t)x;
		if (*elems && s->sizes[i] > (uint64_t)MAX_BYTES / *elems)
			return fail(r, NX_ECORRUPT, keypath(kp, path, pfx),
				    "%s_sizes: element count exceeds 2^48", pfx);
		*elems *= s->sizes[i];
		if ((rc = int_value(r, step_i, path, k->steps, i, -MAX_STEP,
				    MAX_STEP, &s->steps[i])))
			return rc;
	}
	if (*s->loc != NX_LOC_HBM && *s->start + s->sizes[0] > NX_NUM_PARTITIONS)
		return fail(r, NX_ECORRUPT, keypath(kp, path, pfx), "partitions %u..%" PRIu64
			    " exceed the %u partitions", *s->start, *s->start + s->sizes[0] - 1,
			    NX_NUM_PARTITIONS);
	return 0;
}

/* The HBM side must stay inside its variable. */
static int check_hbm_range(struct rd *r, const char *path, const char *pfx,
			   const struct side *s, uint64_t elems, int dtype)
{
	__extension__ typedef __int128 i128;
	const struct nx_tensor *t;
	i128 lo = (i128)*s->off, hi = (i128)*s->off;
	char kp[512];

	if (*s->loc != NX_LOC_HBM || elems == 0)
		return 0;
	t = &r->neff->tensors[*s->var];
	for (unsigned i = 0; i < *s->ndim; i++) {
		i128 span = (i128)(s->sizes[i] - 1) * s->steps[i];
		if (span < 0)
			lo += span;
		else
			hi += span;
	}
	if (lo < 0 || (hi + 1) * nx_dtype_size(dtype) > (i128)t->size)
		return fail(r, NX_ECORRUPT, keypath(kp, path, pfx), "the access reaches elements "
			    "%lld..%lld of %s \"%s\", which holds %" PRIu64 " bytes", (long long)lo,
			    (long long)hi, nx_dtype_name(dtype), t->name, t->size);
	return 0;
}

static int parse_desc(struct rd *r, uint32_t d, const char *path, struct nx_dma_desc *dd)
{
	struct side from = { &dd->from_loc, &dd->from_var, &dd->from_off, dd->from_sizes,
			     dd->from_steps, &dd->from_ndim, &dd->from_start_partition };
	struct side to = { &dd->to_loc, &dd->to_var, &dd->to_off, dd->to_sizes, dd->to_steps,
			   &dd->to_ndim, &dd->to_start_partition };
	uint64_t fe, te;
	const char *s;
	char kp[512];
	int rc;

	if (!is(r, d, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, path, "expected object, found %s", type_of(r, d));
	if ((rc = get_str(r, d, path, "op", true, &s)))
		return rc;
	if (strcmp(s, "copy"))
		return fail(r, NX_ECORRUPT, keypath(kp, path, "op"), "unsupported operation \"%s\" "
			    "(only copy)", s);
	if ((rc = get_str(r, d, path, "dtype", true, &s)))
		return rc;
	if ((dd->dtype = nx_dtype_parse(s)) < 0)
		return fail(r, NX_ECORRUPT, keypath(kp, path, "dtype"), "unknown data type \"%s\"",
			    s);
	if ((rc = get_str(r, d, path, "to_dtype", false, &s)))
		return rc;
	dd->to_dtype = dd->dtype;
	if (s) {
		if ((dd->to_dtype = nx_dtype_parse(s)) < 0)
			return fail(r, NX_ECORRUPT, keypath(kp, path, "to_dtype"),
				    "unknown data type \"%s\"", s);
		if (r->neff->hdr.major_version < 3)
			return fail(r, NX_EVERSION, keypath(kp, path, "to_dtype"),
				    "a DMA cast needs NEFF major version 3 (this file is "
				    "version %" PRIu64 ")", r->neff->hdr.major_version);
		dd->cast = true;
	}
	if ((rc = get_bool(r, d, path, "transpose", &dd->transpose)) ||
	    (rc = parse_side(r, d, path, &from_keys, &from, &fe)) ||
	    (rc = parse_side(r, d, path, &to_keys, &to, &te)))
		return rc;
	if (fe != te)
		return fail(r, NX_ECORRUPT, keypath(kp, path, "to_sizes"), "cover %" PRIu64
			    " elements but from_sizes cover %" PRIu64, te, fe);
	if ((rc = check_hbm_range(r, path, "from", &from, fe, dd->dtype)) ||
	    (rc = check_hbm_range(r, path, "to", &to, te, dd->to_dtype)))
		return rc;
	dd->bytes = fe * nx_dtype_size(dd->dtype);
	return 0;
}

static int parse_block(struct rd *r, uint32_t b, const char *path, int engine,
		       struct nx_dma_block *blk)
{
	uint32_t descs, di;
	char p[512], base[512];
	const char *s;
	char kp[512];
	int64_t x;
	int rc;

	blk->engine = engine;
	if (!is(r, b, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, path, "expected object, found %s", type_of(r, b));
	if ((rc = get_int(r, b, path, "id", true, 0, 0, UINT32_MAX, &x)))
		return rc;
	blk->id = (uint32_t)x;
	if ((rc = get_str(r, b, path, "queue", true, &s)))
		return rc;
	if ((blk->queue = lookup_queue(r, s)) < 0)
		return fail(r, NX_ECORRUPT, keypath(kp, path, "queue"), "no DMA queue \"%s\" in "
			    "sg00/def.json", s);
	if ((rc = get_int(r, b, path, "semaphore", false, -1, -1, NX_NUM_SEMAPHORES - 1, &x)))
		return rc;
	blk->semaphore = (int)x;
	if ((rc = get_typed(r, b, path, "desc", true, JSON_ARRAY, &descs)))
		return rc;
	size_t ndesc = nx_jt_size(r->jt, descs);
	blk->desc = nx_xcalloc(ndesc ? ndesc : 1, sizeof(*blk->desc));
	di = nx_jt_first(r->jt, descs);
	if (ndesc)
		keypath(base, path, "desc");
	for (size_t i = 0; i < ndesc; i++, di = nx_jt_next(r->jt, di)) {
		rc = parse_desc(r, di, index_path(p, base, i), &blk->desc[blk->ndesc++]);
		if (rc)
			return rc;
		blk->bytes = blk->bytes > UINT64_MAX - blk->desc[i].bytes
				     ? UINT64_MAX : blk->bytes + blk->desc[i].bytes;
	}
	return 0;
}

/* The streamed array under key, or NULL when absent or null. A value of another type
 * was left in the root by nx_nj_load, for get_typed to refuse. */
static int streamed_array(struct rd *r, const struct nx_nj_doc *doc, const char *key,
			  const struct nx_nj_array **a)
{
	uint32_t other;
	int rc = get_typed(r, 0, "", key, false, JSON_ARRAY, &other);

	NX_ASSERT(rc || other == NX_JT_NONE); /* arrays under a streamed key stay in the text */
	*a = nx_nj_find(doc, key);
	return rc;
}

/* The elements of a->key, one at a time (as tokens in r->elem, the getters' while fn
 * runs), each with its path "key[i]" (fn's to read, not to keep); element i goes to
 * out + i * size, which holds a->count of them. The count grows item by item so that a
 * failure leaves only parsed items to release. */
static int each_element(struct rd *r, const struct nx_nj_doc *doc,
			const struct nx_nj_array *a, char *out, size_t size, size_t *count,
			int (*fn)(struct rd *, uint32_t, const char *, void *))
{
	struct nx_nj_iter it;
	char msg[512], p[512];
	int rc = 0, more;

	nx_nj_iter_init(&it, doc, a);
	r->jt = &r->elem;
	for (size_t i = 0; (more = nx_nj_next_tok(&it, &r->elem, msg, sizeof(msg))) == 1; i++) {
		index_path(p, a->key, i);
		if (i >= a->count) { /* the scanner and the element's reader disagree: never seen */
			rc = fail(r, NX_ECORRUPT, p, "more elements than the %zu counted",
				  a->count);
		} else {
			(*count)++;
			rc = fn(r, 0, p, out + i * size);
		}
		if (rc)
			break;
	}
	r->jt = &r->root;
	if (rc)
		return rc;
	return more < 0 ? fail(r, NX_ECORRUPT, NULL, "%s", msg) : 0;
}

static int block_element(struct rd *r, uint32_t b, const char *p, void *out)
{
	memset(out, 0, sizeof(struct nx_dma_block));
	return parse_block(r, b, p, r->engine, out);
}

/* sg00/<Engine>.json: appends the engine's DMA blocks. */
static int parse_engine_json(struct rd *r, const struct nx_nj_doc *doc, int engine)
{
	const struct nx_nj_array *dma;
	struct nx_neff *n = r->neff;
	size_t first = n->nblocks;
	int rc;

	if ((rc = streamed_array(r, doc, "dma", &dma)) || !dma)
		return rc;
	n->blocks = nx_xrealloc(n->blocks, (n->nblocks + dma->count + 1) * sizeof(*n->blocks));
	r->engine = engine;
	rc = each_element(r, doc, dma, (char *)(n->blocks + first), sizeof(*n->blocks),
			  &n->nblocks, block_element);
	if (rc)
		return rc;
	/* Block ids are unique within one engine's file. */
	size_t nb = n->nblocks - first;
	struct keyed *ids = nx_xcalloc(nb + 1, sizeof(*ids));
	for (size_t i = 0; i < nb; i++)
		ids[i] = (struct keyed){ NULL, n->blocks[first + i].id, i };
	qsort(ids, nb, sizeof(*ids), cmp_keyed_id);
	for (size_t i = 1; i < nb && !rc; i++) {
		if (ids[i].id == ids[i - 1].id) {
			char p[64];
			snprintf(p, sizeof(p), "dma[%zu].id", ids[i].pos);
			rc = fail(r, NX_ECORRUPT, p, "id %" PRId64 " is also used by dma[%zu]",
				  ids[i].id, ids[i - 1].pos);
		}
	}
	free(ids);
	return rc;
}

/* Ids and parents of a debug table, checked as a forest: unique ids, parents that
 * exist, no loops. */
struct tree {
	const char *what;     /* "stack_frames" */
	size_t n;
	int64_t *id, *parent; /* by position in the file */
	struct keyed *order;  /* sorted by id */
};

/* Position of id in the table, or -1. */
static ptrdiff_t tree_find(const struct tree *t, int64_t id)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->order[mid].id == id)
			return (ptrdiff_t)t->order[mid].pos;
		if (id < t->order[mid].id)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

static ptrdiff_t tree_up(const struct tree *t, ptrdiff_t k)
{
	return t->parent[k] == -1 ? -1 : tree_find(t, t->parent[k]);
}

static int tree_check(struct rd *r, struct tree *t)
{
	uint8_t *state; /* 0 unseen, 1 on the current walk, 2 known to reach a root */
	char p[64];
	int rc = 0;

	t->order = nx_xcalloc(t->n + 1, sizeof(*t->order));
	for (size_t i = 0; i < t->n; i++)
		t->order[i] = (struct keyed){ NULL, t->id[i], i };
	qsort(t->order, t->n, sizeof(*t->order), cmp_keyed_id);
	for (size_t i = 1; i < t->n; i++) {
		if (t->order[i].id == t->order[i - 1].id) {
			snprintf(p, sizeof(p), "%s[%zu].id", t->what, t->order[i].pos);
			return fail(r, NX_ECORRUPT, p, "id %" PRId64 " is also used by %s[%zu]",
				    t->order[i].id, t->what, t->order[i - 1].pos);
		}
	}
	for (size_t i = 0; i < t->n; i++) {
		if (t->parent[i] != -1 && tree_find(t, t->parent[i]) < 0) {
			snprintf(p, sizeof(p), "%s[%zu].parent", t->what, i);
			return fail(r, NX_ECORRUPT, p, "no entry has id %" PRId64, t->parent[i]);
		}
	}
	state = nx_xcalloc(t->n + 1, 1);
	for (size_t i = 0; i < t->n && !rc; i++) {
		ptrdiff_t k = (ptrdiff_t)i;

		while (k >= 0 && state[k] == 0) {
			state[k] = 1;
			k = tree_up(t, k);
		}
		if (k >= 0 && state[k] == 1) {
			snprintf(p, sizeof(p), "%s[%zu]", t->what, i);
			rc = fail(r, NX_ECORRUPT, p, "the parent chain loops back to id %" PRId64,
				  t->id[k]);
		}
		for (k = (ptrdiff_t)i; k >= 0 && state[k] == 1; k = tree_up(t, k))
			state[k] = 2;
	}
	free(state);
	return rc;
}

static void tree_init(struct tree *t, const char *what, size_t n)
{
	t->what = what;
	t->n = n;
	t->id = nx_xcalloc(n + 1, sizeof(int64_t));
	t->parent = nx_xcalloc(n + 1, sizeof(int64_t));
	t->order = NULL;
}

static void tree_release(struct tree *t)
{
	free(t->id);
	free(t->parent);
	free(t->order);
}

/* The debug info's one copy of the path s (struct nx_debug_info, paths), or NULL. */
static char *dbg_path(struct rd *r, const char *s)
{
	struct nx_strmap *paths = r->neff->dbg.paths;
	bool added;

	if (!s)
		return NULL;
	char **copy = nx_strmap_get(paths, s, strlen(s), &added);
	if (added)
		*copy = nx_xstrdup(s);
	return *copy;
}

static int parse_frame(struct rd *r, uint32_t f, const char *p, void *out)
{
	struct nx_dbg_frame *fr = out;
	const char *fn, *file;
	int rc;

	fr->id = fr->parent = fr->line = -1;
	if (!is(r, f, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, p, "expected object, found %s", type_of(r, f));
	if ((rc = get_int(r, f, p, "id", true, 0, 0, INT64_MAX, &fr->id)) ||
	    (rc = get_int(r, f, p, "parent", false, -1, -1, INT64_MAX, &fr->parent)) ||
	    (rc = get_str(r, f, p, "function", true, &fn)) ||
	    (rc = get_str(r, f, p, "file", false, &file)) ||
	    (rc = get_int(r, f, p, "line", false, -1, -1, INT32_MAX, &fr->line)))
		return rc;
	fr->function = nx_xstrdup(fn);
	fr->file = dbg_path(r, file);
	return 0;
}

static int parse_itervar(struct rd *r, uint32_t f, const char *p, void *out)
{
	struct nx_dbg_itervar *iv = out;
	const char *name, *file;
	int rc;

	iv->id = iv->parent = iv->line = -1;
	if (!is(r, f, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, p, "expected object, found %s", type_of(r, f));
	if ((rc = get_int(r, f, p, "id", true, 0, 0, INT64_MAX, &iv->id)) ||
	    (rc = get_int(r, f, p, "parent", false, -1, -1, INT64_MAX, &iv->parent)) ||
	    (rc = get_str(r, f, p, "name", true, &name)) ||
	    (rc = get_int(r, f, p, "value", true, 0, INT64_MIN, INT64_MAX, &iv->value)) ||
	    (rc = get_str(r, f, p, "file", false, &file)) ||
	    (rc = get_int(r, f, p, "line", false, -1, -1, INT32_MAX, &iv->line)))
		return rc;
	iv->name = nx_xstrdup(name);
	iv->file = dbg_path(r, file);
	return 0;
}

static int parse_dbg_inst(struct rd *r, uint32_t f, const char *p, void *out)
{
	struct nx_dbg_inst *di = out;
	const char *name, *file, *bir;
	int rc;

	di->line = di->stack_frame_id = di->iteration_vars_id = -1;
	if (!is(r, f, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, p, "expected object, found %s", type_of(r, f));
	if ((rc = get_str(r, f, p, "name", true, &name)) ||
	    (rc = get_str(r, f, p, "file", false, &file)) ||
	    (rc = get_int(r, f, p, "line", false, -1, -1, INT32_MAX, &di->line)) ||
	    (rc = get_int(r, f, p, "stack_frame_id", false, -1, -1, INT64_MAX,
			  &di->stack_frame_id)) ||
	    (rc = get_int(r, f, p, "iteration_variables_id", false, -1, -1, INT64_MAX,
			  &di->iteration_vars_id)) ||
	    (rc = get_str(r, f, p, "bir_location", false, &bir)))
		return rc;
	di->name = nx_xstrdup(name);
	di->file = dbg_path(r, file);
	di->bir_location = dbg_path(r, bir);
	return 0;
}

static int parse_dbg_bir(struct rd *r, uint32_t f, const char *p, void *out)
{
	struct nx_dbg_bir *b = out;
	const char *name;
	int rc;

	if (!is(r, f, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, p, "expected object, found %s", type_of(r, f));
	if ((rc = get_int(r, f, p, "bir_id", true, 0, 0, UINT32_MAX, &b->bir_id)) ||
	    (rc = get_str(r, f, p, "name", true, &name)))
		return rc;
	if (!name[0])
		return fail(r, NX_ECORRUPT, p, "the BIR instruction name is empty");
	b->name = nx_xstrdup(name);
	return 0;
}

/* {"kind": K, "file": F, "line": L, "args": [[KEY, VALUE], ...]}: KIND and every KEY
 * non-empty, every VALUE a string. */
static int parse_dbg_decision(struct rd *r, uint32_t f, const char *p, void *out)
{
	struct nx_dbg_decision *d = out;
	const char *kind, *file;
	uint32_t args, a;
	char kp[96];
	int rc;

	d->line = -1;
	if (!is(r, f, JSON_OBJECT))
		return fail(r, NX_ECORRUPT, p, "expected object, found %s", type_of(r, f));
	if ((rc = get_str(r, f, p, "kind", true, &kind)) ||
	    (rc = get_str(r, f, p, "file", false, &file)) ||
	    (rc = get_int(r, f, p, "line", false, -1, -1, INT32_MAX, &d->line)) ||
	    (rc = get_typed(r, f, p, "args", false, JSON_ARRAY, &args)))
		return rc;
	if (!kind[0])
		return fail(r, NX_ECORRUPT, p, "the decision kind is empty");
	d->kind = nx_xstrdup(kind);
	d->file = dup_or_null(file);
	if (args == NX_JT_NONE)
		return 0;
	d->keys = nx_xcalloc(nx_jt_size(r->jt, args) + 1, sizeof(char *));
	d->values = nx_xcalloc(nx_jt_size(r->jt, args) + 1, sizeof(char *));
	a = nx_jt_first(r->jt, args);
	for (size_t k = 0; k < nx_jt_size(r->jt, args); k++, a = nx_jt_next(r->jt, a)) {
		const char *key = nx_jt_str(r->jt, nx_jt_at(r->jt, a, 0));
		const char *val = nx_jt_str(r->jt, nx_jt_at(r->jt, a, 1));

		snprintf(kp, sizeof(kp), "%s.args[%zu]", p, k);
		if (!is(r, a, JSON_ARRAY) || nx_jt_size(r->jt, a) != 2 || !key || !val || !key[0])
			return fail(r, NX_ECORRUPT, kp, "expected [KEY, VALUE] (two strings, the "
				    "key not empty)");
		d->keys[d->nargs] = nx_xstrdup(key);
		d->values[d->nargs++] = nx_xstrdup(val);
	}
	return 0;
}

/* Parses the optional streamed array root[key] into a calloc'd array of `size`-byte
 * items. */
static int parse_array(struct rd *r, const struct nx_nj_doc *doc, const char *key,
		       size_t size, void **arr, size_t *count,
		       int (*fn)(struct rd *, uint32_t, const char *, void *))
{
	const struct nx_nj_array *a;
	int rc = streamed_array(r, doc, key, &a);

	*arr = nx_xcalloc(a ? a->count + 1 : 1, size);
	if (rc || !a)
		return rc;
	return each_element(r, doc, a, *arr, size, count, fn);
}

static int parse_debug(struct rd *r, const struct nx_nj_doc *doc)
{
	struct nx_debug_info *d = &r->neff->dbg;
	struct tree frames, vars;
	void *insts = NULL, *fr = NULL, *iv = NULL;
	int64_t version;
	char p[64];
	int rc;

	if ((rc = get_int(r, 0, "", "version", true, 0, INT64_MIN, INT64_MAX, &version)))
		return rc;
	if (version != 1)
		return fail(r, NX_EVERSION, "version", "version %" PRId64 " is not supported (this "
			    "build reads version 1)", version);
	d->paths = nx_xmalloc(sizeof(*d->paths));
	nx_strmap_init(d->paths, sizeof(char *));
	rc = parse_array(r, doc, "instructions", sizeof(*d->insts), &insts, &d->ninsts,
			 parse_dbg_inst);
	d->insts = insts;
	if (!rc)
		rc = parse_array(r, doc, "stack_frames", sizeof(*d->frames), &fr, &d->nframes,
				 parse_frame);
	d->frames = fr;
	if (!rc)
		rc = parse_array(r, doc, "iteration_variables", sizeof(*d->itervars), &iv,
				 &d->nitervars, parse_itervar);
	d->itervars = iv;
	if (!rc) {
		void *birs = NULL;
		rc = parse_array(r, doc, "bir_instructions", sizeof(*d->birs), &birs, &d->nbirs,
				 parse_dbg_bir);
		d->birs = birs;
	}
	if (!rc) {
		void *dec = NULL;
		rc = parse_array(r, doc, "compiler_decisions", sizeof(*d->decisions), &dec,
				 &d->ndecisions, parse_dbg_decision);
		d->decisions = dec;
	}
	if (rc)
		return rc;
	for (size_t i = 0; i < d->nbirs; i++)
		for (size_t k = 0; k < i; k++)
			if (d->birs[k].bir_id == d->birs[i].bir_id) {
				snprintf(p, sizeof(p), "bir_instructions[%zu].bir_id", i);
				return fail(r, NX_ECORRUPT, p, "bir id %" PRId64 " is named twice",
					    d->birs[i].bir_id);
			}
	tree_init(&frames, "stack_frames", d->nframes);
	for (size_t i = 0; i < d->nframes; i++)
		frames.id[i] = d->frames[i].id, frames.parent[i] = d->frames[i].parent;
	tree_init(&vars, "iteration_variables", d->nitervars);
	for (size_t i = 0; i < d->nitervars; i++)
		vars.id[i] = d->itervars[i].id, vars.parent[i] = d->itervars[i].parent;
	rc = tree_check(r, &frames);
	if (!rc)
		rc = tree_check(r, &vars);
	for (size_t i = 0; !rc && i < d->ninsts; i++) {
		const struct nx_dbg_inst *di = &d->insts[i];
		if (di->stack_frame_id != -1 && tree_find(&frames, di->stack_frame_id) < 0) {
			snprintf(p, sizeof(p), "instructions[%zu].stack_frame_id", i);
			rc = fail(r, NX_ECORRUPT, p, "no stack frame has id %" PRId64,
				  di->stack_frame_id);
		} else if (di->iteration_vars_id != -1 &&
			   tree_find(&vars, di->iteration_vars_id) < 0) {
			snprintf(p, sizeof(p), "instructions[%zu].iteration_variables_id", i);
			rc = fail(r, NX_ECORRUPT, p, "no iteration variable has id %" PRId64,
				  di->iteration_vars_id);
		}
	}
	tree_release(&frames);
	tree_release(&vars);
	return rc;
}

/* sg00/<Engine>.bin: records of 128 bytes, or 384 with the extension (major version
 * 3), each decoded and cross-checked. */
static int parse_bin(struct rd *r, const struct nx_tar_entry *e, int engine)
{
	struct nx_neff *n = r->neff;
	unsigned major = (unsigned)n->hdr.major_version;
	char where[256];
	size_t pos = 0, used;
	int rc;

	n->inst[engine] = nx_xcalloc(e->size / NX_INST_SIZE + 1, sizeof(struct nx_inst));
	for (size_t i = 0; pos < e->size; i++, pos += used) {
		struct nx_inst *in = &n->inst[engine][i];

		size_t need = e->size - pos >= NX_INST_SIZE &&
			      (e->data[pos + 3] & 0x80) ? NX_INST_EXT_SIZE : NX_INST_SIZE;

		snprintf(where, sizeof(where), "%s: %s: instruction %zu", r->file, r->member, i);
		if (e->size - pos < need && (major >= 3 || need == NX_INST_SIZE))
			return nx_errf(r->err, NX_ECORRUPT, "%s: the record at byte %zu is partial "
				       "(%zu of %zu bytes)", where, pos, e->size - pos, need);
		rc = nx_inst_decode(e->data + pos, e->size - pos, major, in, &used, where, r->err);
		if (rc)
			return rc;
		n->ninst[engine]++;
		if (in->engine != engine)
			return nx_errf(r->err, NX_ECORRUPT, "%s: byte 2: engine %s does not match "
				       "the %s stream", where, nx_engine_name(in->engine),
				       nx_engine_name(engine));
		if (in->dma_block != NX_NONE32 && in->dma_block >= n->nblocks)
			return nx_errf(r->err, NX_ECORRUPT, "%s: byte 24: dma_block %" PRIu32
				       " is out of range (%zu blocks)", where, in->dma_block,
				       n->nblocks);
		if (in->opcode == NX_OP_DMA_TRIGGER && in->dma_block == NX_NONE32)
			return nx_errf(r->err, NX_ECORRUPT, "%s: byte 24: DMA trigger without a "
				       "dma_block", where);
		if (in->debug_id != NX_NONE32 && in->debug_id >= n->dbg.ninsts)
			return nx_errf(r->err, NX_ECORRUPT, "%s: byte 28: debug_id %" PRIu32
				       " is out of range (%zu debug instructions)", where,
				       in->debug_id, n->dbg.ninsts);
	}
	return 0;
}

/* The arrays of each member handed over element by element (the other values and
 * members are small, and parsed whole). */
static const char *const no_arrays[] = { NULL };
static const char *const engine_arrays[] = { "dma", NULL };
static const char *const debug_arrays[] = { "instructions", "stack_frames",
					    "iteration_variables", "bir_instructions",
					    "compiler_decisions", NULL };

/* Parses a JSON member with fn, then drops its text; absent optional members are
 * skipped. */
static int json_member(struct rd *r, struct nx_tar *tar, const char *name, bool req,
		       const char *const *streamed,
		       int (*fn)(struct rd *, const struct nx_nj_doc *, int), int arg)
{
	const struct nx_tar_entry *e = find_member(tar, name);
	struct nx_nj_doc doc;
	char msg[512];
	int rc;

	r->member = name;
	if (!e)
		return req ? fail(r, NX_ECORRUPT, NULL, "member is missing from the archive") : 0;
	if (nx_nj_load(&doc, (const char *)e->data, e->size, streamed, msg, sizeof(msg)))
		return fail(r, NX_ECORRUPT, NULL, "%s", msg);
	nx_jt_from_json(&r->root, doc.root);
	r->jt = &r->root;
	rc = fn(r, &doc, arg);
	nx_nj_release(&doc);
	nx_tar_drop(tar, e);
	return rc;
}

static int do_info(struct rd *r, const struct nx_nj_doc *doc, int arg)
{
	const char *s;
	int rc = get_str(r, 0, "", "tool_version", false, &s);

	(void)doc;
	(void)arg;
	r->neff->tool_version = dup_or_null(s);
	return rc;
}

static int do_def(struct rd *r, const struct nx_nj_doc *doc, int arg)
{
	(void)doc;
	(void)arg;
	return parse_def(r, 0);
}

static int do_debug(struct rd *r, const struct nx_nj_doc *doc, int arg)
{
	(void)arg;
	return parse_debug(r, doc);
}

int nx_neff_read_mem(const char *name, const uint8_t *data, size_t len, struct nx_neff *neff,
		     struct nx_err *err)
{
	struct rd r = { .file = name, .member = "", .err = err, .neff = neff };
	struct nx_tar tar;
	char member[64];
	int rc;

	memset(neff, 0, sizeof(*neff));
	memset(&tar, 0, sizeof(tar));
	rc = nx_neff_header_decode(name, data, len, &neff->hdr, err);
	if (rc)
		goto out;
	rc = nx_neff_header_verify(name, &neff->hdr, data + NX_NEFF_HEADER_SIZE,
				   len - NX_NEFF_HEADER_SIZE, err);
	if (rc)
		goto out;
	rc = nx_tar_read_gz(name, data + NX_NEFF_HEADER_SIZE, len - NX_NEFF_HEADER_SIZE, &tar,
			    err);
	if (rc)
		goto out;
	if ((rc = json_member(&r, &tar, "info.json", true, no_arrays, do_info, 0)) ||
	    (rc = json_member(&r, &tar, "sg00/def.json", true, no_arrays, do_def, 0)))
		goto out;
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		snprintf(member, sizeof(member), "sg00/%s.json", nx_engine_name(e));
		if ((rc = json_member(&r, &tar, member, false, engine_arrays, parse_engine_json,
				      e)))
			goto out;
	}
	rc = json_member(&r, &tar, "kernel_debug_info.json", false, debug_arrays, do_debug, 0);
	if (rc)
		goto out;
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		snprintf(member, sizeof(member), "sg00/%s.bin", nx_engine_name(e));
		const struct nx_tar_entry *ent = find_member(&tar, member);
		r.member = member;
		if (ent && (rc = parse_bin(&r, ent, e)))
			goto out;
	}
	nx_neff_source_read(name, &tar, &neff->source);
out:
	free(r.by_name);
	nx_jt_release(&r.root);
	nx_jt_release(&r.elem);
	nx_tar_release(&tar);
	if (rc)
		nx_neff_release(neff);
	return rc;
}

int nx_neff_read(const char *path, struct nx_neff *neff, struct nx_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	memset(neff, 0, sizeof(*neff));
	rc = nx_read_file(path, &data, &len, err);
	if (rc)
		return rc;
	rc = nx_neff_read_mem(path, (const uint8_t *)data, len, neff, err);
	free(data);
	return rc;
}

void nx_neff_release(struct nx_neff *neff)
{
	free(neff->tool_version);
	for (size_t i = 0; i < neff->ntensors; i++) {
		free(neff->tensors[i].name);
		free(neff->tensors[i].def_type);
		free(neff->tensors[i].format);
	}
	free(neff->tensors);
	for (size_t i = 0; i < neff->nqueues; i++) {
		free(neff->queues[i].name);
		free(neff->queues[i].def_type);
	}
	free(neff->queues);
	for (size_t i = 0; i < neff->nblocks; i++)
		free(neff->blocks[i].desc);
	free(neff->blocks);
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		free(neff->inst[e]);
	nx_debug_info_release(&neff->dbg);
	nx_neff_source_release(&neff->source);
	memset(neff, 0, sizeof(*neff));
}

/* Frees the copies of the paths (struct nx_debug_info, paths) and the map. */
static void release_paths(struct nx_strmap *paths)
{
	size_t pos = 0;
	char **copy;

	while ((copy = nx_strmap_next(paths, &pos, NULL, NULL)))
		free(*copy);
	nx_strmap_release(paths);
	free(paths);
}

void nx_debug_info_release(struct nx_debug_info *dbg)
{
	bool own_paths = !dbg->paths; /* each path its own allocation */

	for (size_t i = 0; i < dbg->ninsts; i++) {
		free(dbg->insts[i].name);
		if (own_paths) {
			free(dbg->insts[i].file);
			free(dbg->insts[i].bir_location);
		}
	}
	free(dbg->insts);
	for (size_t i = 0; i < dbg->nframes; i++) {
		free(dbg->frames[i].function);
		if (own_paths)
			free(dbg->frames[i].file);
	}
	free(dbg->frames);
	for (size_t i = 0; i < dbg->nbirs; i++)
		free(dbg->birs[i].name);
	free(dbg->birs);
	for (size_t i = 0; i < dbg->nitervars; i++) {
		free(dbg->itervars[i].name);
		if (own_paths)
			free(dbg->itervars[i].file);
	}
	free(dbg->itervars);
	if (dbg->paths)
		release_paths(dbg->paths);
	for (size_t i = 0; i < dbg->ndecisions; i++)
		nx_dbg_decision_release(&dbg->decisions[i]);
	free(dbg->decisions);
	memset(dbg, 0, sizeof(*dbg));
}

void nx_dbg_decision_release(struct nx_dbg_decision *d)
{
	for (size_t k = 0; k < d->nargs; k++) {
		free(d->keys[k]);
		free(d->values[k]);
	}
	free(d->keys);
	free(d->values);
	free(d->kind);
	free(d->file);
	memset(d, 0, sizeof(*d));
}

int nx_neff_find_tensor(const struct nx_neff *neff, const char *name)
{
	for (size_t i = 0; i < neff->ntensors; i++)
		if (!strcmp(neff->tensors[i].name, name))
			return (int)i;
	return -1;
}

int nx_neff_find_queue(const struct nx_neff *neff, const char *name)
{
	for (size_t i = 0; i < neff->nqueues; i++)
		if (!strcmp(neff->queues[i].name, name))
			return (int)i;
	return -1;
}
