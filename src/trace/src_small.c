/* SPDX-License-Identifier: MIT
 * src_small.c: SystemProfileMetadata, DeviceProfileList and Metadata rows of a
 * framework-trace profile (see src_small.h). Cells are addressed by field name; these
 * tables have a handful of rows. */
#include "common/compat.h"
#include "trace/src_small.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static size_t col(struct nx_src_small *s, const char *name)
{
	int i = nx_schema_field_index(s->map.table, name);
	return i < 0 ? 0 : (size_t)i; /* names are checked by test_trace_ingest */
}
#define STR(name, v) nx_rowbuf_str(b, col(s, name), row, (v))
#define I64(name, v) nx_rowbuf_i64(b, col(s, name), row, (int64_t)(v))
#define BOOL(name, v) nx_rowbuf_bool(b, col(s, name), row, (v))

void nx_unix_ns_text(int64_t ns, char *out, size_t size)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;
	struct tm tm;
	char base[40];

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	time_t t = (time_t)sec;
	if (!gmtime_r(&t, &tm)) {
		snprintf(out, size, "%" PRId64, ns);
		return;
	}
	strftime(base, sizeof(base), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out, size, "%s.%09" PRId64 "+00:00", base, frac);
}

static void bounds(const struct nx_small_facts *f, int64_t *a, int64_t *b)
{
	*a = f->first_ns <= f->last_ns ? f->first_ns : 0;
	*b = f->first_ns <= f->last_ns ? f->last_ns : 0;
}

static void sysmeta_row(struct nx_src_small *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	int64_t first, last;
	char t[64];

	(void)i;
	bounds(s->facts, &first, &last);
	nx_unix_ns_text(first, t, sizeof(t));
	STR("first_ts", t);
	nx_unix_ns_text(last, t, sizeof(t));
	STR("last_ts", t);
	snprintf(t, sizeof(t), "%" PRId64, first);
	STR("first_ts_ns", t);
	snprintf(t, sizeof(t), "%" PRId64, last);
	STR("last_ts_ns", t);
	I64("ntff_version", s->facts->ntff_version);
	/* GPU traces state their device memory (deviceProperties totalGlobalMem); 0 when
	 * no trace does. */
	I64("hbm_capacity_bytes", s->facts->hbm_capacity);
}

static void devlist_row(struct nx_src_small *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_dev_pair *p = &s->facts->found->pairs[i];

	STR("device_profile_name", p->name);
	STR("instance_id", p->instance);
	I64("process_id", p->pid);
	I64("nc_id", p->vnc);
	I64("model_id", p->instid);
}

static void metadata_row(struct nx_src_small *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	int64_t first, last;
	char t[64];

	(void)i;
	bounds(s->facts, &first, &last);
	STR("profile_schema_version", NX_SCHEMA_VERSION);
	nx_unix_ns_text(first, t, sizeof(t));
	STR("first_ts", t);
	nx_unix_ns_text(last, t, sizeof(t));
	STR("last_ts", t);
	STR("explorer_version", "neuron-explorer (open C implementation) " NX_VERSION);
	STR("profile_name", s->facts->display_name);
	STR("explorer_build_time", __DATE__ " " __TIME__);
	BOOL("is_simulation", false);
}

static int next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct nx_src_small *s = self;
	size_t cap = nx_rowbuf_capacity(b), n = 0;

	(void)err;
	while (s->pos < s->count && n < cap)
		s->row(s, b, n++, s->pos++);
	return (int)n;
}

int nx_src_small_init(struct nx_src_small *s, const char *table,
		      const struct nx_small_facts *facts, struct nx_row_source *src,
		      struct nx_err *err)
{
	static const char *const none[] = { NULL };
	int rc;

	memset(s, 0, sizeof(*s));
	s->facts = facts;
	s->count = 1;
	if (!strcmp(table, "SystemProfileMetadata")) {
		s->row = sysmeta_row;
	} else if (!strcmp(table, "DeviceProfileList")) {
		s->row = devlist_row;
		s->count = facts->found->npairs;
	} else if (!strcmp(table, "Metadata")) {
		s->row = metadata_row;
	} else {
		return nx_errf(err, NX_EUSAGE, "no framework-trace source for table %s", table);
	}
	if ((rc = nx_colmap_init(&s->map, table, none, err)))
		return rc;
	src->table = s->map.table;
	src->self = s;
	src->next = next;
	src->keys = NULL;
	return 0;
}
