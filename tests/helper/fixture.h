/* SPDX-License-Identifier: MIT
 * fixture.h: a small, fully known NEFF + NTFF pair built with the project's own
 * writers, for ingest and derive tests whose expected values are computed by hand.
 *
 * The kernel: one 128x1024-byte input load (DMA block 0 on qSyncIO0, 2 descriptors),
 * LDWEIGHTS + MATMUL on Tensor, a PSUM->SBUF copy on Vector, an ACTIVATE on Scalar and
 * a store (block 1 on qSyncIO1). The trace times are listed in fixture.c next to the
 * records so a reader can recompute every expected figure. */
#ifndef NX_TEST_FIXTURE_H
#define NX_TEST_FIXTURE_H

#include "common/compat.h"
#include "common/err.h"
#include "neff/neff.h"
#include "ntff/ntff.h"
#include "helper/test_dirs.h"

struct nx_fixture_opts {
	bool dge_notifications;  /* write DMA packet records (default true in tests) */
	bool with_debug_info;    /* kernel_debug_info.json present */
	uint64_t ticks_per_ns;   /* 1 or more */
	bool mismatched_uuid;    /* NTFF names another NEFF */
	uint32_t bogus_inst;     /* add this many INST records with an unknown index */
	bool without_sem;        /* no SEM record: SemaphoreUpdate (and Flow's SEMAPHORE part)
				  * without rows */
};
void nx_fixture_opts_default(struct nx_fixture_opts *o);

/* Fills a NEFF in memory (release with nx_neff_release). */
void nx_fixture_build_neff(struct nx_neff *n, bool with_debug_info);
/* Writes dir/fixture.neff and dir/fixture.ntff. */
int nx_fixture_write(const char *dir, const struct nx_fixture_opts *o, struct nx_err *err);

/* A new empty directory named after `tag` (nx_test_fresh_dir; the program ends if none
 * can be made). Removed by nx_test_done when every test passed. */
char *nx_test_dir(const char *tag);
/* The neuron-explorer binary of the build ($NX_BIN, set by ctest). A test that needs it
 * fails, naming the variable, when it is not set or not executable: it never passes as
 * skipped. */
const char *nx_test_bin(void);
/* Runs a shell command, returns its exit status. */
int nx_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
