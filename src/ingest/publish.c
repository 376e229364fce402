/* SPDX-License-Identifier: MIT
 * publish.c: atomic publication of a profile directory. The profile is built in a
 * hidden temporary sibling; publishing swaps it in with one rename (RENAME_EXCHANGE
 * when a previous version exists), so readers see either the old or the new profile,
 * never a mix, and a failed or killed ingest leaves the old one in place. */
#include "common/compat.h"
#include "ingest/ingest.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nx_check_display_name(const char *name, struct nx_err *err)
{
	size_t len = name ? strlen(name) : 0;

	if (!len)
		return nx_errf(err, NX_EUSAGE, "the display name is empty");
	if (len > 200)
		return nx_errf(err, NX_EUSAGE, "the display name is longer than 200 characters");
	if (name[0] == '.')
		return nx_errf(err, NX_EUSAGE, "the display name '%s' must not start with '.'", name);
	for (const char *p = name; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\' || ch == '@' || ch == '?' ||
		    ch == '#' || ch == '%')
			return nx_errf(err, NX_EUSAGE,
				       "the display name '%s' contains '%c'; use letters, digits, '-', '_' or '.'",
				       name, ch >= 0x20 ? ch : '?');
	}
	return 0;
}

char *nx_profile_dir(const char *data_path, const char *name)
{
	return nx_xasprintf("%s/profiles/global/%s@latest", data_path, name);
}

int nx_publish_dir(const char *tmp_dir, const char *final_dir, struct nx_err *err)
{
	if (rename(tmp_dir, final_dir) == 0)
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY)
		return nx_errf(err, -errno, "cannot publish '%s' as '%s': %s", tmp_dir, final_dir,
			       strerror(errno));
	/* A previous version exists: swap the two directories in one step, then delete
	 * the old one, which now sits at tmp_dir. */
	if (renameat2(AT_FDCWD, tmp_dir, AT_FDCWD, final_dir, RENAME_EXCHANGE) != 0)
		return nx_errf(err, -errno, "cannot replace '%s': %s", final_dir, strerror(errno));
	struct nx_err ignored = { 0 };
	nx_remove_tree(tmp_dir, &ignored);
	return 0;
}
