/* SPDX-License-Identifier: MIT
 * log.c: levels, the sink and the line writer of the logging facility (see log.h). The
 * level and the sink are set once at start-up, before threads; reading them needs no lock. */
#include "common/compat.h"
#include "common/log.h"
#include "common/strbuf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <strings.h>

static const char *const names[] = { "error", "warn", "info", "debug" };

static _Atomic int cur_level = NX_LOG_INFO;
static nx_log_sink_fn *sink;
static void *sink_arg;

const char *nx_log_level_name(enum nx_log_level level)
{
	return (unsigned)level < NX_ARRAY_SIZE(names) ? names[level] : "?";
}

int nx_log_parse_level(const char *name, enum nx_log_level *level)
{
	for (size_t i = 0; name && i < NX_ARRAY_SIZE(names); i++) {
		if (!strcasecmp(name, names[i])) {
			*level = (enum nx_log_level)i;
			return 0;
		}
	}
	return -1;
}

void nx_log_set_level(enum nx_log_level level)
{
	atomic_store(&cur_level, (int)level);
}

bool nx_log_enabled(enum nx_log_level level)
{
	return (int)level <= atomic_load_explicit(&cur_level, memory_order_relaxed);
}

void nx_log_set_sink(nx_log_sink_fn *fn, void *arg)
{
	sink = fn;
	sink_arg = arg;
}

void nx_logv(enum nx_log_level level, const char *fmt, va_list ap)
{
	struct nx_strbuf line = NX_STRBUF_INIT;

	if (!nx_log_enabled(level))
		return;
	nx_strbuf_vaddf(&line, fmt, ap);
	if (sink) {
		sink(sink_arg, level, nx_strbuf_str(&line));
	} else {
		nx_strbuf_addch(&line, '\n');
		/* one fwrite of the whole line: stdio locks the stream for it */
		fwrite(line.buf, 1, line.len, stderr);
	}
	nx_strbuf_release(&line);
}

void nx_log(enum nx_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nx_logv(level, fmt, ap);
	va_end(ap);
}

void nx_log_escaped(struct nx_strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			nx_strbuf_addf(sb, "\\x%02x", c);
		else
			nx_strbuf_addch(sb, (char)c);
	}
}
