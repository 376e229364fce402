/* SPDX-License-Identifier: MIT
 * ui_assets.h: the web UI's files (ui/ in the repository), embedded into the binary at
 * build time by cmake/embed_ui.cmake. The server hands them out on the UI port
 * (docs/ui.md). */
#ifndef NX_UI_UI_ASSETS_H
#define NX_UI_UI_ASSETS_H

#include <stddef.h>

struct nx_ui_asset {
	const char *name; /* file name, e.g. "app.js" */
	const unsigned char *data;
	size_t len;
};

extern const struct nx_ui_asset nx_ui_assets[];
extern const size_t nx_ui_asset_count;

/* The asset called name, or NULL. */
const struct nx_ui_asset *nx_ui_asset_find(const char *name);

#endif
