/* SPDX-License-Identifier: MIT
 * tstate.h: what the event shaper keeps per key in its maps (common/strmap.h): per-thread
 * B/E stacks, async b/e stacks and flow ids. One value type serves the three maps, so
 * each carries the few fields those uses need. */
#ifndef NX_TRACE_TSTATE_H
#define NX_TRACE_TSTATE_H

#include "common/compat.h"
#include "common/strmap.h"

/* An open begin event (B or b) waiting for its end. */
struct nx_open {
	char *name;
	char *extra;
	int64_t start;
	uint64_t offset;
};

struct nx_tstate {
	int64_t num;          /* flows: profile-wide flow number */
	uint64_t starts, ends; /* flows: s and f events seen */
	int64_t pid, tid;     /* stacks: the ids rows get */
	struct nx_open *open; /* stacks: open begins, innermost last */
	size_t nopen, capopen;
};

/* Prepares a map of struct nx_tstate values. */
void nx_tstates_init(struct nx_strmap *m);
/* Frees every value's open begins and key and empties the map (it stays usable). */
void nx_tstates_clear(struct nx_strmap *m);
void nx_tstates_release(struct nx_strmap *m);

void nx_open_push(struct nx_tstate *s, const char *name, size_t nlen, const char *extra,
		  size_t elen, int64_t start, uint64_t offset);

#endif
