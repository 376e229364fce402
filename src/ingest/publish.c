/* SPDX-License-Identifier: MIT
 * publish.c: atomic publication of a profile directory. The profile is built in a
 * hidden temporary sibling; publishing swaps it in with one rename (RENAME_EXCHANGE
 * when a previous version exists), so readers see either the old or the new profile,
 * never a mix, and a failed or killed ingest leaves the old one in place. */
#include "common/compat.h"
#include "ingest/ingest.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The one rule for profile names (NX_NAME_RULE): every command checks it before any
 * work, so a name that is accepted is also reachable through the server's URLs (which
 * hide names holding '.tmp', the suffix of profiles still being written). */
int nx_check_display_name(const char *name, struct nx_err *err)
{
	size_t len = name ? strlen(name) : 0;

	if (!len)
		return nx_errf(err, NX_EUSAGE, "the display name is empty; use " NX_NAME_RULE);
	for (const char *p = name; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '.')
			continue;
		/* the name is not echoed: it may hold a newline or invalid UTF-8 */
		if (ch > 0x20 && ch < 0x7f)
			return nx_errf(err, NX_EUSAGE, "the display name contains '%c' (character %zu); "
				       "use " NX_NAME_RULE, ch, (size_t)(p - name) + 1);
		return nx_errf(err, NX_EUSAGE, "the display name contains byte 0x%02x (character %zu%s); "
			       "use " NX_NAME_RULE, ch, (size_t)(p - name) + 1,
			       ch == ' ' ? ", a space" : ch == '\t' ? ", a tab" : ch == '\n' ? ", a newline"
			       : ch >= 0x80 ? ", not ASCII" : "");
	}
	if (len > NX_NAME_MAX)
		return nx_errf(err, NX_EUSAGE, "the display name is %zu characters long; use at most %d",
			       len, NX_NAME_MAX);
	if (name[0] == '.')
		return nx_errf(err, NX_EUSAGE, "the display name '%s' starts with '.'; use " NX_NAME_RULE,
			       name);
	if (strstr(name, ".tmp"))
		return nx_errf(err, NX_EUSAGE, "the display name '%s' contains '.tmp', which marks "
			       "profiles still being written; use " NX_NAME_RULE, name);
	return 0;
}

char *nx_profile_dir(const char *data_path, const char *name)
{
	return nx_xasprintf("%s/profiles/global/%s@latest", data_path, name);
}

/* Removes temporary directories left by ingests that were killed. */
void nx_remove_stale_tmp(const char *parent, const char *name)
{
	DIR *dp = opendir(parent);
	struct dirent *de;
	char *prefix = nx_xasprintf(".%s@latest.tmp-", name);
	size_t plen = strlen(prefix);

	while (dp && (de = readdir(dp))) {
		if (strncmp(de->d_name, prefix, plen))
			continue;
		int pid = atoi(de->d_name + plen);
		if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
			continue; /* another ingest of the same name is running */
		char *p = nx_path_join(parent, de->d_name);
		struct nx_err ignored = { 0 };
		nx_remove_tree(p, &ignored);
		free(p);
	}
	if (dp)
		closedir(dp);
	free(prefix);
}

void nx_publish_plan(struct nx_publish_plan *p, const char *data_path, const char *name,
		     const char *output_dir)
{
	p->name = output_dir ? NULL : nx_xstrdup(name);
	if (output_dir) {
		const char *slash = strrchr(output_dir, '/');

		p->final = nx_xstrdup(output_dir);
		p->parent = slash && slash != output_dir
				    ? nx_xstrndup(output_dir, (size_t)(slash - output_dir))
				    : nx_xstrdup(slash ? "/" : ".");
		p->tmp = nx_xasprintf("%s.tmp-%d", output_dir, (int)getpid());
	} else {
		p->final = nx_profile_dir(data_path, name);
		p->parent = nx_xasprintf("%s/profiles/global", data_path);
		p->tmp = nx_xasprintf("%s/.%s@latest.tmp-%d", p->parent, name, (int)getpid());
	}
}

int nx_publish_prepare(const struct nx_publish_plan *p, struct nx_err *err)
{
	int rc = nx_mkdirs(p->parent, err);

	if (!rc && p->name)
		nx_remove_stale_tmp(p->parent, p->name);
	if (!rc)
		rc = nx_remove_tree(p->tmp, err);
	if (!rc)
		rc = nx_mkdirs(p->tmp, err);
	return rc;
}

void nx_publish_plan_release(struct nx_publish_plan *p)
{
	free(p->final);
	free(p->parent);
	free(p->tmp);
	free(p->name);
	memset(p, 0, sizeof(*p));
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
