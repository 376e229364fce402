/* SPDX-License-Identifier: MIT
 * investigations.c: the investigations of recommend, one table entry each (name, group,
 * availability check, run, remedies; see struct nx_rec_inv_def), made from the list
 * NX_REC_INVESTIGATIONS of rec.h, and the loop that runs them. */
#include "common/compat.h"
#include "analysis/rec.h"

#include <string.h>

#define NX_REC_INV_ROW(slot, entry) [slot] = &entry,
const struct nx_rec_inv_def *const nx__rec_investigations[NX_REC_NINV] = {
	NX_REC_INVESTIGATIONS(NX_REC_INV_ROW)
};
#undef NX_REC_INV_ROW

const char *nx_recommend_investigation(size_t i, const char **title)
{
	if (i >= NX_REC_NINV)
		return NULL;
	if (title)
		*title = nx__rec_investigations[i]->title;
	return nx__rec_investigations[i]->id;
}

const struct nx_rec_inv_def *nx__rec_investigation(const char *id)
{
	for (size_t i = 0; i < NX_REC_NINV; i++)
		if (!strcmp(nx__rec_investigations[i]->id, id))
			return nx__rec_investigations[i];
	return NULL;
}

int nx__rec_investigate(struct nx_duck *d, struct nx_rec_result *r, struct nx_err *err)
{
	for (size_t i = 0; i < NX_REC_NINV; i++) {
		const struct nx_rec_inv_def *def = nx__rec_investigations[i];
		struct nx_rec_inv *inv = &r->inv[i];
		const char *why;

		nx__rec_inv_init(inv, def->id, def->title, def->group, def->gap, def->method);
		if ((why = def->unavailable(r))) {
			nx__rec_inv_set(inv, NX_REC_UNAVAILABLE, "%s", why);
			continue;
		}
		if (def->run(d, r, inv, err))
			return nx_err_wrap(err, "%s", def->what);
	}
	return 0;
}
