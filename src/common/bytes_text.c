/* SPDX-License-Identifier: MIT
 * bytes_text.c: a byte count in the units of the web UI's Summary (bytes_text.h). */
#include "common/compat.h"
#include "common/bytes_text.h"

#include <math.h>

void nx_bytes_text(struct nx_strbuf *sb, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double a = fabs(bytes), hundredths;
	size_t i = 0;

	if (!isfinite(bytes)) {
		nx_strbuf_addstr(sb, "n/a");
		return;
	}
	while (a >= 1024 && i + 1 < NX_ARRAY_SIZE(unit)) {
		a /= 1024; /* exact: a power of two */
		i++;
	}
	if (!i) {
		nx_strbuf_addf(sb, "%.15g B", bytes);
		return;
	}
	/* a * 100 is exact below 2^53 / 100 (90 TB), so ties are seen as ties */
	hundredths = floor(a * 100 + 0.5);
	nx_strbuf_addf(sb, "%s%.0f.%02.0f %s", bytes < 0 ? "-" : "",
		       floor(hundredths / 100), fmod(hundredths, 100), unit[i]);
}
