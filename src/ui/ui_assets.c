/* SPDX-License-Identifier: MIT
 * ui_assets.c: finds one of the web UI's embedded files by name (the server's h_ui.c
 * hands them out). */
#include "common/compat.h"
#include "ui/ui_assets.h"

#include <string.h>

const struct nx_ui_asset *nx_ui_asset_find(const char *name)
{
	for (size_t i = 0; i < nx_ui_asset_count; i++)
		if (!strcmp(nx_ui_assets[i].name, name))
			return &nx_ui_assets[i];
	return NULL;
}
