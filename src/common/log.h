/* SPDX-License-Identifier: MIT
 * log.h: the one logging facility of the long-running parts (the server: its access log,
 * its warnings, its notes). A message has a level; those above the process's level are
 * dropped before they are formatted. Each message is one line, written whole (two threads'
 * lines never mix) to the sink: stderr unless a sink is set. src/cli sets the level from
 * `--log-level` or the environment variable NX_LOG (error, warn, info, debug; default
 * info). Errors a caller can act on still go through struct nx_err, not through here. */
#ifndef NX_COMMON_LOG_H
#define NX_COMMON_LOG_H

#include "common/compat.h"

#include <stdarg.h>

enum nx_log_level {
	NX_LOG_ERROR,
	NX_LOG_WARN,
	NX_LOG_INFO,
	NX_LOG_DEBUG,
};

#define NX_LOG_LEVELS "error, warn, info, debug"

/* The level's name ("error", ...). */
const char *nx_log_level_name(enum nx_log_level level);
/* Parses a level's name (case-insensitive); -1 if it is none of NX_LOG_LEVELS. */
int nx_log_parse_level(const char *name, enum nx_log_level *level);

void nx_log_set_level(enum nx_log_level level);
/* Whether a message of this level would be written (to skip work done only for it). */
bool nx_log_enabled(enum nx_log_level level);

/* Where lines go: fn gets the level and the line without its newline. NULL: stderr. */
typedef void nx_log_sink_fn(void *arg, enum nx_log_level level, const char *line);
void nx_log_set_sink(nx_log_sink_fn *fn, void *arg);

/* Writes one line made from fmt (no newline in it). Text from outside, such as a URL,
 * goes through nx_log_escaped first. */
void nx_log(enum nx_log_level level, const char *fmt, ...) NX_PRINTF(2, 3);
void nx_logv(enum nx_log_level level, const char *fmt, va_list ap) NX_PRINTF(2, 0);

struct nx_strbuf;
/* Appends s with control bytes, '"' and '\\' written as \xNN, so text from a client
 * (a URL) cannot forge log lines. */
void nx_log_escaped(struct nx_strbuf *sb, const char *s);

#endif
