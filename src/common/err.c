/* SPDX-License-Identifier: MIT
 * err.c: the error-context chain (see err.h). */
#include "common/compat.h"
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void nx_err_clear(struct nx_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

int nx_errf(struct nx_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int nx_err_wrap(struct nx_err *err, const char *fmt, ...)
{
	char ctx[512], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return NX_EUSAGE;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	if (!err->msg[0])
		snprintf(err->msg, sizeof(err->msg), "%s", nx_strerror(err->code));
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", ctx, old);
	if (!err->code)
		err->code = NX_EUSAGE;
	return err->code;
}

const char *nx_strerror(int code)
{
	switch (code) {
	case 0: return "success";
	case NX_ECORRUPT: return "corrupt input";
	case NX_EVERSION: return "unsupported version";
	case NX_ETRUNC: return "input is truncated";
	case NX_EMISMATCH: return "inputs do not belong together";
	case NX_EDB: return "database error";
	case NX_EUSAGE: return "invalid request";
	case NX_ESIM: return "simulation error";
	case NX_ENOTFOUND: return "not found";
	default: break;
	}
	if (code < 0 && code > -4096)
		return strerror(-code);
	return "unknown error";
}
