/* SPDX-License-Identifier: MIT
 * investigations.c: the investigations of recommend, one table entry each (name, group,
 * availability check, run, remedies; see struct rx_inv_def), and the loop that runs
 * them. Adding an investigation: define its entry in an inv_*.c file, add its slot to
 * enum rx_inv_id and the entry here, in the same place. */
#include "common/compat.h"
#include "analysis/rec.h"

#include <string.h>

const struct rx_inv_def *const nx__rec_investigations[RX_NINV] = {
	[RX_I_DMA_EFF] = &nx__rec_inv_dma,
	[RX_I_REDUNDANT_DMA] = &nx__rec_inv_reload,
	[RX_I_TE_INEFF] = &nx__rec_inv_te_tiles,
	[RX_I_TRANSPOSE] = &nx__rec_inv_te_transposes,
	[RX_I_SERIAL] = &nx__rec_inv_serial,
	[RX_I_HOTSPOT] = &nx__rec_inv_hotspot,
};

const struct rx_inv_def *nx__rec_investigation(const char *id)
{
	for (size_t i = 0; i < RX_NINV; i++)
		if (!strcmp(nx__rec_investigations[i]->id, id))
			return nx__rec_investigations[i];
	return NULL;
}

int nx__rec_investigate(struct nx_duck *d, struct rx_result *r, struct nx_err *err)
{
	for (size_t i = 0; i < RX_NINV; i++) {
		const struct rx_inv_def *def = nx__rec_investigations[i];
		struct rx_inv *inv = &r->inv[i];
		const char *why;

		nx__rec_inv_init(inv, def->id, def->title, def->group, def->gap, def->method);
		if ((why = def->unavailable(r))) {
			nx__rec_inv_set(inv, RX_UNAVAILABLE, "%s", why);
			continue;
		}
		if (def->run(d, r, inv, err))
			return nx_err_wrap(err, "%s", def->what);
	}
	return 0;
}
