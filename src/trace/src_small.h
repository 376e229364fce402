/* SPDX-License-Identifier: MIT
 * src_small.h: the small tables of a framework-trace profile, each a row source over
 * facts gathered while the events were read: SystemProfileMetadata (time bounds),
 * DeviceProfileList (the NEFF/NTFF pairs) and Metadata (for a profile without a
 * device part, which would otherwise carry it). */
#ifndef NX_TRACE_SRC_SMALL_H
#define NX_TRACE_SRC_SMALL_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"
#include "trace/walk.h"

struct nx_small_facts {
	int64_t first_ns, last_ns; /* first > last: no timed event */
	int64_t ntff_version;
	int64_t hbm_capacity;      /* device memory size the traces state, 0 if none */
	const char *display_name;
	const struct nx_found *found;
};

struct nx_src_small {
	struct nx_colmap map;
	const struct nx_small_facts *facts;
	size_t count, pos;
	void (*row)(struct nx_src_small *s, struct nx_rowbuf *b, size_t row, size_t i);
};

/* table: "SystemProfileMetadata", "DeviceProfileList" or "Metadata". */
int nx_src_small_init(struct nx_src_small *s, const char *table,
		      const struct nx_small_facts *facts, struct nx_row_source *src,
		      struct nx_err *err);

/* "YYYY-MM-DD HH:MM:SS.nnnnnnnnn+00:00" for Unix nanoseconds. */
void nx_unix_ns_text(int64_t ns, char *out, size_t size);

#endif
