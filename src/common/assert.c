/* SPDX-License-Identifier: MIT
 * assert.c: the report of a failed NX_ASSERT (see assert.h). */
#include "common/compat.h"
#include "common/assert.h"

#include <stdio.h>
#include <stdlib.h>

void nx_assert_fail(const char *cond, const char *file, int line, const char *func)
{
	fprintf(stderr, "%s:%d: %s: invariant failed: %s\n", file, line, func, cond);
	fflush(stderr);
	abort();
}
