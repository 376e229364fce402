/* SPDX-License-Identifier: MIT
 * investigations.c: the investigations of recommend, one table entry each (name, group,
 * availability check, run, remedies; see struct rx_inv_def), made from the list
 * RX_INVESTIGATIONS of rec.h, and the loop that runs them. */
#include "common/compat.h"
#include "analysis/rec.h"

#include <string.h>

#define RX_INV_ROW(slot, entry) [slot] = &entry,
const struct rx_inv_def *const nx__rec_investigations[RX_NINV] = {
	RX_INVESTIGATIONS(RX_INV_ROW)
};
#undef RX_INV_ROW

const char *nx_recommend_investigation(size_t i, const char **title)
{
	if (i >= RX_NINV)
		return NULL;
	if (title)
		*title = nx__rec_investigations[i]->title;
	return nx__rec_investigations[i]->id;
}

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
