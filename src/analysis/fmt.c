/* SPDX-License-Identifier: MIT
 * fmt.c: how the reports print numbers: microseconds with thousands separators (integers from 100
 * us up, two decimals below so small kernels stay readable), percentages, and the deltas of
 * docs/recommend.md, "Follow-up report". */
#include "common/compat.h"
#include "analysis/rec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The value as printed, in us: the rounding every comparison also uses. */
static double shown_us(double ns)
{
	double us = ns / 1e3;
	return fabs(us) >= 100 ? round(us) : round(us * 100) / 100;
}

static void add_grouped(struct nx_strbuf *sb, double us)
{
	char digits[64];
	bool neg = us < 0;
	double a = fabs(us);
	bool frac = a < 100;

	snprintf(digits, sizeof(digits), frac ? "%.2f" : "%.0f", a);
	if (neg)
		nx_strbuf_addch(sb, '-');
	size_t int_len = strcspn(digits, ".");
	for (size_t i = 0; digits[i]; i++) {
		if (i < int_len && i > 0 && (int_len - i) % 3 == 0)
			nx_strbuf_addch(sb, ',');
		nx_strbuf_addch(sb, digits[i]);
	}
}

void nx__rec_fmt_us(struct nx_strbuf *sb, double ns)
{
	if (isnan(ns)) {
		nx_strbuf_addstr(sb, "n/a");
		return;
	}
	double us = shown_us(ns);
	if (us == 0) {
		nx_strbuf_addstr(sb, "0 us");
		return;
	}
	add_grouped(sb, us);
	nx_strbuf_addstr(sb, " us");
}

void nx__rec_fmt_us_bare(struct nx_strbuf *sb, double ns)
{
	if (isnan(ns))
		nx_strbuf_addstr(sb, "n/a");
	else if (shown_us(ns) == 0)
		nx_strbuf_addch(sb, '0');
	else
		add_grouped(sb, shown_us(ns));
}

void nx__rec_fmt_pct(struct nx_strbuf *sb, double frac)
{
	if (isnan(frac))
		nx_strbuf_addstr(sb, "n/a");
	else
		nx_strbuf_addf(sb, "%.1f%%", frac * 100);
}

void nx__rec_fmt_delta(struct nx_strbuf *sb, double old_ns, double new_ns)
{
	if (isnan(old_ns) || isnan(new_ns)) {
		nx_strbuf_addstr(sb, "n/a");
		return;
	}
	double a = shown_us(old_ns), b = shown_us(new_ns), d = b - a;
	if (d == 0) {
		nx_strbuf_addstr(sb, "\xe2\x80\x94"); /* em dash: unchanged */
		return;
	}
	if (d > 0) {
		nx_strbuf_addch(sb, '+');
		add_grouped(sb, d);
		nx_strbuf_addstr(sb, " us");
		return;
	}
	add_grouped(sb, d);
	nx_strbuf_addstr(sb, " us");
	if (b > 0)
		nx_strbuf_addf(sb, " (%.1fx)", a / b);
}
