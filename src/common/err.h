/* SPDX-License-Identifier: MIT
 * err.h: error codes and the error-context chain every fallible function fills.
 *
 * Functions return 0 on success and a negative code on failure. The code is a
 * negated errno or one of the NX_E* values below. Detail travels in a struct nx_err
 * passed as the last argument: the innermost failure sets the message and each
 * caller may prepend one line of context, giving e.g.
 *   "reading 'p.ntff': chunk at byte 4096: CRC mismatch".
 * Only the CLI and the HTTP layer turn an nx_err into output. */
#ifndef NX_COMMON_ERR_H
#define NX_COMMON_ERR_H

#include "common/compat.h"
#include <errno.h>

enum {
	NX_ECORRUPT = -1000,  /* input bytes are malformed (bad CRC, bad magic, bad JSON) */
	NX_EVERSION = -1001,  /* input is of a version this build does not read */
	NX_ETRUNC = -1002,    /* input ends early */
	NX_EMISMATCH = -1003, /* two inputs do not belong together (NEFF/NTFF uuid) */
	NX_EDB = -1004,       /* DuckDB reported an error */
	NX_EUSAGE = -1005,    /* the caller asked for something invalid */
	NX_ESIM = -1006,      /* the simulator cannot execute the program */
	NX_ENOTFOUND = -1007, /* a named thing does not exist */
};

struct nx_err {
	int code;
	char msg[2048];
};

/* Clears an error so the struct can be reused. */
void nx_err_clear(struct nx_err *err);

/* Records a failure: sets the code and message (when err is non-NULL) and returns
 * code, so callers write `return nx_errf(err, NX_ECORRUPT, "bad magic");`. */
int nx_errf(struct nx_err *err, int code, const char *fmt, ...) NX_PRINTF(3, 4);

/* Prepends one line of context ("<context>: <previous message>") and returns the
 * existing code. Use on the way out of a failing call. */
int nx_err_wrap(struct nx_err *err, const char *fmt, ...) NX_PRINTF(2, 3);

/* Human text for a code when no message was recorded. */
const char *nx_strerror(int code);

#endif
