/* SPDX-License-Identifier: MIT
 * tstate.c: the shaper's per-key state (see tstate.h) in a common/strmap.h map. */
#include "common/compat.h"
#include "trace/tstate.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

void nx_tstates_init(struct nx_strmap *m)
{
	nx_strmap_init(m, sizeof(struct nx_tstate));
}

void nx_tstates_clear(struct nx_strmap *m)
{
	struct nx_tstate *s;
	size_t pos = 0;

	while ((s = nx_strmap_next(m, &pos, NULL, NULL))) {
		for (size_t i = 0; i < s->nopen; i++) {
			free(s->open[i].name);
			free(s->open[i].extra);
		}
		free(s->open);
	}
	nx_strmap_clear(m);
}

void nx_tstates_release(struct nx_strmap *m)
{
	nx_tstates_clear(m);
	nx_strmap_release(m);
}

void nx_open_push(struct nx_tstate *s, const char *name, size_t nlen, const char *extra,
		  size_t elen, int64_t start, uint64_t offset)
{
	NX_GROW(s->open, s->nopen + 1, s->capopen);
	struct nx_open *o = &s->open[s->nopen++];
	o->name = nx_xstrndup(name, nlen);
	o->extra = elen ? nx_xstrndup(extra, elen) : NULL;
	o->start = start;
	o->offset = offset;
}
